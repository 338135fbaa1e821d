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
    TN_RPC_RESOURCE_NOT_FOUND = -32002,
    TN_RPC_MISSING_CAPABILITY = -32021,
    TN_RPC_UNSUPPORTED_VERSION = -32022,
    /* Not JSON-RPC: a call answered with an isError result instead. */
    TN_FAIL_TOOL = 1,
};

/* _meta keys. */
#define TN_META_ROUTING "io.toolnode/request"
#define TN_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define TN_META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define TN_META_LOG_LEVEL "io.modelcontextprotocol/logLevel"
#define TN_META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define TN_META_SUBSCRIPTION "io.modelcontextprotocol/subscriptionId"

/* How a request is served: in the session opened by initialize, or on its
 * own under 2026-07-28 with what the server may know in its _meta. */
typedef struct {
    int stateless;
    json_t *capabilities; /* borrowed from the request; stateless only */
    int log_min;          /* stateless: least level index sent, 8 = none */
} tn_era_t;

struct tn_tool {
    char *name;
    json_t *definition;   /* the tools/list entry */
    json_t *input_schema; /* borrowed from definition */
    tn_handler_fn handler;
    void *user;
};

/* A resource, a resource template or a prompt. */
struct tn_entry {
    char *key;          /* the URI, the URI template or the prompt's name */
    json_t *definition; /* its entry in the list */
    json_t *arguments;  /* prompts: borrowed from definition, nullable */
    tn_read_fn read;    /* resources and templates */
    tn_handler_fn get;  /* prompts */
    void *user;
    void (*free_user)(void *); /* frees user with the entry; NULL: nothing */
};

struct tn_entries {
    struct tn_entry *items;
    size_t count, capacity;
};

struct tn_call_t {
    tn_server_t *server;
    const struct tn_tool *tool; /* NULL for prompts/get and resources/read */
    const struct tn_entry *entry; /* the prompt or resource, else NULL */
    const char *name;       /* the tool's or prompt's name, or uri */
    char *uri;              /* resources/read: the URI read */
    int cacheable;          /* resources/read: its answer has a cache hint */
    json_t *id;             /* request id: string or integer */
    json_t *args;           /* checked arguments, always an object */
    json_t *progress_token; /* NULL when the client asked for no progress */
    json_t *traceparent;    /* strings from _meta, NULL when absent or invalid */
    json_t *tracestate;
    atomic_int cancelled;
    atomic_int statuses;    /* tn_status() reports so far */

    /* Era of the request. Under 2026-07-28: the capabilities and log level
     * of this request, the client's answers so far, and what binds a sealed
     * state to the call. */
    int stateless;
    json_t *capabilities;
    int log_min;
    json_t *answers;        /* NULL until the client gave some */
    const char *method;     /* static: what the digest binds, with name, args */
    char digest[48];        /* "" until made (see digest_call) */

    /* Set by tn_ask() when the call cannot finish now (guarded by
     * server->lock): the questions still open, or a JSON-RPC error. */
    json_t *need;
    int fail_code;
    char *fail_message;
    json_t *fail_data;

    struct tn_call_t *next_queued;
    struct tn_call_t *prev_live, *next_live;
};

struct tn_server_t {
    char *name;
    char *version;
    struct tn_tool *tools;
    size_t tool_count, tool_capacity;
    struct tn_entries resources, templates, prompts;
    json_t *completions; /* by "<ref>\n<name>\n<argument>": values */
    json_t *subscribed;  /* URIs the session subscribed to, guarded by lock */
    /* Open subscriptions/listen requests, guarded by lock: by their id as
     * compact JSON, {"id": id, "uris": {uri: true...}}. */
    json_t *listens;
    int workers;
    int page_size;
    int started;
    atomic_int log_min; /* index into tn__levels of the lowest level sent */
    long long cache_ttl_ms;
    unsigned char state_key[32];
    size_t state_key_len;

    /* Output: out is non-NULL exactly while the server runs. */
    pthread_mutex_t out_lock;
    FILE *out;

    /* Work queue and calls not answered yet, guarded by lock. */
    pthread_mutex_t lock;
    pthread_cond_t work;
    struct tn_call_t *queue_head, *queue_tail;
    struct tn_call_t *live;
    int closing;

    /* Requests of ours waiting for the client's answer, guarded by lock;
     * answered signals their arrival (and the end of input). */
    struct tn_pending *pending;
    pthread_cond_t answered;
    long long last_request;
    int input_ended;
    struct tn_entries skills; /* by the URI of their SKILL.md: their entries
                                (last: the ABI appends to structs) */
};

struct tn_pending {
    char id[32];
    json_t *result; /* new, once answered */
    json_t *error;  /* new, once answered with an error */
    int done;
    struct tn_pending *next;
};

/* io.c: a leaf, calling nothing else of the library. */
extern const char *const tn__levels[];
int tn__level_index(const char *level);
ssize_t tn__read_line(FILE *in, char **line, size_t *capacity);
int tn__send(tn_server_t *server, json_t *message /* stolen */);
int tn__reply(tn_server_t *server, json_t *id, json_t *result /* stolen */);
int tn__reply_error(tn_server_t *server, json_t *id, int code,
                    const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
json_t *tn__number(double value);
char *tn__vformat(const char *fmt, va_list ap); /* malloc'd, NULL on OOM */

/* The size of each struct a caller fills as libtn.so.1 first shipped it:
 * the end of its last field then. Fields are only appended after these, so
 * these never change; a smaller struct is refused. */
#define TN__END_OF(type, field) \
    (offsetof(type, field) + sizeof(((type *)0)->field))
#define TN__TOOL_SIZE_1 TN__END_OF(tn_tool_t, task_support)
#define TN__RESOURCE_SIZE_1 TN__END_OF(tn_resource_t, user)
#define TN__PROMPT_SIZE_1 TN__END_OF(tn_prompt_t, user)
#define TN__VIEW_SIZE_1 TN__END_OF(tn_view_t, ui_meta)

/* tool.c */
/* Copies the struct a caller gave (given, of given_size bytes as its tn.h
 * made it) into copy (copy_size, this library's), the fields it lacks
 * zeroed; -1 with error filled when it is smaller than least. */
int tn__sized(void *copy, size_t copy_size, const void *given,
              size_t given_size, size_t least, const char *type,
              tn_error_t *error);
/* Fills error (nullable) with the formatted reason. */
void tn__set_error(tn_error_t *error, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
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

/* seal.c */
void tn__sha256(const void *data, size_t n, unsigned char out[32]);
void tn__hmac_sha256(const unsigned char *key, size_t key_len,
                     const void *data, size_t n, unsigned char out[32]);
/* base64 of data (malloc'd): url-safe without padding, else standard. */
char *tn__base64(const unsigned char *data, size_t n, int url);
char *tn__b64url(const unsigned char *data, size_t n); /* malloc'd */
unsigned char *tn__unb64url(const char *text, size_t n, size_t *out_len);

/* input.c */
void tn__state_key_init(tn_server_t *server);
/* Prepares a stateless call's answers from params (inputResponses and
 * requestState); -1 with msg on malformed or forged input. method is
 * static; the call's name and args are what a state is bound to. */
int tn__restore_answers(tn_server_t *server, tn_call_t *call,
                        const json_t *params, const char *method, char *msg,
                        size_t size);
/* The input_required result of a call that asked questions still open,
 * new; NULL when it asked none. */
json_t *tn__input_required(tn_server_t *server, tn_call_t *call);
void tn__answered(tn_server_t *server, json_t *message);
json_t *tn__routing_meta(const tn_call_t *call); /* new */
/* Keeps the trace context of a request's _meta on call. */
void tn__read_trace_context(tn_call_t *call, json_t *meta);
void tn__end_input(tn_server_t *server);

/* resource.c */
void tn__entries_free(struct tn_entries *entries);
/* Adds a skill's entry (stolen) under uri; -1 when memory runs out. */
int tn__add_skill_entry(tn_server_t *server, const char *uri, json_t *entry);
const struct tn_entry *tn__find_entry(const struct tn_entries *entries,
                                      const char *key);
/* The template that serves uri and its variables (new, in *vars), or NULL. */
const struct tn_entry *tn__match_template(const tn_server_t *server,
                                          const char *uri, json_t **vars);
/* The completion/complete result for params (new), or NULL with msg. */
json_t *tn__complete(const tn_server_t *server, const json_t *params,
                     char *msg, size_t size);
int tn__subscribe(tn_server_t *server, const char *uri, int on);
/* Opens the subscription of a 2026-07-28 subscriptions/listen request and
 * acknowledges it, or answers an error. id and params: borrowed. */
void tn__listen(tn_server_t *server, json_t *id, json_t *params);
/* Ends the subscription opened by request id, if any; 1 when there was one.
 * id: borrowed. */
int tn__unlisten(tn_server_t *server, const json_t *id);

#endif
