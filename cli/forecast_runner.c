#include "cli/forecast_runner.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/forecast_task.h"
#include "cli/slurm_array.h"
#include "sim/buffers.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

int forecast_runner_interrupted(void)
{
    return interrupted != 0;
}

/* ---- results over a pipe: a flat array of doubles ---- */

struct dbuf {
    double *v;
    size_t n, cap;
};

static int dbuf_put(struct dbuf *b, double x)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        double *v = realloc(b->v, cap * sizeof *v);
        if (!v)
            return -1;
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = x;
    return 0;
}

static int encode(const struct forecast_result *shape, const struct forecast_replication *rep, struct dbuf *b)
{
    int rc = 0;
    for (uint32_t p = 0; p < shape->n_periods; p++) {
        for (int m = 0; m < FM_COUNT; m++)
            rc |= dbuf_put(b, forecast_period_metric(&rep->periods[p], (enum forecast_metric)m));
        for (size_t t = 0; t < shape->n_teams; t++)
            rc |= dbuf_put(b, rep->periods[p].team_gpu_hours[t]);
        for (size_t t = 0; t < shape->n_teams; t++) {
            const struct forecast_wait *w = &rep->periods[p].team_wait[t];
            rc |= dbuf_put(b, w->p50_s) | dbuf_put(b, w->p95_s) | dbuf_put(b, w->p99_s) | dbuf_put(b, w->mean_s) |
                  dbuf_put(b, w->jobs);
        }
    }
    for (uint32_t k = 0; k < shape->n_samples; k++) {
        const struct forecast_sample *s = &rep->samples[k];
        rc |= dbuf_put(b, s->capacity_gpus) | dbuf_put(b, s->in_use_gpus) | dbuf_put(b, s->backlog_gpus) |
              dbuf_put(b, s->queue_jobs) | dbuf_put(b, s->offered_gpus);
    }
    for (size_t t = 0; t < shape->n_teams; t++)
        rc |= dbuf_put(b, (double)rep->team_n_waits[t]);
    for (size_t t = 0; t < shape->n_teams; t++)
        for (size_t i = 0; i < rep->team_n_waits[t]; i++)
            rc |= dbuf_put(b, rep->team_waits_s[rep->team_offset[t] + i]);
    return rc ? -1 : 0;
}

enum { DECODE_BAD = -1, DECODE_NO_MEMORY = -2 };

/* Returns 0, DECODE_BAD (the numbers are not a replication of shape) or
 * DECODE_NO_MEMORY. */
static int decode(const struct forecast_result *shape, const double *v, size_t n, struct forecast_replication *rep)
{
    size_t at = 0, need = (size_t)shape->n_periods * (FM_COUNT + 6 * shape->n_teams) +
                          (size_t)shape->n_samples * FORECAST_SAMPLE_FIELDS + shape->n_teams;
    if (n < need)
        return DECODE_BAD;
    memset(rep, 0, sizeof *rep);
    rep->periods = calloc(shape->n_periods, sizeof *rep->periods);
    rep->samples = calloc(shape->n_samples + 1, sizeof *rep->samples);
    rep->team_n_waits = calloc(shape->n_teams, sizeof *rep->team_n_waits);
    rep->team_offset = calloc(shape->n_teams + 1, sizeof *rep->team_offset);
    if (!rep->periods || !rep->samples || !rep->team_n_waits || !rep->team_offset)
        return DECODE_NO_MEMORY;
    for (uint32_t p = 0; p < shape->n_periods; p++) {
        struct forecast_period *fp = &rep->periods[p];
        for (int k = 0; k < FM_COUNT; k++)
            *forecast_period_field(fp, (enum forecast_metric)k) = v[at++];
        fp->team_gpu_hours = calloc(shape->n_teams, sizeof *fp->team_gpu_hours);
        if (!fp->team_gpu_hours)
            return DECODE_NO_MEMORY;
        for (size_t t = 0; t < shape->n_teams; t++)
            fp->team_gpu_hours[t] = v[at++];
        fp->team_wait = calloc(shape->n_teams, sizeof *fp->team_wait);
        if (!fp->team_wait)
            return DECODE_NO_MEMORY;
        for (size_t t = 0; t < shape->n_teams; t++) {
            fp->team_wait[t] = (struct forecast_wait){v[at], v[at + 1], v[at + 2], v[at + 3], v[at + 4]};
            at += 5;
        }
    }
    for (uint32_t k = 0; k < shape->n_samples; k++) {
        rep->samples[k] = (struct forecast_sample){v[at], v[at + 1], v[at + 2], v[at + 3], v[at + 4]};
        at += FORECAST_SAMPLE_FIELDS;
    }
    size_t total = 0;
    for (size_t t = 0; t < shape->n_teams; t++) {
        rep->team_n_waits[t] = (size_t)v[at++];
        rep->team_offset[t] = total;
        total += rep->team_n_waits[t];
    }
    rep->team_offset[shape->n_teams] = total;
    if (n - at != total)
        return DECODE_BAD;
    rep->team_waits_s = malloc((total + 1) * sizeof *rep->team_waits_s);
    if (!rep->team_waits_s)
        return DECODE_NO_MEMORY;
    memcpy(rep->team_waits_s, v + at, total * sizeof *v);
    return 0;
}

/* One replication's message, whoever carries it (a worker's pipe for -j, a
 * part file for --slurm): 'D' and its numbers, or 'E' and what went wrong
 * (with the file it is about: a base trace that is not one names itself).
 * Returns the worker's exit status. */
static int work(const struct scenario *s, uint32_t r, const char *policy, const struct forecast_result *shape, int fd)
{
    struct forecast_replication rep;
    struct err err;
    err_clear(&err);
    struct dbuf b = {0};
    int status = 0;
    if (forecast_run_replication(s, r, policy, &rep, &err) != 0) {
        if (err.file[0] && err.line > 0 && err.col > 0)
            dprintf(fd, "E%s:%ld:%ld: %s", err.file, err.line, err.col, err.msg);
        else if (err.file[0] && err.line > 0)
            dprintf(fd, "E%s:%ld: %s", err.file, err.line, err.msg);
        else if (err.file[0] && !strstr(err.msg, err.file))
            dprintf(fd, "E%s: %s", err.file, err.msg);
        else
            dprintf(fd, "E%s", err.msg);
        return 4;
    }
    if (encode(shape, &rep, &b) != 0) {
        status = 4;
    } else {
        dprintf(fd, "D");
        if (buffers_write_all(fd, b.v, b.n * sizeof *b.v) != 0)
            status = 3;
    }
    forecast_replication_release(&rep, shape->n_periods);
    free(b.v);
    return status;
}

enum { COLLECT_OK = 0, COLLECT_SAID = -1, COLLECT_BAD = -2 };

/* Puts replication `slot`'s message into r. A worker's error is printed
 * (COLLECT_SAID), and so is memory running out here; a message that is
 * neither is COLLECT_BAD, for the caller to word. The one way a result
 * comes back, from a pipe or from Slurm. */
static int collect(struct forecast_result *r, uint32_t slot, const char *msg, size_t len, int say)
{
    if (len > 1 && msg[0] == 'E') {
        if (say)
            cli_error("replication %u: %.*s", slot, (int)(len - 1), msg + 1);
        return COLLECT_SAID;
    }
    if (!len || msg[0] != 'D' || (len - 1) % sizeof(double) != 0)
        return COLLECT_BAD;
    size_t nd = (len - 1) / sizeof(double);
    double *v = malloc((nd + 1) * sizeof *v); /* aligned for the doubles */
    int rc = DECODE_NO_MEMORY;
    if (v) {
        memcpy(v, msg + 1, nd * sizeof *v);
        rc = decode(r, v, nd, &r->reps[slot]);
        free(v);
        if (rc != 0)
            forecast_replication_release(&r->reps[slot], r->n_periods);
    }
    if (rc == DECODE_NO_MEMORY) {
        if (say)
            cli_error("replication %u: out of memory collecting its result", slot);
        return COLLECT_SAID;
    }
    return rc == 0 ? COLLECT_OK : COLLECT_BAD;
}

struct worker {
    pid_t pid;
    int fd;
    uint32_t rep;
    char *buf;
    size_t len, cap;
    int no_memory; /* its message could not be held whole */
};

static int worker_read(struct worker *w)
{
    if (w->len == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 65536;
        char *buf = realloc(w->buf, cap);
        if (!buf) {
            w->no_memory = 1;
            return -1;
        }
        w->buf = buf;
        w->cap = cap;
    }
    ssize_t k = read(w->fd, w->buf + w->len, w->cap - w->len);
    if (k < 0)
        return errno == EINTR ? 1 : -1;
    w->len += (size_t)k;
    return k == 0 ? 0 : 1; /* 0: the child closed its end */
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(const struct forecast_run_options *o, uint32_t done, uint32_t total, double t0, int *last_decile)
{
    if (o->quiet)
        return;
    double el = now_s() - t0;
    double eta = done ? el / done * (total - done) : 0;
    if (isatty(STDERR_FILENO)) {
        int width = 30, fill = total ? (int)(width * done / total) : width;
        fprintf(stderr, "\r%s [%.*s%*s] %u/%u replications, %.0f s elapsed, ETA %.0f s ", o->label, fill,
                "##############################", width - fill, "", done, total, el, eta);
        if (done == total)
            fputc('\n', stderr);
    } else {
        int decile = total ? (int)(10 * done / total) : 10;
        if (decile != *last_decile) {
            fprintf(stderr, "%s: %u/%u replications, %.0f s elapsed\n", o->label, done, total, el);
            *last_decile = decile;
        }
    }
}

/* Runs the replications in local worker processes, marking ok[] those
 * collected. Returns 1 when one failed (its message printed), else 0. */
static int run_local(const struct scenario *s, const struct forecast_run_options *o, struct forecast_result *r,
                     int *ok)
{
    int jobs = o->jobs > 0 ? o->jobs : 1;
    struct worker *ws = calloc((size_t)jobs, sizeof *ws);
    struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
    if (!ws || !pf) {
        cli_error("out of memory");
        free(ws);
        free(pf);
        return 1;
    }
    uint32_t next = 0, done = 0;
    int running = 0, failed = 0, last_decile = -1;
    double t0 = now_s();
    progress(o, 0, o->replications, t0, &last_decile);
    while ((next < o->replications && !interrupted && !failed) || running) {
        /* launch while there is room */
        for (int k = 0; k < jobs && next < o->replications && !interrupted && !failed; k++) {
            if (ws[k].pid)
                continue;
            int fds[2];
            if (pipe(fds) != 0) {
                cli_error("cannot create a pipe: %s", strerror(errno));
                failed = 1;
                break;
            }
            pid_t pid = fork();
            if (pid < 0) {
                cli_error("cannot start a worker: %s", strerror(errno));
                close(fds[0]);
                close(fds[1]);
                failed = 1;
                break;
            }
            if (pid == 0) {
                close(fds[0]);
                signal(SIGINT, SIG_DFL);
                int status = work(s, o->first_replication + next, o->policy, r, fds[1]);
                close(fds[1]);
                _exit(status);
            }
            close(fds[1]);
            ws[k] = (struct worker){pid, fds[0], next++, NULL, 0, 0, 0};
            running++;
        }
        int n = 0;
        for (int k = 0; k < jobs; k++)
            if (ws[k].pid)
                pf[n++] = (struct pollfd){ws[k].fd, POLLIN, 0};
        if (!n)
            continue;
        if (interrupted) {
            for (int k = 0; k < jobs; k++)
                if (ws[k].pid)
                    kill(ws[k].pid, SIGTERM);
        }
        if (poll(pf, (nfds_t)n, 200) < 0 && errno != EINTR)
            break;
        for (int k = 0; k < jobs; k++) {
            struct worker *w = &ws[k];
            if (!w->pid)
                continue;
            int more = worker_read(w);
            if (more > 0 && !interrupted)
                continue;
            if (more > 0) /* interrupted: drain what is there, then reap */
                while (worker_read(w) > 0)
                    ;
            close(w->fd);
            int status = 0;
            waitpid(w->pid, &status, 0);
            running--;
            int got = COLLECT_SAID;
            if (!w->no_memory)
                got = collect(r, w->rep, w->buf, w->len, !interrupted);
            else if (!interrupted)
                cli_error("replication %u: out of memory reading its result", w->rep);
            if (got == COLLECT_OK && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                ok[w->rep] = 1;
                done++;
                progress(o, done, o->replications, t0, &last_decile);
            } else {
                if (got == COLLECT_OK)
                    forecast_replication_release(&r->reps[w->rep], r->n_periods);
                if (!interrupted && got != COLLECT_SAID) {
                    /* the worker could not say why itself (no memory for its message, say) */
                    if (WIFSIGNALED(status))
                        cli_error("replication %u failed: its worker was killed by signal %d (%s)", w->rep,
                                  WTERMSIG(status), strsignal(WTERMSIG(status)));
                    else
                        cli_error("replication %u failed: its worker exited with status %d%s", w->rep,
                                  WEXITSTATUS(status),
                                  WEXITSTATUS(status) == CLI_INTERNAL ? " (internal error or out of memory)" : "");
                }
                failed |= !interrupted;
            }
            free(w->buf);
            *w = (struct worker){0};
        }
    }
    free(ws);
    free(pf);
    return failed;
}

int forecast_runner_submit(const struct scenario *s, const struct forecast_run_options *o, struct slurm_array *a)
{
    memset(a, 0, sizeof *a);
    char *spec = NULL;
    size_t spec_len = 0;
    FILE *mem = open_memstream(&spec, &spec_len);
    if (!mem) {
        cli_error("out of memory");
        return -1;
    }
    int bad_spec = forecast_task_write(mem, s, o->policy, o->first_replication);
    fclose(mem);
    if (bad_spec) {
        cli_error("--slurm: the scenario path or the policy holds a line break; cannot describe it to a task");
        free(spec);
        return -1;
    }
    int rc = slurm_array_submit(o->slurm, a, spec, o->replications, o->label, "replications", o->quiet);
    free(spec);
    return rc;
}

/* Waits for the replications' job array (submitted here, or before by
 * forecast_runner_submit) and collects the parts, as run_local collects
 * pipes. Returns 1 when Slurm or a task failed. */
static int run_slurm(const struct scenario *s, const struct forecast_run_options *o, struct forecast_result *r,
                     int *ok)
{
    struct slurm_array own, *a = o->submitted;
    if (!a) {
        if (forecast_runner_submit(s, o, &own) != 0)
            return 1;
        a = &own;
    }
    int rc = slurm_array_wait(o->slurm, a, &interrupted);
    int failed = rc < 0;
    for (uint32_t i = 0; i < o->replications; i++) {
        char *msg;
        size_t len;
        if (slurm_array_part(a, i, &msg, &len) != 0)
            continue; /* not finished (interrupted, or Slurm failed: said) */
        int got = collect(r, i, msg, len, 1);
        free(msg);
        if (got == COLLECT_OK) {
            ok[i] = 1;
        } else {
            if (got == COLLECT_BAD)
                cli_error("replication %u: its result from Slurm is damaged", i);
            failed = 1;
        }
    }
    if (failed)
        o->slurm->keep = 1;
    slurm_array_release(a);
    return failed;
}

int forecast_runner_run(const struct scenario *s, const struct forecast_run_options *o, struct forecast_result *r)
{
    struct err err;
    err_clear(&err);
    if (forecast_result_init(r, s, o->replications, &err) != 0) {
        cli_print_err(&err);
        return -1;
    }
    int *ok = calloc(o->replications + 1, sizeof *ok);
    if (!ok) {
        cli_error("out of memory");
        return -1;
    }
    struct sigaction sa, old_int;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    interrupted = 0;
    fflush(stdout);
    fflush(stderr);
    int failed = o->slurm ? run_slurm(s, o, r, ok) : run_local(s, o, r, ok);
    sigaction(SIGINT, &old_int, NULL);
    /* keep the completed replications, in index order */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < o->replications; i++) {
        if (!ok[i])
            continue;
        if (kept != i) {
            r->reps[kept] = r->reps[i];
            memset(&r->reps[i], 0, sizeof r->reps[i]);
        }
        kept++;
    }
    r->completed = kept;
    free(ok);
    if (failed)
        return -1;
    if (interrupted || kept < o->replications) {
        r->partial = 1;
        if (!o->quiet)
            fprintf(stderr, "\n%s: interrupted: %u of %u replications finished; results are partial\n", o->label,
                    kept, o->replications);
        return 1;
    }
    return 0;
}

int forecast_runner_task(const char *spec, uint32_t index, int fd)
{
    struct scenario s;
    scenario_init(&s);
    char policy[FORECAST_TASK_POLICY_MAX], msg[1200];
    uint32_t first = 0;
    int status = 0;
    if (forecast_task_read(spec, &s, policy, sizeof policy, &first, msg, sizeof msg) != 0) {
        dprintf(fd, "E%s", msg);
        status = CLI_USAGE;
    } else {
        struct forecast_result shape;
        struct err err;
        err_clear(&err);
        if (forecast_result_init(&shape, &s, 1, &err) != 0) {
            dprintf(fd, "E%s", err.msg);
            status = CLI_USAGE;
        } else {
            status = work(&s, first + index, policy[0] ? policy : NULL, &shape, fd);
            forecast_result_release(&shape);
        }
    }
    scenario_release(&s);
    return status;
}
