"""The discrete-event engine: the only module that touches SimPy.

:class:`FlowNetwork` is the narrow interface between collectives and the network:
``transfer_group(routes, nbytes) -> Event`` (and ``transfer(route, nbytes)`` for one flow;
``start`` for several groups at one instant, given their link uses).
Concurrent transfers share each directed link max-min fairly; rates are recomputed whenever a
transfer starts or ends, and ``env.now`` is the only clock.

:func:`run_plan` executes a collective schedule: after the call overhead and the plan's latency,
all flow groups start together (one rate computation) and the collective ends when the last one finishes,
then waits out the host's issue of the call, which overlaps that GPU work (simulator.network.host_overlap).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import simpy

from simulator.core.gc_pause import cyclic_gc_paused
from simulator.network.fairness import LinkCapacity, group_rates
from simulator.network.host_overlap import stream_time_s
from simulator.network.records import Record
from simulator.collectives.params import Parameters
from simulator.collectives.plans import Plan
from topologies.routes import LinkUses
from topologies.routing import Router


@dataclass
class _Transfer:
    uses: LinkUses
    remaining: float
    size: float
    cap: float
    event: simpy.Event
    rate: float = 0.0


#: Distinct sets of concurrent transfers whose max-min rates one network remembers.
_MEMO_ENTRIES = 4096


class FlowNetwork:
    """Flow-level network of directed links with max-min fair sharing.

    Max-min rates depend only on which transfers run (their links and caps), not on the bytes they
    have left, so they are remembered per set of active transfer classes: a DDP iteration that
    runs the same all-reduce plan for hundreds of buckets solves each set once.
    """

    def __init__(self, env: simpy.Environment, capacity_Bps: Sequence[float]) -> None:
        self.env = env
        self.capacity = LinkCapacity(capacity_Bps)       # a copy: set_capacity changes it, never the caller's
        self._active: list[_Transfer] = []
        self._last = 0.0
        self._version = 0
        self._rates: dict[tuple[tuple[LinkUses, float], ...], list[float]] = {}
        self.bytes_delivered = 0.0

    @classmethod
    def for_router(cls, env: simpy.Environment, router: Router, params: Parameters) -> "FlowNetwork":
        return cls(env, params.achievable_Bps(router.capacity_Bps, router.kind))

    @property
    def capacity_Bps(self) -> list[float]:
        """Usable capacity per directed link now (bytes/s)."""
        return self.capacity.values

    # -- the interface ----------------------------------------------------
    def transfer(self, route: tuple[int, ...], size_bytes: float) -> simpy.Event:
        return self.transfer_group((route,), size_bytes)

    def transfer_group(self, routes: tuple[tuple[int, ...], ...], size_bytes: float,
                       rate_cap_Bps: float = math.inf) -> simpy.Event:
        """Move ``size_bytes`` along each route at one common rate; the event fires when done."""
        return self.start(((LinkUses.of(routes), size_bytes, rate_cap_Bps),))[0]

    def start(self, transfers: Sequence[tuple[LinkUses, float, float]]) -> list[simpy.Event]:
        """Start several flow groups at this instant, each ``(link uses, size_bytes, rate_cap_Bps)``
        moving ``size_bytes`` along each of its routes at one common rate; one event per group."""
        events, new = self._prepare(transfers)
        if new:
            self._advance()
            self._active.extend(new)
            self._reschedule()
        return events

    def _prepare(self, transfers: Sequence[tuple[LinkUses, float, float]]) -> tuple[list[simpy.Event],
                                                                                     list[_Transfer]]:
        """One event per transfer; those with nothing to move fire now, the rest become transfers."""
        events, new = [], []
        for uses, size_bytes, cap in transfers:
            ev = self.env.event()
            events.append(ev)
            if size_bytes <= 0 or (not len(uses) and cap == math.inf):
                ev.succeed(self.env.now)
            else:
                new.append(_Transfer(uses, float(size_bytes), float(size_bytes), float(cap), ev))
        return events, new

    def set_capacity(self, links: Sequence[int], capacity_Bps: Sequence[float] | float) -> None:
        """Change some links' capacity now (a link degrading or recovering); running transfers keep
        what they moved so far and are re-rated (the remembered max-min rates no longer hold)."""
        self._advance()
        self.capacity.set(links, capacity_Bps)
        self._rates.clear()
        self._reschedule()

    # -- internals ----------------------------------------------------------
    def _advance(self) -> None:
        dt = self.env.now - self._last
        if dt > 0:
            for t in self._active:
                moved = t.rate * dt
                t.remaining -= moved
                self.bytes_delivered += moved * len(t.uses)
        self._last = self.env.now

    def _max_min(self) -> list[float]:
        key = tuple((t.uses, t.cap) for t in self._active)     # LinkUses compare and hash by identity
        hit = self._rates.get(key)
        if hit is not None:
            return hit
        act = self._active
        rates = group_rates([t.uses for t in act], [t.cap for t in act], self.capacity)
        if len(self._rates) >= _MEMO_ENTRIES:
            self._rates.clear()
        self._rates[key] = rates
        return rates

    def _reschedule(self) -> None:
        done = [t for t in self._active if t.remaining <= 1e-9 * t.size]
        if done:
            self._active = [t for t in self._active if t.remaining > 1e-9 * t.size]
            for t in done:
                t.event.succeed(self.env.now)
        self._version += 1
        if not self._active:
            return
        for t, r in zip(self._active, self._max_min()):
            t.rate = r
        finish = min(t.remaining / t.rate if t.rate > 0 else math.inf for t in self._active)
        if finish == math.inf:
            raise RuntimeError("a transfer has zero rate: a link of zero capacity lies on its route")
        timer = self.env.timeout(finish)
        version = self._version
        timer.callbacks.append(lambda _ev: self._on_timer(version))

    def _on_timer(self, version: int) -> None:
        if version != self._version:
            return
        self._advance()
        for t in self._active:      # snap the transfer(s) that were due now
            if t.rate > 0 and t.remaining / t.rate <= 1e-12 + 1e-9 * (t.size / t.rate):
                t.remaining = 0.0
        self._reschedule()


def run_plan(env: simpy.Environment, net: FlowNetwork, plan: Plan, size_bytes: int,
             records: list[Record] | None = None, track: str = "comm", name: str | None = None):
    """A SimPy process executing one collective; returns its duration (seconds)."""
    start = env.now
    # the host's issue (plan.host_s) overlaps the GPU work of the call before it (simulator.network.host_overlap);
    # the rest of the fixed cost runs before the flows
    yield env.timeout(max(0.0, plan.call_overhead_s - plan.host_s) + plan.latency_s)
    costed = plan.costed_bytes(size_bytes)                  # S, + unaligned shares' extra (ring all_gather)
    carried = costed + plan.pad_bytes(size_bytes)           # + the pipeline fill (NVLS), else 0
    caps = plan.rate_caps(size_bytes)                       # p2p plans: NCCL's channels at this size
    events = net.start([(g.uses, g.bytes_per_byte * carried, c) for g, c in zip(plan.groups, caps)])
    if events:
        yield simpy.AllOf(env, events)
    if plan.local_s_per_byte > 0:
        yield env.timeout(plan.local_s_per_byte * costed)
    steps_s = plan.chunk_overhead_s(size_bytes)             # NVLS chunk steps, a flushing ring's further loops
    if steps_s > 0:
        yield env.timeout(steps_s)
    if plan.host_s > 0:       # the issue overlaps the GPU work: the call lasts their stream time
        yield env.timeout(max(0.0, stream_time_s(plan.host_s, env.now - start) - (env.now - start)))
    if records is not None:
        records.append(Record(track, name or f"{plan.op} {plan.algo}/{plan.proto}", start, env.now, size_bytes))
    return env.now - start


def simulate_plan(router: Router, params: Parameters, plan: Plan, size_bytes: int,
                  capacity_Bps: Sequence[float] | None = None) -> tuple[float, list[Record]]:
    """Run one collective alone on an idle network; (seconds, records). ``capacity_Bps``: the usable
    capacity per link if already known (else from ``router`` and ``params``)."""
    with cyclic_gc_paused():         # an event and a transfer per flow group, nothing freed meanwhile
        env = simpy.Environment()
        net = (FlowNetwork(env, capacity_Bps) if capacity_Bps is not None
               else FlowNetwork.for_router(env, router, params))
        records: list[Record] = []
        proc = env.process(run_plan(env, net, plan, size_bytes, records))
        env.run(proc)
    return float(proc.value), records


class DesTimer:
    """Times plans by running each alone on an idle network in the discrete-event engine: the
    same ``time(plan, size_bytes)`` interface as the closed form's timer, so each checks the other."""

    def __init__(self, router: Router, params: Parameters, capacity: LinkCapacity | None = None) -> None:
        """``capacity``: the usable capacity per link if known already (e.g. the closed form's)."""
        self.router = router
        self.params = params
        if capacity is not None:
            self.__dict__["capacity"] = capacity

    @cached_property
    def capacity(self) -> LinkCapacity:
        """Usable capacity per directed link (computed once: the same for every plan)."""
        return LinkCapacity(self.params.achievable_Bps(self.router.capacity_Bps, self.router.kind))

    def time(self, plan: Plan, size_bytes: float) -> float:
        return simulate_plan(self.router, self.params, plan, int(size_bytes), self.capacity.values)[0]
