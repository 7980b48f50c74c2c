#define _GNU_SOURCE
#include "agent/slurm_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/buf.h"
#include "agent/inventory.h"
#include "agent/job.h"
#include "agent/log.h"
#include "agent/notify.h"
#include "agent/record.h"
#include "agent/scheduler.h"
#include "agent/slurm_exec.h"
#include "agent/slurm_json.h"
#include "agent/slurm_store.h"
#include "agent/state_lock.h"
#include "sim/buffers.h"
#include "sim/child.h"

enum { SLURM_CMD_TIMEOUT_MS = 30000, MAX_JOB_NODES = 256, COMMENT_BATCH = 200 };

/* The prefix of every comment the agent writes: what an admin sees in
 * `squeue -o "%i %k"` and `scontrol show job`. */
#define COMMENT_PREFIX "fleetsim: "

struct reserved_entry {
    int64_t job_id, reserved_us;
};

struct backend {
    const struct agent_config *cfg;
    const char *partition;
    struct scheduler sched;
    struct slurm_store store;
    struct record rec;
    int rec_open;
    /* Slurm has answered and named the partition's nodes at least once. Until
     * then, failing passes mean Slurm cannot be used (the agent gives up);
     * after, a failure is a pass's own (a job that ended as it was pinned, a
     * slow slurmctld) and the next pass tries again. */
    int reached;
    int lock_fd;
    struct buf out;
    /* one pass's snapshot */
    struct slurm_node *nodes;
    size_t n_nodes;
    struct slurm_job *jobs;
    size_t n_jobs;
    struct inventory inv;
    struct agent_job *ajobs;
    struct agent_job **queued, **running;
    struct slurm_job **queued_sj; /* the Slurm job of queued[i] */
    uint32_t n_queued, n_running;
    int32_t *gpu_pool;
    /* kept across passes */
    struct reserved_entry *reserved; /* the policy's last POLICY_RESERVE per job, sorted by id */
    uint32_t n_reserved, cap_reserved;
    char (*names)[SLURM_NAME_MAX]; /* users and accounts, interned for the view's indices */
    uint32_t n_names, cap_names;
    uint64_t passes, starts, preempts, shape_refused, held_back, errors;
    /* The instant of this pass (taken once Slurm has answered): every event
     * the pass observes (a job seen held, a job seen ended) and every
     * decision it makes is recorded at it, as the simulator's engine runs
     * one pass per event instant. So the trace replays to the same passes. */
    int64_t now;
    /* Jobs this process watched holding their nodes (running, or released
     * and waiting for slurmctld) in the previous pass, sorted; and the set
     * this pass builds. A job of the first set seen ended ended at this
     * pass's instant; any other (it ended while the agent was down) when
     * Slurm says. */
    int64_t *alive, *alive_next;
    uint32_t n_alive, cap_alive, n_alive_next, cap_alive_next;
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int32_t intern(struct backend *b, const char *name)
{
    if (!name[0])
        return -1;
    for (uint32_t i = 0; i < b->n_names; i++)
        if (strcmp(b->names[i], name) == 0)
            return (int32_t)i;
    if (buffers_grow((void **)&b->names, &b->cap_names, b->n_names + 1, sizeof *b->names) != 0)
        return -1;
    snprintf(b->names[b->n_names], SLURM_NAME_MAX, "%s", name);
    return (int32_t)b->n_names++;
}

static int cmp_reserved(const void *a, const void *b)
{
    int64_t x = ((const struct reserved_entry *)a)->job_id, y = ((const struct reserved_entry *)b)->job_id;
    return (x > y) - (x < y);
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Notes a job holding its nodes in this pass (see struct backend's alive). */
static void watch(struct backend *b, int64_t job_id)
{
    if (buffers_grow((void **)&b->alive_next, &b->cap_alive_next, b->n_alive_next + 1, sizeof *b->alive_next) == 0)
        b->alive_next[b->n_alive_next++] = job_id;
}

/* The pass is over: what it watched is what the next pass compares with. */
static void watch_swap(struct backend *b)
{
    int64_t *t = b->alive;
    uint32_t cap = b->cap_alive;
    b->alive = b->alive_next;
    b->n_alive = b->n_alive_next;
    b->cap_alive = b->cap_alive_next;
    b->alive_next = t;
    b->cap_alive_next = cap;
    b->n_alive_next = 0;
    if (b->n_alive > 1)
        qsort(b->alive, b->n_alive, sizeof *b->alive, cmp_id);
}

static int64_t reserved_of(const struct backend *b, int64_t job_id)
{
    struct reserved_entry key = {job_id, 0};
    const struct reserved_entry *e =
        b->n_reserved ? bsearch(&key, b->reserved, b->n_reserved, sizeof key, cmp_reserved) : NULL;
    return e ? e->reserved_us : -1;
}

static void set_reserved(struct backend *b, int64_t job_id, int64_t at_us)
{
    struct reserved_entry key = {job_id, at_us};
    struct reserved_entry *e = b->n_reserved ? bsearch(&key, b->reserved, b->n_reserved, sizeof key, cmp_reserved) : NULL;
    if (e) {
        e->reserved_us = at_us;
        return;
    }
    if (buffers_grow((void **)&b->reserved, &b->cap_reserved, b->n_reserved + 1, sizeof *b->reserved) != 0)
        return; /* a lost promise: the policy makes it again */
    uint32_t i = b->n_reserved++;
    while (i > 0 && b->reserved[i - 1].job_id > job_id) {
        b->reserved[i] = b->reserved[i - 1];
        i--;
    }
    b->reserved[i] = key;
}

/* Runs a Slurm command; on failure logs it and counts an error. */
static int run_cmd(struct backend *b, const char *const *argv, struct buf *out, struct err *err)
{
    err_clear(err);
    if (out)
        buf_reset(out);
    if (slurm_exec(argv, out, SLURM_CMD_TIMEOUT_MS, err) == 0)
        return 0;
    b->errors++;
    char msg[600];
    log_write(LOGL_WARN, "slurm command failed", "error=%s", log_quote(msg, sizeof msg, err->msg));
    return -1;
}

/* Finds node by name in the pass's inventory. */
static int node_index(const struct backend *b, const char *name)
{
    return inventory_find_node(&b->inv, name);
}

/* The inventory of this pass: the partition's nodes, their GPUs, drains. */
static int build_inventory(struct backend *b, struct err *err)
{
    inventory_release(&b->inv);
    inventory_init(&b->inv);
    for (size_t i = 0; i < b->n_nodes; i++) {
        const struct slurm_node *sn = &b->nodes[i];
        int gpus = sn->gpus > INV_MAX_NODE_GPUS ? INV_MAX_NODE_GPUS : sn->gpus;
        int k = inventory_add_node(&b->inv, sn->name, gpus);
        if (k < 0)
            return err_set(err, NULL, 0, 0, "partition '%s': too many nodes or GPUs for the agent (node '%s')",
                           b->partition, sn->name);
        struct inv_node *nd = &b->inv.nodes[k];
        nd->leaf = nd->pod = -1;
        nd->nvlink_domain = -1;
        if (sn->drained) {
            nd->drained = 1;
            snprintf(nd->drain_reason, sizeof nd->drain_reason, "slurm: %.100s", sn->reason[0] ? sn->reason : "drained");
        }
        for (int32_t g = 0; g < nd->n_gpus; g++) {
            struct inv_gpu *gpu = &b->inv.gpus[nd->first_gpu + g];
            /* the admin's features name the node's type: "H100" -> catalog H100-SXM */
            snprintf(gpu->model, sizeof gpu->model, "%.95s", sn->features);
            if (sn->down) {
                gpu->drained = 1;
                snprintf(gpu->drain_reason, sizeof gpu->drain_reason, "slurm: node down");
            }
        }
    }
    return 0;
}

/* Marks n free GPUs of node busy for job j (the first ones not yet taken). */
static void take_gpus(struct backend *b, uint8_t *taken, struct agent_job *j, int node, int32_t n)
{
    const struct inv_node *nd = &b->inv.nodes[node];
    for (int32_t g = 0; g < nd->n_gpus && n > 0; g++) {
        int32_t idx = nd->first_gpu + g;
        if (taken[idx])
            continue;
        taken[idx] = 1;
        j->gpu_idx[j->n_gpu_idx++] = idx;
        n--;
    }
}

/* "n1:8,n2:8" (node:count pairs) -> busy GPUs of j. */
static void take_from_counts(struct backend *b, uint8_t *taken, struct agent_job *j, const char *counts)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", counts);
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(item, ':');
        if (!colon)
            continue;
        *colon = '\0';
        int node = node_index(b, item);
        if (node >= 0)
            take_gpus(b, taken, j, node, (int32_t)strtol(colon + 1, NULL, 10));
    }
}

static void fill_job(struct backend *b, struct agent_job *aj, const struct slurm_job *sj)
{
    memset(aj, 0, sizeof *aj);
    aj->id = sj->id;
    aj->state = sj->phase == SLURM_ACTIVE ? JOB_RUNNING : JOB_QUEUED;
    snprintf(aj->user, sizeof aj->user, "%s", sj->user);
    snprintf(aj->team, sizeof aj->team, "%s", sj->account);
    snprintf(aj->name, sizeof aj->name, "%s", sj->name);
    aj->gpus = sj->gpus;
    /* Slurm runs a job on exactly node_count nodes; with --gres=gpu:G the
     * same G on each, which is the policy contract's shape. A job asking
     * --gpus=N over several nodes lets Slurm split N as it likes: it is
     * shaped when N divides evenly, else pooled (and carry_out refuses a
     * split Slurm would not run). */
    aj->nodes = sj->gpus > 0 && (sj->gpus_per_node > 0 || sj->gpus % sj->node_count == 0) ? sj->node_count : 0;
    aj->limit_us = sj->limit_s > 0 ? sj->limit_s * 1000000 : b->cfg->default_time_us;
    int64_t seen = slurm_store_seen(&b->store, sj->id);
    aj->submit_us = seen >= 0 ? seen : sj->submit_s * 1000000;
    const struct slurm_decision *d = slurm_store_find(&b->store, sj->id, sj->restart_cnt);
    aj->start_us = d ? d->decided_us : sj->start_s > 0 ? sj->start_s * 1000000 : -1;
    aj->end_us = -1;
    aj->reserved_us = reserved_of(b, sj->id);
    aj->preemptions = sj->restart_cnt;
    aj->attempts = sj->restart_cnt;
    aj->exit_code = -1;
    aj->first_start_us = -1;
    aj->cpu_us = aj->mem_peak_bytes = -1;
    aj->pidfd = -1;
    aj->user_index = intern(b, sj->user);
    aj->team_index = intern(b, sj->account);
}

/* A finished job the agent started: one trace line, once. */
static int trace_job(struct backend *b, const struct slurm_job *sj, struct err *err)
{
    if (!b->rec_open || slurm_store_traced(&b->store, sj->id))
        return 0;
    if (slurm_store_attempts(&b->store, sj->id) == 0)
        return 0; /* not ours: released by someone else */
    struct slurm_decision *d = slurm_store_find(&b->store, sj->id, sj->restart_cnt);
    struct agent_job aj;
    fill_job(b, &aj, sj);
    /* ended when this pass saw it, if this process watched it run; else
     * (it ended while the agent was down) when Slurm says */
    int watched = b->n_alive && bsearch(&sj->id, b->alive, b->n_alive, sizeof sj->id, cmp_id) != NULL;
    aj.end_us = watched ? b->now : sj->end_s * 1000000;
    if (aj.end_us < aj.start_us)
        aj.end_us = aj.start_us;
    aj.first_start_us = slurm_store_first_decided(&b->store, sj->id);
    if (strcmp(sj->state, "COMPLETED") == 0)
        aj.state = JOB_COMPLETED;
    else if (strcmp(sj->state, "CANCELLED") == 0)
        aj.state = JOB_CANCELLED;
    else if (strcmp(sj->state, "TIMEOUT") == 0)
        aj.state = JOB_TIMEOUT;
    else
        aj.state = JOB_FAILED;
    aj.exit_code = sj->exit_code;
    /* placement: the GPU indices Slurm gave, when a pass saw the job running;
     * else the nodes the policy chose */
    const char *src = d && d->placement[0] ? d->placement : sj->gres_idx[0] ? sj->gres_idx : NULL;
    char names[SLURM_NODELIST_MAX];
    char(*hosts)[SLURM_NAME_MAX] = NULL;
    const char *place[MAX_JOB_NODES * 8];
    size_t n_place = 0;
    if (src) {
        snprintf(names, sizeof names, "%s", src);
        char *save = NULL;
        for (char *t = strtok_r(names, ",", &save); t && n_place < sizeof place / sizeof *place;
             t = strtok_r(NULL, ",", &save))
            place[n_place++] = t;
    } else {
        hosts = malloc(MAX_JOB_NODES * sizeof *hosts);
        int nh = hosts ? slurm_hostlist_expand(sj->nodes, hosts, MAX_JOB_NODES) : -1;
        for (int h = 0; h < nh; h++)
            place[n_place++] = hosts[h];
    }
    int rc = 0;
    if (!record_has(&b->rec, sj->id))
        rc = record_append(&b->rec, &aj, place, n_place, err) || record_sync(&b->rec, err);
    free(hosts);
    if (rc != 0 || slurm_store_mark_traced(&b->store, sj->id, err) != 0)
        return -1;
    char name[300];
    log_write(LOGL_INFO, "job ended", "job=%lld state=%s exit=%d nodes=%s name=%s", (long long)sj->id, sj->state,
              sj->exit_code, sj->nodes, log_quote(name, sizeof name, sj->name));
    return 0;
}

/* pin (ReqNodeList = exactly the chosen nodes) with the agent's comment. A
 * requeued job (attempt > 0) also gets StartTime=now: Slurm delays a
 * requeued job's begin time by two minutes, which would hold it back after
 * the policy chose to start it. */
static int pin_job(struct backend *b, int64_t job_id, int32_t attempt, const char *node_list, struct err *err)
{
    char id[48], req[1100], comment[1400];
    snprintf(id, sizeof id, "JobId=%lld", (long long)job_id);
    snprintf(req, sizeof req, "ReqNodeList=%s", node_list);
    snprintf(comment, sizeof comment, "Comment=" COMMENT_PREFIX "started by policy '%s' on %s", b->sched.ph.spec,
             node_list);
    const char *argv[] = {"scontrol", "update", id, req, comment, attempt > 0 ? "StartTime=now" : NULL, NULL};
    return run_cmd(b, argv, NULL, err);
}

static int release_jobs(struct backend *b, const int64_t *ids, uint32_t n, struct err *err)
{
    if (n == 0)
        return 0;
    struct buf list;
    buf_init(&list);
    for (uint32_t i = 0; i < n; i++)
        buf_printf(&list, "%s%lld", i ? "," : "", (long long)ids[i]);
    const char *argv[] = {"scontrol", "release", list.data, NULL};
    int rc = list.oom ? err_set(err, NULL, 0, 0, "out of memory") : run_cmd(b, argv, NULL, err);
    buf_release(&list);
    return rc;
}

/* "n1:8,n2:8" -> "n1,n2" */
static void counts_to_nodes(const char *counts, char *out, size_t len)
{
    size_t o = 0;
    for (const char *p = counts; *p && o + 1 < len; p++) {
        if (*p == ':') {
            while (*p && *p != ',')
                p++;
            if (!*p)
                break;
        }
        out[o++] = *p;
    }
    out[o] = '\0';
}

/* A decision committed before a crash but not carried out: carry it out
 * now, with the nodes stored, never re-deciding. */
static int finish_decision(struct backend *b, const struct slurm_job *sj, struct slurm_decision *d, struct err *err)
{
    char nodes[300];
    counts_to_nodes(d->nodes, nodes, sizeof nodes);
    if ((strcmp(sj->required_nodes, nodes) != 0 || sj->restart_cnt > 0) && pin_job(b, sj->id, sj->restart_cnt, nodes, err) != 0)
        return -1;
    if (release_jobs(b, &sj->id, 1, err) != 0)
        return -1;
    log_write(LOGL_INFO, "decision carried out after restart", "job=%lld nodes=%s", (long long)sj->id, nodes);
    return slurm_store_mark_released(&b->store, sj->id, sj->restart_cnt, err);
}

/* Sorts the pass's Slurm jobs into the view: queued, running. */
static int classify(struct backend *b, struct err *err)
{
    free(b->ajobs);
    free(b->queued);
    free(b->running);
    free(b->queued_sj);
    free(b->gpu_pool);
    size_t n = b->n_jobs ? b->n_jobs : 1;
    b->ajobs = calloc(n, sizeof *b->ajobs);
    b->queued = calloc(n, sizeof *b->queued);
    b->running = calloc(n, sizeof *b->running);
    b->queued_sj = calloc(n, sizeof *b->queued_sj);
    uint8_t *taken = calloc(b->inv.n_gpus + 1, 1);
    int64_t pool_need = 1;
    for (size_t i = 0; i < b->n_jobs; i++)
        pool_need += b->jobs[i].gpus > 0 ? b->jobs[i].gpus : 0;
    b->gpu_pool = calloc((size_t)pool_need, sizeof *b->gpu_pool);
    if (!b->ajobs || !b->queued || !b->running || !b->queued_sj || !taken || !b->gpu_pool) {
        free(taken);
        return err_set(err, NULL, 0, 0, "out of memory");
    }
    b->n_queued = b->n_running = 0;
    int64_t pool_used = 0;
    /* two rounds: GPUs Slurm names first, then counts on the chosen nodes */
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < b->n_jobs; i++) {
            struct slurm_job *sj = &b->jobs[i];
            struct agent_job *aj = &b->ajobs[i];
            struct slurm_decision *d = slurm_store_find(&b->store, sj->id, sj->restart_cnt);
            int exact = sj->phase == SLURM_ACTIVE && sj->gres_idx[0];
            if (round == 0) {
                if (sj->phase == SLURM_ENDED) {
                    /* a job that started and ended between two passes: its start still counts */
                    if (d && d->start_s == 0 && sj->start_s > 0 &&
                        slurm_store_set_started(&b->store, sj->id, sj->restart_cnt, sj->start_s, sj->gres_idx, err) != 0)
                        goto fail;
                    if (sj->start_s > 0 && trace_job(b, sj, err) != 0)
                        goto fail;
                    continue;
                }
                if (sj->phase == SLURM_PENDING) {
                    if (!d) {
                        if (sj->held && sj->gpus > 0) {
                            if (slurm_store_add_seen(&b->store, sj->id, b->now, err) != 0)
                                goto fail;
                            fill_job(b, aj, sj);
                            b->queued_sj[b->n_queued] = sj;
                            b->queued[b->n_queued++] = aj;
                        }
                        continue; /* not held: released by someone else, Slurm's to start */
                    }
                    if (!d->released) {
                        /* decided before a crash: carry it out; it holds its nodes in this view
                         * either way (a failure is retried by the next pass) */
                        struct err ferr;
                        err_clear(&ferr);
                        if (sj->held)
                            (void)finish_decision(b, sj, d, &ferr);
                        else if (slurm_store_mark_released(&b->store, sj->id, sj->restart_cnt, err) != 0)
                            goto fail;
                    } else if (sj->held) {
                        continue; /* released, then held again by an admin: the admin's */
                    }
                }
                if (sj->phase == SLURM_ACTIVE && d && d->start_s == 0 && sj->start_s > 0 &&
                    slurm_store_set_started(&b->store, sj->id, sj->restart_cnt, sj->start_s, sj->gres_idx, err) != 0)
                    goto fail;
                fill_job(b, aj, sj); /* a job the agent started runs from its decision */
                if (aj->start_us < 0)
                    aj->start_us = b->now;
                aj->state = JOB_RUNNING;
                aj->preempting = slurm_store_preempted(&b->store, sj->id, sj->restart_cnt);
                aj->gpu_idx = &b->gpu_pool[pool_used];
                pool_used += sj->gpus > 0 ? sj->gpus : 0;
                b->running[b->n_running++] = aj;
                watch(b, sj->id);
                if (!exact)
                    continue;
                char copy[SLURM_TEXT_MAX];
                snprintf(copy, sizeof copy, "%s", sj->gres_idx);
                char *save = NULL;
                for (char *t = strtok_r(copy, ",", &save); t && aj->n_gpu_idx < sj->gpus; t = strtok_r(NULL, ",", &save)) {
                    char *colon = strrchr(t, ':');
                    if (!colon)
                        continue;
                    *colon = '\0';
                    int node = node_index(b, t);
                    long local = strtol(colon + 1, NULL, 10);
                    if (node < 0 || local < 0 || local >= b->inv.nodes[node].n_gpus)
                        continue;
                    int32_t idx = b->inv.nodes[node].first_gpu + (int32_t)local;
                    if (!taken[idx]) {
                        taken[idx] = 1;
                        aj->gpu_idx[aj->n_gpu_idx++] = idx;
                    }
                }
            } else if (sj->phase != SLURM_ENDED && !exact && aj->gpu_idx && aj->n_gpu_idx == 0) {
                if (d)
                    take_from_counts(b, taken, aj, d->nodes);
                else { /* running, not ours, no detail: its per-node share */
                    char(*hosts)[SLURM_NAME_MAX] = malloc(MAX_JOB_NODES * sizeof *hosts);
                    int nh = hosts ? slurm_hostlist_expand(sj->nodes, hosts, MAX_JOB_NODES) : 0;
                    for (int h = 0; h < nh; h++) {
                        int node = node_index(b, hosts[h]);
                        if (node >= 0)
                            take_gpus(b, taken, aj, node, sj->gpus_per_node ? sj->gpus_per_node : sj->gpus / nh);
                    }
                    free(hosts);
                }
            }
        }
    }
    /* GPUs Slurm counts as used that no job of ours holds belong to other
     * partitions' jobs: out of this pass's view */
    for (size_t i = 0; i < b->n_nodes; i++) {
        int node = node_index(b, b->nodes[i].name);
        if (node < 0)
            continue;
        const struct inv_node *nd = &b->inv.nodes[node];
        int32_t ours = 0;
        for (int32_t g = 0; g < nd->n_gpus; g++)
            ours += taken[nd->first_gpu + g];
        int32_t foreign = b->nodes[i].gpus_used - ours;
        for (int32_t g = nd->n_gpus - 1; g >= 0 && foreign > 0; g--) {
            struct inv_gpu *gpu = &b->inv.gpus[nd->first_gpu + g];
            if (taken[nd->first_gpu + g] || gpu->drained)
                continue;
            gpu->drained = 1;
            snprintf(gpu->drain_reason, sizeof gpu->drain_reason, "used outside partition '%s'", b->partition);
            foreign--;
        }
    }
    free(taken);
    /* the host core wants the queue in arrival order: submit time, then id */
    for (uint32_t i = 1; i < b->n_queued; i++) {
        struct agent_job *aj = b->queued[i];
        struct slurm_job *sj = b->queued_sj[i];
        uint32_t k = i;
        while (k > 0 && (b->queued[k - 1]->submit_us > aj->submit_us ||
                         (b->queued[k - 1]->submit_us == aj->submit_us && b->queued[k - 1]->id > aj->id))) {
            b->queued[k] = b->queued[k - 1];
            b->queued_sj[k] = b->queued_sj[k - 1];
            k--;
        }
        b->queued[k] = aj;
        b->queued_sj[k] = sj;
    }
    return 0;
fail:
    free(taken);
    return -1;
}

static struct slurm_job *slurm_job_of(struct backend *b, const struct agent_job *aj)
{
    return &b->jobs[aj - b->ajobs];
}

/* The agent's reason on each held job it has not yet commented, in batches
 * (one scontrol call takes a list of job ids). */
static void comment_new_jobs(struct backend *b, struct err *err)
{
    char comment[1200];
    snprintf(comment, sizeof comment, "Comment=" COMMENT_PREFIX "held for policy '%s' (fleetsim-agent)",
             b->sched.ph.spec);
    struct buf ids;
    buf_init(&ids);
    uint32_t in_batch = 0;
    for (uint32_t i = 0; i <= b->n_queued; i++) {
        if (i < b->n_queued) {
            const struct slurm_job *sj = b->queued_sj[i];
            if (strncmp(sj->comment, COMMENT_PREFIX, strlen(COMMENT_PREFIX)) == 0 ||
                slurm_store_find(&b->store, sj->id, sj->restart_cnt))
                continue; /* said already, or started by this pass (its comment says where) */
            buf_printf(&ids, "%s%lld", in_batch ? "," : "JobId=", (long long)sj->id);
            in_batch++;
        }
        if (in_batch > 0 && (in_batch == COMMENT_BATCH || i == b->n_queued)) {
            const char *argv[] = {"scontrol", "update", ids.data, comment, NULL};
            if (!ids.oom)
                (void)run_cmd(b, argv, NULL, err);
            buf_reset(&ids);
            in_batch = 0;
        }
    }
    buf_release(&ids);
}

/* Carries out a pass's decisions: preemptions, then starts (committed, pinned, released). */
static int carry_out(struct backend *b, const struct sched_result *res, struct err *err)
{
    for (uint32_t k = 0; k < res->n_preempts; k++) {
        const struct slurm_job *sj = slurm_job_of(b, res->preempts[k]);
        if (slurm_store_add_preemption(&b->store, sj->id, sj->restart_cnt, now_us(), err) != 0)
            return -1;
        char id[32];
        snprintf(id, sizeof id, "%lld", (long long)sj->id);
        const char *argv[] = {"scontrol", "requeuehold", id, NULL};
        if (run_cmd(b, argv, NULL, err) == 0) {
            b->preempts++;
            log_write(LOGL_INFO, "job preempted", "job=%lld attempt=%d", (long long)sj->id, sj->restart_cnt);
        }
    }
    if (res->n_starts == 0)
        return 0;
    int64_t *ids = calloc(res->n_starts, sizeof *ids);
    int32_t *attempts = calloc(res->n_starts, sizeof *attempts);
    char(*lists)[300] = calloc(res->n_starts, sizeof *lists);
    uint8_t *kept = calloc(b->inv.n_nodes + 1, 1); /* nodes of a start refused for its shape */
    if (!ids || !lists || !attempts || !kept) {
        free(ids);
        free(attempts);
        free(lists);
        free(kept);
        return err_set(err, NULL, 0, 0, "out of memory");
    }
    uint32_t n_ok = 0;
    int64_t decided = b->now;
    if (slurm_store_begin(&b->store, err) != 0)
        goto fail;
    for (uint32_t k = 0; k < res->n_starts; k++) {
        const struct sched_start *ss = &res->starts[k];
        const struct slurm_job *sj = slurm_job_of(b, ss->job);
        /* GPUs per node, in node order */
        int32_t per_node[MAX_JOB_NODES];
        int node_of[MAX_JOB_NODES];
        int used = 0, fits = 1;
        for (int32_t g = 0; g < ss->job->gpus && fits; g++) {
            int node = b->inv.gpus[ss->gpus[g]].node, u = 0;
            while (u < used && node_of[u] != node)
                u++;
            if (u == used) {
                fits = used < MAX_JOB_NODES;
                if (!fits)
                    break;
                node_of[used] = node;
                per_node[used++] = 0;
            }
            per_node[u]++;
        }
        /* a Slurm job is node_count nodes x the same GPUs on each */
        int shaped = fits && used == sj->node_count;
        for (int u = 0; u < used && shaped; u++)
            shaped = sj->gpus_per_node ? per_node[u] == sj->gpus_per_node : 1;
        int behind = 0; /* a later start on a node kept for a refused one */
        for (int u = 0; u < used && shaped; u++)
            behind |= kept[node_of[u]];
        if (!shaped || behind) {
            if (behind) {
                b->held_back++;
                log_write(LOGL_DEBUG, "start held back: its nodes are kept for a job refused this pass",
                          "job=%lld pass_us=%lld", (long long)sj->id, (long long)b->now);
                continue;
            }
            /* The policy counts GPUs, not shapes: it spread the job (or
             * gave it other nodes than it asked for). It waits; and its
             * nodes take no later start of this pass, so that they drain
             * towards its shape instead of fragmenting further (without
             * this, a 2-node job behind a stream of small ones could wait
             * for ever). */
            for (int u = 0; u < used; u++)
                kept[node_of[u]] = 1;
            b->shape_refused++;
            log_write(LOGL_DEBUG, "start not carried out: not the job's shape",
                      "job=%lld nodes_chosen=%d nodes_asked=%d pass_us=%lld", (long long)sj->id, used, sj->node_count,
                      (long long)b->now);
            continue;
        }
        struct slurm_decision d = {.job_id = sj->id, .attempt = sj->restart_cnt, .decided_us = decided};
        size_t len = 0, llen = 0;
        for (int u = 0; u < used; u++) {
            const char *name = b->inv.nodes[node_of[u]].name;
            int w = snprintf(d.nodes + len, sizeof d.nodes - len, "%s%s:%d", u ? "," : "", name, per_node[u]);
            int w2 = snprintf(lists[n_ok] + llen, sizeof lists[n_ok] - llen, "%s%s", u ? "," : "", name);
            if (w < 0 || (size_t)w >= sizeof d.nodes - len || w2 < 0 || (size_t)w2 >= sizeof lists[n_ok] - llen) {
                fits = 0;
                break;
            }
            len += (size_t)w;
            llen += (size_t)w2;
        }
        if (!fits)
            continue;
        if (slurm_store_add_decision(&b->store, &d, err) != 0)
            goto fail;
        attempts[n_ok] = sj->restart_cnt;
        ids[n_ok++] = sj->id;
    }
    if (slurm_store_commit(&b->store, err) != 0)
        goto fail;
    /* committed: from here a crash is finished by the next start (finish_decision) */
    uint32_t n_pinned = 0;
    for (uint32_t k = 0; k < n_ok; k++) {
        if (pin_job(b, ids[k], attempts[k], lists[k], err) != 0)
            continue; /* e.g. cancelled meanwhile: the row stays unreleased, the next pass settles it */
        ids[n_pinned] = ids[k];
        attempts[n_pinned] = attempts[k];
        memmove(lists[n_pinned], lists[k], sizeof lists[k]);
        n_pinned++;
    }
    if (release_jobs(b, ids, n_pinned, err) != 0)
        goto fail;
    if (slurm_store_begin(&b->store, err) != 0)
        goto fail;
    for (uint32_t k = 0; k < n_pinned; k++) {
        const struct slurm_job *sj = NULL;
        for (size_t i = 0; i < b->n_jobs && !sj; i++)
            if (b->jobs[i].id == ids[k])
                sj = &b->jobs[i];
        if (sj && slurm_store_mark_released(&b->store, sj->id, sj->restart_cnt, err) != 0)
            goto fail;
        b->starts++;
        watch(b, ids[k]);
        log_write(LOGL_INFO, "job released", "job=%lld nodes=%s", (long long)ids[k], lists[k]);
    }
    if (slurm_store_commit(&b->store, err) != 0)
        goto fail;
    free(ids);
    free(attempts);
    free(lists);
    free(kept);
    return 0;
fail:
    free(ids);
    free(attempts);
    free(lists);
    free(kept);
    return -1;
}

/* One pass. *worked: something was decided (the next pass comes at once). */
static int pass(struct backend *b, int *worked, struct err *err)
{
    *worked = 0;
    const char *sinfo[] = {"sinfo", "--json", NULL};
    const char *squeue[] = {"squeue", "--json", "-t", "all", "-p", b->partition, NULL};
    free(b->nodes);
    free(b->jobs);
    b->nodes = NULL;
    b->jobs = NULL;
    b->n_nodes = b->n_jobs = 0;
    /* jobs first: a job that ends between the two reads then still holds its
     * GPUs in this pass (seen ended by the next), never the other way round
     * (GPUs Slurm still counts as used by a job this pass saw ended would
     * read as another partition's) */
    if (run_cmd(b, squeue, &b->out, err) != 0 ||
        slurm_parse_jobs(b->out.data ? b->out.data : "", b->out.len, b->partition, &b->jobs, &b->n_jobs, err) != 0)
        return -1;
    b->now = now_us();
    if (run_cmd(b, sinfo, &b->out, err) != 0 ||
        slurm_parse_nodes(b->out.data ? b->out.data : "", b->out.len, b->partition, &b->nodes, &b->n_nodes, err) != 0)
        return -1;
    if (b->n_nodes == 0)
        return err_set(err, NULL, 0, 0, "partition '%s' has no nodes (sinfo --json)", b->partition);
    if (build_inventory(b, err) != 0)
        return -1;
    b->reached = 1;
    if (!b->rec_open) {
        char path[CONFIG_PATH_MAX + 32];
        if (b->cfg->trace[0])
            snprintf(path, sizeof path, "%s", b->cfg->trace);
        else
            snprintf(path, sizeof path, "%s/trace.jsonl", b->cfg->state_dir);
        if (record_open(&b->rec, path, b->store.epoch_s, b->inv.n_nodes, b->inv.n_gpus, err) != 0)
            return -1;
        b->rec_open = 1;
    }
    /* one transaction for what the pass observes (one sync, not one per job) */
    if (slurm_store_begin(&b->store, err) != 0)
        return -1;
    int crc = classify(b, err);
    struct err cerr;
    err_clear(&cerr);
    if (slurm_store_commit(&b->store, crc == 0 ? err : &cerr) != 0 || crc != 0)
        return -1;
    struct sched_result res;
    sched_result_init(&res);
    int rc = scheduler_pass(&b->sched, b->now, &b->inv, b->queued, b->n_queued, b->running, b->n_running, &res, err);
    b->passes++;
    if (rc != 0) {
        sched_result_release(&res);
        return -1;
    }
    for (uint32_t k = 0; k < res.n_reserved; k++)
        set_reserved(b, res.reserved[k]->id, res.reserved[k]->reserved_us);
    rc = carry_out(b, &res, err);
    watch_swap(b);
    *worked = res.n_starts > 0 || res.n_preempts > 0;
    sched_result_release(&res);
    if (rc != 0)
        return -1;
    err_clear(&cerr);
    comment_new_jobs(b, &cerr);
    char status[160];
    snprintf(status, sizeof status, "STATUS=partition %s: %u held, %u running", b->partition, b->n_queued,
             b->n_running);
    notify_send(status);
    return 0;
}

static int lock_state(struct backend *b, struct err *err)
{
    const char *dir = b->cfg->state_dir;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return err_set(err, NULL, 0, 0, "cannot create state_dir '%s': %s", dir, strerror(errno));
    char path[CONFIG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/slurm.lock", dir);
    return state_lock_take(path, dir, &b->lock_fd, err);
}

int slurm_backend_run(const struct agent_config *cfg, const char *partition, int poll_ms, struct err *err)
{
    struct backend b;
    memset(&b, 0, sizeof b);
    b.cfg = cfg;
    b.partition = partition;
    b.lock_fd = -1;
    buf_init(&b.out);
    inventory_init(&b.inv);
    record_init(&b.rec);
    int rc = -1;
    if (lock_state(&b, err) != 0)
        goto done;
    char path[CONFIG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/slurm.db", cfg->state_dir);
    if (slurm_store_open(&b.store, path, now_us() / 1000000, err) != 0)
        goto done;
    if (scheduler_init(&b.sched, cfg->policy, (double)cfg->decide_timeout_us / 1e6, err) != 0)
        goto done;
    b.sched.multi_node = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    log_write(LOGL_INFO, "agent started", "backend=slurm partition=%s policy=%s decisions=%u", partition,
              b.sched.ph.spec, b.store.n);
    int ready = 0, failures = 0;
    while (!stop_requested) {
        int worked = 0;
        struct err perr;
        err_clear(&perr);
        if (pass(&b, &worked, &perr) != 0) {
            if (b.sched.failed) {
                char msg[600];
                log_write(LOGL_ERROR, "policy failed", "error=%s", log_quote(msg, sizeof msg, b.sched.failure));
                *err = perr;
                goto done;
            }
            char msg[600];
            log_write(LOGL_WARN, "pass failed", "error=%s", log_quote(msg, sizeof msg, perr.msg));
            if (!b.reached && ++failures >= 3) { /* a partition that does not exist, Slurm not reachable */
                err_clear(err);
                if (strstr(perr.msg, "has no nodes"))
                    *err = perr; /* the admin's input */
                else
                    err_set(err, NULL, 0, 0, "cannot use Slurm: %s", perr.msg);
                goto done;
            }
            worked = 0;
        } else if (!ready) {
            ready = 1;
            notify_send("READY=1");
            log_write(LOGL_INFO, "ready", "nodes=%zu held=%u running=%u", b.n_nodes, b.n_queued, b.n_running);
        }
        if (worked)
            continue; /* what was decided changes the view: look again at once */
        struct timespec ts = {poll_ms / 1000, (long)(poll_ms % 1000) * 1000000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stop_requested)
            ;
    }
    notify_send("STOPPING=1");
    log_write(LOGL_INFO, "agent stopped",
              "passes=%llu starts=%llu preemptions=%llu shape_refused=%llu held_back=%llu errors=%llu",
              (unsigned long long)b.passes, (unsigned long long)b.starts, (unsigned long long)b.preempts,
              (unsigned long long)b.shape_refused, (unsigned long long)b.held_back, (unsigned long long)b.errors);
    rc = 0;
done:
    scheduler_release(&b.sched);
    slurm_store_close(&b.store);
    record_close(&b.rec);
    inventory_release(&b.inv);
    buf_release(&b.out);
    free(b.nodes);
    free(b.jobs);
    free(b.ajobs);
    free(b.queued);
    free(b.running);
    free(b.queued_sj);
    free(b.gpu_pool);
    free(b.reserved);
    free(b.names);
    free(b.alive);
    free(b.alive_next);
    if (b.lock_fd >= 0)
        close(b.lock_fd);
    return rc;
}

int slurm_backend_submit(const struct slurm_submit *s, struct err *err)
{
    int nodes = s->nodes > 0 ? s->nodes : 1;
    if (s->gpus < 1 || s->gpus % nodes != 0)
        return err_set(err, NULL, 0, 0, "--gpus %d does not split evenly over %d nodes", s->gpus, nodes);
    char part[160], nn[32], gres[48], tlimit[48], name[200], account[120];
    snprintf(part, sizeof part, "--partition=%s", s->partition);
    snprintf(nn, sizeof nn, "--nodes=%d", nodes);
    snprintf(gres, sizeof gres, "--gres=gpu:%d", s->gpus / nodes);
    const char *argv[32 + 1];
    size_t n = 0;
    argv[n++] = "sbatch";
    argv[n++] = "--parsable";
    argv[n++] = part;
    argv[n++] = nn;
    argv[n++] = gres;
    if (s->time_us > 0) {
        int64_t minutes = (s->time_us + 59999999) / 60000000; /* Slurm's limits are whole minutes: round up */
        snprintf(tlimit, sizeof tlimit, "--time=%lld", (long long)minutes);
        argv[n++] = tlimit;
    }
    if (s->name && s->name[0]) {
        snprintf(name, sizeof name, "--job-name=%s", s->name);
        argv[n++] = name;
    }
    if (s->account && s->account[0]) {
        snprintf(account, sizeof account, "--account=%s", s->account);
        argv[n++] = account;
    }
    /* the command as argv, quoted for the batch script's /bin/sh */
    struct buf script;
    buf_init(&script);
    buf_puts(&script, "--wrap=exec");
    for (int i = 0; i < s->argc; i++) {
        char *word = child_shell_word(s->argv[i]);
        if (!word) {
            script.oom = 1; /* reported below */
            break;
        }
        buf_puts(&script, " ");
        buf_puts(&script, word);
        free(word);
    }
    argv[n++] = script.data;
    argv[n] = NULL;
    struct buf out;
    buf_init(&out);
    int rc = script.oom ? err_set(err, NULL, 0, 0, "out of memory") : slurm_exec(argv, &out, SLURM_CMD_TIMEOUT_MS, err);
    if (rc == 0) {
        char *semi = out.data ? strchr(out.data, ';') : NULL; /* "ID;cluster" */
        if (semi)
            *semi = '\0';
        printf("%s%s", out.data ? out.data : "", out.data && strchr(out.data, '\n') ? "" : "\n");
    }
    buf_release(&out);
    buf_release(&script);
    return rc;
}
