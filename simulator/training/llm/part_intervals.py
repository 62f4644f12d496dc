"""90% intervals of the parts of one LLM training iteration (``gpunetsim train``'s breakdown).

No dataset times the parts of an iteration apart (the whole iteration's interval comes from whole-iteration
errors: simulator.training.iteration_bands), so each part's interval comes from what its own inputs are
known to within, and says so (docs/training.md):

* **compute** (the critical stage's passes): the compute-only band (``iteration_bands.compute_interval``),
  measured: every own campaign's single-GPU whole-model and no-communication TP loops, predicted by the
  datasheet compute set or by a set fitted on another campaign (validation.compute_bands). The **optimizer
  step** and the **per-iteration overhead** are timed by no runner: they take the same band (the optimizer is
  the compute model's memory-bound kernels, the overhead a key of the same fitted set), a propagation, not a
  measurement of their own.
* **TP communication** and **pipeline sends**: every call's 90% interval from the collective calibration
  (simulator.network.intervals, planned on the call's own group), summed over the calls with their
  predicted times as weights; the part is scaled by sum(low) / sum(predicted) and sum(high) / sum(predicted).
  Where campaigns time the part on its own (the TP runner's loop less the same loop without collectives, the
  PP runner's one activation between two stages: validation.part_checks), that alone covers few of them (the
  host's cost of each collective call and its issue, not the transfer, set most of the difference), so the
  interval is widened to the measured band of log(measured / predicted) over those campaigns
  (``iteration_bands.part_bands``; coverage leaving one campaign out in docs/accuracy.md section 7), *inside
  the band's domain* only: the GPU models, group sizes (TP degree; pipeline stages) and per-call message sizes
  of its runs (the band file's ``domain``: ``gpus``, ``world``, ``call_bytes``). The band is the spread of
  small host-bound loops (8-16 MiB calls on 2-4 GPUs); a part whose calls are larger or smaller, on more GPUs
  or on another GPU, keeps its calls' own interval and says why (:func:`comm_caveats`, ``comm_extrapolated``
  in ``gpunetsim train --json``: review s16 #2); a part whose calls lie outside the collective calibration's own
  data (world sizes, sizes, ops, hop classes) says so there too, as ``collective`` and ``ddp`` do. Other traffic on the same links has no measurement and no
  width of its own.
* **DP exposed**: the data-parallel collectives of the iteration (gradient reduction, ZeRO / FSDP gathers and
  reduce-scatters, counted per micro-batch where they run per pass) save or add seconds within their
  intervals: faster ones hide at most what they save, slower ones expose at most all they add,
  [max(0, exposed - saved), exposed + added].
* **pipeline bubble**: waiting for the other stages, which run the same passes: the bubble scaled as the
  stage's pass work (compute + TP + sends) at its interval's ends over its value.

A part of 0 seconds has the interval (0, 0). Intervals hold their prediction. The parts' intervals are not
summed into the iteration's (the parts' errors are not independent, and the whole iteration's measured
errors say more).
"""

from __future__ import annotations

from typing import Iterable

from simulator.collectives.params import Parameters
from simulator.core.vocabulary import NcclVersion
from simulator.core.errors import InputError
from simulator.core.units import format_bytes
from simulator.network.closed_form import CostModel
from simulator.training.iteration_bands import COMM_PARTS_FILE, compute_interval, interval, part_bands
from simulator.training.llm.collective_job import CollJob
from simulator.training.llm.groups import GroupCollectives
from topologies.routing import Router

PARTS = ("compute", "tp_comm", "pp_comm", "pp_bubble", "dp_comm_exposed", "optimizer", "overhead")
"""The parts of ``TrainResult`` (``<part>_s``) that get ``<part>_lo_s`` / ``<part>_hi_s``."""

Bounds = tuple[float, float]
INSIDE_SHARE = 0.9
"""A part lies inside its band's call sizes when calls of those sizes carry at least this share of its predicted
call time: a few small all-reduces (the vocabulary-parallel loss's statistics, which the TP loops lack) do not take
a part of large calls out, nor do they bring one in."""
GROUP = {"tp_comm": ("TP communication", "TP"), "pp_comm": ("pipeline sends", "PP")}
"""Label of a measured communication part and of the group size its band's ``domain.world`` counts."""


class _Calls:
    """Predicted seconds of a part's collective calls and the ends of their intervals, summed."""

    def __init__(self, groups: GroupCollectives, cost: CostModel) -> None:
        self.groups, self.intervals = groups, cost.intervals
        self.t_s = self.lo_s = self.hi_s = 0.0
        self.sizes: list[tuple[float, float]] = []      # (bytes of a call, predicted seconds of its n runs)
        self.outside: dict[str, None] = {}              # why a call's interval extrapolates the calibration (ordered)

    def add(self, jobs: Iterable[CollJob], times: int = 1) -> None:
        """``times`` runs of each job (a job is ``count`` calls on its group)."""
        for j in jobs:
            if not j.ranks:
                continue
            self.call(j.plan.op, j.plan.algo, j.plan.proto, j.size_bytes, j.ranks, times * j.count)

    def call(self, op: str, algo: str, proto: str, size_bytes: float, ranks: tuple[str, ...], n: int) -> None:
        plan = self.groups.planner.plan(op, algo, proto, ranks)
        t = self.groups.time_s(plan, ranks, size_bytes)
        iv = self.intervals.interval(op, algo, proto, size_bytes, t, ranks=ranks)
        self.outside.update(dict.fromkeys(iv.outside))
        self.sizes.append((size_bytes, n * t))
        self.t_s += n * t
        self.lo_s += n * min(iv.lo_s, t)
        self.hi_s += n * max(iv.hi_s, t)

    def scaled(self, part_s: float) -> Bounds:
        """``part_s`` scaled by the calls' interval ends over their predicted sum."""
        if part_s <= 0 or self.t_s <= 0:
            return part_s, part_s
        return part_s * self.lo_s / self.t_s, part_s * self.hi_s / self.t_s


def _first(jobs: tuple[CollJob, ...]) -> tuple[CollJob, ...]:
    """One of concurrent identical jobs (one per TP rank's or shard's group): the time they take together."""
    return jobs[:1]


def _scaled(part_s: float, ratios: tuple[float | None, float | None]) -> Bounds | None:
    lo, hi = ratios
    return None if lo is None or hi is None else (part_s * lo, part_s * hi)


def _call_bytes(band, part: str) -> tuple[float, float] | None:
    """The band's ``domain.call_bytes`` ([fewest, most] bytes per call of its runs), checked; None without one."""
    cb = (band.get("domain") or {}).get("call_bytes")
    if cb is None:
        return None
    if (not isinstance(cb, list) or len(cb) != 2 or not all(isinstance(x, (int, float)) and x > 0 for x in cb)
            or cb[0] > cb[1]):
        raise InputError("must be [fewest, most] bytes per call, numbers > 0", source=str(COMM_PARTS_FILE),
                         field=f"{part}.domain.call_bytes", value=cb)
    return float(cb[0]), float(cb[1])


def _span(lo: float, hi: float) -> str:
    return format_bytes(lo) if lo == hi else f"{format_bytes(lo)}-{format_bytes(hi)}"


def comm_caveats(part: str, gpu: str, group: int, calls: _Calls) -> str | None:
    """Why the measured band of ``part`` (``tp_comm``, ``pp_comm``) does not apply to calls on ``group`` GPUs of
    model ``gpu`` (the part keeps its calls' own interval), or None when it applies (inside the band's
    ``domain``, or a band without one, or no band, or no calls)."""
    band = part_bands().get(part)
    d = band.get("domain") if band else None
    if not d or not calls.sizes:
        return None
    label, unit = GROUP[part]
    cb = _call_bytes(band, part)
    this, runs = [], [", ".join(d["gpus"]), f"{unit} {d['world'][0]}-{d['world'][1]}"]
    if gpu not in d["gpus"]:
        this.append(gpu)
    if not d["world"][0] <= group <= d["world"][1]:
        this.append(f"{unit} {group}")
    if cb is not None:
        runs.append(f"calls of {_span(*cb)}")
        out = [(b, t) for b, t in calls.sizes if not cb[0] <= b <= cb[1]]
        total = sum(t for _, t in calls.sizes)
        share = sum(t for _, t in out) / total if total > 0 else 1.0
        if out and share > 1 - INSIDE_SHARE:
            this.append(f"calls of {_span(min(b for b, _ in out), max(b for b, _ in out))} ({share:.0%} of its "
                        "predicted time)")
    if not this:
        return None
    return (f"{label}: {', '.join(this)} outside the measured band's runs ({', '.join(runs)}): its calls' own "
            "intervals, not widened")


def _measured(propagated: Bounds, part_s: float, part: str, outside: str | None) -> Bounds:
    """The propagated interval widened to the part's measured band where campaigns time it on its own
    (iteration_bands.part_bands) and the part lies inside the band's domain (``outside`` is None): the
    collectives' intervals alone leave out what the measurements show there."""
    lo, hi = interval(part_s, part_bands().get(part))
    if lo is None or hi is None or outside is not None:
        return propagated
    return min(propagated[0], lo), max(propagated[1], hi)


def part_intervals(router: Router, params: Parameters, work, result, compute,
                   nccl_version: NcclVersion | None = None) -> tuple[dict[str, Bounds], tuple[str, ...]]:
    """({part: (low, high) seconds}, caveats) of ``result`` (a TrainResult simulated from ``work``, a TrainWork,
    on ``router`` with the collective set ``params`` and the compute set ``compute``); a part without a band
    (no shipped compute band file) is left out; the caveats say which communication part lies outside its
    measured band's domain (:func:`comm_caveats`)."""
    groups = GroupCollectives(router, params, nccl_version)
    cost = CostModel(groups.planner)
    st = work.stages[result.critical_stage]
    m = result.config.microbatches
    out: dict[str, Bounds] = {}
    ratio = compute_interval(1.0, compute, result.gpu)
    for part in ("compute", "optimizer", "overhead"):
        b = _scaled(getattr(result, f"{part}_s"), ratio)
        if b is not None:
            out[part] = b
    tp = _Calls(groups, cost)
    for ch in st.chunks:
        tp.add(ch.forward_comm)
        tp.add(ch.backward_comm)
    notes = {"tp_comm": comm_caveats("tp_comm", result.gpu, result.config.tp, tp) if result.tp_comm_s > 0 else None}
    out["tp_comm"] = _measured(tp.scaled(result.tp_comm_s), result.tp_comm_s, "tp_comm", notes["tp_comm"])
    pp = _Calls(groups, cost)
    for link in (st.to_next, st.to_prev):
        if link is not None and link.ranks:
            size = st.chunks[0].send_bytes
            pp.call("send_recv", "direct", groups.p2p_plan(*link.ranks, size).proto, size, link.ranks, 1)
    notes["pp_comm"] = comm_caveats("pp_comm", result.gpu, result.config.pp, pp) if result.pp_comm_s > 0 else None
    out["pp_comm"] = _measured(pp.scaled(result.pp_comm_s), result.pp_comm_s, "pp_comm", notes["pp_comm"])
    dp = _Calls(groups, cost)
    for ch in st.chunks:
        for jobs in (ch.gather_forward, ch.gather_backward, ch.scatter_backward):
            dp.add(_first(jobs), m)
        for u in ch.units:
            dp.add(_first(u.gather), m * (2 if u.regather else 1))
            dp.add(_first(u.scatter), m)
            dp.add(_first(u.reduce), m)
    for phase in st.grad_sync:
        dp.add(_first(phase))
    dp.add(_first(st.param_sync))
    e = result.dp_comm_exposed_s
    out["dp_comm_exposed"] = (max(0.0, e - (dp.t_s - dp.lo_s)), e + (dp.hi_s - dp.t_s))
    for label, calls, part_s in (("TP communication", tp, result.tp_comm_s), ("pipeline sends", pp, result.pp_comm_s),
                                 ("DP exposed", dp, e)):
        if calls.outside and part_s > 0:    # as collective and ddp say it (a 2-GPU calibration timing 4 GPUs)
            notes[label] = (f"{label}: its calls extrapolate beyond the calibration's data "
                            f"({'; '.join(calls.outside)})")
    if "compute" in out:
        work_s = result.compute_s + result.tp_comm_s + result.pp_comm_s
        lo = out["compute"][0] + out["tp_comm"][0] + out["pp_comm"][0]
        hi = out["compute"][1] + out["tp_comm"][1] + out["pp_comm"][1]
        b = result.pp_bubble_s
        out["pp_bubble"] = (b * lo / work_s, b * hi / work_s) if work_s > 0 else (b, b)
    return {p: out[p] for p in PARTS if p in out}, tuple(n for n in notes.values() if n)
