"""Measure NCCL (or gloo) collectives the way nccl-tests does, with torch.distributed.

Run one process per GPU::

    torchrun --nproc-per-node 8 -m validation.runners.collectives \\
        --ops all_reduce,all_gather --min-bytes 4 --max-bytes 1G --factor 2 --out results.jsonl

or on CPU for tests: ``--backend gloo --device cpu``. Gloo on CUDA tensors (``--backend gloo
--device cuda``) is what DDP with ``backend="gloo"`` does on GPUs (tensors staged through host
memory); it is timed with the host clock.

By default every call of a point runs on the same buffers, as nccl-tests does; then up to the GPU's L2
size (50 MB on H100, 60 MB on H200) the data may stay in L2 between calls. ``--rotate-bytes SIZE``
allocates :func:`buffer_sets` distinct buffer sets per point instead (at least 2, together at least
SIZE bytes per rank) and runs each call on the next one in turn, as training's collectives see fresh
buffers; each record says which (``buffer_sets``, ``buffer_bytes``, ``rotate_bytes``).

For each (op, size) point: ``warmup`` calls, then ``reps`` repetitions of ``iters`` back-to-back
calls timed with CUDA events (``time.perf_counter`` after a barrier on CPU). Each repetition's
per-call time is reduced with MAX over ranks (the slowest rank, as nccl-tests reports); the
record holds the median, min and max over repetitions, every repetition (``rep_times_s``) and every
rank's own time of every repetition (``rank_rep_times_s``, one list per rank: whether the ranks'
slow repetitions coincide, validation.rank_sync). With NCCL, each record also holds every rank's host
issue time per call of every repetition (``rank_host_times_s``: the host clock over the first
HOST_CALLS calls, which return before the GPU runs them; one list per rank): where a GPU time above
it shows the ranks waiting for the GPU or for each other, and a host time near it a host-bound stream,
and, unlike the GPU times, which rank's host was slow. ``rep_end_unix_s`` is the writing rank's wall
clock (Unix seconds) at the end of every repetition, so samples taken beside the run (GPU clocks and
power from ``nvidia-smi``) can be matched to repetitions. ``iters`` is chosen on rank 0 (``auto``:
enough calls for about 50 ms, at least 5) and broadcast so every rank runs the same number.

Sizes follow nccl-tests: for all_gather, reduce_scatter and all_to_all, ``bytes`` is the whole
gathered buffer (per-rank count x type size x world); sizes are rounded down to a multiple of
what the op needs and points that round to zero, or to a size already done, are skipped.

Rank 0 appends one JSON line per point to ``--out`` (flushed at once) after a ``kind:"meta"``
line describing the machine. Points already in the file (same variant, op, world, bytes, dtype)
are skipped, so an interrupted run can be restarted.

Test hooks (used by the test suite to check the sweep's failure handling):
``GPUNETSIM_TEST_FAIL=1`` makes every rank exit with status 3 at start (launch.torchrun_entry_point);
``GPUNETSIM_TEST_FAIL=<op>[,<op>]`` makes them exit with status 3 when they reach that op;
``GPUNETSIM_TEST_HANG=<op>`` makes them sleep forever there (for timeout tests).
"""

from __future__ import annotations

import argparse
import itertools
import logging
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from simulator.core.errors import InputError
from simulator.core.units import parse_size
from simulator.core.vocabulary import DTYPE_BYTES, OPS, busbw_factor, nccl_tests_size, size_ladder
from validation.runners.launch import (EXIT_TEST_FAIL, Member, add_process_args, check_least, parse_names,
                                       torchrun_entry_point)
from validation.runners.records import append_record, done_points, read_records

log = logging.getLogger("validation.runners.collectives")

DTYPE_SIZES = {name: DTYPE_BYTES[name] for name in
               ("float32", "float16", "bfloat16", "float64", "int32", "int64", "int8", "uint8")}
"""Element size in bytes of each dtype the runner can allocate (torch names)."""

TARGET_REP_S = 0.05
"""With ``--iters auto``, one repetition of back-to-back calls should last about this long."""
MIN_AUTO_ITERS = 5
HOST_CALLS = 128
"""Calls over which the host issue time is taken: few enough that CUDA's launch queue (about 1024
entries) never fills, so the host clock measures issuing, not waiting for the GPU."""
MAX_AUTO_ITERS = 20000


def bandwidths_GBps(op: str, world: int, size_bytes: int, time_s: float) -> tuple[float, float]:
    """(algbw, busbw) in GB/s (1e9 bytes/s) for ``size_bytes`` moved in ``time_s``."""
    algbw = size_bytes / time_s / 1e9
    return algbw, algbw * busbw_factor(op, world)


def op_sizes(op: str, world: int, type_size: int, sizes: Sequence[int]) -> list[tuple[int, int]]:
    """(bytes, per-rank element count) for ``op``: rounded down as nccl-tests does, no zeros, no repeats."""
    out: list[tuple[int, int]] = []
    seen: set[int] = set()
    for size in sizes:
        nbytes, count = nccl_tests_size(op, world, size, type_size)
        if count <= 0 or nbytes in seen:
            continue
        seen.add(nbytes)
        out.append((nbytes, count))
    return out


@dataclass(frozen=True)
class Point:
    """One measurement to make: an op at a size (bytes as recorded, per-rank element count)."""

    op: str
    size_bytes: int
    count: int


def plan_points(ops: Sequence[str], world: int, dtype: str, sizes: Sequence[int],
                variant: str, done: set[tuple[str, str, int, int, str]]) -> list[Point]:
    """The points still to measure, in op then size order, leaving out those in ``done``."""
    points = []
    for op in ops:
        if op == "send_recv" and world < 2:
            continue
        for nbytes, count in op_sizes(op, world, DTYPE_SIZES[dtype], sizes):
            if (variant, op, world, nbytes, dtype) not in done:
                points.append(Point(op, nbytes, count))
    return points


def parse_ops(text: str) -> list[str]:
    """Comma-separated op names, checked against :data:`OPS`."""
    return list(parse_names(text, OPS, "ops", "collective"))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.collectives",
                                description="Time collectives (nccl-tests style); run under torchrun.")
    p.add_argument("--ops", default=",".join(OPS), help="comma-separated: " + ",".join(OPS))
    p.add_argument("--min-bytes", default="4", help="smallest size, e.g. 4, 8K, 1M (binary)")
    p.add_argument("--max-bytes", default="1G", help="largest size, e.g. 1G (binary)")
    p.add_argument("--factor", type=float, default=2.0, help="size multiplication factor")
    p.add_argument("--dtype", default="float32", choices=sorted(DTYPE_SIZES))
    p.add_argument("--variant", default="default", help="label for this NCCL configuration")
    p.add_argument("--out", required=True, help="JSONL file to append records to")
    p.add_argument("--warmup", type=int, default=5, help="untimed calls before each point")
    p.add_argument("--iters", default="auto", help="calls per repetition, or 'auto' (~50 ms)")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per point")
    p.add_argument("--timeout-s", type=float, default=120.0, help="process-group timeout")
    add_process_args(p)
    p.add_argument("--rotate-bytes", default="0",
                   help="0: one buffer set per point, reused by every call (nccl-tests); else rotate "
                        "distinct buffer sets totalling at least this many bytes per rank (e.g. 512M)")
    p.add_argument("--no-skip-existing", action="store_true",
                   help="measure points even if the output file already has them")
    return p


@dataclass(frozen=True)
class Settings:
    """Validated command-line settings."""

    ops: tuple[str, ...]
    sizes: tuple[int, ...]
    dtype: str
    variant: str
    out: str
    warmup: int
    iters: int | None  # None: auto
    reps: int
    timeout_s: float
    backend: str
    device: str
    skip_existing: bool
    rotate_bytes: int = 0  # 0: one buffer set reused by every call


def parse_settings(argv: Sequence[str] | None) -> Settings:
    a = build_parser().parse_args(argv)
    sizes = size_ladder(parse_size(a.min_bytes, "min-bytes"), parse_size(a.max_bytes, "max-bytes"),
                        a.factor)
    if a.iters == "auto":
        iters = None
    else:
        try:
            iters = int(a.iters)
        except ValueError:
            raise InputError("iters must be a positive integer or 'auto'", field="iters",
                             value=a.iters) from None
        if iters < 1:
            raise InputError("iters must be a positive integer or 'auto'", field="iters",
                             value=a.iters)
    check_least(reps=(a.reps, 1), warmup=(a.warmup, 0))
    return Settings(tuple(parse_ops(a.ops)), tuple(sizes), a.dtype, a.variant, a.out, a.warmup,
                    iters, a.reps, a.timeout_s, a.backend, a.device, not a.no_skip_existing,
                    parse_size(a.rotate_bytes, "rotate-bytes"))


def set_bytes(op: str, world: int, count: int, type_size: int) -> int:
    """Bytes of one buffer set (input and output) of ``op`` on one rank, as :func:`make_call` allocates."""
    if op in ("all_reduce", "broadcast", "reduce"):
        return count * type_size
    if op in ("all_gather", "reduce_scatter"):
        return count * type_size * (world + 1)
    if op == "all_to_all":
        return 2 * count * type_size * world
    if op == "send_recv":
        return 2 * count * type_size
    raise InputError("unknown collective", field="op", value=op)


def buffer_sets(one_set_bytes: int, rotate_bytes: int) -> int:
    """Buffer sets a point rotates through: 1 (reuse) when ``rotate_bytes`` is 0, else at least 2 and
    enough that together they hold at least ``rotate_bytes``."""
    if rotate_bytes <= 0:
        return 1
    return max(2, math.ceil(rotate_bytes / max(one_set_bytes, 1)))


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


def _test_hook(where: str) -> None:
    """Honour GPUNETSIM_TEST_FAIL / GPUNETSIM_TEST_HANG (see the module docstring)."""
    fail = os.environ.get("GPUNETSIM_TEST_FAIL", "")
    if fail and where in fail.split(","):
        log.error("GPUNETSIM_TEST_FAIL=%s: exiting at %s", fail, where)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_TEST_FAIL)
    if os.environ.get("GPUNETSIM_TEST_HANG", "") == where:
        while True:
            time.sleep(3600)


class Context:
    """This rank's place in the process group (joined by launch.torchrun_entry_point, NCCL bound to the device)
    and its timing primitives."""

    def __init__(self, me: Member) -> None:
        import torch
        import torch.distributed as dist

        self.torch, self.dist = torch, dist
        self.device, self.is_cuda, self.backend, self.rank, self.world = (me.device, me.is_cuda, me.backend,
                                                                          me.rank, me.world)

    def sync(self) -> None:
        if self.is_cuda:
            self.torch.cuda.synchronize()

    def barrier(self) -> None:
        self.dist.barrier()
        self.sync()

    def time_calls(self, fn: Callable[[], None], iters: int) -> float:
        """Seconds per call over ``iters`` back-to-back calls of ``fn`` on this rank (see
        :meth:`time_calls_host`)."""
        return self.time_calls_host(fn, iters)[0]

    def time_calls_host(self, fn: Callable[[], None], iters: int) -> tuple[float, float]:
        """(seconds per call, host seconds per call issued) over ``iters`` back-to-back calls of
        ``fn`` on this rank: CUDA events for NCCL, with the host clock over the first
        :data:`HOST_CALLS` calls (issue only: they return before the GPU runs them); the host clock
        (then a device synchronisation) for gloo, whose work on CUDA tensors runs on the CPU
        (copies to host, reduction, copies back) and blocks the caller, so both are that time."""
        if self.is_cuda and self.backend == "nccl":
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            head = min(iters, HOST_CALLS)
            start.record()
            t0 = time.perf_counter()
            for _ in range(head):
                fn()
            host_s = (time.perf_counter() - t0) / head
            for _ in range(iters - head):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3 / iters, host_s
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        self.sync()
        per_call = (time.perf_counter() - t0) / iters
        return per_call, per_call

    def per_rank(self, values: list[float]) -> list[list[float]]:
        """Every rank's ``values`` (one list per rank, in rank order), on every rank."""
        t = self.torch.tensor(values, dtype=self.torch.float64, device=self.device)
        parts = [self.torch.empty_like(t) for _ in range(self.world)]
        self.dist.all_gather(parts, t)
        return [[float(x) for x in p.cpu().tolist()] for p in parts]

    def broadcast_int(self, value: int) -> int:
        t = self.torch.tensor([value], dtype=self.torch.int64, device=self.device)
        self.dist.broadcast(t, src=0)
        return int(t.item())


def make_call(ctx: Context, op: str, count: int, dtype: str, sets: int = 1) -> Callable[[], None]:
    """A no-argument function that runs ``op`` once on preallocated buffers of ``count`` elements;
    with ``sets`` > 1, on ``sets`` distinct buffer sets in turn (one per call)."""
    if sets > 1:
        calls = [make_call(ctx, op, count, dtype) for _ in range(sets)]
        turn = itertools.cycle(calls).__next__
        return lambda: turn()()
    torch, dist = ctx.torch, ctx.dist
    tdtype = getattr(torch, dtype)
    n, dev = ctx.world, ctx.device

    def buf(numel: int) -> Any:
        return torch.zeros(numel, dtype=tdtype, device=dev)  # zeros: sums never overflow

    if op == "all_reduce":
        x = buf(count)
        return lambda: dist.all_reduce(x)
    if op == "broadcast":
        x = buf(count)
        return lambda: dist.broadcast(x, src=0)
    if op == "reduce":
        x = buf(count)
        return lambda: dist.reduce(x, dst=0)
    if op == "all_gather":
        src, dst = buf(count), buf(count * n)
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        return lambda: gather(dst, src)
    if op == "reduce_scatter":
        src, dst = buf(count * n), buf(count)
        scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
        return lambda: scatter(dst, src)
    if op == "all_to_all":
        src, dst = buf(count * n), buf(count * n)
        return lambda: dist.all_to_all_single(dst, src)
    if op == "send_recv":
        send, recv = buf(count), buf(count)
        peer_to, peer_from = (ctx.rank + 1) % n, (ctx.rank - 1) % n

        def sendrecv() -> None:
            ops = [dist.P2POp(dist.isend, send, peer_to), dist.P2POp(dist.irecv, recv, peer_from)]
            for work in dist.batch_isend_irecv(ops):
                work.wait()
        return sendrecv
    raise InputError("unknown collective", field="op", value=op)


def choose_iters(ctx: Context, call: Callable[[], None], fixed: int | None) -> int:
    """Calls per repetition: ``fixed``, or rank 0's estimate for ~50 ms, broadcast to all ranks."""
    if fixed is not None:
        return fixed
    ctx.barrier()
    one_s = ctx.time_calls(call, 1)
    iters = min(MAX_AUTO_ITERS, max(MIN_AUTO_ITERS, math.ceil(TARGET_REP_S / max(one_s, 1e-9))))
    return ctx.broadcast_int(iters if ctx.rank == 0 else 0)


def measure_point(ctx: Context, s: Settings, point: Point) -> dict[str, Any]:
    """Time one point; every rank returns the same numbers (reduced with MAX over ranks)."""
    one_set = set_bytes(point.op, ctx.world, point.count, DTYPE_SIZES[s.dtype])
    sets = buffer_sets(one_set, s.rotate_bytes)
    call = make_call(ctx, point.op, point.count, s.dtype, sets)
    for _ in range(s.warmup):
        call()
    ctx.sync()
    iters = choose_iters(ctx, call, s.iters)
    per_rep, host_rep, ends = [], [], []
    for _ in range(s.reps):
        ctx.barrier()
        gpu_s, host_s = ctx.time_calls_host(call, iters)
        ends.append(time.time())
        per_rep.append(gpu_s)
        host_rep.append(host_s)
    rank_reps = ctx.per_rank(per_rep)
    rank_host = ctx.per_rank(host_rep)
    per_rep = [max(col) for col in zip(*rank_reps)]
    time_s = statistics.median(per_rep)
    algbw, busbw = bandwidths_GBps(point.op, ctx.world, point.size_bytes, time_s)
    return {"op": point.op, "bytes": point.size_bytes, "count": point.count, "time_s": time_s,
            "min_s": min(per_rep), "max_s": max(per_rep), "rep_times_s": per_rep, "rank_rep_times_s": rank_reps,
            "rank_host_times_s": rank_host, "rep_end_unix_s": ends,
            "iters": iters, "buffer_sets": sets, "buffer_bytes": sets * one_set,
            "reps": s.reps, "warmup": s.warmup, "algbw_GBps": algbw, "busbw_GBps": busbw}


def run(s: Settings, me: Member) -> None:
    """Measure every planned point; rank 0 writes the records."""
    from validation.runners.facts import machine_facts, new_launch_id, run_env, short_facts

    _test_hook("start")
    ctx = Context(me)
    dist = ctx.dist
    env = run_env()
    shared: list[Any] = [None, None]
    if ctx.rank == 0:
        done = done_points(read_records(s.out)) if s.skip_existing else set()
        shared = [plan_points(s.ops, ctx.world, s.dtype, s.sizes, s.variant, done), new_launch_id()]
    dist.broadcast_object_list(shared, src=0, device=ctx.device)
    points, launch_id = shared
    facts = machine_facts(with_topology=ctx.rank == 0)
    base = {"world": ctx.world, "dtype": s.dtype, "variant": s.variant, "backend": ctx.backend,
            "device": ctx.device.type, "launch_id": launch_id, "env": env, "rotate_bytes": s.rotate_bytes,
            **short_facts(facts)}
    if ctx.rank == 0:
        append_record(s.out, {"kind": "meta", "runner": "collectives", **base, **facts,
                              "argv": sys.argv, "points_planned": len(points)})
        log.info("%d points to measure on %d ranks (%s)", len(points), ctx.world, ctx.backend)
    failed_ops: set[str] = set()
    current_op = None
    for point in points:
        if point.op in failed_ops:
            continue
        if point.op != current_op:
            current_op = point.op
            _test_hook(point.op)
        try:
            result = measure_point(ctx, s, point)
        except Exception as exc:  # noqa: BLE001 - recorded, and the remaining ops go on
            failed_ops.add(point.op)
            log.error("%s failed at %d bytes: %s", point.op, point.size_bytes, exc)
            if ctx.rank == 0:
                append_record(s.out, {"kind": "coll_failed", "variant": s.variant, "op": point.op,
                                      "bytes": point.size_bytes, "world": ctx.world,
                                      "dtype": s.dtype, "launch_id": launch_id,
                                      "reason": f"{type(exc).__name__}: {exc}"[:2000]})
            continue
        if ctx.rank == 0:
            append_record(s.out, {"kind": "coll", **result, **base})
            log.info("%-14s %12d B  %10.2f us  busbw %8.3f GB/s", point.op, point.size_bytes,
                     result["time_s"] * 1e6, result["busbw_GBps"])


def main(argv: Sequence[str] | None = None) -> int:
    return torchrun_entry_point(parse_settings, run, argv, bind_device=True)


if __name__ == "__main__":
    sys.exit(main())
