/* child: runs a program without a shell (fork + execvp of an argv), with its
 * standard input from /dev/null, collects the start of what it prints, and
 * stops it (its whole process group) when it outlives a deadline; on Linux
 * it (the program, not what it forks) is killed when its caller dies.
 * Shared by every caller of an outside
 * tool (gnuplot, Slurm's sbatch/squeue/scancel), so none of them builds a
 * command line a shell would parse.
 *
 * Output is kept up to CHILD_OUTPUT_KEEP - 1 bytes, NUL-terminated; the rest
 * is read and dropped so the child never blocks on a full pipe.
 */
#ifndef FLEETSIM_SIM_CHILD_H
#define FLEETSIM_SIM_CHILD_H

#include <stddef.h>

enum { CHILD_OUTPUT_KEEP = 4096, CHILD_EXIT_NO_EXEC = 127 };

struct child_result {
    int started;   /* fork and pipe worked */
    int timed_out;
    int sink_failed; /* the sink refused a chunk: reading stopped, the child was killed */
    int status;    /* waitpid status; CHILD_EXIT_NO_EXEC: not found / not started */
    char out[CHILD_OUTPUT_KEEP]; /* stdout (and stderr, unless split) */
    char err[CHILD_OUTPUT_KEEP]; /* stderr when split_stderr */
};

/* Runs argv (argv[0] looked up in PATH) in dir (NULL: here) within
 * timeout_s seconds. split_stderr: stderr goes to cr->err instead of
 * being interleaved into cr->out. */
void child_run(char *const argv[], const char *dir, int timeout_s, int split_stderr, struct child_result *cr);
/* Receives stdout chunk by chunk, for callers that need all of it (Slurm's
 * JSON runs to megabytes); non-zero stops the run. */
typedef int (*child_sink_fn)(void *ctx, const char *data, size_t n);
/* child_run with the limit in milliseconds and, when sink is not NULL,
 * stdout handed to it instead of kept in cr->out. */
void child_run_ms(char *const argv[], const char *dir, int timeout_ms, int split_stderr, child_sink_fn sink, void *ctx,
                  struct child_result *cr);
/* Whether `name` is an executable file in one of PATH's folders (or, when it
 * holds a '/', at that path). */
int child_in_path(const char *name);
/* `word` as one /bin/sh word, for text a shell will read (a batch script,
 * a command shown to the user): as is when it holds only characters no
 * shell treats specially, else in single quotes, a quote inside as '\''.
 * malloc'd; NULL when out of memory. */
char *child_shell_word(const char *word);

#endif
