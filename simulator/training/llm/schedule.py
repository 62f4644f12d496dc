"""Pipeline schedules as plain data: the order in which each stage runs its passes.

``one_f_one_b`` is PipeDream-Flush / Megatron-LM's 1F1B: stage ``s`` of ``p`` runs
``min(p - s - 1, m)`` warm-up forwards, then alternates one forward and one backward, then drains
the remaining backwards. ``interleaved`` is Megatron-LM's interleaved 1F1B with ``v`` model chunks
per stage (virtual stage ``c * p + s`` holds chunk ``c`` of stage ``s``): warm-up
``2 (p - s - 1) + (v - 1) p`` forward units, then one forward and one backward unit at a time; the
k-th forward unit is chunk ``(k mod p v) div p`` of micro-batch ``(k div p v) p + k mod p``, the
backward units walk the chunks in reverse (Narayanan et al. 2021, Megatron-LM's
``forward_backward_pipelining_with_interleaving``).

Nothing here has a duration: the executor (:mod:`.pipeline_engine`) runs the passes in this order,
each waiting for its input from the neighbouring virtual stage, so the bubble comes out of the
simulation rather than a formula.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Action:
    """One pass of one micro-batch through one model chunk of a stage."""

    forward: bool
    microbatch: int
    chunk: int

    @property
    def label(self) -> str:
        return f"{'F' if self.forward else 'B'}{self.microbatch}" + (f".{self.chunk}" if self.chunk else "")


def _unit(k: int, p: int, v: int, forward: bool) -> Action:
    group = k % (p * v)
    chunk = group // p
    if not forward:
        chunk = v - 1 - chunk
    return Action(forward, (k // (p * v)) * p + k % p, chunk)


def stage_order(stage: int, pp: int, microbatches: int, chunks: int = 1) -> tuple[Action, ...]:
    """The passes of ``stage`` in execution order (1F1B when ``chunks == 1``)."""
    p, m, v = pp, microbatches, chunks
    total = m * v
    if v == 1:
        warmup = min(p - stage - 1, m)
        fwd = [Action(True, i, 0) for i in range(m)]
        bwd = [Action(False, i, 0) for i in range(m)]
    else:
        warmup = min((p - stage - 1) * 2 + (v - 1) * p, total)
        fwd = [_unit(k, p, v, True) for k in range(total)]
        bwd = [_unit(k, p, v, False) for k in range(total)]
    order = fwd[:warmup]
    for i in range(total - warmup):
        order += [fwd[warmup + i], bwd[i]]
    order += bwd[total - warmup:]
    return tuple(order)


def schedule(pp: int, microbatches: int, chunks: int = 1) -> tuple[tuple[Action, ...], ...]:
    """Every stage's order."""
    return tuple(stage_order(s, pp, microbatches, chunks) for s in range(pp))
