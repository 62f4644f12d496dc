"""docs/accuracy.md section 3: the two 90% intervals per size band against issue 10's interval target
(coverage >= 80% at a median width <= 25% of the prediction), and how narrow any interval around these
predictions could be.

A prediction carries two intervals (simulator.network.intervals): the interval of the *median over
launches* (what the prediction claims to be: ``time_lo_s``/``time_hi_s``), scored on the pooled medians,
and the *any-launch* band (``launch_lo_s``/``launch_hi_s``: where one launch's time falls), scored on
single repetitions. Small messages are bimodal between launches (a fast mode and one about twice as
long, section 3's two-mode table), so a truth measured in one launch is one draw of that host state,
not the median over launches; the table keeps the two kinds of truth apart.

The hindsight column is a floor, not an interval anyone could ship: around each prediction, the
narrowest band (a fixed share below and above the prediction, the same for every point of the row)
that holds 80% of the row's truths, chosen after seeing them. If even that band is wider than 25%, no
interval around these predictions meets the target at 80% coverage; narrowing the shipped one would
only lose coverage.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from validation import transfer
from validation.transfer import TRUTHS, Scored

TARGET_WIDTH, TARGET_COVERAGE, LEVEL = 0.25, 0.80, 0.90
"""Issue 10: 90% intervals with coverage >= 80% and median width <= 25% of the prediction."""


def narrowest_width(ratios: Sequence[float], share: float = TARGET_COVERAGE) -> float:
    """Width (over the prediction) of the narrowest band [lo, hi] x prediction holding ``share`` of the
    measured/predicted ``ratios``; nan without ratios."""
    r = np.sort(np.asarray(ratios, dtype=float))
    k = int(np.ceil(share * len(r)))
    if len(r) == 0 or k < 1:
        return float("nan")
    return float(np.min(r[k - 1:] - r[:len(r) - k + 1]))


def band_rows(rows: Sequence[Scored], unc=None) -> list[dict]:
    """Per size band and kind of truth: points, the median interval's coverage and width, the width of
    the calibration's residual quantiles alone (with ``unc``, its simulator.collectives.uncertainty
    block: what the 2-GPU points' own leave-one-out spread gives before the parameters' spread carried
    to more GPUs is added), the hindsight floors, and the any-launch band's coverage of single
    repetitions and width (fractions)."""
    out = []
    for name, lo, hi in transfer.BANDS:
        for label, keep in TRUTHS:
            sel = [r for r in rows if keep(r.pooled) and lo <= r.pooled.point.size_bytes < hi]
            if not sel:
                continue
            st = transfer.stats(sel)
            out.append({"band": name, "truth": label, "points": len(sel),
                        "coverage": st["coverage_pct"] / 100, "width": st["median_width_pct"] / 100,
                        "floor": narrowest_width(ratios := [r.pooled.point.time_s / r.comparison.predicted_s
                                                            for r in sel]),
                        "floor90": narrowest_width(ratios, LEVEL),
                        "residual_width": float(np.median([np.exp(q[2]) - np.exp(q[0]) for r in sel for q in
                                                           [unc.residual_for(1.0, r.pooled.point.size_bytes)]]))
                        if unc is not None else None,
                        "launch_coverage": st["launch_coverage_pct"] / 100 if "launch_coverage_pct" in st else None,
                        "launch_width": st["launch_width_pct"] / 100 if "launch_width_pct" in st else None})
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{x * 100:.0f}"


def _span(xs: Sequence[float | None]) -> str:
    v = [x for x in xs if x is not None]
    return f"{_pct(min(v))}-{_pct(max(v))}" if v else "-"


def verdict(row: dict) -> str:
    """Whether the median interval of a row meets the target, and if not, whether any interval could."""
    if row["coverage"] >= TARGET_COVERAGE and row["width"] <= TARGET_WIDTH:
        return "met"
    if row["floor"] > TARGET_WIDTH:
        return "missed: no band around these predictions holding 80% is that narrow"
    if row["coverage"] < TARGET_COVERAGE:
        return "missed: coverage"
    return (f"missed: 80% fit in a {_pct(row['floor'])}% band in hindsight, 90% need {_pct(row['floor90'])}%; "
            f"the 90% interval holds {_pct(row['coverage'])}%")


def section(rows: Sequence[Scored], unc=None) -> tuple[list[str], dict]:
    """The table and the verdict paragraph (``unc``: the calibration's uncertainty block, for the
    residual-only width)."""
    table = band_rows(rows, unc)
    lines = ["", "**The two intervals against the target** (coverage >= 80% at a median width <= 25% of the "
             "prediction). 'Median interval' is the 90% interval of the median over launches, scored on the pooled "
             "medians; 'any-launch band' is where one launch's time falls, scored on every single 4-GPU repetition; "
             "'hindsight floor' is the narrowest band around these very predictions (the same shares below and above "
             "for every point of the row, chosen after seeing the truths) that holds 80% of the row's medians: no "
             "interval around them meets the target where it exceeds 25% (`validation/interval_report.py`).", "",
             "| sizes | truth | points | median interval: coverage % | median width % | of which the 2-GPU "
             "residuals alone, width % | hindsight floor for 80%, "
             "width % | hindsight floor for 90%, width % | any-launch band: repetitions inside % | band width % "
             "| median interval vs target |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in table:
        lines.append(f"| {row['band']} | {row['truth']} | {row['points']} | {_pct(row['coverage'])} | "
                     f"{_pct(row['width'])} | {_pct(row['residual_width'])} | {_pct(row['floor'])} | "
                     f"{_pct(row['floor90'])} | "
                     f"{_pct(row['launch_coverage'])} | "
                     f"{_pct(row['launch_width'])} | {verdict(row)} |")
    met = [r for r in table if verdict(r) == "met"]
    floors = {(r["band"], r["truth"]): r["floor"] for r in table}
    lines += ["", "Met on " + (", ".join(f"{r['band']} ({r['truth']})" for r in met) if met else "no row") + ". "
              "Below 16 MiB the floor itself is far above 25% (" + "; ".join(
                  f"{_pct(w)}% at {b}, {t}" for (b, t), w in floors.items() if b != transfer.BANDS[-1][0])
              + "): the truths are bimodal between launches (a fast mode and one about twice as long, and a launch's "
              "median sits in either), so 80% of them span more than 25% around any single prediction of the median; "
              "the interval keeps its coverage instead. The any-launch band holds " + _span([r["launch_coverage"] for r in table
                                                                     if r["band"] != transfer.BANDS[-1][0]])
              + "% of single repetitions below 16 MiB (nominal 90%; the lower figures where the truth is one launch) "
              "and is wide for the same reason. At >= 16 MiB the truths reproduce between launches and the floors "
              "are set by the point model's own errors (the p90 paragraph above), not by noise: "
              + "; ".join(f"{t}: 80% of the medians fit in {_pct(r['floor'])}%, 90% in {_pct(r['floor90'])}%, "
                          f"against the interval's {_pct(r['width'])}%"
                          + (f", of which the 2-GPU points' own leave-one-out residual quantiles already span "
                             f"{_pct(r['residual_width'])}%" if r["residual_width"] is not None else "")
                          for r in table if r["band"] == transfer.BANDS[-1][0] for t in [r["truth"]])
              + ". A 90% interval that narrow needs 2-GPU residuals and a 2 -> 4 GPU extrapolation with smaller "
              "errors, not a narrower interval on the same ones."]
    figures = {"interval_bands": table}
    return lines, figures
