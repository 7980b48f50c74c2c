/* _GNU_SOURCE: signalfd, getgrouplist, pipe2 (via executor), MSG_NOSIGNAL. */
#define _GNU_SOURCE
#include "agent/daemon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/api.h"
#include "agent/buf.h"
#include "agent/cgroup.h"
#include "agent/executor.h"
#include "agent/http.h"
#include "agent/inventory.h"
#include "agent/job.h"
#include "agent/log.h"
#include "agent/metrics.h"
#include "agent/notify.h"
#include "agent/nvml.h"
#include "agent/record.h"
#include "agent/scheduler.h"
#include "agent/state_lock.h"
#include "agent/store.h"
#include "models/workload.h"

#ifndef FLEETSIM_VERSION_STRING
#define FLEETSIM_VERSION_STRING "dev"
#endif

/* Connections: MAX_CONNS in all; ROOT_RESERVED of them only root may take
 * (a flood by other users never locks an admin out); an HTTP connection
 * holds one of HTTP_PENDING_MAX slots, with HTTP_HEADER_US to send its
 * request, until its token is checked (it is answered and closed then). */
enum {
    MAX_CONNS = 512,
    ROOT_RESERVED = 32,
    HTTP_PENDING_MAX = 16,
    HTTP_HEADER_US = 2 * 1000000,
    UID_BUCKETS = 256,
};

/* A token bucket per uid for the request rate (max_requests_per_uid). */
struct uid_bucket {
    uint32_t uid;
    int used;
    double tokens;
    int64_t last_us;
};

struct conn {
    int fd;
    int http;
    struct api_caller caller;
    struct buf in, out;
    size_t out_sent;
    int writing;
    int64_t deadline_us; /* closed then: idle (conn_idle_timeout) or, for HTTP, no whole request yet */
};

struct daemon {
    const struct agent_config *cfg;
    struct inventory inv;
    struct nvml *nvml;
    struct store *st;
    struct scheduler sched;
    struct metrics m;
    struct record rec;
    struct cgroup_host cg;

    struct agent_job **queued; /* arrival order: (submit_us, id) */
    uint32_t n_queued, cap_queued;
    struct agent_job **running;
    uint32_t n_running, cap_running;
    int64_t *gpu_job; /* per GPU: running job id, 0 = none */
    struct workload names; /* interned users and teams (only its string tables are used) */

    int lock_fd, sig_fd, api_fd, http_fd;
    struct conn *conns;
    uint32_t n_conns;
    char token[HTTP_TOKEN_MAX + 1];
    char jobs_dir[CONFIG_PATH_MAX + 16];
    int64_t epoch_s;
    int is_root;
    uid_t own_uid;

    int dirty;              /* a change not tied to an event time (cancel, drain): pass now */
    int64_t last_pass_us;   /* time of the last pass: later submissions are new events */
    struct agent_job **ended; /* supervisors gone, not yet settled */
    uint32_t n_ended, cap_ended;
    int64_t retry_pass_us;  /* a failed start is retried then */
    int stopping;
    int64_t *untraced;      /* finished jobs whose trace line is not synced yet */
    size_t n_untraced, cap_untraced;
    int64_t next_sync_us, next_health_us, next_watchdog_us, next_status_us;
    int64_t watchdog_us;
    double start_time_s;
    char hostname[64];
    char status_text[128];
    struct uid_bucket buckets[UID_BUCKETS];
    /* the store cannot write (disk full, read-only, I/O error): no start, no
     * submission until a probe write succeeds */
    int store_bad;
    char store_why[300];
    int64_t next_store_probe_us;
    int store_bad_logged_settle;
};

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void log_err(const char *msg, const struct err *e)
{
    char q[ERR_MSG_MAX + 8];
    log_write(LOGL_ERROR, msg, "error=%s", log_quote(q, sizeof q, e->msg));
}

/* ---- job lists ---- */

/* After a failed store write: a full or read-only store stops new work until
 * it can write again (housekeeping probes it). Returns 1 if that is the cause. */
static int store_trouble(struct daemon *d, const struct err *e)
{
    if (!store_cannot_write(d->st))
        return 0;
    if (!d->store_bad) {
        d->store_bad = 1;
        snprintf(d->store_why, sizeof d->store_why, "%.290s", e->msg);
        log_write(LOGL_ERROR,
                  "state store cannot write: no job starts and no submission is accepted until it can; free space "
                  "in state_dir (the agent resumes by itself)",
                  "error=\"%s\"", d->store_why);
    }
    d->next_store_probe_us = 0;
    return 1;
}

static int list_push(struct agent_job ***list, uint32_t *n, uint32_t *cap, struct agent_job *j)
{
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 64;
        struct agent_job **l = realloc(*list, c * sizeof *l);
        if (!l)
            return -1;
        *list = l;
        *cap = c;
    }
    (*list)[(*n)++] = j;
    return 0;
}

static void list_remove(struct agent_job **list, uint32_t *n, const struct agent_job *j)
{
    for (uint32_t i = 0; i < *n; i++)
        if (list[i] == j) {
            memmove(&list[i], &list[i + 1], (*n - i - 1) * sizeof *list);
            (*n)--;
            return;
        }
}

/* Inserts into the queue keeping (submit_us, id) order. */
static int queue_insert(struct daemon *d, struct agent_job *j)
{
    if (list_push(&d->queued, &d->n_queued, &d->cap_queued, j) != 0)
        return -1;
    uint32_t i = d->n_queued - 1;
    while (i > 0 && (d->queued[i - 1]->submit_us > j->submit_us ||
                     (d->queued[i - 1]->submit_us == j->submit_us && d->queued[i - 1]->id > j->id))) {
        d->queued[i] = d->queued[i - 1];
        i--;
    }
    d->queued[i] = j;
    return 0;
}

static struct agent_job *find_active(struct daemon *d, int64_t id)
{
    for (uint32_t i = 0; i < d->n_running; i++)
        if (d->running[i]->id == id)
            return d->running[i];
    for (uint32_t i = 0; i < d->n_queued; i++)
        if (d->queued[i]->id == id)
            return d->queued[i];
    return NULL;
}

static void job_dir(const struct daemon *d, const struct agent_job *j, char *out, size_t len)
{
    snprintf(out, len, "%s/%lld.%d", d->jobs_dir, (long long)j->id, j->attempts);
}

static void default_output(const struct agent_job *j, const char *which, char *out, size_t len)
{
    snprintf(out, len, "%s%sfleetsim-%lld.%s", j->cwd, strcmp(j->cwd, "/") == 0 ? "" : "/", (long long)j->id, which);
}

static const char *out_path(const struct agent_job *j, char *buf, size_t len)
{
    if (j->out_path && *j->out_path)
        return j->out_path;
    default_output(j, "out", buf, len);
    return buf;
}

static const char *err_path(const struct agent_job *j, char *buf, size_t len)
{
    if (j->err_path && *j->err_path)
        return j->err_path;
    default_output(j, "err", buf, len);
    return buf;
}

static void intern_names(struct daemon *d, struct agent_job *j)
{
    j->user_index = string_table_intern(&d->names.users, j->user);
    j->team_index = j->team[0] ? string_table_intern(&d->names.teams, j->team) : -1;
}

static void mark_event(struct daemon *d, int64_t ts)
{
    (void)ts;
    d->dirty = 1;
}

/* ---- finishing jobs ---- */

static void placement_of(const struct daemon *d, const struct agent_job *j, char (*names)[INV_NODE_NAME_MAX + 16],
                         const char **ptrs, size_t max, size_t *n)
{
    *n = 0;
    for (int32_t k = 0; k < j->n_gpu_idx && *n < max; k++) {
        int32_t g = j->gpu_idx[k];
        if (g < 0 || (uint32_t)g >= d->inv.n_gpus)
            continue;
        snprintf(names[*n], sizeof names[*n], "%s:%d", d->inv.nodes[d->inv.gpus[g].node].name,
                 d->inv.gpus[g].local_index);
        ptrs[*n] = names[*n];
        (*n)++;
    }
}

static void trace_job(struct daemon *d, const struct agent_job *j)
{
    static char names[INV_MAX_GPUS][INV_NODE_NAME_MAX + 16];
    static const char *ptrs[INV_MAX_GPUS];
    size_t n;
    placement_of(d, j, names, ptrs, INV_MAX_GPUS, &n);
    struct err err;
    err_clear(&err);
    if (record_append(&d->rec, j, ptrs, n, &err) != 0) {
        log_err("cannot record the job in the trace", &err);
        return;
    }
    if (d->n_untraced == d->cap_untraced) {
        size_t c = d->cap_untraced ? d->cap_untraced * 2 : 64;
        int64_t *u = realloc(d->untraced, c * sizeof *u);
        if (!u)
            return;
        d->untraced = u;
        d->cap_untraced = c;
    }
    d->untraced[d->n_untraced++] = j->id;
}

/* The trace lines written so far are made durable, then marked in the store. */
static void sync_trace(struct daemon *d)
{
    if (!d->n_untraced)
        return;
    struct err err;
    err_clear(&err);
    if (record_sync(&d->rec, &err) != 0) {
        log_err("cannot sync the trace", &err);
        return;
    }
    if (store_begin(d->st, &err) != 0) {
        log_err("cannot mark jobs traced", &err);
        return;
    }
    for (size_t i = 0; i < d->n_untraced; i++)
        if (store_mark_traced(d->st, d->untraced[i], &err) != 0)
            break;
    if (err.set) {
        store_rollback(d->st);
        log_err("cannot mark jobs traced", &err);
        return;
    }
    if (store_commit(d->st, &err) != 0) {
        int was_bad = d->store_bad;
        if (!store_trouble(d, &err) || !was_bad) /* while it cannot write, once is enough */
            log_err("cannot mark jobs traced", &err);
        return;
    }
    d->n_untraced = 0;
}

static void release_gpus(struct daemon *d, struct agent_job *j)
{
    for (int32_t k = 0; k < j->n_gpu_idx; k++)
        if (j->gpu_idx[k] >= 0 && (uint32_t)j->gpu_idx[k] < d->inv.n_gpus && d->gpu_job[j->gpu_idx[k]] == j->id)
            d->gpu_job[j->gpu_idx[k]] = 0;
}

/* The supervisor of running job j is gone: read what it wrote and settle
 * the job (finished, failed, requeued, or back to the queue if it never ran).
 * noticed_us is when the running agent learnt of the end, or -1 when it was
 * not running then (recovery): see note_ended for why the end is that. */
static void settle(struct daemon *d, struct agent_job *j, int64_t noticed_us)
{
    char dir[CONFIG_PATH_MAX + 64];
    job_dir(d, j, dir, sizeof dir);
    struct executor_status es;
    int have = executor_read_status(dir, &es);
    if (d->cg.usable) {
        /* the supervisor removes the cgroup; if it died, nothing of the job may go on */
        char cgp[CGROUP_PATH_MAX + 32];
        cgroup_job_path(&d->cg, j->id, cgp, sizeof cgp);
        int left = cgroup_count(cgp);
        if (left > 0)
            log_write(LOGL_WARN, "killing what is left of a job", "job=%lld processes=%d", (long long)j->id, left);
        if (cgroup_remove(cgp) != 0)
            log_write(LOGL_ERROR, "cannot remove a job's cgroup", "job=%lld cgroup=%s", (long long)j->id, cgp);
    }
    if (have == 1) {
        j->cpu_us = es.cpu_us;
        j->mem_peak_bytes = es.mem_peak_bytes;
        if (es.survivors > 0)
            log_write(LOGL_ERROR, "processes of a job survived cgroup.kill", "job=%lld processes=%d",
                      (long long)j->id, es.survivors);
    }
    int64_t now = now_us();
    int back_to_queue = 0, not_started = 0;
    char q[JOB_REASON_MAX + 8];
    /* what settling changes in the job, restored if the store refuses (a
     * retry must not count an attempt or a preemption twice) */
    struct agent_job saved = *j;
    uint64_t saved_requeued = d->m.requeued, saved_lost = d->m.lost, saved_start_failures = d->m.start_failures;
    if (have == 1) {
        if (noticed_us >= 0)
            j->end_us = noticed_us > j->start_us ? noticed_us : now;
        else
            j->end_us = es.end_us > j->start_us ? es.end_us : now;
        j->exit_code = es.exit_code;
        j->term_signal = es.term_signal;
        if (es.error[0]) {
            j->state = JOB_FAILED;
            snprintf(j->reason, sizeof j->reason, "could not start: %.200s", es.error);
            d->m.start_failures++;
        } else if (j->preempting && !j->cancel_requested) {
            /* stopped by the policy: back to the queue, with its service */
            back_to_queue = 1;
            j->preemptions++;
            j->attained_us += (int64_t)j->gpus * (j->end_us - j->start_us);
            snprintf(j->reason, sizeof j->reason, "preempted by the policy");
        } else if (j->cancel_requested) {
            j->state = JOB_CANCELLED;
            if (!j->reason[0])
                snprintf(j->reason, sizeof j->reason, "cancelled");
        } else if (j->timed_out || (es.term_signal && es.end_us - j->start_us >= j->limit_us)) {
            /* by the end its supervisor saw: a kill just before the limit is no timeout */
            j->state = JOB_TIMEOUT;
            snprintf(j->reason, sizeof j->reason, "time limit reached");
        } else if (es.exit_code == 0) {
            j->state = JOB_COMPLETED;
            j->reason[0] = '\0';
        } else {
            j->state = JOB_FAILED;
            if (es.term_signal)
                snprintf(j->reason, sizeof j->reason, "killed by signal %d", es.term_signal);
            else
                snprintf(j->reason, sizeof j->reason, "exit code %d", es.exit_code);
        }
    } else if (!executor_started(dir)) {
        /* no start marker: the supervisor never got the go, nothing ran */
        back_to_queue = 1;
        not_started = 1;
        j->attempts--;
        snprintf(j->reason, sizeof j->reason,
                 "not started: the agent stopped before the start was released, or the supervisor found no room "
                 "in state_dir");
    } else if (j->requeue) {
        back_to_queue = 1;
        d->m.requeued++;
        snprintf(j->reason, sizeof j->reason, "requeued: its supervisor died without reporting the end");
    } else {
        j->state = JOB_FAILED;
        j->end_us = now;
        j->exit_code = -1;
        j->term_signal = 0;
        snprintf(j->reason, sizeof j->reason, "lost: its supervisor died without reporting the end");
        d->m.lost++;
    }
    struct err err;
    err_clear(&err);
    if (store_begin(d->st, &err) == 0) {
        int rc;
        if (back_to_queue)
            rc = store_mark_requeued(d->st, j, &err);
        else
            rc = store_mark_finished(d->st, j, &err);
        if (rc == 0)
            rc = store_add_event(d->st, now, j->id, back_to_queue ? "requeued" : job_state_name(j->state), j->reason,
                                 &err);
        if (rc == 0)
            rc = store_commit(d->st, &err);
        else
            store_rollback(d->st);
    }
    if (err.set) {
        /* the store refused: keep the job as it was and look again later
         * (housekeeping polls supervisors that are not our children) */
        if (!store_trouble(d, &err) || !d->store_bad_logged_settle)
            log_err("cannot record a job's end; will retry", &err);
        d->store_bad_logged_settle = d->store_bad;
        /* the end found now stays the end, however long the store is down
         * (note_ended keeps it): the GPUs stay held, but the job had ended */
        if (j->end_us >= 0 && !back_to_queue)
            j->ended_us = j->end_us;
        j->state = saved.state;
        j->attempts = saved.attempts;
        j->preemptions = saved.preemptions;
        j->attained_us = saved.attained_us;
        j->end_us = saved.end_us;
        j->exit_code = saved.exit_code;
        j->term_signal = saved.term_signal;
        j->cpu_us = saved.cpu_us;
        j->mem_peak_bytes = saved.mem_peak_bytes;
        memcpy(j->reason, saved.reason, sizeof j->reason);
        d->m.requeued = saved_requeued;
        d->m.lost = saved_lost;
        d->m.start_failures = saved_start_failures;
        j->is_child = 0;
        if (j->pidfd >= 0) {
            close(j->pidfd);
            j->pidfd = -1;
        }
        return;
    }
    if (j->pidfd >= 0) {
        close(j->pidfd);
        j->pidfd = -1;
    }
    release_gpus(d, j);
    list_remove(d->running, &d->n_running, j);
    if (back_to_queue) {
        if (not_started)
            d->retry_pass_us = now + 1000000; /* not at once: its supervisor may have found no room */
        else
            d->dirty = 1;
        log_write(LOGL_WARN, "job back in the queue", "job=%lld reason=%s", (long long)j->id,
                  log_quote(q, sizeof q, j->reason));
        j->state = JOB_QUEUED;
        j->start_us = -1;
        j->shim_pid = 0;
        j->shim_start = 0;
        j->reserved_us = -1;
        j->kill_stage = 0;
        j->timed_out = 0;
        if (j->preempting)
            scheduler_observe(&d->sched, POLICY_EVENT_PREEMPTED, j->end_us, j, j->end_us - j->start_us);
        j->preempting = 0;
        j->end_us = j->ended_us = -1;
        free(j->gpu_idx);
        j->gpu_idx = NULL;
        j->n_gpu_idx = 0;
        if (queue_insert(d, j) != 0)
            job_free(j);
        executor_cleanup(dir);
        return;
    }
    scheduler_observe(&d->sched, POLICY_EVENT_FINISHED, j->end_us, j, j->end_us - j->start_us);
    d->m.finished[j->state]++;
    log_write(j->state == JOB_COMPLETED ? LOGL_INFO : LOGL_WARN, "job ended",
              "job=%lld state=%s exit=%d signal=%d runtime_s=%.3f reason=%s", (long long)j->id,
              job_state_name(j->state), j->exit_code, j->term_signal, (double)(j->end_us - j->start_us) / 1e6,
              log_quote(q, sizeof q, j->reason));
    trace_job(d, j);
    executor_cleanup(dir);
    job_free(j);
}

/* ---- starting jobs ---- */

static char *job_env(struct daemon *d, const struct agent_job *j, const int32_t *gpus)
{
    json_error_t je;
    json_t *env = json_loads(j->env_json, 0, &je);
    if (!json_is_array(env)) {
        json_decref(env);
        env = json_array();
    }
    struct buf cvd;
    buf_init(&cvd);
    buf_puts(&cvd, "CUDA_VISIBLE_DEVICES=");
    for (int32_t k = 0; k < j->gpus; k++)
        buf_printf(&cvd, "%s%s", k ? "," : "", d->inv.gpus[gpus[k]].uuid);
    char extra[3][96];
    snprintf(extra[0], sizeof extra[0], "FLEETSIM_JOB_ID=%lld", (long long)j->id);
    snprintf(extra[1], sizeof extra[1], "FLEETSIM_GPUS=%d", j->gpus);
    snprintf(extra[2], sizeof extra[2], "FLEETSIM_ATTEMPT=%d", j->attempts);
    json_array_append_new(env, json_string(cvd.data ? cvd.data : "CUDA_VISIBLE_DEVICES="));
    for (int i = 0; i < 3; i++)
        json_array_append_new(env, json_string(extra[i]));
    buf_release(&cvd);
    char *text = json_dumps(env, JSON_COMPACT);
    json_decref(env);
    return text;
}

struct pending_start {
    struct agent_job *job;
    int32_t *gpus;
    pid_t pid;
    int64_t start;
    int go_fd;
};

static void kill_step(struct daemon *d, struct agent_job *j, int64_t now);

/* The policy stops a running job: SIGTERM now, SIGKILL after kill_grace,
 * and when its supervisor reports the end, settle() puts it back in the
 * queue with its attempt count and service (FLEETSIM_ATTEMPT goes up). */
static void preempt_job(struct daemon *d, struct agent_job *j, int64_t now)
{
    if (j->preempting || j->cancel_requested || j->timed_out || j->ended)
        return;
    j->preempting = 1;
    d->m.preempted++;
    log_write(LOGL_INFO, "job preempted by the policy", "job=%lld user=%s ran_s=%.3f", (long long)j->id, j->user,
              (double)(now - j->start_us) / 1e6);
    kill_step(d, j, now);
}

/* One scheduling pass at pass_now. As in the simulator's engine, the pass
 * sees the jobs submitted up to pass_now (the queue is in submit order) and
 * the running jobs whose ends at or before it have been settled. */
static void run_pass(struct daemon *d, int64_t pass_now)
{
    int64_t now = now_us();
    if (pass_now < d->last_pass_us)
        pass_now = d->last_pass_us; /* the policy's clock never runs backwards */
    d->last_pass_us = pass_now;
    uint32_t visible = d->n_queued;
    while (visible > 0 && d->queued[visible - 1]->submit_us > pass_now)
        visible--;
    if (visible == 0)
        return;
    struct sched_result res;
    sched_result_init(&res);
    struct err err;
    err_clear(&err);
    if (d->sched.failed) /* reported once when it failed; running jobs go on */
        return;
    if (d->store_bad) /* a start must be recorded before it runs: none until the store writes */
        return;
    if (scheduler_pass(&d->sched, pass_now, &d->inv, d->queued, visible, d->running, d->n_running, &res, &err) !=
        0) {
        if (d->sched.failed) {
            log_write(LOGL_ERROR, "policy failed: no new job starts until the agent is restarted with a working policy",
                      "policy=%s error=%s running=%u queued=%u", d->sched.ph.spec, err.msg, d->n_running,
                      d->n_queued);
        } else {
            log_err("scheduling pass refused", &err);
            d->retry_pass_us = now + 5000000;
        }
        sched_result_release(&res);
        return;
    }
    for (uint32_t k = 0; k < res.n_preempts; k++)
        preempt_job(d, res.preempts[k], now);
    if (res.spanning)
        log_write(LOGL_INFO, "starts spread over nodes not carried out: a job runs on one node", "count=%u total=%llu",
                  res.spanning, (unsigned long long)d->sched.spanning_refused);
    /* res.resumed: the deferred starts of a preempting pass go out now; as
     * in the simulator, the policy is asked again at the next event */
    log_write(LOGL_DEBUG, "pass", "at_us=%lld visible=%u running=%u starts=%u reserved=%u left_out=%u",
              (long long)pass_now, visible, d->n_running, res.n_starts, res.n_reserved, res.left_out);
    struct pending_start *ps = calloc(res.n_starts + 1, sizeof *ps);
    if (!ps) {
        sched_result_release(&res);
        return;
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < res.n_starts; k++) {
        struct agent_job *j = res.starts[k].job;
        j->attempts++;
        char dir[CONFIG_PATH_MAX + 64];
        job_dir(d, j, dir, sizeof dir);
        executor_cleanup(dir); /* leftovers of an attempt that never ran */
        char *env = NULL;
        char cgp[CGROUP_PATH_MAX + 32] = "";
        struct err cerr;
        err_clear(&cerr);
        if (d->cg.usable) {
            cgroup_job_path(&d->cg, j->id, cgp, sizeof cgp);
            if (cgroup_job_create(cgp, &cerr) != 0) {
                log_err("cannot create a job's cgroup", &cerr);
                j->attempts--;
                d->m.start_failures++;
                continue;
            }
        }
        if (mkdir(dir, 0700) != 0 || !(env = job_env(d, j, res.starts[k].gpus))) {
            log_write(LOGL_ERROR, "cannot prepare a job's directory", "job=%lld dir=%s errno=%d", (long long)j->id,
                      dir, errno);
            free(env);
            j->attempts--;
            d->m.start_failures++;
            continue;
        }
        char ob[CONFIG_PATH_MAX + 64], eb[CONFIG_PATH_MAX + 64];
        struct executor_spec spec = {dir, j->argv_json, env, j->cwd, out_path(j, ob, sizeof ob),
                                     err_path(j, eb, sizeof eb), j->uid, j->gid, j->user, d->is_root, cgp};
        struct err serr;
        err_clear(&serr);
        if (executor_spawn(&spec, &ps[n].pid, &ps[n].start, &ps[n].go_fd, &serr) != 0) {
            log_err("cannot start a job supervisor", &serr);
            free(env);
            j->attempts--;
            executor_cleanup(dir);
            d->m.start_failures++;
            continue;
        }
        free(env);
        ps[n].job = j;
        ps[n].gpus = res.starts[k].gpus;
        n++;
    }
    if (n == 0 && res.n_reserved == 0) {
        if (res.n_starts)
            d->retry_pass_us = now + 1000000;
        /* a start deferred for a preempted job's GPUs runs when that job
         * ends (its end makes the next pass); nothing to retry here */
        free(ps);
        sched_result_release(&res);
        return;
    }
    /* one transaction: every start of the pass and the changed reservations */
    int ok = store_begin(d->st, &err) == 0;
    const char **uuids = calloc(d->inv.n_gpus + 1, sizeof *uuids);
    const char **nodes = calloc(d->inv.n_gpus + 1, sizeof *nodes);
    if (!uuids || !nodes)
        ok = err_set(&err, NULL, 0, 0, "out of memory") == 0;
    for (uint32_t k = 0; ok && k < n; k++) {
        struct agent_job *j = ps[k].job;
        int32_t saved_n = j->n_gpu_idx;
        int32_t *saved = j->gpu_idx;
        j->gpu_idx = ps[k].gpus;
        j->n_gpu_idx = j->gpus;
        for (int32_t g = 0; g < j->gpus; g++) {
            uuids[g] = d->inv.gpus[ps[k].gpus[g]].uuid;
            nodes[g] = d->inv.nodes[d->inv.gpus[ps[k].gpus[g]].node].name;
        }
        j->start_us = pass_now;
        if (j->first_start_us < 0)
            j->first_start_us = pass_now;
        j->shim_pid = ps[k].pid;
        j->shim_start = ps[k].start;
        ok = store_mark_running(d->st, j, uuids, nodes, &err) == 0 &&
             store_add_event(d->st, pass_now, j->id, "started", "", &err) == 0;
        j->gpu_idx = saved;
        j->n_gpu_idx = saved_n;
    }
    free(uuids);
    free(nodes);
    for (uint32_t k = 0; ok && k < res.n_reserved; k++)
        ok = store_set_reserved(d->st, res.reserved[k]->id, res.reserved[k]->reserved_us, &err) == 0;
    if (ok)
        ok = store_commit(d->st, &err) == 0;
    else
        store_rollback(d->st);
    if (!ok) {
        if (!store_trouble(d, &err))
            log_err("cannot record the pass's starts; nothing started", &err);
        for (uint32_t k = 0; k < n; k++) {
            executor_abandon(ps[k].go_fd);
            ps[k].job->attempts--;
            ps[k].job->start_us = -1;
            ps[k].job->shim_pid = 0;
        }
        d->retry_pass_us = now + 1000000;
        free(ps);
        sched_result_release(&res);
        return;
    }
    for (uint32_t k = 0; k < n; k++) {
        struct agent_job *j = ps[k].job;
        j->gpu_idx = malloc((size_t)j->gpus * sizeof *j->gpu_idx);
        if (j->gpu_idx) {
            memcpy(j->gpu_idx, ps[k].gpus, (size_t)j->gpus * sizeof *j->gpu_idx);
            j->n_gpu_idx = j->gpus;
        }
        for (int32_t g = 0; g < j->n_gpu_idx; g++)
            d->gpu_job[j->gpu_idx[g]] = j->id;
        j->state = JOB_RUNNING;
        j->is_child = 1;
        j->pidfd = -1;
        j->reason[0] = '\0';
        list_remove(d->queued, &d->n_queued, j);
        list_push(&d->running, &d->n_running, &d->cap_running, j);
        if (executor_go(ps[k].go_fd) != 0)
            log_write(LOGL_WARN, "job supervisor died before its go", "job=%lld", (long long)j->id);
        metrics_observe_wait(&d->m, j->start_us - j->submit_us);
        scheduler_observe(&d->sched, POLICY_EVENT_STARTED, j->start_us, j, 0);
        char gpus[512] = "";
        size_t off = 0;
        for (int32_t g = 0; g < j->n_gpu_idx && off < sizeof gpus - 80; g++)
            off += (size_t)snprintf(gpus + off, sizeof gpus - off, "%s%s:%d", g ? "," : "",
                                    d->inv.nodes[d->inv.gpus[j->gpu_idx[g]].node].name,
                                    d->inv.gpus[j->gpu_idx[g]].local_index);
        log_write(LOGL_INFO, "job started", "job=%lld user=%s gpus=%s pid=%d wait_s=%.3f", (long long)j->id, j->user,
                  gpus, (int)j->shim_pid, (double)(j->start_us - j->submit_us) / 1e6);
    }
    free(ps);
    sched_result_release(&res);
}

/* ---- time limits and cancellation ---- */

static void kill_step(struct daemon *d, struct agent_job *j, int64_t now)
{
    if (j->kill_stage == 0) {
        executor_signal(j->shim_pid, j->shim_start, 0);
        j->kill_stage = 1;
        j->kill_at_us = now + d->cfg->kill_grace_us;
    } else if (j->kill_stage == 1 && now >= j->kill_at_us) {
        executor_signal(j->shim_pid, j->shim_start, 1);
        j->kill_stage = 2;
        j->kill_at_us = now + 5000000; /* repeat until the supervisor reports */
    } else if (j->kill_stage == 2 && now >= j->kill_at_us) {
        executor_signal(j->shim_pid, j->shim_start, 1);
        j->kill_at_us = now + 5000000;
    }
}

static void check_timers(struct daemon *d, int64_t now)
{
    for (uint32_t i = 0; i < d->n_running; i++) {
        struct agent_job *j = d->running[i];
        if (j->ended)
            continue;
        if (!j->timed_out && !j->cancel_requested && now >= j->start_us + j->limit_us) {
            j->timed_out = 1;
            log_write(LOGL_INFO, "job reached its time limit", "job=%lld limit_s=%.3f", (long long)j->id,
                      (double)j->limit_us / 1e6);
            kill_step(d, j, now);
        } else if ((j->timed_out || j->cancel_requested || j->preempting) &&
                   (j->kill_stage == 0 || now >= j->kill_at_us)) {
            kill_step(d, j, now);
        }
    }
}

static int64_t next_timer(const struct daemon *d)
{
    int64_t t = INT64_MAX;
    for (uint32_t i = 0; i < d->n_running; i++) {
        const struct agent_job *j = d->running[i];
        if (j->ended)
            continue;
        int64_t at = (j->timed_out || j->cancel_requested || j->preempting) ? j->kill_at_us : j->start_us + j->limit_us;
        if (at < t)
            t = at;
    }
    return t;
}

/* ---- health ---- */

static void apply_drain_record(struct daemon *d, const char *target, const char *kind, const char *reason, int is_auto)
{
    if (strcmp(kind, "node") == 0) {
        int n = inventory_find_node(&d->inv, target);
        if (n >= 0) {
            d->inv.nodes[n].drained = 1;
            snprintf(d->inv.nodes[n].drain_reason, sizeof d->inv.nodes[n].drain_reason, "%s", reason);
        }
        return;
    }
    int g = inventory_find_gpu(&d->inv, target);
    if (g >= 0) {
        d->inv.gpus[g].drained = 1;
        d->inv.gpus[g].auto_drained = is_auto;
        snprintf(d->inv.gpus[g].drain_reason, sizeof d->inv.gpus[g].drain_reason, "%s", reason);
    }
}

static void drain_cb(void *ctx, const char *target, const char *kind, const char *reason, int is_auto)
{
    apply_drain_record(ctx, target, kind, reason, is_auto);
}

static void health_observe(struct daemon *d, uint32_t g, const struct gpu_health_sample *s)
{
    struct health_rules rules = {d->cfg->xid_drain, d->cfg->n_xid_drain, d->cfg->drain_on_ecc};
    char reason[INV_REASON_MAX];
    if (!inventory_health_update(&d->inv, g, s, &rules, reason, sizeof reason))
        return;
    const struct inv_gpu *gpu = &d->inv.gpus[g];
    char q[INV_REASON_MAX + 8];
    log_write(LOGL_WARN, "gpu drained by a health rule", "node=%s gpu=%d uuid=%s reason=%s",
              d->inv.nodes[gpu->node].name, gpu->local_index, gpu->uuid, log_quote(q, sizeof q, reason));
    d->m.auto_drains++;
    struct err err;
    err_clear(&err);
    int64_t now = now_us();
    if (store_begin(d->st, &err) != 0 || store_put_drain(d->st, gpu->uuid, "gpu", reason, 1, now, &err) != 0 ||
        store_add_event(d->st, now, 0, "gpu_drained", reason, &err) != 0 || store_commit(d->st, &err) != 0) {
        store_rollback(d->st);
        log_err("cannot record a drain", &err);
    }
    mark_event(d, now);
}

static void poll_health(struct daemon *d)
{
    if (!d->nvml)
        return;
    for (uint32_t g = 0; g < d->inv.n_gpus; g++) {
        struct gpu_health_sample s;
        if (nvml_poll_health(d->nvml, g, &s) == 0)
            health_observe(d, g, &s);
    }
}

/* The fake inventory's own health fields (xid, ecc_uncorrected), read at
 * start and on SIGHUP, so a test can inject an XID. */
static void fake_health(struct daemon *d, const struct inventory *fresh)
{
    for (uint32_t g = 0; g < d->inv.n_gpus && g < fresh->n_gpus; g++) {
        if (strcmp(d->inv.gpus[g].uuid, fresh->gpus[g].uuid) != 0)
            continue;
        struct gpu_health_sample s = {fresh->gpus[g].last_xid != d->inv.gpus[g].last_xid ? fresh->gpus[g].last_xid
                                                                                          : 0,
                                      fresh->gpus[g].ecc_uncorrected};
        health_observe(d, g, &s);
    }
}

/* ---- access ---- */

static int user_name(uint32_t uid, char *out, size_t len)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &res) == 0 && res) {
        snprintf(out, len, "%s", res->pw_name);
        return 0;
    }
    snprintf(out, len, "uid%u", uid);
    return -1;
}

static int is_admin(const struct daemon *d, const struct api_caller *c)
{
    if (c->via_http || c->uid == 0)
        return 1;
    if (!d->cfg->admin_group[0])
        return 0;
    struct group gr, *gres = NULL;
    char buf[8192];
    if (getgrnam_r(d->cfg->admin_group, &gr, buf, sizeof buf, &gres) != 0 || !gres)
        return 0;
    if (c->gid == gres->gr_gid)
        return 1;
    char name[JOB_USER_MAX];
    if (user_name(c->uid, name, sizeof name) != 0)
        return 0;
    gid_t groups[256];
    int n = 256;
    if (getgrouplist(name, (gid_t)c->gid, groups, &n) < 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (groups[i] == gres->gr_gid)
            return 1;
    return 0;
}

/* ---- request handlers ---- */

static json_t *job_json(const struct daemon *d, const struct agent_job *j, char **uuids, size_t n_uuids, int private)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(j->id));
    json_object_set_new(o, "state", json_string(job_state_name(j->state)));
    json_object_set_new(o, "user", json_string(j->user));
    json_object_set_new(o, "uid", json_integer(j->uid));
    if (j->team[0])
        json_object_set_new(o, "team", json_string(j->team));
    if (j->name[0])
        json_object_set_new(o, "name", json_string(j->name));
    json_object_set_new(o, "gpus", json_integer(j->gpus));
    json_object_set_new(o, "limit_us", json_integer(j->limit_us));
    json_object_set_new(o, "submit_us", json_integer(j->submit_us));
    if (j->start_us >= 0)
        json_object_set_new(o, "start_us", json_integer(j->start_us));
    if (j->end_us >= 0)
        json_object_set_new(o, "end_us", json_integer(j->end_us));
    if (j->state == JOB_QUEUED && j->reserved_us >= 0)
        json_object_set_new(o, "reserved_us", json_integer(j->reserved_us));
    if (j->exit_code >= 0)
        json_object_set_new(o, "exit_code", json_integer(j->exit_code));
    if (j->term_signal)
        json_object_set_new(o, "signal", json_integer(j->term_signal));
    if (j->reason[0])
        json_object_set_new(o, "reason", json_string(j->reason));
    if (j->requeue)
        json_object_set_new(o, "requeue", json_true());
    json_object_set_new(o, "attempts", json_integer(j->attempts));
    json_object_set_new(o, "class", json_string(job_class_name((enum job_class)j->job_class)));
    if (j->preemptions)
        json_object_set_new(o, "preemptions", json_integer(j->preemptions));
    int64_t cpu_us = j->cpu_us, mem = j->mem_peak_bytes;
    if (j->state == JOB_RUNNING && d->cg.usable) {
        char cgp[CGROUP_PATH_MAX + 32];
        cgroup_job_path(&d->cg, j->id, cgp, sizeof cgp);
        cgroup_read_stats(cgp, &cpu_us, &mem);
    }
    if (cpu_us >= 0)
        json_object_set_new(o, "cpu_s", json_real((double)cpu_us / 1e6));
    if (mem >= 0)
        json_object_set_new(o, "mem_peak_bytes", json_integer(mem));
    if (j->preempting && j->state == JOB_RUNNING)
        json_object_set_new(o, "preempting", json_true());
    if (j->cancel_requested && j->state == JOB_RUNNING)
        json_object_set_new(o, "cancelling", json_true());
    json_t *gl = json_array(), *pl = json_array();
    if (j->state == JOB_RUNNING) {
        for (int32_t k = 0; k < j->n_gpu_idx; k++) {
            const struct inv_gpu *g = &d->inv.gpus[j->gpu_idx[k]];
            char p[INV_NODE_NAME_MAX + 16];
            snprintf(p, sizeof p, "%s:%d", d->inv.nodes[g->node].name, g->local_index);
            json_array_append_new(gl, json_string(g->uuid));
            json_array_append_new(pl, json_string(p));
        }
    } else {
        for (size_t k = 0; k < n_uuids; k++) {
            json_array_append_new(gl, json_string(uuids[k]));
            int g = inventory_find_gpu(&d->inv, uuids[k]);
            if (g >= 0) {
                char p[INV_NODE_NAME_MAX + 16];
                snprintf(p, sizeof p, "%s:%d", d->inv.nodes[d->inv.gpus[g].node].name, d->inv.gpus[g].local_index);
                json_array_append_new(pl, json_string(p));
            }
        }
    }
    json_object_set_new(o, "gpu_uuids", gl);
    json_object_set_new(o, "placement", pl);
    if (private) {
        json_error_t je;
        json_t *argv = json_loads(j->argv_json, 0, &je);
        json_object_set_new(o, "argv", argv ? argv : json_array());
        json_object_set_new(o, "cwd", json_string(j->cwd));
        char ob[CONFIG_PATH_MAX + 64], eb[CONFIG_PATH_MAX + 64];
        json_object_set_new(o, "output", json_string(out_path(j, ob, sizeof ob)));
        json_object_set_new(o, "error", json_string(err_path(j, eb, sizeof eb)));
        if (j->state == JOB_RUNNING)
            json_object_set_new(o, "supervisor_pid", json_integer(j->shim_pid));
    }
    return o;
}

static char *ok_line(json_t *o)
{
    json_object_set_new(o, "ok", json_true());
    return api_line(o);
}

static int64_t total_gpus(const struct daemon *d)
{
    return d->inv.n_gpus;
}

/* GPUs of the largest node (and its name): a local job runs on one node */
static int64_t largest_node(const struct daemon *d, const char **name)
{
    int64_t best = 0;
    *name = "";
    for (uint32_t i = 0; i < d->inv.n_nodes; i++)
        if (d->inv.nodes[i].n_gpus > best) {
            best = d->inv.nodes[i].n_gpus;
            *name = d->inv.nodes[i].name;
        }
    return best;
}

static char *op_submit(struct daemon *d, const struct api_caller *c, json_t *job)
{
    char msg[512];
    if (c->via_http)
        return api_error_line("permission_denied",
                              "submit through the local socket ('fleetsim-agent submit'): only there does the "
                              "kernel say who the user is");
    if (!d->is_root && c->uid != d->own_uid) {
        snprintf(msg, sizeof msg, "this agent runs as uid %u and can run jobs only for that user, not uid %u",
                 (unsigned)d->own_uid, c->uid);
        return api_error_line("permission_denied", msg);
    }
    if (d->n_queued >= (uint64_t)d->cfg->max_queued) {
        snprintf(msg, sizeof msg, "the queue is full (%lld jobs waiting; max_queued)", (long long)d->cfg->max_queued);
        return api_error_line("queue_full", msg);
    }
    int64_t gpus = json_integer_value(json_object_get(job, "gpus"));
    if (gpus > total_gpus(d)) {
        snprintf(msg, sizeof msg, "job asks for %lld GPUs; this agent has %lld", (long long)gpus,
                 (long long)total_gpus(d));
        return api_error_line("bad_request", msg);
    }
    const char *big_name;
    int64_t big = largest_node(d, &big_name);
    if (gpus > big) {
        snprintf(msg, sizeof msg,
                 "job asks for %lld GPUs; the largest node here ('%.64s') has %lld: a job of this agent runs on one "
                 "node (multi-node jobs need a Slurm backend)",
                 (long long)gpus, big_name, (long long)big);
        return api_error_line("bad_request", msg);
    }
    int64_t limit_us = d->cfg->default_time_us;
    json_t *t = json_object_get(job, "time_s");
    if (t) {
        double s = json_number_value(t);
        limit_us = (int64_t)llround(s * 1e6);
        if (limit_us < 1)
            limit_us = 1;
        if (limit_us > d->cfg->max_time_us) {
            snprintf(msg, sizeof msg, "time limit %.0f s is longer than this agent's max_time (%lld s)", s,
                     (long long)(d->cfg->max_time_us / 1000000));
            return api_error_line("bad_request", msg);
        }
    }
    const char *team = json_string_value(json_object_get(job, "team"));
    const char *name = json_string_value(json_object_get(job, "name"));
    const char *class_name = json_string_value(json_object_get(job, "class"));
    enum job_class job_class = JOB_CLASS_TRAINING;
    if (class_name && job_class_parse(class_name, &job_class) != 0) {
        snprintf(msg, sizeof msg, "class '%.32s' is not one of training, fine-tune, inference", class_name);
        return api_error_line("bad_request", msg);
    }
    if (team && !job_name_valid(team, JOB_TEAM_MAX)) {
        snprintf(msg, sizeof msg, "team '%.64s' may hold only letters, digits, '.', '_', '-' (at most 63)", team);
        return api_error_line("bad_request", msg);
    }
    if (name && !job_name_valid(name, JOB_NAME_MAX)) {
        snprintf(msg, sizeof msg, "name '%.128s' may hold only letters, digits, '.', '_', '-' (at most 127)", name);
        return api_error_line("bad_request", msg);
    }
    const char *key = json_string_value(json_object_get(job, "key"));
    if (key) {
        for (const char *p = key; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                  *p == '_' || *p == '.' || *p == ':')) {
                snprintf(msg, sizeof msg, "key '%.64s' may hold only letters, digits, '.', '_', ':', '-'", key);
                return api_error_line("bad_request", msg);
            }
        /* a repeated submission (a retry after a lost reply) gets the first job's id */
        int64_t first = 0;
        struct err kerr;
        err_clear(&kerr);
        int have = store_find_key(d->st, c->uid, key, &first, &kerr);
        if (have < 0) {
            log_err("cannot look up an idempotency key", &kerr);
            return api_error_line("internal", "the agent could not read its state store; try again");
        }
        if (have) {
            log_write(LOGL_INFO, "repeated submission", "job=%lld uid=%u", (long long)first, c->uid);
            return ok_line(json_pack("{s:I, s:b}", "id", (json_int_t)first, "repeated", 1));
        }
    }
    struct agent_job *j = job_new();
    if (!j)
        return api_error_line("internal", "out of memory");
    if (key)
        snprintf(j->idem_key, sizeof j->idem_key, "%s", key);
    j->uid = c->uid;
    j->gid = c->gid;
    user_name(c->uid, j->user, sizeof j->user);
    if (team)
        snprintf(j->team, sizeof j->team, "%s", team);
    if (name)
        snprintf(j->name, sizeof j->name, "%s", name);
    j->gpus = (int32_t)gpus;
    j->job_class = (int32_t)job_class;
    j->limit_us = limit_us;
    j->requeue = json_is_true(json_object_get(job, "requeue"));
    j->argv_json = json_dumps(json_object_get(job, "argv"), JSON_COMPACT);
    /* the environment: only allowlisted names, and never the agent's own */
    json_t *env = json_array();
    json_t *given = json_object_get(job, "env");
    for (size_t i = 0; given && i < json_array_size(given); i++) {
        const char *kv = json_string_value(json_array_get(given, i));
        const char *eq = strchr(kv, '=');
        char name_buf[256];
        size_t kl = (size_t)(eq - kv);
        if (kl >= sizeof name_buf)
            continue;
        memcpy(name_buf, kv, kl);
        name_buf[kl] = '\0';
        if (strcmp(name_buf, "CUDA_VISIBLE_DEVICES") == 0 || strcmp(name_buf, "NVIDIA_VISIBLE_DEVICES") == 0 ||
            strncmp(name_buf, "FLEETSIM_", 9) == 0 || strncmp(name_buf, "LD_", 3) == 0)
            continue;
        if (config_env_allowed(d->cfg, name_buf))
            json_array_append_new(env, json_string(kv));
    }
    j->env_json = json_dumps(env, JSON_COMPACT);
    json_decref(env);
    j->cwd = strdup(json_string_value(json_object_get(job, "cwd")));
    const char *o = json_string_value(json_object_get(job, "output"));
    const char *e = json_string_value(json_object_get(job, "error"));
    j->out_path = strdup(o ? o : "");
    j->err_path = strdup(e ? e : "");
    if (!j->argv_json || !j->env_json || !j->cwd || !j->out_path || !j->err_path) {
        job_free(j);
        return api_error_line("internal", "out of memory");
    }
    j->submit_us = now_us();
    j->state = JOB_QUEUED;
    struct err err;
    err_clear(&err);
    /* durable before the caller hears its id */
    if (store_begin(d->st, &err) != 0 || store_insert_job(d->st, j, &err) != 0 ||
        store_add_event(d->st, j->submit_us, j->id, "submitted", "", &err) != 0 || store_commit(d->st, &err) != 0) {
        store_rollback(d->st);
        if (store_trouble(d, &err)) {
            job_free(j);
            snprintf(msg, sizeof msg,
                     "state store full or read-only (%.200s): the agent accepts no job until it can write; free "
                     "space in '%.100s' and submit again (the agent resumes by itself)",
                     err.msg, d->cfg->state_dir);
            return api_error_line("store_unavailable", msg);
        }
        log_err("cannot record a submission", &err);
        job_free(j);
        return api_error_line("internal", "the agent could not record the job (state store error); try again");
    }
    intern_names(d, j);
    int64_t id = j->id;
    if (queue_insert(d, j) != 0) {
        job_free(j);
        return api_error_line("internal", "out of memory");
    }
    d->m.submitted++; /* its pass runs at its submit time (process_events) */
    log_write(LOGL_INFO, "job submitted", "job=%lld user=%s gpus=%d limit_s=%.3f", (long long)id, j->user, j->gpus,
              (double)j->limit_us / 1e6);
    return ok_line(json_pack("{s:I}", "id", (json_int_t)id));
}

struct collect {
    const struct daemon *d;
    json_t *list;
    int private_uid; /* -1 = none may see private fields; -2 = all */
    struct agent_job *found;
    char **uuids;
    size_t n_uuids;
};

static int collect_cb(void *ctx, struct agent_job *j, char **uuids, size_t n)
{
    struct collect *c = ctx;
    int priv = c->private_uid == -2 || (c->private_uid >= 0 && (uint32_t)c->private_uid == j->uid);
    json_array_append_new(c->list, job_json(c->d, j, uuids, n, priv));
    job_free(j);
    return 0;
}

static char *op_queue(struct daemon *d)
{
    json_t *jobs = json_array();
    for (uint32_t i = 0; i < d->n_running; i++)
        json_array_append_new(jobs, job_json(d, d->running[i], NULL, 0, 0));
    for (uint32_t i = 0; i < d->n_queued; i++)
        json_array_append_new(jobs, job_json(d, d->queued[i], NULL, 0, 0));
    return ok_line(json_pack("{s:o, s:I, s:I}", "jobs", jobs, "now_us", (json_int_t)now_us(), "total_gpus",
                             (json_int_t)total_gpus(d)));
}

struct events_ctx {
    json_t *list;
};

static void event_cb(void *ctx, int64_t ts, const char *kind, const char *detail)
{
    struct events_ctx *e = ctx;
    json_array_append_new(e->list, json_pack("{s:I, s:s, s:s}", "ts_us", (json_int_t)ts, "kind", kind ? kind : "",
                                             "detail", detail ? detail : ""));
}

static char *op_show(struct daemon *d, const struct api_caller *c, int64_t id)
{
    int admin = is_admin(d, c);
    struct agent_job *j = find_active(d, id);
    json_t *o;
    struct err err;
    err_clear(&err);
    if (j) {
        o = job_json(d, j, NULL, 0, admin || c->uid == j->uid);
    } else {
        struct collect col = {d, json_array(), admin ? -2 : (int)c->uid, NULL, NULL, 0};
        int found = store_get_job(d->st, id, collect_cb, &col, &err);
        if (found <= 0) {
            json_decref(col.list);
            if (found < 0)
                return api_error_line("internal", err.msg);
            char msg[64];
            snprintf(msg, sizeof msg, "no job '%lld'", (long long)id);
            return api_error_line("not_found", msg);
        }
        o = json_incref(json_array_get(col.list, 0));
        json_decref(col.list);
    }
    struct events_ctx ec = {json_array()};
    store_job_events(d->st, id, event_cb, &ec, &err);
    json_object_set_new(o, "events", ec.list);
    return ok_line(json_pack("{s:o}", "job", o));
}

static char *op_cancel(struct daemon *d, const struct api_caller *c, int64_t id)
{
    char msg[160];
    struct agent_job *j = find_active(d, id);
    if (!j) {
        struct err err;
        err_clear(&err);
        struct collect col = {d, json_array(), -1, NULL, NULL, 0};
        int found = store_get_job(d->st, id, collect_cb, &col, &err);
        const char *state = found > 0 ? json_string_value(json_object_get(json_array_get(col.list, 0), "state")) : "";
        if (found > 0)
            snprintf(msg, sizeof msg, "job '%lld' has already ended (%s)", (long long)id, state);
        else
            snprintf(msg, sizeof msg, "no job '%lld'", (long long)id);
        json_decref(col.list);
        return api_error_line(found > 0 ? "conflict" : "not_found", msg);
    }
    if (c->uid != j->uid && !is_admin(d, c)) {
        snprintf(msg, sizeof msg, "job '%lld' belongs to '%s': only its owner or an admin may cancel it",
                 (long long)id, j->user);
        return api_error_line("permission_denied", msg);
    }
    int64_t now = now_us();
    char who[96];
    if (c->via_http)
        snprintf(who, sizeof who, "cancelled over http");
    else
        snprintf(who, sizeof who, "cancelled by uid %u", c->uid);
    struct err err;
    err_clear(&err);
    if (j->state == JOB_QUEUED) {
        j->state = JOB_CANCELLED;
        j->end_us = now;
        snprintf(j->reason, sizeof j->reason, "%s", who);
        if (store_begin(d->st, &err) != 0 || store_mark_finished(d->st, j, &err) != 0 ||
            store_add_event(d->st, now, j->id, "cancelled", who, &err) != 0 || store_commit(d->st, &err) != 0) {
            store_rollback(d->st);
            j->state = JOB_QUEUED;
            j->end_us = -1;
            return api_error_line("internal", "cannot record the cancellation (state store error)");
        }
        list_remove(d->queued, &d->n_queued, j);
        d->m.finished[JOB_CANCELLED]++;
        log_write(LOGL_INFO, "job cancelled", "job=%lld by_uid=%u", (long long)id, c->uid);
        job_free(j);
        mark_event(d, now);
        return ok_line(json_pack("{s:I, s:s}", "id", (json_int_t)id, "state", "cancelled"));
    }
    if (!j->cancel_requested) {
        if (store_begin(d->st, &err) != 0 || store_set_cancel_requested(d->st, j->id, &err) != 0 ||
            store_add_event(d->st, now, j->id, "cancel", who, &err) != 0 || store_commit(d->st, &err) != 0) {
            store_rollback(d->st);
            return api_error_line("internal", "cannot record the cancellation (state store error)");
        }
        j->cancel_requested = 1;
        snprintf(j->reason, sizeof j->reason, "%s", who);
        j->kill_stage = 0;
        kill_step(d, j, now);
        log_write(LOGL_INFO, "job cancelling", "job=%lld by_uid=%u", (long long)id, c->uid);
    }
    return ok_line(json_pack("{s:I, s:s}", "id", (json_int_t)id, "state", "cancelling"));
}

static char *op_history(struct daemon *d, const struct api_caller *c, int64_t limit, int mine)
{
    struct collect col = {d, json_array(), is_admin(d, c) ? -2 : (int)c->uid, NULL, NULL, 0};
    struct err err;
    err_clear(&err);
    if (store_load_finished(d->st, mine ? (int64_t)c->uid : -1, limit > 0 ? limit : 50, collect_cb, &col, &err) != 0) {
        json_decref(col.list);
        return api_error_line("internal", err.msg);
    }
    return ok_line(json_pack("{s:o}", "jobs", col.list));
}

static char *op_nodes(struct daemon *d)
{
    json_t *nodes = json_array();
    for (uint32_t i = 0; i < d->inv.n_nodes; i++) {
        const struct inv_node *nd = &d->inv.nodes[i];
        json_t *gpus = json_array();
        int32_t free_n = 0, used = 0, drained = 0;
        for (int32_t k = 0; k < nd->n_gpus; k++) {
            uint32_t gi = (uint32_t)(nd->first_gpu + k);
            const struct inv_gpu *g = &d->inv.gpus[gi];
            json_t *o = json_pack("{s:i, s:s, s:s, s:I, s:s}", "index", g->local_index, "uuid", g->uuid, "model",
                                  g->model, "memory_bytes", (json_int_t)g->memory_bytes, "pci_bus_id", g->pci_bus_id);
            if (g->minor >= 0)
                json_object_set_new(o, "minor", json_integer(g->minor));
            if (g->nvlink_domain >= 0)
                json_object_set_new(o, "nvlink_domain", json_integer(g->nvlink_domain));
            json_t *peers = json_array();
            for (int32_t p = 0; p < g->n_peers; p++)
                json_array_append_new(peers, json_integer(d->inv.gpus[g->peers[p]].local_index));
            json_object_set_new(o, "nvlink_peers", peers);
            if (d->gpu_job[gi]) {
                json_object_set_new(o, "job", json_integer(d->gpu_job[gi]));
                used++;
            }
            if (g->drained) {
                json_object_set_new(o, "drained", json_true());
                json_object_set_new(o, "drain_reason", json_string(g->drain_reason));
                drained++;
            } else if (!d->gpu_job[gi]) {
                free_n++;
            }
            if (g->last_xid)
                json_object_set_new(o, "last_xid", json_integer(g->last_xid));
            if (g->ecc_uncorrected >= 0)
                json_object_set_new(o, "ecc_uncorrected", json_integer(g->ecc_uncorrected));
            if (d->inv.pcie_level) {
                json_t *row = json_array();
                for (int32_t m = 0; m < nd->n_gpus; m++)
                    json_array_append_new(
                        row, json_integer(d->inv.pcie_level[(size_t)gi * d->inv.n_gpus + (size_t)(nd->first_gpu + m)]));
                json_object_set_new(o, "pcie_levels", row);
            }
            json_array_append_new(gpus, o);
        }
        /* draining while jobs still run on it, drained once it is idle */
        const char *state = nd->drained ? (used > 0 ? "draining" : "drained") : (drained == nd->n_gpus ? "down" : "up");
        json_t *n = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:o}", "name", nd->name, "state", state, "gpus",
                              nd->n_gpus, "free", free_n, "allocated", used, "drained", drained, "gpu_list", gpus);
        if (nd->drained)
            json_object_set_new(n, "drain_reason", json_string(nd->drain_reason));
        json_array_append_new(nodes, n);
    }
    return ok_line(json_pack("{s:o, s:s, s:s}", "nodes", nodes, "source",
                             d->inv.source == INVENTORY_NVML ? "nvml" : "fake", "driver_version",
                             d->inv.driver_version));
}

static char *op_drain(struct daemon *d, const struct api_caller *c, const char *target, const char *reason,
                      int drain)
{
    char msg[256];
    if (!is_admin(d, c))
        return api_error_line("permission_denied",
                              drain ? "drain is for admins (root or the admin_group)"
                                    : "resume is for admins (root or the admin_group)");
    int node = inventory_find_node(&d->inv, target);
    int gpu = node < 0 ? inventory_find_gpu(&d->inv, target) : -1;
    if (node < 0 && gpu < 0) {
        snprintf(msg, sizeof msg, "no node or GPU '%.128s' (give a node name, a GPU UUID or NODE:INDEX)", target);
        return api_error_line("not_found", msg);
    }
    const char *key = node >= 0 ? d->inv.nodes[node].name : d->inv.gpus[gpu].uuid;
    if (!drain && !(node >= 0 ? d->inv.nodes[node].drained : d->inv.gpus[gpu].drained)) {
        snprintf(msg, sizeof msg, "'%.128s' is not drained: nothing to resume", target);
        return api_error_line("conflict", msg);
    }
    char why[INV_REASON_MAX];
    snprintf(why, sizeof why, "%s", reason && *reason ? reason : (drain ? "drained by an admin" : ""));
    int64_t now = now_us();
    struct err err;
    err_clear(&err);
    char detail[INV_REASON_MAX + 160];
    snprintf(detail, sizeof detail, "%s %s%s%s", drain ? "drain" : "resume", key, drain ? ": " : "", drain ? why : "");
    if (store_begin(d->st, &err) != 0 ||
        (drain ? store_put_drain(d->st, key, node >= 0 ? "node" : "gpu", why, 0, now, &err)
               : store_del_drain(d->st, key, &err)) != 0 ||
        store_add_event(d->st, now, 0, drain ? "drain" : "resume", detail, &err) != 0 || store_commit(d->st, &err) != 0) {
        store_rollback(d->st);
        return api_error_line("internal", "cannot record the drain (state store error)");
    }
    if (node >= 0) {
        d->inv.nodes[node].drained = drain;
        snprintf(d->inv.nodes[node].drain_reason, sizeof d->inv.nodes[node].drain_reason, "%s", drain ? why : "");
    } else {
        struct inv_gpu *g = &d->inv.gpus[gpu];
        g->drained = drain;
        g->auto_drained = 0;
        snprintf(g->drain_reason, sizeof g->drain_reason, "%s", drain ? why : "");
        if (!drain && g->ecc_uncorrected >= 0)
            g->ecc_baseline = g->ecc_uncorrected; /* errors seen so far are acknowledged */
    }
    log_write(LOGL_INFO, drain ? "drained" : "resumed", "target=%s by_uid=%u", key, c->uid);
    mark_event(d, now);
    return ok_line(json_pack("{s:s, s:s}", "target", key, "state", drain ? "drained" : "resumed"));
}

static char *handle_request(struct daemon *d, const struct api_caller *c, const char *text, size_t len)
{
    struct api_request req;
    char msg[512];
    char *out;
    if (api_parse(text, len, &req, msg, sizeof msg) != 0) {
        api_request_release(&req);
        d->m.api_error++;
        return api_error_line("bad_request", msg);
    }
    switch (req.op) {
    case API_PING: {
        json_t *o = json_pack("{s:s, s:s, s:i, s:b, s:I, s:I}", "version", FLEETSIM_VERSION_STRING, "policy",
                              d->sched.ph.spec, "uid", (int)c->uid, "admin", is_admin(d, c), "queued",
                              (json_int_t)d->n_queued, "running", (json_int_t)d->n_running);
        if (o && d->sched.failed)
            json_object_set_new(o, "policy_failed", json_string(d->sched.failure));
        if (o && d->store_bad)
            json_object_set_new(o, "store_unavailable", json_string(d->store_why));
        out = ok_line(o);
        break;
    }
    case API_SUBMIT:
        out = op_submit(d, c, req.job);
        if (strncmp(out, "{\"ok\":false", 11) == 0)
            d->m.rejected++;
        break;
    case API_QUEUE: out = op_queue(d); break;
    case API_SHOW: out = op_show(d, c, req.id); break;
    case API_CANCEL: out = op_cancel(d, c, req.id); break;
    case API_HISTORY: out = op_history(d, c, req.limit, req.mine); break;
    case API_NODES: out = op_nodes(d); break;
    case API_DRAIN: out = op_drain(d, c, req.target, req.reason, 1); break;
    case API_RESUME: out = op_drain(d, c, req.target, NULL, 0); break;
    default: out = api_error_line("bad_request", "unsupported op");
    }
    api_request_release(&req);
    if (!out)
        out = api_error_line("internal", "out of memory");
    if (out && strncmp(out, "{\"ok\":true", 10) == 0)
        d->m.api_ok++;
    else
        d->m.api_error++;
    return out;
}

/* ---- metrics ---- */

static void render_metrics(struct daemon *d, struct buf *out)
{
    int64_t qg = 0;
    for (uint32_t i = 0; i < d->n_queued; i++)
        qg += d->queued[i]->gpus;
    struct metrics_view v = {&d->inv,      d->gpu_job,  d->nvml,        &d->sched,           d->n_queued,
                             d->n_running, qg,          d->start_time_s, d->hostname,        FLEETSIM_VERSION_STRING,
                             d->running,   d->n_running, &d->cg};
    metrics_render(out, &d->m, &v);
}

/* ---- connections ---- */

static void conn_close(struct daemon *d, uint32_t i)
{
    close(d->conns[i].fd);
    buf_release(&d->conns[i].in);
    buf_release(&d->conns[i].out);
    d->conns[i] = d->conns[--d->n_conns];
}

/* Refuses a connection with one line (best effort: the socket is non-blocking). */
static void conn_refuse(struct daemon *d, int fd, const char *why)
{
    char *line = api_error_line("busy", why);
    if (line)
        (void)!send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
    free(line);
    close(fd);
    d->m.conn_refused++;
}

static void conn_add(struct daemon *d, int fd, int http, const struct api_caller *caller)
{
    if (d->n_conns >= MAX_CONNS) {
        close(fd);
        d->m.conn_refused++;
        return;
    }
    char msg[160];
    if (http) {
        uint32_t pending = 0;
        for (uint32_t i = 0; i < d->n_conns; i++)
            pending += d->conns[i].http;
        if (pending >= HTTP_PENDING_MAX || d->n_conns >= MAX_CONNS - ROOT_RESERVED) {
            close(fd);
            d->m.conn_refused++;
            return;
        }
    } else if (caller && caller->uid != 0) {
        if (d->n_conns >= MAX_CONNS - ROOT_RESERVED) {
            conn_refuse(d, fd, "the agent has too many connections open; try again");
            return;
        }
        int64_t mine = 0;
        for (uint32_t i = 0; i < d->n_conns; i++)
            mine += !d->conns[i].http && d->conns[i].caller.uid == caller->uid;
        if (mine >= d->cfg->max_conns_per_uid) {
            snprintf(msg, sizeof msg, "uid %u has %lld connections open (max_conns_per_uid); close some", caller->uid,
                     (long long)mine);
            conn_refuse(d, fd, msg);
            return;
        }
    }
    struct conn *c = &d->conns[d->n_conns++];
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->http = http;
    if (caller)
        c->caller = *caller;
    buf_init(&c->in);
    buf_init(&c->out);
    int64_t idle = d->cfg->conn_idle_timeout_us;
    c->deadline_us = now_us() + (http && HTTP_HEADER_US < idle ? HTTP_HEADER_US : idle);
}

/* May uid make one more request now? root always may. */
static int rate_allows(struct daemon *d, uint32_t uid)
{
    if (uid == 0 || d->cfg->max_requests_per_uid <= 0)
        return 1;
    int64_t now = now_us();
    double rate = (double)d->cfg->max_requests_per_uid, burst = 2 * rate;
    struct uid_bucket *b = NULL, *oldest = &d->buckets[0];
    for (int i = 0; i < UID_BUCKETS; i++) {
        struct uid_bucket *x = &d->buckets[i];
        if (x->used && x->uid == uid) {
            b = x;
            break;
        }
        if (!x->used || (oldest->used && x->last_us < oldest->last_us))
            oldest = x;
    }
    if (!b) {
        b = oldest;
        *b = (struct uid_bucket){uid, 1, burst, now};
    }
    b->tokens += (double)(now - b->last_us) / 1e6 * rate;
    if (b->tokens > burst)
        b->tokens = burst;
    b->last_us = now;
    if (b->tokens < 1)
        return 0;
    b->tokens -= 1;
    return 1;
}

static void http_dispatch(struct daemon *d, struct conn *c, const struct http_request *req)
{
    if (!http_authorized(req->authorization, d->token)) {
        d->m.http_unauthorized++;
        static const char body[] = "{\"ok\":false,\"code\":\"unauthorized\",\"error\":\"missing or wrong bearer "
                                   "token\"}\n";
        http_respond(&c->out, 401, "application/json", body, sizeof body - 1);
        return;
    }
    if (strcmp(req->path, "/metrics") == 0) {
        if (strcmp(req->method, "GET") != 0) {
            http_respond(&c->out, 405, "text/plain", "use GET\n", 8);
            return;
        }
        struct buf text;
        buf_init(&text);
        render_metrics(d, &text);
        http_respond(&c->out, text.oom ? 500 : 200, "text/plain; version=0.0.4; charset=utf-8",
                     text.data ? text.data : "", text.len);
        buf_release(&text);
        return;
    }
    if (strcmp(req->path, "/api") == 0) {
        if (strcmp(req->method, "POST") != 0) {
            http_respond(&c->out, 405, "text/plain", "use POST\n", 9);
            return;
        }
        struct api_caller caller = {0, 0, 0, 1};
        char *out = handle_request(d, &caller, req->body, req->content_length);
        int status = 200;
        if (out && strncmp(out, "{\"ok\":false", 11) == 0) {
            status = strstr(out, "\"code\":\"bad_request\"") ? 400
                     : strstr(out, "\"code\":\"not_found\"") ? 404
                     : strstr(out, "\"code\":\"permission_denied\"") ? 403
                     : strstr(out, "\"code\":\"internal\"") ? 500 : 409;
        }
        http_respond(&c->out, status, "application/json", out ? out : "", out ? strlen(out) : 0);
        free(out);
        return;
    }
    http_respond(&c->out, 404, "text/plain", "not found: try /metrics or POST /api\n", 37);
}

/* Reads what is there; once a request is whole, answers it. Returns -1 to
 * close. The peer's end of sending (recv() = 0) is not the end of the
 * connection: a half-closed peer still reads, so a request that is whole by
 * then is answered first (api_frame). */
static int conn_read(struct daemon *d, struct conn *c)
{
    char chunk[16384];
    int eof = 0;
    for (;;) {
        ssize_t n = recv(c->fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n == 0) {
            eof = 1;
            break;
        }
        if (n < 0)
            return -1;
        if (buf_append(&c->in, chunk, (size_t)n) != 0)
            return -1;
        if (!c->http)
            c->deadline_us = now_us() + d->cfg->conn_idle_timeout_us;
        if (c->in.len > API_MAX_REQUEST + HTTP_MAX_HEADER + 1)
            break;
    }
    if (c->http) {
        struct http_request req;
        int r = http_parse(c->in.data, c->in.len, &req);
        if (r == 0)
            return eof ? -1 : 0;
        if (r >= 400) {
            char body[64];
            int n = snprintf(body, sizeof body, "%s\n", http_status_text(r));
            http_respond(&c->out, r, "text/plain", body, (size_t)n);
        } else {
            http_dispatch(d, c, &req);
        }
    } else {
        size_t request_len;
        enum api_frame frame = api_frame(c->in.data, c->in.len, eof, &request_len);
        if (frame == API_FRAME_MORE)
            return 0;
        if (frame == API_FRAME_EMPTY)
            return -1;
        if (frame == API_FRAME_TOO_LARGE) {
            char msg[96];
            snprintf(msg, sizeof msg, "request larger than the %d bytes allowed", API_MAX_REQUEST);
            char *line = api_error_line("bad_request", msg);
            buf_puts(&c->out, line ? line : "");
            free(line);
            d->m.api_error++;
        } else if (!rate_allows(d, c->caller.uid)) {
            char msg[160];
            snprintf(msg, sizeof msg, "uid %u makes more than %lld requests a second (max_requests_per_uid); try again",
                     c->caller.uid, (long long)d->cfg->max_requests_per_uid);
            char *line = api_error_line("busy", msg);
            buf_puts(&c->out, line ? line : "");
            free(line);
            d->m.rate_limited++;
        } else {
            char *line = handle_request(d, &c->caller, c->in.data, request_len);
            buf_puts(&c->out, line ? line : "{\"ok\":false,\"code\":\"internal\",\"error\":\"out of memory\"}\n");
            free(line);
        }
    }
    c->writing = 1;
    return 0;
}

static int conn_write(struct conn *c)
{
    while (c->out_sent < c->out.len) {
        ssize_t n = send(c->fd, c->out.data + c->out_sent, c->out.len - c->out_sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0)
            return -1;
        c->out_sent += (size_t)n;
    }
    return -1; /* done: close */
}

/* ---- signals and children ---- */

/* A supervisor is gone: note the instant, and process_events() settles the
 * job then. The instant is now, when the agent learns of the end, not the
 * end its supervisor wrote: between the two (the status's fsync, the
 * supervisor's exit, a request the agent was busy with) a pass may already
 * have run that saw the job running. Its GPUs were held until now, so the
 * trace's end is now too, and a replay of the trace meets the views the
 * agent met: CI once saw a replay start jobs in another order because a
 * submission's pass fell 56 ms after an end the agent had not seen yet. */
static void note_ended(struct daemon *d, struct agent_job *j)
{
    if (j->ended)
        return;
    if (d->n_ended == d->cap_ended) {
        uint32_t c = d->cap_ended ? d->cap_ended * 2 : 64;
        struct agent_job **l = realloc(d->ended, c * sizeof *l);
        if (!l) {
            settle(d, j, now_us()); /* no memory to defer: settle now */
            return;
        }
        d->ended = l;
        d->cap_ended = c;
    }
    j->ended = 1;
    if (j->ended_us < 0) /* not a settle the store refused before */
        j->ended_us = now_us();
    d->ended[d->n_ended++] = j;
}

static int ended_cmp(const void *a, const void *b)
{
    const struct agent_job *x = *(struct agent_job *const *)a, *y = *(struct agent_job *const *)b;
    if (x->ended_us != y->ended_us)
        return x->ended_us < y->ended_us ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Settles ended jobs and runs passes the way the simulator's engine does:
 * event instants in time order (job ends, submissions), at each instant
 * the ends settle, then one pass that sees what happened up to then. So a
 * replay of the recorded trace meets the same views and decides the same. */
static void process_events(struct daemon *d)
{
    enum { MAX_INSTANTS = 256 };
    if (d->n_ended > 1)
        qsort(d->ended, d->n_ended, sizeof *d->ended, ended_cmp);
    uint32_t e = 0, instants = 0;
    uint32_t q = d->n_queued; /* first queued job submitted after the last pass */
    while (q > 0 && d->queued[q - 1]->submit_us > d->last_pass_us)
        q--;
    for (;;) {
        int64_t t = INT64_MAX;
        if (e < d->n_ended)
            t = d->ended[e]->ended_us;
        if (q < d->n_queued && d->queued[q]->submit_us < t)
            t = d->queued[q]->submit_us;
        if (t == INT64_MAX)
            break;
        if (++instants > MAX_INSTANTS) {
            t = now_us(); /* a backlog: settle the rest at once */
            if (e < d->n_ended && d->ended[d->n_ended - 1]->ended_us > t)
                t = d->ended[d->n_ended - 1]->ended_us;
        }
        while (e < d->n_ended && d->ended[e]->ended_us <= t) {
            struct agent_job *j = d->ended[e++];
            j->ended = 0;
            settle(d, j, j->ended_us);
        }
        while (q < d->n_queued && d->queued[q]->submit_us <= t)
            q++;
        run_pass(d, t);
        /* the pass removed started jobs from the queue: find the next new one again */
        q = d->n_queued;
        while (q > 0 && d->queued[q - 1]->submit_us > d->last_pass_us)
            q--;
    }
    d->n_ended = 0;
    if (d->dirty) {
        d->dirty = 0;
        run_pass(d, now_us());
    }
}

static void reap_children(struct daemon *d)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return;
        for (uint32_t i = 0; i < d->n_running; i++)
            if (d->running[i]->shim_pid == pid && d->running[i]->is_child) {
                note_ended(d, d->running[i]);
                break;
            }
    }
}

static void handle_signals(struct daemon *d)
{
    struct signalfd_siginfo si;
    while (read(d->sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        switch (si.ssi_signo) {
        case SIGCHLD: reap_children(d); break;
        case SIGTERM:
        case SIGINT:
            log_write(LOGL_INFO, "stopping", "signal=%u", si.ssi_signo);
            d->stopping = 1;
            break;
        case SIGHUP:
            if (d->inv.source == INVENTORY_FAKE) {
                struct inventory fresh;
                inventory_init(&fresh);
                struct err err;
                err_clear(&err);
                if (inventory_load_fake(&fresh, d->cfg->inventory, &err) == 0) {
                    fake_health(d, &fresh);
                    log_write(LOGL_INFO, "reread the fake inventory's health fields", NULL);
                } else {
                    log_err("cannot reread the fake inventory", &err);
                }
                inventory_release(&fresh);
            } else {
                poll_health(d);
            }
            break;
        default: break;
        }
    }
}

/* ---- start-up ---- */

struct recover_ctx {
    struct daemon *d;
    int failed;
};

static int recover_cb(void *ctx, struct agent_job *j, char **uuids, size_t n)
{
    struct recover_ctx *rc = ctx;
    struct daemon *d = rc->d;
    intern_names(d, j);
    if (j->state == JOB_QUEUED) {
        if (queue_insert(d, j) != 0) {
            job_free(j);
            return -1;
        }
        return 0;
    }
    j->gpu_idx = calloc(n ? n : 1, sizeof *j->gpu_idx);
    if (!j->gpu_idx) {
        job_free(j);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        int g = inventory_find_gpu(&d->inv, uuids[k]);
        if (g < 0) {
            log_write(LOGL_WARN, "a running job's GPU is not in the inventory", "job=%lld uuid=%s", (long long)j->id,
                      uuids[k]);
            continue;
        }
        j->gpu_idx[j->n_gpu_idx++] = g;
        d->gpu_job[g] = j->id;
    }
    if (list_push(&d->running, &d->n_running, &d->cap_running, j) != 0) {
        job_free(j);
        return -1;
    }
    return 0;
}

static int recover(struct daemon *d, struct err *err)
{
    struct recover_ctx rc = {d, 0};
    if (store_load_active(d->st, recover_cb, &rc, err) != 0)
        return -1;
    /* running jobs: adopt the living, settle the rest */
    uint32_t adopted = 0, settled = 0;
    for (uint32_t i = 0; i < d->n_running;) {
        struct agent_job *j = d->running[i];
        char dir[CONFIG_PATH_MAX + 64];
        job_dir(d, j, dir, sizeof dir);
        if (executor_alive(j->shim_pid, j->shim_start)) {
            j->is_child = 0;
            j->pidfd = executor_pidfd(j->shim_pid);
            d->m.adopted++;
            adopted++;
            log_write(LOGL_INFO, "job re-adopted", "job=%lld pid=%d", (long long)j->id, (int)j->shim_pid);
            i++;
            continue;
        }
        settle(d, j, -1); /* removes it from running (or keeps it on a store error) */
        settled++;
        if (i < d->n_running && d->running[i] == j)
            i++;
    }
    log_write(LOGL_INFO, "recovered", "queued=%u running=%u adopted=%u settled=%u", d->n_queued, d->n_running, adopted,
              settled);
    return 0;
}

static int untraced_cb(void *ctx, struct agent_job *j, char **uuids, size_t n)
{
    struct daemon *d = ctx;
    if (j->start_us >= 0 && !record_has(&d->rec, j->id)) {
        j->gpu_idx = calloc(n ? n : 1, sizeof *j->gpu_idx);
        for (size_t k = 0; j->gpu_idx && k < n; k++) {
            int g = inventory_find_gpu(&d->inv, uuids[k]);
            if (g >= 0)
                j->gpu_idx[j->n_gpu_idx++] = g;
        }
        trace_job(d, j);
    } else {
        /* already in the file, or never ran: nothing to write, mark it */
        if (d->n_untraced == d->cap_untraced) {
            size_t c = d->cap_untraced ? d->cap_untraced * 2 : 64;
            int64_t *u = realloc(d->untraced, c * sizeof *u);
            if (u) {
                d->untraced = u;
                d->cap_untraced = c;
            }
        }
        if (d->n_untraced < d->cap_untraced)
            d->untraced[d->n_untraced++] = j->id;
    }
    job_free(j);
    return 0;
}

/* Removes job folders no running job owns (left by a crash after a job's end). */
static void sweep_job_dirs(struct daemon *d)
{
    DIR *dir = opendir(d->jobs_dir);
    if (!dir)
        return;
    struct dirent *e;
    char path[CONFIG_PATH_MAX + 300];
    while ((e = readdir(dir))) {
        long long id;
        int attempt;
        if (sscanf(e->d_name, "%lld.%d", &id, &attempt) != 2)
            continue;
        struct agent_job *j = find_active(d, id);
        if (j && j->state == JOB_RUNNING && j->attempts == attempt)
            continue;
        snprintf(path, sizeof path, "%s/%s", d->jobs_dir, e->d_name);
        executor_cleanup(path);
    }
    closedir(dir);
}

static int lock_state_dir(struct daemon *d, struct err *err)
{
    char path[CONFIG_PATH_MAX + 32];
    if (mkdir(d->cfg->state_dir, 0700) != 0 && errno != EEXIST)
        return err_set(err, NULL, 0, 0, "cannot create state_dir '%s': %s", d->cfg->state_dir, strerror(errno));
    /* the store keeps every job's argv and environment: owner-only, also
     * for a folder an older agent (or StateDirectoryMode=0755) created */
    struct stat sb;
    if (stat(d->cfg->state_dir, &sb) != 0)
        return err_set(err, NULL, 0, 0, "cannot read state_dir '%s': %s", d->cfg->state_dir, strerror(errno));
    if ((sb.st_mode & 077) != 0 && sb.st_uid == geteuid()) {
        if (chmod(d->cfg->state_dir, 0700) != 0)
            return err_set(err, NULL, 0, 0, "cannot make state_dir '%s' private (chmod 700): %s", d->cfg->state_dir,
                           strerror(errno));
        log_write(LOGL_WARN, "state_dir was readable by others; made it owner-only", "state_dir=%s old_mode=%03o",
                  d->cfg->state_dir, (unsigned)(sb.st_mode & 0777));
    }
    snprintf(path, sizeof path, "%s/agent.lock", d->cfg->state_dir);
    if (state_lock_take(path, d->cfg->state_dir, &d->lock_fd, err) != 0)
        return -1;
    snprintf(d->jobs_dir, sizeof d->jobs_dir, "%s/jobs", d->cfg->state_dir);
    if (mkdir(d->jobs_dir, 0700) != 0 && errno != EEXIST)
        return err_set(err, NULL, 0, 0, "cannot create '%s': %s", d->jobs_dir, strerror(errno));
    return 0;
}

static int load_inventory(struct daemon *d, struct err *err)
{
    if (strcmp(d->cfg->inventory, "nvml") == 0) {
        d->nvml = nvml_open(NULL, err);
        if (!d->nvml)
            return -1;
        const char *node = d->cfg->node_name[0] ? d->cfg->node_name : d->hostname;
        if (nvml_fill_inventory(d->nvml, node, &d->inv, err) != 0)
            return -1;
        log_write(LOGL_INFO, "inventory from nvml", "gpus=%u driver=%s features=\"%s\"", d->inv.n_gpus,
                  d->inv.driver_version, nvml_features(d->nvml));
        return 0;
    }
    if (inventory_load_fake(&d->inv, d->cfg->inventory, err) != 0)
        return -1;
    log_write(LOGL_INFO, "inventory from a fake file", "file=%s nodes=%u gpus=%u", d->cfg->inventory, d->inv.n_nodes,
              d->inv.n_gpus);
    return 0;
}

/* A name for this agent's cgroup folder when it is not delegated one:
 * stable for a state folder (jobs survive restarts), distinct between agents. */
static void cgroup_tag(const char *state_dir, char *out, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = state_dir; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    snprintf(out, len, "%016llx", (unsigned long long)h);
}

static int setup_cgroup(struct daemon *d, struct err *err)
{
    char tag[32], real[CONFIG_PATH_MAX];
    cgroup_tag(realpath(d->cfg->state_dir, real) ? real : d->cfg->state_dir, tag, sizeof tag);
    cgroup_host_init(&d->cg, tag, NULL, NULL);
    if (d->cg.usable) {
        log_write(LOGL_INFO, "jobs run in cgroups", "cgroup2=%s base=%s", d->cg.mount, d->cg.base);
        return 0;
    }
    if (d->cfg->require_cgroup)
        return err_set(err, NULL, 0, 0,
                       "no usable cgroup v2 for jobs: %s; run the agent as root under systemd with Delegate=yes "
                       "(see fleetsim-agent(8)), or set 'require_cgroup = no' to run jobs uncontained",
                       d->cg.why);
    log_write(LOGL_WARN, "jobs run without cgroups (require_cgroup = no): a process a job detaches can outlive it",
              "why=\"%s\"", d->cg.why);
    return 0;
}

static int setup(struct daemon *d, struct err *err)
{
    d->own_uid = getuid();
    d->is_root = geteuid() == 0;
    if (gethostname(d->hostname, sizeof d->hostname) != 0)
        snprintf(d->hostname, sizeof d->hostname, "localhost");
    d->hostname[sizeof d->hostname - 1] = '\0';
    d->start_time_s = (double)now_us() / 1e6;
    if (lock_state_dir(d, err) != 0 || load_inventory(d, err) != 0)
        return -1;
    if (setup_cgroup(d, err) != 0)
        return -1;
    d->gpu_job = calloc(d->inv.n_gpus ? d->inv.n_gpus : 1, sizeof *d->gpu_job);
    if (!d->gpu_job)
        return err_set(err, NULL, 0, 0, "out of memory");
    if (scheduler_init(&d->sched, d->cfg->policy, (double)d->cfg->decide_timeout_us / 1e6, err) != 0)
        return -1;
    char path[CONFIG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/state.db", d->cfg->state_dir);
    if (store_open(&d->st, path, err) != 0)
        return -1;
    if (store_load_drains(d->st, drain_cb, d, err) != 0)
        return -1;
    if (d->inv.source == INVENTORY_FAKE) {
        struct inventory copy;
        inventory_init(&copy);
        /* the file's health fields act as observations at start */
        if (inventory_load_fake(&copy, d->cfg->inventory, err) == 0) {
            for (uint32_t g = 0; g < d->inv.n_gpus; g++)
                d->inv.gpus[g].last_xid = 0;
            fake_health(d, &copy);
        }
        inventory_release(&copy);
    } else {
        poll_health(d);
    }
    int have = store_meta_get(d->st, "trace_epoch_s", &d->epoch_s, err);
    if (have < 0)
        return -1;
    if (!have) {
        d->epoch_s = now_us() / 1000000;
        if (store_meta_set(d->st, "trace_epoch_s", d->epoch_s, err) != 0)
            return -1;
    }
    if (d->cfg->trace[0])
        snprintf(path, sizeof path, "%s", d->cfg->trace);
    else
        snprintf(path, sizeof path, "%s/trace.jsonl", d->cfg->state_dir);
    if (record_open(&d->rec, path, d->epoch_s, d->inv.n_nodes, d->inv.n_gpus, err) != 0)
        return -1;
    if (d->cfg->http_listen[0]) {
        if (!d->cfg->http_token_file[0])
            return err_set(err, NULL, 0, 0, "http_listen is set but http_token_file is not: the HTTP listener "
                                            "needs a bearer token");
        if (http_load_token(d->cfg->http_token_file, d->token, sizeof d->token, err) != 0)
            return -1;
    }

    /* signals: SIGCHLD and the stop signals through a signalfd */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    d->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (d->sig_fd < 0)
        return err_set(err, NULL, 0, 0, "cannot create a signalfd: %s", strerror(errno));

    if (recover(d, err) != 0)
        return -1;
    if (store_load_untraced(d->st, untraced_cb, d, err) != 0)
        return -1;
    sync_trace(d);
    sweep_job_dirs(d);

    d->api_fd = api_listen(d->cfg->socket_path, d->cfg->socket_mode, err);
    if (d->api_fd < 0)
        return -1;
    if (d->cfg->http_listen[0]) {
        d->http_fd = http_listen(d->cfg->http_listen, d->cfg->http_allow_remote, err);
        if (d->http_fd < 0)
            return -1;
    }
    d->conns = calloc(MAX_CONNS, sizeof *d->conns);
    if (!d->conns)
        return err_set(err, NULL, 0, 0, "out of memory");
    d->watchdog_us = notify_watchdog_us();
    d->dirty = 1;
    log_write(LOGL_INFO, "ready", "socket=%s http=%s policy=%s state_dir=%s version=%s", d->cfg->socket_path,
              d->cfg->http_listen[0] ? d->cfg->http_listen : "off", d->sched.ph.spec, d->cfg->state_dir,
              FLEETSIM_VERSION_STRING);
    notify_send("READY=1");
    return 0;
}

static void teardown(struct daemon *d)
{
    notify_send("STOPPING=1");
    sync_trace(d);
    for (uint32_t i = d->n_conns; i > 0; i--)
        conn_close(d, i - 1);
    free(d->conns);
    if (d->api_fd >= 0) {
        close(d->api_fd);
        unlink(d->cfg->socket_path);
    }
    if (d->http_fd >= 0)
        close(d->http_fd);
    if (d->sig_fd >= 0)
        close(d->sig_fd);
    for (uint32_t i = 0; i < d->n_queued; i++)
        job_free(d->queued[i]);
    for (uint32_t i = 0; i < d->n_running; i++) {
        if (d->running[i]->pidfd >= 0)
            close(d->running[i]->pidfd);
        job_free(d->running[i]);
    }
    free(d->queued);
    free(d->running);
    free(d->gpu_job);
    free(d->untraced);
    free(d->ended);
    record_close(&d->rec);
    store_close(d->st);
    scheduler_release(&d->sched);
    nvml_close(d->nvml);
    inventory_release(&d->inv);
    workload_release(&d->names);
    /* our own folder under the root cgroup goes when no job cgroup is left
     * in it (a running job's keeps it, for the next start to re-adopt) */
    if (d->cg.usable && !d->cg.moved)
        (void)rmdir(d->cg.base);
    if (d->lock_fd >= 0)
        close(d->lock_fd);
}

static void housekeeping(struct daemon *d, int64_t now)
{
    check_timers(d, now);
    if (d->store_bad && now >= d->next_store_probe_us) {
        struct err perr;
        err_clear(&perr);
        store_clear_error(d->st);
        store_checkpoint(d->st); /* space back? fold the WAL into the database first */
        if (store_meta_set(d->st, "store_probe_us", now, &perr) == 0) {
            d->store_bad = 0;
            d->store_bad_logged_settle = 0;
            d->dirty = 1;
            log_write(LOGL_INFO, "state store writes again: resuming", "was=\"%s\"", d->store_why);
            d->store_why[0] = '\0';
        }
        d->next_store_probe_us = now + 1000000;
    }
    if (now >= d->next_sync_us) {
        sync_trace(d);
        d->next_sync_us = now + 1000000;
    }
    if (d->nvml && now >= d->next_health_us) {
        poll_health(d);
        d->next_health_us = now + d->cfg->health_interval_us;
    }
    if (d->watchdog_us > 0 && now >= d->next_watchdog_us) {
        notify_send("WATCHDOG=1");
        d->next_watchdog_us = now + d->watchdog_us / 2;
    }
    if (now >= d->next_status_us) {
        char status[128];
        snprintf(status, sizeof status, "STATUS=%u queued, %u running", d->n_queued, d->n_running);
        if (strcmp(status, d->status_text) != 0) {
            notify_send(status);
            snprintf(d->status_text, sizeof d->status_text, "%s", status);
        }
        d->next_status_us = now + 1000000;
    }
    /* supervisors we cannot watch with a pidfd: poll them */
    for (uint32_t i = 0; i < d->n_running;) {
        struct agent_job *j = d->running[i];
        if (!j->is_child && j->pidfd < 0 && !j->ended && !executor_alive(j->shim_pid, j->shim_start))
            note_ended(d, j);
        i++;
    }
    for (uint32_t i = 0; i < d->n_conns;) {
        if (now >= d->conns[i].deadline_us)
            conn_close(d, i);
        else
            i++;
    }
    if (d->retry_pass_us && now >= d->retry_pass_us) {
        d->retry_pass_us = 0;
        d->dirty = 1;
    }
}

int daemon_run(const struct agent_config *cfg, struct err *err)
{
    struct daemon d;
    memset(&d, 0, sizeof d);
    d.cfg = cfg;
    d.lock_fd = d.sig_fd = d.api_fd = d.http_fd = -1;
    inventory_init(&d.inv);
    workload_init(&d.names);
    metrics_init(&d.m);
    record_init(&d.rec);
    if (setup(&d, err) != 0) {
        teardown(&d);
        return -1;
    }
    struct pollfd *pfd = calloc(MAX_CONNS + 8 + 4096, sizeof *pfd);
    struct agent_job **pjob = calloc(MAX_CONNS + 8 + 4096, sizeof *pjob);
    if (!pfd || !pjob) {
        free(pfd);
        free(pjob);
        teardown(&d);
        return err_set(err, NULL, 0, 0, "out of memory");
    }
    while (!d.stopping) {
        process_events(&d);
        int64_t now = now_us();
        int64_t wake = now + 1000000;
        int64_t t = next_timer(&d);
        if (t < wake)
            wake = t;
        if (d.retry_pass_us && d.retry_pass_us < wake)
            wake = d.retry_pass_us;
        if (d.n_untraced && d.next_sync_us < wake)
            wake = d.next_sync_us;
        int timeout = wake <= now ? 0 : (int)((wake - now + 999) / 1000);
        nfds_t n = 0;
        pfd[n++] = (struct pollfd){d.sig_fd, POLLIN, 0};
        pfd[n++] = (struct pollfd){d.api_fd, d.n_conns < MAX_CONNS ? POLLIN : 0, 0};
        if (d.http_fd >= 0)
            pfd[n++] = (struct pollfd){d.http_fd, d.n_conns < MAX_CONNS ? POLLIN : 0, 0};
        nfds_t first_conn = n;
        for (uint32_t i = 0; i < d.n_conns; i++)
            pfd[n++] = (struct pollfd){d.conns[i].fd, d.conns[i].writing ? POLLOUT : POLLIN, 0};
        nfds_t first_job = n;
        for (uint32_t i = 0; i < d.n_running && n < MAX_CONNS + 8 + 4096; i++)
            if (d.running[i]->pidfd >= 0 && !d.running[i]->ended) {
                pjob[n] = d.running[i];
                pfd[n++] = (struct pollfd){d.running[i]->pidfd, POLLIN, 0};
            }
        int r = poll(pfd, n, timeout);
        if (r < 0 && errno != EINTR) {
            err_set(err, NULL, 0, 0, "poll failed: %s", strerror(errno));
            break;
        }
        if (r > 0) {
            if (pfd[0].revents)
                handle_signals(&d);
            /* connections first (their indices shift as they close) */
            for (nfds_t k = n; k > first_conn; k--) {
                nfds_t idx = k - 1;
                if (idx >= first_job || !pfd[idx].revents)
                    continue;
                uint32_t ci = (uint32_t)(idx - first_conn);
                if (ci >= d.n_conns || d.conns[ci].fd != pfd[idx].fd)
                    continue;
                struct conn *c = &d.conns[ci];
                int rc = 0;
                if (!c->writing)
                    rc = conn_read(&d, c);
                if (rc == 0 && c->writing)
                    rc = conn_write(c);
                if (rc != 0)
                    conn_close(&d, ci);
            }
            for (nfds_t k = first_job; k < n; k++) {
                if (!pfd[k].revents)
                    continue;
                struct agent_job *j = pjob[k];
                for (uint32_t i = 0; i < d.n_running; i++)
                    if (d.running[i] == j) {
                        note_ended(&d, j);
                        break;
                    }
            }
            if (pfd[1].revents & POLLIN) {
                for (int guard = 0; guard < 64 && d.n_conns < MAX_CONNS; guard++) {
                    struct api_caller caller;
                    int fd = api_accept(d.api_fd, &caller);
                    if (fd < 0)
                        break;
                    conn_add(&d, fd, 0, &caller);
                }
            }
            if (d.http_fd >= 0 && (pfd[2].revents & POLLIN)) {
                for (int guard = 0; guard < 64 && d.n_conns < MAX_CONNS; guard++) {
                    int fd = accept4(d.http_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (fd < 0)
                        break;
                    conn_add(&d, fd, 1, NULL);
                }
            }
        }
        housekeeping(&d, now_us());
    }
    free(pfd);
    free(pjob);
    int failed = err->set;
    log_write(LOGL_INFO, "stopped", "queued=%u running=%u", d.n_queued, d.n_running);
    teardown(&d);
    return failed ? -1 : 0;
}
