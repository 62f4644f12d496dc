"""Where the uncalibrated model misses on the public corpus: residuals per dataset, grouped.

Each public dataset's points from 16 MiB up (the bandwidth regime the corpus target scores) are
predicted as section 1b of docs/accuracy.md predicts them: with the datasheet parameters, or, for a
group whose corpus fit was adopted, with the fit that left the dataset out. Consecutive sizes that
ran the same configuration (op, ranks, variant, and the algorithm and protocol the tuner picks) form
one residual group: a size range with its median measured and predicted bus bandwidth and its median
signed error. Groups are what a missing mechanism shows up as (one algorithm's plateau, one
architecture's link rate, a fabric's fixed cost per call), where single points are noise.

    python -m validation.corpus_residuals            # every point, per dataset
    python -m validation.corpus_residuals --groups   # the grouped table (as in docs/accuracy.md)
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from simulator.core.vocabulary import busbw_factor
from validation.compare import Comparison, compare
from validation.corpus import SCORE_MIN_BYTES


@dataclass(frozen=True)
class ResidualGroup:
    dataset: str
    group: str                  # the corpus group (link class or fabric)
    op: str
    world: int
    variant: str
    algo: str
    proto: str
    min_bytes: int
    max_bytes: int
    points: int
    measured_busbw_GBps: float  # medians over the group's points
    predicted_busbw_GBps: float
    error: float                # median of predicted / measured - 1 (time)


def busbw_GBps(c: Comparison, predicted: bool) -> float:
    t = c.predicted_s if predicted else c.point.time_s
    return c.point.size_bytes / t * busbw_factor(c.point.op, c.point.world) / 1e9


def comparisons(part, params, min_bytes: int = SCORE_MIN_BYTES) -> list[Comparison]:
    """A corpus part's comparisons from ``min_bytes`` up under ``params``, in size order per configuration."""
    comps, _ = compare([p for p in part.points if p.size_bytes >= min_bytes], part.predictor.with_params(params))
    return sorted(comps, key=lambda c: (c.point.op, c.point.world, c.point.variant, c.point.size_bytes))


def residual_groups(label: str, group: str, comps: Sequence[Comparison]) -> list[ResidualGroup]:
    """Runs of consecutive sizes with the same (op, ranks, variant, algorithm, protocol)."""
    out: list[ResidualGroup] = []
    run: list[Comparison] = []

    def close() -> None:
        if run:
            c0 = run[0]
            out.append(ResidualGroup(label, group, c0.point.op, c0.point.world, c0.point.variant, c0.algo, c0.proto,
                                     run[0].point.size_bytes, run[-1].point.size_bytes, len(run),
                                     float(np.median([busbw_GBps(c, False) for c in run])),
                                     float(np.median([busbw_GBps(c, True) for c in run])),
                                     float(np.median([c.error for c in run]))))

    for c in comps:
        key = (c.point.op, c.point.world, c.point.variant, c.algo, c.proto)
        if run and key != (run[0].point.op, run[0].point.world, run[0].point.variant, run[0].algo, run[0].proto):
            close()
            run = []
        run.append(c)
    close()
    return out


def scored(results) -> list[tuple[str, str, list[Comparison]]]:
    """(dataset, group, comparisons) of every scored dataset of ``validation.corpus.leave_one_dataset_out``'s
    results, under the parameters its figure uses (the held-out fit where the group was adopted)."""
    from simulator.collectives.params import Parameters
    return [(h.part.label, r.group.name, comparisons(h.part, h.params if r.adopted and h.params else Parameters()))
            for r in results for h in r.held]


def _size(b: int) -> str:
    return f"{b >> 30} GiB" if b >= 1 << 30 else f"{b >> 20} MiB"


def table(groups: Sequence[ResidualGroup]) -> list[str]:
    """Markdown rows: one per residual group, datasets in order."""
    lines = ["| dataset | group | op | ranks | variant | algorithm/protocol | sizes | points | measured busbw GB/s "
             "| predicted busbw GB/s | median err % |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for g in groups:
        sizes = _size(g.min_bytes) + ("" if g.min_bytes == g.max_bytes else f" - {_size(g.max_bytes)}")
        lines.append(f"| {g.dataset} | {g.group} | {g.op} | {g.world} | {g.variant} | {g.algo}/{g.proto} | {sizes} | "
                     f"{g.points} | {g.measured_busbw_GBps:.1f} | {g.predicted_busbw_GBps:.1f} | {g.error * 100:+.1f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    from validation import corpus
    p = argparse.ArgumentParser(prog="python -m validation.corpus_residuals", description=__doc__.splitlines()[0])
    p.add_argument("--groups", action="store_true", help="one row per residual group instead of one per point")
    p.add_argument("--min-mib", type=int, default=SCORE_MIN_BYTES >> 20, help="smallest size shown (MiB)")
    a = p.parse_args(argv)
    data = Path(__file__).resolve().parent / "data"
    results = corpus.leave_one_dataset_out(corpus.corpus_parts(data))
    for label, group, comps in scored(results):
        comps = [c for c in comps if c.point.size_bytes >= a.min_mib << 20]
        if a.groups:
            print("\n".join(table(residual_groups(label, group, comps))[2:]))
            continue
        print(f"\n## {label} ({group})")
        print(f"{'op':14s} {'ranks':>5s} {'variant':10s} {'size':>9s} {'algo/proto':18s} "
              f"{'measured':>9s} {'predicted':>9s} {'err %':>7s}")
        for c in comps:
            print(f"{c.point.op:14s} {c.point.world:5d} {c.point.variant[:10]:10s} {_size(c.point.size_bytes):>9s} "
                  f"{c.algo + '/' + c.proto:18s} {busbw_GBps(c, False):9.1f} {busbw_GBps(c, True):9.1f} "
                  f"{c.error * 100:+7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
