/* Resources, resource templates, prompts and completion values: checking
 * them as they are added, matching a URI to a template, answering
 * completion/complete and keeping the session's subscriptions. The
 * requests that run their handlers are dispatched in server.c. */
#include "tn_private.h"

#include <stdlib.h>
#include <string.h>

/* Most values one completion/complete answer holds, as MCP allows. */
#define MAX_COMPLETIONS 100

void tn__entries_free(struct tn_entries *entries)
{
    for (size_t i = 0; i < entries->count; i++) {
        free(entries->items[i].key);
        json_decref(entries->items[i].definition);
        if (entries->items[i].free_user)
            entries->items[i].free_user(entries->items[i].user);
    }
    free(entries->items);
    *entries = (struct tn_entries){0};
}

const struct tn_entry *tn__find_entry(const struct tn_entries *entries,
                                      const char *key)
{
    for (size_t i = 0; key && i < entries->count; i++)
        if (!strcmp(entries->items[i].key, key))
            return &entries->items[i];
    return NULL;
}

/* Sets the members of definition that are not NULL. */
static void set_strings(json_t *definition, const char *const pairs[][2],
                        size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (pairs[i][1])
            json_object_set_new(definition, pairs[i][0],
                                json_string(pairs[i][1]));
}

/* Appends an entry, taking definition over (also on failure). */
static int append(struct tn_entries *entries, const char *key,
                  json_t *definition, struct tn_entry entry)
{
    char *copy = strdup(key);
    if (!definition || !copy)
        goto fail;
    if (entries->count == entries->capacity) {
        size_t capacity = entries->capacity ? 2 * entries->capacity : 8;
        struct tn_entry *items = realloc(entries->items,
                                         capacity * sizeof *items);
        if (!items)
            goto fail;
        entries->items = items;
        entries->capacity = capacity;
    }
    entry.key = copy;
    entry.definition = definition;
    entries->items[entries->count++] = entry;
    return 0;
fail:
    free(copy);
    json_decref(definition);
    return -1;
}

int tn__add_skill_entry(tn_server_t *server, const char *uri, json_t *entry)
{
    return append(&server->skills, uri, entry, (struct tn_entry){0});
}

/* 0 for a template whose every { closes on a name, else -1. */
static int template_ok(const char *uri_template)
{
    for (const char *p = uri_template; *p; p++) {
        if (*p == '}')
            return -1;
        if (*p != '{')
            continue;
        const char *end = strchr(p + 1, '}');
        const char *nested = strchr(p + 1, '{');
        if (!end || end == p + 1 || (nested && nested < end))
            return -1;
        p = end;
    }
    return 0;
}

static int add_resource(tn_server_t *server, struct tn_entries *entries,
                        const char *what, const tn_resource_t *resource,
                        tn_error_t *error)
{
    if (!server || !resource || !resource->uri || !*resource->uri ||
        !resource->name || !resource->handler) {
        tn__set_error(error, "server, %s uri, name and handler are required",
                      what);
        return -1;
    }
    if (server->started) {
        tn__set_error(error, "%s \"%s\": the server is already running", what,
                      resource->uri);
        return -1;
    }
    if (tn__find_entry(entries, resource->uri)) {
        tn__set_error(error, "%s \"%s\" is already added", what,
                      resource->uri);
        return -1;
    }
    int is_template = entries == &server->templates;
    if (is_template && template_ok(resource->uri) != 0) {
        tn__set_error(error, "template \"%s\": every { needs a name and a }",
                      resource->uri);
        return -1;
    }
    json_t *def = json_pack("{s:s, s:s}", is_template ? "uriTemplate" : "uri",
                            resource->uri, "name", resource->name);
    if (def) {
        const char *const pairs[][2] = {
            {"title", resource->title},
            {"description", resource->description},
            {"mimeType", resource->mime_type},
        };
        set_strings(def, pairs, 3);
    }
    if (append(entries, resource->uri, def,
               (struct tn_entry){.read = resource->handler,
                                 .user = resource->user}) != 0) {
        tn__set_error(error, "out of memory");
        return -1;
    }
    if (error)
        error->text[0] = '\0';
    return 0;
}

/* A resource or template as the caller's tn.h sized it (tn.h, "ABI"). */
static int add_sized(tn_server_t *server, int is_template,
                     const tn_resource_t *resource, size_t size,
                     tn_error_t *error)
{
    tn_resource_t copy;
    if (resource && tn__sized(&copy, sizeof copy, resource, size,
                              TN__RESOURCE_SIZE_1, "tn_resource_t",
                              error) != 0)
        return -1;
    struct tn_entries *entries = !server       ? NULL
                                 : is_template ? &server->templates
                                               : &server->resources;
    return add_resource(server, entries, is_template ? "template" : "resource",
                        resource ? &copy : NULL, error);
}

int tn_server_add_resource_sized(tn_server_t *server,
                                 const tn_resource_t *resource, size_t size,
                                 tn_error_t *error)
{
    return add_sized(server, 0, resource, size, error);
}

int tn_server_add_template_sized(tn_server_t *server,
                                 const tn_resource_t *resource, size_t size,
                                 tn_error_t *error)
{
    return add_sized(server, 1, resource, size, error);
}

static int add_prompt(tn_server_t *server, const tn_prompt_t *prompt,
                      tn_error_t *error)
{
    if (!server || !prompt || !prompt->name || !*prompt->name ||
        !prompt->handler) {
        tn__set_error(error, "server, prompt name and handler are required");
        return -1;
    }
    if (server->started) {
        tn__set_error(error, "prompt \"%s\": the server is already running",
                      prompt->name);
        return -1;
    }
    if (tn__find_entry(&server->prompts, prompt->name)) {
        tn__set_error(error, "prompt \"%s\" is already added", prompt->name);
        return -1;
    }
    json_t *arguments = NULL;
    if (prompt->arguments) {
        arguments = json_loads(prompt->arguments, 0, NULL);
        size_t i;
        json_t *a;
        int ok = json_is_array(arguments);
        json_array_foreach(arguments, i, a) {
            ok = ok && json_is_string(json_object_get(a, "name"));
        }
        if (!ok) {
            json_decref(arguments);
            tn__set_error(error, "prompt \"%s\": arguments must be a JSON "
                                 "array of objects with a string \"name\"",
                          prompt->name);
            return -1;
        }
    }
    json_t *def = json_pack("{s:s}", "name", prompt->name);
    if (def) {
        const char *const pairs[][2] = {
            {"title", prompt->title},
            {"description", prompt->description},
        };
        set_strings(def, pairs, 2);
        if (arguments)
            json_object_set(def, "arguments", arguments);
    }
    json_decref(arguments);
    if (append(&server->prompts, prompt->name, def,
               (struct tn_entry){.arguments = json_object_get(def,
                                                              "arguments"),
                                 .get = prompt->handler,
                                 .user = prompt->user}) != 0) {
        tn__set_error(error, "out of memory");
        return -1;
    }
    if (error)
        error->text[0] = '\0';
    return 0;
}

/* ------------------------------------------------------------------------
 * Templates
 * ------------------------------------------------------------------------ */

static int hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A variable's value percent-decoded (new); a % not followed by two hex
 * digits stays as it is. */
static json_t *decoded(const char *text, size_t n)
{
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '%' && i + 2 < n && hex(text[i + 1]) >= 0 &&
            hex(text[i + 2]) >= 0) {
            out[o++] = (char)(hex(text[i + 1]) << 4 | hex(text[i + 2]));
            i += 2;
        } else {
            out[o++] = text[i];
        }
    }
    json_t *value = json_stringn_nocheck(out, o);
    free(out);
    return value;
}

/* Matches uri against the template from its first character on, setting
 * vars; each variable takes one or more characters other than / ? #, the
 * longest that lets the rest match. */
static int match(const char *tpl, const char *uri, json_t *vars)
{
    while (*tpl && *tpl != '{') {
        if (*tpl++ != *uri++)
            return 0;
    }
    if (!*tpl)
        return !*uri;
    const char *close = strchr(tpl, '}');
    size_t span = strcspn(uri, "/?#");
    for (size_t n = span; n >= 1; n--) {
        if (!match(close + 1, uri + n, vars))
            continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(close - tpl - 1), tpl + 1);
        json_object_set_new(vars, name, decoded(uri, n));
        return 1;
    }
    return 0;
}

const struct tn_entry *tn__match_template(const tn_server_t *server,
                                          const char *uri, json_t **vars)
{
    for (size_t i = 0; i < server->templates.count; i++) {
        json_t *found = json_object();
        if (found && match(server->templates.items[i].key, uri, found)) {
            *vars = found;
            return &server->templates.items[i];
        }
        json_decref(found);
    }
    *vars = NULL;
    return NULL;
}

/* ------------------------------------------------------------------------
 * Completion
 * ------------------------------------------------------------------------ */

static char *completion_key(const char *ref, const char *name,
                            const char *argument)
{
    size_t n = strlen(ref) + strlen(name) + strlen(argument) + 3;
    char *key = malloc(n);
    if (key)
        snprintf(key, n, "%s\n%s\n%s", ref, name, argument);
    return key;
}

int tn_server_add_completion(tn_server_t *server, const char *ref,
                             const char *name, const char *argument,
                             const char *const *values)
{
    if (!server || !ref || !name || !argument || !values ||
        server->started ||
        (strcmp(ref, "prompt") && strcmp(ref, "resource")))
        return -1;
    if (!server->completions && !(server->completions = json_object()))
        return -1;
    json_t *list = json_array();
    for (size_t i = 0; list && values[i]; i++)
        if (json_array_append_new(list, json_string(values[i])) != 0) {
            json_decref(list);
            return -1;
        }
    char kind[16];
    snprintf(kind, sizeof kind, "ref/%s", ref);
    char *key = completion_key(kind, name, argument);
    int rc = list && key ? json_object_set_new(server->completions, key, list)
                         : (json_decref(list), -1);
    free(key);
    return rc;
}

json_t *tn__complete(const tn_server_t *server, const json_t *params,
                     char *msg, size_t size)
{
    json_t *ref = json_object_get(params, "ref");
    json_t *argument = json_object_get(params, "argument");
    const char *type = json_string_value(json_object_get(ref, "type"));
    const char *arg = json_string_value(json_object_get(argument, "name"));
    if (!type || !arg) {
        snprintf(msg, size, "completion/complete needs \"ref\" with a type "
                            "and \"argument\" with a name");
        return NULL;
    }
    const char *target = json_string_value(json_object_get(
        ref, strcmp(type, "ref/prompt") ? "uri" : "name"));
    char *key = completion_key(type, target ? target : "", arg);
    json_t *values = key ? json_object_get(server->completions, key) : NULL;
    free(key);
    if (!values) {
        snprintf(msg, size, "nothing to complete for \"%s\"",
                 target ? target : "");
        return NULL;
    }
    const char *prefix = json_string_value(json_object_get(argument,
                                                           "value"));
    size_t prefix_len = prefix ? strlen(prefix) : 0;
    json_t *found = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(values, i, v) {
        if (json_array_size(found) == MAX_COMPLETIONS)
            break;
        if (!strncmp(json_string_value(v), prefix ? prefix : "", prefix_len))
            json_array_append(found, v);
    }
    return json_pack("{s:{s:o, s:I, s:b}}", "completion", "values", found,
                     "total", (json_int_t)json_array_size(found), "hasMore",
                     0);
}

/* ------------------------------------------------------------------------
 * Subscriptions
 * ------------------------------------------------------------------------ */

int tn__subscribe(tn_server_t *server, const char *uri, int on)
{
    int rc = 0;
    pthread_mutex_lock(&server->lock);
    if (!server->subscribed)
        server->subscribed = json_object();
    if (!server->subscribed)
        rc = -1;
    else if (on)
        rc = json_object_set_new(server->subscribed, uri, json_true());
    else
        json_object_del(server->subscribed, uri);
    pthread_mutex_unlock(&server->lock);
    return rc;
}

/* A 2026-07-28 client has no resources/subscribe: it opens
 * subscriptions/listen, naming what it wants, and the request stays open,
 * never answered while the client listens. What is sent for it carries the
 * request's id in _meta; notifications/cancelled ends it. */

static json_t *subscription_meta(json_t *id /* borrowed */)
{
    return json_pack("{s:O}", TN_META_SUBSCRIPTION, id);
}

static int serves(const tn_server_t *server, const char *uri)
{
    if (tn__find_entry(&server->resources, uri))
        return 1;
    json_t *vars = NULL;
    int found = tn__match_template(server, uri, &vars) != NULL;
    json_decref(vars);
    return found;
}

void tn__listen(tn_server_t *server, json_t *id, json_t *params)
{
    json_t *filter = json_object_get(params, "notifications");
    json_t *wanted = json_object_get(filter, "resourceSubscriptions");
    if ((filter && !json_is_object(filter)) ||
        (wanted && !json_is_array(wanted))) {
        tn__reply_error(server, id, TN_RPC_INVALID_PARAMS,
                        "invalid params: notifications must be an object "
                        "and its resourceSubscriptions an array");
        return;
    }
    /* Only the resources served are agreed to; list changes never happen
     * (the lists are fixed once the server runs), so none are. */
    json_t *uris = json_object();
    json_t *agreed = json_array();
    size_t i;
    json_t *item;
    json_array_foreach(wanted, i, item) {
        const char *uri = json_string_value(item);
        if (uri && uris && agreed && !json_object_get(uris, uri) &&
            serves(server, uri)) {
            json_object_set_new(uris, uri, json_true());
            json_array_append(agreed, item);
        }
    }
    char *key = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *notifications = json_object();
    if (notifications && agreed && json_array_size(agreed))
        json_object_set(notifications, "resourceSubscriptions", agreed);
    json_t *ack = json_pack("{s:s, s:s, s:{s:o, s:o}}", "jsonrpc", "2.0",
                            "method",
                            "notifications/subscriptions/acknowledged",
                            "params", "_meta", subscription_meta(id),
                            "notifications", notifications);
    json_decref(agreed);

    pthread_mutex_lock(&server->lock);
    if (!server->listens)
        server->listens = json_object();
    if (!key || !uris || !ack || !server->listens) {
        pthread_mutex_unlock(&server->lock);
        tn__reply_error(server, id, TN_RPC_INTERNAL_ERROR, "out of memory");
    } else if (json_object_get(server->listens, key)) {
        pthread_mutex_unlock(&server->lock);
        tn__reply_error(server, id, TN_RPC_INVALID_REQUEST,
                        "invalid request: id %s is already in use", key);
    } else {
        json_object_set_new(server->listens, key,
                            json_pack("{s:O, s:O}", "id", id, "uris", uris));
        /* Sent under lock, so that no update for this subscription can go
         * out before its acknowledgment. */
        tn__send(server, ack);
        ack = NULL;
        pthread_mutex_unlock(&server->lock);
    }
    json_decref(ack);
    json_decref(uris);
    free(key);
}

int tn__unlisten(tn_server_t *server, const json_t *id)
{
    char *key = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
    pthread_mutex_lock(&server->lock);
    int found = key && json_object_get(server->listens, key) != NULL;
    if (found)
        json_object_del(server->listens, key);
    pthread_mutex_unlock(&server->lock);
    free(key);
    return found;
}

int tn_resource_updated(tn_server_t *server, const char *uri)
{
    if (!server || !uri)
        return -1;
    /* The ids of the subscriptions that named uri, in the order they were
     * opened (jansson keeps an object's keys in insertion order). */
    json_t *ids = json_array();
    pthread_mutex_lock(&server->lock);
    int wanted = json_object_get(server->subscribed, uri) != NULL;
    const char *key;
    json_t *listen;
    json_object_foreach(server->listens, key, listen) {
        if (json_object_get(json_object_get(listen, "uris"), uri))
            json_array_append(ids, json_object_get(listen, "id"));
    }
    pthread_mutex_unlock(&server->lock);
    pthread_mutex_lock(&server->out_lock);
    int running = server->out != NULL;
    pthread_mutex_unlock(&server->out_lock);
    int rc = ids ? 0 : -1;
    if (running && wanted &&
        tn__send(server, json_pack("{s:s, s:s, s:{s:s}}", "jsonrpc", "2.0",
                                   "method",
                                   "notifications/resources/updated",
                                   "params", "uri", uri)) != 0)
        rc = -1;
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id) {
        if (running &&
            tn__send(server, json_pack(
                "{s:s, s:s, s:{s:o, s:s}}", "jsonrpc", "2.0", "method",
                "notifications/resources/updated", "params", "_meta",
                subscription_meta(id), "uri", uri)) != 0)
            rc = -1;
    }
    json_decref(ids);
    return rc;
}

/* ------------------------------------------------------------------------
 * Results
 * ------------------------------------------------------------------------ */

static json_t *contents(const char *uri, const char *mime_type,
                        const char *key, json_t *value /* stolen */)
{
    json_t *item = value ? json_pack("{s:s, s:o}", "uri", uri, key, value)
                         : NULL;
    if (item && mime_type)
        json_object_set_new(item, "mimeType", json_string(mime_type));
    return item ? json_pack("{s:[o]}", "contents", item) : NULL;
}

json_t *tn_read_text(const char *uri, const char *mime_type,
                     const char *text)
{
    if (!uri || !text)
        return NULL;
    return contents(uri, mime_type, "text", json_string(text));
}

json_t *tn_read_blob(const char *uri, const char *mime_type,
                     const void *data, size_t size)
{
    if (!uri || (!data && size))
        return NULL;
    char *blob = tn__base64(data, size, 0);
    json_t *result = blob ? contents(uri, mime_type, "blob", json_string(blob))
                          : NULL;
    free(blob);
    return result;
}

json_t *tn_prompt_messages(json_t *messages)
{
    if (!json_is_array(messages)) {
        json_decref(messages);
        return NULL;
    }
    return json_pack("{s:o}", "messages", messages);
}

json_t *tn_prompt_text(const char *text)
{
    if (!text)
        return NULL;
    return tn_prompt_messages(json_pack("[{s:s, s:{s:s, s:s}}]", "role",
                                        "user", "content", "type", "text",
                                        "text", text));
}

/* ------------------------------------------------------------------------
 * MCP Apps views
 * ------------------------------------------------------------------------ */

struct view {
    char *uri, *html;
    json_t *meta; /* {"ui": ...}, the contents' _meta */
};

static void view_free(void *user)
{
    struct view *v = user;
    free(v->uri);
    free(v->html);
    json_decref(v->meta);
    free(v);
}

static json_t *view_read(tn_call_t *call, const char *uri, json_t *vars,
                         void *user)
{
    (void)call, (void)uri, (void)vars;
    const struct view *v = user;
    json_t *result = tn_read_text(v->uri, TN_MIME_APP, v->html);
    json_t *item = json_array_get(json_object_get(result, "contents"), 0);
    if (item)
        json_object_set(item, "_meta", v->meta);
    return result;
}

int tn_server_add_prompt_sized(tn_server_t *server, const tn_prompt_t *prompt,
                               size_t size, tn_error_t *error)
{
    tn_prompt_t copy;
    if (prompt && tn__sized(&copy, sizeof copy, prompt, size,
                            TN__PROMPT_SIZE_1, "tn_prompt_t", error) != 0)
        return -1;
    return add_prompt(server, prompt ? &copy : NULL, error);
}

static int add_view(tn_server_t *server, const tn_view_t *view,
                    tn_error_t *error)
{
    if (!server || !view || !view->uri || strncmp(view->uri, "ui://", 5) ||
        !view->uri[5] || !view->html) {
        tn__set_error(error, "server, a view uri beginning ui:// and its "
                             "html are required");
        return -1;
    }
    json_t *ui = view->ui_meta ? json_loads(view->ui_meta, 0, NULL)
                               : json_object();
    if (!json_is_object(ui)) {
        json_decref(ui);
        tn__set_error(error, "view \"%s\": ui_meta is not a JSON object",
                      view->uri);
        return -1;
    }
    struct view *v = calloc(1, sizeof *v);
    if (v) {
        v->uri = strdup(view->uri);
        v->html = strdup(view->html);
        v->meta = json_pack("{s:o}", "ui", ui);
    } else {
        json_decref(ui);
    }
    if (!v || !v->uri || !v->html || !v->meta) {
        if (v)
            view_free(v);
        tn__set_error(error, "out of memory");
        return -1;
    }
    tn_resource_t r = {
        .uri = view->uri,
        .name = view->name ? view->name : view->uri,
        .title = view->title,
        .description = view->description,
        .mime_type = TN_MIME_APP,
        .handler = view_read,
        .user = v,
    };
    if (add_resource(server, &server->resources, "view", &r, error) != 0) {
        view_free(v);
        return -1;
    }
    struct tn_entry *entry = &server->resources.items[server->resources.count - 1];
    json_object_set(entry->definition, "_meta", v->meta);
    entry->free_user = view_free;
    return 0;
}

int tn_server_add_view_sized(tn_server_t *server, const tn_view_t *view,
                             size_t size, tn_error_t *error)
{
    tn_view_t copy;
    if (view && tn__sized(&copy, sizeof copy, view, size, TN__VIEW_SIZE_1,
                          "tn_view_t", error) != 0)
        return -1;
    return add_view(server, view ? &copy : NULL, error);
}
