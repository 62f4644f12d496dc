"""Time ``nn.DataParallel`` against DDP in one launch, with the single-GPU profile to predict both.

::

    torchrun --nproc-per-node 2 -m validation.runners.dataparallel \\
        --models resnet50,bert-base,gpt2,mlp --iters 15 --warmup 5 --out dp.jsonl

One launch, per model (same per-GPU batch size everywhere; the DataParallel batch is
``gpus x batch``, scattered by DataParallel itself):

1. ``kind:"ddp"``: DDP on all ranks (``bucket_cap_mb=25``, DDP's default), measured by
   :func:`validation.runners.ddp.measure_cap` (same record format as the DDP runner). Skipped on
   one rank.
2. rank 0 alone (the other ranks wait in a CPU-only gloo barrier, so their GPUs stay idle):

   * ``kind:"dp_profile"``: the single-GPU profile (:func:`validation.profiler.profile_model`,
     a workload file's content) plus what DataParallel moves and launches: input and output
     bytes per sample (and the output bytes whose gradient is scattered back), parameter and buffer bytes and tensor counts, and the *host* time to
     launch forward, backward and the optimizer step (``perf_counter`` around each phase started
     on an idle GPU, so the host never waits for the GPU: pure launch cost), and the forward's
     launch time from a fresh thread and from a persistent one (``forward_fresh_thread_host_s``,
     ``forward_warm_thread_host_s``, :mod:`validation.runners.thread_forward`): what each of
     ``parallel_apply``'s new threads pays for PyTorch's thread-local caches, and the number of
     operators the forward calls from Python (``forward_ops``: GIL hand-offs per replica), and
     the same launch from two threads at once, fresh and persistent
     (``forward_fresh_pair_host_s``, ``forward_warm_pair_host_s``): how much of the fresh-thread
     cost queues between threads;
   * ``kind:"dp"``: ``nn.DataParallel(model, device_ids=[0..g-1])`` for every ``g`` from 1 to
     the number of ranks: iteration times (forward, loss on GPU 0, backward, SGD step on GPU 0),
     each timed with CUDA events on GPU 0's stream (as the DDP runner does), after ``--warmup``;
   * with ``g > 1`` also ``phase_s``: one instrumented iteration per repetition, synchronised
     between DataParallel's own steps (scatter, replicate, parallel_apply, gather, loss,
     backward, optimizer), host time of each (``phase_host_s``) and GPU-inclusive time
     (``phase_s``), medians over ``--breakdown-reps``; for explaining where the time goes; and
     ``persistent_apply_host_s``/``persistent_apply_s``: the same replicas' forwards on persistent
     threads, one per GPU, reused across calls (warm thread-local caches; what remains above one
     replica's launch is GIL contention); and the backward in two parts
     (:func:`backward_breakdown`): the replicas' backward without the gradient reduce
     (``replica_backward_host_s``/``replica_backward_s``) and the reduce onto GPU 0 alone
     (``reduce_host_s``/``reduce_s``).

bf16 autocast on CUDA (fp32 on CPU), SGD with momentum, synthetic data, as the DDP runner.
Loss: the workload's own loss; a loss returned per replica (token models) is averaged, as
users of DataParallel do. GPT-2's ``use_cache`` is turned off (DataParallel cannot gather a
key/value cache object). Every record carries ``launch_id`` and ``launch_index``; separate
launches are made by :mod:`validation.runners.dp_sweep`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Sequence

from simulator.core.errors import InputError
from validation.runners.ddp import DDPSettings, MODEL_NAMES, summarize, time_iterations
from validation.runners.launch import Member, check_least, torchrun_entry_point

log = logging.getLogger("validation.runners.dataparallel")

DEFAULT_BATCH = {"resnet50": 64, "bert-base": 32, "gpt2": 8, "mlp": 64}
"""Per-GPU batch sizes (those of the DDP sweep and the committed single-GPU profiles)."""
DDP_CAP_MB = 25.0
PHASES = ("scatter", "replicate", "parallel_apply", "gather", "loss", "backward", "optimizer")


@dataclass(frozen=True)
class DPSettings:
    """Validated settings of one launch."""

    models: tuple[str, ...]
    batch: dict[str, int]
    iters: int
    warmup: int
    breakdown_reps: int
    out: str
    tiny: bool
    use_libraries: bool
    device: str
    launch_id: str | None
    launch_index: int
    skip_ddp: bool
    timeout_s: float
    backend: str = "auto"        # no flag: NCCL on CUDA, gloo on CPU


def parse_models(text: str) -> tuple[str, ...]:
    models = tuple(m.strip() for m in text.split(",") if m.strip())
    for m in models:
        if m not in MODEL_NAMES:
            raise InputError(f"unknown model; choose from {', '.join(MODEL_NAMES)}",
                             field="models", value=m)
    if not models:
        raise InputError("no models given", field="models", value=text)
    return models


def parse_batch(text: str | None, models: Sequence[str]) -> dict[str, int]:
    """``--batch-size``: one number for all models, or ``model:B,model:B`` (others default)."""
    from validation.runners.ddp_sweep import parse_batch_sizes
    sizes = parse_batch_sizes(text, models)
    for m, b in sizes.items():
        if b < 1:
            raise InputError("must be positive", field="batch-size", value=f"{m}:{b}")
    return sizes


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.dataparallel",
                                description="DataParallel vs DDP per model; run under torchrun.")
    p.add_argument("--models", default=",".join(MODEL_NAMES))
    p.add_argument("--batch-size", default=None, help="per-GPU batch: B, or model:B,model:B")
    p.add_argument("--iters", type=int, default=15, help="timed iterations per configuration")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--breakdown-reps", type=int, default=3,
                   help="instrumented iterations for the phase breakdown (0: none)")
    p.add_argument("--out", required=True)
    p.add_argument("--tiny", action="store_true", help="toy model sizes for CPU tests")
    p.add_argument("--no-libraries", action="store_true")
    p.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    p.add_argument("--launch-id", default=None)
    p.add_argument("--launch-index", type=int, default=0)
    p.add_argument("--skip-ddp", action="store_true", help="DataParallel and profile only")
    p.add_argument("--timeout-s", type=float, default=600.0, help="process-group timeout")
    return p


def parse_settings(argv: Sequence[str] | None) -> DPSettings:
    a = build_parser().parse_args(argv)
    check_least(iters=(a.iters, 1), warmup=(a.warmup, 0), breakdown_reps=(a.breakdown_reps, 0))
    models = parse_models(a.models)
    return DPSettings(models, parse_batch(a.batch_size, models), a.iters, a.warmup,
                      a.breakdown_reps, a.out, a.tiny, not a.no_libraries, a.device, a.launch_id,
                      a.launch_index, a.skip_ddp, a.timeout_s)


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


def tensor_bytes(obj: Any) -> int:
    """Bytes of every tensor in a (nested) output: what DataParallel's gather moves."""
    import torch
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(v) for v in obj)
    return 0


class _Setup:
    """One model on GPU 0 (or the CPU) with its optimizer, loss and autocast."""

    def __init__(self, s: DPSettings, name: str, dev: Any, is_cuda: bool) -> None:
        import torch

        from validation.models import build_workload
        self.torch = torch
        self.work = build_workload(name, tiny=s.tiny, use_libraries=s.use_libraries)
        cfg = getattr(self.work.model, "config", None)
        if cfg is not None and hasattr(cfg, "use_cache"):
            cfg.use_cache = False
        self.model = self.work.model.to(dev)
        self.dev, self.is_cuda = dev, is_cuda
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-3, momentum=0.9)

    def autocast(self) -> Any:
        if self.is_cuda:
            return self.torch.autocast("cuda", dtype=self.torch.bfloat16)
        return contextlib.nullcontext()

    def loss(self, module: Any, batch: Any) -> Any:
        with self.autocast():
            out = self.work.loss(module, batch)
        return out.mean() if out.dim() > 0 else out

    def step(self, module: Any, batch: Any) -> None:
        self.opt.zero_grad(set_to_none=True)
        self.loss(module, batch).backward()
        self.opt.step()

    def sync(self) -> None:
        if self.is_cuda:
            self.torch.cuda.synchronize()


def model_facts(setup: _Setup, batch_size: int) -> dict[str, Any]:
    """What DataParallel moves per step and what the host launches, on one GPU."""
    torch = setup.torch
    gen = torch.Generator().manual_seed(0)
    batch = setup.work.make_batch(batch_size, setup.dev, gen)
    with setup.autocast():
        out = setup.model(**batch) if "input_ids" in batch else setup.model(batch["x"])
    out_bytes = tensor_bytes(out)
    # The part of the output the loss differentiates, whose gradient DataParallel scatters back:
    # all of it when the loss is computed outside (classification), the loss alone when the model
    # returns its own loss (token models; their logits are gathered but get no gradient).
    inner = getattr(out, "loss", None) if not isinstance(out, torch.Tensor) else None
    grad_bytes = tensor_bytes(inner if inner is not None else out)
    if isinstance(out, torch.Tensor) and out.dim() == 0:
        grad_bytes = out_bytes
    del out, inner
    params = [p for p in setup.model.parameters() if p.requires_grad]
    buffers = list(setup.model.buffers())
    from validation.runners.thread_forward import thread_launch_s, thread_pair_launch_s
    threads = thread_launch_s(lambda: setup.loss(setup.model, batch), 3, setup.sync)
    threads |= thread_pair_launch_s(lambda: setup.loss(setup.model, batch), 3, setup.sync)
    threads["forward_ops"] = count_ops(lambda: setup.loss(setup.model, batch))
    host = {"forward": [], "backward": [], "optimizer": []}
    for i in range(6):
        setup.opt.zero_grad(set_to_none=True)
        setup.sync()
        t0 = time.perf_counter()
        loss = setup.loss(setup.model, batch)
        t1 = time.perf_counter()
        setup.sync()
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        setup.sync()
        t4 = time.perf_counter()
        setup.opt.step()
        t5 = time.perf_counter()
        setup.sync()
        if i >= 2:
            host["forward"].append(t1 - t0)
            host["backward"].append(t3 - t2)
            host["optimizer"].append(t5 - t4)
    return {"input_bytes_per_sample": tensor_bytes(batch) / batch_size,
            "output_bytes_per_sample": out_bytes / batch_size,
            "output_grad_bytes_per_sample": grad_bytes / batch_size,
            "param_bytes": sum(p.numel() * p.element_size() for p in params),
            "param_tensors": len(params),
            "buffer_bytes": sum(b.numel() * b.element_size() for b in buffers),
            "buffer_tensors": len(buffers),
            "modules": sum(1 for _ in setup.model.modules()),
            **{f"{k}_host_s": statistics.median(v) for k, v in host.items()}, **threads}


def count_ops(fn: Any) -> int:
    """Operators ``fn`` calls from Python (top-level ``aten::`` ops in a CPU profile): each one
    releases and retakes the GIL, so this is how many times a replica thread of
    ``parallel_apply`` competes for it per forward."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return sum(1 for e in prof.events() if e.name.startswith("aten::") and e.cpu_parent is None)


def measure_dp(setup: _Setup, gpus: int, batch_size: int, s: DPSettings) -> dict[str, Any]:
    """Iteration times of ``nn.DataParallel`` over GPUs 0..gpus-1 with ``gpus x batch_size``."""
    from torch import nn
    torch = setup.torch
    ids = list(range(gpus)) if setup.is_cuda else None
    dp = nn.DataParallel(setup.model, device_ids=ids)
    batch = setup.work.make_batch(batch_size * gpus, setup.dev, torch.Generator().manual_seed(1))
    time_iterations(lambda: setup.step(dp, batch), s.warmup, setup.is_cuda)
    times = time_iterations(lambda: setup.step(dp, batch), s.iters, setup.is_cuda)
    out: dict[str, Any] = {"iter_times_s": times, **summarize(times)}
    if gpus > 1 and s.breakdown_reps:
        try:
            out.update(breakdown(setup, dp, batch, s.breakdown_reps))
        except Exception as exc:  # noqa: BLE001 - the iteration times above still count
            log.error("breakdown failed: %s", exc)
            out["breakdown_error"] = f"{type(exc).__name__}: {exc}"[:2000]
        try:
            out.update(persistent_breakdown(setup, dp, batch, s.breakdown_reps))
        except Exception as exc:  # noqa: BLE001 - the iteration times above still count
            log.error("persistent-thread forward failed: %s", exc)
            out["persistent_error"] = f"{type(exc).__name__}: {exc}"[:2000]
        try:
            out.update(backward_breakdown(setup, dp, batch, s.breakdown_reps))
        except Exception as exc:  # noqa: BLE001 - the iteration times above still count
            log.error("backward breakdown failed: %s", exc)
            out["backward_breakdown_error"] = f"{type(exc).__name__}: {exc}"[:2000]
    return out


def backward_breakdown(setup: _Setup, dp: Any, batch: Any, reps: int) -> dict[str, float]:
    """DataParallel's backward in its two parts, each timed alone (synchronised before; host
    seconds until the call returned, ``*_host_s``, and until the GPUs were done, ``*_s``; medians
    over ``reps`` after one warm-up):

    * ``replica_backward``: the replicas' backward without the gradient reduce: replicas built
      with leaf parameters (``replicate(..., detach=True)``, then ``requires_grad_``), their
      forwards by ``parallel_apply``, then one ``torch.autograd.backward`` over every replica's
      loss (the autograd engine's device threads launch all GPUs' backward at once, as in
      DataParallel, but gradients accumulate per replica instead of meeting in the broadcast's
      backward);
    * ``reduce``: ``comm.reduce_add_coalesced`` of one gradient-shaped copy of the parameters per
      GPU onto GPU 0: what the broadcast's backward (``ReduceAddCoalesced``) runs."""
    from torch.cuda import comm
    from torch.nn.parallel.replicate import replicate
    torch = setup.torch
    module, ids = dp.module, dp.device_ids
    kwargs = dict(batch) if "input_ids" in batch else {}
    args = () if kwargs else (batch["x"],)
    params = [p for p in module.parameters() if p.requires_grad]
    host: dict[str, list[float]] = {"replica_backward": [], "reduce": []}
    full: dict[str, list[float]] = {"replica_backward": [], "reduce": []}

    def timed(name: str, fn: Any, keep: bool) -> Any:
        setup.sync()
        t0 = time.perf_counter()
        r = fn()
        t1 = time.perf_counter()
        setup.sync()
        if keep:
            host[name].append(t1 - t0)
            full[name].append(time.perf_counter() - t0)
        return r

    for rep in range(reps + 1):
        setup.opt.zero_grad(set_to_none=True)
        with setup.autocast():
            inputs, kw = dp.scatter(args, kwargs, ids)
            replicas = replicate(module, ids[:len(inputs)], detach=True)
            leaves = [t for r in replicas for m in r.modules() for t in m._former_parameters.values()
                      if t is not None and t.is_floating_point()]
            for t in leaves:
                t.requires_grad_(True)
            outs = dp.parallel_apply(replicas, inputs, kw)
            losses = []
            for o in outs:
                val = o.loss if hasattr(o, "loss") else o
                losses.append(val.float().mean())
        timed("replica_backward", lambda: torch.autograd.backward(losses), rep > 0)
        del replicas, outs, losses, leaves
        with torch.no_grad():
            grads = comm.broadcast_coalesced([p.detach() for p in params], ids)
            timed("reduce", lambda: comm.reduce_add_coalesced(grads, ids[0]), rep > 0)
        del grads
    setup.opt.zero_grad(set_to_none=True)
    return {**{f"{k}_host_s": statistics.median(v) for k, v in host.items()},
            **{f"{k}_s": statistics.median(v) for k, v in full.items()}}


def persistent_breakdown(setup: _Setup, dp: Any, batch: Any, reps: int) -> dict[str, float]:
    """The replicas' forwards on persistent threads (one per GPU, warmed by one call first), timed
    as the breakdown's ``parallel_apply``: host seconds until the last replica returned
    (``persistent_apply_host_s``) and until its GPU work ended (``persistent_apply_s``)."""
    from validation.runners.thread_forward import WorkerPool, persistent_apply
    module, ids = dp.module, dp.device_ids
    kwargs = dict(batch) if "input_ids" in batch else {}
    args = () if kwargs else (batch["x"],)
    pool = WorkerPool(len(ids))
    host, full = [], []
    try:
        for rep in range(reps + 1):
            setup.opt.zero_grad(set_to_none=True)
            with setup.autocast():
                inputs, kw = dp.scatter(args, kwargs, ids)
                replicas = dp.replicate(module, ids[:len(inputs)])
                enabled = setup.torch.is_autocast_enabled("cuda")
            setup.sync()
            t0 = time.perf_counter()
            outs = persistent_apply(pool, replicas, inputs, kw, ids[:len(inputs)], enabled)
            t1 = time.perf_counter()
            setup.sync()
            if rep:           # the first call warms the threads' caches
                host.append(t1 - t0)
                full.append(time.perf_counter() - t0)
            del replicas, outs
    finally:
        pool.close()
    return {"persistent_apply_host_s": statistics.median(host), "persistent_apply_s": statistics.median(full)}


def breakdown(setup: _Setup, dp: Any, batch: Any, reps: int) -> dict[str, Any]:
    """DataParallel's steps one by one with a synchronisation after each: host time of each
    step (``phase_host_s``, until the call returns) and time including the GPU work
    (``phase_s``), medians over ``reps`` iterations."""
    host: dict[str, list[float]] = {k: [] for k in PHASES}
    full: dict[str, list[float]] = {k: [] for k in PHASES}
    module, ids = dp.module, dp.device_ids
    kwargs = dict(batch) if "input_ids" in batch else {}
    args = () if kwargs else (batch["x"],)

    def timed(name: str, fn: Any) -> Any:
        setup.sync()
        t0 = time.perf_counter()
        r = fn()
        t1 = time.perf_counter()
        setup.sync()
        host[name].append(t1 - t0)
        full[name].append(time.perf_counter() - t0)
        return r

    for _ in range(reps):
        setup.opt.zero_grad(set_to_none=True)
        with setup.autocast():
            inputs, kw = timed("scatter", lambda: dp.scatter(args, kwargs, ids))
            replicas = timed("replicate", lambda: dp.replicate(module, ids[:len(inputs)]))
            outs = timed("parallel_apply", lambda: dp.parallel_apply(replicas, inputs, kw))
            out = timed("gather", lambda: dp.gather(outs, dp.output_device))

            def loss_of() -> Any:
                if kwargs:
                    val = out.loss if hasattr(out, "loss") else out
                else:
                    val = setup.work.loss(lambda _x: out, batch)
                return val.mean() if val.dim() > 0 else val
            loss = timed("loss", loss_of)
        timed("backward", loss.backward)
        timed("optimizer", setup.opt.step)
        del replicas, outs, out, loss
    return {"phase_host_s": {k: statistics.median(v) for k, v in host.items()},
            "phase_s": {k: statistics.median(v) for k, v in full.items()},
            "breakdown_reps": reps}


def run(s: DPSettings, me: Member) -> None:
    """Measure DDP (all ranks) then DataParallel and the profile (rank 0) for every model."""
    import datetime

    import torch
    import torch.distributed as dist

    from validation.profiler import profile_model
    from validation.runners.ddp import measure_cap
    from validation.runners.facts import machine_facts, new_launch_id, run_env, short_facts
    from validation.runners.records import append_record

    # the ranks wait for rank 0's DataParallel runs (on every GPU) at a barrier of a gloo group
    timeout = datetime.timedelta(seconds=s.timeout_s)
    cpu_group = dist.new_group(backend="gloo", timeout=timeout) if me.is_cuda else None
    shared = [s.launch_id or (new_launch_id() if me.rank == 0 else None)]
    dist.broadcast_object_list(shared, src=0, device=me.device)
    launch_id = shared[0]
    facts = machine_facts(with_topology=me.rank == 0)
    gpu_counts = list(range(1, me.world + 1)) if me.is_cuda else [1]
    base = {"world": me.world, "tiny": s.tiny, "iters": s.iters, "warmup": s.warmup,
            "precision": "bf16-autocast" if me.is_cuda else "fp32", "optimizer": "SGD(momentum=0.9)",
            "device": me.device.type, "launch_id": launch_id, "launch_index": s.launch_index,
            "env": run_env(), **short_facts(facts)}
    if me.rank == 0:
        append_record(s.out, {"kind": "meta", "runner": "dataparallel", **base, **facts,
                              "argv": sys.argv, "models": list(s.models), "gpu_counts": gpu_counts})
    for name in s.models:
        b = s.batch[name]
        if me.world > 1 and not s.skip_ddp:
            ddp_s = DDPSettings(name, b, (DDP_CAP_MB,), s.iters, s.warmup, s.out, s.tiny,
                                s.use_libraries, me.backend, me.device.type, launch_id, s.launch_index,
                                0, 1e-3, s.timeout_s)
            result = measure_cap(ddp_s, DDP_CAP_MB, me.device, me.is_cuda)
            if me.rank == 0:
                append_record(s.out, {"kind": "ddp", "model": name, "batch_size": b, **base,
                                      "backend": me.backend, "bucket_cap_mb": DDP_CAP_MB, **result})
                log.info("%s DDP x%d: median %.2f ms", name, me.world, result["median_s"] * 1e3)
        dist.barrier(group=cpu_group)
        if me.rank == 0:
            try:
                measure_rank0(s, name, b, me.device, me.is_cuda, gpu_counts, base, profile_model,
                              append_record)
            except Exception as exc:  # noqa: BLE001 - recorded; the other models go on
                log.error("%s: DataParallel measurement failed: %s", name, exc)
                append_record(s.out, {"kind": "dp_failed", "model": name, **base,
                                      "reason": f"{type(exc).__name__}: {exc}"[:2000]})
                if me.is_cuda:
                    torch.cuda.empty_cache()
        dist.barrier(group=cpu_group)


def measure_rank0(s: DPSettings, name: str, b: int, device: Any, is_cuda: bool,
                  gpu_counts: Sequence[int], base: dict[str, Any], profile_model: Any,
                  append_record: Any) -> None:
    """The single-GPU profile and DataParallel on 1..N GPUs, from rank 0's process."""
    import torch
    prof = profile_model(name, b, s.iters, s.warmup, device.type, s.tiny, s.use_libraries)
    setup = _Setup(s, name, device, is_cuda)
    prof.update(model_facts(setup, b))
    append_record(s.out, {"kind": "dp_profile", "model": name, **base, "profile": prof})
    for g in gpu_counts:
        result = measure_dp(setup, g, b, s)
        append_record(s.out, {"kind": "dp", "model": name, "batch_size": b, "gpus": g,
                              "global_batch_size": b * g, **base, **result})
        log.info("%s DataParallel x%d: median %.2f ms", name, g, result["median_s"] * 1e3)
    del setup
    if is_cuda:
        torch.cuda.empty_cache()


def main(argv: Sequence[str] | None = None) -> int:
    return torchrun_entry_point(parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
