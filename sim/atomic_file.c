#include "sim/atomic_file.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int atomic_file_open(struct atomic_file *f, const char *path, struct err *err)
{
    memset(f, 0, sizeof *f);
    if (strlen(path) >= sizeof f->path)
        return err_set(err, path, 0, 0, "path too long");
    snprintf(f->path, sizeof f->path, "%s", path);
    snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", path, (long)getpid());
    f->fp = fopen(f->tmp, "wb");
    if (!f->fp)
        return err_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
    return 0;
}

int atomic_file_commit(struct atomic_file *f, struct err *err)
{
    int failed = ferror(f->fp) != 0;
    int saved = errno;
    if (fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0) {
        failed = 1;
        saved = errno;
    }
    if (fclose(f->fp) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    f->fp = NULL;
    if (!failed && rename(f->tmp, f->path) != 0) {
        failed = 1;
        saved = errno;
    }
    if (failed) {
        remove(f->tmp);
        return err_set(err, f->path, 0, 0, "cannot write: %s", strerror(saved ? saved : EIO));
    }
    return 0;
}

void atomic_file_abort(struct atomic_file *f)
{
    if (f->fp) {
        fclose(f->fp);
        f->fp = NULL;
        remove(f->tmp);
    }
}
