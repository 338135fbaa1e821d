/* A server running in-process on pipes, driven message by message: the
 * protocol paths the example bundle cannot reach. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "tn.h"

#define TIMEOUT 20000

static tn_server_t *server;
static peer_t peer;
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open, gate_waiting, counted_runs;

/* Holds the single worker until the test opens the gate. */
static json_t *block(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args, (void)user;
    pthread_mutex_lock(&gate_lock);
    gate_waiting = 1;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    return tn_result_text("unblocked");
}

static json_t *counted(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args, (void)user;
    counted_runs++;
    return tn_result_text("counted");
}

static json_t *broken(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args, (void)user;
    return NULL;
}

static json_t *chatty(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    tn_server_t *s = tn_call_server(call);
    tn_log(s, "debug", "debug %d", 1);
    tn_log(s, "warning", "warning %d", 2);
    tn_log(s, "error", "error %d", 3);
    tn_progress(call, 0.5, 0, "half");
    /* Tools are fixed once the server runs. */
    tn_tool_t late = {.name = "late", .handler = counted};
    CHECK_INT(tn_server_add_tool(s, &late, NULL), -1);
    CHECK_INT(tn_server_set_workers(s, 2), -1);
    CHECK_INT(tn_server_set_page_size(s, 2), -1);
    return tn_result_text("chatted");
}

static void *run(void *fds)
{
    int *fd = fds;
    static int rc;
    rc = tn_server_serve_fd(server, fd[0], fd[1]);
    return &rc;
}

/* Reads the next message (new reference), failing the test on timeout or
 * on a line that is not JSON. */
static json_t *next(void)
{
    json_t *msg = peer_recv_json(&peer, TIMEOUT);
    CHECK(msg != NULL);
    return msg;
}

#define EXPECT(request, want) PEER_EXPECT(&peer, TIMEOUT, request, want)

static void gate_wait_for_worker(void)
{
    pthread_mutex_lock(&gate_lock);
    while (!gate_waiting)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}

static void gate_release(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

int main(void)
{
    server = tn_server_new("serve-test", "9.9");
    const tn_tool_t tools[] = {
        {.name = "block", .handler = block},
        {.name = "counted", .handler = counted},
        {.name = "broken", .handler = broken},
        {.name = "chatty", .handler = chatty},
        {.name = "last", .title = "Last", .handler = counted},
    };
    for (size_t i = 0; i < 5; i++)
        CHECK_INT(tn_server_add_tool(server, &tools[i], NULL), 0);
    CHECK_INT(tn_server_set_page_size(server, 2), 0);

    int in[2], out[2];
    CHECK_INT(pipe(in), 0);
    CHECK_INT(pipe(out), 0);
    peer = (peer_t){.to = in[1], .from = out[0]};
    int server_fds[2] = {in[0], out[1]};
    pthread_t thread;
    pthread_create(&thread, NULL, run, server_fds);

    /* Unknown versions get the newest; known ones are echoed. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"2030-01-01\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
           "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{"
           "\"tools\":{\"listChanged\":false},\"logging\":{}},"
           "\"serverInfo\":{\"name\":\"serve-test\",\"version\":\"9.9\"}}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"2024-11-05\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"result\":{"
           "\"protocolVersion\":\"2024-11-05\",\"capabilities\":{"
           "\"tools\":{\"listChanged\":false},\"logging\":{}},"
           "\"serverInfo\":{\"name\":\"serve-test\",\"version\":\"9.9\"}}}");

    /* Pages of two, the cursor carried back, bad cursors refused. A client
     * response, blank lines and CRLF are taken in stride on the way. */
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":77,"
                               "\"result\":{}}\n\n"), 0);
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\r",
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":["
           "{\"name\":\"block\",\"inputSchema\":{\"type\":\"object\"}},"
           "{\"name\":\"counted\",\"inputSchema\":{\"type\":\"object\"}}],"
           "\"nextCursor\":\"2\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\","
           "\"params\":{\"cursor\":\"2\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":["
           "{\"name\":\"broken\",\"inputSchema\":{\"type\":\"object\"}},"
           "{\"name\":\"chatty\",\"inputSchema\":{\"type\":\"object\"}}],"
           "\"nextCursor\":\"4\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\","
           "\"params\":{\"cursor\":\"4\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"tools\":["
           "{\"name\":\"last\",\"title\":\"Last\","
           "\"inputSchema\":{\"type\":\"object\"}}]}}");
    const char *bad_cursors[] = {"\"5\"", "\"x\"", "\"-1\"", "\"\"", "4"};
    for (size_t i = 0; i < 5; i++) {
        char request[200];
        snprintf(request, sizeof request,
                 "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\","
                 "\"params\":{\"cursor\":%s}}", bad_cursors[i]);
        EXPECT(request, "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{"
                        "\"code\":-32602,\"message\":\"invalid cursor\"}}");
    }

    /* Malformed messages, each answered, none fatal. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
           "\"message\":\"invalid request\"}}");
    EXPECT("{\"jsonrpc\":\"1.0\",\"id\":6,\"method\":\"ping\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":-32600,"
           "\"message\":\"invalid request\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":[]}",
           "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32602,"
           "\"message\":\"params must be an object\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"counted\",\"arguments\":[1]}}",
           "{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":-32602,"
           "\"message\":\"tools/call \\\"arguments\\\" must be an object\"}}");
    EXPECT("[1,2]",
           "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
           "\"message\":\"invalid request: not a JSON-RPC object\"}}");

    /* A handler without a result is an internal error. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"broken\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32603,"
           "\"message\":\"tool \\\"broken\\\" failed without a result\"}}");

    /* Levels below the one set are dropped; progress without a token is
     * not sent. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"logging/setLevel\","
           "\"params\":{\"level\":\"warning\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"logging/setLevel\","
           "\"params\":{\"level\":\"verbose\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":11,\"error\":{\"code\":-32602,"
           "\"message\":\"unknown log level \\\"verbose\\\"\"}}");
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":12,"
                               "\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"chatty\"}}"), 0);
    const char *chatter[] = {
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
        "\"params\":{\"level\":\"warning\",\"logger\":\"serve-test\","
        "\"data\":\"warning 2\"}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
        "\"params\":{\"level\":\"error\",\"logger\":\"serve-test\","
        "\"data\":\"error 3\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{\"content\":["
        "{\"type\":\"text\",\"text\":\"chatted\"}]}}",
    };
    for (size_t i = 0; i < 3; i++) {
        json_t *got = next();
        CHECK_JSON(got, chatter[i]);
        json_decref(got);
    }

    /* With one worker busy, a queued call cancelled before it starts never
     * runs and is never answered; the one after it is. */
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":20,"
                               "\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"block\"}}"), 0);
    gate_wait_for_worker();
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":\"q\","
                               "\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"counted\"}}"), 0);
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\","
                               "\"method\":\"notifications/cancelled\","
                               "\"params\":{\"requestId\":\"q\"}}"), 0);
    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":21,"
                               "\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"last\"}}"), 0);
    /* The reader answers ping while the worker is held. */
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"ping\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":22,\"result\":{}}");
    gate_release();
    json_t *got = next();
    CHECK_JSON(got, "{\"jsonrpc\":\"2.0\",\"id\":20,\"result\":{\"content\":"
                    "[{\"type\":\"text\",\"text\":\"unblocked\"}]}}");
    json_decref(got);
    got = next();
    CHECK_JSON(got, "{\"jsonrpc\":\"2.0\",\"id\":21,\"result\":{\"content\":"
                    "[{\"type\":\"text\",\"text\":\"counted\"}]}}");
    json_decref(got);
    CHECK_INT(counted_runs, 1);

    /* End of input ends the server cleanly, with nothing more said. */
    peer_close_input(&peer);
    char *rest = peer_recv(&peer, TIMEOUT);
    CHECK_STR(rest, NULL);
    free(rest);
    void *rc;
    pthread_join(thread, &rc);
    CHECK_INT(*(int *)rc, 0);
    CHECK_INT(tn_server_serve_fd(server, in[0], out[1]), -1); /* runs once */

    close(in[0]), close(out[0]), close(out[1]);
    free(peer.buf);
    tn_server_free(server);
    return CHECK_DONE();
}
