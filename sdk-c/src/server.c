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

/* Versions we speak, newest first; the only place that knows them. Those
 * before stateless_from are negotiated by initialize, the rest are served
 * per request. */
static const char *const protocol_versions[] = {
    "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
    NULL};
enum { stateless_count = 1 };

static int version_index(const char *v)
{
    for (int i = 0; v && protocol_versions[i]; i++)
        if (!strcmp(v, protocol_versions[i]))
            return i;
    return -1;
}

/* Every version, oldest first, as server/discover and -32022 list them. */
static json_t *all_versions(void)
{
    json_t *list = json_array();
    int n = 0;
    while (protocol_versions[n])
        n++;
    for (int i = n - 1; i >= 0; i--)
        json_array_append_new(list, json_string(protocol_versions[i]));
    return list;
}

static const char *negotiate_version(const json_t *offered)
{
    int i = version_index(json_string_value(offered));
    return protocol_versions[i >= stateless_count ? i : stateless_count];
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
    server->cache_ttl_ms = 60000;
    tn__state_key_init(server);
    pthread_mutex_init(&server->out_lock, NULL);
    pthread_mutex_init(&server->lock, NULL);
    pthread_cond_init(&server->work, NULL);
    pthread_cond_init(&server->answered, NULL);
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
    tn__entries_free(&server->resources);
    tn__entries_free(&server->templates);
    tn__entries_free(&server->prompts);
    tn__entries_free(&server->skills);
    json_decref(server->completions);
    json_decref(server->subscribed);
    json_decref(server->listens);
    free(server->name);
    free(server->version);
    pthread_mutex_destroy(&server->out_lock);
    pthread_mutex_destroy(&server->lock);
    pthread_cond_destroy(&server->work);
    pthread_cond_destroy(&server->answered);
    free(server);
}

int tn_server_set_workers(tn_server_t *server, int n)
{
    if (!server || server->started || n < 1 || n > MAX_WORKERS)
        return -1;
    server->workers = n;
    return 0;
}

int tn_server_set_cache_ttl(tn_server_t *server, long long ms)
{
    if (!server || server->started || ms < 0)
        return -1;
    server->cache_ttl_ms = ms;
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
    json_decref(call->traceparent);
    json_decref(call->tracestate);
    json_decref(call->capabilities);
    json_decref(call->answers);
    json_decref(call->need);
    json_decref(call->fail_data);
    free(call->fail_message);
    free(call->uri);
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

static void reply_in(tn_server_t *server, const tn_era_t *era, json_t *id,
                     json_t *result, int cacheable);

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

    /* tn_ask() may have ended the call: its outcome wins over whatever the
     * handler returned. */
    if (tn_cancelled(call)) {
        json_decref(result);
    } else if (call->fail_message && call->fail_code != TN_FAIL_TOOL) {
        json_decref(result);
        json_t *error = json_pack("{s:i, s:s}", "code", call->fail_code,
                                  "message", call->fail_message);
        if (error && call->fail_data)
            json_object_set(error, "data", call->fail_data);
        tn__send(server, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
                                   call->id, "error", error));
    } else if (call->fail_message && call->tool) {
        json_decref(result);
        tn__reply(server, call->id, tn_result_error("%s", call->fail_message));
    } else if (call->fail_message) {
        /* Only a tool's result can carry a failure. */
        json_decref(result);
        tn__reply_error(server, call->id, TN_RPC_INTERNAL_ERROR, "%s",
                        call->fail_message);
    } else if (call->need) {
        json_decref(result);
        tn__reply(server, call->id, tn__input_required(server, call));
    } else if (!result) {
        tn__reply_error(server, call->id, TN_RPC_INTERNAL_ERROR,
                        "%s \"%s\" failed without a result",
                        call->tool ? "tool"
                                   : call->entry->read ? "resource"
                                                       : "prompt",
                        call->name);
    } else {
        tn_era_t era = {.stateless = call->stateless};
        reply_in(server, &era, call->id, result, call->cacheable);
    }
    call_free(call);
}

static json_t *run(tn_call_t *call)
{
    if (call->tool)
        return call->tool->handler(call, call->args, call->tool->user);
    if (call->entry->read)
        return call->entry->read(call, call->uri, call->args,
                                 call->entry->user);
    return call->entry->get(call, call->args, call->entry->user);
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

        finish(server, call, tn_cancelled(call) ? NULL : run(call));
    }
}

/* ------------------------------------------------------------------------
 * Dispatch (on the reading thread)
 * ------------------------------------------------------------------------ */

/* Answers a request served without a handler; under 2026-07-28 the result
 * says it is complete and, for what a client may cache, for how long. */
static void reply_in(tn_server_t *server, const tn_era_t *era, json_t *id,
                     json_t *result, int cacheable)
{
    if (result && era->stateless) {
        json_object_set_new(result, "resultType", json_string("complete"));
        if (cacheable) {
            json_object_set_new(result, "ttlMs",
                                json_integer(server->cache_ttl_ms));
            json_object_set_new(result, "cacheScope", json_string("public"));
        }
    }
    tn__reply(server, id, result);
}

/* Reads the era of a request from params._meta; answers -32022 and returns
 * -1 for a version nobody speaks. */
static int era_of(tn_server_t *server, json_t *id, json_t *params,
                  tn_era_t *era)
{
    json_t *meta = json_object_get(params, "_meta");
    const char *v = json_string_value(json_object_get(meta, TN_META_VERSION));
    int i = version_index(v);
    *era = (tn_era_t){0};
    if (!v || i >= stateless_count)
        return 0;
    if (i < 0) {
        tn__send(server, json_pack(
            "{s:s, s:O, s:{s:i, s:s, s:{s:o, s:s}}}", "jsonrpc", "2.0", "id",
            id, "error", "code", TN_RPC_UNSUPPORTED_VERSION, "message",
            "unsupported protocol version", "data", "supported",
            all_versions(), "requested", v));
        return -1;
    }
    era->stateless = 1;
    era->capabilities = json_object_get(meta, TN_META_CAPABILITIES);
    int level = tn__level_index(json_string_value(
        json_object_get(meta, TN_META_LOG_LEVEL)));
    era->log_min = level >= 0 ? level : 8;
    return 0;
}

static json_t *capabilities(const tn_server_t *server)
{
    json_t *caps = json_pack("{s:{s:b}, s:{}}", "tools", "listChanged", 0,
                             "logging");
    if (caps && server->prompts.count)
        json_object_set_new(caps, "prompts",
                            json_pack("{s:b}", "listChanged", 0));
    if (caps && (server->resources.count || server->templates.count))
        json_object_set_new(caps, "resources",
                            json_pack("{s:b, s:b}", "subscribe", 1,
                                      "listChanged", 0));
    if (caps && server->completions)
        json_object_set_new(caps, "completions", json_object());
    if (caps && server->skills.count)
        json_object_set_new(caps, "extensions",
                            json_pack("{s:{}}", "io.modelcontextprotocol/skills"));
    return caps;
}

static void on_discover(tn_server_t *server, const tn_era_t *era, json_t *id)
{
    tn_era_t cached = *era;
    cached.stateless = 1; /* discover always carries the 2026-07-28 members */
    reply_in(server, &cached, id, json_pack(
        "{s:o, s:o, s:{s:{s:s, s:s}}}", "supportedVersions", all_versions(),
        "capabilities", capabilities(server), "_meta", TN_META_SERVER_INFO,
        "name", server->name, "version", server->version), 1);
}

static void on_initialize(tn_server_t *server, json_t *id, json_t *params)
{
    tn__reply(server, id, json_pack(
        "{s:s, s:o, s:{s:s, s:s}}", "protocolVersion",
        negotiate_version(json_object_get(params, "protocolVersion")),
        "capabilities", capabilities(server), "serverInfo", "name",
        server->name, "version", server->version));
}

/* Lists tools (entries NULL) or the entries under key, a page at a time.
 * The cursor is the index of the page's first item: opaque to clients,
 * checked on the way back in. */
static void on_skills_get(tn_server_t *server, const tn_era_t *era, json_t *id,
                          json_t *params)
{
    const char *uri = json_string_value(json_object_get(params, "uri"));
    const struct tn_entry *e = tn__find_entry(&server->skills, uri);
    if (!e) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "no skill is served at %s", uri ? uri : "(no uri)");
        return;
    }
    reply_in(server, era, id, json_pack("{s:O}", "skill", e->definition), 1);
}

static void on_list(tn_server_t *server, const tn_era_t *era, json_t *id,
                    json_t *params, const char *key,
                    const struct tn_entries *entries)
{
    size_t count = entries ? entries->count : server->tool_count;
    size_t start = 0;
    json_t *cursor = json_object_get(params, "cursor");
    if (cursor && !json_is_null(cursor)) {
        const char *text = json_string_value(cursor);
        char *end = NULL;
        errno = 0;
        unsigned long long n = text ? strtoull(text, &end, 10) : 0;
        if (!text || !*text || *end || errno || *text == '-' ||
            n >= count) {
            tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                            "invalid cursor");
            return;
        }
        start = (size_t)n;
    }
    size_t end = start + (size_t)server->page_size;
    if (end > count)
        end = count;

    json_t *items = json_array();
    for (size_t i = start; i < end; i++)
        json_array_append(items, entries ? entries->items[i].definition
                                         : server->tools[i].definition);
    json_t *result = json_pack("{s:o}", key, items);
    if (result && end < count) {
        char next[32];
        snprintf(next, sizeof next, "%zu", end);
        json_object_set_new(result, "nextCursor", json_string(next));
    }
    reply_in(server, era, id, result, 1);
}

static void on_set_level(tn_server_t *server, const tn_era_t *era,
                         json_t *id, json_t *params)
{
    const char *level = json_string_value(json_object_get(params, "level"));
    int index = tn__level_index(level);
    if (index < 0) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "unknown log level \"%s\"", level ? level : "");
        return;
    }
    atomic_store(&server->log_min, index);
    reply_in(server, era, id, json_object(), 0);
}

/* A call of the request id with what every handler is given; args are
 * stolen. NULL, having answered, when memory runs out. */
static tn_call_t *new_call(tn_server_t *server, const tn_era_t *era,
                           json_t *id, json_t *params, json_t *args)
{
    tn_call_t *call = args ? calloc(1, sizeof *call) : NULL;
    if (!call) {
        json_decref(args);
        tn__reply_error(server, id, TN_RPC_INTERNAL_ERROR, "out of memory");
        return NULL;
    }
    json_t *token = json_object_get(json_object_get(params, "_meta"),
                                    "progressToken");
    call->server = server;
    call->id = json_incref(id);
    call->args = args;
    if (json_is_string(token) || json_is_integer(token))
        call->progress_token = json_incref(token);
    tn__read_trace_context(call, json_object_get(params, "_meta"));
    call->stateless = era->stateless;
    call->log_min = era->log_min;
    call->capabilities = json_incref(era->capabilities);
    return call;
}

/* Hands a call to the workers; under 2026-07-28 once the answers it was
 * given are restored, refusing the request when they cannot be. */
static void start(tn_server_t *server, tn_call_t *call, json_t *params,
                  const char *method)
{
    char msg[TN_ERROR_TEXT_LENGTH];
    if (call->stateless &&
        tn__restore_answers(server, call, params, method, msg,
                            sizeof msg) != 0) {
        tn__reply_error(server, call->id, TN_RPC_INVALID_PARAMS, "%s", msg);
        call_free(call);
        return;
    }
    submit(server, call);
}

static void on_tools_call(tn_server_t *server, const tn_era_t *era,
                          json_t *id, json_t *params)
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

    tn_call_t *call = new_call(server, era, id, params, args);
    if (!call)
        return;
    call->tool = tool;
    call->name = tool->name;
    start(server, call, params, "tools/call");
}

static void on_prompts_get(tn_server_t *server, const tn_era_t *era,
                           json_t *id, json_t *params)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    const struct tn_entry *prompt = tn__find_entry(&server->prompts, name);
    if (!prompt) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "unknown prompt \"%s\"", name ? name : "");
        return;
    }
    json_t *args = json_object_get(params, "arguments");
    const char *key;
    json_t *value;
    int ok = !args || json_is_null(args) || json_is_object(args);
    json_object_foreach(args, key, value) {
        ok = ok && json_is_string(value);
    }
    if (!ok) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "prompts/get \"arguments\" must map names to "
                        "strings");
        return;
    }
    size_t i;
    json_t *argument;
    json_array_foreach(prompt->arguments, i, argument) {
        const char *wanted = json_string_value(json_object_get(argument,
                                                               "name"));
        if (json_is_true(json_object_get(argument, "required")) &&
            !json_object_get(args, wanted)) {
            tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                            "prompt \"%s\" needs the argument \"%s\"",
                            prompt->key, wanted);
            return;
        }
    }
    tn_call_t *call = new_call(server, era, id, params,
                               args && json_is_object(args)
                                   ? json_incref(args)
                                   : json_object());
    if (!call)
        return;
    call->entry = prompt;
    call->name = prompt->key;
    start(server, call, params, "prompts/get");
}

/* The resource or template serving uri, with its variables (new) in
 * *vars; NULL, having answered not found, when there is none. */
static const struct tn_entry *lookup(tn_server_t *server, const tn_era_t *era,
                                     json_t *id, const char *uri,
                                     json_t **vars)
{
    *vars = NULL;
    if (!uri) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "needs a string \"uri\"");
        return NULL;
    }
    const struct tn_entry *found = tn__find_entry(&server->resources, uri);
    *vars = found ? json_object() : NULL;
    if (!found)
        found = tn__match_template(server, uri, vars);
    if (found)
        return found;
    /* 2026-07-28 moved this error to -32602. */
    tn__send(server, json_pack(
        "{s:s, s:O, s:{s:i, s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", id,
        "error", "code", era->stateless ? TN_RPC_INVALID_PARAMS
                                        : TN_RPC_RESOURCE_NOT_FOUND,
        "message", "resource not found", "data", "uri", uri));
    return NULL;
}

static void on_resources_read(tn_server_t *server, const tn_era_t *era,
                              json_t *id, json_t *params)
{
    const char *uri = json_string_value(json_object_get(params, "uri"));
    json_t *vars;
    const struct tn_entry *resource = lookup(server, era, id, uri, &vars);
    if (!resource)
        return;
    tn_call_t *call = new_call(server, era, id, params, vars);
    if (!call)
        return;
    call->entry = resource;
    call->uri = strdup(uri);
    call->name = call->uri;
    call->cacheable = 1;
    if (!call->uri) {
        tn__reply_error(server, id, TN_RPC_INTERNAL_ERROR, "out of memory");
        call_free(call);
        return;
    }
    start(server, call, params, "resources/read");
}

static void on_subscribe(tn_server_t *server, const tn_era_t *era,
                         json_t *id, json_t *params, int on)
{
    const char *uri = json_string_value(json_object_get(params, "uri"));
    json_t *vars;
    if (!lookup(server, era, id, uri, &vars))
        return;
    json_decref(vars);
    if (tn__subscribe(server, uri, on) != 0)
        tn__reply_error(server, id, TN_RPC_INTERNAL_ERROR, "out of memory");
    else
        reply_in(server, era, id, json_object(), 0);
}

static void on_complete(tn_server_t *server, const tn_era_t *era,
                        json_t *id, json_t *params)
{
    char msg[TN_ERROR_TEXT_LENGTH];
    json_t *result = tn__complete(server, params, msg, sizeof msg);
    if (result)
        reply_in(server, era, id, result, 0);
    else
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS, "%s", msg);
}

static void on_notification(tn_server_t *server, const char *method,
                            json_t *params)
{
    if (!strcmp(method, "notifications/cancelled")) {
        json_t *id = json_object_get(params, "requestId");
        /* A cancelled subscription gets no answer, as the spec says. */
        if (id && !tn__unlisten(server, id))
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

    /* A response to a request of ours. */
    if (!method && id_ok && (json_object_get(message, "result") ||
                             json_object_get(message, "error"))) {
        tn__answered(server, message);
        return;
    }
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
    tn_era_t era;
    if (era_of(server, id, params, &era) != 0)
        return;
    int has_resources = server->resources.count || server->templates.count;
    if (!strcmp(name, "tools/call"))
        on_tools_call(server, &era, id, params);
    else if (!strcmp(name, "tools/list"))
        on_list(server, &era, id, params, "tools", NULL);
    else if (!strcmp(name, "prompts/get") && server->prompts.count)
        on_prompts_get(server, &era, id, params);
    else if (!strcmp(name, "prompts/list") && server->prompts.count)
        on_list(server, &era, id, params, "prompts", &server->prompts);
    else if (!strcmp(name, "resources/read") && has_resources)
        on_resources_read(server, &era, id, params);
    else if (!strcmp(name, "resources/list") && has_resources)
        on_list(server, &era, id, params, "resources", &server->resources);
    else if (!strcmp(name, "resources/templates/list") && has_resources)
        on_list(server, &era, id, params, "resourceTemplates",
                &server->templates);
    else if (!strcmp(name, "resources/subscribe") && has_resources)
        on_subscribe(server, &era, id, params, 1);
    else if (!strcmp(name, "resources/unsubscribe") && has_resources)
        on_subscribe(server, &era, id, params, 0);
    else if (!strcmp(name, "subscriptions/listen") && era.stateless)
        tn__listen(server, id, params);
    else if (!strcmp(name, "skills/list") && server->skills.count)
        on_list(server, &era, id, params, "skills", &server->skills);
    else if (!strcmp(name, "skills/get") && server->skills.count)
        on_skills_get(server, &era, id, params);
    else if (!strcmp(name, "completion/complete") && server->completions)
        on_complete(server, &era, id, params);
    else if (!strcmp(name, "ping"))
        reply_in(server, &era, id, json_object(), 0);
    else if (!strcmp(name, "server/discover"))
        on_discover(server, &era, id);
    else if (!strcmp(name, "initialize"))
        on_initialize(server, id, params);
    else if (!strcmp(name, "logging/setLevel"))
        on_set_level(server, &era, id, params);
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
    tn__end_input(server);
    /* The client is gone: its subscriptions end with no answer. */
    pthread_mutex_lock(&server->lock);
    json_object_clear(server->listens);
    pthread_mutex_unlock(&server->lock);
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
