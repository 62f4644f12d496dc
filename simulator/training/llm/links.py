"""The iteration's own link table: only the links its simulated traffic crosses.

A 4096-GPU fabric has tens of thousands of directed links, but one iteration's pipeline sends and
data-parallel collectives cross a few thousand. Renumbering those densely keeps every max-min
recomputation of the flow network proportional to the traffic, not to the cluster. Rates are
unchanged: a link no transfer crosses never constrains one.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from simulator.collectives.plans import Plan
from simulator.training.llm.pipeline_engine import ChunkWork, CollJob, Link, StageWork

Route = tuple[int, ...]


class LinkTable:
    """Dense renumbering of the links in use; ``capacity_Bps`` in the new numbering."""

    def __init__(self, capacity_Bps: np.ndarray) -> None:
        self._full = capacity_Bps
        self._ids: dict[int, int] = {}
        self._plans: dict[int, Plan] = {}

    @classmethod
    def onto(cls, ids: "np.ndarray | list[int]") -> "LinkTable":
        """A table mapping link ``i`` to ``ids[i]`` (e.g. a job's own link ids onto a shared
        cluster's) instead of renumbering densely."""
        t = cls(np.zeros(0))
        t._ids = {i: int(v) for i, v in enumerate(ids)}
        return t

    def route(self, r: Route) -> Route:
        ids = self._ids
        return tuple(ids.setdefault(l, len(ids)) for l in r)

    def plan(self, plan: Plan) -> Plan:
        hit = self._plans.get(id(plan))
        if hit is None:
            hit = self._plans[id(plan)] = replace(plan, groups=tuple(
                replace(g, routes=tuple(self.route(r) for r in g.routes)) for g in plan.groups))
        return hit

    def job(self, j: CollJob) -> CollJob:
        return j if j.isolated_s is not None else replace(j, plan=self.plan(j.plan))

    def jobs(self, js: tuple[CollJob, ...]) -> tuple[CollJob, ...]:
        return tuple(self.job(j) for j in js)

    def link(self, link: Link | None) -> Link | None:
        return None if link is None else replace(link, routes=tuple(self.route(r) for r in link.routes))

    def stage(self, st: StageWork) -> StageWork:
        chunks = tuple(replace(c, forward_comm=self.jobs(c.forward_comm), backward_comm=self.jobs(c.backward_comm),
                               gather_forward=self.jobs(c.gather_forward), gather_backward=self.jobs(c.gather_backward),
                               scatter_backward=self.jobs(c.scatter_backward),
                               units=tuple(replace(u, gather=self.jobs(u.gather), scatter=self.jobs(u.scatter),
                                                   reduce=self.jobs(u.reduce)) for u in c.units))
                       for c in st.chunks)
        return replace(st, chunks=chunks, to_next=self.link(st.to_next), to_prev=self.link(st.to_prev),
                       grad_sync=tuple(self.jobs(ph) for ph in st.grad_sync), param_sync=self.jobs(st.param_sync))

    @property
    def capacity_Bps(self) -> np.ndarray:
        order = np.empty(len(self._ids), dtype=np.int64)
        for full, new in self._ids.items():
            order[new] = full
        return self._full[order]


def compact(stages: list[StageWork], capacity_Bps: np.ndarray) -> tuple[list[StageWork], np.ndarray]:
    """The stages with routes renumbered to the links they use, and those links' capacities."""
    table = LinkTable(capacity_Bps)
    out = [table.stage(st) for st in stages]
    return out, table.capacity_Bps
