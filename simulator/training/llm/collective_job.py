"""A collective as a unit of work of the LLM engines: its plan, size and count (plain data), and
the SimPy process that runs it on the flow network (or as its closed-form time when nothing else
crosses its links)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import simpy

from simulator.collectives.plans import Plan
from simulator.network.records import Record


@dataclass(frozen=True)
class CollJob:
    """``count`` collectives of ``size_bytes`` each (nccl-tests size) with ``plan``, each charged as an
    isolated call: its issue and latency in full (``count x (call_overhead_s + latency_s)``), not hidden
    under the previous call's GPU work as in a stream (simulator.network.host_overlap)."""

    plan: Plan
    size_bytes: float
    count: int
    name: str
    isolated_s: float | None = None   # set when no other traffic shares its links: its closed-form time
    ranks: tuple[str, ...] = ()       # the group's GPUs (what its 90% interval re-plans; () when not known)


def job_record(track: str, name: str, start_s: float, end_s: float, jobs: Sequence[CollJob]) -> Record:
    """The trace record of ``jobs`` run together: the bytes one rank's calls move (the summed nccl-tests sizes
    of the jobs on one group, as a profiler shows them) and how many groups ran the same calls at once (one
    per TP rank's data-parallel group, or per HYBRID_SHARD replica), not the bytes summed over the groups."""
    per_group: dict[tuple[str, ...], float] = {}
    for j in jobs:
        per_group[j.ranks] = per_group.get(j.ranks, 0.0) + j.size_bytes * j.count
    return Record(track, name, start_s, end_s, next(iter(per_group.values()), 0.0), max(1, len(per_group)))


def run_job(env: simpy.Environment, net, job: CollJob):
    """A SimPy process body: ``job`` on ``net`` (anything with ``transfer_group``)."""
    if job.isolated_s is not None:       # nothing else crosses its links: the network would give this
        yield env.timeout(job.isolated_s)
        return
    plan = job.plan
    yield env.timeout(job.count * (plan.call_overhead_s + plan.latency_s))
    size = job.count * plan.costed_bytes(job.size_bytes)     # unaligned shares pay more (Plan.costed_bytes)
    caps = plan.rate_caps(job.size_bytes)          # p2p plans: NCCL's channels of one call's size
    events = [net.transfer_group(g.routes, g.bytes_per_byte * size, c) for g, c in zip(plan.groups, caps)]
    if events:
        yield simpy.AllOf(env, events)
    if plan.local_s_per_byte > 0:
        yield env.timeout(plan.local_s_per_byte * size)


def run_concurrent(env: simpy.Environment, net, jobs: Sequence[CollJob]):
    """A SimPy process body: ``jobs`` started together, done when all are."""
    if jobs:
        yield simpy.AllOf(env, [env.process(run_job(env, net, j)) for j in jobs])
