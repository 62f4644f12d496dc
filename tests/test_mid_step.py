"""validation.mid_step: each size's fast level against its (variant, op, world)'s 64-256 MiB line."""

import os

import pytest

from validation import mid_step as m

MIB = 1 << 20


def _levels(step_us, sizes_mib=(4, 16, 32, 64, 128, 256)):
    """10 us + 1 us per MiB, ``step_us`` (MiB -> us) off it."""
    return {("default", "all_reduce", 2): {s * MIB: (10.0 + s + step_us.get(s, 0.0)) * 1e-6 for s in sizes_mib}}


def test_distances_are_measured_minus_the_64_256_mib_line():
    (row,) = m.step_rows(_levels({16: -7.0, 4: -9.0}))
    assert row.line.intercept_s == pytest.approx(10e-6) and row.line.slope_s_per_byte * MIB == pytest.approx(1e-6)
    assert row.at_mib(16) == pytest.approx(-7e-6) and row.at_mib(4) == pytest.approx(-9e-6)
    assert row.at_mib(8) is None                                  # not measured
    assert 256 * MIB not in row.below_s                           # only up to UPTO_MIB
    assert row.end_bytes() == 32 * MIB                            # 32 and 64 MiB sit on the line


def test_a_row_needs_every_size_of_the_line():
    assert m.step_rows(_levels({}, sizes_mib=(16, 64, 256))) == []


def test_the_step_ends_only_where_every_larger_size_is_on_the_line():
    (row,) = m.step_rows(_levels({16: -8.0, 32: 6.0}))
    assert row.end_bytes() == 64 * MIB                            # 32 MiB is 6 us off
    assert row.end_bytes(within_s=7e-6) == 32 * MIB               # 16 MiB is 8 us off


def test_committed_fine_lease_all_reduce_step_sits_at_the_same_size_on_2_and_4_gpus():
    """h200x4_2026-11-27i_fine: all_reduce runs 10 us or more below its 64-256 MiB line at 16 MiB on 2 and on 4
    GPUs, and is back within 5 us of it by 64 MiB on both (the step ends at one S whatever the ranks)."""
    from validation import slope_probe
    from validation.data import DATA_DIR
    points = [p for ps in slope_probe.load(os.path.join(DATA_DIR, m.FINE), stem="fine").values() for p in ps]
    rows = {r.world: r for r in m.step_rows(m._levels(points)) if r.op == "all_reduce"}
    for n in (2, 4):
        assert rows[n].at_mib(16) < -10e-6
        assert rows[n].end_bytes() is not None and rows[n].end_bytes() <= 64 * MIB
