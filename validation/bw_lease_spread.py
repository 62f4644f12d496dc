"""docs/accuracy.md, section 3: what the leases' own spread leaves to a 2 -> 4 GPU prediction at >= 16 MiB.

The >= 16 MiB p90 target (8%) asks every 4-GPU pooled median of a lease to be predicted from the same lease's
2-GPU points. This module asks the committed leases measured on 2 and 4 GPUs of one host, with no model in
between, how far that is possible (validation.lease_spread asks the same under 16 MiB):

* **Growth from another lease of the same GPU**: a lease's 4-GPU median of a point predicted as its own 2-GPU
  median times the 4-GPU / 2-GPU ratio of the same point (op, size) measured on another lease. The best a
  prediction built on 2-GPU data and perfect knowledge of how that GPU's calls grow can do; what it misses is
  the lease's own.
* **Fast level and median at 16 MiB**: a 16 MiB call on 4 GPUs takes 60-130 us; a share of its repetitions is
  slower than the rest, that share differs from lease to lease, and the median follows it. The fast level (each
  point's 10th percentile of repetitions) is compared across leases with the medians, on 4 and 2 GPUs.
* **The model against the fast level**: section 3's 4-GPU predictions scored against the 10th percentile instead
  of the median (a diagnostic of the GPU model alone; the target stays on the medians).

Leases: one host each, both world sizes measured on it (default variant, power-of-two sizes of 16 MiB and more;
:data:`LEASES`, the sealed campaigns of validation.sealed_campaign included). Truths are pooled over a lease's
launches (validation.transfer.pooled_points).
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from validation.calibrate import BANDWIDTH_REGIME_BYTES
from validation.targets import BIG_P90_PCT

DATA = Path(__file__).resolve().parent / "data"
BIG_BYTES = BANDWIDTH_REGIME_BYTES
"""Sizes from this one up (the bandwidth regime, >= 16 MiB) are this module's points."""
FAST_PCT = 10.0
"""The fast level of a point: this percentile of its repetitions."""
TARGET_P90_PCT = BIG_P90_PCT
"""Issue 10's p90 target at >= 16 MiB (%); the width target is validation.lease_spread.TARGET_WIDTH_PCT."""


def _globbed(folder: str, pattern: str) -> tuple[Path, ...]:
    return tuple(sorted((DATA / folder).glob(pattern)))


def leases() -> list[tuple[str, str, dict[int, tuple[Path, ...]]]]:
    """(name, GPU, launches per world size) of every committed lease with 2- and 4-GPU points >= 16 MiB."""
    from validation import sealed_campaign
    out = [("4x H200, `h200x4_2026-11-26b`", "H200",
            {n: (DATA / "h200x4_2026-11-26b" / f"coll_world{n}.jsonl", DATA / "h200x4_2026-11-26b" / f"coll_world{n}_r15.jsonl")
             for n in (2, 4)}),
           ("4x H200, `h200x4_2026-11-26_bw2`", "H200", {n: _globbed("h200x4_2026-11-26_bw2", f"bw_world{n}_L*.jsonl")
                                                         for n in (2, 4)}),
           ("4x H100, `h100x4_2026-11-27_bwfine`", "H100", {n: _globbed("h100x4_2026-11-27_bwfine",
                                                                        f"bwfine_world{n}_L*.jsonl") for n in (2, 4)})]
    for s in sealed_campaign.SEALED:    # named and read as its record says: the files validation.lease_spread and
        if s.bw.exists():               # the lease's own section pool too (its < 16 MiB launches add no point here)
            files = s.files()
            out.append((s.lease, s.gpus.split()[-1], {n: tuple(files[n]) for n in (2, 4)}))
    return [(name, gpu, files) for name, gpu, files in out if all(files[n] and all(map(Path.exists, files[n]))
                                                                   for n in (2, 4))]


@lru_cache(maxsize=1)
def points() -> dict[str, dict[tuple[str, int], dict[int, object]]]:
    """lease -> (op, size) -> world -> pooled point (default variant, power-of-two sizes >= 16 MiB)."""
    from validation import transfer
    out: dict[str, dict] = {}
    for name, _, files in leases():
        for n in (2, 4):
            for q in transfer.pooled_points(list(files[n])):
                p = q.point
                s = p.size_bytes
                if p.variant == "default" and s >= BIG_BYTES and s & (s - 1) == 0:
                    out.setdefault(name, {}).setdefault((p.op, s), {})[n] = p
    return out


def ratios() -> dict[str, dict[tuple[str, int], float]]:
    """lease -> (op, size) -> 4-GPU pooled median / 2-GPU pooled median."""
    return {lease: {k: v[4].time_s / v[2].time_s for k, v in pts.items() if 2 in v and 4 in v}
            for lease, pts in points().items()}


def _stats(errors_pct: Sequence[float]) -> tuple[float, float, float]:
    e = np.asarray(errors_pct, dtype=float)
    return float(np.median(e)), float(np.percentile(e, 90)), float(e.max())


def transfer_rows() -> list[dict]:
    """Every ordered pair of leases of one GPU: another lease's growth applied to a lease's own 2-GPU medians."""
    gpu = {name: g for name, g, _ in leases()}
    r = ratios()
    rows = []
    for b in r:
        for a in r:
            common = sorted(k for k in r[b] if k in r[a])
            if a == b or gpu[a] != gpu[b] or not common:
                continue
            err = [abs(r[a][k] / r[b][k] - 1) * 100 for k in common]
            rest = [e for k, e in zip(common, err) if k[1] > BIG_BYTES]
            rows.append({"from": a, "to": b, "points": len(common), "stats": _stats(err),
                         # a band around the prediction (a's growth) holding 80% of the truths: its half-width is
                         # the 80th percentile of |truth / prediction - 1|, not of the error over the truth
                         "band80": 2 * float(np.percentile([abs(r[b][k] / r[a][k] - 1) * 100 for k in common], 80)),
                         "p90_without_16": float(np.percentile(rest, 90)) if rest else float("nan"),
                         "at_16": _stats([e for k, e in zip(common, err) if k[1] == BIG_BYTES])})
    return rows


def fast_level_s(point) -> float:
    """A point's fast level: the FAST_PCT percentile of its repetitions (its median without them)."""
    reps = point.rep_times_s
    return float(np.percentile(reps, FAST_PCT)) if reps else point.time_s


def spread(values: Sequence[float]) -> float:
    """How far a level differs between leases: the largest over the smallest, minus 1."""
    return max(values) / min(values) - 1


def _spread_per_gpu(values: dict[str, float], gpu: dict[str, str]) -> float:
    """The largest, over GPUs with two leases or more, of their leases' :func:`spread`."""
    by_gpu: dict[str, list[float]] = {}
    for lease, v in values.items():
        by_gpu.setdefault(gpu[lease], []).append(v)
    return max((spread(v) for v in by_gpu.values() if len(v) > 1), default=0.0)


def mode_rows() -> list[dict]:
    """Per op at 16 MiB on 4 GPUs: every lease's fast level and median (seconds), and their spread over the leases
    of one GPU (largest over smallest, minus 1; the largest over the GPUs: H100 and H200 run these calls at a
    few percent different paces, so leases are compared with their own GPU's, as :func:`transfer_rows` pairs them)."""
    gpu = {name: g for name, g, _ in leases()}
    pts = points()
    ops = sorted({k[0] for lease in pts.values() for k in lease if k[1] == BIG_BYTES})
    rows = []
    for op in ops:
        at = {lease: v[(op, BIG_BYTES)][4] for lease, v in pts.items() if 4 in v.get((op, BIG_BYTES), {})}
        if len(at) < 2:
            continue
        fast = {lease: fast_level_s(p) for lease, p in at.items()}
        med = {lease: p.time_s for lease, p in at.items()}
        two = [v[(op, BIG_BYTES)][2] for v in pts.values() if 2 in v.get((op, BIG_BYTES), {})]
        rows.append({"op": op, "fast": fast, "median": med,
                     "fast_spread": _spread_per_gpu(fast, gpu), "median_spread": _spread_per_gpu(med, gpu),
                     "above_fast": {lease: med[lease] / fast[lease] - 1 for lease in at},
                     "above_fast_2": [p.time_s / fast_level_s(p) - 1 for p in two]})
    return rows


def against_fast(rows) -> tuple[float, float, float, float]:
    """Median and p90 % error of scored 4-GPU rows (validation.transfer.score) at >= 16 MiB: against the
    pooled medians, then against the points' fast levels."""
    big = [r for r in rows if r.pooled.point.size_bytes >= BIG_BYTES]
    med = np.abs([r.error for r in big]) * 100
    fast = np.abs([r.comparison.predicted_s / fast_level_s(r.pooled.point) - 1 for r in big]) * 100
    return (float(np.median(med)), float(np.percentile(med, 90)), float(np.median(fast)),
            float(np.percentile(fast, 90)))


def section(rows=None, machine: str = "4x H200") -> tuple[list[str], dict]:
    """Section 3's lines and figures; ``rows``: the section's scored 4-GPU rows of ``machine`` (for the model
    against the fast level), or None."""
    from validation.lease_spread import TARGET_WIDTH_PCT
    tr = transfer_rows()
    modes = mode_rows()
    if not tr:
        return [], {}
    figures: dict = {"bw_lease_transfer": {f"{r['from']} -> {r['to']}": r["stats"] for r in tr},
                     "bw_lease_p90_without_16": {f"{r['from']} -> {r['to']}": r["p90_without_16"] for r in tr}}
    p90s = [r["stats"][1] for r in tr]
    missed = sum(p > TARGET_P90_PCT for p in p90s)
    by_16 = sum(r["stats"][1] > TARGET_P90_PCT >= r["p90_without_16"] for r in tr)
    widths = [r["band80"] for r in tr]
    wide = sum(w > TARGET_WIDTH_PCT for w in widths)
    lines = ["", "**What the leases leave to any 2 -> 4 GPU prediction at >= 16 MiB** (`validation.bw_lease_spread`, "
             "no model: each lease's own 2-GPU pooled median times the same point's 4-GPU / 2-GPU ratio measured on "
             "another lease of the same GPU; default variant, power-of-two sizes; the sealed campaigns' figures are "
             "looked at here, nothing is fitted on them). 'p90 without 16 MiB' drops the 16 MiB points.", "",
             "| growth from | predicts | points | median err % | p90 err % | largest % | p90 without 16 MiB % | "
             "16 MiB points: median / largest % | band holding 80%, width % |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in tr:
        m, p, mx = r["stats"]
        lines.append(f"| {r['from']} | {r['to']} | {r['points']} | {m:.1f} | {p:.1f} | {mx:.1f} | "
                     f"{r['p90_without_16']:.1f} | {r['at_16'][0]:.1f} / {r['at_16'][2]:.1f} | {r['band80']:.0f} |")
    fast_spread = [m["fast_spread"] * 100 for m in modes]
    med_spread = [m["median_spread"] * 100 for m in modes]
    above4 = sorted(a * 100 for m in modes for a in m["above_fast"].values())
    above2 = sorted(a * 100 for m in modes for a in m["above_fast_2"])
    figures["bw_lease_16MiB_above_fast"] = {"4": above4, "2": above2}
    figures["bw_lease_16MiB_spread"] = {m["op"]: (m["fast_spread"] * 100, m["median_spread"] * 100) for m in modes}
    lines += ["", f"Even this growth, taken from a lease of the same GPU, misses the {TARGET_P90_PCT:g}% p90 on {missed} "
              f"of {len(tr)} pairs (p90 {min(p90s):.1f}-{max(p90s):.1f}%), {by_16} of them only through their 16 MiB "
              "points (they meet it without them). At 16 MiB the 4-GPU fast level "
              f"(the {FAST_PCT:.0f}th percentile of a point's repetitions) agrees across the leases of one GPU within "
              f"{min(fast_spread):.0f}-{max(fast_spread):.0f}% per op, while their pooled medians spread by "
              f"{min(med_spread):.0f}-{max(med_spread):.0f}% (the levels over the leases of every GPU together: "
              + "; ".join(f"{m['op']} fast {min(m['fast'].values()) * 1e6:.0f}-{max(m['fast'].values()) * 1e6:.0f} us, "
                          f"median {min(m['median'].values()) * 1e6:.0f}-{max(m['median'].values()) * 1e6:.0f} us"
                          for m in modes)
              + "). A share of a 16 MiB call's repetitions on 4 GPUs is slower than its fast level, and where the "
              "median falls depends on that share, which differs between leases of the same GPU, not on the op: "
              f"the 4-GPU medians lie {above4[0]:.0f}-{above4[-1]:.0f}% above their own fast levels "
              f"(median {np.median(above4):.0f}%; {sum(a > 5 for a in above4)} of {len(above4)} more than 5%), the "
              f"2-GPU medians of the same points {above2[0]:.0f}-{above2[-1]:.0f}% (median {np.median(above2):.0f}%; "
              f"{sum(a > 5 for a in above2)} of {len(above2)} more than 5%), so the 2-GPU points a calibration "
              "sees do not show it. The >= 16 MiB p90 target is met or missed on one lease's medians by the 16 MiB "
              "points' slow share; the model's own share of the error is what it shows against the fast levels. "
              "The interval's width target is another matter: a band around these growth predictions (symmetric, "
              "twice the 80th percentile of their errors) holds 80% of a lease's 4-GPU medians at a width of "
              f"{min(widths):.0f}-{max(widths):.0f}%"
              + (f", under the {TARGET_WIDTH_PCT:.0f}% target, so at >= 16 MiB the leases leave room for it; the "
                 "model's intervals are as wide as they are because they carry its own 2-GPU residuals (the interval "
                 "table below, 'of which the 2-GPU residuals alone')." if not wide else
                 f", above the {TARGET_WIDTH_PCT:.0f}% target on {wide} of {len(tr)} pairs: there the leases "
                 "themselves leave an interval of a 2-GPU calibration no room to meet it.")]
    if rows is not None:
        m, p, mf, pf = against_fast(rows)
        figures[f"bw_against_fast {machine}"] = (m, p, mf, pf)
        lines += ["", f"{machine}: this section's 4-GPU predictions from the 2-GPU calibration scored against the points' "
                  f"fast levels instead of their pooled medians (a diagnostic of the model's own error; the target stays "
                  f"on the medians): >= 16 MiB median {mf:.1f}% and p90 {pf:.1f}% (against the medians {m:.1f}% and "
                  f"{p:.1f}%)."]
    return lines, figures


def targets_clause(figures: dict) -> str:
    """Section 8's words after the >= 16 MiB p90 verdict: what the leases' own growth reaches (empty without it)."""
    pairs = figures.get("bw_lease_transfer")
    if not pairs:
        return ""
    p90s = [v[1] for v in pairs.values()]
    rest = figures.get("bw_lease_p90_without_16", {})
    by_16 = sum(v[1] > TARGET_P90_PCT >= rest.get(k, math.inf) for k, v in pairs.items())
    return (f" Another lease's own measured 2 -> 4 GPU growth, applied to a lease's 2-GPU medians with no model, "
            f"misses {TARGET_P90_PCT:g}% on {sum(p > TARGET_P90_PCT for p in p90s)} of {len(p90s)} pairs of leases "
            f"(p90 {min(p90s):.1f}-{max(p90s):.1f}%), {by_16} of them only through the 16 MiB points, whose 4-GPU "
            "medians fall in a slow mode on some leases and not others (section 3, `validation.bw_lease_spread`).")


def main(argv: list[str] | None = None) -> int:
    """Print this module's table and paragraph (without the model's diagnostic: `python -m validation.accuracy` adds
    it); no arguments (any is refused, exit 2)."""
    import argparse
    argparse.ArgumentParser(prog="python -m validation.bw_lease_spread",
                            description=__doc__.splitlines()[0]).parse_args(argv)
    print("\n".join(section()[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
