"""The discrete-event executor of several training jobs on one shared fabric.

Like :mod:`simulator.training.ddp_engine` this module only builds SimPy processes on the network
engine (:class:`~simulator.network.shared.SharedFlowNetwork`); ``env.now`` is the only clock.
Everything arrives as plain data (:class:`JobProgram`, built by :mod:`simulator.training.cluster`)
and leaves as plain data (:class:`SharedRun`).

One job iterates forever: ``pre_s`` of compute (forward, and the ``no_sync`` micro-steps of
gradient accumulation), then the synchronised backward with its bucket all-reduces (the same
process as a single DDP job, :func:`simulator.training.ddp_engine.backward`), then ``post_s`` of
compute (the optimizer) and ``overhead_s`` (host side, unscaled). A job that only repeats one
collective has no backward and one bucket ready at once. An LLM training job (``pipeline``) runs
its whole iteration instead: every pipeline stage's schedule on the shared fabric
(:func:`simulator.training.llm.pipeline_engine.run_pipeline`: TP collectives, pipeline sends,
data-parallel collectives), then ``overhead_s``.

Jobs start at their ``start_s`` (default 0: identical jobs then run in lockstep, the worst case
for sharing). Stragglers: every iteration draws the job's compute multiplier, the largest of its ranks'
(a synchronous collective waits for the slowest rank), from the job's own seeded source; the
iteration's compute (``pre_s``, backward, ``post_s``) is stretched by it.

The run stops when every job has finished ``iterations`` iterations; jobs that finish early keep
iterating (and contending) until then, and every iteration finished by then counts, so a short
job's mean covers the whole window in which the long one runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np
import simpy

from simulator.network.shared import SharedFlowNetwork
from simulator.training.ddp_engine import backward
from simulator.training.ddp_jobs import CommJob
from simulator.training.llm.pipeline_engine import StageWork, run_pipeline


@dataclass(frozen=True)
class JobProgram:
    """One job's iteration as plain data (seconds; plans carry link ids of the shared fabric)."""

    name: str
    pre_s: float
    backward_s: float
    comm: tuple[CommJob, ...]
    post_s: float
    overhead_s: float = 0.0
    compute_slowdown: float = 0.0
    start_s: float = 0.0            # when its first iteration starts
    pipeline: tuple = ()            # an LLM job: its stages (StageWork, cluster link ids), all else unused
    host_floor_s: float = 0.0       # an LLM job: its iteration's host-issue floor (simulator.training.llm.host_prior)


@dataclass(frozen=True)
class Flap:
    """Links (ids) that spend ``down_s`` of every ``period_s`` at ``fraction`` of their capacity,
    starting degraded at time 0 (``0 < down_s < period_s``)."""

    links: tuple[int, ...]
    fraction: float
    period_s: float
    down_s: float


@dataclass(frozen=True)
class SharedRun:
    """Iteration end times per job (seconds; at least the asked number each), and the fabric's
    accounting over ``window_s``."""

    ends_s: tuple[tuple[float, ...], ...]
    starts_s: tuple[float, ...]     # when each job started
    link_bytes: np.ndarray          # [job, link] bytes moved
    contended_s: np.ndarray         # [link] seconds saturated while two or more jobs crossed it
    window_s: float                 # when the last job finished its counted iterations

    def mean_iteration_s(self, job: int) -> float:
        e = self.ends_s[job]
        return (e[-1] - self.starts_s[job]) / len(e) if e else 0.0


def _iterate(env: simpy.Environment, port, prog: JobProgram, factor: Callable[[], float],
             ends: list[float], need: int, done: simpy.Event):
    if prog.start_s > 0:
        yield env.timeout(prog.start_s)
    while True:
        m = factor()
        start = env.now
        if prog.pipeline:
            yield env.process(run_pipeline(env, port, _stretched(prog.pipeline, m), len(prog.pipeline)))
        if prog.pre_s > 0:
            yield env.timeout(prog.pre_s * m)
        if prog.comm or prog.backward_s > 0:
            comm = prog.comm if m == 1.0 else tuple(replace(c, ready_work_s=c.ready_work_s * m) for c in prog.comm)
            yield env.process(backward(env, port, prog.backward_s * m, comm, prog.compute_slowdown, []))
        if prog.post_s * m + prog.overhead_s > 0:
            yield env.timeout(prog.post_s * m + prog.overhead_s)
        if env.now == start:
            raise ValueError(f"job {prog.name!r} has an iteration of zero time")
        ends.append(env.now)
        if len(ends) == need:
            done.succeed()


def _stretched(stages: tuple[StageWork, ...], m: float) -> tuple[StageWork, ...]:
    """An LLM job's stages with every pass and the optimizer ``m`` times longer (a straggler draw)."""
    if m == 1.0:
        return stages
    return tuple(replace(st, optimizer_s=st.optimizer_s * m,
                         chunks=tuple(replace(c, forward_s=c.forward_s * m, backward_s=c.backward_s * m,
                                              accumulate_s=c.accumulate_s * m)
                                      for c in st.chunks)) for st in stages)


def _flap(env: simpy.Environment, net: SharedFlowNetwork, flap: Flap, healthy: np.ndarray):
    ids = np.asarray(flap.links, dtype=np.int64)
    while True:
        net.set_capacity(ids, healthy[ids] * flap.fraction)
        yield env.timeout(flap.down_s)
        net.set_capacity(ids, healthy[ids])
        yield env.timeout(flap.period_s - flap.down_s)


def simulate_jobs(capacity_Bps: np.ndarray, programs: Sequence[JobProgram], iterations: int,
                  factors: Sequence[Callable[[], float]] | None = None, flaps: Sequence[Flap] = ()) -> SharedRun:
    """Run ``programs`` together from time 0 on one network of ``capacity_Bps`` (per directed
    link) until each has done ``iterations`` iterations. ``factors[j]()`` gives job j's compute
    multiplier for its next iteration (default 1); ``flaps`` are links that go up and down."""
    env = simpy.Environment()
    net = SharedFlowNetwork(env, capacity_Bps, len(programs))
    for flap in flaps:
        if not 0 < flap.down_s < flap.period_s:
            raise ValueError("a flapping link needs 0 < down_s < period_s")
        env.process(_flap(env, net, flap, np.asarray(capacity_Bps, dtype=float)))
    ends: list[list[float]] = [[] for _ in programs]
    dones = [env.event() for _ in programs]
    for j, prog in enumerate(programs):
        f = factors[j] if factors is not None else (lambda: 1.0)
        env.process(_iterate(env, net.port(j), prog, f, ends[j], iterations, dones[j]))
    env.run(simpy.AllOf(env, dones))
    net.settle()
    return SharedRun(tuple(tuple(e) for e in ends), tuple(p.start_s for p in programs), net.link_bytes,
                     net.contended_s, env.now)
