/* The tool registry: checking a tool as it is added and building its
 * tools/list entry once. */
#include "tn_private.h"

#include <stdlib.h>
#include <string.h>

void tn__set_error(tn_error_t *error, const char *fmt, ...)
{
    if (!error)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error->text, sizeof error->text, fmt, ap);
    va_end(ap);
}

/* Parses schema text into a JSON object; NULL text gives NULL, not an
 * error. Returns -1 with the reason in error. */
static int parse_object(const char *what, const char *text, json_t **out,
                        tn_error_t *error)
{
    json_error_t jerr;
    *out = NULL;
    if (!text)
        return 0;
    *out = json_loads(text, 0, &jerr);
    if (!*out) {
        tn__set_error(error, "%s: %s at line %d column %d", what, jerr.text,
                      jerr.line, jerr.column);
        return -1;
    }
    if (!json_is_object(*out)) {
        tn__set_error(error, "%s must be a JSON object", what);
        json_decref(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

static int typed_object(const char *what, const json_t *schema,
                        tn_error_t *error)
{
    const json_t *type = json_object_get(schema, "type");
    if (schema && !(json_is_string(type) &&
                    !strcmp(json_string_value(type), "object"))) {
        tn__set_error(error, "%s must have \"type\": \"object\"", what);
        return -1;
    }
    return 0;
}

static int task_support(const char *value, tn_error_t *error)
{
    if (value && strcmp(value, "optional") && strcmp(value, "required") &&
        strcmp(value, "forbidden")) {
        tn__set_error(error, "task_support \"%.32s\": use \"optional\", "
                             "\"required\" or \"forbidden\"", value);
        return -1;
    }
    return 0;
}

static json_t *tool_definition(const tn_tool_t *tool, tn_error_t *error)
{
    json_t *input = NULL, *output = NULL, *annotations = NULL, *meta = NULL;
    if (task_support(tool->task_support, error) ||
        parse_object("input schema", tool->input_schema, &input, error) ||
        parse_object("output schema", tool->output_schema, &output,
                     error) ||
        parse_object("annotations", tool->annotations, &annotations,
                     error) ||
        parse_object("_meta", tool->meta, &meta, error) ||
        typed_object("input schema", input, error) ||
        typed_object("output schema", output, error))
        goto fail;
    if (!input && !(input = json_pack("{s:s}", "type", "object")))
        goto fail;

    json_t *def = json_pack("{s:s}", "name", tool->name);
    if (!def)
        goto fail;
    if (tool->title)
        json_object_set_new(def, "title", json_string(tool->title));
    if (tool->description)
        json_object_set_new(def, "description",
                            json_string(tool->description));
    json_object_set_new(def, "inputSchema", input);
    if (output)
        json_object_set_new(def, "outputSchema", output);
    if (annotations)
        json_object_set_new(def, "annotations", annotations);
    if (tool->task_support)
        json_object_set_new(def, "execution",
                            json_pack("{s:s}", "taskSupport",
                                      tool->task_support));
    if (meta)
        json_object_set_new(def, "_meta", meta);
    return def;

fail:
    json_decref(input);
    json_decref(output);
    json_decref(annotations);
    json_decref(meta);
    return NULL;
}

int tn__sized(void *copy, size_t copy_size, const void *given,
              size_t given_size, size_t least, const char *type,
              tn_error_t *error)
{
    if (given_size < least) {
        tn__set_error(error, "a %s of %zu bytes is smaller than any tn.h of "
                             "libtn.so.1 makes it (%zu): rebuild against "
                             "this tn.h", type, given_size, least);
        return -1;
    }
    memset(copy, 0, copy_size);
    memcpy(copy, given, given_size < copy_size ? given_size : copy_size);
    return 0;
}

static int add_tool(tn_server_t *server, const tn_tool_t *tool,
                    tn_error_t *error)
{
    tn__set_error(error, "out of memory");
    if (!server || !tool || !tool->name || !tool->handler) {
        tn__set_error(error,
                      "server, tool, tool name and handler are required");
        return -1;
    }
    if (server->started) {
        tn__set_error(error, "tool \"%s\": the server is already running",
                      tool->name);
        return -1;
    }
    if (!tn__valid_tool_name(tool->name)) {
        tn__set_error(error, "tool name \"%.128s\" must be 1-128 characters "
                             "of A-Z a-z 0-9 _ - .", tool->name);
        return -1;
    }
    for (size_t i = 0; i < server->tool_count; i++) {
        if (!strcmp(server->tools[i].name, tool->name)) {
            tn__set_error(error, "tool \"%s\" is already added", tool->name);
            return -1;
        }
    }
    if (server->tool_count == server->tool_capacity) {
        size_t capacity = server->tool_capacity ? 2 * server->tool_capacity
                                                : 8;
        struct tn_tool *tools = realloc(server->tools,
                                        capacity * sizeof *tools);
        if (!tools)
            return -1;
        server->tools = tools;
        server->tool_capacity = capacity;
    }

    tn_error_t reason = {{0}};
    json_t *def = tool_definition(tool, &reason);
    char *name = strdup(tool->name);
    if (!def || !name) {
        if (reason.text[0])
            tn__set_error(error, "tool \"%s\": %s", tool->name, reason.text);
        json_decref(def);
        free(name);
        return -1;
    }
    server->tools[server->tool_count++] = (struct tn_tool){
        .name = name,
        .definition = def,
        .input_schema = json_object_get(def, "inputSchema"),
        .handler = tool->handler,
        .user = tool->user,
    };
    if (error)
        error->text[0] = '\0';
    return 0;
}

int tn_server_add_tool_sized(tn_server_t *server, const tn_tool_t *tool,
                             size_t size, tn_error_t *error)
{
    tn_tool_t copy;
    if (tool && tn__sized(&copy, sizeof copy, tool, size, TN__TOOL_SIZE_1,
                          "tn_tool_t", error) != 0)
        return -1;
    return add_tool(server, tool ? &copy : NULL, error);
}

const struct tn_tool *tn__find_tool(const tn_server_t *server,
                                    const char *name)
{
    for (size_t i = 0; i < server->tool_count; i++)
        if (!strcmp(server->tools[i].name, name))
            return &server->tools[i];
    return NULL;
}
