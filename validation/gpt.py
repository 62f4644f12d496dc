"""The LLM runners' GPT (see :mod:`validation.gpt_spec` for its exact shape), with Megatron-style
tensor parallelism built in.

Activations are laid out ``[seq, batch, hidden]`` as in Megatron-LM, so sequence parallelism
shards dimension 0. A block built with a :class:`TensorParallel` of size ``t`` holds its shard:
QKV and the first MLP linear are column-parallel (``hidden -> 3 hidden / t``, ``hidden -> ffn /
t``), the attention projection and the second MLP linear row-parallel (``hidden / t -> hidden``,
``ffn / t -> hidden``; their biases are added after the reduction, replicated). Per block and
direction that is two all-reduces of ``seq x batch x hidden`` elements, or with sequence
parallelism, forward, two all-gathers and two reduce-scatters of the same full size and,
backward, four all-gathers (two of them re-gather the inputs of the column-parallel linears for
their weight gradients: Megatron keeps only the sequence shard) and two reduce-scatters.

``TensorParallel(comm=False)`` keeps the shapes and replaces every collective by a local stand-in
of the same output shape (identity; ``repeat`` for all-gather; a slice for reduce-scatter), so the
same loop gives the compute-only time. This module imports torch at import time: import it only
from runner entry points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from validation.gpt_spec import GPTSpec


@dataclass(frozen=True)
class TensorParallel:
    """A tensor-parallel group: ``size`` ranks, this one ``rank``; ``comm=False``: stand-ins."""

    size: int = 1
    rank: int = 0
    group: Any = None
    sequence_parallel: bool = False
    comm: bool = True

    @property
    def active(self) -> bool:
        return self.size > 1


def _all_reduce(x: torch.Tensor, tp: TensorParallel) -> torch.Tensor:
    if not tp.comm:
        return x
    x = x.contiguous()
    dist.all_reduce(x, group=tp.group)
    return x


def _all_gather(x: torch.Tensor, tp: TensorParallel) -> torch.Tensor:
    if not tp.comm:
        return x.repeat(tp.size, *([1] * (x.dim() - 1)))
    out = x.new_empty((x.shape[0] * tp.size, *x.shape[1:]))
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor  # torch < 2.13
    gather(out, x.contiguous(), group=tp.group)
    return out


def _reduce_scatter(x: torch.Tensor, tp: TensorParallel) -> torch.Tensor:
    n = x.shape[0] // tp.size
    if not tp.comm:
        return x.narrow(0, tp.rank * n, n).contiguous()
    out = x.new_empty((n, *x.shape[1:]))
    scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    scatter(out, x.contiguous(), group=tp.group)
    return out


def _identity(x: torch.Tensor, tp: TensorParallel) -> torch.Tensor:
    return x


Collective = Callable[[torch.Tensor, TensorParallel], torch.Tensor]


class _TPComm(torch.autograd.Function):
    """``forward_op`` on the way in, ``backward_op`` on the gradient: Megatron's ``f`` (identity,
    all-reduce) and ``g`` (all-reduce, identity), and with sequence parallelism after a
    row-parallel linear (reduce-scatter, all-gather) along the sequence dimension."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, tp: TensorParallel, forward_op: Collective,
                backward_op: Collective) -> torch.Tensor:
        ctx.tp, ctx.backward_op = tp, backward_op
        return forward_op(x, tp)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[torch.Tensor, None, None, None]:
        return ctx.backward_op(g, ctx.tp), None, None, None


def enter_tp(x: torch.Tensor, tp: TensorParallel) -> torch.Tensor:
    """Before a column-parallel linear without sequence parallelism: Megatron's ``f``."""
    if not tp.active:
        return x
    return _TPComm.apply(x, tp, _identity, _all_reduce)


def exit_tp(x: torch.Tensor, tp: TensorParallel) -> torch.Tensor:
    """After a row-parallel linear: ``g`` (or reduce-scatter with sequence parallelism)."""
    if not tp.active:
        return x
    if tp.sequence_parallel:
        return _TPComm.apply(x, tp, _reduce_scatter, _all_gather)
    return _TPComm.apply(x, tp, _all_reduce, _identity)


class _GatheredLinear(torch.autograd.Function):
    """Megatron's sequence-parallel column-parallel linear: all-gather the sequence shard and
    multiply; only the shard is kept, so backward gathers it again for the weight gradient and
    reduce-scatters the input gradient."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                tp: TensorParallel) -> torch.Tensor:
        ctx.save_for_backward(x, weight)
        ctx.tp = tp
        return F.linear(_all_gather(x, tp), weight, bias)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, None]:
        x, weight = ctx.saved_tensors
        total = _all_gather(x, ctx.tp)
        grad_x = _reduce_scatter(g.matmul(weight), ctx.tp)
        g2 = g.reshape(-1, g.shape[-1])
        grad_w = g2.t().matmul(total.reshape(-1, total.shape[-1]))
        return grad_x, grad_w, g2.sum(0), None


class GPTBlock(nn.Module):
    """One pre-LayerNorm transformer block; with ``tp.size > 1`` this rank's shard of it."""

    def __init__(self, spec: GPTSpec, tp: TensorParallel = TensorParallel()) -> None:
        super().__init__()
        h, t = spec.hidden, tp.size
        if spec.heads % t or spec.ffn % t or (tp.sequence_parallel and spec.seq % t):
            raise ValueError(f"heads, ffn (and seq with sequence parallelism) must divide by {t}")
        self.tp, self.heads = tp, spec.heads // t
        self.head_dim = h // spec.heads
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h // t)
        self.proj = nn.Linear(h // t, h, bias=False)
        self.proj_bias = nn.Parameter(torch.zeros(h))
        self.ln2 = nn.LayerNorm(h)
        self.fc1 = nn.Linear(h, spec.ffn // t)
        self.fc2 = nn.Linear(spec.ffn // t, h, bias=False)
        self.fc2_bias = nn.Parameter(torch.zeros(h))

    def column(self, linear: nn.Linear, y: torch.Tensor) -> torch.Tensor:
        """A column-parallel linear on the block's (sequence-sharded, with SP) input ``y``."""
        if self.tp.active and self.tp.sequence_parallel:
            return _GatheredLinear.apply(y, linear.weight, linear.bias, self.tp)
        return linear(enter_tp(y, self.tp))

    def attention(self, qkv: torch.Tensor) -> torch.Tensor:
        s, b, _ = qkv.shape
        q, k, v = qkv.view(s, b, self.heads, 3, self.head_dim).permute(3, 1, 2, 0, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [b, heads, s, d]
        return self.proj(a.permute(2, 0, 1, 3).reshape(s, b, self.heads * self.head_dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + exit_tp(self.attention(self.column(self.qkv, self.ln1(x))), self.tp) + self.proj_bias
        y = self.fc2(F.gelu(self.column(self.fc1, self.ln2(x)), approximate="tanh"))
        return x + exit_tp(y, self.tp) + self.fc2_bias


class GPTEmbedding(nn.Module):
    """Token plus learned position embeddings; ``[batch, seq]`` ids -> ``[seq, batch, hidden]``."""

    def __init__(self, spec: GPTSpec) -> None:
        super().__init__()
        self.wte = nn.Embedding(spec.vocab, spec.hidden)
        self.wpe = nn.Embedding(spec.seq, spec.hidden)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1], device=ids.device)
        return (self.wte(ids) + self.wpe(pos)[None]).transpose(0, 1).contiguous()


class GPTHead(nn.Module):
    """Final LayerNorm, untied LM head and next-token cross-entropy (fp32) -> scalar loss."""

    def __init__(self, spec: GPTSpec) -> None:
        super().__init__()
        self.ln_f = nn.LayerNorm(spec.hidden)
        self.lm_head = nn.Linear(spec.hidden, spec.vocab, bias=False)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.lm_head(self.ln_f(x))  # [seq, batch, vocab]
        return F.cross_entropy(logits.float().flatten(0, 1), labels.transpose(0, 1).flatten())


class GPT(nn.Module):
    """Embedding, blocks ``first..last-1`` and head; a pipeline stage holds a slice of them.

    ``with_embedding`` / ``with_head`` say whether this piece has the first / last part. A piece
    without the embedding takes activations ``[seq, batch, hidden]``; one without the head
    returns them; the whole model maps token ids to the loss.
    """

    def __init__(self, spec: GPTSpec, first: int = 0, last: int | None = None,
                 with_embedding: bool = True, with_head: bool = True,
                 tp: TensorParallel = TensorParallel()) -> None:
        super().__init__()
        last = spec.layers if last is None else last
        self.embedding = GPTEmbedding(spec) if with_embedding else None
        self.blocks = nn.ModuleList(GPTBlock(spec, tp) for _ in range(first, last))
        self.head = GPTHead(spec) if with_head else None

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        if self.embedding is not None:
            x = self.embedding(x)
        for block in self.blocks:
            x = block(x)
        if self.head is not None:
            assert labels is not None
            return self.head(x, labels)
        return x


def token_batch(spec: GPTSpec, micro_batch: int, device: torch.device,
                gen: torch.Generator) -> torch.Tensor:
    """Random token ids ``[micro_batch, seq]`` (used as both inputs and labels)."""
    return torch.randint(0, spec.vocab, (micro_batch, spec.seq), generator=gen).to(device)
