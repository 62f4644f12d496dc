"""How wide an interval must be to hold a lease's own 4-GPU launches (issue 10, validation.launch_floor)."""

import json
import math

import pytest

from validation import launch_floor as lf


def launch(path, times: dict[int, list[float]]):
    """A launch file: one all_reduce point per size, its repetitions ``times[size]``."""
    rows = [{"kind": "meta", "source": path.name}]
    rows += [{"kind": "coll", "op": "all_reduce", "world": 4, "bytes": s, "time_s": sorted(r)[len(r) // 2],
              "rep_times_s": r} for s, r in times.items()]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_floor_is_the_band_holding_the_launches_around_their_pooled_median(tmp_path):
    # two launches of one point, each three repetitions: medians 30 and 60 us; pooled median (31 + 40) / 2 us
    a = launch(tmp_path / "a.jsonl", {1024: [29e-6, 30e-6, 31e-6]})
    b = launch(tmp_path / "b.jsonl", {1024: [40e-6, 60e-6, 61e-6]})
    launches, points, width = lf.floor([a, b], 0, 1 << 16)
    assert (launches, points) == (2, 1)
    assert width == pytest.approx((60 - 30) / 35.5)         # 90% of two ratios needs both
    # the same launches agreeing: no scatter
    c = launch(tmp_path / "c.jsonl", {1024: [29e-6, 30e-6, 31e-6]})
    assert lf.floor([a, c], 0, 1 << 16)[2] == pytest.approx(0.0, abs=1e-12)
    # sizes outside the band, or a point of one launch only, have no floor
    assert lf.floor([a, b], 1 << 16, 1 << 24)[1] == 0
    d = launch(tmp_path / "d.jsonl", {4096: [30e-6]})
    assert lf.floor([a, d], 0, 1 << 16)[1] == 0


def test_prediction_part_adds_in_quadrature_with_the_floor():
    assert lf.prediction_part(0.8, 0.0) == pytest.approx(0.8)
    assert lf.prediction_part(0.5, 0.5) == pytest.approx(0.0)
    assert lf.prediction_part(0.3, 0.6) == 0.0                      # the floor wider than the interval
    part = lf.prediction_part(0.9, 0.5)
    a, f, p = (math.asinh(x / 2) for x in (0.9, 0.5, part))
    assert p * p + f * f == pytest.approx(a * a) and 0 < part < 0.9
    assert math.isnan(lf.prediction_part(float("nan"), 0.2))


def test_every_lease_with_several_launches_has_a_floor_below_16_MiB():
    from validation.lease_spread import lease_files
    floors = lf.floors()
    several = [name for name, files in lease_files() if len(files.get(4, ())) >= 2]
    assert several and set(floors) == set(several)
    for name in several:
        small = floors[name]["< 16 MiB"]
        assert small[0] >= 2 and small[1] > 0 and 0 < small[2] < 5
        assert lf.cell(name, "< 16 MiB").endswith("launches)")
    assert lf.cell("no such lease", "< 16 MiB") == "-"


def test_paragraph_counts_rows_and_reports_the_prediction_part(monkeypatch):
    monkeypatch.setattr(lf, "floors", lambda: {"a": {"< 64 KiB": (2, 10, 0.5)}, "b": {"< 64 KiB": (3, 10, 0.9)}})
    text, fig = lf.paragraph({("a", "< 64 KiB"): 0.8, ("b", "< 64 KiB"): 0.7, ("c", "< 64 KiB"): 0.6})
    assert "50-90% wide" in text and "on the 2 rows" in text and "wider than the interval itself on b < 64 KiB" in text
    assert fig["launch floor"]["a < 64 KiB"]["prediction_part"] == pytest.approx(lf.prediction_part(0.8, 0.5))
    assert fig["launch floor"]["b < 64 KiB"]["prediction_part"] == 0.0 and "c < 64 KiB" not in fig["launch floor"]
    assert "0 of 2 rows: even a prediction exact" in text
    assert lf.paragraph({("c", "< 64 KiB"): 0.6}) == ("", {})


def test_section_8_names_the_floor_beside_a_width(monkeypatch):
    from validation import accuracy
    monkeypatch.setattr(lf, "floors", lambda: {"a": {"< 16 MiB": (2, 10, 0.5)}})
    text = accuracy.launch_floor_clause("a", "< 16 MiB", 0.8)
    assert "alone need 50%" in text and f"in quadrature, {lf.prediction_part(0.8, 0.5) * 100:.0f}%" in text
    assert accuracy.launch_floor_clause("a", ">= 16 MiB", 0.8) == "" == accuracy.launch_floor_clause("b", "< 16 MiB", 0.8)
