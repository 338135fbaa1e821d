/* Resources, templates, prompts and completion: the rules for adding them,
 * their builders, and a server on pipes serving them in both eras. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "tn.h"

#define TIMEOUT 20000
#define STATELESS                                                          \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"              \
    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":"       \
    "{\"elicitation\":{}}}"

static peer_t peer;

static json_t *read_text(tn_call_t *call, const char *uri, json_t *vars,
                         void *user)
{
    (void)vars;
    tn_call_log(call, "info", "read");
    return tn_read_text(uri, user, "hello");
}

/* Answers with the template's variables as JSON text. */
static json_t *read_vars(tn_call_t *call, const char *uri, json_t *vars,
                         void *user)
{
    (void)call, (void)user;
    char *text = json_dumps(vars, JSON_COMPACT | JSON_SORT_KEYS);
    json_t *result = tn_read_text(uri, NULL, text);
    free(text);
    return result;
}

static json_t *read_nothing(tn_call_t *call, const char *uri, json_t *vars,
                            void *user)
{
    (void)call, (void)uri, (void)vars, (void)user;
    return NULL;
}

static json_t *greeting(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)user;
    char text[128];
    snprintf(text, sizeof text, "Hello, %s!",
             json_string_value(json_object_get(args, "who")));
    return tn_prompt_text(text);
}

static json_t *asking(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *answer = tn_elicit(call, "topic", "Which topic?",
                               "{\"type\":\"object\"}");
    if (!answer)
        return NULL;
    json_decref(answer);
    return tn_prompt_text("answered");
}

static json_t *tool(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args, (void)user;
    return tn_result_text("ok");
}

static void builders(void)
{
    json_t *r = tn_read_text("a://b", "text/plain", "t");
    CHECK_JSON(r, "{\"contents\":[{\"uri\":\"a://b\",\"mimeType\":"
                  "\"text/plain\",\"text\":\"t\"}]}");
    json_decref(r);
    r = tn_read_text("a://b", NULL, "t");
    CHECK_JSON(r, "{\"contents\":[{\"uri\":\"a://b\",\"text\":\"t\"}]}");
    json_decref(r);

    /* Standard base64 with padding, for every remainder of three. */
    static const struct {
        const char *data, *blob;
    } blobs[] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
                 {"\xff\xfe\xfd\xfc", "//79/A=="}};
    for (size_t i = 0; i < sizeof blobs / sizeof blobs[0]; i++) {
        r = tn_read_blob("a://b", "x/y", blobs[i].data,
                         strlen(blobs[i].data));
        CHECK_STR(json_string_value(json_object_get(
                      json_array_get(json_object_get(r, "contents"), 0),
                      "blob")),
                  blobs[i].blob);
        json_decref(r);
    }

    r = tn_prompt_text("say \"hi\"");
    CHECK_JSON(r, "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
                  "\"text\",\"text\":\"say \\\"hi\\\"\"}}]}");
    json_decref(r);
    r = tn_prompt_messages(json_pack("[{s:s}]", "role", "assistant"));
    CHECK_JSON(r, "{\"messages\":[{\"role\":\"assistant\"}]}");
    json_decref(r);
    CHECK(tn_prompt_messages(json_object()) == NULL); /* stolen, freed */
}

static void add_rules(void)
{
    tn_server_t *server = tn_server_new("s", "1");
    tn_error_t error = {{0}};
    tn_resource_t r = {.uri = "a://1", .name = "one", .handler = read_text};
    CHECK_INT(tn_server_add_resource(server, &r, &error), 0);
    CHECK_STR(error.text, "");
    CHECK_INT(tn_server_add_resource(server, &r, &error), -1);
    CHECK_STR(error.text, "resource \"a://1\" is already added");
    r.uri = "";
    CHECK_INT(tn_server_add_resource(server, &r, &error), -1);
    CHECK_STR(error.text, "server, resource uri, name and handler are "
                          "required");

    const char *bad_templates[] = {"a://{", "a://{}", "a://}", "a://{x{y}}"};
    for (size_t i = 0; i < 4; i++) {
        tn_resource_t t = {.uri = bad_templates[i], .name = "t",
                           .handler = read_vars};
        CHECK_INT(tn_server_add_template(server, &t, &error), -1);
        char want[TN_ERROR_TEXT_LENGTH];
        snprintf(want, sizeof want,
                 "template \"%s\": every { needs a name and a }",
                 bad_templates[i]);
        CHECK_STR(error.text, want);
    }
    tn_resource_t t = {.uri = "a://{x}", .name = "t", .handler = read_vars};
    CHECK_INT(tn_server_add_template(server, &t, &error), 0);
    CHECK_INT(tn_server_add_template(server, &t, &error), -1);
    CHECK_STR(error.text, "template \"a://{x}\" is already added");

    const char *bad_arguments[] = {"{}", "[1]", "[{\"name\":1}]", "[",
                                   "[{\"description\":\"d\"}]"};
    for (size_t i = 0; i < 5; i++) {
        tn_prompt_t p = {.name = "p", .arguments = bad_arguments[i],
                         .handler = greeting};
        CHECK_INT(tn_server_add_prompt(server, &p, &error), -1);
        CHECK_STR(error.text, "prompt \"p\": arguments must be a JSON array "
                              "of objects with a string \"name\"");
    }
    tn_prompt_t p = {.name = "p", .arguments = "[{\"name\":\"a\"}]",
                     .handler = greeting};
    CHECK_INT(tn_server_add_prompt(server, &p, &error), 0);
    CHECK_INT(tn_server_add_prompt(server, &p, &error), -1);
    CHECK_STR(error.text, "prompt \"p\" is already added");
    p.name = "";
    CHECK_INT(tn_server_add_prompt(server, &p, &error), -1);

    const char *const values[] = {"x", NULL};
    CHECK_INT(tn_server_add_completion(server, "tool", "p", "a", values), -1);
    CHECK_INT(tn_server_add_completion(server, "prompt", "p", "a", values),
              0);
    tn_server_free(server);
}

static void *run(void *arg)
{
    static int rc;
    int *fd = ((void **)arg)[1];
    rc = tn_server_serve_fd(((void **)arg)[0], fd[0], fd[1]);
    return &rc;
}

static json_t *next(void)
{
    json_t *msg = peer_recv_json(&peer, TIMEOUT);
    CHECK(msg != NULL);
    return msg;
}

#define EXPECT(request, want) PEER_EXPECT(&peer, TIMEOUT, request, want)

/* Serves server on pipes while body runs, then ends it cleanly. */
static void serve(tn_server_t *server, void (*body)(tn_server_t *))
{
    int in[2], out[2];
    CHECK_INT(pipe(in), 0);
    CHECK_INT(pipe(out), 0);
    peer = (peer_t){.to = in[1], .from = out[0]};
    int fds[2] = {in[0], out[1]};
    void *arg[2] = {server, fds};
    pthread_t thread;
    pthread_create(&thread, NULL, run, arg);
    body(server);
    peer_close_input(&peer);
    char *rest = peer_recv(&peer, TIMEOUT);
    CHECK_STR(rest, NULL);
    free(rest);
    void *rc;
    pthread_join(thread, &rc);
    CHECK_INT(*(int *)rc, 0);
    close(in[0]), close(out[0]), close(out[1]);
    free(peer.buf);
}

static void session(tn_server_t *server)
{
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"2025-11-25\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
           "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{"
           "\"tools\":{\"listChanged\":false},\"logging\":{},"
           "\"prompts\":{\"listChanged\":false},\"resources\":{"
           "\"subscribe\":true,\"listChanged\":false},\"completions\":{}},"
           "\"serverInfo\":{\"name\":\"res\",\"version\":\"1\"}}}");
    /* Pages of two, as for tools. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resources\":["
           "{\"uri\":\"a://text\",\"name\":\"text\",\"title\":\"Text\","
           "\"description\":\"d\",\"mimeType\":\"text/plain\"},"
           "{\"uri\":\"a://nothing\",\"name\":\"nothing\"}],"
           "\"nextCursor\":\"2\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/list\","
           "\"params\":{\"cursor\":\"2\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"resources\":["
           "{\"uri\":\"a://three\",\"name\":\"three\"}]}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":4,"
           "\"method\":\"resources/templates/list\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"resourceTemplates\":"
           "[{\"uriTemplate\":\"a://{x}/of/{y}\",\"name\":\"pair\"},"
           "{\"uriTemplate\":\"a://item/{id}\",\"name\":\"item\"}]}}");

    /* A read logs under the URI read, tagged with its request. */
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":5,"
                               "\"method\":\"resources/read\","
                               "\"params\":{\"uri\":\"a://text\"}}"), 0);
    json_t *got = next();
    CHECK_JSON(got, "{\"jsonrpc\":\"2.0\","
                    "\"method\":\"notifications/message\",\"params\":{"
                    "\"level\":\"info\",\"logger\":\"a://text\","
                    "\"data\":\"read\",\"_meta\":{"
                    "\"io.toolnode/request\":5}}}");
    json_decref(got);
    got = next();
    CHECK_JSON(got, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"contents\":"
                    "[{\"uri\":\"a://text\",\"mimeType\":\"text/plain\","
                    "\"text\":\"hello\"}]}}");
    json_decref(got);

    /* Templates: each variable one segment or more of it, percent-decoded;
     * the first template that matches serves. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\","
           "\"params\":{\"uri\":\"a://b%20c/of/d.e\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"contents\":[{\"uri\":"
           "\"a://b%20c/of/d.e\",\"text\":\"{\\\"x\\\":\\\"b c\\\","
           "\\\"y\\\":\\\"d.e\\\"}\"}]}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\","
           "\"params\":{\"uri\":\"a://item/7%zz\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"contents\":[{\"uri\":"
           "\"a://item/7%zz\",\"text\":\"{\\\"id\\\":\\\"7%zz\\\"}\"}]}}");
    const char *unknown[] = {"a://item/", "a://item/1/2", "a://x/of/",
                             "a://tex"};
    for (size_t i = 0; i < 4; i++) {
        char request[200], want[300];
        snprintf(request, sizeof request,
                 "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\","
                 "\"params\":{\"uri\":\"%s\"}}", unknown[i]);
        snprintf(want, sizeof want,
                 "{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":-32002,"
                 "\"message\":\"resource not found\",\"data\":{\"uri\":"
                 "\"%s\"}}}", unknown[i]);
        EXPECT(request, want);
    }
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/read\","
           "\"params\":{\"uri\":7}}",
           "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32602,"
           "\"message\":\"needs a string \\\"uri\\\"\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"resources/read\","
           "\"params\":{\"uri\":\"a://nothing\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":10,\"error\":{\"code\":-32603,"
           "\"message\":\"resource \\\"a://nothing\\\" failed without a "
           "result\"}}");

    /* Subscriptions: updates of what the session subscribed to, only. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"resources/subscribe\","
           "\"params\":{\"uri\":\"a://text\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"resources/subscribe\","
           "\"params\":{\"uri\":\"a://gone\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":12,\"error\":{\"code\":-32002,"
           "\"message\":\"resource not found\",\"data\":{\"uri\":"
           "\"a://gone\"}}}");
    CHECK_INT(tn_resource_updated(server, "a://three"), 0);
    CHECK_INT(tn_resource_updated(server, "a://text"), 0);
    got = next();
    CHECK_JSON(got, "{\"jsonrpc\":\"2.0\",\"method\":"
                    "\"notifications/resources/updated\",\"params\":{"
                    "\"uri\":\"a://text\"}}");
    json_decref(got);
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":13,"
           "\"method\":\"resources/unsubscribe\","
           "\"params\":{\"uri\":\"a://text\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":13,\"result\":{}}");
    CHECK_INT(tn_resource_updated(server, "a://text"), 0);
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"ping\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":14,\"result\":{}}");

    /* Prompts: the required arguments checked, every one a string. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"prompts/list\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":15,\"result\":{\"prompts\":["
           "{\"name\":\"greeting\",\"title\":\"Greeting\",\"arguments\":["
           "{\"name\":\"who\",\"required\":true},{\"name\":\"how\"}]},"
           "{\"name\":\"asking\"}]}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"prompts/get\","
           "\"params\":{\"name\":\"greeting\",\"arguments\":{"
           "\"who\":\"Ann\"}}}",
           "{\"jsonrpc\":\"2.0\",\"id\":16,\"result\":{\"messages\":[{"
           "\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":"
           "\"Hello, Ann!\"}}]}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"prompts/get\","
           "\"params\":{\"name\":\"greeting\",\"arguments\":{\"how\":\"x\"}}}",
           "{\"jsonrpc\":\"2.0\",\"id\":17,\"error\":{\"code\":-32602,"
           "\"message\":\"prompt \\\"greeting\\\" needs the argument "
           "\\\"who\\\"\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"prompts/get\","
           "\"params\":{\"name\":\"greeting\",\"arguments\":{\"who\":1}}}",
           "{\"jsonrpc\":\"2.0\",\"id\":18,\"error\":{\"code\":-32602,"
           "\"message\":\"prompts/get \\\"arguments\\\" must map names to "
           "strings\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"prompts/get\","
           "\"params\":{\"name\":\"nope\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":19,\"error\":{\"code\":-32602,"
           "\"message\":\"unknown prompt \\\"nope\\\"\"}}");

    /* A prompt that asks, in a session: a request to the client, and a
     * refusal is a JSON-RPC error, since a prompt has no isError. */
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":20,"
                               "\"method\":\"prompts/get\","
                               "\"params\":{\"name\":\"asking\"}}"), 0);
    got = next();
    CHECK_STR(json_string_value(json_object_get(got, "method")),
              "elicitation/create");
    char answer[200];
    snprintf(answer, sizeof answer,
             "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"error\":{\"code\":-1,"
             "\"message\":\"no\"}}",
             json_string_value(json_object_get(got, "id")));
    json_decref(got);
    EXPECT(answer,
           "{\"jsonrpc\":\"2.0\",\"id\":20,\"error\":{\"code\":-32603,"
           "\"message\":\"the client did not answer elicitation/create\"}}");

    /* Completion: values starting with what was typed. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"completion/complete\","
           "\"params\":{\"ref\":{\"type\":\"ref/resource\",\"uri\":"
           "\"a://item/{id}\"},\"argument\":{\"name\":\"id\",\"value\":"
           "\"1\"}}}",
           "{\"jsonrpc\":\"2.0\",\"id\":21,\"result\":{\"completion\":{"
           "\"values\":[\"1\",\"12\"],\"total\":2,\"hasMore\":false}}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"completion/complete\","
           "\"params\":{\"ref\":{\"type\":\"ref/prompt\",\"name\":"
           "\"greeting\"},\"argument\":{\"name\":\"who\"}}}",
           "{\"jsonrpc\":\"2.0\",\"id\":22,\"result\":{\"completion\":{"
           "\"values\":[\"Ann\",\"Bob\"],\"total\":2,\"hasMore\":false}}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"completion/complete\","
           "\"params\":{\"ref\":{\"type\":\"ref/prompt\",\"name\":"
           "\"greeting\"},\"argument\":{\"name\":\"how\"}}}",
           "{\"jsonrpc\":\"2.0\",\"id\":23,\"error\":{\"code\":-32602,"
           "\"message\":\"nothing to complete for \\\"greeting\\\"\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":24,\"method\":\"completion/complete\","
           "\"params\":{\"ref\":{}}}",
           "{\"jsonrpc\":\"2.0\",\"id\":24,\"error\":{\"code\":-32602,"
           "\"message\":\"completion/complete needs \\\"ref\\\" with a type "
           "and \\\"argument\\\" with a name\"}}");

    /* Added while running: refused. */
    tn_resource_t late = {.uri = "a://late", .name = "late",
                          .handler = read_text};
    CHECK_INT(tn_server_add_resource(server, &late, NULL), -1);
    tn_prompt_t late_prompt = {.name = "late", .handler = greeting};
    CHECK_INT(tn_server_add_prompt(server, &late_prompt, NULL), -1);
    const char *const values[] = {NULL};
    CHECK_INT(tn_server_add_completion(server, "prompt", "late", "a",
                                       values), -1);
}

static void stateless(tn_server_t *server)
{
    (void)server;
    /* Lists and reads carry the cache hint; other answers only their
     * resultType. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/list\","
           "\"params\":{" STATELESS ",\"cursor\":\"1\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"prompts\":["
           "{\"name\":\"asking\"}],\"resultType\":\"complete\","
           "\"ttlMs\":5000,\"cacheScope\":\"public\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\","
           "\"params\":{" STATELESS ",\"uri\":\"a://item/5\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"contents\":[{\"uri\":"
           "\"a://item/5\",\"text\":\"{\\\"id\\\":\\\"5\\\"}\"}],"
           "\"resultType\":\"complete\",\"ttlMs\":5000,"
           "\"cacheScope\":\"public\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\","
           "\"params\":{" STATELESS ",\"uri\":\"a://gone\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,"
           "\"message\":\"resource not found\",\"data\":{\"uri\":"
           "\"a://gone\"}}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\","
           "\"params\":{" STATELESS ",\"name\":\"greeting\",\"arguments\":"
           "{\"who\":\"Bob\"}}}",
           "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"messages\":[{"
           "\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":"
           "\"Hello, Bob!\"}}],\"resultType\":\"complete\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"completion/complete\","
           "\"params\":{" STATELESS ",\"ref\":{\"type\":\"ref/prompt\","
           "\"name\":\"greeting\"},\"argument\":{\"name\":\"who\",\"value\":"
           "\"B\"}}}",
           "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"completion\":{"
           "\"values\":[\"Bob\"],\"total\":1,\"hasMore\":false},"
           "\"resultType\":\"complete\"}}");

    /* A prompt that asks: input_required, then the answer with the state
     * given back completes it. */
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":6,"
                               "\"method\":\"prompts/get\",\"params\":{"
                               STATELESS ",\"name\":\"asking\"}}"), 0);
    json_t *got = next();
    json_t *result = json_object_get(got, "result");
    CHECK_STR(json_string_value(json_object_get(result, "resultType")),
              "input_required");
    CHECK_JSON(json_object_get(result, "inputRequests"),
               "{\"topic\":{\"method\":\"elicitation/create\",\"params\":{"
               "\"message\":\"Which topic?\",\"requestedSchema\":{\"type\":"
               "\"object\"}}}}");
    char state[512], request[1024];
    snprintf(state, sizeof state, "%s",
             json_string_value(json_object_get(result, "requestState")));
    json_decref(got);
    snprintf(request, sizeof request,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"prompts/get\","
             "\"params\":{" STATELESS ",\"name\":\"asking\","
             "\"requestState\":\"%s\",\"inputResponses\":{\"topic\":{"
             "\"action\":\"accept\"}}}}", state);
    EXPECT(request, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"messages\":"
                    "[{\"role\":\"user\",\"content\":{\"type\":\"text\","
                    "\"text\":\"answered\"}}],\"resultType\":\"complete\"}}");
    /* The state of a prompt is no good for a resource. */
    snprintf(request, sizeof request,
             "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\","
             "\"params\":{" STATELESS ",\"uri\":\"a://text\","
             "\"requestState\":\"%s\"}}", state);
    EXPECT(request, "{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":"
                    "-32602,\"message\":\"invalid requestState: it belongs "
                    "to another request\"}}");
}

#define LISTEN(id, uris)                                                   \
    "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":"                       \
    "\"subscriptions/listen\",\"params\":{" STATELESS ",\"notifications\":" \
    "{\"toolsListChanged\":true,\"resourceSubscriptions\":" uris "}}}"
#define ACK(id, uris)                                                      \
    "{\"jsonrpc\":\"2.0\",\"method\":"                                     \
    "\"notifications/subscriptions/acknowledged\",\"params\":{\"_meta\":"   \
    "{\"io.modelcontextprotocol/subscriptionId\":" id "},"                  \
    "\"notifications\":{\"resourceSubscriptions\":" uris "}}}"
#define UPDATED(id, uri)                                                   \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\","  \
    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":" id \
    "},\"uri\":\"" uri "\"}}"

/* subscriptions/listen: each subscription is told of the resources it
 * named, tagged with its id, until it is cancelled. */
static void listening(tn_server_t *server)
{
    /* server/discover says that resources can be subscribed to. */
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"method\":"
                               "\"server/discover\",\"params\":{" STATELESS
                               "}}"), 0);
    json_t *got = next();
    CHECK_JSON(json_object_get(json_object_get(json_object_get(got, "result"),
                                               "capabilities"), "resources"),
               "{\"subscribe\":true,\"listChanged\":false}");
    json_decref(got);

    /* Unknown resources and list changes (never sent) are not agreed to. */
    EXPECT(LISTEN("\"a\"", "[\"a://text\",\"a://gone\",\"a://item/7\"]"),
           ACK("\"a\"", "[\"a://text\",\"a://item/7\"]"));
    EXPECT(LISTEN("7", "[\"a://text\",\"a://three\"]"),
           ACK("7", "[\"a://text\",\"a://three\"]"));
    EXPECT(LISTEN("7", "[]"),
           "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32600,"
           "\"message\":\"invalid request: id 7 is already in use\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
           "\"subscriptions/listen\",\"params\":{\"notifications\":{}}}",
           "{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":-32601,"
           "\"message\":\"method not found: subscriptions/listen\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
           "\"subscriptions/listen\",\"params\":{" STATELESS
           ",\"notifications\":[]}}",
           "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32602,"
           "\"message\":\"invalid params: notifications must be an object "
           "and its resourceSubscriptions an array\"}}");

    CHECK_INT(tn_resource_updated(server, "a://item/7"), 0);
    got = next();
    CHECK_JSON(got, UPDATED("\"a\"", "a://item/7"));
    json_decref(got);
    CHECK_INT(tn_resource_updated(server, "a://text"), 0);
    got = next();
    CHECK_JSON(got, UPDATED("\"a\"", "a://text"));
    json_decref(got);
    got = next();
    CHECK_JSON(got, UPDATED("7", "a://text"));
    json_decref(got);

    /* Cancelled: no answer, no more updates on it. The ping makes sure the
     * cancellation was read before the update. */
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":\"a\"}}"), 0);
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{}}");
    CHECK_INT(tn_resource_updated(server, "a://item/7"), 0);
    CHECK_INT(tn_resource_updated(server, "a://text"), 0);
    got = next();
    CHECK_JSON(got, UPDATED("7", "a://text"));
    json_decref(got);
    /* Ending the input ends subscription 7 without an answer: serve()
     * checks that nothing more comes. */
}

/* A server of tools alone knows nothing of the other methods. */
static void tools_only(tn_server_t *server)
{
    (void)server;
    const char *methods[] = {"prompts/list", "prompts/get", "resources/list",
                             "resources/read", "resources/templates/list",
                             "resources/subscribe", "completion/complete"};
    for (size_t i = 0; i < 7; i++) {
        char request[200], want[200];
        snprintf(request, sizeof request,
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}",
                 methods[i]);
        snprintf(want, sizeof want,
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
                 "\"message\":\"method not found: %s\"}}", methods[i]);
        EXPECT(request, want);
    }
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"2025-11-25\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{"
           "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{"
           "\"tools\":{\"listChanged\":false},\"logging\":{}},"
           "\"serverInfo\":{\"name\":\"tools\",\"version\":\"1\"}}}");
}

/* A view is listed and read with its MIME type and _meta.ui; a tool names it. */
static void views(tn_server_t *server)
{
    (void)server;
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"2025-11-25\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
           "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{"
           "\"tools\":{\"listChanged\":false},\"logging\":{},"
           "\"resources\":{\"subscribe\":true,\"listChanged\":false}},"
           "\"serverInfo\":{\"name\":\"views\",\"version\":\"1\"}}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resources\":["
           "{\"uri\":\"ui://views/show.html\",\"name\":\"ui://views/show.html\","
           "\"mimeType\":\"text/html;profile=mcp-app\",\"_meta\":{\"ui\":{"
           "\"csp\":{\"connectDomains\":[]},\"prefersBorder\":true}}}]}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\","
           "\"params\":{\"uri\":\"ui://views/show.html\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"contents\":[{"
           "\"uri\":\"ui://views/show.html\","
           "\"mimeType\":\"text/html;profile=mcp-app\","
           "\"text\":\"<!DOCTYPE html><p>hi</p>\",\"_meta\":{\"ui\":{"
           "\"csp\":{\"connectDomains\":[]},\"prefersBorder\":true}}}]}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"tools\":[{"
           "\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"},"
           "\"_meta\":{\"ui\":{\"resourceUri\":\"ui://views/show.html\","
           "\"visibility\":[\"app\"]}}}]}}");
}

static void view_rules(void)
{
    tn_server_t *server = tn_server_new("views", "1");
    tn_error_t error;
    tn_view_t bad_uri = {.uri = "https://x/view.html", .html = "<p>"};
    CHECK_INT(tn_server_add_view(server, &bad_uri, &error), -1);
    tn_view_t no_html = {.uri = "ui://views/x"};
    CHECK_INT(tn_server_add_view(server, &no_html, &error), -1);
    tn_view_t bad_meta = {.uri = "ui://views/x", .html = "<p>", .ui_meta = "[1]"};
    CHECK_INT(tn_server_add_view(server, &bad_meta, &error), -1);
    CHECK_INT(tn_server_add_view(NULL, &bad_meta, NULL), -1);
    CHECK_INT(tn_server_add_view(server, NULL, NULL), -1);
    tn_view_t twice = {.uri = "ui://views/x", .html = "<p>"};
    CHECK_INT(tn_server_add_view(server, &twice, &error), 0);
    CHECK_INT(tn_server_add_view(server, &twice, &error), -1);
    tn_server_free(server);
}

static tn_server_t *new_server(void)
{
    tn_server_t *server = tn_server_new("res", "1");
    const tn_resource_t resources[] = {
        {.uri = "a://text", .name = "text", .title = "Text",
         .description = "d", .mime_type = "text/plain",
         .handler = read_text, .user = (void *)"text/plain"},
        {.uri = "a://nothing", .name = "nothing", .handler = read_nothing},
        {.uri = "a://three", .name = "three", .handler = read_text},
    };
    for (size_t i = 0; i < 3; i++)
        CHECK_INT(tn_server_add_resource(server, &resources[i], NULL), 0);
    const tn_resource_t templates[] = {
        {.uri = "a://{x}/of/{y}", .name = "pair", .handler = read_vars},
        {.uri = "a://item/{id}", .name = "item", .handler = read_vars},
    };
    for (size_t i = 0; i < 2; i++)
        CHECK_INT(tn_server_add_template(server, &templates[i], NULL), 0);
    const tn_prompt_t prompts[] = {
        {.name = "greeting", .title = "Greeting",
         .arguments = "[{\"name\":\"who\",\"required\":true},"
                      "{\"name\":\"how\"}]",
         .handler = greeting},
        {.name = "asking", .handler = asking},
    };
    for (size_t i = 0; i < 2; i++)
        CHECK_INT(tn_server_add_prompt(server, &prompts[i], NULL), 0);
    const char *const ids[] = {"1", "12", "2", NULL};
    const char *const names[] = {"Ann", "Bob", NULL};
    CHECK_INT(tn_server_add_completion(server, "resource", "a://item/{id}",
                                       "id", ids), 0);
    CHECK_INT(tn_server_add_completion(server, "prompt", "greeting", "who",
                                       names), 0);
    CHECK_INT(tn_server_set_page_size(server, 2), 0);
    CHECK_INT(tn_server_set_cache_ttl(server, 5000), 0);
    return server;
}

int main(void)
{
    builders();
    add_rules();

    tn_server_t *server = new_server();
    serve(server, session);
    tn_server_free(server);

    server = new_server();
    serve(server, stateless);
    tn_server_free(server);

    server = new_server();
    serve(server, listening);
    tn_server_free(server);

    view_rules();
    server = tn_server_new("views", "1");
    tn_view_t view = {.uri = "ui://views/show.html",
                      .html = "<!DOCTYPE html><p>hi</p>",
                      .ui_meta = "{\"csp\":{\"connectDomains\":[]},"
                                 "\"prefersBorder\":true}"};
    CHECK_INT(tn_server_add_view(server, &view, NULL), 0);
    tn_tool_t shown = {.name = "t", .handler = tool,
                       .meta = "{\"ui\":{\"resourceUri\":"
                               "\"ui://views/show.html\","
                               "\"visibility\":[\"app\"]}}"};
    CHECK_INT(tn_server_add_tool(server, &shown, NULL), 0);
    serve(server, views);
    tn_server_free(server);

    server = tn_server_new("tools", "1");
    tn_tool_t only = {.name = "t", .handler = tool};
    CHECK_INT(tn_server_add_tool(server, &only, NULL), 0);
    serve(server, tools_only);
    tn_server_free(server);
    return CHECK_DONE();
}
