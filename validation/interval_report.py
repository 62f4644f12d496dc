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

from simulator.collectives.uncertainty import LEVEL   # the interval's nominal level (re-exported)
from simulator.core.units import format_bytes
from validation import transfer
from validation.targets import COVERAGE_PCT, WIDTH_PCT
from validation.transfer import TRUTHS, Scored

TARGET_WIDTH, TARGET_COVERAGE = WIDTH_PCT / 100, COVERAGE_PCT / 100
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
                        "campaign_spread": float(np.median(spread)) if (spread := [
                            (max(m) - min(m)) / float(np.median(m)) for r in sel
                            for m in [r.pooled.campaign_medians] if len(m) >= 2]) else None,
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


def edge() -> str:
    """The size between the latency bands and the bandwidth band (the last band's lower edge), as printed."""
    return format_bytes(transfer.BANDS[-1][1])


def split(table: Sequence[dict]) -> tuple[list[dict], list[dict]]:
    """The rows below :func:`edge` and those at or above it."""
    last = transfer.BANDS[-1][0]
    return [r for r in table if r["band"] != last], [r for r in table if r["band"] == last]


def reach(small: Sequence[dict]) -> str:
    """Whether any interval around these predictions could meet the width target below :func:`edge`:
    the rows' hindsight floors against TARGET_WIDTH."""
    far = [r for r in small if r["floor"] > TARGET_WIDTH]
    if len(far) == len(small):
        return f"above {_pct(TARGET_WIDTH)}% on every row: out of reach for any interval around these predictions"
    if far:
        return (f"above {_pct(TARGET_WIDTH)}% on {len(far)} of {len(small)} rows (out of reach there), within it on "
                + ", ".join(f"{r['band']} ({r['truth']})" for r in small if r not in far))
    return f"within {_pct(TARGET_WIDTH)}% on every row: a narrower interval could meet the target there"


def cause(big: Sequence[dict]) -> str:
    """What sets the floors at or above :func:`edge`: the truths' own spread between campaigns (median
    over points measured in several of (max - min) / median of the campaigns' medians) beside the floors."""
    spread = [r["campaign_spread"] for r in big if r.get("campaign_spread") is not None]
    if not spread:
        return "no point there was measured in several campaigns, so noise and model error cannot be told apart"
    lo = min(r["floor"] for r in big)
    if max(spread) < lo:
        return (f"the campaigns' medians of a point differ by {_pct(max(spread))}% at most (median over points), "
                "less than any floor: the point model's own errors set the floors, not noise")
    return (f"the campaigns' medians of a point differ by up to {_pct(max(spread))}% (median over points), as much "
            "as the floors: the truths' own spread between launches sets them, not only the point model")


def below_paragraph(small: Sequence[dict]) -> str:
    """The verdict paragraph's part below :func:`edge` (``small``: its rows)."""
    return (f"Below {edge()} the hindsight floor is " + "; ".join(f"{_pct(r['floor'])}% at {r['band']}, {r['truth']}"
                                                                  for r in small)
            + f": {reach(small)}"
            + (" (the truths are bimodal between launches, a fast mode and one about twice as long, and a launch's "
               "median sits in either, so 80% of them span more than the target around any single prediction of "
               "the median; the interval keeps its coverage instead)" if all(r["floor"] > TARGET_WIDTH for r in small)
               else "")
            + ". The any-launch band holds " + _span([r["launch_coverage"] for r in small])
            + f"% of single repetitions below {edge()} (nominal {_pct(LEVEL)}%), at a width of "
            + _span([r["launch_width"] for r in small]) + "%.")


def above_paragraph(big: Sequence[dict]) -> str:
    """The verdict paragraph's part at or above :func:`edge` (``big``: its rows)."""
    missed = [r for r in big if verdict(r) != "met"]
    return (f"At >= {edge()} " + cause(big) + ": " + "; ".join(
        f"{r['truth']}: 80% of the medians fit in {_pct(r['floor'])}%, 90% in {_pct(r['floor90'])}%, "
        f"against the interval's {_pct(r['width'])}%"
        + (f", of which the 2-GPU points' own residual quantiles (left out below 32 MiB, standardised from 32 MiB: "
           f"validation.calibrate.STANDARDISED_FROM_BYTES) already span "
           f"{_pct(r['residual_width'])}%" if r["residual_width"] is not None else "") for r in big)
        + "." + (" A 90% interval that narrow needs 2-GPU residuals and a 2 -> 4 GPU extrapolation with smaller "
                 "errors, not a narrower interval on the same ones."
                 if any(r["floor"] <= TARGET_WIDTH < r["width"] for r in missed) else ""))


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
    small, big = split(table)
    lines += ["", "Met on " + (", ".join(f"{r['band']} ({r['truth']})" for r in met) if met else "no row") + "."
              + (" " + below_paragraph(small) if small else "") + (" " + above_paragraph(big) if big else "")]
    figures = {"interval_bands": table}
    return lines, figures
