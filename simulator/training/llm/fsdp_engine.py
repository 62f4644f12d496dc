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
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import simpy

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


class FsdpStreams:
    """One stage's host, compute stream and communication streams across its passes."""

    def __init__(self, env: simpy.Environment, net, records: list[Record], record: bool) -> None:
        self.env, self.net, self.rec, self.record = env, net, records, record
        self.gpu_done = self._done()       # the compute stream's last kernel
        self.comm_done = self._done()      # the NCCL stream's last collective
        self.replica_done = self._done()   # the replica all-reduces' stream
        self.freed: deque[simpy.Event] = deque()
        self.contention = Contention(env)  # collectives in flight slow the compute stream's kernels
        self.gpu_end_s = 0.0
        self.compute_s = 0.0               # compute stream busy (kernels, or waiting for the host)
        self.gather_wait_s = 0.0           # compute stream waiting for parameter all-gathers

    def _done(self) -> simpy.Event:
        ev = self.env.event()
        ev.succeed()
        return ev

    def _limit(self):
        if len(self.freed) >= MAX_INFLIGHT_GATHERS:
            yield self.freed.popleft()

    def _collectives(self, prev: simpy.Event, ready: simpy.Event | None, jobs: tuple[CollJob, ...], name: str,
                     done: simpy.Event, load: float, track: str):
        yield prev
        if ready is not None:
            yield ready
        t0 = self.env.now
        self.contention.add(load)
        yield from run_concurrent(self.env, self.net, jobs)
        self.contention.add(-load)
        self.rec.append(job_record(track, name, t0, self.env.now, jobs))
        done.succeed()

    def _comm(self, jobs: tuple[CollJob, ...], name: str, load: float, ready: simpy.Event | None = None,
              replica: bool = False) -> simpy.Event:
        done = self.env.event()
        prev = self.replica_done if replica else self.comm_done
        self.env.process(self._collectives(prev, ready, jobs, name, done, load,
                                           REPLICA_TRACK if replica else NCCL_TRACK))
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
        if self.record:
            self.rec.append(Record("compute", label, t0, env.now))
        done.succeed()

    def _issue(self, gathered: simpy.Event | None, gpu_s: float, host_s: float, label: str, first: bool):
        """The host issues ``host_s`` worth of kernels taking ``gpu_s`` on the GPU."""
        done = self.env.event()
        self.env.process(self._kernels(self.gpu_done, gathered, gpu_s, self.env.now + host_s, label, done, first))
        self.gpu_done = done
        yield self.env.timeout(host_s)
        return done

    def forward(self, units: tuple[FsdpUnit, ...], label: str):
        """The host's forward pass over ``units``; returns when the host has issued it all."""
        for i, u in enumerate(units):
            gathered = None
            if u.gather:
                yield from self._limit()
                gathered = self._comm(u.gather, f"all-gather {u.name} {label}", u.gather_load)
            done = yield from self._issue(gathered, u.forward_s, u.host_forward_s, f"{label} {u.name}", i == 0)
            if u.gather and u.regather:
                self.freed.append(done)

    def backward(self, units: tuple[FsdpUnit, ...], label: str):
        """The host's backward pass (``units`` in forward order); returns when the host is done."""
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

    def drain(self):
        """Wait for the compute stream and both communication streams."""
        yield simpy.AllOf(self.env, [self.gpu_done, self.comm_done, self.replica_done])
