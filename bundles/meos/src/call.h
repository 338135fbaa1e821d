/* The call boundary shared by the hand-written tools (bundle.h) and the
 * generated ones (gen.h): it needs no MEOS type, so either set of MEOS
 * declarations can sit beside it. */
#ifndef MEOS_CALL_H
#define MEOS_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <tn.h>

/* Largest string accepted for any one argument. */
#define MAX_ARG_BYTES (1024 * 1024)

/* ------------------------------------------------------------------------
 * meos_call.c: the boundary with libmeos
 * ------------------------------------------------------------------------ */

/* The state of one tool call: what it must free, what it is building. */
typedef struct call call_t;

/* A tool body. Runs between mc_run()'s guards; returns a CallToolResult. */
typedef json_t *(*tool_fn)(call_t *c, json_t *args);

/* Initializes MEOS once: data paths, UTC, the error handler. -1 on failure,
 * the reason on stderr. */
int mc_setup(void);

/* Runs a tool body with MEOS calls serialized and guarded: errors MEOS
 * reports become isError results, and the few places where libmeos would
 * end the process come back here instead. Frees everything kept with
 * mc_keep(). call (borrowed, may be NULL) is the SDK's call, whose
 * cancellation mc_cancelled() reports. Returns a new reference. */
json_t *mc_run(tool_fn fn, json_t *args, const tn_call_t *call);

/* Whether the client cancelled the call (notifications/cancelled): a tool
 * body that loops over its input checks it between elements and gives up,
 * so that a cancelled call frees the process at once. One atomic load. */
bool mc_cancelled(call_t *c);

/* The result of a call given up because it was cancelled (the SDK sends
 * no answer for it). */
json_t *mc_gave_up(void);

/* Takes ownership of a malloc'd pointer (a MEOS result) until the call
 * ends. NULL passes through. */
void *mc_keep(call_t *c, void *p);

/* Whether MEOS knows the SRID (from its spatial_ref_sys.csv). */
bool mc_srid_known(int32_t srid);

/* Whether MEOS reported an error since the call began. */
bool mc_failed(void);

/* An isError result: the formatted text, then ": " and MEOS's own message
 * when MEOS reported one. */
json_t *mc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The object a tool fills for its structuredContent (borrowed), and the
 * result carrying it. */
json_t *mc_out(call_t *c);
json_t *mc_structured(call_t *c);

/* ------------------------------------------------------------------------
 * input.c: reading and writing values
 * ------------------------------------------------------------------------ */

/* Reads an ISO 8601 timestamp; no offset means UTC. 0 or -1. */
int ts_parse(const char *s, int64_t *out);

/* RFC 3339 in UTC, e.g. 2025-01-01T08:00:00Z; out holds 40 bytes. */
void ts_format(int64_t t, char *out);

/* The string argument `name`, or NULL when it is absent. Fails (returns
 * NULL and sets *err) when it is longer than MAX_ARG_BYTES. */
const char *arg_string(json_t *args, const char *name, json_t **err);

/* The string argument `name` with surrounding space removed, kept by the
 * call; NULL with *err set when it is missing, empty or too long. */
char *arg_trimmed(call_t *c, json_t *args, const char *name, json_t **err);

/* MEOS's input form of a timestamp, 2025-01-01 08:00:00.500000+00; out
 * holds 40 bytes. Returns the length written. */
int ts_write_meos(int64_t t, char *out);

/* The checked MF-JSON of a moving point with its timestamps rewritten,
 * malloc'd; NULL with *err set when it is not one. */
char *mfjson_normalize(const char *in, const char *name, json_t **err);

/* The tool's _meta as JSON text, malloc'd: its category under
 * "io.toolnode/category", and under "io.toolnode/meos" whether it is
 * generated and the C function it calls (NULL for a curated tool); a
 * generated tool also under "io.toolnode/generated", and under
 * "io.toolnode/variant-of" the tool it is a variant of (variant_of: NULL or
 * "" for none). */
char *tool_meta(const char *category, const char *function, const char *variant_of);

/* Adds the generated tools (build/gen/tools_gen.c) to the server; the
 * network-point ones only when network is true. 0 or -1. */
int gen_register(tn_server_t *server, bool network);

/* ways.c: a tool body, run once at start under mc_run(), that checks the
 * ways file of argument "file" (the road network of network points) and
 * makes MEOS read a private copy of it; {"routes": n} or an error. */
json_t *ways_load(call_t *c, json_t *args);

/* Forgets the error MEOS reported, so that a later step of the same call
 * can be judged on its own. */
void mc_clear_error(void);

#endif
