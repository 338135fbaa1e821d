/* The echo bundle of the benchmarks, written with the C SDK: `echo` answers
 * the text it is given, so a benchmark over it measures the call path, and
 * `burn` spins for some CPU time, so one over it measures how a pool of
 * processes ("instances" in bundle.json) spreads work over the cores. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <time.h>

#include "tn.h"

static json_t *echo(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)user;
    return tn_result_text(json_string_value(json_object_get(args, "text")));
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time rather than wall time, so that a busy machine makes each call
 * take longer instead of doing less work. Reading the thread's CPU clock is
 * a system call, so it is read only every few thousand steps. */
static json_t *burn(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)user;
    double ms = json_number_value(json_object_get(args, "ms"));
    double end = cpu_ms() + ms;
    volatile unsigned long x = 0;
    while (cpu_ms() < end)
        for (int i = 0; i < 4096; i++)
            x = x * 31 + (unsigned long)i;
    return tn_result_text("burnt");
}

static const tn_tool_t tools[] = {
    {.name = "echo",
     .description = "Answer the text given.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":"
                     "{\"type\":\"string\"}},\"required\":[\"text\"]}",
     .handler = echo},
    {.name = "burn",
     .description = "Spin for ms milliseconds of CPU time.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"ms\":"
                     "{\"type\":\"number\",\"minimum\":0,\"maximum\":1000}},"
                     "\"required\":[\"ms\"]}",
     .handler = burn},
};

/* One worker, the SDK's default: a process runs one call at a time, and only
 * more processes use more cores. */
int main(void)
{
    tn_server_t *server = tn_server_new("echo-c", TN_VERSION);
    if (!server)
        return 1;
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        tn_error_t error;
        if (tn_server_add_tool(server, &tools[i], &error) != 0) {
            fprintf(stderr, "echo-c: %s\n", error.text);
            tn_server_free(server);
            return 1;
        }
    }
    int rc = tn_server_run(server);
    tn_server_free(server);
    return rc == 0 ? 0 : 1;
}
