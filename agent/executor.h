/* executor: running a job's command on this host, so that it survives the
 * agent and never runs twice.
 *
 * Each job runs under a small supervisor: the agent binary re-executed as
 * `fleetsim-agent __supervise`, in its own session. The handshake:
 *
 *   1. executor_spawn() forks the supervisor and sends it the job (argv,
 *      filtered environment, cwd, user, output files) over a pipe. The
 *      supervisor waits for one more byte.
 *   2. The agent records the job as running, with the supervisor's pid and
 *      start time (from /proc/PID/stat, which tells a reused pid), and
 *      commits.
 *   3. executor_go() sends the byte. Only now does the supervisor create the
 *      job's `started` marker and fork/exec the command.
 *
 * If the agent dies before 3, the supervisor reads end-of-file and exits
 * without running anything: the job is still queued (crash before 2), or it
 * is recorded as running with a dead supervisor and no `started` marker,
 * which proves it never ran, so it is put back in the queue. A job with a
 * marker ran; it is never started again unless it asked to be requeued.
 *
 * The command runs in its own process group, in its working directory, with
 * stdin from /dev/null and stdout/stderr appended to its files, with exactly
 * the environment given (CUDA_VISIBLE_DEVICES included); when the agent is
 * root it runs as the submitting user (setgid, initgroups, setuid, checked).
 * With a cgroup (cgroup.h) the child joins it before switching user.
 * SIGTERM to the supervisor is passed to the job's group and every process
 * in its cgroup; SIGUSR1 becomes SIGKILL of the group and cgroup.kill. When
 * the command exits, the supervisor kills what is left of the group and of
 * the cgroup (setsid and double-fork escapes included), reads the cgroup's
 * CPU time and peak memory, removes it, and writes `status` (exit code,
 * signal, end time, figures)
 * atomically into the job's directory, then exits. The agent learns of that
 * through SIGCHLD, or through a pidfd for supervisors it re-adopted after a
 * restart, and reads the status file.
 */
#ifndef FLEETSIM_AGENT_EXECUTOR_H
#define FLEETSIM_AGENT_EXECUTOR_H

#include <stdint.h>
#include <sys/types.h>

#include "sim/err.h"

struct executor_spec {
    const char *dir;       /* the job's private directory (exists) */
    const char *argv_json; /* JSON array of strings */
    const char *env_json;  /* JSON array of "K=V" */
    const char *cwd;
    const char *out_path, *err_path;
    uint32_t uid, gid;
    const char *user;
    int switch_user; /* setgid/initgroups/setuid before exec */
    const char *cgroup; /* the job's cgroup v2 folder (exists), "" or NULL = none */
};

struct executor_status {
    int exit_code;   /* -1 if killed by a signal or never started */
    int term_signal; /* 0 = none */
    int64_t end_us;
    char error[256]; /* why it could not start, "" if it did */
    int64_t cpu_us;         /* CPU time of the job's cgroup, -1 unknown */
    int64_t mem_peak_bytes; /* its memory.peak, -1 unknown */
    int survivors;          /* processes left in its cgroup after the kill (0) */
};

/* Forks the supervisor; on success sets *pid, *start (its /proc start time)
 * and *go_fd (write end of the handshake pipe). */
int executor_spawn(const struct executor_spec *spec, pid_t *pid, int64_t *start, int *go_fd, struct err *err);
/* Lets the supervisor run the job (and closes go_fd). Returns 0 or -1. */
int executor_go(int go_fd);
/* Closes go_fd without the go byte: the supervisor exits, the job never runs. */
void executor_abandon(int go_fd);
/* Sends SIGTERM (hard = 0) or a group SIGKILL (hard = 1) through the
 * supervisor, if it is still the process we started. */
int executor_signal(pid_t pid, int64_t start, int hard);

/* Start time of pid (field 22 of /proc/PID/stat), 0 if no such process or a
 * zombie. */
int64_t executor_proc_start(pid_t pid);
/* Is pid still the process that started at start? */
int executor_alive(pid_t pid, int64_t start);
/* A pidfd for pid (readable once it exits), or -1 when unsupported. */
int executor_pidfd(pid_t pid);

/* 1 and *st filled if the supervisor wrote its status, 0 if not, -1 if the
 * file is unreadable. */
int executor_read_status(const char *dir, struct executor_status *st);
/* Did the supervisor get the go and start the job (`started` exists)? */
int executor_started(const char *dir);
/* Removes the job's directory and what the supervisor wrote into it. */
void executor_cleanup(const char *dir);

/* The supervisor's main(): reads the spec from fd 3. Returns an exit code. */
int executor_supervise_main(void);

#endif
