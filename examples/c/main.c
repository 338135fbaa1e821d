/* The example bundle written with the C SDK; the contract it keeps is in
 * ../README.md. */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tn.h"

#define LAMP_SCHEMA                                                         \
    "{\"type\":\"object\",\"properties\":{\"on\":{\"type\":\"boolean\"}},"  \
    "\"required\":[\"on\"]}"

/* Handlers run on several workers, so the lamp is shared between threads. */
static atomic_bool lamp_on;

static json_t *greet(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)user;
    return tn_result_textf("Hello, %s!",
                           json_string_value(json_object_get(args, "name")));
}

static json_t *lamp_state(void)
{
    return tn_result_structured(json_pack("{s:b}", "on",
                                          atomic_load(&lamp_on)));
}

static json_t *lamp_turn_on(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args, (void)user;
    atomic_store(&lamp_on, 1);
    return lamp_state();
}

static json_t *lamp_status(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args, (void)user;
    return lamp_state();
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Sleeps in 5 ms steps so a cancellation stops it within a few ms. */
static json_t *sleep_tool(tn_call_t *call, json_t *args, void *user)
{
    (void)user;
    json_int_t ms = json_integer_value(json_object_get(args, "ms"));
    tn_call_log(call, "info", "sleeping %lld ms", (long long)ms);
    long long start = now_ms(), next_progress = start + 100;
    for (long long now = start; now - start < ms; now = now_ms()) {
        if (tn_cancelled(call))
            return tn_result_error("cancelled");
        if (now >= next_progress) {
            tn_progress(call, (double)(next_progress - start), (double)ms,
                        NULL);
            next_progress += 100;
        }
        long long left = ms - (now - start);
        struct timespec step = {0, (left < 5 ? left : 5) * 1000000L};
        nanosleep(&step, NULL);
    }
    return tn_result_textf("slept %lld ms", (long long)ms);
}

/* One way to ask in both eras: a request to the client under 2025-11-25,
 * an input_required round under 2026-07-28. */
static json_t *ask_name(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *answer = tn_elicit(
        call, "name", "What is your name?",
        "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
        "\"string\"}},\"required\":[\"name\"]}");
    if (!answer)
        return NULL; /* the SDK answers: input_required, or why not */
    const char *name = json_string_value(
        json_object_get(json_object_get(answer, "content"), "name"));
    const char *action = json_string_value(json_object_get(answer, "action"));
    json_t *result = action && !strcmp(action, "accept") && name
                         ? tn_result_textf("Hello, %s!", name)
                         : tn_result_error("no name given");
    json_decref(answer);
    return result;
}

/* The trace context the call carried, as the SDK hands it out: borrowed
 * strings, copied into the result. */
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

static const tn_tool_t tools[] = {
    {.name = "greet",
     .description = "Greet someone by name.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":"
                     "{\"type\":\"string\",\"description\":\"Who to greet\"}},"
                     "\"required\":[\"name\"]}",
     .handler = greet},
    {.name = "node-lamp.on",
     .description = "Turn the lamp on.",
     .input_schema = "{\"type\":\"object\",\"properties\":{}}",
     .output_schema = LAMP_SCHEMA,
     .handler = lamp_turn_on},
    {.name = "node-lamp.status",
     .description = "Tell whether the lamp is on.",
     .input_schema = "{\"type\":\"object\",\"properties\":{}}",
     .output_schema = LAMP_SCHEMA,
     .handler = lamp_status},
    {.name = "sleep",
     .description =
         "Sleep for ms milliseconds, reporting progress every 100 ms.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"ms\":"
                     "{\"type\":\"integer\",\"minimum\":0,\"maximum\":60000}},"
                     "\"required\":[\"ms\"]}",
     .handler = sleep_tool},
    {.name = "ask-name",
     .description = "Ask the user for their name and greet them.",
     .input_schema = "{\"type\":\"object\",\"properties\":{}}",
     .handler = ask_name},
    {.name = "trace",
     .description = "Tell the W3C trace context the call carried in _meta.",
     .input_schema = "{\"type\":\"object\",\"properties\":{}}",
     .output_schema = "{\"type\":\"object\",\"properties\":{"
                      "\"traceparent\":{\"type\":\"string\"},"
                      "\"tracestate\":{\"type\":\"string\"}}}",
     .handler = trace},
};

int main(void)
{
    tn_server_t *server = tn_server_new("toolnode-example-c", TN_VERSION);
    if (!server)
        return 1;
    /* Several workers, so a long sleep does not hold up other calls. */
    tn_server_set_workers(server, 4);
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        tn_error_t error;
        if (tn_server_add_tool(server, &tools[i], &error) != 0) {
            fprintf(stderr, "example-c: %s\n", error.text);
            tn_server_free(server);
            return 1;
        }
    }
    int rc = tn_server_run(server);
    tn_server_free(server);
    return rc == 0 ? 0 : 1;
}
