/* The server: its lifetime and settings, the read loop and its dispatch,
 * the worker pool, cancellation. The threading model is told in tn.h. */
#include "tn_private.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_WORKERS 256

/* Versions we speak, newest first; the only place that knows them. */
static const char *const protocol_versions[] = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL};

static const char *negotiate_version(const json_t *offered)
{
    for (int i = 0; protocol_versions[i]; i++)
        if (json_is_string(offered) &&
            !strcmp(json_string_value(offered), protocol_versions[i]))
            return protocol_versions[i];
    return protocol_versions[0];
}

/* ------------------------------------------------------------------------
 * Configuration
 * ------------------------------------------------------------------------ */

tn_server_t *tn_server_new(const char *name, const char *version)
{
    if (!name || !*name || !version || !*version)
        return NULL;
    tn_server_t *server = calloc(1, sizeof *server);
    if (!server)
        return NULL;
    server->name = strdup(name);
    server->version = strdup(version);
    server->workers = 1;
    server->page_size = 100;
    pthread_mutex_init(&server->out_lock, NULL);
    pthread_mutex_init(&server->lock, NULL);
    pthread_cond_init(&server->work, NULL);
    if (!server->name || !server->version) {
        tn_server_free(server);
        return NULL;
    }
    return server;
}

void tn_server_free(tn_server_t *server)
{
    if (!server)
        return;
    for (size_t i = 0; i < server->tool_count; i++) {
        free(server->tools[i].name);
        json_decref(server->tools[i].definition);
    }
    free(server->tools);
    free(server->name);
    free(server->version);
    pthread_mutex_destroy(&server->out_lock);
    pthread_mutex_destroy(&server->lock);
    pthread_cond_destroy(&server->work);
    free(server);
}

int tn_server_set_workers(tn_server_t *server, int n)
{
    if (!server || server->started || n < 1 || n > MAX_WORKERS)
        return -1;
    server->workers = n;
    return 0;
}

int tn_server_set_page_size(tn_server_t *server, int n)
{
    if (!server || server->started || n < 1)
        return -1;
    server->page_size = n;
    return 0;
}

/* ------------------------------------------------------------------------
 * Calls
 * ------------------------------------------------------------------------ */

int tn_cancelled(const tn_call_t *call)
{
    return call ? atomic_load(&((tn_call_t *)call)->cancelled) : 0;
}

tn_server_t *tn_call_server(const tn_call_t *call)
{
    return call ? call->server : NULL;
}

static void call_free(tn_call_t *call)
{
    json_decref(call->id);
    json_decref(call->args);
    json_decref(call->progress_token);
    free(call);
}

/* Queues a call for the workers; it stays on the live list, where
 * notifications/cancelled can find it, until it is answered. */
static void submit(tn_server_t *server, tn_call_t *call)
{
    pthread_mutex_lock(&server->lock);
    call->next_live = server->live;
    if (server->live)
        server->live->prev_live = call;
    server->live = call;
    if (server->queue_tail)
        server->queue_tail->next_queued = call;
    else
        server->queue_head = call;
    server->queue_tail = call;
    pthread_cond_signal(&server->work);
    pthread_mutex_unlock(&server->lock);
}

static void cancel(tn_server_t *server, const json_t *id)
{
    pthread_mutex_lock(&server->lock);
    for (tn_call_t *call = server->live; call; call = call->next_live)
        if (json_equal(call->id, (json_t *)id))
            atomic_store(&call->cancelled, 1);
    pthread_mutex_unlock(&server->lock);
}

static void finish(tn_server_t *server, tn_call_t *call, json_t *result)
{
    pthread_mutex_lock(&server->lock);
    if (call->prev_live)
        call->prev_live->next_live = call->next_live;
    else
        server->live = call->next_live;
    if (call->next_live)
        call->next_live->prev_live = call->prev_live;
    pthread_mutex_unlock(&server->lock);

    if (tn_cancelled(call))
        json_decref(result);
    else if (!result)
        tn__reply_error(server, call->id, TN_RPC_INTERNAL_ERROR,
                        "tool \"%s\" failed without a result",
                        call->tool->name);
    else
        tn__reply(server, call->id, result);
    call_free(call);
}

static void *worker(void *arg)
{
    tn_server_t *server = arg;
    for (;;) {
        pthread_mutex_lock(&server->lock);
        while (!server->queue_head && !server->closing)
            pthread_cond_wait(&server->work, &server->lock);
        tn_call_t *call = server->queue_head;
        if (call) {
            server->queue_head = call->next_queued;
            if (!server->queue_head)
                server->queue_tail = NULL;
        }
        pthread_mutex_unlock(&server->lock);
        if (!call)
            return NULL;

        json_t *result = NULL;
        if (!tn_cancelled(call))
            result = call->tool->handler(call, call->args, call->tool->user);
        finish(server, call, result);
    }
}

/* ------------------------------------------------------------------------
 * Dispatch (on the reading thread)
 * ------------------------------------------------------------------------ */

static void on_initialize(tn_server_t *server, json_t *id, json_t *params)
{
    tn__reply(server, id, json_pack(
        "{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s}}",
        "protocolVersion",
        negotiate_version(json_object_get(params, "protocolVersion")),
        "capabilities", "tools", "listChanged", 0, "logging",
        "serverInfo", "name", server->name, "version", server->version));
}

/* The cursor is the index of the page's first tool: opaque to clients,
 * checked on the way back in. */
static void on_tools_list(tn_server_t *server, json_t *id, json_t *params)
{
    size_t start = 0;
    json_t *cursor = json_object_get(params, "cursor");
    if (cursor && !json_is_null(cursor)) {
        const char *text = json_string_value(cursor);
        char *end = NULL;
        errno = 0;
        unsigned long long n = text ? strtoull(text, &end, 10) : 0;
        if (!text || !*text || *end || errno || *text == '-' ||
            n >= server->tool_count) {
            tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                            "invalid cursor");
            return;
        }
        start = (size_t)n;
    }
    size_t end = start + (size_t)server->page_size;
    if (end > server->tool_count)
        end = server->tool_count;

    json_t *tools = json_array();
    for (size_t i = start; i < end; i++)
        json_array_append(tools, server->tools[i].definition);
    json_t *result = json_pack("{s:o}", "tools", tools);
    if (result && end < server->tool_count) {
        char next[32];
        snprintf(next, sizeof next, "%zu", end);
        json_object_set_new(result, "nextCursor", json_string(next));
    }
    tn__reply(server, id, result);
}

static void on_set_level(tn_server_t *server, json_t *id, json_t *params)
{
    const char *level = json_string_value(json_object_get(params, "level"));
    int index = tn__level_index(level);
    if (index < 0) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "unknown log level \"%s\"", level ? level : "");
        return;
    }
    atomic_store(&server->log_min, index);
    tn__reply(server, id, json_object());
}

static void on_tools_call(tn_server_t *server, json_t *id, json_t *params)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    if (!name) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "tools/call needs a string \"name\"");
        return;
    }
    const struct tn_tool *tool = tn__find_tool(server, name);
    if (!tool) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "unknown tool \"%s\"", name);
        return;
    }
    json_t *args = json_object_get(params, "arguments");
    if (args && !json_is_null(args) && !json_is_object(args)) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "tools/call \"arguments\" must be an object");
        return;
    }
    args = json_is_object(args) ? json_incref(args) : json_object();

    char msg[TN_ERROR_TEXT_LENGTH];
    if (tn__check_args(tool->input_schema, args, msg, sizeof msg) != 0) {
        json_decref(args);
        tn__reply(server, id, tn_result_error("%s", msg));
        return;
    }

    tn_call_t *call = calloc(1, sizeof *call);
    if (!call) {
        json_decref(args);
        tn__reply_error(server, id, TN_RPC_INTERNAL_ERROR, "out of memory");
        return;
    }
    json_t *token = json_object_get(json_object_get(params, "_meta"),
                                    "progressToken");
    call->server = server;
    call->tool = tool;
    call->id = json_incref(id);
    call->args = args;
    if (json_is_string(token) || json_is_integer(token))
        call->progress_token = json_incref(token);
    submit(server, call);
}

static void on_notification(tn_server_t *server, const char *method,
                            json_t *params)
{
    if (!strcmp(method, "notifications/cancelled")) {
        json_t *id = json_object_get(params, "requestId");
        if (id)
            cancel(server, id);
    }
    /* Any other notification (initialized, roots changed...) needs no
     * action from a tools-only server. */
}

static void dispatch(tn_server_t *server, json_t *message)
{
    if (!json_is_object(message)) {
        tn__reply_error(server, NULL, TN_RPC_INVALID_REQUEST,
                        "invalid request: not a JSON-RPC object");
        return;
    }
    json_t *id = json_object_get(message, "id");
    json_t *method = json_object_get(message, "method");
    json_t *params = json_object_get(message, "params");
    const char *version = json_string_value(json_object_get(message,
                                                            "jsonrpc"));
    int id_ok = json_is_string(id) || json_is_integer(id);

    /* A response: we send no requests, so there is nothing to match. */
    if (!method && id_ok && (json_object_get(message, "result") ||
                             json_object_get(message, "error")))
        return;
    if (!version || strcmp(version, "2.0") || !json_is_string(method) ||
        (id && !id_ok)) {
        tn__reply_error(server, id_ok ? id : NULL, TN_RPC_INVALID_REQUEST,
                        "invalid request");
        return;
    }

    const char *name = json_string_value(method);
    if (!id) {
        on_notification(server, name, params);
        return;
    }
    if (params && !json_is_object(params)) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "params must be an object");
        return;
    }
    if (!strcmp(name, "tools/call"))
        on_tools_call(server, id, params);
    else if (!strcmp(name, "tools/list"))
        on_tools_list(server, id, params);
    else if (!strcmp(name, "ping"))
        tn__reply(server, id, json_object());
    else if (!strcmp(name, "initialize"))
        on_initialize(server, id, params);
    else if (!strcmp(name, "logging/setLevel"))
        on_set_level(server, id, params);
    else
        tn__reply_error(server, id, TN_RPC_METHOD_NOT_FOUND,
                        "method not found: %s", name);
}

/* ------------------------------------------------------------------------
 * Running
 * ------------------------------------------------------------------------ */

static FILE *open_dup(int fd, const char *mode)
{
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    FILE *f = copy < 0 ? NULL : fdopen(copy, mode);
    if (!f && copy >= 0)
        close(copy);
    return f;
}

static int serve(tn_server_t *server, FILE *in)
{
    pthread_t threads[MAX_WORKERS];
    int started = 0;
    for (; started < server->workers; started++) {
        if (pthread_create(&threads[started], NULL, worker, server) != 0)
            break;
    }
    int rc = started > 0 ? 0 : -1;
    if (rc != 0)
        fprintf(stderr, "%s: cannot start a worker thread\n", server->name);

    char *line = NULL;
    size_t capacity = 0;
    ssize_t n;
    while (rc == 0 && (n = tn__read_line(in, &line, &capacity)) >= 0) {
        if (n == 0)
            continue;
        json_error_t jerr;
        json_t *message = json_loadb(line, (size_t)n, JSON_DECODE_ANY,
                                     &jerr);
        if (!message) {
            tn__reply_error(server, NULL, TN_RPC_PARSE_ERROR,
                            "parse error: %s", jerr.text);
            continue;
        }
        dispatch(server, message);
        json_decref(message);
    }
    free(line);
    if (ferror(in)) {
        fprintf(stderr, "%s: reading requests: %s\n", server->name,
                strerror(errno));
        rc = -1;
    }

    /* Let queued and running calls finish and answer before returning. */
    pthread_mutex_lock(&server->lock);
    server->closing = 1;
    pthread_cond_broadcast(&server->work);
    pthread_mutex_unlock(&server->lock);
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    return rc;
}

int tn_server_serve_fd(tn_server_t *server, int in_fd, int out_fd)
{
    if (!server || server->started) {
        if (server)
            fprintf(stderr, "%s: a server runs only once\n", server->name);
        return -1;
    }
    server->started = 1;

    FILE *in = open_dup(in_fd, "r");
    FILE *out = open_dup(out_fd, "w");
    if (!in || !out) {
        fprintf(stderr, "%s: cannot open the protocol streams: %s\n",
                server->name, strerror(errno));
        if (in)
            fclose(in);
        if (out)
            fclose(out);
        return -1;
    }
    pthread_mutex_lock(&server->out_lock);
    server->out = out;
    pthread_mutex_unlock(&server->out_lock);

    int rc = serve(server, in);

    pthread_mutex_lock(&server->out_lock);
    server->out = NULL;
    pthread_mutex_unlock(&server->out_lock);
    fclose(out);
    fclose(in);
    return rc;
}

int tn_server_run(tn_server_t *server)
{
    if (!server || server->started)
        return tn_server_serve_fd(server, -1, -1); /* reports the misuse */
    struct sigaction old;
    if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
        signal(SIGPIPE, SIG_IGN);

    /* Keep the real stdout for the protocol and point fd 1 at stderr, so
     * no stray print can corrupt the stream. Flushing after the switch
     * sends whatever was printed before it to stderr too. */
    int protocol = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (protocol < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, "%s: cannot set up stdout: %s\n", server->name,
                strerror(errno));
        if (protocol >= 0)
            close(protocol);
        return -1;
    }
    fflush(stdout);

    int rc = tn_server_serve_fd(server, STDIN_FILENO, protocol);
    close(protocol);
    return rc;
}
