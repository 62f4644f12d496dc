"""Read the TP issue probe's records (``validation.runners.tp_issue``): where a block loop's time goes.

::

    python -m validation.issue_check validation/data/<campaign>/tp_issue_world4.jsonl

Per point (the median over launches of each launch's median): the back-to-back loop, the host's
issue time of forward and backward (the GPU held busy by a sleep, so the host never waits), the
GPU's time alone (the queued work back to back), and ``loop / max(issue, gpu)``: about 1 where
the loop is the longer of the two, as the compute model's ``max(kernels, host)`` assumes. Then
what sequence parallelism adds per block to each, with and without the collectives, and, from the
``llm_op_issue`` records, the host's issue time per call of single collectives and stand-ins.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from simulator.core.errors import InputError
from simulator.core.inputs import read_jsonl
from validation.gpt_spec import SPEC_FIELDS, GPTSpec

FIELDS = ("point", "tp", "sequence_parallel", "comm", "layers", "hidden", "loop_s", "issue_forward_s",
          "issue_backward_s", "gpu_s")


@dataclass(frozen=True)
class IssuePoint:
    """One probe point, medians over its launches (seconds)."""

    point: str
    spec: GPTSpec
    micro_batch: int
    tp: int
    sp: bool
    comm: bool
    hidden: int
    layers: int
    launches: int
    loop_s: float
    issue_forward_s: float
    issue_backward_s: float
    gpu_s: float
    kernels: dict[str, Any] | None

    @property
    def issue_s(self) -> float:
        return self.issue_forward_s + self.issue_backward_s


def read_issue(paths: Sequence[str | Path]) -> tuple[list[IssuePoint], list[dict[str, Any]], str]:
    """The probe's points (medians over launches), its per-op records and the GPU's name."""
    by: dict[str, list[dict[str, Any]]] = {}
    ops: list[dict[str, Any]] = []
    gpu = ""
    for path in paths:
        for n, rec in read_jsonl(path):
            kind = rec.get("kind")
            if kind == "meta":
                gpu = gpu or str(rec.get("gpu") or "")
            elif kind == "llm_op_issue":
                ops.append(rec)
            elif kind == "llm_issue":
                missing = [f for f in FIELDS if f not in rec]
                if missing:
                    raise InputError("missing fields", source=f"{path}:{n}", field=missing[0])
                by.setdefault(str(rec["point"]), []).append(rec)
    if not by:
        raise InputError("no llm_issue records", source=", ".join(map(str, paths)), field="kind")
    points = []
    for label, recs in by.items():
        r = recs[0]
        med = {f: statistics.median(float(x[f]) for x in recs)
               for f in ("loop_s", "issue_forward_s", "issue_backward_s", "gpu_s")}
        kernels = next((x["kernels"] for x in recs if x.get("kernels")), None)
        spec = GPTSpec(**{k: int(r[k]) for k in SPEC_FIELDS if k in r})
        points.append(IssuePoint(label, spec, int(r.get("micro_batch", 1)), int(r["tp"]),
                                 bool(r["sequence_parallel"]), bool(r["comm"]),
                                 int(r["hidden"]), int(r["layers"]), len(recs), kernels=kernels, **med))
    return points, ops, gpu


def _name(p: IssuePoint) -> str:
    if p.tp == 1:
        return f"h{p.hidden} tp=1"
    return f"h{p.hidden} tp={p.tp} sp={'on' if p.sp else 'off'} comm={'on' if p.comm else 'off'}"


def check_lines(points: Sequence[IssuePoint], ops: Sequence[dict[str, Any]]) -> list[str]:
    """The table of points, SP's additions per block and the per-call issue times."""
    lines = [f"{'point':32s} {'n':>2s} {'loop ms':>8s} {'issue fwd':>9s} {'issue bwd':>9s} {'gpu ms':>8s} "
             f"{'loop/max':>8s} {'kernels':>7s}"]
    for p in points:
        count = sum(p.kernels["count"].values()) if p.kernels else None
        lines.append(f"{_name(p):32s} {p.launches:2d} {p.loop_s * 1e3:8.2f} {p.issue_forward_s * 1e3:9.2f} "
                     f"{p.issue_backward_s * 1e3:9.2f} {p.gpu_s * 1e3:8.2f} "
                     f"{p.loop_s / max(p.issue_s, p.gpu_s):8.2f} {'' if count is None else count:>7}")
    key = {(p.hidden, p.tp, p.sp, p.comm): p for p in points}
    lines.append("sequence parallelism adds, per block (ms): issue forward, issue backward, GPU, loop")
    for (h, t, sp, comm), on in sorted(key.items()):
        off = key.get((h, t, False, comm))
        if not sp or off is None:
            continue
        d = [(getattr(on, f) - getattr(off, f)) / on.layers * 1e3
             for f in ("issue_forward_s", "issue_backward_s", "gpu_s", "loop_s")]
        lines.append(f"  h{h} tp={t} comm={'on' if comm else 'off'}: " + ", ".join(f"{x:+.3f}" for x in d))
    if ops:
        lines.append("host issue per call (us): " + ", ".join(
            f"{r['op']} {float(r['issue_per_call_s']) * 1e6:.1f}" for r in _median_ops(ops)))
    return lines


def _median_ops(ops: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    by: dict[str, list[float]] = {}
    for r in ops:
        by.setdefault(str(r["op"]), []).append(float(r["issue_per_call_s"]))
    return [{"op": op, "issue_per_call_s": statistics.median(v)} for op, v in by.items()]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.issue_check",
                                description="Host issue time, GPU time and loop time of the TP issue probe.")
    p.add_argument("files", nargs="+")
    a = p.parse_args(argv)
    try:
        points, ops, gpu = read_issue(a.files)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{gpu or 'GPU not recorded'}: medians over launches")
    print("\n".join(check_lines(points, ops)))
    return 0


if __name__ == "__main__":
    sys.exit(main())


def probe_tp_runs(paths: Sequence[str | Path]) -> Any:
    """The probe's TP loops with their collectives as TP runner runs (``validation.llm_records``), one per
    launch, each with the same launch's stand-in loop as ``nocomm_median_s``: a TP campaign of their
    own, predicted like the TP runner's (``validation.llm_real``)."""
    from validation.llm_records import LlmRecords, LlmRun
    from validation.runners.tp import collectives

    by: dict[tuple[str, int], dict[str, Any]] = {}
    gpu: dict[str, str] = {}
    for path in paths:
        for _, rec in read_jsonl(path):
            if rec.get("kind") == "meta":
                gpu[str(rec.get("launch_id"))] = str(rec.get("gpu") or "")
            elif rec.get("kind") == "llm_issue" and int(rec.get("tp", 1)) > 1:
                by[(str(rec["point"]), int(rec["launch_index"]))] = rec
    runs = []
    for (label, launch), r in by.items():
        if not r["comm"]:
            continue
        off = by.get((label.replace("comm=on", "comm=off"), launch))
        spec = GPTSpec(**{k: int(r[k]) for k in SPEC_FIELDS if k in r})
        mb, tp, sp = int(r.get("micro_batch", 1)), int(r["tp"]), bool(r["sequence_parallel"])
        times = tuple(float(x) for x in r.get("loop_times_s", [r["loop_s"]]))
        runs.append(LlmRun("tp", label.replace(" comm=on", "").replace("issue ", "tp "), spec, int(r["world"]), tp,
                           1, 1, mb, mb, float(r["loop_s"]), min(times), max(times), times,
                           str(r.get("launch_id", "")), launch, gpu.get(str(r.get("launch_id")), None),
                           str(r.get("dtype", "bfloat16")), None, sequence_parallel=sp,
                           nocomm_median_s=None if off is None else float(off["loop_s"]),
                           collectives=tuple((c["op"], c["bytes"], c["count"])
                                             for c in collectives(spec, mb, tp, sp, "bfloat16"))))
    if not runs:
        raise InputError("no llm_issue records with collectives", source=", ".join(map(str, paths)), field="kind")
    return LlmRecords(tuple(sorted(runs, key=lambda x: (x.launch_index, x.point))), (), ())


def markdown_lines(paths: Sequence[str | Path], folder: str) -> list[str]:
    """The accuracy report's paragraph on where a TP block loop's time goes (docs/accuracy.md section 7)."""
    points, ops, gpu = read_issue(paths)
    rows = ["| point | loop ms | host issue ms (forward + backward) | GPU alone ms | kernels |",
            "|---|---|---|---|---|"]
    for p in points:
        count = sum(p.kernels["count"].values()) if p.kernels else ""
        rows.append(f"| {_name(p)} | {p.loop_s * 1e3:.2f} | {p.issue_forward_s * 1e3:.2f} + "
                    f"{p.issue_backward_s * 1e3:.2f} | {p.gpu_s * 1e3:.2f} | {count} |")
    key = {(p.hidden, p.tp, p.sp, p.comm): p for p in points}
    sp_rows = []
    for (h, t, sp, comm), on in sorted(key.items()):
        off = key.get((h, t, False, comm))
        if sp and off is not None:
            d = [(getattr(on, f) - getattr(off, f)) / on.layers * 1e3 for f in ("issue_s", "gpu_s", "loop_s")]
            sp_rows.append(f"h{h} {'with' if comm else 'without'} collectives: host {d[0]:+.2f}, GPU {d[1]:+.2f}, "
                           f"loop {d[2]:+.2f}")
    per_call = ", ".join(f"{r['op']} {float(r['issue_per_call_s']) * 1e6:.0f}" for r in _median_ops(ops))
    return [f"**Where a TP block loop's time goes** (`python -m validation.issue_check validation/data/{folder}/...`, "
            f"{gpu}, the TP runner's loops issued three ways, medians of 3 launches; "
            "docs/validation-runners.md):", "", *rows, "",
            "What sequence parallelism adds per block, ms: " + "; ".join(sp_rows) + ". Host issue per call of a "
            f"single operation alone, us: {per_call}.", ""]
