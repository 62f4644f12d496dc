"""Per-layer forward and backward times of the runners' GPT on one GPU, without communication.

This is the compute input a prediction of the FSDP, TP and PP runs needs: the embedding, one
transformer block and the head (final LayerNorm, LM head, fp32 cross-entropy) of one
micro-batch, each timed on its own. A block built with ``TensorParallel(size=t, comm=False)``
gives the time of one rank's shard with the collectives replaced by local stand-ins.

Each piece runs ``warmup + iters`` times on a fixed random input; the forward and the backward
of every timed call are stamped (CUDA events read once at the end, or ``perf_counter`` on CPU).
Gradients are set to ``None`` before each call, as ``zero_grad(set_to_none=True)`` leaves them
in training, so backward writes fresh gradients rather than accumulating. Every rank profiles
its own GPU at once; the record keeps, per phase, the MAX over ranks of the per-rank medians.
"""

from __future__ import annotations

import statistics
from typing import Any, Callable

from validation.gpt_spec import GPTSpec
from validation.timing import elapsed_s, stamp

PHASES = ("embed", "block", "head")


def time_forward_backward(module: Any, forward: Callable[[Any], Any], make_input: Callable[[], Any],
                          grad: Any, iters: int, warmup: int, is_cuda: bool
                          ) -> tuple[list[float], list[float]]:
    """Seconds of each timed forward and backward of ``forward(make_input())``.

    ``grad`` is the output gradient (``None`` for a scalar loss)."""
    import torch

    marks = []
    for i in range(warmup + iters):
        module.zero_grad(set_to_none=True)
        x = make_input()
        a = stamp(is_cuda)
        y = forward(x)
        b = stamp(is_cuda)
        y.backward(grad)
        c = stamp(is_cuda)
        if i >= warmup:
            marks.append((a, b, c))
    if is_cuda:
        torch.cuda.synchronize()
    return ([elapsed_s(a, b, is_cuda) for a, b, _ in marks],
            [elapsed_s(b, c, is_cuda) for _, b, c in marks])


def profile_layers(spec: GPTSpec, micro_batch: int, device: Any, dtype: Any, is_cuda: bool,
                   iters: int, warmup: int, tp: Any = None, seed: int = 0
                   ) -> dict[str, float | None]:
    """Medians ``{embed,block,head}_{forward,backward}_s`` on this rank (seconds).

    With a tensor-parallel ``tp`` (size > 1) only the block is profiled (the TP runner has no
    embedding or head); the other phases are ``None``."""
    import torch

    from validation.gpt import GPTBlock, GPTEmbedding, GPTHead, TensorParallel, token_batch

    tp = tp or TensorParallel()
    gen = torch.Generator().manual_seed(seed)
    seq_local = spec.seq // tp.size if tp.sequence_parallel else spec.seq
    out: dict[str, float | None] = {}

    def keep(name: str, fwd: list[float], bwd: list[float]) -> None:
        out[f"{name}_forward_s"] = statistics.median(fwd)
        out[f"{name}_backward_s"] = statistics.median(bwd)

    with torch.device(device):
        block = GPTBlock(spec, tp).to(dtype)
    x0 = torch.randn(seq_local, micro_batch, spec.hidden, generator=gen).to(device, dtype)
    g = torch.randn(seq_local, micro_batch, spec.hidden, generator=gen).to(device, dtype)
    keep("block", *time_forward_backward(block, block, lambda: x0.detach().requires_grad_(), g,
                                         iters, warmup, is_cuda))
    del block
    if tp.active:
        out.update({f"{p}_{d}_s": None for p in ("embed", "head") for d in ("forward", "backward")})
        return out
    ids = token_batch(spec, micro_batch, device, gen)
    with torch.device(device):
        embed = GPTEmbedding(spec).to(dtype)
        head = GPTHead(spec).to(dtype)
    g_full = torch.randn(spec.seq, micro_batch, spec.hidden, generator=gen).to(device, dtype)
    keep("embed", *time_forward_backward(embed, embed, lambda: ids, g_full, iters, warmup, is_cuda))
    keep("head", *time_forward_backward(head, lambda x: head(x, ids),
                                        lambda: x0.detach().requires_grad_(), None, iters,
                                        warmup, is_cuda))
    return {k: out[k] for k in sorted(out)}


def profile_record(session: Any, spec: GPTSpec, micro_batch: int, tp: Any = None,
                   iters: int | None = None) -> dict[str, Any]:
    """The fields of a ``kind:"llm_profile"`` record, MAX over ranks of each phase's median."""
    iters = iters or session.settings.iters
    mine = profile_layers(spec, micro_batch, session.device, session.dtype, session.is_cuda,
                          iters, session.settings.warmup, tp, session.settings.seed)
    keys = [k for k in sorted(mine) if mine[k] is not None]
    worst = session.max_over_ranks([float(mine[k]) for k in keys])  # type: ignore[arg-type]
    fields: dict[str, Any] = {**spec.fields(), "micro_batch": micro_batch,
                              "tp": tp.size if tp else 1,
                              "sequence_parallel": bool(tp and tp.sequence_parallel),
                              "profile_iters": iters}
    fields.update({k: None for k in mine})
    fields.update(dict(zip(keys, worst)))
    return fields
