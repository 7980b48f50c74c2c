#include "agent/record.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/units.h"
#include "sim/buffers.h"

void record_init(struct record *r)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

int record_status_code(int state)
{
    switch (state) {
    case JOB_COMPLETED: return 1;
    case JOB_CANCELLED: return 5;
    default: return 0;
    }
}

/* Cuts a torn last line (no '\n') left by a crash mid-write. */
static int cut_torn_tail(int fd, off_t size)
{
    char tail[4096];
    off_t pos = size;
    while (pos > 0) {
        size_t chunk = pos > (off_t)sizeof tail ? sizeof tail : (size_t)pos;
        pos -= (off_t)chunk;
        if (pread(fd, tail, chunk, pos) != (ssize_t)chunk)
            return -1;
        for (size_t i = chunk; i > 0; i--)
            if (tail[i - 1] == '\n') {
                off_t keep = pos + (off_t)i;
                return keep == size ? 0 : ftruncate(fd, keep);
            }
    }
    return ftruncate(fd, 0);
}

int record_open(struct record *r, const char *path, int64_t epoch_s, uint32_t n_nodes, int64_t n_gpus,
                struct err *err)
{
    record_close(r);
    snprintf(r->path, sizeof r->path, "%s", path);
    r->epoch_s = epoch_s;
    r->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (r->fd < 0)
        return err_set(err, NULL, 0, 0, "cannot open trace '%s': %s", path, strerror(errno));
    struct stat sb;
    /* users' names, teams and job names: owner-only, also in an older file */
    if (fstat(r->fd, &sb) == 0 && (sb.st_mode & 077) && sb.st_uid == geteuid())
        (void)fchmod(r->fd, 0600);
    if (fstat(r->fd, &sb) != 0 || cut_torn_tail(r->fd, sb.st_size) != 0 || fstat(r->fd, &sb) != 0)
        return err_set(err, NULL, 0, 0, "cannot repair trace '%s': %s", path, strerror(errno));
    if (sb.st_size == 0) {
        char head[256];
        int n = snprintf(head, sizeof head, "{\"fleetsim_trace\":1,\"max_nodes\":%u,\"max_procs\":%lld,"
                                            "\"unix_start_s\":%lld}\n",
                         n_nodes, (long long)n_gpus, (long long)epoch_s);
        if (buffers_write_all(r->fd, head, (size_t)n) != 0 || fdatasync(r->fd) != 0)
            return err_set(err, NULL, 0, 0, "cannot write trace '%s': %s", path, strerror(errno));
    }
    return 0;
}

void record_close(struct record *r)
{
    if (r->fd >= 0)
        close(r->fd);
    free(r->ids);
    int64_t epoch = r->epoch_s;
    record_init(r);
    r->epoch_s = epoch;
}

static void seconds(struct buf *out, const char *key, int64_t us)
{
    char s[40];
    units_format_seconds(s, sizeof s, us < 0 ? 0 : us);
    buf_printf(out, ",\"%s\":%s", key, s);
}

static void string_value(struct buf *out, const char *key, const char *s)
{
    json_t *j = json_string(s);
    char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    if (!text) {
        out->oom = 1;
        return;
    }
    buf_printf(out, ",\"%s\":%s", key, text);
    free(text);
}

int record_format(struct buf *out, const struct agent_job *j, int64_t epoch_s, const char *const *placement, size_t n)
{
    int64_t base = epoch_s * 1000000;
    buf_printf(out, "{\"id\":%lld", (long long)j->id);
    seconds(out, "submit_s", j->submit_us - base);
    int64_t run = j->end_us >= j->start_us ? j->end_us - j->start_us : 0;
    seconds(out, "runtime_s", run);
    seconds(out, "limit_s", j->limit_us > 0 ? j->limit_us : 1);
    buf_printf(out, ",\"gpus\":%d", j->gpus);
    if (j->nodes > 0)
        buf_printf(out, ",\"nodes\":%d", j->nodes);
    string_value(out, "user", j->user);
    if (j->team[0])
        string_value(out, "team", j->team);
    buf_printf(out, ",\"status\":%d", record_status_code(j->state));
    /* the first attempt's start: a preempted job's replay starts it then too */
    seconds(out, "start_s", (j->first_start_us >= 0 ? j->first_start_us : j->start_us) - base);
    seconds(out, "end_s", j->end_us - base);
    if (j->exit_code >= 0)
        buf_printf(out, ",\"exit\":%d", j->exit_code);
    else if (j->term_signal > 0)
        buf_printf(out, ",\"exit\":%d", 128 + j->term_signal);
    if (j->name[0])
        string_value(out, "name", j->name);
    buf_puts(out, ",\"placement\":[");
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_string(placement[i]);
        char *text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
        json_decref(s);
        if (!text) {
            out->oom = 1;
            break;
        }
        buf_printf(out, "%s%s", i ? "," : "", text);
        free(text);
    }
    buf_puts(out, "]}\n");
    return out->oom ? -1 : 0;
}

int record_append(struct record *r, const struct agent_job *j, const char *const *placement, size_t n,
                  struct err *err)
{
    struct buf line;
    buf_init(&line);
    if (record_format(&line, j, r->epoch_s, placement, n) != 0) {
        buf_release(&line);
        return err_set(err, NULL, 0, 0, "out of memory");
    }
    int rc = buffers_write_all(r->fd, line.data, line.len);
    buf_release(&line);
    if (rc != 0)
        return err_set(err, NULL, 0, 0, "cannot append to trace '%s': %s", r->path, strerror(errno));
    return 0;
}

int record_sync(struct record *r, struct err *err)
{
    if (r->fd >= 0 && fdatasync(r->fd) != 0)
        return err_set(err, NULL, 0, 0, "cannot sync trace '%s': %s", r->path, strerror(errno));
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void load_ids(struct record *r)
{
    r->ids_loaded = 1;
    FILE *f = fopen(r->path, "r");
    if (!f)
        return;
    size_t cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t n;
    while ((n = getline(&line, &lcap, f)) > 0) {
        long long id;
        if (sscanf(line, "{\"id\":%lld", &id) != 1)
            continue;
        if (r->n_ids == cap) {
            cap = cap ? cap * 2 : 1024;
            int64_t *ids = realloc(r->ids, cap * sizeof *ids);
            if (!ids)
                break;
            r->ids = ids;
        }
        r->ids[r->n_ids++] = id;
    }
    free(line);
    fclose(f);
    if (r->n_ids > 1)
        qsort(r->ids, r->n_ids, sizeof *r->ids, cmp_id);
}

int record_has(struct record *r, int64_t id)
{
    if (!r->ids_loaded)
        load_ids(r);
    return r->n_ids && bsearch(&id, r->ids, r->n_ids, sizeof *r->ids, cmp_id) != NULL;
}
