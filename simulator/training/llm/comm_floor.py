"""The least time a plan's communication can take: each collective and send alone on the idle network.

The plan search's lower bound (:mod:`.plan_bound`) adds these to the kernels. Each is what
:mod:`.iteration` would simulate with nothing else on its links; other traffic only slows it, so
the sum stays below any simulation:

* a tensor-parallel collective: the closed form of the plan :class:`.groups.GroupCollectives`
  picks for the TP group (the same choice the iteration makes; it is exactly the simulated time
  when no other traffic crosses the group's links);
* a pipeline send: its fixed latency without the host's issue of the call (a host that runs ahead
  issues it before the pass ends) plus its bytes (wire bytes per payload byte included) at the
  narrowest link of one sender's route (all TP ranks and replicas send at once at one common
  rate, so none goes faster), the fastest hop of the pipeline standing for every hop;
* the end-of-iteration gradient reduction (and ZeRO-1/2's parameter all-gather) of DDP and ZeRO-1/2
  on a stage's data-parallel group. ZeRO-3 and FSDP overlap theirs with the passes: nothing is
  counted for them.

Every TP group (and every stage's data-parallel group) is taken to be alike, as on identical
servers, so the first one stands for all. One instance per cluster caches plans per group, so a
search pays for each distinct group and size once.
"""

from __future__ import annotations

import math

from simulator.collectives.params import Parameters
from simulator.core.vocabulary import NcclVersion
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.groups import GroupCollectives
from simulator.training.llm.layer import CommCall
from simulator.training.llm.memory import GRAD_BYTES, PARAM_BYTES
from simulator.training.llm.placement import Placement
from topologies.routing import Router


class CommFloor:
    """Closed-form communication times alone on ``router``'s idle network (seconds)."""

    def __init__(self, router: Router, params: Parameters, nccl_version: NcclVersion | None = None) -> None:
        self.router = router
        self.groups = GroupCollectives(router, params, nccl_version)
        self._gpus = tuple(router.gpus)
        self._hops: dict[tuple, tuple[float, float]] = {}
        self._groups: dict[tuple, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def _place(self, c: TrainConfig) -> Placement:
        return Placement(c, self._gpus, ())

    def _first_groups(self, c: TrainConfig) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(first TP group, first stage's first data-parallel group) of ``c``'s placement, built once
        per layout (the bound asks for them per pass)."""
        key = _layout(c)
        hit = self._groups.get(key)
        if hit is None:
            pl = self._place(c)
            hit = self._groups[key] = (pl.tp_group(0, 0), pl.dp_group(0, 0))
        return hit

    def calls_s(self, calls: tuple[CommCall, ...], ranks: tuple[str, ...]) -> float:
        """``calls`` one after another on the group ``ranks``."""
        g = self.groups
        return sum(g.time_s(g.plan(k.op, ranks, k.size_bytes), ranks, k.size_bytes, k.count) for k in calls)

    def tp_s(self, c: TrainConfig, calls: tuple[CommCall, ...]) -> float:
        """One pass's TP collectives (on the first TP group)."""
        return self.calls_s(calls, self._first_groups(c)[0]) if calls and c.tp > 1 else 0.0

    def send_s(self, c: TrainConfig, send_bytes: float) -> float:
        """One pipeline send of ``send_bytes`` per route between neighbouring stages."""
        if c.pp < 2:
            return 0.0
        key = (_layout(c), send_bytes)         # the size picks the send's protocol (LL or Simple), as simulated
        hop = self._hops.get(key)
        if hop is None:
            pl, g = self._place(c), self.groups
            best = (math.inf, math.inf)
            for s in range(c.pp):
                src, dst = pl.gpu(0, 0, s), pl.gpu(0, 0, (s + 1) % c.pp)
                plan = g.p2p_plan(src, dst, send_bytes)
                route = self.router.route(src, dst)
                factor = plan.groups[0].bytes_per_byte if plan.groups else 1.0
                cap = float(g.capacity_Bps[list(route)].min()) if route else math.inf
                best = min(best, (plan.call_overhead_s - plan.host_s + plan.latency_s, factor / cap))
            hop = self._hops[key] = best
        return hop[0] + hop[1] * send_bytes

    def dp_tail_s(self, c: TrainConfig, stage_params: float) -> float:
        """A stage's exposed data-parallel work after its last pass (DDP, ZeRO-1/2 only)."""
        if c.dp < 2 or c.fsdp is not None or c.zero == 3:
            return 0.0
        ranks = self._first_groups(c)[1]
        g, gbytes = self.groups, stage_params * GRAD_BYTES
        if c.zero == 0:
            return g.time_s(g.plan("all_reduce", ranks, gbytes), ranks, gbytes)
        pbytes = stage_params * PARAM_BYTES
        return (g.time_s(g.plan("reduce_scatter", ranks, gbytes), ranks, gbytes)
                + g.time_s(g.plan("all_gather", ranks, pbytes), ranks, pbytes))


def _layout(c: TrainConfig) -> tuple:
    """What places ``c``'s ranks on the GPUs (simulator.training.llm.placement)."""
    return (c.tp, c.pp, c.dp, c.order)
