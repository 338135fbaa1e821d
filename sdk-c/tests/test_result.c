/* The result builders. */
#include "check.h"
#include "tn.h"

int main(void)
{
    json_t *r;

    r = tn_result_text("hi \"there\"\nline two");
    CHECK_JSON(r, "{\"content\":[{\"type\":\"text\","
                  "\"text\":\"hi \\\"there\\\"\\nline two\"}]}");
    json_decref(r);

    r = tn_result_textf("slept %d ms", 40);
    CHECK_JSON(r, "{\"content\":[{\"type\":\"text\",\"text\":\"slept 40 ms\"}]}");
    json_decref(r);

    r = tn_result_error("argument \"%s\" must be %s", "x", "a string");
    CHECK_JSON(r, "{\"content\":[{\"type\":\"text\","
                  "\"text\":\"argument \\\"x\\\" must be a string\"}],"
                  "\"isError\":true}");
    json_decref(r);

    /* The text block is the compact serialisation, in insertion order. */
    r = tn_result_structured(json_pack("{s:b, s:i, s:[s]}", "on", 1, "n", 7,
                                       "tags", "a"));
    CHECK_JSON(r, "{\"content\":[{\"type\":\"text\","
                  "\"text\":\"{\\\"on\\\":true,\\\"n\\\":7,\\\"tags\\\":[\\\"a\\\"]}\"}],"
                  "\"structuredContent\":{\"on\":true,\"n\":7,\"tags\":[\"a\"]}}");
    json_decref(r);

    r = tn_result_content(json_pack("[{s:s, s:s, s:s}]", "type", "image",
                                    "data", "AAAA", "mimeType", "image/png"));
    CHECK_JSON(r, "{\"content\":[{\"type\":\"image\",\"data\":\"AAAA\","
                  "\"mimeType\":\"image/png\"}]}");
    json_decref(r);

    /* Stolen even when refused: valgrind reports a leak otherwise. */
    CHECK(tn_result_content(json_object()) == NULL);
    CHECK(tn_result_content(json_string("x")) == NULL);

    /* Long text is not truncated. */
    char *big = malloc(1 << 20);
    memset(big, 'y', (1 << 20) - 1);
    big[(1 << 20) - 1] = '\0';
    r = tn_result_error("%s", big);
    CHECK_INT(strlen(json_string_value(json_object_get(
                  json_array_get(json_object_get(r, "content"), 0), "text"))),
              (1 << 20) - 1);
    json_decref(r);
    free(big);

    return CHECK_DONE();
}
