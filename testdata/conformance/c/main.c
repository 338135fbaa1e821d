/* A bundle offering exactly what the official MCP conformance suite asks of
 * a server, written with the C SDK; ../conformance/README.md tells how the
 * suite is run. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tn.h"

#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"
#define WATCHED "test://watched-resource"
#define TEMPLATE "test://template/{id}/data"

/* A red 1x1 PNG and one silent 16-bit sample of WAV. */
static const unsigned char red_pixel[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
    0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
    0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00,
    0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
#define RED_PIXEL                                                          \
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH" \
    "/iZk9HQAAAABJRU5ErkJggg=="
#define SILENCE                                                            \
    "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA=="
#define IMAGE                                                              \
    "{\"type\":\"image\",\"data\":\"" RED_PIXEL                            \
    "\",\"mimeType\":\"image/png\"}"

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Waits ms milliseconds unless the call is cancelled first; 1 if it was. */
static int pause_ms(tn_call_t *call, long long ms)
{
    struct timespec step = {0, 5 * 1000000L};
    for (long long end = now_ms() + ms; now_ms() < end;) {
        if (tn_cancelled(call))
            return 1;
        nanosleep(&step, NULL);
    }
    return tn_cancelled(call);
}

/* Compact JSON text of value (malloc'd). */
static char *dump(const json_t *value)
{
    return json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* ------------------------------------------------------------------------
 * Tools
 * ------------------------------------------------------------------------ */

/* user: the JSON text of the content blocks to answer with. */
static json_t *fixed(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args;
    return tn_result_content(json_loads(user, 0, NULL));
}

static json_t *with_logging(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    const char *steps[] = {"Tool execution started", "Tool processing data",
                           "Tool execution completed"};
    for (int i = 0; i < 3; i++) {
        if (i && pause_ms(call, 50))
            return NULL;
        tn_call_log(call, "info", "%s", steps[i]);
    }
    return tn_result_text("Tool with logging executed successfully");
}

static json_t *with_progress(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    for (int done = 0; done <= 100; done += 50) {
        if (done && pause_ms(call, 50))
            return NULL;
        char message[64];
        snprintf(message, sizeof message, "Completed step %d of 100", done);
        tn_progress(call, done, 100, message);
    }
    return tn_result_text("Tool with progress executed successfully");
}

static json_t *error_handling(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args, (void)user;
    return tn_result_error(
        "This tool intentionally returns an error for testing");
}

/* The text blocks of a sampling answer, joined by newlines (malloc'd). */
static char *text_of(const json_t *answer)
{
    json_t *content = json_object_get(answer, "content");
    json_t *blocks = json_is_array(content) ? json_incref(content)
                                            : json_pack("[O]", content);
    size_t n = 1, i;
    json_t *b;
    json_array_foreach(blocks, i, b) {
        const char *t = json_string_value(json_object_get(b, "text"));
        n += t ? strlen(t) + 1 : 0;
    }
    char *out = calloc(1, n);
    json_array_foreach(blocks, i, b) {
        const char *t = json_string_value(json_object_get(b, "text"));
        if (out && t && json_is_string(json_object_get(b, "type")) &&
            !strcmp(json_string_value(json_object_get(b, "type")), "text")) {
            if (*out)
                strcat(out, "\n");
            strcat(out, t);
        }
    }
    json_decref(blocks);
    return out;
}

static json_t *sampling(tn_call_t *call, json_t *args, void *user)
{
    (void)user;
    json_t *answers = tn_ask(call, json_pack(
        "{s:{s:s, s:{s:[{s:s, s:{s:s, s:O}}], s:i}}}", "sampling", "method",
        "sampling/createMessage", "params", "messages", "role", "user",
        "content", "type", "text", "text", json_object_get(args, "prompt"),
        "maxTokens", 100));
    if (!answers)
        return NULL;
    char *text = text_of(json_object_get(answers, "sampling"));
    json_t *result = tn_result_textf("LLM response: %s", text ? text : "");
    free(text);
    json_decref(answers);
    return result;
}

/* What an elicitation tool asks: the label of its answer, the message
 * (NULL: the call's "message" argument) and the schema. */
struct elicitation {
    const char *label, *message, *schema;
};

static json_t *elicitation(tn_call_t *call, json_t *args, void *user)
{
    const struct elicitation *e = user;
    const char *message = e->message ? e->message
                                     : json_string_value(json_object_get(
                                           args, "message"));
    json_t *answer = tn_elicit(call, "elicitation", message, e->schema);
    if (!answer)
        return NULL;
    json_t *content = json_object_get(answer, "content");
    char *text = content ? dump(content) : strdup("{}");
    json_t *result = tn_result_textf(
        "%s: action=%s, content=%s", e->label,
        json_string_value(json_object_get(answer, "action")), text);
    free(text);
    json_decref(answer);
    return result;
}

static json_t *schema_2020_12(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)user;
    char *text = dump(args);
    json_t *result = tn_result_textf(
        "JSON Schema 2020-12 tool called with: %s", text);
    free(text);
    return result;
}

static json_t *reconnection(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    if (pause_ms(call, 100))
        return NULL;
    return tn_result_text("Reconnection test completed successfully. If you "
                          "received this, the client properly reconnected "
                          "after stream closure.");
}

/* ------------------------------------------------------------------------
 * The input_required scenarios of 2026-07-28 (SEP-2322); the same tools
 * ask by request under 2025-11-25.
 * ------------------------------------------------------------------------ */

#define ASK_NAME                                                           \
    "{\"method\":\"elicitation/create\",\"params\":{\"message\":"          \
    "\"What is your name?\",\"requestedSchema\":{\"type\":\"object\","     \
    "\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":"        \
    "[\"name\"]}}}"
#define ASK_CAPITAL                                                        \
    "{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":"     \
    "[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":"         \
    "\"What is the capital of France?\"}}],\"maxTokens\":100}}"
#define ASK_ROOTS "{\"method\":\"roots/list\",\"params\":{}}"

/* A string member of the content of an elicitation answer. */
static const char *field(const json_t *answer, const char *name)
{
    const char *s = json_string_value(json_object_get(
        json_object_get(answer, "content"), name));
    return s ? s : "";
}

static json_t *hello(json_t *a)
{
    return tn_result_textf("Hello, %s!",
                           field(json_object_get(a, "user_name"), "name"));
}

static json_t *llm(json_t *a)
{
    char *text = text_of(json_object_get(a, "capital_question"));
    json_t *result = tn_result_textf("LLM response: %s", text ? text : "");
    free(text);
    return result;
}

/* prefix followed by the compact JSON of a's member key. */
static json_t *dumped(json_t *a, const char *key, const char *prefix)
{
    char *text = dump(json_object_get(a, key));
    json_t *result = tn_result_textf("%s%s", prefix, text ? text : "null");
    free(text);
    return result;
}

static json_t *roots(json_t *a)
{
    return dumped(json_object_get(a, "client_roots"), "roots",
                  "Client roots: ");
}

static json_t *confirmed(json_t *a)
{
    return dumped(json_object_get(a, "confirm"), "content",
                  "state-ok: confirmed ");
}

static json_t *counted(json_t *a)
{
    return tn_result_textf("Got %zu answers: %s", json_object_size(a),
                           field(json_object_get(a, "user_name"), "name"));
}

/* A tool asking fixed questions (JSON text) and answering from the
 * client's answers. */
struct asking {
    const char *questions;
    json_t *(*answer)(json_t *answers);
};

static json_t *asking(tn_call_t *call, json_t *args, void *user)
{
    (void)args;
    const struct asking *a = user;
    json_t *answers = tn_ask(call, json_loads(a->questions, 0, NULL));
    if (!answers)
        return NULL;
    json_t *result = a->answer(answers);
    json_decref(answers);
    return result;
}

static json_t *by_capability(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *questions = json_object();
    if (tn_call_capable(call, "elicitation"))
        json_object_set_new(questions, "user_name",
                            json_loads(ASK_NAME, 0, NULL));
    if (tn_call_capable(call, "sampling"))
        json_object_set_new(questions, "capital_question",
                            json_loads(ASK_CAPITAL, 0, NULL));
    json_t *answers = tn_ask(call, questions);
    if (!answers)
        return NULL;
    json_t *result = tn_result_textf("Got %zu answers",
                                     json_object_size(answers));
    json_decref(answers);
    return result;
}

static json_t *multi_round(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *name = tn_elicit(
        call, "step1", "Step 1: What is your name?",
        "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
        "\"string\"}},\"required\":[\"name\"]}");
    if (!name)
        return NULL;
    json_t *colour = tn_elicit(
        call, "step2", "Step 2: What is your favorite color?",
        "{\"type\":\"object\",\"properties\":{\"color\":{\"type\":"
        "\"string\"}},\"required\":[\"color\"]}");
    json_t *result = colour ? tn_result_textf("%s likes %s",
                                              field(name, "name"),
                                              field(colour, "color"))
                            : NULL;
    json_decref(name);
    json_decref(colour);
    return result;
}

/* ------------------------------------------------------------------------
 * Tasks (SEP-2663): the node in front holds the tasks; each tool says
 * whether it allows or requires one, reports its status and asks for input
 * ------------------------------------------------------------------------ */

#define ASK_CONFIRM                                                        \
    "{\"confirm\":{\"method\":\"elicitation/create\",\"params\":{"        \
    "\"message\":\"Delete the file?\",\"requestedSchema\":{\"type\":"      \
    "\"object\",\"properties\":{\"confirm\":{\"type\":\"boolean\"}},"     \
    "\"required\":[\"confirm\"]}}}}"
#define ASK_INPUT(n)                                                       \
    "{\"method\":\"elicitation/create\",\"params\":{\"message\":"         \
    "\"Input " n ", please\",\"requestedSchema\":{\"type\":\"object\","   \
    "\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":"      \
    "[\"name\"]}}}"

static json_t *greet(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)user;
    return tn_result_textf(
        "Hello, %s!", json_string_value(json_object_get(args, "name")));
}

static json_t *slow_compute(tn_call_t *call, json_t *args, void *user)
{
    (void)user;
    double seconds = json_number_value(json_object_get(args, "seconds"));
    const char *label = json_string_value(json_object_get(args, "label"));
    char status[128];
    snprintf(status, sizeof status, "computing %s", label ? label : "");
    tn_status(call, status);
    if (pause_ms(call, (long long)(seconds * 1000)))
        return NULL;
    return tn_result_textf("computed %s in %gs", label ? label : "",
                           seconds);
}

static json_t *failing_job(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    tn_status(call, "working");
    if (pause_ms(call, 1000))
        return NULL;
    return tn_result_error("the job failed, as it always does");
}

/* NULL answers the call with a JSON-RPC error: the task fails. */
static json_t *protocol_error_job(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    tn_status(call, "working");
    return NULL;
}

static json_t *confirm_delete(tn_call_t *call, json_t *args, void *user)
{
    (void)user;
    const char *file = json_string_value(json_object_get(args, "filename"));
    char status[160];
    snprintf(status, sizeof status, "about to delete %s", file ? file : "");
    tn_status(call, status);
    json_t *answers = tn_ask(call, json_loads(ASK_CONFIRM, 0, NULL));
    if (!answers)
        return NULL;
    int yes = json_is_true(json_object_get(
        json_object_get(json_object_get(answers, "confirm"), "content"),
        "confirm"));
    json_decref(answers);
    return tn_result_textf("%s %s", yes ? "deleted" : "kept",
                           file ? file : "");
}

static json_t *multi_input(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    tn_status(call, "asking");
    json_t *answers = tn_ask(
        call, json_pack("{s:o, s:o}", "first",
                        json_loads(ASK_INPUT("1"), 0, NULL), "second",
                        json_loads(ASK_INPUT("2"), 0, NULL)));
    if (!answers)
        return NULL;
    json_t *result = tn_result_textf(
        "%s and %s", field(json_object_get(answers, "first"), "name"),
        field(json_object_get(answers, "second"), "name"));
    json_decref(answers);
    return result;
}

/* Asks a name on the client's request itself, then works on as a task. */
static json_t *with_task(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *answers = tn_ask(call, json_pack("{s:o}", "user_name",
                                             json_loads(ASK_NAME, 0, NULL)));
    if (!answers)
        return NULL;
    char status[160];
    snprintf(status, sizeof status, "greeting %s",
             field(json_object_get(answers, "user_name"), "name"));
    tn_status(call, status);
    json_t *result = pause_ms(call, 200) ? NULL : hello(answers);
    json_decref(answers);
    return result;
}

/* ------------------------------------------------------------------------
 * Resources and prompts
 * ------------------------------------------------------------------------ */

static json_t *static_text(tn_call_t *call, const char *uri, json_t *vars,
                           void *user)
{
    (void)call, (void)vars, (void)user;
    return tn_read_text(uri, "text/plain",
                        "This is the content of the static text resource.");
}

static json_t *static_binary(tn_call_t *call, const char *uri, json_t *vars,
                             void *user)
{
    (void)call, (void)vars, (void)user;
    return tn_read_blob(uri, "image/png", red_pixel, sizeof red_pixel);
}

static json_t *watched(tn_call_t *call, const char *uri, json_t *vars,
                       void *user)
{
    (void)call, (void)vars, (void)user;
    char text[64];
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(text, sizeof text,
             "Watched resource content at %Y-%m-%dT%H:%M:%SZ", &utc);
    return tn_read_text(uri, "text/plain", text);
}

static json_t *template_data(tn_call_t *call, const char *uri, json_t *vars,
                             void *user)
{
    (void)call, (void)user;
    const char *id = json_string_value(json_object_get(vars, "id"));
    char data[256];
    snprintf(data, sizeof data, "Data for ID: %s", id);
    json_t *body = json_pack("{s:s, s:b, s:s}", "id", id, "templateTest", 1,
                             "data", data);
    char *text = dump(body);
    json_t *result = text ? tn_read_text(uri, "application/json", text)
                          : NULL;
    free(text);
    json_decref(body);
    return result;
}

/* user: the text of the prompt's one message. */
static json_t *simple_prompt(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args;
    return tn_prompt_text(user);
}

static json_t *prompt_with_arguments(tn_call_t *call, json_t *args,
                                     void *user)
{
    (void)call, (void)user;
    char text[512];
    snprintf(text, sizeof text,
             "Prompt with arguments: arg1='%s', arg2='%s'",
             json_string_value(json_object_get(args, "arg1")),
             json_string_value(json_object_get(args, "arg2")));
    return tn_prompt_text(text);
}

static json_t *prompt_with_resource(tn_call_t *call, json_t *args,
                                    void *user)
{
    (void)call, (void)user;
    return tn_prompt_messages(json_pack(
        "[{s:s, s:{s:s, s:{s:O, s:s, s:s}}}, {s:s, s:{s:s, s:s}}]", "role",
        "user", "content", "type", "resource", "resource", "uri",
        json_object_get(args, "resourceUri"), "mimeType", "text/plain",
        "text", "Embedded resource content for testing.", "role", "user",
        "content", "type", "text", "text",
        "Please process the embedded resource above."));
}

static json_t *prompt_with_image(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args, (void)user;
    return tn_prompt_messages(json_pack(
        "[{s:s, s:o}, {s:s, s:{s:s, s:s}}]", "role", "user", "content",
        json_loads(IMAGE, 0, NULL), "role", "user", "content", "type", "text",
        "text", "Please analyze the image above."));
}

static json_t *prompt_asking(tn_call_t *call, json_t *args, void *user)
{
    (void)args, (void)user;
    json_t *answer = tn_elicit(
        call, "user_context", "What context should the prompt use?",
        "{\"type\":\"object\",\"properties\":{\"context\":{\"type\":"
        "\"string\"}},\"required\":[\"context\"]}");
    if (!answer)
        return NULL;
    char text[512];
    snprintf(text, sizeof text, "Context: %s", field(answer, "context"));
    json_decref(answer);
    return tn_prompt_text(text);
}

static void *watch(void *server)
{
    for (;;) {
        struct timespec three = {3, 0};
        nanosleep(&three, NULL);
        tn_resource_updated(server, WATCHED);
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * The catalogue
 * ------------------------------------------------------------------------ */

#define TEXT(t) "{\"type\":\"text\",\"text\":\"" t "\"}"
#define EMBEDDED(uri, mime, t)                                             \
    "{\"type\":\"resource\",\"resource\":{\"uri\":\"" uri                  \
    "\",\"mimeType\":\"" mime "\",\"text\":\"" t "\"}}"

static const struct elicitation ask_user = {
    "User response", NULL,
    "{\"type\":\"object\",\"properties\":{"
    "\"username\":{\"type\":\"string\",\"description\":\"User's response\"},"
    "\"email\":{\"type\":\"string\",\"description\":\"User's email "
    "address\"}},\"required\":[\"username\",\"email\"]}"};

static const struct elicitation ask_defaults = {
    "Elicitation completed",
    "Please review and update the form fields with defaults",
    "{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"description\":\"User name\","
    "\"default\":\"John Doe\"},"
    "\"age\":{\"type\":\"integer\",\"description\":\"User age\","
    "\"default\":30},"
    "\"score\":{\"type\":\"number\",\"description\":\"User score\","
    "\"default\":95.5},"
    "\"status\":{\"type\":\"string\",\"description\":\"User status\","
    "\"enum\":[\"active\",\"inactive\",\"pending\"],\"default\":\"active\"},"
    "\"verified\":{\"type\":\"boolean\",\"description\":\"Verification "
    "status\",\"default\":true}},\"required\":[]}"};

#define TITLED(word)                                                       \
    "[{\"const\":\"value1\",\"title\":\"First " word "\"},"                \
    "{\"const\":\"value2\",\"title\":\"Second " word "\"},"                \
    "{\"const\":\"value3\",\"title\":\"Third " word "\"}]"

static const struct elicitation ask_enums = {
    "Elicitation completed", "Please select options from the enum fields",
    "{\"type\":\"object\",\"properties\":{"
    "\"untitledSingle\":{\"type\":\"string\",\"description\":\"Select one "
    "option\",\"enum\":[\"option1\",\"option2\",\"option3\"]},"
    "\"titledSingle\":{\"type\":\"string\",\"description\":\"Select one "
    "option with titles\",\"oneOf\":" TITLED("Option") "},"
    "\"legacyEnum\":{\"type\":\"string\",\"description\":\"Select one "
    "option (legacy)\",\"enum\":[\"opt1\",\"opt2\",\"opt3\"],"
    "\"enumNames\":[\"Option One\",\"Option Two\",\"Option Three\"]},"
    "\"untitledMulti\":{\"type\":\"array\",\"description\":\"Select "
    "multiple options\",\"minItems\":1,\"maxItems\":3,\"items\":{\"type\":"
    "\"string\",\"enum\":[\"option1\",\"option2\",\"option3\"]}},"
    "\"titledMulti\":{\"type\":\"array\",\"description\":\"Select multiple "
    "options with titles\",\"minItems\":1,\"maxItems\":3,\"items\":"
    "{\"anyOf\":" TITLED("Choice") "}}},\"required\":[]}"};

static const struct asking ask_hello = {"{\"user_name\":" ASK_NAME "}",
                                        hello};
static const struct asking ask_llm = {
    "{\"capital_question\":" ASK_CAPITAL "}", llm};
static const struct asking ask_roots = {"{\"client_roots\":" ASK_ROOTS "}",
                                        roots};
static const struct asking ask_confirm = {
    "{\"confirm\":{\"method\":\"elicitation/create\",\"params\":{"
    "\"message\":\"Please confirm\",\"requestedSchema\":{\"type\":"
    "\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},"
    "\"required\":[\"ok\"]}}}}",
    confirmed};
static const struct asking ask_many = {
    "{\"user_name\":" ASK_NAME ",\"client_roots\":" ASK_ROOTS
    ",\"greeting\":{\"method\":\"sampling/createMessage\",\"params\":{"
    "\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","
    "\"text\":\"Generate a greeting\"}}],\"maxTokens\":50}}}",
    counted};

#define ASKS(n, a)                                                         \
    {.name = n, .description = "Asks for input (SEP-2322)",                \
     .input_schema = NO_ARGS, .handler = asking, .user = (void *)&a}

static const tn_tool_t tools[] = {
    {.name = "test_simple_text",
     .description = "Tests simple text content response",
     .input_schema = NO_ARGS, .handler = fixed,
     .user =
         (void *)"[" TEXT("This is a simple text response for testing.") "]"},
    {.name = "test_image_content",
     .description = "Tests image content response", .input_schema = NO_ARGS,
     .handler = fixed, .user = (void *)"[" IMAGE "]"},
    {.name = "test_audio_content",
     .description = "Tests audio content response", .input_schema = NO_ARGS,
     .handler = fixed,
     .user = (void *)"[{\"type\":\"audio\",\"data\":\"" SILENCE
             "\",\"mimeType\":\"audio/wav\"}]"},
    {.name = "test_embedded_resource",
     .description = "Tests embedded resource content response",
     .input_schema = NO_ARGS, .handler = fixed,
     .user = (void *)"[" EMBEDDED("test://embedded-resource", "text/plain",
                          "This is an embedded resource content.") "]"},
    {.name = "test_multiple_content_types",
     .description =
         "Tests response with multiple content types (text, image, resource)",
     .input_schema = NO_ARGS, .handler = fixed,
     .user = (void *)"[" TEXT("Multiple content types test:") "," IMAGE
             "," EMBEDDED("test://mixed-content-resource", "application/json",
                          "{\\\"test\\\":\\\"data\\\","
                          "\\\"value\\\":123}") "]"},
    {.name = "test_tool_with_logging",
     .description = "Tests tool that emits log messages during execution",
     .input_schema = NO_ARGS, .handler = with_logging},
    /* The stateless scenario's probe: log messages of a request that names
     * no log level must not reach the client. */
    {.name = "test_logging_tool",
     .description = "Emits log messages during execution",
     .input_schema = NO_ARGS, .handler = with_logging},
    {.name = "test_tool_with_progress",
     .description = "Tests tool that reports progress notifications",
     .input_schema = NO_ARGS, .handler = with_progress},
    {.name = "test_error_handling",
     .description = "Tests error response handling", .input_schema = NO_ARGS,
     .handler = error_handling},
    {.name = "test_sampling",
     .description = "Tests server-initiated sampling (LLM completion request)",
     .input_schema =
         "{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":"
         "\"string\",\"description\":\"The prompt to send to the LLM\"}},"
         "\"required\":[\"prompt\"]}",
     .handler = sampling},
    {.name = "test_elicitation",
     .description = "Tests server-initiated elicitation (user input request)",
     .input_schema =
         "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":"
         "\"string\",\"description\":\"The message to show the user\"}},"
         "\"required\":[\"message\"]}",
     .handler = elicitation, .user = (void *)&ask_user},
    {.name = "test_elicitation_sep1034_defaults",
     .description = "Tests elicitation with default values per SEP-1034",
     .input_schema = NO_ARGS, .handler = elicitation,
     .user = (void *)&ask_defaults},
    {.name = "test_elicitation_sep1330_enums",
     .description =
         "Tests elicitation with enum schema improvements per SEP-1330",
     .input_schema = NO_ARGS, .handler = elicitation,
     .user = (void *)&ask_enums},
    {.name = "json_schema_2020_12_tool",
     .description = "Tool with JSON Schema 2020-12 features",
     .input_schema =
         "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
         "\"type\":\"object\",\"$defs\":{\"address\":{\"type\":\"object\","
         "\"properties\":{\"street\":{\"type\":\"string\"},\"city\":"
         "{\"type\":\"string\"}}}},\"properties\":{\"name\":{\"type\":"
         "\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"}},"
         "\"additionalProperties\":false}",
     .handler = schema_2020_12},
    {.name = "test_reconnection",
     .description = "Tests SSE stream disconnection and client reconnection "
                    "(SEP-1699)",
     .input_schema = NO_ARGS, .handler = reconnection},
    ASKS("test_input_required_result_elicitation", ask_hello),
    ASKS("test_input_required_result_tampered_state", ask_hello),
    ASKS("test_input_required_result_sampling", ask_llm),
    ASKS("test_input_required_result_list_roots", ask_roots),
    ASKS("test_input_required_result_request_state", ask_confirm),
    ASKS("test_input_required_result_multiple_inputs", ask_many),
    /* The stateless scenario's probe: what a call asks for comes back as an
     * input_required result, never as a request of its own. */
    ASKS("test_streaming_elicitation", ask_hello),
    ASKS("test_missing_capability", ask_llm),
    {.name = "test_input_required_result_capabilities",
     .description = "Asks only what the client can answer",
     .input_schema = NO_ARGS, .handler = by_capability},
    {.name = "test_input_required_result_multi_round",
     .description = "Asks for input twice (SEP-2322)",
     .input_schema = NO_ARGS, .handler = multi_round},
    {.name = "greet", .description = "Greets someone at once; never a task",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":"
                     "{\"type\":\"string\"}},\"required\":[\"name\"]}",
     .handler = greet, .task_support = "forbidden"},
    {.name = "slow_compute", .description = "Computes for the given seconds",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"seconds\":"
                     "{\"type\":\"number\"},\"label\":{\"type\":"
                     "\"string\"}}}",
     .handler = slow_compute, .task_support = "optional"},
    {.name = "failing_job", .description = "Fails as a tool after a second",
     .input_schema = NO_ARGS, .handler = failing_job,
     .task_support = "required"},
    {.name = "protocol_error_job",
     .description = "Fails with a JSON-RPC error", .input_schema = NO_ARGS,
     .handler = protocol_error_job, .task_support = "optional"},
    {.name = "confirm_delete", .description = "Asks to confirm a deletion",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"filename\":"
                     "{\"type\":\"string\"}}}",
     .handler = confirm_delete, .task_support = "optional"},
    {.name = "multi_input", .description = "Asks two questions at once",
     .input_schema = NO_ARGS, .handler = multi_input,
     .task_support = "optional"},
    {.name = "test_tool_with_task",
     .description = "Asks a name, then works on as a task",
     .input_schema = NO_ARGS, .handler = with_task,
     .task_support = "required"},
};

static const tn_resource_t resources[] = {
    {.uri = "test://static-text", .name = "static-text",
     .title = "Static Text Resource",
     .description = "A static text resource for testing",
     .mime_type = "text/plain", .handler = static_text},
    {.uri = "test://static-binary", .name = "static-binary",
     .title = "Static Binary Resource",
     .description = "A static binary resource (image) for testing",
     .mime_type = "image/png", .handler = static_binary},
    {.uri = WATCHED, .name = "watched-resource", .title = "Watched Resource",
     .description =
         "A resource that is updated every 3 seconds; subscribe to hear of it",
     .mime_type = "text/plain", .handler = watched},
};

static const tn_prompt_t prompts[] = {
    {.name = "test_simple_prompt", .title = "Simple Test Prompt",
     .description = "A simple prompt without arguments",
     .handler = simple_prompt,
     .user = (void *)"This is a simple prompt for testing."},
    {.name = "test_prompt_with_arguments", .title = "Prompt With Arguments",
     .description = "A prompt with required arguments",
     .arguments = "[{\"name\":\"arg1\",\"description\":\"First test "
                  "argument\",\"required\":true},{\"name\":\"arg2\","
                  "\"description\":\"Second test argument\",\"required\":"
                  "true}]",
     .handler = prompt_with_arguments},
    {.name = "test_prompt_with_embedded_resource",
     .title = "Prompt With Embedded Resource",
     .description = "A prompt that includes an embedded resource",
     .arguments = "[{\"name\":\"resourceUri\",\"description\":\"URI of the "
                  "resource to embed\",\"required\":true}]",
     .handler = prompt_with_resource},
    {.name = "test_prompt_with_image", .title = "Prompt With Image",
     .description = "A prompt that includes image content",
     .handler = prompt_with_image},
    {.name = "test_input_required_result_prompt",
     .description = "A prompt that asks for input (SEP-2322)",
     .handler = prompt_asking},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int main(void)
{
    tn_server_t *server = tn_server_new("toolnode-conformance-c", "0.1.0");
    if (!server)
        return 1;
    tn_error_t error = {{0}};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < COUNT(tools); i++)
        rc = tn_server_add_tool(server, &tools[i], &error);
    for (size_t i = 0; rc == 0 && i < COUNT(resources); i++)
        rc = tn_server_add_resource(server, &resources[i], &error);
    tn_resource_t template = {
        .uri = TEMPLATE, .name = "template", .title = "Resource Template",
        .description = "A resource template with parameter substitution",
        .mime_type = "application/json", .handler = template_data};
    if (rc == 0)
        rc = tn_server_add_template(server, &template, &error);
    for (size_t i = 0; rc == 0 && i < COUNT(prompts); i++)
        rc = tn_server_add_prompt(server, &prompts[i], &error);
    const char *const ids[] = {"1", "12", "123", NULL};
    const char *const args[] = {"paris", "park", "party", "test",
                                "testValue1", NULL};
    if (rc == 0 &&
        (tn_server_add_completion(server, "resource", TEMPLATE, "id", ids) ||
         tn_server_add_completion(server, "prompt",
                                  "test_prompt_with_arguments", "arg1",
                                  args)))
        snprintf(error.text, sizeof error.text, "completion"), rc = -1;
    /* Calls of several clients interleave: the asking ones wait on them. */
    if (rc == 0)
        rc = tn_server_set_workers(server, 8);
    if (rc != 0) {
        fprintf(stderr, "conformance-c: %s\n", error.text);
        tn_server_free(server);
        return 1;
    }
    pthread_t watcher;
    if (pthread_create(&watcher, NULL, watch, server) == 0)
        pthread_detach(watcher);
    rc = tn_server_run(server);
    /* The watcher runs until the process exits; the server stays. */
    return rc == 0 ? 0 : 1;
}
