"""A 90% interval for a DDP iteration, from the collective calibration's intervals.

Each bucket's all-reduce has a 90% interval (simulator.network.intervals); its communication
time can shrink or grow by that much. Faster communication can at best remove the exposed part
it shortens: low = iteration - exposed * (1 - low ratio). Slower communication can at worst expose
all of its extra time: high = iteration + communication * (high ratio - 1). The ratios are the
buckets' interval bounds over their predictions, weighted by each bucket's predicted time. This
is the communication model's uncertainty; the compute profile's own run-to-run spread is not in it.
"""

from __future__ import annotations

from dataclasses import replace

from simulator.network.closed_form import CostModel


def iteration_interval(model: CostModel, result) -> tuple[float, float]:
    """(low, high) seconds of one simulated iteration (a simulator.training.ddp.IterationResult)."""
    total = lo_w = hi_w = 0.0
    for b in result.buckets:
        size = b.comm_bytes or b.size_bytes
        if size <= 0:
            continue
        t = model.timer.time(model.planner.plan("all_reduce", b.algo, b.proto), size)
        iv = model.intervals.interval("all_reduce", b.algo, b.proto, size, t)
        total += t
        lo_w += iv.lo_s
        hi_w += iv.hi_s
    if total <= 0:
        return result.iteration_s, result.iteration_s
    lo_ratio, hi_ratio = lo_w / total, hi_w / total
    lo = result.iteration_s - result.exposed_comm_s * max(0.0, 1.0 - lo_ratio)
    hi = result.iteration_s + result.comm_s * max(0.0, hi_ratio - 1.0)
    return lo, hi


def with_interval(model, result):
    """The same iteration result with its 90% interval filled in (unchanged for the host backends'
    models, which carry no calibration uncertainty)."""
    if not isinstance(model, CostModel):
        return result
    lo, hi = iteration_interval(model, result)
    return replace(result, iteration_lo_s=lo, iteration_hi_s=hi)
