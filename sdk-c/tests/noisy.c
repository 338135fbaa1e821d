/* A bundle that writes to stdout every way it can, as careless code and
 * chatty libraries do. None of it may reach the protocol stream. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <unistd.h>

#include "tn.h"

static json_t *shout(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)args, (void)user;
    printf("printf from a handler\n");
    fflush(stdout);
    puts("puts from a handler");
    fwrite("fwrite without newline", 1, 22, stdout);
    fflush(stdout);
    if (write(STDOUT_FILENO, "\nwrite(2) to fd 1\n", 18) != 18)
        return tn_result_error("write to fd 1 failed");
    return tn_result_text("shouted");
}

int main(void)
{
    printf("banner printed before the server starts\n"); /* still buffered */
    tn_server_t *server = tn_server_new("noisy", TN_VERSION);
    tn_tool_t tool = {.name = "shout", .handler = shout};
    tn_error_t error;
    if (!server || tn_server_add_tool(server, &tool, &error) != 0)
        return 1;
    int rc = tn_server_run(server);
    printf("printf after the server stopped\n");
    tn_server_free(server);
    return rc == 0 ? 0 : 1;
}
