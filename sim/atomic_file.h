/* atomic_file: writing an output file so that it is either complete or not
 * there at all. Data goes to "PATH.tmp.PID"; commit flushes, fsyncs and
 * renames it over PATH; abort removes it. A reader never sees half a file, and
 * a failed run leaves the previous file untouched.
 */
#ifndef FLEETSIM_SIM_ATOMIC_FILE_H
#define FLEETSIM_SIM_ATOMIC_FILE_H

#include <stdio.h>

#include "sim/err.h"

struct atomic_file {
    FILE *fp;
    char path[4096];
    char tmp[4200];
};

int atomic_file_open(struct atomic_file *f, const char *path, struct err *err);
/* Returns 0, or -1 (the temporary file is removed) if anything failed. */
int atomic_file_commit(struct atomic_file *f, struct err *err);
void atomic_file_abort(struct atomic_file *f);

#endif
