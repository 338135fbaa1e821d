/* Calls per second of a bundle over stdio: `greet` calls pipelined with
 * 1 and then 8 in flight, about 3 s each.
 *
 *   bench CMD...      e.g. bench ../examples/c/build/example-c */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child.h"

#define SECONDS 3

static peer_t peer;
static long long next_id = 1;

static int send_greet(void)
{
    char line[160];
    snprintf(line, sizeof line,
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"greet\",\"arguments\":{\"name\":"
             "\"bench\"}}}", next_id++);
    return peer_send(&peer, line);
}

/* Reads one answer; -1 unless it is a successful greet. */
static int recv_answer(void)
{
    char *line = peer_recv(&peer, 10000);
    int ok = line && strstr(line, "\"Hello, bench!\"") != NULL;
    if (!ok)
        fprintf(stderr, "bench: unexpected answer: %.200s\n",
                line ? line : "(none)");
    free(line);
    return ok ? 0 : -1;
}

static double measure(int in_flight)
{
    long long done = 0, start = peer_now_ms(), end = start + SECONDS * 1000;
    for (int i = 0; i < in_flight; i++)
        if (send_greet() != 0)
            return -1;
    while (peer_now_ms() < end) {
        if (recv_answer() != 0 || send_greet() != 0)
            return -1;
        done++;
    }
    long long elapsed = peer_now_ms() - start;
    for (int i = 0; i < in_flight; i++)
        if (recv_answer() != 0)
            return -1;
    return done * 1000.0 / (double)elapsed;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench CMD...\n");
        return 2;
    }
    if (peer_spawn(&peer, argv + 1, -1) != 0) {
        perror("bench: spawn");
        return 1;
    }
    peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                     "\"params\":{\"protocolVersion\":\"2025-11-25\","
                     "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\","
                     "\"version\":\"1\"}}}");
    free(peer_recv(&peer, 10000));
    peer_send(&peer, "{\"jsonrpc\":\"2.0\","
                     "\"method\":\"notifications/initialized\"}");

    const char *name = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1
                                             : argv[1];
    int rc = 0;
    printf("%-28s %12s\n", "bundle (greet over stdio)", "calls/s");
    for (int in_flight = 1; in_flight <= 8; in_flight *= 8) {
        double rate = measure(in_flight);
        if (rate < 0) {
            rc = 1;
            break;
        }
        printf("%-14s %2d in flight %12.0f\n", name, in_flight, rate);
        fflush(stdout);
    }
    if (peer_finish(&peer, 10000) != 0)
        rc = 1;
    return rc;
}
