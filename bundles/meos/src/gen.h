/*
 * What the generated tools (build/gen/tools_gen.c) call: decoders from JSON
 * arguments to MEOS values and encoders back. Compiled against the 1.3
 * prototypes of the sdist's builder/meos.h (build/gen/meos_api.h), so a
 * wrong type anywhere is a compile error.
 *
 * Ownership: every decoded pointer, and every result handed to an encoder
 * or an array kept whole, is kept by the call (mc_keep) and freed when it
 * ends. The generated code frees three things itself, each one MEOS gave it
 * that nothing keeps yet: the result of a call that also reported an error
 * (free(r) before returning the error), a pointer an out-parameter call wrote
 * before reporting an error (free(out)), and an aggregate's state when the
 * fold is given up or fails (ga_gave_up, ga_agg_fail); a state that reaches
 * the end is the result, or is handed to the aggregate's final function.
 * Static strings (const char *, or policy.toml [static]) are never freed.
 */
#ifndef MEOS_GEN_H
#define MEOS_GEN_H

#include "call.h"
#include "meos_api.h"

/* The serialized families a parameter or a result can belong to. The
 * decoding order inside each family is in policy.toml ([decode]). */
typedef enum {
    GF_TEMPORAL,
    GF_SET,
    GF_SPAN,
    GF_SPANSET,
    GF_TBOX,
    GF_STBOX,
    GF_GEOMETRY,
    GF_GEOGRAPHY,
    GF_NPOINT,
    GF_NSEGMENT,
} gen_family_t;

/* ---- Decoders. Each returns NULL / -1 with *err set on failure. ---- */

/* A value of the family from MEOS text, MF-JSON (temporal points) or
 * HexWKB, classified by what it says it is; geodetic: points and
 * geometries are geographies; types (n_types of them, or NULL for any):
 * the meosType codes the function takes (for span sets, of their spans).
 * Kept by the call. */
void *ga_value(call_t *c, json_t *args, const char *name, gen_family_t family, bool geodetic,
               const int *types, size_t n_types, json_t **err);
text *ga_text(call_t *c, json_t *args, const char *name, json_t **err);
const char *ga_cstring(json_t *args, const char *name, json_t **err);
int ga_int(json_t *args, const char *name, int64_t min, int64_t max, int64_t *out,
           json_t **err);
int ga_double(json_t *args, const char *name, double *out, json_t **err);
int ga_bool(json_t *args, const char *name, bool *out, json_t **err);
int ga_timestamptz(json_t *args, const char *name, TimestampTz *out, json_t **err);
int ga_date(json_t *args, const char *name, DateADT *out, json_t **err);
Interval *ga_interval(call_t *c, json_t *args, const char *name, json_t **err);
/* One of `n` C constant names; *out gets the matching value. */
int ga_enum(json_t *args, const char *name, const char *const *names, const int *values,
            size_t n, int *out, json_t **err);

/* ---- Encoders of one value: a new reference, or NULL when MEOS fails.
 * Pointers given to them are kept by the call. ---- */

json_t *ge_value(call_t *c, const void *v, gen_family_t family);
/* The same for an element of a contiguous array, which is not freed on
 * its own. */
json_t *ge_value_borrowed(const void *v, gen_family_t family);
json_t *ge_text(call_t *c, const text *t);
json_t *ge_cstring(call_t *c, char *s, bool owned);
json_t *ge_timestamptz(call_t *c, TimestampTz t);
json_t *ge_date(call_t *c, DateADT d);
json_t *ge_interval(call_t *c, const Interval *iv);
json_t *ge_double(double d);
json_t *ge_int(int64_t i);
json_t *ge_uint(uint64_t u);
json_t *ge_bool(bool b);

/* The meosType of a decoded value (a span set's: its spans'). */
int gv_type(const void *v, gen_family_t family);

/* ---- Aggregates (gen_agg.c) ---- */

/* The most bytes of text the values of one aggregate call hold (the most
 * values is policy.toml's [aggregates] max_values). */
#define GA_MAX_BYTES (64 * 1024 * 1024)

/* The array argument `name`, *n its length; NULL with *err set when it is
 * not an array, holds more than max values or more than GA_MAX_BYTES of
 * text. Borrowed from args. */
json_t *ga_array(json_t *args, const char *name, size_t max, size_t *n, json_t **err);
/* A new object holding the i-th element under the label name[i], which the
 * single-argument decoders read. label: size bytes, filled. */
json_t *ga_item(json_t *array, size_t i, const char *name, char *label, size_t size);
/* 0 when the decoded values (borrowed) hold at most max instants in all: a
 * temporal value counts its instants, a set its values, a span set its
 * spans, any other value one; -1 with *err set, saying how many. */
int ga_instants(const void *const *v, size_t n, gen_family_t family, size_t max,
                const char *name, json_t **err);
/* The result of an aggregate given up because its call was cancelled; frees
 * the state (taken). */
json_t *ga_gave_up(void *state, bool skiplist);
/* 0 when the decoded values (borrowed) can be aggregated together: one
 * type; into a skip list, one kind of temporal subtype and interpolation;
 * spatial values of one SRID and dimensionality. -1 with *err set. */
int ga_agg_check(const void *const *v, size_t n, gen_family_t family, bool skiplist,
                 const char *name, json_t **err);
/* The error of a transition function that failed on element i; frees the
 * state it left (state: taken). */
json_t *ga_agg_fail(const char *fn, size_t i, void *state, bool skiplist);

/* 0 when a window aggregate's interval is positive; -1 with *err set. */
int ga_window(const Interval *interv, const char *name, json_t **err);

/* 0 when this libmeos's skip lists are laid out as ga_skiplist expects
 * (checked once); -1 with *err set, and the skip-list aggregates refuse. */
int ga_skiplist_ready(json_t **err);
/* state (borrowed, nullable), made safe for skiplist_free and the final
 * functions that call it: the uninitialised keys MEOS 1.3 leaves in a
 * grown temporal skip list cleared. Returns state. */
SkipList *ga_skiplist(SkipList *state);
/* Sorts decoded spans (GF_SPAN) or span sets (GF_SPANSET, by their
 * bounding span) in place, as MEOS 1.3's span set union needs them past 64
 * spans; other families are left as they are. */
void ga_sort(const void **v, size_t n, gen_family_t family);

/* Exported by libmeos 1.3 without a prototype in its public header. */
void skiplist_free(SkipList *list);
SkipList *temporal_skiplist_make(void);

/* ---- Bounds (gen_bounds.c): how many pieces a bin, tile, box, split or
 * sample call asks for, from its arguments. NAN when a size or duration is
 * one MEOS cannot take without dividing by zero. v: borrowed, nullable
 * (then the role counts 1 and only checks its sizes). ---- */

/* Bins of size from origin along the value's numbers. */
double gb_values(const void *v, gen_family_t family, double size, double origin);
/* Bins of duration from origin (microseconds; days when dates) along its time. */
double gb_times(const void *v, gen_family_t family, const Interval *duration, double origin,
                bool dates);
/* Tiles of its spatial extent (z only when it has z). */
double gb_space(const void *v, gen_family_t family, double xsize, double ysize, double zsize);
/* A count asked for: n, or the value's elements when fewer. */
double gb_count(int64_t n, const void *v, gen_family_t family);
/* 0, or -1 with *err set when pieces is NAN or over bound. */
int gb_check(const char *fn, double pieces, double bound, json_t **err);

/* ---- Results ---- */

/* {"result": value} as structuredContent; an error result when MEOS
 * reported one or value is NULL. value: stolen. */
json_t *gr_result(const char *fn, json_t *value);
/* {"result": null}: the function answered nothing (a NULL without an
 * error, or false from a function with an out-parameter). */
json_t *gr_none(const char *fn);
/* The error of a failed call, or NULL when MEOS reported none. */
json_t *gr_check(const char *fn);

/* ---- The generated table (build/gen/tools_gen.c) ---- */

typedef struct {
    /* function: the MEOS function called (an aggregate's transition function);
     * title: what it computes, in a few words; variant_of: the tool that does
     * the same with its arguments the other way round, put first by a search,
     * or "". */
    const char *name, *function, *category, *title, *description, *input, *output, *variant_of;
    tool_fn fn;
    /* Offered only with a road network (a ways file, ways.c). */
    bool network;
} gen_tool_t;

extern const gen_tool_t gen_tools[];
extern const size_t gen_tools_count;
extern const char gen_annotations[];

#endif
