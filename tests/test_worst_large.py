"""docs/accuracy.md section 3's paragraph on the >= 16 MiB points above 8% (validation.accuracy._floor_split): the
fast level is bw_lease_spread's, and every figure and mechanism it names comes from the rows (review s17 #4, #6)."""

from types import SimpleNamespace

import pytest

from validation import accuracy, bw_lease_spread


def row(op, variant, size_mib, median_s, reps, predicted_s, algo="ring", proto="simple"):
    point = SimpleNamespace(op=op, variant=variant, size_bytes=size_mib << 20, time_s=median_s, rep_times_s=reps)
    return SimpleNamespace(pooled=SimpleNamespace(point=point, campaign_medians=(median_s, median_s * 1.1)),
                           comparison=SimpleNamespace(predicted_s=predicted_s, algo=algo, proto=proto),
                           error=predicted_s / median_s - 1)


# near its fast level (100 us) though 20% below its median; and one far from both
NEAR = row("all_gather", "default", 16, 125e-6, tuple([100e-6] * 2 + [125e-6] * 8), 104e-6)
FAR = row("all_reduce", "nop2p", 16, 100e-6, tuple([100e-6] * 10), 130e-6)


def test_the_fast_level_is_bw_lease_spreads(monkeypatch):
    """One definition of a point's fast level: moving bw_lease_spread's percentile moves this paragraph too."""
    text = accuracy._floor_split([NEAR, FAR], [NEAR, FAR])
    assert "1 of the 2 lie within 8%" in text and "(the 10th percentile" in text
    monkeypatch.setattr(bw_lease_spread, "FAST_PCT", 50.0)        # the median of the repetitions: 125 us
    text = accuracy._floor_split([NEAR, FAR], [NEAR, FAR])
    assert "lie within" not in text and "Off even from their fastest repetitions (2)" in text
    # a point near its level at any percentile is named with the percentile in force (the check above could not
    # see the words: no point was near; review s18)
    flat = row("all_gather", "default", 16, 100e-6, (100e-6,) * 10, 104e-6)
    assert "(the 50th percentile" in accuracy._floor_split([flat], [flat])


def test_each_mechanism_is_named_only_for_its_own_points():
    text = accuracy._floor_split([NEAR, FAR], [NEAR, FAR])
    assert "At 16 MiB on 4 GPUs these calls take 100 us at that pace" in text
    assert "SHM path (nop2p)" in text
    for absent in ("all-to-all", "ring all-reduce", "forced LL", "forced tree", "60-180 us"):
        assert absent not in text, absent
    a2a = [row("all_to_all", "default", s, (100 + s) * 1e-6, ((100 + s) * 1e-6,) * 10, (80 + s) * 1e-6, "direct")
           for s in (32, 64, 256)]                   # 20 us fast each; 256 MiB is not among the worst
    ring = row("all_reduce", "default", 16, 100e-6, (90e-6,) * 10, 113e-6)
    text = accuracy._floor_split(a2a[:2] + [ring], a2a + [ring])
    assert "predicted fast by 20 us from 32 to 64 MiB" in text
    assert "per-step latency (3.4 us for Simple over NVLink)" in text and "beside its prediction's 23 us above" in text
    assert accuracy._floor_split([NEAR], [NEAR]).count("Off even") == 0
    assert accuracy._floor_split([], []) == ""


@pytest.mark.parametrize("xs, shown", [((64.2, 64.4), "64 us"), ((60.0, 180.0), "60-180 us")])
def test_ranges_print_one_figure_where_both_ends_agree(xs, shown):
    near = [row("all_gather", "default", 16, x * 1.25e-6, (x * 1e-6,) * 10, x * 1.02e-6) for x in xs]
    assert f"take {shown} at that pace" in accuracy._floor_split(near, near)


def test_the_all_to_all_is_called_fast_only_where_it_is():
    """Review s18: 'predicted fast by X us' was written whatever the sign of measured less predicted."""
    a2a = [row("all_to_all", "default", s, 100e-6, (100e-6,) * 10, 130e-6, "direct") for s in (32, 64)]
    text = accuracy._floor_split(a2a, a2a)
    assert "predicted fast" not in text and "off by -30 us (measured less predicted)" in text
