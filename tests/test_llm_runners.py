"""LLM runners (FSDP, TP, PP) on CPU: gloo, 2 processes under torchrun, a toy GPT."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from simulator.core.errors import InputError
from validation.gpt_spec import GPTSpec, parse_spec, stage_bounds
from validation.runners import fsdp, pp, tp
from validation.runners.llm_session import done_points
from validation.runners.llm_sweep import TINY_SPECS, parse_settings
from validation.runners.pp import one_f_one_b

REPO = Path(__file__).resolve().parents[1]
CPU_ARGS = ["--backend", "gloo", "--device", "cpu"]
SPEC = parse_spec(TINY_SPECS)
BASE_FIELDS = {"kind", "runner", "point", "world", "launch_id", "launch_index", "backend",
               "device", "dtype", "iters", "warmup", "env", "hostname", "gpu", "nccl_version",
               "torch_version", "hidden", "layers", "heads", "seq", "vocab", "ffn",
               "micro_batch", "peak_memory_bytes"}
TIMED = {"iter_times_s", "median_s", "p10_s", "p90_s"}
PHASES = {f"{p}_{d}_s" for p in ("embed", "block", "head") for d in ("forward", "backward")}


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_sweep(args: list[str], timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "validation.runners.llm_sweep", "--nproc", "2",
                           "--preset", "tiny", *CPU_ARGS, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout_s)


# ------------------------------------------------------------------ pure pieces (no torch)


def test_spec_parses_and_counts_parameters() -> None:
    s = parse_spec("hidden=2048,layers=8,heads=16,seq=2048")
    assert (s.ffn, s.vocab) == (8192, 32000)
    assert s.layer_params == 12 * 2048 ** 2 + 13 * 2048
    assert s.params == (32000 + 2048) * 2048 + 8 * s.layer_params + 2 * 2048 + 2048 * 32000
    assert parse_spec(s.text) == s


@pytest.mark.parametrize("text", ["hidden=64,layers=2,heads=3,seq=8", "hidden=64,layers=2",
                                  "hidden=64,layers=2,heads=2,seq=x", "hidden=64,depth=2"])
def test_bad_spec_is_input_error(text: str) -> None:
    with pytest.raises(InputError):
        parse_spec(text)


@pytest.mark.parametrize("layers, stages, expected", [
    (8, 2, [(0, 4), (4, 8)]), (7, 3, [(0, 3), (3, 5), (5, 7)]), (4, 4, [(0, 1), (1, 2), (2, 3), (3, 4)])])
def test_stage_bounds_cover_layers_evenly(layers: int, stages: int, expected: list) -> None:
    assert stage_bounds(layers, stages) == expected


@pytest.mark.parametrize("stages, stage, m, expected", [
    (2, 0, 3, "FFBFBB"), (2, 1, 3, "FBFBFB"), (4, 0, 2, "FFBB"), (4, 2, 4, "FFBFBFBB"),
    (3, 0, 1, "FB")])
def test_one_f_one_b_order(stages: int, stage: int, m: int, expected: str) -> None:
    order = one_f_one_b(stages, stage, m)
    assert "".join(order) == expected
    assert order.count("F") == order.count("B") == m


def test_tp_collectives_per_iteration() -> None:
    spec = GPTSpec(hidden=64, layers=3, heads=4, seq=32)
    assert tp.collectives(spec, 2, 2, False, "bfloat16") == [
        {"op": "all_reduce", "bytes": 32 * 2 * 64 * 2, "count": 12}]
    assert [(c["op"], c["count"]) for c in tp.collectives(spec, 2, 2, True, "float32")] == [
        ("all_gather", 18), ("reduce_scatter", 12)]


def test_sweep_plans_every_runner_and_skips_bad_replicas() -> None:
    s = parse_settings(["--nproc", "2", "--preset", "tiny", "--out", "x.jsonl"])
    labels = {j.runner: j.labels for j in s.jobs}
    assert [x.split()[1] for x in labels["fsdp"][1:]] == [
        "full_shard", "shard_grad_op", "hybrid_shard", "hybrid_shard"]
    assert len(labels["tp"]) == 4 and len(labels["pp"]) == 3
    assert labels["pp"][0] == labels["fsdp"][0]  # the same profile point, measured once
    s3 = parse_settings(["--nproc", "3", "--preset", "tiny", "--out", "x.jsonl",
                         "--runners", "fsdp", "--runner-args", "fsdp=--replicate 1,2,3"])
    assert [x.split()[2] for x in s3.jobs[0].labels if "hybrid" in x] == [
        "replicate=1", "replicate=3"]


def test_sweep_rejects_unknown_runner_and_bad_args(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        parse_settings(["--nproc", "2", "--runners", "zero", "--out", "x"])
    with pytest.raises(InputError):
        parse_settings(["--nproc", "2", "--runner-args", "tp=--specs 'hidden=3'", "--out", "x"])
    done = run_sweep(["--runners", "fsdp", "--runner-args", "fsdp=--strategies zero3",
                      "--out", str(tmp_path / "x.jsonl")], timeout_s=60)
    assert done.returncode == 2 and "error: strategies" in done.stderr


def test_import_llm_runners_needs_no_torch() -> None:
    code = ("import sys; sys.modules['torch'] = None; import validation.runners.llm_sweep, "
            "validation.runners.fsdp, validation.runners.tp, validation.runners.pp, "
            "validation.runners.layer_profile, validation.gpt_spec")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)


def test_done_points_are_per_world_and_launch_index() -> None:
    recs = [{"kind": "llm_tp", "point": "a", "world": 2, "launch_index": 0},
            {"kind": "llm_failed", "point": "b", "world": 2, "launch_index": 0},
            {"kind": "llm_pp", "point": "c", "world": 4, "launch_index": 0},
            {"kind": "llm_profile", "point": "d", "world": 2, "launch_index": 1}]
    assert done_points(recs, 2, 0) == {"a"}


# ------------------------------------------------------------------ models (in process)


@pytest.fixture
def torch1() -> Any:
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(n)


def test_gpt_has_exactly_the_spec_parameters(torch1: Any) -> None:
    from validation.gpt import GPT, GPTBlock, TensorParallel
    spec = GPTSpec(hidden=32, layers=3, heads=4, seq=16, vocab=50, ffn=48)
    model = GPT(spec)
    assert sum(p.numel() for p in model.parameters()) == spec.params
    shard = GPTBlock(spec, TensorParallel(size=2, comm=False))
    replicated = 2 * 2 * 32 + 2 * 32  # LayerNorms and the two row-parallel biases
    assert sum(p.numel() for p in shard.parameters()) == (
        (spec.layer_params - replicated) // 2 + replicated)


@pytest.mark.parametrize("sp", [False, True])
def test_tp_block_without_comm_keeps_shapes(torch1: Any, sp: bool) -> None:
    from validation.gpt import GPTBlock, TensorParallel
    spec = GPTSpec(hidden=32, layers=1, heads=4, seq=16)
    block = GPTBlock(spec, TensorParallel(size=2, rank=1, sequence_parallel=sp, comm=False))
    x = torch1.randn(8 if sp else 16, 2, 32, requires_grad=True)
    y = block(x)
    y.sum().backward()
    assert y.shape == x.shape and x.grad is not None and x.grad.shape == x.shape


# ------------------------------------------------------------------ torchrun runs


def test_tensor_parallel_block_equals_the_unsharded_block() -> None:
    pytest.importorskip("torch")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                           "--standalone", "tests/tp_equivalence_check.py"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.count("tensor-parallel block matches") == 2


def check_common(r: dict[str, Any]) -> None:
    assert BASE_FIELDS <= r.keys(), BASE_FIELDS - r.keys()
    assert r["world"] == 2 and r["backend"] == "gloo" and r["dtype"] == "float32"
    assert r["env"]["NCCL_NVLS_ENABLE"] == "0"
    assert {k: r[k] for k in ("hidden", "layers", "heads", "seq", "vocab", "ffn")} == SPEC.fields()
    if TIMED <= r.keys():
        assert len(r["iter_times_s"]) == r["iters"] == 3
        assert 0 < r["p10_s"] <= r["median_s"] <= r["p90_s"]


def test_llm_sweep_records_every_runner_once(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "llm.jsonl"
    done = run_sweep(["--launches", "1", "--out", str(out)])
    assert done.returncode == 0, done.stderr[-3000:]
    recs = records(out)
    assert [r["runner"] for r in recs if r["kind"] == "meta"] == ["fsdp", "tp", "pp"]
    points = [r for r in recs if r["kind"] != "meta"]
    assert len({r["point"] for r in points}) == len(points) == 5 + 4 + 2
    for r in points:
        check_common(r)
    prof = [r for r in points if r["kind"] == "llm_profile"]
    assert {(r["tp"], r["sequence_parallel"]) for r in prof} == {(1, False), (2, False), (2, True)}
    for r in prof:
        assert all(r[k] > 0 for k in PHASES if r[k] is not None)
        assert (r["embed_forward_s"] is None) == (r["tp"] == 2)
    full = next(r for r in prof if r["tp"] == 1)
    assert full["model_median_s"] > 0 and TIMED <= {k.removeprefix("model_") for k in full}
    assert full["model_resident_memory_bytes"] is None and full["model_step_peak_memory_bytes"] is None
    fs = [r for r in points if r["kind"] == "llm_fsdp"]
    assert [(r["strategy"], r["replicate"], r["shard"]) for r in fs] == [
        ("full_shard", 1, 2), ("shard_grad_op", 1, 2), ("hybrid_shard", 1, 2), ("hybrid_shard", 2, 1)]
    for r in fs:
        assert sum(r["unit_params"]) == r["params"] == SPEC.params
        assert r["resident_memory_bytes"] is None and r["step_peak_memory_bytes"] is None   # CPU: no CUDA memory
        assert r["global_batch"] == 2 * r["micro_batch"] and r["dp"] == 2
    tps = [r for r in points if r["kind"] == "llm_tp"]
    assert [r["sequence_parallel"] for r in tps] == [False, True]
    for r in tps:
        assert r["nocomm_median_s"] > 0 and len(r["nocomm_iter_times_s"]) == 3
        assert r["collectives"] == tp.collectives(SPEC, 2, 2, r["sequence_parallel"], "float32")
    pps = [r for r in points if r["kind"] == "llm_pp"]
    assert [r["micro_batches"] for r in pps] == [1, 3]
    for r in pps:
        assert r["stage_layers"] == [2, 2] and r["global_batch"] == 2 * r["micro_batches"]
        assert len(r["stage_forward_s"]) == len(r["stage_backward_s"]) == 2
        assert all(t > 0 for t in r["stage_forward_s"] + r["stage_backward_s"]) and r["p2p_s"] > 0
        assert r["activation_bytes"] == SPEC.seq * 2 * SPEC.hidden * 4
    from validation.llm_records import profile_for, read_llm_records
    typed = read_llm_records(out)
    assert len(typed.runs) == 8 and len(typed.profiles) == 3
    assert all(profile_for(r, typed.profiles) is not None for r in typed.runs)
    before = out.read_text()
    again = run_sweep(["--launches", "1", "--out", str(out)], timeout_s=60)
    assert again.returncode == 0 and out.read_text() == before  # nothing measured twice


@pytest.mark.slow
def test_llm_sweep_excludes_failing_point_and_exits_nonzero(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "llm.jsonl"
    bad = f"tp tp=2 sp=off mb=2 {SPEC.text}"
    done = run_sweep(["--runners", "tp", "--launches", "2", "--out", str(out),
                      "--extra-env", f"GPUNETSIM_TEST_FAIL=point:{bad}"])
    assert done.returncode == 1 and "missing: tp launch 1" in done.stderr
    recs = records(out)
    failed = [r for r in recs if r["kind"] == "llm_failed"]
    assert [(r["point"], r["launch_index"]) for r in failed] == [(bad, 0)]  # index 1 skipped it
    for index in (0, 1):
        got = [r["point"] for r in recs if r["kind"] in ("llm_tp", "llm_profile")
               and r["launch_index"] == index]
        assert len(got) == 3 and bad not in got and len(set(got)) == 3  # relaunched past it


def test_fsdp_no_shard_is_one_point_with_whole_copies() -> None:
    s = fsdp.parse_settings(["--specs", TINY_SPECS.split(";")[0], "--strategies", "no_shard,hybrid_shard",
                             "--replicate", "1,4", "--out", "x.jsonl"])
    labels = fsdp.plan_labels(s, 4)
    assert [x.split()[1:3] for x in labels[1:]] == [["no_shard", "replicate=4"], ["hybrid_shard", "replicate=1"],
                                                    ["hybrid_shard", "replicate=4"]]
    assert "no_shard" not in fsdp.build_parser().get_default("strategies")   # not in the default campaign


def test_fsdp_issue_records_host_and_gpu_times_apart(tmp_path: Path) -> None:
    """``--issue``: every timed point (the whole model on one GPU too) gets the host's forward and backward
    issue times and the GPU's time apart, beside its iteration times."""
    pytest.importorskip("torch")
    out = tmp_path / "issue.jsonl"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
                           "-m", "validation.runners.fsdp", "--specs", TINY_SPECS.split(";")[0], "--micro-batch", "2",
                           "--strategies", "no_shard,hybrid_shard", "--replicate", "2", "--iters", "2",
                           "--warmup", "1", "--issue", *CPU_ARGS, "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    recs = [r for r in records(out) if r["kind"] != "meta"]
    assert [(r["kind"], r.get("strategy")) for r in recs] == [
        ("llm_profile", None), ("llm_fsdp", "no_shard"), ("llm_fsdp", "hybrid_shard")]
    for r, prefix in zip(recs, ("model_", "", "")):
        assert all(r[f"{prefix}{k}"] > 0 for k in ("issue_forward_s", "issue_backward_s", "gpu_s", "hold_s"))
        assert r[f"{prefix}outlasted_hold"] == 0          # no sleep on CPU: never counted
        assert r[f"{prefix}hold_s"] == pytest.approx(3.0 * r[f"{prefix}median_s"])
    from validation.fsdp_issue import NO_SHARD, NOCOMM, ONE_GPU, host_splits, read_points, report
    # the reader's arithmetic on fixed issue times: at this size the CPU's own differences between the plain model
    # and FSDP are scheduling noise (under load NO_SHARD came out faster than the plain model, which the reader
    # rightly refuses), so each record's measured times are replaced, in order: plain, NO_SHARD, one-rank groups
    fixed = out.with_name("fixed.jsonl")
    issue = iter([(1e-3, 2e-3), (4e-3, 8e-3), (3e-3, 6e-3)])
    lines = []
    for line in out.read_text().splitlines():
        r = json.loads(line)
        if r["kind"] != "meta":
            prefix = "model_" if r["kind"] == "llm_profile" else ""
            r[f"{prefix}issue_forward_s"], r[f"{prefix}issue_backward_s"] = next(issue)
        lines.append(json.dumps(r))
    fixed.write_text("\n".join(lines) + "\n")
    points = read_points([fixed])
    assert sorted(p.what for p in points) == sorted([ONE_GPU, NO_SHARD, NOCOMM])
    assert {p.units for p in points if p.what != ONE_GPU} == {SPEC.layers + 1}
    (split,) = host_splits(points)
    nocomm = next(p for p in points if p.what == NOCOMM)
    one = next(p for p in points if p.what == ONE_GPU)
    assert split.forward_per_unit_s == pytest.approx((nocomm.issue_forward_s - one.issue_forward_s) / (SPEC.layers + 1))
    assert split.all_reduce_per_unit_s == pytest.approx(2e-3 / (SPEC.layers + 1))   # NO_SHARD less one-rank groups
    assert any("forward share" in line for line in report(points))
    with pytest.raises(InputError):           # records without --issue are named, never read as zeros
        read_points([REPO / "validation/data/h200x4_2026-11-26_fsdp/fsdp_world2.jsonl"])
    plain = fsdp.parse_settings(["--specs", TINY_SPECS, "--out", "x.jsonl"])
    assert not plain.issue            # off unless asked: the campaigns' records keep their fields
    with pytest.raises(InputError):
        fsdp.parse_settings(["--specs", TINY_SPECS, "--hold", "0", "--out", "x.jsonl"])
