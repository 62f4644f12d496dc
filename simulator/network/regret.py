"""Tuner regret: how much slower NCCL's choice is than the fastest enabled algorithm/protocol, in
gpunetsim's own timing.

NCCL picks by its own cost model (simulator.collectives.nccl_model); gpunetsim times every choice the
topology enables with its closed form (which the discrete-event engine matches within 1% on an idle
network). Where NCCL's pick is more than ``REGRET_THRESHOLD_PCT`` slower than the best, a user
should consider setting NCCL_ALGO / NCCL_PROTO; ``gpunetsim collective`` marks those sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.network.closed_form import CostModel

REGRET_THRESHOLD_PCT = 10.0


@dataclass(frozen=True)
class Regret:
    """The fastest enabled (algorithm, protocol) and how much slower the tuner's pick is, %."""

    chosen_algo: str
    chosen_proto: str
    best_algo: str
    best_proto: str
    regret_pct: float

    @property
    def marked(self) -> bool:
        return self.regret_pct > REGRET_THRESHOLD_PCT


def tuner_regret(model: CostModel, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> Regret:
    """Regret of the tuner's choice among the pairs ``algo``/``proto`` allow (every enabled one for auto)."""
    chosen = model.choose(op, size_bytes, algo, proto)
    times = {pair: model.shape(op, *pair).time_s(size_bytes) for pair in model.choices(op, algo, proto)}
    best = min(times, key=lambda pair: (times[pair], pair != chosen))
    return Regret(*chosen, *best, max(0.0, (times[chosen] / times[best] - 1.0) * 100.0))
