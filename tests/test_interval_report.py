"""The interval report of section 3 (issue 10): hindsight floors and the verdict per row."""

import pytest

from validation.interval_report import narrowest_width, verdict


def test_narrowest_band_holds_the_share_and_no_less():
    ratios = [0.5, 1.0, 1.05, 1.1, 1.2, 2.0]
    assert narrowest_width(ratios, 0.5) == pytest.approx(0.1)        # 3 of 6: 1.0 .. 1.1
    assert narrowest_width(ratios, 4 / 6) == pytest.approx(0.2)      # 4 of 6: 1.0 .. 1.2
    assert narrowest_width(ratios, 1.0) == pytest.approx(1.5)
    assert narrowest_width([], 0.8) != narrowest_width([], 0.8)      # nan


def row(**kw):
    base = {"coverage": 0.9, "width": 0.2, "floor": 0.1, "floor90": 0.15}
    return {**base, **kw}


def test_verdict_tells_what_could_and_could_not_meet_the_target():
    assert verdict(row()) == "met"
    assert verdict(row(width=0.6, floor=0.4)).startswith("missed: no band")          # out of reach
    assert verdict(row(coverage=0.6, width=0.6)) == "missed: coverage"
    v = verdict(row(width=0.35))                                                      # reachable in hindsight
    assert v.startswith("missed: 80% fit in a 10% band") and "90% need 15%" in v


def test_the_paragraph_follows_the_figures_and_the_band_edges(monkeypatch):
    """Below/above the last band's edge (formatted from transfer.BANDS, not typed), the verdict paragraph
    says 'out of reach' only where every floor exceeds the target, and blames the point model only where
    the campaigns' own spread is below the floors."""
    from validation import interval_report as ir, transfer
    small = [row(band="< 64 KiB", truth="t", floor=0.4, launch_coverage=0.9, launch_width=0.5),
             row(band="64 KiB - 16 MiB", truth="t", floor=0.1, launch_coverage=0.8, launch_width=0.3)]
    text = ir.below_paragraph(small)
    assert text.startswith("Below 16 MiB") and "out of reach for any interval" not in text
    assert "above 25% on 1 of 2 rows" in text and "bimodal" not in text
    far = ir.below_paragraph([dict(small[0]), dict(small[1], floor=0.5)])
    assert "above 25% on every row: out of reach for any interval" in far and "bimodal" in far
    assert "within 25% on every row" in ir.reach([dict(small[0], floor=0.1)])
    big = [row(band=">= 16 MiB", truth="t", floor=0.14, floor90=0.22, width=0.37, residual_width=0.21,
               campaign_spread=0.01)]
    assert "the point model's own errors set the floors" in ir.above_paragraph(big)
    assert "own spread between launches" in ir.cause([dict(big[0], campaign_spread=0.3)])
    assert "cannot be told apart" in ir.cause([dict(big[0], campaign_spread=None)])
    monkeypatch.setattr(transfer, "BANDS", (("< 1 MiB", 0.0, 1 << 20), (">= 1 MiB", 1 << 20, float("inf"))))
    assert ir.edge() == "1 MiB" and ir.below_paragraph(small).startswith("Below 1 MiB")
    assert ir.above_paragraph(big).startswith("At >= 1 MiB")
