"""Where a tensor-parallel block loop's time goes: the host's issue time, the GPU's time, the loop.

::

    torchrun --nproc-per-node 4 -m validation.runners.tp_issue \\
        --specs "hidden=2048,layers=4,heads=16,seq=2048;hidden=4096,layers=4,heads=32,seq=2048" \\
        --iters 20 --warmup 5 --out issue.jsonl

For every spec, the same loops as :mod:`validation.runners.tp` (``layers`` blocks of
:class:`validation.gpt.GPTBlock`, forward and backward, ``zero_grad(set_to_none=True)``): the
unsharded block on every rank alone (``tp=1``), and the block sharded over all ranks with and
without sequence parallelism, each with the collectives (``comm=on``) and with the runner's local
stand-ins (``comm=off``). Per point three numbers, each the median over ``--iters`` (MAX over ranks):

* ``loop_s``: an iteration of the back-to-back loop (CUDA events, as the TP runner times it);
* ``issue_forward_s``, ``issue_backward_s``: host seconds to issue the forward and the backward
  while the GPU is held busy by a sleep kernel issued first (``torch.cuda._sleep``), so the host
  never waits for the GPU: the host's issue time alone;
* ``gpu_s``: GPU seconds from the end of that sleep to the end of the iteration: the queued
  kernels and collectives run back to back, without host gaps: the GPU's time alone.

``outlasted_hold`` counts repetitions whose issue outlasted the sleep (then the host waited: not kept
apart; the sleep is sized from the loop). With ``--kernels``, one iteration under
``torch.profiler`` gives the kernels per class (``nccl``, ``gemm``, ``attention``, ``other``: count
and GPU seconds) and the host's kernel launches; ``--op-issue`` times the host's issue of single
operations at the block's activation size (``all_reduce``, ``all_gather``, ``reduce_scatter``,
the stand-ins ``repeat`` and ``narrow``, an ``add``), each ``--op-calls`` calls behind a sleep of
``--hold`` times their time unheld: ``kind:"llm_op_issue"`` records with ``issue_per_call_s``,
``hold_s`` and ``outlasted_hold`` (repetitions that outlasted the sleep anyway).

The models in ``simulator.training.llm.compute`` charge a pass ``max(kernels, host)``; these
records separate the two. On CPU (gloo, the tests) there is no sleep and no GPU: the fields are
filled from the host clock and mean nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from simulator.core.errors import InputError
from validation.gpt_spec import GPTSpec
from validation.runners.launch import parse_names
from validation.timing import gpu_sleep, sleep_cycles_per_s
from validation.runners.llm_session import (CommonSettings, Point, Session, add_common_arguments,
                                            common_settings, session_entry_point)

OPS = ("all_reduce", "all_gather", "reduce_scatter", "repeat", "narrow", "add")
KERNEL_CLASSES = (("nccl", ("nccl",)), ("gemm", ("gemm", "cutlass", "xmma", "cublas", "nvjet", "wgmma")),
                  ("attention", ("flash", "fmha", "attention", "attn")))


@dataclass(frozen=True)
class IssueSettings:
    common: CommonSettings
    kernels: bool
    op_issue: tuple[str, ...]
    op_calls: int
    hold: float


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.tp_issue",
                                description="Host issue time, GPU time and loop time of tensor-parallel "
                                            "GPT blocks; run under torchrun.")
    p.add_argument("--kernels", action="store_true", help="one profiled iteration per point")
    p.add_argument("--op-issue", default="", help=f"comma-separated, of {', '.join(OPS)} (empty: none)")
    p.add_argument("--op-calls", type=int, default=32, help="calls per --op-issue timing")
    p.add_argument("--hold", type=float, default=3.0,
                   help="the sleep lasts this many times the loop's iteration")
    add_common_arguments(p, iters=20, warmup=5)
    return p


def parse_settings(argv: Sequence[str] | None) -> IssueSettings:
    a = build_parser().parse_args(argv)
    if a.op_calls < 1:
        raise InputError("must be at least 1", field="op-calls", value=a.op_calls)
    if not a.hold > 1.0:
        raise InputError("must be more than 1 (the sleep must outlast what it holds)", field="hold", value=a.hold)
    ops = parse_names(a.op_issue, OPS, "op-issue", "op") if a.op_issue.strip() else ()
    return IssueSettings(common_settings(a), a.kernels, ops, a.op_calls, a.hold)


def plan_points(s: IssueSettings, world: int) -> list[Point]:
    """Every point in run order; ``option`` is ``(tp, sequence_parallel, comm)``."""
    mb, out = s.common.micro_batch, []
    for spec in s.common.specs:
        out.append(Point(f"issue tp=1 mb={mb} {spec.text}", "issue", spec, (1, False, False)))
        if world > 1:
            out += [Point(f"issue tp={world} sp={'on' if sp else 'off'} comm={'on' if comm else 'off'} "
                          f"mb={mb} {spec.text}", "issue", spec, (world, sp, comm))
                    for sp in (False, True) for comm in (False, True)]
    return out


def plan_labels(s: IssueSettings, world: int) -> list[str]:
    return [p.label for p in plan_points(s, world)]


def kernel_class(name: str) -> str:
    low = name.lower()
    for cls, keys in KERNEL_CLASSES:
        if any(k in low for k in keys):
            return cls
    return "other"


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


class Clock:
    """Holds the GPU busy for a given time (a sleep kernel) and stamps host and GPU time."""

    def __init__(self, is_cuda: bool) -> None:
        self.is_cuda = is_cuda
        self.cycles_per_s = sleep_cycles_per_s() if is_cuda else 0.0

    def hold(self, seconds: float) -> None:
        if self.is_cuda:
            gpu_sleep(seconds, self.cycles_per_s)

    def mark(self) -> Any:
        from validation.timing import stamp

        return stamp(self.is_cuda)

    def between(self, a: Any, b: Any) -> float:
        from validation.timing import elapsed_s

        return elapsed_s(a, b, self.is_cuda)

    def sync(self) -> None:
        if self.is_cuda:
            import torch

            torch.cuda.synchronize()


def held_issue(ses: Session, clock: Clock, pieces: Sequence[Callable[[], Any]], hold_s: float
          ) -> tuple[list[float], float, bool]:
    """Issue ``pieces`` (each gets the previous one's result) behind a sleep of ``hold_s``: the host
    seconds of each piece, the GPU seconds from the sleep's end to the last piece's end, and whether
    the host outlasted the sleep."""
    import torch.distributed as dist

    dist.barrier()
    clock.sync()
    clock.hold(hold_s)
    start = clock.mark()
    host, value = [], None
    t0 = time.perf_counter()
    for i, piece in enumerate(pieces):
        value = piece() if i == 0 else piece(value)  # type: ignore[call-arg]
        t1 = time.perf_counter()
        host.append(t1 - t0)
        t0 = t1
    end = clock.mark()
    clock.sync()
    return host, clock.between(start, end), clock.is_cuda and sum(host) > 0.9 * hold_s


def issue_fields(ses: Session, clock: Clock, forward: Callable[[], Any], backward: Callable[[Any], None],
                 hold_s: float, prefix: str = "") -> dict[str, Any]:
    """The host's issue time of ``forward`` and ``backward`` (which takes the forward's result) and the GPU's
    time alone, each of the session's ``iters`` steps behind a sleep of ``hold_s`` (:func:`held_issue`):
    ``issue_forward_s``, ``issue_backward_s``, ``gpu_s`` (medians over the steps, MAX over ranks),
    ``outlasted_hold`` (steps whose issue outlasted the sleep) and ``hold_s``, keys prefixed by ``prefix``."""
    fwd, bwd, gpu, late = [], [], [], 0
    for _ in range(ses.settings.iters):
        host, gpu_s, outlasted = held_issue(ses, clock, (forward, backward), hold_s)
        fwd.append(host[0])
        bwd.append(host[1])
        gpu.append(gpu_s)
        late += outlasted
    m = ses.max_over_ranks([statistics.median(v) for v in (fwd, bwd, gpu)] + [float(late)])
    return {f"{prefix}issue_forward_s": m[0], f"{prefix}issue_backward_s": m[1], f"{prefix}gpu_s": m[2],
            f"{prefix}outlasted_hold": int(m[3]), f"{prefix}hold_s": hold_s}


def kernel_summary(step: Callable[[], None], is_cuda: bool) -> dict[str, Any]:
    """One profiled call of ``step``: per kernel class count and GPU seconds; host kernel launches."""
    if not is_cuda:
        return {"kernels": None}
    import torch
    from torch.profiler import ProfilerActivity, profile

    try:
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    except Exception as exc:  # profiler support differs between torch builds: keep the point
        step()  # the other ranks' collectives wait for this one's
        torch.cuda.synchronize()
        return {"kernels": None, "kernels_error": f"{type(exc).__name__}: {exc}"}
    step()
    torch.cuda.synchronize()
    try:
        prof.__exit__(None, None, None)
        count = {c: 0 for c, _ in KERNEL_CLASSES} | {"other": 0}
        secs = dict.fromkeys(count, 0.0)
        launches = 0
        for e in prof.events():
            if str(getattr(e, "device_type", "")).endswith("CUDA"):
                c = kernel_class(e.name)
                count[c] += 1
                secs[c] += e.time_range.elapsed_us() * 1e-6
            elif "launchkernel" in e.name.lower():
                launches += 1
        return {"kernels": {"count": count, "gpu_s": secs, "host_launches": launches}}
    except Exception as exc:
        return {"kernels": None, "kernels_error": f"{type(exc).__name__}: {exc}"}


def measure_point(ses: Session, clock: Clock, s: IssueSettings, spec: GPTSpec, tp_size: int, sp: bool,
                  comm: bool) -> dict[str, Any]:
    import torch

    from validation.gpt import GPT, TensorParallel
    from validation.runners.ddp import time_iterations

    mb = s.common.micro_batch
    if tp_size == 1:
        tp = TensorParallel(1, 0, None, False, False)
    else:
        tp = TensorParallel(ses.world, ses.rank, None, sp, comm)
    with torch.device(ses.device):
        model = GPT(spec, with_embedding=False, with_head=False, tp=tp).to(ses.dtype)
    gen = torch.Generator().manual_seed(ses.settings.seed)
    seq = spec.seq // tp_size if sp else spec.seq
    x0 = torch.randn(seq, mb, spec.hidden, generator=gen).to(ses.device, ses.dtype)
    g = torch.randn(seq, mb, spec.hidden, generator=gen).to(ses.device, ses.dtype)

    def forward() -> Any:
        model.zero_grad(set_to_none=True)
        return model(x0.detach().requires_grad_())

    def backward(y: Any) -> None:
        y.backward(g)

    def step() -> None:
        backward(forward())

    time_iterations(step, s.common.warmup, ses.is_cuda)
    loop = ses.max_over_ranks(time_iterations(step, s.common.iters, ses.is_cuda))
    out = {"loop_s": statistics.median(loop),
           **issue_fields(ses, clock, forward, backward, s.hold * statistics.median(loop)), "loop_times_s": loop}
    if s.kernels:
        out.update(kernel_summary(step, ses.is_cuda))
    del model
    return out


def op_piece(op: str, ses: Session, spec: GPTSpec, mb: int) -> Callable[[], Any]:
    """One call of ``op`` at the block's activation size (``seq x micro_batch x hidden``)."""
    import torch
    import torch.distributed as dist

    from validation.gpt import TensorParallel, _all_gather, _reduce_scatter

    tp = TensorParallel(ses.world, ses.rank, None, True, True)
    full = torch.ones(spec.seq * mb, spec.hidden, dtype=ses.dtype, device=ses.device)
    shard = full[: full.shape[0] // ses.world].clone()
    if op == "all_reduce":
        return lambda: dist.all_reduce(full)
    if op == "all_gather":
        return lambda: _all_gather(shard, tp)
    if op == "reduce_scatter":
        return lambda: _reduce_scatter(full, tp)
    stand_in = TensorParallel(ses.world, ses.rank, None, True, False)
    if op == "repeat":
        return lambda: _all_gather(shard, stand_in)
    if op == "narrow":
        return lambda: _reduce_scatter(full, stand_in)
    return lambda: full.add(full)


def measure_ops(ses: Session, clock: Clock, s: IssueSettings, spec: GPTSpec) -> None:
    """Per op, ``--op-calls`` calls issued behind a sleep of ``--hold`` times their time unheld (so
    the sleep outlasts the issue however slow the host); ``outlasted_hold`` counts the repetitions whose
    issue outlasted it anyway (the host waited: that repetition's figure is too high)."""
    mb = s.common.micro_batch
    for op in s.op_issue:
        piece = op_piece(op, ses, spec, mb)
        piece()
        clock.sync()
        calls = s.op_calls

        def many() -> None:
            for _ in range(calls):
                piece()

        t0 = time.perf_counter()
        many()
        clock.sync()
        hold_s = s.hold * ses.max_over_ranks([time.perf_counter() - t0])[0]
        per_call, gpu, late = [], [], 0
        for i in range(s.common.warmup + s.common.iters):
            host, gpu_s, outlasted = held_issue(ses, clock, (many,), hold_s)
            per_call.append(host[0] / calls)
            gpu.append(gpu_s / calls)
            late += outlasted and i >= s.common.warmup
        keep = slice(s.common.warmup, None)
        med = ses.max_over_ranks([statistics.median(per_call[keep]), statistics.median(gpu[keep]), float(late)])
        ses.record("llm_op_issue", f"op {op} {spec.seq * mb * spec.hidden} elements", {
            **spec.fields(), "micro_batch": mb, "op": op, "calls": calls, "hold_s": hold_s,
            "outlasted_hold": int(med[2]), "issue_per_call_s": med[0], "gpu_per_call_s": med[1]})


def run(s: IssueSettings, ses: Session) -> None:
    import gc

    clock = Clock(ses.is_cuda)
    for point in ses.points_to_run(plan_points(s, ses.world)):
        tp_size, sp, comm = point.option
        fields = measure_point(ses, clock, s, point.spec, tp_size, sp, comm)
        gc.collect()
        ses.record("llm_issue", point.label, {
            **point.spec.fields(), "micro_batch": s.common.micro_batch, "tp": tp_size,
            "sequence_parallel": sp, "comm": comm, **fields})
    if s.op_issue and ses.world > 1:
        measure_ops(ses, clock, s, s.common.specs[0])


def main(argv: Sequence[str] | None = None) -> int:
    return session_entry_point("tp_issue", parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
