"""The discrete-event network against hand-computed cases and against the closed form."""

import math

import numpy as np
import pytest
import simpy
from hypothesis import given, settings, strategies as st

import topologies
from simulator.network.closed_form import CostModel
from simulator.network.engine import FlowNetwork, simulate_plan
from simulator.network.fairness import max_min_rates
from simulator.collectives.params import Parameters, ideal
from tests.conftest import line_topology


def test_two_gpus_one_link_is_latency_plus_bytes_over_bandwidth(two_gpus):
    m = CostModel(two_gpus, ideal())
    size = 10**8
    expected = 1e-6 + size / 100e9
    assert m.time_s("send_recv", size) == pytest.approx(expected, rel=1e-12)
    plan = m.shape("send_recv", "direct", "simple").plan
    t, _ = simulate_plan(m.router, m.params, plan, size)
    assert t == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n", [3, 4, 8])
def test_ring_all_reduce_on_identical_links(n):
    """2(n-1) steps of size/n over links of 100 GB/s, 1 us each: 2(n-1)*1us + 2(n-1)/n*S/B."""
    m = CostModel(line_topology(n), ideal())
    size = 2**30
    expected = 2 * (n - 1) * 1e-6 + 2 * (n - 1) / n * size / 100e9
    assert m.time_s("all_reduce", size, "ring", "simple") == pytest.approx(expected, rel=1e-12)
    t, _ = simulate_plan(m.router, m.params, m.shape("all_reduce", "ring", "simple").plan, size)
    assert t == pytest.approx(expected, rel=1e-9)


def test_two_transfers_share_a_link_fairly():
    env = simpy.Environment()
    net = FlowNetwork(env, np.array([10.0]))
    a, b = net.transfer((0,), 10.0), net.transfer((0,), 20.0)
    env.run(simpy.AllOf(env, [a, b]))
    assert a.value == pytest.approx(2.0)    # both at 5 B/s until a finishes
    assert b.value == pytest.approx(3.0)    # then b alone at 10 B/s


def test_late_starter_slows_the_first():
    env = simpy.Environment()
    net = FlowNetwork(env, np.array([10.0]))
    done = {}

    def second():
        yield env.timeout(1.0)
        done["b"] = yield net.transfer((0,), 10.0)

    a = net.transfer((0,), 20.0)
    env.process(second())
    env.run()
    assert a.value == pytest.approx(3.0)   # 10 B alone in 1 s, then 5 B/s shared for 2 s
    assert done["b"] == pytest.approx(3.0)


def test_max_min_with_a_bottleneck():
    # group 0 crosses links 0 and 1; group 1 only link 1; link 0 is narrow.
    r = max_min_rates(np.array([0, 0, 1]), np.array([0, 1, 1]), np.ones(3), np.array([2.0, 10.0]),
                      np.array([math.inf, math.inf]))
    assert r == pytest.approx([2.0, 8.0])


TOPOLOGIES = [("dgx-h100", 1, None), ("dgx-h100", 2, None), ("hgx-h200", 1, 4), ("dgx-a100", 4, None),
              ("pcie-gen4", 1, 4), ("pcie-gen3", 1, 8)]


@pytest.mark.parametrize("preset, nodes, gpus", TOPOLOGIES)
@pytest.mark.parametrize("op, algo", [("all_reduce", "ring"), ("all_reduce", "tree"), ("all_gather", "ring"),
                                      ("reduce_scatter", "ring"), ("broadcast", "ring"), ("reduce", "ring"),
                                      ("all_to_all", "direct"), ("send_recv", "direct")])
def test_discrete_event_agrees_with_closed_form(preset, nodes, gpus, op, algo):
    m = CostModel(topologies.build(preset, nodes=nodes, gpus_per_node=gpus))
    for proto in ("ll", "ll128", "simple"):
        plan = m.shape(op, algo, proto).plan
        for size in (8, 4096, 1 << 20, 1 << 27, 1 << 31):
            closed = m.shape(op, algo, proto).time_s(size)
            des, _ = simulate_plan(m.router, m.params, plan, size)
            assert des == pytest.approx(closed, rel=0.01), (proto, size)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 8), size=st.integers(1, 2**32), bw=st.floats(1e9, 1e12), lat=st.floats(0, 1e-5))
def test_never_faster_than_the_bandwidth_lower_bound(n, size, bw, lat):
    """Each rank must send 2(n-1)/n of the data through its links (2 links per GPU on a ring of n > 2)."""
    m = CostModel(line_topology(n, bw, lat), Parameters())
    egress_Bps = bw * (2 if n > 2 else 1)
    for op, factor in (("all_reduce", 2 * (n - 1) / n), ("all_gather", (n - 1) / n), ("broadcast", 1 / egress_Bps * bw)):
        assert m.time_s(op, size) >= factor * size / egress_Bps * (1 - 1e-12)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 6), size=st.integers(1, 2**32), bw=st.floats(1e9, 1e12), factor=st.floats(1.0, 10.0))
def test_more_bandwidth_is_never_slower(n, size, bw, factor):
    """For a fixed algorithm and protocol, and for the fastest choice (NCCL's tuner may switch
    protocol when bandwidth changes, which can cost time in reality too)."""
    slow = CostModel(line_topology(n, bw), Parameters(), select="fastest")
    fast = CostModel(line_topology(n, bw * factor), Parameters(), select="fastest")
    for op in ("all_reduce", "all_gather", "broadcast", "send_recv"):
        assert fast.time_s(op, size) <= slow.time_s(op, size) * (1 + 1e-12)


@settings(max_examples=20, deadline=None)
@given(sizes=st.lists(st.floats(1.0, 1e9), min_size=1, max_size=6), cap=st.floats(1.0, 1e3))
def test_bytes_are_conserved_on_a_shared_link(sizes, cap):
    env = simpy.Environment()
    net = FlowNetwork(env, np.array([cap]))
    events = [net.transfer((0,), s) for s in sizes]
    env.run(simpy.AllOf(env, events))
    assert net.bytes_delivered == pytest.approx(sum(sizes), rel=1e-6)
    assert env.now == pytest.approx(sum(sizes) / cap, rel=1e-6)   # a busy link never idles


def test_identical_inputs_give_identical_outputs():
    def run():
        m = CostModel(topologies.build("dgx-h100", nodes=2))
        return [simulate_plan(m.router, m.params, m.shape("all_reduce", a, "simple").plan, 1 << 28)[0]
                for a in ("ring", "tree")]
    assert run() == run()


def test_contention_shows_in_the_simulator_only():
    """Two all-reduces on the same GPUs at once take about twice as long as one alone."""
    m = CostModel(topologies.build("dgx-h100"))
    plan = m.shape("all_reduce", "ring", "simple").plan
    env = simpy.Environment()
    net = FlowNetwork.for_router(env, m.router, m.params)
    from simulator.network.engine import run_plan
    p1 = env.process(run_plan(env, net, plan, 1 << 30))
    p2 = env.process(run_plan(env, net, plan, 1 << 30))
    env.run(simpy.AllOf(env, [p1, p2]))
    alone = m.shape("all_reduce", "ring", "simple").time_s(1 << 30)
    assert p1.value == pytest.approx(2 * alone - plan.latency_s, rel=0.01)


def test_oversubscribed_fabric_is_the_bottleneck():
    fast = CostModel(topologies.build("dgx-h100", nodes=4, fabric=topologies.FabricSpec(hosts_per_leaf=1)))
    slow = CostModel(topologies.build("dgx-h100", nodes=4, fabric=topologies.FabricSpec(
        hosts_per_leaf=1, oversubscription=4.0)))
    s = 1 << 30
    assert slow.time_s("all_reduce", s, "ring", "simple") > 2.5 * fast.time_s("all_reduce", s, "ring", "simple")


def test_nic_speed_is_the_bottleneck_across_nodes():
    m200 = CostModel(topologies.build("dgx-h100", nodes=2, fabric=topologies.FabricSpec(nic_Bps=25e9)))
    m400 = CostModel(topologies.build("dgx-h100", nodes=2))
    s = 1 << 30
    ratio = m200.time_s("all_reduce", s, "ring", "simple") / m400.time_s("all_reduce", s, "ring", "simple")
    assert 1.7 < ratio < 2.1


def test_a_capacity_change_re_rates_running_transfers():
    """The engine remembers max-min rates per set of running groups; a capacity change forgets them."""
    env = simpy.Environment()
    cap = np.array([10.0])
    net = FlowNetwork(env, cap)
    a = net.transfer((0,), 20.0)

    def degrade():
        yield env.timeout(1.0)
        net.set_capacity(np.array([0]), 5.0)

    env.process(degrade())
    env.run(a)
    assert a.value == pytest.approx(3.0)     # 10 B in 1 s, then 10 B at 5 B/s
    assert cap[0] == 10.0                     # the caller's array is not changed
