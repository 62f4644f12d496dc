"""Collectives of a process group (a subset of the GPUs): plans and the algorithm choice.

The collective planner (:class:`simulator.collectives.planner.Planner`) lays a collective out on
any list of ranks; this module picks, for one group and size, the algorithm and protocol the
closed form predicts fastest (the same alpha-beta shape the engine runs; NCCL's own tuner is
built for the whole cluster's communicator, so a sub-group uses the fastest choice instead) and
caches plans per group. A group's plan routes over the real links of its GPUs, so TP, DP and
pipeline traffic of different groups contend where they share links.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from simulator.collectives.params import Parameters
from simulator.collectives.planner import Planner
from simulator.collectives.plans import Plan
from simulator.core.errors import InputError
from simulator.core.vocabulary import NcclVersion
from simulator.network.fairness import max_min_rates
from topologies.routing import Router


class GroupCollectives:
    """Plans (and their alpha-beta shapes) for collectives on groups of one topology."""

    def __init__(self, router: Router, params: Parameters, nccl_version: NcclVersion | None = None) -> None:
        """``nccl_version``: the NCCL planned for (Planner; None: the newest modelled)."""
        self.router = router
        self.params = params
        self.planner, self._shapes, self.capacity_Bps = _shared(router, params, nccl_version)
        self._choice: dict[tuple, tuple[str, str]] = {}     # per instance: decided by the first size seen

    def _rates(self, plan: Plan, channels: int | None) -> np.ndarray:
        """Max-min fair rate of each flow group of ``plan`` alone on the idle network (a p2p plan's
        groups capped at ``channels`` p2p channels)."""
        uses = [g.uses for g in plan.groups]
        g_ = np.concatenate([np.full(len(u), i) for i, u in enumerate(uses)])
        l_ = np.concatenate([u.links for u in uses])
        c_ = np.concatenate([u.counts for u in uses])
        local, inverse = np.unique(l_, return_inverse=True)       # only the links this plan crosses
        caps = np.array(plan.caps_for(channels))
        return max_min_rates(g_, inverse, c_, self.capacity_Bps[local], caps)

    def _shape(self, op: str, algo: str, proto: str, ranks: tuple[str, ...],
               size_bytes: float | None = None) -> tuple[float, float, Plan]:
        plan = self.planner.plan(op, algo, proto, ranks)
        channels = plan.channels_at(size_bytes) if size_bytes is not None else None
        key = (op, algo, proto, ranks, channels)
        s = self._shapes.get(key)
        if s is None:
            rates = self._rates(plan, channels) if plan.groups else np.zeros(0)
            beta = max((g.bytes_per_byte / r if r > 0 else math.inf) for g, r in zip(plan.groups, rates)) \
                if plan.groups else 0.0
            s = self._shapes[key] = (plan.call_overhead_s + plan.latency_s, beta + plan.local_s_per_byte, plan)
        return s

    def plan(self, op: str, ranks: tuple[str, ...], size_bytes: float) -> Plan:
        """The fastest plan for ``op`` of ``size_bytes`` on ``ranks`` (decided per power-of-two size)."""
        bucket = int(math.log2(max(size_bytes, 1.0)))
        key = (op, ranks, bucket)
        choice = self._choice.get(key)
        if choice is None:
            best = (math.inf, "", "")
            for a, p in self.planner.choices(op):
                try:
                    alpha, beta, plan = self._shape(op, a, p, ranks, size_bytes)
                except InputError:          # not available on this group (e.g. NVLS across servers)
                    continue
                t = alpha + beta * plan.costed_bytes(size_bytes)
                if t < best[0]:
                    best = (t, a, p)
            choice = self._choice[key] = (best[1], best[2])
        return self._shape(op, choice[0], choice[1], ranks)[2]

    def time_s(self, plan: Plan, ranks: tuple[str, ...], size_bytes: float, count: int = 1) -> float:
        """Closed-form seconds of ``count`` collectives alone on an idle network, each priced as an isolated
        call: alpha (its host issue included) + S * beta in full, not overlapped with the GPU work of the
        call before as in a stream of calls (simulator.network.host_overlap: the LLM iteration carries the
        host's own timeline)."""
        alpha, beta, _ = self._shape(plan.op, plan.algo, plan.proto, ranks, size_bytes)
        return count * (alpha + beta * plan.costed_bytes(size_bytes))

    def p2p_plan(self, src: str, dst: str, size_bytes: float) -> Plan:
        """A send of ``size_bytes`` from ``src`` to ``dst`` (NCCL's send/recv): latency and route, under the
        protocol NCCL's p2p path picks for that size (:meth:`.Planner.p2p_protocol`: LL up to 16 KiB per p2p
        channel of the peer, Simple above or across servers), as ``gpunetsim collective`` prices it."""
        proto = self.planner.p2p_protocol("send_recv", size_bytes, (src, dst))
        return self._shape("send_recv", "direct", proto, (src, dst))[2]


_SHARED: "weakref.WeakKeyDictionary[Router, dict]" = weakref.WeakKeyDictionary()
"""Per router, parameter values and NCCL version: the planner, the shapes (alpha, beta, plan) and the usable link
capacities, which depend on nothing else, so every simulation on one router with the same parameters
(a sweep, a fit's many runs) plans and prices each collective once. Kept as long as the router lives."""


def _shared(router: Router, params: Parameters,
            nccl_version: NcclVersion | None = None) -> tuple[Planner, dict, np.ndarray]:
    by_params = _SHARED.get(router)
    if by_params is None:
        by_params = _SHARED[router] = {}
    key = (params.values_key, nccl_version or params.nccl_version)      # the version the Planner plans for
    hit = by_params.get(key)
    if hit is None:
        if len(by_params) > 16:
            by_params.clear()
        eff = {k: params.link_efficiency(k) for k in set(router.kind)}
        capacity = router.capacity_Bps * np.array([eff[k] for k in router.kind])
        capacity.setflags(write=False)                   # shared: nobody may change it in place
        hit = by_params[key] = (Planner(router, params, nccl_version), {}, capacity)
    return hit
