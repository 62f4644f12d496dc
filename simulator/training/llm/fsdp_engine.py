"""PyTorch FSDP (FSDP1, ``FullyShardedDataParallel``) unit by unit: one stage's host thread, its
compute stream and its communication streams as SimPy processes.

A pass under FSDP is a sequence of units (:class:`FsdpUnit`, built by :mod:`.iteration`): the
root unit (the stage's embedding and output layer, gathered once at the start of the forward)
and one unit per transformer block (``ModuleWrapPolicy`` on the block class). What happens, as in
``torch.distributed.fsdp`` (``_runtime_utils.py``):

* **Host.** The host thread issues each unit's kernels and runs FSDP's hooks; it never waits for
  the GPU except in the rate limiter (``limit_all_gathers=True``): before issuing an all-gather it
  waits for the GPU to finish with the oldest of two gathered units not yet freed
  (``_FreeEventQueue``, at most two in flight). So a host slower than the GPU shows (small models:
  the host issues, the GPU waits), and a GPU slower than the host lets the host run at most two
  units ahead.
* **Compute stream.** A unit's kernels start when the previous unit's are done, its parameters'
  all-gather has finished and the host has begun issuing them; they end no earlier than the host
  finishes issuing them.
* **Communication stream.** All-gathers and reduce-scatters go through one process group, so one
  NCCL stream: first in, first out. A forward issues its unit's all-gather when the host reaches
  the unit (no forward prefetch, FSDP's default); a backward (``BACKWARD_PRE``) issues the
  current unit's all-gather if it was not prefetched and then prefetches the next unit's, before
  the current unit's kernels; after a unit's backward the reduce-scatter of its gradients is
  queued, to start when those kernels are done. FULL_SHARD and HYBRID_SHARD gather every unit but
  the root again for backward; SHARD_GRAD_OP keeps them from the forward.
* **Replica stream** (HYBRID_SHARD): the all-reduce of each reduced shard across the replicas,
  on its own process group and stream, after the unit's reduce-scatter.

The stage's iteration ends when the compute stream and both communication streams are done
(FSDP's final backward callback waits for them).

Two refinements, both off by default (the ``ComputeParams`` fields named; tried and not kept, below):

* **Each rank's own host** (``fsdp_rank_cv``, ``fsdp_unit_cv``: :class:`RankPaces`). Every data-parallel rank of
  the stage (at most :data:`MAX_LANES`) gets its own host, compute stream and communication streams, its host at its
  own pace; a collective starts on the network when the last rank's stream has reached it and ends on every rank
  together. A rank whose host lags holds every rank's all-gather (and reduction) behind it, each rank's rate
  limiter waits on its own GPU, and with a pace per rank for the iteration the group waits as the expected maximum
  of its ranks' paces, growing with its size. Records are rank 0's, the slowest rank's.
* **Steady state** (``fsdp_steady``; stages without pipeline parallelism): the iteration is timed as the runners
  time theirs, between two CUDA events each rank's host records on its compute stream, the second of two
  iterations issued back to back (:meth:`.pipeline_engine._Pipeline._steady_fsdp`). The end event follows FSDP1's
  final callback, which makes the compute stream wait for the communication streams (``_post_backward_final_callback``:
  ``current_stream.wait_stream(_post_backward_stream)``), so the last reductions still count, but a host that
  finished issuing the backward early has issued the next forward while they drained.

Tried, not kept (branch h14fsdp23, commit d13b1e9, reverted by the next; scored with main c712e12's methods, before
that branch's H200 copy rule in ``validation.llm_blind.probe_fit``): the backward in the hook order of
``_runtime_utils.py`` (FSDP1). The root's pre-backward hook fires first, before the output layer's backward, and
prefetches the last block, in post-forward order. Every ``_unshard`` runs the rate limiter, own or prefetch, even
where nothing is gathered. Every sharded unit frees its parameters after its backward (``_should_free_in_backward``),
SHARD_GRAD_OP too, so its host also runs at most two units ahead in the backward. With fixed host work it moved no
iteration (4x H200 h4096 FULL_SHARD and SHARD_GRAD_OP, no host or 2 ms per block). The limiter binds only where the
host banks a lead in GPU-bound units and spends it in host-bound ones, and these runs' units are alike. What moved
was the host work fitted on the campaigns (``validation.llm_real``). Sealed FSDP run sets within 8%: 16 -> 16 of 23.
Medians %, leases in ``validation.sealed_campaign.SEALED`` order, before -> after:

* fsdp4: 5.8 / 2.8 / 4.8 / 7.8 / 13.8 / 11.1 / 5.6 / 8.4 / 4.7 -> 4.7 / 1.7 / 4.0 / 6.8 / 14.5 / 11.0 / 5.2 / 8.3 / 4.6;
* fsdppair4: 8.1 / 10.9 / 11.2 / 6.9 -> 8.9 / 11.7 / 11.9 / 6.5;
* llm4 FSDP: 4.4 / 5.6 / 1.4 / 9.2 / 2.5 / 3.0 / 3.0 / 7.0 / 4.0 -> 4.5 / 5.5 / 1.7 / 9.3 / 2.5 / 3.4 / 3.3 / 6.8 / 3.6;
* fsdp2: 6.7 -> 6.7.

On top of that copy rule it keeps 17 of 23 (the rule alone: 17).

Tried, not kept (branch h14fsdp24): one host for the whole group. A unit whose all-gather gates its kernels waits
for the last of the shard group's hosts to issue it, so its host time was taken as the expected maximum over the
group's ranks (``simulator.training.stragglers``, cv 0.165: the spread of free-running hosts measured on 2 GPUs).
Sealed FSDP run sets within 8%: 18 -> 21 of 26, but other FSDP figures got worse by up to 1.4 points; the figures,
and why a constant factor does not carry the wait, are form (D) of ``validation.rank_skew.TRIED``.

Tried, not kept (branch h14fsdp25): more host work for a gathered unit on 4 GPUs, its FSDP1 host work carried in
unsharded blocks there (x1.235, ``UNSHARDED_SHARE``). Sealed FSDP run sets within 8%: 20 -> 26 of 30, but section 7's
held-out 4x H200 lease, whose rows are all predicted slow already, and two 4x H100 leases got worse by more than 0.3
points. The figures, and which rows the carry unit moves, are in ``validation.fsdp_carry_unit``.

Tried, not kept (branch h14h4096s25): each collective lengthened by 0.10 s per second of kernels beside it (the
overlap probe's collective beside a matmul over alone, at 384 MiB). Sealed FSDP run sets within 8%: 20 -> 21 of 30,
but in-sample and held-out FSDP figures of section 7 got worse by up to 1.1 points: NO_SHARD at hidden 4096, already
slow, got slower. Its slowness is the simulated drain: one iteration from a cold start pays the last all-reduce after
the last kernel, which the measured steps, timed back to back, hide (``validation.fsdp_carry_unit.drain_rows``).

Tried, not kept (branch h14fsdp26): the two refinements above together, the spreads measured on 2 GPUs only
(``validation.rank_skew.free_paces``: NO_SHARD's free-running hosts on the two 2x H200 profiles, 18 steps: a pace
kept for the step, cv 0.132, and window to window 0.084; nothing fitted on judged runs; the host keys refitted on
the campaigns as ever). Sealed FSDP run sets within 8% (``python -m validation.sealed_campaign``): 20 -> 15 of 34
(steady state alone 13, paces alone 24). Section 7 (``python -m validation.accuracy --only llm``), median |error| %,
before -> steady / paces / both: the campaigns' FSDP rows h200x2_2026-11-26c 2.5 -> 6.6 / 6.3 / 8.8,
h200x4_2026-11-26d 4.3 -> 10.3 / 4.0 / 8.9, h100x4_2026-11-26h 2.4 -> 5.2 / 2.7 / 5.3; the blind 4x H100 lease 2 / 4
GPUs 2.9 / 4.9 -> 8.6 / 7.3, 2.4 / 5.7, 4.5 / 6.7; the held-out 4x H200 lease 16.4 / 19.6 -> 15.7 / 10.5, 20.6 /
16.9, 19.9 / 12.1; fsdpissue (own probes) 4 GPUs h100x4 6.9 -> 10.3 / 12.9 / 11.2, fsdpissue2 2.8 -> 7.6 / 3.8 / 4.1;
Selene, vTrain and DDP unchanged (no FSDP). Why, on the sealed ``h200x4_2026-11-28_llm`` ``fsdp4`` (signed errors):
the host work is fitted per world size (``validation.llm_blind.HOST_FROM``), so the refit absorbs the paces (the
4-GPU campaign's ``fsdp_unit_host_s`` 0.626 -> 0.379 ms) and FULL_SHARD h2048 moves -14.7 -> -13.3% only; the
steady state takes 1.3-1.9 ms off the hidden-4096 rows, whose host-bound forwards hide the previous drain, and those
rows were already fast (FULL_SHARD h4096 -11.5 -> -16.8%). With the 2-GPU campaign's host work for every world
size (what a spread measured on 2 GPUs would carry to 4), the paces take the sealed count 22 -> 20 of 34. Figures
rerun by ``python validation/scripts/fsdp_steady_paces_s26.py``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import simpy

from simulator.core.limits import check_count, check_range
from simulator.network.engine import Record
from simulator.training.llm.collective_job import CollJob, job_record, run_concurrent
from simulator.training.llm.hbm_contention import Contention

NCCL_TRACK = "dp"
"""Trace track of the stage's NCCL stream (all-gathers and reduce-scatters, one after another)."""
REPLICA_TRACK = "dp replicas"
"""Trace track of HYBRID_SHARD's replica all-reduces: their own process group and stream, so they
overlap the NCCL stream's collectives and need a track of their own."""

MAX_INFLIGHT_GATHERS = 2
"""FSDP1's rate limiter: all-gathered units not yet freed before the host waits (``limit_all_gathers``)."""

MAX_LANES = 8
"""Ranks simulated host by host at most (:class:`RankPaces`); a larger data-parallel group is represented by this
many ranks at spread order statistics of its size, the slowest at the group's expected maximum."""

MIN_PACE = 0.2
"""A rank's host never issues faster than this share of its nominal time (the normal's far tail)."""


@dataclass(frozen=True)
class RankPaces:
    """Each data-parallel rank's own host pace (:class:`FsdpStreams`): rank ``r`` issues a unit's host work in its
    nominal seconds x ``(1 + step_cv z_r) (1 + unit_cv z_ru)``, ``z_r`` the r-th of ``ranks`` expected standard normal
    order statistics (Blom's scores, the standard normal quantile of ``(i - 0.375) / (n + 0.25)``: a pace that holds for the iteration, so the group's
    slowest host lies ``step_cv e(n)`` above the mean, growing with the group as an order statistic) and ``z_ru``
    drawn per rank and unit from a generator seeded with ``seed``. Both cvs 0 (the default): one host for the group."""

    ranks: int = 1
    step_cv: float = 0.0
    unit_cv: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        for f in ("step_cv", "unit_cv"):
            check_range(getattr(self, f), field=f, low=0.0, high=1.0)
        check_count(self.ranks, field="ranks")

    @property
    def active(self) -> bool:
        return self.ranks > 1 and (self.step_cv > 0 or self.unit_cv > 0)

    def step_factors(self) -> tuple[float, ...]:
        """Each simulated rank's pace for the iteration, slowest first (1.0 for one host)."""
        if not self.active:
            return (1.0,)
        n = self.ranks
        lanes = min(n, MAX_LANES)
        orders = np.rint(np.linspace(n, 1, lanes)) if n > lanes else np.arange(n, 0, -1)
        z = [NormalDist().inv_cdf(q) for q in (orders - 0.375) / (n + 0.25)]   # Blom's normal scores
        return tuple(max(MIN_PACE, 1.0 + self.step_cv * float(x)) for x in z)


@dataclass(frozen=True)
class FsdpUnit:
    """A piece of one pass under FSDP: its kernels' seconds, the host's seconds to issue them (its
    hooks included), and the collectives of its parameters and gradients (one job per TP rank's
    data-parallel group). The root unit is two pieces: the first (embedding) carries its gather and
    reduce-scatter, the last (output layer) none."""

    name: str
    forward_s: float
    backward_s: float
    host_forward_s: float
    host_backward_s: float
    gather: tuple[CollJob, ...] = ()      # all-gather of its parameters before its forward
    regather: bool = False               # gathered again before its backward (freed after forward)
    scatter: tuple[CollJob, ...] = ()     # reduce-scatter of its gradients after its backward
    reduce: tuple[CollJob, ...] = ()      # HYBRID_SHARD: all-reduce of the shard across replicas
    gather_load: float = 0.0             # share of the GPU's memory bandwidth each collective takes while it
    scatter_load: float = 0.0            # runs (:mod:`.hbm_contention`): kernels beside it run that much slower
    reduce_load: float = 0.0


@dataclass(frozen=True)
class Mark:
    """A CUDA event a rank's host recorded (:meth:`FsdpStreams.mark`): when its compute stream reached it, and that
    rank's compute and all-gather wait seconds so far (``FsdpStreams.compute_s``, ``gather_wait_s``)."""

    time_s: float
    compute_s: float
    gather_wait_s: float


class _Meeting:
    """One collective as the lanes reach it on their own streams: it starts when the last has."""

    def __init__(self, env: simpy.Environment) -> None:
        self.arrived = 0
        self.started = env.event()
        self.done = env.event()


class _Lane:
    """One data-parallel rank: its host thread, compute stream and communication streams (``pace``: its host's
    factor for the iteration; ``rng``: per-unit draws of ``unit_cv``, None for none)."""

    def __init__(self, group: FsdpStreams, rank: int, pace: float, unit_cv: float,
                 rng: np.random.Generator | None) -> None:
        self.group, self.env, self.rank = group, group.env, rank
        self.pace, self.unit_cv, self.rng = pace, unit_cv, rng
        self.host_done = self._done()      # the host's last action (other lanes than 0: a chain of processes)
        self.gpu_done = self._done()       # the compute stream's last kernel
        self.comm_done = self._done()      # the NCCL stream's last collective
        self.replica_done = self._done()   # the replica all-reduces' stream
        self.freed: deque[simpy.Event] = deque()
        self.contention = Contention(self.env)  # collectives in flight slow the compute stream's kernels
        self.issued = {NCCL_TRACK: 0, REPLICA_TRACK: 0}   # collectives issued per stream: the meeting's key
        self.gpu_end_s = 0.0
        self.compute_s = 0.0               # compute stream busy (kernels, or waiting for the host)
        self.gather_wait_s = 0.0           # compute stream waiting for parameter all-gathers

    def _done(self) -> simpy.Event:
        ev = self.env.event()
        ev.succeed()
        return ev

    def host_s(self, nominal_s: float) -> float:
        """This rank's host seconds for work of ``nominal_s``."""
        if self.rng is None:
            return nominal_s * self.pace
        return nominal_s * self.pace * max(MIN_PACE, 1.0 + self.unit_cv * float(self.rng.standard_normal()))

    def _limit(self):
        if len(self.freed) >= MAX_INFLIGHT_GATHERS:
            yield self.freed.popleft()

    def _collectives(self, prev: simpy.Event, ready: simpy.Event | None, key: tuple[str, int],
                     jobs: tuple[CollJob, ...], name: str, done: simpy.Event, load: float, track: str):
        yield prev
        if ready is not None:
            yield ready
        meeting, last = self.group.arrive(key)
        if not last:
            assert meeting is not None
            yield meeting.started
        t0 = self.env.now
        self.contention.add(load)
        if last:                           # the last rank to reach it starts it on the network
            yield from run_concurrent(self.env, self.group.net, jobs)
            if meeting is not None:
                meeting.done.succeed()
        else:
            assert meeting is not None
            yield meeting.done
        self.contention.add(-load)
        if self.rank == 0:
            self.group.rec.append(job_record(track, name, t0, self.env.now, jobs))
        done.succeed()

    def _comm(self, jobs: tuple[CollJob, ...], name: str, load: float, ready: simpy.Event | None = None,
              replica: bool = False) -> simpy.Event:
        done = self.env.event()
        track = REPLICA_TRACK if replica else NCCL_TRACK
        prev = self.replica_done if replica else self.comm_done
        key = (track, self.issued[track])
        self.issued[track] += 1
        self.env.process(self._collectives(prev, ready, key, jobs, name, done, load, track))
        if replica:
            self.replica_done = done
        else:
            self.comm_done = done
        return done

    def _kernels(self, prev: simpy.Event, gathered: simpy.Event | None, gpu_s: float, host_end_s: float,
                 label: str, done: simpy.Event, first: bool):
        env = self.env
        yield prev
        if not first:                      # inside a pass the stream idled only for the host
            self.compute_s += max(0.0, env.now - self.gpu_end_s)
        if gathered is not None:
            t0 = env.now
            yield gathered
            self.gather_wait_s += env.now - t0
        t0 = env.now
        yield from self.contention.work(gpu_s)
        if env.now < host_end_s:
            yield env.timeout(host_end_s - env.now)
        self.compute_s += env.now - t0
        self.gpu_end_s = env.now
        if self.group.record and self.rank == 0:
            self.group.rec.append(Record("compute", label, t0, env.now))
        done.succeed()

    def _issue(self, gathered: simpy.Event | None, gpu_s: float, host_s: float, label: str, first: bool):
        """The host issues ``host_s`` (nominal) worth of kernels taking ``gpu_s`` on the GPU."""
        done = self.env.event()
        host_s = self.host_s(host_s)
        self.env.process(self._kernels(self.gpu_done, gathered, gpu_s, self.env.now + host_s, label, done, first))
        self.gpu_done = done
        yield self.env.timeout(host_s)
        return done

    def forward(self, units: tuple[FsdpUnit, ...], label: str):
        for i, u in enumerate(units):
            gathered = None
            if u.gather:
                yield from self._limit()
                gathered = self._comm(u.gather, f"all-gather {u.name} {label}", u.gather_load)
            done = yield from self._issue(gathered, u.forward_s, u.host_forward_s, f"{label} {u.name}", i == 0)
            if u.gather and u.regather:
                self.freed.append(done)

    def backward(self, units: tuple[FsdpUnit, ...], label: str):
        order = units[::-1]
        gathers: dict[int, simpy.Event] = {}
        for j, u in enumerate(order):
            if u.regather:
                if j not in gathers:
                    yield from self._limit()
                    gathers[j] = self._comm(u.gather, f"all-gather {u.name} {label}", u.gather_load)
                nxt = next((k for k in range(j + 1, len(order)) if order[k].regather), None)
                if nxt is not None and nxt not in gathers:          # BACKWARD_PRE prefetch
                    yield from self._limit()
                    gathers[nxt] = self._comm(order[nxt].gather, f"all-gather {order[nxt].name} {label}",
                                              order[nxt].gather_load)
            done = yield from self._issue(gathers.get(j), u.backward_s, u.host_backward_s, f"{label} {u.name}",
                                             j == 0)
            if u.scatter:
                scattered = self._comm(u.scatter, f"reduce-scatter {u.name} {label}", u.scatter_load, ready=done)
                if u.reduce:
                    self._comm(u.reduce, f"all-reduce replicas {u.name} {label}", u.reduce_load, ready=scattered,
                               replica=True)
            elif u.reduce:
                self._comm(u.reduce, f"all-reduce replicas {u.name} {label}", u.reduce_load, ready=done, replica=True)
            if u.gather:
                self.freed.append(done)

    def mark(self, end: bool, then_s: float, out: simpy.Event) -> None:
        """The host records a CUDA event on the compute stream now (the runners' timing; it does not wait for it);
        at the step's end after FSDP's final callback made the stream wait for the communication streams, then
        ``then_s`` of kernels after it (the optimizer). ``out`` succeeds with its :class:`Mark`."""
        done = self.env.event()
        self.env.process(self._marked(self.gpu_done, (self.comm_done, self.replica_done) if end else (), then_s,
                                      out, done))
        self.gpu_done = done

    def marked(self, end: bool, then_s: float, out: simpy.Event):
        """:meth:`mark` as a step of this rank's host chain."""
        self.mark(end, then_s, out)
        yield from ()

    def _marked(self, prev: simpy.Event, streams: tuple[simpy.Event, ...], then_s: float, out: simpy.Event,
                done: simpy.Event):
        yield prev
        if streams:
            yield simpy.AllOf(self.env, streams)
        out.succeed(Mark(self.env.now, self.compute_s, self.gather_wait_s))
        if then_s > 0:
            yield self.env.timeout(then_s)
        done.succeed()


class FsdpStreams:
    """One stage's data-parallel ranks (:class:`RankPaces`; one rank for the group when it is off), each with its
    host, compute stream and communication streams, across its passes. The stage's process is rank 0's host;
    the other ranks' hosts follow the same passes as processes of their own. A collective starts when the last
    rank has reached it on its stream (it ends on every rank together); records are rank 0's."""

    def __init__(self, env: simpy.Environment, net, records: list[Record], record: bool,
                 paces: RankPaces = RankPaces()) -> None:
        self.env, self.net, self.rec, self.record = env, net, records, record
        rng = np.random.default_rng(paces.seed) if paces.active and paces.unit_cv > 0 else None
        self.lanes = [_Lane(self, r, f, paces.unit_cv, rng) for r, f in enumerate(paces.step_factors())]
        self._meetings: dict[tuple[str, int], _Meeting] = {}

    @property
    def gpu_done(self) -> simpy.Event:
        """Rank 0's compute stream's last kernel (what its own TP collectives and sends wait for)."""
        return self.lanes[0].gpu_done

    @property
    def compute_s(self) -> float:
        return self.lanes[0].compute_s

    @property
    def gather_wait_s(self) -> float:
        return self.lanes[0].gather_wait_s

    def arrive(self, key: tuple[str, int]) -> tuple[_Meeting | None, bool]:
        """A rank's stream reaches collective ``key``: its meeting (None for one rank), and whether this rank is the
        last to arrive (which starts the meeting and runs the collective)."""
        if len(self.lanes) == 1:
            return None, True
        m = self._meetings.get(key)
        if m is None:
            m = self._meetings[key] = _Meeting(self.env)
        m.arrived += 1
        last = m.arrived == len(self.lanes)
        if last:
            del self._meetings[key]
            m.started.succeed()
        return m, last

    def _others(self, body) -> None:
        """Run ``body(lane)`` on every rank but 0, each after its host's previous action."""
        for lane in self.lanes[1:]:
            prev, lane.host_done = lane.host_done, self.env.event()
            self.env.process(self._after(prev, body(lane), lane.host_done))

    def _after(self, prev: simpy.Event, body, done: simpy.Event):
        yield prev
        yield from body
        done.succeed()

    def forward(self, units: tuple[FsdpUnit, ...], label: str):
        """The hosts' forward pass over ``units``; returns when rank 0's host has issued it all."""
        self._others(lambda lane: lane.forward(units, label))
        yield from self.lanes[0].forward(units, label)

    def backward(self, units: tuple[FsdpUnit, ...], label: str):
        """The hosts' backward pass (``units`` in forward order); returns when rank 0's host is done."""
        self._others(lambda lane: lane.backward(units, label))
        yield from self.lanes[0].backward(units, label)

    def mark(self, end: bool, then_s: float = 0.0) -> list[simpy.Event]:
        """Every rank's host records a CUDA event now, after its passes so far (:meth:`_Lane.mark`); the events'
        values are their :class:`Mark`, rank by rank."""
        outs = [self.env.event() for _ in self.lanes]
        self._others(lambda lane: lane.marked(end, then_s, outs[lane.rank]))
        self.lanes[0].mark(end, then_s, outs[0])
        return outs

    def _hosts(self):
        """Wait for every rank's host (rank 0's is the caller)."""
        if len(self.lanes) > 1:
            yield simpy.AllOf(self.env, [lane.host_done for lane in self.lanes])

    def finish(self):
        """Wait for every rank's host and compute stream."""
        yield from self._hosts()
        yield self.lanes[0].gpu_done if len(self.lanes) == 1 else simpy.AllOf(self.env, [lane.gpu_done
                                                                                          for lane in self.lanes])

    def drain(self):
        """Wait for every rank's compute stream and both communication streams."""
        yield from self._hosts()
        yield simpy.AllOf(self.env, [e for lane in self.lanes for e in (lane.gpu_done, lane.comm_done,
                                                                        lane.replica_done)])
