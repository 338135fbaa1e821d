/*
 * The part of the MEOS 1.3 C API that this bundle calls.
 *
 * libmeos comes from the pymeos-cffi 1.3.0 wheel, which ships no headers, so
 * each prototype here was checked against `nm -D --defined-only` of the
 * wheel's libmeos and against the wheel's generated bindings
 * (pymeos_cffi/functions.py, built from the 1.3 headers). Types are opaque:
 * we only pass pointers back to MEOS.
 *
 * Ownership: every pointer returned by MEOS is malloc'd and freed with free(),
 * except temporal_subtype() and temporal_interp(), which return static names.
 */
#ifndef MEOS_DECL_H
#define MEOS_DECL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Temporal Temporal;
typedef struct GSERIALIZED GSERIALIZED;
typedef struct STBox STBox;
typedef struct Span Span;

/* PostgreSQL's interval, which MEOS uses unchanged. Spelled out, not opaque:
 * we build durations ourselves, because interval_in() ends the process on
 * input it cannot read, and we read durations back as seconds. */
typedef struct Interval {
    int64_t time; /* microseconds */
    int32_t day;
    int32_t month;
} Interval;

/* Microseconds since 2000-01-01 00:00:00 UTC. */
typedef int64_t TimestampTz;

/* interpType in meos.h */
enum { MEOS_INTERP_DISCRETE = 1, MEOS_INTERP_STEP = 2, MEOS_INTERP_LINEAR = 3 };

/* meosType of a tgeompoint, as written in the type field of its WKB */
enum { MEOS_T_TGEOMPOINT = 46 };

/* Variant bit of the WKB writers (meos.h): include the SRID */
enum { MEOS_WKB_EXTENDED = 0x04 };

/* errlevel of meos_error(); lower levels are notices and warnings */
enum { MEOS_ERROR_LEVEL = 21 };

/* ---- Lifecycle and errors ---- */

typedef void (*error_handler_fn)(int errlevel, int errcode, const char *msg);
void meos_initialize(void);
void meos_initialize_timezone(const char *name);
void meos_initialize_error_handler(error_handler_fn err_handler);
void meos_set_spatial_ref_sys_csv(const char *path);
void meos_finalize(void);

/* ---- Input ---- */

Temporal *tgeompoint_in(const char *str);
Temporal *tgeompoint_from_mfjson(const char *mfjson);
Temporal *temporal_from_hexwkb(const char *hexwkb);
GSERIALIZED *geom_in(const char *str, int32_t typmod);
Span *tstzspan_make(TimestampTz lower, TimestampTz upper, bool lower_inc, bool upper_inc);

/* ---- Output ---- */

char *tspatial_as_ewkt(const Temporal *temp, int maxdd);
char *temporal_as_mfjson(const Temporal *temp, bool with_bbox, int flags, int precision,
                         const char *srs);
char *temporal_as_hexwkb(const Temporal *temp, uint8_t variant, size_t *size_out);
char *tfloat_out(const Temporal *temp, int maxdd);
char *geo_as_ewkt(const GSERIALIZED *gs, int precision);
char *geo_as_hexewkb(const GSERIALIZED *gs, const char *endian);
char *geo_as_geojson(const GSERIALIZED *gs, int option, int precision, const char *srs);
char *interval_out(const Interval *interv);
char *stbox_out(const STBox *box, int maxdd);

/* ---- Accessors ---- */

const char *meostype_name(int type); /* static; NULL for unknown codes */
const char *temporal_subtype(const Temporal *temp);
const char *temporal_interp(const Temporal *temp);
int temporal_num_instants(const Temporal *temp);
int temporal_num_sequences(const Temporal *temp);
Temporal *temporal_sequence_n(const Temporal *temp, int i); /* i from 1 */
TimestampTz temporal_start_timestamptz(const Temporal *temp);
TimestampTz temporal_end_timestamptz(const Temporal *temp);
Interval *temporal_duration(const Temporal *temp, bool boundspan);
int32_t tspatial_srid(const Temporal *temp);
GSERIALIZED *tgeo_start_value(const Temporal *temp);
GSERIALIZED *tgeo_end_value(const Temporal *temp);
bool tgeo_value_at_timestamptz(const Temporal *temp, TimestampTz t, bool strict,
                               GSERIALIZED **value);
double tpoint_length(const Temporal *temp);
Temporal *tpoint_speed(const Temporal *temp);
GSERIALIZED *tpoint_trajectory(const Temporal *temp, bool unary_union);
GSERIALIZED *tpoint_twcentroid(const Temporal *temp);
double tnumber_twavg(const Temporal *temp);
double tfloat_min_value(const Temporal *temp);
double tfloat_max_value(const Temporal *temp);

STBox *tspatial_to_stbox(const Temporal *temp);
bool stbox_hasz(const STBox *box);
int32_t stbox_srid(const STBox *box);
bool stbox_xmin(const STBox *box, double *result);
bool stbox_xmax(const STBox *box, double *result);
bool stbox_ymin(const STBox *box, double *result);
bool stbox_ymax(const STBox *box, double *result);
bool stbox_zmin(const STBox *box, double *result);
bool stbox_zmax(const STBox *box, double *result);
bool stbox_tmin(const STBox *box, TimestampTz *result);
bool stbox_tmax(const STBox *box, TimestampTz *result);

/* ---- Restrictions and transformations ---- */

Temporal *temporal_at_tstzspan(const Temporal *temp, const Span *s);
Temporal *tgeo_at_geom(const Temporal *temp, const GSERIALIZED *gs);
Temporal *temporal_simplify_dp(const Temporal *temp, double eps_dist, bool synchronized);
Temporal *tspatial_transform(const Temporal *temp, int32_t srid);
Temporal *temporal_tsample(const Temporal *temp, const Interval *duration, TimestampTz origin,
                           int interp);
/* A TSequenceSet, one sequence per stop; NULL without an error when none */
Temporal *temporal_stops(const Temporal *temp, double maxdist, const Interval *minduration);

/* ---- Distance and relationships; the e* functions answer 1, 0, or -1 on error ---- */

Temporal *tdistance_tgeo_tgeo(const Temporal *temp1, const Temporal *temp2);
double nad_tgeo_tgeo(const Temporal *temp1, const Temporal *temp2);
int edwithin_tgeo_tgeo(const Temporal *temp1, const Temporal *temp2, double dist);
int eintersects_tgeo_tgeo(const Temporal *temp1, const Temporal *temp2);
int eintersects_tgeo_geo(const Temporal *temp, const GSERIALIZED *gs);

#endif
