"""The discrete-event executor of one synchronised DDP backward pass.

Besides :mod:`simulator.network.engine`, this is the only module that touches SimPy (it builds on the
engine's :class:`~simulator.network.engine.FlowNetwork` and :func:`~simulator.network.engine.run_plan`).
Everything it needs arrives as plain data (:class:`~simulator.training.ddp_jobs.CommJob`, built by
:mod:`simulator.training.ddp`); everything it returns is plain data
(:class:`~simulator.training.ddp_jobs.BackwardTimeline`). :mod:`simulator.training.ddp` computes
the same timeline with plain arithmetic (``engine="closed"``), so each checks the other.

Two processes share one clock:

* backward compute works through ``backward_work_s`` seconds of work; it reaches each bucket's
  ready point in order and marks the bucket ready. While an all-reduce runs it progresses at
  ``1 / (1 + compute_slowdown)`` of its normal rate (NCCL kernels take SMs and memory
  bandwidth), so later ready points stretch.
* the communication stream takes buckets strictly in order (DDP launches bucket k only after
  bucket k-1; one NCCL stream serialises them): wait until the bucket is ready, spend its
  preparation time (per-bucket overhead, copy, cast), then run the all-reduce plan on the shared
  :class:`~simulator.network.engine.FlowNetwork`.
"""

from __future__ import annotations

from typing import Sequence

import simpy

from simulator.network.engine import FlowNetwork, run_plan
from simulator.network.records import Record
from simulator.training.ddp_jobs import BackwardTimeline, CommJob, JobTimes
from simulator.collectives.params import Parameters
from topologies.routing import Router


class _CommState:
    """Whether an all-reduce is running; ``changed`` fires (and is replaced) at every switch."""

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self.active = False
        self.changed = env.event()

    def set(self, active: bool) -> None:
        self.active = active
        old, self.changed = self.changed, self.env.event()
        old.succeed()


def _compute(env: simpy.Environment, points: Sequence[tuple[float, list[int]]], total_work_s: float,
             slowdown: float, state: _CommState, ready: list[simpy.Event], out: dict):
    done = 0.0
    for target, jobs in list(points) + [(total_work_s, [])]:
        while done < target:
            rate = 1.0 / (1.0 + slowdown) if state.active else 1.0
            t0 = env.now
            timer = env.timeout((target - done) / rate)
            if slowdown > 0:
                yield timer | state.changed
            else:
                yield timer
            done = target if timer.processed else min(target, done + (env.now - t0) * rate)
        for j in jobs:
            ready[j].succeed(env.now)
    out["backward_end_s"] = env.now


def _stream(env: simpy.Environment, net, jobs: Sequence[CommJob], ready: list[simpy.Event],
            state: _CommState, records: list[Record], times: list[JobTimes]):
    for k, job in enumerate(jobs):
        ready_s = yield ready[k]
        start = env.now
        if job.prep_s > 0:
            yield env.timeout(job.prep_s)
            records.append(Record("comm", f"bucket {job.index} prep", start, env.now, 0.0))
        ar_start = env.now
        state.set(True)
        yield env.process(run_plan(env, net, job.plan, job.comm_bytes, records, "comm", job.name))
        state.set(False)
        times.append(JobTimes(float(ready_s), start, ar_start, env.now))


def backward(env: simpy.Environment, net, backward_work_s: float, jobs: Sequence[CommJob],
             compute_slowdown: float, records: list[Record]):
    """A SimPy process: backward compute and the bucket all-reduces from ``env.now`` on ``net``
    (anything with :meth:`FlowNetwork.transfer_group`, possibly shared with other jobs); returns
    the :class:`BackwardTimeline` (its records are also appended to ``records``)."""
    state = _CommState(env)
    ready = [env.event() for _ in jobs]
    points: dict[float, list[int]] = {}
    for k, job in enumerate(jobs):
        points.setdefault(job.ready_work_s, []).append(k)
    mine: list[Record] = []
    times: list[JobTimes] = []
    out: dict = {}
    yield simpy.AllOf(env, [
        env.process(_compute(env, sorted(points.items()), backward_work_s, compute_slowdown, state, ready, out)),
        env.process(_stream(env, net, jobs, ready, state, mine, times))])
    records.extend(mine)
    return BackwardTimeline(out["backward_end_s"], tuple(times), tuple(mine))


def simulate_backward(router: Router, params: Parameters, t0: float, backward_work_s: float,
                      jobs: Sequence[CommJob], compute_slowdown: float) -> BackwardTimeline:
    """Run backward compute and the bucket all-reduces from ``t0`` (seconds) on an idle network.

    ``jobs`` are in launch order; their ``ready_work_s`` must not exceed ``backward_work_s``.
    """
    env = simpy.Environment(initial_time=t0)
    net = FlowNetwork.for_router(env, router, params)
    proc = env.process(backward(env, net, backward_work_s, jobs, compute_slowdown, []))
    env.run(proc)
    return proc.value
