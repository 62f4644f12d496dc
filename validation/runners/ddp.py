"""Time DDP training iterations for several bucket sizes, with a no-sync compute baseline.

::

    torchrun --nproc-per-node 8 -m validation.runners.ddp --model resnet50 --batch-size 64 \\
        --bucket-caps 1,5,25,100,1000 --iters 30 --warmup 10 --out ddp.jsonl

For each bucket cap, the model is wrapped in ``DistributedDataParallel(bucket_cap_mb=cap)`` and
trained on one synthetic batch (SGD with momentum; bf16 autocast on CUDA, fp32 on CPU). Every
iteration (forward + backward + optimizer step) is timed on its own (CUDA events, or
``perf_counter`` on CPU) and reduced with MAX over ranks; all of them are kept. The synchronised
loop warms up for at least 11 iterations (``sync_warmup``), past DDP's runtime-stats sampling that
holds the host back on its first 10 (validation.ddp_logger). The same loop
under ``no_sync()`` (no gradient all-reduce) gives the compute-only baseline, so communication
that is not hidden behind backward is ``median_s - nosync_median_s``.

Rank 0 appends a ``kind:"meta"`` record and one ``kind:"ddp"`` record per bucket cap to ``--out``.
``GPUNETSIM_TEST_FAIL=1`` makes every rank exit with status 3 at start (a test hook: launch.torchrun_entry_point).
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from simulator.core.errors import InputError
from simulator.core.limits import MAX_BUCKET_CAP_MB
from validation.runners.launch import Member, add_process_args, check_least, torchrun_entry_point

log = logging.getLogger("validation.runners.ddp")

MODEL_NAMES = ("resnet50", "bert-base", "gpt2", "mlp")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) with linear interpolation (numpy's default method)."""
    if not values:
        raise ValueError("percentile of no values")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(times_s: Sequence[float], prefix: str = "") -> dict[str, float]:
    """``median_s``, ``p10_s``, ``p90_s`` of a list of iteration times (keys get ``prefix``)."""
    return {f"{prefix}median_s": statistics.median(times_s),
            f"{prefix}p10_s": percentile(times_s, 10), f"{prefix}p90_s": percentile(times_s, 90)}


def parse_caps(text: str) -> list[float]:
    """Comma-separated bucket caps in MB (DDP's ``bucket_cap_mb``), each positive."""
    caps = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        try:
            cap = float(item)
        except ValueError:
            raise InputError("bucket caps are numbers of MB", field="bucket-caps",
                             value=item) from None
        if not 0 < cap <= MAX_BUCKET_CAP_MB:
            raise InputError(f"must be positive and at most {MAX_BUCKET_CAP_MB:g} MB",
                             field="bucket-caps", value=item)
        caps.append(cap)
    if not caps:
        raise InputError("no bucket caps given", field="bucket-caps", value=text)
    return caps


@dataclass(frozen=True)
class DDPSettings:
    """Validated settings of one DDP launch."""

    model: str
    batch_size: int
    bucket_caps: tuple[float, ...]
    iters: int
    warmup: int
    out: str
    tiny: bool
    use_libraries: bool
    backend: str
    device: str
    launch_id: str | None
    launch_index: int
    seed: int
    lr: float
    timeout_s: float


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.ddp",
                                description="Time DDP iterations per bucket cap; run under torchrun.")
    p.add_argument("--model", required=True, choices=MODEL_NAMES)
    p.add_argument("--batch-size", type=int, required=True, help="per-rank batch size")
    p.add_argument("--bucket-caps", default="25", help="comma-separated bucket_cap_mb values")
    p.add_argument("--iters", type=int, default=30, help="timed iterations per cap")
    p.add_argument("--warmup", type=int, default=10, help="untimed iterations first")
    p.add_argument("--out", required=True, help="JSONL file to append records to")
    p.add_argument("--tiny", action="store_true", help="toy model sizes for CPU tests")
    p.add_argument("--no-libraries", action="store_true",
                   help="use gpunetsim's own model definitions even if torchvision/transformers exist")
    add_process_args(p)
    p.add_argument("--launch-id", default=None, help="label grouping this launch's records")
    p.add_argument("--launch-index", type=int, default=0, help="repeat number (set by ddp_sweep)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--timeout-s", type=float, default=300.0, help="process-group timeout")
    return p


def parse_settings(argv: Sequence[str] | None) -> DDPSettings:
    a = build_parser().parse_args(argv)
    check_least(batch_size=(a.batch_size, 1), iters=(a.iters, 1), warmup=(a.warmup, 0))
    return DDPSettings(a.model, a.batch_size, tuple(parse_caps(a.bucket_caps)), a.iters, a.warmup,
                       a.out, a.tiny, not a.no_libraries, a.backend, a.device, a.launch_id,
                       a.launch_index, a.seed, a.lr, a.timeout_s)


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


def timed_steps(step: Callable[[], None], n: int, is_cuda: bool) -> tuple[list[float], list[float]]:
    """(step seconds, host seconds from one step's start to the next's) of ``n`` calls of ``step``,
    queued back to back as in training: CUDA events read at the end on GPU (the host's clock only
    between the steps, outside the events), ``perf_counter`` on CPU. Every runner's timing loop."""
    import torch

    host = [time.perf_counter()]
    if is_cuda:
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(n)]
        torch.cuda.synchronize()
        host = [time.perf_counter()]
        for start, end in events:
            start.record()
            step()
            end.record()
            host.append(time.perf_counter())
        torch.cuda.synchronize()
        times = [start.elapsed_time(end) / 1e3 for start, end in events]
    else:
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
            host.append(time.perf_counter())
    return times, [b - a for a, b in zip(host, host[1:])]


def time_iterations(step: Callable[[], None], n: int, is_cuda: bool) -> list[float]:
    """Seconds of each of ``n`` calls of ``step`` (:func:`timed_steps` without the host's pace)."""
    return timed_steps(step, n, is_cuda)[0]


def measure_cap(s: DDPSettings, cap_mb: float, device: Any, is_cuda: bool) -> dict[str, Any]:
    """Iteration times with DDP at ``cap_mb`` and under ``no_sync()``, MAX-reduced over ranks."""
    import contextlib

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from validation.ddp_logger import STEADY_WARMUP
    from validation.models import build_workload, grad_bytes, param_count

    work = build_workload(s.model, tiny=s.tiny, use_libraries=s.use_libraries, seed=s.seed)
    model = work.model.to(device)
    ddp = DDP(model, device_ids=[device.index] if is_cuda else None, bucket_cap_mb=cap_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=s.lr, momentum=0.9)
    gen = torch.Generator().manual_seed(s.seed + dist.get_rank())
    batch = work.make_batch(s.batch_size, device, gen)

    def autocast() -> Any:
        if is_cuda:
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def step(sync: bool) -> None:
        opt.zero_grad(set_to_none=True)
        ctx = contextlib.nullcontext() if sync else ddp.no_sync()
        with ctx:
            with autocast():
                loss = work.loss(ddp, batch)
            loss.backward()
        opt.step()

    results = {}
    # DDP holds the host back on its first 10 synchronised iterations (runtime-stats sampling,
    # validation.ddp_logger): warm up past them so that every timed iteration is a steady one.
    sync_warmup = max(s.warmup, STEADY_WARMUP)
    for label, sync in (("", True), ("nosync_", False)):
        time_iterations(lambda: step(sync), sync_warmup if sync else s.warmup, is_cuda)
        times = time_iterations(lambda: step(sync), s.iters, is_cuda)
        t = torch.tensor(times, dtype=torch.float64, device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        times = [float(x) for x in t.cpu().tolist()]
        results[f"{label}iter_times_s"] = times
        results.update(summarize(times, label))
    results.update({"sync_warmup": sync_warmup, "model_source": work.source, "params": param_count(model),
                    "grad_bytes": grad_bytes(model)})
    del ddp, opt, model
    if is_cuda:
        torch.cuda.empty_cache()
    return results


def run(s: DDPSettings, me: Member) -> None:
    """Measure every bucket cap; rank 0 writes the records."""
    import torch.distributed as dist

    from validation.runners.facts import machine_facts, new_launch_id, run_env, short_facts
    from validation.runners.records import append_record

    shared = [s.launch_id or (new_launch_id() if me.rank == 0 else None)]
    dist.broadcast_object_list(shared, src=0, device=me.device)
    launch_id = shared[0]
    facts = machine_facts(with_topology=me.rank == 0)
    base = {"model": s.model, "batch_size": s.batch_size, "world": me.world, "tiny": s.tiny,
            "iters": s.iters, "warmup": s.warmup, "precision": "bf16-autocast" if me.is_cuda else "fp32",
            "optimizer": "SGD(momentum=0.9)", "backend": me.backend, "device": me.device.type,
            "launch_id": launch_id, "launch_index": s.launch_index, "env": run_env(),
            **short_facts(facts)}
    if me.rank == 0:
        append_record(s.out, {"kind": "meta", "runner": "ddp", **base, **facts, "argv": sys.argv,
                              "bucket_caps_mb": list(s.bucket_caps)})
    for cap in s.bucket_caps:
        result = measure_cap(s, cap, me.device, me.is_cuda)
        if me.rank == 0:
            append_record(s.out, {"kind": "ddp", **base, "bucket_cap_mb": cap, **result})
            log.info("%s cap %g MB: median %.2f ms (no_sync %.2f ms)", s.model, cap,
                     result["median_s"] * 1e3, result["nosync_median_s"] * 1e3)


def main(argv: Sequence[str] | None = None) -> int:
    return torchrun_entry_point(parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
