"""Memory per GPU: model states by sharding strategy and activations by Korthikanti et al.

Model states (Megatron-LM mixed precision, bytes per parameter): 16-bit weights (2), fp32 main
gradients (4), fp32 master weights plus Adam's two moments (12) - 18 in all, the figure behind
Korthikanti et al.'s Figure 1. ZeRO-1 shards the optimizer states over the data-parallel group,
ZeRO-2 and FSDP SHARD_GRAD_OP also the gradients, ZeRO-3 and FSDP FULL_SHARD everything (plus the
gathered weights of the unit in use and the one prefetched); HYBRID_SHARD shards inside the
server's data-parallel peers and replicates across servers.

Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
Models", Section 4), per block and micro-batch, in bytes, with ``s`` sequence, ``b`` micro-batch,
``h`` hidden, ``a`` heads, ``t`` TP size:

* kept on every TP rank (norm inputs, QKV and fc1 inputs, dropout masks): ``10 s b h``, or
  ``10 s b h / t`` with sequence parallelism;
* split over TP: Q, K, V and the projection input ``8 s b h`` (K and V scaled by kv_heads/heads
  for grouped-query attention) and the MLP's ``4 s b ffn`` (``6 s b ffn`` for SwiGLU), over ``t``;
* the attention core ``5 a s^2 b / t`` (softmax output, dropout mask and output), dropped by
  selective recomputation and by flash attention;
* full recomputation keeps only each block's input, ``2 s b h`` (``/ t`` with sequence parallelism).

The first stage holds the activations of ``min(pp, micro-batches)`` micro-batches under 1F1B and
``pp * (1 + (pp - 1) / (pp * v))`` with ``v`` interleaved chunks (Korthikanti et al., eq. 5-6).
For GPT (ffn = 4h, no GQA) the sum is the paper's ``s b h (34 + 5 a s / h)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.training.llm.config import Recompute, Schedule, TrainConfig
from simulator.training.llm.model import TransformerSpec

PARAM_BYTES = 2
GRAD_BYTES = 4
OPTIMIZER_BYTES = 12


@dataclass(frozen=True)
class Memory:
    """Bytes per GPU on the most loaded pipeline stage: whole bytes (a shard of ``n`` bytes over ``d`` ranks
    takes ``ceil(n / d)``, as FSDP pads its flat shards), so ``memory_bytes`` in ``gpunetsim train --json``
    are integers."""

    params: int
    grads: int
    optimizer: int
    activations: int
    capacity_bytes: int
    stage: int

    def __post_init__(self) -> None:
        """Plain Python ints, rounded up (float noise below a millionth of a byte is not a byte)."""
        for f in ("params", "grads", "optimizer", "activations"):
            object.__setattr__(self, f, math.ceil(round(float(getattr(self, f)), 6)))
        for f in ("capacity_bytes", "stage"):
            object.__setattr__(self, f, int(getattr(self, f)))

    @property
    def total(self) -> int:
        return self.params + self.grads + self.optimizer + self.activations

    @property
    def fits(self) -> bool:
        return self.total <= self.capacity_bytes

    def as_dict(self) -> dict:
        return {"params": self.params, "grads": self.grads, "optimizer": self.optimizer,
                "activations": self.activations, "total": self.total}


def stage_layers(layers: int, pp: int) -> list[int]:
    """Blocks per stage: as even as possible, the first stages taking the remainder."""
    base, extra = divmod(layers, pp)
    return [base + (1 if s < extra else 0) for s in range(pp)]


def stage_params(model: TransformerSpec, config: TrainConfig) -> list[float]:
    """Parameters held by one TP rank of each stage (blocks plus embedding / output layers)."""
    out = []
    for s, n in enumerate(stage_layers(model.layers, config.pp)):
        p = n * model.layer_params() / config.tp
        if s == 0:
            p += model.embedding_params() / config.tp
        if s == config.pp - 1:
            p += model.output_params() / config.tp
            if model.tied_embeddings and config.pp > 1:
                p += model.vocab * model.hidden / config.tp     # the last stage's copy of the embedding
        out.append(p)
    return out


def activation_bytes_per_layer(model: TransformerSpec, config: TrainConfig) -> float:
    """One block's stored activations for one micro-batch on one TP rank (bytes)."""
    s, b, h, t = model.seq, config.micro_batch, model.hidden, config.tp
    sbh = s * b * h
    sp = config.sequence_parallel
    if config.recompute is Recompute.FULL:
        return 2 * sbh / (t if sp else 1)
    kv = model.kv_heads / model.heads
    mlp = (6 if model.gated_mlp else 4) * s * b * model.ffn
    split = (4 + 4 * kv) * sbh + mlp
    replicated = 10 * sbh
    core = 5 * model.heads * s * s * b
    if config.recompute is Recompute.SELECTIVE or config.flash_attention:
        core = 0
    return (replicated / t if sp else replicated) + (split + core) / t


def inflight_microbatches(config: TrainConfig, stage: int = 0) -> float:
    """Micro-batches whose activations one stage holds at the peak (the first stage holds most)."""
    p, m = config.pp, config.microbatches
    if config.schedule is Schedule.INTERLEAVED:
        return p * (1 + (p - 1) / (p * config.chunks)) * (p - stage) / p
    return min(p - stage, m)


def dp_shard_sizes(config: TrainConfig, hybrid_group: int) -> tuple[int, int, int]:
    """Divisors of (params, grads, optimizer states) over data parallelism."""
    dp = config.dp
    if config.fsdp == "hybrid":
        return hybrid_group, hybrid_group, hybrid_group
    if config.fsdp == "full" or config.zero == 3:
        return dp, dp, dp
    if config.fsdp == "grad-op" or config.zero == 2:
        return 1, dp, dp
    if config.zero == 1:
        return 1, 1, dp
    return 1, 1, 1


def memory_per_gpu(model: TransformerSpec, config: TrainConfig, capacity_bytes: int,
                   hybrid_group: int = 1) -> Memory:
    """Memory of the most loaded stage (params + grads + optimizer + activations)."""
    per_stage = stage_params(model, config)
    layers = stage_layers(model.layers, config.pp)
    act_layer = activation_bytes_per_layer(model, config)
    full_layer = activation_bytes_per_layer(model, TrainConfig(
        config.tp, config.pp, config.dp, config.global_batch, config.micro_batch,
        sequence_parallel=config.sequence_parallel, dtype=config.dtype,
        flash_attention=config.flash_attention)) if config.recompute is Recompute.FULL else 0.0
    sp_, sg, so = dp_shard_sizes(config, hybrid_group)
    best: Memory | None = None
    for s, (p, n) in enumerate(zip(per_stage, layers)):
        params = p * PARAM_BYTES / sp_
        if sp_ > 1:      # the gathered unit in use and the prefetched one
            params += 2 * model.layer_params() / config.tp * PARAM_BYTES
        act = n * act_layer * inflight_microbatches(config, s) + full_layer
        m = Memory(params, p * GRAD_BYTES / sg, p * OPTIMIZER_BYTES / so, act, 0, s)
        if best is None or m.total > best.total:
            best = m
    assert best is not None
    return Memory(best.params, best.grads, best.optimizer, best.activations, capacity_bytes, best.stage)
