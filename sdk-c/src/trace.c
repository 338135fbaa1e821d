/* The W3C Trace Context of a call, from its request's _meta. */
#include "tn_private.h"

#include <string.h>

/* Lower-case hex of length n, and whether it is all zeros. */
static int hex_field(const char *s, size_t n, int *zero)
{
    *zero = 1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return 0;
        if (c != '0')
            *zero = 0;
    }
    return 1;
}

/* version-traceid-parentid-flags by W3C Trace Context level 1: version ff
 * is invalid, neither id may be all zeros; version 00 is exactly that, a
 * later one may go on after a '-'. */
static int valid_traceparent(const char *s, size_t len)
{
    int zero, trace_zero, parent_zero;
    if (len < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-')
        return 0;
    if (!hex_field(s, 2, &zero) || !hex_field(s + 3, 32, &trace_zero) ||
        !hex_field(s + 36, 16, &parent_zero) || !hex_field(s + 53, 2, &zero))
        return 0;
    if (!strncmp(s, "ff", 2) || trace_zero || parent_zero)
        return 0;
    if (!strncmp(s, "00", 2))
        return len == 55;
    return len == 55 || s[55] == '-';
}

void tn__read_trace_context(tn_call_t *call, json_t *meta)
{
    json_t *parent = json_object_get(meta, "traceparent");
    json_t *state = json_object_get(meta, "tracestate");
    if (!json_is_string(parent) ||
        !valid_traceparent(json_string_value(parent),
                           json_string_length(parent)))
        return;
    call->traceparent = json_incref(parent);
    if (json_is_string(state))
        call->tracestate = json_incref(state);
}

const char *tn_call_traceparent(const tn_call_t *call)
{
    return call ? json_string_value(call->traceparent) : NULL;
}

const char *tn_call_tracestate(const tn_call_t *call)
{
    return call ? json_string_value(call->tracestate) : NULL;
}
