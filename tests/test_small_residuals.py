"""validation.small_residuals: the < 16 MiB miss by op, size band and lease."""

from types import SimpleNamespace

import pytest

from validation import small_residuals as s


def _row(op, size, error):
    return SimpleNamespace(pooled=SimpleNamespace(point=SimpleNamespace(op=op, size_bytes=size)), error=error)


@pytest.mark.parametrize("size,label", [(4, "< 1 KiB"), (1023, "< 1 KiB"), (1024, "1-64 KiB"),
                                        (65536, "64 KiB-1 MiB"), ((16 << 20) - 1, "1-16 MiB")])
def test_band_of(size, label):
    assert s.band_of(size) == label


def test_band_of_refuses_the_bandwidth_regime():
    with pytest.raises(ValueError):
        s.band_of(16 << 20)


def test_cells_give_points_median_abs_and_signed():
    rows = [_row("all_to_all", 64, -0.2), _row("all_to_all", 128, -0.1), _row("all_to_all", 256, 0.3),
            _row("all_reduce", 1 << 20, 0.05)]
    c = s.cells(rows)
    assert c[("all_to_all", "< 1 KiB")] == pytest.approx((3, 20.0, -10.0))
    assert c[("all_reduce", "1-16 MiB")] == pytest.approx((1, 5.0, 5.0))


def test_op_share_counts_one_op_exact():
    rows = [_row("all_to_all", 64, -0.3), _row("all_to_all", 64, -0.3), _row("all_reduce", 64, 0.1)]
    share = s.op_share(rows)
    assert s.median_pct(rows) == pytest.approx(30.0)
    assert share["all_to_all"] == pytest.approx(0.0)       # two of three exact: median 0
    assert share["all_reduce"] == pytest.approx(30.0)


def test_p2p_excess_is_over_the_median_collective():
    growth = {"all_reduce": 1e-6, "all_gather": 3e-6, "broadcast": 2e-6, "all_to_all": 7e-6, "send_recv": 1e-6}
    ex = s.p2p_excess_s(growth)
    assert ex["all_to_all"] == pytest.approx(5e-6) and ex["send_recv"] == pytest.approx(-1e-6)
    assert s.p2p_excess_s({"all_to_all": 1e-6}) == {}


def _scored(op, measured_s, predicted_s):
    return SimpleNamespace(pooled=SimpleNamespace(point=SimpleNamespace(op=op, size_bytes=64, time_s=measured_s)),
                           comparison=SimpleNamespace(predicted_s=predicted_s), error=predicted_s / measured_s - 1)


def test_peer_cost_is_the_all_to_all_gap_per_peer_beyond_two_gpus():
    rows = [_scored("all_to_all", 50e-6, 40e-6), _scored("all_to_all", 46e-6, 40e-6), _scored("all_reduce", 1.0, 2.0)]
    assert s.peer_cost_s(rows, 4) == pytest.approx(4e-6)        # median of 10 and 6 us over 2 extra peers
    assert s.with_peer_cost_pct(rows, 4, 4e-6) == pytest.approx(100 * (48 / 46 - 1))   # 48/50, 48/46, 100%
    assert s.peer_cost_s(rows, 2) != s.peer_cost_s(rows, 2)     # nan: no peer beyond 2 GPUs' one


def test_peer_cost_check_leaves_the_lease_out():
    a = [_scored("all_to_all", 48e-6, 40e-6)]                   # asks 4 us a peer on 4 GPUs
    b = [_scored("all_to_all", 40e-6, 40e-6)]                   # asks 0
    check = s.peer_cost_check({"A": (a, 4), "B": (b, 4)})
    assert check["A"]["others_us"] == pytest.approx(0.0) and check["B"]["others_us"] == pytest.approx(4.0)
    assert check["B"]["with_pct"] == pytest.approx(20.0)        # 48 us predicted for 40 measured


def test_main_refuses_an_unknown_argument_before_scoring():
    with pytest.raises(SystemExit) as e:
        s.main(["--bogus"])
    assert e.value.code == 2
