"""Each collective call's time between CUDA events beside its NCCL kernel's own duration (CUPTI), interleaved sizes.

::

    torchrun --nproc-per-node 2 -m validation.runners.kernel_probe --ops all_reduce,all_gather,reduce_scatter \\
        --sizes 4M,8M,12M,16M,24M,32M,48M,64M,128M,256M --reps 8 --variant default --out kprobe.jsonl
    NCCL_ALGO=Tree NCCL_PROTO=Simple torchrun ... --ops all_reduce --variant tree_simple --out kprobe.jsonl

Issue 10: from 8 to 16 MiB all_reduce (less so the other rings) runs 10-16 us below the line through its 64-256 MiB
times (validation.mid_step) in the runners' per-call time, which is CUDA events around back-to-back calls
(validation.runners.collectives). That time is the kernels' durations plus whatever lies between two kernels on the
stream (launch latency, PyTorch's and NCCL's stream events). This probe says which of the two holds the step.

Every repetition visits every (op, size) point in an order of its own (a permutation seeded by ``--seed`` and the
repetition, the same on every rank) twice, once plain and once under ``torch.profiler`` (CUDA activity: CUPTI's
kernel records), the two passes' order alternating between repetitions. A visit is ``iters`` back-to-back calls
(chosen once per point on rank 0 so they last about ``--block-ms``, at least :data:`MIN_ITERS`) between two CUDA
events, after a CUDA synchronisation and a barrier on a gloo group (so no NCCL kernel of the barrier lands in the
profile). Per visit and rank the record holds:

* ``event_s`` (plain pass) and ``prof_event_s`` (profiled pass): event time per call, as the collectives runner's;
  ``host_s``: the host's issue time per call of the plain pass (validation.runners.collectives.HOST_CALLS calls);
* from the profiled pass's NCCL kernels (CUPTI kernel records whose name contains ``nccl``; name, start, end), cut
  into visits (:func:`split_visits`): ``kernels`` (how many; ``iters`` when each call is one kernel), ``kernel_s``
  (the sum of their durations per call), ``span_s`` (first kernel's start to last kernel's end, per call), ``gap_s``
  (mean idle time between two consecutive kernels), ``kernel_min_s`` / ``kernel_p50_s`` / ``kernel_max_s`` and
  ``gap_max_s``. ``prof_event_s - kernel_s`` is what lies outside the kernels (launch, stream gaps, the events).

One ``kind:"kernel_probe"`` record per repetition and point, written by rank 0 with every rank's values as lists in
rank order (``rank_event_s``, ``rank_kernel_s``, ...), the kernels' names (rank 0's), ``order`` (the visit's place in
its repetition), ``prof_first`` (the profiled pass ran first) and ``kernels_matched`` (false when a rank's profile
held fewer NCCL kernels than visits, or off CUDA: then the kernel fields are None and ``kernel_note`` says why).
A ``kind:"meta"`` record (machine facts, environment, argv) opens every launch.

With ``--queue-us`` each visit's calls are queued behind a GPU sleep (``torch.cuda._sleep``, ``iters`` x that many
us + 1 ms, before the start event), as the issue probes do (fsdp --issue): the host issues them all while the GPU
sleeps, so the GPU runs them back to back even where the host's issue of a call (``host_s``) is slower than the
kernel; the event time then holds no host pacing. Where the host is slower than the kernels (on the first 2x H100
lease, ~70 us a call, every size up to 16 MiB) only this mode gives the kernels' own back-to-back time.

On CPU (gloo, the tests) there are no kernels: the times are the host clock's and the kernel fields are None, with
the same record layout. NCCL's algorithm and protocol are pinned by the caller's environment (``NCCL_ALGO``,
``NCCL_PROTO``, recorded in ``env``); ``--variant`` labels the launch.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import random
import statistics
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from simulator.core.errors import InputError
from validation.runners.launch import (Member, add_process_args, check_least, parse_names, parse_sizes,
                                       torchrun_entry_point)
from validation.timing import gpu_sleep, sleep_cycles_per_s

log = logging.getLogger("validation.runners.kernel_probe")

OPS = ("all_reduce", "all_gather", "reduce_scatter")
DEFAULT_SIZES = "4M,8M,12M,16M,24M,32M,48M,64M,128M,256M"
MIN_ITERS = 10
MAX_ITERS = 2000
MAX_QUEUED_ITERS = 200
"""Calls a visit queues behind a sleep at most (``--queue-us``): PyTorch puts a few entries a call in CUDA's launch
queue (about 1024), and a full queue would make the host wait again."""
NO_KERNELS = "no CUDA: no kernels to profile"
UNMATCHED = "the profile's NCCL kernels did not match the visits' calls one to one"
RANK_FIELDS = ("event_s", "host_s", "prof_event_s", "kernel_s", "span_s", "gap_s", "kernel_min_s", "kernel_p50_s",
               "kernel_max_s", "gap_max_s", "kernels")
"""Per-rank values of one visit, each written as ``rank_<field>`` (one value per rank, in rank order)."""


@dataclass(frozen=True)
class KernelProbeSettings:
    ops: tuple[str, ...]
    sizes: tuple[int, ...]
    reps: int
    warmup: int
    block_ms: float
    queue_us: float
    seed: int
    variant: str
    dtype: str
    out: str
    backend: str
    device: str
    timeout_s: float = 600.0     # the process group's (no flag)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.kernel_probe",
                                description="Time collectives per call with CUDA events and with their NCCL kernels' "
                                            "own durations (torch.profiler), sizes interleaved; run under torchrun.")
    p.add_argument("--ops", default=",".join(OPS), help=f"comma-separated, of {', '.join(OPS)}")
    p.add_argument("--sizes", default=DEFAULT_SIZES, help="nccl-tests sizes (the whole buffer), e.g. 16M,64M")
    p.add_argument("--reps", type=int, default=8, help="repetitions; each visits every point plain and profiled")
    p.add_argument("--warmup", type=int, default=5, help="untimed calls of each point before the repetitions")
    p.add_argument("--block-ms", type=float, default=20.0, help="one visit's back-to-back calls last about this long")
    p.add_argument("--queue-us", type=float, default=0.0,
                   help="0: calls issued as the host gets to them; > 0: each visit's calls queued behind a GPU "
                        "sleep of this many us per call (+ 1 ms), so the GPU runs them back to back however slow the "
                        "host")
    p.add_argument("--seed", type=int, default=0, help="seeds each repetition's visiting order")
    p.add_argument("--variant", default="default", help="label for this NCCL configuration (NCCL_ALGO, ...)")
    p.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    p.add_argument("--out", required=True, help="JSONL file to append records to")
    add_process_args(p)
    return p


def parse_settings(argv: Sequence[str] | None) -> KernelProbeSettings:
    a = build_parser().parse_args(argv)
    check_least(reps=(a.reps, 1), warmup=(a.warmup, 0))
    if not a.block_ms > 0:
        raise InputError("must be > 0", field="block-ms", value=a.block_ms)
    check_least(queue_us=(a.queue_us, 0))
    return KernelProbeSettings(parse_names(a.ops, OPS, "ops", "op"), parse_sizes(a.sizes), a.reps, a.warmup,
                               a.block_ms, a.queue_us, a.seed, a.variant, a.dtype, a.out, a.backend, a.device)


def visit_order(n_points: int, seed: int, rep: int) -> list[int]:
    """Repetition ``rep``'s order of the points (indices), the same on every rank."""
    order = list(range(n_points))
    random.Random(seed * 1_000_003 + rep).shuffle(order)
    return order


def nccl_kernels(trace: dict[str, Any]) -> list[tuple[str, float, float]]:
    """The NCCL kernels of an exported chrome trace as ``(name, start_s, duration_s)``, sorted by start."""
    out = []
    for e in trace.get("traceEvents", []):
        if e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" in str(e.get("name", "")).lower():
            out.append((str(e["name"]), float(e["ts"]) * 1e-6, float(e.get("dur", 0.0)) * 1e-6))
    return sorted(out, key=lambda k: k[1])


def split_visits(kernels: Sequence[tuple[str, float, float]], counts: Sequence[int]) \
        -> list[list[tuple[str, float, float]]] | None:
    """``kernels`` cut into one run per visit (visiting order): runs of ``counts`` when they add up to the kernels
    exactly (one kernel per call), else at the ``len(counts) - 1`` longest idle gaps (visits are apart by a
    synchronisation and a barrier, far longer than two calls' gap); None when there are fewer kernels than visits."""
    if sum(counts) == len(kernels):
        cuts = list(itertools.accumulate(counts))[:-1]
    elif len(kernels) >= len(counts):
        gaps = sorted(range(1, len(kernels)), key=lambda i: kernels[i][1] - kernels[i - 1][1] - kernels[i - 1][2],
                      reverse=True)
        cuts = sorted(gaps[:len(counts) - 1])
    else:
        return None
    return [list(kernels[a:b]) for a, b in zip([0, *cuts], [*cuts, len(kernels)])]


def kernel_stats(kernels: Sequence[tuple[str, float, float]], calls: int) -> dict[str, Any]:
    """Per-call figures of one visit's ``calls`` calls from its kernels (seconds; see the module docstring)."""
    n = calls
    durs = [k[2] for k in kernels]
    gaps = [b[1] - (a[1] + a[2]) for a, b in zip(kernels, kernels[1:])]
    span = kernels[-1][1] + kernels[-1][2] - kernels[0][1]
    return {"kernel_s": sum(durs) / n, "span_s": span / n, "gap_s": statistics.fmean(gaps) if gaps else 0.0,
            "kernel_min_s": min(durs), "kernel_p50_s": statistics.median(durs), "kernel_max_s": max(durs),
            "gap_max_s": max(gaps) if gaps else 0.0, "kernels": len(kernels), "names": sorted({k[0] for k in kernels})}


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


@dataclass(frozen=True)
class _Point:
    op: str
    size_bytes: int
    count: int
    call: Callable[[], None]
    iters: int
    sleep_s: float = 0.0          # GPU sleep queued before the visit's calls (0: none)
    cycles_per_s: float = 0.0     # the sleep's rate on this GPU (validation.timing.sleep_cycles_per_s)


def _visit(ctx: Any, barrier: Callable[[], None], p: _Point) -> tuple[float, float]:
    """(event seconds per call, host issue seconds per call) of ``p.iters`` back-to-back calls after a barrier (and
    behind a GPU sleep of ``p.sleep_s``, on CUDA)."""
    ctx.sync()
    barrier()
    if p.sleep_s > 0 and ctx.is_cuda:
        gpu_sleep(p.sleep_s, p.cycles_per_s)
    return ctx.time_calls_host(p.call, p.iters)


def _profiled_pass(ctx: Any, barrier: Callable[[], None], points: Sequence[_Point], order: Sequence[int]) \
        -> tuple[list[float], list[dict[str, Any] | None]]:
    """Event time per call of each visit in ``order`` under the profiler, and each visit's kernel figures (None for
    every visit when the profile's NCCL kernels do not match the calls one to one, or off CUDA)."""
    if not ctx.is_cuda:
        return [_visit(ctx, barrier, points[i])[0] for i in order], [None] * len(order)
    from torch.profiler import ProfilerActivity, profile

    from validation.runners.step_timeline import exported_trace

    ctx.sync()
    try:
        prof = profile(activities=[ProfilerActivity.CUDA])
        prof.__enter__()
    except Exception as exc:  # noqa: BLE001 - profiler support differs between builds: the visits still run
        log.error("torch.profiler did not start: %s", exc)
        return [_visit(ctx, barrier, points[i])[0] for i in order], [None] * len(order)
    events = [_visit(ctx, barrier, points[i])[0] for i in order]
    ctx.sync()
    prof.__exit__(None, None, None)
    visits = split_visits(nccl_kernels(exported_trace(prof)), [points[i].iters for i in order])
    if visits is None:
        return events, [None] * len(order)
    return events, [kernel_stats(v, points[i].iters) for v, i in zip(visits, order)]


def run(s: KernelProbeSettings, me: Member) -> None:
    from validation.runners.collectives import DTYPE_SIZES, Context, make_call, op_sizes
    from validation.runners.facts import machine_facts, new_launch_id, run_env, short_facts
    from validation.runners.records import append_record

    ctx = Context(me)
    dist = ctx.dist
    gloo = dist.new_group(backend="gloo")

    def barrier() -> None:
        dist.barrier(group=gloo)

    shared: list[Any] = [new_launch_id()]
    dist.broadcast_object_list(shared, src=0, group=gloo)
    facts = machine_facts(with_topology=ctx.rank == 0)
    base = {"runner": "kernel_probe", "variant": s.variant, "queue_us": s.queue_us, "world": ctx.world,
            "dtype": s.dtype,
            "backend": ctx.backend, "device": ctx.device.type, "launch_id": shared[0], "env": run_env(),
            **short_facts(facts)}
    rate = sleep_cycles_per_s() if ctx.is_cuda and s.queue_us else 0.0
    points = []
    for op in s.ops:
        for nbytes, count in op_sizes(op, ctx.world, DTYPE_SIZES[s.dtype], s.sizes):
            call = make_call(ctx, op, count, s.dtype)
            for _ in range(s.warmup):
                call()
            ctx.sync()
            one = _Point(op, nbytes, count, call, 3)
            every: list[Any] = [None] * ctx.world     # gloo: an NCCL gather may have no algorithm (NCCL_ALGO=Tree)
            dist.all_gather_object(every, _visit(ctx, barrier, one)[0], group=gloo)
            iters = min(MAX_QUEUED_ITERS if s.queue_us else MAX_ITERS,
                        max(MIN_ITERS, round(s.block_ms * 1e-3 / max(max(every), 1e-9))))
            points.append(_Point(op, nbytes, count, call, iters, iters * s.queue_us * 1e-6 + 1e-3 if s.queue_us
                                 else 0.0, rate))
    if ctx.rank == 0:
        append_record(s.out, {"kind": "meta", **base, **facts, "argv": sys.argv, "points_planned": len(points),
                              "reps": s.reps, "block_ms": s.block_ms, "seed": s.seed, "warmup": s.warmup,
                              "sleep_cycles_per_s": rate})
    if ctx.is_cuda:                                   # the first profiler session sets CUPTI up: keep it out
        _profiled_pass(ctx, barrier, points, list(range(len(points))))
    for rep in range(s.reps):
        order = visit_order(len(points), s.seed, rep)
        plain: list[tuple[float, float]] = []
        if rep % 2:
            prof_ev, stats = _profiled_pass(ctx, barrier, points, order)
            plain = [_visit(ctx, barrier, points[i]) for i in order]
        else:
            plain = [_visit(ctx, barrier, points[i]) for i in order]
            prof_ev, stats = _profiled_pass(ctx, barrier, points, order)
        mine = []
        for (ev, host), pev, st in zip(plain, prof_ev, stats):
            row = {"event_s": ev, "host_s": host, "prof_event_s": pev}
            row.update({f: (st or {}).get(f) for f in RANK_FIELDS[3:]})
            mine.append((row, None if st is None else st["names"]))
        every: list[Any] = [None] * ctx.world
        dist.all_gather_object(every, mine, group=gloo)
        if ctx.rank == 0:
            for place, i in enumerate(order):
                p = points[i]
                rows = [r[place][0] for r in every]
                matched = all(r[place][1] is not None for r in every)
                append_record(s.out, {"kind": "kernel_probe", **base, "op": p.op, "bytes": p.size_bytes,
                                      "count": p.count, "rep": rep, "order": place, "iters": p.iters,
                                      "prof_first": bool(rep % 2), "kernels_matched": matched,
                                      "kernel_names": every[0][place][1],
                                      "kernel_note": None if matched else NO_KERNELS if not ctx.is_cuda
                                      else UNMATCHED,
                                      **{f"rank_{f}": [r[f] for r in rows] for f in RANK_FIELDS}})
    ctx.sync()
    barrier()


def main(argv: Sequence[str] | None = None) -> int:
    return torchrun_entry_point(parse_settings, run, argv, bind_device=True)


if __name__ == "__main__":
    sys.exit(main())
