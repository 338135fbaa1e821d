/* The tools: schemas, descriptions and bodies. */
#include "bundle.h"
#include "view.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Decimal digits of coordinates and floats in answers: all of a double. */
#define DIGITS 15

/* A resample may not produce more instants than this. */
#define MAX_SAMPLES 1000000

/* ------------------------------------------------------------------------
 * Schemas. Descriptions avoid double quotes to stay readable here.
 * ------------------------------------------------------------------------ */

#define FORMS                                                                                  \
    "MEOS text such as [POINT(0 0)@2025-01-01T08:00:00Z, POINT(300 400)@2025-01-01T08:10:00Z] " \
    "(one instant is POINT(1 2)@2025-01-01T08:00:00Z, a set of instants {...}, a sequence set " \
    "{[...], [...]}; prefix SRID=4326; for coordinates in a reference system, Interp=Step; for " \
    "stepwise movement), OGC MF-JSON ({type: MovingPoint, coordinates, datetimes, ...}) or MEOS " \
    "HexWKB, detected automatically. Timestamps are ISO 8601, UTC when they have no offset. At " \
    "most 1 MiB."

#define P_POINT "\"point\":{\"type\":\"string\",\"description\":\"A moving point (tgeompoint): " FORMS "\"}"
#define P_OTHER                                                                                \
    "\"other\":{\"type\":\"string\",\"description\":\"A second moving point, in the same forms " \
    "as point and with the same SRID.\"}"
#define P_FORMAT                                                                               \
    "\"format\":{\"type\":\"string\",\"enum\":[\"text\",\"mfjson\",\"hexwkb\"],\"default\":"   \
    "\"text\",\"description\":\"Encoding of the returned moving value: text (MEOS text, the "   \
    "default), mfjson (OGC Moving Features JSON) or hexwkb (MEOS HexWKB).\"}"
#define P_GEOFORMAT                                                                            \
    "\"format\":{\"type\":\"string\",\"enum\":[\"text\",\"hexwkb\",\"geojson\"],\"default\":"  \
    "\"text\",\"description\":\"Encoding of the returned geometry: text (WKT, prefixed SRID=n; " \
    "when it has an SRID; the default), hexwkb (HexEWKB) or geojson.\"}"
#define P_GEOMETRY(what)                                                                       \
    "\"geometry\":{\"type\":\"string\",\"description\":\"" what " as WKT, e.g. POLYGON((0 0, "  \
    "150 0, 150 200, 0 200, 0 0)), or EWKT (SRID=4326;POLYGON(...)); plain WKT takes the "      \
    "point's SRID.\"}"
#define P_TIME(key, what)                                                                      \
    "\"" key "\":{\"type\":\"string\",\"description\":\"" what                                 \
    ", ISO 8601, e.g. 2025-01-01T08:05:00Z (UTC without an offset).\"}"
#define P_NUMBER(key, min, what)                                                               \
    "\"" key "\":{\"type\":\"number\",\"minimum\":" #min ",\"description\":\"" what "\"}"

#define OBJECT(props, required)                                                                \
    "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" required                  \
    "],\"additionalProperties\":false}"

#define NUM "{\"type\":[\"number\",\"null\"]}"
#define STR "{\"type\":\"string\"}"
#define INT "{\"type\":\"integer\"}"

#define BOX_PROPS                                                                              \
    "\"xmin\":" NUM ",\"ymin\":" NUM ",\"zmin\":" NUM ",\"xmax\":" NUM ",\"ymax\":" NUM          \
    ",\"zmax\":" NUM ",\"tmin\":" STR ",\"tmax\":" STR ",\"srid\":" INT

/* ------------------------------------------------------------------------
 * Answers
 * ------------------------------------------------------------------------ */

static const char *arg_format(json_t *args)
{
    const char *f = json_string_value(json_object_get(args, "format"));
    return f ? f : "text";
}

/* Numbers in structured answers; a non-finite one (from infinite
 * coordinates) becomes null. */
static void put_number(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

static void put_time(json_t *o, const char *key, TimestampTz t)
{
    char text[40];
    ts_format(t, text);
    json_object_set_new(o, key, json_string(text));
}

static double interval_seconds(const Interval *iv)
{
    /* PostgreSQL counts a month as 30 days when it must convert. */
    return (double)iv->time / 1e6 + (iv->day + 30.0 * iv->month) * 86400.0;
}

/* A moving point (spatial) or moving float in the format asked for, kept
 * by the call; NULL when MEOS fails. */
static const char *temporal_text(call_t *c, const Temporal *t, bool spatial, const char *format)
{
    if (!strcmp(format, "mfjson")) {
        char srs[32] = "";
        int32_t srid = spatial ? tspatial_srid(t) : 0;
        if (srid > 0)
            snprintf(srs, sizeof srs, "EPSG:%d", (int)srid);
        return mc_keep(c, temporal_as_mfjson(t, false, 0, DIGITS, srid > 0 ? srs : NULL));
    }
    if (!strcmp(format, "hexwkb")) {
        size_t size;
        return mc_keep(c, temporal_as_hexwkb(t, MEOS_WKB_EXTENDED, &size));
    }
    return mc_keep(c, spatial ? tspatial_as_ewkt(t, DIGITS) : tfloat_out(t, DIGITS));
}

static const char *geometry_text(call_t *c, const GSERIALIZED *g, const char *format)
{
    if (!strcmp(format, "hexwkb"))
        return mc_keep(c, geo_as_hexewkb(g, "NDR"));
    if (!strcmp(format, "geojson"))
        return mc_keep(c, geo_as_geojson(g, 0, DIGITS, NULL));
    return mc_keep(c, geo_as_ewkt(g, DIGITS));
}

static json_t *reply_temporal(call_t *c, const Temporal *t, bool spatial, json_t *args)
{
    const char *text = temporal_text(c, t, spatial, arg_format(args));
    if (!text || mc_failed())
        return mc_fail("cannot write the answer as %s", arg_format(args));
    return tn_result_text(text);
}

static json_t *reply_geometry(call_t *c, const GSERIALIZED *g, json_t *args)
{
    const char *text = geometry_text(c, g, arg_format(args));
    if (!text || mc_failed())
        return mc_fail("cannot write the answer as %s", arg_format(args));
    return tn_result_text(text);
}

/* Fills `o` with the bounding box of t, and returns the box (kept by the
 * call), or NULL. */
static STBox *put_box(call_t *c, json_t *o, const Temporal *t)
{
    STBox *box = mc_keep(c, tspatial_to_stbox(t));
    if (!box || mc_failed())
        return NULL;
    static const struct {
        const char *key;
        bool (*get)(const STBox *, double *);
        bool z;
    } sides[] = {
        {"xmin", stbox_xmin, false}, {"ymin", stbox_ymin, false}, {"zmin", stbox_zmin, true},
        {"xmax", stbox_xmax, false}, {"ymax", stbox_ymax, false}, {"zmax", stbox_zmax, true},
    };
    bool hasz = stbox_hasz(box);
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        double v;
        if (sides[i].z && !hasz)
            continue;
        if (!sides[i].get(box, &v))
            return NULL;
        put_number(o, sides[i].key, v);
    }
    TimestampTz tmin, tmax;
    if (!stbox_tmin(box, &tmin) || !stbox_tmax(box, &tmax))
        return NULL;
    put_time(o, "tmin", tmin);
    put_time(o, "tmax", tmax);
    json_object_set_new(o, "srid", json_integer(stbox_srid(box)));
    return mc_failed() ? NULL : box;
}

/* ------------------------------------------------------------------------
 * Tool bodies
 * ------------------------------------------------------------------------ */

static json_t *describe(call_t *c, json_t *args)
{
    json_t *err = NULL, *out = mc_out(c);
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    Interval *duration = mc_keep(c, temporal_duration(t, false));
    GSERIALIZED *first = mc_keep(c, tgeo_start_value(t));
    GSERIALIZED *last = mc_keep(c, tgeo_end_value(t));
    const char *first_text = first ? mc_keep(c, geo_as_ewkt(first, DIGITS)) : NULL;
    const char *last_text = last ? mc_keep(c, geo_as_ewkt(last, DIGITS)) : NULL;
    const char *duration_text = duration ? mc_keep(c, interval_out(duration)) : NULL;
    if (!duration_text || !first_text || !last_text || mc_failed())
        return mc_fail("cannot describe the point");

    json_object_set_new(out, "type", json_string("tgeompoint"));
    json_object_set_new(out, "subtype", json_string(temporal_subtype(t)));
    json_object_set_new(out, "interpolation", json_string(temporal_interp(t)));
    json_object_set_new(out, "instants", json_integer(temporal_num_instants(t)));
    put_time(out, "start", temporal_start_timestamptz(t));
    put_time(out, "end", temporal_end_timestamptz(t));
    json_object_set_new(out, "duration", json_string(duration_text));
    put_number(out, "duration_seconds", interval_seconds(duration));
    json_object_set_new(out, "srid", json_integer(tspatial_srid(t)));
    put_number(out, "length", tpoint_length(t));
    json_object_set_new(out, "start_position", json_string(first_text));
    json_object_set_new(out, "end_position", json_string(last_text));
    json_t *bbox = json_object();
    json_object_set_new(out, "bbox", bbox);
    if (!put_box(c, bbox, t) || mc_failed())
        return mc_fail("cannot describe the point");
    return mc_structured(c);
}

static json_t *convert(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *t = arg_point(c, args, "point", &err);
    return t ? reply_temporal(c, t, true, args) : err;
}

static json_t *length(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    double len = tpoint_length(t);
    if (mc_failed())
        return mc_fail("cannot compute the length");
    put_number(mc_out(c), "length", len);
    return mc_structured(c);
}

static json_t *speed(call_t *c, json_t *args)
{
    json_t *err = NULL, *out = mc_out(c);
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    Temporal *s = mc_keep(c, tpoint_speed(t));
    if (!s || mc_failed())
        return mc_fail("cannot compute the speed");
    const char *text = temporal_text(c, s, false, arg_format(args));
    if (!text)
        return mc_fail("cannot write the speed as %s", arg_format(args));
    json_object_set_new(out, "speed", json_string(text));
    put_number(out, "min", tfloat_min_value(s));
    put_number(out, "max", tfloat_max_value(s));
    put_number(out, "time_weighted_average", tnumber_twavg(s));
    if (mc_failed())
        return mc_fail("cannot compute the speed");
    return mc_structured(c);
}

static json_t *duration(call_t *c, json_t *args)
{
    json_t *err = NULL, *out = mc_out(c);
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    Interval *covered = mc_keep(c, temporal_duration(t, false));
    Interval *span = mc_keep(c, temporal_duration(t, true));
    const char *covered_text = covered ? mc_keep(c, interval_out(covered)) : NULL;
    const char *span_text = span ? mc_keep(c, interval_out(span)) : NULL;
    if (!covered_text || !span_text || mc_failed())
        return mc_fail("cannot compute the duration");
    json_object_set_new(out, "duration", json_string(covered_text));
    put_number(out, "seconds", interval_seconds(covered));
    json_object_set_new(out, "timespan", json_string(span_text));
    put_number(out, "timespan_seconds", interval_seconds(span));
    return mc_structured(c);
}

static json_t *value_at(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *t = arg_point(c, args, "point", &err);
    TimestampTz at;
    if (!t || arg_time(c, args, "timestamp", &at, &err) != 0)
        return err;
    GSERIALIZED *g = NULL;
    /* g is left unset when nothing is found. */
    bool found = tgeo_value_at_timestamptz(t, at, true, &g);
    if (found)
        mc_keep(c, g);
    if (mc_failed())
        return mc_fail("cannot find the position");
    if (!found) {
        char when[40], start[40], end[40];
        ts_format(at, when);
        ts_format(temporal_start_timestamptz(t), start);
        ts_format(temporal_end_timestamptz(t), end);
        return mc_fail("empty result: the point has no position at %s; it is defined from %s "
                       "to %s, possibly with gaps",
                       when, start, end);
    }
    return reply_geometry(c, g, args);
}

static json_t *at_period(call_t *c, json_t *args)
{
    json_t *err = NULL;
    TimestampTz from, to;
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t || arg_time(c, args, "start", &from, &err) != 0 ||
        arg_time(c, args, "end", &to, &err) != 0)
        return err;
    if (to < from)
        return mc_fail("end is before start");
    Span *period = mc_keep(c, tstzspan_make(from, to, true, true));
    Temporal *r = period ? mc_keep(c, temporal_at_tstzspan(t, period)) : NULL;
    if (mc_failed())
        return mc_fail("cannot restrict the point to the period");
    if (!r)
        return mc_fail("empty result: the point is not defined between start and end");
    return reply_temporal(c, r, true, args);
}

static json_t *at_geometry(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *t = arg_point(c, args, "point", &err);
    GSERIALIZED *g = t ? arg_geometry(c, args, "geometry", tspatial_srid(t), &err) : NULL;
    if (!g)
        return err;
    Temporal *r = mc_keep(c, tgeo_at_geom(t, g));
    if (mc_failed())
        return mc_fail("cannot restrict the point to the geometry");
    if (!r)
        return mc_fail("empty result: the point never is in the geometry");
    return reply_temporal(c, r, true, args);
}

static json_t *trajectory(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    GSERIALIZED *g = mc_keep(c, tpoint_trajectory(t, false));
    if (!g || mc_failed())
        return mc_fail("cannot compute the trajectory");
    return reply_geometry(c, g, args);
}

static json_t *time_weighted_centroid(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    GSERIALIZED *g = mc_keep(c, tpoint_twcentroid(t));
    if (!g || mc_failed())
        return mc_fail("cannot compute the centroid");
    return reply_geometry(c, g, args);
}

#define NO_COMMON_TIME "the two points are never defined at the same time"

/* Reads point and other; NULL and *err on failure. */
static Temporal *two_points(call_t *c, json_t *args, Temporal **other, json_t **err)
{
    Temporal *t = arg_point(c, args, "point", err);
    *other = t ? arg_point(c, args, "other", err) : NULL;
    return *other ? t : NULL;
}

static json_t *distance(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *other, *t = two_points(c, args, &other, &err);
    if (!t)
        return err;
    Temporal *d = mc_keep(c, tdistance_tgeo_tgeo(t, other));
    if (mc_failed())
        return mc_fail("cannot compute the distance");
    if (!d)
        return mc_fail("empty result: " NO_COMMON_TIME);
    return reply_temporal(c, d, false, args);
}

static json_t *nearest_approach_distance(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *other, *t = two_points(c, args, &other, &err);
    if (!t)
        return err;
    double d = nad_tgeo_tgeo(t, other);
    if (mc_failed())
        return mc_fail("cannot compute the nearest approach distance");
    /* Without a common time MEOS answers DBL_MAX, not an error. */
    if (d < 0 || d >= DBL_MAX)
        return mc_fail("empty result: the two points are never defined at the same time");
    put_number(mc_out(c), "distance", d);
    return mc_structured(c);
}

/* A 1/0/-1 answer of MEOS's ever relationships; -1 without an error
 * message means MEOS had nothing to compare, explained by `none`. */
static json_t *reply_ever(call_t *c, int answer, const char *what, const char *none)
{
    if (mc_failed())
        return mc_fail("cannot tell whether %s", what);
    if (answer < 0)
        return mc_fail("cannot tell whether %s: %s", what, none);
    json_object_set_new(mc_out(c), "result", json_boolean(answer));
    return mc_structured(c);
}

static json_t *ever_within_distance(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *other, *t = two_points(c, args, &other, &err);
    if (!t)
        return err;
    double dist = arg_number(args, "distance", -1);
    if (dist < 0)
        return mc_fail("argument \"distance\" must be a number, at least 0");
    return reply_ever(c, edwithin_tgeo_tgeo(t, other, dist), "the points come that close",
                      NO_COMMON_TIME);
}

static json_t *ever_intersects(call_t *c, json_t *args)
{
    json_t *err = NULL;
    bool with_point = json_object_get(args, "other") != NULL;
    if (with_point == (json_object_get(args, "geometry") != NULL))
        return mc_fail("give exactly one of \"geometry\" (WKT) and \"other\" (a moving point)");
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    if (with_point) {
        Temporal *other = arg_point(c, args, "other", &err);
        if (!other)
            return err;
        return reply_ever(c, eintersects_tgeo_tgeo(t, other), "the points ever meet",
                          NO_COMMON_TIME);
    }
    GSERIALIZED *g = arg_geometry(c, args, "geometry", tspatial_srid(t), &err);
    if (!g)
        return err;
    return reply_ever(c, eintersects_tgeo_geo(t, g), "the point meets the geometry",
                      "the geometry is empty");
}

static json_t *simplify(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    double tolerance = arg_number(args, "tolerance", -1);
    if (tolerance < 0)
        return mc_fail("argument \"tolerance\" must be a number, at least 0");
    bool synchronized = json_is_true(json_object_get(args, "synchronized"));
    Temporal *r = mc_keep(c, temporal_simplify_dp(t, tolerance, synchronized));
    if (!r || mc_failed())
        return mc_fail("cannot simplify the point");
    return reply_temporal(c, r, true, args);
}

static json_t *transform(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    double srid = arg_number(args, "srid", 0);
    if (srid < 1 || srid > INT32_MAX || srid != floor(srid))
        return mc_fail("argument \"srid\" must be a positive integer, e.g. 3857");
    /* PROJ remembers a failed lookup and blames the next transform that
     * MEOS serves from its cache, so unknown SRIDs never reach it. */
    int32_t from = tspatial_srid(t);
    if (!mc_srid_known((int32_t)srid) || (from && !mc_srid_known(from)))
        return mc_fail("unknown SRID %d; use an EPSG code such as 3857, 4326 or 326xx for UTM",
                       (int)(mc_srid_known((int32_t)srid) ? from : srid));
    Temporal *r = mc_keep(c, tspatial_transform(t, (int32_t)srid));
    if (!r || mc_failed())
        return mc_fail("cannot transform the point to SRID %d", (int)srid);
    return reply_temporal(c, r, true, args);
}

static json_t *resample(call_t *c, json_t *args)
{
    json_t *err = NULL;
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    double seconds = arg_number(args, "interval_seconds", 0);
    Interval step = {.time = (int64_t)llround(seconds * 1e6)};
    if (!(seconds * 1e6 < 1e15) || step.time < 1)
        return mc_fail("argument \"interval_seconds\" must be between 1e-6 and 1e9");
    TimestampTz start = temporal_start_timestamptz(t), end = temporal_end_timestamptz(t);
    TimestampTz origin = start;
    if (json_object_get(args, "origin") && arg_time(c, args, "origin", &origin, &err) != 0)
        return err;
    if ((double)(end - start) / (double)step.time > MAX_SAMPLES)
        return mc_fail("resampling every %g s would give more than %d instants", seconds,
                       MAX_SAMPLES);
    const char *name = json_string_value(json_object_get(args, "interpolation"));
    int interp = !name || !strcmp(name, "discrete") ? MEOS_INTERP_DISCRETE
                 : !strcmp(name, "step")             ? MEOS_INTERP_STEP
                                                     : MEOS_INTERP_LINEAR;
    Temporal *r = mc_keep(c, temporal_tsample(t, &step, origin, interp));
    if (mc_failed())
        return mc_fail("cannot resample the point");
    if (!r)
        return mc_fail("empty result: no sample time falls within the point's time span");
    return reply_temporal(c, r, true, args);
}

static json_t *stbox(call_t *c, json_t *args)
{
    json_t *err = NULL, *out = mc_out(c);
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    STBox *box = put_box(c, out, t);
    const char *text = box ? mc_keep(c, stbox_out(box, DIGITS)) : NULL;
    if (!text || mc_failed())
        return mc_fail("cannot compute the bounding box");
    json_object_set_new(out, "box", json_string(text));
    return mc_structured(c);
}

static json_t *stops(call_t *c, json_t *args)
{
    json_t *err = NULL, *out = mc_out(c), *list = json_array();
    json_object_set_new(out, "stops", list);
    Temporal *t = arg_point(c, args, "point", &err);
    if (!t)
        return err;
    double max_distance = arg_number(args, "max_distance", -1);
    double min_seconds = arg_number(args, "min_duration_seconds", -1);
    if (max_distance < 0 || min_seconds < 0 || !(min_seconds < 1e9))
        return mc_fail("arguments \"max_distance\" and \"min_duration_seconds\" must be numbers, "
                       "at least 0");
    Interval min_duration = {.time = (int64_t)llround(min_seconds * 1e6)};
    Temporal *found = mc_keep(c, temporal_stops(t, max_distance, &min_duration));
    if (mc_failed())
        return mc_fail("cannot look for stops");
    int n = found ? temporal_num_sequences(found) : 0;
    for (int i = 1; i <= n; i++) {
        if (mc_cancelled(c))
            return mc_gave_up();
        Temporal *seq = mc_keep(c, temporal_sequence_n(found, i));
        GSERIALIZED *where = seq ? mc_keep(c, tpoint_twcentroid(seq)) : NULL;
        const char *where_text = where ? mc_keep(c, geo_as_ewkt(where, DIGITS)) : NULL;
        if (!where_text || mc_failed())
            return mc_fail("cannot describe stop %d", i);
        TimestampTz from = temporal_start_timestamptz(seq), to = temporal_end_timestamptz(seq);
        json_t *stop = json_object();
        json_array_append_new(list, stop);
        put_time(stop, "start", from);
        put_time(stop, "end", to);
        put_number(stop, "duration_seconds", (double)(to - from) / 1e6);
        json_object_set_new(stop, "position", json_string(where_text));
    }
    json_object_set_new(out, "count", json_integer(n));
    return mc_structured(c);
}

/* ------------------------------------------------------------------------
 * The table
 * ------------------------------------------------------------------------ */

struct tool {
    /* category: in the words of the generated tools' (docs/functions.md). */
    const char *name, *category, *title, *description, *input, *output;
    tool_fn fn;
};

static const struct tool tools[] = {
    {"describe", "accessors", "Describe a moving point",
     "Summarize a moving point (a summary of the value): subtype (Instant, Sequence or SequenceSet), interpolation "
     "(None, Discrete, Step or Linear), number of instants, start and end times, duration, "
     "SRID, travelled length, first and last positions, and bounding box. A good first call "
     "on an unfamiliar value.",
     OBJECT(P_POINT, "\"point\""),
     OBJECT("\"type\":" STR ",\"subtype\":" STR ",\"interpolation\":" STR ",\"instants\":" INT
            ",\"start\":" STR ",\"end\":" STR ",\"duration\":" STR ",\"duration_seconds\":" NUM
            ",\"srid\":" INT ",\"length\":" NUM ",\"start_position\":" STR
            ",\"end_position\":" STR ",\"bbox\":{\"type\":\"object\",\"properties\":{" BOX_PROPS
            "}}",
            "\"type\",\"subtype\",\"interpolation\",\"instants\",\"start\",\"end\",\"duration\","
            "\"duration_seconds\",\"srid\",\"length\",\"start_position\",\"end_position\","
            "\"bbox\""),
     describe},
    {"convert", "input/output", "Convert a moving point",
     "Re-encode a moving point as MEOS text, MF-JSON or HexWKB (argument format); the input "
     "may be in any of the three.",
     OBJECT(P_POINT "," P_FORMAT, "\"point\""), NULL, convert},
    {"length", "accessors", "Travelled length",
     "Length of the path a moving point travels (the total distance covered), in the units of "
     "its coordinates: metres for "
     "projected SRIDs such as 3857 or UTM zones, degrees for SRID 4326 (transform first to get "
     "metres). 0 for an instant, a set of instants or stepwise movement.",
     OBJECT(P_POINT, "\"point\""), OBJECT("\"length\":" NUM, "\"length\""), length},
    {"speed", "accessors", "Speed over time",
     "Speed (velocity) of a moving point as a moving float, in coordinate units per second, with its "
     "minimum, maximum and time-weighted average. Needs linear interpolation (a sequence "
     "[...] or a sequence set {[...], ...}).",
     OBJECT(P_POINT "," P_FORMAT, "\"point\""),
     OBJECT("\"speed\":" STR ",\"min\":" NUM ",\"max\":" NUM ",\"time_weighted_average\":" NUM,
            "\"speed\",\"min\",\"max\",\"time_weighted_average\""),
     speed},
    {"duration", "accessors", "Duration",
     "How long a moving point is defined: duration is the time its sequences cover, gaps "
     "excluded; timespan runs from its first to its last timestamp. Each as a PostgreSQL "
     "interval (e.g. 00:10:00, 1 day 02:00:00) and in seconds.",
     OBJECT(P_POINT, "\"point\""),
     OBJECT("\"duration\":" STR ",\"seconds\":" NUM ",\"timespan\":" STR
            ",\"timespan_seconds\":" NUM,
            "\"duration\",\"seconds\",\"timespan\",\"timespan_seconds\""),
     duration},
    {"value_at", "restrictions", "Position at a time",
     "Position of a moving point at a timestamp (where it was then), as a geometry. Fails with an empty-result "
     "error when the point is not defined then (before its start, after its end, in a gap).",
     OBJECT(P_POINT "," P_TIME("timestamp", "The time") "," P_GEOFORMAT,
            "\"point\",\"timestamp\""),
     NULL, value_at},
    {"at_period", "restrictions", "Restrict to a period",
     "The part of a moving point between start and end, both included. Fails with an "
     "empty-result error when the point is not defined in that period.",
     OBJECT(P_POINT "," P_TIME("start", "Start of the period") "," P_TIME("end", "End of the period")
            "," P_FORMAT,
            "\"point\",\"start\",\"end\""),
     NULL, at_period},
    {"at_geometry", "restrictions", "Restrict to a geometry",
     "The part of a moving point inside a geometry: the times it is in the area, on the line "
     "or at the point. Fails with an empty-result error when it never is.",
     OBJECT(P_POINT "," P_GEOMETRY("The area, line or point") "," P_FORMAT,
            "\"point\",\"geometry\""),
     NULL, at_geometry},
    {"trajectory", "accessors", "Trajectory",
     "The path of a moving point as a static geometry: a line (LINESTRING) for a linear sequence, a "
     "POINT or MULTIPOINT for instants, a collection when there are gaps.",
     OBJECT(P_POINT "," P_GEOFORMAT, "\"point\""), NULL, trajectory},
    {"distance", "distances", "Distance over time",
     "Distance between two moving points over time, as a moving float defined when both "
     "points are. Fails with an empty-result error when they never are at the same time.",
     OBJECT(P_POINT "," P_OTHER "," P_FORMAT, "\"point\",\"other\""), NULL, distance},
    {"nearest_approach_distance", "distances", "Nearest approach distance",
     "Smallest distance between two moving points at the same time, in coordinate units.",
     OBJECT(P_POINT "," P_OTHER, "\"point\",\"other\""),
     OBJECT("\"distance\":" NUM, "\"distance\""), nearest_approach_distance},
    {"ever_within_distance", "ever/always predicates", "Ever within a distance",
     "Whether two moving points are ever within distance (coordinate units) of each other at "
     "the same time.",
     OBJECT(P_POINT "," P_OTHER "," P_NUMBER("distance", 0, "The distance, in coordinate units."),
            "\"point\",\"other\",\"distance\""),
     OBJECT("\"result\":{\"type\":\"boolean\"}", "\"result\""), ever_within_distance},
    {"ever_intersects", "ever/always predicates", "Ever intersects",
     "Whether a moving point ever meets a static geometry (argument geometry) or another "
     "moving point at the same place and time (argument other). Give exactly one of the two.",
     OBJECT(P_POINT "," P_GEOMETRY("The static geometry") "," P_OTHER, "\"point\""),
     OBJECT("\"result\":{\"type\":\"boolean\"}", "\"result\""), ever_intersects},
    {"simplify", "transformations", "Simplify (Douglas-Peucker)",
     "Simplify a moving point with Douglas-Peucker, to fewer points (vertices): drop the instants whose removal keeps the "
     "path within tolerance of the original. With synchronized true the deviation is measured "
     "between positions at the same time, which also keeps changes of speed.",
     OBJECT(P_POINT "," P_NUMBER("tolerance", 0, "Largest deviation allowed, in coordinate units.")
            ",\"synchronized\":{\"type\":\"boolean\",\"default\":false,\"description\":"
            "\"Measure the deviation between positions at equal times.\"}," P_FORMAT,
            "\"point\",\"tolerance\""),
     NULL, simplify},
    {"transform", "transformations", "Change the spatial reference system",
     "Transform a moving point to another spatial reference system given by its EPSG code, "
     "e.g. 3857 (Web Mercator), 32631 (UTM zone 31N) or 4326 (WGS 84). The point must carry "
     "an SRID: MEOS text prefixed SRID=4326;, MF-JSON with a crs, or HexWKB that has one.",
     OBJECT(P_POINT ",\"srid\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"The target "
                    "EPSG code.\"}," P_FORMAT,
            "\"point\",\"srid\""),
     NULL, transform},
    {"resample", "transformations", "Resample at a regular interval",
     "Positions of a moving point every interval_seconds, at origin + k * interval_seconds "
     "within its time span (origin defaults to its start). interpolation discrete (default) "
     "gives the samples as a set of instants; linear or step gives a sequence through them, "
     "in which linear drops samples that lie on a straight path.",
     OBJECT(P_POINT "," P_NUMBER("interval_seconds", 0.000001, "Time between samples, in seconds.")
            "," P_TIME("origin", "A time the samples align to")
            ",\"interpolation\":{\"type\":\"string\",\"enum\":[\"discrete\",\"step\",\"linear\"],"
            "\"default\":\"discrete\"}," P_FORMAT,
            "\"point\",\"interval_seconds\""),
     NULL, resample},
    {"stbox", "conversions", "Bounding box",
     "Spatiotemporal bounding box of a moving point: x, y (and z) ranges, time range, SRID, and "
     "the MEOS STBOX text.",
     OBJECT(P_POINT, "\"point\""),
     OBJECT("\"box\":" STR "," BOX_PROPS,
            "\"box\",\"xmin\",\"ymin\",\"xmax\",\"ymax\",\"tmin\",\"tmax\",\"srid\""),
     stbox},
    {"stops", "transformations", "Find stops",
     "Where a moving point stopped: the periods of at least min_duration_seconds during which "
     "it stays within an area of size max_distance (coordinate units). For each stop: start, "
     "end, duration in seconds and position (time-weighted centroid). Needs a sequence or "
     "sequence set.",
     OBJECT(P_POINT "," P_NUMBER("max_distance", 0, "Size of the area the point stays in, in "
                                                     "coordinate units.")
            "," P_NUMBER("min_duration_seconds", 0, "Shortest stop, in seconds."),
            "\"point\",\"max_distance\",\"min_duration_seconds\""),
     OBJECT("\"count\":" INT ",\"stops\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
            "\"properties\":{\"start\":" STR ",\"end\":" STR ",\"duration_seconds\":" NUM
            ",\"position\":" STR "}}}",
            "\"count\",\"stops\""),
     stops},
    {"time_weighted_centroid", "accessors", "Time-weighted centroid",
     "Average position of a moving point, each position weighted by the time spent there: "
     "where it spent its time, as opposed to the centroid of its path.",
     OBJECT(P_POINT "," P_GEOFORMAT, "\"point\""), NULL, time_weighted_centroid},
};

static json_t *dispatch(tn_call_t *call, json_t *args, void *user)
{
    return mc_run(((const struct tool *)user)->fn, args, call);
}

#define ANNOTATIONS                                                                            \
    "{\"readOnlyHint\":true,\"destructiveHint\":false,\"idempotentHint\":true,"               \
    "\"openWorldHint\":false}"

char *tool_meta(const char *category, const char *function, const char *variant_of)
{
    /* The category under the node's key, for clients and toolnode.search to
     * filter by; what the tool calls under the bundle's own. A generated tool
     * says so under the node's key too (a search prefers the curated ones),
     * and names the tool it is a variant of, which a search puts first. */
    json_t *m = function ? json_pack("{s:s,s:b,s:{s:s,s:b}}", "io.toolnode/category", category,
                                     "io.toolnode/generated", 1, "io.toolnode/meos", "function",
                                     function, "generated", 1)
                         : json_pack("{s:s,s:{s:b}}", "io.toolnode/category", category,
                                     "io.toolnode/meos", "generated", 0);
    if (m && variant_of && *variant_of &&
        json_object_set_new(m, "io.toolnode/variant-of", json_string(variant_of)) != 0) {
        json_decref(m);
        m = NULL;
    }
    char *meta = m ? json_dumps(m, JSON_COMPACT) : NULL;
    json_decref(m);
    return meta;
}

int tools_register(tn_server_t *server)
{
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        char *meta = view_meta(tool_meta(tools[i].category, NULL, NULL)); /* shown in the view */
        tn_tool_t tool = {
            .name = tools[i].name,
            .title = tools[i].title,
            .description = tools[i].description,
            .input_schema = tools[i].input,
            .output_schema = tools[i].output,
            .annotations = ANNOTATIONS,
            .handler = dispatch,
            .user = (void *)&tools[i],
            .meta = meta,
        };
        tn_error_t error;
        int rc = tn_server_add_tool(server, &tool, &error);
        free(meta);
        if (rc != 0) {
            fprintf(stderr, "meos-bundle: tool %s: %s\n", tools[i].name, error.text);
            return -1;
        }
    }
    return view_register(server);
}
