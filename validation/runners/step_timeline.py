"""One profiled training step as per-stream GPU intervals and the host's launches (``fsdp --profile-step``).

Issue 14: FSDP FULL_SHARD at hidden 2048 runs 7-15% slower than predicted even with a probe of the same minute.
Where the time goes is read from one step under ``torch.profiler`` (CUDA activity only: the CUPTI kernel,
copy and memset records and the runtime/driver calls that launched them; no CPU operator records, so the host
is slowed as little as the profiler allows). The chrome trace it exports is read back here into plain records:

- ``events``: every GPU interval of the step, ``[stream, class, start_s, duration_s, launch_s]`` with times in
  seconds from the step's first GPU interval and ``launch_s`` the host's launch call's start on the same clock
  (None where the trace has no matching launch). Classes (:data:`CLASSES`): ``gemm``, ``attention``,
  ``compute`` (every other kernel), ``all_gather``, ``reduce_scatter``, ``all_reduce``, ``nccl`` (other NCCL
  kernels), ``copy`` (memcpy records and copy kernels, e.g. FSDP's flat-parameter copies and ``cat``),
  ``memset``.
- :func:`summarize_timeline`: per stream and class the busy seconds; the step's span; the compute stream's
  (the stream with the most non-NCCL busy time) idle time split into *host* gaps (the next kernel was launched
  after the gap began: the GPU waited for the host), *NCCL* gaps (launched in time, a collective was running on
  another stream: waiting on its event) and the rest; collective time not overlapped by any non-NCCL kernel
  (*exposed*).

- ``runtime_calls``: the host's CUDA runtime and driver calls by name, count and seconds (:func:`runtime_calls`;
  files of 2026-11-27 17:11-17:14 UTC have none).
- ``host`` (``--profile-host``; files from 2026-11-27 20:00 UTC on): one more step under ``torch.profiler`` with CPU
  activity too, read by :func:`read_host_trace`: the host's record-function ranges (FSDP1's hooks name theirs,
  ``FullyShardedDataParallel._pre_backward_hook`` and so on), its top-level operator calls and every runtime call,
  each with its thread, start and duration, beside that step's GPU intervals: what the host does between two
  launches, by name and count. The CPU activity slows the host (a few microseconds per operator), so this step's
  times are not the unprofiled step's; its counts are.

Off CUDA there are no GPU streams: :func:`profile_step` runs the step once unprofiled and returns
``{"timeline": None, "timeline_error": ...}`` so a CPU/gloo launch keeps its points and says why.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Iterable, Mapping, Sequence

CLASSES = ("gemm", "attention", "compute", "all_gather", "reduce_scatter", "all_reduce", "nccl", "copy", "memset")
"""Interval classes, in the order :func:`classify` tries them (after the trace category)."""

NCCL_CLASSES = frozenset({"all_gather", "reduce_scatter", "all_reduce", "nccl"})
GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
LAUNCH_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver"})
NO_CUDA = "needs CUDA: off CUDA there are no GPU streams to profile (the step ran once unprofiled)"

_NAME_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("all_gather", ("allgather",)),
    ("reduce_scatter", ("reducescatter",)),
    ("all_reduce", ("allreduce",)),
    ("nccl", ("nccl",)),
    ("attention", ("flash", "fmha", "attention", "cudnn_sdpa", "sdpa")),
    ("gemm", ("gemm", "sm90_xmma", "cutlass", "nvjet", "ampere_", "sm80_xmma", "matmul")),
    ("copy", ("copy", "cat", "memcpy")),
)


def classify(name: str, category: str) -> str:
    """The class of one GPU interval (:data:`CLASSES`) from its trace category and kernel name."""
    if category == "gpu_memcpy":
        return "copy"
    if category == "gpu_memset":
        return "memset"
    low = name.lower().replace("_", "")
    for cls, keys in _NAME_KEYS:
        if any(k.replace("_", "") in low for k in keys):
            return cls
    return "compute"


def read_trace(trace: Mapping[str, Any]) -> list[list[Any]]:
    """The GPU intervals of an exported chrome trace as ``[stream, class, start_s, duration_s, launch_s]``, sorted
    by start, times from the first interval's start (see the module docstring)."""
    events = trace.get("traceEvents", [])
    launches: dict[Any, float] = {}
    gpu = []
    for e in events:
        if e.get("ph") != "X":
            continue
        cat, args = e.get("cat", ""), e.get("args") or {}
        if cat in LAUNCH_CATEGORIES and "correlation" in args:
            launches[args["correlation"]] = float(e["ts"])
        elif cat in GPU_CATEGORIES:
            gpu.append(e)
    if not gpu:
        return []
    t0 = min(float(e["ts"]) for e in gpu)
    out = []
    for e in gpu:
        args = e.get("args") or {}
        launch = launches.get(args.get("correlation"))
        out.append([int(args.get("stream", e.get("tid", -1))), classify(e.get("name", ""), e["cat"]),
                    (float(e["ts"]) - t0) * 1e-6, float(e.get("dur", 0.0)) * 1e-6,
                    None if launch is None else (launch - t0) * 1e-6])
    out.sort(key=lambda r: (r[2], r[0]))
    return out


def union(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The intervals merged where they touch or overlap, sorted (their union)."""
    merged: list[tuple[float, float]] = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def total_length(intervals: Sequence[tuple[float, float]]) -> float:
    """Summed length of disjoint intervals (of a :func:`union`)."""
    return sum(b - a for a, b in intervals)


def overlap_length(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> float:
    """Length of the intersection of two sorted unions."""
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(hi - lo, 0.0)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def runtime_calls(trace: Mapping[str, Any]) -> dict[str, list[float]]:
    """The host's CUDA runtime and driver calls of an exported chrome trace by name: ``[count, seconds]`` (launches,
    event records and queries, stream waits, allocations: where the host's time between launches goes)."""
    out: dict[str, list[float]] = {}
    for e in trace.get("traceEvents", []):
        if e.get("ph") == "X" and e.get("cat") in LAUNCH_CATEGORIES:
            row = out.setdefault(str(e.get("name", "")), [0, 0.0])
            row[0] += 1
            row[1] += float(e.get("dur", 0.0)) * 1e-6
    return out


HOST_OPS = "cpu_op"
HOST_RANGES = "user_annotation"


def read_host_trace(trace: Mapping[str, Any]) -> dict[str, Any]:
    """The host side of a CPU + CUDA chrome trace (see the module docstring), times in microseconds (0.1 us) from
    the first GPU interval: ``names`` (each distinct name once; rows give its index), ``threads`` (the trace's
    thread ids, rows give the index: the autograd engine runs the backward on a thread of its own), ``ranges``
    ``[name, thread, start_us, dur_us]`` (record-function ranges), ``ops`` ``[name, thread, start_us, dur_us,
    nested]`` (operator calls not inside another on their thread, with the number of operator calls inside them),
    ``calls`` ``[name, thread, start_us, dur_us]`` (runtime and driver calls) and ``events`` (:func:`read_trace`
    of the same step, seconds as there)."""
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    gpu = [float(e["ts"]) for e in events if e.get("cat") in GPU_CATEGORIES]
    t0 = min(gpu) if gpu else min((float(e["ts"]) for e in events), default=0.0)
    names: dict[str, int] = {}
    threads: dict[str, int] = {}

    def row(e: Mapping[str, Any]) -> list[Any]:
        return [names.setdefault(str(e.get("name", "")), len(names)),
                threads.setdefault(str(e.get("tid", "")), len(threads)),
                round(float(e["ts"]) - t0, 1), round(float(e.get("dur", 0.0)), 1)]

    ranges = [row(e) for e in events if e.get("cat") == HOST_RANGES]
    calls = [row(e) for e in events if e.get("cat") in LAUNCH_CATEGORIES]
    ops: list[list[Any]] = []
    ends: dict[int, float] = {}
    for e in sorted((e for e in events if e.get("cat") == HOST_OPS),
                    key=lambda e: (float(e["ts"]), -float(e.get("dur", 0.0)))):
        r = row(e)
        if r[2] < ends.get(r[1], float("-inf")) and ops:
            top = next(o for o in reversed(ops) if o[1] == r[1])
            top[4] += 1
            continue
        ops.append(r + [0])
        ends[r[1]] = r[2] + r[3]
    return {"names": list(names), "threads": list(threads), "ranges": ranges, "ops": ops, "calls": calls,
            "events": _rounded(read_trace(trace))}


def summarize_timeline(events: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """Where one step's GPU time goes (seconds; see the module docstring): ``span_s``, ``compute_stream``,
    ``busy_s`` ``{stream: {class: seconds}}``, ``count`` ``{class: n}``, ``compute_busy_s``, ``compute_idle_s``
    and its parts ``idle_host_s``, ``idle_nccl_s``, ``idle_other_s``, ``nccl_s`` (union of collective
    intervals), ``nccl_exposed_s`` (of it, not beside any non-NCCL interval)."""
    if not events:
        return {"span_s": 0.0, "compute_stream": None, "busy_s": {}, "count": {}}
    busy: dict[str, dict[str, float]] = {}
    count = dict.fromkeys(CLASSES, 0)
    for stream, cls, start, dur, _ in events:
        per = busy.setdefault(str(stream), {})
        per[cls] = per.get(cls, 0.0) + dur
        count[cls] += 1
    work = {s: sum(v for c, v in per.items() if c not in NCCL_CLASSES) for s, per in busy.items()}
    compute_stream = max(work, key=lambda s: work[s])
    span = max(e[2] + e[3] for e in events) - min(e[2] for e in events)
    nccl = union((e[2], e[2] + e[3]) for e in events if e[1] in NCCL_CLASSES)
    other = union((e[2], e[2] + e[3]) for e in events if e[1] not in NCCL_CLASSES)
    own = [e for e in events if str(e[0]) == compute_stream]
    host = on_nccl = rest = 0.0
    end = own[0][2] + own[0][3]
    for e in own[1:]:
        gap = e[2] - end
        if gap > 0:
            late = e[4] is not None and e[4] > end
            waited = overlap_length([(end, e[2])], nccl)
            if late:
                host += gap
            elif waited > 0:
                on_nccl += gap
            else:
                rest += gap
        end = max(end, e[2] + e[3])
    compute_busy = total_length(union((e[2], e[2] + e[3]) for e in own))
    return {"span_s": span, "compute_stream": compute_stream, "busy_s": busy, "count": count,
            "compute_busy_s": compute_busy, "compute_idle_s": host + on_nccl + rest,
            "idle_host_s": host, "idle_nccl_s": on_nccl, "idle_other_s": rest,
            "nccl_s": total_length(nccl), "nccl_exposed_s": total_length(nccl) - overlap_length(nccl, other)}


def exported_trace(prof: Any) -> dict[str, Any]:
    """A finished ``torch.profiler`` session's chrome trace, read back as JSON (through a temporary file)."""
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            return json.load(f)
    finally:
        os.unlink(path)


def _profiled_call(step: Callable[[], None], cpu: bool) -> tuple[dict[str, Any] | None, float, str | None]:
    """One call of ``step`` under ``torch.profiler`` (CUDA activity, and CPU activity with ``cpu``): its exported
    trace, the call's wall seconds (host clock to synchronisation) and None, or None and the error (profiler support
    differs between torch builds; the step still runs once, so the other ranks' collectives are met)."""
    import time

    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    try:
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] if cpu else [ProfilerActivity.CUDA])
        prof.__enter__()
    except Exception as exc:
        step()
        torch.cuda.synchronize()
        return None, 0.0, f"{type(exc).__name__}: {exc}"
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    try:
        prof.__exit__(None, None, None)
        return exported_trace(prof), wall, None
    except Exception as exc:
        return None, wall, f"{type(exc).__name__}: {exc}"


def host_step(step: Callable[[], None]) -> dict[str, Any]:
    """One call of ``step`` under ``torch.profiler`` with CPU and CUDA activity: :func:`read_host_trace` of it with
    ``wall_s``, or ``{"error": ...}``."""
    trace, wall, error = _profiled_call(step, cpu=True)
    if trace is None:
        return {"error": error}
    try:
        return {**read_host_trace(trace), "wall_s": wall}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def profile_step(step: Callable[[], None], is_cuda: bool, host: bool = False) -> dict[str, Any]:
    """One call of ``step`` under ``torch.profiler`` (CUDA activity) on this rank: ``timeline`` ``{"events",
    "summary", "wall_s", "runtime_calls"}`` (``wall_s``: the profiled step's own seconds, host clock to synchronisation) or None
    with ``timeline_error`` (no CUDA, or the profiler failed: the step still runs once, so the other ranks'
    collectives are met); ``host``: one more step with CPU activity too, ``timeline["host"]`` (:func:`host_step`)."""
    if not is_cuda:
        step()
        return {"timeline": None, "timeline_error": NO_CUDA}
    trace, wall, error = _profiled_call(step, cpu=False)
    try:
        if trace is None:
            raise RuntimeError(error)
        events, calls = read_trace(trace), runtime_calls(trace)
    except Exception as exc:
        if host:
            host_step(step)
        return {"timeline": None, "timeline_error": error or f"{type(exc).__name__}: {exc}"}
    del trace
    extra = {"host": host_step(step)} if host else {}
    return {"timeline": {"events": _rounded(events), "summary": summarize_timeline(events), "wall_s": wall,
                         "runtime_calls": calls, **extra}}


def _rounded(events: Sequence[Sequence[Any]]) -> list[list[Any]]:
    return [[s, c, round(a, 7), round(d, 7), None if x is None else round(x, 7)] for s, c, a, d, x in events]
