"""How long compute kernels take while an NCCL kernel holds some of the GPU's SMs, and why.

::

    NCCL_MIN_NCHANNELS=24 NCCL_MAX_NCHANNELS=24 torchrun --nproc-per-node 2 -m validation.runners.gemm_nccl \\
        --ops all_gather,reduce_scatter,all_reduce --sizes 16M,64M,256M --reps 10 --out gemm_nccl.jsonl

Issue 14: in profiled FSDP steps (``validation.fsdp_profile``) GEMMs that run beside an NCCL kernel take 1.2-2.0x
their time alone, the same at 2 and 4 GPUs, and as much while the NCCL kernel only waits for a late peer as while it
moves data. Two mechanisms could do that: NCCL's blocks occupy SMs (one block per channel, for as long as the kernel
is resident, waiting included) and its copies share the memory bandwidth. This probe separates them. Per work
(``--works``: bf16 GEMMs ``gemm:MxNxK`` of the FSDP/TP runs' shapes, a flash attention ``attention:HxS``, a
memory-bound ``copy:BYTES``) every rank times, with CUDA events on the default stream, the median of ``--reps`` of

* ``alone``: ``n`` back-to-back kernels of the work (``n`` so that they last about ``--work-ms``);
* ``xfer`` (per op and size): the same ``n`` kernels issued right after a chain of ``k`` collectives on a side
  stream, ``k`` so that the chain lasts about ``--cover`` times the work alone: the work runs inside transferring
  NCCL kernels (SMs held and memory traffic);
* ``spin`` (once per work, the first op and size): rank 0 issues one collective, then the work; rank 1's host
  sleeps ``--cover`` times the work alone before it issues its collective, so rank 0's NCCL kernel is resident but
  only polls while rank 0's work runs (SMs held, almost no memory traffic). Rank 0's figures only.

Each timed piece also records where the work ran against the collectives (``start_after_coll_s``: work start less
the first collective's start; ``coll_after_work_s``: the last collective's end less the work's end; both >= 0 when
the work lay inside). One ``kind:"gemm_nccl"`` record per point and rank (rank 0 writes every rank's).

Once per launch a profiled pass (``torch.profiler``, CUDA activity) runs every work kernel and every collective
once and keeps their launch shapes as ``kind:"kernel_grid"`` records (name, grid, block, registers per thread,
shared memory, blocks per SM as CUPTI reports them): the GEMMs' tile grids and the NCCL kernel's blocks (its
channels) are what an SM-share law needs. The NCCL channel count is set by the caller's environment
(``NCCL_MIN_NCHANNELS`` = ``NCCL_MAX_NCHANNELS``, recorded in ``env``).

On CPU (gloo, the tests) there are no streams: the pieces run one after the other and the numbers mean nothing,
but the records have the same fields.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from simulator.core.errors import InputError
from simulator.core.units import parse_size
from validation.runners.launch import (Member, add_process_args, check_least, parse_names, parse_sizes,
                                       torchrun_entry_point)

OPS = ("all_gather", "reduce_scatter", "all_reduce")
MODES = ("xfer", "spin")
DEFAULT_WORKS = ("gemm:2048x2048x2048,gemm:2048x6144x2048,gemm:2048x8192x2048,gemm:2048x2048x8192,"
                 "gemm:4096x2048x8192,gemm:512x12288x4096,gemm:8192x8192x8192,attention:16x2048,copy:256M")
"""The FSDP/TP runs' GEMMs (tokens x out x in: h2048 seq 2048 QKV/proj/FC1/FC2; a TP-sized one; h4096 seq 512
QKV), a many-wave GEMM (the large-GEMM limit), their flash attention (16 heads of 128, seq 2048, causal) and a copy
of 256 MiB (read and written)."""


@dataclass(frozen=True)
class Work:
    """One kind of compute kernel: ``gemm`` (m, n, k), ``attention`` (heads, seq) or ``copy`` (bytes)."""

    kind: str
    dims: tuple[int, ...]

    @property
    def label(self) -> str:
        return f"{self.kind}:" + "x".join(str(d) for d in self.dims)


def parse_work(text: str) -> Work:
    kind, _, rest = text.partition(":")
    try:
        if kind == "gemm":
            dims = tuple(int(x) for x in rest.split("x"))
            if len(dims) == 3 and min(dims) > 0:
                return Work(kind, dims)
        elif kind == "attention":
            dims = tuple(int(x) for x in rest.split("x"))
            if len(dims) == 2 and min(dims) > 0:
                return Work(kind, dims)
        elif kind == "copy":
            size = int(parse_size(rest, field="works"))
            if size > 0:
                return Work(kind, (size,))
    except ValueError:
        pass
    raise InputError("a work is gemm:MxNxK, attention:HEADSxSEQ or copy:BYTES", field="works", value=text)


@dataclass(frozen=True)
class GemmNcclSettings:
    works: tuple[Work, ...]
    ops: tuple[str, ...]
    sizes: tuple[int, ...]
    modes: tuple[str, ...]
    work_ms: float
    cover: float
    reps: int
    warmup: int
    out: str
    backend: str
    device: str
    timeout_s: float = 600.0     # the process group's (no flag)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.gemm_nccl",
                                description="Time compute kernels alone, beside transferring NCCL kernels and beside "
                                            "a waiting NCCL kernel; run under torchrun.")
    p.add_argument("--works", default=DEFAULT_WORKS, help="comma-separated gemm:MxNxK, attention:HxS, copy:BYTES")
    p.add_argument("--ops", default=",".join(OPS), help=f"comma-separated, of {', '.join(OPS)}")
    p.add_argument("--sizes", default="16M,64M,256M", help="collective sizes (nccl-tests size: the whole buffer)")
    p.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    p.add_argument("--work-ms", type=float, default=1.0, help="the work's kernels last about this long alone")
    p.add_argument("--cover", type=float, default=3.0,
                   help="the collectives (xfer) or the peer's delay (spin) last about this many times the work")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--out", required=True)
    add_process_args(p)
    return p


def parse_settings(argv: Sequence[str] | None) -> GemmNcclSettings:
    a = build_parser().parse_args(argv)
    works = tuple(parse_work(x.strip()) for x in a.works.split(",") if x.strip())
    if not works:
        raise InputError("give at least one work", field="works", value=a.works)
    sizes = parse_sizes(a.sizes)
    check_least(reps=(a.reps, 1), warmup=(a.warmup, 0))
    if not a.work_ms > 0:
        raise InputError("must be > 0", field="work-ms", value=a.work_ms)
    if not a.cover > 1:
        raise InputError("must be > 1 (the collectives must outlast the work)", field="cover", value=a.cover)
    return GemmNcclSettings(works, parse_names(a.ops, OPS, "ops", "op"), sizes, parse_names(a.modes, MODES, "modes",
                            "mode"), a.work_ms, a.cover, a.reps, a.warmup, a.out, a.backend, a.device)


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


@dataclass(frozen=True)
class Timed:
    """One timed piece on this rank (seconds; the offsets are None when no collective ran)."""

    work_s: float
    coll_s: float
    start_after_coll_s: float | None
    coll_after_work_s: float | None


class _Probe:
    """One rank's buffers, side stream and timing."""

    def __init__(self, s: GemmNcclSettings, device: Any, is_cuda: bool, rank: int, world: int) -> None:
        import torch

        self.s, self.device, self.is_cuda, self.rank, self.world = s, device, is_cuda, rank, world
        self.dtype = torch.bfloat16 if is_cuda else torch.float32
        self.side = torch.cuda.Stream() if is_cuda else None
        self.gen = torch.Generator(device=device).manual_seed(1234 + rank)

    def _randn(self, *shape: int) -> Any:
        import torch

        return torch.randn(*shape, generator=self.gen, device=self.device, dtype=torch.float32).to(self.dtype)

    def kernel(self, w: Work) -> Callable[[], None]:
        """One kernel of ``w`` on random inputs (two input sets, alternated, so repeats do not all hit L2)."""
        import torch

        small = not self.is_cuda
        if w.kind == "gemm":
            m, n, k = (min(d, 64) for d in w.dims) if small else w.dims
            sets = [(self._randn(m, k), self._randn(k, n)) for _ in range(2)]
            c = torch.empty(m, n, device=self.device, dtype=self.dtype)
            state = {"i": 0}

            def gemm() -> None:
                a, b = sets[state["i"] % 2]
                state["i"] += 1
                torch.mm(a, b, out=c)
            return gemm
        if w.kind == "attention":
            heads, seq = (min(w.dims[0], 2), min(w.dims[1], 64)) if small else w.dims
            q, k, v = (self._randn(1, heads, seq, 128) for _ in range(3))
            return lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        elems = 4096 if small else w.dims[0] // 2
        src = self._randn(elems)
        dst = torch.empty_like(src)
        return lambda: dst.copy_(src)

    def collective(self, op: str, size_bytes: int) -> Callable[[], None]:
        from validation.runners.overlap import collective_call

        return collective_call(op, size_bytes if self.is_cuda else 4096, self.dtype, self.device, self.world)

    def time_piece(self, coll: Callable[[], None] | None, calls: int, work: Callable[[], None] | None, repeat: int,
                   delay_s: float = 0.0) -> Timed:
        """``calls`` collectives on the side stream, then ``repeat`` work kernels on the default stream; a rank with
        ``delay_s`` > 0 sleeps that long on the host before issuing its collectives (and issues no work)."""
        import torch
        import torch.distributed as dist

        dist.barrier()
        if not self.is_cuda:
            t0 = time.perf_counter()
            for _ in range(calls if coll else 0):
                coll()  # type: ignore[misc]
            t1 = time.perf_counter()
            for _ in range(repeat if work else 0):
                work()  # type: ignore[misc]
            t2 = time.perf_counter()
            return Timed(t2 - t1, t1 - t0, 0.0 if coll else None, 0.0 if coll else None)
        torch.cuda.synchronize()
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        assert self.side is not None
        self.side.wait_stream(torch.cuda.current_stream())
        if delay_s > 0:
            time.sleep(delay_s)
        if coll:
            with torch.cuda.stream(self.side):
                ev[0].record()
                for _ in range(calls):
                    coll()
                ev[1].record()
        ev[2].record()
        for _ in range(repeat if work and delay_s <= 0 else 0):
            work()  # type: ignore[misc]
        ev[3].record()
        torch.cuda.current_stream().wait_stream(self.side)
        torch.cuda.synchronize()
        work_s = ev[2].elapsed_time(ev[3]) / 1e3
        if not coll:
            return Timed(work_s, 0.0, None, None)
        return Timed(work_s, ev[0].elapsed_time(ev[1]) / 1e3, ev[0].elapsed_time(ev[2]) / 1e3,
                     ev[3].elapsed_time(ev[1]) / 1e3)

    def median(self, *args: Any, **kw: Any) -> Timed:
        for _ in range(self.s.warmup):
            self.time_piece(*args, **kw)
        runs = [self.time_piece(*args, **kw) for _ in range(self.s.reps)]

        def med(f: str) -> float | None:
            xs = [getattr(r, f) for r in runs]
            return None if xs[0] is None else statistics.median(xs)
        return Timed(*(med(f) for f in Timed.__dataclass_fields__))  # type: ignore[arg-type]


def _agree(value: float, device: Any) -> float:
    """The MAX of ``value`` over ranks (so every rank repeats a piece the same number of times)."""
    from validation.runners.overlap import max_over_ranks

    return max_over_ranks([value], device)[0]


def _gather(values: list[float | None], device: Any, world: int) -> list[list[float | None]]:
    """Every rank's ``values`` (None kept), in rank order."""
    import torch
    import torch.distributed as dist

    t = torch.tensor([float("nan") if v is None else v for v in values], dtype=torch.float64, device=device)
    out = [torch.empty_like(t) for _ in range(world)]
    dist.all_gather(out, t)
    return [[None if x != x else x for x in o.tolist()] for o in out]


def kernel_grids(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The kernels of an exported chrome trace with their launch shape (CUPTI's args), in order."""
    out = []
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X" or e.get("cat") != "kernel":
            continue
        a = e.get("args") or {}
        out.append({"name": e.get("name", ""), "duration_s": float(e.get("dur", 0.0)) * 1e-6,
                    "grid": a.get("grid"), "block": a.get("block"),
                    "registers_per_thread": a.get("registers per thread"),
                    "shared_memory": a.get("shared memory"), "blocks_per_sm": a.get("blocks per SM"),
                    "warps_per_sm": a.get("warps per SM"), "stream": a.get("stream")})
    return out


def profile_kernels(probe: _Probe, kernels: dict[str, Callable[[], None]],
                    colls: dict[str, Callable[[], None]]) -> list[dict[str, Any]]:
    """Each work kernel and each collective once under ``torch.profiler`` (CUDA only): their launch shapes."""
    import torch
    import torch.distributed as dist

    if not probe.is_cuda:
        return []
    from torch.profiler import ProfilerActivity, profile

    from validation.runners.step_timeline import exported_trace

    out = []
    for label, fn in [*kernels.items(), *colls.items()]:
        dist.barrier()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        for k in kernel_grids(exported_trace(prof)):
            out.append({"work": label, **k})
    return out


def run(s: GemmNcclSettings, me: Member) -> None:
    """Time every work alone, beside each collective and beside a waiting one; rank 0 writes the records."""
    import torch

    from validation.runners.facts import machine_facts, new_launch_id, run_env, short_facts
    from validation.runners.records import append_record

    probe = _Probe(s, me.device, me.is_cuda, me.rank, me.world)
    facts = machine_facts(with_topology=me.rank == 0)
    sms = torch.cuda.get_device_properties(me.device).multi_processor_count if me.is_cuda else None
    base = {"runner": "gemm_nccl", "world": me.world, "backend": me.backend, "device": me.device.type, "env": run_env(),
            "launch_id": new_launch_id() if me.rank == 0 else None, "sms": sms, **short_facts(facts)}
    if me.rank == 0:
        append_record(s.out, {"kind": "meta", **base, **facts, "argv": sys.argv})
    kernels = {w.label: probe.kernel(w) for w in s.works}
    colls = {(op, size): probe.collective(op, size) for op in s.ops for size in s.sizes}
    for fn in colls.values():                       # NCCL's first call sets up its buffers: keep it out
        fn()
    grids = profile_kernels(probe, kernels, {f"{op}:{size}": fn for (op, size), fn in colls.items()})
    if me.rank == 0:
        for g in grids:
            append_record(s.out, {"kind": "kernel_grid", **base, **g})
    coll_one = {key: probe.median(fn, 1, None, 0).coll_s for key, fn in colls.items()}

    def write(mode: str, w: Work, op: str | None, size: int | None, calls: int, repeat: int, alone: Timed,
              beside: Timed | None) -> None:
        fields = ("work_alone_s", "work_beside_s", "coll_s", "start_after_coll_s", "coll_after_work_s")
        mine = [alone.work_s, *(None,) * 4] if beside is None else \
            [alone.work_s, beside.work_s, beside.coll_s, beside.start_after_coll_s, beside.coll_after_work_s]
        every = _gather(mine, me.device, me.world)
        if me.rank == 0:
            append_record(s.out, {"kind": "gemm_nccl", **base, "mode": mode, "work": w.label, "op": op,
                                  "bytes": size, "coll_calls": calls, "work_kernels": repeat,
                                  "coll_one_s": None if op is None else coll_one[(op, size)], "reps": s.reps,
                                  **{f: [r[i] for r in every] for i, f in enumerate(fields)}})

    for w in s.works:
        fn = kernels[w.label]
        one = probe.median(None, 0, fn, 1).work_s
        repeat = int(_agree(max(1.0, round(s.work_ms * 1e-3 / one)) if one > 0 else 1.0, me.device))
        alone = probe.median(None, 0, fn, repeat)
        write("alone", w, None, None, 0, repeat, alone, None)
        target = s.cover * _agree(alone.work_s, me.device)
        if "xfer" in s.modes:
            for (op, size), coll in colls.items():
                calls = int(_agree(max(1.0, -(-target // coll_one[(op, size)])) if coll_one[(op, size)] > 0
                                   else 1.0, me.device))
                write("xfer", w, op, size, calls, repeat, alone, probe.median(coll, calls, fn, repeat))
        if "spin" in s.modes and me.world > 1:
            (op, size), coll = next(iter(colls.items()))
            delay = target if me.rank == me.world - 1 else 0.0
            write("spin", w, op, size, 1, repeat, alone, probe.median(coll, 1, fn, repeat, delay_s=delay))


def main(argv: Sequence[str] | None = None) -> int:
    return torchrun_entry_point(parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
