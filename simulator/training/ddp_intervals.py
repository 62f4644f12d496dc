"""A 90% interval for a DDP iteration, from the collective calibration's intervals and the compute's spread.

Communication: each bucket's all-reduce has a 90% interval (simulator.network.intervals; Gloo and MPI:
simulator.collectives.host_uncertainty); its
communication time can shrink or grow by that much. Faster communication can at best remove the
exposed part it shortens: low = iteration - exposed * (1 - low ratio). Slower communication can at
worst expose all of its extra time: high = iteration + communication * (high ratio - 1). The ratios
are the buckets' interval bounds over their predictions, weighted by each bucket's predicted time.

Compute: a workload that carries ``compute_lo_ratio`` and ``compute_hi_ratio`` (the 90% band of one
step's forward + backward + optimizer over its own value, e.g. over several profile launches: on
launch-bound models the host's pace moves it by 20% and more between launches, see docs/accuracy.md
section 4) widens the interval by that share of the simulated compute (ratios, so the band follows a
rescaled batch or compute): compute sits on the iteration's critical path except where communication
hides it, so the band is added whole. Without them the interval is the communication model's
uncertainty alone.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from simulator.core.errors import InputError
from simulator.network.closed_form import CostModel
from simulator.training.iteration_bands import DDP_FILE, DDP_KINDS, bands, caveats, interval
from simulator.training.workload import step_compute_s

COMPUTE_BAND_KEYS = ("compute_lo_ratio", "compute_hi_ratio")


def compute_band(workload) -> tuple[float, float] | None:
    """(low, high) of the workload's compute band as ratios to its own compute, or None when it
    carries none. A band that does not hold 1 is an input error naming the workload."""
    extras = dict(getattr(workload, "extras", ()) or ())
    if not any(k in extras for k in COMPUTE_BAND_KEYS):
        return None
    try:
        lo, hi = (float(extras[k]) for k in COMPUTE_BAND_KEYS)
    except (KeyError, TypeError, ValueError):
        raise InputError("a compute band needs both compute_lo_ratio and compute_hi_ratio (numbers)",
                         source=workload.name, field="compute_lo_ratio",
                         value={k: extras.get(k) for k in COMPUTE_BAND_KEYS}) from None
    if not (0 < lo <= 1 <= hi < 100):
        raise InputError("need 0 < compute_lo_ratio <= 1 <= compute_hi_ratio < 100", source=workload.name,
                         field="compute_lo_ratio", value={"compute_lo_ratio": lo, "compute_hi_ratio": hi})
    return lo, hi


def band_kind(band: tuple[float, float] | None) -> str:
    """The DDP band kind (:data:`DDP_KINDS`) of a workload whose :func:`compute_band` is ``band``."""
    return DDP_KINDS[0] if band is None else DDP_KINDS[1]


def ddp_band(band: tuple[float, float] | None, shipped: Mapping[str, Mapping] | None = None) -> Mapping | None:
    """The held-out error band of a DDP prediction whose workload's compute band is ``band`` (None: none
    shipped); ``shipped``: {kind: band} in place of the shipped file's (the validation's leave-one-out)."""
    return (bands(DDP_FILE, DDP_KINDS) if shipped is None else shipped).get(band_kind(band))


def band_source(band: tuple[float, float] | None) -> str:
    """Where :func:`iteration_interval`'s held-out widening comes from, for the CLI (empty: none shipped)."""
    b = ddp_band(band)
    if b is None:
        return ""
    what = "one profile launch" if band is None else "pooled launches"
    return (f"held-out errors of DDP predictions with compute from {what}, {len(b['datasets'])} datasets: "
            f"simulator/collectives/calibrations/uncertainty/{DDP_FILE.name}")


def _bucket_intervals(model, result):
    """(predicted seconds, Interval) of each bucket's all-reduce that has an interval."""
    for b in result.buckets:
        size = b.comm_bytes or b.size_bytes
        if size <= 0:
            continue
        if isinstance(model, CostModel):
            t = model.timer.time(model.planner.plan("all_reduce", b.algo, b.proto), size)
            iv = model.intervals.interval("all_reduce", b.algo, b.proto, size, t)
        else:                  # Gloo or MPI (simulator.network.host_collectives): the backend's residual spread
            t = model.time_s("all_reduce", size, b.algo)
            iv = model.interval("all_reduce", size, b.algo)
            if iv is None:
                continue
        yield t, iv


def iteration_outside(model, result) -> tuple[str, ...]:
    """Why the buckets' intervals extrapolate beyond the data behind them (each reason once, in order;
    empty: every bucket inside the calibration's domain)."""
    return tuple(dict.fromkeys(why for _, iv in _bucket_intervals(model, result) for why in iv.outside))


def comm_ratios(model, result) -> tuple[float, float] | None:
    """(low, high) of the buckets' all-reduces' intervals over their predicted time, weighted by it (None
    without communication)."""
    total = lo_w = hi_w = 0.0
    for t, iv in _bucket_intervals(model, result):
        total += t
        lo_w += iv.lo_s
        hi_w += iv.hi_s
    return (lo_w / total, hi_w / total) if total > 0 else None


def iteration_interval(model, result, band: tuple[float, float] | None = None,
                       shipped: Mapping[str, Mapping] | None = None) -> tuple[float, float]:
    """(low, high) seconds of one simulated iteration (a simulator.training.ddp.IterationResult); ``band``
    is :func:`compute_band` of its workload. The GPU path's communication and compute widen it; a host
    path (``host_path_s``, the workload's host launch times: no uncertainty of its own) is a floor, since
    the iteration is the longer of the two. When the host sets the pace the high end is the host path
    widened as if the GPU path were as long (an upper bound: the GPU path is shorter). Then, with NCCL, it
    widens to hold the held-out error band (:func:`ddp_band`; ``shipped`` as there, ``{}``: none)."""
    lo, hi = _model_interval(model, result, band)
    held = ddp_band(band, shipped) if isinstance(model, CostModel) else None   # Gloo, MPI: the bands are NCCL's
    return widen_to_band(lo, hi, result.iteration_s, held, getattr(result, "host_path_s", None))


def widen_to_band(lo_s: float, hi_s: float, iteration_s: float, held: Mapping | None,
                  host_path_s: float | None = None) -> tuple[float, float]:
    """(low, high) seconds: the model's interval ``lo_s``-``hi_s`` of a prediction of ``iteration_s`` widened to
    hold the held-out band ``held`` (:func:`ddp_band`; None: none), its low end floored at the host path."""
    held_lo, held_hi = interval(iteration_s, held)
    if held_lo is not None and held_hi is not None:
        lo_s, hi_s = min(lo_s, held_lo), max(hi_s, held_hi)
    return (lo_s if host_path_s is None else max(lo_s, host_path_s)), hi_s


def _model_interval(model, result, band: tuple[float, float] | None) -> tuple[float, float]:
    """:func:`iteration_interval` from the communication model and the compute band alone (before the host
    path's floor)."""
    ratios = comm_ratios(model, result)
    lo = hi = result.iteration_s
    if ratios is not None:
        lo_ratio, hi_ratio = ratios
        lo = result.iteration_s - result.exposed_comm_s * max(0.0, 1.0 - lo_ratio)
        hi = result.iteration_s + result.comm_s * max(0.0, hi_ratio - 1.0)
    if band is not None:
        compute = step_compute_s(result)
        lo -= compute * max(0.0, 1.0 - band[0])
        hi += compute * max(0.0, band[1] - 1.0)
    return lo, hi


def part_intervals(model, result, band: tuple[float, float] | None = None) -> dict[str, float | None]:
    """The parts' 90% intervals (``<part>_lo_s``/``_hi_s``): the communication on its stream (``comm``) scaled
    by the buckets' ratios; the exposed part (``exposed_comm``) as the iteration's: faster all-reduces shorten
    it by their share, slower ones expose at most all they add; forward, backward and optimizer only with
    the workload's compute band (without one, their time is the workload's own, with no error known here)."""
    out: dict[str, float | None] = {}
    ratios = comm_ratios(model, result) or (1.0, 1.0)
    e, c = result.exposed_comm_s, result.comm_s
    out.update(comm_lo_s=c * min(ratios[0], 1.0), comm_hi_s=c * max(ratios[1], 1.0),
               exposed_comm_lo_s=e * min(ratios[0], 1.0), exposed_comm_hi_s=e + c * max(0.0, ratios[1] - 1.0))
    for part in ("forward", "backward", "optimizer"):
        v = getattr(result, f"{part}_s")
        out[f"{part}_lo_s"] = v * min(band[0], 1.0) if band is not None else None
        out[f"{part}_hi_s"] = v * max(band[1], 1.0) if band is not None else None
    return out


def with_interval(model, result, workload=None, shipped: Mapping[str, Mapping] | None = None):
    """The same iteration result with its 90% interval filled in (the host backends' from their residual
    spread, simulator.collectives.host_uncertainty), its parts' (:func:`part_intervals`) and why it
    extrapolates (``iteration_extrapolated``); ``workload`` adds its compute band, if it has one; ``shipped``
    as :func:`ddp_band`."""
    band = compute_band(workload) if workload is not None else None
    lo, hi = iteration_interval(model, result, band, shipped)
    held = tuple(f"held-out DDP band: {c}" for c in caveats(ddp_band(band, shipped), None, result.gpus)
                 if isinstance(model, CostModel))
    return replace(result, iteration_lo_s=lo, iteration_hi_s=hi,
                   iteration_extrapolated=iteration_outside(model, result) + held,
                   **part_intervals(model, result, band))
