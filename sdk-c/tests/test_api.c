/* Every entry point given NULL, and the configuration rules of a server. */
#include "check.h"
#include "tn.h"

static json_t *handler(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args, (void)user;
    return tn_result_text("ok");
}

static void null_arguments(void)
{
    /* Through a volatile so the compiler cannot see the NULL formats. */
    const char *volatile none = NULL;
    tn_tool_t tool = {.name = "t", .handler = handler};
    tn_server_t *server = tn_server_new("s", "1");
    CHECK(server != NULL);

    CHECK(tn_server_new(NULL, "1") == NULL);
    CHECK(tn_server_new("s", NULL) == NULL);
    CHECK(tn_server_new("", "1") == NULL);
    tn_server_free(NULL);

    tn_error_t error = {{0}};
    CHECK_INT(tn_server_add_tool(NULL, &tool, &error), -1);
    CHECK(error.text[0] != '\0');
    CHECK_INT(tn_server_add_tool(server, NULL, &error), -1);
    CHECK_INT(tn_server_add_tool(server, NULL, NULL), -1);
    tool.name = NULL;
    CHECK_INT(tn_server_add_tool(server, &tool, &error), -1);
    tool.name = "t";
    tool.handler = NULL;
    CHECK_INT(tn_server_add_tool(server, &tool, &error), -1);

    CHECK_INT(tn_server_set_workers(NULL, 2), -1);
    CHECK_INT(tn_server_set_page_size(NULL, 2), -1);
    CHECK_INT(tn_server_run(NULL), -1);
    CHECK_INT(tn_server_serve_fd(NULL, 0, 1), -1);

    CHECK_INT(tn_cancelled(NULL), 0);
    CHECK_INT(tn_progress(NULL, 1, 2, "x"), -1);
    CHECK_INT(tn_status(NULL, "x"), -1);
    CHECK(tn_call_server(NULL) == NULL);

    CHECK_INT(tn_log(NULL, "info", "x"), -1);
    CHECK_INT(tn_log(server, NULL, "x"), -1);
    CHECK_INT(tn_log(server, "info", none), -1);

    CHECK(tn_result_text(NULL) == NULL);
    CHECK(tn_result_textf(none) == NULL);
    CHECK(tn_result_error(none) == NULL);
    CHECK(tn_result_structured(NULL) == NULL);
    CHECK(tn_result_content(NULL) == NULL);

    tn_server_free(server);
}

static json_t *reader(tn_call_t *call, const char *uri, json_t *vars,
                      void *user)
{
    (void)call, (void)vars, (void)user;
    return tn_read_text(uri, NULL, "x");
}

/* The entry points of resources, prompts and completion given NULL. */
static void null_arguments_beyond_tools(void)
{
    tn_server_t *server = tn_server_new("s", "1");
    tn_error_t error = {{0}};
    tn_resource_t resource = {.uri = "a://b", .name = "b", .handler = reader};
    tn_prompt_t prompt = {.name = "p", .handler = handler};
    const char *const values[] = {"v", NULL};

    int (*const adders[])(tn_server_t *, const tn_resource_t *, size_t,
                          tn_error_t *) = {tn_server_add_resource_sized,
                                           tn_server_add_template_sized};
    const size_t size = sizeof(tn_resource_t);
    for (size_t i = 0; i < 2; i++) {
        CHECK_INT(adders[i](NULL, &resource, size, &error), -1);
        CHECK(error.text[0] != '\0');
        CHECK_INT(adders[i](server, NULL, size, &error), -1);
        CHECK_INT(adders[i](server, NULL, size, NULL), -1);
        tn_resource_t r = resource;
        r.uri = NULL;
        CHECK_INT(adders[i](server, &r, size, &error), -1);
        r = resource;
        r.name = NULL;
        CHECK_INT(adders[i](server, &r, size, &error), -1);
        r = resource;
        r.handler = NULL;
        CHECK_INT(adders[i](server, &r, size, &error), -1);
    }

    CHECK_INT(tn_server_add_prompt(NULL, &prompt, &error), -1);
    CHECK_INT(tn_server_add_prompt(server, NULL, &error), -1);
    CHECK_INT(tn_server_add_prompt(server, NULL, NULL), -1);
    prompt.name = NULL;
    CHECK_INT(tn_server_add_prompt(server, &prompt, &error), -1);
    prompt.name = "p";
    prompt.handler = NULL;
    CHECK_INT(tn_server_add_prompt(server, &prompt, &error), -1);

    CHECK_INT(tn_server_add_completion(NULL, "prompt", "p", "a", values), -1);
    CHECK_INT(tn_server_add_completion(server, NULL, "p", "a", values), -1);
    CHECK_INT(tn_server_add_completion(server, "prompt", NULL, "a", values),
              -1);
    CHECK_INT(tn_server_add_completion(server, "prompt", "p", NULL, values),
              -1);
    CHECK_INT(tn_server_add_completion(server, "prompt", "p", "a", NULL), -1);

    CHECK_INT(tn_resource_updated(NULL, "a://b"), -1);
    CHECK_INT(tn_resource_updated(server, NULL), -1);
    /* Not running: nobody to tell. */
    CHECK_INT(tn_resource_updated(server, "a://b"), 0);
    CHECK_INT(tn_call_capable(NULL, "sampling"), 0);

    CHECK(tn_read_text(NULL, "t/p", "x") == NULL);
    CHECK(tn_read_text("a://b", "t/p", NULL) == NULL);
    CHECK(tn_read_blob(NULL, "t/p", "x", 1) == NULL);
    CHECK(tn_read_blob("a://b", "t/p", NULL, 1) == NULL);
    json_t *empty = tn_read_blob("a://b", NULL, NULL, 0);
    CHECK_JSON(empty, "{\"contents\":[{\"uri\":\"a://b\",\"blob\":\"\"}]}");
    json_decref(empty);
    CHECK(tn_prompt_text(NULL) == NULL);
    CHECK(tn_prompt_messages(NULL) == NULL);

    tn_server_free(server);
}

static void add_tool_rules(void)
{
    static const struct {
        tn_tool_t tool;
        const char *error; /* NULL: accepted */
    } cases[] = {
        {{.name = "ok.name-1_x", .handler = handler}, NULL},
        {{.name = "", .handler = handler},
         "tool name \"\" must be 1-128 characters of A-Z a-z 0-9 _ - ."},
        {{.name = "has space", .handler = handler},
         "tool name \"has space\" must be 1-128 characters of A-Z a-z 0-9 "
         "_ - ."},
        {{.name = "ok.name-1_x", .handler = handler},
         "tool \"ok.name-1_x\" is already added"},
        {{.name = "bad_json", .input_schema = "{", .handler = handler},
         "tool \"bad_json\": input schema: string or '}' expected near end "
         "of file at line 1 column 1"},
        {{.name = "array", .input_schema = "[]", .handler = handler},
         "tool \"array\": input schema must be a JSON object"},
        {{.name = "untyped", .input_schema = "{}", .handler = handler},
         "tool \"untyped\": input schema must have \"type\": \"object\""},
        {{.name = "out", .output_schema = "{\"type\":\"string\"}",
          .handler = handler},
         "tool \"out\": output schema must have \"type\": \"object\""},
        {{.name = "notes", .annotations = "[1]", .handler = handler},
         "tool \"notes\": annotations must be a JSON object"},
        {{.name = "meta", .meta = "[]", .handler = handler},
         "tool \"meta\": _meta must be a JSON object"},
        {{.name = "tasked", .task_support = "required", .handler = handler},
         NULL},
        {{.name = "sometimes", .task_support = "sometimes",
          .handler = handler},
         "tool \"sometimes\": task_support \"sometimes\": use "
         "\"optional\", \"required\" or \"forbidden\""},
        {{.name = "full", .title = "Full", .description = "d",
          .input_schema = "{\"type\":\"object\"}",
          .output_schema = "{\"type\":\"object\"}",
          .annotations = "{\"readOnlyHint\":true}",
          .meta = "{\"io.example/kind\":\"demo\"}", .handler = handler},
         NULL},
    };
    tn_server_t *server = tn_server_new("s", "1");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tn_error_t error = {{0}};
        int rc = tn_server_add_tool(server, &cases[i].tool, &error);
        CHECK_INT(rc, cases[i].error ? -1 : 0);
        CHECK_STR(error.text, cases[i].error ? cases[i].error : "");
    }

    char long_name[130];
    memset(long_name, 'a', 129);
    long_name[129] = '\0';
    tn_tool_t tool = {.name = long_name, .handler = handler};
    CHECK_INT(tn_server_add_tool(server, &tool, NULL), -1);
    long_name[128] = '\0';
    CHECK_INT(tn_server_add_tool(server, &tool, NULL), 0);
    tn_server_free(server);
}

/* The structs a caller fills pass their size (tn.h, "ABI"): a bundle built
 * against a later tn.h, whose structs grew, still adds its tools, the
 * library reading only the fields it knows; one smaller than libtn.so.1's
 * first struct is refused with the reason. */
static void sized_structs(void)
{
    tn_server_t *server = tn_server_new("s", "1");
    tn_error_t error = {{0}};
    struct later_tool {
        tn_tool_t known;
        const char *field_of_a_later_header;
    } later = {{.name = "later", .handler = handler}, "never read"};
    CHECK_INT(tn_server_add_tool_sized(server, &later.known, sizeof later,
                                       &error), 0);
    struct later_resource {
        tn_resource_t known;
        long field_of_a_later_header;
    } resource = {{.uri = "test://r", .name = "r"}, 7};
    resource.known.handler = NULL;
    CHECK_INT(tn_server_add_resource_sized(server, &resource.known,
                                           sizeof resource, &error), -1);

    tn_tool_t tool = {.name = "older", .handler = handler};
    CHECK_INT(tn_server_add_tool_sized(server, &tool,
                                       offsetof(tn_tool_t, task_support),
                                       &error), -1);
    CHECK(strstr(error.text, "rebuild against this tn.h") != NULL);
    tn_prompt_t prompt = {.name = "p", .handler = handler};
    CHECK_INT(tn_server_add_prompt_sized(server, &prompt, 0, &error), -1);
    tn_view_t view = {.uri = "ui://v", .html = "<p>v</p>"};
    CHECK_INT(tn_server_add_view_sized(server, &view, sizeof view - 1,
                                       &error), -1);
    CHECK_INT(tn_server_add_view_sized(server, &view, sizeof view, &error),
              0);
    CHECK_INT(tn_server_add_template_sized(server, NULL, 0, &error), -1);
    tn_server_free(server);
}

static void limits(void)
{
    tn_server_t *server = tn_server_new("s", "1");
    CHECK_INT(tn_server_set_workers(server, 0), -1);
    CHECK_INT(tn_server_set_workers(server, 257), -1);
    CHECK_INT(tn_server_set_workers(server, 256), 0);
    CHECK_INT(tn_server_set_page_size(server, 0), -1);
    CHECK_INT(tn_server_set_page_size(server, 1), 0);
    CHECK_INT(tn_log(server, "loud", "x"), -1);
    /* Not running: the line goes to stderr. */
    CHECK_INT(tn_log(server, "info", "logged before running %d", 1), 0);
    tn_server_free(server);
}

int main(void)
{
    CHECK_STR(TN_VERSION, "0.3.0");
    sized_structs();
    CHECK_INT(TN_VERSION_MAJOR * 10000 + TN_VERSION_MINOR * 100 +
                  TN_VERSION_PATCH,
              300);

    /* The entry points of 0.2 refuse NULL; tn_ask() still takes its
     * argument over. */
    CHECK(tn_ask(NULL, json_object()) == NULL);
    CHECK(tn_elicit(NULL, "k", "m", "{}") == NULL);
    CHECK_INT(tn_call_log(NULL, "info", "x"), -1);
    CHECK_INT(tn_server_set_cache_ttl(NULL, 1), -1);
    tn_server_t *ttl = tn_server_new("s", "1");
    CHECK_INT(tn_server_set_cache_ttl(ttl, -1), -1);
    CHECK_INT(tn_server_set_cache_ttl(ttl, 0), 0);
    tn_server_free(ttl);
    null_arguments();
    null_arguments_beyond_tools();
    add_tool_rules();
    limits();
    return CHECK_DONE();
}
