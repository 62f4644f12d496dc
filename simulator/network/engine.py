"""The discrete-event engine: the only module that touches SimPy.

:class:`FlowNetwork` is the narrow interface between collectives and the network:
``transfer_group(routes, nbytes) -> Event`` (and ``transfer(route, nbytes)`` for one flow).
Concurrent transfers share each directed link max-min fairly; rates are recomputed whenever a
transfer starts or ends, and ``env.now`` is the only clock.

:func:`run_plan` executes a collective schedule: after the call overhead and the plan's latency,
all flow groups start together and the collective ends when the last one finishes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import simpy

from simulator.network.fairness import max_min_rates
from simulator.collectives.params import Parameters
from simulator.collectives.plans import Plan
from topologies.routing import Router


@dataclass(frozen=True)
class Record:
    """One interval of simulated activity, for timelines and traces."""

    track: str         # e.g. "comm", "compute", "net"
    name: str
    start_s: float
    end_s: float
    size_bytes: float = 0.0


@dataclass
class _Transfer:
    links: np.ndarray
    counts: np.ndarray
    remaining: float
    size: float
    cap: float
    event: simpy.Event
    rate: float = 0.0


class FlowNetwork:
    """Flow-level network of directed links with max-min fair sharing."""

    def __init__(self, env: simpy.Environment, capacity_Bps: np.ndarray) -> None:
        self.env = env
        self.capacity_Bps = np.asarray(capacity_Bps, dtype=float)
        self._active: list[_Transfer] = []
        self._last = 0.0
        self._version = 0
        self.bytes_delivered = 0.0

    @classmethod
    def for_router(cls, env: simpy.Environment, router: Router, params: Parameters) -> "FlowNetwork":
        eff = np.array([params.link_efficiency(k) for k in router.kind])
        return cls(env, router.capacity_Bps * eff)

    # -- the interface ----------------------------------------------------
    def transfer(self, route: tuple[int, ...], size_bytes: float) -> simpy.Event:
        return self.transfer_group((route,), size_bytes)

    def transfer_group(self, routes: tuple[tuple[int, ...], ...], size_bytes: float,
                       rate_cap_Bps: float = math.inf) -> simpy.Event:
        """Move ``size_bytes`` along each route at one common rate; the event fires when done."""
        ev = self.env.event()
        flat = [l for r in routes for l in r]
        if size_bytes <= 0 or (not flat and rate_cap_Bps == math.inf):
            ev.succeed(self.env.now)
            return ev
        links, counts = np.unique(np.asarray(flat, dtype=np.int64), return_counts=True)
        self._advance()
        self._active.append(_Transfer(links, counts.astype(float), float(size_bytes), float(size_bytes),
                                      rate_cap_Bps, ev))
        self._reschedule()
        return ev

    # -- internals ----------------------------------------------------------
    def _advance(self) -> None:
        dt = self.env.now - self._last
        if dt > 0:
            for t in self._active:
                moved = t.rate * dt
                t.remaining -= moved
                self.bytes_delivered += moved * len(t.links)
        self._last = self.env.now

    def _reschedule(self) -> None:
        done = [t for t in self._active if t.remaining <= 1e-9 * t.size]
        if done:
            self._active = [t for t in self._active if t.remaining > 1e-9 * t.size]
            for t in done:
                t.event.succeed(self.env.now)
        self._version += 1
        if not self._active:
            return
        ug = np.concatenate([np.full(len(t.links), i) for i, t in enumerate(self._active)])
        ul = np.concatenate([t.links for t in self._active])
        uc = np.concatenate([t.counts for t in self._active])
        caps = np.array([t.cap for t in self._active])
        rates = max_min_rates(ug, ul, uc, self.capacity_Bps, caps)
        for t, r in zip(self._active, rates):
            t.rate = float(r)
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
    yield env.timeout(plan.call_overhead_s + plan.latency_s)
    carried = size_bytes + plan.pad_bytes(size_bytes)       # + the pipeline fill (NVLS), else 0
    events = [net.transfer_group(g.routes, g.bytes_per_byte * carried, g.rate_cap_Bps) for g in plan.groups]
    if events:
        yield simpy.AllOf(env, events)
    if plan.local_s_per_byte > 0:
        yield env.timeout(plan.local_s_per_byte * size_bytes)
    if records is not None:
        records.append(Record(track, name or f"{plan.op} {plan.algo}/{plan.proto}", start, env.now, size_bytes))
    return env.now - start


def simulate_plan(router: Router, params: Parameters, plan: Plan, size_bytes: int) -> tuple[float, list[Record]]:
    """Run one collective alone on an idle network; (seconds, records)."""
    env = simpy.Environment()
    net = FlowNetwork.for_router(env, router, params)
    records: list[Record] = []
    proc = env.process(run_plan(env, net, plan, size_bytes, records))
    env.run(proc)
    return float(proc.value), records


class DesTimer:
    """Times plans by running each alone on an idle network in the discrete-event engine: the
    same ``time(plan, size_bytes)`` interface as the closed form's timer, so each checks the other."""

    def __init__(self, router: Router, params: Parameters) -> None:
        self.router = router
        self.params = params

    def time(self, plan: Plan, size_bytes: float) -> float:
        return simulate_plan(self.router, self.params, plan, int(size_bytes))[0]
