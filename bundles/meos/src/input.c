/*
 * Reading the values tools take.
 *
 * MEOS's own parsers end the process on a malformed timestamp or hex digit
 * (see meos_call.c) and crash on some malformed MF-JSON, so timestamps, hex
 * strings and MF-JSON are checked here first, and timestamps reach MEOS
 * rewritten in one form it always reads.
 */
#define _GNU_SOURCE
#include "bundle.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Timestamps
 * ------------------------------------------------------------------------ */

#define USECS_PER_SEC INT64_C(1000000)
#define USECS_PER_DAY (INT64_C(86400) * USECS_PER_SEC)
/* Seconds from 1970-01-01, the civil-date epoch below, to 2000-01-01, MEOS's. */
#define MEOS_EPOCH_UNIX INT64_C(946684800)

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static bool digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return true;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    return m == 2 && leap ? 29 : days[m - 1];
}

/* YYYY-MM-DD[(T| )hh:mm[:ss[.fraction]]][ ][Z | ±hh[[:]mm]] */
int ts_parse(const char *s, TimestampTz *out)
{
    const char *p = s;
    int y, mo, d, h = 0, mi = 0, sec = 0, offset = 0;
    int64_t us = 0;
    while (isspace((unsigned char)*p))
        p++;
    if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
        !digits(&p, 2, &d))
        return -1;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
        return -1;
    if ((*p == 'T' || *p == 't' || *p == ' ') && isdigit((unsigned char)p[1])) {
        p++;
        if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
            return -1;
        if (*p == ':') {
            p++;
            if (!digits(&p, 2, &sec))
                return -1;
            if (*p == '.' || *p == ',') {
                p++;
                if (!isdigit((unsigned char)*p))
                    return -1;
                for (int64_t scale = 100000; isdigit((unsigned char)*p); p++, scale /= 10)
                    us += (*p - '0') * scale;
            }
        }
        if (h > 23 || mi > 59 || sec > 59)
            return -1;
    }
    if (*p == ' ' && (p[1] == '+' || p[1] == '-' || p[1] == 'Z'))
        p++;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
        if (!digits(&p, 2, &oh))
            return -1;
        if (*p == ':')
            p++;
        if (isdigit((unsigned char)*p) && !digits(&p, 2, &om))
            return -1;
        if (oh > 15 || om > 59)
            return -1;
        offset = sign * (oh * 3600 + om * 60);
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p)
        return -1;
    int64_t unix_secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
    /* Keep the UTC date within years 1..9999, where the form below is plain. */
    if (unix_secs < days_from_civil(1, 1, 1) * 86400 ||
        unix_secs >= days_from_civil(10000, 1, 1) * 86400)
        return -1;
    *out = (unix_secs - MEOS_EPOCH_UNIX) * USECS_PER_SEC + us;
    return 0;
}

/* iso: 2025-01-01T08:00:00.5Z; otherwise MEOS's input form,
 * 2025-01-01 08:00:00.500000+00. Returns the length written. */
static int ts_write(TimestampTz t, char *out, bool iso)
{
    if (t == INT64_MAX || t == INT64_MIN)
        return sprintf(out, "%s", t == INT64_MAX ? "infinity" : "-infinity");
    int64_t days = t / USECS_PER_DAY, rem = t % USECS_PER_DAY;
    if (rem < 0) {
        days--;
        rem += USECS_PER_DAY;
    }
    int64_t y;
    int m, d;
    civil_from_days(days + MEOS_EPOCH_UNIX / 86400, &y, &m, &d);
    int secs = (int)(rem / USECS_PER_SEC), us = (int)(rem % USECS_PER_SEC);
    if (!iso)
        return sprintf(out, "%04lld-%02d-%02d %02d:%02d:%02d.%06d+00", (long long)y, m, d,
                       secs / 3600, secs / 60 % 60, secs % 60, us);
    int n = sprintf(out, "%04lld-%02d-%02dT%02d:%02d:%02d", (long long)y, m, d, secs / 3600,
                    secs / 60 % 60, secs % 60);
    if (us) {
        n += sprintf(out + n, ".%06d", us);
        while (out[n - 1] == '0')
            n--;
    }
    out[n++] = 'Z';
    out[n] = '\0';
    return n;
}

void ts_format(TimestampTz t, char *out)
{
    ts_write(t, out, true);
}

/* ------------------------------------------------------------------------
 * Moving points: MEOS text, MF-JSON, HexWKB
 * ------------------------------------------------------------------------ */

#define TS_HINT "use ISO 8601, e.g. 2025-01-01T08:00:00Z or 2025-01-01 08:00:00+02:00"

/* Timestamps must increase within a sequence and may repeat only across a
 * sequence boundary. MEOS checks this too, but leaks on that error path. */
typedef struct {
    bool seen;
    TimestampTz last;
} order_t;

static int check_order(order_t *order, TimestampTz t, bool boundary, const char *name,
                       json_t **err)
{
    if (order->seen && (t < order->last || (t == order->last && !boundary))) {
        char now[40], before[40];
        ts_write(t, now, true);
        ts_write(order->last, before, true);
        *err = mc_fail("argument \"%s\": timestamps must increase, but %s follows %s", name, now,
                       before);
        return -1;
    }
    order->seen = true;
    order->last = t;
    return 0;
}

/* Longest MEOS input form of a timestamp, less the shortest accepted one. */
#define TS_GROWTH 19

/*
 * Rewrites each "@timestamp" of MEOS text into MEOS's input form. MEOS
 * reads a timestamp from '@' up to the next of ",]})", and so does this.
 * It also refuses geometries that do not start with a letter: MEOS would
 * read those as HexEWKB, whose parser ends the process on a bad digit.
 */
static char *normalize_text(const char *in, const char *name, json_t **err)
{
    size_t ats = 0;
    for (const char *p = in; *p; p++)
        ats += *p == '@';
    char *out = malloc(strlen(in) + TS_GROWTH * ats + 1), *o = out;
    if (!out) {
        *err = mc_fail("out of memory");
        return NULL;
    }
    bool in_geometry = false, boundary = false;
    int depth = 0;
    order_t order = {0};
    for (const char *p = in; *p;) {
        if (*p == '@') {
            size_t len = strcspn(p + 1, ",]})");
            char token[64];
            TimestampTz t;
            if (len >= sizeof token || (memcpy(token, p + 1, len), token[len] = '\0',
                                        ts_parse(token, &t) != 0)) {
                *err = mc_fail("argument \"%s\": \"%.*s\" is not a timestamp; " TS_HINT, name,
                               len > 40 ? 40 : (int)len, p + 1);
                free(out);
                return NULL;
            }
            if (check_order(&order, t, boundary, name, err) != 0) {
                free(out);
                return NULL;
            }
            *o++ = '@';
            o += ts_write(t, o, false);
            p += 1 + len;
            in_geometry = boundary = false;
            continue;
        }
        if (!in_geometry && (*p == ']' || *p == ')'))
            boundary = true;
        if (in_geometry) {
            if (*p == '(')
                depth++;
            else if (*p == ')' && depth > 0)
                depth--;
            else if (depth == 0 && (*p == ';' || *p == ','))
                in_geometry = false;
        } else if (isalpha((unsigned char)*p)) {
            in_geometry = true;
            depth = 0;
        } else if (isdigit((unsigned char)*p)) {
            *err = mc_fail("argument \"%s\": unexpected '%c' at offset %zu; an instant is a WKT "
                           "point, @ and a timestamp, e.g. POINT(1 2)@2025-01-01T08:00:00Z",
                           name, *p, (size_t)(p - in));
            free(out);
            return NULL;
        }
        *o++ = *p++;
    }
    *o = '\0';
    return out;
}

static int fix_time(json_t *value, order_t *order, bool boundary, const char *name, json_t **err)
{
    TimestampTz t;
    if (ts_parse(json_string_value(value), &t) != 0) {
        *err = mc_fail("argument \"%s\": \"%.40s\" is not a timestamp; " TS_HINT, name,
                       json_string_value(value));
        return -1;
    }
    if (order && check_order(order, t, boundary, name, err) != 0)
        return -1;
    char text[40];
    ts_write(t, text, false);
    return json_string_set(value, text);
}

/* One instant set or sequence of MF-JSON: its positions and timestamps. */
static int check_mfjson_part(json_t *part, order_t *order, const char *name, json_t **err)
{
    json_t *coordinates = json_object_get(part, "coordinates");
    json_t *datetimes = json_object_get(part, "datetimes");
    if (!json_is_array(coordinates) || !json_is_array(datetimes) ||
        json_array_size(coordinates) == 0) {
        *err = mc_fail("argument \"%s\": MF-JSON needs coordinates and datetimes arrays, at the "
                       "top or in each element of sequences",
                       name);
        return -1;
    }
    size_t i, j;
    json_t *item, *number;
    json_array_foreach(coordinates, i, item) {
        size_t n = json_array_size(item);
        bool numbers = json_is_array(item) && n >= 2 && n <= 3;
        json_array_foreach(item, j, number) numbers = numbers && json_is_number(number);
        if (!numbers) {
            *err = mc_fail("argument \"%s\": each position in coordinates must be an array of 2 "
                           "or 3 numbers",
                           name);
            return -1;
        }
    }
    json_array_foreach(datetimes, i, item) {
        if (!json_is_string(item)) {
            *err = mc_fail("argument \"%s\": datetimes must be strings", name);
            return -1;
        }
        if (fix_time(item, order, i == 0, name, err) != 0)
            return -1;
    }
    return 0;
}

/*
 * MEOS 1.3 follows what it expects in MF-JSON without checking: a sequence
 * without coordinates or datetimes, or a position that is not an array of
 * numbers, crashes it. So the shape is checked here, and the timestamps
 * rewritten, including those of a period.
 */
static int check_mfjson(json_t *root, const char *name, json_t **err)
{
    json_t *sequences = json_object_get(root, "sequences"), *part;
    const char *type = json_string_value(json_object_get(root, "type"));
    size_t i;
    order_t order = {0};
    /* MEOS also leaks on a wrong type. */
    if (!type || strcmp(type, "MovingPoint") != 0) {
        *err = mc_fail("argument \"%s\": MF-JSON of type %.40s; a MovingPoint is needed", name,
                       type ? type : "(none)");
        return -1;
    }
    if (!sequences) {
        if (check_mfjson_part(root, &order, name, err) != 0)
            return -1;
    } else if (!json_is_array(sequences)) {
        *err = mc_fail("argument \"%s\": MF-JSON sequences must be an array", name);
        return -1;
    }
    json_array_foreach(sequences, i, part) {
        if (check_mfjson_part(part, &order, name, err) != 0)
            return -1;
    }
    json_t *period = json_object_get(root, "period");
    static const char *const bounds[] = {"begin", "end"};
    for (i = 0; i < 2; i++) {
        json_t *bound = json_object_get(period, bounds[i]);
        if (json_is_string(bound) && fix_time(bound, NULL, false, name, err) != 0)
            return -1;
    }
    return 0;
}

char *mfjson_normalize(const char *in, const char *name, json_t **err)
{
    json_error_t jerr;
    json_t *root = json_loads(in, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        *err = mc_fail("argument \"%s\" is not valid MF-JSON: %s (line %d, column %d)", name,
                       jerr.text, jerr.line, jerr.column);
        return NULL;
    }
    char *out = NULL;
    if (!json_is_object(root))
        *err = mc_fail("argument \"%s\" is not MF-JSON: it must be a JSON object", name);
    else if (check_mfjson(root, name, err) == 0 && !(out = json_dumps(root, JSON_COMPACT)))
        *err = mc_fail("out of memory");
    json_decref(root);
    return out;
}

/* A tgeompoint's MEOS WKB starts with the byte order (00 big-endian,
 * 01 little-endian) and the meosType as two bytes. */
static int check_hexwkb(const char *hex, size_t n, const char *name, json_t **err)
{
    if (n % 2 || n < 8 || (strncmp(hex, "00", 2) && strncmp(hex, "01", 2))) {
        *err = mc_fail("argument \"%s\" is not MEOS HexWKB: it must have an even number of hex "
                       "digits and start with the byte order, 00 or 01",
                       name);
        return -1;
    }
    unsigned b1, b2;
    sscanf(hex + 2, "%2x%2x", &b1, &b2);
    int type = hex[1] == '1' ? (int)(b1 | b2 << 8) : (int)(b1 << 8 | b2);
    if (type == MEOS_T_TGEOMPOINT)
        return 0;
    /* 1.3 names the types 1 (bool) to 62 (trgeometry). */
    const char *type_name = type >= 1 && type <= 62 ? meostype_name(type) : NULL;
    if (type_name)
        *err = mc_fail("argument \"%s\" holds a %s; a tgeompoint (moving geometry point) is "
                       "needed",
                       name, type_name);
    else
        *err = mc_fail("argument \"%s\" is not MEOS HexWKB: unknown type code %d", name, type);
    return -1;
}

static bool all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* An MF-JSON object, as opposed to MEOS text for a set: {POINT... or {[. */
static bool is_json_object(const char *s)
{
    s++;
    while (isspace((unsigned char)*s))
        s++;
    return *s == '"' || *s == '}';
}

/* ------------------------------------------------------------------------
 * Arguments
 * ------------------------------------------------------------------------ */

const char *arg_string(json_t *args, const char *name, json_t **err)
{
    json_t *v = json_object_get(args, name);
    if (!v)
        return NULL;
    if (!json_is_string(v)) {
        *err = mc_fail("argument \"%s\" must be a string", name);
        return NULL;
    }
    size_t n = json_string_length(v);
    if (n > MAX_ARG_BYTES) {
        *err = mc_fail("argument \"%s\" is %zu bytes; the limit is %d bytes (1 MiB)", name, n,
                       MAX_ARG_BYTES);
        return NULL;
    }
    if (strlen(json_string_value(v)) != n) {
        *err = mc_fail("argument \"%s\" contains a NUL character", name);
        return NULL;
    }
    return json_string_value(v);
}

char *arg_trimmed(call_t *c, json_t *args, const char *name, json_t **err)
{
    const char *s = arg_string(args, name, err);
    if (!s) {
        if (!*err)
            *err = mc_fail("missing required argument \"%s\"", name);
        return NULL;
    }
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 0) {
        *err = mc_fail("argument \"%s\" is empty", name);
        return NULL;
    }
    char *copy = mc_keep(c, strndup(s, n));
    if (!copy)
        *err = mc_fail("out of memory");
    return copy;
}

Temporal *arg_point(call_t *c, json_t *args, const char *name, json_t **err)
{
    char *s = arg_trimmed(c, args, name, err);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    const char *form;
    Temporal *t = NULL;
    if (s[0] == '{' && is_json_object(s)) {
        form = "MF-JSON";
        char *mfjson = mc_keep(c, mfjson_normalize(s, name, err));
        if (!mfjson)
            return NULL;
        t = tgeompoint_from_mfjson(mfjson);
    } else if (all_hex(s, n)) {
        form = "HexWKB";
        if (check_hexwkb(s, n, name, err) != 0)
            return NULL;
        t = temporal_from_hexwkb(s);
    } else {
        form = "MEOS text";
        char *text = mc_keep(c, normalize_text(s, name, err));
        if (!text)
            return NULL;
        t = tgeompoint_in(text);
    }
    mc_keep(c, t);
    if (!t || mc_failed()) {
        *err = mc_fail("cannot read argument \"%s\" as %s", name, form);
        return NULL;
    }
    return t;
}

GSERIALIZED *arg_geometry(call_t *c, json_t *args, const char *name, int32_t srid, json_t **err)
{
    char *s = arg_trimmed(c, args, name, err);
    if (!s)
        return NULL;
    /* Only WKT: MEOS reads a leading digit as HexEWKB (see normalize_text),
     * also after an SRID=n; prefix. */
    bool has_srid = strncasecmp(s, "SRID=", 5) == 0;
    const char *body = has_srid && strchr(s, ';') ? strchr(s, ';') + 1 : s;
    while (isspace((unsigned char)*body))
        body++;
    if (!isalpha((unsigned char)*body)) {
        *err = mc_fail("argument \"%s\" must be WKT or EWKT, e.g. "
                       "POLYGON((0 0, 10 0, 10 10, 0 10, 0 0))",
                       name);
        return NULL;
    }
    if (srid && !has_srid) {
        size_t size = strlen(s) + 32;
        char *with_srid = mc_keep(c, malloc(size));
        if (!with_srid) {
            *err = mc_fail("out of memory");
            return NULL;
        }
        snprintf(with_srid, size, "SRID=%d;%s", (int)srid, s);
        s = with_srid;
    }
    GSERIALIZED *g = mc_keep(c, geom_in(s, -1));
    if (!g || mc_failed()) {
        *err = mc_fail("cannot read argument \"%s\" as WKT", name);
        return NULL;
    }
    return g;
}

int arg_time(call_t *c, json_t *args, const char *name, TimestampTz *out, json_t **err)
{
    char *s = arg_trimmed(c, args, name, err);
    if (!s)
        return -1;
    if (ts_parse(s, out) != 0) {
        *err = mc_fail("argument \"%s\": \"%.40s\" is not a timestamp; " TS_HINT, name, s);
        return -1;
    }
    return 0;
}

double arg_number(json_t *args, const char *name, double dflt)
{
    json_t *v = json_object_get(args, name);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

int ts_write_meos(int64_t t, char *out)
{
    return ts_write(t, out, false);
}
