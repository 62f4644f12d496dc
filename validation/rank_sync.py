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
share of slow repetitions barely grows with the ranks. Where a point records every rank's host issue
times (``rank_host_times_s``), the order statistic is taken over them instead (:func:`host_steps`):
one process's distribution is then measured, not inferred from the slowest of the repetition's ranks,
and the rest of a repetition's time enters as a factor the ranks share, drawn as measured or held at its
median, whichever reproduces the points' own medians better (:func:`reading`, chosen on the calibration
data by :func:`self_check`). How either estimate compares
with a fit over several world sizes, per machine, is in docs/accuracy.md section 3; predictions carry
the points' own spread of the step (``spread_s``), and data from two world sizes, which determine the
cost by fitting, are better than any order statistic.

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
MODEL_SD_S = 5.9e-6
"""How far the order statistics' per-doubling cost strays from the one a fit over several world sizes
finds, machine to machine (seconds; root mean square over the committed machines of docs/accuracy.md
section 3's rank-cost table, validation.rank_model_error, which refuses to write the report when this
figure no longer matches the data: -2.0, +1.7, +5.3 and -10.3 us on the four machines): the order statistics read one process's
draws, not a host whose every process issues more slowly with more ranks (4x H200) nor one whose slow
repetitions are one process at a time (4x H100). A prediction on other ranks carries it beside the
estimate's own spread (:attr:`RankSync.prediction_sd_s`)."""


@dataclass(frozen=True)
class RankSync:
    """Cost per doubling of the ranks from the repetitions' order statistics."""

    per_doubling_s: float          # median over points of Q(0.707) - Q(0.5): the next doubling's cost
    sd_s: float                    # its standard error (bootstrap over points)
    points: int                    # latency-bound points with >= MIN_REPS repetitions
    world: int                     # the world size the repetitions were measured at
    steps_s: tuple[float, ...]     # median cost of each of the next DOUBLINGS doublings (the first above)
    spread_s: float = 0.0          # how far one point's cost strays from the median (1.4826 x MAD over points)
    host_points: int = 0           # of the points, those read off every rank's host issue times (host_steps)
    model_sd_s: float = 0.0        # the order statistics' error against a several-world fit (MODEL_SD_S)

    @property
    def prediction_sd_s(self) -> float:
        """Uncertainty of the cost one prediction pays: the median's standard error and the points'
        own spread in quadrature. Whether a point's median moves to its slow mode when the ranks
        double differs from point to point (tens of percent of bimodal repetitions each side), so a
        new point's growth is known no better than that spread, however well the median is; and the
        order statistics themselves miss a machine's growth by ``model_sd_s`` (:data:`MODEL_SD_S`)."""
        return float(np.sqrt(self.sd_s ** 2 + self.spread_s ** 2 + self.model_sd_s ** 2))

    @property
    def source(self) -> str:
        """What the cost was read off: the repetitions, every rank's host issue times, or both."""
        return ("the repetitions" if not self.host_points else "every rank's host issue times"
                if self.host_points == self.points else "the repetitions and every rank's host issue times")

    def describe(self) -> str:
        steps = ", ".join(f"{s * 1e6:.1f}" for s in self.steps_s)
        rep = self.points - self.host_points
        source = " and ".join(([f"every rank's host issue times of {self.host_points}"] if self.host_points else [])
                              + ([f"the repetitions of {rep}"] if rep else []))
        return (f"{self.per_doubling_s * 1e6:.1f} +- {self.sd_s * 1e6:.1f} us per doubling of the ranks, from "
                f"{source} latency-bound points on {self.world} GPUs (order statistics of the "
                f"slowest rank; doublings from {self.world} to {self.world << len(self.steps_s)} GPUs: {steps} us; "
                f"one point's cost strays from it by +-{self.spread_s * 1e6:.1f} us"
                + (f" and the order statistics miss a machine's several-world fit by +-{self.model_sd_s * 1e6:.1f} us"
                   if self.model_sd_s else "") + ", which the intervals carry)")


def _latency_bound(predictor: Predictor, p: CollMeasurement) -> bool:
    c = predictor.predict(p)
    return c is not None and predictor.latency_bound(c)


def estimate(points: Sequence[CollMeasurement], predictor: Predictor, seed: int = 0,
             model_sd_s: float | None = None) -> RankSync | None:
    """The per-doubling synchronisation cost from ``points`` of one world size (None: the points
    span several world sizes, which a fit can use directly, or too few have repetitions);
    ``model_sd_s``: the order statistics' model error it carries (default :data:`MODEL_SD_S`)."""
    worlds = {p.world for p in points}
    if len(worlds) != 1:
        return None
    world = worlds.pop()
    q = [0.5 ** (1.0 / 2 ** m) for m in range(DOUBLINGS + 1)]
    steps, host = [], 0
    how = reading(points)
    for p in points:
        if len(p.rep_times_s) < MIN_REPS or not _latency_bound(predictor, p):
            continue
        h = host_steps(p, how)
        host += h is not None
        steps.append(h if h is not None else np.diff(np.quantile(np.asarray(p.rep_times_s), q)))
    if len(steps) < MIN_POINTS:
        return None
    st = np.array(steps)
    first = st[:, 0]
    rng = np.random.default_rng(seed)
    boot = [np.median(first[rng.integers(0, len(first), len(first))]) for _ in range(BOOTSTRAP)]
    return RankSync(float(np.median(first)), float(np.std(boot)), len(first), world,
                    tuple(float(x) for x in np.median(st, axis=0)),
                    float(1.4826 * np.median(np.abs(first - np.median(first)))), host,
                    MODEL_SD_S if model_sd_s is None else float(model_sd_s))


def host_steps(p: CollMeasurement, how: str = "shared") -> np.ndarray | None:
    """The next DOUBLINGS doublings' cost (seconds) of one point from every rank's host issue times
    (None when the point has none). A repetition's time per call is T = R x max_i X_i: X_i is rank i's
    host issue time per call (the host clock over the repetition's first calls; pooled over ranks and
    repetitions, one process's distribution), R the rest of the repetition over its slowest rank's issue
    time (what the GPU time adds later in the repetition: a factor the ranks share, drawn independently of
    their hosts). On n ranks max X has the distribution F_X^n, so the median of T on n ranks solves
    mean over R of F_X(t / R)^n = 1/2 (:func:`median_slowest`); the doublings are its differences from the
    point's own world size. ``how`` = "median" holds R at its median instead (a constant: the median on n
    ranks is median(R) x the 0.5^(1/n) quantile of X); :func:`reading` picks the one that reproduces
    the measured medians at the calibration's own world size better (:func:`self_check`, printed in
    docs/accuracy.md section 3)."""
    h = np.asarray(p.rank_host_times_s, dtype=float)
    if h.ndim != 2 or h.shape[0] != p.world or h.shape[1] != len(p.rep_times_s) or h.shape[1] == 0:
        return None
    rest = np.asarray(p.rep_times_s) / h.max(axis=0)
    if how not in READINGS:
        raise ValueError(f"unknown reading {how!r} (one of {', '.join(READINGS)})")
    at = median_slowest if how == "shared" else _median_rest
    return np.diff([at(h.ravel(), rest, p.world << m) for m in range(DOUBLINGS + 1)])


READINGS = ("shared", "median")
"""The two readings of the rest R of a repetition (:func:`host_steps`): drawn as measured, or its median."""


def reading(points: Sequence[CollMeasurement]) -> str:
    """The reading :func:`host_steps` uses for ``points``: the one :func:`self_check` finds closer to
    the points' own measured medians ("shared" where no point has host issue times or they tie)."""
    check = self_check(points)
    return "median" if check is not None and check["median"] < check["shared"] else "shared"


def _median_rest(x: np.ndarray, rest: np.ndarray, n: int) -> float:
    """Median on n ranks with R held at its median: median(R) x the 0.5^(1/n) quantile of X."""
    return float(np.median(rest)) * float(np.quantile(x, 0.5 ** (1 / n)))


def self_check(points: Sequence[CollMeasurement]) -> dict[str, float] | None:
    """Median |error| (fraction) with which the two readings of the host issue times reproduce each
    point's measured median at its own world size: ``shared`` (R drawn as measured) and
    ``median`` (R a constant, its median); :func:`reading` picks the smaller. None without host times."""
    err: dict[str, list[float]] = {"shared": [], "median": []}
    for p in points:
        h = np.asarray(p.rank_host_times_s, dtype=float)
        if h.ndim != 2 or h.shape[0] != p.world or h.shape[1] != len(p.rep_times_s) or len(p.rep_times_s) < MIN_REPS:
            continue
        rest, med = np.asarray(p.rep_times_s) / h.max(axis=0), float(np.median(p.rep_times_s))
        err["shared"].append(abs(median_slowest(h.ravel(), rest, p.world) / med - 1))
        err["median"].append(abs(_median_rest(h.ravel(), rest, p.world) / med - 1))
    return {k: float(np.median(v)) for k, v in err.items()} if err["shared"] else None


def median_slowest(x: Sequence[float] | np.ndarray, rest: Sequence[float] | np.ndarray, n: int) -> float:
    """Median of R x max(X_1 .. X_n) for i.i.d. X drawn from the samples ``x`` and R from ``rest``
    (independent of the X): the t where mean over R of F_X(t / R)^n reaches 1/2 (bisection)."""
    xs, r = np.sort(np.asarray(x, dtype=float)), np.asarray(rest, dtype=float)
    lo, hi = float(xs[0] * r.min()), float(xs[-1] * r.max())
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if np.mean((np.searchsorted(xs, mid / r, side="right") / len(xs)) ** n) < 0.5:
            lo = mid
        else:
            hi = mid
    return hi
