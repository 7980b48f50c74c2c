#include "report/forecast_report.h"

#include <stdio.h>
#include <string.h>

#include "report/forecast_charts.h"
#include "report/forecast_data.h"
#include "report/forecast_digest.h"
#include "report/forecast_html.h"
#include "report/gnuplot.h"
#include "sim/atomic_file.h"

enum { MAX_CHARTS = 16 };

static void note_failure(struct report_status *st, const struct err *e)
{
    st->charts_failed++;
    if (!st->first_gnuplot_error[0])
        err_format(e, st->first_gnuplot_error, sizeof st->first_gnuplot_error);
}

/* Writes the report into dir, a fresh folder (atomic_file_dir's temporary one). */
static int forecast_report_fill(const char *dir, const struct forecast_result *r, const struct plan_summary *plan,
                                struct report_status *st, struct err *err)
{
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
        char script[128], image[128];
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
    }
    rc = forecast_html_write(dir, &d, charts, drawn, n, st, err);
out:
    forecast_digest_release(&d);
    return rc;
}

/* The report is written beside dir and swapped in whole: a run that fails
 * midway (a full disk) leaves the previous report as it was. */
int forecast_report_write(const char *dir, const struct forecast_result *r, const struct plan_summary *plan,
                          struct report_status *st, struct err *err)
{
    memset(st, 0, sizeof *st);
    struct atomic_file_dir ad;
    if (atomic_file_dir_open(&ad, dir, err))
        return -1;
    if (forecast_report_fill(ad.tmp, r, plan, st, err)) {
        /* name the file as it would have been, not its temporary folder */
        size_t n = strlen(ad.tmp);
        if (strncmp(err->file, ad.tmp, n) == 0) {
            char file[sizeof err->file];
            if ((size_t)snprintf(file, sizeof file, "%s%s", ad.path, err->file + n) < sizeof file)
                memcpy(err->file, file, sizeof file);
        }
        atomic_file_dir_abort(&ad);
        return -1;
    }
    return atomic_file_dir_commit(&ad, err);
}
