/* Shared by the sources of the MEOS bundle. */
#ifndef MEOS_BUNDLE_H
#define MEOS_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <tn.h>

#include "call.h"
#include "meos_decl.h"

/* ------------------------------------------------------------------------
 * input.c: reading and writing values
 * ------------------------------------------------------------------------ */

/* The moving point in argument `name`, in MEOS text, MF-JSON or HexWKB.
 * NULL with *err set when it is missing or unreadable. */
Temporal *arg_point(call_t *c, json_t *args, const char *name, json_t **err);

/* The WKT/EWKT geometry in argument `name`; plain WKT takes `srid`. */
GSERIALIZED *arg_geometry(call_t *c, json_t *args, const char *name, int32_t srid,
                          json_t **err);

/* The timestamp in argument `name`. 0, or -1 with *err set. */
int arg_time(call_t *c, json_t *args, const char *name, TimestampTz *out, json_t **err);

/* The number in argument `name`, or `dflt` when absent. */
double arg_number(json_t *args, const char *name, double dflt);

/* ------------------------------------------------------------------------
 * tools.c
 * ------------------------------------------------------------------------ */

/* Adds every tool to the server. 0 or -1. */
int tools_register(tn_server_t *server);

#endif
