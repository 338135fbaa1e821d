/* Drives a bundle as a real child process over pipes.
 *
 *   e2e example CMD...   the contract of ../../examples/README.md
 *   e2e noisy CMD...     stdout protection, against tests/noisy.c
 *
 * CMD may be wrapped, e.g. in valgrind: the child's exit status is checked,
 * so valgrind's --error-exitcode fails the test. */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "tn.h"

#define TIMEOUT 60000 /* generous: the child may run under valgrind */

static peer_t peer;
static json_t *notes; /* notifications seen while waiting for answers */
static json_t *unexpected_ids; /* answers nobody waited for */

/* Every line on the child's stdout must be a JSON-RPC 2.0 message. */
static json_t *next_message(int timeout_ms)
{
    char *line = peer_recv(&peer, timeout_ms);
    if (!line)
        return NULL;
    json_t *msg = json_loads(line, 0, NULL);
    if (!msg || strcmp(json_string_value(json_object_get(msg, "jsonrpc"))
                           ? json_string_value(json_object_get(msg,
                                                               "jsonrpc"))
                           : "",
                       "2.0") != 0) {
        fprintf(stderr, "not a JSON-RPC line on stdout: %.200s\n", line);
        check_failures++;
    }
    free(line);
    return msg;
}

static void send_line(const char *fmt, ...)
{
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    CHECK_INT(peer_send(&peer, line), 0);
}

/* Waits for the answer to id, keeping notifications in `notes`. */
static json_t *answer(json_int_t id)
{
    for (;;) {
        json_t *msg = next_message(TIMEOUT);
        if (!msg) {
            fprintf(stderr, "no answer for id %lld\n", (long long)id);
            check_failures++;
            return json_object();
        }
        json_t *got = json_object_get(msg, "id");
        if (json_is_integer(got) && json_integer_value(got) == id)
            return msg;
        if (got)
            json_array_append(unexpected_ids, got);
        else
            json_array_append(notes, msg);
        json_decref(msg);
    }
}

static json_t *call(json_int_t id, const char *method, const char *params)
{
    send_line("{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"%s\","
              "\"params\":%s}", (long long)id, method, params);
    return answer(id);
}

#define CHECK_CALL(id, method, params, want)                               \
    do {                                                                   \
        json_t *reply_ = call(id, method, params);                         \
        CHECK_JSON(reply_, want);                                          \
        json_decref(reply_);                                               \
    } while (0)

static const char *text_of(const json_t *msg)
{
    return json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(msg, "result"),
                                       "content"), 0),
        "text"));
}

static void handshake(const char *name)
{
    char want[512];
    snprintf(want, sizeof want,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
             "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{"
             "\"tools\":{\"listChanged\":false},\"logging\":{}},"
             "\"serverInfo\":{\"name\":\"%s\",\"version\":\"%s\"}}}",
             name, TN_VERSION);
    CHECK_CALL(1, "initialize",
               "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
               "\"clientInfo\":{\"name\":\"e2e\",\"version\":\"1\"}}",
               want);
    send_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static void contract(void)
{
    handshake("toolnode-example-c");
    CHECK_CALL(2, "ping", "{}", "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");

    json_t *list = call(3, "tools/list", "{}");
    CHECK(json_object_get(json_object_get(list, "result"), "nextCursor") ==
          NULL);
    const char *lamp = "{\"type\":\"object\",\"properties\":{\"on\":"
                       "{\"type\":\"boolean\"}},\"required\":[\"on\"]}";
    const char *want[][3] = {
        {"greet",
         "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
         "\"description\":\"Who to greet\"}},\"required\":[\"name\"]}",
         NULL},
        {"node-lamp.on", "{\"type\":\"object\",\"properties\":{}}", lamp},
        {"node-lamp.status", "{\"type\":\"object\",\"properties\":{}}", lamp},
        {"sleep",
         "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\","
         "\"minimum\":0,\"maximum\":60000}},\"required\":[\"ms\"]}",
         NULL},
        {"ask-name", "{\"type\":\"object\",\"properties\":{}}", NULL},
        {"trace", "{\"type\":\"object\",\"properties\":{}}",
         "{\"type\":\"object\",\"properties\":{\"traceparent\":{\"type\":"
         "\"string\"},\"tracestate\":{\"type\":\"string\"}}}"},
    };
    json_t *tools = json_object_get(json_object_get(list, "result"), "tools");
    CHECK_INT(json_array_size(tools), 6);
    for (size_t i = 0; i < 6 && i < json_array_size(tools); i++) {
        json_t *tool = json_array_get(tools, i);
        CHECK_STR(json_string_value(json_object_get(tool, "name")),
                  want[i][0]);
        CHECK_JSON(json_object_get(tool, "inputSchema"), want[i][1]);
        if (want[i][2])
            CHECK_JSON(json_object_get(tool, "outputSchema"), want[i][2]);
        else
            CHECK(json_object_get(tool, "outputSchema") == NULL);
    }
    json_decref(list);

    CHECK_CALL(4, "tools/call",
               "{\"name\":\"greet\",\"arguments\":{\"name\":\"Ada\"}}",
               "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":"
               "[{\"type\":\"text\",\"text\":\"Hello, Ada!\"}]}}");
    CHECK_CALL(5, "tools/call", "{\"name\":\"greet\",\"arguments\":{}}",
               "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":"
               "[{\"type\":\"text\",\"text\":"
               "\"missing required argument \\\"name\\\"\"}],"
               "\"isError\":true}}");
    CHECK_CALL(6, "tools/call",
               "{\"name\":\"greet\",\"arguments\":{\"name\":7}}",
               "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"content\":"
               "[{\"type\":\"text\",\"text\":"
               "\"argument \\\"name\\\" must be a string\"}],"
               "\"isError\":true}}");
    CHECK_CALL(7, "tools/call",
               "{\"name\":\"sleep\",\"arguments\":{\"ms\":60001}}",
               "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":"
               "[{\"type\":\"text\",\"text\":"
               "\"argument \\\"ms\\\" must be at most 60000\"}],"
               "\"isError\":true}}");

    const char *off = "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"content\":"
                      "[{\"type\":\"text\",\"text\":\"{\\\"on\\\":false}\"}],"
                      "\"structuredContent\":{\"on\":false}}}";
    CHECK_CALL(8, "tools/call", "{\"name\":\"node-lamp.status\"}", off);
    CHECK_CALL(9, "tools/call",
               "{\"name\":\"node-lamp.on\",\"arguments\":{}}",
               "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"content\":"
               "[{\"type\":\"text\",\"text\":\"{\\\"on\\\":true}\"}],"
               "\"structuredContent\":{\"on\":true}}}");
    CHECK_CALL(10, "tools/call", "{\"name\":\"node-lamp.status\"}",
               "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{\"content\":"
               "[{\"type\":\"text\",\"text\":\"{\\\"on\\\":true}\"}],"
               "\"structuredContent\":{\"on\":true}}}");

    CHECK_CALL(11, "tools/call", "{\"name\":\"no.such-tool\"}",
               "{\"jsonrpc\":\"2.0\",\"id\":11,\"error\":{\"code\":-32602,"
               "\"message\":\"unknown tool \\\"no.such-tool\\\"\"}}");
    CHECK_CALL(12, "tools/call", "{\"arguments\":{}}",
               "{\"jsonrpc\":\"2.0\",\"id\":12,\"error\":{\"code\":-32602,"
               "\"message\":\"tools/call needs a string \\\"name\\\"\"}}");
    CHECK_CALL(13, "resources/list", "{}",
               "{\"jsonrpc\":\"2.0\",\"id\":13,\"error\":{\"code\":-32601,"
               "\"message\":\"method not found: resources/list\"}}");
    CHECK_CALL(14, "logging/setLevel", "{\"level\":\"error\"}",
               "{\"jsonrpc\":\"2.0\",\"id\":14,\"result\":{}}");

    /* Bad lines: each gets its error, then the session goes on. */
    const char *bad[][2] = {
        {"this is not json", "-32700"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,", "-32700"},
        {"42", "-32600"},
        {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "-32600"},
        {"{\"id\":15,\"method\":\"ping\"}", "-32600"},
    };
    for (size_t i = 0; i < 5; i++) {
        send_line("%s", bad[i][0]);
        json_t *msg = next_message(TIMEOUT);
        json_t *id = json_object_get(msg, "id");
        CHECK_INT(json_integer_value(json_object_get(
                      json_object_get(msg, "error"), "code")),
                  atoi(bad[i][1]));
        CHECK(i == 4 ? json_integer_value(id) == 15 : json_is_null(id));
        json_decref(msg);
    }
    CHECK_CALL(16, "ping", "{}",
               "{\"jsonrpc\":\"2.0\",\"id\":16,\"result\":{}}");
}

static void progress_and_concurrency(void)
{
    /* Progress every 100 ms with the token; meanwhile ping is answered at
     * once, before the sleep ends. */
    json_array_clear(notes);
    long long start = peer_now_ms();
    send_line("{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":450},"
              "\"_meta\":{\"progressToken\":\"tok-20\"}}}");
    CHECK_CALL(21, "ping", "{}",
               "{\"jsonrpc\":\"2.0\",\"id\":21,\"result\":{}}");
    json_t *done = answer(20);
    CHECK_STR(text_of(done), "slept 450 ms");
    CHECK(peer_now_ms() - start >= 450);
    json_decref(done);

    CHECK_INT(json_array_size(notes), 4);
    size_t i;
    json_t *note;
    json_array_foreach(notes, i, note) {
        char want[200];
        snprintf(want, sizeof want,
                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                 "\"params\":{\"progressToken\":\"tok-20\",\"progress\":%zu,"
                 "\"total\":450,\"_meta\":{\"io.toolnode/request\":20}}}",
                 (i + 1) * 100);
        CHECK_JSON(note, want);
    }

    /* Without a token, no progress. */
    json_array_clear(notes);
    CHECK_CALL(22, "tools/call",
               "{\"name\":\"sleep\",\"arguments\":{\"ms\":250}}",
               "{\"jsonrpc\":\"2.0\",\"id\":22,\"result\":{\"content\":"
               "[{\"type\":\"text\",\"text\":\"slept 250 ms\"}]}}");
    CHECK_INT(json_array_size(notes), 0);
}

static void large_line(void)
{
    size_t n = 10u << 20;
    char *name = malloc(n + 1);
    memset(name, 'x', n);
    name[n] = '\0';
    json_t *req = json_pack("{s:s, s:i, s:s, s:{s:s, s:{s:s}}}", "jsonrpc",
                            "2.0", "id", 30, "method", "tools/call",
                            "params", "name", "greet", "arguments", "name",
                            name);
    char *line = json_dumps(req, JSON_COMPACT);
    CHECK_INT(peer_send(&peer, line), 0);
    json_t *msg = answer(30);
    const char *text = text_of(msg);
    CHECK_INT(text ? strlen(text) : 0, n + 8);
    CHECK(text && !strncmp(text, "Hello, xxx", 10) && text[n + 7] == '!');
    json_decref(msg);
    json_decref(req);
    free(line);
    free(name);
}

/* Cancels a long sleep in flight: no answer may ever come for it, and the
 * bundle must exit long before the sleep would have ended. */
static void cancel_and_exit(void)
{
    json_array_clear(notes);
    send_line("{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":30000},"
              "\"_meta\":{\"progressToken\":40}}}");
    json_t *first = next_message(TIMEOUT); /* the sleep is running */
    CHECK_STR(json_string_value(json_object_get(first, "method")),
              "notifications/progress");
    json_decref(first);
    send_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
              "\"params\":{\"requestId\":40,\"reason\":\"test\"}}");
    CHECK_CALL(41, "ping", "{}",
               "{\"jsonrpc\":\"2.0\",\"id\":41,\"result\":{}}");

    long long start = peer_now_ms();
    peer_close_input(&peer);
    json_t *msg;
    while ((msg = next_message(TIMEOUT)) != NULL) {
        CHECK(json_object_get(msg, "id") == NULL);
        json_decref(msg);
    }
    CHECK_INT(peer_finish(&peer, TIMEOUT), 0);
    long long took = peer_now_ms() - start;
    if (took >= 20000)
        fprintf(stderr, "exit took %lld ms after cancelling\n", took);
    CHECK(took < 20000);
}

static void noisy(int err_fd)
{
    handshake("noisy");
    CHECK_CALL(2, "tools/call", "{\"name\":\"shout\"}",
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":"
               "[{\"type\":\"text\",\"text\":\"shouted\"}]}}");
    CHECK_CALL(3, "ping", "{}", "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");
    peer_close_input(&peer);
    json_t *msg = next_message(TIMEOUT);
    CHECK(msg == NULL);
    json_decref(msg);
    CHECK_INT(peer_finish(&peer, TIMEOUT), 0);

    /* All of it went to stderr instead. */
    char err[65536];
    ssize_t n = pread(err_fd, err, sizeof err - 1, 0);
    err[n > 0 ? n : 0] = '\0';
    const char *expected[] = {
        "banner printed before the server starts", "printf from a handler",
        "puts from a handler", "fwrite without newline", "write(2) to fd 1",
        "printf after the server stopped"};
    for (size_t i = 0; i < 6; i++) {
        if (!strstr(err, expected[i]))
            fprintf(stderr, "stderr lacks \"%s\":\n%s\n", expected[i], err);
        CHECK(strstr(err, expected[i]) != NULL);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "example") && strcmp(argv[1], "noisy"))) {
        fprintf(stderr, "usage: e2e example|noisy CMD...\n");
        return 2;
    }
    notes = json_array();
    unexpected_ids = json_array();

    char path[] = "/tmp/tn-e2e-stderr-XXXXXX";
    int err_fd = -1;
    if (!strcmp(argv[1], "noisy")) {
        err_fd = mkstemp(path);
        unlink(path);
    }
    if (peer_spawn(&peer, argv + 2, err_fd) != 0) {
        perror("e2e: spawn");
        return 1;
    }
    if (!strcmp(argv[1], "noisy")) {
        noisy(err_fd);
    } else {
        contract();
        progress_and_concurrency();
        large_line();
        cancel_and_exit();
    }
    if (json_array_size(unexpected_ids) > 0) {
        char *ids = json_dumps(unexpected_ids, JSON_COMPACT);
        fprintf(stderr, "answers nobody asked for: %s\n", ids);
        free(ids);
        check_failures++;
    }
    json_decref(notes);
    json_decref(unexpected_ids);
    return CHECK_DONE();
}
