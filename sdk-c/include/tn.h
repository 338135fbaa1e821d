/*
 * tn.h - write toolnode bundles (MCP servers over stdio) in C.
 *
 * A bundle builds a server, adds its tools and calls tn_server_run(), which
 * speaks newline-delimited JSON-RPC 2.0 MCP on stdin/stdout until stdin
 * closes. JSON values are jansson's json_t.
 *
 * Threading model
 *   The thread that calls tn_server_run() reads stdin line by line (lines of
 *   any length). It answers initialize, ping, the lists, logging/setLevel,
 *   resource subscriptions and completion/complete itself, checks tools/call
 *   arguments against the tool's input schema, and handles
 *   notifications/cancelled at once by flagging the call. Valid tools/call,
 *   prompts/get and resources/read requests go, in order of arrival, to a
 *   pool of worker threads that run the handlers. The pool has ONE worker
 *   unless tn_server_set_workers() says otherwise, because native libraries
 *   (libmeos among them) are rarely thread-safe: with one worker, handlers
 *   never run concurrently. With more, handlers must guard shared state
 *   themselves. Every message is written whole under a mutex and flushed,
 *   one per line. When stdin closes, calls already queued or running finish
 *   and are answered, then tn_server_run() returns 0.
 *
 * Ownership, in the manner of jansson
 *   "borrowed": the function does not keep or free the argument.
 *   "stolen":   the function takes over the caller's reference, even when
 *               it fails; the caller must not decref it afterwards.
 *   "new":      the caller owns the returned reference and must
 *               json_decref() / free it, or hand it on to a stealing call.
 *   Strings passed in are copied unless said otherwise.
 *
 * Errors
 *   Functions return NULL or -1 on failure. Where the reason matters, they
 *   fill a caller-owned tn_error_t (which may be NULL), so reporting an
 *   error never allocates.
 */
#ifndef TN_H
#define TN_H

#include <stdarg.h>
#include <stddef.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Version
 * ------------------------------------------------------------------------ */

#define TN_VERSION_MAJOR 0
#define TN_VERSION_MINOR 3
#define TN_VERSION_PATCH 0
#define TN_VERSION "0.3.0"

/* ------------------------------------------------------------------------
 * ABI
 *
 * The shared library is libtn.so.1 (libtn.1.dylib on macOS): a bundle
 * linked against it keeps running against every later libtn.so.1. A change
 * that would break such a bundle takes a new soname (libtn.so.0 became .1
 * when tn_tool_t grew). The structs a caller fills (tn_tool_t,
 * tn_resource_t, tn_prompt_t, tn_view_t) only ever grow at their end, and
 * the functions that take them are macros passing the struct's size as the
 * bundle's header knew it: the library reads that many bytes and takes the
 * fields a bundle's header did not have as NULL; a size smaller than the
 * struct had in libtn.so.1's first tn.h is refused (-1, the reason in
 * error). Only the functions below are exported (TN_API);
 * sdk-c/abi/libtn.abi is the ABI of the last release, and make test
 * compares the library against it with abidiff.
 * ------------------------------------------------------------------------ */

#if defined(__GNUC__) || defined(__clang__)
#define TN_API __attribute__((visibility("default")))
#else
#define TN_API
#endif

/* ------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------ */

#define TN_ERROR_TEXT_LENGTH 200

typedef struct tn_error_t {
    char text[TN_ERROR_TEXT_LENGTH]; /* NUL-terminated, truncated to fit */
} tn_error_t;

/* ------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------ */

/* A server: its identity, its tools and, while running, its session. */
typedef struct tn_server_t tn_server_t;

/* One tools/call in flight. Valid only inside the handler it is given to. */
typedef struct tn_call_t tn_call_t;

/*
 * A tool handler. Runs on a worker thread.
 *   call: borrowed; valid until the handler returns.
 *   args: borrowed and read-only; always a JSON object (empty when the
 *         client sent none), already checked against the tool's input
 *         schema. A call that asks for input (tn_ask) is bound to them.
 *   user: the tool's user pointer, as given.
 * Returns a new reference to a CallToolResult, normally from one of the
 * tn_result_* builders. Returning NULL answers the call with JSON-RPC
 * error -32603 (internal error). Failures the model should see, bad input
 * included, belong in tn_result_error().
 */
typedef json_t *(*tn_handler_fn)(tn_call_t *call, json_t *args, void *user);

/*
 * A tool to add with tn_server_add_tool(). The server copies every string;
 * user is kept as is and never freed.
 */
typedef struct tn_tool_t {
    const char *name;          /* required; 1-128 chars of A-Z a-z 0-9 _ - . */
    const char *title;         /* nullable */
    const char *description;   /* nullable */
    const char *input_schema;  /* JSON object text; NULL means any object */
    const char *output_schema; /* JSON object text, nullable */
    const char *annotations;   /* JSON object text, nullable */
    tn_handler_fn handler;     /* required */
    void *user;                /* handed to the handler, nullable */
    const char *meta;          /* JSON object text for the tool's _meta, nullable */
    /* Whether a call may ("optional"), must ("required") or must not
     * ("forbidden") run as a task of MCP's tasks extension, listed as the
     * tool's execution.taskSupport; NULL says nothing (a node in front, such
     * as toolnode, then decides). The node holds the task: the handler only
     * reports its status (tn_status) and asks for input (tn_ask). */
    const char *task_support;
} tn_tool_t;

/* ------------------------------------------------------------------------
 * Server
 * ------------------------------------------------------------------------ */

/*
 * Creates a server that reports itself as name/version in serverInfo.
 *   name, version: borrowed (copied).
 * Returns a new server, to be released with tn_server_free(); NULL when an
 * argument is NULL or empty, or memory runs out.
 */
TN_API tn_server_t *tn_server_new(const char *name, const char *version);

/*
 * Releases a server and everything it owns; the tools' user pointers are
 * left alone. NULL is accepted. Not while tn_server_run() runs on it.
 *   server: stolen (freed here; not to be used after).
 */
TN_API void tn_server_free(tn_server_t *server);

/*
 * Adds a tool; tools are listed in the order they were added. Only before
 * tn_server_run().
 *   server: borrowed.  tool: borrowed (its strings are copied; meta, like the
 *   schemas and annotations, is parsed here).
 *   error: caller-owned, nullable; filled on failure.
 *   size: sizeof the struct as the caller's tn.h has it, which the macro
 *   passes (see ABI).
 * Returns 0, or -1 when an argument is NULL, the name is invalid or already
 * taken, a schema is not a JSON object, the handler is missing, the server
 * is running, or memory runs out.
 */
TN_API int tn_server_add_tool_sized(tn_server_t *server,
                                    const tn_tool_t *tool,
                                    size_t size, tn_error_t *error);
#define tn_server_add_tool(server, tool, error) \
    tn_server_add_tool_sized((server), (tool), sizeof(tn_tool_t), \
                             (error))

/*
 * Sets how many worker threads run handlers (default 1, at most 256).
 * Only before tn_server_run().
 *   server: borrowed.
 * Returns 0, or -1 when server is NULL, n is out of range or the server
 * is running.
 */
TN_API int tn_server_set_workers(tn_server_t *server, int n);

/*
 * Sets how many tools one tools/list page holds (default 100); more tools
 * than that are paginated with an opaque nextCursor. Only before
 * tn_server_run().
 *   server: borrowed.
 * Returns 0, or -1 when server is NULL, n < 1 or the server is running.
 */
TN_API int tn_server_set_page_size(tn_server_t *server, int n);

/*
 * Sets how long, in milliseconds, a client may keep the tools/list and
 * server/discover answers under MCP 2026-07-28 (their ttlMs; default
 * 60000: tools do not change while a server runs). Only before
 * tn_server_run().
 *   server: borrowed.
 * Returns 0, or -1 when server is NULL, ms < 0 or the server is running.
 */
TN_API int tn_server_set_cache_ttl(tn_server_t *server, long long ms);

/*
 * Serves MCP on stdin/stdout until stdin closes, in both eras: after
 * initialize (2024-11-05 to 2025-11-25) and per request (2026-07-28: a
 * request naming that version in params._meta is served on its own, with
 * the client's capabilities and log level read from it; server/discover
 * answers without initialize; other versions there are refused, -32022).
 * First it protects the protocol stream: stdout's file descriptor moves to
 * a private descriptor and fd 1 becomes a copy of fd 2, so anything printed
 * to stdout afterwards, by the bundle or a library it links, lands on
 * stderr. fd 1 stays that way after the call returns. SIGPIPE is ignored if
 * it still has its default action, so a vanished client cannot kill the
 * process mid-write.
 *   server: borrowed.
 * Returns 0 on a clean end (stdin closed, in-flight calls answered), -1
 * when the server cannot start or stdin fails; the reason goes to stderr.
 * A server runs at most once.
 */
TN_API int tn_server_run(tn_server_t *server);

/*
 * Same as tn_server_run() but reads requests from in_fd and writes
 * messages to out_fd, with no stdout protection and no signal changes.
 * Useful to embed a server or test one over pipes.
 *   in_fd, out_fd: borrowed; both are duplicated, the caller still closes
 *   its own descriptors.
 */
TN_API int tn_server_serve_fd(tn_server_t *server, int in_fd, int out_fd);

/* ------------------------------------------------------------------------
 * Calls
 * ------------------------------------------------------------------------ */

/*
 * Returns 1 once the client has cancelled the call (notifications/cancelled),
 * else 0; 0 for NULL. Long handlers should poll it and return early: the
 * result of a cancelled call is dropped, no answer is sent.
 *   call: borrowed.
 */
TN_API int tn_cancelled(const tn_call_t *call);

/*
 * Sends notifications/progress for the call when the client asked for it
 * (params._meta.progressToken); does nothing otherwise, or once the call is
 * cancelled. progress should grow from one notification to the next. It
 * carries _meta["io.toolnode/request"] as tn_call_log() does.
 *   call: borrowed.  message: borrowed, nullable (omitted when NULL).
 *   total: omitted when not positive.
 * Returns 0, or -1 when call is NULL or the message cannot be written.
 */
TN_API int tn_progress(tn_call_t *call, double progress, double total,
                const char *message);

/*
 * Reports what the call is doing now, for a call that runs as a task: a
 * node holding the call's task (toolnode, for any tool that allows one)
 * makes message the task's status message, and makes the call a task at
 * once if it is not one yet; questions asked before the first report are
 * asked on the client's request itself, before any task exists. It is sent
 * as tn_progress() with the count of reports so far as progress, so it
 * does nothing when the client asked for no progress. Safe from any thread
 * while the handler runs.
 *   call: borrowed.  message: borrowed.
 * Returns 0, or -1 when an argument is NULL or the message cannot be
 * written.
 */
TN_API int tn_status(tn_call_t *call, const char *message);

/*
 * Returns the server running the call (borrowed, do not free), or NULL for
 * NULL.
 *   call: borrowed.
 */
TN_API tn_server_t *tn_call_server(const tn_call_t *call);

/*
 * Return the W3C Trace Context the call's request carried in params._meta,
 * in either era: the caller's span (a node's bundle-call span when the node
 * traces), so that spans the handler makes join the caller's trace.
 * tn_call_traceparent() returns NULL when the request carried none or one
 * that is not a valid traceparent (lower-case hex, non-zero ids, version not
 * ff); tn_call_tracestate() returns NULL when it carried none or when the
 * traceparent is NULL. NULL for NULL.
 *   call: borrowed.
 * The string is borrowed from the call: valid until the handler returns,
 * never freed by the caller; copy it to keep it longer.
 */
TN_API const char *tn_call_traceparent(const tn_call_t *call);
TN_API const char *tn_call_tracestate(const tn_call_t *call);

/*
 * Sends a log message on behalf of the call: notifications/message with
 * logger = the tool's name, data = the formatted text and
 * _meta["io.toolnode/request"] = the call's request id, so that a node
 * serving several clients with one process sends it to the client whose
 * call it is. Filtered by logging/setLevel in a session; under 2026-07-28
 * by the level the call's own _meta asks for, and not sent when it asks
 * for none. Safe from any thread while the handler runs.
 *   call: borrowed.  level: as for tn_log().  fmt: printf format, borrowed.
 * Returns 0 (also when filtered out), or -1 when an argument is NULL, the
 * level is unknown or the message cannot be written.
 */
TN_API int tn_call_log(tn_call_t *call, const char *level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ------------------------------------------------------------------------
 * Asking the client for input
 *
 * One way for both eras. In a session (2025-11-25 and older) each question
 * is a request to the client (elicitation/create, sampling/createMessage,
 * roots/list, tagged with the call's id), and tn_ask() waits for the
 * answers. Under 2026-07-28 the call ends with an input_required result
 * naming the open questions; the client calls again with the answers and
 * the handler runs again from the start, so it must ask the same questions
 * in the same order and do nothing it cannot repeat before its last one.
 * The answers of earlier rounds travel in requestState, sealed with
 * HMAC-SHA256 under $TOOLNODE_STATE_KEY (else a random key per process)
 * and bound to the tool and its arguments: the handler never sees it, and
 * a forged one is refused with -32602.
 * ------------------------------------------------------------------------ */

/*
 * Asks the client every question of questions, an object
 * {"<key>": {"method": "elicitation/create" | "sampling/createMessage" |
 * "roots/list", "params": {...}}}; keys are the handler's to choose.
 *   call: borrowed.  questions: stolen, even on failure.
 * Returns a new reference to {"<key>": <the client's result>} holding every
 * key, or NULL when the call cannot go on now: then the handler should
 * return NULL at once. The SDK answers the call itself: input_required
 * (2026-07-28), -32021 when the request did not declare the capability a
 * question needs, or a tool error when the client refused or went away;
 * nothing when the call was cancelled.
 */
TN_API json_t *tn_ask(tn_call_t *call, json_t *questions);

/*
 * tn_ask() of one elicitation/create in form mode under key.
 *   call: borrowed.  key, message: borrowed.  requested_schema: JSON object
 *   text, borrowed.
 * Returns a new reference to the ElicitResult ({"action": ..., "content":
 * {...}}), or NULL as tn_ask() does (also for a NULL argument or a schema
 * that is not a JSON object).
 */
TN_API json_t *tn_elicit(tn_call_t *call, const char *key, const char *message,
                  const char *requested_schema);

/*
 * Returns 1 when the client can answer questions needing capability
 * ("elicitation", "sampling", "roots"): under 2026-07-28 when the request
 * declared it, so a handler asks only what the client can answer; in a
 * session always, since the client refuses what it cannot do. 0 for NULL.
 *   call, capability: borrowed.
 */
TN_API int tn_call_capable(const tn_call_t *call, const char *capability);

/* ------------------------------------------------------------------------
 * Logging
 * ------------------------------------------------------------------------ */

/*
 * Sends a log message that belongs to no call (use tn_call_log() from a
 * handler) as notifications/message with
 * logger = the server name and data = the formatted text, unless the client
 * set a higher level with logging/setLevel (until then every level is
 * sent). Before the server runs, the line goes to stderr instead.
 * Safe from any thread.
 *   server: borrowed.  level: one of debug info notice warning error
 *   critical alert emergency.  fmt: printf format, borrowed.
 * Returns 0 (also when filtered out), or -1 when an argument is NULL, the
 * level is unknown or the message cannot be written.
 */
TN_API int tn_log(tn_server_t *server, const char *level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ------------------------------------------------------------------------
 * Results
 *
 * Each builder returns a new reference to a CallToolResult, ready to be
 * returned from a handler, or NULL when an argument is NULL or memory
 * runs out.
 * ------------------------------------------------------------------------ */

/*
 * {"content":[{"type":"text","text":text}]}
 *   text: borrowed (copied). Must be UTF-8.
 */
TN_API json_t *tn_result_text(const char *text);

/*
 * tn_result_text() of printf-formatted text.
 *   fmt: printf format, borrowed.
 */
TN_API json_t *tn_result_textf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/*
 * {"content":[{"type":"text","text":<structured as compact JSON>}],
 *  "structuredContent":structured}, the form MCP asks of tools that declare
 * an outputSchema (the text block serves older clients).
 *   structured: stolen, even on failure. Should be a JSON object.
 */
TN_API json_t *tn_result_structured(json_t *structured);

/*
 * {"content":[{"type":"text","text":<formatted>}],"isError":true}, for
 * failures the model should read and may correct.
 *   fmt: printf format, borrowed.
 */
TN_API json_t *tn_result_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/*
 * {"content":content}, for content blocks built by hand (images, audio,
 * resources, several blocks).
 *   content: stolen, even on failure. Must be a JSON array.
 */
TN_API json_t *tn_result_content(json_t *content);

/* ------------------------------------------------------------------------
 * Resources, resource templates, prompts and completion
 *
 * Their handlers run on the workers as tool handlers do, and take a
 * tn_call_t as well: they may log, report progress and ask for input with
 * tn_ask() in both eras. Under 2026-07-28 the lists and every
 * resources/read answer carry the cache hint of tn_server_set_cache_ttl(),
 * and a URI no resource or template serves is refused with -32602 (-32002
 * in a session), its data {"uri": ...}. Only before tn_server_run(), like
 * tools.
 * ------------------------------------------------------------------------ */

/*
 * A resource handler, for a resource or a template.
 *   call: borrowed; valid until the handler returns.  uri: borrowed, the
 *   URI read.  vars: borrowed; for a template its variables by name
 *   (strings, percent-decoded), else an empty object.  user: as given.
 * Returns a new reference to a ReadResourceResult ({"contents": [...]}),
 * normally from tn_read_text() or tn_read_blob(); NULL answers -32603.
 */
typedef json_t *(*tn_read_fn)(tn_call_t *call, const char *uri, json_t *vars,
                              void *user);

/*
 * A resource (tn_server_add_resource()) or a resource template
 * (tn_server_add_template()). The server copies every string.
 */
typedef struct tn_resource_t {
    const char *uri;         /* required: the URI, or for a template an RFC
                                6570 level-1 template ("test://{id}/data") */
    const char *name;        /* required */
    const char *title;       /* nullable */
    const char *description; /* nullable */
    const char *mime_type;   /* nullable */
    tn_read_fn handler;      /* required */
    void *user;              /* handed to the handler, nullable */
} tn_resource_t;

/*
 * Adds a resource at a fixed URI; resources are listed in the order they
 * were added.
 *   server: borrowed.  resource: borrowed (copied).  error: caller-owned,
 *   nullable; filled on failure.
 *   size: sizeof the struct as the caller's tn.h has it, which the macro
 *   passes (see ABI).
 * Returns 0, or -1 when an argument is NULL, the URI, name or handler is
 * missing, the URI is taken, the server is running or memory runs out.
 */
TN_API int tn_server_add_resource_sized(tn_server_t *server,
                                        const tn_resource_t *resource,
                                        size_t size, tn_error_t *error);
#define tn_server_add_resource(server, resource, error) \
    tn_server_add_resource_sized((server), (resource), sizeof(tn_resource_t), \
                             (error))

/*
 * Adds a resource template: resources/read of a URI no resource has goes
 * to the first template that matches it, each {variable} standing for one
 * or more characters other than / ? #.
 *   server: borrowed.  resource: borrowed (copied); uri is the template.
 *   error: caller-owned, nullable; filled on failure.
 *   size: sizeof the struct as the caller's tn.h has it, which the macro
 *   passes (see ABI).
 * Returns 0, or -1 as tn_server_add_resource() does, and when the template
 * has an unclosed brace or a variable with no name.
 */
TN_API int tn_server_add_template_sized(tn_server_t *server,
                                        const tn_resource_t *resource,
                                        size_t size, tn_error_t *error);
#define tn_server_add_template(server, resource, error) \
    tn_server_add_template_sized((server), (resource), sizeof(tn_resource_t), \
                             (error))

/*
 * A prompt to add with tn_server_add_prompt(). Its handler is a
 * tn_handler_fn whose args map the prompt's arguments to strings (the
 * required ones checked present) and which returns a new reference to a
 * GetPromptResult ({"messages": [...]}), normally from tn_prompt_text() or
 * tn_prompt_messages(); NULL answers -32603.
 */
typedef struct tn_prompt_t {
    const char *name;        /* required */
    const char *title;       /* nullable */
    const char *description; /* nullable */
    const char *arguments;   /* JSON array text of {"name", "description",
                                "required"} objects, nullable */
    tn_handler_fn handler;   /* required */
    void *user;              /* handed to the handler, nullable */
} tn_prompt_t;

/*
 * Adds a prompt; prompts are listed in the order they were added.
 *   server: borrowed.  prompt: borrowed (copied; arguments parsed here).
 *   error: caller-owned, nullable; filled on failure.
 *   size: sizeof the struct as the caller's tn.h has it, which the macro
 *   passes (see ABI).
 * Returns 0, or -1 when an argument is NULL, the name or handler is
 * missing, the name is taken, arguments is not an array of objects with a
 * string "name", the server is running or memory runs out.
 */
TN_API int tn_server_add_prompt_sized(tn_server_t *server,
                                      const tn_prompt_t *prompt,
                                      size_t size, tn_error_t *error);
#define tn_server_add_prompt(server, prompt, error) \
    tn_server_add_prompt_sized((server), (prompt), sizeof(tn_prompt_t), \
                             (error))

/*
 * Offers values for completion/complete: of a prompt's argument (ref
 * "prompt", name the prompt's) or of a template's variable (ref
 * "resource", name the URI template). The answer holds the values that
 * start with what the client typed so far, at most 100.
 *   server: borrowed.  ref, name, argument: borrowed (copied).
 *   values: borrowed, a NULL-terminated array of strings (copied).
 * Returns 0, or -1 when an argument is NULL, ref is neither "prompt" nor
 * "resource", the server is running or memory runs out.
 */
TN_API int tn_server_add_completion(tn_server_t *server, const char *ref,
                             const char *name, const char *argument,
                             const char *const *values);

/*
 * Tells the client that the resource uri changed
 * (notifications/resources/updated): a client of 2025-11-25 and older if it
 * subscribed to uri in its session (resources/subscribe), a client of
 * 2026-07-28 once on each open subscriptions/listen that named uri, tagged
 * with that request's id. Safe from any thread.
 *   server: borrowed.  uri: borrowed.
 * Returns 0 (also when nobody subscribed or the server is not running),
 * or -1 when an argument is NULL or the message cannot be written.
 */
TN_API int tn_resource_updated(tn_server_t *server, const char *uri);

/* ------------------------------------------------------------------------
 * MCP Apps views (extension io.modelcontextprotocol/ui)
 *
 * A view is an HTML document at a ui:// URI that a host renders in a
 * sandbox for a tool's results; the tool names it in its _meta, e.g.
 * .meta = "{\"ui\":{\"resourceUri\":\"ui://mine/view.html\"}}", and a tool
 * only views may call adds "visibility":["app"] there. The view may call the
 * bundle's tools back, by their own names, through the host.
 * ------------------------------------------------------------------------ */

/* The MIME type of a view's HTML. */
#define TN_MIME_APP "text/html;profile=mcp-app"

/* A view to add with tn_server_add_view(). The server copies every string. */
typedef struct tn_view_t {
    const char *uri;         /* required; begins ui:// */
    const char *name;        /* nullable: the URI */
    const char *title;       /* nullable */
    const char *description; /* nullable */
    const char *html;        /* required: the whole HTML5 document, UTF-8 */
    const char *ui_meta;     /* JSON object text of _meta.ui (csp,
                                permissions, domain, prefersBorder),
                                nullable: {} */
} tn_view_t;

/*
 * Adds a view: a resource read with MIME type TN_MIME_APP, ui_meta as the
 * _meta.ui of both its listing and its contents. Only before
 * tn_server_run().
 *   server: borrowed.  view: borrowed (its strings are copied, ui_meta
 *   parsed here).  error: caller-owned, nullable; filled on failure.
 *   size: sizeof the struct as the caller's tn.h has it, which the macro
 *   passes (see ABI).
 * Returns 0, or -1 when an argument is NULL, the URI does not begin ui://,
 * the HTML is missing, ui_meta is not a JSON object, the URI is taken, the
 * server is running or memory runs out.
 */
TN_API int tn_server_add_view_sized(tn_server_t *server,
                                    const tn_view_t *view,
                                    size_t size, tn_error_t *error);
#define tn_server_add_view(server, view, error) \
    tn_server_add_view_sized((server), (view), sizeof(tn_view_t), \
                             (error))

/*
 * {"contents":[{"uri":uri,"mimeType":mime_type,"text":text}]}
 *   uri, text: borrowed (copied), UTF-8.  mime_type: borrowed, nullable
 *   (omitted when NULL).
 * Returns a new reference, or NULL when uri or text is NULL or memory runs
 * out.
 */
TN_API json_t *tn_read_text(const char *uri, const char *mime_type,
                     const char *text);

/*
 * {"contents":[{"uri":uri,"mimeType":mime_type,"blob":<data in base64>}]}
 *   uri: borrowed (copied).  mime_type: borrowed, nullable.  data: size
 *   bytes, borrowed; may be NULL when size is 0.
 * Returns a new reference, or NULL when uri is NULL, data is NULL with a
 * size, or memory runs out.
 */
TN_API json_t *tn_read_blob(const char *uri, const char *mime_type,
                     const void *data, size_t size);

/* ------------------------------------------------------------------------
 * Skills (MCP's skills extension, SEP-2640)
 * ------------------------------------------------------------------------ */

/*
 * Serves the Agent Skill in the folder dir (a SKILL.md and the files it
 * uses) under skill://<path>/: every regular file (hidden ones and links
 * left out) as the resource skill://<path>/<file>, and the skill's entry
 * (the SKILL.md frontmatter as JSON, each file's sha256 digest and size) in
 * skills/list and skills/get; the server then declares
 * extensions {"io.modelcontextprotocol/skills": {}}. The last name of path
 * is the skill's name, which the frontmatter must give beside a
 * description. Files are read now, within the extension's limits (512
 * files, 16 MiB). The frontmatter is read as simple YAML: "key: value"
 * lines (plain or quoted), a key followed by indented "key: value" lines
 * (a map, such as metadata), and > or | blocks. Only before
 * tn_server_run().
 *   server: borrowed.  path, dir: borrowed (copied).  error: caller-owned,
 *   nullable; filled on failure.
 * Returns 0, or -1 when an argument is NULL, path does not end in a skill
 * name, a file cannot be read, SKILL.md or its frontmatter is missing or
 * not read, a limit is passed, the skill or one of its URIs is taken, the
 * server is running or memory runs out.
 */
TN_API int tn_server_add_skill(tn_server_t *server, const char *path,
                               const char *dir, tn_error_t *error);

/*
 * {"messages":[{"role":"user","content":{"type":"text","text":text}}]}
 *   text: borrowed (copied), UTF-8.
 * Returns a new reference, or NULL when text is NULL or memory runs out.
 */
TN_API json_t *tn_prompt_text(const char *text);

/*
 * {"messages":messages}, for messages built by hand (images, embedded
 * resources, several roles).
 *   messages: stolen, even on failure. Must be a JSON array.
 * Returns a new reference, or NULL when messages is not an array or memory
 * runs out.
 */
TN_API json_t *tn_prompt_messages(json_t *messages);

#ifdef __cplusplus
}
#endif

#endif /* TN_H */
