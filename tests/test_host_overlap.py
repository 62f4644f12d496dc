"""A call's host issue overlaps the previous call's GPU work (simulator.network.host_overlap): both engines,
the fitter's start, and the measured pattern it stands for."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from simulator.collectives.params import Parameters
from simulator.network.closed_form import CostModel
from simulator.network.engine import simulate_plan
from simulator.network.host_overlap import NORM, stream_time_s
import topologies
from validation.calibrate import calibrate
from validation.compare import Predictor, Topo
from validation.data import data_path
from validation.parsers import CollMeasurement, read_jsonl

US = 1e-6


@given(h=st.floats(0, 1e-2), g=st.floats(0, 1e-2))
def test_between_perfect_overlap_and_none(h, g):
    """Never faster than the slower side, never slower than issuing and running one after the other."""
    t = stream_time_s(h, g)
    assert max(h, g) * (1 - 1e-12) <= t <= (h + g) * (1 + 1e-12) + 1e-300
    assert t == pytest.approx(stream_time_s(g, h), rel=1e-12)
    assert float(stream_time_s(np.array([h]), np.array([g]))[0]) == pytest.approx(t, rel=1e-12, abs=1e-300)


def test_the_slower_side_sets_the_pace():
    assert stream_time_s(0.0, 50 * US) == 50 * US                       # no host cost: the GPU's time
    assert stream_time_s(40 * US, 10 * US) == pytest.approx(40 * US, rel=0.005)    # host-bound: small calls
    assert stream_time_s(40 * US, 400 * US) == pytest.approx(400 * US, rel=1e-4)   # GPU-bound: large calls
    assert stream_time_s(40 * US, 40 * US) == pytest.approx(40 * US * 2 ** (1 / NORM))
    assert stream_time_s(np.array([0.0]), np.array([0.0]))[0] == 0.0


@pytest.fixture(scope="module")
def h200x4():
    return topologies.build("hgx-h200", nodes=1, gpus_per_node=4)


@pytest.mark.parametrize("op", ["all_reduce", "all_gather", "broadcast", "send_recv", "all_to_all"])
@pytest.mark.parametrize("size", [4, 1 << 16, 1 << 20, 1 << 24, 1 << 30])
def test_both_engines_overlap_the_issue_alike(h200x4, op, size):
    """The closed form and the discrete-event engine price the same host issue the same way."""
    params = Parameters().with_values({"call_overhead_s": 40 * US, "rank_overhead_s": 5 * US,
                                       "op_overhead_s.broadcast": -10 * US})
    m = CostModel(h200x4, params)
    t, algo, proto = m.best(op, size)
    plan = m.shape(op, algo, proto).plan
    assert plan.host_s == pytest.approx(40 * US + 5 * US * math.log2(4) - (10 * US if op == "broadcast" else 0))
    des, _ = simulate_plan(m.router, m.params, plan, size)
    assert des == pytest.approx(t, rel=1e-9)
    gpu = m.shape(op, algo, proto).sized(size)
    without = CostModel(h200x4, params.with_values({"call_overhead_s": 0.0, "rank_overhead_s": 0.0,
                                                    "op_overhead_s.broadcast": 0.0})).time_s(op, size, algo, proto)
    assert t == pytest.approx(stream_time_s(plan.host_s, without), rel=1e-9)
    assert max(plan.host_s, without) <= t * (1 + 1e-12) <= plan.host_s + without + 1e-15
    assert gpu.alpha_s == pytest.approx(plan.call_overhead_s + plan.latency_s)     # an isolated call pays both


def test_network_per_call_cost_is_not_hidden():
    """The fabric's own per-call cost across servers (net_call_overhead_s) is GPU/proxy time, not host issue."""
    g = topologies.build("dgx-h100", nodes=2)
    base = CostModel(g, Parameters()).time_s("all_reduce", 1 << 30)
    slow = CostModel(g, Parameters().with_values({"net_call_overhead_s": 1e-3})).time_s("all_reduce", 1 << 30)
    assert slow - base == pytest.approx(1e-3, rel=1e-6)


def test_fit_finds_a_host_cost_the_prior_lacks():
    """Points made by the model with a 35 us issue cost per call: the fitter, from the datasheet's 0 (where
    the issue moves no prediction), finds it, and the large calls show none of it."""
    truth = Parameters().with_values({"call_overhead_s": 35 * US, "link_efficiency.nvlink": 0.75})
    pred = Predictor(Topo("hgx-h200"), truth)
    pts = []
    for op in ("all_reduce", "all_gather", "broadcast"):
        for k in range(2, 31, 2):
            p = CollMeasurement(op, 2, (1 << k) * 2, 1.0, None, None)
            pts.append(CollMeasurement(op, 2, p.size_bytes, pred.predict(p).predicted_s, None, None))
    fit = calibrate(pts, Predictor(Topo("hgx-h200"), Parameters()))
    assert "call_overhead_s" in fit.keys
    assert fit.params["call_overhead_s"] + fit.params["op_overhead_s.all_reduce"] == pytest.approx(35 * US, rel=0.1)
    assert fit.after["median_time_pct"] < 1.0


def test_measured_issue_times_show_the_overlap():
    """The pattern the model stands for, in the 4x H200 sweep: every rank's host issues a call in
    under 80 us, and calls of 64 MiB and more take far longer on the GPU (so their issue is hidden),
    while 1 MiB calls run at about the slowest rank's issue time."""
    ds = read_jsonl(data_path("h200x4_2026-11-26_bw2/bw_world4_L1.jsonl"))
    for p in ds.points:
        slowest = max(float(np.median(r)) for r in p.rank_host_times_s)
        assert slowest < 80 * US if p.op != "send_recv" else slowest < 120 * US
        if p.size_bytes >= 64 << 20:
            assert p.time_s > 2 * slowest
        if p.size_bytes == 1 << 20 and p.op != "send_recv":
            assert p.time_s == pytest.approx(slowest, rel=0.35)
