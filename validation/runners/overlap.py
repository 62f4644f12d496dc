"""How much a collective and compute kernels slow each other when they overlap on the same GPUs.

::

    torchrun --nproc-per-node 4 -m validation.runners.overlap --sizes 64M,384M \\
        --ops reduce_scatter,all_gather --work copy,matmul --reps 10 --out overlap.jsonl

Per (op, size, work) every rank times, with CUDA events, 1. the collective alone (on a side
stream), 2. the work alone (on the default stream: ``copy``, a memory-bound ``y.copy_(x)`` of
``--copy-bytes`` repeated until it lasts about ``--cover`` times the collective, or ``matmul``,
bf16 4096 x 4096 products repeated likewise) and 3. both issued at once, the collective on the
side stream: how long the work takes beside the collective and how long the collective takes
beside the work. Ranks meet at a barrier before each timed piece. One ``kind:"overlap"`` record
per point (rank 0 writes, the MAX over ranks of each per-rank median): ``coll_alone_s``,
``work_alone_s``, ``work_beside_s``, ``coll_beside_s``, ``both_s`` (issue to last end), and
``work_bytes`` (local memory bytes of the work: read and write per copy, operands and result per
product). The simulator's FSDP model charges the work ``4 x busbw bytes / memory bandwidth``
(``simulator.training.llm.hbm_contention``): ``python -m validation.overlap_check FILE`` compares.

On CPU (gloo, the tests) there are no streams: the pieces run one after the other, so the numbers
mean nothing but the records have the same fields.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from simulator.core.errors import InputError
from simulator.core.units import parse_size
from validation.runners.launch import (Member, add_process_args, check_least, parse_names, parse_sizes,
                                       torchrun_entry_point)

OPS = ("reduce_scatter", "all_gather", "all_reduce")
WORKS = ("copy", "matmul")


@dataclass(frozen=True)
class OverlapSettings:
    sizes: tuple[int, ...]
    ops: tuple[str, ...]
    works: tuple[str, ...]
    copy_bytes: int
    cover: float
    reps: int
    warmup: int
    out: str
    backend: str
    device: str
    timeout_s: float = 600.0     # the process group's (no flag)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.overlap",
                                description="Time a collective and compute kernels alone and overlapped; "
                                            "run under torchrun.")
    p.add_argument("--sizes", default="64M,384M", help="collective sizes (nccl-tests size: the whole buffer)")
    p.add_argument("--ops", default="reduce_scatter,all_gather", help=f"comma-separated, of {', '.join(OPS)}")
    p.add_argument("--work", default="copy,matmul", help=f"comma-separated, of {', '.join(WORKS)}")
    p.add_argument("--copy-bytes", default="256M", help="bytes one copy kernel reads (and writes)")
    p.add_argument("--cover", type=float, default=1.5,
                   help="the work lasts about this many times the collective alone")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--out", required=True)
    add_process_args(p)
    return p


def parse_settings(argv: Sequence[str] | None) -> OverlapSettings:
    a = build_parser().parse_args(argv)
    sizes = parse_sizes(a.sizes)
    check_least(reps=(a.reps, 1), warmup=(a.warmup, 0))
    if not a.cover > 0:
        raise InputError("must be > 0", field="cover", value=a.cover)
    return OverlapSettings(sizes, parse_names(a.ops, OPS, "ops", "op"), parse_names(a.work, WORKS, "work", "work"),
                           int(parse_size(a.copy_bytes, field="copy-bytes")), a.cover, a.reps, a.warmup,
                           a.out, a.backend, a.device)


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


def collective_call(op: str, size_bytes: int, dtype: Any, device: Any, world: int) -> Callable[[], None]:
    """One call of ``op`` (of :data:`OPS`) on ``world`` ranks over a buffer of ``size_bytes`` (nccl-tests size: the
    whole buffer, rounded down to a multiple of the ranks), its tensors allocated once here."""
    import torch
    import torch.distributed as dist

    elem = torch.tensor([], dtype=dtype).element_size()
    total = max(size_bytes // elem // world, 1) * world
    shard = total // world
    if op == "reduce_scatter":
        x = torch.ones(total, dtype=dtype, device=device)
        y = torch.empty(shard, dtype=dtype, device=device)
        scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor  # torch < 2.13
        return lambda: scatter(y, x)
    if op == "all_gather":
        x = torch.ones(shard, dtype=dtype, device=device)
        y = torch.empty(total, dtype=dtype, device=device)
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor  # torch < 2.13
        return lambda: gather(y, x)
    x = torch.ones(total, dtype=dtype, device=device)
    return lambda: dist.all_reduce(x)


class _Probe:
    """One rank's buffers, streams and timing."""

    def __init__(self, s: OverlapSettings, device: Any, is_cuda: bool, world: int) -> None:
        import torch

        self.s, self.device, self.is_cuda, self.world = s, device, is_cuda, world
        dtype = torch.bfloat16 if is_cuda else torch.float32
        self.dtype = dtype
        n = max(s.copy_bytes // 2, 1) if is_cuda else 4096
        self.src = torch.ones(n, dtype=dtype, device=device)
        self.dst = torch.empty_like(self.src)
        m = 4096 if is_cuda else 64
        self.a = torch.randn(m, m, device=device).to(dtype)
        self.b = torch.randn(m, m, device=device).to(dtype)
        self.c = torch.empty_like(self.a)
        self.side = torch.cuda.Stream() if is_cuda else None

    def work_piece(self, work: str) -> tuple[Callable[[], None], float]:
        """One kernel of ``work`` and the local memory bytes it moves."""
        import torch

        if work == "copy":
            return (lambda: self.dst.copy_(self.src)), 2.0 * self.src.numel() * self.src.element_size()
        return (lambda: torch.mm(self.a, self.b, out=self.c)), 3.0 * self.a.numel() * self.a.element_size()

    def collective(self, op: str, size_bytes: int) -> Callable[[], None]:
        return collective_call(op, size_bytes, self.dtype, self.device, self.world)

    def _events(self) -> tuple[Any, Any]:
        import torch

        return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def time_pieces(self, coll: Callable[[], None] | None, work: Callable[[], None] | None,
                    repeat: int) -> tuple[float, float, float]:
        """Seconds of (collective, work, both) issued together: the collective on the side stream,
        ``repeat`` work kernels on the default stream. A missing piece times as 0."""
        import time

        import torch
        import torch.distributed as dist

        dist.barrier()
        if not self.is_cuda:
            t0 = time.perf_counter()
            if coll:
                coll()
            t1 = time.perf_counter()
            for _ in range(repeat if work else 0):
                work()  # type: ignore[misc]
            t2 = time.perf_counter()
            return (t1 - t0 if coll else 0.0), (t2 - t1 if work else 0.0), t2 - t0
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        start.record()
        (c0, c1), (w0, w1) = self._events(), self._events()
        assert self.side is not None
        self.side.wait_stream(torch.cuda.current_stream())
        if coll:
            with torch.cuda.stream(self.side):
                c0.record()
                coll()
                c1.record()
        w0.record()
        for _ in range(repeat if work else 0):
            work()  # type: ignore[misc]
        w1.record()
        torch.cuda.current_stream().wait_stream(self.side)
        end = torch.cuda.Event(enable_timing=True)
        end.record()
        torch.cuda.synchronize()
        return ((c0.elapsed_time(c1) / 1e3) if coll else 0.0, (w0.elapsed_time(w1) / 1e3) if work else 0.0,
                start.elapsed_time(end) / 1e3)

    def median_of(self, coll: Callable[[], None] | None, work: Callable[[], None] | None,
                  repeat: int) -> tuple[float, float, float]:
        for _ in range(self.s.warmup):
            self.time_pieces(coll, work, repeat)
        runs = [self.time_pieces(coll, work, repeat) for _ in range(self.s.reps)]
        return tuple(statistics.median(r[i] for r in runs) for i in range(3))  # type: ignore[return-value]


def max_over_ranks(values: list[float], device: Any) -> list[float]:
    """Each of ``values``' MAX over the ranks (an all-reduce): every rank then agrees on a count or a time."""
    import torch
    import torch.distributed as dist

    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return [float(v) for v in t.tolist()]


def run(s: OverlapSettings, me: Member) -> None:
    """Time every collective and work alone and overlapped; rank 0 writes the records."""
    from validation.runners.facts import machine_facts, run_env, short_facts
    from validation.runners.records import append_record

    probe = _Probe(s, me.device, me.is_cuda, me.world)
    facts = machine_facts(with_topology=me.rank == 0)
    base = {"runner": "overlap", "world": me.world, "backend": me.backend, "device": me.device.type, "env": run_env(),
            **short_facts(facts)}
    if me.rank == 0:
        append_record(s.out, {"kind": "meta", **base, **facts, "argv": sys.argv})
    for op in s.ops:
        for size in s.sizes:
            coll = probe.collective(op, size)
            coll_alone = probe.median_of(coll, None, 0)[0]
            for work in s.works:
                piece, piece_bytes = probe.work_piece(work)
                one = probe.median_of(None, piece, 1)[1]
                repeat = max(1, round(s.cover * coll_alone / one)) if one > 0 else 1
                repeat = int(max_over_ranks([float(repeat)], me.device)[0])
                work_alone = probe.median_of(None, piece, repeat)[1]
                coll_beside, work_beside, both = probe.median_of(coll, piece, repeat)
                values = max_over_ranks([coll_alone, work_alone, coll_beside, work_beside, both], me.device)
                if me.rank == 0:
                    names = ("coll_alone_s", "work_alone_s", "coll_beside_s", "work_beside_s", "both_s")
                    append_record(s.out, {"kind": "overlap", **base, "op": op, "bytes": size, "work": work,
                                          "work_kernels": repeat, "work_bytes": repeat * piece_bytes,
                                          "reps": s.reps, **dict(zip(names, values))})


def main(argv: Sequence[str] | None = None) -> int:
    return torchrun_entry_point(parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
