/* The argument checker, case by case. */
#include "tn_private.h" /* first: it sets the POSIX feature level */

#include "check.h"

static const char *const greet =
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
    "\"required\":[\"name\"]}";
static const char *const sleep_ms =
    "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\","
    "\"minimum\":0,\"maximum\":60000}},\"required\":[\"ms\"]}";
static const char *const mixed =
    "{\"type\":\"object\",\"properties\":{"
    "\"n\":{\"type\":\"number\",\"exclusiveMinimum\":0,"
    "\"exclusiveMaximum\":1.5},"
    "\"b\":{\"type\":\"boolean\"},\"o\":{\"type\":\"object\"},"
    "\"a\":{\"type\":\"array\"},\"z\":{\"type\":\"null\"},"
    "\"s\":{\"type\":[\"string\",\"null\"]},"
    "\"e\":{\"enum\":[\"x\",2]},\"u\":{\"type\":\"date\"},"
    "\"free\":{}}}";
static const char *const closed =
    "{\"type\":\"object\",\"properties\":{\"a\":{}},"
    "\"additionalProperties\":false}";

static const struct {
    const char *schema;
    const char *args;
    const char *error; /* NULL when the arguments pass */
} cases[] = {
    {greet, "{\"name\":\"Ada\"}", NULL},
    {greet, "{\"name\":\"Ada\",\"extra\":1}", NULL},
    {greet, "{}", "missing required argument \"name\""},
    {greet, "{\"name\":null}", "argument \"name\" must be a string"},
    {greet, "{\"name\":3}", "argument \"name\" must be a string"},
    {sleep_ms, "{\"ms\":0}", NULL},
    {sleep_ms, "{\"ms\":60000}", NULL},
    {sleep_ms, "{\"ms\":60001}", "argument \"ms\" must be at most 60000"},
    {sleep_ms, "{\"ms\":-1}", "argument \"ms\" must be at least 0"},
    {sleep_ms, "{\"ms\":2.5}", "argument \"ms\" must be an integer"},
    {sleep_ms, "{\"ms\":\"5\"}", "argument \"ms\" must be an integer"},
    {sleep_ms, "{\"ms\":true}", "argument \"ms\" must be an integer"},
    {mixed, "{\"n\":1}", NULL},
    {mixed, "{\"n\":0}", "argument \"n\" must be greater than 0"},
    {mixed, "{\"n\":1.5}", "argument \"n\" must be less than 1.5"},
    {mixed, "{\"n\":\"1\"}", "argument \"n\" must be a number"},
    {mixed, "{\"b\":false,\"o\":{},\"a\":[],\"z\":null}", NULL},
    {mixed, "{\"b\":0}", "argument \"b\" must be a boolean"},
    {mixed, "{\"o\":[]}", "argument \"o\" must be an object"},
    {mixed, "{\"a\":{}}", "argument \"a\" must be an array"},
    {mixed, "{\"z\":0}", "argument \"z\" must be null"},
    {mixed, "{\"s\":null}", NULL},
    {mixed, "{\"s\":\"x\"}", NULL},
    {mixed, "{\"s\":1}", "argument \"s\" must be a string or null"},
    {mixed, "{\"e\":2}", NULL},
    {mixed, "{\"e\":\"y\"}", "argument \"e\" must be one of \"x\", 2"},
    {mixed, "{\"u\":1,\"free\":[{}]}", NULL},
    {closed, "{\"a\":1}", NULL},
    {closed, "{\"a\":1,\"b\":2}", "unexpected argument \"b\""},
    {"{\"type\":\"object\"}", "{\"anything\":[1,2]}", NULL},
};

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *schema = json_loads(cases[i].schema, 0, NULL);
        json_t *args = json_loads(cases[i].args, 0, NULL);
        char msg[TN_ERROR_TEXT_LENGTH] = "";
        int rc = tn__check_args(schema, args, msg, sizeof msg);
        if (rc != (cases[i].error ? -1 : 0))
            fprintf(stderr, "case %zu: %s\n", i, cases[i].args);
        CHECK_INT(rc, cases[i].error ? -1 : 0);
        CHECK_STR(msg, cases[i].error ? cases[i].error : "");
        json_decref(schema);
        json_decref(args);
    }

    /* A whole real for an integer reaches the handler as an integer. */
    json_t *schema = json_loads(sleep_ms, 0, NULL);
    json_t *args = json_loads("{\"ms\":5.0}", 0, NULL);
    char msg[TN_ERROR_TEXT_LENGTH];
    CHECK_INT(tn__check_args(schema, args, msg, sizeof msg), 0);
    CHECK(json_is_integer(json_object_get(args, "ms")));
    CHECK_INT(json_integer_value(json_object_get(args, "ms")), 5);
    json_decref(schema);
    json_decref(args);

    /* A message longer than the buffer is cut, not overrun. */
    schema = json_loads(greet, 0, NULL);
    args = json_object();
    char tiny[8];
    CHECK_INT(tn__check_args(schema, args, tiny, sizeof tiny), -1);
    CHECK_STR(tiny, "missing");
    json_decref(schema);
    json_decref(args);

    return CHECK_DONE();
}
