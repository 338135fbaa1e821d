#define _POSIX_C_SOURCE 200809L

#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long long peer_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int peer_spawn(peer_t *peer, char *const argv[], int stderr_fd)
{
    int in[2], out[2];
    memset(peer, 0, sizeof *peer);
    peer->to = peer->from = -1;
    signal(SIGPIPE, SIG_IGN);
    if (pipe(in) != 0)
        return -1;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        if (stderr_fd >= 0)
            dup2(stderr_fd, 2);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    fcntl(in[1], F_SETFD, FD_CLOEXEC);
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    peer->to = in[1];
    peer->from = out[0];
    peer->pid = pid;
    return 0;
}

/* Appends what is readable now; 0 at end of stream, -1 on error. */
static ssize_t fill(peer_t *peer)
{
    if (peer->cap - peer->len < 65536) {
        size_t cap = peer->cap ? peer->cap * 2 : 131072;
        char *buf = realloc(peer->buf, cap);
        if (!buf)
            return -1;
        peer->buf = buf;
        peer->cap = cap;
    }
    ssize_t n;
    do
        n = read(peer->from, peer->buf + peer->len, peer->cap - peer->len);
    while (n < 0 && errno == EINTR);
    if (n > 0)
        peer->len += (size_t)n;
    return n;
}

static int write_all(peer_t *peer, const char *data, size_t size)
{
    while (size > 0) {
        struct pollfd fds[2] = {{peer->to, POLLOUT, 0},
                                {peer->from, POLLIN, 0}};
        if (poll(fds, 2, 30000) <= 0)
            return -1;
        if ((fds[1].revents & POLLIN) && fill(peer) < 0)
            return -1;
        if (fds[0].revents & (POLLERR | POLLHUP))
            return -1;
        if (!(fds[0].revents & POLLOUT))
            continue;
        ssize_t n = write(peer->to, data, size > 65536 ? 65536 : size);
        if (n < 0 && errno != EINTR && errno != EAGAIN)
            return -1;
        if (n > 0)
            data += n, size -= (size_t)n;
    }
    return 0;
}

int peer_send(peer_t *peer, const char *text)
{
    if (peer->to < 0)
        return -1;
    return write_all(peer, text, strlen(text)) || write_all(peer, "\n", 1)
               ? -1
               : 0;
}

char *peer_recv(peer_t *peer, int timeout_ms)
{
    long long deadline = peer_now_ms() + timeout_ms;
    size_t scanned = 0;
    for (;;) {
        char *nl = memchr(peer->buf + scanned, '\n', peer->len - scanned);
        if (nl) {
            size_t n = (size_t)(nl - peer->buf);
            char *line = malloc(n + 1);
            if (!line)
                return NULL;
            memcpy(line, peer->buf, n);
            line[n] = '\0';
            memmove(peer->buf, nl + 1, peer->len - n - 1);
            peer->len -= n + 1;
            return line;
        }
        scanned = peer->len;
        long long left = deadline - peer_now_ms();
        struct pollfd fd = {peer->from, POLLIN, 0};
        if (left <= 0 || poll(&fd, 1, (int)left) <= 0 || fill(peer) <= 0)
            return NULL;
    }
}

void peer_close_input(peer_t *peer)
{
    if (peer->to >= 0)
        close(peer->to);
    peer->to = -1;
}

int peer_finish(peer_t *peer, int timeout_ms)
{
    int status = -1, rc = -1;
    peer_close_input(peer);
    if (peer->pid > 0) {
        long long deadline = peer_now_ms() + timeout_ms;
        pid_t got;
        while ((got = waitpid(peer->pid, &status, WNOHANG)) == 0 &&
               peer_now_ms() < deadline) {
            struct timespec ts = {0, 10 * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (got == 0) {
            kill(peer->pid, SIGKILL);
            waitpid(peer->pid, &status, 0);
        } else if (got > 0 && WIFEXITED(status)) {
            rc = WEXITSTATUS(status);
        }
    }
    if (peer->from >= 0)
        close(peer->from);
    free(peer->buf);
    memset(peer, 0, sizeof *peer);
    peer->to = peer->from = -1;
    return rc;
}

json_t *peer_recv_json(peer_t *peer, int timeout_ms)
{
    char *line = peer_recv(peer, timeout_ms);
    json_t *msg = line ? json_loads(line, 0, NULL) : NULL;
    if (!msg)
        fprintf(stderr, "no message, or not JSON: %s\n",
                line ? line : "(end of stream or timeout)");
    free(line);
    return msg;
}
