"""validation.bw_lines: the >= 16 MiB times as lines (intercept, slope), measured and predicted."""

from types import SimpleNamespace

import pytest

from validation import bw_lines as bl

MIB = 1 << 20


def _pooled(op, size, time_s, variant="default"):
    return SimpleNamespace(point=SimpleNamespace(op=op, size_bytes=size, variant=variant, rep_times_s=(time_s,) * 3,
                                                 time_s=time_s))


def test_fit_line_recovers_an_exact_line():
    times = {s * MIB: 20e-6 + 3e-6 * s for s in (16, 32, 64)}
    line = bl.fit_line(times, bl.MID_MIB)
    assert line.intercept_s == pytest.approx(20e-6)
    assert line.slope_s_per_byte * MIB == pytest.approx(3e-6)
    assert line.points == 3


def test_fit_line_needs_two_sizes():
    assert bl.fit_line({16 * MIB: 1e-4, 256 * MIB: 1e-3}, bl.MID_MIB) is None


def test_lines_split_mid_and_big_sizes_and_time_the_predictions():
    """Mid and big lines come from the fast levels of their own sizes only; the predicted line from the predictor
    at the mid sizes; other variants are left out."""
    mid = {s: 10e-6 + 4e-6 * s for s in bl.MID_MIB}
    big = {s: 60e-6 + 3e-6 * s for s in bl.BIG_MIB}
    pooled = {2: [_pooled("all_reduce", s * MIB, t) for s, t in {**mid, **big}.items()]
              + [_pooled("all_reduce", 16 * MIB, 1.0, variant="ll")]}
    predictor = SimpleNamespace(predict=lambda p: SimpleNamespace(predicted_s=30e-6 + 2e-6 * (p.size_bytes / MIB)))
    (row,) = bl.lines(pooled, predictor)
    assert (row.op, row.world) == ("all_reduce", 2)
    assert row.mid.intercept_s == pytest.approx(10e-6) and row.mid.slope_s_per_byte * MIB == pytest.approx(4e-6)
    assert row.big.intercept_s == pytest.approx(60e-6) and row.big.slope_s_per_byte * MIB == pytest.approx(3e-6)
    assert row.predicted_mid.intercept_s == pytest.approx(30e-6)
    assert "10.0 / 4.000" in "\n".join(bl.table({"L": [row]}))


def test_refuses_arguments_it_does_not_take():
    with pytest.raises(SystemExit) as e:
        bl.main(["--bogus"])
    assert e.value.code == 2


@pytest.mark.parametrize("op", ["all_reduce", "all_gather", "reduce_scatter"])
def test_split_recovers_the_wire_and_shard_parts(op):
    """slope(n) = busbw_factor(op, n) x link + shard / n on 2 and 4 GPUs, solved back."""
    from simulator.core.vocabulary import busbw_factor
    link, shard = 2.85e-6 / MIB, 1.4e-6 / MIB
    slopes = {n: busbw_factor(op, n) * link + shard / n for n in (2, 4)}
    assert bl.split(op, slopes) == pytest.approx((link, shard))


def test_split_needs_two_parts_and_both_world_sizes():
    assert bl.split("broadcast", {2: 1e-12, 4: 1e-12}) is None
    assert bl.split("all_reduce", {2: 1e-12}) is None


def test_p2p_lines_keep_the_16_mib_points_channels_and_time_the_predictions():
    """A p2p line runs through the sizes on the 16 MiB point's channel count only (4-GPU send/recv doubles its
    channels from 192 MiB), with the predictor's line through the same sizes; an op without 16 MiB is left out."""
    times = {s: 25e-6 + 6.3e-6 * s for s in (16, 32, 64, 128)}
    pooled = {4: [_pooled("send_recv", s * MIB, t) for s, t in times.items()]
              + [_pooled("send_recv", 256 * MIB, 1.0), _pooled("all_to_all", 64 * MIB, 2e-4)]}
    predictor = SimpleNamespace(predict=lambda p: SimpleNamespace(predicted_s=18e-6 + 6e-6 * (p.size_bytes / MIB)))
    rows = bl.p2p_lines(pooled, predictor, channels=lambda p: 8 if p.size_bytes < 192 * MIB else 16)
    ((row, ch),) = rows
    assert (row.op, row.world, ch, row.mid.points) == ("send_recv", 4, 8, 4)
    assert row.mid.intercept_s == pytest.approx(25e-6) and row.mid.slope_s_per_byte * MIB == pytest.approx(6.3e-6)
    assert row.predicted_mid.intercept_s == pytest.approx(18e-6)
    assert "| L | send_recv | 4 | 8 | 25.0 / 6.300 | 18.0 / 6.000 |" in bl.p2p_table({"L": rows})
