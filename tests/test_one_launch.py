"""validation.calibrate: a launch latency only one launch's small points determine keeps NCCL's value."""

import numpy as np

from validation import calibrate as cal
from validation.parsers import CollMeasurement


def _pt(launches, size):
    return CollMeasurement("all_reduce", 2, size, 30e-6, None, None, launches=launches)


KEYS = ["call_overhead_s", "base_latency_s.tree.ll128", "socket_max_Bps"]


def _verdicts(pts, J):
    return cal._one_launch(pts, J, KEYS, cal.identifiable(J, KEYS))


def test_a_launch_latency_only_one_launchs_small_points_determine_keeps_its_prior():
    pts = [_pt(3, 64), _pt(3, 1024), _pt(1, 64), _pt(1, 1024)]
    J = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 0.5, 2.0]])
    out = {x.key: x for x in _verdicts(pts, J)}
    assert out["call_overhead_s"].determined
    assert not out["base_latency_s.tree.ll128"].determined
    assert out["base_latency_s.tree.ll128"].reason == cal.ONE_LAUNCH_REASON
    assert out["socket_max_Bps"].determined          # not a launch latency: what one launch shows of it stays


def test_one_launch_points_in_the_bandwidth_regime_and_single_launch_data_keep_the_fit():
    J = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 0.5, 2.0]])
    big = [_pt(3, 64), _pt(3, 1024), _pt(1, 64 << 20), _pt(1, 128 << 20)]
    assert all(x.determined for x in _verdicts(big, J))
    one = [_pt(1, 64), _pt(1, 1024), _pt(1, 64), _pt(1, 1024)]
    assert all(x.determined for x in _verdicts(one, J))


def test_the_shipped_two_gpu_calibration_keeps_tree_ll128s_launch_latency_at_nccls():
    """Section 3's pooled 2-GPU campaigns: only the forced-LL128 variant's one launch measures tree / LL128 below
    16 MiB, so its launch latency stays NCCL's (tuning.cc's baseLat) instead of that launch's host state."""
    from simulator.collectives.nccl_constants import BASE_LAT
    from simulator.collectives.params import load_calibration, read_calibration
    data, _ = read_calibration("h200-nvlink-2gpu")
    assert data["parameters"]["base_latency_s.tree.ll128"] == {"determined": False, "reason": cal.ONE_LAUNCH_REASON}
    assert load_calibration("h200-nvlink-2gpu")["base_latency_s.tree.ll128"] == BASE_LAT["tree"][1] * 1e-6
