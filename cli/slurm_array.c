#include "cli/slurm_array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "sim/atomic_file.h"
#include "sim/child.h"
#include "sim/input_file.h"

/* A part or the merged file: far more than any forecast sends. */
#define SLURM_PART_MAX ((size_t)1 << 34)

enum {
    SLURM_CMD_TIMEOUT_S = 60,   /* sbatch, squeue, scancel answer within this */
    SLURM_PROBE_TIMEOUT_S = 600, /* the probe waits for a node of a busy partition */
    SLURM_POLL_MS = 250,
    SLURM_SQUEUE_EVERY = 4,     /* polls between two squeue calls */
    SLURM_GONE_POLLS = 3,       /* squeue calls without our jobs before they count as gone */
    PROBE_NO_FOLDER = 3,        /* the probe script's exit codes */
    PROBE_NO_BINARY = 4,
};

static const char task_script[] =
    "#!/bin/sh\n"
    "# fleetsim --slurm: one task of the array ($1: fleetsim, $2: the array's folder)\n"
    "exec \"$1\" _slurm-task \"$2\" \"$SLURM_ARRAY_TASK_ID\"\n";

static const char merge_script[] =
    "#!/bin/sh\n"
    "# fleetsim --slurm: once every task succeeded, their parts into one file\n"
    "exec \"$1\" _slurm-merge \"$2\" \"$3\"\n";

static const char probe_script[] =
    "#!/bin/sh\n"
    "# fleetsim --slurm: does a compute node see the work folder, and run this fleetsim?\n"
    "[ -r \"$2/probe\" ] || exit 3\n"
    "\"$1\" --version >/dev/null 2>&1 || exit 4\n"
    "exit 0\n";

/* ---- small helpers ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int write_text(const char *path, const char *text)
{
    struct atomic_file f;
    struct err err;
    err_clear(&err);
    if (atomic_file_open(&f, path, &err) != 0) {
        cli_print_err(&err);
        return -1;
    }
    fputs(text, f.fp);
    if (atomic_file_commit(&f, &err) != 0) {
        cli_print_err(&err);
        return -1;
    }
    return 0;
}

/* The first line of what a command said, for a message. */
static const char *first_line(char *text)
{
    while (*text == '\n' || *text == ' ')
        text++;
    text[strcspn(text, "\n")] = '\0';
    return *text ? text : "no message";
}

/* Runs a Slurm command; returns its exit code (-1: did not run or timed out,
 * with a message printed). */
static int slurm_cmd(char *const argv[], int timeout_s, struct child_result *cr)
{
    child_run(argv, NULL, timeout_s, 1, cr);
    if (!cr->started) {
        cli_error("cannot run '%s': %s", argv[0], strerror(errno));
        return -1;
    }
    if (cr->timed_out) {
        cli_error("'%s' did not answer within %d s (is slurmctld up?)", argv[0], timeout_s);
        return -1;
    }
    return WIFEXITED(cr->status) ? WEXITSTATUS(cr->status) : 128;
}

/* "12345" or "12345;cluster" from sbatch --parsable. */
static int parse_job_id(const char *out, unsigned long *id)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(out, &end, 10);
    if (end == out || errno || (*end && *end != ';' && *end != '\n'))
        return -1;
    *id = v;
    return 0;
}

static void cancel_jobs(unsigned long a, unsigned long b)
{
    char ids[2][32];
    snprintf(ids[0], sizeof ids[0], "%lu", a);
    snprintf(ids[1], sizeof ids[1], "%lu", b);
    char *argv[] = {"scancel", ids[0], b ? ids[1] : NULL, NULL};
    struct child_result cr;
    child_run(argv, NULL, SLURM_CMD_TIMEOUT_S, 1, &cr);
}

/* Submits one job of ours: sbatch --parsable, one task on one node, the
 * session's partition, then `opts` (NULL-terminated), then the script and
 * its arguments (NULL-terminated). Returns sbatch's exit code (-1: it did
 * not run; said), with its job id in *id when it printed one. */
static int sbatch(const struct slurm_session *ss, char *const *opts, char *const *script_args, int timeout_s,
                  unsigned long *id, struct child_result *cr)
{
    char part[300];
    char *argv[24];
    size_t n = 0;
    argv[n++] = "sbatch";
    argv[n++] = "--parsable";
    argv[n++] = "--nodes=1";
    argv[n++] = "--ntasks=1";
    if (ss->partition) {
        snprintf(part, sizeof part, "--partition=%.280s", ss->partition);
        argv[n++] = part;
    }
    for (; *opts && n < 16; opts++)
        argv[n++] = *opts;
    for (; *script_args && n < 23; script_args++)
        argv[n++] = *script_args;
    argv[n] = NULL;
    int code = slurm_cmd(argv, timeout_s, cr);
    if (parse_job_id(cr->out, id) != 0)
        *id = 0;
    return code;
}

/* ---- the session ---- */

static int session_probe(struct slurm_session *ss)
{
    char script[SLURM_PATH_MAX + 96], marker[SLURM_PATH_MAX + 96];
    snprintf(script, sizeof script, "%s/probe.sh", ss->root);
    snprintf(marker, sizeof marker, "%s/probe", ss->root);
    if (write_text(script, probe_script) != 0 || write_text(marker, "fleetsim --slurm probe\n") != 0)
        return CLI_IO;
    char *opts[] = {"--wait", "--job-name=fleetsim-probe", "--chdir=/", "--output=/dev/null", NULL};
    char *args[] = {script, ss->exe, ss->root, NULL};
    struct child_result cr;
    unsigned long id = 0;
    int code = sbatch(ss, opts, args, SLURM_PROBE_TIMEOUT_S, &id, &cr);
    int submitted = id != 0;
    if (code < 0) {
        if (submitted)
            cancel_jobs(id, 0);
        return CLI_IO;
    }
    char where[300];
    if (ss->partition)
        snprintf(where, sizeof where, "partition '%.200s'", ss->partition);
    else
        snprintf(where, sizeof where, "the default partition");
    if (!submitted) {
        cli_error("sbatch refused the probe job for %s: %s", where, first_line(cr.err));
        return CLI_IO;
    }
    if (code == PROBE_NO_FOLDER) {
        cli_error("the work folder '%s' is not visible from the compute nodes of %s (probe job %lu "
                  "found no '%s/probe'): --slurm needs a folder that this machine and the nodes share at the same "
                  "path; run from a shared file system or set FLEETSIM_SLURM_DIR to a folder on one",
                  ss->root, where, id, ss->root);
        return CLI_IO;
    }
    if (code == PROBE_NO_BINARY) {
        cli_error("'%s' does not run on the compute nodes of %s (probe job %lu: it, or a library it needs, "
                  "is missing there): install fleetsim at the same path there, or run it from a shared file system",
                  ss->exe, where, id);
        return CLI_IO;
    }
    if (code != 0) {
        cli_error("the probe job %lu on %s failed (exit %d): %s", id, where, code,
                  first_line(cr.err));
        return CLI_IO;
    }
    return CLI_OK;
}

int slurm_session_open(struct slurm_session *ss, const char *partition, int quiet)
{
    memset(ss, 0, sizeof *ss);
    ss->partition = partition;
    ss->quiet = quiet;
    static const char *const needed[] = {"sbatch", "squeue", "scancel"};
    for (size_t i = 0; i < sizeof needed / sizeof *needed; i++) {
        if (!child_in_path(needed[i])) {
            cli_error("--slurm needs Slurm's '%s', which is not on PATH (install slurm-client, or run this on a "
                      "Slurm login node)", needed[i]);
            return CLI_IO;
        }
    }
    ssize_t n = readlink("/proc/self/exe", ss->exe, sizeof ss->exe - 1);
    if (n <= 0 || !getcwd(ss->cwd, sizeof ss->cwd)) {
        cli_error("--slurm: cannot tell where fleetsim or the current folder is: %s", strerror(errno));
        return CLI_IO;
    }
    ss->exe[n] = '\0';
    const char *parent = getenv("FLEETSIM_SLURM_DIR");
    char abs_parent[SLURM_PATH_MAX];
    if (!parent || !*parent)
        snprintf(abs_parent, sizeof abs_parent, "%s", ss->cwd);
    else if ((size_t)snprintf(abs_parent, sizeof abs_parent, "%s%s%s", parent[0] == '/' ? "" : ss->cwd,
                              parent[0] == '/' ? "" : "/", parent) >= sizeof abs_parent - 32) {
        cli_error("--slurm: FLEETSIM_SLURM_DIR is too long");
        return CLI_IO;
    }
    snprintf(ss->root, sizeof ss->root, "%.*s/fleetsim-slurm.XXXXXX", SLURM_PATH_MAX - 32, abs_parent);
    if (!mkdtemp(ss->root)) {
        cli_error("--slurm: cannot create a work folder in '%s': %s", abs_parent, strerror(errno));
        ss->root[0] = '\0';
        return CLI_IO;
    }
    return session_probe(ss);
}

void slurm_session_close(struct slurm_session *ss)
{
    if (!ss->root[0])
        return;
    if (ss->keep)
        fprintf(stderr, "fleetsim: the Slurm work folder is kept for a look: %s\n", ss->root);
    else
        atomic_file_remove_tree(ss->root);
    ss->root[0] = '\0';
}

/* ---- one array ---- */

static int submit_array(struct slurm_session *ss, struct slurm_array *a, const char *label)
{
    char script[SLURM_PATH_MAX + 96], merge[SLURM_PATH_MAX + 96], name[128], array[64],
        chdir_opt[SLURM_PATH_MAX + 96], out[SLURM_PATH_MAX + 96], dep[64], count[32];
    snprintf(script, sizeof script, "%s/task.sh", a->dir);
    snprintf(merge, sizeof merge, "%s/merge.sh", a->dir);
    if (write_text(script, task_script) != 0 || write_text(merge, merge_script) != 0)
        return -1;
    snprintf(name, sizeof name, "--job-name=fleetsim-%s", label);
    snprintf(array, sizeof array, "--array=0-%u", a->n_tasks - 1);
    snprintf(chdir_opt, sizeof chdir_opt, "--chdir=%s", ss->cwd);
    snprintf(out, sizeof out, "--output=%s/log/task-%%a.out", a->dir);
    snprintf(count, sizeof count, "%u", a->n_tasks);
    char *opts[] = {name, array, chdir_opt, out, NULL};
    char *args[] = {script, ss->exe, a->dir, NULL};
    struct child_result cr;
    int code = sbatch(ss, opts, args, SLURM_CMD_TIMEOUT_S, &a->job_id, &cr);
    if (code < 0)
        return -1;
    if (code != 0 || !a->job_id) {
        cli_error("sbatch refused the job array: %s", first_line(code ? cr.err : cr.out));
        return -1;
    }
    /* the merge job runs once every task succeeded, and is cancelled by
     * Slurm when one fails (its dependency can never be met) */
    snprintf(name, sizeof name, "--job-name=fleetsim-%s-merge", label);
    snprintf(dep, sizeof dep, "--dependency=afterok:%lu", a->job_id);
    snprintf(out, sizeof out, "--output=%s/log/merge.out", a->dir);
    char *mopts[] = {name, dep, "--kill-on-invalid-dep=yes", "--chdir=/", out, NULL};
    char *margs[] = {merge, ss->exe, a->dir, count, NULL};
    code = sbatch(ss, mopts, margs, SLURM_CMD_TIMEOUT_S, &a->merge_id, &cr);
    if (code != 0 || !a->merge_id) {
        if (code >= 0)
            cli_error("sbatch refused the merge job: %s", first_line(code ? cr.err : cr.out));
        cancel_jobs(a->job_id, 0);
        return -1;
    }
    return 0;
}

static uint32_t count_parts(const struct slurm_array *a)
{
    char path[SLURM_PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/part", a->dir);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    uint32_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && !strstr(e->d_name, ".tmp."))
            n++;
    closedir(d);
    return n;
}

/* The states in which a job ended without doing its work. */
static const char failed_states[] = "FAILED,CANCELLED,TIMEOUT,NODE_FAIL,OUT_OF_MEMORY,BOOT_FAIL,DEADLINE,PREEMPTED";

/* What squeue says of our jobs. */
struct array_state {
    int merge_listed;  /* squeue still knows the merge job */
    int failed_task;   /* the first task in a failed state, or -1 */
    char failed_how[32];
    int merge_failed;
};

/* "ID STATE" lines of squeue for jobs (and states) into buf; 0 or -1. The
 * failed ones are asked for by name: the list of every task of a large
 * array would not fit in what a child's output keeps. */
static int squeue_lines(const char *jobs, const char *states, struct child_result *cr)
{
    char *argv[] = {"squeue", "--noheader", "--states", (char *)states, "--jobs", (char *)jobs, "--format=%i %T", NULL};
    child_run(argv, NULL, SLURM_CMD_TIMEOUT_S, 1, cr);
    return cr->started && !cr->timed_out && WIFEXITED(cr->status) && WEXITSTATUS(cr->status) == 0 ? 0 : -1;
}

static int poll_squeue(const struct slurm_array *a, struct array_state *st)
{
    char ids[64];
    struct child_result cr;
    memset(st, 0, sizeof *st);
    st->failed_task = -1;
    snprintf(ids, sizeof ids, "%lu", a->merge_id);
    if (squeue_lines(ids, "all", &cr) != 0)
        return -1;
    char state[32];
    if (sscanf(cr.out, "%*s %31s", state) == 1) {
        st->merge_listed = 1;
        st->merge_failed = strstr(failed_states, state) != NULL;
    }
    snprintf(ids, sizeof ids, "%lu", a->job_id);
    if (squeue_lines(ids, failed_states, &cr) != 0)
        return -1;
    for (char *line = strtok(cr.out, "\n"); line; line = strtok(NULL, "\n")) {
        char id[64];
        const char *us;
        if (sscanf(line, "%63s %31s", id, state) == 2 && (us = strchr(id, '_')) && us[1] != '[') {
            st->failed_task = atoi(us + 1);
            snprintf(st->failed_how, sizeof st->failed_how, "%s", state);
            break;
        }
    }
    return 0;
}

static void show_progress(int quiet, const struct slurm_array *a, const char *label, const char *noun,
                          uint32_t done, double t0, int end)
{
    if (quiet || !isatty(STDERR_FILENO))
        return;
    int width = 30, fill = a->n_tasks ? (int)(width * done / a->n_tasks) : width;
    fprintf(stderr, "\r%s [%.*s%*s] %u/%u %s on Slurm (job %lu), %.0f s ", label, fill,
            "##############################", width - fill, "", done, a->n_tasks, noun, a->job_id, now_s() - t0);
    if (end)
        fputc('\n', stderr);
}

/* The end of task i's log, for a task that died without a message. */
static void print_log_tail(const struct slurm_array *a, int i, const char *how)
{
    char path[SLURM_PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/log/task-%d.out", a->dir, i);
    char *data = NULL;
    size_t len = 0;
    struct err err;
    err_clear(&err);
    if (input_file_read(path, "log", 1 << 20, &data, &len, &err) != 0 || !len) {
        cli_error("Slurm task %lu_%d %s without a result (no log at '%s')", a->job_id, i, how, path);
        free(data);
        return;
    }
    while (len && data[len - 1] == '\n')
        data[--len] = '\0';
    const char *last = strrchr(data, '\n');
    cli_error("Slurm task %lu_%d %s without a result; its log '%s' ends: %s", a->job_id, i, how, path,
              last ? last + 1 : data);
    free(data);
}

static int load_merged(struct slurm_array *a)
{
    char path[SLURM_PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/merged", a->dir);
    size_t len = 0;
    struct err err;
    err_clear(&err);
    if (input_file_read(path, "merged result", SLURM_PART_MAX, &a->merged, &len, &err) != 0) {
        cli_print_err(&err);
        return -1;
    }
    a->offsets = calloc(2 * (size_t)a->n_tasks + 1, sizeof *a->offsets);
    if (!a->offsets)
        return -1;
    char head[64];
    int at = snprintf(head, sizeof head, "fleetsim-merged 1 %u\n", a->n_tasks);
    if (len < (size_t)at || memcmp(a->merged, head, (size_t)at) != 0)
        goto bad;
    size_t pos = (size_t)at;
    for (uint32_t i = 0; i < a->n_tasks; i++) {
        char *end;
        unsigned long long n = strtoull(a->merged + pos, &end, 10);
        if (end == a->merged + pos || *end != '\n' || n > len - (size_t)(end + 1 - a->merged))
            goto bad;
        a->offsets[2 * i] = (size_t)(end + 1 - a->merged);
        pos = a->offsets[2 * i] + n;
        a->offsets[2 * i + 1] = pos;
    }
    if (pos != len)
        goto bad;
    return 0;
bad:
    cli_error("'%s' is not a merged result of %u tasks", path, a->n_tasks);
    free(a->merged);
    free(a->offsets);
    a->merged = NULL;
    a->offsets = NULL;
    return -1;
}

int slurm_array_submit(struct slurm_session *ss, struct slurm_array *a, const char *spec, uint32_t n_tasks,
                       const char *label, const char *noun, int quiet)
{
    memset(a, 0, sizeof *a);
    a->n_tasks = n_tasks;
    snprintf(a->label, sizeof a->label, "%s", label);
    a->noun = noun;
    a->quiet = quiet;
    char path[SLURM_PATH_MAX + 96];
    snprintf(a->dir, sizeof a->dir, "%s/array-%u", ss->root, ++ss->arrays);
    if (mkdir(a->dir, 0777) != 0) {
        cli_error("cannot create '%s': %s", a->dir, strerror(errno));
        return -1;
    }
    static const char *const subs[] = {"part", "log"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", a->dir, subs[i]);
        if (mkdir(path, 0777) != 0) {
            cli_error("cannot create '%s': %s", path, strerror(errno));
            return -1;
        }
    }
    /* the input limits this command runs with (fleetsim --max-input-mb)
     * hold in the tasks too, so that they read what it would */
    size_t len = strlen(spec);
    char *text = malloc(len + 96);
    if (!text) {
        cli_error("out of memory");
        return -1;
    }
    snprintf(text, len + 96, "%sinput_limits %llu %llu\n", spec, (unsigned long long)input_file_trace_max_bytes(),
             (unsigned long long)input_file_small_max_bytes());
    snprintf(path, sizeof path, "%s/spec", a->dir);
    int bad = write_text(path, text) != 0 || submit_array(ss, a, label) != 0;
    free(text);
    if (bad)
        return -1;
    if (!quiet && !isatty(STDERR_FILENO))
        fprintf(stderr, "%s: %u %s submitted as Slurm job array %lu and merge job %lu (%s%s%s)\n", label, n_tasks,
                noun, a->job_id, a->merge_id, ss->partition ? "partition '" : "the default partition",
                ss->partition ? ss->partition : "", ss->partition ? "'" : "");
    return 0;
}

void slurm_array_cancel(struct slurm_array *a)
{
    if (a->job_id)
        cancel_jobs(a->job_id, a->merge_id);
}

int slurm_array_wait(struct slurm_session *ss, struct slurm_array *a, volatile sig_atomic_t *stop)
{
    const char *label = a->label, *noun = a->noun;
    int quiet = a->quiet;
    char path[SLURM_PATH_MAX + 96];
    double t0 = now_s();
    int rc = 0, gone = 0, squeue_errors = 0;
    snprintf(path, sizeof path, "%s/merged", a->dir);
    for (unsigned poll = 0;; poll++) {
        if (stop && *stop) {
            cancel_jobs(a->job_id, a->merge_id);
            rc = 1;
            break;
        }
        if (access(path, R_OK) == 0)
            break;
        show_progress(quiet, a, label, noun, count_parts(a), t0, 0);
        if (poll % SLURM_SQUEUE_EVERY == SLURM_SQUEUE_EVERY - 1) {
            struct array_state st;
            if (poll_squeue(a, &st) != 0) {
                if (++squeue_errors * SLURM_SQUEUE_EVERY * SLURM_POLL_MS >= SLURM_CMD_TIMEOUT_S * 1000) {
                    cli_error("squeue has failed for %d s: cannot follow Slurm jobs %lu and %lu",
                              SLURM_CMD_TIMEOUT_S, a->job_id, a->merge_id);
                    rc = -1;
                    break;
                }
            } else if (access(path, R_OK) == 0) {
                break; /* merged while squeue ran */
            } else if (st.failed_task >= 0 || st.merge_failed) {
                cancel_jobs(a->job_id, a->merge_id);
                if (st.failed_task >= 0) {
                    char part[SLURM_PATH_MAX + 96];
                    snprintf(part, sizeof part, "%s/part/%d", a->dir, st.failed_task);
                    if (access(part, R_OK) != 0) /* a task with a message: the caller prints it */
                        print_log_tail(a, st.failed_task, st.failed_how);
                } else {
                    cli_error("the merge job %lu of Slurm job array %lu failed (see '%s/log/merge.out')",
                              a->merge_id, a->job_id, a->dir);
                }
                rc = -1;
                break;
            } else if (!st.merge_listed && ++gone >= SLURM_GONE_POLLS) {
                cli_error("Slurm jobs %lu and %lu are gone from squeue without a result in '%s'", a->job_id,
                          a->merge_id, a->dir);
                rc = -1;
                break;
            } else if (st.merge_listed) {
                gone = 0;
                squeue_errors = 0;
            }
        }
        nap_ms(SLURM_POLL_MS);
    }
    show_progress(quiet, a, label, noun, rc == 0 ? a->n_tasks : count_parts(a), t0, 1);
    if (rc == 0 && load_merged(a) != 0)
        rc = -1;
    if (rc < 0)
        ss->keep = 1; /* for a look at the logs */
    return rc;
}

int slurm_array_run(struct slurm_session *ss, struct slurm_array *a, const char *spec, uint32_t n_tasks,
                    const char *label, const char *noun, int quiet, volatile sig_atomic_t *stop)
{
    if (slurm_array_submit(ss, a, spec, n_tasks, label, noun, quiet) != 0)
        return -1;
    return slurm_array_wait(ss, a, stop);
}

int slurm_array_part(const struct slurm_array *a, uint32_t i, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (i >= a->n_tasks)
        return -1;
    if (a->merged) {
        size_t n = a->offsets[2 * i + 1] - a->offsets[2 * i];
        char *copy = malloc(n + 1);
        if (!copy)
            return -1;
        memcpy(copy, a->merged + a->offsets[2 * i], n);
        *data = copy;
        *len = n;
        return 0;
    }
    char path[SLURM_PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/part/%u", a->dir, i);
    if (access(path, R_OK) != 0)
        return -1;
    struct err err;
    err_clear(&err);
    return input_file_read(path, "part", SLURM_PART_MAX, data, len, &err);
}

void slurm_array_release(struct slurm_array *a)
{
    free(a->merged);
    free(a->offsets);
    a->merged = NULL;
    a->offsets = NULL;
}

/* ---- the hidden commands, on a compute node ---- */

static int read_spec(const char *dir, char **spec)
{
    char path[SLURM_PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/spec", dir);
    size_t len;
    struct err err;
    err_clear(&err);
    if (input_file_read(path, "spec", 1 << 24, spec, &len, &err) != 0) {
        cli_print_err(&err);
        return -1;
    }
    return 0;
}

int slurm_array_task(const char *dir, uint32_t index, slurm_task_fn fn)
{
    char *spec = NULL;
    if (read_spec(dir, &spec) != 0)
        return CLI_IO;
    char limits[64];
    unsigned long long trace_max, small_max;
    if (slurm_spec_get(spec, "input_limits", limits, sizeof limits) == 0 &&
        sscanf(limits, "%llu %llu", &trace_max, &small_max) == 2) {
        input_file_set_trace_max(trace_max);
        input_file_set_small_max(small_max);
    }
    char path[SLURM_PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/part/%u", dir, index);
    struct atomic_file f;
    struct err err;
    err_clear(&err);
    if (atomic_file_open(&f, path, &err) != 0) {
        cli_print_err(&err);
        free(spec);
        return CLI_IO;
    }
    fflush(f.fp);
    int status = fn(spec, index, fileno(f.fp));
    free(spec);
    /* a failed task's message goes in place too: the command shows it */
    if (atomic_file_commit(&f, &err) != 0) {
        return cli_fail(&err, CLI_IO);
    }
    return status;
}

int slurm_array_merge(const char *dir, uint32_t count)
{
    char path[SLURM_PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/merged", dir);
    struct atomic_file f;
    struct err err;
    err_clear(&err);
    if (atomic_file_open(&f, path, &err) != 0) {
        return cli_fail(&err, CLI_IO);
    }
    fprintf(f.fp, "fleetsim-merged 1 %u\n", count);
    for (uint32_t i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/part/%u", dir, i);
        char *data = NULL;
        size_t len = 0;
        if (input_file_read(path, "part", SLURM_PART_MAX, &data, &len, &err) != 0 || !len || data[0] != 'D') {
            if (data && len && data[0] == 'E')
                cli_error("task %u failed: %.*s", i, (int)(len - 1), data + 1);
            else
                cli_error("task %u left no result in '%s'", i, path);
            free(data);
            atomic_file_abort(&f);
            return CLI_INTERNAL;
        }
        fprintf(f.fp, "%zu\n", len);
        fwrite(data, 1, len, f.fp);
        free(data);
    }
    if (atomic_file_commit(&f, &err) != 0) {
        return cli_fail(&err, CLI_IO);
    }
    return CLI_OK;
}

int slurm_spec_get(const char *spec, const char *key, char *buf, size_t len)
{
    size_t k = strlen(key);
    for (const char *line = spec; *line;) {
        size_t n = strcspn(line, "\n");
        if (n > k && !strncmp(line, key, k) && line[k] == ' ') {
            snprintf(buf, len, "%.*s", (int)(n - k - 1), line + k + 1);
            return 0;
        }
        line += n;
        if (*line)
            line++;
    }
    return -1;
}
