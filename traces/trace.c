#include "traces/trace.h"

#include <stdlib.h>
#include <string.h>

#include "traces/jsonl.h"
#include "traces/sacct.h"
#include "traces/textfile.h"

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

/* A sacct -P export opens with its "JobID...|..." header; a JSON Lines trace
 * with '{'; an SWF log with ';' or a digit. */
static enum trace_format trace_format_from_content(const char *data, size_t len)
{
    if (sacct_detect(data, len))
        return TRACE_SACCT;
    size_t i = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
        i++;
    return i < len && data[i] == '{' ? TRACE_JSONL : TRACE_SWF;
}

int trace_read(const char *path, enum trace_format fmt, enum swf_convention conv, struct workload *w,
               struct diag_list *diags, struct err *err)
{
    char *data;
    size_t len;
    if (textfile_load(path, &data, &len, diags, err) != 0)
        return -1;
    if (fmt == TRACE_AUTO)
        fmt = trace_format_from_name(path);
    if (fmt == TRACE_AUTO)
        fmt = trace_format_from_content(data, len);
    int rc = fmt == TRACE_JSONL   ? jsonl_read_buffer(path, data, len, w, diags, err)
             : fmt == TRACE_SACCT ? sacct_read_buffer(path, data, len, w, diags, err)
                                  : swf_read_buffer(path, data, len, conv, w, diags, err);
    free(data);
    return rc;
}
