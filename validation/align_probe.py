"""Issue 10's unaligned shares: fit simulator.collectives.alignment's one factor on the proto probe, score it held out.

* :func:`fit_rows` (the fit, on ``h200x4_2026-11-27_proto`` only): per variant, world size and gather-like op,
  the line through the op's aligned 8-64 MiB fast levels (validation.proto_probe.fast_levels), and for each
  unaligned point the per-byte cost of its unaligned shares over the aligned ones,
  ``k = 1 + (t - line(S)) / (f x slope x S)`` with f simulator.collectives.alignment.unaligned_share.
  :func:`fitted_factor` is the median k of all_gather in the default and Ring + Simple launches (NCCL's choice there,
  24 channels): the one number the model takes (alignment.UNALIGNED_COPY_FACTOR).
* :func:`heldout_rows` (never used to find it): the committed campaigns with sizes whose shares are unaligned
  (all_gather; all_to_all, which the model gives the same factor, on bwfine), each predicted with the factor at 1
  (before) and fitted (after), by op, world size, band (< / >= 16 MiB) and
  alignment: median |error| % of the datasheet prediction (no calibration), and of the 2 -> n GPU transfer (a
  calibration on the campaign's pooled 2-GPU launches, all sizes, predicting its n-GPU points, as
  validation.transfer scores docs/accuracy.md section 3).

::

    python -m validation.align_probe
"""

from __future__ import annotations

import glob
import os
import statistics
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from simulator.collectives.alignment import unaligned_share
from simulator.collectives.params import DEFAULTS, Parameters
from validation import proto_probe
from validation.check_cli import print_lines

DATA = os.path.join(os.path.dirname(__file__), "data")
FIT_VARIANTS = ("default", "simple")
"""The proto probe's launches the factor is fitted on: NCCL's own choice (Ring / Simple, 24 channels) and its pin."""
HELD_OUT = (("h100x4_2026-11-27_bwfine", "bwfine_world*_L*.jsonl", "dgx-h100"),
            ("h200x4_2026-11-27_l2", "*.jsonl", "hgx-h200"),
            ("h200x2_2026-11-27_peercopy", "*.jsonl", "hgx-h200"))
"""(dataset, its measurement files, topology preset): the committed campaigns with unaligned all_gather sizes,
besides the proto probe."""
GATHERED = ("all_gather", "reduce_scatter", "all_to_all")
"""Ops whose ranks' parts sit at offsets ``r x S/n`` of one buffer (the held-out table labels their points by
alignment; only ring / Simple all_gather pays for it in the model)."""
BAND_BYTES = 16 << 20
"""The bandwidth regime starts here (issue 10's bands)."""


@dataclass(frozen=True)
class Fitted:
    variant: str
    world: int
    op: str
    size_bytes: int
    share: float        # simulator.collectives.alignment.unaligned_share
    ratio: float        # fast level over the aligned line
    k: float            # per-byte cost of the unaligned shares over the aligned ones


def fit_points(folder: str = os.path.join(DATA, proto_probe.DATASET)) -> list[Fitted]:
    """Every unaligned gather-like point of the proto probe against its variant's, world's and op's aligned line."""
    levels = proto_probe.fast_levels([p for ps in proto_probe.load(folder).values() for p in ps])
    out = []
    for v, w, op in sorted({k[:3] for k in levels if k[2] in proto_probe.GATHER_LIKE}):
        pts = sorted((k[3], t) for k, t in levels.items() if k[:3] == (v, w, op))
        aligned = [(s, t) for s, t in pts if unaligned_share(w, s) == 0]
        if len(aligned) < 2:
            continue
        slope, icept = np.polyfit([s for s, _ in aligned], [t for _, t in aligned], 1)
        for s, t in pts:
            f = unaligned_share(w, s)
            if f > 0:
                line = icept + slope * s
                out.append(Fitted(v, w, op, s, f, t / line, 1 + (t - line) / (f * slope * s)))
    return out


def fitted_factor(points: Sequence[Fitted]) -> float:
    """The median k of all_gather in the :data:`FIT_VARIANTS` launches."""
    return float(statistics.median(p.k for p in points if p.op == "all_gather" and p.variant in FIT_VARIANTS))


def fit_rows(points: Sequence[Fitted]) -> list[str]:
    rows = ["| variant | GPUs | op | MiB | unaligned share | time / aligned line | k |", "|---|---|---|---|---|---|---|"]
    rows += [f"| {p.variant} | {p.world} | {p.op} | {p.size_bytes / 2**20:.1f} | {p.share:.2f} | {p.ratio:.3f} | "
             f"{p.k:.2f} |" for p in points]
    return rows + ["", f"fitted factor (median k, all_gather, {' + '.join(FIT_VARIANTS)}): {fitted_factor(points):.3f}"]


def _params(factor: float, base: Parameters | None = None) -> Parameters:
    base = base or Parameters()
    return base.nudged("unaligned_copy_factor", factor)


def _errors(dataset: str, files: str, preset: str, factor: float) -> dict[tuple, list[float]]:
    """|error| % per (mode, op, world, band, aligned) of one campaign's points under ``factor``."""
    from validation import transfer
    from validation.calibrate import calibrate
    from validation.compare import Predictor, Topo
    paths = sorted(glob.glob(os.path.join(DATA, dataset, files)))
    pooled = transfer.pooled_points(paths)
    sheet = Predictor(Topo(preset), _params(factor))
    out: dict[tuple, list[float]] = {}

    def add(mode, rows):
        for r in rows:
            p = r.pooled.point
            key = (mode, p.op + ("" if p.variant == "default" else f" ({p.variant})"), p.world,
                   ">=16" if p.size_bytes >= BAND_BYTES else "<16",
                   unaligned_share(p.world, p.size_bytes) == 0 if p.op in GATHERED else True)
            out.setdefault(key, []).append(abs(r.error) * 100)

    add("datasheet", transfer.score(pooled, sheet))
    two = [q.point for q in pooled if q.point.world == 2]
    if two and any(q.point.world > 2 for q in pooled):
        fit = calibrate(two, sheet, name=f"{dataset}-2gpu")
        add("2->n", transfer.score([q for q in pooled if q.point.world > 2],
                                   sheet.with_params(_params(factor, fit.params))))
    return out


def heldout_rows(factor: float) -> list[str]:
    rows = ["| dataset | mode | op | GPUs | MiB band | shares | points | median |error| % before -> after |",
            "|---|---|---|---|---|---|---|---|"]
    for dataset, files, preset in HELD_OUT:
        before, after = _errors(dataset, files, preset, 1.0), _errors(dataset, files, preset, factor)
        for key in sorted(after, key=lambda k: (k[0], k[1], k[2], k[3], k[4])):
            mode, op, w, band, al = key
            b, a = before.get(key, []), after[key]
            rows.append(f"| {dataset} | {mode} | {op} | {w} | {band} | {'aligned' if al else 'unaligned'} | {len(a)} "
                        f"| {np.median(b):.1f} -> {np.median(a):.1f} |")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    import argparse
    argparse.ArgumentParser(prog="python -m validation.align_probe",
                            description=__doc__.split("\n\n")[0]).parse_args(argv)
    return print_lines(lambda: [*fit_rows(fit_points()), "", *heldout_rows(DEFAULTS["unaligned_copy_factor"])])


if __name__ == "__main__":
    raise SystemExit(main())
