/* store: the agent's durable state in SQLite (WAL journal, synchronous=FULL):
 * jobs, their GPU allocations, an event log, drains and a few meta values.
 *
 * Every state change is one transaction, committed before anyone is told
 * about it: a submission is durable before its id is returned, a job is
 * recorded as running (with its supervisor's pid and start time) before it
 * is allowed to exec. After a crash (SIGKILL, power loss) the store holds
 * either the state before a change or after it, never half.
 *
 * Callers group several changes with store_begin/store_commit; a single
 * change outside a transaction commits by itself. The store owns its
 * connection and prepared statements.
 */
#ifndef FLEETSIM_AGENT_STORE_H
#define FLEETSIM_AGENT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/job.h"
#include "sim/err.h"

struct store;

/* 2: jobs.job_class, attained_us, preemptions, first_start_us (a version-1
 * store is migrated); 3: jobs.cpu_us, mem_peak_bytes (the cgroup's figures)
 * and idem_key, unique per uid (a version-2 store is migrated) */
enum { STORE_SCHEMA_VERSION = 3 };

/* Opens (creating) the database at path. */
int store_open(struct store **st, const char *path, struct err *err);
void store_close(struct store *st);

int store_begin(struct store *st, struct err *err);
int store_commit(struct store *st, struct err *err);
void store_rollback(struct store *st);

/* Inserts a queued job and sets j->id. */
int store_insert_job(struct store *st, struct agent_job *j, struct err *err);
/* The job is now running: state, start, attempts, supervisor and its GPUs
 * (uuids[k] on nodes[k]). */
int store_mark_running(struct store *st, const struct agent_job *j, const char *const *uuids,
                       const char *const *nodes, struct err *err);
/* Finished: state, end, exit code, signal, reason; queued for the trace. */
int store_mark_finished(struct store *st, const struct agent_job *j, struct err *err);
/* Back to the queue (requeue, or it never started). */
int store_mark_requeued(struct store *st, const struct agent_job *j, struct err *err);
int store_set_reserved(struct store *st, int64_t id, int64_t reserved_us, struct err *err);
int store_set_cancel_requested(struct store *st, int64_t id, struct err *err);
int store_add_event(struct store *st, int64_t ts_us, int64_t job_id, const char *kind, const char *detail,
                    struct err *err);

/* Calls fn for every queued or running job, in (submit_us, id) order; uuids
 * are the running job's GPUs (n may be 0). fn takes ownership of j; a
 * non-zero return stops the walk and is returned. */
typedef int (*store_job_fn)(void *ctx, struct agent_job *j, char **uuids, size_t n);
int store_load_active(struct store *st, store_job_fn fn, void *ctx, struct err *err);
/* Finished jobs, newest end first; uid < 0 = everyone; limit <= 0 = all. */
int store_load_finished(struct store *st, int64_t uid, int64_t limit, store_job_fn fn, void *ctx, struct err *err);
/* Finished jobs whose trace line may not be written yet, oldest first. */
int store_load_untraced(struct store *st, store_job_fn fn, void *ctx, struct err *err);
int store_mark_traced(struct store *st, int64_t id, struct err *err);
/* One job by id (with the GPUs of its last attempt): 1 found, 0 not, -1 error. */
int store_get_job(struct store *st, int64_t id, store_job_fn fn, void *ctx, struct err *err);
/* Events of a job, oldest first: fn(ctx, ts_us, kind, detail). */
typedef void (*store_event_fn)(void *ctx, int64_t ts_us, const char *kind, const char *detail);
int store_job_events(struct store *st, int64_t id, store_event_fn fn, void *ctx, struct err *err);

/* Drains: target is a node name or a GPU UUID. */
int store_put_drain(struct store *st, const char *target, const char *kind, const char *reason, int is_auto,
                    int64_t ts_us, struct err *err);
int store_del_drain(struct store *st, const char *target, struct err *err);
typedef void (*store_drain_fn)(void *ctx, const char *target, const char *kind, const char *reason, int is_auto);
int store_load_drains(struct store *st, store_drain_fn fn, void *ctx, struct err *err);

/* The job uid submitted with idempotency key `key`: 1 and *id, 0 none, -1 error. */
int store_find_key(struct store *st, uint32_t uid, const char *key, int64_t *id, struct err *err);

/* Was the last error a full disk, an I/O error or a read-only file (the
 * store cannot write now, but may later)? store_clear_error forgets it. */
int store_cannot_write(const struct store *st);
void store_clear_error(struct store *st);
/* Folds the WAL into the database and truncates it (best effort). */
void store_checkpoint(struct store *st);

/* Integer meta values; get returns 1 found, 0 absent, -1 error. */
int store_meta_get(struct store *st, const char *key, int64_t *value, struct err *err);
int store_meta_set(struct store *st, const char *key, int64_t value, struct err *err);

#endif
