/* meos-bundle: moving-object analytics from libmeos, as MCP tools over stdio. */
#include "bundle.h"

#include <stdio.h>

int main(void)
{
    if (mc_setup() != 0)
        return 1;
    tn_server_t *server = tn_server_new("toolnode-meos", "0.1.0");
    if (!server || tools_register(server) != 0 || gen_register(server) != 0) {
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
