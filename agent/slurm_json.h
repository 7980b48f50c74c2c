/* slurm_json: what the Slurm backend reads from Slurm 22.05's JSON output
 * (`sinfo --json`, `squeue --json`, openapi/v0.0.38), and the small textual
 * formats inside it: host lists ("n[1-3,7]") and GRES strings ("gpu:8",
 * "gres:gpu:h100:2", "gpu:2(IDX:0-1)").
 *
 * Only the keys the backend uses are read (agent/README.md, "Scheduling a
 * Slurm partition"); a missing optional key reads as unset. A document that
 * is not JSON, or whose `nodes`/`jobs` is not an array, is an error naming
 * the command; Slurm's own `errors` array, when not empty, is reported as
 * its first message. Parsed records own nothing (fixed-size strings; a name
 * too long for its field is an error rather than a truncation, since names
 * are keys). Arrays are the caller's to free().
 */
#ifndef FLEETSIM_AGENT_SLURM_JSON_H
#define FLEETSIM_AGENT_SLURM_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

enum { SLURM_NAME_MAX = 64, SLURM_TEXT_MAX = 256, SLURM_NODELIST_MAX = 1024 };

struct slurm_node {
    char name[SLURM_NAME_MAX];
    int32_t gpus;      /* from gres ("gpu:8"), 0 = none */
    int32_t gpus_used; /* from gres_used */
    int drained;       /* DRAIN / DRAINING / DRAINED: nothing new starts */
    int down;          /* DOWN, NOT_RESPONDING, FAIL...: nothing runs */
    char features[SLURM_TEXT_MAX];
    char reason[SLURM_TEXT_MAX];
};

enum slurm_job_phase {
    SLURM_PENDING = 0, /* waiting: held or released */
    SLURM_ACTIVE,      /* running, configuring, completing, suspended: it holds its nodes */
    SLURM_ENDED        /* a final state */
};

struct slurm_job {
    int64_t id;
    int phase;          /* enum slurm_job_phase */
    char state[32];     /* Slurm's job_state, e.g. "COMPLETED" */
    int held;           /* pending with priority 0 (job_submit.lua, --hold, scontrol hold) */
    char user[SLURM_NAME_MAX];
    char account[SLURM_NAME_MAX];
    char name[128];
    int32_t node_count;
    int32_t gpus_per_node; /* tres_per_node "gres:gpu:N"; 0 = none given */
    int32_t gpus;          /* the whole job: per node x nodes, or tres_per_job */
    int64_t limit_s;       /* -1 = unlimited */
    int64_t submit_s, start_s, end_s; /* 0 = unset */
    int32_t restart_cnt;
    int32_t exit_code;   /* the exit status, or 128+N for signal N */
    char nodes[SLURM_NODELIST_MAX];          /* allocated, host list form; "" while pending */
    char required_nodes[SLURM_NODELIST_MAX]; /* ReqNodeList */
    char comment[SLURM_TEXT_MAX];
    char gres_idx[SLURM_TEXT_MAX]; /* "n1:0,n1:1,...": the GPU indices Slurm gave it, "" = unknown */
};

/* sinfo --json: the nodes of partition (each node once, in Slurm's order). */
int slurm_parse_nodes(const char *text, size_t len, const char *partition, struct slurm_node **out, size_t *n,
                      struct err *err);
/* squeue --json: the jobs of partition (NULL: every job). */
int slurm_parse_jobs(const char *text, size_t len, const char *partition, struct slurm_job **out, size_t *n,
                     struct err *err);
/* Expands a host list ("n[1-3,7],gpu01") into names[0..max). Returns the
 * count, or -1 (malformed, a name too long, or more than max). */
int slurm_hostlist_expand(const char *list, char (*names)[SLURM_NAME_MAX], size_t max);
/* GPUs in a GRES/TRES string ("gpu:8", "gres:gpu:h100:2", "gpu:(null):2(IDX:0-1)",
 * "gres:gpu:2,gres:foo:1"), 0 when it names no GPU. */
int32_t slurm_gres_gpus(const char *s);
/* The indices of "gpu:2(IDX:0-1,4)" into idx[0..max). Returns the count, 0 when
 * there is no IDX part, or -1 when malformed. */
int slurm_gres_indices(const char *s, int32_t *idx, size_t max);

#endif
