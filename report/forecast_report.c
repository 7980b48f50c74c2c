#include "report/forecast_report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "report/forecast_charts.h"
#include "report/forecast_data.h"
#include "report/forecast_digest.h"
#include "report/forecast_html.h"
#include "report/gnuplot.h"

enum { MAX_CHARTS = 16 };

/* mkdir -p: creates dir and its missing parents. */
static int make_dirs(const char *dir, struct err *err)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s", dir) >= sizeof path || !path[0])
        return err_set(err, dir, 0, 0, "bad report folder name");
    for (char *p = path + 1;; p++) {
        char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return err_set(err, path, 0, 0, "cannot create folder: %s", strerror(errno));
            *p = c;
        }
        if (!c)
            break;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return err_set(err, dir, 0, 0, "not a folder");
    return 0;
}

static void note_failure(struct report_status *st, const struct err *e)
{
    st->charts_failed++;
    if (!st->first_gnuplot_error[0])
        err_format(e, st->first_gnuplot_error, sizeof st->first_gnuplot_error);
}

int forecast_report_write(const char *dir, const struct forecast_result *r, const struct plan_summary *plan,
                          struct report_status *st, struct err *err)
{
    memset(st, 0, sizeof *st);
    if (make_dirs(dir, err))
        return -1;
    struct forecast_digest d;
    if (forecast_digest_init(&d, r, plan, err))
        return -1;
    int rc = -1;
    if (forecast_data_write(dir, &d, err))
        goto out;
    const struct forecast_chart *charts[MAX_CHARTS];
    int drawn[MAX_CHARTS] = {0};
    size_t n = forecast_charts_list(&d, charts, MAX_CHARTS);
    for (size_t i = 0; i < n; i++)
        if (charts[i]->write(dir, &d, err))
            goto out;
    char version[128];
    if (n && !gnuplot_probe(version, sizeof version)) {
        st->gnuplot_missing = 1;
        snprintf(st->first_gnuplot_error, sizeof st->first_gnuplot_error,
                 "gnuplot not found (install gnuplot-nox): charts not drawn");
    }
    for (size_t i = 0; i < n; i++) {
        char script[128], image[128], path[4200];
        snprintf(script, sizeof script, "%s.gp", charts[i]->name);
        snprintf(image, sizeof image, "%s.svg", charts[i]->name);
        if (!st->gnuplot_missing) {
            struct err ge;
            err_clear(&ge);
            if (gnuplot_render(dir, script, image, GNUPLOT_TIMEOUT_S, &ge) == 0) {
                drawn[i] = 1;
                st->charts_written++;
                continue;
            }
            note_failure(st, &ge);
        }
        /* An image from an earlier run would not match the data beside it. */
        snprintf(path, sizeof path, "%s/%s", dir, image);
        remove(path);
    }
    rc = forecast_html_write(dir, &d, charts, drawn, n, st, err);
out:
    forecast_digest_release(&d);
    return rc;
}
