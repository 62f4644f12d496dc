"""Gloo and MPI collectives (host-based backends) and torch.distributed's support matrix."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from simulator.collectives.backends import SUPPORT, check_support
from simulator.collectives.params import Parameters
from simulator.core.errors import InputError
from simulator.core.vocabulary import OPS, Limit
from simulator.network.closed_form import CostModel
from simulator.network.host_collectives import HostCollectiveModel, collective_model, schedule


@pytest.fixture(scope="module")
def h200x2():
    return topologies.build("hgx-h200", gpus_per_node=2)


@pytest.mark.parametrize("backend, tensors, op, ok", [
    ("gloo", "cpu", "all_to_all", True), ("gloo", "cuda", "all_reduce", True),
    ("gloo", "cuda", "broadcast", True), ("gloo", "cuda", "all_gather", False),
    ("gloo", "cuda", "reduce", False), ("mpi", "cpu", "reduce_scatter", False),
    ("mpi", "cpu", "all_to_all", True), ("mpi", "cuda", "all_reduce", False),
    ("nccl", "cpu", "all_reduce", False), ("nccl", "cuda", "send_recv", True),
])
def test_support_matrix_is_pytorchs_table(backend: str, tensors: str, op: str, ok: bool) -> None:
    if ok:
        check_support(backend, tensors, op)
    else:
        with pytest.raises(InputError, match=f"{op} is not supported by {backend} on {tensors}"):
            check_support(backend, tensors, op)


def test_every_op_runs_somewhere() -> None:
    assert set().union(*SUPPORT.values()) == set(OPS)


def test_gloo_ring_two_processes_by_hand(h200x2) -> None:
    p = Parameters()
    m = HostCollectiveModel(h200x2, p, "gloo", "cpu")
    S = 64 * 2**20
    bw = min(p["gloo.loopback_Bps"], p["gloo.host_memory_Bps"] / 2)
    expected = (p["gloo.call_overhead_s"] + 2 * (p["gloo.step_latency_s.loopback"] + S / 2 / bw)
                + S / 2 / p["gloo.reduce_Bps"])
    t, algo, transport = m.best("all_reduce", S)
    assert t == pytest.approx(expected) and (algo, transport) == ("ring", "tcp")


def test_cuda_tensors_add_two_staging_copies(h200x2) -> None:
    cpu = HostCollectiveModel(h200x2, backend="gloo", tensors="cpu")
    cuda = HostCollectiveModel(h200x2, backend="gloo", tensors="cuda")
    S = 2**26
    assert cuda.time_s("all_reduce", S) - cpu.time_s("all_reduce", S) == pytest.approx(
        2 * S / cuda.staging_Bps() + Parameters()["gloo.staging_overhead_s"])
    assert cuda.timing("all_reduce", S).limit in (Limit.HOST, Limit.PCIE)


@pytest.mark.parametrize("n, steps", [(2, 2), (4, 4), (3, 4), (8, 6)])
def test_halving_doubling_steps(n: int, steps: int) -> None:
    assert len(schedule("all_reduce", "halving_doubling", n)) == steps
    assert len(schedule("all_reduce", "ring", n)) == 2 * (n - 1)


@pytest.mark.parametrize("op", OPS)
def test_schedules_reach_every_rank(op: str) -> None:
    """Every rank sends or receives in every collective (no rank forgotten)."""
    for n in (2, 3, 5, 8):
        touched = {r for s in schedule(op, "ring" if op == "all_reduce" else "", n) for pair in s.pairs for r in pair}
        assert touched == set(range(n))


def test_across_servers_pays_the_network_and_one_tcp_stream() -> None:
    G = topologies.build("dgx-h100", nodes=2, gpus_per_node=1)
    p = Parameters()
    m = HostCollectiveModel(G, p, "gloo", "cpu")
    t = m.timing("all_reduce", 2**28)
    assert t.limit is Limit.NET and t.transport == "tcp"
    assert t.wire_s == pytest.approx(2 * 2**27 / p["gloo.tcp_stream_max_Bps"])
    assert t.latency_s == pytest.approx(2 * p["gloo.step_latency_s.net"])     # slowest_of(2) = 1


def test_mpi_auto_is_the_faster_algorithm() -> None:
    m = HostCollectiveModel(topologies.build("dgx-h100", gpus_per_node=8), backend="mpi")
    for size in (4096, 2**28):
        assert m.time_s("all_reduce", size) == min(m.time_s("all_reduce", size, a)
                                                   for a in ("ring", "halving_doubling"))


@settings(max_examples=30, deadline=None)
@given(a=st.integers(1, 2**30), b=st.integers(1, 2**30), g=st.sampled_from([2, 4, 8]))
def test_more_bytes_never_faster(a: int, b: int, g: int) -> None:
    m = HostCollectiveModel(topologies.build("dgx-h100", gpus_per_node=g), backend="gloo")
    lo, hi = sorted((a, b))
    assert m.time_s("all_reduce", lo) <= m.time_s("all_reduce", hi)


def test_factory_and_nccl_on_cpu(h200x2) -> None:
    assert isinstance(collective_model(h200x2), CostModel)
    assert isinstance(collective_model(h200x2, backend="mpi"), HostCollectiveModel)
    with pytest.raises(InputError, match="NCCL runs no collective on CPU tensors"):
        collective_model(h200x2, backend="nccl", tensors="cpu")
    with pytest.raises(InputError, match="halving_doubling"):
        HostCollectiveModel(h200x2).best("all_reduce", 8, "tree")


def test_ddp_on_gloo_is_closed_form_and_slower() -> None:
    from simulator.training.ddp import simulate_iteration
    from simulator.training.zoo import zoo_workload
    G = topologies.build("hgx-h200", gpus_per_node=4)
    w = zoo_workload("resnet50", gpu="h200")
    nccl = simulate_iteration(CostModel(G), w, engine="des")
    gloo = simulate_iteration(HostCollectiveModel(G, backend="gloo", tensors="cuda"), w, engine="des")
    assert gloo.engine == "closed" and gloo.iteration_s > nccl.iteration_s
    assert gloo.buckets and all(b.proto == "tcp" for b in gloo.buckets)


def test_step_latency_grows_as_the_last_of_n_wakeups() -> None:
    """A step on n processes waits for the last of n wake-ups: H(n)/H(2) times a step on two
    (1, 25/18, 761/420 for 2, 4, 8), growing with n but slower than log2(n)."""
    from simulator.network.host_collectives import slowest_of
    assert slowest_of(1) == slowest_of(2) == 1.0
    assert slowest_of(4) == pytest.approx(25 / 18)
    assert slowest_of(8) == pytest.approx(761 / 420)
    p = Parameters()
    lat = {n: HostCollectiveModel(topologies.build("hgx-h200", gpus_per_node=n), p, "gloo", "cpu")
           .timing("all_reduce", 4096).latency_s for n in (2, 4, 8)}
    step = p["gloo.step_latency_s.loopback"]
    for n in (2, 4, 8):      # ring: 2(n-1) steps
        assert lat[n] == pytest.approx(2 * (n - 1) * step * slowest_of(n))


@pytest.mark.parametrize("op", ["broadcast", "all_reduce"])
def test_cli_names_the_op_asked_for_when_the_backend_runs_none(capsys, op) -> None:
    """``collective --backend mpi --tensors cuda --op broadcast`` said 'send_recv is not supported' (the op the
    host model checks first), not the op the user asked for."""
    from gpunetsim.cli import main
    assert main(["collective", "--backend", "mpi", "--tensors", "cuda", "--op", op, "-b", "1M", "-e", "1M"]) == 2
    err = capsys.readouterr().err
    assert f"--backend: {op} is not supported by mpi on cuda tensors" in err and "send_recv" not in err
