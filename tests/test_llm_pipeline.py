"""Pipeline schedules and their event-driven execution: the bubble comes out of the simulation."""

import numpy as np
import pytest
import simpy

from simulator.training.llm.flows import ComponentFlowNetwork
from simulator.network.engine import FlowNetwork
from simulator.training.llm.pipeline_engine import ChunkWork, Link, StageWork, simulate_pipeline
from simulator.training.llm.schedule import schedule


@pytest.mark.parametrize("p, m, v", [(1, 4, 1), (4, 8, 1), (4, 2, 1), (4, 8, 2), (2, 4, 3)])
def test_every_pass_once_and_backward_after_forward(p, m, v):
    for order in schedule(p, m, v):
        seen = set()
        for a in order:
            key = (a.microbatch, a.chunk)
            if a.forward:
                assert key not in seen
                seen.add(key)
            else:
                assert key in seen
        assert sum(a.forward for a in order) == m * v == sum(not a.forward for a in order)


def _stages(p, m, v, f, b):
    chunk = ChunkWork(f / v, b / v, (), (), 0.0)
    link = Link((), 0.0)
    return [StageWork((chunk,) * v, order, link, link, (), 0.0, ()) for order in schedule(p, m, v)]


def _net(env):
    return ComponentFlowNetwork(env, np.ones(1))


@pytest.mark.parametrize("p, m", [(1, 8), (4, 8), (4, 16), (8, 3)])
def test_1f1b_takes_m_plus_p_minus_1_slots(p, m):
    f, b = 1.0, 2.0
    times, _ = simulate_pipeline(_net, _stages(p, m, 1, f, b), p)
    assert max(t.end_s for t in times) == pytest.approx((m + p - 1) * (f + b))


def test_interleaving_shrinks_the_bubble_by_v():
    p, m, f, b = 4, 8, 1.0, 2.0
    for v in (2, 4):
        times, _ = simulate_pipeline(_net, _stages(p, m, v, f, b), p)
        assert max(t.end_s for t in times) == pytest.approx(m * (f + b) + (p - 1) * (f + b) / v)


def _transfers(net_cls, specs):
    env = simpy.Environment()
    net = net_cls(env, np.array([10.0, 10.0, 5.0, 20.0]))
    done = {}

    def go(i, routes, size, at):
        yield env.timeout(at)
        yield net.transfer_group(routes, size)
        done[i] = env.now

    for i, (routes, size, at) in enumerate(specs):
        env.process(go(i, routes, size, at))
    env.run()
    return done


def test_component_network_gives_the_engines_times():
    specs = [(((0, 1),), 40.0, 0.0), (((1, 2),), 10.0, 0.5), (((3,),), 30.0, 0.2), (((0,), (3,)), 25.0, 1.0),
             (((2,),), 5.0, 3.0)]
    ref = _transfers(FlowNetwork, specs)
    got = _transfers(ComponentFlowNetwork, specs)
    assert got.keys() == ref.keys()
    for k in ref:
        assert got[k] == pytest.approx(ref[k])


@pytest.mark.parametrize("m", [1, 2, 8])
def test_every_backward_after_a_chunks_first_adds_its_gradient_accumulation(m):
    """PyTorch's AccumulateGrad: the first backward after zero_grad takes its gradients as they are, every later
    one of the iteration adds them into the ones there (ChunkWork.accumulate_s): m (f + b) + (m - 1) a on one
    stage; one micro-batch per stage adds nothing however many stages."""
    f, b, a = 1.0, 2.0, 0.25
    chunk = ChunkWork(f, b, (), (), 0.0, accumulate_s=a)
    times, _ = simulate_pipeline(_net, [StageWork((chunk,), schedule(1, m, 1)[0], None, None, (), 0.0, ())], 1)
    assert times[0].end_s == pytest.approx(m * (f + b) + (m - 1) * a)
    link = Link((), 0.0)
    stages = [StageWork((chunk,), order, link, link, (), 0.0, ()) for order in schedule(4, 1, 1)]
    times, _ = simulate_pipeline(_net, stages, 4)
    assert max(t.end_s for t in times) == pytest.approx(4 * (f + b))


@pytest.mark.parametrize("host_f, end", [(0.0, 6.0), (3.0, 8.5)])
def test_a_send_is_issued_by_the_stages_host_after_its_pass(host_f, end):
    """Link.host_s is the host's issue of the send, after it has issued the pass: a host that ran ahead has
    issued it before the pass ends (2 stages, 1 micro-batch: 2 (f + b), nothing of the 0.5 s issue); a host-bound
    forward (issue 3 s > kernels 1 s) ends at 3 s and the send waits for its issue until 3.5 s:
    3 + 0.5 + f + b + b (on the GPU's path it would be 9, dropped 8)."""
    f, b = 1.0, 2.0
    chunk = ChunkWork(f, b, (), (), 0.0, forward_host_s=host_f)
    link = Link((), 0.0, host_s=0.5)
    stages = [StageWork((chunk,), order, link, link, (), 0.0, ()) for order in schedule(2, 1, 1)]
    times, _ = simulate_pipeline(_net, stages, 2)
    assert max(t.end_s for t in times) == pytest.approx(end)


@pytest.mark.parametrize("seq, proto", [(128, "ll"), (4096, "simple")])
def test_a_pipeline_send_runs_the_protocol_of_nccls_p2p_path(seq, proto):
    """A stage's send is priced under the protocol ``gpunetsim collective`` gives a send_recv of its size (LL up to
    512 KiB per peer on an NVSwitch server, NCCL 2.28's rule), not Simple at every size (review s18b #2): its
    latency and wire bytes are that plan's, and the comm floor prices it the same way."""
    import topologies
    from simulator.collectives.params import Parameters
    from simulator.training.gpus import get_gpu
    from simulator.training.llm.config import TrainConfig
    from simulator.training.llm.groups import GroupCollectives
    from simulator.training.llm.iteration import train_work
    from simulator.training.llm.model import parse_model_spec
    router = topologies.router_for(topologies.prepare("hgx-h200", gpus_per_node=2))
    model = parse_model_spec(f"hidden=1024,layers=4,heads=16,seq={seq},vocab=32000")
    w = train_work(router, model, TrainConfig(1, 2, 1, 4), get_gpu("h200"))
    link, size = w.stages[0].to_next, w.stages[0].chunks[0].send_bytes
    planner = GroupCollectives(router, Parameters()).planner
    assert planner.p2p_protocol("send_recv", size, link.ranks) == proto
    plan = planner.plan("send_recv", "direct", proto, link.ranks)
    assert link.bytes_per_byte == pytest.approx(plan.groups[0].bytes_per_byte)
    assert link.latency_s + link.host_s == pytest.approx(plan.call_overhead_s + plan.latency_s)
