"""The discrete-event executor of one LLM training iteration (one pipeline, all its stages).

Like :mod:`simulator.training.ddp_engine`, it builds on the network engine's
:class:`~simulator.network.engine.FlowNetwork`; everything arrives as plain data (:class:`StageWork`,
built by :mod:`.iteration`) and leaves as plain data (:class:`StageTimes` and records).

One SimPy process per pipeline stage walks its schedule (:mod:`.schedule`). A pass waits for its
input (the previous virtual stage's activations, or the next one's gradients), computes (its kernels, and
never before the stage's host has issued it: the host issues pass after pass without waiting for the GPU
or for a pass's input, so it runs ahead while the GPU waits and a pass whose issue was done then costs
only its kernels; :func:`.compute.issue_pass`, the rule of :meth:`.compute.ComputeModel.timeline_s`), runs its
tensor-parallel collectives on the TP group's links (blocking, as Megatron's are), then sends its
output to the neighbouring stage and waits for the send to finish (Megatron's batched isend/irecv
are waited on before the next pass). The send's call is issued by the same host after the pass
(``Link.host_s``), so a host that ran ahead has issued it before the pass ends and only the send's
latency and bytes lie on the GPU's path. A chunk's backward passes after its first of the iteration add
their gradients into the ones already there (``ChunkWork.accumulate_s``). With ZeRO-3 a pass first waits for its parameters' all-gather,
prefetched one pass ahead on the data-parallel stream, and a backward pass hands its gradients to a
reduce-scatter that runs in the background. Under FSDP a pass runs unit by unit, with the host
thread, compute stream and communication streams of :mod:`.fsdp_engine`. After its last pass a
stage reduces its gradients over the data-parallel groups, steps the optimizer and (ZeRO-1/2)
all-gathers the updated parameters.

A pass's TP collectives run as one transfer carrying their summed bytes after their summed launch
and protocol latencies: they sit between kernels on the critical path, so their order inside the
pass does not change when it ends, and this keeps a 4096-GPU iteration to thousands of events.
A collective whose links no other traffic of the iteration crosses (a TP group inside one server,
when pipeline and data-parallel traffic leave through PCIe and the NICs) is a timeout of its
closed-form time, which is exactly what the flow network would give it alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import simpy

from simulator.network.engine import Record
from simulator.training.llm.collective_job import (CollJob, job_record, run_concurrent as _concurrent,
                                                   run_job as _collective)
from simulator.training.llm.compute import issue_pass
from simulator.training.llm.fsdp_engine import NCCL_TRACK, FsdpStreams, FsdpUnit, RankPaces
from simulator.training.llm.schedule import Action

GATHER_TRACK = "dp gather"
"""Trace track of ZeRO-3's parameter all-gathers: processes of their own, beside the reduce-scatter
stream (track ``dp``), so they overlap it and need a track of their own."""


@dataclass(frozen=True)
class ChunkWork:
    """One model chunk of one stage: compute seconds and collectives per micro-batch pass."""

    forward_s: float
    backward_s: float
    forward_comm: tuple[CollJob, ...]
    backward_comm: tuple[CollJob, ...]
    send_bytes: float                          # per route of the pipeline transfer
    gather_forward: tuple[CollJob, ...] = ()   # parameter all-gathers (one per TP rank's DP group)
    gather_backward: tuple[CollJob, ...] = ()
    scatter_backward: tuple[CollJob, ...] = ()  # gradient reduce-scatters after a backward pass
    units: tuple[FsdpUnit, ...] = ()           # FSDP: the pass unit by unit (:mod:`.fsdp_engine`) instead
    forward_host_s: float = 0.0                # the host's time to issue a pass and its collective calls (0: the
    backward_host_s: float = 0.0               # pass takes forward_s / backward_s whatever the host does)
    forward_hidden_s: float = 0.0              # the pass's collectives alone: a host-bound pass hides them
    backward_hidden_s: float = 0.0
    accumulate_s: float = 0.0                  # GPU seconds each backward after the chunk's first adds: its
                                               # gradients added into the earlier micro-batches' (compute.py)


@dataclass(frozen=True)
class Link:
    """A pipeline hop: the routes of all TP ranks (and of every data-parallel replica, which
    send at the same moments) and the send's fixed latency."""

    routes: tuple[tuple[int, ...], ...]
    latency_s: float                           # on the GPU's path, before the bytes
    bytes_per_byte: float = 1.0                # wire bytes per payload byte (protocol efficiency)
    ranks: tuple[str, ...] = ()                # replica 0's first TP rank on each side (its 90% interval's plan)
    host_s: float = 0.0                        # the host's issue of the send (Plan.host_s), after the pass's


@dataclass(frozen=True)
class StageWork:
    chunks: tuple[ChunkWork, ...]
    order: tuple[Action, ...]
    to_next: Link | None                       # forward sends to stage s+1 (or wrap to 0)
    to_prev: Link | None                       # backward sends to stage s-1 (or wrap to p-1)
    grad_sync: tuple[tuple[CollJob, ...], ...]  # phases after the last pass; jobs of a phase concurrent
    optimizer_s: float
    param_sync: tuple[CollJob, ...]            # after the optimizer (ZeRO-1/2 all-gather)
    fsdp_paces: RankPaces = RankPaces()        # FSDP: the data-parallel ranks' own host paces (.fsdp_engine)
    fsdp_steady: bool = False                  # FSDP without pipeline stages: time the second of two iterations
                                               # issued back to back (:meth:`_Pipeline.run_stage`)


@dataclass(frozen=True)
class StageTimes:
    compute_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_wait_s: float          # waiting for parameter gathers during the passes
    passes_end_s: float       # end of the last pass
    grad_sync_end_s: float
    end_s: float              # after the optimizer and any parameter all-gather


class _Pipeline:
    def __init__(self, env: simpy.Environment, net, stages: Sequence[StageWork], pp: int, record: bool) -> None:
        self.env, self.net, self.stages, self.pp, self.record = env, net, stages, pp, record
        self.vstages = pp * len(stages[0].chunks)
        self.inputs: dict[tuple[bool, int, int], simpy.Event] = {}
        self.records: dict[int, list[Record]] = {s: [] for s in range(pp)}
        self.times: dict[int, StageTimes] = {}
        self._wake = {s: env.event() for s in range(pp)}     # a stage's reduce-scatter queue grew

    def _input(self, forward: bool, mb: int, vstage: int) -> simpy.Event:
        key = (forward, mb, vstage)
        ev = self.inputs.get(key)
        if ev is None:
            ev = self.inputs[key] = self.env.event()
        return ev

    def _gather(self, jobs: tuple[CollJob, ...], stage: int, name: str, track: str = NCCL_TRACK):
        start = self.env.now
        yield from _concurrent(self.env, self.net, jobs)
        self.records[stage].append(job_record(track, name, start, self.env.now, jobs))

    def _dp_stream(self, stage: int, queue: list, done: simpy.Event):
        """Gradient reduce-scatters of backward passes, one after another."""
        env = self.env
        while True:
            while not queue:
                yield self._wake[stage]
            item = queue.pop(0)
            if item is None:
                done.succeed()
                return
            jobs, name = item
            yield from self._gather(jobs, stage, name)

    def run_stage(self, s: int):
        env, work = self.env, self.stages[s]
        fsdp = FsdpStreams(env, self.net, self.records[s], self.record, work.fsdp_paces) \
            if any(c.units for c in work.chunks) else None
        if fsdp is not None and work.fsdp_steady and self.pp == 1:
            yield from self._steady_fsdp(s, fsdp)
            return
        times = yield from self._iteration(s, fsdp)
        assert times is not None
        self.times[s] = times

    def _steady_fsdp(self, s: int, fsdp: FsdpStreams):
        """An FSDP stage without pipeline stages as the runners time it: iterations issued back to back (the host
        never waits for the GPU between them), each between two CUDA events its host records on the compute
        stream, the second after FSDP's final callback made the stream wait for the communication streams, so one
        iteration's last reductions drain while the host issues the next. The second iteration is scored, on the
        rank whose events lie furthest apart (the runners keep the maximum over ranks); rank 0's records of it."""
        work, rec = self.stages[s], self.records[s]
        assert not work.grad_sync and not work.param_sync, "FSDP reduces its gradients unit by unit"
        for _ in range(2):
            starts = fsdp.mark(False)
            counts = yield from self._iteration(s, fsdp, steady=True)
            passes = fsdp.mark(False)
            ends = fsdp.mark(True, work.optimizer_s)
        yield simpy.AllOf(self.env, ends)
        c = max(range(len(ends)), key=lambda r: ends[r].value.time_s - starts[r].value.time_s)
        t0, p, e = starts[c].value, passes[c].value, ends[c].value
        tp, pp_s = counts
        self.times[s] = StageTimes(e.compute_s - t0.compute_s, tp, pp_s, e.gather_wait_s - t0.gather_wait_s,
                                   p.time_s - t0.time_s, e.time_s - t0.time_s,
                                   e.time_s + work.optimizer_s - t0.time_s)
        shift = starts[0].value.time_s
        self.records[s] = [replace(r, start_s=r.start_s - shift, end_s=r.end_s - shift)
                           for r in rec if r.start_s >= shift - 1e-12]

    def _iteration(self, s: int, fsdp: FsdpStreams | None, steady: bool = False):
        """One iteration of stage ``s`` (its passes in schedule order, then the gradient sync, the optimizer and any
        parameter all-gather); its :class:`StageTimes`, or with ``steady`` (:meth:`_steady_fsdp`) once its host has
        issued the passes, the TP and pipeline seconds it spent."""
        env, work = self.env, self.stages[s]
        rec = self.records[s]
        compute = tp = pp_s = dp_wait = 0.0
        gathers: dict[int, simpy.Process] = {}
        scatter_queue: list = []
        scatter_done = env.event()
        has_scatter = any(c.scatter_backward for c in work.chunks)
        has_gathers = any(c.gather_forward or c.gather_backward for c in work.chunks)
        if has_scatter:
            env.process(self._dp_stream(s, scatter_queue, scatter_done))

        def gather_jobs(i: int) -> tuple[CollJob, ...]:
            a = work.order[i]
            c = work.chunks[a.chunk]
            return c.gather_forward if a.forward else c.gather_backward

        def start_gather(i: int) -> None:
            if i < len(work.order) and i not in gathers and gather_jobs(i):
                gathers[i] = env.process(self._gather(gather_jobs(i), s, f"all-gather params {work.order[i].label}",
                                                      GATHER_TRACK))

        vstages, pp = self.vstages, self.pp
        record = self.record
        host = env.now                                  # when the stage's host has issued every pass so far
        accumulating: set[int] = set()                  # chunks whose gradients an earlier backward left
        for i, a in enumerate(work.order):
            chunk = work.chunks[a.chunk]
            v = a.chunk * pp + s
            fwd = a.forward
            if (v > 0) if fwd else (v < vstages - 1):
                yield self._input(fwd, a.microbatch, v)
            nxt = v + 1 if fwd else v - 1
            jobs = chunk.forward_comm if fwd else chunk.backward_comm
            if chunk.units:
                assert fsdp is not None
                yield from (fsdp.forward if fwd else fsdp.backward)(chunk.units, a.label)
                if jobs or 0 <= nxt < vstages:          # TP collectives and sends need the pass done
                    yield fsdp.gpu_done
            else:
                if has_gathers:
                    start_gather(i)
                    if i in gathers:
                        t0 = env.now
                        yield gathers.pop(i)
                        dp_wait += env.now - t0
                    start_gather(i + 1)                     # prefetch the next pass's parameters
                t0 = env.now
                if fwd:
                    host, dt = issue_pass(t0, host, chunk.forward_s, chunk.forward_host_s, chunk.forward_hidden_s)
                else:
                    kernels = chunk.backward_s + (chunk.accumulate_s if a.chunk in accumulating else 0.0)
                    accumulating.add(a.chunk)
                    host, dt = issue_pass(t0, host, kernels, chunk.backward_host_s, chunk.backward_hidden_s)
                yield env.timeout(dt)
                if record:
                    rec.append(Record("compute", a.label, t0, env.now))
                compute += dt
            if jobs:
                t0 = env.now
                for j in jobs:
                    if j.isolated_s is not None:
                        yield env.timeout(j.isolated_s)
                    else:
                        yield from _collective(env, self.net, j)
                if record:
                    rec.append(job_record("tp", f"TP {a.label}", t0, env.now, jobs))
                tp += env.now - t0
            if not fwd and chunk.scatter_backward:
                scatter_queue.append((chunk.scatter_backward, f"reduce-scatter grads {a.label}"))
                self._kick(s)
            if 0 <= nxt < vstages:
                link = work.to_next if fwd else work.to_prev
                assert link is not None
                t0 = env.now
                if chunk.units:                         # FSDP's host is its own thread (fsdp_engine): issue in line
                    yield env.timeout(link.host_s)
                else:                                   # the host issues the send once it has issued the pass
                    host += link.host_s
                    if host > env.now:
                        yield env.timeout(host - env.now)
                yield env.timeout(link.latency_s)
                yield self.net.transfer_group(link.routes, chunk.send_bytes * link.bytes_per_byte)
                if record:
                    rec.append(Record("pp", f"send {a.label}", t0, env.now, chunk.send_bytes))
                pp_s += env.now - t0
                self._input(fwd, a.microbatch, nxt).succeed()
        if steady:
            return tp, pp_s
        if fsdp is not None:
            yield from fsdp.finish()
            compute += fsdp.compute_s
            dp_wait += fsdp.gather_wait_s
        passes_end = env.now
        if fsdp is not None:
            yield from fsdp.drain()
        if has_scatter:
            scatter_queue.append(None)
            self._kick(s)
            yield scatter_done
        for phase in work.grad_sync:
            t0 = env.now
            yield from _concurrent(env, self.net, phase)
            rec.append(job_record(NCCL_TRACK, phase[0].name if phase else "grad sync", t0, env.now, phase))
        sync_end = env.now
        t0 = env.now
        yield env.timeout(work.optimizer_s)
        rec.append(Record("compute", "optimizer", t0, env.now))
        if work.param_sync:
            t0 = env.now
            yield from _concurrent(env, self.net, work.param_sync)
            rec.append(job_record(NCCL_TRACK, work.param_sync[0].name, t0, env.now, work.param_sync))
        return StageTimes(compute, tp, pp_s, dp_wait, passes_end, sync_end, env.now)

    def _kick(self, s: int) -> None:
        ev, self._wake[s] = self._wake[s], self.env.event()
        ev.succeed()


def simulate_pipeline(net_factory, stages: Sequence[StageWork], pp: int, record: bool = True
                      ) -> tuple[list[StageTimes], dict[int, list[Record]]]:
    """Run every stage's schedule on one network from t = 0; (per-stage times, records by stage;
    per-pass records only with ``record``).

    ``net_factory(env)`` returns the flow network to run on (``transfer_group`` interface)."""
    env = simpy.Environment()
    out: list = []
    env.process(run_pipeline(env, net_factory(env), stages, pp, record, out))
    env.run()
    if not out:
        raise RuntimeError("pipeline deadlock: a stage never finished (schedule inconsistent)")
    return out[0]


def run_pipeline(env: simpy.Environment, net, stages: Sequence[StageWork], pp: int, record: bool = False,
                 out: list | None = None):
    """A SimPy process: one iteration of every stage on ``net`` (anything with ``transfer_group``,
    e.g. one job's port on a shared fabric), from ``env.now``; appends (per-stage times, records)
    to ``out`` when every stage has finished."""
    pipe = _Pipeline(env, net, stages, pp, record)
    yield simpy.AllOf(env, [env.process(pipe.run_stage(s)) for s in range(pp)])
    if out is not None:
        out.append(([pipe.times[s] for s in range(pp)], pipe.records))
