"""Read the TP issue probe's records (``validation.runners.tp_issue``): where a block loop's time goes.

::

    python -m validation.issue_check validation/data/<campaign>/tp_issue_world4.jsonl

Per point (the median over launches of each launch's median): the back-to-back loop, the host's
issue time of forward and backward (the GPU held busy by a sleep, so the host never waits), the
GPU's time alone (the queued work back to back), and ``loop / max(issue, gpu)``: about 1 where
the loop is the longer of the two, as the compute model's ``max(kernels, host)`` assumes. Then
what sequence parallelism adds per block to each, with and without the collectives, and, from the
``llm_op_issue`` records, the host's issue time per call of single collectives and stand-ins
(marked ``*`` where a repetition's issue outlasted the GPU hold, so the host waited and the figure
is too high).

Every record field is checked (:class:`validation.fields.Fields`): a missing or wrong one is an
:class:`InputError` naming the file, the line, the field and the value.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from simulator.core.errors import InputError
from validation.check_cli import files_main
from validation.fields import Fields
from validation.gpt_spec import GPTSpec
from validation.llm_records import file_keys, record_spec
from validation.runners.records import read_measurement_records

TIMES = ("loop_s", "issue_forward_s", "issue_backward_s", "gpu_s")


@dataclass(frozen=True)
class IssueConfig:
    """What a probe point runs: the blocks, the micro-batch and the tensor parallelism."""

    point: str
    spec: GPTSpec
    micro_batch: int
    tp: int
    sp: bool
    comm: bool


@dataclass(frozen=True)
class IssueRecord(IssueConfig):
    """One launch's record of one probe point (seconds: medians over the launch's repetitions)."""

    world: int
    launch_id: str
    launch_index: int
    dtype: str
    loop_s: float
    issue_forward_s: float
    issue_backward_s: float
    gpu_s: float
    loop_times_s: tuple[float, ...]
    kernel_count: int | None


@dataclass(frozen=True)
class IssuePoint(IssueConfig):
    """One probe point, medians over its launches (seconds)."""

    launches: int
    loop_s: float
    issue_forward_s: float
    issue_backward_s: float
    gpu_s: float
    kernel_count: int | None

    @property
    def hidden(self) -> int:
        return self.spec.hidden

    @property
    def layers(self) -> int:
        return self.spec.layers

    @property
    def issue_s(self) -> float:
        return self.issue_forward_s + self.issue_backward_s

    @property
    def pair_key(self) -> tuple[str, int, int, bool]:
        """What a point with and one without sequence parallelism share."""
        return (self.spec.text, self.micro_batch, self.tp, self.comm)


@dataclass(frozen=True)
class OpIssue:
    """Host issue seconds per call of one operation, median over launches."""

    op: str
    issue_per_call_s: float
    outlasted_hold: int  # repetitions, over all launches, whose issue outlasted the GPU hold


@dataclass(frozen=True)
class IssueData:
    records: tuple[IssueRecord, ...]
    ops: tuple[OpIssue, ...]
    gpu_by_launch: Mapping[str, str]

    @property
    def gpu(self) -> str:
        return next((g for g in self.gpu_by_launch.values() if g), "")


def _kernel_count(f: Fields) -> int | None:
    kernels = f.record.get("kernels")
    if not kernels:
        return None
    count = kernels.get("count") if isinstance(kernels, Mapping) else None
    if not isinstance(count, Mapping) or not count:
        raise f.bad("kernels", "needs a 'count' mapping of kernel classes to whole numbers", kernels)
    c = Fields(count, f.source, f"{f.where}: kernels.count")
    return sum(c.whole(k) for k in count)


def _issue_record(f: Fields) -> IssueRecord:
    loop = f.record.get("loop_times_s")
    times = (tuple(float(Fields({"loop_times_s": v}, f.source, f.where).number("loop_times_s", positive=True))
                   for v in loop) if isinstance(loop, list) and loop
             else (float(f.number("loop_s", positive=True)),))  # type: ignore[arg-type]
    return IssueRecord(f.text("point"), record_spec(f), f.whole("micro_batch", low=1, default=1),
                       f.whole("tp", low=1), f.flag("sequence_parallel"), f.flag("comm"),
                       f.whole("world", low=1), f.text("launch_id", ""), f.whole("launch_index"),
                       f.text("dtype", "bfloat16"), float(f.number("loop_s", positive=True)),  # type: ignore[arg-type]
                       *(float(f.number(k)) for k in TIMES[1:]),  # type: ignore[arg-type]
                       loop_times_s=times, kernel_count=_kernel_count(f))


def _check_apart(f: Fields, r: IssueRecord, configs: dict[str, tuple[object, ...]],
                 launches: set[tuple[str, str, int]]) -> IssueRecord:
    """``r``, once its label is known to name one configuration and one record per launch: points are
    grouped by their label, so two configurations under one label would be averaged into one point and
    a second record of a launch would replace the first. A launch is its ``launch_id`` and
    ``launch_index`` (the index restarts at 0 in every campaign, so files of several campaigns hold
    launches of one index)."""
    config = (r.spec, r.micro_batch, r.tp, r.sp, r.comm)
    if configs.setdefault(r.point, config) != config:
        raise f.bad("point", "the same label as an earlier record with another configuration (blocks, "
                    "micro-batch, tp, sequence_parallel or comm)", r.point)
    if (r.point, r.launch_id, r.launch_index) in launches:
        raise f.bad("launch_index", f"a second record of point {r.point!r} in this launch", r.launch_index)
    launches.add((r.point, r.launch_id, r.launch_index))
    return r


def read_records(paths: Sequence[str | Path]) -> IssueData:
    """Every launch's ``llm_issue`` record, the per-op issue medians and each launch's GPU (files read before,
    unchanged, are not read again: llm_records.file_keys)."""
    return _read_records(file_keys(paths))


@lru_cache(maxsize=32)
def _read_records(keys: tuple[tuple[str, int, int], ...]) -> IssueData:
    paths = [k[0] for k in keys]
    recs: list[IssueRecord] = []
    ops: dict[str, list[tuple[float, int]]] = {}
    gpu: dict[str, str] = {}
    configs: dict[str, tuple[object, ...]] = {}     # label -> its configuration
    launches: set[tuple[str, str, int]] = set()     # (label, launch_id, launch_index) read so far
    for path in paths:
        for n, rec in read_measurement_records(path):
            kind = rec.get("kind")
            f = Fields(rec, str(path), f"line {n}", str(kind))
            if kind == "meta":
                gpu[f.text("launch_id", "")] = f.text("gpu", "")
            elif kind == "llm_op_issue":
                if f.has("held_out"):       # the field's name before 2026-11-26: never read it as 0
                    raise f.bad("held_out", "renamed outlasted_hold (repetitions whose issue outlasted the hold)",
                                rec["held_out"])
                ops.setdefault(f.text("op"), []).append((float(f.number("issue_per_call_s")),  # type: ignore[arg-type]
                                                         f.whole("outlasted_hold", default=0)))
            elif kind == "llm_issue":
                recs.append(_check_apart(f, _issue_record(f), configs, launches))
    if not recs:
        raise InputError("no llm_issue records", source=", ".join(map(str, paths)), field="kind")
    return IssueData(tuple(recs), tuple(OpIssue(op, statistics.median(t for t, _ in v), sum(h for _, h in v))
                                        for op, v in ops.items()), gpu)


def read_issue(paths: Sequence[str | Path]) -> tuple[list[IssuePoint], list[OpIssue], str]:
    """The probe's points (medians over launches), its per-op issue times and the GPU's name."""
    data = read_records(paths)
    by: dict[str, list[IssueRecord]] = {}
    for r in data.records:
        by.setdefault(r.point, []).append(r)
    points = []
    for label, recs in by.items():
        r = recs[0]
        med = {f: statistics.median(getattr(x, f) for x in recs) for f in TIMES}
        count = next((x.kernel_count for x in recs if x.kernel_count is not None), None)
        points.append(IssuePoint(label, r.spec, r.micro_batch, r.tp, r.sp, r.comm, len(recs),
                                 kernel_count=count, **med))
    return points, list(data.ops), data.gpu


def _name(p: IssuePoint) -> str:
    s = p.spec
    base = f"h{s.hidden} L{s.layers} s{s.seq} mb{p.micro_batch} tp={p.tp}"
    return base if p.tp == 1 else f"{base} sp={'on' if p.sp else 'off'} comm={'on' if p.comm else 'off'}"


def _ratio(loop_s: float, over_s: float) -> str:
    """``loop / max(issue, gpu)``; ``-`` when both are 0 (a record without a GPU clock)."""
    return f"{loop_s / over_s:8.2f}" if over_s > 0 else f"{'-':>8s}"


def sp_additions(points: Sequence[IssuePoint]) -> list[tuple[IssuePoint, IssuePoint]]:
    """(with, without sequence parallelism) pairs of points alike in everything else."""
    off = {p.pair_key: p for p in points if not p.sp}
    return [(p, off[p.pair_key]) for p in sorted(points, key=lambda p: p.pair_key)
            if p.sp and p.pair_key in off]


def _per_block_ms(on: IssuePoint, off: IssuePoint, fields: Sequence[str]) -> list[float]:
    return [(getattr(on, f) - getattr(off, f)) / on.layers * 1e3 for f in fields]


def _ops_text(ops: Sequence[OpIssue], digits: int) -> str:
    return ", ".join(f"{o.op} {o.issue_per_call_s * 1e6:.{digits}f}{'*' if o.outlasted_hold else ''}" for o in ops)


def check_lines(points: Sequence[IssuePoint], ops: Sequence[OpIssue]) -> list[str]:
    """The table of points, SP's additions per block and the per-call issue times."""
    lines = [f"{'point':44s} {'n':>2s} {'loop ms':>8s} {'issue fwd':>9s} {'issue bwd':>9s} {'gpu ms':>8s} "
             f"{'loop/max':>8s} {'kernels':>7s}"]
    for p in points:
        lines.append(f"{_name(p):44s} {p.launches:2d} {p.loop_s * 1e3:8.2f} {p.issue_forward_s * 1e3:9.2f} "
                     f"{p.issue_backward_s * 1e3:9.2f} {p.gpu_s * 1e3:8.2f} "
                     f"{_ratio(p.loop_s, max(p.issue_s, p.gpu_s))} "
                     f"{'' if p.kernel_count is None else p.kernel_count:>7}")
    lines.append("sequence parallelism adds, per block (ms): issue forward, issue backward, GPU, loop")
    for on, off in sp_additions(points):
        d = _per_block_ms(on, off, ("issue_forward_s", "issue_backward_s", "gpu_s", "loop_s"))
        lines.append(f"  {_name(on).replace(' sp=on', '')}: " + ", ".join(f"{x:+.3f}" for x in d))
    if ops:
        lines.append("host issue per call (us; * = a repetition outlasted the GPU hold): " + _ops_text(ops, 1))
    return lines


def _launches_text(points: Sequence[IssuePoint]) -> str:
    low, high = min(p.launches for p in points), max(p.launches for p in points)
    return f"{low}" if low == high else f"{low}-{high}"


def markdown_lines(paths: Sequence[str | Path], folder: str) -> list[str]:
    """The accuracy report's paragraph on where a TP block loop's time goes (docs/accuracy.md section 7)."""
    points, ops, gpu = read_issue(paths)
    rows = ["| point | loop ms | host issue ms (forward + backward) | GPU alone ms | kernels |",
            "|---|---|---|---|---|"]
    for p in points:
        rows.append(f"| {_name(p)} | {p.loop_s * 1e3:.2f} | {p.issue_forward_s * 1e3:.2f} + "
                    f"{p.issue_backward_s * 1e3:.2f} | {p.gpu_s * 1e3:.2f} | "
                    f"{'' if p.kernel_count is None else p.kernel_count} |")
    sp_rows = []
    for on, off in sp_additions(points):
        d = _per_block_ms(on, off, ("issue_s", "gpu_s", "loop_s"))
        sp_rows.append(f"{_name(on).split(' tp=')[0]} tp={on.tp} {'with' if on.comm else 'without'} collectives: "
                       f"host {d[0]:+.2f}, GPU {d[1]:+.2f}, loop {d[2]:+.2f}")
    return [f"**Where a TP block loop's time goes** (`python -m validation.issue_check validation/data/{folder}/...`, "
            f"{gpu}, the TP runner's loops issued three ways, medians of {_launches_text(points)} launches; "
            "docs/validation-runners.md):", "", *rows, "",
            "What sequence parallelism adds per block, ms: " + "; ".join(sp_rows) + ". Host issue per call of a "
            f"single operation alone, us: {_ops_text(ops, 0)}.", ""]


def probe_tp_runs(paths: Sequence[str | Path]) -> Any:
    """The probe's TP loops with their collectives as TP runner runs (``validation.llm_records``), one per
    launch, each with the same launch's stand-in loop as ``nocomm_median_s``: a TP campaign of their
    own, predicted like the TP runner's (``validation.llm_real``)."""
    from validation.llm_records import LlmRecords, LlmRun
    from validation.runners.tp import collectives

    data = read_records(paths)
    by = {(r.point, r.launch_id, r.launch_index): r for r in data.records if r.tp > 1}
    runs = []
    for (label, launch_id, launch), r in by.items():
        if not r.comm:
            continue
        off = by.get((label.replace("comm=on", "comm=off"), launch_id, launch))
        mb = r.micro_batch
        runs.append(LlmRun("tp", label.replace(" comm=on", "").replace("issue ", "tp "), r.spec, r.world, r.tp,
                           1, 1, mb, mb, r.loop_s, min(r.loop_times_s), max(r.loop_times_s), r.loop_times_s,
                           r.launch_id, launch, data.gpu_by_launch.get(r.launch_id) or None, r.dtype, None,
                           sequence_parallel=r.sp, nocomm_median_s=None if off is None else off.loop_s,
                           collectives=tuple((c["op"], c["bytes"], c["count"])
                                             for c in collectives(r.spec, mb, r.tp, r.sp, "bfloat16"))))
    if not runs:
        raise InputError("no llm_issue records with collectives", source=", ".join(map(str, paths)), field="kind")
    return LlmRecords(tuple(sorted(runs, key=lambda x: (x.launch_index, x.point))), (), ())


def main(argv: Sequence[str] | None = None) -> int:
    return files_main("python -m validation.issue_check",
                      "Host issue time, GPU time and loop time of the TP issue probe.", read_issue,
                      lambda read: [f"{read[2] or 'GPU not recorded'}: medians over launches",
                                    *check_lines(read[0], read[1])], argv)


if __name__ == "__main__":
    sys.exit(main())
