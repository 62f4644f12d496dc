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
