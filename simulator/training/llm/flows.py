"""A flow network that re-shares bandwidth only among the transfers a change can affect.

Same interface and same rates as :class:`simulator.network.engine.FlowNetwork`
(``transfer_group(routes, size_bytes, rate_cap_Bps) -> Event``, max-min fair sharing of directed
links, rates recomputed whenever a transfer starts or ends), but max-min fairness is computed per
*component*: transfers linked through shared links. A transfer that starts or ends changes only
the rates of its component, so a 64-stage pipeline whose sends mostly cross disjoint links costs
one small computation per send instead of one over every active transfer and every link. Each
transfer keeps its own completion timer, versioned so that a stale one is ignored.
"""

from __future__ import annotations

import math

import numpy as np
import simpy

from simulator.network.fairness import max_min_rates
from topologies.routes import LinkUses


class _LinkSet:
    """The distinct links (and crossing counts) of one routes tuple, built once per tuple."""

    __slots__ = ("links", "counts", "members", "index", "solo_Bps")

    def __init__(self, routes: tuple[tuple[int, ...], ...], index: int, capacity_Bps: np.ndarray) -> None:
        uses = LinkUses.of(routes)
        links = self.links = uses.links
        self.counts = uses.counts
        self.members = frozenset(links.tolist())
        self.index = index
        self.solo_Bps = float(np.min(capacity_Bps[links] / self.counts))     # its rate when alone


class _Transfer:
    __slots__ = ("ls", "remaining", "size", "cap", "event", "rate", "last", "version")

    def __init__(self, ls: _LinkSet, size: float, cap: float, event: simpy.Event, now: float) -> None:
        self.ls = ls
        self.remaining = self.size = size
        self.cap, self.event = cap, event
        self.rate, self.last, self.version = 0.0, now, 0


class ComponentFlowNetwork:
    """Directed links of ``capacity_Bps`` shared max-min fairly, component by component."""

    def __init__(self, env: simpy.Environment, capacity_Bps: np.ndarray) -> None:
        self.env = env
        self.capacity_Bps = np.asarray(capacity_Bps, dtype=float)
        self._sets: dict[int, tuple[tuple, _LinkSet]] = {}      # id(routes) -> (routes kept alive, set)
        self._overlap: dict[tuple[int, int], bool] = {}
        self._active: list[_Transfer] = []
        self._layouts: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}

    def _linkset(self, routes: tuple[tuple[int, ...], ...]) -> _LinkSet:
        hit = self._sets.get(id(routes))
        if hit is None or hit[0] is not routes:
            hit = self._sets[id(routes)] = (routes, _LinkSet(routes, len(self._sets), self.capacity_Bps))
        return hit[1]

    def _shares(self, a: _LinkSet, b: _LinkSet) -> bool:
        if a is b:
            return True
        key = (a.index, b.index) if a.index < b.index else (b.index, a.index)
        hit = self._overlap.get(key)
        if hit is None:
            hit = self._overlap[key] = not a.members.isdisjoint(b.members)
        return hit

    def transfer(self, route: tuple[int, ...], size_bytes: float) -> simpy.Event:
        return self.transfer_group((route,), size_bytes)

    def transfer_group(self, routes: tuple[tuple[int, ...], ...], size_bytes: float,
                       rate_cap_Bps: float = math.inf) -> simpy.Event:
        """Move ``size_bytes`` along each route at one common rate; the event fires when done."""
        ev = self.env.event()
        empty = not any(routes)
        if size_bytes <= 0 or (empty and rate_cap_Bps == math.inf):
            ev.succeed(self.env.now)
            return ev
        if empty:
            self.env.timeout(size_bytes / rate_cap_Bps).callbacks.append(lambda _e: ev.succeed(self.env.now))
            return ev
        t = _Transfer(self._linkset(routes), float(size_bytes), rate_cap_Bps, ev, self.env.now)
        ls, shares = t.ls, self._shares
        alone = not any(shares(ls, u.ls) for u in self._active)       # most pipeline sends: a component of one
        self._active.append(t)
        self._reshare([t] if alone else self._component([t]))
        return ev

    def _component(self, seeds: list[_Transfer]) -> list[_Transfer]:
        seen = set(seeds)
        stack = list(seeds)
        while stack:
            t = stack.pop()
            for u in self._active:
                if u not in seen and self._shares(t.ls, u.ls):
                    seen.add(u)
                    stack.append(u)
        return list(seen)

    def _reshare(self, comp: list[_Transfer]) -> None:
        now = self.env.now
        for t in comp:
            t.remaining -= t.rate * (now - t.last)
            t.last = now
        if len(comp) == 1:
            t = comp[0]
            t.rate = min(t.cap, t.ls.solo_Bps)
        else:
            ug, inverse, uc, cap = self._layout(comp)
            rates = max_min_rates(ug, inverse, uc, cap, np.array([t.cap for t in comp]))
            for t, r in zip(comp, rates):
                t.rate = float(r)
        for t in comp:
            if t.rate <= 0:
                raise RuntimeError("a transfer has zero rate: a link of zero capacity lies on its route")
            t.version += 1
            version = t.version
            timer = self.env.timeout(max(0.0, t.remaining) / t.rate)
            timer.callbacks.append(lambda _e, t=t, v=version: self._done(t, v))

    def _layout(self, comp: list[_Transfer]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The link-use arrays of a component's transfers, in their order (group, local link, count,
        capacity), built once per sequence of route sets: the same collectives meet again and again
        (every FSDP unit's gather beside the previous unit's reduce-scatter)."""
        key = tuple(t.ls.index for t in comp)
        hit = self._layouts.get(key)
        if hit is None:
            ul = np.concatenate([t.ls.links for t in comp])
            local, inverse = np.unique(ul, return_inverse=True)
            ug = np.concatenate([np.full(len(t.ls.links), i) for i, t in enumerate(comp)])
            uc = np.concatenate([t.ls.counts for t in comp])
            hit = self._layouts[key] = (ug, inverse, uc, self.capacity_Bps[local])
        return hit

    def _done(self, t: _Transfer, version: int) -> None:
        if version != t.version:
            return
        t.version += 1
        self._active.remove(t)
        t.event.succeed(self.env.now)
        if not self._active:
            return
        neighbours = [u for u in self._active if self._shares(t.ls, u.ls)]
        if neighbours:
            self._reshare(self._component(neighbours))
