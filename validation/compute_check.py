"""Read the ``ddp_compute`` runner's records (validation.runners.ddp_compute): where a single-GPU
profile's compute and a DDP run's compute part ways, per model, on one host.

::

    python -m validation.compute_check validation/data/h100x4_2026-11-26_ddp/compute_world2.jsonl \\
        validation/data/h100x4_2026-11-26_ddp/compute_world4.jsonl

Per model and world size, over the interleaved rounds: the plain step (median of the rounds'
medians and the rounds' range), the GPU time alone (the step queued behind a GPU sleep), the
profiler's hooked capture, DDP ``no_sync()`` and DDP with its all-reduce, each as a ratio to the plain
step of the same round (the median over rounds), and whether the plain step was GPU-bound (within 3%
of the GPU time alone) in every round.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from simulator.core.errors import InputError
from validation.check_cli import files_main
from validation.runners.records import read_measurement_records

VARIANTS = ("plain", "profile", "queued", "nosync", "sync")
GPU_BOUND = 1.03
"""A plain step within this factor of the GPU time alone counts as GPU-bound."""


def read_compute(path: str | Path) -> list[dict[str, Any]]:
    """The ``kind:"ddp_compute"`` records of a file, each checked to have what this module reads."""
    out = []
    for i, r in read_measurement_records(path):
        if r.get("kind") != "ddp_compute":
            continue
        for key in ("model", "world", "round", "variant", "median_s"):
            if key not in r:
                raise InputError("missing field", source=f"{path}:{i}", field=key)
        if r["variant"] not in VARIANTS or not r["median_s"] > 0:
            raise InputError("unknown variant or non-positive median", source=f"{path}:{i}",
                             field="variant", value=(r["variant"], r["median_s"]))
        out.append(r)
    if not out:
        raise InputError("no ddp_compute records", source=str(path), field="kind")
    return out


@dataclass(frozen=True)
class ModelCompute:
    """One model at one world size, over the rounds (seconds; ratios to the same round's plain step)."""

    model: str
    world: int
    rounds: int
    plain_s: float                    # median over rounds
    plain_lo_s: float                 # the rounds' fastest and slowest plain step
    plain_hi_s: float
    ratios: dict[str, float]          # variant -> median over rounds of variant / plain
    gpu_bound_rounds: int             # rounds whose plain step is within GPU_BOUND of the GPU time alone


def summarize(records: Sequence[dict[str, Any]]) -> list[ModelCompute]:
    by: dict[tuple[str, int], dict[int, dict[str, float]]] = {}
    for r in records:
        by.setdefault((r["model"], int(r["world"])), {}).setdefault(int(r["round"]), {})[r["variant"]] = r["median_s"]
    out = []
    for (model, world), rounds in by.items():
        full = [v for v in rounds.values() if "plain" in v]
        if not full:
            continue
        plain = [v["plain"] for v in full]
        ratios = {k: statistics.median(v[k] / v["plain"] for v in full if k in v)
                  for k in VARIANTS if k != "plain" and any(k in v for v in full)}
        bound = sum(1 for v in full if "queued" in v and v["plain"] <= GPU_BOUND * v["queued"])
        out.append(ModelCompute(model, world, len(full), statistics.median(plain), min(plain), max(plain),
                                ratios, bound))
    return out


def table_lines(rows: Sequence[ModelCompute]) -> list[str]:
    """A markdown table, one row per model and world size."""
    lines = ["| model | GPUs | rounds | plain step ms (rounds' range) | GPU time alone / plain | "
             "profile (hooked) / plain | DDP no_sync / plain | DDP sync / no_sync | plain step GPU-bound in |",
             "|---|---|---|---|---|---|---|---|---|"]

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{(x - 1) * 100:+.1f}%"

    for r in rows:
        sync = r.ratios.get("sync")
        nosync = r.ratios.get("nosync")
        lines.append(f"| {r.model} | {r.world} | {r.rounds} | {r.plain_s * 1e3:.2f} ({r.plain_lo_s * 1e3:.2f}-"
                     f"{r.plain_hi_s * 1e3:.2f}) | {pct(r.ratios.get('queued'))} | {pct(r.ratios.get('profile'))} | "
                     f"{pct(nosync)} | {pct(sync / nosync if sync and nosync else None)} | "
                     f"{r.gpu_bound_rounds} of {r.rounds} rounds |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    return files_main("python -m validation.compute_check",
                      "Profile vs plain vs GPU-alone vs DDP compute, per model.",
                      lambda files: [r for f in files for r in read_compute(f)],
                      lambda records: table_lines(summarize(records)), argv)


if __name__ == "__main__":
    sys.exit(main())
