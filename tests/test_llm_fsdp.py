"""FSDP unit by unit (simulator/training/llm/fsdp_engine.py): host, compute stream, NCCL stream."""

import pytest
import simpy

from simulator.collectives.plans import Plan
from simulator.core.errors import InputError, InvariantError
from simulator.training.gpus import get_gpu
from simulator.training.llm.collective_job import CollJob
from simulator.training.llm.compute import ComputeParams
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.fsdp_engine import FsdpStreams, FsdpUnit
from simulator.training.llm.iteration import _divide_factors, simulate_train, train_work
from simulator.training.llm.memory import PARAM_BYTES
from simulator.training.llm.model import parse_model_spec
from topologies.presets import server
from topologies.routing import Router

SMALL = parse_model_spec("hidden=1024,layers=4,heads=16,seq=1024,vocab=32000")
H200 = get_gpu("h200")
_PLAN = Plan("all_gather", "ring", "simple", 2, 1, 1, (), 0.0, 0.0)


def _job(seconds: float) -> tuple[CollJob, ...]:
    return (CollJob(_PLAN, 1.0, 1, "x", isolated_s=seconds),)


def _run(units, passes=("forward", "backward")):
    """One stage's passes over ``units``; (end time, records)."""
    env = simpy.Environment()
    rec: list = []
    streams = FsdpStreams(env, None, rec, True)

    def stage():
        for p in passes:
            yield from getattr(streams, p)(units, p)
        yield from streams.drain()

    env.process(stage())
    env.run()
    return env.now, rec, streams


def test_host_bound_units_take_the_host_time():
    units = tuple(FsdpUnit(f"b{i}", 1.0, 2.0, 3.0, 5.0) for i in range(3))
    end, _, streams = _run(units)
    assert end == pytest.approx(3 * 3.0 + 3 * 5.0)          # the GPU waits for the host
    assert streams.compute_s == pytest.approx(end)                # waiting for the host counts as compute


def test_gpu_bound_units_take_the_gpu_time_and_gathers_overlap():
    gather = _job(0.5)
    units = tuple(FsdpUnit(f"b{i}", 1.0, 2.0, 0.1, 0.1, gather, True, _job(0.5)) for i in range(3))
    end, rec, _ = _run(units)
    # forward: first gather exposed, the others hidden behind 1 s of compute each; backward: the
    # prefetched gathers and reduce-scatters (1 s per unit) hide behind 2 s of compute; the last
    # reduce-scatter is exposed
    assert end == pytest.approx(0.5 + 3 * 1.0 + 3 * 2.0 + 0.5, abs=0.2)
    names = [r.name for r in rec if r.track == "dp"]
    assert sum(n.startswith("all-gather") for n in names) == 6 and sum(n.startswith("reduce-scatter") for n in names) == 3


def test_one_nccl_stream_runs_collectives_in_issue_order():
    units = tuple(FsdpUnit(f"b{i}", 0.1, 0.1, 0.0, 0.0, _job(1.0), True, _job(1.0)) for i in range(2))
    _, rec, _ = _run(units)
    dp = sorted((r for r in rec if r.track == "dp"), key=lambda r: r.start_s)
    for a, b in zip(dp, dp[1:]):
        assert b.start_s >= a.end_s - 1e-12                      # never two at once


def test_rate_limiter_keeps_the_host_two_units_ahead():
    units = tuple(FsdpUnit(f"b{i}", 1.0, 1.0, 0.0, 0.0, _job(0.0), True) for i in range(6))
    env = simpy.Environment()
    streams = FsdpStreams(env, None, [], False)
    host_done = []

    def stage():
        yield from streams.forward(units, "f")
        host_done.append(env.now)

    env.process(stage())
    env.run()
    assert host_done[0] == pytest.approx(4.0)                 # unit i is issued once unit i - 2 is done


def test_shard_grad_op_gathers_once_full_shard_twice():
    router = Router(server("hgx-h200", gpus=4))

    def colls(fsdp):
        w = train_work(router, SMALL, TrainConfig(1, 1, 4, 4, fsdp=fsdp), H200)
        units = w.stages[0].chunks[0].units
        return units, sum(len(u.gather) * (1 + u.regather) for u in units)
    full, n_full = colls("full")
    grad_op, n_grad_op = colls("grad-op")
    assert [u.name for u in full] == ["root", "block 0", "block 1", "block 2", "block 3", "output layer"]
    assert n_full == 1 + 2 * 4 and n_grad_op == 1 + 4               # the root is not gathered again
    assert full[1].gather[0].size_bytes == SMALL.layer_params() * PARAM_BYTES
    assert full[1].scatter[0].size_bytes == SMALL.layer_params() * PARAM_BYTES   # 16-bit gradients


def test_hybrid_shard_groups_and_replica_all_reduce():
    router = Router(server("hgx-h200", gpus=4))
    w = train_work(router, SMALL, TrainConfig(1, 1, 4, 4, fsdp="hybrid", fsdp_shard=2), H200)
    block = w.stages[0].chunks[0].units[1]
    assert len(block.gather) == 2 and len(block.reduce) == 2
    assert block.reduce[0].size_bytes == pytest.approx(SMALL.layer_params() * PARAM_BYTES / 2)
    one = train_work(router, SMALL, TrainConfig(1, 1, 4, 4, fsdp="hybrid"), H200).stages[0].chunks[0].units[1]
    assert len(one.gather) == 1 and not one.reduce                 # one server: shards over all four


def test_fsdp_host_work_adds_to_a_host_bound_iteration():
    router = Router(server("hgx-h200", gpus=2))
    cfg = TrainConfig(1, 1, 2, 2, fsdp="full")
    host = ComputeParams(host_block_s=1e-3)
    base = simulate_train(router, SMALL, cfg, H200, compute=host).iteration_s
    more = simulate_train(router, SMALL, cfg, H200,
                          compute=ComputeParams(host_block_s=1e-3, fsdp_unit_host_s=1e-3)).iteration_s
    assert more - base == pytest.approx(2 * 5 * 1e-3, rel=0.05)   # 5 units, forward and backward


def test_collective_calls_add_host_time_to_a_host_bound_pass():
    router = Router(server("hgx-h200", gpus=2))
    cfg = TrainConfig(2, 1, 1, 1)                     # TP 2: 2 all-reduces per block and direction
    slow_host = ComputeParams(host_block_s=5e-3)
    base = simulate_train(router, SMALL, cfg, H200, compute=slow_host).iteration_s
    calls = simulate_train(router, SMALL, cfg, H200,
                           compute=ComputeParams(host_block_s=5e-3, host_collective_s=1e-4)).iteration_s
    # 4 per block, the embedding's all-reduce, the output layer's 3 forward and 1 backward
    assert calls - base == pytest.approx((4 * 4 + 1 + 3 + 1) * 1e-4, rel=0.01)


@pytest.mark.parametrize("world, pre, post", [(1, 1, 1), (2, 2, 1), (4, 2, 2), (8, 4, 2), (16, 4, 4)])
def test_gradient_divide_factors_match_fsdp(world, pre, post):
    assert _divide_factors(world) == (pre, post)


def test_one_rank_groups_divide_by_the_whole_mesh():
    """FSDP1 on one-rank shard groups (HYBRID_SHARD with replicate = world, clamped to NO_SHARD) reduces nothing but
    divides every unit's gradient by the mesh's size: a pre-division at 2 ranks, pre- and post-division at 4, each a
    pass over the unit's bf16 gradient, on the GPU's time (h100x4_2026-11-27_fsdpissue's GPU-alone times)."""
    router = Router(server("hgx-h200", gpus=1))
    gpu_only = ComputeParams(optimizer_bytes_per_param=0.0)

    def block_backward_s(divide):
        cfg = TrainConfig(1, 1, 1, 1, fsdp="full", fsdp_divide_ranks=divide)
        return train_work(router, SMALL, cfg, H200, compute=gpu_only).stages[0].chunks[0].units[1].backward_s

    plain, two, four = block_backward_s(None), block_backward_s(2), block_backward_s(4)
    one_pass = (SMALL.layer_params() * PARAM_BYTES * 2 / (H200.mem_bw_Bps * gpu_only.mem_efficiency)
                + gpu_only.kernel_overhead_s)                   # read and write every byte, one kernel
    assert two - plain == pytest.approx(one_pass, rel=0.01)
    assert four - plain == pytest.approx(2 * one_pass, rel=0.01)
    with pytest.raises(InputError, match="fsdp_divide_ranks"):
        TrainConfig(1, 1, 1, 1, fsdp_divide_ranks=2)             # no FSDP: nothing divides
    with pytest.raises(InputError, match="fsdp_divide_ranks"):
        TrainConfig(1, 1, 1, 1, fsdp="full", fsdp_divide_ranks=0)


@pytest.mark.parametrize("kw", [dict(fsdp_shard=2), dict(fsdp="hybrid", fsdp_shard=3), dict(fsdp="hybrid", fsdp_shard=0)])
def test_fsdp_shard_is_checked(kw):
    with pytest.raises(InputError, match="--fsdp-shard"):
        TrainConfig(1, 1, 4, 4, **kw)


def test_kernels_pay_only_for_the_collective_time_they_share():
    """A replica all-reduce taking 40% of the memory bandwidth for 1 s: beside 2 s of kernels it
    costs them 0.4 s; after the last kernels nothing; beside 0.5 s of kernels only its first 0.5 s."""
    from simulator.training.llm.hbm_contention import Contention

    def kernels_beside(coll_start_s: float, kernels_s: float) -> float:
        env = simpy.Environment()
        c = Contention(env)
        ends = []

        def coll():
            yield env.timeout(coll_start_s)
            c.add(0.4)
            yield env.timeout(1.0)
            c.add(-0.4)

        def work():
            yield from c.work(kernels_s)
            ends.append(env.now)

        env.process(coll())
        env.process(work())
        env.run()
        return ends[0]

    assert kernels_beside(0.0, 2.0) == pytest.approx(2.4)
    assert kernels_beside(5.0, 2.0) == pytest.approx(2.0)
    assert kernels_beside(0.0, 0.5) == pytest.approx(0.5 / 0.6)    # all of it beside the collective
    assert kernels_beside(0.5, 1.0) == pytest.approx(0.5 + 0.5 / 0.6)


def test_contention_refuses_a_collective_that_ends_without_starting():
    """Removing more load than was added is a bookkeeping bug: it was clamped to 0 silently."""
    from simulator.training.llm.hbm_contention import Contention

    c = Contention(simpy.Environment())
    for share in (0.1, 0.2, 0.3, -0.1, -0.3, -0.2):  # removed in another order: rounding is no error
        c.add(share)
    assert c.load == 0.0
    with pytest.raises(InvariantError, match="never started"):      # an assert vanished under python -O
        c.add(-0.25)


def test_unit_backward_is_slowed_by_the_reduction_beside_it_not_its_own():
    red = (CollJob(_PLAN, 1.0, 1, "x", isolated_s=1.0),)
    units = tuple(FsdpUnit(f"b{i}", 0.0, 2.0, 0.0, 0.0, reduce=red, reduce_load=0.5) for i in range(2))
    _, rec, _ = _run(units, ("backward",))
    b = {r.name: r for r in rec if r.track == "compute"}
    assert b["backward b1"].end_s == pytest.approx(2.0)          # nothing runs beside the first
    assert b["backward b0"].end_s - b["backward b0"].start_s == pytest.approx(2.5)
    assert max(r.end_s for r in rec) == pytest.approx(4.5 + 1.0)  # the last all-reduce runs alone


@pytest.mark.parametrize("tp, dp, pp, gpus_per_host, order, shard", [
    (1, 16, 1, 8, "tp-dp-pp", None), (2, 8, 1, 8, "tp-dp-pp", None), (4, 4, 1, 8, "tp-dp-pp", None),
    (2, 2, 4, 8, "tp-dp-pp", None), (2, 4, 2, 8, "dp-tp-pp", None), (1, 12, 1, 6, "tp-dp-pp", None),
    (1, 16, 1, 8, "tp-dp-pp", 4)])
def test_hybrid_groups_have_one_definition(tp, dp, pp, gpus_per_host, order, shard):
    """HYBRID_SHARD's shard groups were computed three ways (Placement.hybrid_shard_group, the iteration's own
    split of each DP group by server, plan search's gpus_per_node // tp; review s19): one split now, and a
    placement on names (plan search's) gives the groups the router's placement gives."""
    from simulator.training.llm.placement import Placement
    c = TrainConfig(tp, pp, dp, dp, fsdp="hybrid", order=order, fsdp_shard=shard)
    n = c.gpus
    real = Placement.build(c, [f"gpu{i}" for i in range(n)], lambda g: int(g[3:]) // gpus_per_host)
    named = Placement.uniform(c, gpus_per_host)
    shards, replicas = real.hybrid_groups(0, 0)
    assert [len(s) for s in shards] == [len(s) for s in named.hybrid_groups(0, 0)[0]]
    assert real.hybrid_shard_group() == named.hybrid_shard_group() == len(shards[0])
    on_host = {int(g[3:]) // gpus_per_host for g in shards[0]}
    if shard is None:
        assert len(on_host) == 1 and sum(map(len, shards)) == dp       # the DP peers of one server
    else:
        assert len(shards[0]) == shard
    assert all(len(r) == len(shards) for r in replicas) and len(replicas) == min(map(len, shards))


def test_plan_search_takes_the_simulated_shard_group():
    """A 2-stage pipeline on one 8-GPU server with TP 2 leaves DP 2 per stage: the shard group is those 2 ranks,
    not gpus_per_node // tp = 4 (what plan search assumed)."""
    from simulator.training.llm.placement import Placement
    c = TrainConfig(2, 2, 2, 2, fsdp="hybrid")
    router = Router(server("hgx-h200", gpus=8))
    r = simulate_train(router, SMALL, c, H200)
    assert r.fsdp_shard_group == 2 == Placement.uniform(c, 8).hybrid_shard_group()


# Each rank's own host pace (RankPaces) and the steady-state timing (StageWork.fsdp_steady): off by default.

def _run_paced(units, paces):
    env = simpy.Environment()
    rec: list = []
    streams = FsdpStreams(env, None, rec, True, paces)

    def stage():
        yield from streams.forward(units, "forward")
        yield from streams.drain()

    env.process(stage())
    env.run()
    return env.now, rec


def test_rank_paces_are_expected_order_statistics_slowest_first():
    from scipy import special
    from simulator.training.llm.fsdp_engine import MAX_LANES, RankPaces

    assert RankPaces(4).step_factors() == (1.0,)                    # no spread: one host for the group
    assert RankPaces(1, 0.5, 0.5).step_factors() == (1.0,)          # one rank
    two, four = RankPaces(2, 0.1).step_factors(), RankPaces(4, 0.1).step_factors()
    assert two[0] == pytest.approx(1 + 0.1 * special.ndtri((2 - 0.375) / 2.25))
    assert list(four) == sorted(four, reverse=True) and four[0] > two[0]    # the slowest grows with the group
    assert sum(four) / 4 == pytest.approx(1.0)                       # the ranks' mean pace is the nominal one
    big = RankPaces(64, 0.1).step_factors()
    assert len(big) == MAX_LANES and big[0] == pytest.approx(1 + 0.1 * special.ndtri((64 - 0.375) / 64.25))
    with pytest.raises(InputError, match="step_cv"):
        RankPaces(2, 1.5)


def test_a_host_bound_group_runs_at_its_slowest_hosts_pace():
    from simulator.training.llm.fsdp_engine import RankPaces

    units = tuple(FsdpUnit(f"b{i}", 0.1, 0.1, 1.0, 1.0) for i in range(3))
    paces = RankPaces(2, 0.5)
    end, _ = _run_paced(units, paces)
    assert end == pytest.approx(3 * 1.0 * paces.step_factors()[0])


def test_an_all_gather_starts_when_the_last_host_has_issued_it():
    from simulator.training.llm.fsdp_engine import RankPaces

    units = (FsdpUnit("b0", 0.1, 0.1, 1.0, 1.0), FsdpUnit("b1", 0.1, 0.1, 1.0, 1.0, _job(0.5), True))
    slow, fast = RankPaces(2, 0.5).step_factors()
    _, rec = _run_paced(units, RankPaces(2, 0.5))
    gather = next(r for r in rec if r.track == "dp")
    assert gather.start_s == pytest.approx(slow) and gather.start_s > fast     # rank 0 (the slowest) issued it last
    assert gather.end_s == pytest.approx(slow + 0.5)


def test_per_unit_draws_are_seeded():
    from simulator.training.llm.fsdp_engine import RankPaces

    units = tuple(FsdpUnit(f"b{i}", 0.1, 0.1, 1.0, 1.0, _job(0.1), True) for i in range(4))
    a, b, c = (_run_paced(units, RankPaces(4, 0.1, 0.2, seed))[0] for seed in (0, 0, 1))
    assert a == b != c


def _steady(units, steady: bool) -> float:
    from simulator.training.llm.pipeline_engine import ChunkWork, StageWork, simulate_pipeline
    from simulator.training.llm.schedule import schedule

    stage = StageWork((ChunkWork(0.0, 0.0, (), (), 0.0, units=units),), schedule(1, 1, 1)[0], None, None, (), 0.0,
                      (), fsdp_steady=steady)
    times, _ = simulate_pipeline(lambda env: None, [stage], 1)
    return times[0].end_s


def test_steady_state_hides_the_drain_behind_the_next_host_forward():
    """A host-bound forward (1 s of host per unit, 0.1 s of kernels) and a GPU-bound backward (2 s of kernels), each
    unit's reduce-scatter 0.5 s. From a cold start: 3 x 1 forward + 3 x 2 backward + the last reduce-scatter = 9.5 s.
    Issued behind another iteration, the host has issued the next forward while this one's backward ran: 3 x 0.1 +
    3 x 2 + 0.5 = 6.8 s between the two CUDA events (the second after the final callback's wait)."""
    units = tuple(FsdpUnit(f"b{i}", 0.1, 2.0, 1.0, 0.1, scatter=_job(0.5)) for i in range(3))
    assert _steady(units, False) == pytest.approx(9.5)
    assert _steady(units, True) == pytest.approx(6.8)


def test_steady_state_is_a_switch_of_the_compute_params():
    router = Router(server("hgx-h200", gpus=2))
    cfg = TrainConfig(1, 1, 2, 2, fsdp="full")
    host = ComputeParams(host_block_s=2e-3, optimizer_bytes_per_param=0.0)
    cold = simulate_train(router, SMALL, cfg, H200, compute=host)
    steady = simulate_train(router, SMALL, cfg, H200, compute=ComputeParams(host_block_s=2e-3, optimizer_bytes_per_param=0.0,
                                                                             fsdp_steady=True))
    assert steady.iteration_s < cold.iteration_s
    assert all(r.start_s >= -1e-12 for r in steady.records[0])       # the scored iteration's records, from its start
    with pytest.raises(InputError, match="fsdp_steady"):
        ComputeParams(fsdp_steady=1)
    with pytest.raises(InputError, match="fsdp_rank_cv"):
        ComputeParams(fsdp_rank_cv=2.0)
