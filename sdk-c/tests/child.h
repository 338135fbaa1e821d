/* A peer speaking newline-delimited JSON over a pair of descriptors: a
 * bundle started as a child process, or a server running in-process. */
#ifndef CHILD_H
#define CHILD_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

typedef struct peer {
    int to;   /* we write requests here; -1 once closed */
    int from; /* we read messages here */
    pid_t pid;       /* child process, 0 for an in-process server */
    char *buf;       /* bytes read but not yet returned as lines */
    size_t len, cap;
} peer_t;

/* Starts argv as a child with its stdin and stdout on pipes and its stderr
 * on stderr_fd (or inherited when -1). Returns 0 or -1. */
int peer_spawn(peer_t *peer, char *const argv[], int stderr_fd);

/* Writes text and a newline. Reads what the other side sends meanwhile, so
 * a large write cannot deadlock against a large answer. Returns 0 or -1. */
int peer_send(peer_t *peer, const char *text);

/* Returns the next line without its newline (malloc'd, caller frees), or
 * NULL at end of stream or after timeout_ms. */
char *peer_recv(peer_t *peer, int timeout_ms);

/* Closes our end of the peer's input, so it sees end of file. */
void peer_close_input(peer_t *peer);

/* Waits for the child to exit (killing it after timeout_ms) and frees
 * buffers. Returns its exit status, or -1 when it was killed or there
 * is no child. */
int peer_finish(peer_t *peer, int timeout_ms);

long long peer_now_ms(void);

/* The next line as JSON (new reference), or NULL, said on stderr, at end
 * of stream, after timeout_ms or for a line that is not JSON. */
json_t *peer_recv_json(peer_t *peer, int timeout_ms);

/* Sends request and checks, with check.h, that the next line is the JSON
 * of want. */
#define PEER_EXPECT(peer, timeout_ms, request, want)                       \
    do {                                                                   \
        CHECK_INT(peer_send((peer), (request)), 0);                        \
        json_t *reply_ = peer_recv_json((peer), (timeout_ms));             \
        CHECK_JSON(reply_, want);                                          \
        json_decref(reply_);                                               \
    } while (0)

#endif
