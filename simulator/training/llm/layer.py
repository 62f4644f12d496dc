"""The work of one transformer block (and of the embedding and output layers) on one GPU.

Plain data, no timing: the GEMMs with their shapes and FLOPs, the memory-bound kernels with the
bytes they move, and the tensor-parallel collectives, for one micro-batch, forward and backward,
under Megatron-LM's tensor parallelism (column-parallel QKV and first MLP matrix, row-parallel
output projections) and optionally its sequence parallelism. :mod:`.compute` turns this into
seconds.

Conventions: ``T = micro_batch * seq`` tokens; with sequence parallelism the norms, dropouts and
residual adds run on ``T / tp`` tokens, otherwise every TP rank repeats them on all ``T``. A
collective's ``size_bytes`` follows nccl-tests (the whole buffer, ``T * hidden * dtype`` for the
all-reduce, reduce-scatter and all-gather of Megatron's TP). Backward GEMMs are the data and
weight gradients (two GEMMs of the forward's FLOPs each). Standard attention materialises the
``seq x seq`` scores (Megatron's fused softmax); flash attention is one fused kernel that never
writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from simulator.core.errors import InputError
from simulator.training.llm.config import ORDERS, Recompute, Schedule, TrainConfig
from simulator.training.llm.model import TransformerSpec


@dataclass(frozen=True)
class Gemm:
    """``batch`` products of an (m x k) by a (k x n) matrix."""

    name: str
    m: int
    n: int
    k: int
    batch: int = 1

    @property
    def flops(self) -> float:
        return 2.0 * self.batch * self.m * self.n * self.k

    def grads(self) -> tuple["Gemm", "Gemm"]:
        """Data gradient (m x n) @ (n x k) and weight gradient (k x m) @ (m x n)."""
        return (Gemm(self.name + " dgrad", self.m, self.k, self.n, self.batch),
                Gemm(self.name + " wgrad", self.k, self.n, self.m, self.batch))


@dataclass(frozen=True)
class MemOp:
    """A memory-bound kernel moving ``size_bytes`` through HBM."""

    name: str
    size_bytes: float


@dataclass(frozen=True)
class FusedAttention:
    """Flash attention: ``flops`` at GEMM-like efficiency, nothing materialised."""

    name: str
    flops: float
    head_dim: int


@dataclass(frozen=True)
class CommCall:
    """``count`` identical tensor-parallel collectives of ``size_bytes`` each (nccl-tests size)."""

    op: str
    size_bytes: float
    count: int = 1


Kernel = Gemm | MemOp | FusedAttention


@dataclass(frozen=True)
class Pass:
    """The kernels and TP collectives of one forward or backward pass over some layers."""

    kernels: tuple[Kernel, ...]
    comm: tuple[CommCall, ...]

    def __add__(self, other: "Pass") -> "Pass":
        return Pass(self.kernels + other.kernels, self.comm + other.comm)

    def times(self, n: int) -> "Pass":
        return Pass(self.kernels * n, tuple(CommCall(c.op, c.size_bytes, c.count * n) for c in self.comm))

    @cached_property
    def flops(self) -> float:
        """FLOPs of the pass's GEMMs and attention (computed once per pass: a pass is immutable), each distinct
        kernel's once (:attr:`layout`), summed over every kernel in order."""
        distinct, order = self.layout
        flops = [0.0 if isinstance(k, MemOp) else k.flops for k in distinct]
        return sum(map(flops.__getitem__, order))

    @cached_property
    def layout(self) -> tuple[tuple[Kernel, ...], tuple[int, ...]]:
        """(each distinct kernel object once, in order of first appearance; the index in it of every kernel, in
        order): a chunk of ``n`` blocks (:meth:`times`) repeats one block's kernel objects ``n`` times, so a sum
        over its kernels needs each distinct one's value once. Built once per pass (a pass is immutable)."""
        where: dict[int, int] = {}
        distinct: list[Kernel] = []
        order = []
        for k in self.kernels:
            i = where.get(id(k))
            if i is None:
                i = where[id(k)] = len(distinct)
                distinct.append(k)
            order.append(i)
        return tuple(distinct), tuple(order)

    @property
    def calls(self) -> int:
        """Collective calls the host issues for this pass."""
        return sum(c.count for c in self.comm)


EMPTY = Pass((), ())


@dataclass(frozen=True)
class LayerWork:
    """One block for one micro-batch: forward, backward (with any recomputation)."""

    forward: Pass
    backward: Pass
    model_flops: float          # forward + backward FLOPs without recomputation (for MFU)

    def host_ops(self, forward: bool) -> float:
        """The kernels the host launches for a pass, per kernel of the forward: the host's issue
        time of the pass in units of the forward's (1.4 for a GPT block's backward with fused
        attention, 2.4 with full recomputation; the TP issue probe measures 1.2-1.8 without)."""
        return self.kernel_ops(len((self.forward if forward else self.backward).kernels))

    def kernel_ops(self, kernels: int) -> float:
        """``kernels`` kernel launches in the units of :meth:`host_ops` (per kernel of the forward): the host's
        issue time of kernels launched beside the block's own (FSDP's gradient copies and divisions)."""
        return kernels / len(self.forward.kernels) if self.forward.kernels else 0.0


def check_divisible(model: TransformerSpec, config: TrainConfig) -> None:
    t = config.tp
    if model.heads % t:
        raise InputError(f"--tp must divide the number of attention heads ({model.heads})", field="--tp", value=t)
    if model.kv_heads % t:      # Megatron splits the key/value heads over TP too (divide(num_query_groups, tp))
        raise InputError(f"--tp must divide the number of key/value heads ({model.kv_heads}): each TP rank holds "
                         "whole KV heads", field="--tp", value=t)
    if model.ffn % t:
        raise InputError(f"--tp must divide the feed-forward size ({model.ffn})", field="--tp", value=t)
    if config.sequence_parallel and model.seq % t:
        raise InputError(f"--sequence-parallel needs --tp to divide the sequence length ({model.seq})",
                         field="--tp", value=t)


def _tp_comm(config: TrainConfig, size: float, forward: bool) -> tuple[CommCall, ...]:
    """Megatron's TP collectives of one block: two per direction (attention and MLP); with sequence
    parallelism all-gathers before and reduce-scatters after, the backward re-gathering the inputs
    for the weight gradients (Megatron keeps only the sequence shard)."""
    if config.tp == 1:
        return ()
    if not config.sequence_parallel:
        return (CommCall("all_reduce", size, 2),)
    if forward:
        return (CommCall("all_gather", size, 2), CommCall("reduce_scatter", size, 2))
    return (CommCall("all_gather", size, 4), CommCall("reduce_scatter", size, 2))


@lru_cache(maxsize=8192)
def block_work(model: TransformerSpec, config: TrainConfig) -> LayerWork:
    """The work of one transformer block on one TP rank for one micro-batch (built once per model and
    configuration: immutable, and a fit simulates one configuration with many compute sets)."""
    t, b, s, h = config.tp, config.micro_batch, model.seq, model.hidden
    B = config.dtype_bytes
    T = b * s
    Tn = T // t if config.sequence_parallel else T          # tokens of the norms/dropouts/residuals
    heads = model.heads // t
    d = model.head_dim
    up = model.ffn * (2 if model.gated_mlp else 1) // t
    f = model.ffn // t
    drop = 1 if model.bias else 0                          # GPT-style dropout masks (1 byte each)
    norm = MemOp("norm", 2 * Tn * h * B)
    residual = MemOp("dropout+residual", (3 * B + drop) * Tn * h)
    qkv = Gemm("qkv", T, model.qkv_out // t, h)
    proj = Gemm("proj", T, h, heads * d)
    fc1 = Gemm("fc1", T, up, h)
    fc2 = Gemm("fc2", T, h, f)
    act = MemOp("activation", (up + f) * T * B)
    if config.flash_attention:
        core_f: tuple[Kernel, ...] = (FusedAttention("flash attention", 4.0 * b * heads * s * s * d / 2, d),)
        core_b: tuple[Kernel, ...] = (FusedAttention("flash attention bwd", 2.5 * 4.0 * b * heads * s * s * d / 2, d),)
    else:
        scores = Gemm("scores", s, s, d, b * heads)
        context = Gemm("context", s, d, s, b * heads)
        sq = b * heads * s * s
        softmax = MemOp("softmax+dropout", sq * (4 * B + drop))
        core_f = (scores, softmax, context)
        core_b = tuple(g for k in (context, scores) for g in k.grads()) + (MemOp("softmax+dropout bwd", sq * (5 * B + drop)),)
    fwd_kernels = (norm, qkv) + core_f + (proj, residual, norm, fc1, act, fc2, residual)
    fwd = Pass(fwd_kernels, _tp_comm(config, T * h * B, True))
    grads = tuple(g for k in (fc2, fc1, proj, qkv) for g in k.grads())
    mem_b = (MemOp("norm bwd", 2 * norm.size_bytes), MemOp("norm bwd", 2 * norm.size_bytes),
             MemOp("residual bwd", 2 * residual.size_bytes), MemOp("residual bwd", 2 * residual.size_bytes),
             MemOp("activation bwd", 1.5 * act.size_bytes))
    bwd = Pass(grads + core_b + mem_b, _tp_comm(config, T * h * B, False))
    if config.recompute is Recompute.FULL:
        bwd = fwd + bwd
    elif config.recompute is Recompute.SELECTIVE and not config.flash_attention:
        bwd = Pass(core_f, ()) + bwd
    model_flops = 3.0 * Pass(fwd_kernels, ()).flops
    return LayerWork(fwd, bwd, model_flops)


@lru_cache(maxsize=8192)
def embedding_work(model: TransformerSpec, config: TrainConfig) -> LayerWork:
    """Token (and position) embedding lookup on the first stage; vocabulary-parallel over TP,
    so the partial embeddings are all-reduced (reduce-scattered with sequence parallelism). Built once per
    model and configuration, as :func:`block_work`."""
    B = config.dtype_bytes
    T = config.micro_batch * model.seq
    lookup = MemOp("embedding", 3 * T * model.hidden * B)
    comm: tuple[CommCall, ...] = ()
    if config.tp > 1:
        comm = (CommCall("reduce_scatter" if config.sequence_parallel else "all_reduce", T * model.hidden * B),)
    return LayerWork(Pass((lookup,), comm), Pass((MemOp("embedding bwd", 2 * lookup.size_bytes),), ()), 0.0)


@lru_cache(maxsize=8192)
def output_work(model: TransformerSpec, config: TrainConfig) -> LayerWork:
    """Final norm, the vocabulary-parallel logits GEMM and cross-entropy (fp32) on the last stage. Built once
    per model and configuration, as :func:`block_work`."""
    t, B = config.tp, config.dtype_bytes
    T = config.micro_batch * model.seq
    Tn = T // t if config.sequence_parallel else T
    V = -(-model.vocab // t)
    norm = MemOp("final norm", 2 * Tn * model.hidden * B)
    logits = Gemm("logits", T, V, model.hidden)
    xent = MemOp("cross-entropy", (B + 4 * 4) * T * V)
    comm: tuple[CommCall, ...] = ()
    if t > 1:
        comm = ((CommCall("all_gather", T * model.hidden * B),) if config.sequence_parallel else ()) + \
               (CommCall("all_reduce", T * 4, 3),)                # max, sum-exp, target logit
    fwd = Pass((norm, logits, xent), comm)
    bwd_comm = (CommCall("reduce_scatter" if config.sequence_parallel else "all_reduce", T * model.hidden * B),) \
        if t > 1 else ()
    # The loss gradient in fp32, per logit: written zeroed with the target's entry (4 bytes), the softmax
    # gradient reading it and the saved fp32 output and writing its result (12), and the cast back to the
    # logits' dtype (4 + B): 20 + B bytes (PyTorch's F.cross_entropy on fp32 logits; Megatron's fused
    # vocab-parallel kernel moves about 14). The runners' measured output-layer backward is 1.14-1.29 ms
    # at h2048 on H100/H200, 8 bytes per logit priced it at 0.8-0.9 ms (docs/training.md).
    xent_bwd = MemOp("cross-entropy bwd", (20 + B) * T * V)
    bwd = Pass(logits.grads() + (xent_bwd, MemOp("final norm bwd", 2 * norm.size_bytes)), bwd_comm)
    return LayerWork(fwd, bwd, 3.0 * logits.flops)


CHUNK_CACHE_ENTRIES = 2048
"""Entries of :func:`stage_chunk_work`'s cache. An entry holds one chunk's passes, about 0.7 KB per block (89 KB for
llama-3-405b's 126 blocks with full recomputation), so the cache stays under ~180 MB whatever a search's size; a
wide search (gpt3-175b on 64-4096 GPUs of two topologies) fills 461 entries (4 MB), the validation's LLM section
539 (keyed by plan and virtual stage instead of :func:`work_config` and position: 7118 and 3074)."""


def chunk_work(model: TransformerSpec, config: TrainConfig, first: bool, last: bool, n: int, block: LayerWork,
               emb: LayerWork, out: LayerWork) -> tuple[Pass, Pass, float]:
    """(forward, backward, parameters one TP rank holds) of a virtual stage holding ``n`` blocks for one
    micro-batch: the ``first`` virtual stage adds the embedding, the ``last`` the output layer."""
    fwd, bwd = block.forward.times(n), block.backward.times(n)
    params = n * model.layer_params() / config.tp
    if first:
        fwd, bwd = emb.forward + fwd, bwd + emb.backward
        params += model.embedding_params() / config.tp
    if last:
        fwd, bwd = fwd + out.forward, out.backward + bwd
        params += model.output_params() / config.tp
    return fwd, bwd, params


@lru_cache(maxsize=1024)
def work_config(config: TrainConfig) -> TrainConfig:
    """``config`` with every field the work of a chunk does not depend on (data parallelism, batch, pipeline size
    and schedule, sharding, placement) set to one value, so plans that differ only there share one
    :func:`stage_chunk_work` entry (tensor parallelism, micro-batch, recomputation, sequence parallelism, attention
    and dtype are kept; a field added later is kept too)."""
    return replace(config, pp=1, dp=1, global_batch=config.micro_batch, schedule=Schedule.ONE_F_ONE_B,
                   virtual_stages=1, zero=0, fsdp=None, order=ORDERS[0], fsdp_shard=None, fsdp_divide_ranks=None)


def stage_chunk_work(model: TransformerSpec, config: TrainConfig, v: int, n: int) -> tuple[Pass, Pass, float]:
    """:func:`chunk_work` of virtual stage ``v`` (``n`` blocks) with the model's own block, embedding and output
    work: the one definition of a chunk's work for the simulation, the plan search's lower bound and the
    validation. Built once per model, :func:`work_config`, position (first, last or neither) and ``n`` (its passes
    then keep their :attr:`Pass.layout` and :attr:`Pass.flops`): the middle stages of every plan of one work
    configuration share an entry, so a search's entries grow with its space's work configurations, not its plans."""
    return _chunk_work(model, work_config(config), v == 0, v == config.pp * config.chunks - 1, n)


@lru_cache(maxsize=CHUNK_CACHE_ENTRIES)
def _chunk_work(model: TransformerSpec, config: TrainConfig, first: bool, last: bool,
                n: int) -> tuple[Pass, Pass, float]:
    return chunk_work(model, config, first, last, n, block_work(model, config), embedding_work(model, config),
                      output_work(model, config))
