"""Compare the overlap probe's records (``validation.runners.overlap``) with the simulator's charge
for a collective beside compute kernels (:mod:`simulator.training.llm.hbm_contention`).

::

    python -m validation.overlap_check validation/data/<campaign>/overlap_world4.jsonl

For every point: the work's slowdown beside the collective (``work_beside_s - work_alone_s``) and
the collective's (``coll_beside_s - coll_alone_s``), and the charge the model adds to the work:
the collective's local memory bytes over the bandwidth the ``copy`` work reached alone on that
GPU (``work_bytes / work_alone_s``, the median over that world size's copy points). For ``matmul``
work (compute-bound) the same charge is listed; the model applies it to any kernels beside a
collective. The last line sums it up as accesses per bus byte (:func:`summary_line`).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any, Sequence

from simulator.core.errors import InputError
from validation.check_cli import files_main
from simulator.core.vocabulary import busbw_factor
from simulator.training.llm.hbm_contention import HBM_ACCESSES_PER_BUS_BYTE, collective_hbm_bytes
from validation.runners.records import read_measurement_records

FIELDS = ("op", "bytes", "work", "world", "work_bytes", "coll_alone_s", "work_alone_s", "coll_beside_s",
          "work_beside_s", "both_s")


def read_overlap(path: str | Path) -> list[dict[str, Any]]:
    """The ``kind:"overlap"`` records of a file, each checked to have :data:`FIELDS`."""
    out = []
    for i, rec in read_measurement_records(path):
        if rec.get("kind") != "overlap":
            continue
        missing = [f for f in FIELDS if f not in rec]
        if missing:
            raise InputError("missing fields", source=f"{path}:{i}", field=missing[0])
        out.append(rec)
    if not out:
        raise InputError("no overlap records", source=str(path), field="kind")
    return out


def _copy_bandwidth(records: list[dict[str, Any]]) -> dict[int, float]:
    """Per world size, the median bandwidth the ``copy`` work reached alone (bytes/s)."""
    by: dict[int, list[float]] = {}
    for r in records:
        if r["work"] == "copy" and r["work_alone_s"] > 0:
            by.setdefault(r["world"], []).append(r["work_bytes"] / r["work_alone_s"])
    return {w: statistics.median(v) for w, v in by.items()}


def copy_bandwidth_Bps(records: list[dict[str, Any]]) -> float:
    """The median bandwidth the ``copy`` work reached alone over every world size (bytes/s): the
    GPU's achievable memory bandwidth, measured."""
    return statistics.median(r["work_bytes"] / r["work_alone_s"] for r in records
                             if r["work"] == "copy" and r["work_alone_s"] > 0)


def accesses_per_bus_byte(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], float]]:
    """Per point, the work's slowdown beside the collective expressed as local memory accesses per
    bus byte of the collective (slowdown x copy bandwidth / busbw bytes): what
    :data:`simulator.training.llm.hbm_contention.HBM_ACCESSES_PER_BUS_BYTE` estimates."""
    bw = _copy_bandwidth(records)
    return [(r, (r["work_beside_s"] - r["work_alone_s"]) * bw[r["world"]]
             / (busbw_factor(r["op"], r["world"]) * r["bytes"]))
            for r in records if r["world"] in bw and r["world"] > 1]


def summary_line(records: list[dict[str, Any]]) -> str:
    """One sentence: the measured accesses per bus byte against the model's constant."""
    pairs = accesses_per_bus_byte(records)
    if not pairs:
        return "no point with copy work on more than one GPU"
    acc = sorted(a for _, a in pairs)
    largest = max(r["bytes"] for r, _ in pairs)
    big = [a for r, a in pairs if r["bytes"] == largest]
    return (f"measured slowdown of the work beside a collective: median {statistics.median(acc):.2f} local "
            f"accesses per bus byte over {len(acc)} points (range {acc[0]:.2f}-{acc[-1]:.2f}; at "
            f"{largest / 2**20:.0f} MiB, {len(big)} points, median {statistics.median(big):.2f}); the model "
            f"charges {HBM_ACCESSES_PER_BUS_BYTE:g}")


def ddp_slowdowns(records: list[dict[str, Any]], op: str = "all_reduce") -> list[float]:
    """Per ``op`` point on more than one GPU, the DDP model's ``ddp.compute_slowdown`` that reproduces
    the work's delay beside the collective. The model (:mod:`simulator.training.ddp`) runs compute at
    ``1 / (1 + s)`` of its rate while a collective of its own (alone) length ``c`` runs, which delays
    work longer than the collective by ``c s / (1 + s)``; so ``s = x / (1 - x)`` with ``x`` the measured
    delay over ``c``. Points whose work is shorter than the collective alone are left out."""
    out = []
    for r in records:
        if r["op"] != op or r["world"] < 2 or r["work_alone_s"] < r["coll_alone_s"]:
            continue
        x = max(0.0, (r["work_beside_s"] - r["work_alone_s"]) / r["coll_alone_s"])
        if x < 1.0:
            out.append(x / (1.0 - x))
    return out


def ddp_slowdown_line(records: list[dict[str, Any]]) -> str:
    """One sentence: the compute slowdown beside all_reduce, as ``ddp.compute_slowdown``."""
    s = sorted(ddp_slowdowns(records))
    if not s:
        return "no all_reduce point with work longer than the collective"
    return (f"DDP compute slowdown beside all_reduce (ddp.compute_slowdown = delay / (collective - delay)): "
            f"median {statistics.median(s):.2f} over {len(s)} points (range {s[0]:.2f}-{s[-1]:.2f})")


def check_lines(records: list[dict[str, Any]]) -> list[str]:
    """A table: per point, measured slowdowns and the model's charge (microseconds)."""
    bw = _copy_bandwidth(records)
    lines = [f"{'op':15s} {'bytes':>11s} {'work':7s} {'coll us':>9s} {'work us':>9s} {'work +us':>9s} "
             f"{'coll +us':>9s} {'model +us':>9s}"]
    for r in records:
        charge = collective_hbm_bytes(r["op"], r["world"], r["bytes"]) / bw[r["world"]] if r["world"] in bw else None
        lines.append(f"{r['op']:15s} {r['bytes']:11d} {r['work']:7s} {r['coll_alone_s'] * 1e6:9.1f} "
                     f"{r['work_alone_s'] * 1e6:9.1f} {(r['work_beside_s'] - r['work_alone_s']) * 1e6:+9.1f} "
                     f"{(r['coll_beside_s'] - r['coll_alone_s']) * 1e6:+9.1f} "
                     + (f"{charge * 1e6:+9.1f}" if charge is not None else f"{'-':>9s}"))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    return files_main("python -m validation.overlap_check",
                      "Overlap probe records vs the simulator's memory-traffic charge.",
                      lambda files: [r for f in files for r in read_overlap(f)],
                      lambda records: [*check_lines(records), summary_line(records), ddp_slowdown_line(records)],
                      argv)


if __name__ == "__main__":
    sys.exit(main())
