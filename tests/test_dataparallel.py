"""torch.nn.DataParallel's iteration model (simulator.training.dataparallel)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from simulator.collectives.params import Parameters
from simulator.core.errors import InputError
from simulator.network.closed_form import CostModel
from simulator.training.dataparallel import (COALESCE_BYTES, DPFacts, backward_threads_s, chunk_sizes,
                                             parallel_apply_s, simulate_dataparallel, transfer_time_s)
from simulator.training.workload import ParamGrad, Workload
from simulator.training.zoo import zoo_workload

MiB = 2**20


def toy(host_s: float = 0.0, **extras: float) -> Workload:
    params = tuple(ParamGrad(f"p{i}", 4 * MiB, 0.001 * i) for i in range(6))
    ex = {"input_bytes_per_sample": 1 * MiB, "output_bytes_per_sample": 4096,
          "forward_host_s": host_s, "backward_host_s": host_s, "optimizer_host_s": 0.0, **extras}
    return Workload("toy", 0.010, 0.020, 0.002, params, 8, tuple(ex.items()))


@pytest.fixture(scope="module")
def h200():
    return {g: CostModel(topologies.build("hgx-h200", gpus_per_node=g)) for g in (1, 2, 4)}


@pytest.mark.parametrize("sizes, chunks", [
    ([4, 4, 4], [(12, 3)]), ([6 * MiB, 6 * MiB], [(6 * MiB, 1), (6 * MiB, 1)]),
    ([20 * MiB, 1, 1], [(20 * MiB, 1), (2, 2)]), ([1, 20 * MiB], [(1, 1), (20 * MiB, 1)]), ([], []),
])
def test_chunks_as_take_tensors(sizes: list[int], chunks: list[tuple[int, int]]) -> None:
    assert chunk_sizes(sizes) == chunks
    assert all(c <= COALESCE_BYTES or n == 1 for c, n in chunk_sizes(sizes))


def test_one_gpu_is_the_single_gpu_iteration(h200) -> None:
    r = simulate_dataparallel(h200[1], toy())
    assert r.iteration_s == pytest.approx(0.032) and r.scaling_efficiency == pytest.approx(1.0)
    slow_host = simulate_dataparallel(h200[1], toy(host_s=0.030))
    assert slow_host.iteration_s == pytest.approx(0.060) and slow_host.limit.startswith("host-bound")


def test_two_gpus_phases_by_hand(h200) -> None:
    m = h200[2]
    p = m.params
    r = simulate_dataparallel(m, toy())
    ph = {x.name: x for x in r.phases}
    assert [x.name for x in r.phases] == ["scatter", "replicate", "forward", "gather", "backward", "reduce",
                                          "optimizer"]
    # 6 tensors of 4 MiB: chunks of two (8 MiB), each flattened and broadcast / reduced
    chunk = 8 * MiB
    assert ph["replicate"].gpu_s == pytest.approx(3 * (chunk / p["dp.copy_Bps"] + m.time_s("broadcast", chunk)))
    assert ph["reduce"].gpu_s == pytest.approx(3 * (chunk / p["dp.copy_Bps"] + m.time_s("reduce", chunk)))
    g0, g1 = m.router.gpus
    assert ph["scatter"].gpu_s == pytest.approx(transfer_time_s(m, [(g0, g1, 8 * MiB)], p["dp.copy_latency_s"]))
    # the copies' launch latency comes from the parameters in use, not from the model's own
    slow = p.replace(dp__copy_latency_s=p["dp.copy_latency_s"] + 1e-3)
    scatter = {x.name: x for x in simulate_dataparallel(m, toy(), slow).phases}["scatter"]
    assert scatter.gpu_s == pytest.approx(ph["scatter"].gpu_s + 1e-3)
    assert ph["forward"].gpu_s == pytest.approx(0.010)
    assert r.gpu_path_s == pytest.approx(sum(x.gpu_s for x in r.phases))
    assert r.iteration_s == pytest.approx(max(r.gpu_path_s, r.host_path_s))
    assert r.iteration_s > r.single_gpu_iteration_s


def test_one_peer_copy_by_hand(h200) -> None:
    m = h200[2]
    g0, g1 = m.router.gpus
    route = m.router.route(g0, g1)
    bw = min(m.router.capacity_Bps[i] * m.params.link_efficiency(m.router.kind[i]) for i in route)
    assert transfer_time_s(m, [(g0, g1, 1e9)], m.params["dp.copy_latency_s"]) == pytest.approx(
        1e9 / bw + m.router.wire_latency_s(route) + m.params["dp.copy_latency_s"])


def test_threads_contend_for_forward_launches(h200) -> None:
    w = toy(host_s=0.008, forward_ops=200)
    base = Parameters().replace(dp__fresh_thread_s=0.0)       # no fresh-thread cost: the queue alone
    free = simulate_dataparallel(CostModel(h200[4].router, base.replace(dp__lock_handoff_s=0.0)), w)
    gil = simulate_dataparallel(CostModel(h200[4].router, base.replace(dp__lock_handoff_s=100e-6)), w)
    p = Parameters()
    # no hand-off cost: the four threads overlap; only their staggered starts and one join show
    assert {x.name: x.host_s for x in free.phases}["forward"] == pytest.approx(0.008 + 4 * p["dp.thread_s"])
    assert {x.name: x.host_s for x in gil.phases}["forward"] > 0.008 + 4 * p["dp.thread_s"]
    assert gil.iteration_s == pytest.approx(gil.host_path_s) and gil.limit.startswith("host-bound")
    assert gil.iteration_s > free.iteration_s


@pytest.mark.parametrize("threads, share, expected", [
    (1, 0.5, 0.030 + 0.006),              # one thread: cold start + launch, no hand-off
    (3, 0.0, 2 * 0.001 + 0.030 + 0.006),  # cold starts in parallel; last thread started 2 ms late
    (3, 1.0, 3 * 0.030 + 0.006),          # cold starts one after the other under the lock
])
def test_parallel_apply_by_hand(threads: int, share: float, expected: float) -> None:
    """Hand-computed cases with no hand-off cost (lock taken back for free)."""
    start = 0.001 if share == 0.0 else 0.0
    assert parallel_apply_s(threads, 0.006, 10, 0.030, share, 0.0, start) == pytest.approx(expected)


def test_hand_offs_queue_as_threads_are_added() -> None:
    """Launch only (no cold start), 100 operators of 50 us each, 20 us per hand-off: two threads
    alternate (each operator pays one hand-off, the lock is busy 40 of every 70 us); from four
    threads on the lock saturates and the time grows with their number."""
    t = [parallel_apply_s(n, 0.005, 100, 0.0, 0.0, 20e-6, 0.0) for n in (1, 2, 4, 8)]
    assert t[0] == pytest.approx(0.005)
    assert t[1] == pytest.approx(0.005 + 100 * 20e-6, rel=0.05)
    assert t[1] < t[2] < t[3]
    assert t[3] == pytest.approx(8 * 100 * 20e-6, rel=0.05)      # saturated: every hand-off in a row


def test_backward_device_threads_queue_on_the_gil() -> None:
    """Autograd's device threads free tensors Python held (PyObject preservation), one GIL
    acquisition each: one GPU pays nothing extra; more GPUs queue as the forwards do, with
    ``forward_ops + param_tensors`` acquisitions per thread."""
    f = DPFacts.from_workload(toy(host_s=0.008, forward_ops=94), 40e-6)      # 94 + 6 = 100 acquisitions
    assert backward_threads_s(1, f, 20e-6) == pytest.approx(0.008)
    assert backward_threads_s(4, f, 0.0) == pytest.approx(0.008)               # free hand-offs: in parallel
    t = [backward_threads_s(n, f, 20e-6) for n in (2, 4, 8)]
    assert t[0] == pytest.approx(parallel_apply_s(2, 0.008, 100, 0.0, 0.0, 20e-6, 0.0))
    assert 0.008 < t[0] < t[1] < t[2]
    assert t[2] == pytest.approx(8 * 100 * 20e-6, rel=0.05)                    # saturated lock


def test_host_costs_per_gpu_by_hand(h200) -> None:
    """Per coalesced chunk, one process issues every GPU's part of the NCCL call
    (``dp.nccl_device_s`` each); scatter and gather cost ``dp.copy_host_s`` per GPU."""
    p = Parameters().replace(dp__nccl_device_s=30e-6, dp__chunk_host_s=20e-6, dp__copy_host_s=40e-6,
                             dp__step_overhead_s=100e-6)
    for g in (2, 4):
        r = simulate_dataparallel(CostModel(h200[g].router, p), toy(host_s=0.008, modules=6))
        ph = {x.name: x for x in r.phases}
        assert ph["reduce"].host_s == pytest.approx(3 * (20e-6 + g * 30e-6))    # 3 chunks of two tensors
        assert ph["replicate"].host_s == pytest.approx(
            g * 6 * (p["dp.replicate_s_per_module"] + p["dp.replicate_s_per_tensor"]) + 3 * (20e-6 + g * 30e-6))
        assert ph["scatter"].host_s == pytest.approx(100e-6 + g * 40e-6)
        assert ph["gather"].host_s == pytest.approx(g * 40e-6)


def test_fresh_thread_cost_and_its_share_come_from_the_profile() -> None:
    w = toy(host_s=0.008, forward_fresh_thread_host_s=0.05, forward_warm_thread_host_s=0.01, forward_ops=50,
            forward_fresh_pair_host_s=0.08, forward_warm_pair_host_s=0.015)
    f = DPFacts.from_workload(w, 40e-6)
    assert f.cold_s == pytest.approx(0.04) and f.forward_ops == 50
    assert f.cold_lock_share == pytest.approx(0.065 / 0.04 - 1)
    unmeasured = DPFacts.from_workload(toy(host_s=0.008), 40e-6)
    assert unmeasured.cold_s is None and unmeasured.cold_lock_share is None


def test_unmeasured_fresh_thread_cost_is_the_parameter(h200) -> None:
    """A workload without the thread diagnostics (the zoo's) pays ``dp.fresh_thread_s`` per thread."""
    p = Parameters().replace(dp__lock_handoff_s=0.0, dp__cold_lock_share=0.0, dp__fresh_thread_s=0.03)
    r = simulate_dataparallel(CostModel(h200[2].router, p), toy(host_s=0.008))
    assert {x.name: x.host_s for x in r.phases}["forward"] == pytest.approx(0.03 + 0.008 + 2 * p["dp.thread_s"])


@settings(max_examples=20, deadline=None)
@given(handoff=st.floats(0, 2e-4), share=st.floats(0, 1), host=st.floats(0, 0.05), g=st.sampled_from([2, 4]))
def test_never_faster_than_one_gpu(h200, handoff: float, share: float, host: float, g: int) -> None:
    m = CostModel(h200[g].router, Parameters().replace(dp__lock_handoff_s=handoff, dp__cold_lock_share=share))
    r = simulate_dataparallel(m, toy(host_s=host, forward_fresh_thread_host_s=2 * host,
                                     forward_warm_thread_host_s=host, forward_ops=30))
    assert r.iteration_s >= r.single_gpu_iteration_s * (1 - 1e-12)


@settings(max_examples=20, deadline=None)
@given(handoff=st.floats(0, 2e-4), share=st.floats(0, 1), cold=st.floats(0, 0.05))
def test_more_threads_never_finish_sooner(handoff: float, share: float, cold: float) -> None:
    t = [parallel_apply_s(n, 0.005, 40, cold, share, handoff, 50e-6) for n in (1, 2, 3, 4)]
    assert all(b >= a * (1 - 1e-12) for a, b in zip(t, t[1:]))


def test_single_server_only() -> None:
    with pytest.raises(InputError, match="one process on one server"):
        simulate_dataparallel(CostModel(topologies.build("dgx-h100", nodes=2)), toy())


def test_zoo_workloads_know_what_they_move() -> None:
    f = DPFacts.from_workload(zoo_workload("gpt2", gpu="h100"), 20e-6)
    assert f.input_bytes_per_sample == 2 * 512 * 8 and f.output_grad_bytes_per_sample == 0
    assert f.output_bytes_per_sample == 512 * 50257 * 2
    r = DPFacts.from_workload(zoo_workload("resnet50", gpu="h100"), 20e-6)
    assert r.input_bytes_per_sample == 3 * 224 * 224 * 4 and r.forward_host_s == pytest.approx(161 * 20e-6)
    assert DPFacts.from_workload(zoo_workload("resnet50", gpu="h100"), 40e-6).backward_host_s == pytest.approx(161 * 40e-6)
    with pytest.raises(InputError, match="input_bytes_per_sample"):
        DPFacts.from_workload(toy(input_bytes_per_sample=-1), 0.0)


def test_study_strategy_and_backend_axes(tmp_path) -> None:
    from gpunetsim.study import evaluate, load_study
    f = tmp_path / "s.yaml"
    f.write_text("model: resnet50\ntopology: hgx-h200\ngpus: 2\nnodes: [1, 2]\nengine: closed\n"
                 "strategy: [ddp, dataparallel]\nbackend: [nccl, gloo]\n")
    points = load_study(f).points
    dp = [p for p in points if p.strategy == "dataparallel"]
    assert len(points) == 2 * 2 + 1 and len(dp) == 1 and dp[0].nodes == 1 and dp[0].backend == ""
    rows = {(p.strategy, p.backend, p.nodes): evaluate(p) for p in points}
    assert rows[("ddp", "gloo", 1)]["iteration_s"] > rows[("ddp", "nccl", 1)]["iteration_s"]
    assert rows[("dataparallel", "", 1)]["limit"] and rows[("dataparallel", "", 1)]["exposed_comm_s"] > 0
    f.write_text("model: resnet50\nbackend: mpi\n")
    with pytest.raises(InputError, match="backend"):
        load_study(f)


def test_dp_keys_passed_apart_give_the_model_with_those_keys(h200) -> None:
    """A host fit prices its trials on one model, passing the ``dp.`` keys apart: the same result as a
    model built with them, including the memoised GPU-side times (copy keys are part of the memo)."""
    w = toy(host_s=0.008, forward_ops=50)
    q = Parameters().replace(dp__lock_handoff_s=70e-6, dp__copy_Bps=5e9, dp__copy_latency_s=30e-6)
    shared = CostModel(h200[4].router)
    first = simulate_dataparallel(shared, w)                  # fills the memo with the datasheet copy keys
    apart = simulate_dataparallel(shared, w, q)
    own = simulate_dataparallel(CostModel(h200[4].router, q), w)
    assert apart == own and apart != first
