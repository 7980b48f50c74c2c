/* client: the user-facing commands that talk to a running agent over its
 * Unix socket (submit, queue, show, cancel, history, nodes, drain, resume,
 * status), and what they print: tables for people, --json for scripts.
 *
 * Exit codes (fleetsim-agent(8)): 0 ok; 1 the agent refused (no such job,
 * not permitted, already ended, queue full); 2 usage or bad input; 3 the
 * agent cannot be reached or a file cannot be read; 4 internal error.
 */
#ifndef FLEETSIM_AGENT_CLIENT_H
#define FLEETSIM_AGENT_CLIENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

enum agent_exit { AGENT_OK = 0, AGENT_REFUSED = 1, AGENT_USAGE = 2, AGENT_IO = 3, AGENT_INTERNAL = 4 };

#define AGENT_DEFAULT_SOCKET "/run/fleetsim-agent/agent.sock"

/* Sends one request (stolen) and reads the answer. Returns 0, or -1 with err
 * set when the agent cannot be reached or answers garbage. */
int client_call(const char *socket_path, json_t *request, json_t **response, struct err *err);
/* Runs client command `cmd` (argv[0] is the command name). Returns an exit code. */
int client_main(const char *cmd, int argc, char **argv);
/* Is cmd one of the client commands? */
int client_is_command(const char *cmd);
/* Formats a duration in microseconds as [D-]H:MM:SS. */
void client_format_duration(char *buf, size_t len, int64_t us);

#endif
