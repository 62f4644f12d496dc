"""Beside docs/accuracy.md section 3 (it points here): the >= 16 MiB times of the ring ops as lines, measured and predicted, lease by lease.

A point-by-point table (validation.bw_residuals) says where the 2 -> 4 GPU p90 misses; lines say why. For every
lease that section 3 predicts on 4 GPUs from its own 2-GPU calibration (:func:`validation.bw_residuals.cases`),
each default-variant op and world size gets three straight lines ``time = intercept + slope x S``:

* through the **measured fast levels** (the repetitions' 10th percentile, validation.bw_lease_spread.fast_level_s)
  at the **mid** sizes (16-64 MiB) and at the **big** ones (256 MiB - 1 GiB);
* through the **predictions** at the mid sizes (the 2-GPU calibration's model, as section 3 scores it).

What they showed on the six leases of then (session of 2026-11-27, stop 18, before the fifth sealed lease joined:
the command prints today's seven; figures below as recorded then; intercepts of fast levels): the ring ops
(all_reduce, all_gather, reduce_scatter) run their mid sizes 7-26% slower per byte than their big ones, broadcast
and reduce 2-6%; the predicted mid slope lies 2-17% below the measured one on every op, lease and world size (the
calibration follows the big sizes, the points known best) and its intercept up to 21 us above, the most for
all_reduce on 4 GPUs (15-21 us), where the model charges NCCL's per-step latency (3.4 us on NVLink) for 6 steps. Measured, the mid intercept grows from 2 to 4 GPUs by
0.4-1.1 us a step for all_reduce, 0.3-1.6 for reduce_scatter and 1.6-2.4 for all_gather, against 2.3-4.6 us a hop
for broadcast and reduce: NCCL's Simple ring kernels cut a chunk of all_reduce, all_gather and reduce_scatter into
2 slices (<OP>_CHUNKSTEPS / <OP>_SLICESTEPS, src/device/collectives.h) and a rank forwards the first while the
second still crosses the hop, so most of a step's latency hides; broadcast and reduce move one slice a chunk.
Modelling that alone (branch h10mid8-slices, session of 2026-11-27 stop 18) lowers the 4-GPU intercepts but not
the mid sizes' steeper slope, and left the held-out medians worse: not kept.

Where the steeper slope sits (:func:`split`, the 2- and 4-GPU slopes solved for a wire part per bus byte and a
part per byte of each rank's shard S/n): the wire part is 2.80-2.89 us/MiB at the big sizes for all three ring
ops on every lease, as broadcast's and reduce's slopes (2.80-2.83), and 2.90-3.12 at the mid ones; the shard part
falls from 1.07-1.71 us/MiB (mid) to 0.43-0.94 (big). At the mid sizes that is about half a chunk's time on the
wire a rank does not overlap (all_reduce 1.45-1.71 against a wire part of 2.9: one of the chunk's 2 slices). But
the slope keeps falling past NCCL's loop size (channels x ranks x 2 MiB: 96 MiB on 2 GPUs), up to 1 GiB (the
pooled 4x H200 campaigns' 2-GPU all_reduce fast levels, per doubling from 16-32 MiB to 512 MiB-1 GiB: 3.95, 3.50,
3.41, 3.34, 3.18, 3.02 us/MiB), so one slice of the last loop's chunk as a pipeline fill (branch h10mid8-sf)
has the right size at 16-64 MiB but the wrong shape above; it also moved the 2-GPU fit of all_gather, and was not
kept either. The probe of validation.slope_probe (2x H200, dataset ``h200x2_2026-11-27_slope``) separates the
two: GPU clocks, the calls per repetition, allocation and NCCL's algorithm / protocol / channel choice change
neither line; NCCL_BUFFSIZE sets where the slope stops falling (the first ~4.5 loops of a call run ~7% slower per
byte), and a step below 45-64 MiB, in broadcast too, moves with no NCCL setting tried. Plain peer copies (copy
engine, SM kernel) show no such step (validation.peer_probe: mid/big within 0.2-1.2% beside NCCL's +13-18% in the
same launches). That NCCL loop reach as a model term (branch h10slope19) halved the 4-GPU mid slope gap (median 8.8
-> 4.1%) but made 128 MiB - 1 GiB 4-6% slow on 4 GPUs and left medians and p90 worse on every lease: not kept
(validation.slope_probe's docstring has the figures).

::

    python -m validation.bw_lines      # every lease's lines (about 50 s)
    python -m validation.bw_lines --p2p   # send/recv and all_to_all: the p2p pipeline's fixed cost, lease by lease
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from validation.bw_lease_spread import fast_level_s

MID_MIB = (16, 32, 64)
"""Sizes (MiB) of the mid line: one loop of NCCL's ring on 24 channels and 2-4 ranks, chunks below 2 MiB."""
BIG_MIB = (256, 512, 1024)
"""Sizes (MiB) of the big line: several loops of full chunks."""
OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")
WORLDS = (2, 4)
P2P_OPS = ("send_recv", "all_to_all")
P2P_MIB = (16, 32, 64, 128, 256)
"""Sizes (MiB) of a p2p op's line (``--p2p``): 1 to 16 chunks of 512 KiB a channel on 2 and 4 GPUs; :func:`p2p_lines`
keeps those run on the 16 MiB point's channel count (4-GPU send/recv doubles its channels at 192 MiB)."""


@dataclass(frozen=True)
class Line:
    """``time_s = intercept_s + slope_s_per_byte x size_bytes`` fitted through ``points`` sizes."""

    intercept_s: float
    slope_s_per_byte: float
    points: int

    def at(self, size_bytes: float) -> float:
        """The line's time (s) at ``size_bytes``."""
        return self.intercept_s + self.slope_s_per_byte * size_bytes


def fit_line(times_s: Mapping[int, float], sizes_mib: Iterable[int]) -> Line | None:
    """The least-squares line through the times of ``sizes_mib`` (MiB) that ``times_s`` (size in bytes -> s) has;
    None with fewer than two of them."""
    xs = [s << 20 for s in sizes_mib if (s << 20) in times_s]
    if len(xs) < 2:
        return None
    slope, intercept = np.polyfit(np.array(xs, dtype=float), np.array([times_s[x] for x in xs]), 1)
    return Line(float(intercept), float(slope), len(xs))


@dataclass(frozen=True)
class OpLines:
    """One lease's lines of one op on one world size (None where its sizes were not measured)."""

    op: str
    world: int
    mid: Line | None
    big: Line | None
    predicted_mid: Line | None


def lines(pooled: Mapping[int, Sequence], predictor) -> list[OpLines]:
    """Every op and world size of :data:`OPS` and :data:`WORLDS` with default-variant points."""
    out = []
    for n in WORLDS:
        for op in OPS:
            pts = {q.point.size_bytes: q.point for q in pooled.get(n, ()) if q.point.op == op
                   and q.point.variant == "default"}
            if not pts:
                continue
            fast = {s: fast_level_s(p) for s, p in pts.items()}
            mids = {s: p for s, p in pts.items() if s >> 20 in MID_MIB}
            pred = {s: predictor.predict(p).predicted_s for s, p in mids.items()}
            out.append(OpLines(op, n, fit_line(fast, MID_MIB), fit_line(fast, BIG_MIB), fit_line(pred, MID_MIB)))
    return out


def p2p_channels(predictor) -> Callable[[object], int | None]:
    """A point's NCCL p2p channels per peer, as ``predictor`` (validation.compare.Predictor) plans it."""
    def channels(p) -> int | None:
        c = predictor.predict(p)
        return predictor.setup(p)[0].planner.plan(p.op, c.algo, c.proto).channels_at(p.size_bytes) if c else None
    return channels


def p2p_lines(pooled: Mapping[int, Sequence], predictor, channels: Callable[[object], int | None] | None = None
              ) -> list[tuple[OpLines, int]]:
    """(lines, channels) of every p2p op (:data:`P2P_OPS`) and world size with default-variant points: the fast
    levels' and the predictions' lines through the :data:`P2P_MIB` sizes that run on the 16 MiB point's channels
    (``channels``: a point's channels per peer; default :func:`p2p_channels` of ``predictor``). What the p2p
    pipeline's fixed cost is on each lease, op and world size (validation.bw_signs: 'A receiver copy at a rate of
    its own')."""
    channels = channels or p2p_channels(predictor)
    out = []
    for n in WORLDS:
        for op in P2P_OPS:
            pts = {q.point.size_bytes: q.point for q in pooled.get(n, ()) if q.point.op == op
                   and q.point.variant == "default" and q.point.size_bytes >> 20 in P2P_MIB}
            if (16 << 20) not in pts:
                continue
            first = channels(pts[16 << 20])
            same = {s: p for s, p in pts.items() if channels(p) == first}
            sizes = [s >> 20 for s in same]
            line = fit_line({s: fast_level_s(p) for s, p in same.items()}, sizes)
            pred = fit_line({s: predictor.predict(p).predicted_s for s, p in same.items()}, sizes)
            out.append((OpLines(op, n, line, None, pred), first))
    return out


def p2p_table(by_lease: Mapping[str, list[tuple[OpLines, int]]]) -> list[str]:
    """Markdown: intercept (us) / slope (us per MiB) of each p2p line, lease by lease."""
    out = ["| lease | op | GPUs | channels a peer | measured 16-256 MiB | predicted |", "|---|---|---|---|---|---|"]
    for lease, rows in by_lease.items():
        for r, ch in rows:
            out.append(f"| {lease} | {r.op} | {r.world} | {ch} | {_cell(r.mid)} | {_cell(r.predicted_mid)} |")
    return out


def split(op: str, slopes: Mapping[int, float]) -> tuple[float, float] | None:
    """(link, shard) seconds per byte that give ``slopes`` (world size -> s per byte of S) on 2 and 4 GPUs as
    ``busbw_factor(op, n) x link + shard / n``: the wire's part per bus byte, the same for every op on one link
    class, and a part per byte of each rank's shard (what section 3's ``op_shard_s_per_byte`` fits). None for the
    chain ops (one part only) or without both world sizes."""
    from simulator.core.vocabulary import busbw_factor
    if op in ("broadcast", "reduce") or not all(n in slopes for n in WORLDS):
        return None
    a = np.array([[busbw_factor(op, n), 1.0 / n] for n in WORLDS])
    link, shard = np.linalg.solve(a, np.array([slopes[n] for n in WORLDS]))
    return float(link), float(shard)


def splits(rows: Sequence[OpLines]) -> dict[str, tuple]:
    """Per ring op: :func:`split` of its measured mid slopes and of its big ones."""
    out = {}
    for op in OPS:
        by = {r.world: r for r in rows if r.op == op}
        mid = {n: r.mid.slope_s_per_byte for n, r in by.items() if r.mid}
        big = {n: r.big.slope_s_per_byte for n, r in by.items() if r.big}
        if split(op, mid) and split(op, big):
            out[op] = (split(op, mid), split(op, big))
    return out


def _cell(line: Line | None) -> str:
    return "-" if line is None else f"{line.intercept_s * 1e6:.1f} / {line.slope_s_per_byte * 1e6 * (1 << 20):.3f}"


def table(by_lease: Mapping[str, list[OpLines]]) -> list[str]:
    """Markdown: intercept (us) / slope (us per MiB) of each line, lease by lease."""
    out = ["| lease | op | GPUs | measured 16-64 MiB | measured 256 MiB-1 GiB | predicted 16-64 MiB |",
           "|---|---|---|---|---|---|"]
    for lease, rows in by_lease.items():
        for r in rows:
            out.append(f"| {lease} | {r.op} | {r.world} | {_cell(r.mid)} | {_cell(r.big)} | {_cell(r.predicted_mid)} |")
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m validation.bw_lines", description=__doc__.split("\n\n")[0])
    ap.add_argument("--p2p", action="store_true", help="send/recv and all_to_all lines instead (16-256 MiB)")
    a = ap.parse_args(argv)
    from validation.bw_residuals import cases
    if a.p2p:
        print("\n".join(["Intercept (us) / slope (us per MiB) of each p2p line; fast levels measured, the 2-GPU "
                         "calibration's predictions, sizes on the 16 MiB point's channels.", ""]
                        + p2p_table({lease: p2p_lines(pooled, pred) for lease, pooled, pred in cases()})))
        return 0
    by_lease = {lease: lines(pooled, pred) for lease, pooled, pred in cases()}
    mib = 1e6 * (1 << 20)
    parts = ["", "Measured slopes split (us per MiB): link part per bus byte and shard part per byte of S/n, "
             "16-64 MiB -> 256 MiB-1 GiB.", "", "| lease | op | link | shard |", "|---|---|---|---|"]
    for lease, rows in by_lease.items():
        for op, (mid, big) in splits(rows).items():
            parts.append(f"| {lease} | {op} | {mid[0] * mib:.2f} -> {big[0] * mib:.2f} | "
                         f"{mid[1] * mib:.2f} -> {big[1] * mib:.2f} |")
    print("\n".join(["Intercept (us) / slope (us per MiB) of each line; fast levels measured, the 2-GPU "
                     "calibration's predictions.", ""] + table(by_lease) + parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
