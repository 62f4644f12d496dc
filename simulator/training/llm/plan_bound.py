"""A cheap lower bound on a plan's iteration time: its kernels (and, given a cluster, its
communication alone) in pipeline order, and its host's issue time.

Per stage ``s``, a micro-batch's passes through all the stage's chunks take at least ``F_s`` forward
and ``B_s`` backward on the GPU: each pass its kernels plus its TP collectives (the collectives alone
on the idle network, with a :class:`~.comm_floor.CommFloor`, else 0; a pass timed by a measured
profile, its time as :func:`.iteration.simulate_train` runs it) plus the pipeline send after it. The
stage's host issues its passes one after another without waiting for the GPU (``H_s`` per
micro-batch: :meth:`.compute.ComputeModel.host_s`), and no pass ends before it is issued (with
``host_runs_ahead`` false, and for a profiled pass, each pass counts the longer of the two from its start). After its
last pass a stage reduces its gradients (DDP, ZeRO-1/2; ``D_s``, alone), steps its optimizer
(``O_s``) and all-gathers its parameters (ZeRO-1/2, in ``D_s``). So no stage ends before

    own_s = m max(F_s + B_s, H_s) + D_s + O_s

(``m`` micro-batches), and stage 0 does not end before the first micro-batch's forward has
reached the last stage through chunk 0 of the others, the last stage's GPU has done all its own
passes, and the last micro-batch's backward has come back through chunk 0 of the others:

    chain = sum_{s < p-1} (f0_s + b0_s) + m (F_{p-1} + B_{p-1}) + D_0 + O_0

(``f0``, ``b0``: chunk 0's pass and send on the GPU; for equal stages the 1F1B bubble ``(p - 1)(f + b)``;
a host runs ahead while its stage waits, so the chain counts no host time).
The bound is ``max(chain, max_s own_s)`` plus the per-iteration overhead. Contention, waiting and
anything not counted only add, so a plan whose bound exceeds a simulated plan's time can be
skipped without simulating it.

The kernels of a stage do not depend on data parallelism: :class:`PlanBound` computes them once
per (TP, PP, chunks, micro-batch, recomputation, ...) and reuses them for every DP degree, GPU
count and sharding of a search.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from simulator.training.llm.comm_floor import CommFloor
from simulator.training.llm.compute import ComputeModel
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.layer import CommCall, block_work, stage_chunk_work
from simulator.training.llm.memory import dp_shard_sizes, stage_layers
from simulator.training.llm.pass_profile import chunk_total_s
from simulator.training.llm.model import TransformerSpec


@dataclass(frozen=True)
class StagePass:
    """One micro-batch on one stage, per chunk (chunk 0 first): kernel and host seconds of the
    forward and backward passes, their TP collectives, and the pipeline sends after them; and the
    parameters one TP rank of the stage holds."""

    forward: tuple[tuple[float, float], ...]            # (kernels_s, host_s) per chunk
    backward: tuple[tuple[float, float], ...]
    forward_comm: tuple[tuple[CommCall, ...], ...]
    backward_comm: tuple[tuple[CommCall, ...], ...]
    sends: tuple[int, ...]                              # pipeline sends per micro-batch, per chunk
    params: float
    profiled: bool = False                              # (0, measured pass time) pairs, run as the GPU's time


def stage_pass_s(model: TransformerSpec, config: TrainConfig, cm: ComputeModel, profiled: bool = True) -> list[StagePass]:
    """Each stage's :class:`StagePass` (kernels only; no cluster needed). A pass timed by the compute
    set's profile (:mod:`.pass_profile`) counts as host time: the simulation runs it as the profile's
    time less its collectives alone, then the collectives, so it never ends before either."""
    c, B = config, config.dtype_bytes
    measured = cm.params.profile.lookup(cm.gpu.name, model, c) if cm.params.profile and profiled else None
    block = block_work(model, c)
    V = c.pp * c.chunks
    layers = stage_layers(model.layers, V)
    acc: list[dict] = [{"f": [], "b": [], "fc": [], "bc": [], "n": [], "p": 0.0} for _ in range(c.pp)]
    for v, n in enumerate(layers):
        fwd, bwd, params = stage_chunk_work(model, c, v, n)
        st = acc[v % c.pp]
        if measured is not None:
            st["f"].append((0.0, chunk_total_s(measured, c, n, v == V - 1, True)))
            st["b"].append((0.0, chunk_total_s(measured, c, n, v == V - 1, False)))
        else:
            st["f"].append((cm.pass_s(fwd, B), cm.host_s(n, block.host_ops(True), fwd.calls, c.tp)))
            st["b"].append((cm.pass_s(bwd, B), cm.host_s(n, block.host_ops(False), bwd.calls, c.tp)))
        st["fc"].append(fwd.comm)
        st["bc"].append(bwd.comm)
        st["n"].append((v < V - 1) + (v > 0) if c.pp > 1 else 0)
        st["p"] += params
    return [StagePass(tuple(a["f"]), tuple(a["b"]), tuple(a["fc"]), tuple(a["bc"]), tuple(a["n"]), a["p"],
                      measured is not None) for a in acc]


class PlanBound:
    """Lower bounds for the plans of one model on one GPU type; caches each stage's kernels per
    plan shape (they do not depend on DP, the GPU count or the sharding)."""

    def __init__(self, model: TransformerSpec, cm: ComputeModel) -> None:
        self.model, self.cm = model, cm
        self._stages: dict[tuple[TrainConfig, bool], list[StagePass]] = {}

    def stages(self, config: TrainConfig) -> list[StagePass]:
        key = replace(config, dp=1, global_batch=config.micro_batch * config.pp, zero=0, fsdp=None)
        profiled = not config.fsdp                  # FSDP plans are simulated analytically
        hit = self._stages.get((key, profiled))
        if hit is None:
            hit = self._stages[(key, profiled)] = stage_pass_s(self.model, key, self.cm, profiled)
        return hit

    def iteration_s(self, config: TrainConfig, comm: CommFloor | None = None) -> float:
        """Seconds no simulation of ``config`` can go below (see the module docstring); without
        ``comm`` the kernels alone."""
        c, m = config, config.microbatches
        stages = self.stages(c)
        shard_o = dp_shard_sizes(c, c.dp)[2]          # HYBRID_SHARD: DP bounds its shard group
        send = comm.send_s(c, c.micro_batch * self.model.seq * self.model.hidden * c.dtype_bytes / c.tp) \
            if comm is not None and c.pp > 1 else 0.0

        def passes(times, calls, profiled: bool) -> tuple[list[float], float]:
            """GPU seconds of each pass with its TP collectives, as the simulation issues them, and the host's."""
            tp = [comm.tp_s(c, k) for k in calls] if comm is not None else [0.0] * len(times)
            if profiled or not self.cm.params.host_runs_ahead:   # each pass from its start, host and GPU together
                return [self.cm.issue_s(k, h, t) + t for (k, h), t in zip(times, tp)], 0.0
            return [k + t for (k, _), t in zip(times, tp)], sum(h for _, h in times)

        own, gpu, first, tails = [], [], [], []
        for st in stages:
            (f, fh), (b, bh) = passes(st.forward, st.forward_comm, st.profiled), passes(st.backward, st.backward_comm,
                                                                                        st.profiled)
            tail = self.cm.optimizer_s(st.params / shard_o) + (comm.dp_tail_s(c, st.params) if comm else 0.0)
            gpu.append(m * (sum(f) + sum(b) + sum(st.sends) * send))
            own.append(max(gpu[-1], m * (fh + bh)) + tail)
            first.append(f[0] + b[0] + st.sends[0] * send)
            tails.append(tail)
        chain = sum(first[:-1]) + gpu[-1] + tails[0]
        return max(max(own), chain) + self.cm.params.iteration_overhead_s


def iteration_lower_bound_s(model: TransformerSpec, config: TrainConfig, cm: ComputeModel,
                            comm: CommFloor | None = None) -> float:
    """Seconds no simulation of ``config`` can go below (one-off; a search keeps a :class:`PlanBound`)."""
    return PlanBound(model, cm).iteration_s(config, comm)
