"""Time plain GPU-to-GPU copies without NCCL: does the ring ops' mid-size per-byte step need NCCL? (issue 10)

One process drives two GPUs (``cuda:0`` and ``cuda:1``), no process group. For every size and
variant: ``warmup`` calls (the first one checked: the destination is poisoned with NaN first and
must come back equal to the source), then ``reps`` repetitions of ``iters`` back-to-back calls
(``auto``: about :data:`TARGET_REP_S` each, at least :data:`MIN_AUTO_ITERS`), timed on the host
between a synchronize of both GPUs before and after (a synchronize costs ~10-30 us against a
repetition of tens of ms). Variants (:data:`VARIANTS`):

- ``ce_uni`` / ``ce_bi``: ``dst.copy_(src)`` of a contiguous float32 tensor from GPU 0 to GPU 1
  (and, ``bi``, at the same time GPU 1 to GPU 0): PyTorch calls ``cudaMemcpyAsync`` between peers,
  a copy engine moves the bytes, no SM runs;
- ``sm_uni`` / ``sm_bi``: the same bytes as an int32 -> float32 converting copy: not a plain memcpy,
  so with peer access on PyTorch runs its elementwise copy kernel on the source GPU, whose SMs
  store straight into the peer's memory over NVLink (what NCCL's Simple protocol does, with no
  NCCL: no chunks, no steps, no flags);
- ``ce_local`` / ``sm_local``: the same two copies inside GPU 0 (HBM only, no NVLink): the control.

``--api cupy`` runs the same kind of copies with little host work (the torch path issues a peer copy in ~50 us,
which sets the pace up to ~20 MiB one way and ~45 MiB both ways): ``raw_ce_*`` call ``cudaMemcpyPeerAsync``,
``raw_sm_*`` launch a plain 16-byte-wide grid-stride copy kernel (132 x 4 blocks of 512 threads) on the source GPU
storing into the peer's memory, ``raw_sm24_*`` the same kernel on 24 blocks (NCCL's 24 channels on an NV18 pair
run one block each); CuPy (in the device's image) allocates and launches, peer access enabled both ways.

PyTorch's cross-device ``copy_`` orders itself after the destination GPU's current stream and makes
that stream wait for the copy; the two directions of a ``bi`` pair therefore run on their own
streams with an idle stream current on the other GPU, or they would queue behind each other.

Each record (``kind:"peer"``, one per variant and size) holds every repetition's time per call
(``rep_times_s``), the host's issue time per call of each repetition (``rep_issue_s``: near the
time per call means the host, not the copy, set the pace), ``rep_end_unix_s`` (to match
``nvidia-smi`` samples taken beside it) and ``pass``. Sizes are bytes of one direction. A ``meta``
line per launch holds the machine facts and ``peer_access`` (``torch.cuda.can_device_access_peer``).

    python -m validation.runners.peer_copy --min-bytes 4M --max-bytes 1G --factor 1.4142135623730951 \\
        --out peer.jsonl
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
from simulator.core.vocabulary import size_ladder
from validation.runners.facts import machine_facts, new_launch_id, run_env, short_facts
from validation.runners.launch import entry_point, parse_names
from validation.runners.records import append_record

VARIANTS = ("ce_uni", "ce_bi", "sm_uni", "sm_bi", "ce_local", "sm_local")
"""Copy engine or SM kernel; one direction, both at once, or inside GPU 0 (the HBM-only control)."""
RAW_VARIANTS = ("raw_ce_uni", "raw_ce_bi", "raw_sm_uni", "raw_sm_bi", "raw_sm24_uni", "raw_sm24_bi")
"""``--api cupy``: the same copies issued through CUDA directly (little host work per call)."""
RAW_BLOCKS = {"sm": 132 * 4, "sm24": 24}
"""Blocks of the raw copy kernel: the whole GPU (132 SMs, 4 blocks each), or NCCL's 24 channels' worth."""
RAW_THREADS = 512
RAW_KERNEL = r"""
extern "C" __global__ void copy16(unsigned long long src, unsigned long long dst, unsigned long long n) {
  const float4* s = (const float4*)src;
  float4* d = (float4*)dst;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) d[i] = s[i];
}
"""
ELEMENT_BYTES = 4
"""float32 / int32 elements."""
SIZE_GRAIN = 16
"""Sizes are rounded down to whole 16-byte words (the raw kernel moves float4s)."""
TARGET_REP_S = 0.03
MIN_AUTO_ITERS = 5
MAX_AUTO_ITERS = 5000


@dataclass(frozen=True)
class Settings:
    """Validated command-line settings."""

    variants: tuple[str, ...]
    sizes: tuple[int, ...]
    out: str
    warmup: int
    reps: int
    label: str
    api: str = "torch"


def parse_settings(argv: Sequence[str] | None) -> Settings:
    p = argparse.ArgumentParser(prog="python -m validation.runners.peer_copy",
                                description="Time GPU 0 <-> GPU 1 copies (copy engine, SM kernel) without NCCL.")
    p.add_argument("--api", default="torch", choices=("torch", "cupy"))
    p.add_argument("--variants", default=None,
                   help="comma-separated: " + ",".join(VARIANTS) + " (torch); " + ",".join(RAW_VARIANTS) + " (cupy)")
    p.add_argument("--min-bytes", default="4M")
    p.add_argument("--max-bytes", default="1G")
    p.add_argument("--factor", type=float, default=2 ** 0.5)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--label", default="L1", help="the pass this launch belongs to (recorded as 'pass')")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    for name, value in (("reps", a.reps), ("warmup", a.warmup)):
        if value < 1:
            raise InputError("must be >= 1 (the first warm-up call is checked)", field=name, value=value)
    sizes = size_ladder(parse_size(a.min_bytes, "min-bytes"), parse_size(a.max_bytes, "max-bytes"), a.factor)
    sizes = sorted({s // SIZE_GRAIN * SIZE_GRAIN for s in sizes if s >= SIZE_GRAIN})
    if not sizes:
        raise InputError(f"no size of at least {SIZE_GRAIN} bytes in the ladder", field="max-bytes", value=a.max_bytes)
    known = VARIANTS if a.api == "torch" else RAW_VARIANTS
    return Settings(parse_names(a.variants or ",".join(known), known, "variants", "variant"), tuple(sizes), a.out,
                    a.warmup, a.reps, a.label, a.api)


@dataclass(frozen=True)
class Lane:
    """One direction of a variant: copy ``src`` into ``dst`` on ``stream``, with ``idle`` current on
    the destination GPU (PyTorch's cross-device barrier then waits on nothing)."""

    src: Any
    dst: Any
    stream: Any
    idle: Any


def build_lanes(torch: Any, variant: str, count: int) -> list[Lane]:
    """The tensors and streams of ``variant`` for ``count`` elements (random data, never zeros)."""
    kind, way = variant.split("_")
    src_dtype = torch.float32 if kind == "ce" else torch.int32
    pairs = {"uni": [(0, 1)], "bi": [(0, 1), (1, 0)], "local": [(0, 0)]}[way]
    lanes = []
    for s, d in pairs:
        g = torch.Generator(device=f"cuda:{s}").manual_seed(1000 * s + d)
        if src_dtype == torch.float32:
            src = torch.rand(count, device=f"cuda:{s}", generator=g)
        else:
            src = torch.randint(-2 ** 20, 2 ** 20, (count,), device=f"cuda:{s}", generator=g,
                                dtype=torch.int32)
        dst = torch.empty(count, device=f"cuda:{d}", dtype=torch.float32)
        lanes.append(Lane(src, dst, torch.cuda.Stream(device=f"cuda:{s}"),
                          torch.cuda.Stream(device=f"cuda:{d}")))
    return lanes


def issue(torch: Any, lanes: Sequence[Lane]) -> None:
    """One call of the variant: every lane's copy issued on its own stream."""
    for lane in lanes:
        with torch.cuda.stream(lane.idle), torch.cuda.stream(lane.stream):
            lane.dst.copy_(lane.src, non_blocking=True)


def check(torch: Any, lanes: Sequence[Lane], variant: str, size_bytes: int) -> None:
    """Poison every destination, copy once, and require the source's values back."""
    for lane in lanes:
        lane.dst.fill_(float("nan"))
    synchronize(torch)
    issue(torch, lanes)
    synchronize(torch)
    for lane in lanes:
        if not torch.equal(lane.dst, lane.src.to(device=lane.dst.device, dtype=torch.float32)):
            raise RuntimeError(f"{variant} at {size_bytes} bytes: the copy differs from its source")


def synchronize(torch: Any) -> None:
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)


class TorchCopies:
    """The torch path: :func:`build_lanes`, :func:`issue`, :func:`check`, :func:`synchronize`."""

    def __init__(self) -> None:
        import torch
        self.torch = torch

    def prepare(self, variant: str, size_bytes: int) -> Any:
        lanes = build_lanes(self.torch, variant, size_bytes // ELEMENT_BYTES)
        check(self.torch, lanes, variant, size_bytes)
        return lanes

    def issue(self, lanes: Any) -> None:
        issue(self.torch, lanes)

    def synchronize(self) -> None:
        synchronize(self.torch)

    def release(self) -> None:
        self.torch.cuda.empty_cache()


class RawCopies:
    """The CuPy path: ``cudaMemcpyPeerAsync`` or the raw kernel, one stream per direction."""

    def __init__(self) -> None:
        try:
            import cupy as cp
        except ImportError:
            raise InputError("needs CuPy, which is not installed here (the torch path needs only PyTorch)",
                             field="api", value="cupy") from None
        self.cp = cp
        for a, b in ((0, 1), (1, 0)):
            if not cp.cuda.runtime.deviceCanAccessPeer(a, b):   # the raw kernel would store into memory it cannot reach
                raise InputError(f"GPU {a} cannot access GPU {b}'s memory (no peer access): the raw copies need it",
                                 field="api", value="cupy")
            with cp.cuda.Device(a):
                try:
                    cp.cuda.runtime.deviceEnablePeerAccess(b)
                except cp.cuda.runtime.CUDARuntimeError:
                    pass         # already enabled (access itself was checked above)
        self.kernel = {d: None for d in (0, 1)}

    def _kernel(self, device: int) -> Any:
        if self.kernel[device] is None:
            with self.cp.cuda.Device(device):
                self.kernel[device] = self.cp.RawKernel(RAW_KERNEL, "copy16")
        return self.kernel[device]

    def prepare(self, variant: str, size_bytes: int) -> Any:
        cp = self.cp
        _, kind, way = variant.split("_")
        lanes = []
        for s, d in {"uni": [(0, 1)], "bi": [(0, 1), (1, 0)]}[way]:
            with cp.cuda.Device(s):
                src = cp.random.RandomState(1000 * s + d).random_sample(size_bytes // ELEMENT_BYTES, dtype=cp.float32)
                stream = cp.cuda.Stream(non_blocking=True)
            with cp.cuda.Device(d):
                dst = cp.full(size_bytes // ELEMENT_BYTES, cp.nan, dtype=cp.float32)
            lanes.append((kind, s, d, src, dst, stream, size_bytes))
        self.synchronize()
        self.issue(lanes)
        self.synchronize()
        step = 4099
        for _, s, d, src, dst, _, _ in lanes:
            with cp.cuda.Device(s):
                a = cp.asnumpy(cp.concatenate([src[::step], src[-1024:]]))
            with cp.cuda.Device(d):
                b = cp.asnumpy(cp.concatenate([dst[::step], dst[-1024:]]))
            if not (a == b).all():
                raise RuntimeError(f"{variant} at {size_bytes} bytes: the copy differs from its source")
        return lanes

    def issue(self, lanes: Any) -> None:
        cp = self.cp
        for kind, s, d, src, dst, stream, nbytes in lanes:
            if kind == "ce":
                cp.cuda.runtime.memcpyPeerAsync(dst.data.ptr, d, src.data.ptr, s, nbytes, stream.ptr)
            else:
                with cp.cuda.Device(s):
                    self._kernel(s)((RAW_BLOCKS[kind],), (RAW_THREADS,),
                                    (cp.uint64(src.data.ptr), cp.uint64(dst.data.ptr), cp.uint64(nbytes // 16)),
                                    stream=stream)

    def synchronize(self) -> None:
        for d in (0, 1):
            self.cp.cuda.Device(d).synchronize()

    def release(self) -> None:
        self.cp.get_default_memory_pool().free_all_blocks()


def timed_calls(copier: Any, lanes: Any, iters: int) -> tuple[float, float]:
    """(seconds per call, host issue seconds per call) of ``iters`` back-to-back calls."""
    copier.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        copier.issue(lanes)
    t_issue = time.perf_counter()
    copier.synchronize()
    t1 = time.perf_counter()
    return (t1 - t0) / iters, (t_issue - t0) / iters


def measure(copier: Any, variant: str, size_bytes: int, s: Settings) -> dict[str, Any]:
    """One record: the variant at one size."""
    lanes = copier.prepare(variant, size_bytes)
    for _ in range(s.warmup - 1):
        copier.issue(lanes)
    probe, _ = timed_calls(copier, lanes, MIN_AUTO_ITERS)
    iters = max(MIN_AUTO_ITERS, min(MAX_AUTO_ITERS, round(TARGET_REP_S / max(probe, 1e-9))))
    times, issues, ends = [], [], []
    for _ in range(s.reps):
        t, h = timed_calls(copier, lanes, iters)
        times.append(t)
        issues.append(h)
        ends.append(time.time())
    med = statistics.median(times)
    del lanes
    copier.release()
    return {"kind": "peer", "variant": variant, "bytes": size_bytes, "pass": s.label, "iters": iters, "api": s.api,
            "time_s": med, "rep_times_s": times, "rep_issue_s": issues, "rep_end_unix_s": ends,
            "GBps_per_direction": size_bytes / med / 1e9}


def run(s: Settings) -> int:
    import torch

    if torch.cuda.device_count() < 2:
        print("error: peer_copy needs two GPUs", file=sys.stderr)
        return 2
    # before the meta line: a launch that cannot copy leaves no record behind (an InputError: launch.entry_point)
    copier = TorchCopies() if s.api == "torch" else RawCopies()
    facts = machine_facts()
    launch = new_launch_id()
    append_record(s.out, {"kind": "meta", "runner": "peer_copy", "launch_id": launch, "pass": s.label, "api": s.api,
                          "env": run_env(), "peer_access": [torch.cuda.can_device_access_peer(0, 1),
                                                            torch.cuda.can_device_access_peer(1, 0)],
                          **facts})
    short = short_facts(facts)
    for size in s.sizes:
        for variant in s.variants:
            rec = measure(copier, variant, size, s)
            append_record(s.out, {**rec, "launch_id": launch, **short})
            print(f"{variant:9s} {size / 2 ** 20:9.2f} MiB {rec['time_s'] * 1e6:10.1f} us "
                  f"{rec['GBps_per_direction']:7.1f} GB/s", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return entry_point(parse_settings, run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
