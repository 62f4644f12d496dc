"""One fabric shared by several jobs: the flow engine with per-job accounting.

:class:`SharedFlowNetwork` is :class:`~simulator.network.engine.FlowNetwork` (same max-min fair
sharing, same single clock ``env.now``) with the additions a multi-job simulation needs:

* every transfer belongs to a job: :meth:`port` gives each job an object with the engine's narrow
  interface (``transfer_group(routes, nbytes, cap) -> Event`` and ``start``), so collective executors
  (:func:`~simulator.network.engine.run_plan`) run unchanged on a shared network;
* accounting: bytes each job moved over each directed link (``link_bytes[job, link]``), and how
  long each link was saturated while two or more jobs crossed it (``contended_s[link]``), which is
  what tells which links cause a job's slowdown;
* links can change capacity while transfers run (:meth:`FlowNetwork.set_capacity`: a flapping link);
* transfers started at one instant are rated together: the max-min rates are recomputed once per
  instant (a zero-delay event) rather than once per transfer. Same rates, far fewer water-fillings
  when four 1024-GPU jobs each start a 16-channel collective.

Plans carry their link uses (distinct link ids and how often a group crosses each), computed once;
for bare route tuples they are cached per tuple here.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import simpy

from simulator.network.engine import FlowNetwork
from topologies.routes import LinkUses

#: A link counts as saturated when its load is at least this fraction of its capacity.
SATURATED = 0.999


class JobPort:
    """One job's door to a :class:`SharedFlowNetwork` (what :func:`run_plan` calls ``net``)."""

    def __init__(self, net: "SharedFlowNetwork", job: int) -> None:
        self.net = net
        self.job = job
        self.env = net.env

    def transfer_group(self, routes: tuple[tuple[int, ...], ...], size_bytes: float,
                       rate_cap_Bps: float = math.inf) -> simpy.Event:
        return self.net.transfer_group(routes, size_bytes, rate_cap_Bps, job=self.job)

    def start(self, transfers: Sequence[tuple[LinkUses, float, float]]) -> list[simpy.Event]:
        return self.net.start(transfers, job=self.job)


class SharedFlowNetwork(FlowNetwork):
    """Flow network of directed links shared max-min fairly by ``jobs`` jobs, with accounting."""

    def __init__(self, env: simpy.Environment, capacity_Bps: Sequence[float], jobs: int) -> None:
        super().__init__(env, capacity_Bps)
        n = len(self.capacity_Bps)
        self.link_bytes = np.zeros((jobs, n))
        self.contended_s = np.zeros(n)
        self._owner: dict[int, int] = {}
        self._uses: dict[int, tuple[tuple, LinkUses]] = {}
        self._contended = np.zeros(n, dtype=bool)
        self._pending = False

    def settle(self) -> None:
        """Bring the accounting up to ``env.now`` (at the end of a run)."""
        self._advance()

    def port(self, job: int) -> JobPort:
        return JobPort(self, job)

    def transfer_group(self, routes: tuple[tuple[int, ...], ...], size_bytes: float,
                       rate_cap_Bps: float = math.inf, job: int = 0) -> simpy.Event:
        return self.start(((self._link_uses(routes), size_bytes, rate_cap_Bps),), job)[0]

    def start(self, transfers: Sequence[tuple[LinkUses, float, float]], job: int = 0) -> list[simpy.Event]:
        """:meth:`FlowNetwork.start` for ``job``; rated together with every other start of this instant."""
        events, new = self._prepare(transfers)
        if new:
            self._advance()
            for t in new:
                self._owner[id(t)] = job
            self._active.extend(new)
            if not self._pending:
                self._pending = True
                self.env.timeout(0).callbacks.append(self._flush)
        return events

    # -- internals ----------------------------------------------------------
    def _link_uses(self, routes: tuple[tuple[int, ...], ...]) -> LinkUses:
        hit = self._uses.get(id(routes))
        if hit is None or hit[0] is not routes:
            hit = self._uses[id(routes)] = (routes, LinkUses.of(routes))
        return hit[1]

    def _flush(self, _ev: simpy.Event) -> None:
        self._pending = False
        self._advance()
        self._reschedule()

    def _advance(self) -> None:
        dt = self.env.now - self._last
        if dt > 0:
            for t in self._active:
                if t.rate > 0:
                    self.link_bytes[self._owner[id(t)], t.uses.links] += t.rate * dt * t.uses.counts
            self.contended_s[self._contended] += dt
        super()._advance()

    def _reschedule(self) -> None:
        super()._reschedule()
        live = {id(t) for t in self._active}
        self._owner = {k: v for k, v in self._owner.items() if k in live}
        self._contended[:] = False
        if not self._active:
            return
        n = len(self.capacity_Bps)
        links = np.concatenate([t.uses.links for t in self._active])
        load = np.bincount(links, weights=np.concatenate([t.rate * t.uses.counts for t in self._active]), minlength=n)
        by_job: dict[int, list[np.ndarray]] = {}
        for t in self._active:
            by_job.setdefault(self._owner[id(t)], []).append(t.uses.links)
        jobs_on = np.zeros(n, dtype=np.int64)              # distinct jobs crossing each link
        for job_links in by_job.values():
            jobs_on += np.bincount(np.concatenate(job_links), minlength=n) > 0
        self._contended = (jobs_on >= 2) & (load >= SATURATED * self.capacity.array())
