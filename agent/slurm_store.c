#include "agent/slurm_store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/buffers.h"

static const char schema[] =
    "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA trusted_schema = OFF;"
    "PRAGMA wal_autocheckpoint = 128;"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS decisions (job_id INTEGER NOT NULL, attempt INTEGER NOT NULL,"
    " nodes TEXT NOT NULL, decided_us INTEGER NOT NULL, released INTEGER NOT NULL DEFAULT 0,"
    " start_s INTEGER NOT NULL DEFAULT 0, placement TEXT NOT NULL DEFAULT '', PRIMARY KEY (job_id, attempt));"
    "CREATE TABLE IF NOT EXISTS preemptions (job_id INTEGER NOT NULL, attempt INTEGER NOT NULL,"
    " at_us INTEGER NOT NULL, PRIMARY KEY (job_id, attempt));"
    "CREATE TABLE IF NOT EXISTS traced (job_id INTEGER PRIMARY KEY);"
    "CREATE TABLE IF NOT EXISTS seen (job_id INTEGER PRIMARY KEY, first_seen_us INTEGER NOT NULL);";

static int db_fail(struct slurm_store *s, struct err *err, const char *what)
{
    return err_set(err, NULL, 0, 0, "slurm state store: %s: %s", what, sqlite3_errmsg(s->db));
}

static int cmp_decision(const void *a, const void *b)
{
    const struct slurm_decision *x = a, *y = b;
    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    return (x->attempt > y->attempt) - (x->attempt < y->attempt);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Inserts v into the sorted set (no duplicates). */
static int set_add(int64_t **v, uint32_t *n, uint32_t *cap, int64_t x)
{
    if (*n && bsearch(&x, *v, *n, sizeof **v, cmp_i64))
        return 0;
    if (buffers_grow((void **)v, cap, *n + 1, sizeof **v) != 0)
        return -1;
    uint32_t i = *n;
    while (i > 0 && (*v)[i - 1] > x) {
        (*v)[i] = (*v)[i - 1];
        i--;
    }
    (*v)[i] = x;
    (*n)++;
    return 0;
}

static int64_t preempt_key(int64_t job_id, int32_t attempt)
{
    return job_id * 65536 + (attempt & 0xffff);
}

static void copy_text(char *dst, size_t size, const unsigned char *src)
{
    snprintf(dst, size, "%s", src ? (const char *)src : "");
}

int slurm_store_open(struct slurm_store *s, const char *path, int64_t now_s, struct err *err)
{
    memset(s, 0, sizeof *s);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        err_set(err, NULL, 0, 0, "cannot open the slurm state store '%s': %s", path,
                db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return -1;
    }
    s->db = db;
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(s, err, "schema");
        slurm_store_close(s);
        return -1;
    }
    char sql[160];
    snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO meta (key, value) VALUES ('epoch_s', %lld)", (long long)now_s);
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'epoch_s'", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        db_fail(s, err, "meta");
        slurm_store_close(s);
        return -1;
    }
    s->epoch_s = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT job_id, attempt, nodes, decided_us, released, start_s, placement FROM decisions "
                           "ORDER BY job_id, attempt",
                           -1, &st, NULL) != SQLITE_OK)
        goto fail;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (buffers_grow((void **)&s->rows, &s->cap, s->n + 1, sizeof *s->rows) != 0)
            goto fail;
        struct slurm_decision *d = &s->rows[s->n++];
        memset(d, 0, sizeof *d);
        d->job_id = sqlite3_column_int64(st, 0);
        d->attempt = sqlite3_column_int(st, 1);
        copy_text(d->nodes, sizeof d->nodes, sqlite3_column_text(st, 2));
        d->decided_us = sqlite3_column_int64(st, 3);
        d->released = sqlite3_column_int(st, 4);
        d->start_s = sqlite3_column_int64(st, 5);
        copy_text(d->placement, sizeof d->placement, sqlite3_column_text(st, 6));
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT job_id, attempt FROM preemptions", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    while (sqlite3_step(st) == SQLITE_ROW)
        if (set_add(&s->preempted, &s->n_preempted, &s->cap_preempted,
                    preempt_key(sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1))) != 0)
            goto fail;
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT job_id, first_seen_us FROM seen ORDER BY job_id", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (buffers_grow((void **)&s->seen, &s->cap_seen, s->n_seen + 1, sizeof *s->seen) != 0)
            goto fail;
        s->seen[s->n_seen++] = (struct slurm_seen){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)};
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT job_id FROM traced", -1, &st, NULL) != SQLITE_OK)
        goto fail;
    while (sqlite3_step(st) == SQLITE_ROW)
        if (set_add(&s->traced, &s->n_traced, &s->cap_traced, sqlite3_column_int64(st, 0)) != 0)
            goto fail;
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    db_fail(s, err, "loading");
    slurm_store_close(s);
    return -1;
}

void slurm_store_close(struct slurm_store *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    free(s->rows);
    free(s->preempted);
    free(s->traced);
    free(s->seen);
    memset(s, 0, sizeof *s);
}

struct slurm_decision *slurm_store_find(struct slurm_store *s, int64_t job_id, int32_t attempt)
{
    struct slurm_decision key = {.job_id = job_id, .attempt = attempt};
    return s->n ? bsearch(&key, s->rows, s->n, sizeof *s->rows, cmp_decision) : NULL;
}

/* The first row of job_id, or n. */
static size_t first_row(const struct slurm_store *s, int64_t job_id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->rows[mid].job_id < job_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t slurm_store_first_decided(const struct slurm_store *s, int64_t job_id)
{
    size_t i = first_row(s, job_id);
    return i < s->n && s->rows[i].job_id == job_id ? s->rows[i].decided_us : -1;
}

static int exec_sql(struct slurm_store *s, const char *sql, struct err *err)
{
    return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : db_fail(s, err, sql);
}

static int cmp_seen(const void *a, const void *b)
{
    int64_t x = ((const struct slurm_seen *)a)->job_id, y = ((const struct slurm_seen *)b)->job_id;
    return (x > y) - (x < y);
}

int64_t slurm_store_seen(const struct slurm_store *s, int64_t job_id)
{
    struct slurm_seen key = {job_id, 0};
    const struct slurm_seen *e = s->n_seen ? bsearch(&key, s->seen, s->n_seen, sizeof key, cmp_seen) : NULL;
    return e ? e->first_seen_us : -1;
}

int slurm_store_add_seen(struct slurm_store *s, int64_t job_id, int64_t at_us, struct err *err)
{
    if (slurm_store_seen(s, job_id) >= 0)
        return 0;
    char sql[128];
    snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO seen (job_id, first_seen_us) VALUES (%lld, %lld)",
             (long long)job_id, (long long)at_us);
    if (exec_sql(s, sql, err) != 0)
        return -1;
    if (buffers_grow((void **)&s->seen, &s->cap_seen, s->n_seen + 1, sizeof *s->seen) != 0)
        return err_set(err, NULL, 0, 0, "out of memory");
    uint32_t i = s->n_seen++;
    while (i > 0 && s->seen[i - 1].job_id > job_id) {
        s->seen[i] = s->seen[i - 1];
        i--;
    }
    s->seen[i] = (struct slurm_seen){job_id, at_us};
    return 0;
}

int32_t slurm_store_attempts(const struct slurm_store *s, int64_t job_id)
{
    int32_t n = 0;
    for (size_t i = first_row(s, job_id); i < s->n && s->rows[i].job_id == job_id; i++)
        n++;
    return n;
}

int slurm_store_begin(struct slurm_store *s, struct err *err)
{
    return exec_sql(s, "BEGIN IMMEDIATE", err);
}

int slurm_store_commit(struct slurm_store *s, struct err *err)
{
    if (exec_sql(s, "COMMIT", err) != 0) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

int slurm_store_add_decision(struct slurm_store *s, const struct slurm_decision *d, struct err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "INSERT INTO decisions (job_id, attempt, nodes, decided_us) VALUES (?, ?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "decision");
    sqlite3_bind_int64(st, 1, d->job_id);
    sqlite3_bind_int(st, 2, d->attempt);
    sqlite3_bind_text(st, 3, d->nodes, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, d->decided_us);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(s, err, "decision");
    if (buffers_grow((void **)&s->rows, &s->cap, s->n + 1, sizeof *s->rows) != 0)
        return err_set(err, NULL, 0, 0, "out of memory");
    uint32_t i = s->n;
    while (i > 0 && cmp_decision(&s->rows[i - 1], d) > 0) {
        s->rows[i] = s->rows[i - 1];
        i--;
    }
    s->rows[i] = *d;
    s->n++;
    return 0;
}

static int update_row(struct slurm_store *s, const char *sql, int64_t job_id, int32_t attempt, int64_t value,
                      const char *text, struct err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "update");
    sqlite3_bind_int64(st, 1, value);
    sqlite3_bind_text(st, 2, text ? text : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, job_id);
    sqlite3_bind_int(st, 4, attempt);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_fail(s, err, "update");
}

int slurm_store_mark_released(struct slurm_store *s, int64_t job_id, int32_t attempt, struct err *err)
{
    struct slurm_decision *d = slurm_store_find(s, job_id, attempt);
    if (!d || d->released)
        return 0;
    if (update_row(s, "UPDATE decisions SET released = ?1 WHERE ?2 IS NOT NULL AND job_id = ?3 AND attempt = ?4",
                   job_id, attempt, 1, NULL, err) != 0)
        return -1;
    d->released = 1;
    return 0;
}

int slurm_store_set_started(struct slurm_store *s, int64_t job_id, int32_t attempt, int64_t start_s,
                            const char *placement, struct err *err)
{
    struct slurm_decision *d = slurm_store_find(s, job_id, attempt);
    if (!d)
        return 0;
    if (update_row(s, "UPDATE decisions SET start_s = ?1, placement = ?2, released = 1 WHERE job_id = ?3 AND attempt = ?4",
                   job_id, attempt, start_s, placement, err) != 0)
        return -1;
    d->start_s = start_s;
    d->released = 1;
    snprintf(d->placement, sizeof d->placement, "%s", placement ? placement : "");
    return 0;
}

int slurm_store_add_preemption(struct slurm_store *s, int64_t job_id, int32_t attempt, int64_t at_us,
                               struct err *err)
{
    char sql[160];
    snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO preemptions (job_id, attempt, at_us) VALUES (%lld, %d, %lld)",
             (long long)job_id, attempt, (long long)at_us);
    if (exec_sql(s, sql, err) != 0)
        return -1;
    return set_add(&s->preempted, &s->n_preempted, &s->cap_preempted, preempt_key(job_id, attempt)) == 0
               ? 0
               : err_set(err, NULL, 0, 0, "out of memory");
}

int slurm_store_preempted(const struct slurm_store *s, int64_t job_id, int32_t attempt)
{
    int64_t k = preempt_key(job_id, attempt);
    return s->n_preempted && bsearch(&k, s->preempted, s->n_preempted, sizeof k, cmp_i64) != NULL;
}

int slurm_store_mark_traced(struct slurm_store *s, int64_t job_id, struct err *err)
{
    char sql[96];
    snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO traced (job_id) VALUES (%lld)", (long long)job_id);
    if (exec_sql(s, sql, err) != 0)
        return -1;
    return set_add(&s->traced, &s->n_traced, &s->cap_traced, job_id) == 0 ? 0
                                                                           : err_set(err, NULL, 0, 0, "out of memory");
}

int slurm_store_traced(const struct slurm_store *s, int64_t job_id)
{
    return s->n_traced && bsearch(&job_id, s->traced, s->n_traced, sizeof job_id, cmp_i64) != NULL;
}
