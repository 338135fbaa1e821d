/* Line framing on the way in, whole flushed messages on the way out. A leaf:
 * the rest of the library calls it, and it calls nothing of the library
 * (make test checks io.o's undefined symbols). */
#include "tn_private.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *const tn__levels[] = {"debug", "info", "notice", "warning",
                                  "error", "critical", "alert", "emergency",
                                  NULL};

int tn__level_index(const char *level)
{
    for (int i = 0; level && tn__levels[i]; i++)
        if (strcmp(level, tn__levels[i]) == 0)
            return i;
    return -1;
}

/* getline() grows the buffer as needed, so a line has no length limit. The
 * terminator (LF or CRLF) is cut off. Returns the length or -1 at EOF. */
ssize_t tn__read_line(FILE *in, char **line, size_t *capacity)
{
    ssize_t n = getline(line, capacity, in);
    if (n < 0)
        return -1;
    while (n > 0 && ((*line)[n - 1] == '\n' || (*line)[n - 1] == '\r'))
        (*line)[--n] = '\0';
    return n;
}

/* Most messages fit in SEND_STACK bytes and are encoded on the stack; a larger
 * one moves to memory allocated as it grows, so that it is encoded once. */
#define SEND_STACK 4096

/* A message being encoded: data is stack until it outgrows it. */
struct send_buffer {
    char *data;
    size_t len, cap;
    char stack[SEND_STACK];
};

/* json_dump_callback's sink: appends size bytes, growing the buffer; -1 when
 * memory runs out. */
static int send_append(const char *bytes, size_t size, void *data)
{
    struct send_buffer *b = data;
    if (size > b->cap - b->len) {
        size_t cap = b->cap;
        while (cap - b->len < size) {
            if (cap > SIZE_MAX / 2)
                return -1;
            cap *= 2;
        }
        char *grown = b->data == b->stack ? malloc(cap) : realloc(b->data, cap);
        if (!grown)
            return -1;
        if (b->data == b->stack)
            memcpy(grown, b->stack, b->len);
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, size);
    b->len += size;
    return 0;
}

/* JSON_COMPACT never emits a raw newline: those inside strings are escaped,
 * so one message is exactly one line. The message is encoded whole before
 * the lock is taken, and written with one fwrite: json_dumpf would write each
 * token with a call of its own, all under the lock the other workers wait
 * on. */
int tn__send(tn_server_t *server, json_t *message)
{
    int rc = -1;
    if (!message)
        return -1;
    struct send_buffer b;
    b.data = b.stack;
    b.len = 0;
    b.cap = sizeof b.stack;
    int encoded = json_dump_callback(message, send_append, &b, JSON_COMPACT) == 0 &&
                  send_append("\n", 1, &b) == 0;
    json_decref(message);
    if (encoded) {
        pthread_mutex_lock(&server->out_lock);
        if (server->out && fwrite(b.data, 1, b.len, server->out) == b.len &&
            fflush(server->out) == 0)
            rc = 0;
        pthread_mutex_unlock(&server->out_lock);
    }
    if (b.data != b.stack)
        free(b.data);
    return rc;
}

int tn__reply(tn_server_t *server, json_t *id, json_t *result)
{
    if (!result)
        return -1;
    return tn__send(server, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0",
                                      "id", id, "result", result));
}

int tn__reply_error(tn_server_t *server, json_t *id, int code,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = tn__vformat(fmt, ap);
    va_end(ap);
    json_t *message = json_pack(
        "{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
        id ? id : json_null(), "error", "code", code, "message",
        text ? text : "out of memory");
    free(text);
    return tn__send(server, message);
}

/* Whole numbers go out as JSON integers: progress counts read "3", not
 * "3.0", as clients in other languages write them. */
json_t *tn__number(double value)
{
    if (fabs(value) < 9e15 && value == (double)(long long)value)
        return json_integer((json_int_t)value);
    return json_real(value);
}

/* printf into a new buffer (malloc'd), NULL on a bad format or no memory. */
char *tn__vformat(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *text = n < 0 ? NULL : malloc((size_t)n + 1);
    if (text)
        vsnprintf(text, (size_t)n + 1, fmt, again);
    va_end(again);
    return text;
}
