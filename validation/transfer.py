"""Calibrate on some GPUs, predict others: pooled campaigns, intervals and NCCL's own baseline.

Small messages are bimodal on shared hosts (the same point ranges e.g. 21-104 us over campaigns),
so one campaign's median is a poor truth. A point measured in several campaigns is *pooled*: its
time is the median of every repetition of every campaign, its range the fastest to slowest of
them, its ``rep_times_s`` all of them (:func:`pooled_points`). Predictions are scored against that, with their 90% intervals
(simulator.network.intervals): coverage is the share of pooled medians inside the interval; the
'any launch' band's coverage is the share of single repetitions inside it.

The baseline is NCCL's own cost model (simulator.collectives.nccl_model) plus one per-call floor
fitted on the same calibration points: what a user gets from NCCL's tuning table and one number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from simulator.collectives.uncertainty import size_bands
from validation.calibrate import SIZE_EDGES_BYTES
from validation.compare import Comparison, Predictor
from validation.parsers import CollMeasurement, read_jsonl

BANDS = size_bands(SIZE_EDGES_BYTES)
"""(name, smallest size, first size above) of the report's size bands: the calibration's residual bands."""


def _key(op: str, world: int, size: int, variant: str) -> tuple:
    return (op, world, size, variant)


TRUTHS = (("pooled over >= 2 campaigns", lambda q: q.several_campaigns),
          ("one campaign", lambda q: not q.several_campaigns))
"""How a truth was measured (label, test on a PooledPoint): in several campaigns (a median over launches)
or in one launch (e.g. the NCCL_ALGO/NCCL_PROTO variants: 3 repetitions, one launch's host state)."""


@dataclass(frozen=True)
class PooledPoint:
    """A point measured in one or more campaigns: the pooled median and range, and each campaign's median."""

    point: CollMeasurement            # time_s = pooled median of repetitions; min_s/max_s = pooled range
    campaign_medians: tuple[float, ...]

    @property
    def several_campaigns(self) -> bool:
        """Measured in two campaigns or more (its truth a median over launches), not in one launch."""
        return len(self.campaign_medians) >= 2


def pooled_points(paths: Sequence[str | Path], world: int | None = None) -> list[PooledPoint]:
    """Points of several campaigns pooled by (op, world, bytes, variant); out-of-place only. The same files (path,
    size and modification time) and world give the same points, so they are pooled once per process (the accuracy
    report pools each sealed campaign's files for three tables: validation.lease_spread, validation.bw_lease_spread
    and validation.sealed_campaign)."""
    from validation.llm_records import file_keys
    return list(_pooled_files(file_keys(list(paths)), world))      # a file that is not there: read_jsonl names it


@lru_cache(maxsize=64)
def _pooled_files(key: tuple[tuple[str, int, int], ...], world: int | None) -> tuple[PooledPoint, ...]:
    return _pool([path for path, _, _ in key], world)


def _pool(paths: Sequence[str | Path], world: int | None) -> tuple[PooledPoint, ...]:
    reps: dict[tuple, list[float]] = {}
    medians: dict[tuple, list[float]] = {}
    first: dict[tuple, CollMeasurement] = {}
    host: dict[tuple, list[tuple[tuple[float, ...], ...]]] = {}
    for path in paths:
        ds = read_jsonl(path)
        for p in ds.points:
            if p.in_place or (world is not None and p.world != world) or not math.isfinite(p.time_s):
                continue
            k = _key(p.op, p.world, p.size_bytes, p.variant)
            first.setdefault(k, p)
            reps.setdefault(k, []).extend(p.rep_times_s or [p.time_s])
            medians.setdefault(k, []).append(p.time_s)
            host.setdefault(k, []).append(p.rank_host_times_s)
    out = []
    for k, p in first.items():
        r = np.array(reps[k])
        out.append(PooledPoint(replace(p, time_s=float(np.median(r)), min_s=float(r.min()), max_s=float(r.max()),
                                       rep_times_s=tuple(float(x) for x in r), source="pooled",
                                       launches=len(medians[k]), rank_host_times_s=_pooled_host(host[k])),
                               tuple(medians[k])))
    return tuple(sorted(out, key=lambda q: (q.point.op, q.point.variant, q.point.size_bytes)))


def _pooled_host(per_launch: Sequence[tuple[tuple[float, ...], ...]]) -> tuple[tuple[float, ...], ...]:
    """Every rank's host issue times over the pooled repetitions (each rank's lists of the launches joined,
    so they stay aligned with the pooled ``rep_times_s``); none unless every launch recorded them."""
    if not per_launch or not all(per_launch) or len({len(h) for h in per_launch}) != 1:
        return ()
    return tuple(tuple(x for h in per_launch for x in h[rank]) for rank in range(len(per_launch[0])))


def nccl_floor(points: Iterable[CollMeasurement], predictor: Predictor) -> float:
    """The one per-call floor (seconds) that best fits NCCL's own model to ``points`` (least squares
    on log time, over the points NCCL's model covers)."""
    pairs = []
    for p in points:
        c = predictor.predict(p)
        if c is not None and c.nccl_s:
            pairs.append((c.nccl_s, p.time_s))
    if not pairs:
        return 0.0
    nccl = np.array([a for a, _ in pairs])
    meas = np.array([b for _, b in pairs])
    grid = np.linspace(0.0, 100e-6, 2001)
    cost = [float(np.sum(np.log((nccl + f) / meas) ** 2)) for f in grid]
    return float(grid[int(np.argmin(cost))])


@dataclass(frozen=True)
class Scored:
    """One prediction against a pooled point, with its interval and the baseline."""

    pooled: PooledPoint
    comparison: Comparison
    lo_s: float
    hi_s: float
    baseline_s: float | None
    launch_lo_s: float | None = None     # the 'any launch' band (calibrations with repetitions)
    launch_hi_s: float | None = None

    @property
    def error(self) -> float:
        return self.comparison.predicted_s / self.pooled.point.time_s - 1.0

    @property
    def inside_interval(self) -> bool:
        return self.lo_s <= self.pooled.point.time_s <= self.hi_s

    @property
    def inside_range(self) -> bool:
        p = self.pooled.point
        return bool(p.min_s and p.max_s and p.min_s <= self.comparison.predicted_s <= p.max_s)

    @property
    def reps_inside_launch_band(self) -> tuple[int, int]:
        """(repetitions inside the 'any launch' band, repetitions) of the pooled point."""
        reps = self.pooled.point.rep_times_s
        if self.launch_lo_s is None or not reps:
            return 0, 0
        return sum(self.launch_lo_s <= t <= self.launch_hi_s for t in reps), len(reps)

    @property
    def width(self) -> float:
        """Interval width over the prediction."""
        return (self.hi_s - self.lo_s) / self.comparison.predicted_s


def score(pooled: Sequence[PooledPoint], predictor: Predictor, floor_s: float | None = None) -> list[Scored]:
    """Predict every pooled point with its interval (and NCCL's model + ``floor_s`` when given)."""
    out = []
    for q in pooled:
        c = predictor.predict(q.point)
        if c is None:
            continue
        iv = predictor.setup(q.point)[0].intervals.interval(q.point.op, c.algo, c.proto,
                                                                    q.point.size_bytes, c.predicted_s)
        base = c.nccl_s + floor_s if (floor_s is not None and c.nccl_s) else None
        out.append(Scored(q, c, iv.lo_s, iv.hi_s, base, iv.launch_lo_s, iv.launch_hi_s))
    return out


def stats(rows: Sequence[Scored]) -> dict:
    """Median/p90 |error| (ours and baseline), share inside the campaigns' range, coverage, width."""
    if not rows:
        return {"points": 0}
    e = np.abs([r.error for r in rows]) * 100
    out = {"points": len(rows), "median_pct": float(np.median(e)), "p90_pct": float(np.percentile(e, 90)),
           "inside_range_pct": float(np.mean([r.inside_range for r in rows]) * 100),
           "coverage_pct": float(np.mean([r.inside_interval for r in rows]) * 100),
           "median_width_pct": float(np.median([r.width for r in rows]) * 100)}
    band = [r for r in rows if r.launch_lo_s is not None and r.pooled.point.rep_times_s]
    if band:
        inside = np.array([r.reps_inside_launch_band for r in band])
        out["launch_coverage_pct"] = float(inside[:, 0].sum() / inside[:, 1].sum() * 100)
        out["launch_width_pct"] = float(np.median([(r.launch_hi_s - r.launch_lo_s) / r.comparison.predicted_s
                                                   for r in band]) * 100)
        out["launch_reps"] = int(inside[:, 1].sum())
    b = [r for r in rows if r.baseline_s]
    if b:
        out["baseline_points"] = len(b)
        out["baseline_median_pct"] = float(np.median([abs(r.baseline_s / r.pooled.point.time_s - 1) for r in b]) * 100)
        out["ours_on_baseline_points_pct"] = float(np.median([abs(r.error) for r in b]) * 100)
    return out
