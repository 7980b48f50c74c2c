#include "traces/trace.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "traces/helios.h"
#include "traces/itp.h"
#include "traces/jsonl.h"
#include "traces/machines.h"
#include "traces/openb.h"
#include "traces/pai.h"
#include "traces/philly.h"
#include "traces/sacct.h"
#include "traces/textfile.h"

static const char *const trace_format_names[TRACE_FORMATS] = {"auto",   "swf", "jsonl", "sacct", "philly",
                                                                "helios", "pai", "openb", "itp"};

const char *trace_format_name(enum trace_format fmt)
{
    return fmt >= 0 && fmt < TRACE_FORMATS ? trace_format_names[fmt] : "?";
}

int trace_format_parse(const char *name, enum trace_format *fmt)
{
    for (int f = 0; f < TRACE_FORMATS; f++)
        if (strcmp(name, trace_format_names[f]) == 0) {
            *fmt = (enum trace_format)f;
            return 0;
        }
    if (strcmp(name, "acme") == 0) { /* Acme's trace_*.csv follow Helios' columns */
        *fmt = TRACE_HELIOS;
        return 0;
    }
    return -1;
}

int trace_format_is_gpu(enum trace_format fmt)
{
    return fmt >= TRACE_PHILLY && fmt < TRACE_FORMATS;
}

static int trace_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    if (k > n)
        return 0;
    for (size_t i = 0; i < k; i++) {
        char c = s[n - k + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a'); /* "LOG.SWF" from old systems counts */
        if (c != suffix[i])
            return 0;
    }
    return 1;
}

enum trace_format trace_format_from_name(const char *path)
{
    static const char *const swf[] = {".swf", ".swf.gz"};
    static const char *const jsonl[] = {".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz"};
    if (!path)
        return TRACE_AUTO;
    for (size_t i = 0; i < sizeof swf / sizeof *swf; i++)
        if (trace_ends_with(path, swf[i]))
            return TRACE_SWF;
    for (size_t i = 0; i < sizeof jsonl / sizeof *jsonl; i++)
        if (trace_ends_with(path, jsonl[i]))
            return TRACE_JSONL;
    return TRACE_AUTO;
}

/* Not a format: a CSV header that no reader knows (an error under auto). */
enum { TRACE_UNKNOWN_CSV = TRACE_FORMATS, TRACE_MACHINE_LIST };

/* A sacct -P export opens with its "JobID...|..." header; a Philly job log
 * with '['; a JSON Lines trace with '{'; the GPU CSVs with their headers (a
 * PAI job table has none: six fields, the fourth its status); an SWF log
 * with ';' or a digit, so a first line that holds a comma and starts with a
 * letter is a CSV header that no reader knows. */
static int trace_format_from_content(const char *data, size_t len)
{
    if (sacct_detect(data, len))
        return TRACE_SACCT;
    if (philly_detect(data, len))
        return TRACE_PHILLY;
    if (itp_detect(data, len))
        return TRACE_ITP;
    if (openb_detect(data, len))
        return TRACE_OPENB;
    if (helios_detect(data, len))
        return TRACE_HELIOS;
    if (pai_detect(data, len))
        return TRACE_PAI;
    if (machines_detect(data, len))
        return TRACE_MACHINE_LIST;
    size_t i = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
        i++;
    if (i < len && data[i] == '{')
        return TRACE_JSONL;
    const char *nl = memchr(data + i, '\n', len - i);
    size_t first = nl ? (size_t)(nl - (data + i)) : len - i;
    if (i < len && (isalpha((unsigned char)data[i]) || data[i] == '_' || data[i] == '"') &&
        memchr(data + i, ',', first))
        return TRACE_UNKNOWN_CSV;
    return TRACE_SWF;
}

static int trace_unknown_csv(const char *path, const char *data, size_t len, int machine_list,
                             struct diag_list *diags, struct err *err)
{
    size_t i = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < len && (data[i] == '\r' || data[i] == '\n'))
        i++;
    const char *nl = memchr(data + i, '\n', len - i);
    size_t n = nl ? (size_t)(nl - (data + i)) : len - i;
    if (n && data[i + n - 1] == '\r')
        n--;
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, data + i, n);
    if (machine_list) {
        diag_add(diags, DIAG_ERROR, path, 1, 1,
                 "'%s' is a machine list, not a job trace: give it to 'fleetsim replay --machines'", path);
        return err_set(err, path, 1, 1, "'%s' is a machine list, not a job trace", path);
    }
    diag_add(diags, DIAG_ERROR, path, 1, 1, "unrecognised CSV header '%s'; formats: %s", q,
             TRACE_FORMAT_NAMES " (see fleetsim-trace(5))");
    return err_set(err, path, 1, 1, "unrecognised CSV header '%s'", q);
}

/* The PAI job table, joined with the task table beside it. */
static int trace_read_pai(const char *path, const char *data, size_t len, struct workload *w,
                          struct diag_list *diags, struct err *err)
{
    char task[4096];
    if (pai_task_path(path, task, sizeof task) != 0) {
        diag_add(diags, DIAG_ERROR, path, 0, 0,
                 "a PAI job table needs its task table beside it: name them pai_job_table.csv and "
                 "pai_task_table.csv");
        return err_set(err, path, 0, 0, "no task table for the PAI job table '%s'", path);
    }
    char *tdata;
    size_t tlen;
    if (textfile_load(task, &tdata, &tlen, diags, err) != 0)
        return -1;
    int rc = pai_read_buffers(path, data, len, task, tdata, tlen, w, diags, err);
    free(tdata);
    return rc;
}

int trace_read_format(const char *path, enum trace_format fmt, enum swf_convention conv, struct workload *w,
                      struct diag_list *diags, struct err *err, enum trace_format *used)
{
    int f = fmt;
    if (f == TRACE_AUTO)
        f = trace_format_from_name(path);
    if (f == TRACE_SWF) {
        /* known without its text: a gzip'd log is parsed as it inflates */
        if (used)
            *used = TRACE_SWF;
        return swf_read(path, conv, w, diags, err);
    }
    char *data;
    size_t len;
    if (textfile_load(path, &data, &len, diags, err) != 0)
        return -1;
    if (f == TRACE_AUTO)
        f = trace_format_from_content(data, len);
    if (used)
        *used = f < TRACE_FORMATS ? (enum trace_format)f : TRACE_AUTO;
    int rc;
    switch (f) {
    case TRACE_JSONL:
        rc = jsonl_read_buffer(path, data, len, w, diags, err);
        break;
    case TRACE_SACCT:
        rc = sacct_read_buffer(path, data, len, w, diags, err);
        break;
    case TRACE_PHILLY:
        rc = philly_read_buffer(path, data, len, w, diags, err);
        break;
    case TRACE_HELIOS:
        rc = helios_read_buffer(path, data, len, w, diags, err);
        break;
    case TRACE_PAI:
        rc = trace_read_pai(path, data, len, w, diags, err);
        break;
    case TRACE_OPENB:
        rc = openb_read_buffer(path, data, len, w, diags, err);
        break;
    case TRACE_ITP:
        rc = itp_read_buffer(path, data, len, w, diags, err);
        break;
    case TRACE_UNKNOWN_CSV:
    case TRACE_MACHINE_LIST:
        rc = trace_unknown_csv(path, data, len, f == TRACE_MACHINE_LIST, diags, err);
        break;
    default:
        rc = swf_read_buffer(path, data, len, conv, w, diags, err);
        break;
    }
    free(data);
    return rc;
}

int trace_read(const char *path, enum trace_format fmt, enum swf_convention conv, struct workload *w,
               struct diag_list *diags, struct err *err)
{
    return trace_read_format(path, fmt, conv, w, diags, err, NULL);
}
