/*
 * The road network of the network-point tools.
 *
 * MEOS 1.3 reads the routes of network points from one CSV file whose path
 * is compiled in (/usr/local/share/ways1000.csv): one route per line,
 * `gid,HexEWKB of a linestring`, read with fscanf("%ld,%100000s"). A line
 * it cannot read makes that loop spin forever, a longer geometry is cut and
 * read as the next line, and a geometry MEOS cannot parse ends the process.
 * So the bundle takes the file named by MEOS_WAYS, checks every line,
 * copies it into an anonymous in-memory file (a later change to the file
 * cannot reach MEOS), and answers MEOS's fopen of the compiled-in path with
 * that copy: the fopen below takes precedence over libc's for libmeos, as
 * exit() does in meos_call.c.
 *
 * Built with -DWAYS_PRELOAD, this file is instead a shared object for
 * LD_PRELOAD that sends the same fopen to the file MEOS_WAYS names,
 * unchecked: the differential test's reference (pymeos-cffi in Python)
 * reads the test network through it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where MEOS 1.3 looks for the ways file (ways_meos.c). */
#define MEOS_WAYS_CSV "/usr/local/share/ways1000.csv"

/* The file MEOS's fopen of MEOS_WAYS_CSV gets instead; empty: none. Set
 * once at start, before any call, and read only afterwards. */
static char ways_path[PATH_MAX];

FILE *fopen(const char *path, const char *mode)
{
    static FILE *(*libc_fopen)(const char *, const char *);
    if (!libc_fopen)
        libc_fopen = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    if (ways_path[0] && path && strcmp(path, MEOS_WAYS_CSV) == 0)
        path = ways_path;
    return libc_fopen(path, mode);
}

#ifdef WAYS_PRELOAD

__attribute__((constructor)) static void ways_preload(void)
{
    const char *file = getenv("MEOS_WAYS");
    if (file && strlen(file) < sizeof ways_path)
        strcpy(ways_path, file);
}

#else

#include <sys/mman.h>
#include <unistd.h>

#include "gen.h"

/* The longest geometry MEOS reads (%100000s), and a bound on the routes:
 * MEOS reads the whole file again for every point it places. */
#define MAX_GEOMETRY 100000
#define MAX_ROUTES 1000000

static bool all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return n > 0 && n % 2 == 0;
}

/* Whether HexEWKB is a non-empty linestring; *srid gets its SRID. */
static bool is_linestring(const char *hex, int32_t *srid)
{
    GSERIALIZED *g = geom_in(hex, -1);
    char *wkt = g && !mc_failed() && !geo_is_empty(g) ? geo_as_text(g, 0) : NULL;
    bool line = wkt && strncmp(wkt, "LINESTRING", 10) == 0;
    *srid = line ? geo_srid(g) : 0;
    free(wkt);
    free(g);
    return line && !mc_failed();
}

/* Checks one line, `gid,HexEWKB`. NULL, or the error result. */
static json_t *check_route(char *line, size_t number, int32_t *srid, int64_t *first)
{
    char *comma = strchr(line, ',');
    char *end;
    errno = 0;
    long long gid = comma ? strtoll(line, &end, 10) : -1;
    if (!comma || end != comma || !isdigit((unsigned char)line[0]) || errno || gid < 0)
        return mc_fail("line %zu: expected gid,HexEWKB with gid a whole number", number);
    const char *hex = comma + 1;
    size_t n = strlen(hex);
    if (n > MAX_GEOMETRY || !all_hex(hex, n))
        return mc_fail("line %zu: the geometry must be HexEWKB of at most %d digits", number,
                       MAX_GEOMETRY);
    int32_t s;
    if (!is_linestring(hex, &s))
        return mc_fail("line %zu: the geometry is not a non-empty linestring", number);
    if (number == 1) {
        *srid = s;
        *first = gid;
    }
    if (s != *srid)
        return mc_fail("line %zu: SRID %d where the first route has %d", number, s, *srid);
    return NULL;
}

/* Copies the checked lines of in to out. NULL, or the error result;
 * *first is the gid of the first route. */
static json_t *copy_routes(FILE *in, FILE *out, size_t *routes, int64_t *first)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int32_t srid = 0;
    json_t *fail = NULL;
    *routes = 0;
    while (!fail && (len = getline(&line, &cap, in)) >= 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (++*routes > MAX_ROUTES)
            fail = mc_fail("more than %d routes", MAX_ROUTES);
        else if (!(fail = check_route(line, *routes, &srid, first)) &&
                 fprintf(out, "%s\n", line) < 0)
            fail = mc_fail("cannot write the in-memory copy");
    }
    free(line);
    return fail;
}

json_t *ways_load(call_t *c, json_t *args)
{
    const char *file = json_string_value(json_object_get(args, "file"));
    FILE *in = file ? fopen(file, "r") : NULL;
    if (!in)
        return mc_fail("cannot open %s: %s", file ? file : "(none)", strerror(errno));
    int fd = memfd_create("meos-ways", MFD_CLOEXEC);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        if (fd >= 0)
            close(fd);
        fclose(in);
        return mc_fail("cannot make the in-memory copy of %s: %s", file, strerror(errno));
    }
    size_t routes;
    int64_t first = 0;
    json_t *fail = copy_routes(in, out, &routes, &first);
    fclose(in);
    if (!fail && routes == 0)
        fail = mc_fail("%s holds no routes", file);
    if (!fail && fflush(out) != 0)
        fail = mc_fail("cannot write the in-memory copy of %s", file);
    /* The copy stays open for the life of the process: MEOS opens it through
     * this descriptor whenever it reads the network. */
    int kept = fail ? -1 : dup(fd);
    fclose(out);
    if (!fail && kept < 0)
        fail = mc_fail("cannot keep the in-memory copy of %s: %s", file, strerror(errno));
    if (fail)
        return fail;
    snprintf(ways_path, sizeof ways_path, "/proc/self/fd/%d", kept);
    /* With an empty cache, MEOS 1.3's get_srid_ways looks for route 0 and
     * answers an invalid SRID when there is none; with any route cached it
     * answers that route's SRID, the network's. */
    if (!route_exists(first))
        return mc_fail("MEOS cannot read route %lld of its copy", (long long)first);
    json_object_set_new(mc_out(c), "routes", json_integer((json_int_t)routes));
    return mc_structured(c);
}

#endif
