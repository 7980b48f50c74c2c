#include "agent/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum stmt_id {
    S_BEGIN, S_COMMIT, S_ROLLBACK, S_INSERT, S_RUNNING, S_ALLOC, S_FINISHED, S_REQUEUED, S_RESERVED, S_CANCEL,
    S_EVENT, S_ACTIVE, S_ALLOCS_OF, S_FINISHED_ALL, S_FINISHED_UID, S_UNTRACED, S_TRACED, S_GET, S_EVENTS_OF,
    S_PUT_DRAIN, S_DEL_DRAIN, S_DRAINS, S_META_GET, S_META_SET, S_BY_KEY, S_COUNT
};

#define JOB_COLUMNS                                                                                            \
    "id, state, uid, gid, user, team, name, gpus, limit_us, submit_us, start_us, end_us, priority, argv, env, " \
    "cwd, stdout, stderr, requeue, attempts, reserved_us, shim_pid, shim_start, exit_code, signal, reason, "    \
    "cancel_requested, job_class, attained_us, preemptions, first_start_us, cpu_us, mem_peak_bytes, idem_key"

static const char *const sql_text[S_COUNT] = {
    [S_BEGIN] = "BEGIN IMMEDIATE",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_INSERT] = "INSERT INTO jobs (state, uid, gid, user, team, name, gpus, limit_us, submit_us, priority, argv, "
                 "env, cwd, stdout, stderr, requeue, job_class, idem_key) VALUES ('queued', ?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                 "?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    [S_RUNNING] = "UPDATE jobs SET state = 'running', start_us = ?2, first_start_us = COALESCE(first_start_us, ?2), "
                  "attempts = ?3, shim_pid = ?4, shim_start = "
                  "?5, reserved_us = -1 WHERE id = ?1 AND state = 'queued'",
    [S_ALLOC] = "INSERT INTO allocations (job_id, attempt, node, gpu_uuid) VALUES (?1, ?2, ?3, ?4)",
    [S_FINISHED] = "UPDATE jobs SET state = ?2, end_us = ?3, exit_code = ?4, signal = ?5, reason = ?6, traced = 0, "
                   "cpu_us = ?7, mem_peak_bytes = ?8 WHERE id = ?1",
    [S_REQUEUED] = "UPDATE jobs SET state = 'queued', start_us = NULL, shim_pid = NULL, shim_start = NULL, "
                   "reason = ?2, attempts = ?3, reserved_us = -1, attained_us = ?4, preemptions = ?5 WHERE id = ?1",
    [S_RESERVED] = "UPDATE jobs SET reserved_us = ?2 WHERE id = ?1",
    [S_CANCEL] = "UPDATE jobs SET cancel_requested = 1 WHERE id = ?1",
    [S_EVENT] = "INSERT INTO events (ts_us, job_id, kind, detail) VALUES (?1, ?2, ?3, ?4)",
    [S_ACTIVE] = "SELECT " JOB_COLUMNS " FROM jobs WHERE state IN ('queued', 'running') ORDER BY submit_us, id",
    [S_ALLOCS_OF] = "SELECT gpu_uuid FROM allocations WHERE job_id = ?1 AND attempt = ?2 ORDER BY rowid",
    [S_FINISHED_ALL] = "SELECT " JOB_COLUMNS " FROM jobs WHERE state NOT IN ('queued', 'running') "
                       "ORDER BY end_us DESC, id DESC LIMIT ?1",
    [S_FINISHED_UID] = "SELECT " JOB_COLUMNS " FROM jobs WHERE state NOT IN ('queued', 'running') AND uid = ?2 "
                       "ORDER BY end_us DESC, id DESC LIMIT ?1",
    [S_UNTRACED] = "SELECT " JOB_COLUMNS " FROM jobs WHERE traced = 0 AND state NOT IN ('queued', 'running') "
                   "ORDER BY end_us, id",
    [S_TRACED] = "UPDATE jobs SET traced = 1 WHERE id = ?1",
    [S_GET] = "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?1",
    [S_EVENTS_OF] = "SELECT ts_us, kind, detail FROM events WHERE job_id = ?1 ORDER BY id",
    [S_PUT_DRAIN] = "INSERT OR REPLACE INTO drains (target, kind, reason, auto, ts_us) VALUES (?1, ?2, ?3, ?4, ?5)",
    [S_DEL_DRAIN] = "DELETE FROM drains WHERE target = ?1",
    [S_DRAINS] = "SELECT target, kind, reason, auto FROM drains ORDER BY target",
    [S_META_GET] = "SELECT value FROM meta WHERE key = ?1",
    [S_META_SET] = "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
    [S_BY_KEY] = "SELECT id FROM jobs WHERE uid = ?1 AND idem_key = ?2",
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS jobs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " state TEXT NOT NULL CHECK (state IN ('queued','running','completed','failed','cancelled','timeout')),"
    " uid INTEGER NOT NULL, gid INTEGER NOT NULL, user TEXT NOT NULL, team TEXT NOT NULL, name TEXT NOT NULL,"
    " gpus INTEGER NOT NULL CHECK (gpus > 0), limit_us INTEGER NOT NULL CHECK (limit_us > 0),"
    " submit_us INTEGER NOT NULL, start_us INTEGER, end_us INTEGER, priority INTEGER NOT NULL DEFAULT 0,"
    " argv TEXT NOT NULL, env TEXT NOT NULL, cwd TEXT NOT NULL, stdout TEXT NOT NULL, stderr TEXT NOT NULL,"
    " requeue INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0,"
    " reserved_us INTEGER NOT NULL DEFAULT -1, shim_pid INTEGER, shim_start INTEGER,"
    " exit_code INTEGER, signal INTEGER, reason TEXT NOT NULL DEFAULT '',"
    " cancel_requested INTEGER NOT NULL DEFAULT 0, traced INTEGER NOT NULL DEFAULT 0,"
    " job_class INTEGER NOT NULL DEFAULT 0, attained_us INTEGER NOT NULL DEFAULT 0,"
    " preemptions INTEGER NOT NULL DEFAULT 0, first_start_us INTEGER,"
    " cpu_us INTEGER, mem_peak_bytes INTEGER, idem_key TEXT);"
    "CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state);"
    "CREATE INDEX IF NOT EXISTS jobs_untraced ON jobs (traced) WHERE traced = 0;"
    "CREATE TABLE IF NOT EXISTS allocations (job_id INTEGER NOT NULL REFERENCES jobs (id),"
    " attempt INTEGER NOT NULL, node TEXT NOT NULL, gpu_uuid TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS allocations_by_job ON allocations (job_id, attempt);"
    "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, ts_us INTEGER NOT NULL, job_id INTEGER,"
    " kind TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX IF NOT EXISTS events_by_job ON events (job_id);"
    "CREATE TABLE IF NOT EXISTS drains (target TEXT PRIMARY KEY, kind TEXT NOT NULL, reason TEXT NOT NULL,"
    " auto INTEGER NOT NULL, ts_us INTEGER NOT NULL);";

struct store {
    sqlite3 *db;
    sqlite3_stmt *stmt[S_COUNT];
    char path[4096];
    int in_tx;
    int last_rc; /* extended result code of the last error */
};

static int db_error(struct store *st, struct err *err, const char *what)
{
    if (!st->last_rc)
        st->last_rc = sqlite3_extended_errcode(st->db);
    return err_set(err, NULL, 0, 0, "state store '%s': %s: %s", st->path, what, sqlite3_errmsg(st->db));
}

static sqlite3_stmt *prep(struct store *st, enum stmt_id id, struct err *err)
{
    if (!st->stmt[id] &&
        sqlite3_prepare_v3(st->db, sql_text[id], -1, SQLITE_PREPARE_PERSISTENT, &st->stmt[id], NULL) != SQLITE_OK) {
        db_error(st, err, "cannot prepare a statement");
        return NULL;
    }
    sqlite3_reset(st->stmt[id]);
    sqlite3_clear_bindings(st->stmt[id]);
    return st->stmt[id];
}

static int run(struct store *st, sqlite3_stmt *s, struct err *err, const char *what)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        st->last_rc = rc; /* the step's own code: later calls may change the connection's */
        return db_error(st, err, what);
    }
    return 0;
}

static int exec_simple(struct store *st, enum stmt_id id, struct err *err, const char *what)
{
    sqlite3_stmt *s = prep(st, id, err);
    return s ? run(st, s, err, what) : -1;
}

/* The database and its WAL and shared-memory files hold every job's argv
 * and environment: owner-only (the umask makes new ones so; this fixes
 * files an older agent created 0644). */
static void store_make_private(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[4096 + 16];
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        struct stat sb;
        if (stat(p, &sb) == 0 && (sb.st_mode & 077) && sb.st_uid == geteuid())
            (void)chmod(p, sb.st_mode & 0700);
    }
}

int store_open(struct store **out, const char *path, struct err *err)
{
    *out = NULL;
    struct store *st = calloc(1, sizeof *st);
    if (!st)
        return err_set(err, NULL, 0, 0, "out of memory");
    snprintf(st->path, sizeof st->path, "%s", path);
    struct stat sb;
    if (stat(path, &sb) == 0 && sb.st_size == 0) {
        /* an emptied store (a full disk, a bad copy) must not pass for a new
         * one: job ids would start again at 1 */
        err_set(err, NULL, 0, 0,
                "state store '%s' is empty (0 bytes): restore it from a backup, or remove it to start a new "
                "store (job ids start again at 1)",
                path);
        store_close(st);
        return -1;
    }
    if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        err_set(err, NULL, 0, 0, "cannot open state store '%s': %s", path,
                st->db ? sqlite3_errmsg(st->db) : "out of memory");
        store_close(st);
        return -1;
    }
    sqlite3_busy_timeout(st->db, 5000);
    char *msg = NULL;
    store_make_private(path);
    /* WAL + FULL: a commit is on disk (WAL fsynced) when it returns. */
    if (sqlite3_exec(st->db,
                     "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;"
                     /* a small WAL, folded in often and cut back after: a small
                      * or nearly full disk is not filled by the journal alone */
                     "PRAGMA wal_autocheckpoint = 128; PRAGMA journal_size_limit = 1048576;"
                     "PRAGMA trusted_schema = OFF;",
                     NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(st->db, schema, NULL, NULL, &msg) != SQLITE_OK) {
        err_set(err, NULL, 0, 0, "cannot set up state store '%s': %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        store_close(st);
        return -1;
    }
    int64_t version;
    int have = store_meta_get(st, "schema_version", &version, err);
    if (have < 0) {
        store_close(st);
        return -1;
    }
    if (have && version > STORE_SCHEMA_VERSION) {
        err_set(err, NULL, 0, 0, "state store '%s' has schema version %lld; this agent knows %d: upgrade the agent",
                path, (long long)version, STORE_SCHEMA_VERSION);
        store_close(st);
        return -1;
    }
    /* version 1 -> 2: the columns the policy view needs for preemptive policies */
    if (have && version < 2 &&
        sqlite3_exec(st->db,
                     "BEGIN IMMEDIATE;"
                     "ALTER TABLE jobs ADD COLUMN job_class INTEGER NOT NULL DEFAULT 0;"
                     "ALTER TABLE jobs ADD COLUMN attained_us INTEGER NOT NULL DEFAULT 0;"
                     "ALTER TABLE jobs ADD COLUMN preemptions INTEGER NOT NULL DEFAULT 0;"
                     "ALTER TABLE jobs ADD COLUMN first_start_us INTEGER;"
                     "UPDATE jobs SET first_start_us = start_us;"
                     "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', 2);"
                     "COMMIT;",
                     NULL, NULL, &msg) != SQLITE_OK) {
        err_set(err, NULL, 0, 0, "cannot upgrade state store '%s' to schema version 2: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        store_close(st);
        return -1;
    }
    /* version 2 -> 3: the cgroup's figures and the submitter's idempotency key */
    if (have && version < 3 &&
        sqlite3_exec(st->db,
                     "BEGIN IMMEDIATE;"
                     "ALTER TABLE jobs ADD COLUMN cpu_us INTEGER;"
                     "ALTER TABLE jobs ADD COLUMN mem_peak_bytes INTEGER;"
                     "ALTER TABLE jobs ADD COLUMN idem_key TEXT;"
                     "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', 3);"
                     "COMMIT;",
                     NULL, NULL, &msg) != SQLITE_OK) {
        err_set(err, NULL, 0, 0, "cannot upgrade state store '%s' to schema version 3: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        store_close(st);
        return -1;
    }
    /* one job per (uid, key): a retried submission finds the first */
    if (sqlite3_exec(st->db,
                     "CREATE UNIQUE INDEX IF NOT EXISTS jobs_by_key ON jobs (uid, idem_key) "
                     "WHERE idem_key IS NOT NULL;",
                     NULL, NULL, &msg) != SQLITE_OK) {
        err_set(err, NULL, 0, 0, "cannot set up state store '%s': %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        store_close(st);
        return -1;
    }
    store_make_private(path);
    if (!have && store_meta_set(st, "schema_version", STORE_SCHEMA_VERSION, err) != 0) {
        store_close(st);
        return -1;
    }
    *out = st;
    return 0;
}

void store_close(struct store *st)
{
    if (!st)
        return;
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(st->stmt[i]);
    if (st->db)
        sqlite3_close(st->db);
    free(st);
}

int store_begin(struct store *st, struct err *err)
{
    st->last_rc = 0; /* a new change: an old error says nothing about it */
    if (exec_simple(st, S_BEGIN, err, "cannot begin a transaction") != 0)
        return -1;
    st->in_tx = 1;
    return 0;
}

int store_commit(struct store *st, struct err *err)
{
    if (exec_simple(st, S_COMMIT, err, "cannot commit") != 0) {
        store_rollback(st);
        return -1;
    }
    st->in_tx = 0;
    return 0;
}

void store_rollback(struct store *st)
{
    struct err ignored;
    err_clear(&ignored);
    int keep = st->last_rc; /* the error that made us roll back is the one to report */
    if (st->in_tx)
        exec_simple(st, S_ROLLBACK, &ignored, "rollback");
    st->in_tx = 0;
    st->last_rc = keep;
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
    sqlite3_bind_text(s, i, v ? v : "", -1, SQLITE_STATIC);
}

int store_insert_job(struct store *st, struct agent_job *j, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_INSERT, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, j->uid);
    sqlite3_bind_int64(s, 2, j->gid);
    bind_text(s, 3, j->user);
    bind_text(s, 4, j->team);
    bind_text(s, 5, j->name);
    sqlite3_bind_int(s, 6, j->gpus);
    sqlite3_bind_int64(s, 7, j->limit_us);
    sqlite3_bind_int64(s, 8, j->submit_us);
    sqlite3_bind_int(s, 9, j->priority);
    bind_text(s, 10, j->argv_json);
    bind_text(s, 11, j->env_json);
    bind_text(s, 12, j->cwd);
    bind_text(s, 13, j->out_path);
    bind_text(s, 14, j->err_path);
    sqlite3_bind_int(s, 15, j->requeue);
    sqlite3_bind_int(s, 16, j->job_class);
    if (j->idem_key[0])
        bind_text(s, 17, j->idem_key);
    if (run(st, s, err, "cannot record the job") != 0)
        return -1;
    j->id = sqlite3_last_insert_rowid(st->db);
    return 0;
}

int store_mark_running(struct store *st, const struct agent_job *j, const char *const *uuids,
                       const char *const *nodes, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_RUNNING, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, j->id);
    sqlite3_bind_int64(s, 2, j->start_us);
    sqlite3_bind_int(s, 3, j->attempts);
    sqlite3_bind_int(s, 4, j->shim_pid);
    sqlite3_bind_int64(s, 5, j->shim_start);
    if (run(st, s, err, "cannot mark the job running") != 0)
        return -1;
    if (sqlite3_changes(st->db) != 1)
        return err_set(err, NULL, 0, 0, "state store: job '%lld' is not queued", (long long)j->id);
    for (int32_t k = 0; k < j->n_gpu_idx; k++) {
        if (!(s = prep(st, S_ALLOC, err)))
            return -1;
        sqlite3_bind_int64(s, 1, j->id);
        sqlite3_bind_int(s, 2, j->attempts);
        bind_text(s, 3, nodes[k]);
        bind_text(s, 4, uuids[k]);
        if (run(st, s, err, "cannot record an allocation") != 0)
            return -1;
    }
    return 0;
}

int store_mark_finished(struct store *st, const struct agent_job *j, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_FINISHED, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, j->id);
    bind_text(s, 2, job_state_name(j->state));
    sqlite3_bind_int64(s, 3, j->end_us);
    if (j->exit_code >= 0)
        sqlite3_bind_int(s, 4, j->exit_code);
    else
        sqlite3_bind_null(s, 4);
    sqlite3_bind_int(s, 5, j->term_signal);
    bind_text(s, 6, j->reason);
    if (j->cpu_us >= 0)
        sqlite3_bind_int64(s, 7, j->cpu_us);
    if (j->mem_peak_bytes >= 0)
        sqlite3_bind_int64(s, 8, j->mem_peak_bytes);
    return run(st, s, err, "cannot record the job's end");
}

int store_mark_requeued(struct store *st, const struct agent_job *j, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_REQUEUED, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, j->id);
    bind_text(s, 2, j->reason);
    sqlite3_bind_int(s, 3, j->attempts);
    sqlite3_bind_int64(s, 4, j->attained_us);
    sqlite3_bind_int(s, 5, j->preemptions);
    return run(st, s, err, "cannot requeue the job");
}

int store_set_reserved(struct store *st, int64_t id, int64_t reserved_us, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_RESERVED, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int64(s, 2, reserved_us);
    return run(st, s, err, "cannot record a reservation");
}

int store_set_cancel_requested(struct store *st, int64_t id, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_CANCEL, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    return run(st, s, err, "cannot record the cancellation");
}

int store_add_event(struct store *st, int64_t ts_us, int64_t job_id, const char *kind, const char *detail,
                    struct err *err)
{
    sqlite3_stmt *s = prep(st, S_EVENT, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, ts_us);
    if (job_id > 0)
        sqlite3_bind_int64(s, 2, job_id);
    else
        sqlite3_bind_null(s, 2);
    bind_text(s, 3, kind);
    bind_text(s, 4, detail);
    return run(st, s, err, "cannot record an event");
}

static char *dup_col(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return strdup(t ? (const char *)t : "");
}

static void copy_col(sqlite3_stmt *s, int i, char *out, size_t len)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    snprintf(out, len, "%s", t ? (const char *)t : "");
}

static int64_t int_col(sqlite3_stmt *s, int i, int64_t null_value)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? null_value : sqlite3_column_int64(s, i);
}

static struct agent_job *row_to_job(sqlite3_stmt *s)
{
    struct agent_job *j = job_new();
    if (!j)
        return NULL;
    j->id = sqlite3_column_int64(s, 0);
    const unsigned char *state = sqlite3_column_text(s, 1);
    j->state = job_state_parse(state ? (const char *)state : "");
    j->uid = (uint32_t)sqlite3_column_int64(s, 2);
    j->gid = (uint32_t)sqlite3_column_int64(s, 3);
    copy_col(s, 4, j->user, sizeof j->user);
    copy_col(s, 5, j->team, sizeof j->team);
    copy_col(s, 6, j->name, sizeof j->name);
    j->gpus = sqlite3_column_int(s, 7);
    j->limit_us = sqlite3_column_int64(s, 8);
    j->submit_us = sqlite3_column_int64(s, 9);
    j->start_us = int_col(s, 10, -1);
    j->end_us = int_col(s, 11, -1);
    j->priority = sqlite3_column_int(s, 12);
    j->argv_json = dup_col(s, 13);
    j->env_json = dup_col(s, 14);
    j->cwd = dup_col(s, 15);
    j->out_path = dup_col(s, 16);
    j->err_path = dup_col(s, 17);
    j->requeue = sqlite3_column_int(s, 18);
    j->attempts = sqlite3_column_int(s, 19);
    j->reserved_us = sqlite3_column_int64(s, 20);
    j->shim_pid = (int32_t)int_col(s, 21, 0);
    j->shim_start = int_col(s, 22, 0);
    j->exit_code = (int)int_col(s, 23, -1);
    j->term_signal = (int)int_col(s, 24, 0);
    copy_col(s, 25, j->reason, sizeof j->reason);
    j->cancel_requested = sqlite3_column_int(s, 26);
    j->job_class = sqlite3_column_int(s, 27);
    j->attained_us = sqlite3_column_int64(s, 28);
    j->preemptions = sqlite3_column_int(s, 29);
    j->first_start_us = int_col(s, 30, -1);
    j->cpu_us = int_col(s, 31, -1);
    j->mem_peak_bytes = int_col(s, 32, -1);
    copy_col(s, 33, j->idem_key, sizeof j->idem_key);
    if (!j->argv_json || !j->env_json || !j->cwd || !j->out_path || !j->err_path || j->state < 0) {
        job_free(j);
        return NULL;
    }
    return j;
}

/* The uuids of a job's attempt, as a malloc'd array of malloc'd strings. */
static int load_allocs(struct store *st, int64_t id, int32_t attempt, char ***uuids, size_t *n, struct err *err)
{
    *uuids = NULL;
    *n = 0;
    sqlite3_stmt *s;
    if (!(s = prep(st, S_ALLOCS_OF, err)))
        return -1;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int(s, 2, attempt);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            char **u = realloc(*uuids, cap * sizeof *u);
            if (!u)
                break;
            *uuids = u;
        }
        (*uuids)[*n] = dup_col(s, 0);
        if (!(*uuids)[*n])
            break;
        (*n)++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        for (size_t k = 0; k < *n; k++)
            free((*uuids)[k]);
        free(*uuids);
        *uuids = NULL;
        *n = 0;
        return rc == SQLITE_ROW ? err_set(err, NULL, 0, 0, "out of memory") : db_error(st, err, "cannot read allocations");
    }
    return 0;
}

/* Runs the query s (bound), collecting rows first so that the callback may
 * use the store. */
static int walk(struct store *st, sqlite3_stmt *s, int with_allocs, store_job_fn fn, void *ctx, struct err *err)
{
    struct agent_job **rows = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct agent_job **r = realloc(rows, cap * sizeof *r);
            if (!r)
                break;
            rows = r;
        }
        if (!(rows[n] = row_to_job(s)))
            break;
        n++;
    }
    sqlite3_reset(s);
    int result = 0;
    if (rc != SQLITE_DONE)
        result = rc == SQLITE_ROW ? err_set(err, NULL, 0, 0, "out of memory or a corrupt job row")
                                  : db_error(st, err, "cannot read jobs");
    size_t i = 0;
    for (; i < n && result == 0; i++) {
        char **uuids = NULL;
        size_t nu = 0;
        if (with_allocs && rows[i]->attempts > 0 &&
            load_allocs(st, rows[i]->id, rows[i]->attempts, &uuids, &nu, err) != 0) {
            result = -1;
            break;
        }
        struct agent_job *j = rows[i];
        rows[i] = NULL;
        result = fn(ctx, j, uuids, nu);
        for (size_t k = 0; k < nu; k++)
            free(uuids[k]);
        free(uuids);
    }
    for (size_t k = 0; k < n; k++)
        job_free(rows[k]);
    free(rows);
    return result;
}

int store_load_active(struct store *st, store_job_fn fn, void *ctx, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_ACTIVE, err);
    return s ? walk(st, s, 1, fn, ctx, err) : -1;
}

int store_load_finished(struct store *st, int64_t uid, int64_t limit, store_job_fn fn, void *ctx, struct err *err)
{
    sqlite3_stmt *s = prep(st, uid < 0 ? S_FINISHED_ALL : S_FINISHED_UID, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, limit > 0 ? limit : -1);
    if (uid >= 0)
        sqlite3_bind_int64(s, 2, uid);
    return walk(st, s, 1, fn, ctx, err);
}

int store_load_untraced(struct store *st, store_job_fn fn, void *ctx, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_UNTRACED, err);
    return s ? walk(st, s, 1, fn, ctx, err) : -1;
}

int store_mark_traced(struct store *st, int64_t id, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_TRACED, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    return run(st, s, err, "cannot mark the job traced");
}

struct found {
    store_job_fn fn;
    void *ctx;
    int n;
};

static int count_found(void *ctx, struct agent_job *j, char **uuids, size_t n)
{
    struct found *f = ctx;
    f->n++;
    return f->fn(f->ctx, j, uuids, n);
}

int store_get_job(struct store *st, int64_t id, store_job_fn fn, void *ctx, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_GET, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    struct found f = {fn, ctx, 0};
    if (walk(st, s, 1, count_found, &f, err) != 0)
        return -1;
    return f.n > 0;
}

int store_job_events(struct store *st, int64_t id, store_event_fn fn, void *ctx, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_EVENTS_OF, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        fn(ctx, sqlite3_column_int64(s, 0), (const char *)sqlite3_column_text(s, 1),
           (const char *)sqlite3_column_text(s, 2));
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : db_error(st, err, "cannot read events");
}

int store_put_drain(struct store *st, const char *target, const char *kind, const char *reason, int is_auto,
                    int64_t ts_us, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_PUT_DRAIN, err);
    if (!s)
        return -1;
    bind_text(s, 1, target);
    bind_text(s, 2, kind);
    bind_text(s, 3, reason);
    sqlite3_bind_int(s, 4, is_auto);
    sqlite3_bind_int64(s, 5, ts_us);
    return run(st, s, err, "cannot record a drain");
}

int store_del_drain(struct store *st, const char *target, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_DEL_DRAIN, err);
    if (!s)
        return -1;
    bind_text(s, 1, target);
    return run(st, s, err, "cannot remove a drain");
}

int store_load_drains(struct store *st, store_drain_fn fn, void *ctx, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_DRAINS, err);
    if (!s)
        return -1;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        fn(ctx, (const char *)sqlite3_column_text(s, 0), (const char *)sqlite3_column_text(s, 1),
           (const char *)sqlite3_column_text(s, 2), sqlite3_column_int(s, 3));
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : db_error(st, err, "cannot read drains");
}

int store_meta_get(struct store *st, const char *key, int64_t *value, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_META_GET, err);
    if (!s)
        return -1;
    bind_text(s, 1, key);
    int rc = sqlite3_step(s);
    int found = rc == SQLITE_ROW;
    if (found)
        *value = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_error(st, err, "cannot read meta");
    return found;
}

int store_meta_set(struct store *st, const char *key, int64_t value, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_META_SET, err);
    if (!s)
        return -1;
    bind_text(s, 1, key);
    sqlite3_bind_int64(s, 2, value);
    return run(st, s, err, "cannot write meta");
}

int store_find_key(struct store *st, uint32_t uid, const char *key, int64_t *id, struct err *err)
{
    sqlite3_stmt *s = prep(st, S_BY_KEY, err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, uid);
    bind_text(s, 2, key);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_error(st, err, "cannot look up an idempotency key");
    return rc == SQLITE_ROW;
}

int store_cannot_write(const struct store *st)
{
    int rc = st->last_rc & 0xff;
    return rc == SQLITE_FULL || rc == SQLITE_IOERR || rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN;
}

void store_clear_error(struct store *st)
{
    st->last_rc = 0;
}

void store_checkpoint(struct store *st)
{
    (void)sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
}
