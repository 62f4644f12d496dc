"""The DDP iteration model against hand-computed overlap cases, and des against closed."""

import json

import pytest
from hypothesis import given, settings, strategies as st

import topologies
from simulator.core.vocabulary import Limit
from gpunetsim.cli import main
from simulator.network.closed_form import CostModel
from simulator.training.ddp import DDPConfig, simulate_iteration, stretched_time
from simulator.collectives.params import ideal
from gpunetsim.trace import write_chrome_trace
from simulator.training.workload import ParamGrad, Workload, save_workload
from tests.conftest import line_topology

MS = 1e-3
BW = 100e9          # line_topology's link: 100 GB/s, 1 us
FWD, BWD, OPT = 1 * MS, 4 * MS, 0.5 * MS
ONE_BUCKET = DDPConfig(bucket_cap_mb=1000, first_bucket_mb=None, gradient_as_bucket_view=True)
OWN_BUCKETS = DDPConfig(bucket_cap_mb=1, first_bucket_mb=None,       # every 50 MB param alone
                        gradient_as_bucket_view=True)


def all_reduce_s(size_bytes: float) -> float:
    """Ring all-reduce of 2 GPUs on one link with ideal parameters: 2 steps of 1 us + S/B."""
    return 2e-6 + size_bytes / BW


def params(**ddp: float):
    base = {"ddp.bucket_overhead_s": 0.0, "ddp.bucket_copy_Bps": 1e15, "ddp.compute_slowdown": 0.0,
            "ddp.iteration_overhead_s": 0.0}
    return ideal().with_values({**base, **{f"ddp.{k}": v for k, v in ddp.items()}})


def workload(*grads: tuple[int, float], name: str = "tiny") -> Workload:
    """Parameters in registration order as (bytes, ready seconds from backward start)."""
    ps = tuple(ParamGrad(f"p{i}", b, r) for i, (b, r) in enumerate(grads))
    return Workload(name, FWD, BWD, OPT, ps, batch_size=32)


@pytest.fixture
def model():
    return CostModel(line_topology(2), params())


@pytest.mark.parametrize("ready_s", [1 * MS, 3 * MS, 3.9 * MS, 4 * MS])
def test_one_bucket_overlaps_backward(model, ready_s):
    w = workload((10**7, ready_s), (10**7, 0.5 * MS))
    r = simulate_iteration(model, w, ONE_BUCKET)
    assert len(r.buckets) == 1
    comm_end = ready_s + all_reduce_s(2 * 10**7)
    assert r.iteration_s == pytest.approx(FWD + max(BWD, comm_end) + OPT, rel=1e-9)
    assert r.exposed_comm_s == pytest.approx(max(0.0, comm_end - BWD), rel=1e-6, abs=1e-12)
    assert r.buckets[0].ready_s == pytest.approx(FWD + ready_s, rel=1e-12)


def test_second_bucket_waits_for_the_comm_stream(model):
    # registration order: p0, p1; p1's gradient arrives first, so it is bucket 0
    w = workload((5 * 10**7, 1.1 * MS), (5 * 10**7, 1.0 * MS))
    r = simulate_iteration(model, w, OWN_BUCKETS)
    b0, b1 = r.buckets
    ar = all_reduce_s(5 * 10**7)
    assert b0.start_s == pytest.approx(FWD + 1.0 * MS, rel=1e-12)
    assert b1.ready_s == pytest.approx(FWD + 1.1 * MS, rel=1e-12)
    assert b1.start_s == pytest.approx(b0.end_s, rel=1e-12)          # not at its ready time
    assert b1.end_s == pytest.approx(FWD + 1.0 * MS + 2 * ar, rel=1e-9)
    assert r.exposed_comm_s == 0.0
    assert r.iteration_s == pytest.approx(FWD + BWD + OPT, rel=1e-12)


@pytest.mark.parametrize("compression", ["bf16", "fp16"])
def test_compression_halves_the_bytes(model, compression):
    w = workload((4 * 10**7, 1 * MS))
    r = simulate_iteration(model, w, DDPConfig(bucket_cap_mb=1000, compression=compression))
    (b,) = r.buckets
    assert b.comm_bytes == 2 * 10**7
    assert b.end_s - b.allreduce_start_s == pytest.approx(all_reduce_s(2 * 10**7), rel=1e-9)


def test_compression_of_half_precision_gradients_changes_nothing(model):
    ps = (ParamGrad("w", 4 * 10**7, 1 * MS, "bfloat16"),)
    w = Workload("bf16", FWD, BWD, OPT, ps)
    (b,) = simulate_iteration(model, w, DDPConfig(bucket_cap_mb=1000, compression="bf16",
                                                  gradient_as_bucket_view=True)).buckets
    assert b.comm_bytes == 4 * 10**7
    assert b.allreduce_start_s == b.start_s


@pytest.mark.parametrize("view", [False, True])
def test_bucket_view_removes_the_copy(view):
    m = CostModel(line_topology(2), params(bucket_overhead_s=20e-6, bucket_copy_Bps=1e11))
    w = workload((2 * 10**7, 1 * MS))
    (b,) = simulate_iteration(m, w, DDPConfig(bucket_cap_mb=1000, gradient_as_bucket_view=view)).buckets
    copy = 0.0 if view else 2 * 10**7 / 1e11
    assert b.allreduce_start_s - b.start_s == pytest.approx(20e-6 + copy, rel=1e-9)
    assert b.end_s - b.start_s == pytest.approx(20e-6 + copy + all_reduce_s(2 * 10**7), rel=1e-9)


def test_accumulation_runs_k_micro_steps_and_one_sync(model):
    k = 4
    w = workload((10**7, 3.9 * MS), (10**7, 0.5 * MS))
    r = simulate_iteration(model, w, DDPConfig(bucket_cap_mb=1000, first_bucket_mb=None,
                                                 gradient_as_bucket_view=True, accumulation_steps=k))
    names = [rec.name for rec in r.records if rec.track == "compute"]
    assert sum(n.startswith("forward") for n in names) == k
    assert sum(n.startswith("backward") for n in names) == k
    assert sum(rec.name.startswith("bucket 0 all_reduce") for rec in r.records) == 1
    comm_end = 3.9 * MS + all_reduce_s(2 * 10**7)
    assert r.iteration_s == pytest.approx((k - 1) * (FWD + BWD) + FWD + comm_end + OPT, rel=1e-9)
    assert r.forward_s == pytest.approx(k * FWD)
    assert r.samples_per_s == pytest.approx(2 * 32 * k / r.iteration_s)


@pytest.mark.parametrize("engine", ["des", "closed"])
def test_compute_slowdown_stretches_backward(engine):
    m = CostModel(line_topology(2), params(compute_slowdown=1.0))
    w = workload((5 * 10**7, 1 * MS))
    r = simulate_iteration(m, w, ONE_BUCKET, engine)
    ar = all_reduce_s(5 * 10**7)
    # during the all-reduce backward runs at half speed: ar/2 of work done, the rest after
    expected_bwd = 1 * MS + ar + (BWD - 1 * MS - ar / 2)
    assert r.backward_s == pytest.approx(expected_bwd, rel=1e-9)
    assert r.iteration_s == pytest.approx(FWD + expected_bwd + OPT, rel=1e-9)


def test_slowdown_stretches_later_ready_times():
    m = CostModel(line_topology(2), params(compute_slowdown=1.0))
    w = workload((5 * 10**7, 2 * MS), (5 * 10**7, 1 * MS))
    r = simulate_iteration(m, w, OWN_BUCKETS)
    ar = all_reduce_s(5 * 10**7)
    assert r.buckets[1].ready_s == pytest.approx(FWD + 1 * MS + ar + (1 * MS - ar / 2), rel=1e-9)


@pytest.mark.parametrize("intervals,work,expected", [
    ([], 3.0, 3.0),
    ([(1.0, 2.0)], 3.0, 3.5),          # 0.5 of work in the slowed second
    ([(1.0, 2.0)], 0.5, 0.5),
    ([(1.0, 2.0)], 1.25, 1.5),
    ([(0.0, 1.0), (2.0, 4.0)], 2.5, 4.0),
    ([(0.0, 1.0), (2.0, 4.0)], 3.0, 4.5),
])
def test_stretched_time(intervals, work, expected):
    assert stretched_time(0.0, work, intervals, 1.0) == pytest.approx(expected)


@pytest.fixture(scope="module")
def cluster():
    from simulator.training.zoo import zoo_workload
    return topologies.build("dgx-h100", nodes=2), zoo_workload("resnet50", gpu="h100")


@pytest.mark.parametrize("config", [DDPConfig(), DDPConfig(bucket_cap_mb=5, first_bucket_mb=None),
                                    DDPConfig(compression="bf16", gradient_as_bucket_view=True),
                                    DDPConfig(accumulation_steps=2)])
@pytest.mark.parametrize("slowdown", [0.0, 0.3])
def test_des_agrees_with_closed(cluster, config, slowdown):
    G, w = cluster
    m = CostModel(G, params(compute_slowdown=slowdown, bucket_overhead_s=20e-6, bucket_copy_Bps=1e12))
    des, closed = simulate_iteration(m, w, config, "des"), simulate_iteration(m, w, config, "closed")
    rel = 1e-9 if slowdown == 0 else 1e-2
    assert des.iteration_s == pytest.approx(closed.iteration_s, rel=rel)
    assert des.exposed_comm_s == pytest.approx(closed.exposed_comm_s, rel=rel, abs=1e-12)
    for a, b in zip(des.buckets, closed.buckets):
        assert (a.start_s, a.end_s) == pytest.approx((b.start_s, b.end_s), rel=rel)


@pytest.mark.parametrize("engine", ["des", "closed"])
def test_one_gpu_has_no_communication(engine):
    m = CostModel(topologies.build("dgx-h100", gpus_per_node=1), params())
    w = workload((10**7, 3.9 * MS))
    r = simulate_iteration(m, w, engine=engine)
    assert r.buckets == () and r.comm_s == 0.0 and r.exposed_comm_s == 0.0
    assert r.iteration_s == pytest.approx(FWD + BWD + OPT)
    assert r.scaling_efficiency == 1.0 and r.limit is Limit.COMPUTE
    assert not [rec for rec in r.records if rec.track == "comm"]


def test_scaling_efficiency_is_per_gpu_throughput_over_one_gpu(model):
    r = simulate_iteration(model, workload((10**7, 3.9 * MS)), ONE_BUCKET)
    single_samples_per_s = 32 / (FWD + BWD + OPT)
    assert r.scaling_efficiency == pytest.approx(r.samples_per_s / 2 / single_samples_per_s)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 10**8), st.floats(0, BWD)), min_size=1, max_size=8),
       st.floats(1, 50), st.floats(0, 1))
def test_never_faster_than_one_gpu_and_engines_agree(grads, cap_mb, slowdown):
    m = CostModel(line_topology(2), params(compute_slowdown=slowdown))
    w = workload(*grads)
    cfg = DDPConfig(bucket_cap_mb=cap_mb)
    des, closed = simulate_iteration(m, w, cfg, "des"), simulate_iteration(m, w, cfg, "closed")
    assert des.iteration_s >= des.single_gpu_iteration_s * (1 - 1e-12)
    assert des.iteration_s == pytest.approx(closed.iteration_s, rel=1e-6)


def test_trace_is_valid_json_with_both_tracks(model, tmp_path):
    r = simulate_iteration(model, workload((10**7, 3.9 * MS), (10**7, 0.5 * MS)), ONE_BUCKET)
    path = tmp_path / "trace.json"
    write_chrome_trace(r.records, path, {"workload": "tiny"})
    data = json.loads(path.read_text())
    threads = {e["args"]["name"] for e in data["traceEvents"] if e["name"] == "thread_name"}
    assert threads == {"compute", "comm"}
    complete = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert len(complete) == len(r.records)
    assert max(e["ts"] + e["dur"] for e in complete) == pytest.approx(r.iteration_s * 1e6)
    assert data["otherData"] == {"workload": "tiny"}


# ------------------------------------------------------------------------------------ CLI
def test_cli_json_fields(capsys, tmp_path):
    trace = tmp_path / "t.json"
    assert main(["ddp", "--workload", "resnet50", "--gpus", "2", "--json", "--trace", str(trace)]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("iteration_s", "forward_s", "backward_s", "optimizer_s", "exposed_comm_s", "buckets",
                "samples_per_s", "scaling_efficiency", "limit"):
        assert key in out
    assert out["gpus"] == 2 and out["buckets"][0]["index"] == 0
    assert json.loads(trace.read_text())["traceEvents"]


def test_cli_reads_a_workload_file(capsys, tmp_path):
    path = tmp_path / "w.json"
    save_workload(workload((10**7, 3.9 * MS), (10**7, 0.5 * MS)), path)
    assert main(["ddp", "--workload", str(path), "--gpus", "2", "--bucket-cap-mb", "1000"]) == 0
    out = capsys.readouterr().out
    assert "exposed comm" in out and "limit:" in out and "samples/s" in out


@pytest.mark.parametrize("argv", [
    ["--workload", "no-such-model"],
    ["--workload", "BAD_FILE"],
    ["--workload", "resnet50", "--accumulation-steps", "0"],
    ["--workload", "resnet50", "--first-bucket-mb", "lots"],
    ["--workload", "resnet50", "--topology", "pcie-gen4"],       # GPU unknown: needs --gpu
])
def test_cli_bad_input_exits_2(capsys, tmp_path, argv):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "forward_s": 1}')
    argv = [str(bad) if a == "BAD_FILE" else a for a in argv]
    assert main(["ddp", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpunetsim: error:") and len(err.strip().splitlines()) == 1


def test_docs_example_output(capsys):
    """The worked example in docs/ddp-model.md is real output."""
    import pathlib
    import shlex
    doc = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "ddp-model.md").read_text()
    block = doc.split("```console\n", 1)[1].split("```", 1)[0]
    command, expected = block.split("\n", 1)
    assert main(shlex.split(command.removeprefix("$ gpunetsim "))) == 0
    assert capsys.readouterr().out == expected


def test_replica_state_counts_parameters_from_the_one_dtype_table_and_refuses_an_unknown_dtype():
    """replica_state_bytes (``fits``) counts each gradient's elements by its dtype from simulator.core.vocabulary
    (an alias such as ``bf16`` is 2 bytes, not the 4 an unknown name used to get) and refuses a dtype it does not
    know, naming the workload, the parameter and the value (rv21)."""
    from simulator.core.errors import InputError
    from simulator.training.ddp import REPLICA_STATE_BYTES_PER_PARAM, replica_state_bytes
    from simulator.training.workload import ParamGrad, Workload
    w = Workload("w", 1e-3, 2e-3, 1e-4, (ParamGrad("a", 4000, 1e-3, "float32"), ParamGrad("b", 2000, 1e-3, "bf16")))
    assert replica_state_bytes(w) == REPLICA_STATE_BYTES_PER_PARAM * 2000
    bad = Workload("mine.yaml", 1e-3, 2e-3, 1e-4, (ParamGrad("fc.weight", 4000, 1e-3, "float12"),))
    with pytest.raises(InputError) as e:
        replica_state_bytes(bad)
    assert str(e.value).startswith("mine.yaml: params.fc.weight.dtype: unknown dtype")
    assert "'float12'" in str(e.value)
