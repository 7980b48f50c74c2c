#!/usr/bin/env python3
"""Erlang C, independently of fleetsim: the smallest c that meets a wait SLO
in an M/M/c queue (arrival rate lam per hour, mean service 1 h).

usage: erlang_c.py LAMBDA METRIC THRESHOLD_MIN   (METRIC: p95_wait | mean_wait)
prints c, the metric at c - 1 and at c (minutes), and exits 2 when the case
is a knife edge: the threshold within a factor 1.4 of either neighbour, where
sampling noise could decide the answer."""
import math
import sys


def erlang_c(c, a):
    """Probability that an arrival waits (a = lam / mu < c)."""
    term = a ** c / math.factorial(c) * c / (c - a)
    return term / (sum(a ** k / math.factorial(k) for k in range(c)) + term)


def wait_min(c, lam, metric, mu=1.0):
    a = lam / mu
    if a >= c:
        return math.inf
    pw, rate = erlang_c(c, a), c * mu - lam
    if metric == "mean_wait":
        return 60 * pw / rate
    # P(W > t) = C(c, a) exp(-(c mu - lam) t); the 95th percentile
    return 60 * max(0.0, math.log(pw / 0.05) / rate)


lam, metric, thr = float(sys.argv[1]), sys.argv[2], float(sys.argv[3])
c = int(lam) + 1
while wait_min(c, lam, metric) > thr:
    c += 1
below, at = wait_min(c - 1, lam, metric), wait_min(c, lam, metric)
print(c, "%.2f" % below, "%.2f" % at)
if below / thr < 1.4 or (at > 0 and thr / at < 1.4):
    sys.exit(2)
