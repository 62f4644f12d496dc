"""90% intervals of a shared-cluster job's iteration times (simulator.training.cluster).

No dataset measures jobs sharing a fabric, stragglers or degraded links, so the interval is the job's own
model uncertainty alone, from what measures it, and says so (docs/shared-clusters.md):

* the *healthy* iteration (the job alone, no imperfection) is what ``gpunetsim ddp``, ``gpunetsim train`` or a
  collective loop predicts, and takes that prediction's interval:

  - a collective job (``compute`` then one collective): the collective's 90% interval from the calibration
    (simulator.network.intervals); ``compute`` is the user's input, exact;
  - a DDP job: ``gpunetsim ddp --engine closed``'s interval of the same job (its buckets' all-reduce
    intervals and the workload's compute band, simulator.training.ddp_intervals) as a share of that
    prediction (the closed engine's iteration equals the discrete-event one on an idle fabric to rounding);
  - an LLM job: the held-out whole-iteration band of ``gpunetsim train`` (simulator.training.iteration_bands);

* *alone* (with its stragglers and degraded links) and *shared* (all jobs together) take the healthy
  interval's relative width: the same model carries the same uncertainty; what contention, stragglers and
  degraded links add is simulated, never measured, and gets no width of its own. The slowdown (shared /
  alone) therefore carries none either.
"""

from __future__ import annotations

from simulator.network.closed_form import CostModel
from simulator.training.ddp_intervals import compute_band, iteration_interval
from simulator.training.iteration_bands import train_interval


def healthy_interval(model: CostModel, job, program, healthy_s: float) -> tuple[float, float] | None:
    """(low, high) seconds of ``job``'s healthy iteration ``healthy_s`` (its JobProgram ``program``, planned on
    ``model``: the job's own view of the cluster); None when nothing is known about its error."""
    from simulator.training.cluster import CollectiveJob, DDPJob, TrainJob
    if isinstance(job, TrainJob):
        lo, hi = train_interval(healthy_s, job.compute, job.gpu.name, program.host_floor_s)
        return None if lo is None or hi is None else (lo, hi)
    if isinstance(job, DDPJob):
        from simulator.training.ddp import simulate_iteration
        r = simulate_iteration(model, job.workload, job.config, "closed")
        lo, hi = iteration_interval(model, r, compute_band(job.workload))
        return healthy_s * lo / r.iteration_s, healthy_s * hi / r.iteration_s
    assert isinstance(job, CollectiveJob)
    saved = added = 0.0
    for c in program.comm:
        p = c.plan
        iv = model.intervals.interval(p.op, p.algo, p.proto, c.comm_bytes, c.allreduce_s)
        saved += max(0.0, c.allreduce_s - iv.lo_s)
        added += max(0.0, iv.hi_s - c.allreduce_s)
    return max(0.0, healthy_s - saved), healthy_s + added


def scaled(time_s: float, healthy_s: float, bounds: tuple[float, float] | None) -> tuple[float | None, float | None]:
    """``time_s`` with the healthy interval's relative width (None, None without one)."""
    if bounds is None or healthy_s <= 0:
        return None, None
    return time_s * bounds[0] / healthy_s, time_s * bounds[1] / healthy_s
