/* Argument checking against a tool's input schema, before its handler runs.
 * This is the part of JSON Schema that catches what models get wrong in
 * practice: a missing required property, a wrong JSON type, a number out of
 * range, a value outside an enum, an unexpected property when
 * additionalProperties is false. Nested values are not descended into. */
#include "tn_private.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int tn__valid_tool_name(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 || n > 128)
        return 0;
    return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                        "0123456789_-.") == n;
}

static int fail(char *msg, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_whole(const json_t *value)
{
    if (json_is_integer(value))
        return 1;
    double d = json_real_value(value);
    return json_is_real(value) && fabs(d) < 9e15 && d == (double)(long long)d;
}

static const struct {
    const char *name;
    const char *phrase;
} types[] = {
    {"string", "a string"},   {"integer", "an integer"},
    {"number", "a number"},   {"boolean", "a boolean"},
    {"object", "an object"},  {"array", "an array"},
    {"null", "null"},
};

/* An unknown type name matches anything: a schema we cannot read must not
 * make a tool uncallable. */
static int type_matches(const char *type, const json_t *value)
{
    if (!strcmp(type, "string")) return json_is_string(value);
    if (!strcmp(type, "integer")) return is_whole(value);
    if (!strcmp(type, "number")) return json_is_number(value);
    if (!strcmp(type, "boolean")) return json_is_boolean(value);
    if (!strcmp(type, "object")) return json_is_object(value);
    if (!strcmp(type, "array")) return json_is_array(value);
    if (!strcmp(type, "null")) return json_is_null(value);
    return 1;
}

static const char *type_phrase(const char *type)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(type, types[i].name))
            return types[i].phrase;
    return type;
}

static int check_type(const char *key, const json_t *type,
                      const json_t *value, char *msg, size_t size)
{
    if (json_is_string(type)) {
        const char *t = json_string_value(type);
        if (type_matches(t, value))
            return 0;
        return fail(msg, size, "argument \"%s\" must be %s", key,
                    type_phrase(t));
    }
    if (!json_is_array(type) || json_array_size(type) == 0)
        return 0;

    size_t i;
    json_t *t;
    json_array_foreach(type, i, t)
        if (json_is_string(t) && type_matches(json_string_value(t), value))
            return 0;

    size_t used = (size_t)snprintf(msg, size, "argument \"%s\" must be",
                                   key);
    json_array_foreach(type, i, t) {
        if (used >= size || !json_is_string(t))
            continue;
        used += (size_t)snprintf(msg + used, size - used, "%s %s",
                                 i == 0 ? "" : " or",
                                 type_phrase(json_string_value(t)));
    }
    return -1;
}

static int check_range(const char *key, const json_t *schema,
                       const json_t *value, char *msg, size_t size)
{
    static const struct {
        const char *keyword;
        const char *phrase;
        int sign; /* the value must compare to the bound this way */
        int strict;
    } bounds[] = {
        {"minimum", "at least", 1, 0},
        {"maximum", "at most", -1, 0},
        {"exclusiveMinimum", "greater than", 1, 1},
        {"exclusiveMaximum", "less than", -1, 1},
    };
    double v = json_number_value(value);
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        const json_t *bound = json_object_get(schema, bounds[i].keyword);
        if (!json_is_number(bound))
            continue;
        double b = json_number_value(bound);
        double d = (v - b) * bounds[i].sign;
        if (d > 0 || (d == 0 && !bounds[i].strict))
            continue;
        if (fabs(b) < 9e15 && b == (double)(long long)b)
            return fail(msg, size, "argument \"%s\" must be %s %lld", key,
                        bounds[i].phrase, (long long)b);
        return fail(msg, size, "argument \"%s\" must be %s %g", key,
                    bounds[i].phrase, b);
    }
    return 0;
}

static int check_enum(const char *key, const json_t *choices,
                      const json_t *value, char *msg, size_t size)
{
    size_t i;
    json_t *choice;
    if (!json_is_array(choices))
        return 0;
    json_array_foreach(choices, i, choice)
        if (json_equal(choice, value))
            return 0;

    size_t used = (size_t)snprintf(msg, size,
                                   "argument \"%s\" must be one of", key);
    json_array_foreach(choices, i, choice) {
        char *text = json_dumps(choice, JSON_COMPACT | JSON_ENCODE_ANY);
        if (text && used < size)
            used += (size_t)snprintf(msg + used, size - used, "%s %s",
                                     i == 0 ? "" : ",", text);
        free(text);
    }
    return -1;
}

static int allows_integer(const json_t *type)
{
    size_t i;
    json_t *t;
    if (json_is_string(type))
        return !strcmp(json_string_value(type), "integer");
    json_array_foreach(type, i, t)
        if (allows_integer(t))
            return 1;
    return 0;
}

static int check_value(const char *key, const json_t *schema, json_t *args,
                       char *msg, size_t size)
{
    json_t *value = json_object_get(args, key);
    if (!json_is_object(schema))
        return 0;
    const json_t *type = json_object_get(schema, "type");
    if (check_type(key, type, value, msg, size) != 0)
        return -1;
    if (json_is_number(value) &&
        check_range(key, schema, value, msg, size) != 0)
        return -1;
    if (check_enum(key, json_object_get(schema, "enum"), value, msg,
                   size) != 0)
        return -1;

    /* 5.0 passes for an integer; hand it to the handler as 5. */
    if (json_is_real(value) && is_whole(value) && allows_integer(type))
        json_object_set_new(args, key,
                            json_integer((json_int_t)json_real_value(value)));
    return 0;
}

int tn__check_args(const json_t *schema, json_t *args, char *msg,
                   size_t size)
{
    size_t i;
    const char *key;
    json_t *item;
    json_t *required = json_object_get(schema, "required");
    json_t *properties = json_object_get(schema, "properties");

    json_array_foreach(required, i, item)
        if (json_is_string(item) &&
            !json_object_get(args, json_string_value(item)))
            return fail(msg, size, "missing required argument \"%s\"",
                        json_string_value(item));

    json_object_foreach(properties, key, item)
        if (json_object_get(args, key) &&
            check_value(key, item, args, msg, size) != 0)
            return -1;

    if (json_is_false(json_object_get(schema, "additionalProperties"))) {
        json_object_foreach(args, key, item)
            if (!json_object_get(properties, key))
                return fail(msg, size, "unexpected argument \"%s\"", key);
    }
    return 0;
}
