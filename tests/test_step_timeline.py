"""validation.runners.step_timeline and the FSDP runner's --profile-step: one profiled step as per-stream intervals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_runners import CPU_ARGS, records, run_module
from validation.runners import fsdp
from validation.runners.llm_sweep import TINY_SPECS
from validation.runners.step_timeline import NO_CUDA, classify, read_trace, runtime_calls, summarize_timeline


def _x(cat: str, name: str, ts: float, dur: float, corr: int, stream: int | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"correlation": corr}
    if stream is not None:
        args["stream"] = stream
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": args}


# compute stream 7, NCCL stream 20 (us): gemm 100-200, then the host launches the next kernel only at 250
# (host gap 200-250), which runs 250-300; an all-gather 300-400 on stream 20, the copy on stream 7 launched at
# 260 but waiting on it runs 400-420 (NCCL gap 300-400); a reduce-scatter 410-490, 10 us of it beside the copy.
TRACE = {"traceEvents": [
    _x("cuda_runtime", "cudaLaunchKernel", 90, 5, 1), _x("kernel", "sm90_xmma_gemm_bf16", 100, 100, 1, 7),
    _x("cuda_runtime", "cudaLaunchKernel", 250, 5, 2), _x("kernel", "vectorized_elementwise_kernel", 250, 50, 2, 7),
    _x("cuda_driver", "cuLaunchKernelEx", 255, 3, 3),
    _x("kernel", "ncclDevKernel_AllGather_RING_LL", 300, 100, 3, 20),
    _x("cuda_runtime", "cudaMemcpyAsync", 260, 2, 4), _x("gpu_memcpy", "Memcpy DtoD", 400, 20, 4, 7),
    _x("kernel", "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", 410, 80, 5, 20),
    {"ph": "i", "cat": "kernel", "name": "instant", "ts": 1},
]}


@pytest.mark.parametrize("name,cat,cls", [
    ("ncclDevKernel_AllGather_RING_LL", "kernel", "all_gather"),
    ("ncclKernel_ReduceScatter_RING_SIMPLE_Sum_bf16", "kernel", "reduce_scatter"),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "kernel", "all_reduce"),
    ("ncclDevKernel_SendRecv", "kernel", "nccl"),
    ("nvjet_tst_128x256_64x4_1x2_h_bz_coopB_NNT", "kernel", "gemm"),
    ("flash_fwd_kernel", "kernel", "attention"),
    ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<...>", "kernel", "copy"),
    ("Memcpy DtoD (Device -> Device)", "gpu_memcpy", "copy"),
    ("Memset (Device)", "gpu_memset", "memset"),
    ("void at::native::vectorized_elementwise_kernel<4, ...>", "kernel", "compute"),
])
def test_classify_names_each_class(name: str, cat: str, cls: str) -> None:
    assert classify(name, cat) == cls


def test_trace_reads_intervals_with_their_launches() -> None:
    events = read_trace(TRACE)
    assert [e[:2] for e in events] == [[7, "gemm"], [7, "compute"], [20, "all_gather"], [7, "copy"],
                                       [20, "reduce_scatter"]]
    assert events[0][2:] == pytest.approx([0.0, 100e-6, -10e-6])
    assert events[3][2:] == pytest.approx([300e-6, 20e-6, 160e-6])
    assert read_trace({"traceEvents": []}) == []


def test_runtime_calls_are_counted_and_timed_by_name() -> None:
    calls = runtime_calls(TRACE)
    assert calls == {"cudaLaunchKernel": [2, pytest.approx(10e-6)], "cuLaunchKernelEx": [1, pytest.approx(3e-6)],
                     "cudaMemcpyAsync": [1, pytest.approx(2e-6)]}


def test_summary_splits_the_compute_streams_idle_into_host_and_collective_waits() -> None:
    s = summarize_timeline(read_trace(TRACE))
    assert s["compute_stream"] == "7"
    assert s["span_s"] == pytest.approx(390e-6)
    assert s["idle_host_s"] == pytest.approx(50e-6)       # next kernel launched after the gap began
    assert s["idle_nccl_s"] == pytest.approx(100e-6)      # launched in time, an all-gather was running
    assert s["idle_other_s"] == pytest.approx(0.0)
    assert s["compute_busy_s"] == pytest.approx(170e-6)
    assert s["nccl_s"] == pytest.approx(180e-6)
    assert s["nccl_exposed_s"] == pytest.approx(170e-6)   # the all-gather's 100 us (nothing beside it) + 80 - 10
    assert s["busy_s"]["20"] == pytest.approx({"all_gather": 100e-6, "reduce_scatter": 80e-6})
    assert s["count"]["copy"] == 1 and s["count"]["memset"] == 0
    assert summarize_timeline([])["compute_stream"] is None


def test_profile_step_off_cuda_says_why_and_keeps_every_point(tmp_path: Path) -> None:
    """``--profile-step`` on CPU (gloo): every point is recorded, its timeline None per rank with the reason, and
    the copy's bandwidth is measured after the point's peak memory is read."""
    pytest.importorskip("torch")
    out = tmp_path / "prof.jsonl"
    run_module(["-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
                "-m", "validation.runners.fsdp", "--specs", TINY_SPECS.split(";")[0], "--micro-batch", "2",
                "--strategies", "full_shard", "--iters", "2", "--warmup", "1", "--profile-step", *CPU_ARGS,
                "--out", str(out)], timeout_s=180)
    recs = records(out)
    profile, point = (next(r for r in recs if r["kind"] == k) for k in ("llm_profile", "llm_fsdp"))
    assert profile["model_timeline"] == [None, None] and profile["model_timeline_error"] == NO_CUDA
    assert point["timeline"] == [None, None] and point["timeline_error"] == NO_CUDA
    assert profile["copy_Bps"] > 0 and point["copy_Bps"] > 0
    assert point["median_s"] > 0
    assert not fsdp.parse_settings(["--specs", TINY_SPECS, "--out", "x.jsonl"]).profile_step   # off unless asked


def test_host_trace_keeps_ranges_top_level_ops_and_calls_by_thread() -> None:
    """``--profile-host``: a hook range, one operator with two nested in it (counted, not kept), one on another
    thread (the autograd engine's), a runtime call; times in us from the first GPU interval (the GEMM at 100)."""
    from validation.runners.step_timeline import read_host_trace

    trace = {"traceEvents": [
        _x("cuda_runtime", "cudaLaunchKernel", 90, 5, 1), _x("kernel", "sm90_xmma_gemm_bf16", 100, 100, 1, 7),
        {"ph": "X", "cat": "user_annotation", "name": "FullyShardedDataParallel._post_backward_hook", "ts": 60,
         "dur": 80, "tid": 2},
        {"ph": "X", "cat": "cpu_op", "name": "aten::div_", "ts": 70, "dur": 30, "tid": 2},
        {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "ts": 72, "dur": 5, "tid": 2},
        {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "ts": 80, "dur": 5, "tid": 2},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 75, "dur": 10, "tid": 1},
    ]}
    h = read_host_trace(trace)
    name = {i: n for i, n in enumerate(h["names"])}
    assert [(name[r[0]], r[2], r[3]) for r in h["ranges"]] == [("FullyShardedDataParallel._post_backward_hook",
                                                                -40.0, 80.0)]
    assert sorted((name[o[0]], h["threads"][o[1]], o[4]) for o in h["ops"]) == [("aten::div_", "2", 2),
                                                                                 ("aten::mm", "1", 0)]
    assert [(name[c[0]], c[2]) for c in h["calls"]] == [("cudaLaunchKernel", -10.0)]
    assert [e[:2] for e in h["events"]] == [[7, "gemm"]]


def test_an_exported_trace_is_read_back_and_its_file_removed():
    """step_timeline.exported_trace: the one reader of a profiler's chrome trace (the GEMM runner wrote a second)."""
    import json
    from pathlib import Path

    from validation.runners.step_timeline import exported_trace

    written: list[str] = []

    class Prof:
        def export_chrome_trace(self, path: str) -> None:
            written.append(path)
            Path(path).write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k"}]}))

    assert exported_trace(Prof()) == {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k"}]}
    assert written and not Path(written[0]).exists()
