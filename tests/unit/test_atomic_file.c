/* Unit tests of the one output writer (sim/atomic_file) and the bounded
 * input reader (sim/input_file). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/atomic_file.h"
#include "sim/input_file.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

static char dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/fleetsim-atomic-%ld", (long)getpid());
    mkdir(dir, 0700);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int has(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strcmp(buf, text) == 0;
}

/* Entries of dir other than . and .. */
static int entries(const char *d)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", d);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

static void test_replace_regular(void)
{
    make_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    put(path, "old");
    chmod(path, 0640);
    struct stat before;
    CHECK(stat(path, &before) == 0);
    struct atomic_file f;
    struct err e;
    err_clear(&e);
    CHECK_INT(atomic_file_open(&f, path, &e), 0);
    CHECK(!f.in_place);
    fputs("new", f.fp);
    CHECK(has(path, "old")); /* not visible before commit */
    CHECK_INT(atomic_file_commit(&f, &e), 0);
    CHECK(has(path, "new"));
    struct stat after;
    CHECK(stat(path, &after) == 0);
    CHECK(after.st_ino != before.st_ino); /* replaced by rename */
    CHECK_INT(after.st_mode & 0777, 0640); /* keeps its mode */
    CHECK_INT(entries(dir), 1);             /* no temporary left */
    /* abort leaves the old one */
    CHECK_INT(atomic_file_open(&f, path, &e), 0);
    fputs("aborted", f.fp);
    atomic_file_abort(&f);
    CHECK(has(path, "new"));
    CHECK_INT(entries(dir), 1);
    remove(path);
}

static void test_symlink_target_replaced(void)
{
    make_dir();
    char target[512], link[512];
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    put(target, "old");
    CHECK(symlink("target", link) == 0);
    struct atomic_file f;
    struct err e;
    err_clear(&e);
    CHECK_INT(atomic_file_open(&f, link, &e), 0);
    fputs("new", f.fp);
    CHECK_INT(atomic_file_commit(&f, &e), 0);
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode)); /* the link stays a link */
    CHECK(has(target, "new"));
    remove(link);
    remove(target);
}

static void test_fifo_in_place(void)
{
    make_dir();
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    int rd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so opening to write does not block */
    CHECK(rd >= 0);
    struct atomic_file f;
    struct err e;
    err_clear(&e);
    CHECK_INT(atomic_file_open(&f, fifo, &e), 0);
    CHECK(f.in_place);
    fputs("through", f.fp);
    CHECK_INT(atomic_file_commit(&f, &e), 0);
    char buf[16] = "";
    CHECK_INT(read(rd, buf, sizeof buf - 1), 7);
    CHECK_STR(buf, "through");
    close(rd);
    struct stat st;
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode)); /* still a FIFO */
    remove(fifo);
}

static void test_device_in_place(void)
{
    struct atomic_file f;
    struct err e;
    err_clear(&e);
    CHECK_INT(atomic_file_open(&f, "/dev/null", &e), 0);
    CHECK(f.in_place);
    fputs("nothing", f.fp);
    CHECK_INT(atomic_file_commit(&f, &e), 0);
    struct stat st;
    CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    /* a full device: the error is reported, the device left alone */
    if (access("/dev/full", W_OK) == 0) {
        CHECK_INT(atomic_file_open(&f, "/dev/full", &e), 0);
        for (int i = 0; i < 10000; i++)
            fputs("0123456789", f.fp);
        CHECK_INT(atomic_file_commit(&f, &e), -1);
        CHECK_STR(e.msg, "cannot write: No space left on device");
        CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
    }
}

static void test_folder_refused(void)
{
    make_dir();
    struct atomic_file f;
    struct err e;
    err_clear(&e);
    err_clear(&e);
    CHECK_INT(atomic_file_open(&f, dir, &e), -1);
    CHECK_STR(e.msg, "cannot write: is a folder");
}

/* The check before a long run: the answer open would give, and nothing
 * left behind (no temporary file, an existing file untouched, a FIFO not
 * waited on). */
static void test_probe(void)
{
    make_dir();
    struct err e;
    err_clear(&e);
    char path[512], fifo[512];
    snprintf(path, sizeof path, "%s/probe/x.csv", dir);
    CHECK_INT(atomic_file_probe(path, &e), -1); /* a folder that is not there */
    CHECK_STR(e.msg, "cannot write: No such file or directory");
    err_clear(&e);
    CHECK_INT(atomic_file_probe(dir, &e), -1);
    CHECK_STR(e.msg, "cannot write: is a folder");
    int before = entries(dir);
    snprintf(path, sizeof path, "%s/new.csv", dir);
    CHECK_INT(atomic_file_probe(path, &e), 0);
    CHECK(access(path, F_OK) != 0);
    CHECK_INT(entries(dir), before);
    snprintf(path, sizeof path, "%s/kept.csv", dir);
    put(path, "kept");
    CHECK_INT(atomic_file_probe(path, &e), 0);
    CHECK(has(path, "kept"));
    CHECK_INT(entries(dir), before + 1);
    CHECK_INT(atomic_file_probe("/dev/null", &e), 0);
    snprintf(fifo, sizeof fifo, "%s/probe-fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_INT(atomic_file_probe(fifo, &e), 0); /* no reader: opening would block */
    remove(fifo);
    remove(path);
}

static void test_same_as_input(void)
{
    make_dir();
    char a[512], b[512], l[512];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(l, sizeof l, "%s/l", dir);
    put(a, "a");
    put(b, "b");
    CHECK(symlink("a", l) == 0);
    struct err e;
    err_clear(&e);
    CHECK_INT(atomic_file_check_input(b, a, &e), 0);
    CHECK_INT(atomic_file_check_input("/nonexistent/x", a, &e), 0);
    CHECK_INT(atomic_file_check_input("/dev/null", "/dev/null", &e), 0); /* a device: written in place, harmless */
    err_clear(&e);
    CHECK_INT(atomic_file_check_input(a, l, &e), -1);
    CHECK(strstr(e.msg, "output is the same file as the input") != NULL);
    CHECK(has(a, "a"));
    remove(a);
    remove(b);
    remove(l);
}

static void test_dir_swap(void)
{
    make_dir();
    char rep[512], file[ATOMIC_FILE_PATH_MAX + 128];
    snprintf(rep, sizeof rep, "%s/report", dir);
    struct atomic_file_dir d;
    struct err e;
    err_clear(&e);
    /* first report: parents created, swapped in */
    char deep[512];
    snprintf(deep, sizeof deep, "%s/a/b/report/", dir);
    CHECK_INT(atomic_file_dir_open(&d, deep, &e), 0);
    snprintf(file, sizeof file, "%s/index.html", d.tmp);
    put(file, "one");
    CHECK_INT(atomic_file_dir_commit(&d, &e), 0);
    snprintf(file, sizeof file, "%s/a/b/report/index.html", dir);
    CHECK(has(file, "one"));
    /* a failed second run leaves the first */
    CHECK_INT(atomic_file_dir_open(&d, deep, &e), 0);
    snprintf(file, sizeof file, "%s/index.html", d.tmp);
    put(file, "two");
    atomic_file_dir_abort(&d);
    snprintf(file, sizeof file, "%s/a/b/report/index.html", dir);
    CHECK(has(file, "one"));
    snprintf(file, sizeof file, "%s/a/b", dir);
    CHECK_INT(entries(file), 1); /* no temporary folder left */
    /* a successful one replaces it whole: no file of the old one stays */
    snprintf(file, sizeof file, "%s/a/b/report/stale.dat", dir);
    put(file, "stale");
    CHECK_INT(atomic_file_dir_open(&d, deep, &e), 0);
    snprintf(file, sizeof file, "%s/index.html", d.tmp);
    put(file, "three");
    CHECK_INT(atomic_file_dir_commit(&d, &e), 0);
    snprintf(file, sizeof file, "%s/a/b/report/stale.dat", dir);
    CHECK(access(file, F_OK) != 0);
    snprintf(file, sizeof file, "%s/a/b", dir);
    CHECK_INT(entries(file), 1);
    /* a folder that is not a report is not taken */
    mkdir(rep, 0700);
    snprintf(file, sizeof file, "%s/precious.txt", rep);
    put(file, "mine");
    err_clear(&e);
    CHECK_INT(atomic_file_dir_open(&d, rep, &e), -1);
    CHECK(strstr(e.msg, "refusing to replace it") != NULL);
    CHECK(has(file, "mine"));
    /* nor a file */
    err_clear(&e);
    CHECK_INT(atomic_file_dir_open(&d, file, &e), -1);
    CHECK_STR(e.msg, "not a folder");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void test_input_bounds(void)
{
    make_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/in.yaml", dir);
    put(path, "0123456789");
    char *data;
    size_t len;
    struct err e;
    err_clear(&e);
    CHECK_INT(input_file_read(path, "scenario", 64, &data, &len, &e), 0);
    CHECK_INT(len, 10);
    CHECK_STR(data, "0123456789");
    free(data);
    err_clear(&e);
    CHECK_INT(input_file_read(path, "scenario", 9, &data, &len, &e), -1);
    CHECK(strstr(e.msg, "larger than 9 bytes (the limit)") != NULL);
    err_clear(&e);
    CHECK_INT(input_file_read("/dev/zero", "trace", 64, &data, &len, &e), -1);
    CHECK(strstr(e.msg, "it is a character device, not a regular file") != NULL);
    err_clear(&e);
    CHECK_INT(input_file_read(dir, "suite", 64, &data, &len, &e), -1);
    CHECK(strstr(e.msg, "it is a folder, not a regular file") != NULL);
    /* a FIFO nobody writes to is given up, not waited on forever */
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    input_file_set_pipe_wait_s(1);
    err_clear(&e);
    CHECK_INT(input_file_read(fifo, "scenario", 64, &data, &len, &e), -1);
    CHECK(strstr(e.msg, "a pipe with no data after 1 s") != NULL);
    input_file_set_pipe_wait_s(0);
    char size[32];
    input_file_format_size(size, sizeof size, (uint64_t)16 << 30);
    CHECK_STR(size, "16 GiB");
    remove(fifo);
    remove(path);
    rmdir(dir);
}

void suite_atomic_file(void)
{
    test_run("atomic_file replaces a regular file", test_replace_regular);
    test_run("atomic_file keeps a symlink", test_symlink_target_replaced);
    test_run("atomic_file writes a FIFO in place", test_fifo_in_place);
    test_run("atomic_file writes a device in place", test_device_in_place);
    test_run("atomic_file refuses a folder", test_folder_refused);
    test_run("atomic_file's probe answers as open would and leaves nothing", test_probe);
    test_run("atomic_file refuses an output that is an input", test_same_as_input);
    test_run("atomic_file swaps a report folder whole", test_dir_swap);
    test_run("input_file bounds and refusals", test_input_bounds);
}
