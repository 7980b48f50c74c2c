/* job: a job as the agent keeps it, in memory and in the store.
 *
 * Life cycle: queued -> running -> completed | failed | cancelled | timeout,
 * and running -> queued again only when the job asked to be requeued (or it
 * provably never started, see agent/executor.h). The record owns its strings
 * and its GPU list; job_free(NULL) is a no-op.
 */
#ifndef FLEETSIM_AGENT_JOB_H
#define FLEETSIM_AGENT_JOB_H

#include <stddef.h>
#include <stdint.h>

enum job_state { JOB_QUEUED = 0, JOB_RUNNING, JOB_COMPLETED, JOB_FAILED, JOB_CANCELLED, JOB_TIMEOUT, JOB_STATE_COUNT };

enum { JOB_USER_MAX = 64, JOB_TEAM_MAX = 64, JOB_NAME_MAX = 128, JOB_REASON_MAX = 256 };

struct agent_job {
    int64_t id;
    int state; /* enum job_state */
    uint32_t uid, gid;
    char user[JOB_USER_MAX];
    char team[JOB_TEAM_MAX]; /* "" = none */
    char name[JOB_NAME_MAX]; /* "" = none */
    int32_t gpus;
    int32_t nodes; /* its shape: exactly this many nodes with gpus / nodes on each; 0 = any (policy.h) */
    int64_t limit_us, submit_us, start_us, end_us; /* -1 = not yet */
    int32_t priority;
    char *argv_json; /* JSON array of strings */
    char *env_json;  /* JSON array of "K=V", already filtered */
    char *cwd, *out_path, *err_path;
    int requeue;
    int32_t attempts;
    int64_t reserved_us; /* the policy's last POLICY_RESERVE, -1 = none */
    int32_t shim_pid;
    int64_t shim_start; /* /proc/PID/stat start time, to tell a reused pid */
    int exit_code;      /* -1 = none */
    int term_signal;    /* 0 = none */
    char reason[JOB_REASON_MAX];
    int cancel_requested;
    int32_t job_class;   /* enum job_class (models/node_types.h): 0 training, 1 fine-tune, 2 inference */
    int64_t attained_us; /* GPU microseconds (GPUs x time run) of its earlier attempts */
    int32_t preemptions; /* times the policy preempted it */
    int64_t first_start_us; /* its first attempt's start, -1 = not yet: the start a replay compares */
    int64_t cpu_us;         /* CPU time of its last attempt's cgroup, -1 = unknown */
    int64_t mem_peak_bytes; /* peak memory of its last attempt's cgroup, -1 = unknown */
    char idem_key[72];      /* the submitter's idempotency key, "" = none */

    /* in memory only */
    int32_t *gpu_idx; /* allocated GPUs (inventory indices) while running */
    int32_t n_gpu_idx;
    int preempting;     /* the policy preempted it: it is being stopped, then goes back to the queue */
    int kill_stage;     /* 0, 1 = SIGTERM sent, 2 = SIGKILL sent */
    int64_t kill_at_us; /* when to take the next kill step */
    int timed_out;
    int pidfd;          /* watching an adopted (non-child) supervisor, -1 = none */
    int is_child;       /* the supervisor is our child: SIGCHLD tells */
    int32_t user_index, team_index;
    int ended;        /* its supervisor is gone; settled at ended_us's instant */
    int64_t ended_us; /* when the agent learnt of the end: the trace's end; kept
                       * while the store refuses the settle, -1 before */
};

struct agent_job *job_new(void);
void job_free(struct agent_job *j);
const char *job_state_name(int state);
int job_state_parse(const char *name);
/* A finished state? */
int job_state_final(int state);
/* Is this a valid team or job name ([A-Za-z0-9._-], 1..max-1 bytes)? */
int job_name_valid(const char *s, size_t max);

#endif
