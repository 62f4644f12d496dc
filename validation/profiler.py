"""Capture a workload file (compute times and gradient-ready times) from a real model.

Live, on one GPU (or the CPU)::

    python -m validation.profiler --model resnet50 --batch-size 64 --out resnet50.json --iters 20

times forward, backward and optimizer step (CUDA events; ``perf_counter`` on CPU; medians over
``--iters`` plain steps after ``--warmup``) and, for every parameter, when its gradient is ready, measured
from the start of backward in ``--iters`` further steps: a ``register_post_accumulate_grad_hook`` on each
parameter records a CUDA event (a ``perf_counter`` reading on CPU) the moment its gradient has been
accumulated; those times are scaled to the plain steps' backward (the hooks are host work that
lengthens a launch-bound step, see :func:`capture`).

From a PyTorch profiler (Kineto) Chrome trace::

    python -m validation.profiler --from-trace trace.json --params params.json --out w.json

Output (JSON), exactly these keys::

    {name, forward_s, backward_s, optimizer_s, batch_size, device, dtype,
     params: [{name, bytes, grad_ready_s, dtype}]}

``params`` are in registration order (``model.named_parameters()``); ``bytes`` is the gradient's
numel x element size; times are seconds.

How a trace is read (a heuristic; see :func:`workload_from_trace`):

* steps are the ``ProfilerStep#N`` spans (the whole trace is one step when there are none);
  every quantity is the median over steps;
* backward starts at the first ``autograd::engine::evaluate_function:`` event of the step and
  ends at the last such event's end; ``backward_s`` is that span;
* ``optimizer_s`` is the total length of the ``Optimizer.step#...`` spans in the step;
* forward runs from the end of the last ``Optimizer.zero_grad#...`` span before backward (or the
  step start) to the backward start;
* each ``AccumulateGrad`` (``autograd::engine::evaluate_function: torch::autograd::AccumulateGrad``)
  event's end, minus the backward start, is one gradient-ready time. Autograd runs roughly in
  reverse of the forward order, and modules usually register parameters in forward order, so
  the k-th AccumulateGrad executed is mapped to the k-th parameter counted from the *end* of the
  registration order. Models whose forward order differs from their registration order get
  times attached to the wrong names; bytes that disagree with the trace's shapes are logged.
* names, bytes and dtypes come from ``--params`` (a JSON list of ``{name, bytes[, dtype]}`` in
  registration order, or a workload file whose ``params`` are used); without it, parameters are
  named ``param.<i>`` and sized from the trace's ``Input Dims`` (record with
  ``record_shapes=True``).
* CPU-side spans are used. On GPU runs the CPU runs ahead of the kernels, so trace-derived times
  are launch times, not completion times; prefer the live capture there.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from simulator.core.errors import InputError
from validation import timing
from simulator.core.vocabulary import DTYPE_BYTES, canonical_dtype
from validation.check_cli import run_command

log = logging.getLogger("validation.profiler")

EVAL_PREFIX = "autograd::engine::evaluate_function:"
ACC_WRAPPER = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
ACC_INNER = "torch::autograd::AccumulateGrad"


@dataclass(frozen=True)
class ParamInfo:
    """A parameter as the workload file lists it."""

    name: str
    size_bytes: int
    dtype: str


def workload_dict(name: str, forward_s: float, backward_s: float, optimizer_s: float,
                  batch_size: int | None, device: str, dtype: str,
                  params: Sequence[ParamInfo], grad_ready_s: Sequence[float | None]) -> dict[str, Any]:
    """The workload file's JSON object, in the documented key order.

    Ready times are medians over iterations, as is ``backward_s``, so a late gradient's median
    can come out a hair after the median backward; such times are clipped to ``backward_s``
    (``simulator.training.workload`` rejects ready times beyond ``1.05 * backward_s``).
    """
    grad_ready_s = [None if t is None else min(max(t, 0.0), backward_s) for t in grad_ready_s]
    return {"name": name, "forward_s": forward_s, "backward_s": backward_s,
            "optimizer_s": optimizer_s, "batch_size": batch_size, "device": device, "dtype": dtype,
            "params": [{"name": p.name, "bytes": p.size_bytes, "grad_ready_s": t, "dtype": p.dtype}
                       for p, t in zip(params, grad_ready_s)]}


# ------------------------------------------------------------------ from a Kineto trace


def _end_us(e: dict[str, Any]) -> float:
    return float(e["ts"]) + float(e.get("dur", 0.0))


def load_params_file(path: str) -> list[ParamInfo]:
    """Parameters in registration order from a ``--params`` file (a list, or a workload file)."""
    from simulator.core.inputs import read_structured
    data = read_structured(path, what="parameter list")
    items = data.get("params") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise InputError("expected a non-empty list of {name, bytes}", source=path, field="params")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "name" not in item or "bytes" not in item:
            raise InputError("each parameter needs name and bytes", source=path,
                             field=f"params[{i}]", value=item)
        nbytes = item["bytes"]
        if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 0:
            raise InputError("bytes must be a non-negative integer", source=path,
                             field=f"params[{i}].bytes", value=nbytes)
        out.append(ParamInfo(str(item["name"]), nbytes, str(item.get("dtype", "float32"))))
    return out


def _step_windows(events: list[dict[str, Any]]) -> list[tuple[float, float]]:
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    if not steps:
        return [(min(float(e["ts"]) for e in events), max(_end_us(e) for e in events))]
    return sorted((float(e["ts"]), _end_us(e)) for e in steps)


@dataclass(frozen=True)
class StepTimes:
    """One step's phases (seconds) and gradient-ready times in execution order."""

    forward_s: float
    backward_s: float
    optimizer_s: float
    ready_s: tuple[float, ...]
    shapes: tuple[tuple[int, str] | None, ...]  # (bytes, dtype) per AccumulateGrad, if known


def _shape_bytes(e: dict[str, Any] | None) -> tuple[int, str] | None:
    if e is None:
        return None
    args = e.get("args", {})
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not dims or not types:
        return None
    try:
        dtype = canonical_dtype(types[0])
    except InputError:
        return None
    numel = 1
    for d in dims[0]:
        numel *= int(d)
    return numel * DTYPE_BYTES[dtype], dtype


def step_times(events: list[dict[str, Any]], window: tuple[float, float]) -> StepTimes | None:
    """Phases of the step in ``window`` (us timestamps); ``None`` if it has no backward."""
    lo, hi = window
    inside = [e for e in events if lo <= float(e["ts"]) and _end_us(e) <= hi + 1e-3]
    evals = [e for e in inside if str(e.get("name", "")).startswith(EVAL_PREFIX)]
    if not evals:
        return None
    bwd_start = min(float(e["ts"]) for e in evals)
    bwd_end = max(_end_us(e) for e in evals)
    opt_s = sum(float(e.get("dur", 0.0)) for e in inside
                if str(e.get("name", "")).startswith("Optimizer.step#")) / 1e6
    zero_ends = [_end_us(e) for e in inside if str(e.get("name", "")).startswith("Optimizer.zero_grad#")
                 and _end_us(e) <= bwd_start]
    fwd_start = max(zero_ends) if zero_ends else lo
    acc = sorted((e for e in inside if e.get("name") == ACC_WRAPPER), key=lambda e: float(e["ts"]))
    inner = sorted((e for e in inside if e.get("name") == ACC_INNER), key=lambda e: float(e["ts"]))
    if not acc:
        acc = inner
    shapes = tuple(_shape_bytes(inner[i] if i < len(inner) else None) for i in range(len(acc)))
    return StepTimes((bwd_start - fwd_start) / 1e6, (bwd_end - bwd_start) / 1e6, opt_s,
                     tuple((_end_us(e) - bwd_start) / 1e6 for e in acc), shapes)


def workload_from_trace(trace_path: str, params: Sequence[ParamInfo] | None = None,
                        name: str | None = None, batch_size: int | None = None,
                        dtype: str | None = None) -> dict[str, Any]:
    """A workload dict from a Kineto Chrome trace (the heuristic is in the module docstring)."""
    try:
        data = json.loads(Path(trace_path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read trace: {exc}", source=trace_path) from None
    raw = data.get("traceEvents", []) if isinstance(data, dict) else data
    events = [e for e in raw if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e]
    if not events:
        raise InputError("no complete ('X') events in trace", source=trace_path,
                         field="traceEvents")
    device = "cuda" if any(e.get("cat") in ("kernel", "gpu_memcpy") for e in events) else "cpu"
    steps = [s for s in (step_times(events, w) for w in _step_windows(events)) if s is not None]
    if not steps:
        raise InputError("no autograd (backward) events in trace", source=trace_path)
    counts = {len(s.ready_s) for s in steps}
    if len(counts) != 1:
        raise InputError("steps have different numbers of AccumulateGrad events",
                         source=trace_path, value=sorted(counts))
    n = counts.pop()
    if params is None:
        params = _params_from_shapes(steps[0], trace_path)
    if len(params) != n:
        raise InputError(f"trace has {n} AccumulateGrad events per step but the parameter list "
                         f"has {len(params)} entries", source=trace_path, value=len(params))
    ready: list[float | None] = [None] * n
    for k in range(n):  # k-th executed AccumulateGrad -> k-th parameter from the end
        idx = n - 1 - k
        ready[idx] = statistics.median(s.ready_s[k] for s in steps)
        shape = steps[0].shapes[k]
        if shape is not None and shape[0] != params[idx].size_bytes:
            log.warning("AccumulateGrad #%d has %d bytes but is mapped to %s (%d bytes)", k,
                        shape[0], params[idx].name, params[idx].size_bytes)
    return workload_dict(name or Path(trace_path).stem,
                         statistics.median(s.forward_s for s in steps),
                         statistics.median(s.backward_s for s in steps),
                         statistics.median(s.optimizer_s for s in steps), batch_size, device,
                         dtype or "float32", params, ready)


def _params_from_shapes(step: StepTimes, trace_path: str) -> list[ParamInfo]:
    if any(s is None for s in step.shapes):
        raise InputError("trace has no parameter shapes (record with record_shapes=True) "
                         "and no --params list was given", source=trace_path)
    n = len(step.shapes)
    return [ParamInfo(f"param.{i}", step.shapes[n - 1 - i][0], step.shapes[n - 1 - i][1])  # type: ignore[index]
            for i in range(n)]


# ------------------------------------------------------------------ live capture


def profile_model(model_name: str, batch_size: int, iters: int = 20, warmup: int = 5,
                  device: str = "auto", tiny: bool = False, use_libraries: bool = True,
                  seed: int = 0) -> dict[str, Any]:
    """Run ``warmup + iters`` training steps on one device and return the workload dict."""
    import torch

    from validation.models import build_workload

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    is_cuda = device == "cuda"
    dev = torch.device("cuda", torch.cuda.current_device()) if is_cuda else torch.device("cpu")
    work = build_workload(model_name, tiny=tiny, use_libraries=use_libraries, seed=seed)
    model = work.model.to(dev)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1e-3, momentum=0.9)
    batch = work.make_batch(batch_size, dev, torch.Generator().manual_seed(seed))
    return capture(model_name, work.loss, model, opt, batch, batch_size, iters, warmup, is_cuda)


def capture(name: str, loss_fn: Any, model: Any, opt: Any, batch: Any, batch_size: int, iters: int,
            warmup: int, is_cuda: bool, time_with_hooks: bool = False) -> dict[str, Any]:
    """The workload dict of ``model`` (already on its device, with its optimizer ``opt``):
    ``loss_fn(model, batch)`` returns the scalar loss (run under bf16 autocast on CUDA).

    Phase times are the medians over ``iters`` steps (after ``warmup``) without instrumentation;
    gradient-ready times come from ``iters`` further steps with a post-accumulate-grad hook per
    parameter (removed again at the end), scaled by the plain backward over the hooked one: the hooks
    are host work, and on a launch-bound model they lengthen the step they time (on one host, the
    hooked step read 1% above the plain one where the GPU set the pace and up to half again where the
    host did: validation/data/h100x4_2026-11-26_ddp). ``time_with_hooks`` takes the phase times from
    the hooked steps instead (the profiler's capture before that measurement)."""
    import contextlib

    import torch

    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]

    def stamp() -> Any:
        return timing.stamp(is_cuda)

    def elapsed_s(a: Any, b: Any) -> float:
        return timing.elapsed_s(a, b, is_cuda)

    autocast = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if is_cuda else contextlib.nullcontext
    current: list[list[Any]] = [[None] * len(named)]

    def run(n_warm: int) -> list[tuple[Any, ...]]:
        # Events are recorded as the steps are queued and read once at the end: the host runs ahead as
        # in real training, so the GPU is never idle between phases waiting for launches (a
        # synchronize per step would add the launch latency of each phase to its time).
        steps = []
        for it in range(n_warm + iters):
            opt.zero_grad(set_to_none=True)
            current[0] = [None] * len(named)
            t0 = stamp()
            with autocast():
                loss = loss_fn(model, batch)
            t1 = stamp()
            loss.backward()
            t2 = stamp()
            opt.step()
            t3 = stamp()
            if it >= n_warm:
                steps.append((t0, t1, t2, t3, current[0]))
        if is_cuda:
            torch.cuda.synchronize()
        return steps

    def phases(steps: list[tuple[Any, ...]]) -> tuple[float, float, float]:
        return tuple(statistics.median(elapsed_s(s[k], s[k + 1]) for s in steps) for k in range(3))  # type: ignore[return-value]

    plain = None if time_with_hooks else run(warmup)
    handles = []
    for i, (_, p) in enumerate(named):
        def hook(_p: Any, i: int = i) -> None:
            current[0][i] = stamp()
        handles.append(p.register_post_accumulate_grad_hook(hook))
    try:
        hooked = run(warmup if time_with_hooks else min(warmup, 2))
    finally:
        for h in handles:
            h.remove()
    fwd, bwd, optm = phases(hooked if plain is None else plain)
    scale = 1.0 if plain is None else bwd / phases(hooked)[1]
    ready: list[list[float]] = [[] for _ in named]
    for t0, t1, t2, t3, marks in hooked:
        for i, m in enumerate(marks):
            if m is not None:
                ready[i].append(elapsed_s(t1, m) * scale)
    params = [ParamInfo(n, p.numel() * p.element_size(), str(p.dtype).removeprefix("torch."))
              for n, p in named]
    missing = [params[i].name for i, r in enumerate(ready) if not r]
    if missing:
        log.warning("no gradient for %d parameters (unused?): %s", len(missing), missing[:5])
    return workload_dict(name, fwd, bwd, optm, batch_size, "cuda" if is_cuda else "cpu",
                         "bfloat16" if is_cuda else "float32", params,
                         [statistics.median(r) if r else None for r in ready])


# ------------------------------------------------------------------ command line


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.profiler",
                                description="Capture a workload file from a model or a Kineto trace.")
    p.add_argument("--model", help="resnet50, bert-base, gpt2 or mlp (live capture)")
    p.add_argument("--from-trace", metavar="TRACE.json", help="build from a Kineto Chrome trace")
    p.add_argument("--params", metavar="PARAMS.json",
                   help="with --from-trace: parameter names and bytes in registration order")
    p.add_argument("--name", help="workload name (default: model name or trace file stem)")
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--dtype", default=None, help="with --from-trace: compute dtype to record")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    p.add_argument("--tiny", action="store_true", help="toy model sizes (tests)")
    p.add_argument("--no-libraries", action="store_true",
                   help="use gpunetsim's own model definitions even if torchvision/transformers exist")
    p.add_argument("--out", required=True)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    a = build_parser().parse_args(argv)
    return run_command(lambda: _profile(a))


def _profile(a: argparse.Namespace) -> None:
    """``main``'s work: the workload from a trace or a live capture, written to ``--out``."""
    if a.from_trace:
        params = load_params_file(a.params) if a.params else None
        result = workload_from_trace(a.from_trace, params, a.name, a.batch_size, a.dtype)
    elif a.model:
        if a.batch_size is None or a.batch_size < 1 or a.iters < 1 or a.warmup < 0:
            raise InputError("live capture needs --batch-size >= 1, --iters >= 1, --warmup >= 0",
                             field="batch-size", value=a.batch_size)
        from validation.runners.launch import require_torch
        require_torch()
        result = profile_model(a.model, a.batch_size, a.iters, a.warmup, a.device, a.tiny,
                               not a.no_libraries)
        if a.name:
            result["name"] = a.name
    else:
        raise InputError("give --model (live capture) or --from-trace TRACE.json")
    from simulator.core.outputs import write_atomic
    write_atomic(a.out, json.dumps(result, indent=1) + "\n", field="--out")
    log.info("%s: forward %.3f ms, backward %.3f ms, optimizer %.3f ms, %d params -> %s",
             result["name"], result["forward_s"] * 1e3, result["backward_s"] * 1e3,
             result["optimizer_s"] * 1e3, len(result["params"]), a.out)


if __name__ == "__main__":
    sys.exit(main())
