/* cgroup: one cgroup v2 per job, so that nothing a job starts outlives it.
 *
 * The agent finds the cgroup2 mount in /proc/self/mountinfo (pure v2:
 * /sys/fs/cgroup; hybrid: /sys/fs/cgroup/unified) and its own cgroup in
 * /proc/self/cgroup ("0::PATH"). Under systemd with Delegate=yes the
 * agent's cgroup is its own: the agent moves itself into the leaf
 * `PATH/agent` and creates the jobs' cgroups as its siblings,
 * `PATH/job-ID` (a cgroup with processes may not have children with
 * controllers). When the agent sits in the hierarchy's root (a container,
 * a test run), jobs go under `/fleetsim-agent-TAG/job-ID`, TAG naming the
 * state folder, so that agents sharing a host never share a cgroup.
 *
 * The supervisor (executor.c) puts the job's first process into its cgroup
 * before exec; at the job's end it writes cgroup.kill (kernel >= 5.14;
 * before that it SIGKILLs every pid in cgroup.procs until none is left),
 * reads cpu.stat and memory.peak, and removes the cgroup. The agent does the
 * same for a job whose supervisor died. Job cgroups survive an agent restart
 * (KillMode=process), like the supervisors.
 *
 * Left out: the v2 device controller (a BPF program per cgroup) is not
 * used, so a job can still open other GPUs' /dev/nvidia* nodes;
 * CUDA_VISIBLE_DEVICES is advice there. Memory and CPU limits are not set.
 */
#ifndef FLEETSIM_AGENT_CGROUP_H
#define FLEETSIM_AGENT_CGROUP_H

#include <stdint.h>

#include "sim/err.h"

enum { CGROUP_PATH_MAX = 4096 };

struct cgroup_host {
    int usable;                      /* job cgroups can be created */
    char mount[CGROUP_PATH_MAX];     /* the cgroup2 mount point, "" if none */
    char own[CGROUP_PATH_MAX];       /* the agent's cgroup at start, relative to the mount */
    char base[CGROUP_PATH_MAX];      /* absolute folder of the jobs' cgroups */
    char why[512];                   /* why not usable */
    int moved;                       /* the agent moved itself into base/agent */
};

/* Finds the mount and the agent's cgroup and prepares base (tag: a short
 * name unique to this agent's state folder). Never fails: h->usable says
 * whether it worked, h->why why not. mountinfo and self_cgroup are the
 * files to read (NULL: /proc/self/...). */
void cgroup_host_init(struct cgroup_host *h, const char *tag, const char *mountinfo, const char *self_cgroup);
/* Parses a mountinfo text: copies the first cgroup2 mount point into out.
 * Returns 0, or -1 if there is none. */
int cgroup_find_mount(const char *mountinfo_text, char *out, size_t len);
/* Parses /proc/self/cgroup text: copies the "0::" path. Returns 0 or -1. */
int cgroup_find_own(const char *cgroup_text, char *out, size_t len);

/* The job's cgroup folder (absolute) into out. */
void cgroup_job_path(const struct cgroup_host *h, int64_t job_id, char *out, size_t len);
/* Creates it (an existing one is emptied first). Returns 0 or -1 with err. */
int cgroup_job_create(const char *cg, struct err *err);
/* Moves the calling process into cg (before exec, in the job's child). */
int cgroup_join(const char *cg);
/* Sends sig to every process in cg. Returns how many were signalled. */
int cgroup_signal(const char *cg, int sig);
/* Kills every process in cg (cgroup.kill, else SIGKILL pid by pid) and
 * waits up to wait_us for it to be empty. Returns the processes left (0). */
int cgroup_kill(const char *cg, int64_t wait_us);
/* Number of processes in cg (-1 if it does not exist). */
int cgroup_count(const char *cg);
/* CPU time (cpu.stat usage_usec) and peak memory (memory.peak; -1 when the
 * memory controller is not enabled there). Returns 0 or -1. */
int cgroup_read_stats(const char *cg, int64_t *cpu_us, int64_t *mem_peak_bytes);
/* Kills what is left and removes the cgroup. Returns 0 or -1. */
int cgroup_remove(const char *cg);

#endif
