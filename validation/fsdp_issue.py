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

Runs without that rate limiter (``fsdp --free-gathers``, the ``fsdpsplit`` phases: ``limit_all_gathers`` false, with
SHARD_GRAD_OP too) let the host issue FULL_SHARD without waiting, so the gather split (:func:`gather_splits`) pins
FSDP1's host cost per all-gather apart from its per-unit work, per launch with the spread over launches::

    python -m validation.fsdp_issue validation/data/<campaign>/fsdpsplit_world{2,4}.jsonl

and compares the all-gather's share of a sharded unit's host work with the two H200 campaigns' fits
(:data:`FIT_SPLITS`).

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
SHARD_GRAD_OP = "SHARD_GRAD_OP"
FREE = ", free gathers"
"""Suffix of a sharded configuration run without FSDP1's all-gather rate limiter (``limit_all_gathers`` false)."""


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


def _what(strategy: str, replicate: int, world: int, limited: bool = True) -> str:
    if strategy == "no_shard":
        return NO_SHARD
    if strategy == "hybrid_shard" and replicate == world:
        return NOCOMM
    free = "" if limited else FREE
    if strategy == "shard_grad_op":
        return SHARD_GRAD_OP + free
    if strategy in ("full_shard", "hybrid_shard") and replicate == 1:
        return (FULL_SHARD if strategy == "full_shard" else f"{strategy} replicate=1") + free
    return f"{strategy} replicate={replicate}{free}"


def _limited(f: Fields) -> bool:
    """``limit_all_gathers`` of an ``llm_fsdp`` record: true where absent (the runner's default before
    ``--free-gathers``)."""
    v = f.record.get("limit_all_gathers", True)
    if not isinstance(v, bool):
        raise f.bad("limit_all_gathers", "must be true or false", v)
    return v


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


Launches = dict[tuple, dict[tuple[str, int], tuple[float, ...]]]
"""(what, spec, micro-batch, world, units) -> {(file, launch index): the :data:`TIMES` of that launch}."""


def read_launches(paths: Sequence[str | Path]) -> tuple[Launches, dict[tuple, int]]:
    """Every ``--issue`` point of ``paths`` per launch, and its steps that outlasted the hold, summed over launches;
    records without the issue fields are an error."""
    groups: Launches = {}
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
                what = _what(_strategy(f), f.whole("replicate", low=1), f.whole("world", low=1), _limited(f))
                units = _units(f)
            key = (what, record_spec(f), f.whole("micro_batch", low=1), f.whole("world", low=1), units)
            launch = (str(path), f.whole("launch_index") if "launch_index" in rec else n)
            groups.setdefault(key, {})[launch] = tuple(float(f.number(prefix + k, positive=True))  # type: ignore[arg-type]
                                                      for k in TIMES)
            late[key] = late.get(key, 0) + f.whole(prefix + "outlasted_hold")
    return groups, late


def read_points(paths: Sequence[str | Path]) -> list[IssuePoint]:
    """The ``--issue`` points of ``paths`` (``llm_profile`` for the plain model, ``llm_fsdp``), medians over
    launches; records without the issue fields (runs without ``--issue``) are an error, and so are points whose
    FSDP host work per unit comes out negative (:func:`host_splits`)."""
    launches, late = read_launches(paths)
    groups = {k: list(v.values()) for k, v in launches.items()}
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


FIT_SPLITS = {2: (0.527e-3, 0.367e-3, 0.092e-3), 4: (0.626e-3, 0.264e-3, 0.104e-3)}
"""World size -> the host work (``fsdp_unit_host_s``, ``fsdp_gather_host_s``, ``host_collective_s``, seconds) that
``llm_real.fit_host_work`` fits on that world size's H200 campaign (``llm_blind.HOST_FROM``: h200x2_2026-11-26c and
the 4-GPU one), as branch h14host26 recorded them (commit be2d522, ``rank_skew.TRIED`` form F): text, not refitted."""


@dataclass(frozen=True)
class Spread:
    """A value per launch: the median and the range over launches (seconds)."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def text(self) -> str:
        lo, hi = min(self.values), max(self.values)
        return f"{self.median * 1e3:.3f} [{lo * 1e3:.3f}, {hi * 1e3:.3f}]"


@dataclass(frozen=True)
class GatherSplit:
    """FSDP1's host work on one host, apart per unit and per all-gather, from one spec's points run without the
    all-gather rate limiter (seconds per launch; the model's ``fsdp_unit_host_s`` and ``fsdp_gather_host_s``)."""

    spec: GPTSpec
    world: int
    micro_batch: int
    outlasted_hold: int         # steps of the free-gather points whose issue outlasted the sleep (0: host alone)
    unit: Spread                # NO_SHARD on one-rank groups less the plain model, forward issue, per unit
    gather: Spread              # FULL_SHARD (free gathers) less NO_SHARD, forward issue, per unit (one all-gather each)
    gather_kept: Spread | None  # SHARD_GRAD_OP (free gathers) less NO_SHARD, forward: all-gathers never freed
    regather: Spread | None     # FULL_SHARD less SHARD_GRAD_OP, backward issue, per block (one re-gather each)
    scatter: Spread | None      # SHARD_GRAD_OP less NO_SHARD, backward issue, per unit: reduce-scatter vs all-reduce

    @property
    def gather_share(self) -> float:
        """The all-gather's share of a sharded unit's forward host work (unit + gather), medians."""
        return self.gather.median / (self.unit.median + self.gather.median)


def _per_launch(a: dict, b: dict, index: int, count: int) -> Spread | None:
    """(a - b) / count of the :data:`TIMES` entry ``index``, per launch both have; None when none."""
    both = sorted(set(a) & set(b))
    return Spread(tuple((a[k][index] - b[k][index]) / count for k in both)) if both else None


def gather_splits(launches: Launches, late: dict[tuple, int]) -> list[GatherSplit]:
    """One :class:`GatherSplit` per (spec, micro-batch, world) that has the plain model, NO_SHARD on one-rank groups,
    NO_SHARD and FULL_SHARD run without the rate limiter (SHARD_GRAD_OP's terms where it ran too)."""
    by = {(k[0], k[1], k[2], k[3]): (k[4], v) for k, v in launches.items()}
    lates = {(k[0], k[1], k[2], k[3]): n for k, n in late.items()}
    fwd, bwd = TIMES.index("issue_forward_s"), TIMES.index("issue_backward_s")
    out = []
    for (what, spec, mb, world), (units, full) in sorted(by.items(), key=lambda kv: (kv[0][3], kv[0][1].hidden,
                                                                                    kv[0][2])):
        need = [by.get((w, spec, mb, world)) for w in (ONE_GPU, NOCOMM, NO_SHARD)]
        if what != FULL_SHARD + FREE or any(x is None for x in need):
            continue
        one, nocomm, no = (x[1] for x in need)      # type: ignore[index]
        sgo = by.get((SHARD_GRAD_OP + FREE, spec, mb, world))
        unit = _per_launch(nocomm, one, fwd, units)
        gather = _per_launch(full, no, fwd, units)
        if unit is None or gather is None:
            continue
        out.append(GatherSplit(spec, world, mb, lates[(what, spec, mb, world)]
                               + (lates[(SHARD_GRAD_OP + FREE, spec, mb, world)] if sgo else 0), unit, gather,
                               None if sgo is None else _per_launch(sgo[1], no, fwd, units),
                               None if sgo is None else _per_launch(full, sgo[1], bwd, units - 1),
                               None if sgo is None else _per_launch(sgo[1], no, bwd, units)))
    return out


def gather_lines(splits: Sequence[GatherSplit]) -> list[str]:
    """The gather split per world size and spec (ms per launch: median [min, max] over launches), beside the fits'
    (:data:`FIT_SPLITS`)."""
    if not splits:
        return []
    lines = ["", "FSDP1's host work per unit and per all-gather without the rate limiter, forward issue (per unit: "
             "NO_SHARD on one-rank groups less the plain model; per all-gather: FULL_SHARD less NO_SHARD; kept: "
             "SHARD_GRAD_OP less NO_SHARD, gathers not freed after use; re-gather: FULL_SHARD less SHARD_GRAD_OP, "
             "backward, per block; reduce-scatter: SHARD_GRAD_OP less NO_SHARD, backward, per unit), ms, median "
             "[min, max] over launches; the gather's share of unit + gather beside the fits':", "",
             "| GPUs | spec | launches | per unit | per all-gather | kept | re-gather | reduce-scatter vs all-reduce "
             "| gather share | fit share (2 / 4-GPU fit) | steps outlasting the hold |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    fits = " / ".join(f"{g / (u + g):.2f}" for u, g, _ in (FIT_SPLITS[2], FIT_SPLITS[4]))
    for s in splits:
        opt = [x.text() if x is not None else "" for x in (s.gather_kept, s.regather, s.scatter)]
        lines.append(f"| {s.world} | h{s.spec.hidden} | {len(s.gather.values)} | {s.unit.text()} | "
                     f"{s.gather.text()} | {' | '.join(opt)} | {s.gather_share:.2f} | {fits} | {s.outlasted_hold} |")
    return lines


def report(points: Sequence[IssuePoint]) -> list[str]:
    order = {ONE_GPU: 0, NOCOMM: 1, NO_SHARD: 2, SHARD_GRAD_OP + FREE: 3, FULL_SHARD: 4, FULL_SHARD + FREE: 4}
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


def read_all(paths: Sequence[str | Path]) -> tuple[list[IssuePoint], list[GatherSplit]]:
    """The points of ``paths`` (:func:`read_points`) and their gather splits (:func:`gather_splits`)."""
    return read_points(paths), gather_splits(*read_launches(paths))


def main(argv: Sequence[str] | None = None) -> int:
    return files_main("python -m validation.fsdp_issue", "Where an FSDP iteration's time goes (fsdp --issue records).",
                      read_all, lambda both: report(both[0]) + gather_lines(both[1]), argv)


if __name__ == "__main__":
    sys.exit(main())
