/* Asking the client for input in both eras: requests to the client (and
 * their answers) in a session, input_required rounds with a sealed
 * requestState under 2026-07-28. */
#include "tn_private.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Long enough for a person to answer, short enough to bound replays. */
#define STATE_TTL_SECONDS (15 * 60)

void tn__state_key_init(tn_server_t *server)
{
    const char *env = getenv("TOOLNODE_STATE_KEY");
    if (env && *env) {
        /* Keys longer than a block are hashed first, as HMAC does. */
        size_t n = strlen(env);
        if (n > sizeof server->state_key) {
            tn__sha256(env, n, server->state_key);
            n = 32;
        } else {
            memcpy(server->state_key, env, n);
        }
        server->state_key_len = n;
        return;
    }
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, server->state_key, 32) : -1;
    if (fd >= 0)
        close(fd);
    if (got != 32) {
        /* No randomness: a key nobody outside can read is still better
         * than none, and states then only fail to open elsewhere. */
        unsigned long long seed = (unsigned long long)time(NULL) ^
                                  (unsigned long long)getpid() << 32;
        tn__sha256(&seed, sizeof seed, server->state_key);
    }
    server->state_key_len = 32;
}

static char *mac_of(tn_server_t *server, const char *body)
{
    unsigned char mac[32];
    tn__hmac_sha256(server->state_key, server->state_key_len, body,
                    strlen(body), mac);
    return tn__b64url(mac, sizeof mac);
}

static char *seal(tn_server_t *server, const char *digest, json_t *answers)
{
    json_t *payload = json_pack("{s:s, s:I, s:O}", "d", digest, "x",
                                (json_int_t)time(NULL) + STATE_TTL_SECONDS,
                                "r", answers);
    char *text = payload ? json_dumps(payload, JSON_COMPACT) : NULL;
    json_decref(payload);
    char *body = text ? tn__b64url((unsigned char *)text, strlen(text)) : NULL;
    free(text);
    char *mac = body ? mac_of(server, body) : NULL;
    char *state = NULL;
    if (mac && (state = malloc(strlen(body) + strlen(mac) + 2)))
        sprintf(state, "%s.%s", body, mac);
    free(body);
    free(mac);
    return state;
}

/* The answers a state carries (new), or NULL with the reason in msg. */
static json_t *open_state(tn_server_t *server, const char *state,
                          const char *digest, char *msg, size_t size)
{
    const char *dot = strchr(state, '.');
    char *body = dot ? strndup(state, (size_t)(dot - state)) : NULL;
    char *mac = body ? mac_of(server, body) : NULL;
    json_t *answers = NULL;
    int ok = mac && strlen(mac) == strlen(dot + 1);
    /* Compare every byte, so the time taken says nothing about the MAC. */
    unsigned char diff = 0;
    for (size_t i = 0; ok && mac[i]; i++)
        diff |= (unsigned char)(mac[i] ^ dot[1 + i]);
    if (!ok || diff) {
        snprintf(msg, size, "invalid requestState: it failed its integrity "
                            "check");
        goto done;
    }
    size_t n = 0;
    unsigned char *text = tn__unb64url(body, strlen(body), &n);
    json_t *payload = text ? json_loadb((char *)text, n, 0, NULL) : NULL;
    free(text);
    const char *d = json_string_value(json_object_get(payload, "d"));
    json_int_t x = json_integer_value(json_object_get(payload, "x"));
    json_t *r = json_object_get(payload, "r");
    if (!d || !json_is_object(r))
        snprintf(msg, size, "invalid requestState: it is unreadable");
    else if (strcmp(d, digest))
        snprintf(msg, size,
                 "invalid requestState: it belongs to another request");
    else if (x < (json_int_t)time(NULL))
        snprintf(msg, size, "invalid requestState: it has expired");
    else
        answers = json_incref(r);
    json_decref(payload);
done:
    free(body);
    free(mac);
    return answers;
}

/* Fills call->digest, the hash that binds a sealed state to the request:
 * its method, target and arguments. Made only when a state is opened or
 * sealed, which few calls need. -1 when memory runs out. */
static int digest_call(tn_call_t *call)
{
    if (call->digest[0])
        return 0;
    json_t *canonical = json_pack("[s, s, O]", call->method, call->name,
                                  call->args);
    char *text = canonical ? json_dumps(canonical,
                                        JSON_COMPACT | JSON_SORT_KEYS |
                                            JSON_ENCODE_ANY)
                           : NULL;
    json_decref(canonical);
    if (!text)
        return -1;
    unsigned char sum[32];
    tn__sha256(text, strlen(text), sum);
    free(text);
    char *digest = tn__b64url(sum, sizeof sum);
    if (!digest)
        return -1;
    snprintf(call->digest, sizeof call->digest, "%s", digest);
    free(digest);
    return 0;
}

int tn__restore_answers(tn_server_t *server, tn_call_t *call,
                        const json_t *params, const char *method, char *msg,
                        size_t size)
{
    call->method = method;
    json_t *state = json_object_get(params, "requestState");
    json_t *given = json_object_get(params, "inputResponses");
    if (!state && (!given || json_is_null(given)))
        return 0; /* a first round: nothing to restore */
    if (state && !json_is_string(state)) {
        snprintf(msg, size, "requestState must be a string");
        return -1;
    }
    if (state && digest_call(call) != 0) {
        snprintf(msg, size, "out of memory");
        return -1;
    }
    call->answers = state ? open_state(server, json_string_value(state),
                                       call->digest, msg, size)
                          : json_object();
    if (!call->answers)
        return -1;
    if (given && !json_is_null(given)) {
        const char *key;
        json_t *value;
        if (!json_is_object(given)) {
            snprintf(msg, size, "inputResponses must map each key to a "
                                "result object");
            return -1;
        }
        json_object_foreach(given, key, value) {
            if (!json_is_object(value)) {
                snprintf(msg, size, "inputResponses[\"%s\"] must be a "
                                    "result object", key);
                return -1;
            }
        }
        json_object_update(call->answers, given);
    }
    return 0;
}

json_t *tn__input_required(tn_server_t *server, tn_call_t *call)
{
    if (!call->need)
        return NULL;
    if (!call->answers)
        call->answers = json_object();
    char *state = digest_call(call) == 0 && call->answers
                      ? seal(server, call->digest, call->answers)
                      : NULL;
    json_t *result = json_pack("{s:s, s:O, s:s}", "resultType",
                               "input_required", "inputRequests", call->need,
                               "requestState", state ? state : "");
    free(state);
    return result;
}

/* ------------------------------------------------------------------------
 * Asking
 * ------------------------------------------------------------------------ */

static const char *capability_of(const char *method)
{
    if (!method)
        return NULL;
    if (!strcmp(method, "elicitation/create"))
        return "elicitation";
    if (!strcmp(method, "sampling/createMessage"))
        return "sampling";
    if (!strcmp(method, "roots/list"))
        return "roots";
    return NULL;
}

static void fail(tn_call_t *call, int code, json_t *data /* stolen */,
                 const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void fail(tn_call_t *call, int code, json_t *data, const char *fmt,
                 ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *message = tn__vformat(fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&call->server->lock);
    if (!call->fail_message) {
        call->fail_code = code;
        call->fail_message = message;
        call->fail_data = data;
        message = NULL, data = NULL;
    }
    pthread_mutex_unlock(&call->server->lock);
    free(message);
    json_decref(data);
}

json_t *tn__routing_meta(const tn_call_t *call)
{
    return json_pack("{s:O}", TN_META_ROUTING, call->id);
}

/* Sends one request to the client and waits for its answer (new), or NULL
 * when the client refused, the call was cancelled or input ended. */
static json_t *request(tn_call_t *call, const char *method, json_t *params)
{
    tn_server_t *server = call->server;
    struct tn_pending pending = {0};
    pthread_mutex_lock(&server->lock);
    if (server->input_ended) {
        pthread_mutex_unlock(&server->lock);
        return NULL;
    }
    snprintf(pending.id, sizeof pending.id, "tn-%lld",
             ++server->last_request);
    pending.next = server->pending;
    server->pending = &pending;
    pthread_mutex_unlock(&server->lock);

    json_t *p = json_is_object(params) ? json_deep_copy(params)
                                       : json_object();
    json_t *meta = json_object_get(p, "_meta");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(p, "_meta", meta);
    }
    json_object_set(meta, TN_META_ROUTING, call->id);
    int sent = tn__send(server, json_pack("{s:s, s:s, s:s, s:o}", "jsonrpc",
                                          "2.0", "id", pending.id, "method",
                                          method, "params", p));

    pthread_mutex_lock(&server->lock);
    while (sent == 0 && !pending.done && !server->input_ended &&
           !tn_cancelled(call)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50 * 1000000L;
        if (until.tv_nsec >= 1000000000L)
            until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&server->answered, &server->lock, &until);
    }
    for (struct tn_pending **at = &server->pending; *at; at = &(*at)->next)
        if (*at == &pending) {
            *at = pending.next;
            break;
        }
    pthread_mutex_unlock(&server->lock);

    if (!pending.done && tn_cancelled(call))
        tn__send(server, json_pack("{s:s, s:s, s:{s:s, s:o}}", "jsonrpc",
                                   "2.0", "method", "notifications/cancelled",
                                   "params", "requestId", pending.id, "_meta",
                                   tn__routing_meta(call)));
    json_decref(pending.error);
    return pending.result;
}

void tn__answered(tn_server_t *server, json_t *message)
{
    const char *id = json_string_value(json_object_get(message, "id"));
    pthread_mutex_lock(&server->lock);
    for (struct tn_pending *p = server->pending; id && p; p = p->next)
        if (!strcmp(p->id, id) && !p->done) {
            json_t *result = json_object_get(message, "result");
            if (json_is_object(result))
                p->result = json_incref(result);
            else
                p->error = json_incref(json_object_get(message, "error"));
            p->done = 1;
            pthread_cond_broadcast(&server->answered);
            break;
        }
    pthread_mutex_unlock(&server->lock);
}

void tn__end_input(tn_server_t *server)
{
    pthread_mutex_lock(&server->lock);
    server->input_ended = 1;
    pthread_cond_broadcast(&server->answered);
    pthread_mutex_unlock(&server->lock);
}

int tn_call_capable(const tn_call_t *call, const char *capability)
{
    if (!call || !capability)
        return 0;
    return !call->stateless ||
           json_is_object(json_object_get(call->capabilities, capability));
}

json_t *tn_ask(tn_call_t *call, json_t *questions)
{
    if (!call || !json_is_object(questions)) {
        json_decref(questions);
        return NULL;
    }
    json_t *answers = json_object();
    json_t *missing = json_object();
    const char *key;
    json_t *q;
    json_object_foreach(questions, key, q) {
        const char *method = json_string_value(json_object_get(q, "method"));
        const char *capability = capability_of(method);
        if (!capability) {
            fail(call, TN_RPC_INTERNAL_ERROR, NULL,
                 "input \"%s\": %s is not a question for the client", key,
                 method ? method : "(no method)");
            goto failed;
        }
        if (!call->stateless) {
            json_t *got = request(call, method,
                                  json_object_get(q, "params"));
            if (!got) {
                if (!tn_cancelled(call))
                    fail(call, TN_FAIL_TOOL, NULL,
                         "the client did not answer %s", method);
                goto failed;
            }
            json_object_set_new(answers, key, got);
            continue;
        }
        json_t *given = json_object_get(call->answers, key);
        if (given) {
            json_object_set(answers, key, given);
            continue;
        }
        if (!tn_call_capable(call, capability)) {
            fail(call, TN_RPC_MISSING_CAPABILITY,
                 json_pack("{s:{s:{}}}", "requiredCapabilities", capability),
                 "%s needs the client capability \"%s\"", method,
                 capability);
            goto failed;
        }
        json_t *params = json_object_get(q, "params");
        json_object_set_new(missing, key,
                            json_pack("{s:s, s:o}", "method", method,
                                      "params", json_is_object(params)
                                                    ? json_incref(params)
                                                    : json_object()));
    }
    if (json_object_size(missing) > 0) {
        pthread_mutex_lock(&call->server->lock);
        if (!call->need)
            call->need = json_incref(missing);
        pthread_mutex_unlock(&call->server->lock);
        goto failed;
    }
    json_decref(missing);
    json_decref(questions);
    return answers;
failed:
    json_decref(missing);
    json_decref(answers);
    json_decref(questions);
    return NULL;
}

json_t *tn_elicit(tn_call_t *call, const char *key, const char *message,
                  const char *requested_schema)
{
    if (!call || !key || !message || !requested_schema)
        return NULL;
    json_t *schema = json_loads(requested_schema, 0, NULL);
    if (!json_is_object(schema)) {
        json_decref(schema);
        return NULL;
    }
    json_t *answers = tn_ask(call, json_pack("{s:{s:s, s:{s:s, s:o}}}", key,
                                             "method", "elicitation/create",
                                             "params", "message", message,
                                             "requestedSchema", schema));
    json_t *answer = json_incref(json_object_get(answers, key));
    json_decref(answers);
    return answer;
}
