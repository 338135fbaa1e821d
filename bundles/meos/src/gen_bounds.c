/*
 * How many pieces a bin, tile, box, split or sample call asks for, counted
 * from its arguments before MEOS is called.
 *
 * The size of these answers is set by a size, duration or count argument,
 * not by the value: a bin width of 1e-9 over [0, 1000] asks MEOS for 1e12
 * bins, a call that runs for minutes and exhausts memory. policy.toml
 * ([bounds]) names the functions; the generator reads the roles of their
 * parameters (a value size and origin, a duration and time origin, x/y/z
 * sizes, a count) and multiplies the counts of each role. A count is an
 * upper bound: a bin that the value only touches at an excluded bound is
 * counted, and spatial tiles are counted without their origin's offset.
 *
 * Sizes must be positive, and a date bin must last at least a day: MEOS 1.3
 * divides by zero on an integer size of 0 or a date duration under a day
 * (SIGFPE). Such calls are refused here (NAN); other invalid arguments (a
 * negative float size, a duration in months) MEOS reports itself.
 */
#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USECS_PER_DAY 86400e6

/* A span bound as a number: time in microseconds, dates too. */
static double bound_value(const Span *s, Datum d)
{
    switch (s->basetype) {
    case T_INT4:
        return (double)(int32_t)d;
    case T_INT8:
        return (double)(int64_t)d;
    case T_DATE:
        return (double)(int32_t)d * USECS_PER_DAY;
    case T_TIMESTAMPTZ:
        return (double)(int64_t)d;
    default: {
        double f;
        memcpy(&f, &d, sizeof f);
        return f;
    }
    }
}

/* Bins of `size` aligned on `origin` that [lo, hi] meets. */
static double bins_over(double lo, double hi, double size, double origin)
{
    double n = floor((hi - origin) / size) - floor((lo - origin) / size) + 1;
    return isfinite(n) ? n : INFINITY;
}

static double bins_of_span(const Span *s, double size, double origin)
{
    return bins_over(bound_value(s, s->lower), bound_value(s, s->upper), size, origin);
}

/* The span of the value along numbers (time = false) or time; NULL when it
 * has none there (MEOS then reports the missing dimension itself). The
 * span is copied into *out. */
static const Span *span_of(const void *v, gen_family_t family, bool time, Span *out)
{
    switch (family) {
    case GF_SPAN:
        return v;
    case GF_SPANSET:
        return &((const SpanSet *)v)->span;
    case GF_TBOX: {
        const TBox *box = v;
        if (time ? !tbox_hast(box) : !tbox_hasx(box))
            return NULL;
        *out = time ? box->period : box->span;
        return out;
    }
    case GF_STBOX: {
        const STBox *box = v;
        if (!time || !stbox_hast(box))
            return NULL;
        *out = box->period;
        return out;
    }
    case GF_TEMPORAL: {
        Span *s = time ? temporal_to_tstzspan(v) : tnumber_to_span(v);
        if (!s)
            return NULL;
        *out = *s;
        free(s);
        return out;
    }
    default:
        return NULL;
    }
}

double gb_values(const void *v, gen_family_t family, double size, double origin)
{
    if (!(size > 0))
        return NAN;
    Span span;
    const Span *s = v ? span_of(v, family, false, &span) : NULL;
    return s ? bins_of_span(s, size, origin) : 1;
}

double gb_times(const void *v, gen_family_t family, const Interval *duration, double origin,
                bool dates)
{
    /* Months have no fixed length: MEOS refuses them itself. */
    if (duration->month)
        return 1;
    double usecs = duration->day * USECS_PER_DAY + (double)duration->time;
    if (!(usecs > 0) || (dates && usecs < USECS_PER_DAY))
        return NAN;
    Span span;
    const Span *s = v ? span_of(v, family, true, &span) : NULL;
    return s ? bins_of_span(s, usecs, dates ? origin * USECS_PER_DAY : origin) : 1;
}

/* Tiles of size along one axis of length len: at most len / size + 2,
 * wherever the grid's origin falls. */
static double tiles_along(double len, double size)
{
    double n = floor(len / size) + 2;
    return isfinite(n) ? n : INFINITY;
}

double gb_space(const void *v, gen_family_t family, double xsize, double ysize, double zsize)
{
    const STBox *box = v;
    STBox *owned = NULL;
    if (family == GF_TEMPORAL)
        box = owned = tspatial_to_stbox(v);
    if (!box)
        return 1;
    double n = NAN;
    bool hasz = stbox_hasz(box);
    if (xsize > 0 && ysize > 0 && (!hasz || zsize > 0) && stbox_hasx(box)) {
        n = tiles_along(box->xmax - box->xmin, xsize) * tiles_along(box->ymax - box->ymin, ysize);
        if (hasz)
            n *= tiles_along(box->zmax - box->zmin, zsize);
    } else if (!stbox_hasx(box)) {
        n = 1;
    }
    free(owned);
    return n;
}

double gb_count(int64_t n, const void *v, gen_family_t family)
{
    if (n <= 0)
        return NAN;
    /* n pieces are asked for; no more than the value's elements are made. */
    int elements = !v                     ? INT32_MAX
                   : family == GF_SET     ? set_num_values(v)
                   : family == GF_SPANSET ? spanset_num_spans(v)
                   : family == GF_TEMPORAL ? temporal_num_instants(v)
                   : family == GF_GEOMETRY || family == GF_GEOGRAPHY ? geo_num_points(v)
                                                                      : INT32_MAX;
    return (double)(n < elements ? n : elements);
}

int gb_check(const char *fn, double pieces, double bound, json_t **err)
{
    if (isnan(pieces)) {
        *err = mc_fail("%s: its size, duration and count arguments must be positive, and a "
                       "bin of dates must last at least a day",
                       fn);
        return -1;
    }
    if (pieces > bound) {
        char count[48];
        snprintf(count, sizeof count, isinf(pieces) ? "more pieces than can be counted"
                                                    : "up to %.0f pieces",
                 pieces);
        *err = mc_fail("%s would make %s (bins, tiles or boxes), over the bound of %.0f for "
                       "one call: use a larger size or duration argument, or a smaller value",
                       fn, count, bound);
        return -1;
    }
    return 0;
}
