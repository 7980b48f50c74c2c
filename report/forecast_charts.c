#include "report/forecast_charts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/csv.h"
#include "report/gnuplot.h"
#include "sim/atomic_file.h"

enum { CHART_W = 900, CHART_H = 440, CHART_FONT_PT = 14 };

/* Waits are drawn on a log scale, which has no zero: shorter waits sit on
 * this floor (one minute, in hours), and the axis says so. */
#define WAIT_FLOOR_H (1.0 / 60)

struct chart_files {
    struct atomic_file dat, gp;
};

static int open_files(struct chart_files *cf, const char *dir, const char *name, struct err *err)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s.dat", dir, name) >= sizeof path)
        return err_set(err, dir, 0, 0, "path too long");
    if (atomic_file_open(&cf->dat, path, err))
        return -1;
    snprintf(path, sizeof path, "%s/%s.gp", dir, name);
    if (atomic_file_open(&cf->gp, path, err)) {
        atomic_file_abort(&cf->dat);
        return -1;
    }
    char svg[128], gp[128];
    snprintf(svg, sizeof svg, "%s.svg", name);
    snprintf(gp, sizeof gp, "%s.gp", name);
    gnuplot_write_preamble(cf->gp.fp, gp, svg, CHART_W, CHART_H);
    /* the page shows charts at about their size: 14 pt reads there, the
     * preamble's 10 pt did not */
    fprintf(cf->gp.fp, "set terminal svg size %d,%d fixed noenhanced font \"%s,%d\" background \"#ffffff\"\n"
                       "set output outfile\nset title font \",%d\"\n",
            CHART_W, CHART_H, GNUPLOT_FONT, CHART_FONT_PT, CHART_FONT_PT + 2);
    return 0;
}

static int close_files(struct chart_files *cf, struct err *err)
{
    fputs("unset output\n", cf->gp.fp);
    if (atomic_file_commit(&cf->dat, err)) {
        atomic_file_abort(&cf->gp);
        return -1;
    }
    return atomic_file_commit(&cf->gp, err);
}

static void num(FILE *fp, double v)
{
    fputc(' ', fp);
    csv_write_dat_number(fp, v);
}

static sim_time horizon_end(const struct forecast_digest *d)
{
    return forecast_digest_period_start(d, d->n_periods);
}

/* x of a time: Unix seconds with dates, else days since the start. */
static double time_x(const struct forecast_digest *d, sim_time t_us)
{
    if (d->has_dates)
        return (double)d->start_unix_s + (double)t_us / 1e6;
    return (double)t_us / (86400.0 * 1e6);
}

static void time_axis(FILE *gp, const struct forecast_digest *d)
{
    double x0 = time_x(d, d->r->start_us), x1 = time_x(d, horizon_end(d));
    char a[CSV_NUMBER_MAX], b[CSV_NUMBER_MAX];
    csv_format_number(a, sizeof a, x0, "0");
    csv_format_number(b, sizeof b, x1, "0");
    if (d->has_dates) {
        fprintf(gp,
                "set xdata time\nset timefmt \"%%s\"\nset format x \"%%Y-%%m-%%d\"\n"
                "set xtics rotate by -30\nset xrange [\"%s\":\"%s\"]\nset xlabel 'date (UTC)'\n",
                a, b);
    } else {
        fprintf(gp, "set xrange [%s:%s]\nset xlabel 'days since the start'\n", a, b);
    }
}

static void period_axis(FILE *gp, const struct forecast_digest *d, const char *dat_header, FILE *dat)
{
    fprintf(gp, "set xrange [0.4:%u.6]\nset xlabel '%s'\n", d->n_periods, d->r->period_name);
    if (d->n_periods > 16)
        fputs("set xtics rotate by -60\n", gp);
    fprintf(dat, "# period label %s\n", dat_header);
}

/* A partial last period (the horizon ends inside it) is labelled "Q4*". */
static int period_partial(const struct forecast_digest *d, uint32_t p)
{
    return d->r->last_period_partial && p + 1 == d->n_periods;
}

static void period_key(FILE *dat, const struct forecast_digest *d, uint32_t p)
{
    char label[16];
    forecast_digest_period_label(d, p, label, sizeof label);
    fprintf(dat, "%u %s%s", p + 1, label, period_partial(d, p) ? "*" : "");
}

/* A note under a period chart when the last period is partial. */
static void partial_note(FILE *gp, const struct forecast_digest *d)
{
    if (d->n_periods && period_partial(d, d->n_periods - 1))
        fputs("set label 'last period partial (*): the horizon ends inside it' at graph 0.01, graph 0.97 "
              "left font \",12\" tc rgb \"#cb181d\"\n",
              gp);
}

static double wait_h(double s)
{
    double h = s / 3600;
    return isfinite(h) && h > WAIT_FLOOR_H ? h : WAIT_FLOOR_H;
}

/* The SLO as a dashed line on a wait chart (hours on y), with its words in
 * the key; nothing without one. */
static void slo_plot(FILE *gp, const struct forecast_digest *d)
{
    if (!d->has_slo)
        return;
    char thr[32], y[CSV_NUMBER_MAX];
    forecast_digest_format_wait(thr, sizeof thr, d->slo_threshold_s);
    csv_format_number(y, sizeof y, d->slo_threshold_s / 3600, "0");
    fprintf(gp, ", \\\n     %s with lines dt 2 lw 2.5 lc rgb \"#000000\" title 'SLO %s <= %s'", y, d->slo_metric, thr);
}

static const struct forecast_band *pband(const struct forecast_digest *d, uint32_t p, enum forecast_metric m)
{
    return &d->period_bands[(size_t)p * FM_COUNT + m];
}

static const struct forecast_band *sband(const struct forecast_digest *d, uint32_t s, int f)
{
    return &d->sample_bands[(size_t)s * SAMPLE_FIELDS + f];
}

/* Capacity against the offered load (what the workload asks for with
 * unlimited capacity), never against the backlog, which would dwarf both. */
static int write_capacity(const char *dir, const struct forecast_digest *d, struct err *err)
{
    struct chart_files cf;
    if (open_files(&cf, dir, "capacity", err))
        return -1;
    fprintf(cf.dat.fp, "# %s capacity_gpus_mean offered_gpus_p5 offered_gpus_p50 offered_gpus_p95 in_use_gpus_mean\n",
            d->has_dates ? "time_unix_s" : "time_days");
    for (uint32_t s = 0; s < d->n_samples; s++) {
        csv_write_dat_number(cf.dat.fp, time_x(d, forecast_digest_sample_time(d, s)));
        num(cf.dat.fp, sband(d, s, SAMPLE_CAPACITY)->mean);
        num(cf.dat.fp, sband(d, s, SAMPLE_OFFERED)->p5);
        num(cf.dat.fp, sband(d, s, SAMPLE_OFFERED)->p50);
        num(cf.dat.fp, sband(d, s, SAMPLE_OFFERED)->p95);
        num(cf.dat.fp, sband(d, s, SAMPLE_IN_USE)->mean);
        fputc('\n', cf.dat.fp);
    }
    FILE *gp = cf.gp.fp;
    time_axis(gp, d);
    fputs("set title 'Capacity and offered load'\nset ylabel 'GPUs (reference-GPU equivalents)'\nset yrange [0:*]\n"
          "plot 'capacity.dat' using 1:3:5 with filledcurves fs transparent solid 0.35 noborder "
          "lc rgb \"#6baed6\" title 'offered load p5-p95', \\\n"
          "     '' using 1:4 with lines lw 1.5 lc rgb \"#2171b5\" title 'offered load p50', \\\n"
          "     '' using 1:6 with lines lw 1.5 lc rgb \"#31a354\" title 'in use (mean)', \\\n"
          "     '' using 1:2 with steps lw 2.5 lc rgb \"#cb181d\" title 'capacity (mean)'\n",
          gp);
    return close_files(&cf, err);
}

static int write_utilization(const char *dir, const struct forecast_digest *d, struct err *err)
{
    struct chart_files cf;
    if (open_files(&cf, dir, "utilization", err))
        return -1;
    period_axis(cf.gp.fp, d, "utilization_pct_mean utilization_pct_p5 utilization_pct_p95", cf.dat.fp);
    for (uint32_t p = 0; p < d->n_periods; p++) {
        const struct forecast_band *b = pband(d, p, FM_UTILIZATION);
        period_key(cf.dat.fp, d, p);
        num(cf.dat.fp, 100 * b->mean);
        num(cf.dat.fp, 100 * b->p5);
        num(cf.dat.fp, 100 * b->p95);
        fputc('\n', cf.dat.fp);
    }
    partial_note(cf.gp.fp, d);
    fputs("set title 'Utilization per period'\nset ylabel 'busy / present GPU time (%)'\nset yrange [0:105]\n"
          "set boxwidth 0.6\n"
          "plot 'utilization.dat' using 1:3:xtic(2) with boxes fs solid 0.55 noborder lc rgb \"#6baed6\" "
          "title 'mean', \\\n"
          "     '' using 1:3:4:5 with yerrorbars pt 7 ps 0.4 lc rgb \"#08306b\" title 'p5-p95 across replications'\n",
          cf.gp.fp);
    return close_files(&cf, err);
}

static int write_waits(const char *dir, const struct forecast_digest *d, struct err *err)
{
    struct chart_files cf;
    if (open_files(&cf, dir, "waits", err))
        return -1;
    period_axis(cf.gp.fp, d,
                "wait_p50_h_mean wait_p50_h_p5 wait_p50_h_p95 wait_p95_h_mean wait_p95_h_p5 wait_p95_h_p95 "
                "wait_p99_h_mean wait_p99_h_p5 wait_p99_h_p95",
                cf.dat.fp);
    static const enum forecast_metric ms[] = {FM_WAIT_P50, FM_WAIT_P95, FM_WAIT_P99};
    for (uint32_t p = 0; p < d->n_periods; p++) {
        period_key(cf.dat.fp, d, p);
        for (size_t k = 0; k < 3; k++) {
            const struct forecast_band *b = pband(d, p, ms[k]);
            num(cf.dat.fp, wait_h(b->mean));
            num(cf.dat.fp, wait_h(b->p5));
            num(cf.dat.fp, wait_h(b->p95));
        }
        fputc('\n', cf.dat.fp);
    }
    partial_note(cf.gp.fp, d);
    fputs("set title 'Queue wait percentiles per period'\nset ylabel 'wait (log scale; under 1 min drawn at 1 min)'\n"
          "set logscale y 10\nset yrange [0.0166:*]\n"
          "set ytics ('1 min' 0.0166667, '10 min' 0.166667, '1 h' 1, '4 h' 4, '1 d' 24, '1 w' 168, '4 w' 672, "
          "'26 w' 4368)\n"
          "# bars: p5-p95 of each percentile across replications; points: their mean\n"
          "plot 'waits.dat' using ($1-0.15):3:4:5:xtic(2) with yerrorlines pt 7 ps 0.5 lw 1.5 lc rgb \"#74c476\" "
          "title 'p50', \\\n"
          "     '' using 1:6:7:8 with yerrorlines pt 7 ps 0.5 lw 1.5 lc rgb \"#fd8d3c\" title 'p95', \\\n"
          "     '' using ($1+0.15):9:10:11 with yerrorlines pt 7 ps 0.5 lw 1.5 lc rgb \"#cb181d\" title 'p99'",
          cf.gp.fp);
    slo_plot(cf.gp.fp, d);
    fputc('\n', cf.gp.fp);
    return close_files(&cf, err);
}

static int write_wait_cdf(const char *dir, const struct forecast_digest *d, struct err *err)
{
    struct chart_files cf;
    if (open_files(&cf, dir, "wait_cdf", err))
        return -1;
    fputs("# wait_h share_of_jobs; one block per team with started jobs (see wait_cdf.gp for the names)\n",
          cf.dat.fp);
    FILE *gp = cf.gp.fp;
    fputs("set title 'Queue wait distribution per team (all replications pooled)'\n"
          "set xlabel 'wait (log scale; under 1 min drawn at 1 min)'\nset ylabel 'share of started jobs'\n"
          "set yrange [0:1]\nset logscale x 10\nset xrange [0.0166:*]\n"
          "set xtics ('1 min' 0.0166667, '10 min' 0.166667, '1 h' 1, '4 h' 4, '1 d' 24, '1 w' 168, '4 w' 672)\n"
          "set key outside right vertical\n",
          gp);
    int block = 0;
    for (size_t t = 0; t < d->n_teams; t++) {
        const struct team_waits *w = &d->waits[t];
        if (!w->n)
            continue;
        if (block)
            fputs("\n\n", cf.dat.fp);
        fputs("# team: ", cf.dat.fp);
        for (const unsigned char *c = (const unsigned char *)d->r->team_names[t]; *c; c++)
            fputc(*c < 0x20 ? ' ' : *c, cf.dat.fp);
        fputc('\n', cf.dat.fp);
        for (size_t k = 0; k < DIGEST_CDF_POINTS; k++) {
            csv_write_dat_number(cf.dat.fp, wait_h(w->cdf_s[k]));
            num(cf.dat.fp, (double)k / (DIGEST_CDF_POINTS - 1));
            fputc('\n', cf.dat.fp);
        }
        fprintf(gp, "%s'wait_cdf.dat' index %d using 1:2 with steps lw 1.5 title ", block ? ", \\\n     " : "plot ",
                block);
        gnuplot_write_string(gp, d->r->team_names[t]);
        block++;
    }
    fputc('\n', gp);
    return close_files(&cf, err);
}

static int write_queue(const char *dir, const struct forecast_digest *d, struct err *err)
{
    struct chart_files cf;
    if (open_files(&cf, dir, "queue", err))
        return -1;
    fprintf(cf.dat.fp, "# %s queue_jobs_mean queue_jobs_p5 queue_jobs_p95 backlog_gpus_mean\n",
            d->has_dates ? "time_unix_s" : "time_days");
    for (uint32_t s = 0; s < d->n_samples; s++) {
        const struct forecast_band *b = sband(d, s, SAMPLE_QUEUE);
        csv_write_dat_number(cf.dat.fp, time_x(d, forecast_digest_sample_time(d, s)));
        num(cf.dat.fp, b->mean);
        num(cf.dat.fp, b->p5);
        num(cf.dat.fp, b->p95);
        num(cf.dat.fp, sband(d, s, SAMPLE_BACKLOG)->mean);
        fputc('\n', cf.dat.fp);
    }
    time_axis(cf.gp.fp, d);
    fputs("set title 'Queue length and backlog'\nset ylabel 'queued jobs'\nset y2label 'backlog: GPUs queued'\n"
          "set yrange [0:*]\nset y2range [0:*]\nset y2tics\n"
          "plot 'queue.dat' using 1:3:4 with filledcurves fs transparent solid 0.35 noborder lc rgb \"#fdae6b\" "
          "title 'queued jobs p5-p95', \\\n"
          "     '' using 1:2 with lines lw 1.5 lc rgb \"#d94801\" title 'queued jobs (mean)', \\\n"
          "     '' using 1:5 axes x1y2 with lines lw 1.5 dt 3 lc rgb \"#54278f\" title 'backlog GPUs (mean)'\n",
          cf.gp.fp);
    return close_files(&cf, err);
}

static int write_failures(const char *dir, const struct forecast_digest *d, struct err *err)
{
    struct chart_files cf;
    if (open_files(&cf, dir, "failures", err))
        return -1;
    period_axis(cf.gp.fp, d,
                "lost_gpu_hours_mean lost_gpu_hours_p5 lost_gpu_hours_p95 failures_mean failures_p5 failures_p95",
                cf.dat.fp);
    for (uint32_t p = 0; p < d->n_periods; p++) {
        const struct forecast_band *l = pband(d, p, FM_LOST_GPU_HOURS), *f = pband(d, p, FM_FAILURES);
        period_key(cf.dat.fp, d, p);
        num(cf.dat.fp, l->mean);
        num(cf.dat.fp, l->p5);
        num(cf.dat.fp, l->p95);
        num(cf.dat.fp, f->mean);
        num(cf.dat.fp, f->p5);
        num(cf.dat.fp, f->p95);
        fputc('\n', cf.dat.fp);
    }
    fputs("set title 'Failure losses per period'\nset ylabel 'lost GPU-hours'\nset y2label 'failures'\n"
          "set yrange [0:*]\nset y2range [0:*]\nset y2tics\nset boxwidth 0.5\n"
          "plot 'failures.dat' using 1:3:xtic(2) with boxes fs solid 0.55 noborder lc rgb \"#9e9ac8\" "
          "title 'lost GPU-hours (mean)', \\\n"
          "     '' using 1:3:4:5 with yerrorbars pt 7 ps 0.3 lc rgb \"#3f007d\" title 'lost GPU-hours p5-p95', \\\n"
          "     '' using ($1+0.3):6:7:8 axes x1y2 with yerrorbars pt 9 ps 0.8 lc rgb \"#cb181d\" "
          "title 'failures (mean, p5-p95)'\n",
          cf.gp.fp);
    return close_files(&cf, err);
}

static int write_plan(const char *dir, const struct forecast_digest *d, struct err *err)
{
    struct chart_files cf;
    if (open_files(&cf, dir, "plan", err))
        return -1;
    FILE *dat = cf.dat.fp;
    const char *tcol = d->has_dates ? "time_unix_s" : "time_days";
    /* Block 0: GPUs expected present, a step at each arrival or retirement. */
    fprintf(dat, "# block 0: %s gpus_present (expected: mean lead times)\n", tcol);
    double gpus = (double)d->initial_gpus;
    csv_write_dat_number(dat, time_x(d, d->r->start_us));
    num(dat, gpus);
    fputc('\n', dat);
    for (size_t i = 0; i < d->n_events; i++) {
        gpus += (double)d->events[i].gpus;
        csv_write_dat_number(dat, time_x(d, d->events[i].ready_us));
        num(dat, gpus);
        fputc('\n', dat);
    }
    csv_write_dat_number(dat, time_x(d, horizon_end(d)));
    num(dat, gpus);
    fputc('\n', dat);
    /* Blocks 1..3: the events of each source, as impulses at arrival. */
    static const char *const titles[] = {"orders placed (arrival)", "plan orders (arrival)", "retirements"};
    static const char *const colors[] = {"#6a51a3", "#cb181d", "#525252"};
    int has[3] = {0, 0, 0};
    for (int src = 0; src < 3; src++) {
        fprintf(dat, "\n\n# block %d: %s gpus_added %s\n", src + 1, tcol, titles[src]);
        int any = 0;
        for (size_t i = 0; i < d->n_events; i++) {
            if ((int)d->events[i].source != src)
                continue;
            csv_write_dat_number(dat, time_x(d, d->events[i].ready_us));
            num(dat, (double)d->events[i].gpus);
            fputc('\n', dat);
            any = 1;
        }
        if (!any) /* gnuplot needs a point in every block it reads; this one is never plotted */
            fputs("NaN NaN\n", dat);
        has[src] = any;
    }
    FILE *gp = cf.gp.fp;
    time_axis(gp, d);
    fputs("set title 'Capacity plan'\nset ylabel 'GPUs present'\nset y2label 'GPUs added (-: retired)'\n"
          "set yrange [0:*]\nset y2tics\nset xzeroaxis\n"
          "plot 'plan.dat' index 0 using 1:2 with steps lw 2.5 lc rgb \"#2171b5\" title 'GPUs present (expected)'",
          gp);
    for (int src = 0; src < 3; src++)
        if (has[src])
            fprintf(gp,
                    ", \\\n     'plan.dat' index %d using 1:2 axes x1y2 with impulses lw 4 lc rgb \"%s\" title '%s'",
                    src + 1, colors[src], titles[src]);
    fputc('\n', gp);
    return close_files(&cf, err);
}

static const struct forecast_chart charts[] = {
    {"capacity", "Capacity and offered load",
     "GPUs present (mean over replications) against the offered load: the GPUs the submitted jobs would hold if "
     "capacity were unlimited, in reference-GPU equivalents; the shaded band spans p5 to p95 across replications. "
     "Where the load stays above capacity the queue grows (see the backlog under Queue length).",
     write_capacity},
    {"utilization", "Utilization", "Busy share of the GPU time present, per period: mean and p5-p95 across replications.",
     write_utilization},
    {"waits", "Queue-wait percentiles",
     "The p50, p95 and p99 of queue wait of the jobs submitted in each period, on a log scale: mean across "
     "replications, bars from p5 to p95; the dashed line is the SLO when the scenario gives one.",
     write_waits},
    {"wait_cdf", "Queue-wait distribution per team",
     "Share of each team's started jobs that waited at most x hours, all replications pooled.", write_wait_cdf},
    {"queue", "Queue length and backlog",
     "Jobs waiting over time (mean, and p5 to p95 across replications) and the backlog: GPUs asked by them.",
     write_queue},
    {"failures", "Failure losses",
     "Work lost to failures since the last checkpoint (GPU-hours) and node failures per period: mean and p5-p95.",
     write_failures},
    {"plan", "Capacity plan",
     "GPUs expected present (orders arrive after their mean lead time plus burn-in), with each order's or "
     "retirement's GPUs at its arrival.",
     write_plan},
};

size_t forecast_charts_list(const struct forecast_digest *d, const struct forecast_chart **out, size_t max)
{
    size_t n = 0;
    int any_waits = 0;
    for (size_t t = 0; t < d->n_teams; t++)
        any_waits |= d->waits[t].n > 0;
    for (size_t i = 0; i < sizeof charts / sizeof *charts && n < max; i++) {
        const struct forecast_chart *c = &charts[i];
        if ((c->write == write_capacity || c->write == write_queue) && !d->n_samples)
            continue;
        if (c->write != write_capacity && c->write != write_queue && c->write != write_plan &&
            c->write != write_wait_cdf && !d->n_periods)
            continue;
        if (c->write == write_wait_cdf && !any_waits)
            continue;
        if (c->write == write_plan && !d->n_events)
            continue;
        out[n++] = c;
    }
    return n;
}
