"""The socket transport's per-step latency: determined on one world size by its contrast with another transport
(validation.calibrate._one_world), paid once per ring step by both engines."""

import numpy as np
import pytest

import topologies
from simulator.collectives.params import Parameters
from simulator.network.closed_form import CostModel
from simulator.network.engine import simulate_plan
from validation import calibrate as cal
from validation.parsers import CollMeasurement

KEYS = ["call_overhead_s", "hop_latency_s.nvlink.ring.ll", "hop_latency_s.socket.ring.ll",
        "hop_latency_s.socket.ring.simple"]


def _pt(op, variant="default"):
    return CollMeasurement(op, 2, 1024, 30e-6, None, None, variant=variant)


def _verdicts(pts):
    return {v.key: v for v in cal._one_world(pts, cal.identifiable(np.eye(len(KEYS)), KEYS))}


def test_a_socket_op_also_measured_over_another_transport_fits_the_sockets_step_latency():
    out = _verdicts([_pt("all_reduce"), _pt("all_reduce", "socket")])
    assert out["hop_latency_s.socket.ring.ll"].determined
    assert out["hop_latency_s.socket.ring.simple"].determined
    assert not out["hop_latency_s.nvlink.ring.ll"].determined       # NCCL's constant: kept on one world size
    assert out["call_overhead_s"].determined


@pytest.mark.parametrize("pts", [
    [_pt("all_reduce", "socket")],                                  # socket only: no other transport's costs
    [_pt("all_gather"), _pt("all_reduce", "socket")],                # another op: an op contrast, not a transport's
])
def test_without_the_transport_contrast_the_socket_step_latency_keeps_its_prior(pts):
    out = _verdicts(pts)
    assert not out["hop_latency_s.socket.ring.ll"].determined
    assert not out["hop_latency_s.socket.ring.simple"].determined


def test_several_world_sizes_determine_every_step_latency():
    pts = [_pt("all_reduce"), CollMeasurement("all_reduce", 4, 1024, 40e-6, None, None)]
    assert all(v.determined for v in _verdicts(pts).values())


@pytest.mark.parametrize("gpus", [2, 4])
def test_both_engines_charge_the_socket_step_latency_once_per_ring_step(gpus):
    """A ring all-reduce over the socket transport takes 2(n-1) steps: 10 us more per step adds 20 us on 2 GPUs
    and 60 us on 4, in the closed form and in the discrete-event engine alike."""
    G = topologies.build("hgx-h200", gpus_per_node=gpus, sockets=True, p2p=False)
    key = "hop_latency_s.socket.ring.ll"
    size = 4096
    times = {}
    for extra in (0.0, 10e-6):
        params = Parameters().with_values({key: Parameters()[key] + extra})
        m = CostModel(G, params)
        plan = m.planner.plan("all_reduce", "ring", "ll")
        times[extra] = (m.timer.time(plan, size), simulate_plan(m.router, m.params, plan, size)[0])
    for engine in range(2):
        assert times[10e-6][engine] - times[0.0][engine] == pytest.approx(2 * (gpus - 1) * 10e-6, rel=1e-6)
