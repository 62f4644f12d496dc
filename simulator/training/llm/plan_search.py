"""Plan search: the fastest (or cheapest) parallel plan for a model on candidate clusters
(``gpunetsim search``; the public API is :mod:`gpunetsim.search`).

Phases (each plain data, testable alone):

1. **enumerate** every valid plan of :class:`~simulator.training.llm.search_space.SearchSpace` on
   every cluster (:func:`~simulator.training.llm.search_space.enumerate_plans`);
2. **prune by memory**: plans whose most loaded stage does not fit the GPU are never simulated
   (:func:`~simulator.training.llm.memory.memory_per_gpu`);
3. **order by a lower bound** (:class:`~simulator.training.llm.plan_bound.PlanBound`: kernels,
   and communication alone on the idle network) and simulate in fixed waves (default :data:`WAVE`
   plans); before each wave, plans whose bound (in the objective: seconds or dollars per
   iteration) already exceeds the ``top``-th best simulated plan are skipped. The waves do not depend on the number of workers, so any executor
   (a local process pool, Dask) gives identical results;
4. **rank** by the objective and describe each plan (training time and GPU-hours for the token
   budget, cost, MFU, memory headroom, the largest term of its iteration).
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace

from simulator.collectives.params import Parameters
from simulator.core.errors import InputError
from simulator.core.limits import check_count
from simulator.core.vocabulary import NcclVersion
from simulator.training.gpus import get_gpu, gpu_for_model
from simulator.training.llm.comm_floor import CommFloor
from simulator.training.llm.compute import ComputeModel, ComputeParams
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.memory import memory_per_gpu
from simulator.training.llm.model import TransformerSpec
from simulator.training.llm.placement import Placement
from simulator.training.llm.plan_bound import PlanBound
from simulator.training.llm.search_space import SearchSpace, enumerate_plans

WAVE = 8
"""Plans simulated between two updates of the pruning threshold (independent of the workers)."""
LIMITS = ("compute", "TP comm", "PP sends", "bubble", "DP exposed")


@dataclass(frozen=True)
class Cluster:
    """A candidate cluster: a topology preset (or file) with ``gpus`` GPUs; price per GPU-hour."""

    topology: str
    gpus: int
    nodes: int
    gpus_per_node: int
    gpu: str
    price_per_gpu_h: float | None = None
    nic_Bps: float | None = None           # None: the preset's NIC bandwidth
    oversubscription: float = 1.0

    @property
    def label(self) -> str:
        extra = (f", NIC {self.nic_Bps / 1e9:g} GB/s" if self.nic_Bps else "") + \
                (f", {self.oversubscription:g}:1" if self.oversubscription != 1.0 else "")
        return f"{self.topology} x{self.nodes}{extra}"

    def build(self):
        import topologies
        fabric = replace(topologies.FabricSpec.from_options("rail", "ib", None, None, self.oversubscription, 32),
                         nic_Bps=self.nic_Bps)
        per = self.gpus_per_node if self.nodes == 1 else None
        return topologies.build(self.topology, nodes=self.nodes, gpus_per_node=per, fabric=fabric)


def make_cluster(topology: str, gpus: int, prices: dict[str, float] | None = None, nic_Bps: float | None = None,
                 oversubscription: float = 1.0) -> Cluster:
    """The cluster of ``gpus`` GPUs of ``topology``: whole servers, or part of one server."""
    import topologies
    check_count(gpus, field="--gpus", words="must be a positive integer")
    G = topologies.build(topology)
    per = int(G.graph.get("gpus_per_host") or len(topologies.gpus(G)))
    if gpus % per and gpus > per:
        raise InputError(f"{topology} has {per} GPUs per server: give a multiple of {per} (or fewer)",
                         field="--gpus", value=gpus)
    if topology not in topologies.SERVERS and gpus != len(topologies.gpus(G)):
        raise InputError(f"the topology file has {len(topologies.gpus(G))} GPUs", field="--gpus", value=gpus)
    try:
        gpu = get_gpu(gpu_for_model(str(G.graph.get("gpu_model", "")))).name
    except InputError:              # search has no --gpu: the topology must say which GPU it has
        raise InputError(f"{topology}'s GPUs ({G.graph.get('gpu_model', '')!r}) are none of the catalog's: give a "
                         "server preset or a topology file whose gpu_model names one (h100, a100, ...)",
                         field="--topology", value=topology) from None
    price = None
    if prices:
        key = next((k for k in prices if get_gpu(k).name == gpu), None)
        price = prices[key] if key is not None else None
    return Cluster(topology, gpus, max(1, gpus // per), min(gpus, per), gpu, price, nic_Bps, oversubscription)


@dataclass(frozen=True)
class PlanResult:
    """One simulated plan on one cluster, with what the token budget makes of it."""

    cluster: Cluster
    config: TrainConfig
    result: dict                     # TrainResult.as_dict()
    tokens: float

    @property
    def iteration_s(self) -> float:
        return self.result["iteration_s"]

    @property
    def training_s(self) -> float:
        return self.tokens / self.result["tokens_per_s"]

    @property
    def gpu_hours(self) -> float:
        return self.training_s * self.cluster.gpus / 3600

    @property
    def cost(self) -> float | None:
        p = self.cluster.price_per_gpu_h
        return None if p is None else self.gpu_hours * p

    @property
    def headroom_bytes(self) -> float:
        return self.result["memory_capacity_bytes"] - self.result["memory_bytes"]["total"]

    @property
    def limiter(self) -> str:
        """The largest term of the iteration: compute, TP comm, PP sends, bubble or DP exposed."""
        r = self.result
        terms = (r["compute_s"], r["tp_comm_s"], r["pp_comm_s"], r["pp_bubble_s"], r["dp_comm_exposed_s"])
        return LIMITS[max(range(len(terms)), key=lambda i: terms[i])]

    def scaled(self, value: float | None, end: str) -> float | None:
        """``value`` (training time, GPU-hours, cost: proportional to the iteration) at the iteration's 90%
        interval end ``end`` ('lo' or 'hi'); None without an interval."""
        t = self.result.get(f"iteration_{end}_s")
        return None if t is None or value is None else value * t / self.iteration_s

    def as_dict(self) -> dict:
        """The JSON row; training time, GPU-hours and cost with the iteration's 90% interval (the same ratio)."""
        bounds = {f"{k}_{e}{'_s' if k == 'training' else ''}": self.scaled(v, e)
                  for k, v in (("training", self.training_s), ("gpu_hours", self.gpu_hours), ("cost", self.cost))
                  for e in ("lo", "hi")}
        return {"topology": self.cluster.topology, "nodes": self.cluster.nodes, "cluster": self.cluster.label,
                **self.result, "tokens": self.tokens, "training_s": self.training_s,
                "gpu_hours": self.gpu_hours, "price_per_gpu_h": self.cluster.price_per_gpu_h, "cost": self.cost,
                **bounds, "memory_headroom_bytes": self.headroom_bytes, "limiter": self.limiter}


@dataclass
class SearchOutcome:
    """Ranked plans and what the search did (counts per phase)."""

    plans: list[PlanResult]
    simulated_plans: list[PlanResult] = field(default_factory=list)      # every one, in simulation order
    enumerated: int = 0
    no_fit: int = 0
    pruned: int = 0
    simulated: int = 0
    objective: str = "time"
    errors: list[str] = field(default_factory=list)


def objective_of(plan_s: float, cluster: Cluster, objective: str) -> float:
    """Seconds per iteration (``time``) or dollars per iteration (``cost``)."""
    if objective == "time":
        return plan_s
    assert cluster.price_per_gpu_h is not None
    return plan_s * cluster.gpus * cluster.price_per_gpu_h / 3600


class ClusterSimulator:
    """Simulates plans on clusters; builds each cluster's routes once and keeps them."""

    def __init__(self, model: TransformerSpec, params: Parameters, compute: ComputeParams,
                 nccl_version: NcclVersion | None = None) -> None:
        """``nccl_version``: the NCCL every plan's collectives are planned for (None: the newest modelled)."""
        self.model, self.params, self.compute, self.nccl_version = model, params, compute, nccl_version
        self._routers: dict[Cluster, object] = {}
        self._floors: dict[Cluster, CommFloor] = {}
        self._bounds: dict[tuple[str, str], PlanBound] = {}

    def router(self, cluster: Cluster):
        if cluster not in self._routers:
            from topologies.routing import Router
            self._routers[cluster] = Router(cluster.build())
        return self._routers[cluster]

    def comm_floor(self, cluster: Cluster) -> CommFloor:
        """The cluster's closed-form communication floor (for the lower bound), kept like its routes."""
        if cluster not in self._floors:
            self._floors[cluster] = CommFloor(self.router(cluster), self.params, self.nccl_version)
        return self._floors[cluster]

    def bound(self, gpu: str, dtype: str) -> PlanBound:
        """The lower bound of plans on ``gpu`` in ``dtype``, kept with its kernel times per plan shape."""
        key = (gpu, dtype)
        if key not in self._bounds:
            self._bounds[key] = PlanBound(self.model, ComputeModel(get_gpu(gpu), dtype, self.compute))
        return self._bounds[key]

    def simulate(self, cluster: Cluster, config: TrainConfig) -> dict:
        from simulator.training.llm.iteration import simulate_train
        r = simulate_train(self.router(cluster), self.model, config, get_gpu(cluster.gpu), self.params,
                           self.compute, record=False, nccl_version=self.nccl_version)
        return r.as_dict()


_WORKER: ClusterSimulator | None = None      # one per worker process (local pool or Dask worker)


def _simulate_in_worker(model: TransformerSpec, params_items: tuple, compute: ComputeParams,
                        cluster: Cluster, config: TrainConfig, nccl_version: NcclVersion | None = None) -> dict:
    """``params_items``: (name, values as (key, value) pairs, NCCL release), as Parameters' mapping does not pickle."""
    global _WORKER
    params = Parameters(dict(params_items[1]), params_items[0], nccl_version=params_items[2])
    w = _WORKER
    if w is None or (w.model, w.params, w.compute, w.nccl_version) != (model, params, compute, nccl_version):
        w = _WORKER = ClusterSimulator(model, params, compute, nccl_version)
    return w.simulate(cluster, config)


def _simulate_with(sim: ClusterSimulator, cluster: Cluster, config: TrainConfig) -> dict:
    return sim.simulate(cluster, config)


def candidates(sim: ClusterSimulator, clusters: list[Cluster], global_batch: int, space: SearchSpace,
               objective: str, outcome: SearchOutcome) -> list[tuple[float, int, Cluster, TrainConfig]]:
    """Plans that fit, each with its objective's lower bound, best bound first (ties: enumeration order)."""
    out = []
    model = sim.model
    for cluster in clusters:
        gpu = get_gpu(cluster.gpu)
        bound, floor = sim.bound(cluster.gpu, space.dtype), sim.comm_floor(cluster)
        for c in enumerate_plans(model, cluster.gpus, global_batch, space):
            hybrid = Placement.uniform(c, cluster.gpus_per_node).hybrid_shard_group() if c.fsdp == "hybrid" else 1
            if c.fsdp == "hybrid" and hybrid < 2:
                continue            # one-rank shard groups shard nothing (torch FSDP runs NO_SHARD): not a plan
            outcome.enumerated += 1
            if not memory_per_gpu(model, c, gpu.memory_bytes, hybrid).fits:
                outcome.no_fit += 1
                continue
            lb = objective_of(bound.iteration_s(c, floor), cluster, objective)
            out.append((lb, len(out), cluster, c))
    out.sort(key=lambda x: (x[0], x[1]))
    return out


def search(model: TransformerSpec, clusters: list[Cluster], global_batch: int, *, tokens: float = 1e12,
           space: SearchSpace = SearchSpace(), objective: str = "time", top: int = 20,
           params: Parameters | None = None, compute: ComputeParams | None = None,
           executor: Executor | None = None, wave: int = WAVE,
           simulator: ClusterSimulator | None = None, nccl_version: NcclVersion | None = None) -> SearchOutcome:
    """Rank the plans of ``space`` on ``clusters`` by ``objective`` (``time`` or ``cost``).

    ``executor``: where simulations run (``gpunetsim.search.worker_pool``, a Dask client's
    ``get_executor()``, any ``concurrent.futures.Executor``); None runs them here, one after another.
    ``wave``: plans simulated between two updates of the pruning threshold (the result depends on
    it, never on the executor; 1 simulates fewest plans, larger waves keep more workers busy).
    ``simulator``: a :class:`ClusterSimulator` of the same model and parameters to reuse (its
    routes and communication floors), e.g. across the searches of a scaling study. ``nccl_version``: the NCCL
    planned for (None: the newest modelled).
    """
    if objective not in ("time", "cost"):
        raise InputError("expected time or cost", field="--objective", value=objective)
    if objective == "cost":
        for c in clusters:
            if c.price_per_gpu_h is None:
                raise InputError(f"--objective cost needs a price for {c.gpu}", field="--price", value=c.gpu)
    check_count(top, field="--top", words="must be a positive integer")
    if not (isinstance(tokens, (int, float)) and tokens > 0 and math.isfinite(tokens)):
        raise InputError("must be a positive number", field="--tokens", value=tokens)
    check_count(wave, field="wave", words="must be a positive integer")
    check_count(global_batch, field="--global-batch", words="must be a positive integer")
    params, compute = params or Parameters(), compute or ComputeParams()
    local = simulator
    if local is None or (local.model, local.params, local.compute, local.nccl_version) != \
            (model, params, compute, nccl_version):
        local = ClusterSimulator(model, params, compute, nccl_version)
    outcome = SearchOutcome([], objective=objective)
    queue = candidates(local, clusters, global_batch, space, objective, outcome)
    done: list[tuple[float, int, PlanResult]] = []
    for start in range(0, len(queue), wave):
        best = sorted(v for v, _, _ in done)
        threshold = best[top - 1] if len(best) >= top else math.inf
        batch = [q for q in queue[start:start + wave] if q[0] <= threshold * (1 + 1e-9)]   # rounding: keep ties
        outcome.pruned += min(wave, len(queue) - start) - len(batch)
        if not batch:
            continue
        if executor is None:
            results = [_simulate_with(local, cl, c) for _, _, cl, c in batch]
        else:
            items = (params.name, params.values_key, params.nccl_version)
            futures = [executor.submit(_simulate_in_worker, model, items, compute, cl, c, nccl_version)
                       for _, _, cl, c in batch]
            results = [f.result() for f in futures]
        for (_, i, cl, c), r in zip(batch, results):
            outcome.simulated += 1
            done.append((objective_of(r["iteration_s"], cl, objective), i, PlanResult(cl, c, r, tokens)))
    outcome.simulated_plans = [p for _, _, p in done]
    done.sort(key=lambda x: (x[0], x[1]))
    outcome.plans = [p for _, _, p in done[:top]]
    return outcome
