"""Where one FSDP step's time goes on the GPU, measured (``fsdp --profile-step``) beside the simulated streams.

::

    python -m validation.fsdp_profile [FILE ...]

Reads the FSDP runner's profiled steps (:mod:`validation.runners.step_timeline`; default: every
``fsdpprof_world*.jsonl`` under ``validation/data``) and, per configuration and launch, prints the measured step
beside the simulation of the same configuration (method (d) of ``llm_blind``, the configuration's own paired
probes, host work carried: the predictor section 7 scores the file with), seconds in ms:

* measured: the profiled step's span (first GPU interval to last; the step's own wall time beside it), the compute
  stream's kernels by class (GEMM + attention, other compute, copies + memsets), its idle time split into host
  gaps (the next kernel launched after the gap began), collective waits (launched in time, a collective running)
  and the rest; the collectives' time (union) and of it the part beside no other kernel (exposed);
* simulated: the iteration, the compute stream's records (kernels, stretched where the host issues slower), the
  collectives' union and the part beside no compute record, and the compute stream's idle time.

Then, per configuration, the FSDP step's kernels against the whole model's on one GPU alone (the profile point's
``model_timeline``): what FSDP adds (copies, memsets, divides) and how much slower the same GEMMs run beside its
collectives. With ``--boundaries``, the host's launch gaps between consecutive compute-stream GEMMs split at FSDP
unit boundaries (:func:`host_split`): per configuration, the boundary gaps less the same gaps of the whole model
alone, per boundary, forward and backward, and the gaps inside units less alone's, beside the simulation's FSDP host
work per unit and pass (:func:`simulated_unit_host`). A script to find the mechanism by; nothing here is fitted.

What the first profiled lease shows (``h200x2_2026-11-27_fsdpprof``, 2x H200, recorded 2026-11-27 by helper
h14fsdp20; a profiled step's wall time runs -0.6 to +10.4 ms from its point's unprofiled median):

* FULL_SHARD h2048 is host-bound, not collective- or memory-bound: of a 44-59 ms step the compute stream is busy
  12.9-17.2 ms (the model alone: 12.6-12.7 ms) and idles 28-45 ms, nearly all of it waiting for the host's next
  launch (``idle host``); it waits on a collective 0.02-1.2 ms, except in one launch where one rank's host ran ahead
  (17.5 ms, the other rank's host set the pace). The collectives' pure transfer time (the faster rank's kernel) is
  6.6-6.8 ms per step (all-gathers 0.22 ms, reduce-scatters 0.24 ms; the simulation: 7.07 ms), inside the host's
  gaps. FSDP's copies (0.64 ms per step on the all-gather stream) and extra kernels (9 compute kernels, ~0.2 ms) are
  small. GEMM + attention kernels run 6-9% longer than alone (beside NCCL kernels that spin while a peer's host is
  late): off the critical path in a host-bound step.
* The simulation has the same shape (its compute stream stretched by the host: 34.5-35.6 ms busy of 37.6-38.7) but
  7-10 ms less host time. Per unit (``--boundaries``, FSDP less alone, ms): forward boundary NO_SHARD 0.72-0.84,
  FULL_SHARD 1.20-1.24 (simulated 0.76-0.78 and 1.18-1.21: right); backward boundary NO_SHARD 0.85-1.19, FULL_SHARD
  1.60-1.71 (simulated as the forward: 0.4-0.5 ms short per FULL_SHARD unit, 8 units); inside the units FULL_SHARD
  h2048's backward launches add 1.7-2.1 ms per step over alone. At h4096 the FULL_SHARD backward boundary is 1.35-1.50
  (simulated 1.24-1.26). And the compute fit's own host speed sits below the configuration's paired probe: the fit's
  whole-model issue is 0.77-0.88 of the probe's on this lease (0.83-0.93 on ``h200x2_2026-11-27_fsdppairb``,
  0.94-1.00 on ``_fsdppair``), so every host term it carries comes out low there.

Tried on branch h14fsdp20, not kept (method d's FSDP median %, files fsdppair L1 / L2, fsdppairb L1 / L2, fsdpprof
L1 / L2, ``validation.fsdp_pair`` method d as in section 7): (1) the compute fit's host speed held at the paired
probe (``host_block_s`` scaled so the fit's whole-model issue equals the probe's): 2.4 / 20.3 / 8.9 / 6.1 / 10.9 /
15.7 -> 4.4 / 20.5 / 6.7 / 5.3 / 6.6 / 6.2 (h4096 then over-predicted by up to 25%; the first file worse by 2.0).
(2) FSDP1's backward re-gather with host work of its own (a fourth host key ``fsdp_regather_host_s``, per backward
re-gather beside ``fsdp_gather_host_s``, fitted with the other host keys on the campaign and carried as they are):
the 2-GPU campaign's fit takes it (0.246 ms; unit 0.629, gather 0.262; in sample 2.1 -> 1.4%) but the 4-GPU one's
degenerates (unit 0.178, gather 0.868, re-gather 0; 3.7 -> 3.8%). Held out (section 7, median % before -> after):
method d fsdppair L1 / L2, fsdppairb L1 / L2: 2.4 / 20.3 / 8.9 / 6.1 -> 2.8 / 19.4 / 8.8 / 5.2; fsdpprof L1 / L2 10.9 /
15.7 -> 10.0 / 15.2; the lease-worlds of ``fsdp_host_carry`` (rule in use) h200x2c 3.6 -> 3.2, h200x4d 3.9 -> 4.6,
h100x4h 2.6 -> 2.8, h100x4f 3.6 / 4.4 -> 3.0 / 3.5, h200x4_2026-11-26_fsdp 14.6 / 18.3 -> 16.3 / 11.7,
h100x4_2026-11-27_fsdpissue 4 GPUs 6.5 -> 9.2, fsdpissue2 8.2 / 2.4 -> 7.2 / 8.2, h200x4_2026-11-27_fsdpissue 5.1 / 9.0
-> 4.9 / 14.6, h200x2_2026-11-27_fsdpissue 6.2 -> 5.2; sealed fsdp4 rows 4.7 / 5.1 / 5.7 / 8.0 / 14.7 / 12.5 -> 4.0 /
8.2 / 4.8 / 10.9 / 17.2 / 13.1, llm4 FSDP 4.1 / 4.9 / 3.0 / 8.7 / 2.8 / 3.7 -> 4.9 / 6.2 / 4.3 / 9.7 / 3.6 / 3.4,
fsdppair4 8.7 -> 7.9: several worse by more than a point. The profile itself does not ask for it either: at h4096 the
FULL_SHARD backward boundary exceeds NO_SHARD's by 0.2-0.4 ms, less than the forward's gather (0.4-0.6 ms).

So the FULL_SHARD h2048 shortfall measured here is host work at FSDP's unit boundaries (above all the backward's)
and inside its backward, at a level the campaign-fitted host work, carried in units of the block issue time, does
not reach on this lease; nothing on the GPU side (collectives, copies, memory-bound kernels) is missing from the
simulated step. The runner now keeps the host's CUDA runtime calls by name (``runtime_calls``), which the next
profiled lease can use to tell the caching allocator's event queries and frees apart from Python hook time. That
lease (``h200x2_2026-11-27b_fsdpprof``, ``fsdp --profile-host``) itemises each boundary's host work by name:
:mod:`validation.fsdp_host_items`, which also records a backward host charge tried on it and not kept.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from simulator.core.errors import InputError
from validation.runners.records import read_measurement_records
from validation.check_cli import print_lines

DATA = Path(__file__).resolve().parent / "data"
PROFILE_FILES = "fsdpprof_world*.jsonl"
GEMM = ("gemm", "attention")
COPY = ("copy", "memset")


@dataclass(frozen=True)
class StepParts:
    """One profiled step on one rank, or one simulated iteration (seconds; None: not known for that side)."""

    span_s: float
    gemm_s: float | None           # compute stream: GEMM + attention kernels
    other_s: float | None          # compute stream: other compute kernels
    copy_s: float | None           # compute stream: copies and memsets
    busy_s: float                  # compute stream busy (simulated: its records, host stretch included)
    idle_host_s: float | None
    idle_nccl_s: float | None
    idle_other_s: float | None
    nccl_s: float
    nccl_exposed_s: float

    @property
    def idle_s(self) -> float:
        return self.span_s - self.busy_s


def measured_parts(summary: Mapping[str, Any]) -> StepParts:
    """:class:`StepParts` of one rank's ``timeline.summary`` (``step_timeline.summarize_timeline``)."""
    own = summary["busy_s"][summary["compute_stream"]]

    def of(classes: Sequence[str]) -> float:
        return sum(own.get(c, 0.0) for c in classes)

    return StepParts(summary["span_s"], of(GEMM), of(("compute",)), of(COPY), summary["compute_busy_s"],
                     summary["idle_host_s"], summary["idle_nccl_s"], summary["idle_other_s"], summary["nccl_s"],
                     summary["nccl_exposed_s"])


def simulated_parts(pred: Any, run: Any) -> StepParts:
    """:class:`StepParts` of ``run`` simulated by ``pred`` (a ``llm_real.RealPredictor``), records kept."""
    from simulator.training.llm.iteration import simulate_train
    from validation.runners.step_timeline import overlap_length, total_length, union

    config, gpus = pred.config(run)
    r = simulate_train(pred.router(gpus), pred.model(run.spec), config, pred.gpu, pred.params, pred.compute,
                       record=True)
    recs = [x for stage in r.records.values() for x in stage]
    compute = union([(x.start_s, x.end_s) for x in recs if x.track == "compute" and x.name != "optimizer"])
    comm = union([(x.start_s, x.end_s) for x in recs if x.track.startswith("dp")])
    return StepParts(float(r.iteration_s), None, None, None, total_length(compute), None, None, None,
                     total_length(comm), total_length(comm) - overlap_length(comm, compute))


@dataclass(frozen=True)
class Profiled:
    """One FSDP configuration in one launch: its record and the whole model's profiled step on one GPU."""

    path: Path
    record: Mapping[str, Any]
    model_timelines: tuple[Mapping[str, Any], ...]    # the profile point's model_timeline, per rank

    @property
    def model_summaries(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(t["summary"] for t in self.model_timelines)

    @property
    def model_steps(self) -> tuple[tuple[Mapping[str, Any], Any], ...]:
        return tuple((t["summary"], t["events"]) for t in self.model_timelines)

    @property
    def summaries(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(t["summary"] for t in self.record["timeline"] if t)


SUMMARY_KEYS = ("span_s", "compute_stream", "busy_s", "count", "compute_busy_s", "idle_host_s", "idle_nccl_s",
                "idle_other_s", "nccl_s", "nccl_exposed_s")
"""What a profiled step's ``summary`` holds (validation.runners.step_timeline.summarize_timeline) and is read here."""


def is_number(x: Any) -> bool:
    """A JSON number (int or float, not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def checked_events(events: Any, path: Path, where: str) -> list[Any]:
    """A profiled step's GPU intervals (``[stream, class, start_s, duration_s, launch_s or null]`` each,
    validation.runners.step_timeline.read_trace) as read, or an :class:`InputError` naming the file, the field
    (``where``, ``where[k]``) and the value."""
    if not isinstance(events, list):
        raise InputError("expected a list of GPU intervals", source=str(path), field=where, value=events)
    for k, e in enumerate(events):
        if not (isinstance(e, list) and len(e) == 5 and isinstance(e[1], str) and is_number(e[2]) and is_number(e[3])
                and (e[4] is None or is_number(e[4]))):
            raise InputError("expected [stream, class, start_s, duration_s, launch_s or null]", source=str(path),
                             field=f"{where}[{k}]", value=e)
    return events


def checked_timeline(t: Any, path: Path, where: str) -> Mapping[str, Any]:
    """One rank's profiled step (``{"events", "summary", "wall_s"}``, validation.runners.step_timeline) as read, or an
    :class:`InputError` naming the file, the field (``line N: timeline[r].events[k]``) and the value."""
    if not isinstance(t, Mapping):
        raise InputError("expected a profiled step {events, summary, wall_s} (fsdp --profile-step)", source=str(path),
                         field=where, value=t)
    summary = t.get("summary")
    checked_events(t.get("events"), path, f"{where}.events")
    if not isinstance(summary, Mapping):
        raise InputError("expected the step's summary (an object)", source=str(path), field=f"{where}.summary",
                         value=summary)
    for key in SUMMARY_KEYS:
        if key not in summary:
            raise InputError("missing field", source=str(path), field=f"{where}.summary.{key}")
    busy = summary["busy_s"]
    if not isinstance(busy, Mapping) or str(summary["compute_stream"]) not in busy:
        raise InputError("expected {stream: {class: seconds}} holding the compute stream "
                         f"{summary['compute_stream']!r}", source=str(path), field=f"{where}.summary.busy_s",
                         value=busy)
    if "wall_s" in t and not is_number(t["wall_s"]):
        raise InputError("must be a number", source=str(path), field=f"{where}.wall_s", value=t["wall_s"])
    return t


def _timelines(rec: Mapping[str, Any], key: str, path: Path, line: int) -> tuple[Mapping[str, Any], ...]:
    """The non-null profiled steps of ``rec[key]`` (a list per rank), each checked."""
    value = rec.get(key) or ()
    if not isinstance(value, list):
        raise InputError("expected a list of profiled steps, one per rank", source=str(path),
                         field=f"line {line}: {key}", value=value)
    return tuple(checked_timeline(t, path, f"line {line}: {key}[{r}]") for r, t in enumerate(value) if t)


def read_profiled(path: Path) -> list[Profiled]:
    """The ``llm_fsdp`` records of ``path`` with a profiled step, each with its launch's profile point's; an
    :class:`InputError` naming the file, field and value for a malformed record, and for a file without any."""
    models: dict[tuple[Any, Any], tuple[Mapping[str, Any], ...]] = {}
    found: list[tuple[int, Mapping[str, Any], tuple[Mapping[str, Any], ...]]] = []
    for line, r in read_measurement_records(path):
        if r.get("kind") not in ("llm_profile", "llm_fsdp"):
            continue
        steps = _timelines(r, "model_timeline" if r["kind"] == "llm_profile" else "timeline", path, line)
        for key in ("launch_index", "hidden") + (("point", "strategy", "layers", "median_s") if steps
                                                 and r["kind"] == "llm_fsdp" else ()):
            if key not in r:
                raise InputError(f"{r['kind']!r} record has no {key!r}", source=str(path), field=f"line {line}")
        if r["kind"] == "llm_profile":
            models[(r["launch_index"], r["hidden"])] = steps
        elif steps:
            found.append((line, r, steps))
    if not found:
        raise InputError("no llm_fsdp record with a profiled step (the fsdp runner's --profile-step files, "
                         f"{PROFILE_FILES})", source=str(path))
    return [Profiled(path, r, models.get((r["launch_index"], r["hidden"]), ())) for _, r, _ in found]


def predictors(path: Path) -> Mapping[str, Any]:
    """Point label -> the section-7 predictor of ``path``'s configurations (method d, host work carried)."""
    from validation.fsdp_pair import carry
    from validation.llm_blind import host_for, lease_predictor
    from validation.llm_records import read_llm_records

    records = read_llm_records([path])
    world = records.runs[0].world
    pred = carry(lease_predictor(path, records, world), host_for(world)[0])
    return {r.point: (getattr(pred, "by_point", {}).get(r.point, pred), r) for r in records.runs}


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1e3:.2f}"


ROW = ("span", "GEMM+attn", "other", "copy+set", "busy", "idle", "idle host", "idle coll", "idle rest", "coll",
       "coll exposed")


def row(p: StepParts) -> list[str]:
    return [_ms(v) for v in (p.span_s, p.gemm_s, p.other_s, p.copy_s, p.busy_s, p.idle_s, p.idle_host_s,
                             p.idle_nccl_s, p.idle_other_s, p.nccl_s, p.nccl_exposed_s)]


def median_parts(parts: Sequence[StepParts]) -> StepParts:
    """Field by field median (None stays None)."""
    fields = StepParts.__dataclass_fields__
    return StepParts(**{k: (None if getattr(parts[0], k) is None
                            else statistics.median(getattr(p, k) for p in parts)) for k in fields})


def report(paths: Sequence[Path]) -> list[str]:
    lines = []
    for path in paths:
        profiled = read_profiled(path)          # first: it names a file without profiled steps
        preds = predictors(path)
        lines += [f"## {path.parent.name}/{path.name}", "",
                  "| configuration | launch | side | iteration | " + " | ".join(ROW) + " |",
                  "|---|---|---|---|" + "---|" * len(ROW)]
        by: dict[str, list[Profiled]] = {}
        for p in profiled:
            by.setdefault(p.record["point"], []).append(p)
        for point, ps in by.items():
            short = f"{ps[0].record['strategy']} h{ps[0].record['hidden']}"
            pred, run = preds[point]
            sim = simulated_parts(pred, run)
            for p in ps:
                for rank, s in enumerate(p.summaries):
                    wall = p.record["timeline"][rank]["wall_s"]
                    lines.append(f"| {short} | L{p.record['launch_index']} r{rank} | measured (wall {_ms(wall)}) | "
                                 f"{_ms(p.record['median_s'])} | " + " | ".join(row(measured_parts(s))) + " |")
            lines.append(f"| {short} | - | simulated | {_ms(sim.span_s)} | " + " | ".join(row(sim)) + " |")
        lines += ["", "FSDP step's compute stream vs the whole model on one GPU alone (medians over launches and "
                  "ranks, ms): GEMM+attn, other, copy+memset, kernel counts by class", "",
                  "| configuration | FSDP GEMM+attn | alone | FSDP other | alone | FSDP copy+set | alone | "
                  "FSDP counts | alone counts |", "|---|---|---|---|---|---|---|---|---|"]
        for point, ps in by.items():
            short = f"{ps[0].record['strategy']} h{ps[0].record['hidden']}"
            mine = median_parts([measured_parts(s) for p in ps for s in p.summaries])
            alone_s = [s for p in ps for s in p.model_summaries]
            alone = median_parts([measured_parts(s) for s in alone_s]) if alone_s else None
            counts = ps[0].summaries[0]["count"]
            a_counts = alone_s[0]["count"] if alone_s else {}
            lines.append(f"| {short} | {_ms(mine.gemm_s)} | {_ms(alone.gemm_s if alone else None)} | "
                         f"{_ms(mine.other_s)} | {_ms(alone.other_s if alone else None)} | {_ms(mine.copy_s)} | "
                         f"{_ms(alone.copy_s if alone else None)} | "
                         + ", ".join(f"{k} {v}" for k, v in counts.items() if v) + " | "
                         + ", ".join(f"{k} {v}" for k, v in a_counts.items() if v) + " |")
        lines.append("")
    return lines


def gemm_launches(timeline: Mapping[str, Any]) -> list[float]:
    """The host's launch times of the compute stream's GEMMs in one profiled step, in order."""
    stream = int(timeline["summary"]["compute_stream"])
    return sorted(e[4] for e in timeline["events"] if e[0] == stream and e[1] == "gemm" and e[4] is not None)


@dataclass(frozen=True)
class HostSplit:
    """One step's host launch gaps between consecutive compute-stream GEMMs (seconds), split by where they fall:
    across an FSDP unit boundary (block to block) or inside a unit, in the forward and in the backward."""

    forward_boundary_s: float
    forward_inner_s: float
    backward_boundary_s: float
    backward_inner_s: float
    forward_boundaries: int
    backward_boundaries: int


def boundary_gaps(n: int, layers: int) -> tuple[set[int], set[int], int] | None:
    """Of ``n`` GEMM launches of one step of the runners' GPT (:func:`host_split`'s shape), the indices of the gaps
    (gap ``i``: launch ``i`` to ``i + 1``) at the forward's and the backward's unit boundaries, and the number of
    forward GEMMs; None where ``n`` does not fit the shape."""
    if layers < 1 or (n - 3) % (3 * layers) or n <= 3:
        return None
    g = (n - 3) // (3 * layers)
    nf = g * layers + 1                                    # forward GEMMs: the blocks' and the head's
    return {g * k - 1 for k in range(1, layers)}, {nf + 1 + 2 * g * k for k in range(layers)}, nf


def host_split(launches: Sequence[float], layers: int) -> HostSplit | None:
    """:class:`HostSplit` of one step's GEMM launch times (:func:`gemm_launches`) of the runners' GPT: ``g`` GEMMs
    per block forward and ``2 g`` backward (data and weight gradients), one for the head forward and two backward,
    so ``12 layers + 3`` in all for ``g = 4``; the forward's boundaries are the gaps from a block's last GEMM to the
    next block's first, the backward's from the head's (or a block's) last to the next block's first. None where
    the count does not fit that shape."""
    bounds = boundary_gaps(len(launches), layers)
    if bounds is None:
        return None
    fwd_bound, bwd_bound, nf = bounds
    gaps = [b - a for a, b in zip(launches, launches[1:])]
    fb = sum(gaps[i] for i in fwd_bound)
    fi = sum(gaps[i] for i in range(nf - 1) if i not in fwd_bound)
    bb = sum(gaps[i] for i in bwd_bound)
    bi = sum(gaps[i] for i in range(nf - 1, len(gaps)) if i not in bwd_bound)
    return HostSplit(fb, fi, bb, bi, len(fwd_bound), len(bwd_bound))


def boundary_report(paths: Sequence[Path]) -> list[str]:
    """Per file and configuration: the host's FSDP work per unit boundary, forward and backward (the boundary gaps
    less the same gaps of the whole model alone, per boundary; medians over launches and ranks), and the inner
    gaps' excess over alone, beside the simulation's FSDP host work per unit and pass (ms)."""
    lines = ["| file | configuration | fwd boundary: FSDP - alone per unit | bwd boundary: FSDP - alone per unit | "
             "fwd inner: FSDP - alone | bwd inner: FSDP - alone | simulated FSDP host per unit fwd / bwd |",
             "|---|---|---|---|---|---|---|"]
    for path in paths:
        profiled = read_profiled(path)          # first: it names a file without profiled steps
        preds = predictors(path)
        by: dict[str, list[Profiled]] = {}
        for p in profiled:
            by.setdefault(p.record["point"], []).append(p)
        for point, ps in by.items():
            rec = ps[0].record
            layers = int(rec["layers"])
            mine = [host_split(gemm_launches(t), layers) for p in ps for t in p.record["timeline"] if t]
            alone = [host_split(gemm_launches({"summary": s, "events": e}), layers)
                     for p in ps for s, e in p.model_steps]
            if any(x is None for x in mine + alone) or not alone:
                lines.append(f"| {path.parent.name}/{path.name} | {rec['strategy']} h{rec['hidden']} | "
                             "GEMM count off the runners' GPT shape | | | | |")
                continue

            def med(xs: Sequence[HostSplit], f: str) -> float:
                return statistics.median(getattr(x, f) for x in xs)

            m, a = ({f: med(xs, f) for f in HostSplit.__dataclass_fields__} for xs in (mine, alone))
            pred, run = preds[point]
            sim = simulated_unit_host(pred, run)
            lines.append(
                f"| {path.parent.name}/{path.name} | {rec['strategy']} h{rec['hidden']} | "
                f"{_ms((m['forward_boundary_s'] - a['forward_boundary_s']) / m['forward_boundaries'])} | "
                f"{_ms((m['backward_boundary_s'] - a['backward_boundary_s']) / m['backward_boundaries'])} | "
                f"{_ms(m['forward_inner_s'] - a['forward_inner_s'])} | "
                f"{_ms(m['backward_inner_s'] - a['backward_inner_s'])} | {_ms(sim[0])} / {_ms(sim[1])} |")
    return lines


def simulated_unit_host(pred: Any, run: Any) -> tuple[float, float]:
    """The simulation's FSDP host work of one block unit (s), forward and backward: its host time less the block's
    own issue (``fsdp_unit_host_s``, the gathers', the backward's gradient kernels and reduction call)."""
    from simulator.training.llm.compute import ComputeModel
    from simulator.training.llm.iteration import train_work
    from simulator.training.llm.layer import block_work

    config, gpus = pred.config(run)
    model = pred.model(run.spec)
    units = [u for st in train_work(pred.router(gpus), model, config, pred.gpu, pred.params,
                                     pred.compute).stages for ch in st.chunks for u in ch.units
             if u.name.startswith("block")]
    block, cm = block_work(model, config), ComputeModel(pred.gpu, config.dtype, pred.compute)
    return (units[0].host_forward_s - cm.host_s(1, block.host_ops(True), block.forward.calls, config.tp),
            units[0].host_backward_s - cm.host_s(1, block.host_ops(False), block.backward.calls, config.tp))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.fsdp_profile",
                                description="measured vs simulated FSDP step timelines (fsdp --profile-step files)")
    p.add_argument("files", nargs="*", type=Path)
    p.add_argument("--boundaries", action="store_true",
                   help="the host's FSDP work per unit boundary, forward and backward, against the simulation's")
    a = p.parse_args(argv)
    paths = a.files or sorted(DATA.glob(f"*/{PROFILE_FILES}"))
    return print_lines(lambda: boundary_report(paths) if a.boundaries else report(paths))


if __name__ == "__main__":
    sys.exit(main())
