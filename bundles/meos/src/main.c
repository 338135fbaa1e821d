/* meos-bundle: moving-object analytics from libmeos, as MCP tools over stdio. */
#include "bundle.h"

#include <stdio.h>
#include <stdlib.h>

/* Whether the network-point tools can be offered: MEOS_WAYS names a ways
 * file that passes the checks of ways.c. Says why not on stderr. */
static bool network_ready(void)
{
    const char *file = getenv("MEOS_WAYS");
    if (!file || !*file) {
        fprintf(stderr, "meos-bundle: the network-point tools are left out: MEOS_WAYS names no "
                        "ways file (the road network; see the README)\n");
        return false;
    }
    json_t *args = json_pack("{s:s}", "file", file);
    json_t *result = mc_run(ways_load, args, NULL);
    json_decref(args);
    bool ready = result && !json_is_true(json_object_get(result, "isError"));
    if (!ready) {
        json_t *text = json_object_get(json_array_get(json_object_get(result, "content"), 0), "text");
        fprintf(stderr, "meos-bundle: the network-point tools are left out: ways file %s: %s\n",
                file, json_string_value(text) ? json_string_value(text) : "unreadable");
    }
    json_decref(result);
    return ready;
}

int main(void)
{
    if (mc_setup() != 0)
        return 1;
    tn_server_t *server = tn_server_new("toolnode-meos", "0.1.0");
    if (!server || tools_register(server) != 0 || gen_register(server, network_ready()) != 0) {
        fprintf(stderr, "meos-bundle: cannot set up the server\n");
        tn_server_free(server);
        return 1;
    }
    /* MEOS is not thread-safe: one worker runs every call, in order.
     * More throughput comes from more processes. */
    tn_server_set_workers(server, 1);
    int rc = tn_server_run(server);
    tn_server_free(server);
    meos_finalize();
    return rc == 0 ? 0 : 1;
}
