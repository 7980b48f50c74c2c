/* record: the agent's recorded trace, fleetsim's native JSON Lines
 * (traces/README.md), so `fleetsim replay` can run the same jobs under the
 * same (or another) policy. The first line is the header
 *   {"fleetsim_trace":1,"max_nodes":2,"max_procs":16,"unix_start_s":1700000000}
 * and each job that ran appends one line when it ends:
 *   {"id":7,"submit_s":12.5,"runtime_s":30.25,"limit_s":60,"gpus":2,"user":"alice",
 *    "team":"vision","status":1,"start_s":13,"end_s":43.25,"exit":0,"name":"train",
 *    "placement":["gpu01:0","gpu01:1"]}
 * Times are seconds since unix_start_s (the agent's first start), exact to
 * the microsecond. status: 1 completed, 0 failed or timed out, 5 cancelled;
 * exit: the exit code, or 128+N for a job killed by signal N. Jobs cancelled
 * before they started never ran and are not recorded.
 *
 * Crash safety: the store marks a finished job "traced" only after its line
 * is on disk (record_sync); on restart, lines for untraced jobs are written
 * unless the file already holds them, and a torn last line is cut off.
 */
#ifndef FLEETSIM_AGENT_RECORD_H
#define FLEETSIM_AGENT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "agent/buf.h"
#include "agent/job.h"
#include "sim/err.h"

struct record {
    int fd;
    char path[4096];
    int64_t epoch_s;
    int64_t *ids; /* ids already in the file (loaded on demand), sorted */
    size_t n_ids;
    int ids_loaded;
};

void record_init(struct record *r);
/* Opens (creating, with its header) the trace at path. */
int record_open(struct record *r, const char *path, int64_t epoch_s, uint32_t n_nodes, int64_t n_gpus,
                struct err *err);
void record_close(struct record *r);
/* Formats j's line (with '\n') into out. placement: n "NODE:INDEX" strings. */
int record_format(struct buf *out, const struct agent_job *j, int64_t epoch_s, const char *const *placement,
                  size_t n);
int record_append(struct record *r, const struct agent_job *j, const char *const *placement, size_t n,
                  struct err *err);
/* Is there already a line for id? (scans the file once) */
int record_has(struct record *r, int64_t id);
int record_sync(struct record *r, struct err *err);
/* The trace status code of a final job state. */
int record_status_code(int state);

#endif
