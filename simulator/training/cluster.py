"""Shared clusters: several training jobs placed on one fabric, each one's slowdown and its cause.

A job is a DDP training configuration (:class:`DDPJob`), a loop of one collective with optional
compute between calls (:class:`CollectiveJob`, an nccl-tests-like load) or an LLM training job
with tensor, pipeline and data parallelism (:class:`TrainJob`, :mod:`simulator.training.llm`:
its whole iteration, every stage's passes, TP collectives, pipeline sends and data-parallel
collectives, runs on the shared fabric), placed on whole servers
(:mod:`simulator.training.placement`). Each job is planned on its own servers as if it were the
only job (the cluster's router restricted to its servers, :meth:`topologies.routing.Router.for_hosts`:
NCCL's tuner sees only its own ranks, routes keep the whole cluster's link ids; a preset cluster is
its tables, no graph), so that the discrete-event run (:mod:`simulator.training.cluster_engine`)
makes collectives of different jobs share links max-min fairly.

:func:`simulate_cluster` runs every job three ways, with the same straggler draws (one seeded
generator per job, ``numpy.random.default_rng([seed, job])``):

* ``healthy_s``: alone on the cluster, no stragglers, no degraded or flapping links;
* ``alone_s``: alone, with its stragglers and the degraded and flapping links;
* ``shared_s``: all jobs together;

``slowdown = shared_s / alone_s`` is what sharing costs; ``alone_s / healthy_s`` what
imperfection costs. A job's *contended links* are the links it crosses that were saturated while
two or more jobs crossed them, ranked by how long (``contended_s``), with their utilisation over
the run (bytes moved / (capacity x run time)).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from simulator.collectives.params import Parameters
from simulator.collectives.plans import Plan
from simulator.core.errors import InputError
from simulator.network.closed_form import CostModel, call_time_s
from simulator.network.fairness import max_min_rates
from simulator.training.cluster_engine import Flap, JobProgram, SharedRun, simulate_jobs
from simulator.training.cluster_intervals import healthy_interval, scaled
from simulator.training.ddp import DDPConfig, comm_jobs
from simulator.training.ddp_jobs import CommJob
from simulator.training.gpus import GpuSpec
from simulator.training.llm.compute import ComputeParams
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.model import TransformerSpec
from simulator.training.placement import leaf_groups
from simulator.training.stragglers import StragglerModel, expected_max
from simulator.training.workload import Workload
from topologies.routing import Router, router_for

if TYPE_CHECKING:
    import networkx as nx

    from topologies.preset_cluster import PresetCluster


@dataclass(frozen=True)
class DDPJob:
    """A PyTorch DDP training job (one iteration per step, see :mod:`simulator.training.ddp`)."""

    name: str
    workload: Workload
    config: DDPConfig = DDPConfig()
    start_s: float = 0.0


@dataclass(frozen=True)
class CollectiveJob:
    """A job that repeats ``compute_s`` of compute then one collective of ``size_bytes``.
    Both kinds start their first iteration at ``start_s``."""

    name: str
    op: str = "all_reduce"
    size_bytes: int = 1 << 30
    algo: str = "auto"
    proto: str = "auto"
    compute_s: float = 0.0
    start_s: float = 0.0


@dataclass(frozen=True)
class TrainJob:
    """An LLM training job (``gpunetsim train``): ``config.gpus`` must be the GPUs of its servers."""

    name: str
    model: TransformerSpec
    config: TrainConfig
    gpu: GpuSpec
    compute: ComputeParams = ComputeParams()
    start_s: float = 0.0


Job = DDPJob | CollectiveJob | TrainJob


@dataclass(frozen=True)
class LinkShare:
    """A directed link (or several with identical figures) as one job sees it in the shared run."""

    links: tuple[int, ...]        # directed link ids with the same figures (e.g. one per rail)
    name: str                      # "a->b", or a pattern "leaf.g0.r*->spine" for several
    kind: str                      # nvlink, pcie, socket, net
    contended_s: float             # saturated while two or more jobs crossed it
    utilisation: float             # bytes moved by all jobs / (capacity * run time)
    jobs: tuple[str, ...]          # jobs that moved bytes over it


@dataclass(frozen=True)
class JobResult:
    """One job on the shared cluster: mean iteration times (seconds) and the links that slowed it."""

    name: str
    hosts: tuple[int, ...]
    gpus: int
    healthy_s: float
    alone_s: float
    shared_s: float
    straggler_factor: float        # mean compute multiplier drawn over the counted iterations
    links: tuple[LinkShare, ...]
    straggler_expected: float = 1.0  # its expectation E[max over the job's ranks] (integral)
    healthy_lo_s: float | None = None  # 90% intervals (simulator.training.cluster_intervals)
    healthy_hi_s: float | None = None
    alone_lo_s: float | None = None
    alone_hi_s: float | None = None
    shared_lo_s: float | None = None
    shared_hi_s: float | None = None

    @property
    def slowdown(self) -> float:
        return self.shared_s / self.alone_s if self.alone_s > 0 else 1.0

    def as_dict(self) -> dict:
        return {"name": self.name, "hosts": list(self.hosts), "gpus": self.gpus, "healthy_s": self.healthy_s,
                "healthy_lo_s": self.healthy_lo_s, "healthy_hi_s": self.healthy_hi_s,
                "alone_s": self.alone_s, "alone_lo_s": self.alone_lo_s, "alone_hi_s": self.alone_hi_s,
                "shared_s": self.shared_s, "shared_lo_s": self.shared_lo_s, "shared_hi_s": self.shared_hi_s,
                "slowdown": self.slowdown,
                "straggler_factor": self.straggler_factor, "straggler_expected": self.straggler_expected,
                "links": [{"name": l.name, "ids": list(l.links), "kind": l.kind, "contended_s": l.contended_s,
                           "utilisation": l.utilisation, "jobs": list(l.jobs)} for l in self.links]}


@dataclass(frozen=True)
class ClusterResult:
    jobs: tuple[JobResult, ...]
    iterations: int
    window_s: float                 # simulated time of the shared run

    def as_dict(self) -> dict:
        return {"iterations": self.iterations, "window_s": self.window_s, "jobs": [j.as_dict() for j in self.jobs]}


# ------------------------------------------------------------------------------ planning
def job_graph(G: nx.Graph, hosts: Sequence[int]) -> nx.Graph:
    """The cluster restricted to ``hosts`` and the fabric switches (what one job's NCCL sees), as a
    graph; jobs are planned on ``Router.for_hosts``, which gives the same routes without one (tests
    compare the two)."""
    keep = set(hosts)
    nodes = [n for n, d in G.nodes(data=True) if d.get("host", -1) in keep or d.get("host", -1) < 0]
    H = G.subgraph(nodes).copy()
    H.graph["hosts"] = len(keep)
    return H


def program(cluster: Router, params: Parameters, job: Job, hosts: Sequence[int],
            model: CostModel | None = None) -> JobProgram:
    """One job's iteration as plain data on ``cluster``'s link ids, planned on the job's own view
    of the cluster (:meth:`Router.for_hosts`: its servers' GPUs; the routes and link ids are the
    cluster's, so its plans need no mapping); ``model``: that view's cost model, if already built."""
    model = model or CostModel(cluster.for_hosts(hosts), params)
    if isinstance(job, DDPJob):
        w, k = job.workload, job.config.accumulation_steps
        comm = tuple(comm_jobs(model, w, job.config))
        return JobProgram(job.name, (k - 1) * (w.forward_s + w.backward_s) + w.forward_s, w.backward_s, comm,
                          w.optimizer_s, params["ddp.iteration_overhead_s"], params["ddp.compute_slowdown"],
                          job.start_s)
    if isinstance(job, TrainJob):
        return _train_program(model, job)
    if model.ranks < 2:
        raise InputError("a collective job needs at least 2 GPUs", field=f"jobs.{job.name}.nodes", value=len(hosts))
    t, algo, proto = model.best(job.op, job.size_bytes, job.algo, job.proto)
    plan = model.shape(job.op, algo, proto).plan
    name = f"{job.op} {algo}/{proto}"
    return JobProgram(job.name, job.compute_s, 0.0, (CommJob(0, 0.0, 0.0, job.size_bytes, plan, float(t), name),), 0.0,
                      start_s=job.start_s)


def _train_program(model: CostModel, job: TrainJob) -> JobProgram:
    """An LLM job's iteration on the cluster's link ids. Its TP collectives that no other traffic
    of the job crosses are closed-form timeouts (as in ``gpunetsim train``) only while their links
    stay inside its servers; one that reaches a switch is simulated, since other jobs may cross it."""
    from simulator.training.llm.iteration import train_work
    router = model.router
    if len(router.gpus) != job.config.gpus:
        raise InputError(f"tp x pp x dp = {job.config.gpus} GPUs, but the job's servers have {len(router.gpus)}",
                         field=f"jobs.{job.name}.dp", value=job.config.dp)
    w = train_work(router, job.model, job.config, job.gpu, model.params, job.compute)
    fabric = [router.host_of(a) < 0 or router.host_of(b) < 0 for a, b in router.link_names]   # touches a switch

    def exposed(j):
        if j.isolated_s is None or not any(fabric[l] for g in j.plan.groups for r in g.routes for l in r):
            return j
        return replace(j, isolated_s=None)
    stages = tuple(replace(st, chunks=tuple(replace(c, forward_comm=tuple(map(exposed, c.forward_comm)),
                                                    backward_comm=tuple(map(exposed, c.backward_comm)))
                                            for c in st.chunks)) for st in w.stages)
    return JobProgram(job.name, 0.0, 0.0, (), 0.0, w.overhead_s, start_s=job.start_s, pipeline=stages,
                      host_floor_s=w.host_floor_s + w.overhead_s)


def fair_share_times(capacity_Bps: np.ndarray, plans: Sequence[tuple[Plan, int]]) -> list[float]:
    """Closed form of collectives that run at the same time, each once: job j's time is
    closed_form.call_time_s of ``alpha_j`` and ``beta_j = max_g(bytes_per_byte_g / r_g)`` with the max-min
    fair rates ``r`` of all jobs' groups together (the host's issue overlapping the GPU work as in a
    stream of calls; exact while every job is transferring, i.e. for identical jobs)."""
    ug, ul, uc, caps, owner = [], [], [], [], []
    for j, (plan, size) in enumerate(plans):
        for g, cap in zip(plan.groups, plan.rate_caps(size)):
            ug.append(np.full(len(g.uses), len(caps)))
            ul.append(g.uses.links)
            uc.append(g.uses.counts)
            caps.append(cap)
            owner.append(j)
    rates = max_min_rates(np.concatenate(ug), np.concatenate(ul), np.concatenate(uc), capacity_Bps,
                          np.array(caps)) if caps else np.zeros(0)
    out = []
    for j, (plan, size) in enumerate(plans):
        beta = max((g.bytes_per_byte / rates[i] for i, g in
                    zip([i for i, o in enumerate(owner) if o == j], plan.groups)), default=0.0)
        out.append(call_time_s(plan.call_overhead_s + plan.latency_s, beta + plan.local_s_per_byte, beta,
                               plan.costed_bytes(size), plan.pad_bytes(size), plan.chunk_overhead_s(size), plan.host_s))
    return out


def job_components(topology: nx.Graph | PresetCluster | Router, hosts: Sequence[int]):
    """What can fail under a job on ``hosts``: its GPUs, servers, NICs and the fabric switches its
    NICs reach (their leaves, and the spine when its servers span several leaf groups):
    :class:`simulator.training.goodput.Components`."""
    from simulator.training.goodput import Components
    router = router_for(topology)
    keep = set(hosts)
    gpus = sum(1 for g in router.gpus if router.host_of(g) in keep)
    nics = [n for h in sorted(keep) for n in router.host_nodes(h, "nic")]
    leaves = {m for n in nics for m, _, _ in router.neighbors(n) if router.node_kind(m) == "leaf"}
    groups = leaf_groups(router)
    spans = len({groups[h] for h in keep if h in groups}) > 1
    spine = {b for a, b in router.link_names if a in leaves and router.node_kind(b) == "spine"} if spans else set()
    return Components(gpus, len(keep), len(nics), len(leaves) + len(spine))


# ------------------------------------------------------------------------------ running
def capacities(cluster: Router, params: Parameters,
               degraded: Mapping[tuple[str, str], float] | None = None) -> np.ndarray:
    """Usable capacity per directed link (datasheet x link efficiency x fraction left, for the
    degraded links: directed (node, node) pairs)."""
    cap = np.array(params.achievable_Bps(cluster.capacity_Bps, cluster.kind))
    for pair, fraction in (degraded or {}).items():
        if pair not in cluster.link_id:
            raise InputError("no such link in the topology", field="degraded_links", value=f"{pair[0]} -> {pair[1]}")
        if not 0 < fraction <= 1:
            raise InputError("the fraction of bandwidth left must be in (0, 1]", field="degraded_links",
                             value=fraction)
        cap[cluster.link_id[pair]] *= fraction
    return cap


@dataclass(frozen=True)
class LinkFlap:
    """Directed links (node pairs) at ``fraction`` of their bandwidth for ``duty`` of every
    ``period_s`` seconds, starting degraded at time 0 (a flapping cable or port)."""

    pairs: tuple[tuple[str, str], ...]
    fraction: float
    period_s: float
    duty: float = 0.5

    def on(self, cluster: Router) -> Flap:
        if not (0 < self.fraction <= 1 and 0 < self.duty < 1 and 0 < self.period_s < math.inf):
            raise InputError("a flapping link needs 0 < fraction <= 1, 0 < duty < 1 and a positive period",
                             field="degraded_links", value=(self.fraction, self.duty, self.period_s))
        for pair in self.pairs:
            if pair not in cluster.link_id:
                raise InputError("no such link in the topology", field="degraded_links",
                                 value=f"{pair[0]} -> {pair[1]}")
        return Flap(tuple(cluster.link_id[p] for p in self.pairs), self.fraction, self.period_s,
                    self.period_s * self.duty)


def _factors(stragglers: StragglerModel | None, seed: int, cluster: Router, hosts_of: Sequence[Sequence[int]]):
    """One fresh straggler source per job (a function per job), seeded by ``[seed, job]``."""
    if stragglers is None or not stragglers.active:
        return [lambda: 1.0 for _ in hosts_of]
    out = []
    for j, hosts in enumerate(hosts_of):
        hs = set(hosts)
        gpus = [g for g in cluster.gpus if cluster.host_of(g) in hs]
        out.append(stragglers.sampler(np.random.default_rng([seed, j]), stragglers.scales(gpus)))
    return out


def _recording(f):
    seen: list[float] = []

    def g() -> float:
        v = f()
        seen.append(v)
        return v
    return g, seen


def simulate_cluster(topology: nx.Graph | PresetCluster | Router, jobs: Sequence[Job],
                     hosts_of: Sequence[Sequence[int]],
                     params: Parameters | None = None, *, iterations: int = 3,
                     stragglers: StragglerModel | None = None,
                     degraded: Mapping[tuple[str, str], float] | None = None,
                     flapping: Sequence[LinkFlap] = (), seed: int = 0, top_links: int = 3) -> ClusterResult:
    """Simulate ``jobs`` (on servers ``hosts_of``) alone and together; see the module docstring.
    ``degraded``: directed link (node, node) -> fraction of its bandwidth left; ``flapping``:
    links that are degraded part of the time (on top of ``degraded``)."""
    if iterations < 1:
        raise InputError("iterations must be at least 1", field="iterations", value=iterations)
    params = params or Parameters()
    cluster = router_for(topology)
    models = [CostModel(cluster.for_hosts(h), params) for h in hosts_of]
    programs = [program(cluster, params, j, h, m) for j, h, m in zip(jobs, hosts_of, models)]
    healthy_cap = capacities(cluster, params)
    cap = capacities(cluster, params, degraded)
    flaps = [f.on(cluster) for f in flapping]
    imperfect = bool(degraded) or bool(flaps) or (stragglers is not None and stragglers.active)
    recorded = [_recording(f) for f in _factors(stragglers, seed, cluster, hosts_of)]
    shared = simulate_jobs(cap, programs, iterations, [r[0] for r in recorded], flaps)
    names = [p.name for p in programs]
    results = []
    for j, (job, hosts) in enumerate(zip(jobs, hosts_of)):
        counted = len(shared.ends_s[j])         # alone runs cover as many iterations, same draws
        healthy = simulate_jobs(healthy_cap, [programs[j]], counted).mean_iteration_s(0)
        alone = healthy
        if imperfect:
            alone = simulate_jobs(cap, [programs[j]], counted, [_factors(stragglers, seed, cluster, hosts_of)[j]],
                                  flaps).mean_iteration_s(0)
        drawn = recorded[j][1][:counted]
        gpus = [g for g in cluster.gpus if cluster.host_of(g) in set(hosts)]
        expected = expected_max(stragglers, stragglers.scales(gpus)) if stragglers is not None else 1.0
        together = shared.mean_iteration_s(j)
        bounds = healthy_interval(models[j], job, programs[j], healthy)
        results.append(JobResult(job.name, tuple(hosts), len(gpus), healthy, alone, together,
                                 float(np.mean(drawn)) if drawn else 1.0,
                                 _contended_links(cluster, cap, shared, j, names, top_links), expected,
                                 *scaled(healthy, healthy, bounds), *scaled(alone, healthy, bounds),
                                 *scaled(together, healthy, bounds)))
    return ClusterResult(tuple(results), iterations, shared.window_s)


def _pattern(names: Sequence[str]) -> str:
    """One name for links whose names differ only in numbers: leaf.g0.r0->spine, leaf.g0.r1->spine
    -> leaf.g0.r*->spine."""
    parts = [re.split(r"(\d+)", n) for n in names]
    return "".join(p if all(q[i] == p for q in parts) else "*" for i, p in enumerate(parts[0]))


def _contended_links(cluster: Router, cap: np.ndarray, run: SharedRun, job: int, names: Sequence[str],
                     top: int) -> tuple[LinkShare, ...]:
    """The job's links saturated while shared, longest first; links with the same figures and
    users (e.g. every rail's uplink of one leaf group) are listed once, as a name pattern."""
    mine = np.flatnonzero((run.link_bytes[job] > 0) & (run.contended_s > 0))
    groups: dict[tuple, list[int]] = {}
    for l in mine[np.lexsort((mine, -run.contended_s[mine]))]:
        users = tuple(names[k] for k in np.flatnonzero(run.link_bytes[:, l] > 0))
        util = float(run.link_bytes[:, l].sum() / (cap[l] * run.window_s)) if run.window_s > 0 else 0.0
        a, b = cluster.link_names[l]
        shape = re.sub(r"\d+", "#", f"{a}->{b}")          # links differing only in numbers may merge
        key = (round(float(run.contended_s[l]), 12), round(util, 6), users, cluster.kind[l], shape)
        groups.setdefault(key, []).append(int(l))
    out = []
    for (contended, util, users, kind, _), links in list(groups.items())[:top]:
        label = _pattern([f"{cluster.link_names[l][0]}->{cluster.link_names[l][1]}" for l in links])
        out.append(LinkShare(tuple(links), label, kind, contended, util, users))
    return tuple(out)
