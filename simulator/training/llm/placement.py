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

from simulator.training.llm.config import TrainConfig, check_gpus


@dataclass(frozen=True)
class Placement:
    """GPU names by coordinates; ``gpu(tp, dp, pp)``."""

    config: TrainConfig
    gpus: tuple[str, ...]
    hosts: tuple[int, ...]       # server of each GPU (same order)

    @classmethod
    def build(cls, config: TrainConfig, gpus: list[str], host_of) -> "Placement":
        check_gpus(config.tp, config.pp, config.dp, len(gpus))
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

    @classmethod
    def uniform(cls, config: TrainConfig, gpus_per_host: int) -> "Placement":
        """``config`` on ``config.gpus`` GPUs in servers of ``gpus_per_host`` (names ``g<rank>``): where plan
        search asks for a plan's groups before it has routes."""
        n = config.gpus
        return cls(config, tuple(f"g{i}" for i in range(n)), tuple(i // max(1, gpus_per_host) for i in range(n)))

    def hybrid_groups(self, tp: int, pp: int) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
        """HYBRID_SHARD's groups of the data-parallel group of (``tp``, ``pp``): (shard groups, replica groups
        across them). Shard groups of ``fsdp_shard`` consecutive data-parallel ranks (FSDP's device mesh), or the
        ranks of each server; replica ``i`` holds every shard group's ``i``-th rank (as many replicas as the
        smallest shard group has ranks). The one definition of the split: memory, FSDP's collectives, the header
        and plan search read it."""
        ranks = [self.rank(tp, d, pp) for d in range(self.config.dp)]
        k = self.config.fsdp_shard
        if k is not None:
            shards = [tuple(self.gpus[r] for r in ranks[i:i + k]) for i in range(0, len(ranks), k)]
        else:
            by_host: dict[int, list[str]] = {}
            for r in ranks:
                by_host.setdefault(self.hosts[r], []).append(self.gpus[r])
            shards = [tuple(v) for v in by_host.values()]
        width = min(len(v) for v in shards)
        return tuple(shards), tuple(tuple(v[i] for v in shards) for i in range(width))

    def hybrid_shard_group(self) -> int:
        """HYBRID_SHARD's shard group size: ``--fsdp-shard`` ranks, or the data-parallel peers of one server
        (the first shard group of :meth:`hybrid_groups`)."""
        return len(self.hybrid_groups(0, 0)[0][0])
