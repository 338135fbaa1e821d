/* Private to the library: shared by the files under src/, and by the unit
 * tests, which reach the schema checker directly. */
#ifndef TN_PRIVATE_H
#define TN_PRIVATE_H

#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/types.h>

#include "tn.h"

/* JSON-RPC 2.0 error codes used by MCP. */
enum {
    TN_RPC_PARSE_ERROR = -32700,
    TN_RPC_INVALID_REQUEST = -32600,
    TN_RPC_METHOD_NOT_FOUND = -32601,
    TN_RPC_INVALID_PARAMS = -32602,
    TN_RPC_INTERNAL_ERROR = -32603,
};

struct tn_tool {
    char *name;
    json_t *definition;   /* the tools/list entry */
    json_t *input_schema; /* borrowed from definition */
    tn_handler_fn handler;
    void *user;
};

struct tn_call_t {
    tn_server_t *server;
    const struct tn_tool *tool;
    json_t *id;             /* request id: string or integer */
    json_t *args;           /* checked arguments, always an object */
    json_t *progress_token; /* NULL when the client asked for no progress */
    atomic_int cancelled;
    struct tn_call_t *next_queued;
    struct tn_call_t *prev_live, *next_live;
};

struct tn_server_t {
    char *name;
    char *version;
    struct tn_tool *tools;
    size_t tool_count, tool_capacity;
    int workers;
    int page_size;
    int started;
    atomic_int log_min; /* index into tn__levels of the lowest level sent */

    /* Output: out is non-NULL exactly while the server runs. */
    pthread_mutex_t out_lock;
    FILE *out;

    /* Work queue and calls not answered yet, guarded by lock. */
    pthread_mutex_t lock;
    pthread_cond_t work;
    struct tn_call_t *queue_head, *queue_tail;
    struct tn_call_t *live;
    int closing;
};

/* io.c */
extern const char *const tn__levels[];
int tn__level_index(const char *level);
ssize_t tn__read_line(FILE *in, char **line, size_t *capacity);
int tn__send(tn_server_t *server, json_t *message /* stolen */);
int tn__reply(tn_server_t *server, json_t *id, json_t *result /* stolen */);
int tn__reply_error(tn_server_t *server, json_t *id, int code,
                    const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
json_t *tn__number(double value);

/* tool.c */
const struct tn_tool *tn__find_tool(const tn_server_t *server,
                                    const char *name);

/* schema.c */
int tn__valid_tool_name(const char *name);
/* Checks args against an input schema. On a mismatch returns -1 with a
 * message naming the argument in msg. Integral reals given for integer
 * properties are rewritten as integers in args, so handlers can read them
 * with json_integer_value(). */
int tn__check_args(const json_t *schema, json_t *args, char *msg,
                   size_t size);

/* result.c */
char *tn__vformat(const char *fmt, va_list ap); /* malloc'd, NULL on OOM */

#endif
