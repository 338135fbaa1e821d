/*
 * Arguments and answers of the generated tools.
 *
 * MEOS 1.3's text parsers end the process (exit) or crash on input they
 * cannot read: a malformed number, timestamp or date, a missing bracket.
 * So MEOS text never reaches them unchecked: a lexer here reads the whole
 * value first, checks its shape (instants, sets, spans, span sets, boxes),
 * tells from its elements which type it is (integers, floats, booleans,
 * quoted text, dates, timestamps, WKT geometries), rewrites every timestamp
 * into the one form MEOS always reads, and only then hands the rewritten
 * text to the one parser of that type. HexWKB carries its type code, which
 * must belong to the parameter's family; MF-JSON goes through the moving
 * point checks of input.c.
 */
#define _GNU_SOURCE
#include "gen.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Decimal digits of floats and coordinates in answers. */
#define DIGITS 15

/* ------------------------------------------------------------------------
 * The lexer
 * ------------------------------------------------------------------------ */

enum {
    K_BOOL = 1 << 0,
    K_INT = 1 << 1,
    K_BIGINT = 1 << 2,
    K_FLOAT = 1 << 3,
    K_TEXT = 1 << 4,
    K_POINT = 1 << 5,
    K_GEOM = 1 << 6,
    K_DATE = 1 << 7,
    K_TSTZ = 1 << 8,
    K_NPOINT = 1 << 9,
};

typedef struct {
    const char *s, *p, *name;
    char *out;
    size_t len, cap;
    int kinds;
    /* The last element read, as a number (timestamps and dates in
     * microseconds), and its step: 1 for integers, a day for dates, 0 for
     * continuous values. */
    double last, step;
    /* A span empty once its integer or date bounds are normalized, e.g. (1, 2),
     * though not as floats or timestamps: an error only if read as integers or dates. */
    bool discrete_empty;
    /* The time of the previous instant of a temporal value, and whether the
     * next one starts a sequence (which may share its predecessor's time). */
    double prev_time;
    bool sequence_start;
    bool failed;
    json_t **err;
} lex_t;

static bool lx_fail(lex_t *lx, const char *what)
{
    if (!lx->failed)
        *lx->err = mc_fail("argument \"%s\": %s at offset %zu", lx->name, what,
                           (size_t)(lx->p - lx->s));
    lx->failed = true;
    return false;
}

static bool put(lex_t *lx, const char *s, size_t n)
{
    if (lx->len + n + 1 > lx->cap) {
        size_t cap = (lx->len + n + 1) * 2;
        char *grown = realloc(lx->out, cap);
        if (!grown)
            return lx_fail(lx, "out of memory");
        lx->out = grown;
        lx->cap = cap;
    }
    memcpy(lx->out + lx->len, s, n);
    lx->len += n;
    lx->out[lx->len] = '\0';
    return true;
}

static void skip_ws(lex_t *lx)
{
    while (isspace((unsigned char)*lx->p))
        lx->p++;
}

/* Consumes c (after spaces) and copies it. */
static bool expect(lex_t *lx, const char *one_of)
{
    skip_ws(lx);
    if (!*lx->p || !strchr(one_of, *lx->p)) {
        char what[48];
        snprintf(what, sizeof what, "expected one of %s", one_of);
        return lx_fail(lx, what);
    }
    return put(lx, lx->p++, 1);
}

static bool peek(lex_t *lx, const char *one_of)
{
    skip_ws(lx);
    return *lx->p && strchr(one_of, *lx->p);
}

static bool is_date(const char *s, size_t n)
{
    if (n != 10)
        return false;
    for (size_t i = 0; i < n; i++)
        if (i == 4 || i == 7 ? s[i] != '-' : !isdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* A time token runs to the next of ,]}) and must be a date or timestamp. */
static bool lex_time(lex_t *lx, bool date_allowed)
{
    size_t n = strcspn(lx->p, ",]})");
    while (n && isspace((unsigned char)lx->p[n - 1]))
        n--;
    char token[64];
    TimestampTz t;
    if (n == 0 || n >= sizeof token)
        return lx_fail(lx, "expected a timestamp");
    memcpy(token, lx->p, n);
    token[n] = '\0';
    if (ts_parse(token, &t) != 0)
        return lx_fail(lx, "not a timestamp (use ISO 8601, e.g. 2025-01-01 08:00:00+00)");
    lx->p += n;
    if (date_allowed && is_date(token, n)) {
        lx->kinds |= K_DATE;
        lx->last = (double)t;
        lx->step = 86400e6;
        return put(lx, token, n);
    }
    lx->kinds |= K_TSTZ;
    lx->last = (double)t;
    lx->step = 0;
    char text[40];
    return put(lx, text, (size_t)ts_write_meos(t, text));
}

static bool lex_number(lex_t *lx)
{
    const char *q = lx->p;
    bool integral = true;
    if (*q == '+' || *q == '-')
        q++;
    const char *digits = q;
    while (isdigit((unsigned char)*q))
        q++;
    bool some = q > digits;
    if (*q == '.') {
        integral = false;
        q++;
        while (isdigit((unsigned char)*q))
            q++, some = true;
    }
    if (!some)
        return lx_fail(lx, "expected a number");
    if (*q == 'e' || *q == 'E') {
        integral = false;
        q++;
        if (*q == '+' || *q == '-')
            q++;
        if (!isdigit((unsigned char)*q))
            return lx_fail(lx, "malformed exponent");
        while (isdigit((unsigned char)*q))
            q++;
    }
    char buf[64];
    size_t n = (size_t)(q - lx->p);
    if (n >= sizeof buf)
        return lx_fail(lx, "number too long");
    memcpy(buf, lx->p, n);
    buf[n] = '\0';
    errno = 0;
    if (integral) {
        long long v = strtoll(buf, NULL, 10);
        if (errno)
            return lx_fail(lx, "integer out of range");
        lx->kinds |= v >= INT32_MIN && v <= INT32_MAX ? K_INT : K_BIGINT;
        lx->last = (double)v;
        lx->step = 1;
    } else {
        double v = strtod(buf, NULL);
        if (errno || !isfinite(v))
            return lx_fail(lx, "number out of range");
        lx->kinds |= K_FLOAT;
        lx->last = v;
        lx->step = 0;
    }
    lx->p = q;
    return put(lx, buf, n);
}

static bool lex_quoted(lex_t *lx)
{
    const char *q = lx->p + 1;
    while (*q && *q != '"')
        q += *q == '\\' && q[1] ? 2 : 1;
    if (*q != '"')
        return lx_fail(lx, "unterminated quoted text");
    q++;
    lx->kinds |= K_TEXT;
    bool ok = put(lx, lx->p, (size_t)(q - lx->p));
    lx->p = q;
    return ok;
}

/* A WKT geometry: a type word (and Z/M/EMPTY words), then balanced
 * parentheses holding numbers, words, spaces and commas. */
static bool lex_wkt(lex_t *lx)
{
    const char *q = lx->p;
    while (isalpha((unsigned char)*q) || *q == ' ')
        q++;
    size_t word = strcspn(lx->p, " (");
    bool point = word == 5 && strncasecmp(lx->p, "POINT", 5) == 0;
    if (*q == '(') {
        int depth = 0;
        do {
            if (*q == '(')
                depth++;
            else if (*q == ')')
                depth--;
            else if (!isalnum((unsigned char)*q) && !strchr(" .,+-", *q))
                return lx_fail(lx, "unexpected character in WKT");
            q++;
        } while (depth > 0 && *q);
        if (depth)
            return lx_fail(lx, "unbalanced parentheses in WKT");
    } else {
        size_t n = (size_t)(q - lx->p);
        while (n && lx->p[n - 1] == ' ')
            n--;
        if (n < 6 || strncasecmp(lx->p + n - 5, "EMPTY", 5) != 0)
            return lx_fail(lx, "expected WKT, e.g. POINT(1 2)");
    }
    /* The geography parser crashes on WKT it cannot read (POINT(1), say)
     * where the geometry parser reports it: every WKT goes through the
     * geometry parser first. */
    char *wkt = strndup(lx->p, (size_t)(q - lx->p));
    GSERIALIZED *g = wkt ? geom_in(wkt, -1) : NULL;
    bool readable = g && !mc_failed();
    free(g);
    free(wkt);
    if (!readable)
        return lx_fail(lx, "WKT that cannot be read");
    lx->kinds |= point ? K_POINT : K_GEOM;
    bool ok = put(lx, lx->p, (size_t)(q - lx->p));
    lx->p = q;
    return ok;
}

/*
 * A network point, NPoint(route, position), or with segment a network
 * segment, NSegment(route, start, end): the route a whole number, the
 * positions fractions of the route from 0 to 1. MEOS's parser ends the
 * process on a malformed number.
 */
static bool lex_network(lex_t *lx, bool segment)
{
    const char *word = segment ? "NSegment" : "NPoint";
    size_t n = strlen(word);
    if (strncasecmp(lx->p, word, n) != 0)
        return lx_fail(lx, segment ? "expected NSegment(route, start, end)"
                                   : "expected NPoint(route, position)");
    lx->p += n;
    put(lx, word, n);
    if (!expect(lx, "("))
        return false;
    skip_ws(lx);
    int kinds = lx->kinds;
    lx->kinds = 0;
    if (!lex_number(lx) || lx->kinds & K_FLOAT || lx->last < 0)
        return lx_fail(lx, "the route must be a whole number");
    for (int i = 0; i < (segment ? 2 : 1); i++) {
        if (!expect(lx, ","))
            return false;
        skip_ws(lx);
        if (!lex_number(lx) || !(lx->last >= 0 && lx->last <= 1))
            return lx_fail(lx, "a position on a route is a fraction from 0 to 1");
    }
    lx->kinds = kinds | K_NPOINT;
    return expect(lx, ")");
}

/* A network point in a set or an instant, quoted or not: MEOS reads the
 * network points of a set only quoted, those of an instant only bare. */
static bool lex_npoint_element(lex_t *lx, bool temporal)
{
    bool quoted = *lx->p == '"';
    lx->p += quoted;
    if ((!temporal && !put(lx, "\"", 1)) || !lex_network(lx, false))
        return false;
    if (quoted && *lx->p++ != '"')
        return lx_fail(lx, "expected \" after the network point");
    return temporal || put(lx, "\"", 1);
}

/* One element of a set or span, or the value of an instant. */
static bool lex_element(lex_t *lx, bool temporal)
{
    skip_ws(lx);
    const char *p = lx->p;
    const char *word = p + (*p == '"');
    if (strncasecmp(word, "NPoint", 6) == 0 && word[6 + strspn(word + 6, " ")] == '(')
        return lex_npoint_element(lx, temporal);
    if (*p == '"')
        return lex_quoted(lx);
    if (!temporal && isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) &&
        isdigit((unsigned char)p[2]) && isdigit((unsigned char)p[3]) && p[4] == '-')
        return lex_time(lx, true);
    if (isdigit((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.')
        return lex_number(lx);
    if (isalpha((unsigned char)*p)) {
        size_t n = 0;
        while (isalpha((unsigned char)p[n]))
            n++;
        const char *after = p + n;
        while (*after == ' ')
            after++;
        bool stop = *after == '@' || *after == ',' || *after == '}' || *after == ']' ||
                    *after == ')' || *after == '\0';
        if (stop && ((n == 1 && strchr("tfTF", *p)) ||
                     (n == 4 && strncasecmp(p, "true", 4) == 0) ||
                     (n == 5 && strncasecmp(p, "false", 5) == 0))) {
            lx->kinds |= K_BOOL;
            lx->p = p + n;
            return put(lx, p, n);
        }
        return lex_wkt(lx);
    }
    return lx_fail(lx, "expected a value");
}

/* MEOS reports timestamps out of order, and leaks the text of its message
 * doing so: they are refused here. */
static bool lex_instant(lex_t *lx)
{
    if (!lex_element(lx, true) || !expect(lx, "@"))
        return false;
    skip_ws(lx);
    if (!lex_time(lx, false))
        return false;
    bool in_order = lx->sequence_start ? lx->last >= lx->prev_time : lx->last > lx->prev_time;
    lx->prev_time = lx->last;
    lx->sequence_start = false;
    return in_order || lx_fail(lx, "timestamps must increase");
}

/* Elements (or instants) separated by commas, up to a closing character. */
static bool lex_list(lex_t *lx, bool (*item)(lex_t *), const char *close)
{
    do {
        if (!item(lx))
            return false;
    } while (peek(lx, ",") && expect(lx, ","));
    return expect(lx, close);
}

static bool lex_sequence(lex_t *lx)
{
    lx->sequence_start = true;
    return expect(lx, "[(") && lex_list(lx, lex_instant, "])");
}

static bool lex_set_element(lex_t *lx)
{
    return lex_element(lx, false);
}

/*
 * A span must not be empty: MEOS reports an empty or inverted span as an
 * error, then goes on with what it could not build and crashes. Integer and
 * date bounds are compared as MEOS normalizes them, to [lower, upper), once
 * the type is known (read_type): (1, 2) is an empty integer span but a float
 * span.
 */
#define EMPTY_SPAN "an empty span: the lower bound must be below the upper one"
static bool lex_span(lex_t *lx)
{
    if (!expect(lx, "[("))
        return false;
    bool lower_inc = lx->out[lx->len - 1] == '[';
    if (!lex_set_element(lx))
        return false;
    double lower = lx->last, step = lx->step;
    if (!expect(lx, ",") || !lex_set_element(lx) || !expect(lx, "])"))
        return false;
    double upper = lx->last;
    bool upper_inc = lx->out[lx->len - 1] == ']';
    /* Mixed dates and timestamps make a timestamp span: continuous. */
    if (step > 0 && step == lx->step &&
        lower + !lower_inc * step >= upper + upper_inc * step)
        lx->discrete_empty = true;
    bool empty = lower > upper || (lower == upper && !(lower_inc && upper_inc));
    return !empty || lx_fail(lx, EMPTY_SPAN);
}

/* Copies an optional `word=...;` prefix, e.g. SRID=4326;. */
static bool lex_prefix(lex_t *lx, const char *word, bool *seen)
{
    skip_ws(lx);
    size_t n = strlen(word);
    *seen = strncasecmp(lx->p, word, n) == 0;
    if (!*seen)
        return true;
    const char *semi = strchr(lx->p, ';');
    if (!semi || semi - lx->p > 40)
        return lx_fail(lx, "a prefix must end with ;");
    for (const char *q = lx->p + n; q < semi; q++)
        if (!isalnum((unsigned char)*q))
            return lx_fail(lx, "malformed prefix");
    bool ok = put(lx, lx->p, (size_t)(semi - lx->p + 1));
    lx->p = semi + 1;
    return ok;
}

static bool lex_end(lex_t *lx)
{
    skip_ws(lx);
    return *lx->p == '\0' || lx_fail(lx, "unexpected text after the value");
}

static bool lex_temporal(lex_t *lx, bool *srid)
{
    /* MEOS reads one interpolation prefix, Interp=Step; (linear is the
     * default of a sequence, discrete is written {...}); its number parsers
     * end the process on any other. */
    lx->prev_time = -INFINITY;
    if (!lex_prefix(lx, "SRID=", srid))
        return false;
    skip_ws(lx);
    if (strncasecmp(lx->p, "Interp=", 7) == 0) {
        if (strncasecmp(lx->p, "Interp=Step;", 12) != 0)
            return lx_fail(lx, "the only interpolation prefix is Interp=Step;");
        put(lx, lx->p, 12);
        lx->p += 12;
    }
    if (peek(lx, "{")) {
        put(lx, lx->p++, 1);
        if (peek(lx, "[("))
            return lex_list(lx, lex_sequence, "}") && lex_end(lx);
        return lex_list(lx, lex_instant, "}") && lex_end(lx);
    }
    if (peek(lx, "[("))
        return lex_sequence(lx) && lex_end(lx);
    return lex_instant(lx) && lex_end(lx);
}

static bool lex_collection(lex_t *lx, gen_family_t family, bool *srid)
{
    if (!lex_prefix(lx, "SRID=", srid))
        return false;
    if (family == GF_SET)
        return expect(lx, "{") && lex_list(lx, lex_set_element, "}") && lex_end(lx);
    if (family == GF_SPAN)
        return lex_span(lx) && lex_end(lx);
    return expect(lx, "{") && lex_list(lx, lex_span, "}") && lex_end(lx);
}

/*
 * Boxes: the keyword and dimensions, then a fixed shape of numbers (n) and
 * timestamps (t), where S and E stand for a span's bracket, [ or ( and
 * ] or ). Only these shapes reach MEOS's box parsers.
 */
static const struct {
    const char *keyword, *dims, *shape;
} box_shapes[] = {
    {"TBOXINT", "X", "(Sn,nE)"},     {"TBOXINT", "XT", "(Sn,nE,St,tE)"},
    {"TBOXFLOAT", "X", "(Sn,nE)"},   {"TBOXFLOAT", "XT", "(Sn,nE,St,tE)"},
    {"TBOX", "T", "(St,tE)"},        {"STBOX", "X", "((n,n),(n,n))"},
    {"STBOX", "Z", "((n,n,n),(n,n,n))"},
    {"STBOX", "XT", "(((n,n),(n,n)),St,tE)"},
    {"STBOX", "ZT", "(((n,n,n),(n,n,n)),St,tE)"},
    {"STBOX", "T", "(St,tE)"},       {"GEODSTBOX", "Z", "((n,n,n),(n,n,n))"},
    {"GEODSTBOX", "ZT", "(((n,n,n),(n,n,n)),St,tE)"},
    {"GEODSTBOX", "T", "(St,tE)"},   {"GEODSTBOX", "X", "((n,n),(n,n))"},
    {"GEODSTBOX", "XT", "(((n,n),(n,n)),St,tE)"},
};

static bool lex_box(lex_t *lx, gen_family_t family)
{
    bool srid = false;
    if (family == GF_STBOX && !lex_prefix(lx, "SRID=", &srid))
        return false;
    skip_ws(lx);
    char keyword[16] = "", dims[4] = "";
    size_t k = 0, d = 0;
    while (isalpha((unsigned char)lx->p[k]) && k < sizeof keyword - 1)
        keyword[k] = (char)toupper((unsigned char)lx->p[k]), k++;
    keyword[k] = '\0';
    const char *q = lx->p + k;
    while (*q == ' ')
        q++;
    while (isalpha((unsigned char)q[d]) && d < sizeof dims - 1)
        dims[d] = (char)toupper((unsigned char)q[d]), d++;
    dims[d] = '\0';
    const char *shape = NULL;
    for (size_t i = 0; i < sizeof box_shapes / sizeof box_shapes[0]; i++)
        if (!strcmp(box_shapes[i].keyword, keyword) && !strcmp(box_shapes[i].dims, dims) &&
            (family == GF_TBOX) == (keyword[0] == 'T'))
            shape = box_shapes[i].shape;
    if (!shape)
        return lx_fail(lx, family == GF_TBOX
                               ? "expected TBOXINT X|XT, TBOXFLOAT X|XT or TBOX T"
                               : "expected STBOX or GEODSTBOX with X, Z, XT, ZT or T");
    put(lx, keyword, k);
    put(lx, " ", 1);
    put(lx, dims, d);
    lx->p = q + d;
    /* The spans of a box are checked as lex_span checks spans: MEOS 1.3
     * reads uninitialised memory after it reports an empty one. */
    double lower = 0, upper = 0;
    bool lower_inc = false;
    int bounds = 0;
    for (const char *s = shape; *s; s++) {
        skip_ws(lx);
        if (*s == 'n' || *s == 't') {
            int before = lx->kinds;
            if (*s == 'n' ? !lex_number(lx) : !lex_time(lx, false))
                return false;
            lx->kinds = before;
            if (bounds++ == 0)
                lower = lx->last;
            else
                upper = lx->last;
        } else if (!expect(lx, *s == 'S' ? "[(" : *s == 'E' ? "])" : (char[]){*s, '\0'})) {
            return false;
        } else if (*s == 'S') {
            lower_inc = lx->out[lx->len - 1] == '[';
            bounds = 0;
        } else if (*s == 'E') {
            bool upper_inc = lx->out[lx->len - 1] == ']';
            /* TBOXINT's integers normalize to [lower, upper) as spans do. */
            bool integers = !strcmp(keyword, "TBOXINT") && s[-1] == 'n';
            if (lower > upper || (lower == upper && !(lower_inc && upper_inc)) ||
                (integers && lower + !lower_inc >= upper + upper_inc))
                return lx_fail(lx, "an empty span in a box: the lower bound must be below the "
                                   "upper one");
        }
    }
    return lex_end(lx);
}

/* ------------------------------------------------------------------------
 * HexWKB
 * ------------------------------------------------------------------------ */

static bool all_hex(const char *s)
{
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return false;
    return true;
}

/* The meosType codes of each family's HexWKB. */
static bool family_has(gen_family_t family, int type)
{
    static const int sets[] = {T_DATESET, T_FLOATSET, T_INTSET,   T_BIGINTSET, T_TEXTSET,
                               T_TSTZSET, T_GEOMSET,  T_GEOGSET, T_NPOINTSET};
    static const int spans[] = {T_DATESPAN, T_FLOATSPAN, T_INTSPAN, T_BIGINTSPAN, T_TSTZSPAN};
    static const int spansets[] = {T_DATESPANSET, T_FLOATSPANSET, T_INTSPANSET,
                                   T_BIGINTSPANSET, T_TSTZSPANSET};
    static const int temporals[] = {T_TBOOL,      T_TINT,      T_TFLOAT,     T_TTEXT,
                                    T_TGEOMPOINT, T_TGEOGPOINT, T_TGEOMETRY, T_TGEOGRAPHY,
                                    T_TNPOINT};
    const int *list = family == GF_SET        ? sets
                      : family == GF_TEMPORAL ? temporals
                      : family == GF_SPANSET  ? spansets
                                              : spans;
    size_t n = family == GF_SET        ? sizeof sets / sizeof *sets
               : family == GF_TEMPORAL ? sizeof temporals / sizeof *temporals
               : family == GF_SPANSET  ? sizeof spansets / sizeof *spansets
                                       : sizeof spans / sizeof *spans;
    for (size_t i = 0; i < n; i++)
        if (list[i] == type)
            return true;
    return false;
}

/* MEOS's own WKB: byte order (00 or 01), then the meosType in two bytes;
 * a box has no type code (its flags follow the byte order), so the
 * parameter's family decides. */
static void *from_hexwkb(const char *s, gen_family_t family, const char *name, json_t **err)
{
    size_t n = strlen(s);
    if (n % 2 || n < 6 || (strncmp(s, "00", 2) && strncmp(s, "01", 2))) {
        *err = mc_fail("argument \"%s\" is not MEOS HexWKB: it needs an even number of hex "
                       "digits, starting with the byte order 00 or 01",
                       name);
        return NULL;
    }
    if (family == GF_TBOX)
        return tbox_from_hexwkb(s);
    if (family == GF_STBOX)
        return stbox_from_hexwkb(s);
    unsigned b1, b2;
    sscanf(s + 2, "%2x%2x", &b1, &b2);
    int type = s[1] == '1' ? (int)(b1 | b2 << 8) : (int)(b1 << 8 | b2);
    if (!family_has(family, type)) {
        const char *tn = type > 0 && type < NO_MEOS_TYPES ? meostype_name(type) : NULL;
        *err = mc_fail("argument \"%s\" holds HexWKB of %s, not of a type this parameter takes",
                       name, tn ? tn : "an unknown type");
        return NULL;
    }
    switch (family) {
    case GF_TEMPORAL:
        return temporal_from_hexwkb(s);
    case GF_SET:
        return set_from_hexwkb(s);
    case GF_SPAN:
        return span_from_hexwkb(s);
    default:
        return spanset_from_hexwkb(s);
    }
}

/* ------------------------------------------------------------------------
 * Decoders
 * ------------------------------------------------------------------------ */

/*
 * Values are read as the function means them: where the function takes a
 * type the text's own look does not give but can stand for, the text is read
 * as that type, as MobilityDB casts a literal: integers where floats are
 * taken (a tint's text read as a tfloat, an integer set as a float set), dates
 * where timestamps are, points where geometries are. In order of preference;
 * policy.toml ([decode]) states the rule.
 */
static const struct {
    int from, to[2];
} widenings[] = {
    {T_TINT, {T_TFLOAT}},
    {T_TGEOMPOINT, {T_TGEOMETRY}},
    {T_TGEOGPOINT, {T_TGEOGRAPHY}},
    {T_INTSET, {T_BIGINTSET, T_FLOATSET}},
    {T_BIGINTSET, {T_FLOATSET}},
    {T_DATESET, {T_TSTZSET}},
    {T_INTSPAN, {T_BIGINTSPAN, T_FLOATSPAN}},
    {T_BIGINTSPAN, {T_FLOATSPAN}},
    {T_DATESPAN, {T_TSTZSPAN}},
};

static bool takes_type(const int *types, size_t n, int type)
{
    for (size_t i = 0; i < n; i++)
        if (types[i] == type)
            return true;
    return false;
}

/* The type to read: the text's own, or one it widens to that the function
 * takes. With no types (any of the family), the text's own. */
static int read_type(int natural, const int *types, size_t n)
{
    if (!types || takes_type(types, n, natural))
        return natural;
    for (size_t i = 0; i < sizeof widenings / sizeof widenings[0]; i++)
        if (widenings[i].from == natural)
            for (size_t j = 0; j < 2 && widenings[i].to[j]; j++)
                if (takes_type(types, n, widenings[i].to[j]))
                    return widenings[i].to[j];
    return natural;
}

static void *parse_temporal(lex_t *lx, bool geodetic, const int *types, size_t n)
{
    bool srid = false;
    if (!lex_temporal(lx, &srid))
        return NULL;
    int k = lx->kinds & ~K_TSTZ;
    bool spatial = k && !(k & ~(K_POINT | K_GEOM));
    if (srid && !spatial)
        return lx_fail(lx, "SRID= is for spatial values"), NULL;
    int natural = k == K_BOOL                      ? T_TBOOL
                  : k == K_INT                     ? T_TINT
                  : k && !(k & ~(K_INT | K_FLOAT)) ? T_TFLOAT
                  : k == K_TEXT                    ? T_TTEXT
                  : k == K_POINT                   ? (geodetic ? T_TGEOGPOINT : T_TGEOMPOINT)
                  : k == K_NPOINT                  ? T_TNPOINT
                  : spatial                        ? (geodetic ? T_TGEOGRAPHY : T_TGEOMETRY)
                                                   : -1;
    switch (read_type(natural, types, n)) {
    case T_TBOOL:
        return tbool_in(lx->out);
    case T_TINT:
        return tint_in(lx->out);
    case T_TFLOAT:
        return tfloat_in(lx->out);
    case T_TTEXT:
        return ttext_in(lx->out);
    case T_TGEOMPOINT:
        return tgeompoint_in(lx->out);
    case T_TGEOGPOINT:
        return tgeogpoint_in(lx->out);
    case T_TGEOMETRY:
        return tgeometry_in(lx->out);
    case T_TGEOGRAPHY:
        return tgeography_in(lx->out);
    case T_TNPOINT:
        return tnpoint_in(lx->out);
    default:
        return lx_fail(lx, "values of one kind are needed: booleans, integers, floats, quoted "
                           "text or WKT geometries"),
               NULL;
    }
}

/* The set or span type the lexed elements make on their own (for span
 * sets, the type of their spans), or -1. */
static int collection_type(int k, gen_family_t family, bool geodetic)
{
    bool spatial = k && !(k & ~(K_POINT | K_GEOM));
    if (k & K_TSTZ && !(k & ~(K_TSTZ | K_DATE)))
        k = K_TSTZ;
    bool set = family == GF_SET;
    if (k == K_INT)
        return set ? T_INTSET : T_INTSPAN;
    if (k && !(k & ~(K_INT | K_BIGINT)))
        return set ? T_BIGINTSET : T_BIGINTSPAN;
    if (k && !(k & ~(K_INT | K_BIGINT | K_FLOAT)))
        return set ? T_FLOATSET : T_FLOATSPAN;
    if (k == K_DATE)
        return set ? T_DATESET : T_DATESPAN;
    if (k == K_TSTZ)
        return set ? T_TSTZSET : T_TSTZSPAN;
    if (k == K_TEXT && set)
        return T_TEXTSET;
    if (spatial && set)
        return geodetic ? T_GEOGSET : T_GEOMSET;
    if (k == K_NPOINT && set)
        return T_NPOINTSET;
    return -1;
}

static void *parse_collection(lex_t *lx, gen_family_t family, bool geodetic, const int *types,
                              size_t n)
{
    bool srid = false;
    if (!lex_collection(lx, family, &srid))
        return NULL;
    int k = lx->kinds;
    bool spatial = k && !(k & ~(K_POINT | K_GEOM));
    if ((srid && !spatial) || (spatial && family != GF_SET))
        return lx_fail(lx, "geometries only make sets"), NULL;
    int type = read_type(collection_type(k, family, geodetic), types, n);
    bool discrete = type == T_INTSPAN || type == T_BIGINTSPAN || type == T_DATESPAN;
    if (lx->discrete_empty && discrete)
        return lx_fail(lx, EMPTY_SPAN), NULL;
    const char *s = lx->out;
    bool span = family == GF_SPAN;
    switch (type) {
    case T_INTSET:
        return intset_in(s);
    case T_BIGINTSET:
        return bigintset_in(s);
    case T_FLOATSET:
        return floatset_in(s);
    case T_DATESET:
        return dateset_in(s);
    case T_TSTZSET:
        return tstzset_in(s);
    case T_TEXTSET:
        return textset_in(s);
    case T_GEOMSET:
        return geomset_in(s);
    case T_GEOGSET:
        return geogset_in(s);
    case T_NPOINTSET:
        return npointset_in(s);
    case T_INTSPAN:
        return span ? (void *)intspan_in(s) : (void *)intspanset_in(s);
    case T_BIGINTSPAN:
        return span ? (void *)bigintspan_in(s) : (void *)bigintspanset_in(s);
    case T_FLOATSPAN:
        return span ? (void *)floatspan_in(s) : (void *)floatspanset_in(s);
    case T_DATESPAN:
        return span ? (void *)datespan_in(s) : (void *)datespanset_in(s);
    case T_TSTZSPAN:
        return span ? (void *)tstzspan_in(s) : (void *)tstzspanset_in(s);
    default:
        return lx_fail(lx, family == GF_SET
                               ? "elements of one kind are needed: integers, floats, dates, "
                                 "timestamps, quoted text or WKT geometries"
                               : "bounds of one kind are needed: integers, floats, dates or "
                                 "timestamps"),
               NULL;
    }
}

static GSERIALIZED *parse_geo(const char *s, bool geodetic, const char *name, json_t **err)
{
    /* MEOS reads a leading digit as HexEWKB; its hex decoder ends the
     * process on a bad digit, so hex must be all hex. */
    bool has_srid = strncasecmp(s, "SRID=", 5) == 0;
    const char *body = has_srid && strchr(s, ';') ? strchr(s, ';') + 1 : s;
    while (isspace((unsigned char)*body))
        body++;
    if (!isalpha((unsigned char)*body) && !(body == s && all_hex(s) && strlen(s) % 2 == 0)) {
        *err = mc_fail("argument \"%s\" must be WKT, EWKT or HexEWKB, e.g. POINT(1 2)", name);
        return NULL;
    }
    GSERIALIZED *g = geom_in(s, -1);
    if (!geodetic || !g || mc_failed())
        return g;
    /* See lex_wkt: only what the geometry parser reads reaches geog_in. */
    free(g);
    return geog_in(s, -1);
}

static const char *family_name(gen_family_t family)
{
    static const char *const names[] = {"a temporal value", "a set",
                                        "a span",           "a span set",
                                        "a TBOX",           "an STBOX",
                                        "a geometry",       "a geography",
                                        "a network point",  "a network segment"};
    return names[family];
}

int gv_type(const void *v, gen_family_t family)
{
    switch (family) {
    case GF_TEMPORAL:
        return ((const Temporal *)v)->temptype;
    case GF_SET:
        return ((const Set *)v)->settype;
    case GF_SPAN:
        return ((const Span *)v)->spantype;
    case GF_SPANSET:
        return ((const SpanSet *)v)->spantype;
    default:
        return -1;
    }
}

static json_t *wrong_type(const char *name, int type, const int *types, size_t n)
{
    char want[256] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && len < sizeof want - 40; i++) {
        const char *tn = meostype_name(types[i]);
        len += (size_t)snprintf(want + len, sizeof want - len, "%s%s", i ? ", " : "",
                                tn ? tn : "?");
    }
    const char *got = type > 0 && type < NO_MEOS_TYPES ? meostype_name(type) : NULL;
    return mc_fail("argument \"%s\" is a %s value; this function takes %s", name,
                   got ? got : "other", want);
}

void *ga_value(call_t *c, json_t *args, const char *name, gen_family_t family, bool geodetic,
               const int *types, size_t n_types, json_t **err)
{
    char *s = arg_trimmed(c, args, name, err);
    if (!s)
        return NULL;
    void *v = NULL;
    lex_t lx = {.s = s, .p = s, .name = name, .err = err};
    if (family == GF_GEOMETRY || family == GF_GEOGRAPHY) {
        v = parse_geo(s, family == GF_GEOGRAPHY, name, err);
    } else if (family == GF_NPOINT || family == GF_NSEGMENT) {
        if (lex_network(&lx, family == GF_NSEGMENT) && lex_end(&lx))
            v = family == GF_NPOINT ? (void *)npoint_in(lx.out) : (void *)nsegment_in(lx.out);
    } else if (s[0] == '{' && family == GF_TEMPORAL && strchr(s, '"') &&
               strstr(s, "\"type\"")) {
        char *mfjson = mc_keep(c, mfjson_normalize(s, name, err));
        if (!mfjson)
            return NULL;
        v = geodetic ? tgeogpoint_from_mfjson(mfjson) : tgeompoint_from_mfjson(mfjson);
    } else if (all_hex(s)) {
        v = from_hexwkb(s, family, name, err);
        if (!v && *err)
            return NULL;
    } else if (family == GF_TEMPORAL) {
        v = parse_temporal(&lx, geodetic, types, n_types);
    } else if (family == GF_TBOX || family == GF_STBOX) {
        if (lex_box(&lx, family))
            v = family == GF_TBOX ? (void *)tbox_in(lx.out) : (void *)stbox_in(lx.out);
    } else {
        v = parse_collection(&lx, family, geodetic, types, n_types);
    }
    free(lx.out);
    if (lx.failed || (*err && !v))
        return NULL;
    mc_keep(c, v);
    if (!v || mc_failed()) {
        *err = mc_fail("cannot read argument \"%s\" as %s", name, family_name(family));
        return NULL;
    }
    if (types) {
        int type = gv_type(v, family);
        size_t i = 0;
        while (i < n_types && types[i] != type)
            i++;
        if (i == n_types) {
            *err = wrong_type(name, type, types, n_types);
            return NULL;
        }
    }
    return v;
}

text *ga_text(call_t *c, json_t *args, const char *name, json_t **err)
{
    const char *s = ga_cstring(args, name, err);
    return s ? mc_keep(c, cstring2text(s)) : NULL;
}

const char *ga_cstring(json_t *args, const char *name, json_t **err)
{
    const char *s = arg_string(args, name, err);
    if (!s && !*err)
        *err = mc_fail("missing required argument \"%s\"", name);
    return s;
}

int ga_int(json_t *args, const char *name, int64_t min, int64_t max, int64_t *out, json_t **err)
{
    json_t *v = json_object_get(args, name);
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        *err = mc_fail("argument \"%s\" must be an integer from %lld to %lld", name,
                       (long long)min, (long long)max);
        return -1;
    }
    *out = json_integer_value(v);
    return 0;
}

int ga_double(json_t *args, const char *name, double *out, json_t **err)
{
    json_t *v = json_object_get(args, name);
    if (!json_is_number(v)) {
        *err = mc_fail("argument \"%s\" must be a number", name);
        return -1;
    }
    *out = json_number_value(v);
    return 0;
}

int ga_bool(json_t *args, const char *name, bool *out, json_t **err)
{
    json_t *v = json_object_get(args, name);
    if (!json_is_boolean(v)) {
        *err = mc_fail("argument \"%s\" must be true or false", name);
        return -1;
    }
    *out = json_is_true(v);
    return 0;
}

int ga_timestamptz(json_t *args, const char *name, TimestampTz *out, json_t **err)
{
    const char *s = ga_cstring(args, name, err);
    if (!s)
        return -1;
    if (ts_parse(s, out) != 0) {
        *err = mc_fail("argument \"%s\": \"%.40s\" is not a timestamp; use ISO 8601, e.g. "
                       "2025-01-01 08:00:00+00",
                       name, s);
        return -1;
    }
    return 0;
}

int ga_date(json_t *args, const char *name, DateADT *out, json_t **err)
{
    const char *s = ga_cstring(args, name, err);
    TimestampTz t;
    if (!s)
        return -1;
    if (!is_date(s, strlen(s)) || ts_parse(s, &t) != 0) {
        *err = mc_fail("argument \"%s\": \"%.40s\" is not a date; use YYYY-MM-DD", name, s);
        return -1;
    }
    *out = (DateADT)(t / (INT64_C(86400) * 1000000));
    return 0;
}

/* PostgreSQL's interval units; months and days stay apart, as in MEOS. */
static const struct {
    const char *name;
    int month, day;
    int64_t usec;
} units[] = {
    {"years", 12, 0, 0},   {"year", 12, 0, 0},          {"mons", 1, 0, 0},
    {"mon", 1, 0, 0},      {"months", 1, 0, 0},         {"month", 1, 0, 0},
    {"weeks", 0, 7, 0},    {"week", 0, 7, 0},           {"days", 0, 1, 0},
    {"day", 0, 1, 0},      {"hours", 0, 0, 3600000000}, {"hour", 0, 0, 3600000000},
    {"minutes", 0, 0, 60000000}, {"minute", 0, 0, 60000000}, {"mins", 0, 0, 60000000},
    {"min", 0, 0, 60000000}, {"seconds", 0, 0, 1000000}, {"second", 0, 0, 1000000},
    {"secs", 0, 0, 1000000}, {"sec", 0, 0, 1000000},
};

/*
 * Reads the interval forms MEOS prints ("1 day 02:00:00", "3 mons -1
 * days", "00:00:01.5") into an Interval, without MEOS's parser, which
 * ends the process on input it cannot read.
 */
static int parse_interval(const char *s, Interval *iv)
{
    *iv = (Interval){0};
    const char *p = s;
    bool any = false;
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            return any ? 0 : -1;
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !isfinite(v) || fabs(v) > 1e9)
            return -1;
        if (*end == ':') {
            /* [-]hh:mm[:ss[.frac]] */
            bool neg = *p == '-';
            long h = labs(strtol(p, &end, 10));
            if (*end != ':' || !isdigit((unsigned char)end[1]))
                return -1;
            long m = strtol(end + 1, &end, 10);
            double sec = 0;
            if (*end == ':') {
                if (!isdigit((unsigned char)end[1]))
                    return -1;
                sec = strtod(end + 1, &end);
            }
            if (m > 59 || sec >= 60 || h > 1000000)
                return -1;
            int64_t us = h * INT64_C(3600000000) + m * INT64_C(60000000) + llround(sec * 1e6);
            iv->time += neg ? -us : us;
            p = end;
            any = true;
            continue;
        }
        p = end;
        while (isspace((unsigned char)*p))
            p++;
        size_t n = 0;
        while (isalpha((unsigned char)p[n]))
            n++;
        size_t i = 0;
        while (i < sizeof units / sizeof units[0] &&
               (strlen(units[i].name) != n || strncasecmp(units[i].name, p, n) != 0))
            i++;
        if (i == sizeof units / sizeof units[0])
            return -1;
        if ((units[i].month || units[i].day) && v != floor(v))
            return -1;
        iv->month += (int32_t)v * units[i].month;
        iv->day += (int32_t)v * units[i].day;
        iv->time += llround(v * (double)units[i].usec);
        p += n;
        any = true;
    }
}

Interval *ga_interval(call_t *c, json_t *args, const char *name, json_t **err)
{
    const char *s = ga_cstring(args, name, err);
    if (!s)
        return NULL;
    Interval *iv = mc_keep(c, malloc(sizeof *iv));
    if (!iv || parse_interval(s, iv) != 0) {
        *err = mc_fail("argument \"%s\": \"%.40s\" is not an interval; use e.g. 1 day "
                       "02:00:00, 3 mons, 00:10:00 or 90 seconds",
                       name, s);
        return NULL;
    }
    return iv;
}

int ga_enum(json_t *args, const char *name, const char *const *names, const int *values,
            size_t n, int *out, json_t **err)
{
    const char *s = json_string_value(json_object_get(args, name));
    for (size_t i = 0; s && i < n; i++)
        if (!strcmp(s, names[i])) {
            *out = values[i];
            return 0;
        }
    *err = mc_fail("argument \"%s\" must be one of the constant names its schema lists", name);
    return -1;
}

/* ------------------------------------------------------------------------
 * Encoders
 * ------------------------------------------------------------------------ */

static bool spatial_temporal(const Temporal *t)
{
    return t->temptype == T_TGEOMPOINT || t->temptype == T_TGEOGPOINT ||
           t->temptype == T_TGEOMETRY || t->temptype == T_TGEOGRAPHY;
}

json_t *ge_value(call_t *c, const void *v, gen_family_t family)
{
    if (!v)
        return NULL;
    mc_keep(c, (void *)v);
    return ge_value_borrowed(v, family);
}

json_t *ge_value_borrowed(const void *v, gen_family_t family)
{
    char *s = NULL;
    switch (family) {
    case GF_TEMPORAL:
        s = spatial_temporal(v) ? tspatial_as_ewkt(v, DIGITS) : temporal_out(v, DIGITS);
        break;
    case GF_SET: {
        const Set *set = v;
        s = set->settype == T_GEOMSET || set->settype == T_GEOGSET
                ? spatialset_as_ewkt(set, DIGITS)
                : set_out(set, DIGITS);
        break;
    }
    case GF_SPAN:
        s = span_out(v, DIGITS);
        break;
    case GF_SPANSET:
        s = spanset_out(v, DIGITS);
        break;
    case GF_TBOX:
        s = tbox_out(v, DIGITS);
        break;
    case GF_STBOX:
        s = stbox_out(v, DIGITS);
        break;
    case GF_NPOINT:
        s = npoint_out(v, DIGITS);
        break;
    case GF_NSEGMENT:
        s = nsegment_out(v, DIGITS);
        break;
    default:
        s = geo_as_ewkt(v, DIGITS);
        break;
    }
    if (!s)
        return NULL;
    json_t *j = json_string(s);
    free(s);
    return j;
}

json_t *ge_text(call_t *c, const text *t)
{
    if (!t)
        return NULL;
    mc_keep(c, (void *)t);
    return ge_cstring(c, text2cstring(t), true);
}

json_t *ge_cstring(call_t *c, char *s, bool owned)
{
    if (!s)
        return NULL;
    if (owned)
        mc_keep(c, s);
    /* jansson refuses invalid UTF-8; MEOS text values may hold any bytes. */
    json_t *j = json_string(s);
    return j ? j : json_string("(text that is not valid UTF-8)");
}

json_t *ge_timestamptz(call_t *c, TimestampTz t)
{
    return ge_cstring(c, timestamptz_out(t), true);
}

json_t *ge_date(call_t *c, DateADT d)
{
    return ge_cstring(c, date_out(d), true);
}

json_t *ge_interval(call_t *c, const Interval *iv)
{
    return iv ? ge_cstring(c, interval_out(iv), true) : NULL;
}

/* A non-finite double (an infinite bound, DBL_MAX is finite) is spelt as
 * MEOS spells it, since JSON has no such number. */
json_t *ge_double(double d)
{
    if (isfinite(d))
        return json_real(d);
    return json_string(isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
}

json_t *ge_int(int64_t i)
{
    return json_integer(i);
}

/* Hashes fill all 64 bits, past JSON's safe integers: a decimal string. */
json_t *ge_uint(uint64_t u)
{
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)u);
    return json_string(text);
}

json_t *ge_bool(bool b)
{
    return json_boolean(b);
}

/* ------------------------------------------------------------------------
 * Results
 * ------------------------------------------------------------------------ */

json_t *gr_check(const char *fn)
{
    return mc_failed() ? mc_fail("%s failed", fn) : NULL;
}

json_t *gr_result(const char *fn, json_t *value)
{
    json_t *err = gr_check(fn);
    if (err || !value) {
        json_decref(value);
        return err ? err : mc_fail("%s: cannot write the answer", fn);
    }
    json_t *out = json_object();
    json_object_set_new(out, "result", value);
    return tn_result_structured(out);
}

json_t *gr_none(const char *fn)
{
    json_t *err = gr_check(fn);
    if (err)
        return err;
    json_t *out = json_object();
    json_object_set_new(out, "result", json_null());
    return tn_result_structured(out);
}

/* ------------------------------------------------------------------------
 * Registration
 * ------------------------------------------------------------------------ */

static json_t *dispatch(tn_call_t *call, json_t *args, void *user)
{
    return mc_run(((const gen_tool_t *)user)->fn, args, call);
}

int gen_register(tn_server_t *server, bool network)
{
    for (size_t i = 0; i < gen_tools_count; i++) {
        if (gen_tools[i].network && !network)
            continue;
        char *meta = tool_meta(gen_tools[i].category, gen_tools[i].function,
                               gen_tools[i].variant_of);
        tn_tool_t tool = {
            .name = gen_tools[i].name,
            .title = gen_tools[i].title,
            .description = gen_tools[i].description,
            .input_schema = gen_tools[i].input,
            .output_schema = gen_tools[i].output,
            .annotations = gen_annotations,
            .handler = dispatch,
            .user = (void *)&gen_tools[i],
            .meta = meta,
        };
        tn_error_t error;
        int rc = tn_server_add_tool(server, &tool, &error);
        free(meta);
        if (rc != 0) {
            fprintf(stderr, "meos-bundle: tool %s: %s\n", gen_tools[i].name, error.text);
            return -1;
        }
    }
    return 0;
}
