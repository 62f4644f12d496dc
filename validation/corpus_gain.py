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
- ``own fit``: the group's own keys (validation.corpus.GROUPS) fitted by the calibrator on the dataset alone
  (validation.corpus_reach.hindsight's per-dataset fit): what the keys the corpus fits could give that
  machine if its own values were known;
- ``per-config``: one factor per residual group of validation.corpus_residuals (op, ranks, variant and
  the algorithm/protocol the tuner picks): one algorithm's rate wrong, or the wrong algorithm picked.
  A group of one point is always fixed by it, so this column flatters datasets with many algorithm
  switches and is not counted in the bound.

A dataset's in-sample best is the best of ``rate``, ``cost+rate`` and ``own fit``; its gain is that count
less the figure's. The datasets are ranked by that gain, the groups (link classes and fabrics) by their
datasets' summed gains (:func:`group_gains`), and :func:`route` takes the fewest groups whose bounds
together cover the points the target is short of. The datasets section 1b names unpredictable from their
headers (validation.corpus.unpredictable) are marked, not dropped, and their points counted apart::

    python -m validation.corpus_gain
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from validation.compare import Comparison
from validation.corpus import BY_NAME, errors, fit, unpredictable
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
    median_error: float = 0.0   # median signed error (predicted / measured - 1 of the time: + predicted slow)
    own: int = 0            # within 5% under the group's keys fitted on this dataset alone
    measured_s: tuple[float, ...] = ()      # the scored points' times (for the group's shared fixes)
    predicted_s: tuple[float, ...] = ()

    @property
    def best(self) -> int:
        """Points the dataset's in-sample best (rate, cost+rate or its own fit) would add at most."""
        return max(self.rate, self.cost_rate, self.own) - self.within


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


def gain(label: str, group: str, comps: Sequence[Comparison], own: int = 0) -> Gain:
    """The counts of one dataset's scored comparisons (validation.corpus_residuals.scored); ``own`` the points
    within 5% under its group's keys fitted on itself (:func:`own_within`)."""
    measured = np.array([c.point.time_s for c in comps])
    predicted = np.array([c.predicted_s for c in comps])
    keys = [(c.point.op, c.point.world, c.point.variant, c.algo, c.proto) for c in comps]
    per_config = predicted.copy()
    for key in set(keys):
        i = np.array([k == key for k in keys])
        per_config[i] = rate_fixed(measured[i], predicted[i])
    return Gain(label, group, len(comps), _within(measured, predicted), _within(measured, rate_fixed(measured, predicted)),
                _within(measured, cost_rate_fixed(measured, predicted)), _within(measured, per_config),
                unpredictable(group, label), float(np.median([c.error for c in comps])), own,
                tuple(measured.tolist()), tuple(predicted.tolist()))


def own_within(part, group: str) -> int:
    """Points of ``part`` within 5% at >= 16 MiB under its group's keys fitted on ``part`` alone (in sample)."""
    return int(np.sum(np.abs(errors(part, fit([part], BY_NAME[group].keys).params)) <= WITHIN + 1e-12))


def gains(results) -> list[Gain]:
    """Every scored dataset of ``validation.corpus.leave_one_dataset_out``'s results, most points to win first."""
    from validation.corpus_residuals import scored
    part_of = {h.part.label: h.part for r in results for h in r.held}
    out = [gain(label, group, comps, own_within(part_of[label], group))
           for label, group, comps in scored(results) if comps]
    return sorted(out, key=lambda g: (-g.best, -(g.per_config - g.within), g.label))


def table(rows: Sequence[Gain]) -> list[str]:
    lines = ["| dataset | group | points | median err % (signed) | within 5% now | + rate | + cost+rate | + own fit | "
             "+ in-sample best | + per-config | named unpredictable |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for g in rows:
        lines.append(f"| {g.label} | {g.group} | {g.points} | {g.median_error * 100:+.1f} | {g.within} | "
                     f"{g.rate - g.within:+d} | {g.cost_rate - g.within:+d} | {g.own - g.within:+d} | {g.best:+d} | "
                     f"{g.per_config - g.within:+d} | {'yes' if g.named_unpredictable else 'no'} |")
    return lines


@dataclass(frozen=True)
class GroupGain:
    """One corpus group's datasets together: the points their in-sample bests would add (an upper bound)."""

    group: str
    datasets: int
    points: int
    within: int
    gain: int               # summed over the group's datasets (each at its own in-sample best)
    gain_named: int         # of which on datasets named unpredictable
    median_error: float     # median of its datasets' median signed errors (the figure's predictions)
    shared: int = 0         # points one fix for the whole group (rate or cost+rate, on its pooled points) adds


def group_gains(rows: Sequence[Gain]) -> list[GroupGain]:
    """The groups by the points their datasets' in-sample bests would add, most first."""
    out = []
    for name in dict.fromkeys(g.group for g in rows):
        mine = [g for g in rows if g.group == name]
        within = sum(g.within for g in mine)
        m = np.array([t for g in mine for t in g.measured_s])
        p = np.array([t for g in mine for t in g.predicted_s])
        shared = max(_within(m, rate_fixed(m, p)), _within(m, cost_rate_fixed(m, p))) - within if len(m) else 0
        out.append(GroupGain(name, len(mine), sum(g.points for g in mine), within,
                             sum(g.best for g in mine), sum(g.best for g in mine if g.named_unpredictable),
                             float(np.median([g.median_error for g in mine])), shared))
    return sorted(out, key=lambda g: (-g.gain, g.group))


def route(groups: Sequence[GroupGain], short: int) -> list[GroupGain]:
    """The fewest groups whose summed bounds reach ``short`` more points (largest first); all of them if even
    that falls short."""
    out, left = [], short
    for g in groups:
        if left <= 0:
            break
        out.append(g)
        left -= g.gain
    return out


def group_table(groups: Sequence[GroupGain]) -> list[str]:
    lines = ["| group | datasets | points | within 5% now | median of datasets' signed medians % | + in-sample best "
             "(bound) | of which on datasets named unpredictable | + one fix for the whole group |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {g.group} | {g.datasets} | {g.points} | {g.within} | {g.median_error * 100:+.1f} | {g.gain:+d} | "
              f"{g.gain_named:+d} | {g.shared:+d} |" for g in groups]
    return lines


def route_text(groups: Sequence[GroupGain], short: int) -> str:
    """Which groups are the cheapest route to the points the target is short of, counted from the bounds."""
    if short <= 0:
        return "The figure already has the points a 5% median needs."
    r = route(groups, short)
    total = sum(g.gain for g in r)
    named = sum(g.gain_named for g in r)
    plain = [g for g in sorted(groups, key=lambda g: (-(g.gain - g.gain_named), g.group)) if g.gain > g.gain_named]
    r2 = route([replace(g, gain=g.gain - g.gain_named) for g in plain], short)
    return (f"The target is {short} points short. Ranked by these bounds, the fewest groups that could cover them are "
            + " + ".join(f"{g.group} (+{g.gain})" for g in r) + f" = +{total}"
            + (f", of which +{named} on datasets named unpredictable" if named else "")
            + ("" if total >= short else ": even every group together falls short")
            + ". Without the datasets named unpredictable: "
            + " + ".join(f"{g.group} (+{g.gain})" for g in r2) + f" = +{sum(g.gain for g in r2)}"
            + ("" if sum(g.gain for g in r2) >= short else f" (short of {short})") + ". These are upper bounds "
            "(each dataset at values chosen on its own points), never predictions. One fix for a whole group (a rate "
            "or a per-call cost and a rate, chosen on the group's pooled points: what one shared mechanism of those "
            f"shapes could give) adds {sum(max(g.shared, 0) for g in groups):+d} over every group together ("
            + ", ".join(f"{g.group} {g.shared:+d}" for g in groups) + "): the bounds above are per cluster.")


def summary(rows: Sequence[Gain], needed: int) -> str:
    now = sum(g.within for g in rows)
    best = sum(g.within + g.best for g in rows)
    cfg = sum(g.per_config for g in rows)
    return (f"Within 5% now {now} of {sum(g.points for g in rows)} (a 5% median needs {needed}); every dataset "
            f"at its in-sample best (rate, cost+rate or its own fit) {best}, one factor per configuration {cfg} "
            "(hindsight bounds).")


def main(argv: list[str] | None = None) -> int:
    from validation import corpus
    from validation.corpus_reach import reach
    p = argparse.ArgumentParser(prog="python -m validation.corpus_gain", description=__doc__.splitlines()[0])
    p.parse_args(argv)

    def run() -> None:
        results = corpus.leave_one_dataset_out(corpus.corpus_parts(Path(__file__).resolve().parent / "data"))
        rows = gains(results)
        needed = reach(results).needed
        groups = group_gains(rows)
        print("\n".join([*table(rows), "", summary(rows, needed), "", *group_table(groups), "",
                         route_text(groups, needed - sum(g.within for g in rows))]))
    return run_command(run)


if __name__ == "__main__":
    raise SystemExit(main())
