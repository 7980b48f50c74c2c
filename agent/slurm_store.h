/* slurm_store: what the Slurm backend has decided, kept in SQLite
 * (STATE_DIR/slurm.db, WAL, synchronous=FULL) so that an agent killed at any
 * point and restarted reconciles with Slurm instead of deciding twice.
 *
 * A decision is keyed by (job id, attempt), the attempt being Slurm's
 * restart_cnt: a job requeued by a preemption is a new attempt and is
 * decided again; the same attempt never is. The protocol (slurm_backend.c):
 * a start is committed here (released = 0) before the job is pinned and
 * released in Slurm, and marked released after; on restart a row not yet
 * released whose job is still held is carried out with the nodes stored
 * here, never re-decided. A preemption is committed before its `scontrol
 * requeuehold`. A finished job is marked traced once its trace line is on
 * disk. The first pass that sees a held job records that instant as its
 * submission (`seen`): Slurm's submit_time is whole seconds, and the trace
 * must give the simulator the instants the agent's passes saw. The rows are
 * also kept in memory, sorted, for the passes.
 */
#ifndef FLEETSIM_AGENT_SLURM_STORE_H
#define FLEETSIM_AGENT_SLURM_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

struct slurm_decision {
    int64_t job_id;
    int32_t attempt;
    int released;
    int64_t decided_us;
    int64_t start_s;  /* the start Slurm reported for this attempt, 0 = not seen running */
    char nodes[256];  /* "n1:8,n2:8": node and GPUs on it, as the policy chose */
    char placement[256]; /* "n1:0,n1:1": the GPU indices Slurm gave, "" = not seen */
};

struct slurm_store {
    void *db; /* sqlite3 */
    struct slurm_decision *rows; /* sorted by (job_id, attempt) */
    uint32_t n, cap;
    int64_t *preempted; /* job_id * 65536 + attempt, sorted */
    uint32_t n_preempted, cap_preempted;
    struct slurm_seen {
        int64_t job_id, first_seen_us;
    } *seen; /* sorted by job_id */
    uint32_t n_seen, cap_seen;
    int64_t *traced; /* job ids, sorted */
    uint32_t n_traced, cap_traced;
    int64_t epoch_s;
};

/* Opens (creating) path and loads every row. epoch_s: the trace's
 * unix_start_s, fixed at the first start. */
int slurm_store_open(struct slurm_store *s, const char *path, int64_t now_s, struct err *err);
void slurm_store_close(struct slurm_store *s);

struct slurm_decision *slurm_store_find(struct slurm_store *s, int64_t job_id, int32_t attempt);
/* When the agent decided job_id's first attempt (-1 = never). */
int64_t slurm_store_first_decided(const struct slurm_store *s, int64_t job_id);
/* When a pass first saw job_id held, -1 = not yet. */
int64_t slurm_store_seen(const struct slurm_store *s, int64_t job_id);
int slurm_store_add_seen(struct slurm_store *s, int64_t job_id, int64_t at_us, struct err *err);
/* Number of decisions for job_id (attempts decided). */
int32_t slurm_store_attempts(const struct slurm_store *s, int64_t job_id);

/* Transactions around a batch of writes. */
int slurm_store_begin(struct slurm_store *s, struct err *err);
int slurm_store_commit(struct slurm_store *s, struct err *err);
int slurm_store_add_decision(struct slurm_store *s, const struct slurm_decision *d, struct err *err);
int slurm_store_mark_released(struct slurm_store *s, int64_t job_id, int32_t attempt, struct err *err);
int slurm_store_set_started(struct slurm_store *s, int64_t job_id, int32_t attempt, int64_t start_s,
                            const char *placement, struct err *err);
int slurm_store_add_preemption(struct slurm_store *s, int64_t job_id, int32_t attempt, int64_t at_us,
                               struct err *err);
int slurm_store_preempted(const struct slurm_store *s, int64_t job_id, int32_t attempt);
int slurm_store_mark_traced(struct slurm_store *s, int64_t job_id, struct err *err);
int slurm_store_traced(const struct slurm_store *s, int64_t job_id);

#endif
