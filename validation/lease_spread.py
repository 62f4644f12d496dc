"""docs/accuracy.md, section 3: what the leases' own spread leaves to any 2 -> 4 GPU prediction under 16 MiB.

A 2-GPU calibration knows a lease's 2-GPU times; what it must supply is how each op's time grows to 4 GPUs.
This module asks the committed leases themselves, with no model in between, whether that growth is a
property of the op (and so learnable from other leases) or of the lease (and so out of reach of 2-GPU data):

* **Growth from the other leases** (leave one machine out): a lease's 4-GPU pooled medians predicted by its
  own 2-GPU pooled median of the same point times the op's growth on the *other* leases (each lease's median
  of its points' 4-GPU / 2-GPU ratios under 16 MiB, then the median over the other leases). If that misses as
  much as the model, an empirical per-op growth is no correction the model should take.
* **The lease's own growth** (in-sample: what is left if a lease's growth of each op were known, the
  points' own noise and their 2-GPU medians' noise).
* **Between launches**: the same within one lease, one launch pair's (2 and 4 GPUs of one pass) growth
  applied to another pair of the same lease: whether the growth is even a property of the lease.
* **Width floor**: the narrowest band of the 4-GPU / 2-GPU ratio that holds 80% (90%) of the points of every
  lease, per op, each lease weighing alike (centred in hindsight: the band may sit anywhere). Any interval
  built from a 2-GPU measurement and an op's growth must be at least that wide to cover the leases'
  4-GPU points; the same band with each lease's own growth taken out shows how much of it is between leases.

Leases: the machines of validation.rank_model_error.MACHINES (every committed campaign measured on 2 and 4
GPUs of one host) and the sealed campaigns (validation.sealed_campaign.SEALED). Truths are pooled over each
lease's launches (validation.transfer.pooled_points); 'growth' is a ratio of pooled medians of the same
(op, size, variant); a variant takes its op's growth (only 4x H200 measured variants).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from validation.calibrate import BANDWIDTH_REGIME_BYTES
from validation.interval_report import TARGET_WIDTH
from validation.targets import SMALL_MEDIAN_PCT

SMALL_BYTES = BANDWIDTH_REGIME_BYTES
"""Sizes below this (the latency regime, < 16 MiB) are this module's points."""
LEVEL_BYTES = 1 << 16
"""The width floor's two bands split here: < 64 KiB (size-independent times) and 64 KiB - 16 MiB."""
SHARES = (0.8, 0.9)
TARGET_MEDIAN_PCT, TARGET_WIDTH_PCT = SMALL_MEDIAN_PCT, TARGET_WIDTH * 100    # issue 10's < 16 MiB median; its width target
OWN = "80%, each lease's own growth taken out"
AT_TARGET = "share inside a band of the target's width"
"""Key of the width floor with each lease's own growth of the op taken out first."""


def lease_files() -> list[tuple[str, dict[int, Sequence]]]:
    """(name, files per world size) of every lease (a sealed one named and read as its record says:
    validation.sealed_campaign.Sealed.lease and .files)."""
    from validation import rank_model_error, sealed_campaign
    named = [(m.name, m.files()) for m in rank_model_error.MACHINES]
    for c in sealed_campaign.SEALED:
        if c.lat.exists() and c.bw.exists():
            named.append((c.lease, c.files()))
    return named


@lru_cache(maxsize=None)
def leases() -> tuple[tuple[str, dict[int, dict[tuple, float]]], ...]:
    """(name, {world: {(op, size, variant): pooled median seconds}}) of every lease with 2 and 4 GPUs, < 16 MiB."""
    from validation import transfer
    out = []
    for name, files in lease_files():
        worlds = {n: {(q.point.op, q.point.size_bytes, q.point.variant): q.point.time_s
                      for q in transfer.pooled_points(list(map(Path, f))) if q.point.size_bytes < SMALL_BYTES}
                  for n, f in files.items() if n in (2, 4) and f}
        if len(worlds) == 2:
            out.append((name, worlds))
    return tuple(out)


def launch_kind(path: Path) -> str:
    """What a launch file measured, without its world size and launch index (``lat_world4_L2.jsonl`` and
    ``lat_world2_L1.jsonl`` are both ``lat``; a second pass with more repetitions, ``_r15``, is the same kind)."""
    return re.sub(r"_world\d+|_L\d+|_r\d+", "", Path(path).stem)


@lru_cache(maxsize=None)
def launch_pairs() -> tuple[tuple[str, tuple[tuple[str, dict[int, dict[tuple, float]]], ...]], ...]:
    """(lease, ((kind, {2: medians, 4: medians}), ...)) per lease: each launch on 2 GPUs with the launch on
    4 GPUs of the same campaign folder and pass (its file named alike but for the world size), < 16 MiB."""
    from validation.parsers import read_jsonl

    def medians(path) -> dict[tuple, float]:
        return {(p.op, p.size_bytes, p.variant): p.time_s for p in read_jsonl(path).points
                if not p.in_place and p.size_bytes < SMALL_BYTES and math.isfinite(p.time_s)}
    out = []
    for name, files in lease_files():
        four = {Path(f).resolve() for f in files.get(4, ())}
        pairs = []
        for f in files.get(2, ()):
            twin = Path(f).resolve().with_name(Path(f).name.replace("world2", "world4"))
            if twin in four:
                pairs.append((launch_kind(Path(f)), {2: medians(f), 4: medians(twin)}))
        out.append((name, tuple(pairs)))
    return tuple(out)


def between_launches() -> dict[str, dict]:
    """Per lease: each launch pair's 4-GPU medians predicted by its own 2-GPU medians times the op growth
    of another launch pair of the same kind on the same lease; (ordered pairs, points, median |error| %)."""
    out = {}
    for name, pairs in launch_pairs():
        errors: list[float] = []
        used = 0
        for i, (kind_a, a) in enumerate(pairs):
            for j, (kind_b, b) in enumerate(pairs):
                if i != j and kind_a == kind_b:
                    errors += growth_errors(b, op_growth(a))
                    used += 1
        if errors:
            out[name] = {"pairs": used, "points": len(errors), "median_pct": float(np.median(errors)) * 100}
    return out


def log_growth(worlds: dict[int, dict[tuple, float]]) -> dict[tuple, float]:
    """log(4-GPU / 2-GPU pooled median) of every point measured on both."""
    two, four = worlds[2], worlds[4]
    return {k: float(np.log(four[k] / two[k])) for k in four if k in two}


def op_growth(worlds: dict[int, dict[tuple, float]]) -> dict[str, float]:
    """A lease's log growth per op: the median over its default-variant points (what every lease measured)."""
    by_op: dict[str, list[float]] = defaultdict(list)
    for k, g in log_growth(worlds).items():
        if k[2] == "default":
            by_op[k[0]].append(g)
    return {op: float(np.median(v)) for op, v in by_op.items()}


def growth_errors(target: dict[int, dict[tuple, float]], growth: dict[str, float]) -> list[float]:
    """|error| of each of ``target``'s 4-GPU points predicted as its 2-GPU median x exp(growth[op])."""
    return [abs(float(np.expm1(growth[k[0]] - g))) for k, g in log_growth(target).items() if k[0] in growth]


def weighted_narrowest(values: Sequence[float], weights: Sequence[float], share: float) -> float:
    """Width (over the band's lower end) of the narrowest band of log ``values`` holding ``share`` of the weight."""
    order = np.argsort(values)
    v, w = np.asarray(values, float)[order], np.asarray(weights, float)[order]
    if len(v) == 0:
        return float("nan")
    need = share * w.sum() - 1e-12
    cum = np.concatenate([[0.0], np.cumsum(w)])
    best = np.inf
    j = 0
    for i in range(len(v)):
        j = max(j, i)
        while j < len(v) and cum[j + 1] - cum[i] < need:
            j += 1
        if j == len(v):
            break
        best = min(best, v[j] - v[i])
    return float(np.expm1(best))


def best_share(values: Sequence[float], weights: Sequence[float], width: float) -> float:
    """The largest share of the weight that a band of ``width`` (over its lower end) can hold, placed in
    hindsight over log ``values``."""
    order = np.argsort(values)
    v, w = np.asarray(values, float)[order], np.asarray(weights, float)[order]
    if len(v) == 0:
        return float("nan")
    span = math.log1p(width) + 1e-12
    cum = np.concatenate([[0.0], np.cumsum(w)])
    ends = np.searchsorted(v, v + span, side="right")
    return float(max(cum[j] - cum[i] for i, j in enumerate(ends)) / w.sum())


def _per_op(items: Sequence[tuple[str, dict[int, dict[tuple, float]]]], lo: int, hi: int,
            own_growth: bool) -> dict[str, list[tuple[float, float]]]:
    """Per op, (log growth, weight) of the default-variant points of sizes [lo, hi) of every lease, each
    lease's points weighing 1 in all; ``own_growth``: each lease's own median growth of the op taken out."""
    per_op: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _, worlds in items:
        by_op: dict[str, list[float]] = defaultdict(list)
        for k, g in log_growth(worlds).items():
            if lo <= k[1] < hi and k[2] == "default":
                by_op[k[0]].append(g)
        for op, gs in by_op.items():
            centre = float(np.median(gs)) if own_growth else 0.0
            per_op[op] += [(g - centre, 1.0 / len(gs)) for g in gs]
    return dict(sorted(per_op.items()))


def target_share(items: Sequence[tuple[str, dict[int, dict[tuple, float]]]], lo: int, hi: int) -> dict[str, float]:
    """Per op, the largest share of the leases' points of sizes [lo, hi) that a band as wide as the target
    (TARGET_WIDTH_PCT) holds, each op's band placed in hindsight."""
    return {op: best_share([g for g, _ in v], [w for _, w in v], TARGET_WIDTH_PCT / 100)
            for op, v in _per_op(items, lo, hi, False).items()}


def width_floor(items: Sequence[tuple[str, dict[int, dict[tuple, float]]]], lo: int, hi: int,
                share: float, own_growth: bool = False) -> dict[str, float]:
    """Per op, the narrowest band of log growth holding ``share`` of the points of sizes [lo, hi) of every
    lease (each lease weighing alike); ``own_growth``: each lease's own median growth of the op taken out first."""
    return {op: weighted_narrowest([g for g, _ in v], [w for _, w in v], share)
            for op, v in _per_op(items, lo, hi, own_growth).items()}


def figures() -> dict:
    """Per lease: growth-from-others and hindsight medians; per band: the width floors per op."""
    items = leases()
    growth = {name: op_growth(w) for name, w in items}
    out: dict = {"leases": {}, "width": {}}
    for name, w in items:
        others = defaultdict(list)
        for other, g in growth.items():
            if other != name:
                for op, x in g.items():
                    others[op].append(x)
        e_out = growth_errors(w, {op: float(np.median(v)) for op, v in others.items()})
        e_own = growth_errors(w, growth[name])
        out["leases"][name] = {"points": len(e_out), "from_others_median_pct": float(np.median(e_out)) * 100,
                               "own_median_pct": float(np.median(e_own)) * 100}
    for band, lo, hi in (("< 64 KiB", 0, LEVEL_BYTES), ("64 KiB - 16 MiB", LEVEL_BYTES, SMALL_BYTES)):
        out["width"][band] = {f"{int(s * 100)}%": width_floor(items, lo, hi, s) for s in SHARES}
        out["width"][band][OWN] = width_floor(items, lo, hi, 0.8, own_growth=True)
        out["width"][band][AT_TARGET] = target_share(items, lo, hi)
    return out


def section(model_median_pct: dict[str, float]) -> tuple[list[str], dict]:
    """Section 3's lines: the two tables and what they say; ``model_median_pct``: the model's 2 -> 4 GPU
    median |error| under 16 MiB per lease name, on the same points (the figures of section 3's tables)."""
    fig = figures()
    lines = ["", "**Is the 2 -> 4 GPU growth a property of the op or of the lease?** No model in between: each "
             "lease's 4-GPU pooled medians under 16 MiB predicted from its own 2-GPU pooled median of the same point "
             "times the op's growth (the median 4-GPU / 2-GPU time of its default-variant points) measured on the "
             "*other* leases (leave one machine out; a variant takes its op's growth), and times the lease's own "
             "growth (in-sample: what is left if the lease's growth of each op were known); the model's figure is its "
             "2-GPU calibration's on the same points, from the tables above (`validation/lease_spread.py`).", "",
             "| lease | points | model, median err % | other leases' growth, median err % | the lease's own growth "
             "(in-sample), median err % |", "|---|---|---|---|---|"]
    for name, v in fig["leases"].items():
        model = model_median_pct.get(name)
        v["model_median_pct"] = model
        lines.append(f"| {name} | {v['points']} | {'-' if model is None else f'{model:.1f}'} | "
                     f"{v['from_others_median_pct']:.1f} | {v['own_median_pct']:.1f} |")
    rows = list(fig["leases"].values())
    beaten = sum(1 for v in rows if v["model_median_pct"] is not None
                 and v["from_others_median_pct"] < v["model_median_pct"])
    judged = [v for v in rows if v["model_median_pct"] is not None]
    between = between_launches()
    fig["between launches"] = between
    lines += ["", f"The other leases' measured growth misses by {min(v['from_others_median_pct'] for v in rows):.1f}-"
              f"{max(v['from_others_median_pct'] for v in rows):.1f}%"
              + ((f" and beats the model on {beaten} of {len(judged)} leases: an op's 2 -> 4 GPU growth measured "
                  "elsewhere is " + ("no better a correction than the model's structure, so the model takes none"
                                     if 2 * beaten <= len(judged) else
                                     "a better correction than the model's structure on most leases")) if judged else "")
              + f". With the lease's own growth (in-sample) the median is {min(v['own_median_pct'] for v in rows):.1f}-"
              f"{max(v['own_median_pct'] for v in rows):.1f}%: what misses is how the lease's times grow with the "
              "ranks, which differs between leases of the same GPUs (the host state of the hour, the two-mode tables "
              "above) and which the lease's 2-GPU points do not show."
              + (" Not even between launches of one lease: a launch's 4-GPU medians predicted from its own 2-GPU "
                 "medians times each op's growth in another launch on the same hosts (the same campaign's other "
                 "launch pair of the same kind) miss by " + ", ".join(
                     f"{v['median_pct']:.1f}% ({name}, {v['points']} points)" for name, v in between.items())
                 + "." if between else ""), "",
              "**The width an interval of a 4-GPU median needs** (default variant). The narrowest band of the "
              "4-GPU / 2-GPU time of the same point that holds 80% (90%) of every lease's points, per op, each lease "
              "weighing alike and the band placed in hindsight: any interval made of a 2-GPU measurement and an "
              f"op's growth must be that wide to cover the leases' 4-GPU medians; and the largest share of them a "
              f"band of the target's width ({TARGET_WIDTH_PCT:.0f}%) can hold, placed in hindsight. The last column "
              "takes each lease's own growth of the op out first (what is left if the growth of the lease were "
              "known). Around the model's own predictions the floor is the interval table's hindsight floor above.",
              "", f"| sizes | op | 80% band width % | 90% band width % | largest share inside a {TARGET_WIDTH_PCT:.0f}% "
              "band % | 80%, each lease's own growth taken out, width % |", "|---|---|---|---|---|---|"]
    floors = []
    shares = {}
    for band, w in fig["width"].items():
        for op in w["80%"]:
            floors.append(w["80%"][op])
            lines.append(f"| {band} | {op} | {w['80%'][op] * 100:.0f} | {w['90%'][op] * 100:.0f} | "
                         f"{w[AT_TARGET][op] * 100:.0f} | {w[OWN][op] * 100:.0f} |")
        shares[band] = float(np.mean(list(w[AT_TARGET].values()))) * 100
    own = [x for w in fig["width"].values() for x in w[OWN].values()]
    fig["floor_80_range_pct"] = (min(floors) * 100, max(floors) * 100)
    fig["own_80_range_pct"] = (min(own) * 100, max(own) * 100)
    fig["target_share_pct"] = shares
    reach = max(shares.values()) >= 80
    lines += ["", f"Across leases the 80% band is {min(floors) * 100:.1f}-{max(floors) * 100:.0f}% wide per op "
              f"({sum(x * 100 > TARGET_WIDTH_PCT for x in floors)} of {len(floors)} op bands above the "
              f"{TARGET_WIDTH_PCT:.0f}% target), and a {TARGET_WIDTH_PCT:.0f}% band placed in hindsight holds at most "
              + ", ".join(f"{v:.0f}% ({k}, mean over ops)" for k, v in shares.items())
              + " of the leases' 4-GPU medians (target 80%): "
              + ("out of reach for any interval of a 2-GPU calibration, which knows the 2-GPU times and at best an "
                 "op's growth." if not reach else "within reach where the band is placed well.")
              + f" Within each lease (own growth taken out) the 80% band is {min(own) * 100:.0f}-"
              f"{max(own) * 100:.0f}%: the width is the spread of the growth between leases (and launches), not "
              "the repetitions' noise around a lease's own level."]
    return lines, {"lease spread": fig}


def main(argv: list[str] | None = None) -> int:
    """Print this module's tables (the model's column empty: `python -m validation.accuracy` fills it); it takes no
    arguments, and refuses any (exit 2) rather than ignore them."""
    import argparse
    argparse.ArgumentParser(prog="python -m validation.lease_spread", description=__doc__.splitlines()[0]).parse_args(argv)
    print("\n".join(section({})[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
