"""Real-run runners on CPU: gloo, 2 processes under torchrun, toy sizes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from simulator.core.vocabulary import busbw_factor as bus_factor, size_ladder
from validation.runners.collectives import op_sizes, plan_points
from validation.runners.ddp import percentile
from validation.runners.sweep import ALWAYS_ENV, parse_extra_variant, variant_env

REPO = Path(__file__).resolve().parents[1]
COLL_FIELDS = {"kind", "op", "world", "bytes", "dtype", "time_s", "min_s", "max_s", "iters",
               "reps", "variant", "env", "algbw_GBps", "busbw_GBps", "launch_id"}
DDP_FIELDS = {"backend", "batch_size", "bucket_cap_mb", "device", "driver_version", "env", "gpu", "grad_bytes",
              "hostname", "iter_times_s", "iters", "kind", "launch_id", "launch_index", "median_s", "model",
              "model_source", "nccl_version", "nosync_iter_times_s", "nosync_median_s", "nosync_p10_s",
              "nosync_p90_s", "optimizer", "p10_s", "p90_s", "params", "precision", "sync_warmup", "tiny",
              "torch_version", "warmup", "world"}
"""Every field of a ``kind:"ddp"`` record (the DDP runner's), as before its timing loop became
validation.runners.ddp.timed_steps (shared with the ddp_compute runner)."""
COMPUTE_FIELDS = {"backend", "batch_size", "bucket_cap_mb", "device", "driver_version", "env", "gpu", "host_iter_s",
                  "hostname", "iter_times_s", "iters", "kind", "launch_id", "max_iter_times_s", "median_s", "model",
                  "nccl_version", "optimizer", "precision", "rank_iter_times_s", "round", "tiny", "torch_version",
                  "variant", "warmup", "world"}
"""Every field of a ``kind:"ddp_compute"`` record (the profile variant adds ``profile``)."""
WORKLOAD_KEYS = ["name", "forward_s", "backward_s", "optimizer_s", "batch_size", "device",
                 "dtype", "params"]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_module(args: list[str], timeout_s: float = 120, extra_env: dict[str, str] | None = None,
               returncode: int = 0) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", **(extra_env or {})}
    done = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout_s)
    assert done.returncode == returncode, done.stdout[-3000:] + done.stderr[-3000:]
    return done


CPU_ARGS = ["--backend", "gloo", "--device", "cpu"]
SMALL_COLL = ["--min-bytes", "64", "--max-bytes", "256", "--factor", "4", "--warmup", "1",
              "--iters", "3", "--reps", "2", *CPU_ARGS]


# ------------------------------------------------------------------ pure pieces (no torch)


@pytest.mark.parametrize("op, world, factor", [
    ("all_reduce", 8, 2 * 7 / 8), ("all_reduce", 2, 1.0), ("all_gather", 8, 7 / 8),
    ("reduce_scatter", 4, 3 / 4), ("all_to_all", 2, 1 / 2), ("broadcast", 8, 1.0),
    ("reduce", 8, 1.0), ("send_recv", 2, 1.0)])
def test_bus_factor_matches_nccl_tests(op: str, world: int, factor: float) -> None:
    assert bus_factor(op, world) == pytest.approx(factor)


def test_size_ladder_is_nccl_tests_b_e_f() -> None:
    assert size_ladder(4, 64, 2) == [4, 8, 16, 32, 64]


@pytest.mark.parametrize("op, expected", [
    ("all_reduce", [(4, 1), (8, 2), (12, 3), (24, 6)]),
    ("all_gather", [(12, 1), (24, 2)]),  # world 3: multiples of 3 x 4 bytes; 4 and 8 round to 0
])
def test_op_sizes_round_down_and_skip_zero_and_repeats(op: str, expected: list) -> None:
    assert op_sizes(op, 3, 4, [4, 8, 12, 13, 24]) == expected


def test_plan_skips_done_points_and_send_recv_on_one_rank() -> None:
    done = {("default", "all_reduce", 2, 64, "float32")}
    pts = plan_points(["all_reduce"], 2, "float32", [64, 256], "default", done)
    assert [(p.op, p.size_bytes) for p in pts] == [("all_reduce", 256)]
    assert plan_points(["send_recv"], 1, "float32", [64], "default", set()) == []


def test_variant_env_always_disables_nvls() -> None:
    env = variant_env("socket", {})
    assert env["NCCL_P2P_DISABLE"] == "1" and env["NCCL_SHM_DISABLE"] == "1"
    assert all(env[k] == v for k, v in ALWAYS_ENV.items())
    assert variant_env("ring", {})["NCCL_ALGO"] == "Ring"


def test_extra_variant_parses() -> None:
    assert parse_extra_variant("x:NCCL_ALGO=Tree,NCCL_PROTO=LL") == (
        "x", {"NCCL_ALGO": "Tree", "NCCL_PROTO": "LL"})


def test_percentile_is_linear_interpolation() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 10) == pytest.approx(1.4)
    assert percentile([3.0], 90) == 3.0


def test_import_validation_needs_no_torch() -> None:
    code = ("import sys; sys.modules['torch'] = None; import validation.runners.collectives, "
            "validation.runners.sweep, validation.runners.ddp, validation.runners.ddp_sweep, "
            "validation.profiler")
    run_module(["-c", code])


# ------------------------------------------------------------------ torchrun runs


def test_collectives_runner_records(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "c.jsonl"
    run_module(["-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone", "-m",
                "validation.runners.collectives", "--ops", "all_reduce,all_gather,reduce_scatter,"
                "broadcast,reduce,all_to_all,send_recv", *SMALL_COLL, "--out", str(out)])
    recs = records(out)
    assert recs[0]["kind"] == "meta" and "torch_version" in recs[0] and "nvidia_smi_topo" in recs[0]
    colls = [r for r in recs if r["kind"] == "coll"]
    assert {r["op"] for r in colls} == {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                        "reduce", "all_to_all", "send_recv"}
    for r in colls:
        assert COLL_FIELDS <= r.keys()
        assert r["world"] == 2 and r["iters"] == 3 and r["reps"] == 2
        assert 0 < r["min_s"] <= r["time_s"] <= r["max_s"]
        assert len(r["rank_rep_times_s"]) == 2 and r["rep_times_s"] == [max(c) for c in zip(*r["rank_rep_times_s"])]
        # gloo blocks the caller: a rank's host time per call is its own time of that repetition
        assert r["rank_host_times_s"] == r["rank_rep_times_s"]
        assert r["algbw_GBps"] == pytest.approx(r["bytes"] / r["time_s"] / 1e9)
        assert r["busbw_GBps"] == pytest.approx(r["algbw_GBps"] * bus_factor(r["op"], 2))
    assert {r["bytes"] for r in colls if r["op"] == "all_gather"} == {64, 256}
    from validation.parsers import load_measurements
    assert len(load_measurements(str(out)).points) == len(colls)


def test_sweep_records_failure_goes_on_and_rerun_skips(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "s.jsonl"
    common = ["-m", "validation.runners.sweep", "--nproc", "2", "--ops",
              "all_reduce,all_gather,broadcast", *SMALL_COLL, "--out", str(out)]
    failing = run_module([*common, "--variants", "broken,default",
                          "--extra-variant", "broken:GPUNETSIM_TEST_FAIL=all_gather"], timeout_s=200,
                         returncode=1)
    assert "sweep incomplete" in failing.stderr and "broken: " in failing.stderr
    recs = records(out)
    failed = [r for r in recs if r["kind"] == "coll_failed"]
    assert [(r["variant"], r["op"]) for r in failed] == [("broken", "all_gather")]
    got = {(r["variant"], r["op"]) for r in recs if r["kind"] == "coll"}
    assert got == {("broken", "all_reduce"), ("broken", "broadcast"), ("default", "all_reduce"),
                   ("default", "all_gather"), ("default", "broadcast")}
    meta = [r for r in recs if r["kind"] == "meta"]
    assert all(r["env"].get("NCCL_NVLS_ENABLE") == "0" for r in meta)
    before = out.read_text()
    done = run_module([*common, "--variants", "default"])
    assert out.read_text() == before
    assert "nothing left to measure" in done.stderr


def test_ddp_sweep_keeps_every_iteration_and_separate_launches(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "d.jsonl"
    args = ["-m", "validation.runners.ddp_sweep", "--nproc", "2", "--models", "mlp", "--tiny",
            "--batch-size", "4", "--bucket-caps", "0.01,25", "--iters", "4", "--warmup", "1",
            "--launches", "2", *CPU_ARGS, "--out", str(out)]
    run_module(args, timeout_s=200)
    ddp = [r for r in records(out) if r["kind"] == "ddp"]
    assert len(ddp) == 4
    assert len({r["launch_id"] for r in ddp}) == 2
    for r in ddp:
        assert r.keys() == DDP_FIELDS
        assert r["world"] == 2 and r["model"] == "mlp" and r["bucket_cap_mb"] in (0.01, 25.0)
        assert len(r["iter_times_s"]) == 4 and len(r["nosync_iter_times_s"]) == 4
        assert all(t > 0 for t in r["iter_times_s"] + r["nosync_iter_times_s"])
        assert r["p10_s"] <= r["median_s"] <= r["p90_s"]
    before = out.read_text()
    run_module(args)
    assert out.read_text() == before


def test_dp_sweep_records_ddp_profile_and_dataparallel_per_launch(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "dp.jsonl"
    args = ["-m", "validation.runners.dp_sweep", "--nproc", "2", "--models", "mlp,gpt2", "--tiny",
            "--batch-size", "4", "--iters", "3", "--warmup", "1", "--launches", "2",
            "--device", "cpu", "--out", str(out)]
    run_module(args, timeout_s=200)
    recs = records(out)
    assert [r["kind"] for r in recs].count("meta") == 2
    for kind in ("ddp", "dp_profile", "dp"):
        got = [r for r in recs if r["kind"] == kind]
        assert sorted((r["model"], r["launch_index"]) for r in got) == \
            [("gpt2", 0), ("gpt2", 1), ("mlp", 0), ("mlp", 1)]
    for r in recs:
        if r["kind"] == "dp":
            assert r["gpus"] == 1 and r["global_batch_size"] == 4 and len(r["iter_times_s"]) == 3
            assert r["p10_s"] <= r["median_s"] <= r["p90_s"]
        if r["kind"] == "dp_profile":
            prof = r["profile"]
            assert set(WORKLOAD_KEYS) <= prof.keys() and prof["batch_size"] == 4
            assert prof["param_bytes"] == sum(p["bytes"] for p in prof["params"])
            assert prof["input_bytes_per_sample"] > 0 and prof["forward_host_s"] > 0
            assert prof["forward_fresh_thread_host_s"] > 0 and prof["forward_warm_thread_host_s"] > 0
            assert prof["forward_ops"] > 4      # at least the layers' matmuls and the loss
            assert prof["forward_fresh_pair_host_s"] > 0 and prof["forward_warm_pair_host_s"] > 0
    from simulator.training.workload import workload_from_dict
    w = workload_from_dict(next(r for r in recs if r["kind"] == "dp_profile")["profile"])
    assert dict(w.extras)["param_tensors"] == len(w.params)
    before = out.read_text()
    run_module(args)
    assert out.read_text() == before


@pytest.mark.slow
def test_ddp_compute_runner_interleaves_variants(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "c.jsonl"
    run_module(["-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
                "-m", "validation.runners.ddp_compute", "--models", "mlp", "--tiny", "--batch-size", "4",
                "--rounds", "2", "--iters", "2", "--warmup", "1", *CPU_ARGS, "--out", str(out)], timeout_s=200)
    recs = [r for r in records(out) if r["kind"] == "ddp_compute"]
    # on the CPU the queued variant (a GPU sleep) is skipped
    assert [(r["round"], r["variant"]) for r in recs] == \
        [(i, v) for i in (0, 1) for v in ("plain", "profile", "nosync", "sync")]
    for r in recs:
        assert r.keys() == COMPUTE_FIELDS | ({"profile"} if r["variant"] == "profile" else set())
        assert r["world"] == 2 and len(r["rank_iter_times_s"]) == 2
        assert r["median_s"] > 0 and len(r["max_iter_times_s"]) == len(r["iter_times_s"])
        if r["variant"] != "profile":        # one host gap per timed step, each at least the step itself
            assert len(r["host_iter_s"]) == len(r["iter_times_s"]) == 2
            assert all(h >= t > 0 for h, t in zip(r["host_iter_s"], r["iter_times_s"]))
        assert all(max(col) == m for col, m in zip(zip(*r["rank_iter_times_s"]), r["max_iter_times_s"]))
    prof = next(r for r in recs if r["variant"] == "profile")["profile"]
    from validation.models import build_workload
    check_workload(prof, [n for n, _ in build_workload("mlp", tiny=True).model.named_parameters()])


def test_timed_steps_is_every_runners_loop_on_cpu() -> None:
    pytest.importorskip("torch")
    from validation.runners.ddp import time_iterations, timed_steps
    calls: list[int] = []

    def step() -> None:
        calls.append(1)
        time.sleep(0.002)
    times, host = timed_steps(step, 3, is_cuda=False)
    assert len(calls) == 3 and len(times) == len(host) == 3
    assert all(h >= t >= 0.002 for h, t in zip(host, times))
    plain = time_iterations(step, 2, is_cuda=False)
    assert len(calls) == 5 and len(plain) == 2 and all(t >= 0.002 for t in plain)


def test_ddp_sweep_records_failed_launch(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "d.jsonl"
    run_module(["-m", "validation.runners.ddp_sweep", "--nproc", "2", "--models", "mlp", "--tiny",
                "--launches", "1", *CPU_ARGS, "--extra-env", "GPUNETSIM_TEST_FAIL=1",
                "--out", str(out)], timeout_s=200, returncode=1)
    assert [r["kind"] for r in records(out)] == ["ddp_failed"]


@pytest.mark.slow
def test_sweep_kills_hung_launch(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "h.jsonl"
    run_module(["-m", "validation.runners.sweep", "--nproc", "2", "--ops", "all_reduce",
                *SMALL_COLL, "--variants", "hang", "--extra-variant",
                "hang:GPUNETSIM_TEST_HANG=all_reduce", "--launch-timeout-s", "20",
                "--out", str(out)], timeout_s=200, returncode=1)
    failed = [r for r in records(out) if r["kind"] == "coll_failed"]
    assert failed and failed[0]["timed_out"] and failed[0]["op"] == "all_reduce"


# ------------------------------------------------------------------ models and profiler


@pytest.fixture
def one_thread() -> Any:
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(n)


@pytest.mark.parametrize("name, params", [
    ("resnet50", 25_557_032), ("bert-base", 109_514_298), ("gpt2", 124_439_808),
    ("mlp", 8 * (4096 * 4096 + 4096))])
def test_own_models_match_library_parameter_counts(one_thread: Any, name: str, params: int) -> None:
    from validation.models import build_workload, param_count
    assert param_count(build_workload(name, use_libraries=False).model) == params


@pytest.mark.parametrize("name", ["resnet50", "bert-base", "gpt2", "mlp"])
def test_tiny_models_train(one_thread: Any, name: str) -> None:
    from validation.models import build_workload
    w = build_workload(name, tiny=True)
    loss = w.loss(w.model, w.make_batch(2, one_thread.device("cpu"), None))
    loss.backward()
    assert all(p.grad is not None for p in w.model.parameters())


def check_workload(w: dict[str, Any], names: list[str]) -> None:
    assert list(w) == WORKLOAD_KEYS
    assert [p["name"] for p in w["params"]] == names
    assert w["forward_s"] > 0 and w["backward_s"] > 0 and w["optimizer_s"] >= 0
    for p in w["params"]:
        assert list(p) == ["name", "bytes", "grad_ready_s", "dtype"]
        assert 0 <= p["grad_ready_s"] <= w["backward_s"] * 1.2


def test_profiler_live_capture(one_thread: Any, tmp_path: Path) -> None:
    from validation.models import build_workload
    from validation.profiler import main
    out = tmp_path / "w.json"
    assert main(["--model", "mlp", "--tiny", "--batch-size", "4", "--iters", "5", "--warmup", "2",
                 "--device", "cpu", "--out", str(out)]) == 0
    w = json.loads(out.read_text())
    model = build_workload("mlp", tiny=True).model
    check_workload(w, [n for n, _ in model.named_parameters()])
    assert [p["bytes"] for p in w["params"]] == [p.numel() * 4 for p in model.parameters()]
    assert w["params"][-1]["grad_ready_s"] < w["params"][0]["grad_ready_s"]
    from simulator.training.workload import load_workload
    assert len(load_workload(str(out)).params) == len(w["params"])


def test_profiler_from_kineto_trace(one_thread: Any, tmp_path: Path) -> None:
    torch = one_thread
    from torch.profiler import ProfilerActivity, profile, schedule

    from validation.models import build_workload
    from validation.profiler import main
    w = build_workload("mlp", tiny=True)
    opt = torch.optim.SGD(w.model.parameters(), lr=0.01, momentum=0.9)
    batch = w.make_batch(4, torch.device("cpu"), None)
    trace = tmp_path / "trace.json"
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=2),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(trace))) as prof:
        for _ in range(3):
            opt.zero_grad()
            w.loss(w.model, batch).backward()
            opt.step()
            prof.step()
    names = [n for n, _ in w.model.named_parameters()]
    params = tmp_path / "params.json"
    params.write_text(json.dumps([{"name": n, "bytes": p.numel() * 4}
                                  for n, p in w.model.named_parameters()]))
    out = tmp_path / "w.json"
    assert main(["--from-trace", str(trace), "--params", str(params), "--batch-size", "4",
                 "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    check_workload(got, names)
    assert got["batch_size"] == 4 and got["device"] == "cpu"
    assert got["params"][-1]["grad_ready_s"] < got["params"][0]["grad_ready_s"]
    # without --params, names and sizes come from the trace's shapes
    assert main(["--from-trace", str(trace), "--out", str(out)]) == 0
    shaped = json.loads(out.read_text())
    assert [p["bytes"] for p in shaped["params"]] == [p.numel() * 4 for p in w.model.parameters()]


def test_profiler_rejects_wrong_param_list(one_thread: Any, tmp_path: Path) -> None:
    from validation.profiler import main
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
         "ts": 10, "dur": 1}]}))
    params = tmp_path / "p.json"
    params.write_text(json.dumps([{"name": "a", "bytes": 4}, {"name": "b", "bytes": 4}]))
    assert main(["--from-trace", str(trace), "--params", str(params),
                 "--out", str(tmp_path / "o.json")]) == 2


@pytest.mark.parametrize("module, args", [
    ("validation.runners.sweep", ["--nproc", "2", "--variants", "cpu-L0", "--extra-variant", "cpu-L0:", "--backend",
                                  "gloo", "--device", "cpu", "--ops", "all_reduce"]),
    ("validation.runners.peer_copy", []),
    ("validation.runners.ddp_sweep", ["--nproc", "2", "--models", "mlp"]),
    ("validation.runners.dp_sweep", ["--nproc", "2", "--models", "mlp"]),
    ("validation.runners.llm_sweep", ["--nproc", "2", "--preset", "gpu", "--runners", "pp"]),
])
def test_runners_without_torch_say_so_and_write_nothing(tmp_path, monkeypatch, capsys, module, args):
    """Without PyTorch (a plain `pip install -e .`), a runner died in a ModuleNotFoundError traceback and a sweep
    driver recorded failed launches, then said 'rerun the same command' (rv20's fresh-user pass)."""
    import importlib
    import sys
    runner = importlib.import_module(module)
    monkeypatch.setitem(sys.modules, "torch", None)           # `import torch` raises ImportError
    out = tmp_path / "out.jsonl"
    assert runner.main(args + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "PyTorch is not installed" in err and 'pip install -e ".[torch]"' in err and "Traceback" not in err
    assert not out.exists()
