/* Unit tests: agent/cgroup (finding cgroup2 and the agent's cgroup) and the
 * store's schema version 3 (idempotency keys, a version-2 store migrated,
 * owner-only files). */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cgroup.h"
#include "agent/store.h"
#include "tests/unit/test.h"

void suite_agent_cgroup(void);

static void test_find_mount(void)
{
    char out[256];
    /* hybrid (v1 controllers + the unified hierarchy) */
    const char *hybrid = "25 30 0:22 / /sys rw,nosuid - sysfs sysfs rw\n"
                         "31 25 0:26 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
                         "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
                         "42 31 0:39 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
    CHECK_INT(cgroup_find_mount(hybrid, out, sizeof out), 0);
    CHECK_STR(out, "/sys/fs/cgroup/unified");
    /* pure v2, with optional fields before the separator */
    const char *v2 = "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
    CHECK_INT(cgroup_find_mount(v2, out, sizeof out), 0);
    CHECK_STR(out, "/sys/fs/cgroup");
    /* an escaped blank in the mount point */
    CHECK_INT(cgroup_find_mount("1 2 0:1 / /mnt/my\\040cg rw - cgroup2 none rw\n", out, sizeof out), 0);
    CHECK_STR(out, "/mnt/my cg");
    /* v1 only: none */
    CHECK_INT(cgroup_find_mount("42 31 0:39 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", out, sizeof out),
              -1);
}

static void test_find_own(void)
{
    char out[256];
    CHECK_INT(cgroup_find_own("4:memory:/x\n0::/system.slice/fleetsim-agent.service\n", out, sizeof out), 0);
    CHECK_STR(out, "/system.slice/fleetsim-agent.service");
    CHECK_INT(cgroup_find_own("0::/\n", out, sizeof out), 0);
    CHECK_STR(out, "/");
    CHECK_INT(cgroup_find_own("4:memory:/x\n1:cpu:/\n", out, sizeof out), -1);
}

static void test_host_without_cgroup2(void)
{
    char dir[] = "/tmp/fleetsim-cg-XXXXXX";
    if (!mkdtemp(dir)) {
        test_skip("no temporary folder");
        return;
    }
    char mi[128], sc[128];
    snprintf(mi, sizeof mi, "%s/mountinfo", dir);
    snprintf(sc, sizeof sc, "%s/cgroup", dir);
    FILE *f = fopen(mi, "w");
    fputs("42 31 0:39 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", f);
    fclose(f);
    f = fopen(sc, "w");
    fputs("0::/\n", f);
    fclose(f);
    struct cgroup_host h;
    cgroup_host_init(&h, "t", mi, sc);
    CHECK_INT(h.usable, 0);
    CHECK(strstr(h.why, "no cgroup2 file system is mounted") != NULL);
    unlink(mi);
    unlink(sc);
    rmdir(dir);
}

static struct agent_job *job_with(uint32_t uid, const char *key)
{
    struct agent_job *j = job_new();
    j->uid = uid;
    j->gpus = 1;
    j->limit_us = 1000000;
    j->submit_us = 1;
    j->state = JOB_QUEUED;
    snprintf(j->user, sizeof j->user, "u");
    snprintf(j->idem_key, sizeof j->idem_key, "%s", key);
    j->argv_json = strdup("[\"true\"]");
    j->env_json = strdup("[\"HF_TOKEN=x\"]");
    j->cwd = strdup("/");
    j->out_path = strdup("");
    j->err_path = strdup("");
    return j;
}

struct found {
    int n;
    char key[72];
    int64_t cpu_us;
};

static int found_cb(void *ctx, struct agent_job *j, char **uuids, size_t n)
{
    struct found *f = ctx;
    f->n++;
    snprintf(f->key, sizeof f->key, "%s", j->idem_key);
    f->cpu_us = j->cpu_us;
    job_free(j);
    for (size_t k = 0; k < n; k++)
        free(uuids[k]);
    free(uuids);
    return 0;
}

static void test_store_keys_and_modes(void)
{
    char dir[] = "/tmp/fleetsim-st-XXXXXX";
    if (!mkdtemp(dir)) {
        test_skip("no temporary folder");
        return;
    }
    char path[128], wal[140];
    snprintf(path, sizeof path, "%s/state.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    mode_t old = umask(022); /* even so, the store's files are owner-only */
    struct store *st;
    struct err e;
    err_clear(&e);
    CHECK_INT(store_open(&st, path, &e), 0);
    umask(old);
    struct agent_job *a = job_with(1000, "k-1"), *b = job_with(1000, "k-1"), *c = job_with(1001, "k-1");
    CHECK_INT(store_insert_job(st, a, &e), 0);
    CHECK_INT(store_insert_job(st, b, &e), -1); /* (uid, key) is unique */
    CHECK_INT(store_insert_job(st, c, &e), 0);  /* another uid may use the same key */
    int64_t id = 0;
    CHECK_INT(store_find_key(st, 1000, "k-1", &id, &e), 1);
    CHECK_INT(id, a->id);
    CHECK_INT(store_find_key(st, 1000, "k-2", &id, &e), 0);
    a->state = JOB_COMPLETED;
    a->end_us = 5;
    a->exit_code = 0;
    a->cpu_us = 123456;
    CHECK_INT(store_mark_finished(st, a, &e), 0);
    struct found f = {0};
    CHECK_INT(store_get_job(st, a->id, found_cb, &f, &e), 1);
    CHECK_STR(f.key, "k-1");
    CHECK_INT(f.cpu_us, 123456);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);
    CHECK(stat(wal, &sb) == 0 && (sb.st_mode & 0777) == 0600);
    store_close(st);
    job_free(a);
    job_free(b);
    job_free(c);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT(system(cmd), 0);
}

static void test_store_migrates_v2(void)
{
    char dir[] = "/tmp/fleetsim-st-XXXXXX";
    if (!mkdtemp(dir)) {
        test_skip("no temporary folder");
        return;
    }
    char path[128];
    snprintf(path, sizeof path, "%s/state.db", dir);
    sqlite3 *db;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    /* the version-2 jobs table, with one finished job */
    const char *v2 =
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
        "INSERT INTO meta VALUES ('schema_version', 2);"
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, state TEXT NOT NULL, uid INTEGER NOT NULL,"
        " gid INTEGER NOT NULL, user TEXT NOT NULL, team TEXT NOT NULL, name TEXT NOT NULL, gpus INTEGER NOT NULL,"
        " limit_us INTEGER NOT NULL, submit_us INTEGER NOT NULL, start_us INTEGER, end_us INTEGER,"
        " priority INTEGER NOT NULL DEFAULT 0, argv TEXT NOT NULL, env TEXT NOT NULL, cwd TEXT NOT NULL,"
        " stdout TEXT NOT NULL, stderr TEXT NOT NULL, requeue INTEGER NOT NULL DEFAULT 0,"
        " attempts INTEGER NOT NULL DEFAULT 0, reserved_us INTEGER NOT NULL DEFAULT -1, shim_pid INTEGER,"
        " shim_start INTEGER, exit_code INTEGER, signal INTEGER, reason TEXT NOT NULL DEFAULT '',"
        " cancel_requested INTEGER NOT NULL DEFAULT 0, traced INTEGER NOT NULL DEFAULT 0,"
        " job_class INTEGER NOT NULL DEFAULT 0, attained_us INTEGER NOT NULL DEFAULT 0,"
        " preemptions INTEGER NOT NULL DEFAULT 0, first_start_us INTEGER);"
        "INSERT INTO jobs (state, uid, gid, user, team, name, gpus, limit_us, submit_us, start_us, end_us, argv,"
        " env, cwd, stdout, stderr, exit_code, first_start_us) VALUES ('completed', 7, 7, 'u', '', '', 1, 10, 1, 2,"
        " 3, '[\"true\"]', '[]', '/', '', '', 0, 2);";
    CHECK_INT(sqlite3_exec(db, v2, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    chmod(path, 0644);
    struct store *st;
    struct err e;
    err_clear(&e);
    CHECK_INT(store_open(&st, path, &e), 0);
    int64_t v = 0;
    CHECK_INT(store_meta_get(st, "schema_version", &v, &e), 1);
    CHECK_INT(v, 3);
    struct found f = {0};
    CHECK_INT(store_get_job(st, 1, found_cb, &f, &e), 1);
    CHECK_INT(f.n, 1);
    CHECK_STR(f.key, "");
    CHECK_INT(f.cpu_us, -1);
    struct agent_job *a = job_with(7, "after");
    CHECK_INT(store_insert_job(st, a, &e), 0);
    int64_t id = 0;
    CHECK_INT(store_find_key(st, 7, "after", &id, &e), 1);
    CHECK_INT(id, 2);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600); /* an older 0644 file made private */
    store_close(st);
    job_free(a);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT(system(cmd), 0);
}

void suite_agent_cgroup(void)
{
    test_run("cgroup: the cgroup2 mount from mountinfo (hybrid, v2, escaped, none)", test_find_mount);
    test_run("cgroup: the agent's own cgroup from /proc/self/cgroup", test_find_own);
    test_run("cgroup: without cgroup2 the host is not usable and says why", test_host_without_cgroup2);
    test_run("store: (uid, idempotency key) unique, cgroup figures kept, files 0600", test_store_keys_and_modes);
    test_run("store: a version-2 store is migrated to version 3", test_store_migrates_v2);
}
