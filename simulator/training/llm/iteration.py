"""One LLM training iteration on a topology: build the plain-data work, run it, sum it up.

What is simulated as events (:mod:`.pipeline_engine` on the flow network) and what is a formula:

* simulated: every pass of every micro-batch on every pipeline stage in schedule order; the TP
  collectives of each pass on the TP group's links; the pipeline sends between stages on the real
  routes of every TP rank and data-parallel replica (they send at the same moments); ZeRO-3's
  parameter all-gathers and gradient reduce-scatters of a chunk on the data-parallel groups,
  prefetched one pass ahead; FSDP unit by unit (:mod:`.fsdp_engine`: the host thread with its
  hooks and rate limiter, the compute stream, one NCCL stream for all-gathers and
  reduce-scatters, HYBRID_SHARD's replica all-reduces on another); the end-of-iteration gradient reduction over every TP rank's data-parallel group
  of every stage (all running at once, so groups sharing NICs or spine links slow each other); the
  tied-embedding all-reduce between the first and last stage; the optimizer step.
* formula: kernel times (:mod:`.compute`), or measured pass times where the compute set's
  profile lists the plan's shape (:mod:`.pass_profile`); memory (:mod:`.memory`); the gradient
  accumulation of a chunk's backward passes after its first (``ComputeParams.grad_accumulation_bytes_per_param``
  over its local parameters; not under FSDP or ZeRO-3, whose gradients are reduced pass by pass: not
  modelled there).
* symmetry: one pipeline (data-parallel replica 0) runs its passes; the other replicas are
  identical, so their pipeline sends are added to the same transfers and their gradient
  collectives are the same collectives (full groups on real routes). TP collectives of the other
  replicas are not added (a TP group stays inside one server unless TP exceeds its GPUs).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from simulator.collectives.params import Parameters
from simulator.core.errors import InputError
from simulator.core.vocabulary import NCCL_CURRENT, NcclVersion
from simulator.network.records import Record
from simulator.training.gpus import GpuSpec
from simulator.training.iteration_bands import compute_caveats, train_caveats, train_interval
from simulator.training.llm.compute import ComputeModel, ComputeParams
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.groups import GroupCollectives
from simulator.training.llm.hbm_contention import bandwidth_share
from simulator.training.llm.host_prior import HOST_PRIOR, HostPrior
from simulator.training.llm.fsdp_engine import FsdpUnit, RankPaces
from simulator.training.llm.layer import (EMPTY, CommCall, LayerWork, MemOp, Pass, block_work, check_divisible,
                                         embedding_work, output_work, stage_chunk_work)
from simulator.training.llm.memory import GRAD_BYTES, PARAM_BYTES, Memory, dp_shard_sizes, memory_per_gpu, stage_layers
from simulator.training.llm.flows import ComponentFlowNetwork
from simulator.training.llm.links import compact
from simulator.training.llm.model import TransformerSpec
from simulator.training.llm.part_intervals import PARTS, part_intervals
from simulator.training.llm.pass_profile import chunk_total_s
from simulator.training.llm.pipeline_engine import ChunkWork, CollJob, Link, StageWork, simulate_pipeline
from simulator.training.llm.placement import Placement
from simulator.training.llm.schedule import schedule
from topologies.routing import Router, router_for

if TYPE_CHECKING:
    import networkx as nx

    from topologies.preset_cluster import PresetCluster


_FLOAT_FIELDS = ("iteration_s", "compute_s", "tp_comm_s", "pp_comm_s", "pp_bubble_s", "dp_comm_exposed_s", "optimizer_s",
                 "overhead_s", "mfu", "hfu", "tokens_per_s", "iteration_lo_s", "iteration_hi_s", "host_floor_s")


@dataclass(frozen=True)
class TrainResult:
    """One iteration: the breakdown of the stage that finishes last, throughput, memory."""

    model: str
    gpus: int
    config: TrainConfig
    iteration_s: float
    compute_s: float
    tp_comm_s: float
    pp_comm_s: float
    pp_bubble_s: float
    dp_comm_exposed_s: float       # gradient sync not hidden behind the passes, with PP > 1 and tied embeddings
                                   # the first and last stages' embedding all-reduce too (non-zero at DP 1)
    optimizer_s: float
    overhead_s: float
    mfu: float
    hfu: float
    tokens_per_s: float
    memory: Memory
    critical_stage: int
    gpu: str
    records: dict[int, list[Record]] = field(repr=False, compare=False, default_factory=dict)
    iteration_lo_s: float | None = None     # 90% interval (simulator.training.iteration_bands)
    iteration_hi_s: float | None = None
    part_bounds: tuple[tuple[str, float, float], ...] = ()   # (part, low s, high s): .part_intervals
    iteration_extrapolated: tuple[str, ...] = ()    # why the interval is not what its band measured (caveats)
    parts_extrapolated: tuple[str, ...] = ()        # the same for the compute parts' band (with part_bounds)
    comm_extrapolated: tuple[str, ...] = ()         # TP / PP parts outside their measured band's domain, and parts
    #                                                 whose calls extrapolate the collective calibration
    fsdp_shard_group: int | None = None             # FSDP: ranks sharding among themselves (HYBRID_SHARD's
                                                    # shard group, else DP); None without FSDP
    host_floor_s: float = 0.0       # the iteration's host-issue floor (.host_prior): a datasheet interval's centre
                                    # when above iteration_s
    nccl_version: str = str(NCCL_CURRENT)   # the NCCL its collectives were planned for (TrainWork.nccl_version)

    def __post_init__(self) -> None:
        """Plain Python numbers (the flow network's sums are numpy floats): ``gpunetsim.train``'s results
        print and compare like ``--json``'s."""
        for f in _FLOAT_FIELDS:
            v = getattr(self, f)
            if v is not None:
                object.__setattr__(self, f, float(v))
        for f in ("gpus", "critical_stage"):
            object.__setattr__(self, f, int(getattr(self, f)))
        object.__setattr__(self, "part_bounds", tuple((p, float(lo), float(hi)) for p, lo, hi in self.part_bounds))

    def bounds(self, part: str) -> tuple[float, float] | None:
        """The 90% interval of ``<part>_s`` (simulate_train(parts=True)), or None where it has none (the parts
        were not asked for); a name not in ``PARTS`` (``"tp"``, a typo) is refused naming the valid ones."""
        if part not in PARTS:
            raise InputError(f"unknown part; the parts are {', '.join(PARTS)}", field="part", value=part)
        return next(((lo, hi) for p, lo, hi in self.part_bounds if p == part), None)

    def _part(self, part: str) -> dict:
        b = self.bounds(part)
        value = {f"{part}_s": getattr(self, f"{part}_s")}
        return value if b is None else {**value, f"{part}_lo_s": b[0], f"{part}_hi_s": b[1]}

    def as_dict(self) -> dict:
        """The JSON row; each part's 90% interval (``<part>_lo_s``, ``<part>_hi_s``) follows it when computed;
        ``fsdp_shard`` is HYBRID_SHARD's shard group as simulated (given or chosen)."""
        hybrid = {"fsdp_shard": self.fsdp_shard_group} if self.config.fsdp == "hybrid" else {}
        return {"model": self.model, "gpus": self.gpus, "gpu": self.gpu, "nccl_version": self.nccl_version,
                **self.config.as_dict(), **hybrid,
                "iteration_s": self.iteration_s, "iteration_lo_s": self.iteration_lo_s,
                "iteration_hi_s": self.iteration_hi_s, "host_floor_s": self.host_floor_s,
                "iteration_extrapolated": list(self.iteration_extrapolated),
                **({"parts_extrapolated": list(self.parts_extrapolated),
                    "comm_extrapolated": list(self.comm_extrapolated)} if self.part_bounds else {}),
                **{k: v for p in PARTS for k, v in self._part(p).items()}, "mfu": self.mfu, "hfu": self.hfu,
                "tokens_per_s": self.tokens_per_s, "critical_stage": self.critical_stage,
                "memory_bytes": self.memory.as_dict(), "memory_capacity_bytes": self.memory.capacity_bytes,
                "fits": self.memory.fits}


class _Builder:
    def __init__(self, router: Router, params: Parameters, model: TransformerSpec, config: TrainConfig,
                 cm: ComputeModel, nccl_version: NcclVersion | None = None) -> None:
        self.router, self.model, self.config, self.cm = router, model, config, cm
        self.groups = GroupCollectives(router, params, nccl_version)
        self.place = Placement.build(config, router.gpus, router.host_of)
        self.B = config.dtype_bytes

    def job(self, op: str, ranks: tuple[str, ...], size_bytes: float, count: int, name: str) -> CollJob:
        """``count`` calls of ``op`` of ``size_bytes`` on the group ``ranks``, with the group's fastest plan."""
        return CollJob(self.groups.plan(op, ranks, size_bytes), size_bytes, count, name, ranks=ranks)

    def jobs(self, calls: tuple[CommCall, ...], ranks: tuple[str, ...]) -> tuple[CollJob, ...]:
        merged: dict[tuple[str, float], int] = defaultdict(int)
        for c in calls:
            merged[(c.op, c.size_bytes)] += c.count
        return tuple(self.job(op, ranks, size, n, op.replace("_", "-"))
                     for (op, size), n in merged.items())

    def alone_s(self, jobs: tuple[CollJob, ...], ranks: tuple[str, ...]) -> float:
        """Closed-form seconds of ``jobs`` one after another on an idle network."""
        return sum(self.groups.time_s(j.plan, ranks, j.size_bytes, j.count) for j in jobs)

    def isolate(self, jobs: tuple[CollJob, ...], ranks: tuple[str, ...], busy: set[int]) -> tuple[CollJob, ...]:
        """Jobs whose links are in no other traffic's ``busy`` set become closed-form timeouts."""
        out = []
        for j in jobs:
            links = {l for g in j.plan.groups for r in g.routes for l in r}
            if links.isdisjoint(busy):
                j = replace(j, isolated_s=self.alone_s((j,), ranks))
            out.append(j)
        return tuple(out)

    def link(self, s_from: int, s_to: int, send_bytes: float) -> Link:
        c, pl = self.config, self.place
        routes = tuple(self.router.route(pl.gpu(r, d, s_from), pl.gpu(r, d, s_to))
                       for d in range(c.dp) for r in range(c.tp))
        pair = (pl.gpu(0, 0, s_from), pl.gpu(0, 0, s_to))
        plan = self.groups.p2p_plan(*pair, send_bytes)
        factor = plan.groups[0].bytes_per_byte if plan.groups else 1.0
        host = plan.host_s if self.cm.params.host_runs_ahead else 0.0   # else the host waits: issue in line
        return Link(tuple(r for r in routes if r), plan.call_overhead_s - host + plan.latency_s, factor, pair, host)

    def dp_groups(self, s: int) -> list[tuple[str, ...]]:
        return [self.place.dp_group(r, s) for r in range(self.config.tp)]

    def fsdp_units(self, s: int, v: int, n: int, block: LayerWork, emb: LayerWork, out: LayerWork,
                   chunk_params: float) -> tuple[FsdpUnit, ...]:
        """Virtual stage ``v`` (on stage ``s``, ``n`` blocks) as FSDP units: the root (embedding
        and output layer, when the chunk has them) and one unit per block. Parameters are gathered
        and gradients reduced in 16 bits (``PARAM_BYTES``: FSDP without a MixedPrecision
        ``reduce_dtype`` reduces in the parameters' dtype); each unit's backward adds FSDP1's flat
        gradient copy and its pre-division by the data-parallel size, and the memory traffic of the
        collectives that run beside a block unit's backward kernels (:mod:`.hbm_contention`): its
        reduce-scatter (or replica all-reduce) and, when it is gathered again, an all-gather of its
        size (BACKWARD_PRE prefetches the next unit's while this one computes)."""
        c, cm, p = self.config, self.cm, self.cm.params
        groups = self.dp_groups(s)
        if c.fsdp == "hybrid":
            split = [self.place.hybrid_groups(r, s) for r in range(c.tp)]
            shards = [x for sh, _ in split for x in sh]
            replicas = [r for _, reps in split for r in reps if len(r) > 1]
        else:
            shards, replicas = groups, []
        sharded = len(shards[0]) > 1
        pre, post = _divide_factors(c.fsdp_divide_ranks or c.dp)

        def unit(name: str, params: float, fwd: Pass, bwd: Pass, blocks: int, regather: bool) -> FsdpUnit:
            pbytes = params * PARAM_BYTES
            gather = tuple(self.job("all_gather", g, pbytes, 1, "all-gather")
                           for g in shards) if sharded else ()
            scatter = tuple(self.job("reduce_scatter", g, pbytes, 1, "reduce-scatter")
                            for g in shards) if sharded else ()
            shard_bytes = pbytes / len(shards[0])
            reduce = tuple(self.job("all_reduce", r, shard_bytes, 1, "all-reduce")
                           for r in replicas)
            grad_ops = [MemOp("fsdp flat gradient", 2 * pbytes)]
            if pre > 1:
                grad_ops.append(MemOp("fsdp pre-divide", 2 * pbytes))
            if post > 1:
                grad_ops.append(MemOp("fsdp post-divide", 2 * shard_bytes))
            grads_s = sum(cm.kernel_s(k, PARAM_BYTES) for k in grad_ops)
            # FSDP1's post-backward hook launches those kernels and calls the reduction (the reduce-scatter, or
            # NO_SHARD's all-reduce, on a one-rank group too; HYBRID_SHARD's replica all-reduce besides): host
            # work of the backward alone, at the host's cost per kernel and per collective call
            reductions = 1 + (1 if sharded and replicas else 0)
            grads_host_s = cm.host_s(1, block.kernel_ops(len(grad_ops)), reductions, c.tp)

            def share(op: str, jobs: tuple[CollJob, ...], ranks: tuple[str, ...]) -> float:
                """Of one GPU's memory bandwidth while the collective runs alone (:mod:`.hbm_contention`)."""
                if not jobs:
                    return 0.0
                j = jobs[0]
                return bandwidth_share(op, len(ranks), j.size_bytes,
                                       self.groups.time_s(j.plan, ranks, j.size_bytes), cm.mem_Bps)

            return FsdpUnit(name, cm.pass_s(fwd, self.B), cm.pass_s(bwd, self.B) + grads_s,
                            cm.host_s(blocks, block.host_ops(True), fwd.calls, c.tp) + p.fsdp_unit_host_s
                            + (p.fsdp_gather_host_s if gather else 0.0),
                            cm.host_s(blocks, block.host_ops(False), bwd.calls, c.tp) + p.fsdp_unit_host_s
                            + (p.fsdp_gather_host_s if gather and regather else 0.0) + grads_host_s,
                            gather, regather and bool(gather), scatter, reduce,
                            share("all_gather", gather, shards[0]), share("reduce_scatter", scatter, shards[0]),
                            share("all_reduce", reduce, replicas[0] if replicas else ()))

        regather = c.fsdp != "grad-op"
        units = [unit(f"block {i}", self.model.layer_params() / c.tp, block.forward, block.backward, 1, regather)
                 for i in range(n)]
        root = chunk_params - n * self.model.layer_params() / c.tp
        if root > 0:
            first = v == 0
            last = v == c.pp * c.chunks - 1
            units.insert(0, unit("root", root, emb.forward if first else EMPTY, emb.backward if first else EMPTY,
                                 0, False))
            if last:
                units.append(FsdpUnit("output layer", cm.pass_s(out.forward, self.B), cm.pass_s(out.backward, self.B),
                                      cm.host_s(0, 0.0, out.forward.calls),
                                      cm.host_s(0, 0.0, out.backward.calls)))
        return tuple(units)


def _divide_factors(world: int) -> tuple[float, float]:
    """FSDP's gradient pre- and post-division factors for ``world`` data-parallel ranks
    (``DefaultState._get_gradient_predivide_factor``: powers of two up to about sqrt(world))."""
    factor = 1
    while world % factor == 0 and world / factor > factor:
        factor *= 2
    return float(factor), world / factor


def _links_of_other_traffic(stages: list[StageWork]) -> set[int]:
    """Links crossed by anything but the TP collectives: pipeline sends and data-parallel jobs."""
    busy: set[int] = set()
    for st in stages:
        for link in (st.to_next, st.to_prev):
            if link:
                busy.update(l for r in link.routes for l in r)
        jobs = [j for ph in st.grad_sync for j in ph] + list(st.param_sync)
        jobs += [j for ch in st.chunks for j in ch.gather_forward + ch.gather_backward + ch.scatter_backward]
        jobs += [j for ch in st.chunks for u in ch.units for j in u.gather + u.scatter + u.reduce]
        for plan in {id(j.plan): j.plan for j in jobs}.values():       # units of one size share a plan
            busy.update(l for g in plan.groups for r in g.routes for l in r)
    return busy


@dataclass(frozen=True)
class TrainWork:
    """One iteration as plain data: every stage's work on the router's link ids, and what the
    summary needs."""

    stages: tuple[StageWork, ...]
    capacity_Bps: object               # per directed link of the router (numpy array)
    overhead_s: float                  # host time per iteration after the last stage ends
    hw_flops: float
    hybrid: int
    block_model_flops: float
    out_model_flops: float
    peak_flops: float
    host_floor_s: float = 0.0          # the busiest stage's host issue time under a host prior (.host_prior)
    nccl_version: NcclVersion = NCCL_CURRENT   # the NCCL its collectives are planned for (Planner.nccl_version)


def train_work(router: Router, model: TransformerSpec, config: TrainConfig, gpu: GpuSpec,
               params: Parameters | None = None, compute: ComputeParams | None = None,
               host_prior: HostPrior = HOST_PRIOR, nccl_version: NcclVersion | None = None) -> TrainWork:
    """Build one iteration of ``model`` trained with ``config`` (checked) on ``router``'s GPUs, with its host-issue
    floor under ``host_prior`` (:mod:`.host_prior`: every stage's passes issued by a host with the prior's block
    issue time where the compute set has none); its collectives as NCCL ``nccl_version`` runs them (None: the
    newest modelled)."""
    params = params or Parameters()
    cm = ComputeModel(gpu, config.dtype, compute or ComputeParams())
    floor_cm = ComputeModel(gpu, config.dtype, host_prior.on(cm.params))
    check_divisible(model, config)
    if model.layers < config.pp * config.chunks:
        raise InputError(f"{model.layers} layers cannot fill {config.pp} stages x {config.chunks} chunks",
                         field="--pp", value=config.pp)
    b = _Builder(router, params, model, config, cm, nccl_version)
    c, B = config, config.dtype_bytes
    block, emb, out = block_work(model, c), embedding_work(model, c), output_work(model, c)
    V = c.pp * c.chunks
    layers = stage_layers(model.layers, V)
    hybrid = b.place.hybrid_shard_group() if c.fsdp == "hybrid" else 1
    shard_p, shard_g, shard_o = dp_shard_sizes(c, hybrid)
    send_bytes = c.micro_batch * model.seq * model.hidden * B / c.tp
    sched = schedule(c.pp, c.microbatches, c.chunks)
    measured = cm.params.profile.lookup(gpu.name, model, c) if cm.params.profile else None
    stages: list[StageWork] = []
    hw_flops = host_floor = 0.0
    paces = RankPaces(c.dp, cm.params.fsdp_rank_cv, cm.params.fsdp_unit_cv) if c.fsdp else RankPaces()
    for s in range(c.pp):
        tp_ranks = b.place.tp_group(0, s)
        chunks = []
        stage_params = stage_issue = 0.0
        for ch in range(c.chunks):
            v = ch * c.pp + s
            n = layers[v]
            fwd, bwd, cparams = stage_chunk_work(model, c, v, n)
            stage_params += cparams
            stage_issue += c.microbatches * (floor_cm.host_s(n, block.host_ops(True), fwd.calls, c.tp)
                                             + floor_cm.host_s(n, block.host_ops(False), bwd.calls, c.tp))
            hw_flops += (fwd.flops + bwd.flops) * c.microbatches
            gather_f = gather_b = scatter_b = ()
            units: tuple[FsdpUnit, ...] = ()
            if c.fsdp:
                units = b.fsdp_units(s, v, n, block, emb, out, cparams)
            elif c.dp > 1 and c.shard_params:                  # ZeRO-3: a chunk's parameters at once
                groups = b.dp_groups(s)
                if len(groups[0]) > 1:
                    pbytes, gbytes = cparams * PARAM_BYTES, cparams * GRAD_BYTES    # whole (gathered) buffers
                    gather_f = gather_b = tuple(b.job("all_gather", g, pbytes, 1,
                                                        "all-gather") for g in groups)
                    scatter_b = tuple(b.job("reduce_scatter", g, gbytes, 1, "reduce-scatter")
                                      for g in groups)
            fjobs, bjobs = b.jobs(fwd.comm, tp_ranks), b.jobs(bwd.comm, tp_ranks)
            hidden = (b.alone_s(fjobs, tp_ranks), b.alone_s(bjobs, tp_ranks))
            if measured is not None:                   # the profile's pass, less its collectives alone
                last = v == V - 1
                fwd_s = max(0.0, chunk_total_s(measured, c, n, last, True) - hidden[0])
                bwd_s = max(0.0, chunk_total_s(measured, c, n, last, False) - hidden[1])
                host = (0.0, 0.0)
            else:                                      # kernels; the host's issue (pipeline_engine) may hold them
                fwd_s, bwd_s = cm.pass_s(fwd, B), cm.pass_s(bwd, B)
                host = (cm.host_s(n, block.host_ops(True), fwd.calls, c.tp),
                        cm.host_s(n, block.host_ops(False), bwd.calls, c.tp))
                if not cm.params.host_runs_ahead:     # the host waits for each pass: it starts as the pass does
                    fwd_s, bwd_s = cm.issue_s(fwd_s, host[0], hidden[0]), cm.issue_s(bwd_s, host[1], hidden[1])
                    host = (0.0, 0.0)
            accumulate = 0.0 if c.fsdp or c.shard_params else cm.accumulation_s(cparams)
            chunks.append(ChunkWork(fwd_s, bwd_s, fjobs, bjobs, send_bytes, gather_f, gather_b, scatter_b, units,
                                    *host, *hidden, accumulate))
        grad_sync: list[tuple[CollJob, ...]] = []
        param_sync: tuple[CollJob, ...] = ()
        if c.dp > 1:
            groups = b.dp_groups(s)
            gbytes = stage_params * GRAD_BYTES
            if c.fsdp:
                pass                                    # reduced unit by unit (fsdp_units)
            elif not c.shard_params:
                if c.zero in (1, 2):
                    grad_sync.append(tuple(b.job("reduce_scatter", g, gbytes, 1,
                                                   "reduce-scatter grads") for g in groups))
                    pbytes = stage_params * PARAM_BYTES
                    param_sync = tuple(b.job("all_gather", g, pbytes, 1,
                                               "all-gather params") for g in groups)
                else:
                    grad_sync.append(tuple(b.job("all_reduce", g, gbytes, 1,
                                                   "all-reduce grads") for g in groups))
        if c.pp > 1 and model.tied_embeddings and s in (0, c.pp - 1):
            ebytes = model.vocab * model.hidden / c.tp * GRAD_BYTES
            pairs = [(b.place.gpu(r, 0, 0), b.place.gpu(r, 0, c.pp - 1)) for r in range(c.tp)]
            grad_sync.append(tuple(b.job("all_reduce", p, ebytes, 1,
                                           "all-reduce tied embedding") for p in pairs))
        to_next = b.link(s, (s + 1) % c.pp, send_bytes) if (c.pp > 1 and (s < c.pp - 1 or c.chunks > 1)) else None
        to_prev = b.link(s, (s - 1) % c.pp, send_bytes) if (c.pp > 1 and (s > 0 or c.chunks > 1)) else None
        stages.append(StageWork(tuple(chunks), sched[s], to_next, to_prev, tuple(grad_sync),
                                cm.optimizer_s(stage_params / shard_o), param_sync, paces, cm.params.fsdp_steady))
        host_floor = max(host_floor, stage_issue)
    busy = _links_of_other_traffic(stages)
    for s, st in enumerate(stages):
        tp_ranks = b.place.tp_group(0, s)
        stages[s] = replace(st, chunks=tuple(replace(ch, forward_comm=b.isolate(ch.forward_comm, tp_ranks, busy),
                                                     backward_comm=b.isolate(ch.backward_comm, tp_ranks, busy))
                                             for ch in st.chunks))
    return TrainWork(tuple(stages), b.groups.capacity_Bps, cm.params.iteration_overhead_s, hw_flops, hybrid,
                     block.model_flops, out.model_flops, cm.peak_flops, host_floor, b.groups.planner.nccl_version)


def _rounded(part_s: float, iteration_s: float) -> float:
    """``part_s``, a difference of summed durations, as 0 where it is only their rounding (below 1e-9 of the
    iteration): the breakdown prints 0, not 1e-17 s, for a part that is not there (no bubble, no DP)."""
    return 0.0 if abs(part_s) < 1e-9 * iteration_s else part_s


def simulate_train(G_or_router: nx.Graph | PresetCluster | Router, model: TransformerSpec, config: TrainConfig, gpu: GpuSpec,
                   params: Parameters | None = None, compute: ComputeParams | None = None,
                   record: bool = True, parts: bool = False, host_prior: HostPrior = HOST_PRIOR,
                   nccl_version: NcclVersion | None = None) -> TrainResult:
    """Simulate one iteration of ``model`` trained with ``config`` on the topology's GPUs; ``parts`` adds each
    part's 90% interval (:mod:`.part_intervals`: a few closed-form interval lookups per collective);
    ``host_prior`` sets the host-issue floor (:mod:`.host_prior`); ``nccl_version`` the NCCL planned for
    (None: the newest modelled)."""
    router = router_for(G_or_router)
    w = train_work(router, model, config, gpu, params, compute, host_prior, nccl_version)
    c, hw_flops, hybrid = config, w.hw_flops, w.hybrid
    stages, capacity = compact(list(w.stages), w.capacity_Bps)
    times, records = simulate_pipeline(lambda env: ComponentFlowNetwork(env, capacity), stages, c.pp, record)
    crit = max(range(c.pp), key=lambda s: times[s].end_s)
    t = times[crit]
    overhead = w.overhead_s
    iteration = t.end_s + overhead
    bubble = _rounded(t.passes_end_s - t.compute_s - t.tp_comm_s - t.pp_comm_s - t.dp_wait_s, t.end_s)
    dp_exposed = max(0.0, _rounded(t.dp_wait_s + (t.grad_sync_end_s - t.passes_end_s)
                                   + (t.end_s - t.grad_sync_end_s - stages[crit].optimizer_s), t.end_s))
    tokens = c.global_batch * model.seq
    per_mb_model = model.layers * w.block_model_flops + w.out_model_flops
    model_flops = per_mb_model * c.tp * c.global_batch / c.micro_batch
    peak = w.peak_flops * c.gpus
    mem = memory_per_gpu(model, c, gpu.memory_bytes, hybrid)
    floor = w.host_floor_s + overhead
    result = TrainResult(model.name, c.gpus, c, iteration, t.compute_s, t.tp_comm_s, t.pp_comm_s, bubble, dp_exposed,
                         stages[crit].optimizer_s, overhead, model_flops / (iteration * peak),
                         hw_flops * c.tp * c.dp / (iteration * peak), tokens / iteration, mem, crit, gpu.name, records,
                         *train_interval(iteration, compute or ComputeParams(), gpu.name, floor),
                         iteration_extrapolated=train_caveats(compute or ComputeParams(), gpu.name, c.gpus),
                         fsdp_shard_group=(hybrid if c.fsdp == "hybrid" else c.dp) if c.fsdp else None,
                         host_floor_s=floor, nccl_version=str(w.nccl_version))
    if not parts:
        return result
    bounds, comm = part_intervals(router, params or Parameters(), w, result, compute or ComputeParams(),
                                  nccl_version)
    return replace(result, part_bounds=tuple((p, lo, hi) for p, (lo, hi) in bounds.items()),
                   parts_extrapolated=compute_caveats(compute or ComputeParams(), gpu.name) if bounds else (),
                   comm_extrapolated=comm)
