/* workload: the jobs a simulation replays, whatever trace format they came
 * from. Every trace reader converts into this; the native JSONL writer writes
 * it back out.
 *
 * Times are microseconds (sim_time). A job's `slots` is its request in the
 * cluster's allocation unit: GPUs on a GPU cluster, processors for HPC logs.
 * `limit_us` is the requested wall time (the user estimate), or -1 when the
 * trace has none; a job that would run past it is killed at it.
 *
 * Users and teams are interned: jobs hold indices into the workload's string
 * tables (-1 = unknown), so comparisons are integer compares and the strings
 * are stored once. The workload owns its jobs and strings.
 */
#ifndef FLEETSIM_MODELS_WORKLOAD_H
#define FLEETSIM_MODELS_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"

struct job {
    int64_t id;
    sim_time submit_us;
    sim_time runtime_us; /* what it ran for in the trace (or was sampled) */
    sim_time limit_us;   /* requested time, -1 = none */
    int32_t slots;
    int32_t user; /* index into workload.users, -1 = unknown */
    int32_t team; /* index into workload.teams, -1 = unknown */
    int32_t status; /* trace's outcome code, -1 = unknown */
    long source_line; /* where the reader found it, for messages */
    int32_t job_class; /* enum job_class (models/node_types.h), -1 = the scenario's default */
    /* The queue time the trace recorded (its start - submit), for `trace
     * stats`; replay ignores it. Valid when wait_known is 1; a zeroed job
     * has none. */
    sim_time wait_us;
    int32_t wait_known;
    /* GPU sharing (openb gpu_milli): 1..999 = this share of one GPU, which
     * it may share with other fractional jobs (slots is then 1); 0 = whole
     * GPUs. A zeroed job asks for whole GPUs. */
    int32_t gpu_milli;
    /* GPU-model constraint (openb gpu_spec, PAI gpu_type): 1 + an index into
     * workload.gpu_models, whose text lists the node types it may use
     * ("V100M16|V100M32"); 0 = any node, so a zeroed job has none. */
    int32_t gpu_models;
    /* Node shape (JSONL nodes, a Slurm job's -N): n >= 1 = exactly n nodes
     * with slots / n on each (n divides slots); 0 = slots pooled over any
     * nodes, as HPC logs count processors. A zeroed job is pooled. */
    int32_t nodes;
};

struct string_table {
    char **items;
    size_t n, cap;
    /* open-addressing index of items, for interning in O(1) */
    int32_t *index;
    size_t index_cap;
};

struct workload_meta {
    int64_t max_nodes;  /* -1 = not given */
    int64_t max_procs;  /* -1 = not given */
    int64_t unix_start_s; /* -1 = not given */
    size_t skipped_at_read; /* jobs the reader dropped (with a warning) */
};

struct workload {
    struct job *jobs;
    size_t n, cap;
    struct string_table users;
    struct string_table teams;
    struct string_table gpu_models; /* constraints, as job.gpu_models names them */
    struct workload_meta meta;
};

/* A workload still being read while a replay runs on it (sim_options.feed):
 * wait(ctx, want) blocks until jobs[0, want) are final (read, and where the
 * reader will leave them) or nothing more will be, and returns how many are
 * final, with *state: WORKLOAD_FEED_MORE while more may come,
 * WORKLOAD_FEED_ENDED when the count is the workload's, WORKLOAD_FEED_BROKEN
 * when the reader could not keep to that (jobs out of order, a shift of
 * every submit, an error): the jobs told are not the workload's, and the
 * replay must run again on the whole. Only jobs below the count told may
 * be read, and no other field of the workload, until the reader is done. */
enum workload_feed_state { WORKLOAD_FEED_MORE, WORKLOAD_FEED_ENDED, WORKLOAD_FEED_BROKEN };
struct workload_feed {
    size_t (*wait)(void *ctx, size_t want, enum workload_feed_state *state);
    void *ctx;
};

void workload_init(struct workload *w);
void workload_release(struct workload *w);
/* Appends a copy of *j; returns a pointer to the stored job or NULL (no memory). */
struct job *workload_push(struct workload *w, const struct job *j);
/* Room for n jobs in all, made at once where a reader knows how many it
 * may push (its lines): growing by doubling copies the array at each step,
 * which for a trace of 200,000 jobs was half the page faults of a replay.
 * A hint: when memory is short the pushes grow the array as before. */
void workload_reserve(struct workload *w, size_t n);
/* Sorts jobs by (submit_us, id): the order arrivals happen in. Stable. */
void workload_sort_by_submit(struct workload *w);
/* 1 when b may follow a in the order workload_sort_by_submit leaves them
 * (a sorted workload's every pair; the sort moves no job then). */
int workload_in_arrival_order(const struct job *a, const struct job *b);
/* Largest slots request, 0 for an empty workload. */
int32_t workload_max_slots(const struct workload *w);

/* Interns s and returns its index, or -1 on allocation failure. */
int32_t string_table_intern(struct string_table *t, const char *s);
const char *string_table_get(const struct string_table *t, int32_t index);
/* Frees the strings and the index; the table is empty again. */
void string_table_release(struct string_table *t);

/* The job's GPU-model constraint ("V100M16|V100M32"), or NULL for any. */
const char *workload_job_models(const struct workload *w, const struct job *j);
/* GPUs the job keeps busy: slots, or its share of one GPU. */
double job_gpu_share(const struct job *j);

/* Bounded slowdown with the given lower bound on the runtime (10 s in the
 * literature): max(1, (wait + run) / max(run, bound)). */
double job_bounded_slowdown(sim_time wait_us, sim_time run_us, sim_time bound_us);

#endif
