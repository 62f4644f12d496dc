"""Which public datasets a fix could bring under 5%, ranked: where section 1b's corpus target is to be won.

Section 1b's figure (validation.corpus) scores every point from 16 MiB up, each dataset predicted without
itself or its siblings; its median reaches 5% when more than half the points are within 5%. This module
asks, per dataset, how many of its points a fix of a given shape could bring within 5% at most, each
shape applied to the figure's own predictions with its one or two numbers chosen on the dataset's own
points (hindsight: an upper bound on what a mechanism of that shape can win there, never a prediction):

- ``rate``: one factor on the dataset's predicted times (a bandwidth or efficiency the model has wrong
  for that machine), the median measured/predicted;
- ``cost+rate``: a fixed cost per call plus a factor, measured = a + b x predicted (least squares in
  relative error): what a per-call cost and a bandwidth together could give;
- ``per-config``: one factor per residual group of validation.corpus_residuals (op, ranks, variant and
  the algorithm/protocol the tuner picks): one algorithm's rate wrong, or the wrong algorithm picked.
  A group of one point is always fixed by it, so this column flatters datasets with many algorithm
  switches.

The rank is by the points ``cost+rate`` or ``rate`` (the better) would add; the datasets section 1b names
unpredictable from their headers (validation.corpus.unpredictable) are marked, not dropped::

    python -m validation.corpus_gain
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from validation.compare import Comparison
from validation.corpus import unpredictable
from validation.corpus_reach import WITHIN
from validation.check_cli import run_command


@dataclass(frozen=True)
class Gain:
    label: str
    group: str
    points: int
    within: int             # now (the figure's held-out errors)
    rate: int               # within 5% after one time factor
    cost_rate: int          # after a per-call cost and a factor
    per_config: int         # after one factor per residual group
    named_unpredictable: bool

    @property
    def best(self) -> int:
        """Points a fix of the rate or cost+rate shape would add at most."""
        return max(self.rate, self.cost_rate) - self.within


def _within(measured: np.ndarray, predicted: np.ndarray) -> int:
    return int(np.sum(np.abs(predicted / measured - 1) <= WITHIN + 1e-12))


def rate_fixed(measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """The predictions scaled by the median measured/predicted."""
    return predicted * float(np.median(measured / predicted))


def cost_rate_fixed(measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """a + b x predicted with (a, b) minimising the squared relative error; the rate fix alone where a
    single point or a cost below zero (no physical meaning) would come out."""
    if len(measured) < 2:
        return rate_fixed(measured, predicted)
    design = np.column_stack([1 / measured, predicted / measured])
    (a, b), *_ = np.linalg.lstsq(design, np.ones(len(measured)), rcond=None)
    return a + b * predicted if a >= 0 and b > 0 else rate_fixed(measured, predicted)


def gain(label: str, group: str, comps: Sequence[Comparison]) -> Gain:
    """The counts of one dataset's scored comparisons (validation.corpus_residuals.scored)."""
    measured = np.array([c.point.time_s for c in comps])
    predicted = np.array([c.predicted_s for c in comps])
    keys = [(c.point.op, c.point.world, c.point.variant, c.algo, c.proto) for c in comps]
    per_config = predicted.copy()
    for key in set(keys):
        i = np.array([k == key for k in keys])
        per_config[i] = rate_fixed(measured[i], predicted[i])
    return Gain(label, group, len(comps), _within(measured, predicted), _within(measured, rate_fixed(measured, predicted)),
                _within(measured, cost_rate_fixed(measured, predicted)), _within(measured, per_config),
                unpredictable(group, label))


def gains(results) -> list[Gain]:
    """Every scored dataset of ``validation.corpus.leave_one_dataset_out``'s results, most points to win first."""
    from validation.corpus_residuals import scored
    out = [gain(label, group, comps) for label, group, comps in scored(results) if comps]
    return sorted(out, key=lambda g: (-g.best, -(g.per_config - g.within), g.label))


def table(rows: Sequence[Gain]) -> list[str]:
    lines = ["| dataset | group | points | within 5% now | + rate | + cost+rate | + per-config | named unpredictable |",
             "|---|---|---|---|---|---|---|---|"]
    for g in rows:
        lines.append(f"| {g.label} | {g.group} | {g.points} | {g.within} | {g.rate - g.within:+d} | "
                     f"{g.cost_rate - g.within:+d} | {g.per_config - g.within:+d} | "
                     f"{'yes' if g.named_unpredictable else 'no'} |")
    return lines


def summary(rows: Sequence[Gain], needed: int) -> str:
    now = sum(g.within for g in rows)
    best = sum(g.within + g.best for g in rows)
    cfg = sum(g.per_config for g in rows)
    return (f"Within 5% now {now} of {sum(g.points for g in rows)} (a 5% median needs {needed}); every dataset "
            f"given its best rate or cost+rate fix {best}, one factor per configuration {cfg} (hindsight bounds).")


def main(argv: list[str] | None = None) -> int:
    from validation import corpus
    from validation.corpus_reach import reach
    p = argparse.ArgumentParser(prog="python -m validation.corpus_gain", description=__doc__.splitlines()[0])
    p.parse_args(argv)

    def run() -> None:
        results = corpus.leave_one_dataset_out(corpus.corpus_parts(Path(__file__).resolve().parent / "data"))
        rows = gains(results)
        print("\n".join([*table(rows), "", summary(rows, reach(results).needed)]))
    return run_command(run)


if __name__ == "__main__":
    raise SystemExit(main())
