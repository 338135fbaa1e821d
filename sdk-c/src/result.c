/* CallToolResult builders. */
#include "tn_private.h"

#include <stdlib.h>

static json_t *text_block(const char *text)
{
    return json_pack("{s:s, s:s}", "type", "text", "text", text);
}

json_t *tn_result_content(json_t *content)
{
    if (!json_is_array(content)) {
        json_decref(content);
        return NULL;
    }
    return json_pack("{s:o}", "content", content);
}

json_t *tn_result_text(const char *text)
{
    if (!text)
        return NULL;
    return tn_result_content(json_pack("[o]", text_block(text)));
}

static json_t *vtext(const char *fmt, va_list ap)
{
    char *text = fmt ? tn__vformat(fmt, ap) : NULL;
    json_t *result = text ? tn_result_text(text) : NULL;
    free(text);
    return result;
}

json_t *tn_result_textf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_t *result = vtext(fmt, ap);
    va_end(ap);
    return result;
}

json_t *tn_result_structured(json_t *structured)
{
    if (!structured)
        return NULL;
    char *text = json_dumps(structured, JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *result = text ? tn_result_text(text) : NULL;
    free(text);
    if (!result || json_object_set_new(result, "structuredContent",
                                       structured) != 0) {
        json_decref(result);
        if (!result)
            json_decref(structured);
        return NULL;
    }
    return result;
}

json_t *tn_result_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_t *result = vtext(fmt, ap);
    va_end(ap);
    if (result && json_object_set_new(result, "isError", json_true()) != 0) {
        json_decref(result);
        return NULL;
    }
    return result;
}
