"""Writes docs/accuracy.md: predicted vs measured on every committed dataset.

    python -m validation.accuracy            # prints the report and rewrites docs/accuracy.md

Sections: (1) uncalibrated predictions (datasheet parameters) against the public nccl-tests
outputs in validation/data/public; (2) our own measurements, uncalibrated and calibrated
(calibrate on 2 GPUs, predict 4 GPUs) when validation/data holds a GPU campaign.
"""

from __future__ import annotations

import argparse
import glob
import os
from pathlib import Path

from simulator.params import Parameters
from validation.compare import Predictor, compare, dataset_points, summary, topo_from_hint
from validation.parsers import read_jsonl

DATA = Path(__file__).resolve().parent / "data"
DOC = Path(__file__).resolve().parent.parent / "docs" / "accuracy.md"


def _row(name: str, s: dict, skipped: int) -> str:
    if not s.get("points"):
        return f"| {name} | 0 | - | - | - | - | - | {skipped} |"
    nccl = f"{s['nccl_median_time_pct']:.1f}" if "nccl_median_time_pct" in s else "-"
    return (f"| {name} | {s['points']} | {s['median_time_pct']:.1f} | {s['p90_time_pct']:.1f} | "
            f"{s['worst_time_pct']:.1f} | {s['median_busbw_pct']:.1f} | {nccl} | {skipped} |")


HEADER = ("| dataset | points | median time err % | p90 time err % | worst time err % | "
          "median busbw err % | NCCL model median time err % | skipped |\n|---|---|---|---|---|---|---|---|")


def public_section(params: Parameters) -> list[str]:
    lines = ["## 1. Uncalibrated (datasheet parameters) vs public nccl-tests outputs", "",
             "Each dataset's topology comes from its `topology` hint (preset, servers, NIC bandwidth per "
             "server). Errors are absolute percentage errors over every size of every table in the file "
             "(out-of-place columns); busbw error is |measured/predicted - 1|. The NCCL-model column is NCCL's "
             "own estimate (its tuning table, rebuilt by simulator.nccl_model) for the same algorithm and "
             "protocol: the baseline to beat.", "", HEADER]
    for f in sorted(glob.glob(str(DATA / "public" / "*.jsonl"))):
        ds = read_jsonl(f)
        hint = ds.meta.get("topology") or {}
        name = Path(f).stem
        by_variant = ds.meta.get("topology_by_variant") or {}
        if by_variant:
            for variant, h in by_variant.items():
                pts = [p for p in dataset_points(ds) if p.variant == variant]
                c, s = compare(pts, Predictor(topo_from_hint(h, f), params))
                lines.append(_row(f"{name} [{variant}]", summary(c), len(s)))
            continue
        c, s = compare(dataset_points(ds), Predictor(topo_from_hint(hint, f), params))
        lines.append(_row(name, summary(c), len(s)))
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.accuracy", description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(DOC))
    a = p.parse_args(argv)
    lines = ["# Accuracy", "",
             "Produced by `python -m validation.accuracy` from the datasets committed under "
             "`validation/data/` (do not edit by hand). Sizes follow nccl-tests; 'time err' is "
             "|predicted/measured - 1|.", ""]
    lines += public_section(Parameters())
    extra = DATA / "accuracy_extra.md"
    if extra.exists():
        lines += ["", extra.read_text().rstrip()]
    text = "\n".join(lines) + "\n"
    Path(a.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
