/* Skills: the rules for adding one, and a server on pipes serving a
 * folder's skill: its entry in skills/list and skills/get, its files read. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "tn.h"

#define TIMEOUT 20000

static peer_t peer;

#define SKILL_MD                                                           \
    "---\nname: trip-report\ndescription: >\n  Summarise a trip\n  from "   \
    "its positions.\nlicense: 'MIT'\nmetadata:\n  version: \"2\"\n  "      \
    "level: 3\n\n---\n# Trip report\n"

/* Writes text (n bytes) to dir/name. */
static void put(const char *dir, const char *name, const char *text, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fwrite(text, 1, n, f);
        fclose(f);
    }
}

/* A skill folder under a new temporary directory; its path (static). */
static const char *skill_folder(void)
{
    static char dir[64];
    strcpy(dir, "/tmp/tn-skill-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/references", dir);
    CHECK_INT(mkdir(sub, 0755), 0);
    put(dir, "SKILL.md", SKILL_MD, strlen(SKILL_MD));
    put(dir, "references/guide.md", "# Guide\n", 8);
    put(dir, "data.bin", "\x00\x01\xff", 3);
    put(dir, ".hidden", "no", 2);
    return dir;
}

static void remove_folder(const char *dir)
{
    char path[512];
    const char *names[] = {"SKILL.md", "references/guide.md", "data.bin",
                           ".hidden", "references", ""};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        remove(path);
    }
}

static void rules(const char *dir)
{
    tn_server_t *server = tn_server_new("s", "1");
    tn_error_t error;
    CHECK_INT(tn_server_add_skill(NULL, "a", dir, &error), -1);
    CHECK_INT(tn_server_add_skill(server, "geo/Trip_Report", dir, &error), -1);
    CHECK_INT(tn_server_add_skill(server, "geo/other-name", dir, &error), -1);
    CHECK(strstr(error.text, "must have name") != NULL);
    CHECK_INT(tn_server_add_skill(server, "geo/trip-report", "/nonexistent", &error), -1);
    CHECK_INT(tn_server_add_skill(server, "geo/trip-report", dir, &error), 0);
    CHECK_INT(tn_server_add_skill(server, "geo/trip-report", dir, &error), -1);
    tn_server_free(server);

    char bad[64];
    strcpy(bad, "/tmp/tn-skill-bad-XXXXXX");
    CHECK(mkdtemp(bad) != NULL);
    const char *list = "---\nname: x\ndescription: d\ntags:\n  - a\n---\n";
    char sub[128];
    snprintf(sub, sizeof sub, "%s/x", bad);
    CHECK_INT(mkdir(sub, 0755), 0);
    put(sub, "SKILL.md", list, strlen(list));
    server = tn_server_new("s", "1");
    CHECK_INT(tn_server_add_skill(server, "x", sub, &error), -1);
    CHECK(strstr(error.text, "simple YAML") != NULL);
    tn_server_free(server);
    snprintf(sub, sizeof sub, "%s/x/SKILL.md", bad);
    remove(sub);
    snprintf(sub, sizeof sub, "%s/x", bad);
    remove(sub);
    remove(bad);
}

static void *run(void *arg)
{
    static int rc;
    int *fd = ((void **)arg)[1];
    rc = tn_server_serve_fd(((void **)arg)[0], fd[0], fd[1]);
    return &rc;
}

#define EXPECT(request, want) PEER_EXPECT(&peer, TIMEOUT, request, want)

#define ENTRY                                                              \
    "{\"uri\":\"skill://geo/trip-report/SKILL.md\",\"frontmatter\":{"      \
    "\"name\":\"trip-report\",\"description\":\"Summarise a trip from its " \
    "positions.\\n\",\"license\":\"MIT\",\"metadata\":{\"version\":\"2\","  \
    "\"level\":3}},\"resources\":["                                        \
    "{\"uri\":\"skill://geo/trip-report/SKILL.md\",\"digest\":\"sha256:"   \
    "ce1e36c0de93fbf89724ee0850691e4bef18b0cd1a234ad5bfb92cf2c232e366\","   \
    "\"size\":148},"                                                       \
    "{\"uri\":\"skill://geo/trip-report/data.bin\",\"digest\":\"sha256:"   \
    "26a66b061e8f48f39927c312f25293959729eee95978e2892d49d3512a5cc092\","   \
    "\"size\":3},"                                                         \
    "{\"uri\":\"skill://geo/trip-report/references/guide.md\",\"digest\":" \
    "\"sha256:bc553ffe57e544498b12a9865dbf3abc2004c474e349c52c378eaa40228" \
    "7424b\",\"size\":8}]}"

static void serving(tn_server_t *server)
{
    int in[2], out[2];
    CHECK_INT(pipe(in), 0);
    CHECK_INT(pipe(out), 0);
    peer = (peer_t){.to = in[1], .from = out[0]};
    int fds[2] = {in[0], out[1]};
    void *arg[2] = {server, fds};
    pthread_t thread;
    pthread_create(&thread, NULL, run, arg);

    CHECK_INT(peer_send(&peer, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
                               "\"initialize\",\"params\":{\"protocolVersion\":"
                               "\"2025-11-25\",\"capabilities\":{},"
                               "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"),
              0);
    json_t *init = peer_recv_json(&peer, TIMEOUT);
    CHECK_JSON(json_object_get(json_object_get(json_object_get(init, "result"),
                                               "capabilities"),
                               "extensions"),
               "{\"io.modelcontextprotocol/skills\":{}}");
    json_decref(init);
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"skills/list\",\"params\":{}}",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"skills\":[" ENTRY "]}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"skills/get\",\"params\":"
           "{\"uri\":\"skill://geo/trip-report/SKILL.md\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"skill\":" ENTRY "}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"skills/get\",\"params\":"
           "{\"uri\":\"skill://geo/none/SKILL.md\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":"
           "\"no skill is served at skill://geo/none/SKILL.md\"}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":"
           "{\"uri\":\"skill://geo/trip-report/references/guide.md\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"contents\":[{\"uri\":"
           "\"skill://geo/trip-report/references/guide.md\",\"mimeType\":"
           "\"text/markdown\",\"text\":\"# Guide\\n\"}]}}");
    EXPECT("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":"
           "{\"uri\":\"skill://geo/trip-report/data.bin\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"contents\":[{\"uri\":"
           "\"skill://geo/trip-report/data.bin\",\"mimeType\":"
           "\"application/octet-stream\",\"blob\":\"AAH/\"}]}}");

    peer_close_input(&peer);
    char *rest = peer_recv(&peer, TIMEOUT);
    CHECK_STR(rest, NULL);
    free(rest);
    void *rc;
    pthread_join(thread, &rc);
    CHECK_INT(*(int *)rc, 0);
    close(in[0]), close(out[0]), close(out[1]);
    free(peer.buf);
}

int main(void)
{
    const char *dir = skill_folder();
    rules(dir);
    tn_server_t *server = tn_server_new("skills", "1");
    CHECK_INT(tn_server_add_skill(server, "geo/trip-report", dir, NULL), 0);
    serving(server);
    tn_server_free(server);
    remove_folder(dir);
    return CHECK_DONE();
}
