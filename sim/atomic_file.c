/* realpath() is XSI */
#define _XOPEN_SOURCE 700
#include "sim/atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* Temporary names are unique within the process too (a forecast writes many
 * files, a compare many folders). */
static unsigned atomic_file_counter;

/* Under /dev or /proc: where /dev/stdout and /proc/self/fd/N live. */
static int atomic_file_special_path(const char *path)
{
    return strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0;
}

/* Where and how path is written: f->path (a symlink's target when the link
 * is replaced through), f->in_place for what is written where it is (a
 * device, a FIFO, /dev/stdout and the like), and *mode the permission bits
 * of a regular file that exists (-1: none). Returns 0, or -1 with err. */
static int atomic_file_resolve(struct atomic_file *f, const char *path, int *mode, struct err *err)
{
    memset(f, 0, sizeof *f);
    *mode = -1;
    if (!path[0])
        return err_set(err, path, 0, 0, "cannot write: empty file name");
    if (strlen(path) >= sizeof f->path)
        return err_set(err, path, 0, 0, "path too long");
    snprintf(f->path, sizeof f->path, "%s", path);
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return err_set(err, path, 0, 0, "cannot write: is a folder");
    if (exists && !S_ISREG(st.st_mode)) {
        f->in_place = 1;
        return 0;
    }
    if (exists)
        *mode = (int)(st.st_mode & 07777);
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        /* a dangling link: create its target through it; /dev/stdout and
         * links into /dev or /proc: a shell's redirection, kept as it is */
        char to[64];
        ssize_t n = readlink(path, to, sizeof to - 1);
        to[n > 0 ? n : 0] = '\0';
        if (!exists || atomic_file_special_path(path) || atomic_file_special_path(to)) {
            f->in_place = 1;
            return 0;
        }
        char *real = realpath(path, NULL);
        if (!real)
            return atomic_file_write_error(err, path, errno);
        if (atomic_file_special_path(real) || strlen(real) >= sizeof f->path) {
            free(real);
            f->in_place = 1;
            return 0;
        }
        snprintf(f->path, sizeof f->path, "%s", real);
        free(real);
    }
    return 0;
}

int atomic_file_write_error(struct err *err, const char *path, int e)
{
    if (e == ENOMEM)
        return err_set(err, path, 0, 0, "out of memory writing '%s'", path);
    return err_set(err, path, 0, 0, "cannot write: %s", strerror(e ? e : EIO));
}

/* The temporary file beside f->path, created empty: a descriptor, or -1
 * with err. */
static int atomic_file_create_tmp(struct atomic_file *f, const char *path, struct err *err)
{
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld.%u", f->path, (long)getpid(), atomic_file_counter++);
        fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        atomic_file_write_error(err, path, errno);
    return fd;
}

int atomic_file_open(struct atomic_file *f, const char *path, struct err *err)
{
    int mode;
    if (atomic_file_resolve(f, path, &mode, err) != 0)
        return -1;
    if (f->in_place) {
        /* "w" truncates a regular file behind /dev/stdout, as a shell's > does;
         * a device or FIFO is opened for writing as it is. */
        f->fp = fopen(path, "wb");
        if (!f->fp)
            return atomic_file_write_error(err, path, errno);
        return 0;
    }
    int fd = atomic_file_create_tmp(f, path, err);
    if (fd < 0)
        return -1;
    if (mode >= 0)
        (void)fchmod(fd, (mode_t)mode); /* best effort: a file replaced keeps its mode */
    f->fp = fdopen(fd, "wb");
    if (!f->fp) {
        int saved = errno;
        close(fd);
        remove(f->tmp);
        return atomic_file_write_error(err, path, saved);
    }
    return 0;
}

int atomic_file_probe(const char *path, struct err *err)
{
    struct atomic_file f;
    int mode;
    if (atomic_file_resolve(&f, path, &mode, err) != 0)
        return -1;
    if (f.in_place) /* opening would truncate what a shell redirected, or wait for a FIFO's reader */
        return access(path, W_OK) == 0 ? 0 : atomic_file_write_error(err, path, errno);
    int fd = atomic_file_create_tmp(&f, path, err);
    if (fd < 0)
        return -1;
    close(fd);
    remove(f.tmp);
    return 0;
}

/* Makes a rename durable; a failure here is not worth failing the run for. */
static void atomic_file_sync_parent(const char *path)
{
    char dir[ATOMIC_FILE_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int atomic_file_commit(struct atomic_file *f, struct err *err)
{
    if (!f->fp)
        return err_set(err, f->path, 0, 0, "cannot write: not open");
    int failed = ferror(f->fp) != 0;
    int saved = failed ? (errno ? errno : EIO) : 0;
    if (fflush(f->fp) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    /* a device has nothing to sync (and /dev/null says EINVAL) */
    if (!failed && !f->in_place && fsync(fileno(f->fp)) != 0) {
        failed = 1;
        saved = errno;
    }
    if (fclose(f->fp) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    f->fp = NULL;
    if (!failed && !f->in_place && rename(f->tmp, f->path) != 0) {
        failed = 1;
        saved = errno;
    }
    if (failed) {
        if (!f->in_place)
            remove(f->tmp);
        return atomic_file_write_error(err, f->path, saved ? saved : EIO);
    }
    if (!f->in_place)
        atomic_file_sync_parent(f->path);
    return 0;
}

void atomic_file_abort(struct atomic_file *f)
{
    if (f->fp) {
        fclose(f->fp);
        f->fp = NULL;
        if (!f->in_place)
            remove(f->tmp);
    }
}

int atomic_file_check_input(const char *output, const char *input, struct err *err)
{
    if (!output || !input)
        return 0;
    struct stat so, si;
    if (stat(output, &so) != 0 || !S_ISREG(so.st_mode))
        return 0;
    int got = strcmp(input, "-") == 0 ? fstat(STDIN_FILENO, &si) : stat(input, &si);
    if (got != 0 || !S_ISREG(si.st_mode))
        return 0;
    if (so.st_dev == si.st_dev && so.st_ino == si.st_ino)
        return err_set(err, output, 0, 0, "output is the same file as the input '%s'", input);
    return 0;
}

/* mkdir -p of path's parents (path itself is left to the caller). */
static int atomic_file_make_parents(const char *path, struct err *err)
{
    char buf[ATOMIC_FILE_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return err_set(err, buf, 0, 0, "cannot create folder: %s", strerror(errno));
        *p = '/';
    }
    return 0;
}

/* Whether dir may be replaced: empty, or a report fleetsim wrote. */
static int atomic_file_dir_replaceable(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int empty = 1, report = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        empty = 0;
        if (!strcmp(e->d_name, "index.html") || !strcmp(e->d_name, "summary.json"))
            report = 1;
    }
    closedir(d);
    return empty || report;
}

/* rm -r; symlinks are removed, never followed. */
static void remove_tree(const char *path, int depth)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode) && depth < 64) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            char child[ATOMIC_FILE_PATH_MAX + 320];
            while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                snprintf(child, sizeof child, "%s/%s", path, e->d_name);
                remove_tree(child, depth + 1);
            }
            closedir(d);
        }
        rmdir(path);
        return;
    }
    unlink(path);
}

int atomic_file_dir_open(struct atomic_file_dir *d, const char *path, struct err *err)
{
    memset(d, 0, sizeof *d);
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--; /* "report/" names the folder "report" */
    if (!n)
        return err_set(err, path, 0, 0, "bad report folder name");
    if (n >= sizeof d->path - 1)
        return err_set(err, path, 0, 0, "path too long");
    memcpy(d->path, path, n);
    d->path[n] = '\0';
    struct stat st;
    if (stat(d->path, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return err_set(err, path, 0, 0, "not a folder");
        if (!atomic_file_dir_replaceable(d->path))
            return err_set(err, path, 0, 0,
                           "folder is not empty and holds no fleetsim report (no index.html): refusing to "
                           "replace it");
    } else if (errno != ENOENT) {
        return err_set(err, path, 0, 0, "cannot create folder: %s", strerror(errno));
    }
    if (atomic_file_make_parents(d->path, err) != 0)
        return -1;
    for (int tries = 0;; tries++) {
        snprintf(d->tmp, sizeof d->tmp, "%s.tmp.%ld.%u", d->path, (long)getpid(), atomic_file_counter++);
        if (mkdir(d->tmp, 0777) == 0)
            return 0;
        if (errno != EEXIST || tries == 100) {
            int saved = errno;
            d->tmp[0] = '\0';
            return err_set(err, path, 0, 0, "cannot create folder: %s", strerror(saved));
        }
    }
}

int atomic_file_dir_commit(struct atomic_file_dir *d, struct err *err)
{
    char old[sizeof d->tmp];
    old[0] = '\0';
    struct stat st;
    if (stat(d->path, &st) == 0) {
        snprintf(old, sizeof old, "%s.old.%ld.%u", d->path, (long)getpid(), atomic_file_counter++);
        if (rename(d->path, old) != 0) {
            int saved = errno;
            atomic_file_dir_abort(d);
            return err_set(err, d->path, 0, 0, "cannot replace the folder: %s", strerror(saved));
        }
    }
    if (rename(d->tmp, d->path) != 0) {
        int saved = errno;
        if (old[0])
            (void)rename(old, d->path);
        atomic_file_dir_abort(d);
        return err_set(err, d->path, 0, 0, "cannot replace the folder: %s", strerror(saved));
    }
    d->tmp[0] = '\0';
    atomic_file_sync_parent(d->path);
    if (old[0])
        remove_tree(old, 0);
    return 0;
}

void atomic_file_dir_abort(struct atomic_file_dir *d)
{
    if (d->tmp[0])
        remove_tree(d->tmp, 0);
    d->tmp[0] = '\0';
}

void atomic_file_remove_tree(const char *path)
{
    remove_tree(path, 0);
}
