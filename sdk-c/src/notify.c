/* The notifications a handler or the server may send: progress, status and
 * log messages, tagged with the call they belong to. */
#include "tn_private.h"

#include <stdlib.h>

static int notify(tn_server_t *server, const char *method, json_t *params)
{
    return tn__send(server, json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0",
                                      "method", method, "params", params));
}

int tn_progress(tn_call_t *call, double progress, double total,
                const char *message)
{
    if (!call)
        return -1;
    if (!call->progress_token || tn_cancelled(call))
        return 0;
    json_t *params = json_pack("{s:O, s:o}", "progressToken",
                               call->progress_token, "progress",
                               tn__number(progress));
    if (!params)
        return -1;
    if (total > 0)
        json_object_set_new(params, "total", tn__number(total));
    if (message)
        json_object_set_new(params, "message", json_string(message));
    json_object_set_new(params, "_meta", tn__routing_meta(call));
    return notify(call->server, "notifications/progress", params);
}

int tn_status(tn_call_t *call, const char *message)
{
    if (!call || !message)
        return -1;
    return tn_progress(call, atomic_fetch_add(&call->statuses, 1) + 1, 0,
                       message);
}

/* Sends a log message of a call (call non-NULL: tagged with its request id
 * and filtered by its era) or of the server; before the server runs, the
 * line goes to stderr. */
static int log_message(tn_server_t *server, tn_call_t *call,
                       const char *level, const char *fmt, va_list ap)
{
    int index = tn__level_index(level);
    if (!server || !fmt || index < 0)
        return -1;
    int least = call && call->stateless ? call->log_min
                                        : atomic_load(&server->log_min);
    if (index < least)
        return 0;
    char *text = tn__vformat(fmt, ap);
    if (!text)
        return -1;

    pthread_mutex_lock(&server->out_lock);
    int running = server->out != NULL;
    pthread_mutex_unlock(&server->out_lock);
    int rc;
    if (!running) {
        rc = fprintf(stderr, "%s: %s: %s\n", server->name, level, text) < 0
                 ? -1 : 0;
    } else {
        json_t *params = json_pack("{s:s, s:s, s:s}", "level", level,
                                   "logger", call ? call->name
                                                  : server->name,
                                   "data", text);
        if (params && call)
            json_object_set_new(params, "_meta", tn__routing_meta(call));
        rc = notify(server, "notifications/message", params);
    }
    free(text);
    return rc;
}

int tn_call_log(tn_call_t *call, const char *level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = call ? log_message(call->server, call, level, fmt, ap) : -1;
    va_end(ap);
    return rc;
}

int tn_log(tn_server_t *server, const char *level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = log_message(server, NULL, level, fmt, ap);
    va_end(ap);
    return rc;
}
