"""Where each (tp, dp, pp) rank runs: GPUs in rank order, parallel dimensions nested as ordered.

Megatron-LM's default order is ``tp-dp-pp`` (innermost first): consecutive GPUs form a
tensor-parallel group (NVLink inside one server), the data-parallel replicas of one stage come
next, and pipeline stages are outermost, so a stage's data-parallel group spans servers on the
same rail and neighbouring stages sit on different servers. Groups that share a server share its
NICs and PCIe switches; the network engine sees that contention because every group's transfers
run on the real routes of these GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.core.errors import InputError
from simulator.training.llm.config import TrainConfig


@dataclass(frozen=True)
class Placement:
    """GPU names by coordinates; ``gpu(tp, dp, pp)``."""

    config: TrainConfig
    gpus: tuple[str, ...]
    hosts: tuple[int, ...]       # server of each GPU (same order)

    @classmethod
    def build(cls, config: TrainConfig, gpus: list[str], host_of) -> "Placement":
        if len(gpus) != config.gpus:
            raise InputError(f"--tp x --pp x --dp = {config.tp} x {config.pp} x {config.dp} = {config.gpus} "
                             f"GPUs, but the topology has {len(gpus)} (adjust --nodes/--gpus or the sizes)",
                             field="--dp", value=config.dp)
        return cls(config, tuple(gpus), tuple(host_of(g) for g in gpus))

    def rank(self, tp: int, dp: int, pp: int) -> int:
        sizes = {"tp": self.config.tp, "dp": self.config.dp, "pp": self.config.pp}
        coord = {"tp": tp, "dp": dp, "pp": pp}
        r, stride = 0, 1
        for dim in self.config.order.split("-"):
            r += coord[dim] * stride
            stride *= sizes[dim]
        return r

    def gpu(self, tp: int, dp: int, pp: int) -> str:
        return self.gpus[self.rank(tp, dp, pp)]

    def tp_group(self, dp: int, pp: int) -> tuple[str, ...]:
        return tuple(self.gpu(t, dp, pp) for t in range(self.config.tp))

    def dp_group(self, tp: int, pp: int) -> tuple[str, ...]:
        return tuple(self.gpu(tp, d, pp) for d in range(self.config.dp))

    def hybrid_shard_group(self) -> int:
        """HYBRID_SHARD's shard group: ``--fsdp-shard`` ranks, or the data-parallel peers of one server
        (at least 1)."""
        if self.config.fsdp_shard is not None:
            return self.config.fsdp_shard
        group = self.dp_group(0, 0)
        first = self.hosts[self.gpus.index(group[0])]
        return max(1, sum(1 for g in group if self.hosts[self.gpus.index(g)] == first))
