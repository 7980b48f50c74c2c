/* slurm_array: `--slurm` for forecast, compare, plan and bench. The work a
 * command would give its local worker processes (replications, bench cells)
 * goes to a Slurm cluster as one job array plus a merge job that depends on
 * it (afterok), and comes back as the very messages a local worker sends
 * through its pipe, so the command combines them with the same code as a
 * local -j run and prints the same bytes.
 *
 * A session (one per command run) owns a work folder, made in the current
 * directory or in $FLEETSIM_SLURM_DIR, that the compute nodes must see at
 * the same path, and runs this fleetsim binary there by its absolute path.
 * Opening it checks that sbatch, squeue and scancel are on PATH and runs a
 * probe job that looks for the folder and the binary from a compute node,
 * so an unshared folder is named before any work is submitted. It is
 * removed when the session closes, unless something failed (kept to look
 * at, and said so).
 *
 * Each array gets a subfolder: `spec` (what the caller wrote, plus the
 * command's input limits, which the tasks apply too: the hidden command
 * reads it), `part/N` (task N's message, written atomically by
 * `fleetsim _slurm-task DIR N`: 'D' and data, or 'E' and an error),
 * `merged` (every part in task order, written by the merge job
 * `fleetsim _slurm-merge DIR COUNT` once every task succeeded) and `log/`.
 * Slurm commands run by fork/exec of an argv, never through a shell; paths
 * reach the batch scripts as arguments, never pasted into script text.
 */
#ifndef FLEETSIM_CLI_SLURM_ARRAY_H
#define FLEETSIM_CLI_SLURM_ARRAY_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

enum { SLURM_PATH_MAX = 4096 };

struct slurm_session {
    char root[SLURM_PATH_MAX]; /* the work folder (absolute) */
    char exe[SLURM_PATH_MAX];  /* this fleetsim, as the nodes run it */
    char cwd[SLURM_PATH_MAX];  /* tasks run here, as the command does */
    const char *partition;     /* NULL: the cluster's default partition */
    int quiet;
    unsigned arrays;           /* arrays submitted so far */
    int keep;                  /* something failed: leave the folder */
};

/* Checks the Slurm commands, makes the work folder and runs the probe job.
 * Returns CLI_OK, or CLI_IO with the reason printed (no sbatch on PATH,
 * the folder or the binary not visible from a compute node, Slurm
 * refusing the job). Close it either way. */
int slurm_session_open(struct slurm_session *ss, const char *partition, int quiet);
void slurm_session_close(struct slurm_session *ss);

struct slurm_array {
    char dir[SLURM_PATH_MAX + 32];
    uint32_t n_tasks;
    char label[160];   /* for progress */
    const char *noun;  /* "replications", "cells" (static) */
    int quiet;
    unsigned long job_id, merge_id;
    char *merged;      /* the merged file, when every task succeeded */
    size_t *offsets;   /* task i's message: merged[offsets[2i] .. offsets[2i + 1]) */
};

/* Submits n_tasks tasks that run `fleetsim _slurm-task` on spec (the
 * caller's text, starting "kind NAME\n") and the merge job, and waits,
 * showing progress on stderr ("LABEL [###   ] 3/20 NOUN on Slurm"): a bar
 * when stderr is a terminal, one line at submission otherwise, nothing
 * when quiet. Returns 0
 * (every task succeeded and the parts are merged), 1 (*stop was set: the
 * jobs are cancelled, the parts that finished can be read), or -1 (Slurm
 * refused the jobs or a task failed: the jobs are cancelled, what Slurm
 * said printed, the parts that exist can be read). Release a either way. */
int slurm_array_run(struct slurm_session *ss, struct slurm_array *a, const char *spec, uint32_t n_tasks,
                    const char *label, const char *noun, int quiet, volatile sig_atomic_t *stop);
/* slurm_array_run in two steps, so that several arrays can be in the
 * queue at once (compare's variants): submit returns 0 or -1 (said);
 * wait returns as run does. cancel: scancel the array and its merge job. */
int slurm_array_submit(struct slurm_session *ss, struct slurm_array *a, const char *spec, uint32_t n_tasks,
                       const char *label, const char *noun, int quiet);
int slurm_array_wait(struct slurm_session *ss, struct slurm_array *a, volatile sig_atomic_t *stop);
void slurm_array_cancel(struct slurm_array *a);
/* Task i's message (malloc'd, *len bytes; free it): from the merged file,
 * or else from its part file. Returns 0, or -1 when there is none. */
int slurm_array_part(const struct slurm_array *a, uint32_t i, char **data, size_t *len);
void slurm_array_release(struct slurm_array *a);

/* What one task runs: writes task `index`'s message for `spec` to fd and
 * returns its exit status (0 when the message is 'D'). */
typedef int (*slurm_task_fn)(const char *spec, uint32_t index, int fd);
/* `fleetsim _slurm-task DIR INDEX`: runs fn on DIR's spec and puts the
 * message in DIR/part/INDEX atomically. Returns the exit status. */
int slurm_array_task(const char *dir, uint32_t index, slurm_task_fn fn);
/* `fleetsim _slurm-merge DIR COUNT`: checks every part is there and says
 * 'D', then writes DIR/merged. Returns the exit status. */
int slurm_array_merge(const char *dir, uint32_t count);
/* The value of "KEY value" lines of a spec: the first one's, in buf.
 * Returns 0, or -1 when the key is absent. */
int slurm_spec_get(const char *spec, const char *key, char *buf, size_t len);

#endif
