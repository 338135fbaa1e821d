/* The boundary with libmeos: setup, the error record, guarded calls. */
#define _GNU_SOURCE
#include "bundle.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct call {
    void **owned;
    size_t n_owned, cap_owned;
    json_t *out;
    const tn_call_t *tn;
};

/* The first error MEOS reported during the current call: later ones tend
 * to follow from it. The handler only records; the tool body decides. */
static struct {
    bool set;
    int level, code;
    char message[1024];
} last_error;

static void on_meos_error(int level, int code, const char *msg)
{
    if (level < MEOS_ERROR_LEVEL) {
        fprintf(stderr, "meos: %s\n", msg);
        return;
    }
    if (last_error.set)
        return;
    last_error.set = true;
    last_error.level = level;
    last_error.code = code;
    snprintf(last_error.message, sizeof last_error.message, "%s", msg);
}

bool mc_failed(void)
{
    return last_error.set;
}

void mc_clear_error(void)
{
    last_error.set = false;
}

/*
 * libmeos ends the process without calling the error handler from two
 * places: elog(ERROR), used by the PostgreSQL date/time code it embeds, and
 * liblwgeom's default error reporter, reached for instance when GEOS rejects
 * an invalid polygon. Both print a line to stderr and call exit(1). Input
 * checks (input.c) keep the usual mistakes away from them; for the rest,
 * this exit() takes precedence over libc's for every library in the process
 * and, while a tool body runs on this thread, jumps back to mc_run(), which
 * answers the call with the printed line. Anywhere else it is libc's exit().
 * What MEOS had allocated in the abandoned call is lost.
 */
static _Thread_local sigjmp_buf *abort_jump;

void exit(int status)
{
    if (abort_jump) {
        sigjmp_buf *jump = abort_jump;
        abort_jump = NULL;
        siglongjmp(*jump, 1);
    }
    void (*libc_exit)(int) = (void (*)(int))dlsym(RTLD_NEXT, "exit");
    if (libc_exit)
        libc_exit(status);
    _Exit(status);
}

/* While a tool body runs, stderr points here, so the line MEOS prints
 * before exit() can become the call's error message. */
static char captured[1024];
static FILE *capture;

static void forward_captured(FILE *to, size_t n)
{
    if (n)
        fprintf(to, "%s%s", captured, captured[n - 1] == '\n' ? "" : "\n");
}

/* The captured text on one line, for an error message. */
static const char *captured_line(size_t n)
{
    while (n && (captured[n - 1] == '\n' || captured[n - 1] == ' '))
        captured[--n] = '\0';
    for (char *p = captured; *p; p++)
        if (*p == '\n')
            *p = ' ';
    return n ? captured : "no message";
}

json_t *mc_run(tool_fn fn, json_t *args, const tn_call_t *call)
{
    /* MEOS is not thread-safe. The server runs one worker, so this lock is
     * never contended; it keeps MEOS safe should that change. The state is
     * static so it survives the jump without volatile. */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static call_t c;
    static sigjmp_buf jump;
    static FILE *saved_stderr;
    static json_t *result;

    pthread_mutex_lock(&lock);
    last_error.set = false;
    c.out = json_object();
    c.tn = call;
    result = NULL;
    rewind(capture);
    saved_stderr = stderr;
    stderr = capture;

    bool aborted = false;
    if (sigsetjmp(jump, 0) == 0) {
        abort_jump = &jump;
        result = fn(&c, args);
        abort_jump = NULL;
    } else {
        aborted = true;
    }

    size_t n = (size_t)ftell(capture);
    captured[n] = '\0';
    stderr = saved_stderr;
    forward_captured(stderr, n);
    if (aborted)
        result = tn_result_error("MEOS stopped the operation: %s", captured_line(n));

    for (size_t i = 0; i < c.n_owned; i++)
        free(c.owned[i]);
    c.n_owned = 0;
    json_decref(c.out);
    c.out = NULL;
    c.tn = NULL;
    pthread_mutex_unlock(&lock);
    return result;
}

bool mc_cancelled(call_t *c)
{
    return tn_cancelled(c->tn);
}

json_t *mc_gave_up(void)
{
    return tn_result_error("the call was cancelled by its client");
}

void *mc_keep(call_t *c, void *p)
{
    if (!p)
        return NULL;
    if (c->n_owned == c->cap_owned) {
        size_t cap = c->cap_owned ? 2 * c->cap_owned : 16;
        void **grown = realloc(c->owned, cap * sizeof *grown);
        if (!grown) {
            free(p);
            return NULL;
        }
        c->owned = grown;
        c->cap_owned = cap;
    }
    c->owned[c->n_owned++] = p;
    return p;
}

json_t *mc_fail(const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (last_error.set)
        return tn_result_error("%s: %s", text, last_error.message);
    return tn_result_error("%s", text);
}

json_t *mc_out(call_t *c)
{
    return c->out;
}

json_t *mc_structured(call_t *c)
{
    json_t *out = c->out;
    c->out = NULL;
    return tn_result_structured(out);
}

/* The SRIDs of MEOS's spatial_ref_sys.csv, sorted. */
static int32_t *srids;
static size_t n_srids;

static int compare_srid(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Lines read "EPSG,3857,<proj4text>,<srtext>": the SRID is the second field. */
static int load_srids(const char *csv)
{
    FILE *f = fopen(csv, "r");
    if (!f)
        return -1;
    char line[256];
    size_t cap = 0;
    bool line_start = true;
    while (fgets(line, sizeof line, f)) {
        bool at_start = line_start;
        line_start = strchr(line, '\n') != NULL;
        char *comma = strchr(line, ',');
        char *end;
        long srid = comma && at_start ? strtol(comma + 1, &end, 10) : 0;
        if (srid <= 0 || srid > INT32_MAX || *end != ',')
            continue;
        if (n_srids == cap) {
            cap = cap ? 2 * cap : 1024;
            int32_t *grown = realloc(srids, cap * sizeof *grown);
            if (!grown) {
                fclose(f);
                return -1;
            }
            srids = grown;
        }
        srids[n_srids++] = (int32_t)srid;
    }
    fclose(f);
    qsort(srids, n_srids, sizeof *srids, compare_srid);
    return n_srids ? 0 : -1;
}

bool mc_srid_known(int32_t srid)
{
    return bsearch(&srid, srids, n_srids, sizeof *srids, compare_srid) != NULL;
}

/* The wheel's data, found from the libmeos the loader chose (dladdr(3), on
 * Linux and macOS alike, no /proc): the Linux wheel keeps its libraries beside
 * the package (pymeos_cffi.libs/ next to pymeos_cffi/), the macOS wheel inside
 * it (pymeos_cffi/.dylibs/). Writes the package's folder to data. */
static int find_wheel_data(char *data, size_t size)
{
    Dl_info info;
    if (!dladdr((void *)meos_initialize, &info) || !info.dli_fname ||
        !strstr(info.dli_fname, "libmeos")) {
        fprintf(stderr, "meos-bundle: cannot tell where libmeos was loaded from "
                        "(%s); build the bundle as a position-independent executable\n",
                info.dli_fname ? info.dli_fname : "no file");
        return -1;
    }
    /* dirname(3) may write to its argument or return a static buffer: one
     * call per copy. */
    char lib[PATH_MAX], dir[PATH_MAX];
    snprintf(lib, sizeof lib, "%s", info.dli_fname);
    snprintf(dir, sizeof dir, "%s", dirname(lib));
    const char *up = dirname(dir);
    const char *layouts[] = {"%s/pymeos_cffi", "%s"};
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
        char proj[PATH_MAX + 64];
        snprintf(data, size, layouts[i], up);
        snprintf(proj, sizeof proj, "%s/proj_data", data);
        if (access(proj, R_OK) == 0)
            return 0;
    }
    fprintf(stderr, "meos-bundle: the wheel of %s is missing its data; run make in bundles/meos\n",
            info.dli_fname);
    return -1;
}

int mc_setup(void)
{
    char data[PATH_MAX + 32], proj[PATH_MAX + 64], srs[PATH_MAX + 64];
    if (find_wheel_data(data, sizeof data) != 0)
        return -1;
    snprintf(proj, sizeof proj, "%s/proj_data", data);
    snprintf(srs, sizeof srs, "%s/meos_data/spatial_ref_sys.csv", data);

    if (access(proj, R_OK) != 0 || access(srs, R_OK) != 0) {
        fprintf(stderr, "meos-bundle: %s is missing its data; run make in bundles/meos\n", data);
        return -1;
    }
    if (load_srids(srs) != 0) {
        fprintf(stderr, "meos-bundle: cannot read the SRIDs of %s\n", srs);
        return -1;
    }
    if (access("/usr/share/zoneinfo/UTC", R_OK) != 0) {
        fprintf(stderr, "meos-bundle: no time zone data; install the tzdata package\n");
        return -1;
    }
    /* The wheel's PROJ 8 reads PROJ_LIB; PROJ 9.1 and later PROJ_DATA. */
    if (!getenv("PROJ_DATA") && !getenv("PROJ_LIB")) {
        setenv("PROJ_DATA", proj, 1);
        setenv("PROJ_LIB", proj, 1);
    }

    capture = fmemopen(captured, sizeof captured - 1, "w");
    if (!capture) {
        perror("meos-bundle: fmemopen");
        return -1;
    }
    setvbuf(capture, NULL, _IONBF, 0);

    meos_initialize();
    meos_initialize_error_handler(on_meos_error);
    meos_initialize_timezone("UTC");
    meos_set_spatial_ref_sys_csv(srs);
    if (last_error.set) {
        fprintf(stderr, "meos-bundle: MEOS failed to start: %s\n", last_error.message);
        return -1;
    }
    return 0;
}
