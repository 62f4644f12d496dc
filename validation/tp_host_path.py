"""What carries a TP loop's per-call host cost of a collective from one host to another: the TP issue
probes' campaigns (:data:`validation.llm_real.ISSUE_CAMPAIGNS`) checked against each candidate.

::

    python -m validation.tp_host_path

A host-bound TP loop pays the host's cost of each collective call instead of the collective
(``ComputeModel.issue_s``); the model charges ``host_collective_s`` per call. The probes measure, on
each host, the loop's host issue time with the collectives and with their stand-ins (``issue_check``;
without sequence parallelism the stand-in is the identity, so the difference over the calls is the
collective call's in-loop host cost), and two quantities the host cost could be carried in:

* the host's standalone issue time per call of a single all-reduce (``llm_op_issue``);
* the host's block issue time (the unsharded block's forward issue, per block).

Three checks, each printed and written into docs/accuracy.md section 7:

1. **carrier table**: the in-loop cost each host's own issue times imply, over each carrier, and how
   far that ratio spreads between the hosts (a carrier that carried the cost would give one ratio);
2. **leave one campaign out**: the probe loops predicted as ``validation.llm_real`` predicts them, with
   ``host_collective_s = m x carrier`` on each host, ``m`` fitted on the *other* campaigns' loops
   (least squares on log ratios) -- beside the model as shipped (host work carried from the 4x H200
   campaign in units of the block issue time, ``llm_real.HostWork``);
3. **floor**: each loop predicted from its *own* measured host issue time and GPU time,
   ``r x max(host, GPU)`` with ``r`` fitted on the other campaigns: what a host model that knew each
   configuration's host issue time exactly would reach under the pass rule ``max(kernels, host)``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from simulator.core.errors import InputError
from validation.issue_check import IssueRecord, OpIssue, probe_tp_runs, read_records
from validation.llm_records import LlmRecords, RunError, compare_runs
from validation.check_cli import print_lines

DATA = Path(__file__).resolve().parent / "data"
CARRIERS = ("standalone", "block")
"""``standalone``: the host's issue time per call of a single all-reduce; ``block``: its unsharded block's
forward issue time per block."""
_M_RANGE = {"standalone": (0.2, 10.0), "block": (0.01, 1.0)}


@dataclass(frozen=True)
class ProbeHost:
    """One probe campaign: what its host measured and its TP loops, ready to predict."""

    folder: str
    calibration: str
    call_s: float            # in-loop host seconds per collective call (without SP: identity stand-ins)
    standalone_s: float      # issue seconds per call of a single all-reduce, alone
    block_s: float           # issue seconds of one unsharded block's forward
    loops: tuple[tuple[float, float, float], ...]   # per TP loop with collectives: (loop, host issue, GPU) s
    records: LlmRecords
    predictor: object        # llm_real.RealPredictor, compute fitted on the probe's compute-only targets

    def carrier(self, name: str) -> float:
        return self.standalone_s if name == "standalone" else self.block_s

    def errors(self, host_collective_s: float) -> list[RunError]:
        pred = self.predictor
        pred = pred.with_compute(replace(pred.compute, host_collective_s=host_collective_s))  # type: ignore[attr-defined]
        return compare_runs(self.records, pred.iteration_s)  # type: ignore[attr-defined]


def _median(values: Sequence[float], what: str, folder: str) -> float:
    if not values:
        raise InputError(f"the probe has no {what}", source=folder)
    return float(statistics.median(values))


@dataclass(frozen=True)
class LoopPoint:
    """One probe point, medians over its launches of the loop, the host issue (forward + backward of
    the same launch) and the GPU time, seconds."""

    spec: str
    layers: int
    tp: int
    sp: bool
    comm: bool
    loop_s: float
    host_s: float
    gpu_s: float


def loop_points(records: Sequence[IssueRecord]) -> list[LoopPoint]:
    by: dict[str, list[IssueRecord]] = {}
    for r in records:
        by.setdefault(r.point, []).append(r)
    return [LoopPoint(rs[0].spec.text, rs[0].spec.layers, rs[0].tp, rs[0].sp, rs[0].comm,
                      statistics.median(r.loop_s for r in rs),
                      statistics.median(r.issue_forward_s + r.issue_backward_s for r in rs),
                      statistics.median(r.gpu_s for r in rs)) for rs in by.values()]


def in_loop_call_s(points: Sequence[LoopPoint], folder: str = "") -> float:
    """The in-loop host seconds per collective call: over the TP points without sequence parallelism,
    (host issue with the collectives - with the identity stand-ins) / calls, median over specs."""
    off = {(p.spec, p.tp): p for p in points if p.tp > 1 and not p.sp and not p.comm}
    per = [(p.host_s - off[(p.spec, p.tp)].host_s) / (4 * p.layers)
           for p in points if p.tp > 1 and not p.sp and p.comm and (p.spec, p.tp) in off]
    return _median(per, "TP points with and without collectives (sequence parallelism off)", folder)


def probe_host(folder: str, name: str, calibration: str, host_work: object) -> ProbeHost:
    """Read one probe campaign and fit its compute as ``validation.llm_real`` does; ``host_work``
    (``llm_real.HostWork``) gives the model's own ``host_collective_s`` on this host."""
    from validation.llm_real import fitted_predictor, issue_targets

    path = [DATA / folder / name]
    data = read_records(path)
    points = loop_points(data.records)
    op: dict[str, OpIssue] = {o.op: o for o in data.ops}
    if "all_reduce" not in op:
        raise InputError("the probe has no standalone all_reduce issue time (--op-issue)", source=str(path[0]))
    blocks = [statistics.median(r.issue_forward_s / r.spec.layers for r in data.records if r.point == p)
              for p in {r.point for r in data.records if r.tp == 1}]
    records = probe_tp_runs(path)
    pred, _, _ = fitted_predictor(records, calibration, issue_targets(path))
    pred = host_work.applied(pred)
    loops = tuple((p.loop_s, p.host_s, p.gpu_s) for p in points if p.tp > 1 and p.comm)
    return ProbeHost(folder, calibration, in_loop_call_s(points, folder), op["all_reduce"].issue_per_call_s,
                     _median(blocks, "unsharded block (tp=1)", folder), loops, records, pred)


def _log_sse(errors: Sequence[RunError]) -> float:
    return sum(math.log(e.predicted_s / e.measured_s) ** 2 for e in errors)


def fit_multiplier(hosts: Sequence[ProbeHost], carrier: str) -> float:
    """``m`` minimising the squared log errors of ``hosts``' loops with ``host_collective_s = m x carrier``."""
    from scipy.optimize import minimize_scalar

    lo, hi = _M_RANGE[carrier]
    sol = minimize_scalar(lambda m: sum(_log_sse(h.errors(m * h.carrier(carrier))) for h in hosts),
                          bounds=(lo, hi), method="bounded", options={"xatol": 1e-3})
    return float(sol.x)


def median_abs_pct(errors: Sequence[RunError]) -> float:
    return float(statistics.median(abs(e.error_pct) for e in errors))


def leave_one_out(hosts: Sequence[ProbeHost], carrier: str) -> list[tuple[float, float]]:
    """Per host: (``m`` fitted on the others, median |error| % of its loops with it)."""
    out = []
    for i, h in enumerate(hosts):
        m = fit_multiplier([x for j, x in enumerate(hosts) if j != i], carrier)
        out.append((m, median_abs_pct(h.errors(m * h.carrier(carrier)))))
    return out


def floor(hosts: Sequence[ProbeHost]) -> list[tuple[float, float]]:
    """Per host: (``r`` fitted on the others, median |error| % of ``r x max(own host issue, own GPU)``)."""
    out = []
    for i, h in enumerate(hosts):
        logs = [math.log(loop / max(host, gpu)) for j, x in enumerate(hosts) if j != i for loop, host, gpu in x.loops]
        r = math.exp(statistics.median(logs))
        out.append((r, float(statistics.median(abs(r * max(host, gpu) / loop - 1) * 100
                                               for loop, host, gpu in h.loops))))
    return out


@dataclass(frozen=True)
class HostPathReport:
    hosts: tuple[ProbeHost, ...]
    shipped: tuple[float, ...]                              # median |error| % of the model as shipped
    loo: dict[str, tuple[tuple[float, float], ...]]         # carrier -> per host (m, median |error| %)
    floor: tuple[tuple[float, float], ...]


def report(host_works: Sequence[object] | None = None) -> HostPathReport:
    """Every check on the committed probe campaigns; ``host_works``: the ``llm_real.HostWork`` of each of
    ``llm_real.CAMPAIGNS`` (default: fitted here), each probe taking the one its ``ISSUE_CAMPAIGNS`` entry
    names, as docs/accuracy.md section 7 does."""
    from validation.llm_real import CAMPAIGNS, ISSUE_CAMPAIGNS, host_work_from

    works = list(host_works) if host_works is not None else [None] * len(CAMPAIGNS)
    hosts = []
    for folder, name, calibration, i in ISSUE_CAMPAIGNS:
        if works[i] is None:
            f, n, c = CAMPAIGNS[i]
            works[i] = host_work_from([DATA / f / n], c)[0]
        hosts.append(probe_host(folder, name, calibration, works[i]))
    shipped = tuple(median_abs_pct(h.errors(h.predictor.compute.host_collective_s)) for h in hosts)  # type: ignore[attr-defined]
    return HostPathReport(tuple(hosts), shipped, {c: tuple(leave_one_out(hosts, c)) for c in CARRIERS},
                          tuple(floor(hosts)))


def _spread(values: Sequence[float]) -> float:
    return max(values) / min(values)


def markdown_lines(rep: HostPathReport, target_pct: float = 8.0) -> list[str]:
    """docs/accuracy.md section 7's paragraph on the per-call host cost of a collective."""
    hs = rep.hosts
    ratio: Callable[[str], list[float]] = lambda c: [h.call_s / h.carrier(c) for h in hs]
    lines = ["**What carries the host cost of a collective call between hosts** (`python -m validation.tp_host_path`; "
             "the probe campaigns above). Per host, the in-loop host cost of one collective call its own issue times "
             "imply (TP loops without sequence parallelism: host issue with the all-reduces less with their identity "
             "stand-ins, over the calls, median over the two specs), beside two quantities measured on the same host "
             "that could carry it, and the model's `host_collective_s` there (fitted on the 4x H200 campaign, carried "
             "in units of the block issue time):", "",
             "| campaign | in-loop us per call | standalone all-reduce issue us | ratio | block forward issue us | "
             "ratio | model us | in-loop / model |", "|---|---|---|---|---|---|---|---|"]
    for h in hs:
        model = h.predictor.compute.host_collective_s  # type: ignore[attr-defined]
        lines.append(f"| {h.folder} | {h.call_s * 1e6:.0f} | {h.standalone_s * 1e6:.0f} | "
                     f"{h.call_s / h.standalone_s:.2f} | {h.block_s * 1e6:.0f} | {h.call_s / h.block_s:.3f} | "
                     f"{model * 1e6:.0f} | {h.call_s / model:.2f} |")
    lines += ["", f"Between the hosts the ratio spreads {_spread(ratio('standalone')):.2f}x over the standalone issue "
              f"time and {_spread(ratio('block')):.2f}x over the block issue time (the model's carry: "
              f"{_spread([h.call_s / h.predictor.compute.host_collective_s for h in hs]):.2f}x; "  # type: ignore[attr-defined]
              "a quantity that carried the cost would give one ratio on every host). The probe loops predicted with `host_collective_s = m x carrier` "
              "on each host, `m` fitted on the other campaigns' loops (least squares on log ratios), against "
              "the model as shipped, and the floor: each loop from its own measured host issue time and GPU time, "
              "`r x max(host, GPU)`, `r` fitted on the other campaigns (a host model exact on every configuration's "
              "host issue time, under the pass rule `max(kernels, host)`):", "",
              "| campaign | as shipped median err % | standalone carrier: m, median err % | block carrier: m, "
              "median err % | floor: r, median err % |", "|---|---|---|---|---|"]
    for i, h in enumerate(hs):
        (ms, es), (mb, eb), (r, ef) = rep.loo["standalone"][i], rep.loo["block"][i], rep.floor[i]
        lines.append(f"| {h.folder} | {rep.shipped[i]:.1f} | {ms:.2f}, {es:.1f} | {mb:.3f}, {eb:.1f} | "
                     f"{r:.2f}, {ef:.1f} |")
    worst = {"as shipped": max(rep.shipped), **{f"{c} carrier": max(e for _, e in rep.loo[c]) for c in CARRIERS}}
    over = [h.folder for h, (_, e) in zip(hs, rep.floor) if e > target_pct]
    meets = [k for k, v in worst.items() if v <= target_pct]
    lines += ["", "Worst campaign: " + ", ".join(f"{k} {v:.1f}%" for k, v in worst.items())
              + (f"; within {target_pct:g}% on every held-out campaign: {', '.join(meets)}. " if meets
                 else f"; none is within {target_pct:g}% on every held-out campaign. ")
              + (f"The floor itself is above {target_pct:g}% on {', '.join(over)}: there loops with collectives take "
                 "longer than both their host issue time and their GPU time (up to "
                 f"{max(loop / max(host, gpu) for h in hs for loop, host, gpu in h.loops):.2f}x the longer; "
                 "consistent with the ranks meeting at every collective and each waiting for the slowest host), "
                 "which no per-call host cost under the pass rule reaches." if over
                 else f"The floor is within {target_pct:g}% on every campaign."), ""]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m validation.tp_host_path",
                            description="Check what carries a TP loop's per-call host cost between the TP issue "
                                        "probes' hosts.").parse_args(argv)
    return print_lines(lambda: markdown_lines(report()))


if __name__ == "__main__":
    sys.exit(main())
