"""Where one run's wall time and failure count fall under the failure model of :mod:`.goodput`: their 90%
intervals.

:mod:`.goodput` gives expectations (Daly's model): failures arrive at rate ``1/M``, a segment of ``L = tau +
delta`` seconds (work and its checkpoint) is retried from its start after each failure, and every failure
costs a restart of ``R`` seconds that can itself fail and start over. One run is random: this module gives
the spread of that randomness, exactly in its first two moments, with no measurement involved (no dataset
of failures is committed; the MTBFs are the user's). Per segment:

* ``K`` failures before the segment succeeds: geometric, ``P(success) = e^(-L/M)``; each failed attempt runs
  ``X`` seconds (an exponential truncated to ``[0, L]``) and then a restart ``Y``;
* a restart is the same process on ``R`` seconds: ``K'`` failed restarts of ``X'`` (truncated to
  ``[0, R]``) each, then ``R``;
* the segment's wall time ``T = sum_{i<=K} (X_i + Y_i) + L`` and failures ``F = K + sum_{i<=K} K'_i``, whose
  mean and variance follow from those of a random sum (``E[T]`` is Daly's ``M e^(R/M) (e^(L/M) - 1)``).

A run of ``W`` seconds of work is ``n = W / tau`` independent segments (a real number, as the expectation takes
it): its wall time has mean ``n E[T]`` and variance ``n Var[T]`` and is exactly ``n L`` when no failure
comes (probability ``e^(-n L / M)``); the interval is the 5% and 95% quantiles of that point and, otherwise, a
gamma distribution above ``n L`` with the remaining moments (the failure count: the same, from 0). With many
segments that is the central limit; with few it keeps the skew and the point at the floor. ``tests/test_goodput_spread.py`` checks the moments and the coverage against a seeded Monte Carlo of
the same process.
"""

from __future__ import annotations

import math

from simulator.collectives.uncertainty import LEVEL    # the one level of every interval printed


def exp_or_inf(x: float) -> float:
    """``e^x``, infinite where it overflows (a segment many MTBFs long never ends)."""
    return math.exp(x) if x < 709.0 else math.inf


def expm1_or_inf(x: float) -> float:
    """``e^x - 1``, infinite where it overflows."""
    return math.expm1(x) if x < 709.0 else math.inf


def _truncated_exp(length_s: float, mtbf_s: float) -> tuple[float, float]:
    """(mean, variance) of an exponential of mean ``mtbf_s`` given it ends within ``length_s``."""
    if length_s <= 0:
        return 0.0, 0.0
    x = length_s / mtbf_s
    if x < 1e-4:              # series in x: E[t/L] = 1/2 - x/12, E[(t/L)^2] = 1/3 - x/12 (errors O(x^2))
        m1, m2 = 0.5 - x / 12, 1 / 3 - x / 12
    else:
        e = expm1_or_inf(x)
        m1 = 1 / x - 1 / e
        m2 = 2 / x ** 2 - (1 + 2 / x) / e
    return length_s * m1, length_s ** 2 * max(m2 - m1 * m1, 0.0)


def _random_sum(count: tuple[float, float], term: tuple[float, float]) -> tuple[float, float]:
    """(mean, variance) of the sum of a random number (``count``: mean, variance) of independent terms."""
    return count[0] * term[0], count[0] * term[1] + count[1] * term[0] ** 2


def _failures_before_success(length_s: float, mtbf_s: float) -> tuple[float, float]:
    """(mean, variance) of the failures before ``length_s`` seconds pass without one: geometric."""
    x = length_s / mtbf_s
    return expm1_or_inf(x), expm1_or_inf(x) * exp_or_inf(x)


def segment_moments(length_s: float, restart_s: float, mtbf_s: float) -> tuple[float, float, float, float]:
    """(E[T], Var[T], E[F], Var[F]) of one segment of ``length_s`` (work and checkpoint): wall time ``T`` and
    failures ``F`` (restarts' included)."""
    if math.isinf(mtbf_s):
        return length_s, 0.0, 0.0, 0.0
    k, k_r = _failures_before_success(length_s, mtbf_s), _failures_before_success(restart_s, mtbf_s)
    wasted = _random_sum(k_r, _truncated_exp(restart_s, mtbf_s))
    y = (wasted[0] + restart_s, wasted[1])                       # one restart, its failed tries included
    x = _truncated_exp(length_s, mtbf_s)
    t = _random_sum(k, (x[0] + y[0], x[1] + y[1]))
    f = _random_sum(k, (1 + k_r[0], k_r[1]))
    return t[0] + length_s, t[1], f[0], f[1]


def _gamma_bounds(mean: float, var: float, at_zero: float = 0.0, level: float = LEVEL) -> tuple[float, float]:
    """The ``(1 -+ level) / 2`` quantiles of a variable of ``mean`` and ``var`` that is 0 with probability
    ``at_zero`` and otherwise gamma distributed (its conditional moments); a point without variance."""
    if not (math.isfinite(mean) and math.isfinite(var)):
        return math.inf, math.inf
    if not (var > 0 and mean > 0) or at_zero >= 1:
        return mean, mean
    from scipy import stats
    m1 = mean / (1 - at_zero)                              # moments given it is not 0
    v1 = max((var + mean * mean) / (1 - at_zero) - m1 * m1, 1e-300)
    qs = [(1 - level) / 2, (1 + level) / 2]
    out = []
    for q in qs:
        if q <= at_zero:
            out.append(0.0)
        else:
            out.append(float(stats.gamma.ppf((q - at_zero) / (1 - at_zero), m1 * m1 / v1, scale=v1 / m1)))
    return out[0], out[1]


def run_bounds(work_s: float, interval_s: float, checkpoint_s: float, restart_s: float,
               mtbf_s: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """((low, high) wall seconds, (low, high) failures) of one run of ``work_s`` seconds of training that
    checkpoints every ``interval_s``: the 90% interval under the failure model."""
    length = interval_s + checkpoint_s
    n = work_s / interval_s
    t_mean, t_var, f_mean, f_var = segment_moments(length, restart_s, mtbf_s)
    floor = n * length
    none = math.exp(-floor / mtbf_s)                       # no failure in the whole run
    lo, hi = _gamma_bounds(n * (t_mean - length), n * t_var, none)
    return (floor + lo, floor + hi), _gamma_bounds(n * f_mean, n * f_var, none)
