/*
 * The aggregate tools: a whole set of values in one JSON array, folded with
 * a MEOS transition function and finished with its final function.
 *
 * MEOS 1.3's transition functions keep their state across calls, may free
 * or reallocate it, and on some errors go on with a state they have already
 * changed: mixing instants with sequences, or step with linear
 * interpolation, in a temporal aggregate makes them read uninitialised
 * memory and write past their buffers (seen under valgrind). So a tool
 * decodes every element first, checks that the values can be aggregated
 * together (one type; for temporal aggregates one kind of subtype and
 * interpolation; for spatial values one SRID and one dimensionality), and
 * only then calls the transition function, once per element, with a state
 * that lives only inside the call.
 *
 * Two more flaws of MEOS 1.3 are worked around here. Its skip list starts
 * with room for 1,024 elements and grows with realloc, leaving the key of
 * every element past those uninitialised, and skiplist_free (which the
 * final functions call) frees every non-NULL key: with a grown state and
 * dirty heap memory that frees garbage and the process dies. Temporal skip
 * lists have no keys, so ga_skiplist clears them before any free. And the
 * span set union's transition functions, on growing their state past 64
 * spans, rebuild it requiring the spans in order, fail on spans given out
 * of order, and have already freed the state they were given: the spans
 * are sorted first (ga_sort), and a failed state is not freed again.
 */
#include "gen.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *ga_array(json_t *args, const char *name, size_t max, size_t *n, json_t **err)
{
    json_t *array = json_object_get(args, name);
    if (!json_is_array(array)) {
        *err = mc_fail("argument \"%s\" must be an array of the values to aggregate", name);
        return NULL;
    }
    *n = json_array_size(array);
    if (*n > max) {
        *err = mc_fail("argument \"%s\" holds %zu values; an aggregate takes at most %zu in one "
                       "call",
                       name, *n, max);
        return NULL;
    }
    size_t bytes = 0;
    for (size_t i = 0; i < *n; i++)
        bytes += json_string_length(json_array_get(array, i));
    if (bytes > GA_MAX_BYTES) {
        *err = mc_fail("argument \"%s\" holds %zu bytes of text; an aggregate takes at most %d "
                       "(64 MiB) in one call",
                       name, bytes, GA_MAX_BYTES);
        return NULL;
    }
    return array;
}

json_t *ga_item(json_t *array, size_t i, const char *name, char *label, size_t size)
{
    snprintf(label, size, "%s[%zu]", name, i);
    json_t *slot = json_object();
    json_object_set(slot, label, json_array_get(array, i));
    return slot;
}

/* Instants and discrete sequences aggregate as instants; continuous
 * sequences and sequence sets as sequences of one interpolation. */
static int temporal_kind(const Temporal *t)
{
    const char *interp = temporal_interp(t);
    return !interp || !strcmp(interp, "Discrete") || !strcmp(interp, "None") ? DISCRETE
           : !strcmp(interp, "Step")                                         ? STEP
                                                                             : LINEAR;
}

static const char *kind_name(int kind)
{
    return kind == DISCRETE ? "instants or discrete sequences"
           : kind == STEP   ? "sequences with step interpolation"
                            : "sequences with linear interpolation";
}

/* The SRID and whether it has z, of a spatial value (from its box); false
 * for other values. A geometry's z is left to MEOS: a set of geometries
 * may mix them. */
static bool spatial_of(const void *v, gen_family_t family, int32_t *srid, bool *hasz)
{
    STBox *box = NULL;
    if (family == GF_GEOMETRY || family == GF_GEOGRAPHY) {
        *srid = geo_srid(v);
        *hasz = false;
        return true;
    }
    if (family == GF_TEMPORAL) {
        int type = gv_type(v, family);
        if (type == T_TGEOMPOINT || type == T_TGEOGPOINT || type == T_TGEOMETRY ||
            type == T_TGEOGRAPHY)
            box = tspatial_to_stbox(v);
    }
    if (!box)
        return false;
    *srid = stbox_srid(box);
    *hasz = stbox_hasz(box);
    free(box);
    return true;
}

int ga_agg_check(const void *const *v, size_t n, gen_family_t family, bool skiplist,
                 const char *name, json_t **err)
{
    if (n == 0)
        return 0;
    int type = gv_type(v[0], family);
    int kind = skiplist && family == GF_TEMPORAL ? temporal_kind(v[0]) : 0;
    int32_t srid = 0;
    bool hasz = false;
    bool spatial = spatial_of(v[0], family, &srid, &hasz);
    for (size_t i = 1; i < n; i++) {
        int type_i = gv_type(v[i], family);
        if (type_i != type) {
            *err = mc_fail("argument \"%s\": %s[%zu] is of type %s and %s[0] of type %s; the "
                           "values of an aggregate must be of one type",
                           name, name, i, meostype_name(type_i), name, meostype_name(type));
            return -1;
        }
        if (kind && temporal_kind(v[i]) != kind) {
            *err = mc_fail("argument \"%s\": %s[%zu] is one of the %s, %s[0] one of the %s; a "
                           "temporal aggregate takes only one of these kinds",
                           name, name, i, kind_name(temporal_kind(v[i])), name,
                           kind_name(kind));
            return -1;
        }
        int32_t srid_i = 0;
        bool hasz_i = false;
        if (spatial && spatial_of(v[i], family, &srid_i, &hasz_i) &&
            (srid_i != srid || hasz_i != hasz)) {
            *err = mc_fail("argument \"%s\": %s[%zu] has SRID %d%s, %s[0] SRID %d%s; the values "
                           "of an aggregate need one SRID and one dimensionality",
                           name, name, i, srid_i, hasz_i ? " and z" : "", name, srid,
                           hasz ? " and z" : "");
            return -1;
        }
    }
    return 0;
}

int ga_instants(const void *const *v, size_t n, gen_family_t family, size_t max,
                const char *name, json_t **err)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        int k = family == GF_TEMPORAL  ? temporal_num_instants(v[i])
                : family == GF_SET     ? set_num_values(v[i])
                : family == GF_SPANSET ? spanset_num_spans(v[i])
                                       : 1;
        total += k > 0 ? (size_t)k : 1;
    }
    if (total > max) {
        *err = mc_fail("argument \"%s\" holds %zu instants in %zu values; an aggregate takes "
                       "at most %zu instants in one call",
                       name, total, n, max);
        return -1;
    }
    return 0;
}

/* MEOS 1.3's skip list, as its libmeos lays it out (skiplist.h of 1.3;
 * the offsets checked against the disassembly of skiplist_make and
 * skiplist_free, and again at run time by skiplist_layout_ok). */
typedef struct {
    void *key;
    void *value;
    int height;
    int next[32];
} skipelem_t;

typedef struct {
    size_t key_size;
    size_t value_size;
    int capacity;
    int length;
    int next;
    int tail;
    int *freed;
    int freecount;
    int freecap;
    void *extra;
    size_t extrasize;
    int (*comp_fn)(void *, void *);
    void *(*merge_fn)(void *, void *);
    skipelem_t *elems;
} skiplist_t;

/* Whether a new temporal skip list of this libmeos looks as skiplist_t
 * says: empty, 1,024 elements of room, head linked to tail. */
static bool skiplist_layout_ok(void)
{
    skiplist_t *list = (skiplist_t *)temporal_skiplist_make();
    if (!list)
        return false;
    bool ok = list->key_size == 0 && list->value_size == 0 && list->capacity == 1024 &&
              list->length == 0 && list->next == 2 && list->tail == 1 && !list->freed &&
              !list->extra && list->elems && list->elems[0].next[0] == 1 &&
              list->elems[1].next[0] == -1 && !list->elems[0].key && !list->elems[1].key;
    skiplist_free((SkipList *)list);
    return ok;
}

static pthread_once_t layout_once = PTHREAD_ONCE_INIT;
static bool layout_ok;

static void check_layout(void)
{
    layout_ok = skiplist_layout_ok();
}

int ga_skiplist_ready(json_t **err)
{
    pthread_once(&layout_once, check_layout);
    if (layout_ok)
        return 0;
    *err = mc_fail("this libmeos lays out its skip lists differently from MEOS 1.3, so the "
                   "temporal aggregates cannot free their state safely; they are off");
    return -1;
}

SkipList *ga_skiplist(SkipList *state)
{
    skiplist_t *list = (skiplist_t *)state;
    if (!list || !list->elems || list->key_size != 0)
        return state;
    int n = list->next < list->capacity ? list->next : list->capacity;
    for (int i = 0; i < n; i++)
        list->elems[i].key = NULL;
    return state;
}

static int cmp_span(const void *a, const void *b)
{
    return span_cmp(*(const Span *const *)a, *(const Span *const *)b);
}

static int cmp_spanset(const void *a, const void *b)
{
    const SpanSet *x = *(const SpanSet *const *)a, *y = *(const SpanSet *const *)b;
    return span_cmp(&x->span, &y->span);
}

void ga_sort(const void **v, size_t n, gen_family_t family)
{
    if (family == GF_SPAN)
        qsort(v, n, sizeof *v, cmp_span);
    else if (family == GF_SPANSET)
        qsort(v, n, sizeof *v, cmp_spanset);
}

json_t *ga_gave_up(void *state, bool skiplist)
{
    if (!state)
        return mc_gave_up();
    if (skiplist)
        skiplist_free(ga_skiplist(state));
    else
        free(state);
    return mc_gave_up();
}

json_t *ga_agg_fail(const char *fn, size_t i, void *state, bool skiplist)
{
    /* The skip-list transition functions leave the state they were given
     * when they report an error (checked under valgrind): it is still ours.
     * The set and span set ones may have freed it already, when the error
     * came from rebuilding it larger; ga_agg_check keeps every other error
     * of theirs from being reached, so theirs is not freed here (at worst
     * a leak, never a double free). */
    if (skiplist)
        skiplist_free(ga_skiplist(state));
    return mc_fail("argument \"values\": %s failed on values[%zu]", fn, i);
}

int ga_window(const Interval *interv, const char *name, json_t **err)
{
    /* A window of no length makes MEOS build a sequence with a repeated
     * timestamp, fail, and lose the state it had just made. */
    bool nonnegative = interv->month >= 0 && interv->day >= 0 && interv->time >= 0;
    if (nonnegative && (interv->month || interv->day || interv->time))
        return 0;
    *err = mc_fail("argument \"%s\": the window must be a positive interval, e.g. 00:10:00",
                   name);
    return -1;
}
