"""The per-rank synchronisation cost, read off the repetitions of one world size (order statistics).

A small collective timed back to back (nccl-tests, our runner) runs at the pace of its slowest rank:
every rank's host issues the calls, the GPUs wait for each other in every call, and each
repetition's time is the slowest rank's. Repetitions are bimodal on shared hosts (a rank's host is
fast or slow for a whole repetition: frequency, scheduling, a noisy neighbour), so more ranks mean
more chances that one of them is slow. That is ``rank_overhead_s``: the cost per doubling of the
ranks. A fit to one world size cannot separate it from the per-call cost (log2(2) = 1), but the
repetitions can, if the ranks' hosts are alike and independent:

With n ranks a repetition takes M_n = max(X_1 .. X_n), so its distribution is F_Mn = F_X^n. From
F_M2 measured on 2 GPUs, F_M4 = F_M2^2: the median on 4 GPUs is the quantile 0.5^(1/2) = 0.707 of
the 2-GPU repetitions, and in general one doubling moves the median from the quantile 0.5 to the
quantile 0.707 of the current distribution. :func:`estimate` takes, for every latency-bound point
with enough repetitions, that difference Q(0.707) - Q(0.5) (seconds: a host cost adds), and the
median over points; its spread over points (bootstrap) is its uncertainty. The next doublings
(quantiles 0.5^(1/4), 0.5^(1/8), ...) are reported too: they check the log2(n) form the model
extrapolates with (simulator.collectives.plans: ``rank_overhead_s * log2(n)``).

What the data say about the assumption (docs/accuracy.md section 3): every rank's host issue time
(the runner's ``rank_host_times_s``) shows back-to-back small collectives running at the host's pace,
and slow repetitions caused by one process's host at a time, not by independent per-rank draws; the
share of slow repetitions barely grows with the ranks. The estimate matched a fit over 2 and 4 GPUs
on one machine (4x H200: 6.0 vs 6.1 us) and missed on two 4x H100 leases (5.3 vs 3.1, 10.1 vs 0.0
us from 2 and 3 GPUs), so predictions carry the points' own spread of the step (``spread_s``), and
data from two world sizes, which determine the cost by fitting, are better than any order statistic.

NCCL's own model has no such term (its latencies are the GPU's: a base per algorithm and protocol
and a per-step hop latency, which the plans add separately); this is the host's part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from validation.compare import Predictor
from validation.parsers import CollMeasurement

MIN_REPS = 10
"""A point needs this many repetitions for its 0.707 quantile to mean something."""
MIN_POINTS = 10
"""Fewer usable points than this: no estimate (the prior stays)."""
DOUBLINGS = 4
"""Doublings reported (2 -> 4 -> 8 -> 16 -> 32 ranks from 2-GPU data)."""
BOOTSTRAP = 400


@dataclass(frozen=True)
class RankSync:
    """Cost per doubling of the ranks from the repetitions' order statistics."""

    per_doubling_s: float          # median over points of Q(0.707) - Q(0.5): the next doubling's cost
    sd_s: float                    # its standard error (bootstrap over points)
    points: int                    # latency-bound points with >= MIN_REPS repetitions
    world: int                     # the world size the repetitions were measured at
    steps_s: tuple[float, ...]     # median cost of each of the next DOUBLINGS doublings (the first above)
    spread_s: float = 0.0          # how far one point's cost strays from the median (1.4826 x MAD over points)

    @property
    def prediction_sd_s(self) -> float:
        """Uncertainty of the cost one prediction pays: the median's standard error and the points'
        own spread in quadrature. Whether a point's median moves to its slow mode when the ranks
        double differs from point to point (tens of percent of bimodal repetitions each side), so a
        new point's growth is known no better than that spread, however well the median is."""
        return float(np.hypot(self.sd_s, self.spread_s))

    def describe(self) -> str:
        steps = ", ".join(f"{s * 1e6:.1f}" for s in self.steps_s)
        return (f"{self.per_doubling_s * 1e6:.1f} +- {self.sd_s * 1e6:.1f} us per doubling of the ranks, from the "
                f"repetitions of {self.points} latency-bound points on {self.world} GPUs (order statistics of the "
                f"slowest rank; doublings from {self.world} to {self.world << len(self.steps_s)} GPUs: {steps} us; "
                f"one point's cost strays from it by +-{self.spread_s * 1e6:.1f} us, which the intervals carry)")


def _latency_bound(predictor: Predictor, p: CollMeasurement) -> bool:
    c = predictor.predict(p)
    return c is not None and predictor.latency_bound(c)


def estimate(points: Sequence[CollMeasurement], predictor: Predictor, seed: int = 0) -> RankSync | None:
    """The per-doubling synchronisation cost from ``points`` of one world size (None: the points
    span several world sizes, which a fit can use directly, or too few have repetitions)."""
    worlds = {p.world for p in points}
    if len(worlds) != 1:
        return None
    q = [0.5 ** (1.0 / 2 ** m) for m in range(DOUBLINGS + 1)]
    steps = []
    for p in points:
        if len(p.rep_times_s) < MIN_REPS or not _latency_bound(predictor, p):
            continue
        steps.append(np.diff(np.quantile(np.asarray(p.rep_times_s), q)))
    if len(steps) < MIN_POINTS:
        return None
    st = np.array(steps)
    first = st[:, 0]
    rng = np.random.default_rng(seed)
    boot = [np.median(first[rng.integers(0, len(first), len(first))]) for _ in range(BOOTSTRAP)]
    return RankSync(float(np.median(first)), float(np.std(boot)), len(first), worlds.pop(),
                    tuple(float(x) for x in np.median(st, axis=0)),
                    float(1.4826 * np.median(np.abs(first - np.median(first)))))
