"""DDP iterations: predicted vs measured, and calibration of the DDP model's own parameters.

Measured records come from ``validation.runners.ddp`` (kind ``ddp``: model, batch size, world,
bucket_cap_mb, every iteration's time and their median); a measurement is the median and p10-p90 of its
steady iterations (:mod:`validation.ddp_logger`: PyTorch's DDP holds the host back on its first 10
synchronised iterations, which the simulator does not predict). Each model's single-GPU workload comes
from a profile (``validation.profiler`` output, matched on the workload ``name`` = record
``model``). The runner passes ``bucket_cap_mb`` explicitly, so every bucket, the first included,
has that cap (``DDPConfig(first_bucket_mb=None)``), as PyTorch does.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
from scipy.optimize import least_squares

from simulator.network.closed_form import CostModel
from simulator.training.ddp import DDPConfig, simulate_iteration
from simulator.training.ddp_intervals import with_interval
from simulator.core import limits
from simulator.core.errors import InputError
from simulator.core.limits import MAX_BATCH_SIZE, MAX_BUCKET_CAP_MB
from simulator.collectives.params import DEFAULTS, Parameters, bounds
from simulator.training.workload import Workload, load_workload, step_compute_s
from validation.compare import Topo, nvls_from_env
from validation.ddp_logger import steady_stats_s
from validation.fields import Fields
from validation.runners.records import read_measurement_records

log = logging.getLogger(__name__)

DDP_KEYS = ("ddp.bucket_overhead_s", "ddp.compute_slowdown", "ddp.iteration_overhead_s")
SPREAD_FLOOR = 0.01
"""A configuration's residual weight is 1 / its measured spread (log(p90/p10) over the p10-p90 width of
a normal, at least 1%): a noisy launch pair (BERT at small bucket caps spreads by a third) weighs less
than a tight one, instead of dragging the overlap slowdown to its bound."""


@dataclass(frozen=True)
class DdpMeasurement:
    model: str
    batch_size: int
    world: int
    bucket_cap_mb: float
    median_s: float
    p10_s: float
    p90_s: float
    nosync_median_s: float | None
    launch_id: str
    source: str = ""
    launch_index: int | None = None   # the sweep's launch number; a rerun of it replaces it
    nvls: bool | None = None          # NCCL_NVLS_ENABLE of the run (None: NCCL's default)


def ddp_from_record(record: Mapping[str, object], source: str, where: str) -> DdpMeasurement:
    """One ``kind: "ddp"`` record, every field checked: positive finite times with
    ``p10_s <= median_s <= p90_s``, a whole batch size and world, a positive bucket cap. Its times are
    those of the steady iterations (:func:`validation.ddp_logger.steady_stats_s`: DDP holds the host back
    on its first 10 synchronised iterations; the record's own figures when it lacks per-iteration times)."""
    f = Fields(record, source, where, "ddp")
    median, p10, p90 = (f.number(k, positive=True) for k in ("median_s", "p10_s", "p90_s"))
    assert median is not None and p10 is not None and p90 is not None
    if not p10 <= median <= p90:
        raise f.bad("p10_s", "needs p10_s <= median_s <= p90_s",
                    {"p10_s": p10, "median_s": median, "p90_s": p90})
    f.times("iter_times_s")
    warmup = (f.whole("sync_warmup" if f.has("sync_warmup") else "warmup", high=10**9)
              if f.has("sync_warmup") or f.has("warmup") else None)    # (a null sync_warmup: absent)
    median, p10, p90 = steady_stats_s(record, warmup)   # the steady iterations only (validation.ddp_logger)
    return DdpMeasurement(
        f.text("model"), f.whole("batch_size", low=1, high=MAX_BATCH_SIZE),
        f.whole("world", low=1, high=limits.GPUS.value),
        float(f.number("bucket_cap_mb", positive=True, high=MAX_BUCKET_CAP_MB)), median, p10, p90,
        f.number("nosync_median_s", positive=True, required=False), f.text("launch_id", ""), source,
        f.whole("launch_index", high=10**6) if f.has("launch_index") else None,
        nvls_from_env(record.get("env") or {}) if isinstance(record.get("env") or {}, Mapping) else None)


def read_ddp(path: str | Path) -> list[DdpMeasurement]:
    """``ddp`` records of a JSONL file (other kinds are ignored)."""
    src = str(path)
    return [ddp_from_record(r, src, f"line {n}") for n, r in read_measurement_records(path) if r.get("kind") == "ddp"]


def has_ddp_records(path: str | Path) -> bool:
    """Whether the file holds any ``kind: "ddp"`` record (False when it is no JSONL file)."""
    try:
        return any(r.get("kind") == "ddp" for _, r in read_measurement_records(path, skip_bad=True))
    except InputError:
        return False


def load_workloads(paths: Sequence[str | Path]) -> dict[str, Workload]:
    """Workload files keyed by their ``name`` (the profiler names them after the model)."""
    return {w.name: w for w in (load_workload(p) for p in paths)}


@dataclass(frozen=True)
class DdpComparison:
    point: DdpMeasurement
    predicted_s: float
    exposed_comm_s: float
    lo_s: float | None = None        # the prediction's 90% interval (simulator.training.ddp_intervals)
    hi_s: float | None = None

    @property
    def error(self) -> float:
        return self.predicted_s / self.point.median_s - 1.0


def scale_compute(w: Workload, factor: float) -> Workload:
    """``w`` with every compute time (forward, backward, gradient-ready times, optimizer) times ``factor``."""
    from dataclasses import replace
    return replace(w, forward_s=w.forward_s * factor, backward_s=w.backward_s * factor,
                   optimizer_s=w.optimizer_s * factor,
                   params=tuple(replace(q, grad_ready_s=q.grad_ready_s * factor) for q in w.params))


class DdpPredictor:
    """Predicts a DDP measurement from its model's workload on ``topo`` with ``params``."""

    def __init__(self, topo: Topo, params: Parameters, workloads: Mapping[str, Workload],
                 compute: str = "profile", bands: Mapping[str, Mapping] | None = None) -> None:
        """``compute="profile"``: compute times from the single-GPU profile (a pure prediction);
        ``"nosync"``: the profile's times scaled so that one iteration's compute equals the
        measured ``no_sync()`` baseline of the same run (isolates the communication model). ``bands``: the
        held-out DDP bands the interval widens to (simulator.training.ddp_intervals.ddp_band; None: the
        shipped ones, ``{}``: none)."""
        if compute not in ("profile", "nosync"):
            raise InputError("compute must be 'profile' or 'nosync'", field="compute", value=compute)
        self.topo, self.params, self.workloads, self.compute = topo, params, dict(workloads), compute
        self.bands = bands
        self._routers: dict[tuple, object] = {}

    def with_workloads(self, workloads: Mapping[str, Workload]) -> "DdpPredictor":
        """The same predictor with other workloads (sharing its built topologies)."""
        return self._sharing(self.params, workloads)

    def with_params(self, params: Parameters) -> "DdpPredictor":
        return self._sharing(params, self.workloads)

    def _sharing(self, params: Parameters, workloads: Mapping[str, Workload]) -> "DdpPredictor":
        p = DdpPredictor(self.topo, params, workloads, self.compute, self.bands)
        p._routers = self._routers
        return p

    def model(self, world: int, nvls: bool | None = None) -> CostModel:
        r = self._routers.get((world, nvls))
        m = CostModel(r if r is not None else self.topo.build(world, nvls=nvls), self.params)
        self._routers[(world, nvls)] = m.router
        return m

    def predict(self, p: DdpMeasurement, interval: bool = True) -> DdpComparison:
        """The predicted iteration of ``p``; ``interval=False`` skips its 90% interval (``lo_s``/``hi_s``
        None), which a fit that reads only the iteration time does not need (the interval costs about
        four times the iteration's simulation)."""
        w = self.workloads.get(p.model)
        if w is None:
            raise InputError(f"no workload (profile) named {p.model!r}; give one with --profiles",
                             source=p.source, field="model", value=p.model)
        if w.batch_size and w.batch_size != p.batch_size:
            w = w.scaled_to_batch(p.batch_size)
        if self.compute == "nosync" and p.nosync_median_s:
            w = scale_compute(w, p.nosync_median_s / step_compute_s(w))
        model = self.model(p.world, p.nvls)
        r = simulate_iteration(model, w, DDPConfig(bucket_cap_mb=p.bucket_cap_mb, first_bucket_mb=None),
                               engine="closed")
        if interval:
            r = with_interval(model, r, w, self.bands)
        return DdpComparison(p, r.iteration_s, r.exposed_comm_s, r.iteration_lo_s, r.iteration_hi_s)


def aggregate(points: Sequence[DdpMeasurement]) -> list[DdpMeasurement]:
    """One point per configuration (model, batch, world, cap): the median over launches (of the
    iteration and of the ``no_sync()`` baseline), with the launches' lowest p10 and highest p90 as the spread.

    A launch counts once per configuration: a point recorded again for the same launch (the
    same ``launch_index``, or the same ``launch_id`` when there is none, e.g. a rerun of a partly
    recorded launch) replaces the earlier record, with a warning."""
    latest: dict[tuple, DdpMeasurement] = {}
    for p in points:
        launch = ("index", p.launch_index) if p.launch_index is not None else ("id", p.launch_id)
        latest[(p.model, p.batch_size, p.world, p.bucket_cap_mb, p.nvls, launch)] = p
    if len(latest) < len(points):
        log.warning("%d DDP points were recorded more than once for the same launch; the last "
                    "record of each is used", len(points) - len(latest))
    groups: dict[tuple, list[DdpMeasurement]] = {}
    for key, p in latest.items():
        groups.setdefault(key[:5], []).append(p)
    out = []
    for key, ps in sorted(groups.items(), key=lambda kv: kv[0][:4]):
        nosync = [p.nosync_median_s for p in ps if p.nosync_median_s]
        out.append(DdpMeasurement(*key[:4], float(np.median([p.median_s for p in ps])), min(p.p10_s for p in ps),
                                  max(p.p90_s for p in ps), float(np.median(nosync)) if nosync else None,
                                  ",".join(p.launch_id for p in ps), ps[0].source, nvls=key[4]))
    return out


def compare_ddp(points: Sequence[DdpMeasurement], predictor: DdpPredictor) -> list[DdpComparison]:
    return [predictor.predict(p) for p in points]


def ddp_summary(comps: Sequence[DdpComparison]) -> dict:
    if not comps:
        return {"points": 0}
    e = np.array([abs(c.error) for c in comps]) * 100
    spread = np.array([(c.point.p90_s - c.point.p10_s) / c.point.median_s for c in comps]) * 100
    inside = np.mean([c.point.p10_s <= c.predicted_s <= c.point.p90_s for c in comps]) * 100
    out = {"points": len(comps), "median_time_pct": float(np.median(e)), "p90_time_pct": float(np.percentile(e, 90)),
           "worst_time_pct": float(e.max()), "median_spread_pct": float(np.median(spread)),
           "within_p10_p90_pct": float(inside)}
    banded = [c for c in comps if c.lo_s is not None and c.hi_s is not None]
    if banded:
        out["interval_coverage_pct"] = float(np.mean([c.lo_s <= c.point.median_s <= c.hi_s for c in banded]) * 100)
        out["interval_width_pct"] = float(np.median([(c.hi_s - c.lo_s) / c.predicted_s for c in banded]) * 100)
    return out


def spread_sd(p: DdpMeasurement) -> float:
    """The measured spread of a configuration as a standard deviation in log units: log(p90/p10) over
    2 x 1.2816 (the p10-p90 width of a normal), at least :data:`SPREAD_FLOOR`."""
    return max(float(np.log(p.p90_s / p.p10_s)) / (2 * 1.2816), SPREAD_FLOOR)


def compute_gap(points: Sequence[DdpMeasurement], workloads: Mapping[str, Workload]) -> float | None:
    """Median over ``points`` of profile compute / the run's own no_sync iteration - 1, in %: how far the
    single-GPU profile's forward + backward + optimizer lands from the compute each run measured without
    communication (None: no point has a no_sync time and a profile)."""
    gaps = []
    for p in points:
        w = workloads.get(p.model)
        if w is None or not p.nosync_median_s:
            continue
        if w.batch_size and w.batch_size != p.batch_size:
            w = w.scaled_to_batch(p.batch_size)
        gaps.append(step_compute_s(w) / p.nosync_median_s - 1.0)
    return float(np.median(gaps)) * 100 if gaps else None


def calibrate_ddp(points: Sequence[DdpMeasurement], predictor: DdpPredictor,
                  keys: Sequence[str] = DDP_KEYS, name: str = "calibrated") -> tuple[Parameters, dict, dict]:
    """Fit the DDP model's parameters (per-bucket overhead, compute slowdown under overlap, fixed
    per-iteration cost) to measured iteration medians, communication parameters held fixed; each
    configuration weighted by its measured spread (:func:`spread_sd`).
    Returns (parameters, summary before, summary after)."""
    before = ddp_summary(compare_ddp(points, predictor))
    scale = np.array([DEFAULTS[k] if DEFAULTS[k] > 0 else (0.1 if k == "ddp.compute_slowdown" else 1e-3)
                      for k in keys])
    lo = np.array([bounds(k)[0] for k in keys]) / scale
    hi = np.array([min(bounds(k)[1], 0.1) if k.endswith("_s") else bounds(k)[1] for k in keys]) / scale
    x0 = np.clip(np.array([predictor.params[k] for k in keys]) / scale, lo + 0.01 * (hi - lo).clip(max=1), hi)
    measured = np.array([p.median_s for p in points])
    sd = np.array([spread_sd(p) for p in points])

    def residuals(x):
        pr = predictor.with_params(predictor.params.with_values(dict(zip(keys, x * scale))))
        pred = np.array([pr.predict(p, interval=False).predicted_s for p in points])
        return np.log(pred / measured) / sd

    sol = least_squares(residuals, x0, bounds=(lo, hi), x_scale=1.0, diff_step=1e-3)
    params = predictor.params.with_values(dict(zip(keys, sol.x * scale)), name=name)
    after = ddp_summary(compare_ddp(points, predictor.with_params(params)))
    return params, before, after
