/* The W3C trace context a call's _meta carries, as its handler sees it
 * through tn_call_traceparent() and tn_call_tracestate(), in both eras. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "tn.h"

#define TIMEOUT 20000
#define PARENT "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
#define STATE "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
#define STATELESS                                                          \
    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","          \
    "\"io.modelcontextprotocol/clientCapabilities\":{},"

static tn_server_t *server;

/* Answers {"traceparent": ..., "tracestate": ...}, without what is NULL. */
static json_t *trace(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *seen = json_object();
    const char *parent = tn_call_traceparent(call);
    const char *state = tn_call_tracestate(call);
    if (parent)
        json_object_set_new(seen, "traceparent", json_string(parent));
    if (state)
        json_object_set_new(seen, "tracestate", json_string(state));
    return tn_result_structured(seen);
}

static void *run(void *fds)
{
    int *fd = fds;
    static int rc;
    rc = tn_server_serve_fd(server, fd[0], fd[1]);
    return &rc;
}

int main(void)
{
    CHECK(tn_call_traceparent(NULL) == NULL);
    CHECK(tn_call_tracestate(NULL) == NULL);

    server = tn_server_new("trace-test", "1");
    tn_tool_t tool = {.name = "trace", .handler = trace};
    CHECK_INT(tn_server_add_tool(server, &tool, NULL), 0);
    int in[2], out[2];
    CHECK_INT(pipe(in), 0);
    CHECK_INT(pipe(out), 0);
    peer_t peer = {.to = in[1], .from = out[0]};
    int server_fds[2] = {in[0], out[1]};
    pthread_t thread;
    pthread_create(&thread, NULL, run, server_fds);

    static const struct {
        const char *meta; /* members of the call's _meta */
        const char *seen; /* what the handler saw */
    } cases[] = {
        {"\"traceparent\":\"" PARENT "\",\"tracestate\":\"" STATE "\"",
         "{\"traceparent\":\"" PARENT "\",\"tracestate\":\"" STATE "\"}"},
        {STATELESS "\"traceparent\":\"" PARENT "\",\"tracestate\":\"" STATE
                   "\"",
         "{\"traceparent\":\"" PARENT "\",\"tracestate\":\"" STATE "\"}"},
        {"\"traceparent\":\"" PARENT "\"", "{\"traceparent\":\"" PARENT "\"}"},
        {"\"progressToken\":1", "{}"},
        {STATELESS "\"tracestate\":\"a=b\"", "{}"},
        /* A later version may go on after its flags. */
        {"\"traceparent\":\"cc-0af7651916cd43dd8448eb211c80319c-"
         "b7ad6b7169203331-01-more\"",
         "{\"traceparent\":\"cc-0af7651916cd43dd8448eb211c80319c-"
         "b7ad6b7169203331-01-more\"}"},
        /* Invalid: neither is kept. */
        {"\"traceparent\":\"00-0AF7651916CD43DD8448EB211C80319C-"
         "B7AD6B7169203331-01\",\"tracestate\":\"a=b\"",
         "{}"},
        {"\"traceparent\":\"00-00000000000000000000000000000000-"
         "b7ad6b7169203331-01\",\"tracestate\":\"a=b\"",
         "{}"},
        {"\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-"
         "0000000000000000-01\"",
         "{}"},
        {"\"traceparent\":\"ff-0af7651916cd43dd8448eb211c80319c-"
         "b7ad6b7169203331-01\"",
         "{}"},
        {"\"traceparent\":\"" PARENT "-00\"", "{}"},
        {"\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-"
         "b7ad6b716920333-01\"",
         "{}"},
        {"\"traceparent\":42,\"tracestate\":\"a=b\"", "{}"},
        /* A tracestate that is not a string is dropped alone. */
        {"\"traceparent\":\"" PARENT "\",\"tracestate\":{\"a\":\"b\"}",
         "{\"traceparent\":\"" PARENT "\"}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char request[512];
        snprintf(request, sizeof request,
                 "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"trace\",\"_meta\":{%s}}}",
                 i, cases[i].meta);
        CHECK_INT(peer_send(&peer, request), 0);
        char *line = peer_recv(&peer, TIMEOUT);
        json_t *reply = line ? json_loads(line, 0, NULL) : NULL;
        CHECK_INT(json_integer_value(json_object_get(reply, "id")), i);
        json_t *seen = json_object_get(json_object_get(reply, "result"),
                                       "structuredContent");
        if (!seen)
            fprintf(stderr, "case %zu: %s\n", i, line ? line : "(timeout)");
        CHECK_JSON(seen, cases[i].seen);
        json_decref(reply);
        free(line);
    }

    peer_close_input(&peer);
    void *rc;
    pthread_join(thread, &rc);
    CHECK_INT(*(int *)rc, 0);
    close(in[0]), close(out[0]), close(out[1]);
    free(peer.buf);
    tn_server_free(server);
    return CHECK_DONE();
}
