/* atomic_file: THE writer of every file and report folder the tools write
 * (ARCHITECTURE.md, "Files the tools write go through one writer").
 *
 * - A regular file, or a path that does not exist yet, is written to a
 *   temporary file in the same folder ("PATH.tmp.PID.N"), which commit
 *   flushes, fsyncs and renames over PATH: a reader never sees half a file,
 *   and a failed run leaves the previous file untouched. A symlink to a
 *   regular file replaces its target and keeps the link; a file replaced keeps
 *   its permission bits.
 * - Anything else (a character device such as /dev/null or /dev/full, a FIFO,
 *   a terminal, /dev/stdout and the like, or a symlink to one of them) is
 *   written in place and never replaced; so is a symlink in or into /dev/ or
 *   /proc/, since /dev/stdout may be a shell's redirection to a regular file
 *   (a regular file such as /dev/shm/x is replaced as any other).
 * - An output that is the same regular file as an input is refused before
 *   anything is read (atomic_file_check_input, by device and inode).
 * - A report folder is written into a sibling temporary folder and swapped
 *   in whole by atomic_file_dir_commit: a run that fails midway (a full disk)
 *   leaves the old folder as it was. An existing folder is replaced only when
 *   it is empty or holds a fleetsim report (an index.html or summary.json),
 *   so a mistyped --report cannot take a home folder with it.
 *
 * The structs are the caller's (usually on the stack); every open is ended
 * by exactly one commit or abort. Messages are "PATH: cannot write: why".
 */
#ifndef FLEETSIM_SIM_ATOMIC_FILE_H
#define FLEETSIM_SIM_ATOMIC_FILE_H

#include <stdio.h>

#include "sim/err.h"

enum { ATOMIC_FILE_PATH_MAX = 4096 };

struct atomic_file {
    FILE *fp;
    char path[ATOMIC_FILE_PATH_MAX]; /* what is written: PATH, or a symlink's target */
    char tmp[ATOMIC_FILE_PATH_MAX + 64]; /* "" when written in place */
    int in_place;
};

int atomic_file_open(struct atomic_file *f, const char *path, struct err *err);
/* Whether path could be opened as atomic_file_open would, leaving nothing
 * behind (a temporary file is created and removed; what is written in
 * place is only asked for write access): an output refused before a long
 * run rather than after it. Returns 0, or -1 with open's message. */
int atomic_file_probe(const char *path, struct err *err);
/* Returns 0, or -1 (the temporary file is removed) if anything failed. */
int atomic_file_commit(struct atomic_file *f, struct err *err);
/* Leaves PATH as it was (a file written in place keeps what was written). */
void atomic_file_abort(struct atomic_file *f);
/* Sets err for a write of path that failed with errno e (0: EIO), as
 * "cannot write: reason", or "out of memory writing 'path'" for ENOMEM
 * (stdio's buffers): not the disk's fault. Returns -1. */
int atomic_file_write_error(struct err *err, const char *path, int e);

/* Returns 0 when output is not the regular file input names (either may not
 * exist; "-" as input is standard input), else -1 with err: "OUTPUT: error:
 * output is the same file as the input 'INPUT'". */
int atomic_file_check_input(const char *output, const char *input, struct err *err);

struct atomic_file_dir {
    char path[ATOMIC_FILE_PATH_MAX];
    char tmp[ATOMIC_FILE_PATH_MAX + 64]; /* the folder to write into */
};

/* Creates path's missing parents and the temporary sibling folder d->tmp;
 * refuses a path that is a file, or a folder that is not a report. */
int atomic_file_dir_open(struct atomic_file_dir *d, const char *path, struct err *err);
/* Swaps d->tmp in as d->path and removes the old folder. 0 or -1 (the
 * temporary folder removed, the old one kept). */
int atomic_file_dir_commit(struct atomic_file_dir *d, struct err *err);
void atomic_file_dir_abort(struct atomic_file_dir *d);
/* rm -r of a folder the tool made itself (a work folder): symlinks are
 * removed, never followed. */
void atomic_file_remove_tree(const char *path);

#endif
