"""Where an FSDP iteration's time goes: the FSDP runner's ``--issue`` records (``validation.runners.fsdp``).

::

    python -m validation.fsdp_issue validation/data/<campaign>/fsdpissue_world4.jsonl

Per spec and world size, for the whole model on one GPU without FSDP, FSDP1's NO_SHARD on one-rank groups
(``hybrid_shard`` with ``replicate = world``: FSDP's hooks and flat parameters, no communication), NO_SHARD over
all ranks (each unit's gradients all-reduced) and FULL_SHARD: the iteration (back to back), the host's issue time
of the forward and of the backward (the GPU held busy by a sleep kernel, so the host never waits) and the GPU's
time alone (the queued work back to back), medians over launches. Then FSDP1's own host work per unit, forward
and backward apart (NO_SHARD on one-rank groups less the plain model, over the units), and what the all-reduce
adds to the backward's issue per unit (NO_SHARD less NO_SHARD on one-rank groups). FULL_SHARD's host waits for the
GPU in the all-gather rate limiter (``outlasted_hold``), so its issue times are not the host's alone and are not
used.

Every record field is checked (:class:`validation.fields.Fields`): a missing or wrong one is an
:class:`InputError` naming the file, the line, the field and the value.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from simulator.core.errors import InputError
from validation.check_cli import files_main
from validation.fields import Fields
from validation.gpt_spec import GPTSpec
from validation.llm_records import record_spec
from validation.runners.records import read_measurement_records

TIMES = ("median_s", "issue_forward_s", "issue_backward_s", "gpu_s")
ONE_GPU = "one GPU"
NOCOMM = "NO_SHARD, one-rank groups"
NO_SHARD = "NO_SHARD"
FULL_SHARD = "FULL_SHARD"


@dataclass(frozen=True)
class IssuePoint:
    """One configuration of one world size, medians over its launches (seconds)."""

    what: str                 # ONE_GPU, NOCOMM, NO_SHARD, FULL_SHARD or "<strategy> replicate=<r>"
    spec: GPTSpec
    micro_batch: int
    world: int
    units: int                # FSDP units (the root and one per block)
    launches: int
    outlasted_hold: int       # steps, over all launches, whose issue outlasted the sleep
    median_s: float
    issue_forward_s: float
    issue_backward_s: float
    gpu_s: float

    @property
    def issue_s(self) -> float:
        return self.issue_forward_s + self.issue_backward_s


def _what(strategy: str, replicate: int, world: int) -> str:
    if strategy == "no_shard":
        return NO_SHARD
    if strategy == "hybrid_shard" and replicate == world:
        return NOCOMM
    if strategy in ("full_shard", "hybrid_shard") and replicate == 1:
        return FULL_SHARD if strategy == "full_shard" else f"{strategy} replicate=1"
    return f"{strategy} replicate={replicate}"


def _units(f: Fields) -> int:
    """FSDP units of an ``llm_fsdp`` record: one per entry of ``unit_params`` (a list of positive whole numbers,
    parameters per unit), or the blocks and the root when it is absent or empty."""
    v = f.record.get("unit_params")
    if v is None or v == []:
        return f.whole("layers", low=1) + 1
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v):
        raise f.bad("unit_params", "must be a list of positive whole numbers (parameters per FSDP unit)", v)
    return len(v)


def _strategy(f: Fields) -> str:
    from validation.llm_real import FSDP_NAMES
    v = f.text("strategy")
    if v not in FSDP_NAMES:
        raise f.bad("strategy", f"unknown FSDP strategy (known: {', '.join(FSDP_NAMES)})", v)
    return v


def read_points(paths: Sequence[str | Path]) -> list[IssuePoint]:
    """The ``--issue`` points of ``paths`` (``llm_profile`` for the plain model, ``llm_fsdp``), medians over
    launches; records without the issue fields (runs without ``--issue``) are an error, and so are points whose
    FSDP host work per unit comes out negative (:func:`host_splits`)."""
    groups: dict[tuple, list[tuple[float, ...]]] = {}
    late: dict[tuple, int] = {}
    for path in paths:
        for n, rec in read_measurement_records(path):
            kind = rec.get("kind")
            if kind not in ("llm_profile", "llm_fsdp"):
                continue
            f = Fields(rec, str(path), f"line {n}", str(kind))
            if kind == "llm_profile":
                if f.whole("tp", low=1) != 1:
                    continue
                prefix, what, units = "model_", ONE_GPU, 0
            else:
                prefix = ""
                what = _what(_strategy(f), f.whole("replicate", low=1), f.whole("world", low=1))
                units = _units(f)
            key = (what, record_spec(f), f.whole("micro_batch", low=1), f.whole("world", low=1), units)
            groups.setdefault(key, []).append(tuple(float(f.number(prefix + k, positive=True))  # type: ignore[arg-type]
                                                    for k in TIMES))
            late[key] = late.get(key, 0) + f.whole(prefix + "outlasted_hold")
    if not groups:
        raise InputError("no llm_profile or llm_fsdp records with --issue fields", source=", ".join(map(str, paths)),
                         field="kind")
    points = [IssuePoint(what, spec, mb, world, units, len(v), late[(what, spec, mb, world, units)],
                         *(statistics.median(x[i] for x in v) for i in range(len(TIMES))))
              for (what, spec, mb, world, units), v in groups.items()]
    source = ", ".join(map(str, paths))
    for s in host_splits(points):
        for name, per_unit in (("issue_forward_s", s.forward_per_unit_s), ("issue_backward_s", s.backward_per_unit_s)):
            if per_unit <= 0:
                raise InputError(f"NO_SHARD on one-rank groups (h{s.spec.hidden}, micro-batch {s.micro_batch}, "
                                 f"{s.world} GPUs) issues in less time than the plain model: FSDP's host work per "
                                 "unit cannot be negative or zero", source=source, field=name,
                                 value=f"{per_unit * 1e3:.4f} ms per unit")
    return points


@dataclass(frozen=True)
class FsdpHostSplit:
    """FSDP1's host work per unit on one host, from one spec's points (seconds)."""

    spec: GPTSpec
    world: int
    micro_batch: int
    forward_per_unit_s: float      # NO_SHARD on one-rank groups less the plain model, forward issue, per unit
    backward_per_unit_s: float     # the same, backward
    all_reduce_per_unit_s: float | None   # NO_SHARD less NO_SHARD on one-rank groups, backward issue, per unit

    @property
    def forward_share(self) -> float:
        """The forward's share of FSDP1's host work per unit (forward and backward)."""
        return self.forward_per_unit_s / (self.forward_per_unit_s + self.backward_per_unit_s)


def host_splits(points: Sequence[IssuePoint]) -> list[FsdpHostSplit]:
    """One :class:`FsdpHostSplit` per (spec, micro-batch, world) that has the plain model and NO_SHARD on one-rank
    groups."""
    by = {(p.what, p.spec, p.micro_batch, p.world): p for p in points}
    out = []
    for (what, spec, mb, world), p in sorted(by.items(), key=lambda kv: (kv[0][3], kv[0][1].hidden, kv[0][2])):
        one = by.get((ONE_GPU, spec, mb, world))
        if what != NOCOMM or one is None:
            continue
        no = by.get((NO_SHARD, spec, mb, world))
        out.append(FsdpHostSplit(spec, world, mb, (p.issue_forward_s - one.issue_forward_s) / p.units,
                                 (p.issue_backward_s - one.issue_backward_s) / p.units,
                                 None if no is None else (no.issue_backward_s - p.issue_backward_s) / p.units))
    return out


def report(points: Sequence[IssuePoint]) -> list[str]:
    order = {ONE_GPU: 0, NOCOMM: 1, NO_SHARD: 2, FULL_SHARD: 3}
    several = len({p.micro_batch for p in points}) > 1         # name the micro-batch only where it tells points apart
    mb = (lambda m: f" mb{m}") if several else (lambda m: "")  # noqa: E731
    lines = ["| GPUs | spec | configuration | launches | iteration ms | host issue ms (forward + backward) | "
             "GPU alone ms | steps outlasting the hold |", "|---|---|---|---|---|---|---|---|"]
    for p in sorted(points, key=lambda p: (p.world, p.spec.hidden, p.micro_batch, order.get(p.what, 9), p.what)):
        lines.append(f"| {p.world} | h{p.spec.hidden} L{p.spec.layers} s{p.spec.seq}{mb(p.micro_batch)} | {p.what} | "
                     f"{p.launches} | "
                     f"{p.median_s * 1e3:.2f} | {p.issue_forward_s * 1e3:.2f} + {p.issue_backward_s * 1e3:.2f} | "
                     f"{p.gpu_s * 1e3:.2f} | {p.outlasted_hold} |")
    splits = host_splits(points)
    if splits:
        lines += ["", "FSDP1's host work per unit (NO_SHARD on one-rank groups less the plain model) and what each "
                  "unit's all-reduce adds to the backward's issue (NO_SHARD less NO_SHARD on one-rank groups), ms:", "",
                  "| GPUs | spec | forward per unit | backward per unit | forward share | all-reduce per unit |",
                  "|---|---|---|---|---|---|"]
        for s in splits:
            ar = "" if s.all_reduce_per_unit_s is None else f"{s.all_reduce_per_unit_s * 1e3:.3f}"
            lines.append(f"| {s.world} | h{s.spec.hidden}{mb(s.micro_batch)} | {s.forward_per_unit_s * 1e3:.3f} | "
                         f"{s.backward_per_unit_s * 1e3:.3f} | {s.forward_share:.2f} | {ar} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    return files_main("python -m validation.fsdp_issue", "Where an FSDP iteration's time goes (fsdp --issue records).",
                      read_points, report, argv)


if __name__ == "__main__":
    sys.exit(main())
