"""Where a single-GPU profile's compute and a DDP run's compute part ways, on one host, in one launch.

::

    torchrun --nproc-per-node 2 -m validation.runners.ddp_compute --models resnet50,bert-base,gpt2,mlp \\
        --rounds 3 --iters 10 --warmup 3 --out compute_world2.jsonl

Every rank trains two copies of each model on its own GPU: a plain one and one wrapped in
``DistributedDataParallel(bucket_cap_mb=25)`` (bf16 autocast, SGD with momentum, one synthetic
batch, as :mod:`validation.runners.ddp`). ``--rounds`` times, interleaved so that a drift of the
host's pace shows as a difference between rounds rather than between variants, each of these
runs ``--warmup`` then ``--iters`` timed steps:

* ``plain``: the plain copy, each step timed with CUDA events (as the DDP runner times its steps);
* ``profile``: the plain copy under :func:`validation.profiler.capture` with ``time_with_hooks`` (a
  post-accumulate-grad hook per parameter records its gradient-ready time, and the phases are timed on
  those hooked steps): the single-GPU profile as the profiler took it before this runner's measurement;
* ``queued``: the plain copy, each step queued behind a ``torch.cuda._sleep`` long enough for the
  host to issue the whole step before the GPU starts it, so the GPU runs it without waiting for
  launches: the step's GPU time alone (``iter_times_s``) and the host's time to issue it
  (``host_issue_s``; where it exceeds the sleep, ``sleep_s``, the GPU did wait and the step is
  not GPU time alone: ``queued_ok`` says per step);
* ``nosync``: the DDP copy under ``no_sync()`` (the DDP runner's compute baseline);
* ``sync``: the DDP copy with its gradient all-reduce (the first round warms it up past the 10
  synchronised steps on which DDP holds the host back: validation.ddp_logger).

Every variant also keeps the host's time between the starts of consecutive steps (``host_iter_s``):
when it equals the step time, the host set the pace (launch-bound), not the GPU.

Rank 0 appends one ``kind:"meta"`` record and, per model, round and variant, one
``kind:"ddp_compute"`` record: ``iter_times_s`` (rank 0's steps), ``rank_iter_times_s`` (every
rank's), their MAX over ranks per step (``max_iter_times_s``) and its ``median_s``; the profile
variant adds the workload dict (``profile``). On the CPU (gloo; tests) the ``queued`` variant is
skipped and steps are timed with ``perf_counter``.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from simulator.core.errors import InputError
from simulator.core.limits import MAX_BATCH_SIZE
from validation.runners.dataparallel import parse_batch
from validation.runners.ddp import timed_steps
from validation.runners.launch import Member, add_process_args, check_least, parse_names, torchrun_entry_point
from validation.timing import gpu_sleep, sleep_cycles_per_s

log = logging.getLogger("validation.runners.ddp_compute")

MODEL_NAMES = ("resnet50", "bert-base", "gpt2", "mlp")
VARIANTS = ("plain", "profile", "queued", "nosync", "sync")
BUCKET_CAP_MB = 25.0
SLEEP_MARGIN = 2.0
"""The sleep in front of a queued step lasts this many times the host's issue time of a plain step."""


@dataclass(frozen=True)
class ComputeSettings:
    models: tuple[str, ...]
    batch: dict[str, int]
    rounds: int
    iters: int
    warmup: int
    out: str
    tiny: bool
    use_libraries: bool
    backend: str
    device: str
    timeout_s: float


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.ddp_compute",
                                description="Profile vs plain vs DDP compute, interleaved; run under torchrun.")
    p.add_argument("--models", default=",".join(MODEL_NAMES))
    p.add_argument("--batch-size", default=None, help="per-GPU batch: B, or model:B,model:B "
                   "(default: the DDP sweep's)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--out", required=True)
    p.add_argument("--tiny", action="store_true", help="toy model sizes for CPU tests")
    p.add_argument("--no-libraries", action="store_true")
    add_process_args(p)
    p.add_argument("--timeout-s", type=float, default=300.0)
    return p


def parse_settings(argv: Sequence[str] | None) -> ComputeSettings:
    a = build_parser().parse_args(argv)
    models = parse_names(a.models, MODEL_NAMES, "models", "model")
    check_least(rounds=(a.rounds, 1), iters=(a.iters, 1), warmup=(a.warmup, 0))
    for name, value, most in (("rounds", a.rounds, 100), ("iters", a.iters, 10_000), ("warmup", a.warmup, 10_000)):
        if value > most:
            raise InputError(f"must be at most {most}", field=name, value=value)
    batch = parse_batch(a.batch_size, models)
    if any(not 1 <= b <= MAX_BATCH_SIZE for b in batch.values()):
        raise InputError("must be positive", field="batch-size", value=a.batch_size)
    return ComputeSettings(models, batch, a.rounds, a.iters, a.warmup, a.out, a.tiny,
                           not a.no_libraries, a.backend, a.device, a.timeout_s)


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


def queued_steps(step: Callable[[], None], n: int, sleep_s: float, rate: float) -> dict[str, list]:
    """``n`` steps, each issued while the GPU sleeps ``sleep_s``: GPU time of the step alone, the
    host's issue time, the sleep's actual length, and whether the host finished issuing in time."""
    import torch

    gpu, issue, slept, ok = [], [], [], []
    for _ in range(n):
        s0, s1, e1 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        torch.cuda.synchronize()
        s0.record()
        gpu_sleep(sleep_s, rate)
        s1.record()
        h0 = time.perf_counter()
        step()
        h1 = time.perf_counter()
        e1.record()
        torch.cuda.synchronize()
        gpu.append(s1.elapsed_time(e1) / 1e3)
        slept.append(s0.elapsed_time(s1) / 1e3)
        issue.append(h1 - h0)
        ok.append(issue[-1] < slept[-1])
    return {"iter_times_s": gpu, "host_issue_s": issue, "sleep_s": slept, "queued_ok": ok}


def measure_model(s: ComputeSettings, name: str, device: Any, is_cuda: bool,
                  emit: Callable[[dict[str, Any]], None]) -> None:
    """Every round and variant of one model; ``emit`` gets each record's rank-0 fields."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from validation.ddp_logger import STEADY_WARMUP
    from validation.models import build_workload
    from validation.profiler import capture

    b = s.batch[name]
    plain_work = build_workload(name, tiny=s.tiny, use_libraries=s.use_libraries, seed=0)
    ddp_work = build_workload(name, tiny=s.tiny, use_libraries=s.use_libraries, seed=0)
    plain = plain_work.model.to(device)
    ddp = DDP(ddp_work.model.to(device), device_ids=[device.index] if is_cuda else None,
              bucket_cap_mb=BUCKET_CAP_MB)
    opt_plain = torch.optim.SGD(plain.parameters(), lr=1e-3, momentum=0.9)
    opt_ddp = torch.optim.SGD(ddp.parameters(), lr=1e-3, momentum=0.9)
    batch = plain_work.make_batch(b, device, torch.Generator().manual_seed(dist.get_rank()))

    def autocast() -> Any:
        return torch.autocast("cuda", dtype=torch.bfloat16) if is_cuda else contextlib.nullcontext()

    def plain_step() -> None:
        opt_plain.zero_grad(set_to_none=True)
        with autocast():
            loss = plain_work.loss(plain, batch)
        loss.backward()
        opt_plain.step()

    def ddp_step(sync: bool) -> None:
        opt_ddp.zero_grad(set_to_none=True)
        with contextlib.nullcontext() if sync else ddp.no_sync():
            with autocast():
                loss = ddp_work.loss(ddp, batch)
            loss.backward()
        opt_ddp.step()

    rate = sleep_cycles_per_s() if is_cuda else 0.0
    for rnd in range(s.rounds):
        for variant in VARIANTS:
            extra: dict[str, Any] = {}
            if variant == "queued":
                if not is_cuda:
                    continue
                timed_steps(plain_step, s.warmup, is_cuda)
                _, host = timed_steps(plain_step, 3, is_cuda)
                sleep_s = max(SLEEP_MARGIN * max(host), 5e-3)
                extra = queued_steps(plain_step, s.iters, sleep_s, rate)
                times = extra.pop("iter_times_s")
                host = extra["host_issue_s"]
            elif variant == "profile":
                prof = capture(name, plain_work.loss, plain, opt_plain, batch, b, s.iters, s.warmup, is_cuda,
                               time_with_hooks=True)
                t = prof["forward_s"] + prof["backward_s"] + prof["optimizer_s"]
                times, host, extra = [t], [], {"profile": prof}
            else:
                step = {"plain": plain_step, "nosync": lambda: ddp_step(False),
                        "sync": lambda: ddp_step(True)}[variant]
                # DDP holds the host back on its first 10 synchronised steps (validation.ddp_logger):
                # the first round's synchronised warmup runs past them
                timed_steps(step, max(s.warmup, STEADY_WARMUP) if variant == "sync" and rnd == 0 else s.warmup,
                            is_cuda)
                times, host = timed_steps(step, s.iters, is_cuda)
            every: list[Any] = [None] * dist.get_world_size()
            dist.all_gather_object(every, times)
            worst = [max(col) for col in zip(*every)]
            emit({"model": name, "batch_size": b, "round": rnd, "variant": variant,
                  "iter_times_s": times, "rank_iter_times_s": every, "max_iter_times_s": worst,
                  "median_s": statistics.median(worst), "host_iter_s": host, **extra})
            if dist.get_rank() == 0:
                log.info("%s round %d %-7s median %.2f ms", name, rnd, variant,
                         statistics.median(worst) * 1e3)
    del ddp, plain, opt_plain, opt_ddp
    if is_cuda:
        torch.cuda.empty_cache()


def run(s: ComputeSettings, me: Member) -> None:
    """Measure every model's variants; rank 0 writes the records."""
    import torch.distributed as dist

    from validation.runners.facts import machine_facts, new_launch_id, run_env, short_facts
    from validation.runners.records import append_record

    shared = [new_launch_id() if me.rank == 0 else None]
    dist.broadcast_object_list(shared, src=0, device=me.device)
    facts = machine_facts(with_topology=me.rank == 0)
    base = {"world": me.world, "tiny": s.tiny, "iters": s.iters, "warmup": s.warmup,
            "precision": "bf16-autocast" if me.is_cuda else "fp32", "optimizer": "SGD(momentum=0.9)",
            "backend": me.backend, "device": me.device.type, "launch_id": shared[0],
            "bucket_cap_mb": BUCKET_CAP_MB, "env": run_env(), **short_facts(facts)}
    if me.rank == 0:
        append_record(s.out, {"kind": "meta", "runner": "ddp_compute", **base, **facts, "argv": sys.argv,
                              "models": list(s.models), "rounds": s.rounds})

    def emit(fields: dict[str, Any]) -> None:
        if me.rank == 0:
            append_record(s.out, {"kind": "ddp_compute", **base, **fields})

    for name in s.models:
        measure_model(s, name, me.device, me.is_cuda, emit)


def main(argv: Sequence[str] | None = None) -> int:
    return torchrun_entry_point(parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
