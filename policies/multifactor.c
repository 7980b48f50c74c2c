#include "policies/multifactor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SHARES_MAX = 64, GROUPS_MAX = 16, GROUP_TEAMS_MAX = 32, QOS_MAX = 32 };

#define FACTOR_ROWS(age_w, size_w, fs_w, qos_w, age_max, half_life)                                                 \
    {"w_age", "number >= 0", age_w, "weight of the age factor, min(1, wait / age_max_s)"},                        \
    {"w_size", "number >= 0", size_w, "weight of the job-size factor, slots / cluster slots"},                    \
    {"w_fairshare", "number >= 0", fs_w, "weight of the fair-share factor, 2^(-usage share / share)"},           \
    {"w_qos", "number >= 0", qos_w, "weight of the QoS factor (from the job's priority input)"},                  \
    {"age_max_s", "number > 0", age_max, "wait at which the age factor reaches 1"},                               \
    {"half_life_s", "number >= 0", half_life, "half-life of recorded usage; 0 = usage never decays"},             \
    {"favor_small", "0|1", "0", "1: the size factor favors small jobs instead of large ones"},                    \
    {"shares", "list TEAM:WEIGHT;...", "", "fair-share weight per team index (-1 = unknown team)"},               \
    {"default_share", "number > 0", "1", "weight of a team not in 'shares'"},                                      \
    {"groups", "list W:T|T|..;...", "", "fair-share tree: groups of weight W over teams T (two levels)"},         \
    {"qos", "list PRIORITY:FACTOR;...", "", "QoS factor (0..1) per priority input; default priority / highest"}

const struct policy_param multifactor_params[] = {
    FACTOR_ROWS("1000", "100", "10000", "1000", "604800", "604800"),
};
const size_t multifactor_n_params = sizeof multifactor_params / sizeof *multifactor_params;

const struct policy_param fairshare_params[] = {
    FACTOR_ROWS("0.1", "0", "1", "0", "86400", "86400"),
};
const size_t fairshare_n_params = sizeof fairshare_params / sizeof *fairshare_params;

struct share_group {
    double weight;
    int32_t teams[GROUP_TEAMS_MAX];
    size_t n;
};

struct multifactor {
    double w_age, w_size, w_fs, w_qos;
    double age_max_s, half_life_s, default_share;
    int favor_small;
    int32_t share_team[SHARES_MAX];
    double share_w[SHARES_MAX];
    size_t n_shares;
    struct share_group groups[GROUPS_MAX];
    size_t n_groups;
    int32_t qos_key[QOS_MAX];
    double qos_val[QOS_MAX];
    size_t n_qos;

    /* learned usage (GPU-seconds), per team slot (team + 1), scaled so that
     * the usage at time T is stored * 2^(-(T - base_us) / half-life) */
    double *stored;
    uint32_t n_slots;
    int64_t base_us;
    int have_base;

    /* scratch for one pass */
    double *usage_now, *share, *fs, *group_sum;
    uint8_t *active;
    uint32_t cap_slots;
    double *prio;
    uint32_t cap_prio;
};

static int parse_groups(struct multifactor *m, const char *text, char *err, size_t err_len)
{
    while (*text) {
        if (m->n_groups >= GROUPS_MAX) {
            snprintf(err, err_len, "parameter 'groups' has more than %d groups", GROUPS_MAX);
            return -1;
        }
        struct share_group *g = &m->groups[m->n_groups];
        char *end;
        g->weight = strtod(text, &end);
        if (end == text || *end != ':' || !(g->weight > 0)) {
            snprintf(err, err_len, "parameter 'groups': expected 'WEIGHT:TEAM/TEAM' with a weight > 0 at '%s'", text);
            return -1;
        }
        text = end + 1;
        g->n = 0;
        for (;;) {
            long t = strtol(text, &end, 10);
            if (end == text || t < -1 || t > INT32_MAX || g->n >= GROUP_TEAMS_MAX) {
                snprintf(err, err_len, "parameter 'groups': expected team indices (at most %d) at '%s'",
                         GROUP_TEAMS_MAX, text);
                return -1;
            }
            g->teams[g->n++] = (int32_t)t;
            text = end;
            if (*text != '|')
                break;
            text++;
        }
        if (*text == ';')
            text++;
        else if (*text) {
            snprintf(err, err_len, "parameter 'groups': unexpected '%s'", text);
            return -1;
        }
        m->n_groups++;
    }
    return 0;
}

struct multifactor *multifactor_new(const struct params *p, char *err, size_t err_len)
{
    struct multifactor *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    double fav;
    if (params_number(p, "w_age", 0, 1e12, &m->w_age, err, err_len) != 0 ||
        params_number(p, "w_size", 0, 1e12, &m->w_size, err, err_len) != 0 ||
        params_number(p, "w_fairshare", 0, 1e12, &m->w_fs, err, err_len) != 0 ||
        params_number(p, "w_qos", 0, 1e12, &m->w_qos, err, err_len) != 0 ||
        params_number(p, "age_max_s", 1e-6, 1e12, &m->age_max_s, err, err_len) != 0 ||
        params_number(p, "half_life_s", 0, 1e12, &m->half_life_s, err, err_len) != 0 ||
        params_number(p, "favor_small", 0, 1, &fav, err, err_len) != 0 ||
        params_number(p, "default_share", 1e-9, 1e12, &m->default_share, err, err_len) != 0 ||
        params_list(p, "shares", 1e-9, 1e12, m->share_team, m->share_w, SHARES_MAX, &m->n_shares, err, err_len) != 0 ||
        params_list(p, "qos", 0, 1, m->qos_key, m->qos_val, QOS_MAX, &m->n_qos, err, err_len) != 0 ||
        parse_groups(m, params_text(p, "groups"), err, err_len) != 0) {
        free(m);
        return NULL;
    }
    if (fav != 0 && fav != 1) {
        snprintf(err, err_len, "parameter 'favor_small' of '%s' is '%s', expected 0 or 1", p->component,
                 params_text(p, "favor_small"));
        free(m);
        return NULL;
    }
    m->favor_small = fav == 1;
    return m;
}

void multifactor_free(struct multifactor *m)
{
    if (!m)
        return;
    free(m->stored);
    free(m->usage_now);
    free(m->share);
    free(m->fs);
    free(m->group_sum);
    free(m->active);
    free(m->prio);
    free(m);
}

/* Team slots are team + 1, so the unknown team (-1) has slot 0. */
static int ensure_slots(struct multifactor *m, uint32_t n)
{
    if (n > m->n_slots) {
        double *s = realloc(m->stored, n * sizeof *s);
        if (!s)
            return -1;
        memset(s + m->n_slots, 0, (n - m->n_slots) * sizeof *s);
        m->stored = s;
        m->n_slots = n;
    }
    if (n > m->cap_slots) {
        free(m->usage_now);
        free(m->share);
        free(m->fs);
        free(m->group_sum);
        free(m->active);
        m->usage_now = malloc(n * sizeof *m->usage_now);
        m->share = malloc(n * sizeof *m->share);
        m->fs = malloc(n * sizeof *m->fs);
        m->group_sum = malloc(n * sizeof *m->group_sum);
        m->active = malloc(n);
        m->cap_slots = n;
        if (!m->usage_now || !m->share || !m->fs || !m->group_sum || !m->active) {
            m->cap_slots = 0;
            return -1;
        }
    }
    return 0;
}

static uint32_t slot_of(int32_t team)
{
    return team < -1 ? 0u : (uint32_t)(team + 1);
}

void multifactor_observe(struct multifactor *m, const struct policy_event *ev)
{
    if (ev->kind == POLICY_EVENT_STARTED || !ev->job || ev->ran_us <= 0)
        return;
    uint32_t s = slot_of(ev->job->team);
    if (ensure_slots(m, s + 1) != 0)
        return; /* out of memory: the usage is lost, the schedule stays valid */
    double amount = (double)ev->job->slots * (double)ev->ran_us / 1e6;
    double scale = 1;
    if (m->half_life_s > 0) {
        if (!m->have_base) {
            m->base_us = ev->now_us;
            m->have_base = 1;
        }
        double ex = (double)(ev->now_us - m->base_us) / (m->half_life_s * 1e6);
        if (ex > 60) {
            /* rebase before the scaled values overflow */
            double f = exp2(-ex);
            for (uint32_t i = 0; i < m->n_slots; i++)
                m->stored[i] *= f;
            m->base_us = ev->now_us;
            ex = 0;
        }
        scale = exp2(ex);
    }
    m->stored[s] += amount * scale;
}

static double team_weight(const struct multifactor *m, int32_t team)
{
    for (size_t i = 0; i < m->n_shares; i++)
        if (m->share_team[i] == team)
            return m->share_w[i];
    return m->default_share;
}

static int group_of(const struct multifactor *m, int32_t team)
{
    for (size_t g = 0; g < m->n_groups; g++)
        for (size_t k = 0; k < m->groups[g].n; k++)
            if (m->groups[g].teams[k] == team)
                return (int)g;
    return -1;
}

/* Usage, activity and normalized shares of every team slot at view time. */
static void compute_shares(struct multifactor *m, const struct cluster_view *view, uint32_t n)
{
    double decay = 1;
    if (m->half_life_s > 0 && m->have_base)
        decay = exp2(-(double)(view->now_us - m->base_us) / (m->half_life_s * 1e6));
    for (uint32_t s = 0; s < n; s++) {
        m->usage_now[s] = s < m->n_slots ? m->stored[s] * decay : 0;
        m->active[s] = m->usage_now[s] > 0;
    }
    for (uint32_t r = 0; r < view->n_running; r++) {
        const struct policy_running *run = &view->running[r];
        uint32_t s = slot_of(run->job.team);
        int64_t ran = view->now_us - run->start_us;
        if (ran > 0)
            m->usage_now[s] += (double)run->job.slots * (double)ran / 1e6;
        m->active[s] = 1;
    }
    for (uint32_t i = 0; i < view->n_queued; i++)
        m->active[slot_of(view->queued[i].team)] = 1;

    /* weights of the active groups (a team in no group is its own group) */
    double groups_total = 0;
    double gsum[GROUPS_MAX] = {0};
    int gactive[GROUPS_MAX] = {0};
    for (uint32_t s = 0; s < n; s++) {
        if (!m->active[s])
            continue;
        int32_t team = (int32_t)s - 1;
        int g = group_of(m, team);
        double w = team_weight(m, team);
        if (g < 0) {
            groups_total += w;
        } else {
            gsum[g] += w;
            if (!gactive[g]) {
                gactive[g] = 1;
                groups_total += m->groups[g].weight;
            }
        }
    }
    double used = 0;
    for (uint32_t s = 0; s < n; s++)
        used += m->usage_now[s];
    for (uint32_t s = 0; s < n; s++) {
        if (!m->active[s]) {
            m->share[s] = 0;
            m->fs[s] = 1;
            continue;
        }
        int32_t team = (int32_t)s - 1;
        int g = group_of(m, team);
        double w = team_weight(m, team);
        m->share[s] = g < 0 ? w / groups_total : (m->groups[g].weight / groups_total) * (w / gsum[g]);
        m->fs[s] = used > 0 ? exp2(-(m->usage_now[s] / used) / m->share[s]) : 1;
    }
}

static double qos_factor(const struct multifactor *m, int32_t priority, int32_t highest)
{
    if (m->n_qos) {
        for (size_t i = 0; i < m->n_qos; i++)
            if (m->qos_key[i] == priority)
                return m->qos_val[i];
        return 0;
    }
    return highest > 0 && priority > 0 ? (double)priority / (double)highest : 0;
}

int multifactor_keys(struct multifactor *m, const struct cluster_view *view, struct ordering_key *keys)
{
    uint32_t n = m->n_slots;
    int32_t highest = 0;
    for (uint32_t i = 0; i < view->n_queued; i++) {
        uint32_t s = slot_of(view->queued[i].team) + 1;
        if (s > n)
            n = s;
        if (view->queued[i].priority > highest)
            highest = view->queued[i].priority;
    }
    for (uint32_t r = 0; r < view->n_running; r++) {
        uint32_t s = slot_of(view->running[r].job.team) + 1;
        if (s > n)
            n = s;
    }
    if (n == 0)
        n = 1;
    if (ensure_slots(m, n) != 0)
        return -1;
    if (view->n_queued > m->cap_prio) {
        double *p = realloc(m->prio, view->n_queued * sizeof *p);
        if (!p)
            return -1;
        m->prio = p;
        m->cap_prio = view->n_queued;
    }
    compute_shares(m, view, n);
    double total = view->total_slots > 0 ? (double)view->total_slots : 1;
    for (uint32_t i = 0; i < view->n_queued; i++) {
        const struct policy_job *j = &view->queued[i];
        double age = (double)(view->now_us - j->submit_us) / 1e6 / m->age_max_s;
        age = age < 0 ? 0 : age > 1 ? 1 : age;
        double size = (double)j->slots / total;
        size = size > 1 ? 1 : size;
        if (m->favor_small)
            size = 1 - size;
        double prio = m->w_age * age + m->w_size * size + m->w_fs * m->fs[slot_of(j->team)] +
                      m->w_qos * qos_factor(m, j->priority, highest);
        m->prio[i] = prio;
        keys[i] = (struct ordering_key){-prio, (double)j->submit_us / 1e6, i};
    }
    return 0;
}

double multifactor_priority(const struct multifactor *m, uint32_t i)
{
    return i < m->cap_prio ? m->prio[i] : 0;
}

double multifactor_fairshare(const struct multifactor *m, int32_t team)
{
    uint32_t s = slot_of(team);
    return s < m->cap_slots ? m->fs[s] : 1;
}
