"""Compute kernels beside NCCL kernels: the probe (``validation.runners.gemm_nccl``) against the two laws, and the
profiled FSDP steps' kernels beside their collectives at 2 and 4 GPUs.

::

    python -m validation.gemm_nccl [FOLDER]     # default: validation/data/h200x2_2026-11-27_gemmnccl

Issue 14: in the lead's 4-GPU FSDP profile GEMM + attention kernels ran +15-48% longer than the whole model alone,
+6-9% on 2 GPUs. Two candidate mechanisms, each a law with no fitted factor:

* **SM share**: NCCL runs one block per channel, each resident on an SM for the whole kernel (waiting for a late
  peer included), so a kernel beside it has ``SMs - channels`` SMs: time x ``SMs / (SMs - channels)``;
* **HBM share**: a transferring collective moves ``4 x busbw bytes`` through the GPU's memory
  (:mod:`simulator.training.llm.hbm_contention`), so a memory-bound kernel beside it runs at ``1 - share`` of its
  speed (``share`` = those bytes over the collective's time alone and the copy bandwidth measured alone).

What the probe measured (``h200x2_2026-11-27_gemmnccl``, 2x H200, NCCL 2.28.9, 132 SMs; one launch per channel
count, 8 / 16 / 24 / 32 and NCCL's default, which is 24; medians of 10 repetitions):

* The **HBM-share law holds for the memory-bound copy, with no fitted factor**: inside all-gathers / reduce-scatters /
  all-reduces of 64-256 MiB the 256 MiB copy runs 1.07-1.32x its time alone against 1.10-1.40x predicted (all-gather
  within 0.03; reduce-scatter and all-reduce predicted up to 0.14 high); beside a waiting NCCL kernel (no traffic)
  1.02-1.06x.
* The **SM-share law fails for the runs' GEMMs**: they run 1.4-1.9x their time alone beside a *waiting* NCCL kernel
  (no memory traffic) and about as much inside transferring ones, at 8 channels as at 32 (the law: 1.06 at 8, 1.22 at
  24, 1.32 at 32). The kernels' launch shapes (``kernel_grid`` records) say why: cuBLAS runs them as persistent
  kernels (``nvjet_sm90_tst_*``, a grid of 128-132 CTAs of 384 threads, 168 registers and 189-221 KB of shared memory
  each: one CTA per SM), and an NCCL block (544 threads, 96 registers, 104 KB) holds its SM whole, so the CTAs
  that find no free SM run after the others, a second round: up to 2x whatever the number of held SMs. Only a GEMM
  of many tiles per CTA (8192^3: 1664 tiles on 132 CTAs) comes near the law (1.14-1.25x). The flash attention
  (cuDNN, 132 CTAs) runs 1.2x beside 16-32 channels and not slower beside 8. No clock moved (nvidia-smi every 100 ms:
  1935-1980 MHz while busy, the maximum 1980).
* The profiled FSDP steps agree kernel by kernel (:func:`profile_rows`): a GEMM beside an NCCL kernel takes 1.4-2.0x
  its time in the whole model alone (by its place in the block: the same place, the same factor, at 2 and at 4 GPUs;
  attention 1.1-1.4x), whether the NCCL kernel waits for a late peer or transfers. What differs between 2 and 4 GPUs
  is how much of the compute runs beside an NCCL kernel at all: at 4 GPUs the ranks' hosts drift apart, NCCL
  kernels wait longer for the slowest rank and cover more GEMMs.

So the slowdown is SM occupancy by resident NCCL kernels (for as long as they are resident, waiting included)
acting on persistent GEMMs, plus the HBM share for memory-bound kernels while data moves. The simulation's ranks are
identical, so its collectives never wait for a late peer: only the transfer's part can be charged from the
collective's time, and the factor for GEMMs depends on their tiles per CTA (no law from the SM count alone).

What the model charges today (:mod:`simulator.training.llm.hbm_contention`, FSDP only: the pipeline/TP engine runs
no compute beside its collectives; DDP has its own measured ``ddp.compute_slowdown`` 0.49, the 4x H100 overlap
probe's): every kernel of a unit at ``1 - share`` while a collective of the unit's stream runs, share 0.20-0.36 on
these runs, i.e. 1.25-1.55x, against 1.66x measured for GEMMs beside transferring NCCL kernels, 1.35-1.40x for the
attention and 1.1-1.3x for memory-bound copies. On the profiled configurations it changes almost nothing
(:func:`charge_rows`): the simulated compute stream is host-bound, its kernels end before the host has issued the
next ones, so the charge adds 0-0.9 ms of busy time and 0-0.5 ms to the iteration, while the measured steps' GEMMs
and attention run 0.6-4.2 ms longer than alone (0.1-3.7 ms of it beside NCCL kernels), off the critical path where
the host sets the pace (h2048) as in the simulation.

Tried, not kept (branch h14gemm21, commit 4c3e819, reverted by the next): compute-bound kernels (GEMMs, fused
attention) at ``1 / 1.77`` of their speed while any collective is resident, memory-bound kernels at the HBM share
(each unit's compute-bound share of its seconds from the compute model); 1.77 identified on this 2-GPU probe alone
(median over the runs' GEMM shapes and the attention beside a waiting NCCL kernel at NCCL's default channels).
Scored held out on the 4-GPU sealed leases (``python -m validation.accuracy --only llm``, section 7, median % before
-> after): llm4 FSDP 4.1 -> 5.2, 4.9 -> 7.0, 3.0 -> 5.4, 8.7 -> 8.2, 2.8 -> 4.3, 3.7 -> 1.9, 2.9 -> 4.1; fsdp4 4.7 ->
5.5, 5.1 -> 11.2, 5.7 -> 9.6, 8.0 -> 10.3, 14.7 -> 16.9, 12.5 -> 11.4, 8.5 -> 9.3; fsdppair4 8.7 -> 7.8, 11.5 -> 15.5;
``python -m validation.llm_blind``: 4x H100 blind 4 GPUs 4.4 -> 4.4 (2 GPUs 3.6 -> 4.5), held-out 4x H200 lease 4 GPUs
18.3 -> 10.3 (2 GPUs 14.6 -> 13.7), ``h200x4_2026-11-27_fsdpissue`` 4 GPUs 9.0 -> 10.7; method d (2 GPUs) pooled
10.9 -> 11.9. Most 4-GPU files worse, several by more than a point: the heavier charge moves the host work fitted on
the campaigns' FSDP runs (``llm_real``'s host fit simulates them) more than it moves the runs it predicts, and what
lengthens the 4-GPU steps (NCCL kernels waiting for a late rank's host, covering 46% of the GEMMs' time instead of
29%) is rank skew, which a simulation of identical ranks does not have.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from simulator.core.errors import InputError
from simulator.training.llm.hbm_contention import collective_hbm_bytes
from validation.check_cli import folder_main
from validation.fsdp_profile import is_number
from validation.runners.gemm_nccl import MODES
from validation.runners.records import read_measurement_records

DATA = Path(__file__).resolve().parent / "data"
FOLDER = DATA / "h200x2_2026-11-27_gemmnccl"
PROFILES = (DATA / "h200x2_2026-11-27_fsdpprof", DATA / "h200x4_2026-11-27_fsdpprof4")
BANDWIDTH_BYTES = 64 << 20
"""Collectives from this size up keep the probe's work inside them (smaller chains are issued slower than they run)."""
INSIDE = 0.95
"""A profiled kernel counts as beside an NCCL kernel when that share of it is covered; as alone below 0.05."""


@dataclass(frozen=True)
class Point:
    """One probe point on one rank: the work's seconds alone and beside, and whether it lay inside the collectives."""

    channels: str          # NCCL_MAX_NCHANNELS of the launch, or "default"
    mode: str              # xfer (inside transferring collectives) or spin (beside a waiting one)
    work: str
    op: str
    size_bytes: int
    rank: int
    alone_s: float
    beside_s: float
    coll_one_s: float
    inside: bool

    @property
    def ratio(self) -> float:
        return self.beside_s / self.alone_s


PER_RANK = ("work_alone_s", "work_beside_s", "coll_s", "start_after_coll_s", "coll_after_work_s")
"""A ``gemm_nccl`` record's lists, one entry per rank (validation.runners.gemm_nccl)."""
GRID_FIELDS = ("work", "name", "grid", "block", "registers_per_thread", "shared_memory")
"""What :func:`grid_rows` reads of a ``kernel_grid`` record."""


def checked_record(r: Mapping[str, Any], path: Path, line: int) -> Mapping[str, Any]:
    """A ``gemm_nccl`` or ``kernel_grid`` record as read, or an :class:`InputError` naming the file, the field
    (``line N: field``) and the value (it raised KeyError / TypeError tracebacks on a damaged file)."""
    def bad(why: str, field: str) -> InputError:
        return InputError(why, source=str(path), field=f"line {line}: {field}", value=r.get(field))

    if r.get("kind") == "kernel_grid":
        for f in GRID_FIELDS:
            if f not in r:
                raise bad("missing field", f)
        if not isinstance(r["work"], str) or not isinstance(r["name"], str):
            raise bad("must be a string", "work" if not isinstance(r["work"], str) else "name")
        return r
    mode = r.get("mode")
    if mode not in ("alone", *MODES):
        raise bad(f"must be one of alone, {', '.join(MODES)}", "mode")
    work = r.get("work")
    if not (isinstance(work, str) and ":" in work):
        raise bad("expected a work label such as gemm:2048x2048x2048 or copy:268435456", "work")
    if not isinstance(r.get("env"), Mapping):
        raise bad("expected the launch's environment (an object)", "env")
    if r.get("sms") is not None and not (isinstance(r["sms"], int) and r["sms"] > 0):
        raise bad("must be a positive integer or null", "sms")
    if not (isinstance(r.get("work_kernels"), int) and r["work_kernels"] > 0):
        raise bad("must be a positive integer", "work_kernels")
    lists = {f: r.get(f) for f in PER_RANK}
    for f, xs in lists.items():
        if not (isinstance(xs, list) and xs and all(x is None or is_number(x) for x in xs)):
            raise bad("expected one number (or null) per rank", f)
        if len(xs) != len(lists["work_alone_s"]):
            raise bad(f"expected {len(lists['work_alone_s'])} entries, one per rank as work_alone_s", f)
    if not all(is_number(x) and x > 0 for x in lists["work_alone_s"]):
        raise bad("every rank's time alone must be a positive number", "work_alone_s")
    if mode != "alone":
        if not (isinstance(r.get("op"), str) and isinstance(r.get("bytes"), int) and r["bytes"] > 0):
            raise bad("expected the collective's op (a string) and bytes (a positive integer)",
                      "op" if not isinstance(r.get("op"), str) else "bytes")
        if not (is_number(r.get("coll_one_s")) and r["coll_one_s"] > 0):
            raise bad("must be a positive number", "coll_one_s")
        ranks = lists["work_beside_s"][:1] if mode == "spin" else lists["work_beside_s"]
        if not all(is_number(x) and x > 0 for x in ranks):
            raise bad("the work's time beside must be a positive number (rank 0's for spin)", "work_beside_s")
    return r


def _probe_records(path: Path):
    """``(line, record)`` of the ``gemm_nccl`` and ``kernel_grid`` records of one probe file, each checked."""
    for line, r in read_measurement_records(path):
        if r.get("kind") in ("gemm_nccl", "kernel_grid"):
            yield line, checked_record(r, path, line)


def read_probe(path: Path) -> tuple[list[Point], list[Mapping[str, Any]], int]:
    """The points, the ``kernel_grid`` records and the SM count of one probe file."""
    points, grids, sms = [], [], 0
    for _, r in _probe_records(path):
        if r.get("kind") == "kernel_grid":
            grids.append(r)
        if r.get("kind") != "gemm_nccl" or r["mode"] == "alone":
            continue
        sms = int(r.get("sms") or 0)
        channels = r["env"].get("NCCL_MAX_NCHANNELS", "default")
        ranks = (0,) if r["mode"] == "spin" else range(len(r["work_alone_s"]))   # spin: rank 0 ran the work
        for k in ranks:
            start, after = r["start_after_coll_s"][k], r["coll_after_work_s"][k]
            points.append(Point(channels, r["mode"], r["work"], r["op"], int(r["bytes"]), k, r["work_alone_s"][k],
                                r["work_beside_s"][k], float(r["coll_one_s"]),
                                start is not None and after is not None and start >= 0 and after >= 0))
    if not points:
        raise InputError("no gemm_nccl points", source=str(path))
    return points, grids, sms


def copy_Bps(path: Path) -> float:
    """Bytes per second of the probe's copy alone (read plus written), median over ranks."""
    for line, r in _probe_records(path):
        if r.get("kind") == "gemm_nccl" and r["mode"] == "alone" and r["work"].startswith("copy:"):
            size = r["work"].split(":")[1]
            if not size.isdigit():
                raise InputError("expected copy:BYTES", source=str(path), field=f"line {line}: work", value=r["work"])
            nbytes = 2 * int(size) * int(r["work_kernels"])
            return statistics.median(nbytes / t for t in r["work_alone_s"])
    raise InputError("no copy alone in the probe", source=str(path))


def sm_law(channels: int, sms: int) -> float:
    """Time factor of a kernel left ``sms - channels`` SMs (one NCCL block per channel)."""
    return sms / (sms - channels)


def hbm_law(op: str, ranks: int, size_bytes: int, coll_s: float, mem_Bps: float) -> float:
    """Time factor of a memory-bound kernel beside ``op`` moving ``4 x busbw bytes`` in ``coll_s``."""
    return 1.0 / (1.0 - collective_hbm_bytes(op, ranks, size_bytes) / (coll_s * mem_Bps))


def median_or_none(xs: Iterable[float]) -> float | None:
    """The median of ``xs``, None when there are none."""
    xs = list(xs)
    return statistics.median(xs) if xs else None


def ratio_cell(x: float | None) -> str:
    """A time ratio's table cell: two decimals, '-' for none."""
    return "-" if x is None else f"{x:.2f}"


def probe_rows(folder: Path) -> list[str]:
    """Per work and channel count: beside a waiting NCCL kernel (spin, rank 0), inside transferring collectives of
    >= 64 MiB (xfer, every op, both ranks, the work inside), and the SM-share law; the copy with the HBM-share law."""
    files = sorted(folder.glob("gemmnccl_ch*.jsonl"), key=lambda p: (not p.stem[11:].isdigit(), len(p.stem), p.stem))
    if not files:
        raise InputError("no gemmnccl_ch*.jsonl files", source=str(folder))
    by: dict[tuple[str, str], list[Point]] = defaultdict(list)
    sms, order, chans = 0, [], []
    laws: list[str] = []
    for path in files:
        points, _, sms = read_probe(path)
        mem = copy_Bps(path)
        for p in points:
            by[(p.work, p.channels)].append(p)
            if p.work not in order:
                order.append(p.work)
        chans.append(points[0].channels)
        copy = [p for p in points if p.mode == "xfer" and p.work.startswith("copy:") and p.size_bytes >= BANDWIDTH_BYTES
                and p.inside]
        for op in sorted({p.op for p in copy}):
            for size in sorted({p.size_bytes for p in copy if p.op == op}):
                mine = [p for p in copy if p.op == op and p.size_bytes == size]
                laws.append(f"| {points[0].channels} | {op} | {size >> 20} | {ratio_cell(median_or_none(p.ratio for p in mine))} | "
                            f"{hbm_law(op, 2, size, mine[0].coll_one_s, mem):.2f} |")
    head = " | ".join(f"ch {c}: spin / xfer / SM law" for c in chans)
    lines = [f"Time beside NCCL over time alone ({folder.name}, {sms} SMs; spin: beside a waiting NCCL kernel, rank 0; "
             f"xfer: inside transferring collectives of >= {BANDWIDTH_BYTES >> 20} MiB, median over ops, sizes and "
             "ranks):", "", f"| work | {head} |", "|---|" + "---|" * len(chans)]
    for work in order:
        cells = []
        for c in chans:
            ps = by[(work, c)]
            spin = median_or_none(p.ratio for p in ps if p.mode == "spin")
            xfer = median_or_none(p.ratio for p in ps if p.mode == "xfer" and p.size_bytes >= BANDWIDTH_BYTES and p.inside)
            law = sm_law(int(c), sms) if c.isdigit() else None
            cells.append(f"{ratio_cell(spin)} / {ratio_cell(xfer)} / {ratio_cell(law)}")
        lines.append(f"| {work} | " + " | ".join(cells) + " |")
    lines += ["", "The copy inside transferring collectives against the HBM-share law (4 accesses per bus byte, the "
              "collective's time alone, the copy's bandwidth alone; no fitted factor):", "",
              "| channels | op | MiB | measured | HBM law |", "|---|---|---|---|---|", *laws]
    return lines


def grid_rows(folder: Path) -> list[str]:
    """The launch shapes of the work kernels and of NCCL's kernel (NCCL's default channels' launch)."""
    path = folder / "gemmnccl_chdefault.jsonl"
    if not path.exists():
        return []
    _, grids, _ = read_probe(path)
    lines = ["Launch shapes (NCCL's default channels; CUPTI via torch.profiler):", "",
             "| work | kernel | grid | block | registers / thread | shared memory B |", "|---|---|---|---|---|---|"]
    seen = set()
    for g in grids:
        key = g["work"].split(":")[0] if "nccl" in g["name"].lower() else g["work"]
        if key in seen:
            continue
        seen.add(key)
        lines.append(f"| {g['work']} | `{g['name'][:60]}` | {g['grid']} | {g['block']} | {g['registers_per_thread']} | "
                     f"{g['shared_memory']} |")
    return lines


def kernel_ratios(path: Path) -> list[tuple[str, str, float, float, float]]:
    """Every GEMM / attention kernel of the profiled FSDP steps of ``path`` (:func:`kernel_ratios_of`, every rank)."""
    from validation.fsdp_profile import read_profiled

    return [r for p in read_profiled(path) for rank in range(len(p.model_timelines)) for r in kernel_ratios_of(p, rank)]


def kernel_ratios_of(p: Any, rank: int) -> list[tuple[str, str, float, float, float]]:
    """The GEMM / attention kernels of one profiled FSDP step (``fsdp_profile.Profiled``) on ``rank``, paired by order
    with the same kernel of the whole model alone on that rank: (class, phase, time alone s, time in the step s, share
    beside NCCL). Phase: ``alone`` (no NCCL kernel beside it), ``spin`` (inside an NCCL kernel, before that kernel's
    transfer could start: its end less the shortest of the same call over the ranks), ``xfer`` (inside, in the
    transfer), ``part``. Empty where the kernel counts differ."""
    from validation.runners.step_timeline import NCCL_CLASSES, overlap_length, union

    tls = [t for t in p.record["timeline"] if t]
    if rank >= len(tls) or rank >= len(p.model_timelines):
        return []
    calls = []
    for t in tls:
        seq: dict[str, list[list[Any]]] = defaultdict(list)
        for e in t["events"]:
            if e[1] in NCCL_CLASSES:
                seq[e[1]].append(e)
        calls.append(seq)
    t, a = tls[rank], p.model_timelines[rank]
    mine = [e for e in t["events"] if e[0] == int(t["summary"]["compute_stream"]) and e[1] in ("gemm", "attention")]
    alone = [e for e in a["events"] if e[0] == int(a["summary"]["compute_stream"]) and e[1] in ("gemm", "attention")]
    if len(mine) != len(alone):
        return []
    nccl = [(e[2], e[2] + e[3], min(c[cls][i][3] for c in calls if len(c[cls]) > i))
            for cls, seq in calls[rank].items() for i, e in enumerate(seq)]
    in_nccl = union([(s, e) for s, e, _ in nccl])
    out = []
    for k, al in zip(mine, alone):
        s, e = k[2], k[2] + k[3]
        share = overlap_length([(s, e)], in_nccl) / k[3]
        phase = "part"
        if share < 1 - INSIDE:
            phase = "alone"
        elif share > INSIDE:
            cover = [n for n in nccl if n[0] <= s + (1 - INSIDE) * k[3] and n[1] >= e - (1 - INSIDE) * k[3]]
            if cover:
                xfer_from = cover[0][1] - cover[0][2]
                phase = "spin" if e < xfer_from else ("xfer" if s >= xfer_from else "part")
        out.append((k[1], phase, al[3], k[3], share))
    return out


def profile_rows(paths: Sequence[Path] = PROFILES) -> list[str]:
    """Per profile folder: the GEMM and attention kernels' time in the FSDP step over alone, by phase (median per
    kernel), and the share of their time alone that ran beside an NCCL kernel."""
    lines = ["Profiled FSDP steps (`fsdp --profile-step`), each GEMM / attention kernel against the same kernel of the "
             "whole model alone on the same rank (medians per kernel; beside: share of the kernels' time alone that "
             "ran at least 95% covered by NCCL kernels; stretch: all their time in the steps over alone):", "",
             "| profile | class | alone | beside, NCCL waiting (spin) | beside, transferring (xfer) | kernels beside | "
             "time beside | stretch |", "|---|---|---|---|---|---|---|---|"]
    for folder in paths:
        rows = [r for f in sorted(folder.glob("fsdpprof_world*.jsonl")) for r in kernel_ratios(f)]
        for cls in ("gemm", "attention"):
            mine = [r for r in rows if r[0] == cls]
            if not mine:
                continue

            def med(phase: str) -> str:
                xs = [t / a for c, ph, a, t, _ in mine if ph == phase]
                return f"{statistics.median(xs):.2f} ({len(xs)})" if xs else "-"
            beside = [r for r in mine if r[1] in ("spin", "xfer")]
            lines.append(f"| {folder.name} | {cls} | {med('alone')} | {med('spin')} | {med('xfer')} | "
                         f"{len(beside)} of {len(mine)} | {sum(r[2] for r in beside) / sum(r[2] for r in mine):.2f} | "
                         f"{sum(r[3] for r in mine) / sum(r[2] for r in mine):.3f} |")
    return lines


def simulated_charge_s(pred: Any, run: Any) -> tuple[float, float, float]:
    """The simulation of ``run`` by ``pred`` (``fsdp_profile.predictors``) and the same with every FSDP unit's
    bandwidth shares 0 (nothing slowed beside collectives): (the compute stream's busy seconds added, the iteration's
    seconds added, the iteration). A host-bound stream hides the slowed kernels: its records last until the host
    has issued them (:mod:`simulator.training.llm.fsdp_engine`)."""
    from simulator.training.llm.flows import ComponentFlowNetwork
    from simulator.training.llm.iteration import train_work
    from simulator.training.llm.links import compact
    from simulator.training.llm.pipeline_engine import simulate_pipeline
    from validation.runners.step_timeline import total_length, union

    config, gpus = pred.config(run)
    work = train_work(pred.router(gpus), pred.model(run.spec), config, pred.gpu, pred.params, pred.compute)

    def sim(stages: Sequence[Any]) -> tuple[float, float]:
        st, cap = compact(list(stages), work.capacity_Bps)
        times, recs = simulate_pipeline(lambda env: ComponentFlowNetwork(env, cap), st, config.pp, True)
        busy = total_length(union([(r.start_s, r.end_s) for rs in recs.values() for r in rs
                               if r.track == "compute" and r.name != "optimizer"]))
        return busy, max(x.end_s for x in times)

    free = [replace(s, chunks=tuple(replace(c, units=tuple(replace(u, gather_load=0.0, scatter_load=0.0,
                                                                     reduce_load=0.0) for u in c.units))
                                    for c in s.chunks)) for s in work.stages]
    (busy, end), (busy0, end0) = sim(work.stages), sim(free)
    return busy - busy0, end - end0, end


def charge_rows(paths: Sequence[Path] = PROFILES) -> list[str]:
    """Per profiled configuration: the GEMM and attention kernels' seconds beyond their time alone in the measured
    steps (median over launches and ranks; of it, beside NCCL kernels) against what the simulation charges the
    compute stream for the collectives beside it (:func:`simulated_charge_s`)."""
    from validation.fsdp_profile import predictors, read_profiled

    lines = ["GEMM + attention time beyond alone per step, measured (median over launches and ranks; beside NCCL "
             "kernels: the kernels at least 95% covered) against the simulation's charge for collectives beside the "
             "compute stream (`hbm_contention`: the compute stream's busy time and the iteration, each less the same "
             "simulation with nothing slowed; method d's predictor, as `validation.fsdp_profile`), ms:", "",
             "| profile | configuration | measured, all | measured, beside NCCL | simulated: busy added | "
             "simulated: iteration added (of) |", "|---|---|---|---|---|---|"]
    for folder in paths:
        for f in sorted(folder.glob("fsdpprof_world*.jsonl")):
            preds = predictors(f)
            by: dict[str, list[float]] = defaultdict(list)
            near: dict[str, list[float]] = defaultdict(list)
            names: dict[str, str] = {}
            for p in read_profiled(f):
                point = p.record["point"]
                names[point] = f"{p.record['strategy']} h{p.record['hidden']}"
                for rank in range(len(p.model_timelines)):
                    rows = kernel_ratios_of(p, rank)
                    by[point].append(sum(t - a for _, _, a, t, _ in rows))
                    near[point].append(sum(t - a for _, ph, a, t, _ in rows if ph in ("spin", "xfer")))
            for point in by:
                busy, end, iteration = simulated_charge_s(*preds[point])
                lines.append(f"| {folder.name}/{f.name} | {names[point]} | {statistics.median(by[point]) * 1e3:.2f} | "
                             f"{statistics.median(near[point]) * 1e3:.2f} | {busy * 1e3:.2f} | {end * 1e3:.2f} "
                             f"({iteration * 1e3:.2f}) |")
    return lines


def report(folder: Path = FOLDER) -> list[str]:
    return [f"## {folder.name}", "", *probe_rows(folder), "", *grid_rows(folder), "", *profile_rows(), "",
            *charge_rows()]


def main(argv: Sequence[str] | None = None) -> int:
    return folder_main("python -m validation.gemm_nccl",
                       "compute kernels beside NCCL kernels: the probe against the SM- and HBM-share laws, and the "
                       "profiled FSDP steps", report, FOLDER, argv)


if __name__ == "__main__":
    sys.exit(main())
