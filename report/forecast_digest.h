/* forecast_digest: what every part of the forecast report is drawn from,
 * computed once: the bands of every metric per period, per team and per
 * sample, the waits of each team pooled over the replications, the SLO share
 * per period, the capacity timeline (orders already placed, the plan's
 * orders, retirements) and the recommendation, as sentences.
 *
 * The writers (forecast_data: CSV and JSON, forecast_charts: gnuplot,
 * forecast_html: the page) only format what is here, so the numbers agree
 * everywhere. The digest borrows r and plan; it owns the rest.
 */
#ifndef FLEETSIM_REPORT_FORECAST_DIGEST_H
#define FLEETSIM_REPORT_FORECAST_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "report/forecast_report.h"
#include "scenarios/forecast.h"
#include "sim/err.h"

enum { DIGEST_CDF_POINTS = 101, DIGEST_LABEL_MAX = 64, DIGEST_TEXT_MAX = 1024 };
/* the time series, in the order of forecast_band_sample's fields */
enum { SAMPLE_CAPACITY, SAMPLE_IN_USE, SAMPLE_BACKLOG, SAMPLE_QUEUE, SAMPLE_OFFERED, SAMPLE_FIELDS };

enum timeline_source { TIMELINE_PLACED, TIMELINE_PLAN, TIMELINE_RETIRE };

struct timeline_event {
    enum timeline_source source;
    sim_time order_us;   /* when ordered (retirements: when they start) */
    sim_time ready_us;   /* when the GPUs arrive or leave */
    char node_type[NODE_TYPE_NAME_MAX];
    int64_t count;       /* nodes */
    int64_t gpus;        /* added; negative for retirements */
    double cost_usd;     /* plan orders: as given; placed: count x catalog price; NaN unknown */
};

struct team_waits {
    size_t n;            /* started jobs, over all replications */
    double p50_s, p95_s, p99_s, mean_s;
    double cdf_s[DIGEST_CDF_POINTS]; /* quantile i/(N-1) of the pooled waits */
};

struct forecast_digest {
    const struct forecast_result *r;
    const struct plan_summary *plan;
    char scenario_name[256];  /* file name of the scenario, or "" */
    uint64_t seed;
    int has_seed;
    int has_dates;            /* the scenario has a start_date */
    int64_t start_unix_s;
    char period_letter;       /* 'Q', 'M', 'W' */
    uint32_t n_periods, n_samples;
    size_t n_teams;
    struct forecast_band *period_bands; /* [p * FM_COUNT + m] */
    struct forecast_band *team_bands;   /* [p * n_teams + t] GPU-hours */
    struct forecast_band *team_total;   /* [t] GPU-hours over the horizon */
    struct forecast_band *sample_bands; /* [s * SAMPLE_FIELDS + f] */
    struct team_waits *waits;           /* [t] */
    /* SLO from the scenario's plan section, when it has one */
    int has_slo;
    char slo_metric[16];
    double slo_threshold_s, slo_confidence;
    double *slo_share;        /* [p] share of replications meeting it */
    struct timeline_event *events;
    size_t n_events;
    int64_t initial_gpus;
    /* the recommendation, in order of importance */
    char **lines;
    size_t n_lines;
    int alarm;                /* something needs action: shortfall, SLO missed, no plan */
    int plan_helps;           /* the load passes capacity or the SLO is missed: what a plan answers */
    char *next;               /* with plan_helps and no plan: the `fleetsim plan` command, or NULL */
};

int forecast_digest_init(struct forecast_digest *d, const struct forecast_result *r,
                         const struct plan_summary *plan, struct err *err);
void forecast_digest_release(struct forecast_digest *d);
/* "Q2", "M11", "W3". */
void forecast_digest_period_label(const struct forecast_digest *d, uint32_t p, char *buf, size_t len);
/* "2027-04-01" when the scenario has a start date, else "day 91". */
void forecast_digest_when(const struct forecast_digest *d, sim_time t_us, char *buf, size_t len);
/* The date alone, or "" without a start date. */
void forecast_digest_date(const struct forecast_digest *d, sim_time t_us, char *buf, size_t len);
sim_time forecast_digest_period_start(const struct forecast_digest *d, uint32_t p);
sim_time forecast_digest_sample_time(const struct forecast_digest *d, uint32_t s);
/* A wait for people: "45 s", "12 min", "3.2 h", "2.5 d". */
void forecast_digest_format_wait(char *buf, size_t len, double seconds);

#endif
