"""The closed-form (alpha-beta) model: time = call overhead + latency + size * seconds_per_byte.

Alpha (latency) and beta (seconds per byte) come from the same collective plan that the
discrete-event engine executes: beta is the slowest group's wire bytes per byte over its max-min
fair rate on an idle network. A plan is built once per (op, algorithm, protocol); afterwards a
prediction is a few arithmetic operations (over 100,000 per second).

:class:`ClosedFormTimer` prices plans; :class:`CostModel` puts a planner, a tuner and this timer
together for the callers that want "the time of all_reduce at 64 MiB, as NCCL would run it".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Callable

from simulator.collectives.ofi_tuner import plugin_net_latency_s, plugin_nvls_chunks
from simulator.collectives.params import Parameters
from simulator.collectives.planner import Planner
from simulator.collectives.plans import Plan
from simulator.collectives.tuner import Tuner
from simulator.core.errors import InvariantError
from simulator.core.vocabulary import Limit, NcclVersion
from simulator.network.fairness import FlowGroups, LinkCapacity
from simulator.network.host_overlap import stream_time_s
from topologies.routing import Router

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class Shape:
    """alpha/beta of one collective: time(S) = alpha_s + S * beta_s_per_byte, except that ``host_s``,
    the host's issue of the call (part of alpha), overlaps the previous call's GPU work in a stream of
    calls (:func:`call_time_s`, simulator.network.host_overlap).

    A p2p plan's beta depends on the size through NCCL's channel count (simulator.collectives.p2p):
    its shape is the one without a channel ceiling, and ``sized(S)`` (which ``time_s`` uses) is the
    shape at the channel count of ``S``; ``channels`` is that count (None: no p2p channels)."""

    alpha_s: float
    beta_s_per_byte: float
    plan: Plan
    bottleneck: Limit = Limit.NONE   # link class that saturates first, or the protocol's ceiling
    wire_s_per_byte: float = 0.0     # the network part of beta (what the pipeline fill's bytes cost)
    channels: int | None = None
    at_channels: Callable[[int], "Shape"] | None = field(default=None, compare=False, repr=False)
    host_s: float = 0.0              # the host's issue of the call (part of alpha_s; Plan.host_s)

    def sized(self, size_bytes: float) -> "Shape":
        """The shape that holds at ``size_bytes`` (itself unless the plan's channels vary with size)."""
        if self.at_channels is None:
            return self
        return self.at_channels(self.plan.channels_at(size_bytes))

    def latency_bound(self, size_bytes: float) -> bool:
        """Whether a call of ``size_bytes`` is in the latency regime: its alpha term at least its
        bandwidth term (in the shape that holds at that size)."""
        s = self.sized(size_bytes)
        return s.alpha_s >= size_bytes * s.beta_s_per_byte

    def time_s(self, size_bytes: float) -> float:
        if self.at_channels is not None:
            return self.sized(size_bytes).time_s(size_bytes)
        plan = self.plan
        size = plan.costed_bytes(size_bytes) if plan.unaligned_extra > 0 else size_bytes    # (S when aligned)
        if plan.chunking is None and plan.loops is None:
            return call_time_s(self.alpha_s, self.beta_s_per_byte, self.wire_s_per_byte, size, host_s=self.host_s)
        return call_time_s(self.alpha_s, self.beta_s_per_byte, self.wire_s_per_byte, size,
                           plan.pad_bytes(size_bytes), plan.chunk_overhead_s(size_bytes), self.host_s)


def call_time_s(alpha_s, beta_s_per_byte, wire_s_per_byte, size_bytes, pad_bytes=0.0, chunk_steps_s=0.0,
                host_s=0.0):
    """Seconds of one call in the closed form: alpha + S * beta (S: the bytes the call pays for, Plan.costed_bytes), plus a pipelined plan's fill (its
    ``pad_bytes`` at the wire's rate) and its chunk steps' own seconds; the host's issue of the call,
    ``host_s`` (part of alpha), overlaps the GPU work of the call before it in a stream of calls, so
    the two combine as simulator.network.host_overlap.stream_time_s says (about the larger of them). The one
    definition of the closed form's time: :meth:`Shape.time_s` prices one call with it, the fitter
    (validation.calibrate.Evaluator) every point at once (it works elementwise on numpy arrays)."""
    gpu = alpha_s - host_s + size_bytes * beta_s_per_byte + pad_bytes * wire_s_per_byte + chunk_steps_s
    return stream_time_s(host_s, gpu)


class RateCache:
    """Usable capacities and max-min rates of one router's plans, kept across parameter sets for
    callers that time the same plans under many of them (a calibration's finite differences): rates
    depend on the plans' link uses, their caps and the capacities only, and the capacities on the
    link classes' efficiencies only, so timers made with this cache share both with earlier timers of
    the same efficiencies. The last ``keep`` efficiency sets are kept."""

    def __init__(self, router: Router, keep: int = 16) -> None:
        self.router = router
        self.classes = tuple(sorted(set(router.kind)))
        self.keep = keep
        self._sets: dict[tuple[float, ...], tuple[LinkCapacity, dict]] = {}

    def of(self, params: Parameters) -> tuple[LinkCapacity, dict]:
        """(usable capacity, the rates dict of :class:`ClosedFormTimer`) under ``params``."""
        key = tuple(params.link_efficiency(k) for k in self.classes)
        hit = self._sets.pop(key, None)              # re-inserted: the dict's order is least recent first
        if hit is None:
            hit = (LinkCapacity(params.achievable_Bps(self.router.capacity_Bps, self.router.kind)), {})
            if len(self._sets) >= self.keep:
                del self._sets[next(iter(self._sets))]
        self._sets[key] = hit
        return hit


class ClosedFormTimer:
    """Alpha-beta of plans on an idle network; one shape per plan, cached here. Plans that differ
    only in protocol share their link uses and, unless their rate caps differ, their max-min rates,
    which are remembered per (link uses, caps); with a :class:`RateCache`, across timers too."""

    def __init__(self, router: Router, params: Parameters, rate_cache: RateCache | None = None) -> None:
        self.router = router
        self.params = params
        self._shapes: dict[tuple[int, int | None], tuple[Plan, Shape]] = {}
        self._rates: dict[tuple, tuple[list[float], dict[int, tuple[float, int]]]] = {}
        if rate_cache is not None:
            if rate_cache.router is not router:
                raise InvariantError("a rate cache serves the router it was made for, not another")
            self.capacity, self._rates = rate_cache.of(params)    # (capacity: the cached property's value)

    @cached_property
    def capacity(self) -> LinkCapacity:
        """Usable capacity per directed link (the same for every plan)."""
        return LinkCapacity(self.params.achievable_Bps(self.router.capacity_Bps, self.router.kind))

    def shape(self, plan: Plan, channels: int | None = None) -> Shape:
        """The plan's alpha-beta; for a p2p plan, without a channel ceiling unless ``channels`` says
        how many p2p channels each peer's bytes use (``Shape.sized`` picks them by size)."""
        key = (id(plan), channels)
        hit = self._shapes.get(key)
        if hit is None or hit[0] is not plan:
            rates, neck = self._rates_and_bottleneck(plan, channels)
            beta = max((g.bytes_per_byte / r if r > 0 else math.inf) for g, r in zip(plan.groups, rates)) \
                if plan.groups else 0.0
            sized = (lambda c, p=plan: self.shape(p, c)) if plan.p2p is not None and channels is None else None
            hit = self._shapes[key] = (plan, Shape(plan.call_overhead_s + plan.latency_s,
                                                   beta + plan.local_s_per_byte, plan, neck, beta, channels, sized,
                                                   plan.host_s))
        return hit[1]

    def _rates_and_bottleneck(self, plan: Plan, channels: int | None = None) -> tuple[list[float], Limit]:
        """Max-min rates of the plan's groups on an idle network (a p2p plan's groups capped at
        ``channels`` p2p channels), and the class of the link that limits the slowest group (the first
        of its most utilised links), or the protocol's or the p2p channels' own ceiling."""
        if not plan.groups:
            return [], Limit.NONE
        key = (tuple(g.uses for g in plan.groups), plan.caps_for(channels))  # uses: by identity
        groups = None
        hit = self._rates.get(key)
        if hit is None:
            groups = FlowGroups(key[0])
            hit = self._rates[key] = (groups.rates(key[1], self.capacity), {})
        rates, busiest = hit
        slow = [g.bytes_per_byte / r if r > 0 else math.inf for g, r in zip(plan.groups, rates)]
        slowest = slow.index(max(slow))
        if slowest not in busiest:        # (the arrays of a large plan are not kept: memory at scale)
            busiest[slowest] = (groups or FlowGroups(key[0])).busiest_link(slowest, rates, self.capacity)
        util, link = busiest[slowest]
        if link < 0 or util < 0.999:
            cap = key[1][slowest]
            if channels is not None and rates[slowest] >= 0.999 * cap and cap < plan.groups[slowest].rate_cap_Bps:
                return rates, Limit.CHANNELS     # NCCL's p2p channels (CTAs) carry less than the links
            if plan.algo == "nvls_tree":
                return rates, Limit.KERNEL       # NVLS-Tree's channels at NCCL's per-channel rate (its only cap)
            return rates, Limit.PROTOCOL         # limited by the protocol's own ceiling (e.g. LL), not a link
        return rates, Limit(self.router.kind[link])

    def time(self, plan: Plan, size_bytes: float) -> float:
        """Seconds of one call of ``plan`` at ``size_bytes``."""
        return self.shape(plan).time_s(size_bytes)


class CostModel:
    """Alpha-beta predictions for every collective on one topology and parameter set: a planner
    (plans, cached), a tuner (NCCL's choice of algorithm and protocol) and the closed-form timer."""

    def __init__(self, G_or_router: nx.Graph | Router | Planner, params: Parameters | None = None,
                 select: str = "nccl", default_algo: str = "auto", tuner_plugin: str | None = None,
                 nccl_version: NcclVersion | None = None) -> None:
        """``select``: how ``auto`` picks algorithm and protocol: ``"nccl"`` (what NCCL's own tuner
        would run, from its cost model: simulator.collectives.nccl_model) or ``"fastest"`` (our fastest
        prediction). ``default_algo``: the algorithm ``auto`` stands for (a study's pinned algorithm).
        ``tuner_plugin``: the instance type whose AWS tuner plugin is loaded (Planner), with the NVLS chunk settings
        and the network latency AWS's network plugin states there (ofi_tuner.plugin_nvls_chunks and
        plugin_net_latency_s, as the corpus applies them); a given planner keeps its own. ``nccl_version``: the NCCL
        planned for (Planner; None: the newest modelled)."""
        self.planner = G_or_router if isinstance(G_or_router, Planner) else \
            Planner(G_or_router, params, nccl_version, tuner_plugin=tuner_plugin,
                    nvls_chunks=plugin_nvls_chunks(tuner_plugin),
                    net_latency_s=plugin_net_latency_s(tuner_plugin) if tuner_plugin else 0.0)
        self.tuner = Tuner(self.planner, select, default_algo)
        self.timer = ClosedFormTimer(self.planner.router, self.planner.params)
        self._shapes: dict[tuple[str, str, str], Shape] = {}   # (op, algo, proto) -> the timer's shape

    def with_algo(self, algo: str) -> "CostModel":
        """The same model (plans and shapes shared) with ``auto`` standing for ``algo``."""
        other = CostModel(self.planner, select=self.tuner.select, default_algo=algo)
        other.timer, other._shapes = self.timer, self._shapes
        return other

    @property
    def router(self) -> Router:
        return self.planner.router

    @property
    def params(self) -> Parameters:
        return self.planner.params

    @property
    def select(self) -> str:
        return self.tuner.select

    @property
    def nccl(self):
        """NCCL's own cost model for this topology (its tuning table)."""
        return self.planner.nccl

    @property
    def ranks(self) -> int:
        return self.planner.ranks

    def shape(self, op: str, algo: str, proto: str) -> Shape:
        key = (op, algo, proto)
        s = self._shapes.get(key)
        if s is None:
            s = self._shapes[key] = self.timer.shape(self.planner.plan(op, algo, proto))
        return s

    @cached_property
    def des(self):
        """The discrete-event timer of this model's plans (simulator.network.engine.DesTimer), on the
        same usable capacities as the closed form."""
        from simulator.network.engine import DesTimer
        return DesTimer(self.router, self.params, self.timer.capacity)

    @cached_property
    def intervals(self):
        """90% prediction intervals for this model's predictions (simulator.network.intervals)."""
        from simulator.network.intervals import IntervalModel
        return IntervalModel(self)

    def _price(self, op: str, algo: str, proto: str, size_bytes: float) -> float:
        return self.shape(op, algo, proto).time_s(size_bytes)

    def choose(self, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> tuple[str, str]:
        """(algorithm, protocol) the call runs: NCCL's tuner's choice, or our fastest prediction."""
        return self.tuner.choose(op, size_bytes, self._price, algo, proto)

    def limit(self, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> Limit:
        """What limits this collective at this size: latency when the alpha term dominates, else the
        saturated link class or the protocol's ceiling."""
        s = self.shape(op, *self.choose(op, size_bytes, algo, proto)).sized(size_bytes)
        return Limit.LATENCY if s.latency_bound(size_bytes) else s.bottleneck

    def time_s(self, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> float:
        return self.best(op, size_bytes, algo, proto)[0]

    def choices(self, op: str, algo: str = "auto", proto: str = "auto") -> list[tuple[str, str]]:
        return list(self.planner.choices(op, algo, proto))

    def best(self, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> tuple[float, str, str]:
        """(seconds, algorithm, protocol): the tuner's choice, timed by the closed form."""
        a, p = self.choose(op, size_bytes, algo, proto)
        return self._price(op, a, p, size_bytes), a, p
