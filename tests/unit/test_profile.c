/* The availability profile (policies/profile) against a plain step function
 * written for this test: breakpoints in a sorted array, earliest fit by
 * trying every breakpoint and reading every step of its window. Random
 * profiles (seeded), short ones in a block or a few and long ones over
 * hundreds of blocks, with releases at one instant, equal durations (ties in
 * expected ends), many jobs placed at one instant and jobs that can never
 * fit; and a profile kept from pass to pass as conservative backfilling
 * keeps it (the origin advancing, reservations given back and moved
 * earlier, searches bounded by a promise). */
#include <stdio.h>
#include <stdlib.h>

#include "policies/profile.h"
#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

struct plain {
    int64_t time[40000];
    int64_t free[40000];
    uint32_t n;
};

static int64_t plain_free_at(const struct plain *s, int64_t t)
{
    int64_t f = 0;
    for (uint32_t k = 0; k < s->n && s->time[k] <= t; k++)
        f = s->free[k];
    return f;
}

static int64_t plain_earliest(const struct plain *s, int64_t slots, int64_t dur)
{
    for (uint32_t k = 0; k < s->n; k++) {
        int fits = 1;
        for (uint32_t j = k; j < s->n && s->time[j] < s->time[k] + dur; j++)
            if (s->free[j] < slots)
                fits = 0;
        if (fits)
            return s->time[k];
    }
    return INT64_MAX;
}

static void plain_break(struct plain *s, int64_t t)
{
    uint32_t k = 0;
    while (k < s->n && s->time[k] < t)
        k++;
    if (k < s->n && s->time[k] == t)
        return;
    for (uint32_t j = s->n; j > k; j--) {
        s->time[j] = s->time[j - 1];
        s->free[j] = s->free[j - 1];
    }
    s->time[k] = t;
    s->free[k] = s->free[k - 1];
    s->n++;
}

/* The profile drops a step that holds what the one before it holds, where
 * a reservation begins or ends (never the first step: queries start there). */
static void plain_merge(struct plain *s, int64_t t)
{
    for (uint32_t k = 1; k < s->n; k++)
        if (s->time[k] == t) {
            if (s->free[k] == s->free[k - 1]) {
                for (uint32_t j = k; j + 1 < s->n; j++) {
                    s->time[j] = s->time[j + 1];
                    s->free[j] = s->free[j + 1];
                }
                s->n--;
            }
            return;
        }
}

static void plain_carve(struct plain *s, int64_t t, int64_t dur, int64_t slots, int merge)
{
    plain_break(s, t);
    plain_break(s, t + dur);
    for (uint32_t k = 0; k < s->n; k++)
        if (s->time[k] >= t && s->time[k] < t + dur)
            s->free[k] -= slots;
    if (merge) {
        plain_merge(s, t + dur);
        plain_merge(s, t);
    }
}

/* profile_reserve: a reservation made once leaves its two steps */
static void plain_reserve(struct plain *s, int64_t t, int64_t dur, int64_t slots)
{
    plain_carve(s, t, dur, slots, 0);
}

/* One random profile: `releases` running jobs ending on a coarse grid (so
 * several end at one instant), then `jobs` placements of random size and
 * duration; every answer and the free slots at every breakpoint compared. */
static int run_case(struct profile *pp, uint64_t seed, uint32_t releases, uint32_t jobs, int64_t capacity)
{
    static struct plain s;
    struct profile p = *pp; /* reused from the last case: a reset must forget it all */
    struct pcg32 r;
    pcg32_stream(&r, seed, RNG_TEST, 31);
    /* each case starts earlier than the last ended, so what a stale
     * bound remembers would be too late */
    int64_t now = 1000 + (int64_t)(seed % 7) * 50, free_now = pcg32_bounded(&r, (uint32_t)capacity / 4 + 1);
    int64_t running = capacity - free_now;
    s.n = 1;
    s.time[0] = now;
    s.free[0] = free_now;
    int bad = 0;
    if (!CHECK_INT(profile_reset(&p, now, free_now), 0))
        return 1;
    int64_t t = now;
    for (uint32_t i = 0; i < releases && running > 0; i++) {
        t += 10 * (int64_t)pcg32_bounded(&r, 3); /* 0: same instant as the last */
        int64_t slots = 1 + (int64_t)pcg32_bounded(&r, (uint32_t)(running < 8 ? running : 8));
        if (i + 1 == releases)
            slots = running;
        running -= slots;
        CHECK_INT(profile_add_release(&p, t, slots), 0);
        if (t <= s.time[s.n - 1]) {
            s.free[s.n - 1] += slots;
        } else {
            s.time[s.n] = t;
            s.free[s.n] = s.free[s.n - 1] + slots;
            s.n++;
        }
    }
    for (uint32_t i = 0; i < jobs && !bad; i++) {
        /* mostly small; now and then more than the machine holds */
        int64_t slots = pcg32_bounded(&r, 50) == 0 ? capacity + 1 : 1 + (int64_t)pcg32_bounded(&r, 8);
        /* a quarter share one duration: ties in expected ends */
        int64_t dur = pcg32_bounded(&r, 4) == 0 ? 100 : 1 + 7 * (int64_t)pcg32_bounded(&r, 300);
        int64_t want = plain_earliest(&s, slots, dur);
        int64_t got = profile_earliest(&p, slots, dur);
        if (!CHECK_INT(got, want)) {
            printf("  seed %llu, job %u: %lld slots for %lld\n", (unsigned long long)seed, i, (long long)slots,
                   (long long)dur);
            bad = 1;
        }
        if (want == INT64_MAX)
            continue;
        plain_reserve(&s, want, dur, slots);
        CHECK_INT(profile_reserve(&p, want, dur, slots), 0);
    }
    for (uint32_t k = 0; k < s.n && !bad; k += 1 + s.n / 200)
        if (!CHECK_INT(profile_free_at(&p, s.time[k]), s.free[k]))
            bad = 1;
    if (!bad)
        CHECK_INT(profile_free_at(&p, now + 5), plain_free_at(&s, now + 5));
    CHECK_INT(profile_steps(&p), s.n);
    if (s.n > 4 * PROFILE_BLOCK)
        CHECK(p.n_blocks > 4); /* the long cases do split blocks */
    *pp = p;
    return bad;
}

static void test_profile_short(void)
{
    struct profile p;
    profile_init(&p);
    for (uint64_t seed = 1; seed <= 200; seed++)
        if (run_case(&p, seed, 1 + seed % 20, 1 + seed % 40, 16 + (int64_t)(seed % 5) * 8))
            break;
    profile_release(&p);
}

static void test_profile_long(void)
{
    /* thousands of steps: blocks split again and again */
    struct profile p;
    profile_init(&p);
    for (uint64_t seed = 1; seed <= 4; seed++)
        if (run_case(&p, 1000 + seed, 1500, 5000, 64 + (int64_t)seed * 16))
            break;
    profile_release(&p);
}

static void test_profile_one_instant(void)
{
    /* 5,000 one-slot jobs all placed at the first instant, each a microsecond
     * longer than the last (5,001 steps in many blocks), then jobs that never fit */
    struct profile p;
    profile_init(&p);
    CHECK_INT(profile_reset(&p, 0, 5000), 0);
    for (int64_t i = 0; i < 5000; i++) {
        if (!CHECK_INT(profile_earliest(&p, 1, 1 + i), 0))
            break;
        CHECK_INT(profile_reserve(&p, 0, 1 + i, 1), 0);
    }
    CHECK_INT(profile_steps(&p), 5001);
    CHECK(p.n_blocks >= 5001 / PROFILE_BLOCK);
    CHECK_INT(profile_earliest(&p, 5001, 1), INT64_MAX); /* more than the machine */
    CHECK_INT(profile_earliest(&p, 1, 1), 1);
    CHECK_INT(profile_earliest(&p, 1500, 10), 1500);
    CHECK_INT(profile_free_at(&p, 0), 0);
    CHECK_INT(profile_free_at(&p, 700), 700);
    CHECK_INT(profile_free_at(&p, 9000), 5000);
    profile_release(&p);
}

/* The first step at or after `from` (and before min(to, limit)) with
 * `slots` free until t + dur or limit: profile_earliest_before's answer. */
static int64_t plain_earliest_before(const struct plain *s, int64_t slots, int64_t dur, int64_t from, int64_t to,
                                     int64_t limit)
{
    int64_t last = to < limit ? to : limit;
    for (uint32_t k = 0; k < s->n && s->time[k] < last; k++) {
        int64_t t = s->time[k], until = dur < limit - t ? t + dur : limit;
        if (t < from)
            continue;
        int fits = 1;
        for (uint32_t j = k; j < s->n && s->time[j] < until && fits; j++)
            fits = s->free[j] >= slots;
        if (fits)
            return t;
    }
    return INT64_MAX;
}

/* The plain profile from `now` on: a step at now, none before. */
static void plain_advance(struct plain *s, int64_t now)
{
    plain_break(s, now);
    uint32_t k = 0;
    while (s->time[k] < now)
        k++;
    for (uint32_t j = 0; j + k < s->n; j++) {
        s->time[j] = s->time[j + k];
        s->free[j] = s->free[j + k];
    }
    s->n -= k;
}

struct held {
    int64_t at, dur, slots;
};

/* Whether p's steps at or after s's first are s's, time for time
 * (profile_advance may keep, in the block that holds now, steps before
 * it that no query reads). */
static int same_steps(const struct profile *p, const struct plain *s)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_blocks; k++)
        for (uint32_t i = 0; i < p->block[k].n; i++) {
            int64_t t = p->time[(size_t)p->block[k].at * PROFILE_BLOCK + i];
            if (t < s->time[0])
                continue;
            if (n == s->n || s->time[n] != t)
                return 0;
            n++;
        }
    return n == s->n;
}

/* A profile kept from pass to pass: each round the clock moves on, some
 * reservations are given back (their jobs ended early) or moved to the
 * earliest start before their promise, and new jobs are placed; every
 * answer and the free slots at every step are compared. */
static int run_kept_case(uint64_t seed, uint32_t rounds, int64_t capacity)
{
    static struct plain s;
    static struct held h[4000];
    uint32_t n_held = 0;
    struct profile p;
    profile_init(&p);
    struct pcg32 r;
    pcg32_stream(&r, seed, RNG_TEST, 37);
    int64_t now = 1000;
    s.n = 1;
    s.time[0] = now;
    s.free[0] = capacity;
    int bad = !CHECK_INT(profile_reset(&p, now, capacity), 0);
    for (uint32_t round = 0; round < rounds && !bad; round++) {
        /* a few newcomers */
        for (uint32_t i = 0, n = pcg32_bounded(&r, 4); i < n && !bad && n_held < 4000; i++) {
            int64_t slots = 1 + (int64_t)pcg32_bounded(&r, (uint32_t)capacity / 2);
            int64_t dur = 1 + (int64_t)pcg32_bounded(&r, 400);
            int64_t want = plain_earliest(&s, slots, dur), got = profile_earliest(&p, slots, dur);
            if (!CHECK_INT(got, want))
                bad = 1;
            else if (want != INT64_MAX) {
                plain_reserve(&s, want, dur, slots);
                CHECK_INT(profile_reserve(&p, want, dur, slots), 0);
                h[n_held++] = (struct held){want, dur, slots};
            }
        }
        /* the clock moves on; reservations that began are dropped from
         * the list (they are running jobs now, ending at their estimate) */
        now += (int64_t)pcg32_bounded(&r, 40);
        plain_advance(&s, now);
        CHECK_INT(profile_advance(&p, now), 0);
        for (uint32_t k = 0; k < n_held;)
            if (h[k].at < now)
                h[k] = h[--n_held];
            else
                k++;
        /* one ends early: what is left of its reservation comes back */
        if (n_held && pcg32_bounded(&r, 2) == 0) {
            uint32_t k = pcg32_bounded(&r, n_held);
            plain_carve(&s, h[k].at, h[k].dur, -h[k].slots, 1);
            CHECK_INT(profile_give_back(&p, h[k].at, h[k].dur, h[k].slots), 0);
            h[k] = h[--n_held];
        }
        /* some move to the earliest start before their promise */
        for (uint32_t i = 0; i < 3 && n_held && !bad; i++) {
            struct held *x = &h[pcg32_bounded(&r, n_held)];
            int64_t from = now + (int64_t)pcg32_bounded(&r, 20), to = x->at - (int64_t)pcg32_bounded(&r, 20);
            int64_t want = plain_earliest_before(&s, x->slots, x->dur, from, to, x->at);
            int64_t got = profile_earliest_before(&p, x->slots, x->dur, from, to, x->at);
            if (!CHECK_INT(got, want)) {
                printf("  seed %llu, round %u\n", (unsigned long long)seed, round);
                bad = 1;
            } else if (want != INT64_MAX) {
                plain_carve(&s, x->at, x->dur, -x->slots, 1);
                plain_carve(&s, want, x->dur, x->slots, 1);
                CHECK_INT(profile_move(&p, x->at, want, x->dur, x->slots), 0);
                x->at = want;
            }
        }
        for (uint32_t k = 0; k < s.n && !bad; k++)
            if (!CHECK_INT(profile_free_at(&p, s.time[k]), s.free[k]))
                bad = 1;
        /* the same steps, not only the same values: a query answers at a
         * step, so a step merged away or left behind changes answers (a
         * move by less than its length carves only the window's ends) */
        if (!bad && !CHECK(same_steps(&p, &s)))
            bad = 1;
    }
    profile_release(&p);
    return bad;
}

/* A search bounded by a promise at `limit` reads each window only up to
 * it (from there on the promise's own slots serve, and here the profile
 * has none left), exactly enough room being enough. */
static void test_profile_room_before_limit(void)
{
    struct profile p;
    profile_init(&p);
    /* 0 free over [0, 50), 4 over [50, 100), 0 over [100, 150) (the
     * promise's own), 10 from 150 */
    CHECK_INT(profile_reset(&p, 0, 10), 0);
    CHECK_INT(profile_reserve(&p, 0, 50, 10), 0);
    CHECK_INT(profile_reserve(&p, 50, 50, 6), 0);
    CHECK_INT(profile_reserve(&p, 100, 50, 10), 0);
    CHECK_INT(profile_earliest_before(&p, 4, 80, 0, 100, 100), 50); /* [50, 100): 4, exactly enough */
    CHECK_INT(profile_earliest_before(&p, 4, 80, 0, 100, INT64_MAX), INT64_MAX); /* unbounded: it meets [100, 150) */
    CHECK_INT(profile_earliest_before(&p, 5, 80, 0, 100, 100), INT64_MAX);
    CHECK_INT(profile_earliest_before(&p, 4, 40, 0, 100, 100), 50);
    CHECK_INT(profile_earliest_before(&p, 4, 80, 0, 50, 100), INT64_MAX); /* to: starts before 50 only */
    /* 6 free over [0, 30), 0 over [30, 60), 2 over [60, 100), 0 over
     * [100, 150) */
    CHECK_INT(profile_reset(&p, 0, 10), 0);
    CHECK_INT(profile_reserve(&p, 0, 30, 4), 0);
    CHECK_INT(profile_reserve(&p, 30, 30, 10), 0);
    CHECK_INT(profile_reserve(&p, 60, 40, 8), 0);
    CHECK_INT(profile_reserve(&p, 100, 50, 10), 0);
    CHECK_INT(profile_earliest_before(&p, 5, 20, 0, 100, 100), 0);
    CHECK_INT(profile_earliest_before(&p, 5, 31, 0, 100, 100), INT64_MAX); /* it would reach [30, 60) */
    CHECK_INT(profile_earliest_before(&p, 2, 40, 1, 100, 100), 60);
    CHECK_INT(profile_earliest_before(&p, 2, 41, 1, 100, INT64_MAX), INT64_MAX);
    CHECK_INT(profile_earliest_before(&p, 5, 20, 1, 100, 100), INT64_MAX); /* no step in [1, 100) has room */
    profile_release(&p);
}

static void test_profile_kept(void)
{
    for (uint64_t seed = 1; seed <= 40; seed++)
        if (run_kept_case(seed, 300 + 20 * (uint32_t)seed, 8 + (int64_t)(seed % 5) * 12))
            break;
}

/* test_profile_tiny_blocks.c runs these again on blocks of 4 steps */
#ifndef PROFILE_TEST_SUITE
#define PROFILE_TEST_SUITE suite_profile
#define PROFILE_TEST_LABEL "profile"
#endif

void PROFILE_TEST_SUITE(void)
{
    test_run(PROFILE_TEST_LABEL ": short random profiles against a plain step function", test_profile_short);
    test_run(PROFILE_TEST_LABEL ": long random profiles (hundreds of blocks) against a plain step function", test_profile_long);
    test_run(PROFILE_TEST_LABEL ": 5,000 jobs at one instant", test_profile_one_instant);
    test_run(PROFILE_TEST_LABEL ": a search bounded by a promise reads each window up to it", test_profile_room_before_limit);
    test_run(PROFILE_TEST_LABEL ": kept from pass to pass (advanced, given back, moved) against a plain step function",
             test_profile_kept);
}
