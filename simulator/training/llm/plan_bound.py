"""A cheap lower bound on a plan's iteration time: its kernels alone, in pipeline order.

No plan can beat the compute model's kernel times with free communication. Per stage ``s``, a
micro-batch's forward takes ``f_s`` and its backward ``b_s`` (:mod:`.compute`, host time included,
as :func:`.iteration.simulate_train` times passes). The last stage cannot start before the first
micro-batch has gone forward through the stages before it, and the first stage cannot finish
before the last micro-batch's gradient has come back through them, so

    iteration >= sum_{s < p-1} (f_s + b_s) / v  +  m (f_{p-1} + b_{p-1})  +  optimizer_{p-1}

(``m`` micro-batches, ``v`` interleaved chunks; for equal stages the 1F1B bubble
``(p - 1)(f + b)``), and no stage finishes before its own ``m (f_s + b_s)`` plus its optimizer.
Communication (TP, pipeline sends, exposed DP) only adds to this, so a plan whose bound exceeds a
simulated plan's time can be skipped without simulating it.
"""

from __future__ import annotations

from simulator.training.llm.compute import ComputeModel
from simulator.training.llm.config import Recompute, TrainConfig
from simulator.training.llm.layer import block_work, chunk_work, embedding_work, output_work
from simulator.training.llm.memory import dp_shard_sizes, stage_layers
from simulator.training.llm.model import TransformerSpec


def stage_pass_s(model: TransformerSpec, config: TrainConfig, cm: ComputeModel) -> list[tuple[float, float, float]]:
    """(forward, backward) seconds of one micro-batch on each stage, all its chunks together, and
    the parameters one TP rank of the stage holds."""
    c, B = config, config.dtype_bytes
    block, emb, out = block_work(model, c), embedding_work(model, c), output_work(model, c)
    V = c.pp * c.chunks
    layers = stage_layers(model.layers, V)
    full = c.recompute is Recompute.FULL
    per_stage = [[0.0, 0.0, 0.0] for _ in range(c.pp)]
    for v, n in enumerate(layers):
        fwd, bwd, params = chunk_work(model, c, v, n, block, emb, out)
        st = per_stage[v % c.pp]
        st[0] += max(cm.pass_s(fwd, B), cm.host_s(n, True, full))
        st[1] += max(cm.pass_s(bwd, B), cm.host_s(n, False, full))
        st[2] += params
    return [(f, b, p) for f, b, p in per_stage]


def iteration_lower_bound_s(model: TransformerSpec, config: TrainConfig, cm: ComputeModel) -> float:
    """Seconds no simulation of ``config`` can go below (see the module docstring)."""
    c = config
    stages = stage_pass_s(model, c, cm)
    shard_o = dp_shard_sizes(c, c.dp)[2]          # HYBRID_SHARD: DP bounds its shard group
    m = c.microbatches
    own = max(m * (f + b) + cm.optimizer_s(p / shard_o) for f, b, p in stages)
    f_l, b_l, p_l = stages[-1]
    fill = sum(f + b for f, b, _ in stages[:-1]) / c.chunks
    return max(own, fill + m * (f_l + b_l) + cm.optimizer_s(p_l / shard_o)) + cm.params.iteration_overhead_s
