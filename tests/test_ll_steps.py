"""LL's ring ceiling follows the ring's step share (issue 10)."""

import pytest

import topologies
from simulator.collectives.params import Parameters
from simulator.collectives.planner import Planner
from simulator.collectives.plans import ring_step_share
from simulator.network.closed_form import CostModel
from validation.calibrate import calibrate
from validation.compare import Predictor, Topo
from validation.parsers import CollMeasurement


@pytest.mark.parametrize("op, n, share", [("all_reduce", 2, 2 / 3), ("all_reduce", 4, 6 / 7),
                                          ("all_reduce", 8, 14 / 15), ("all_gather", 2, 1 / 2),
                                          ("reduce_scatter", 4, 3 / 4), ("broadcast", 4, 1.0)])
def test_share_of_steps_that_move_data(op, n, share):
    assert ring_step_share(op, n) == pytest.approx(share)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_ll_all_reduce_bus_bandwidth_is_the_step_rate_times_the_share(n):
    """Hand-computed: on NVLink the LL wire (1/2 of the link) is faster than the step ceiling, so the
    bus bandwidth at a large size is ll_max_busbw_Bps x 2(n-1)/(2n-1)."""
    params = Parameters().with_values({"call_overhead_s": 0.0})
    model = CostModel(topologies.build("hgx-h200", gpus_per_node=n), params)
    shape = model.shape("all_reduce", "ring", "ll")
    busbw = 2 * (n - 1) / n / shape.beta_s_per_byte
    assert busbw == pytest.approx(params["ll_max_busbw_Bps"] * 2 * (n - 1) / (2 * n - 1), rel=1e-9)


def test_ll_bus_bandwidth_rises_with_ranks_as_measured():
    """Measured on 2 and 4 H200s (h200x4_2026-11-26b, NCCL_PROTO=LL, 1 GiB): bus bandwidth 121 and
    149 GB/s, a ratio of 1.22; the step share gives (6/7)/(2/3) = 1.29, a constant ceiling 1.0."""
    two = CostModel(topologies.build("hgx-h200", gpus_per_node=2)).shape("all_reduce", "ring", "ll")
    four = CostModel(topologies.build("hgx-h200", gpus_per_node=4)).shape("all_reduce", "ring", "ll")
    ratio = (1.5 / four.beta_s_per_byte) / (1.0 / two.beta_s_per_byte)
    assert ratio == pytest.approx(9 / 7)


def test_two_gpu_ll_points_determine_the_step_rate():
    """Noise-free LL all-reduces on 2 GPUs made with a step rate of 180 GB/s: the fit finds it."""
    truth = Parameters().with_values({"ll_max_busbw_Bps": 180e9})
    pred = Predictor(Topo("hgx-h200"), truth)
    pts = []
    for k in range(16, 31, 2):
        p = CollMeasurement("all_reduce", 2, 2**k, 1.0, None, None, variant="ll")
        t = pred.predict(p).predicted_s
        pts.append(CollMeasurement("all_reduce", 2, 2**k, t, None, None, variant="ll", min_s=0.99 * t, max_s=1.01 * t))
    fit = calibrate(pts, Predictor(Topo("hgx-h200"), Parameters()))
    assert fit.params["ll_max_busbw_Bps"] == pytest.approx(180e9, rel=0.02)
    assert "proto_efficiency.ring.ll" not in fit.keys     # the step rate binds: the wire's share moves no point


def test_planners_of_one_router_share_layouts_and_p2p_channels():
    """Layouts and NCCL's p2p channel counts depend on the routes only: a planner with other parameters
    reuses them (same objects), and its plans still carry its own parameters."""
    router = Planner(topologies.build("hgx-h200", gpus_per_node=4)).router
    a = Planner(router, Parameters())
    b = Planner(router, Parameters().with_values({"p2p_channel_Bps": Parameters()["p2p_channel_Bps"] / 2}))
    pa, pb = a.plan("all_to_all", "direct", "simple"), b.plan("all_to_all", "direct", "simple")
    assert pa.p2p is pb.p2p and pa.groups[0].uses is pb.groups[0].uses
    assert pb.groups[0].channel_Bps == pytest.approx(pa.groups[0].channel_Bps / 2)
