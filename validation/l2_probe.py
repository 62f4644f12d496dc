"""Issue 10's L2 probe: do reused buffers make 4-32 MiB collectives faster by staying in the GPU's L2?

validation.slope_probe found a step below 45-64 MiB that no NCCL setting moves (broadcast 4-8 us below its
large-size line up to 32 MiB, all_reduce's 16-32 MiB slope 3.84-4.01 us/MiB against 3.34-3.57 on either side).
The runner, like nccl-tests, ran every call of a point on one buffer set, which fits the H200's 60 MiB L2 up to
~32 MiB; training's collectives see fresh buffers. The probe (``bash validation/scripts/gpu_campaign.sh l2 OUT``,
dataset ``h200x4_2026-11-27_l2``) measures all_reduce, all_gather and broadcast at 4-128 MiB in steps of sqrt(2),
each point once reusing one buffer set (``l2_reuse_*``) and once rotating distinct sets of >= 1 GiB per rank
together (``l2_rot_*``, the runner's ``--rotate-bytes``), two passes, interleaved, on 2 and 4 GPUs. This module
prints, per op, world size and size, the rotated over the reused fast level (the 10th percentile of the point's
repetitions, both passes pooled, as validation.bw_lease_spread) and the two passes' own difference, and each
mode's per-byte slope over the ladder's doublings.

What it showed (4x H200, 2026-11-27; the dataset's README.md says more): from 32 MiB up rotated and reused agree
within 2.1% (within 0.4% at 32 MiB but for broadcast on 2 GPUs, +2.1%; within 1.4% from 45 MiB); at 16-22.6 MiB
within 0-3%; below 16 MiB the two differ in both
directions by up to tens of percent, the bimodal small-message noise, not a sign. The 16-32 MiB slope step is
there with rotated buffers too: at 16 and 32 MiB every op runs 0.3-10.6 us below its 64-128 MiB line with reused
buffers and, except all_gather's 2-GPU 32 MiB point, still 1.5-8.8 us below it with rotated ones (:func:`below_line`).
L2 residency takes at most a few us (<= 3%) off the step; it is not its mechanism.

::

    python -m validation.l2_probe [FOLDER]   # default: the shipped dataset
    python -m validation.l2_probe --model    # and every H200 lease's 2 -> 4 GPU prediction of it (about 40 s)
"""

from __future__ import annotations

import glob
import os
import statistics
import sys
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from simulator.core.errors import InputError
from validation.bw_lease_spread import FAST_PCT, spread
from validation.data import DATA_DIR
from validation.parsers import CollMeasurement, read_jsonl

DATASET = "h200x4_2026-11-27_l2"
"""The shipped probe (4x H200, 2026-11-27)."""
MODES = ("reuse", "rot")
MIB = 1 << 20
US_PER_MIB = 1e6 * MIB
"""Seconds per byte -> microseconds per MiB."""
BANDS_MIB = (("< 16 MiB", 0, 16), ("16-32 MiB", 16, 33), (">= 45 MiB", 45, 1 << 20))
"""Size bands of the summary: [lo, hi) MiB."""
SLOPE_PAIRS_MIB = ((8, 16), (16, 32), (32, 64), (64, 128))

Key = tuple[str, int, int]
"""(op, world, size in bytes)."""


def load(folder: str | os.PathLike[str]) -> dict[tuple[str, str], list[CollMeasurement]]:
    """(mode, pass) -> points, from ``l2_<mode>_world<n>_L<i>.jsonl`` (world sizes pooled)."""
    files = sorted(glob.glob(os.path.join(folder, "l2_*_world*_L*.jsonl")))
    if not files:
        raise InputError("no l2_<mode>_world<n>_L<i>.jsonl files", field="folder", value=str(folder))
    out: dict[tuple[str, str], list[CollMeasurement]] = {}
    for f in files:
        parts = os.path.basename(f).removesuffix(".jsonl").split("_")
        mode, pass_ = parts[1], parts[-1]
        if mode not in MODES:
            raise InputError(f"mode must be one of {', '.join(MODES)}", field="file", value=f)
        out.setdefault((mode, pass_), []).extend(read_jsonl(f).points)
    return out


def _reps(points: Sequence[CollMeasurement]) -> dict[Key, list[float]]:
    reps: dict[Key, list[float]] = {}
    for p in points:
        reps.setdefault((p.op, p.world, p.size_bytes), []).extend(p.rep_times_s or (p.time_s,))
    return reps


def fast_levels(points: Sequence[CollMeasurement]) -> dict[Key, float]:
    """(op, world, size) -> the FAST_PCT percentile of the point's repetitions pooled over ``points``."""
    return {k: float(np.percentile(r, FAST_PCT)) for k, r in _reps(points).items()}


@dataclass(frozen=True)
class Row:
    """One (op, world, size): rotated against reused buffers."""

    op: str
    world: int
    size_bytes: int
    reuse_s: float
    rot_s: float
    noise: float   # largest |pass 1 / pass 2 - 1| of one mode: how far a mode differs from itself

    @property
    def effect(self) -> float:
        """rot / reuse - 1: > 0 when reused buffers run faster."""
        return self.rot_s / self.reuse_s - 1

    @property
    def beyond_noise(self) -> bool:
        """The effect exceeds twice the passes' own difference."""
        return abs(self.effect) > 2 * self.noise


def rows(probe: Mapping[tuple[str, str], Sequence[CollMeasurement]]) -> list[Row]:
    """Every (op, world, size) that both modes measured, each mode's passes pooled."""
    pooled = {m: fast_levels([p for (mode, _), pts in probe.items() if mode == m for p in pts]) for m in MODES}
    passes = {k: fast_levels(pts) for k, pts in probe.items()}
    out = []
    for key in sorted(set(pooled["reuse"]) & set(pooled["rot"])):
        noise = 0.0
        for m in MODES:
            levels = [lv[key] for (mode, _), lv in passes.items() if mode == m and key in lv]
            if len(levels) >= 2:
                noise = max(noise, spread(levels))
        out.append(Row(*key, pooled["reuse"][key], pooled["rot"][key], noise))
    return out


def band_summary(rs: Sequence[Row]) -> list[tuple[str, int, float, float, int]]:
    """(band, points, median effect, largest |effect|, points beyond noise) per :data:`BANDS_MIB` band."""
    out = []
    for name, lo, hi in BANDS_MIB:
        sel = [r for r in rs if lo * MIB <= r.size_bytes < hi * MIB]
        if sel:
            out.append((name, len(sel), statistics.median(r.effect for r in sel),
                        max(abs(r.effect) for r in sel), sum(r.beyond_noise for r in sel)))
    return out


def slopes(rs: Sequence[Row]) -> dict[tuple[str, int, str], dict[tuple[int, int], float]]:
    """(op, world, mode) -> (lo, hi) MiB -> seconds per byte between the two sizes (:data:`SLOPE_PAIRS_MIB`)."""
    out: dict[tuple[str, int, str], dict[tuple[int, int], float]] = {}
    by = {(r.op, r.world, r.size_bytes): r for r in rs}
    for op, world in sorted({(r.op, r.world) for r in rs}):
        for m in MODES:
            d = {}
            for lo, hi in SLOPE_PAIRS_MIB:
                a, b = by.get((op, world, lo * MIB)), by.get((op, world, hi * MIB))
                if a and b:
                    ta, tb = (a.reuse_s, b.reuse_s) if m == "reuse" else (a.rot_s, b.rot_s)
                    d[(lo, hi)] = (tb - ta) / ((hi - lo) * MIB)
            out[(op, world, m)] = d
    return out


LINE_MIB = (64, 128)
"""The large-size line's two sizes: above the L2 (60 MiB on an H200) even for one reused buffer."""
STEP_MIB = (16, 32)
"""Sizes whose distance below that line is the step validation.slope_probe found."""


def below_line(rs: Sequence[Row]) -> dict[tuple[str, int, str], dict[int, float]]:
    """(op, world, mode) -> MiB -> seconds that size runs below the straight line through :data:`LINE_MIB`
    (negative: faster than the line), for every :data:`STEP_MIB` size measured."""
    by = {(r.op, r.world, r.size_bytes): r for r in rs}
    out: dict[tuple[str, int, str], dict[int, float]] = {}
    for op, world in sorted({(r.op, r.world) for r in rs}):
        lo, hi = (by.get((op, world, m * MIB)) for m in LINE_MIB)
        if lo is None or hi is None:
            continue
        for m in MODES:
            t = (lambda r: r.reuse_s) if m == "reuse" else (lambda r: r.rot_s)
            b = (t(hi) - t(lo)) / ((LINE_MIB[1] - LINE_MIB[0]) * MIB)
            a = t(lo) - b * LINE_MIB[0] * MIB
            out[(op, world, m)] = {s: t(by[(op, world, s * MIB)]) - (a + b * s * MIB)
                                   for s in STEP_MIB if (op, world, s * MIB) in by}
    return out


def report(folder: str | os.PathLike[str]) -> list[str]:
    rs = rows(load(folder))
    lines = [f"# L2 probe: rotated vs reused buffers ({folder})", "",
             "fast level = 10th percentile of a point's repetitions, both passes pooled; effect = rot/reuse - 1;",
             "noise = largest difference between one mode's two passes", "",
             "| op | GPUs | MiB | reuse us | rot us | effect | noise | beyond 2x noise |", "|---|---|---|---|---|---|---|---|"]
    for r in rs:
        lines.append(f"| {r.op} | {r.world} | {r.size_bytes / MIB:.1f} | {r.reuse_s * 1e6:.1f} | {r.rot_s * 1e6:.1f} | "
                     f"{r.effect:+.1%} | {r.noise:.1%} | {'yes' if r.beyond_noise else ''} |")
    lines += ["", "| band | points | median effect | largest abs effect | beyond 2x noise |", "|---|---|---|---|---|"]
    lines += [f"| {b} | {n} | {med:+.1%} | {big:.1%} | {k} |" for b, n, med, big, k in band_summary(rs)]
    lines += ["", "slope per doubling, us/MiB (reuse / rot):", "",
              "| op | GPUs | " + " | ".join(f"{lo}-{hi}" for lo, hi in SLOPE_PAIRS_MIB) + " |",
              "|---|---|" + "---|" * len(SLOPE_PAIRS_MIB)]
    sl = slopes(rs)
    for op, world in sorted({(r.op, r.world) for r in rs}):
        cells = []
        for pair in SLOPE_PAIRS_MIB:
            a, b = sl[(op, world, "reuse")].get(pair), sl[(op, world, "rot")].get(pair)
            cells.append("-" if a is None or b is None else f"{a * US_PER_MIB:.2f} / {b * US_PER_MIB:.2f}")
        lines.append(f"| {op} | {world} | " + " | ".join(cells) + " |")
    lines += ["", f"below the {LINE_MIB[0]}-{LINE_MIB[1]} MiB line, us (reuse / rot):", "",
              "| op | GPUs | " + " | ".join(f"{s} MiB" for s in STEP_MIB) + " |", "|---|---|" + "---|" * len(STEP_MIB)]
    bl = below_line(rs)
    for op, world in sorted({(k[0], k[1]) for k in bl}):
        a, b = bl[(op, world, "reuse")], bl[(op, world, "rot")]
        lines.append(f"| {op} | {world} | " + " | ".join(
            f"{a[s] * 1e6:+.1f} / {b[s] * 1e6:+.1f}" if s in a else "-" for s in STEP_MIB) + " |")
    return lines


MODEL_MIB = (16, 32, 64, 128)
"""Sizes :func:`model_lines` scores (powers of two: the campaigns' ladder)."""


def model_errors(rs: Sequence[Row], predictor, world: int = 4) -> dict[tuple[str, int], tuple[float, float]]:
    """(op, MiB) -> (predicted / reused - 1, predicted / rotated - 1) of ``predictor`` (validation.transfer's) at
    :data:`MODEL_MIB` on ``world`` GPUs."""
    from validation.parsers import CollMeasurement

    out = {}
    for r in rs:
        mib = r.size_bytes / MIB
        if r.world != world or mib not in MODEL_MIB:
            continue
        c = predictor.predict(CollMeasurement(r.op, r.world, r.size_bytes, r.reuse_s, None, None))
        if c is not None:
            out[(r.op, int(mib))] = (c.predicted_s / r.reuse_s - 1, c.predicted_s / r.rot_s - 1)
    return out


def model_lines(rs: Sequence[Row], gpu: str = "H200") -> list[str]:
    """Every ``gpu`` lease's 2-GPU-calibrated predictor of validation.bw_residuals (section 3's) against this
    probe's 4-GPU points, reused and rotated (about 40 s)."""
    from validation.bw_residuals import cases

    lines = ["", "4-GPU prediction error of each lease's 2-GPU calibration (validation.bw_residuals.cases), "
             "vs reused / rotated:", "", "| lease | op | " + " | ".join(f"{m} MiB" for m in MODEL_MIB) + " |",
             "|---|---|" + "---|" * len(MODEL_MIB)]
    for name, _, predictor in cases():
        if gpu not in name:
            continue
        errs = model_errors(rs, predictor)
        for op in sorted({op for op, _ in errs}):
            lines.append(f"| {name} | {op} | " + " | ".join(
                f"{errs[(op, m)][0]:+.1%} / {errs[(op, m)][1]:+.1%}" if (op, m) in errs else "-"
                for m in MODEL_MIB) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Exit status 0, or 2 with one line naming what is wrong (an unknown flag, a folder without probe files)."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m validation.l2_probe", description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=os.path.join(DATA_DIR, DATASET),
                    help="a probe folder (default: the shipped dataset)")
    ap.add_argument("--model", action="store_true", help="and every H200 lease's 2 -> 4 GPU prediction of it")
    args = ap.parse_args(argv)
    try:
        lines = report(args.folder)
        if args.model:
            lines += model_lines(rows(load(args.folder)))
    except InputError as exc:
        ap.error(str(exc))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
