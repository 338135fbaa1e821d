/* Assertions for the test programs: each failure prints file:line and both
 * operands, and the program's exit status counts the failures. */
#ifndef CHECK_H
#define CHECK_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__,         \
                    __LINE__, #cond);                                      \
            check_failures++;                                              \
        }                                                                  \
    } while (0)

#define CHECK_INT(got, want)                                               \
    do {                                                                   \
        long long got_ = (long long)(got), want_ = (long long)(want);      \
        if (got_ != want_) {                                               \
            fprintf(stderr, "%s:%d: %s == %lld, want %s == %lld\n",        \
                    __FILE__, __LINE__, #got, got_, #want, want_);         \
            check_failures++;                                              \
        }                                                                  \
    } while (0)

#define CHECK_STR(got, want)                                               \
    do {                                                                   \
        const char *got_ = (got), *want_ = (want);                         \
        if (!got_ || !want_ ? got_ != want_ : strcmp(got_, want_) != 0) {  \
            fprintf(stderr, "%s:%d: %s == \"%s\", want \"%s\"\n",          \
                    __FILE__, __LINE__, #got, got_ ? got_ : "(null)",      \
                    want_ ? want_ : "(null)");                             \
            check_failures++;                                              \
        }                                                                  \
    } while (0)

/* Compares a json_t (borrowed) with JSON text. */
#define CHECK_JSON(got, want_text)                                         \
    do {                                                                   \
        json_t *want_ = json_loads((want_text), JSON_DECODE_ANY, NULL);    \
        const json_t *got_ = (got);                                        \
        if (!want_ || !got_ || !json_equal((json_t *)got_, want_)) {       \
            char *text_ = got_ ? json_dumps(got_, JSON_COMPACT |           \
                                                  JSON_ENCODE_ANY)         \
                               : NULL;                                     \
            fprintf(stderr, "%s:%d: %s == %s\n  want %s\n", __FILE__,      \
                    __LINE__, #got, text_ ? text_ : "(null)", want_text);  \
            free(text_);                                                   \
            check_failures++;                                              \
        }                                                                  \
        json_decref(want_);                                                \
    } while (0)

#define CHECK_DONE()                                                       \
    (check_failures ? (fprintf(stderr, "%d check(s) failed\n",             \
                               check_failures), 1)                         \
                    : (printf("ok\n"), 0))

#endif
