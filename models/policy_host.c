/* _GNU_SOURCE: pthread_kill and sigaltstack's stack_t under -std=c11. */
#define _GNU_SOURCE 1
#include "models/policy_host.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "policies/registry.h"
#include "sim/buffers.h"

/* ---- the guard: catching a plugin that crashes or hangs ---- */

/* The signal the watchdog sends to a thread stuck in decide(). A real-time
 * signal: nobody else sends it, and it never means anything to the host. */
#define GUARD_TIMEOUT_SIGNAL (SIGRTMIN + 5)
#define GUARD_TIMEOUT (-1)

static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
enum { N_FAULT_SIGNALS = sizeof fault_signals / sizeof *fault_signals };

struct guard {
    sigjmp_buf jump;
    volatile sig_atomic_t active;
    volatile sig_atomic_t catch_faults; /* plugins only: a built-in's crash is a crash */
    volatile sig_atomic_t caught;       /* the signal, or GUARD_TIMEOUT */
};

static _Thread_local struct guard *current_guard;
static _Thread_local int alt_stack_ready;
/* What guard_setup has done for this thread, so that a call under the guard
 * (one per pass) skips its lock once everything is in place: GUARD_READY,
 * and GUARD_WATCHED once the watchdog runs too. A fork clears it (the
 * child has no watchdog). */
enum { GUARD_READY = 1, GUARD_WATCHED = 2 };
static _Thread_local int guard_done;

static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
static int handlers_installed;
/* Memory that lives as long as the process on purpose: the alternate signal
 * stacks (the kernel holds them) and what a failed plugin left (its state
 * cannot be trusted to be freed). Kept reachable here so that leak checkers
 * tell them from real leaks. */
enum { KEPT_MAX = 64 };
static void *kept[KEPT_MAX];
static size_t n_kept;

static void keep(void *p)
{
    pthread_mutex_lock(&setup_lock);
    if (p && n_kept < KEPT_MAX)
        kept[n_kept++] = p;
    pthread_mutex_unlock(&setup_lock);
}
static struct sigaction previous[N_FAULT_SIGNALS];

/* What the watchdog watches: the sequence number of the call in progress
 * (0: none), the thread making it and its limit. One guarded call at a time
 * per process: hosts are single-threaded. */
static atomic_uint_fast64_t watch_seq;
static atomic_int_fast64_t watch_limit_ns;
static pthread_t watch_target;
static uint64_t next_seq;
static int watchdog_running;

static void on_signal(int sig, siginfo_t *info, void *uc)
{
    struct guard *g = current_guard;
    int is_timeout = sig == GUARD_TIMEOUT_SIGNAL;
    if (g && g->active && (is_timeout || g->catch_faults)) {
        g->active = 0;
        g->caught = is_timeout ? GUARD_TIMEOUT : sig;
        siglongjmp(g->jump, 1);
    }
    if (is_timeout)
        return; /* the call it was meant for has returned meanwhile */
    /* not a plugin's: hand the signal back to whoever had it (the default,
     * or a sanitizer) */
    for (int k = 0; k < N_FAULT_SIGNALS; k++) {
        if (fault_signals[k] != sig)
            continue;
        sigaction(sig, &previous[k], NULL);
        if (info->si_code <= 0)
            raise(sig); /* sent, not a fault: deliver it again */
        /* a fault re-executes the instruction on return and meets the
         * previous handler */
        (void)uc;
        return;
    }
}

static void *watchdog(void *arg)
{
    (void)arg;
    uint64_t seen = 0;
    int64_t seen_for_ns = 0;
    const int64_t tick_ns = 50 * 1000 * 1000;
    for (;;) {
        struct timespec ts = {0, tick_ns};
        nanosleep(&ts, NULL);
        uint64_t seq = atomic_load_explicit(&watch_seq, memory_order_acquire);
        if (seq == 0 || seq != seen) {
            seen = seq;
            seen_for_ns = 0;
            continue;
        }
        seen_for_ns += tick_ns;
        int64_t limit = atomic_load_explicit(&watch_limit_ns, memory_order_relaxed);
        if (limit > 0 && seen_for_ns >= limit) {
            pthread_kill(watch_target, GUARD_TIMEOUT_SIGNAL);
            seen_for_ns = 0; /* once more a limit later if it was not caught */
        }
    }
    return NULL;
}

static void after_fork_child(void)
{
    /* threads do not survive fork: the child starts its own when it needs one */
    watchdog_running = 0;
    guard_done = 0; /* the forking thread is the child's only one */
    atomic_store(&watch_seq, 0);
}

/* Once per process: the handlers; once per thread: an alternate stack, so
 * that a plugin overflowing its stack is caught too. */
static void guard_setup(int want_watchdog)
{
    int need = want_watchdog ? GUARD_READY | GUARD_WATCHED : GUARD_READY;
    if ((guard_done & need) == need)
        return;
    pthread_mutex_lock(&setup_lock);
    if (!handlers_installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        for (int k = 0; k < N_FAULT_SIGNALS; k++)
            sigaction(fault_signals[k], &sa, &previous[k]);
        sigaction(GUARD_TIMEOUT_SIGNAL, &sa, NULL);
        pthread_atfork(NULL, NULL, after_fork_child);
        handlers_installed = 1;
    }
    if (want_watchdog && !watchdog_running) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        /* the watchdog must not take the host's signals */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        if (pthread_create(&t, &attr, watchdog, NULL) == 0)
            watchdog_running = 1;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    pthread_mutex_unlock(&setup_lock);
    if (!alt_stack_ready) {
        size_t size = 256 * 1024;
        stack_t ss = {.ss_sp = malloc(size), .ss_size = size, .ss_flags = 0};
        if (ss.ss_sp && sigaltstack(&ss, NULL) == 0) {
            alt_stack_ready = 1;
            keep(ss.ss_sp);
        } else {
            free(ss.ss_sp);
        }
    }
    /* without an alternate stack or a watchdog (they failed), try again next time */
    pthread_mutex_lock(&setup_lock);
    if (alt_stack_ready)
        guard_done = GUARD_READY | (watchdog_running ? GUARD_WATCHED : 0);
    pthread_mutex_unlock(&setup_lock);
}

static const char *signal_words(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (abort)";
    }
    return "a signal";
}

enum guarded_call { CALL_CREATE, CALL_DECIDE, CALL_OBSERVE };

struct call_args {
    enum guarded_call what;
    const struct policy_ops *ops;
    void *state;
    const char *params;
    void **state_out;
    char *msg;
    size_t msg_len;
    const struct cluster_view *view;
    struct policy_decisions *out;
    const struct policy_event *ev;
    int rc;
};

static void call_policy(struct call_args *a)
{
    switch (a->what) {
    case CALL_CREATE:
        a->rc = a->ops->create(a->params, a->state_out, a->msg, a->msg_len);
        break;
    case CALL_DECIDE:
        a->rc = a->ops->decide(a->state, a->view, a->out);
        break;
    case CALL_OBSERVE:
        a->ops->observe(a->state, a->ev);
        a->rc = 0;
        break;
    }
}

/* Runs the call under the guard. Returns 0 when it returned (its result in
 * a->rc), else the signal caught or GUARD_TIMEOUT. */
static int guard_run(int catch_faults, double timeout_s, struct call_args *a)
{
    int timed = timeout_s > 0 && a->what == CALL_DECIDE;
    if (!catch_faults && !timed) {
        call_policy(a);
        return 0;
    }
    guard_setup(timed);
    /* the fields, not the jump buffer (sigsetjmp fills it): a pass calls this */
    struct guard g;
    g.active = 0;
    g.caught = 0;
    g.catch_faults = catch_faults;
    struct guard *outer = current_guard;
    if (sigsetjmp(g.jump, 0) != 0) {
        /* jumped out of the handler: the signal is still blocked there */
        atomic_store(&watch_seq, 0);
        current_guard = outer;
        int sig = g.caught == GUARD_TIMEOUT ? GUARD_TIMEOUT_SIGNAL : g.caught;
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        return g.caught;
    }
    current_guard = &g;
    if (timed) {
        /* release, not the default seq_cst: a plain store on x86 where a
         * full fence cost 2% of a replay (three a pass); the watchdog's
         * acquiring load of the sequence sees the target and limit too */
        watch_target = pthread_self();
        atomic_store_explicit(&watch_limit_ns, (int_fast64_t)(timeout_s * 1e9), memory_order_relaxed);
        atomic_store_explicit(&watch_seq, ++next_seq, memory_order_release);
    }
    g.active = 1;
    call_policy(a);
    g.active = 0;
    if (timed)
        atomic_store_explicit(&watch_seq, 0, memory_order_release);
    current_guard = outer;
    return 0;
}

/* ---- creating ---- */

static uint32_t declared_kinds(const struct policy_plugin *pl)
{
    if (!pl->handle)
        return policy_registry_decision_kinds(pl->ops, pl->state);
    return pl->decision_kinds ? pl->decision_kinds(pl->state) & POLICY_KINDS_ALL : POLICY_KINDS_ALL;
}

static const char *kind_word(uint32_t bit)
{
    return bit == POLICY_KINDS_PREEMPT ? "preempt" : bit == POLICY_KINDS_RESERVE ? "reserve" : "start";
}

static int create_guarded(struct policy_host *h, const char *params, struct err *err)
{
    char msg[512] = "";
    struct call_args a = {.what = CALL_CREATE, .ops = h->pl.ops, .params = params, .state_out = &h->pl.state,
                          .msg = msg, .msg_len = sizeof msg};
    int caught = guard_run(1, 0, &a);
    if (caught) {
        h->failed = 1;
        return err_set(err, NULL, 0, 0, "policy '%s' crashed with %s in create()", h->spec, signal_words(caught));
    }
    if (a.rc != 0) {
        /* a plugin may fill the buffer without ending it */
        msg[sizeof msg - 1] = '\0';
        h->pl.state = NULL;
        return err_set(err, NULL, 0, 0, "policy '%s' (%.64s): %s", h->spec, h->pl.ops->name,
                       msg[0] ? msg : "create failed");
    }
    return 0;
}

int policy_host_open(struct policy_host *h, const char *spec, const struct policy_host_options *opt,
                     struct err *err)
{
    memset(h, 0, sizeof *h);
    struct policy_host_options defaults = {0};
    if (!opt)
        opt = &defaults;
    if (!spec || !*spec)
        return err_set(err, NULL, 0, 0, "empty policy spec");
    if (strlen(spec) >= sizeof h->spec)
        return err_set(err, NULL, 0, 0, "policy spec is %zu bytes long; at most %zu are accepted", strlen(spec),
                       sizeof h->spec - 1);
    snprintf(h->spec, sizeof h->spec, "%s", spec);
    h->decide_timeout_s = opt->decide_timeout_s == 0 ? POLICY_HOST_DEFAULT_TIMEOUT_S : opt->decide_timeout_s;
    if (!policy_plugin_is_path(spec)) {
        if (policy_plugin_create_builtin(&h->pl, spec, opt->extra_params, err) != 0) {
            memset(h, 0, sizeof *h);
            return -1;
        }
    } else {
        const char *params;
        char path[1024];
        if (policy_plugin_split(spec, opt->extra_params, path, sizeof path, &params, err) != 0 ||
            policy_plugin_open(&h->pl, path, err) != 0) {
            memset(h, 0, sizeof *h);
            return -1;
        }
        h->guarded = 1;
        if (create_guarded(h, params, err) != 0) {
            if (!h->failed)
                policy_plugin_unload(&h->pl);
            memset(h, 0, sizeof *h);
            return -1;
        }
    }
    h->kinds = declared_kinds(&h->pl);
    h->reads_gaps = policy_registry_reads_gaps(h->pl.ops, h->pl.state); /* 0 for every plugin (policy.h) */
    uint32_t serves = opt->host_kinds ? opt->host_kinds : POLICY_KINDS_ALL;
    uint32_t missing = h->kinds & ~serves;
    if (missing) {
        uint32_t bit = missing & -missing;
        err_set(err, NULL, 0, 0, "policy '%s' may %s running jobs, which %s does not carry out; choose a policy without "
                                 "%s",
                h->spec, kind_word(bit), opt->host_name ? opt->host_name : "this host", kind_word(bit));
        policy_host_close(h);
        return -1;
    }
    return 0;
}

void policy_host_adopt(struct policy_host *h, const struct policy_ops *ops, void *state, const char *label)
{
    memset(h, 0, sizeof *h);
    h->pl.ops = ops;
    h->pl.state = state;
    h->kinds = POLICY_KINDS_ALL;
    h->reads_gaps = policy_registry_reads_gaps(ops, state);
    h->decide_timeout_s = POLICY_HOST_DEFAULT_TIMEOUT_S;
    snprintf(h->spec, sizeof h->spec, "%s", label ? label : ops->name);
    h->failed = -1; /* marks "not ours to destroy" for close */
}

void policy_host_close(struct policy_host *h)
{
    if (!h)
        return;
    if (h->failed == 0) {
        policy_plugin_unload(&h->pl);
    }
    /* a failed plugin's state and code cannot be trusted: keep them rather
     * than run its destroy() or unmap code a handler may still point into */
    if (h->failed > 0)
        keep(h->pl.state);
    free(h->room);
    free(h->room_stamp);
    free(h->shares);
    free(h->started);
    free(h->preempted);
    free(h->shape_seen);
    memset(h, 0, sizeof *h);
}

/* ---- the view ---- */

void policy_host_order_by_end(const struct policy_running *running, uint32_t n, uint32_t *by_end)
{
    /* insertion into a sorted run, binary search for the place: hosts
     * rebuild this per pass over at most thousands of running jobs */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t lo = 0, hi = i;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (policy_running_end_before(&running[by_end[mid]], &running[i]))
                lo = mid + 1;
            else
                hi = mid;
        }
        memmove(&by_end[lo + 1], &by_end[lo], (i - lo) * sizeof *by_end);
        by_end[lo] = i;
    }
}

void policy_host_tally_nodes(struct cluster_view *v, uint32_t *with_free)
{
    v->total_slots = v->free_slots = 0;
    v->n_nodes_with_free = 0;
    for (uint32_t i = 0; i < v->n_nodes; i++) {
        const struct policy_node *nd = &v->nodes[i];
        if (nd->state != POLICY_NODE_UP)
            continue;
        v->total_slots += nd->total_slots;
        v->free_slots += nd->free_slots;
        if (nd->free_slots > 0)
            with_free[v->n_nodes_with_free++] = i;
    }
    v->nodes_with_free = with_free;
}

int policy_host_size_decisions(struct policy_decisions *out, const struct cluster_view *view)
{
    uint32_t need = view->n_queued + view->n_running + 1;
    /* a preempting pass may reuse every slot it frees: size for the whole cluster */
    int64_t alloc_need = view->total_slots + view->n_queued + 1;
    if (alloc_need > UINT32_MAX / 2)
        alloc_need = UINT32_MAX / 2;
    int fits = need <= out->cap && (uint32_t)alloc_need <= out->cap_allocs && out->items && out->allocs;
    if (!fits && (buffers_grow((void **)&out->items, &out->cap, need, sizeof *out->items) != 0 ||
        buffers_grow((void **)&out->allocs, &out->cap_allocs, (uint32_t)alloc_need, sizeof *out->allocs) != 0))
        return -1;
    out->n = 0;
    out->n_allocs = 0;
    return 0;
}

/* ---- checking ---- */

/* Grows a stamp array, zeroing what is new (zero is never a live stamp). */
static int grow_stamps(uint32_t **a, uint32_t *cap, uint32_t need)
{
    uint32_t old = *cap;
    if (buffers_grow((void **)a, cap, need, sizeof **a) != 0)
        return -1;
    memset(*a + old, 0, (size_t)(*cap - old) * sizeof **a);
    return 0;
}

static int scratch(struct policy_host *h, const struct cluster_view *v)
{
    /* a pass's view almost never outgrows the last: skip the calls then */
    uint32_t nodes = v->n_nodes + 1;
    int fits = nodes <= h->cap_room && nodes <= h->cap_room_stamp && nodes <= h->cap_shape_seen &&
               v->n_queued + 1 <= h->cap_started && v->n_running + 1 <= h->cap_preempted && h->room &&
               h->room_stamp && h->shape_seen && h->started && h->preempted;
    if (!fits && (buffers_grow((void **)&h->room, &h->cap_room, v->n_nodes + 1, sizeof *h->room) != 0 ||
        grow_stamps(&h->room_stamp, &h->cap_room_stamp, v->n_nodes + 1) != 0 ||
        grow_stamps(&h->started, &h->cap_started, v->n_queued + 1) != 0 ||
        grow_stamps(&h->preempted, &h->cap_preempted, v->n_running + 1) != 0 ||
        grow_stamps(&h->shape_seen, &h->cap_shape_seen, v->n_nodes + 1) != 0))
        return -1;
    if (++h->check_stamp == 0) {
        /* wrapped: forget every old stamp once in 4 billion passes */
        memset(h->room_stamp, 0, h->cap_room_stamp * sizeof *h->room_stamp);
        memset(h->started, 0, h->cap_started * sizeof *h->started);
        memset(h->preempted, 0, h->cap_preempted * sizeof *h->preempted);
        h->check_stamp = 1;
    }
    return 0;
}

/* The slots still free on node in this pass, from the view on first use:
 * room[node] once room_stamp[node] is this pass's stamp. */
static inline int32_t *room_in(int32_t *room, uint32_t *room_stamp, uint32_t stamp, const struct cluster_view *v,
                               int32_t node)
{
    if (room_stamp[node] != stamp) {
        room_stamp[node] = stamp;
        room[node] = v->nodes[node].state == POLICY_NODE_UP ? v->nodes[node].free_slots : 0;
    }
    return &room[node];
}

static int32_t *room_of(struct policy_host *h, const struct cluster_view *v, int32_t node)
{
    return room_in(h->room, h->room_stamp, h->check_stamp, v, node);
}

/* GPU gpu of node as this pass left it: its share in use, and whether it
 * is a free GPU (not in the view's shared list, or its last share preempted
 * this pass), from the view on first use. NULL when memory ran out. A pass
 * touches few shared GPUs: a linear search. */
static struct policy_host_share *share_of(struct policy_host *h, const struct cluster_view *v, int32_t node,
                                          int32_t gpu)
{
    for (uint32_t i = 0; i < h->n_shares; i++)
        if (h->shares[i].node == node && h->shares[i].gpu == gpu)
            return &h->shares[i];
    if (buffers_grow((void **)&h->shares, &h->cap_shares, h->n_shares + 1, sizeof *h->shares) != 0)
        return NULL;
    const struct policy_node *nd = &v->nodes[node];
    struct policy_host_share s = {node, gpu, 0, 1};
    for (uint32_t k = 0; v->shared && k < nd->n_shared && nd->shared_first + k < v->n_shared; k++)
        if (v->shared[nd->shared_first + k].gpu == gpu) {
            s.used_milli = v->shared[nd->shared_first + k].used_milli;
            s.free = 0;
        }
    h->shares[h->n_shares] = s;
    return &h->shares[h->n_shares++];
}

/* The checks of one START's allocation that a job's fraction and GPU-model
 * constraint add; NULL when it keeps them. A fractional job takes its room
 * here (a free slot only when it opens a GPU), *sum its one slot. */
static const char *check_share(struct policy_host *h, const struct cluster_view *v, const struct policy_job *job,
                               const struct policy_decision *x, const struct policy_alloc *al, int64_t *sum)
{
    const struct policy_node *nd = &v->nodes[al->node];
    if (!policy_job_may_use(job, nd->type))
        return "placed on a node of a GPU model the job may not use";
    if (job->milli <= 0)
        return al->milli != 0 ? "gave a whole-GPU job a share of a GPU" : NULL;
    if (x->alloc_count != 1 || al->slots != 1 || al->milli != job->milli)
        return "a fractional job's allocation is not one GPU at its share";
    if (al->gpu < 0 || al->gpu >= nd->total_slots)
        return "a fractional job names no GPU of its node";
    struct policy_host_share *s = share_of(h, v, al->node, al->gpu);
    if (!s)
        return POLICY_HOST_CHECK_NO_MEMORY;
    if (s->free) {
        /* it opens a free GPU: a free slot of the node */
        s->free = 0;
        if (--*room_of(h, v, al->node) < 0)
            return "over-allocated a node";
    }
    s->used_milli += al->milli;
    if (s->used_milli > POLICY_MILLI_PER_GPU)
        return "over-allocated a shared GPU";
    *sum += 1;
    return NULL;
}

/* A shaped job's allocation (policy_job.nodes = n > 0): exactly n distinct
 * nodes with slots / n on each; NULL when it keeps its shape. */
static const char *check_shape(struct policy_host *h, const struct policy_job *job, const struct policy_decision *x,
                               const struct policy_alloc *allocs)
{
    if (job->nodes <= 0 || job->milli > 0)
        return NULL;
    if (x->alloc_count != (uint32_t)job->nodes)
        return "a job of n nodes did not get n nodes";
    if (++h->shape_stamp == 0) {
        memset(h->shape_seen, 0, h->cap_shape_seen * sizeof *h->shape_seen);
        h->shape_stamp = 1;
    }
    for (uint32_t a = 0; a < x->alloc_count; a++) {
        const struct policy_alloc *al = &allocs[x->alloc_first + a];
        if (al->slots != job->slots / job->nodes)
            return "a job of n nodes did not get slots / n on each";
        if (h->shape_seen[al->node] == h->shape_stamp)
            return "a job of n nodes did not get n nodes";
        h->shape_seen[al->node] = h->shape_stamp;
    }
    return NULL;
}

/* Marks index in a stamp array; returns 1 when it was marked already. */
static int mark_once(uint32_t *stamps, uint32_t index, uint32_t stamp)
{
    if (stamps[index] == stamp)
        return 1;
    stamps[index] = stamp;
    return 0;
}

const char POLICY_HOST_CHECK_NO_MEMORY[] = "could not be checked: out of memory";

const char *policy_host_check(struct policy_host *h, const struct cluster_view *v, const struct policy_decisions *d,
                              uint32_t *bad)
{
    *bad = 0;
    if (d->n > d->cap || d->n_allocs > d->cap_allocs)
        return "wrote past its decision buffer";
    if (scratch(h, v) != 0)
        return POLICY_HOST_CHECK_NO_MEMORY;
    uint32_t stamp = h->check_stamp;
    h->n_shares = 0;
    /* preemptions first: their slots are free for the starts of the pass */
    for (uint32_t k = 0; k < d->n; k++) {
        const struct policy_decision *x = &d->items[k];
        if (x->kind != POLICY_PREEMPT)
            continue;
        *bad = k;
        if (!(h->kinds & POLICY_KINDS_PREEMPT))
            return "preempted although it declared it never does";
        if (x->job_index >= v->n_running || v->running[x->job_index].job.id != x->job_id)
            return "preempted a job that is not running";
        if (mark_once(h->preempted, x->job_index, stamp))
            return "preempted a job twice";
        const struct policy_running *r = &v->running[x->job_index];
        for (uint32_t a = 0; a < r->alloc_count; a++) {
            const struct policy_alloc *al = &v->allocs[r->alloc_first + a];
            if (al->node < 0 || (uint32_t)al->node >= v->n_nodes || v->nodes[al->node].state != POLICY_NODE_UP)
                continue;
            if (al->milli > 0) {
                /* its share is free for this pass; its GPU's last share
                 * frees the GPU, as the host does */
                struct policy_host_share *s = share_of(h, v, al->node, al->gpu);
                if (!s)
                    return POLICY_HOST_CHECK_NO_MEMORY;
                s->used_milli -= al->milli;
                if (s->used_milli <= 0 && !s->free) {
                    s->free = 1;
                    *room_of(h, v, al->node) += 1;
                }
            } else {
                *room_of(h, v, al->node) += al->slots;
            }
        }
    }
    for (uint32_t k = 0; k < d->n; k++) {
        const struct policy_decision *x = &d->items[k];
        *bad = k;
        if (x->kind == POLICY_PREEMPT)
            continue;
        if (x->kind == POLICY_RESERVE) {
            if (x->job_index >= v->n_queued || v->queued[x->job_index].id != x->job_id ||
                v->queued[x->job_index].gap)
                return "reserved a job that is not waiting";
            continue;
        }
        if (x->kind != POLICY_START)
            return "unknown decision kind";
        /* the index must name a waiting job, and the id must be that job's */
        if (x->job_index >= v->n_queued || v->queued[x->job_index].id != x->job_id || v->queued[x->job_index].gap)
            return "started a job that is not waiting";
        if (mark_once(h->started, x->job_index, stamp))
            return "started a job twice";
        if (x->alloc_count == 0 || x->alloc_first > d->n_allocs || x->alloc_count > d->n_allocs - x->alloc_first)
            return "allocation out of the decision buffer";
        int64_t sum = 0;
        const struct policy_job *job = &v->queued[x->job_index];
        /* A pass checks every node of every job it starts: what the loop
         * reads stays in locals (any store through a pointer could change
         * h or v as far as the compiler knows), and a whole-GPU job that may
         * use any node skips check_share unless an allocation gives it a
         * share (the test once a job, not once a node). */
        int whole_any = job->milli <= 0 && job->type_mask == 0;
        const struct policy_alloc *allocs = &d->allocs[x->alloc_first];
        const struct policy_node *nodes = v->nodes;
        int32_t *room = h->room;
        uint32_t *room_stamp = h->room_stamp;
        for (uint32_t a = 0, n_nodes = v->n_nodes, count = x->alloc_count; a < count; a++) {
            const struct policy_alloc *al = &allocs[a];
            int32_t node = al->node, slots = al->slots;
            if (node < 0 || (uint32_t)node >= n_nodes || slots <= 0)
                return "allocation names no valid node or slot count";
            if (nodes[node].state != POLICY_NODE_UP)
                return nodes[node].state == POLICY_NODE_DRAINING ? "placed on a draining node"
                                                                 : "placed on a down node";
            if (!whole_any || al->milli != 0) {
                const char *broken = check_share(h, v, job, x, al, &sum);
                if (broken)
                    return broken;
                if (job->milli > 0)
                    continue;
            }
            int32_t *left = room_in(room, room_stamp, stamp, v, node);
            *left -= slots;
            if (*left < 0)
                return "over-allocated a node";
            sum += slots;
        }
        if (sum != v->queued[x->job_index].slots)
            return "a gang job got part of its slots";
        const char *misshaped = check_shape(h, &v->queued[x->job_index], x, d->allocs);
        if (misshaped)
            return misshaped;
    }
    return NULL;
}

/* ---- calling ---- */

static enum policy_host_status failed(struct policy_host *h, int caught, const char *where, int64_t now_us,
                                      struct err *err)
{
    h->failed = 1;
    if (caught == GUARD_TIMEOUT)
        err_set(err, NULL, 0, 0, "policy '%s' did not return from %s within %g s at t=%lld us", h->spec, where,
                h->decide_timeout_s, (long long)now_us);
    else
        err_set(err, NULL, 0, 0, "policy '%s' crashed with %s in %s at t=%lld us", h->spec, signal_words(caught),
                where, (long long)now_us);
    return POLICY_HOST_FAILED;
}

enum policy_host_status policy_host_decide(struct policy_host *h, const struct cluster_view *view,
                                           struct policy_decisions *out, struct err *err)
{
    if (h->failed > 0) {
        err_set(err, NULL, 0, 0, "policy '%s' failed earlier and is not called again", h->spec);
        return POLICY_HOST_FAILED;
    }
    struct call_args a = {.what = CALL_DECIDE, .ops = h->pl.ops, .state = h->pl.state, .view = view, .out = out};
    int caught = guard_run(h->guarded, h->decide_timeout_s, &a);
    if (caught)
        return failed(h, caught, "decide()", view->now_us, err);
    if (a.rc != 0) {
        /* the ABI's only word: its buffers too small (the host sized them) or
         * its state unusable, for the built-ins a failed allocation */
        err_set(err, NULL, 0, 0, "policy '%s' failed to decide at t=%lld us (out of memory, or its state unusable)",
                h->spec, (long long)view->now_us);
        return POLICY_HOST_FAILED;
    }
    uint32_t bad;
    const char *rule = policy_host_check(h, view, out, &bad);
    if (rule == POLICY_HOST_CHECK_NO_MEMORY) {
        err_set(err, NULL, 0, 0, "out of memory checking the decisions of policy '%s' at t=%lld us", h->spec,
                (long long)view->now_us);
        return POLICY_HOST_NO_MEMORY;
    }
    if (rule) {
        long long id = bad < out->n && out->n <= out->cap ? (long long)out->items[bad].job_id : -1;
        err_set(err, NULL, 0, 0, "policy '%s' broke the contract at t=%lld us: %s (job '%lld')", h->spec,
                (long long)view->now_us, rule, id);
        return POLICY_HOST_BROKE;
    }
    return POLICY_HOST_OK;
}

enum policy_host_status policy_host_observe(struct policy_host *h, const struct policy_event *ev, struct err *err)
{
    if (h->failed > 0 || !h->pl.ops || !h->pl.ops->observe)
        return POLICY_HOST_OK;
    if (!h->guarded) {
        /* what guard_run does for an unguarded call without a time limit,
         * minus building its arguments: a host tells every start and end */
        h->pl.ops->observe(h->pl.state, ev);
        return POLICY_HOST_OK;
    }
    struct call_args a = {.what = CALL_OBSERVE, .ops = h->pl.ops, .state = h->pl.state, .ev = ev};
    int caught = guard_run(h->guarded, 0, &a);
    if (caught)
        return failed(h, caught, "observe()", ev->now_us, err);
    return POLICY_HOST_OK;
}
