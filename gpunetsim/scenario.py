"""Shared-cluster scenario files: a cluster, the jobs placed on it, stragglers, degraded links.

A scenario file (YAML or JSON; sizes, times and bandwidths with units)::

    name: two-teams
    topology: dgx-h100            # preset (with nodes, fabric, ...) or a topology file
    nodes: 8
    oversubscription: 4
    hosts_per_leaf: 4
    placement: {policy: spread}   # packed (default), spread, random (with seed)
    iterations: 3                 # iterations counted per job
    seed: 0                       # straggler draws and random placement
    nccl_version: "2.21"          # the NCCL planned for, quoted (default: the calibration's, else the newest)
    jobs:
      - {name: llm, workload: gpt2, nodes: 4, bucket_cap_mb: 25}        # a DDP job
      - {name: sweep, collective: all_reduce, size: 1 GiB, nodes: 4}     # a collective loop
      - {name: pinned, workload: resnet50, node_list: [6, 7]}             # explicit servers
      - {name: lm, train: llama-3-8b, tp: 8, pp: 2, global_batch: 64, nodes: 4}  # an LLM job
    stragglers: {distribution: lognormal, cv: 0.05, slow_gpus: {h3.gpu2: 1.3}}
    degraded_links: [{link: "leaf.g0.r0 - spine", fraction: 0.5},        # "a -> b": one direction
                     {link: "h2.nic1 - leaf.g0.r1", fraction: 0.1, period: 20 ms, duty: 0.3}]  # flapping
    failures: {mtbf_gpu: 50000 h, mtbf_node: 100000 h, checkpoint: 1 min, restart: 5 min}
    run: 30 d                     # training work per job, for the goodput under failures

:func:`load_scenario` validates everything up front (an :class:`InputError` names the file, the
field path and the value) and returns a :class:`Scenario` of plain data; :func:`run_scenario`
simulates it (:func:`simulator.training.cluster.simulate_cluster`). Built-in scenarios (by name,
e.g. ``shared-spine``) live in ``gpunetsim/scenarios/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpunetsim.train_study import TRAIN_AXES, ZeroStage
from simulator.core.config import Bandwidth, BucketMiB, Count, Index, Seed, Switch, checked, validate
from simulator.core.errors import InputError
from simulator.core.inputs import names_a_file
from simulator.core.values import repeated
from topologies.preset_cluster import PresetCluster
from topologies.routing import Router, router_for

if TYPE_CHECKING:
    import networkx as nx

    from simulator.collectives.params import Parameters
    from simulator.training.cluster import ClusterResult, Job, LinkFlap
    from simulator.training.goodput import FailureSpec
    from simulator.training.stragglers import StragglerModel

SCENARIOS_DIR = Path(__file__).resolve().parent / "scenarios"

_Frac = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JobSpec(_Strict):
    """One job: ``workload`` (DDP) or ``collective`` (a loop of one collective), exactly one."""

    name: str = Field(min_length=1)
    nodes: Count | None = None
    start: int | float | str = 0                # when its first iteration starts
    node_list: list[Index] | None = None
    # DDP
    workload: str | None = None
    gpu: str | None = None
    batch_size: Count | None = None
    bucket_cap_mb: BucketMiB = 25.0
    accumulation_steps: Count = 1
    # collective loop
    collective: str | None = None           # an operation of simulator.core.vocabulary.OPS
    size: int | str = "1 GiB"
    algo: Literal["auto", "ring", "tree", "direct"] = "auto"
    proto: str = "auto"                      # auto or one of simulator.core.vocabulary.PROTOS
    compute: int | float | str = 0
    # LLM training (gpunetsim train): a zoo model, a model file, or a spec "hidden=..,layers=..,heads=.."
    train: str | None = None
    seq: Count | None = None
    tp: Count = 1
    pp: Count = 1
    dp: Count | None = None                   # default: the job's GPUs / (tp x pp)
    global_batch: Count | None = None
    micro_batch: Count = 1
    schedule: Literal["1f1b", "interleaved"] = "1f1b"
    virtual_stages: Count | None = None
    recompute: Literal["none", "selective", "full"] = "none"
    sequence_parallel: Switch = False
    flash_attention: Switch = False
    zero: ZeroStage = 0
    fsdp: Literal["full", "grad-op", "hybrid"] | None = None
    fsdp_shard: Count | None = None           # default: the DP peers of one server (gpunetsim train --fsdp-shard)
    dtype: Literal["bf16", "fp16", "fp8"] = "bf16"
    order: str = "tp-dp-pp"

    @model_validator(mode="after")
    def _one_kind(self) -> "JobSpec":
        kinds = [k for k in ("workload", "collective", "train") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("give exactly one of workload (a DDP job), collective (a collective loop) or "
                             "train (an LLM training job)")
        kind = kinds[0]
        others = set().union(*(f for k, f in _FIELDS_OF.items() if k != kind)) - _FIELDS_OF[kind]
        stray = sorted(self.model_fields_set & others)
        if stray:
            raise ValueError(f"{', '.join(stray)} does not apply to {_KIND_NAME[kind]}")
        if kind == "train" and self.global_batch is None:
            raise ValueError("an LLM training job (train) needs global_batch")
        if (self.nodes is None) == (self.node_list is None):
            raise ValueError("give exactly one of nodes (a count) or node_list (server indices)")
        return self


_FIELDS_OF = {"workload": {"gpu", "batch_size", "bucket_cap_mb", "accumulation_steps"},
              "collective": {"size", "algo", "proto", "compute"},
              "train": {"gpu", *TRAIN_AXES} - {"model"}}      # a study's train axes, one value each (model: train)
_KIND_NAME = {"workload": "a DDP job (workload)", "collective": "a collective job",
              "train": "an LLM training job (train)"}


class PlacementSpec(_Strict):
    policy: Literal["packed", "spread", "random"] = "packed"
    seed: Seed = 0


class StragglerSpec(_Strict):
    distribution: Literal["none", "normal", "lognormal"] = "none"
    cv: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0
    slow_gpus: dict[str, Annotated[float, Field(gt=0, allow_inf_nan=False)]] = {}


class DegradedLink(_Strict):
    """A link at ``fraction`` of its bandwidth: always, or (with ``period``) for ``duty`` of every
    period (a flapping link)."""

    link: str
    fraction: _Frac
    period: int | float | str | None = None
    duty: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _duty_needs_period(self) -> "DegradedLink":
        if self.duty is not None and self.period is None:
            raise ValueError("duty applies to a flapping link: give its period too")
        return self


class ScenarioSpec(_Strict):
    """The validated scenario file."""

    name: str = "scenario"
    description: str = ""
    topology: str = "dgx-h100"
    nodes: Count = 1
    gpus: Count | None = None
    fabric: Literal["rail", "fat-tree"] = "rail"
    transport: Literal["ib", "roce"] = "ib"
    nic_bw: Bandwidth | None = None
    nics: Count | None = None
    oversubscription: Annotated[float, Field(ge=1.0, allow_inf_nan=False)] = 1.0
    hosts_per_leaf: Count = 32
    calibration: str | None = None
    nccl_version: str | float | None = None    # a float only to refuse it by name (YAML's 2.20 is 2.2)
    placement: PlacementSpec | Literal["packed", "spread", "random"] = PlacementSpec()
    iterations: Count = 3
    seed: Seed = 0
    jobs: list[JobSpec] = Field(min_length=1)
    stragglers: StragglerSpec = StragglerSpec()
    degraded_links: list[DegradedLink] = []
    failures: dict | None = None            # simulator.training.goodput.FailureSpec's fields
    run: int | float | str = "30 d"             # training work per job, for goodput


@dataclass(frozen=True)
class Scenario:
    """A scenario as plain data, ready to simulate."""

    name: str
    source: str
    topology: PresetCluster | nx.Graph      # topologies.prepare: a preset's tables or a file's graph
    router: Router
    jobs: tuple[Job, ...]
    hosts: tuple[tuple[int, ...], ...]
    params: Parameters
    placement: str
    iterations: int
    seed: int
    stragglers: StragglerModel
    degraded: dict[tuple[str, str], float]   # directed link (a, b) -> fraction of bandwidth left
    failures: FailureSpec | None = None
    run_s: float = 30 * 86400.0               # training work per job (goodput)
    flapping: tuple[LinkFlap, ...] = ()        # links degraded part of the time

    @property
    def gpus(self) -> int:
        return len(self.router.gpus)

    @property
    def attributes(self) -> Mapping:
        """The topology's attributes (topologies.graph: name, hosts, gpu_model, ...)."""
        return attributes(self.topology)


def attributes(topology: PresetCluster | nx.Graph) -> Mapping:
    """The graph attributes of a topology: a graph's own, or those a preset's graph would have."""
    return topology.attributes if isinstance(topology, PresetCluster) else topology.graph


def resolve(path_or_name: str) -> Path:
    """A scenario file path, or the built-in scenario of that name."""
    from simulator.core.inputs import path_exists
    p = Path(path_or_name)
    if not path_exists(p) and not p.suffix and path_exists(SCENARIOS_DIR / f"{path_or_name}.yaml"):
        return SCENARIOS_DIR / f"{path_or_name}.yaml"
    return p


def builtin_names() -> list[str]:
    return sorted(p.stem for p in SCENARIOS_DIR.glob("*.yaml"))


def load_scenario(path_or_name: str | Path, placement: str | None = None) -> Scenario:
    """Read and validate a scenario file (or a built-in scenario's name); ``placement`` replaces
    the file's placement policy (its seed kept)."""
    from simulator.core.inputs import path_exists, read_structured
    path = resolve(str(path_or_name))
    if not path_exists(path):
        raise InputError(f"file not found (built-in scenarios: {', '.join(builtin_names())})", source=str(path))
    src = str(path)
    spec = validate(ScenarioSpec, read_structured(path, what="scenario file"), src, "a mapping (the scenario)")
    if placement is not None:
        old = spec.placement if isinstance(spec.placement, PlacementSpec) else PlacementSpec(policy=spec.placement)
        spec = spec.model_copy(update={"placement": old.model_copy(update={"policy": placement})})
    return scenario_from_spec(spec, src, path.resolve().parent)


def _topology(spec: ScenarioSpec, src: str, base: Path) -> PresetCluster | nx.Graph:
    import topologies
    topo = spec.topology
    if topo not in topologies.SERVERS:
        p = Path(topo).expanduser()
        p = p if p.is_absolute() else base / p
        if names_a_file(p):                 # else a misspelt preset, reported as the user wrote it
            topo = str(p.resolve())
    fabric = checked(lambda: topologies.FabricSpec.from_options(spec.fabric, spec.transport, spec.nic_bw, spec.nics,
                                                                spec.oversubscription, spec.hosts_per_leaf),
                     src, "nic_bw", spec.nic_bw)
    try:
        return topologies.prepare(topo, nodes=spec.nodes, gpus_per_node=spec.gpus, fabric=fabric)
    except InputError as e:
        raise InputError(e.message, source=e.source or src, field=e.field or "topology", value=e.value) from None


def _job(spec: JobSpec, i: int, router: Router, attrs: Mapping, src: str, base: Path,
         calibration: str | None = None):
    from simulator.core.units import parse_size, parse_time
    from simulator.training.cluster import CollectiveJob, DDPJob
    from simulator.training.ddp import DDPConfig
    where = f"jobs[{i}]"
    start = checked(lambda: parse_time(spec.start, field="start", unit=True), src, f"{where}.start", spec.start)
    if spec.collective is not None:
        from simulator.core.vocabulary import PROTOS, check_op
        checked(lambda: check_op(spec.collective), src, f"{where}.collective", spec.collective)
        if spec.proto != "auto" and spec.proto not in PROTOS:
            raise InputError(f"unknown protocol (expected auto, {', '.join(PROTOS)})", source=src,
                             field=f"{where}.proto", value=spec.proto)
        size = checked(lambda: parse_size(spec.size, field="size"), src, f"{where}.size", spec.size)
        compute = checked(lambda: parse_time(spec.compute, field="compute", unit=True), src, f"{where}.compute",
                          spec.compute)
        if size == 0 and compute == 0:
            raise InputError("a job with no bytes and no compute does nothing", source=src, field=f"{where}.size",
                             value=spec.size)
        from simulator.collectives.plans import ALGOS_FOR_OP
        if spec.algo != "auto" and spec.algo not in ALGOS_FOR_OP[spec.collective]:
            raise InputError(f"algorithm not available for {spec.collective} "
                             f"(available: {', '.join(ALGOS_FOR_OP[spec.collective])})", source=src,
                             field=f"{where}.algo", value=spec.algo)
        return CollectiveJob(spec.name, spec.collective, size, spec.algo, spec.proto, compute, start)
    if spec.train is not None:
        return _train_job(spec, where, router, attrs, src, base, start, calibration)
    from gpunetsim.ddp_cli import load_any_workload
    wl = spec.workload or ""
    p = Path(wl).expanduser()
    p = p if p.is_absolute() else base / p
    if names_a_file(p):     # a file, relative to the scenario
        wl = str(p.resolve())
    w = checked(lambda: load_any_workload(wl, spec.gpu, str(attrs.get("gpu_model", "")), spec.batch_size),
                src, f"{where}.workload", spec.workload)
    config = checked(lambda: DDPConfig(spec.bucket_cap_mb, accumulation_steps=spec.accumulation_steps), src,
                     where, spec.bucket_cap_mb)
    return DDPJob(spec.name, w, config, start)


def _train_job(spec: JobSpec, where: str, router: Router, attrs: Mapping, src: str, base: Path, start: float,
               calibration: str | None):
    """An LLM training job; ``dp`` defaults to the job's GPUs / (tp x pp) (placement checks the total)."""
    from simulator.training.cluster import TrainJob
    from simulator.training.gpus import get_gpu, gpu_for_model
    from simulator.training.llm.compute import load_compute_params
    from gpunetsim.train_study import model_path, study_field, train_config
    from simulator.training.llm.model import parse_model_spec, resolve_model, with_seq
    text = spec.train or ""
    if "=" in text:
        try:                            # named as the file spells it: jobs[0].train, not --model-spec
            model = parse_model_spec(text, f"{where}.train")
        except InputError as e:         # the field stays jobs[0].train; the spec's key leads the message
            key = str(e.field).removeprefix(f"{where}.train").removeprefix(": ")
            raise InputError(f"{key}: {e.message}" if key else e.message, source=src, field=f"{where}.train",
                             value=e.value) from None
    else:
        name = model_path(text, base)
        model = checked(lambda: resolve_model(name), src, f"{where}.train", text)
    model = with_seq(model, spec.seq)
    per_host = len(router.ranks_per_host(router.gpus).get(0, ()))
    gpus = per_host * (spec.nodes if spec.nodes is not None else len(spec.node_list or ()))
    settings = {k: getattr(spec, k) for k in _FIELDS_OF["train"] - {"gpu", "seq"}}
    try:
        config = train_config({**settings, "global_batch": spec.global_batch or 0}, gpus)
    except InputError as e:          # TrainConfig names CLI options (--global-batch): name the file's field
        raise study_field(e if e.field else InputError(e.message, field="--train", value=e.value), f"{where}.",
                          src) from None
    gpu = checked(lambda: get_gpu(spec.gpu or gpu_for_model(str(attrs.get("gpu_model", "")))), src,
                  f"{where}.gpu", spec.gpu)
    compute = checked(lambda: load_compute_params(calibration), src, "calibration", calibration)
    return TrainJob(spec.name, model, config, gpu, compute, start)


def _link_ids(router: Router, text: str, src: str, field: str) -> list[tuple[str, str]]:
    """``"a - b"`` (both directions) or ``"a -> b"`` (one) as directed (a, b) node pairs."""
    one_way = "->" in text
    parts = [s.strip() for s in text.split("->" if one_way else " - ")]
    if len(parts) != 2 or not all(parts):
        raise InputError("write a link as 'A - B' (both directions) or 'A -> B' (one direction)", source=src,
                         field=field, value=text)
    a, b = parts
    if (a, b) not in router.link_id:
        nodes = {x for x, _ in router.link_names}
        missing = next((n for n in (a, b) if n not in nodes), None)
        why = f"no node {missing!r} in the topology" if missing else f"no link joins {a!r} and {b!r}"
        raise InputError(why, source=src, field=field, value=text)
    return [(a, b)] if one_way else [(a, b), (b, a)]


def scenario_from_spec(spec: ScenarioSpec, src: str = "<scenario>", base: Path | None = None) -> Scenario:
    from simulator.collectives.params import load_calibration
    from simulator.training.placement import place
    from simulator.training.stragglers import StragglerModel
    base = base or Path.cwd()
    names = [j.name for j in spec.jobs]
    i = repeated(names)
    if i is not None:
        raise InputError(f"job names must be unique: jobs[{names.index(names[i])}] has it too", source=src,
                         field=f"jobs[{i}].name", value=names[i])
    topology = _topology(spec, src, base)
    router = router_for(topology)
    attrs = attributes(topology)
    jobs = tuple(_job(j, i, router, attrs, src, base, spec.calibration) for i, j in enumerate(spec.jobs))
    placement = spec.placement if isinstance(spec.placement, PlacementSpec) else PlacementSpec(policy=spec.placement)
    requests = [j.nodes if j.nodes is not None else j.node_list for j in spec.jobs]
    try:
        hosts = tuple(place(router, requests, placement.policy, placement.seed))  # type: ignore[arg-type]
    except InputError as e:
        raise InputError(e.message, source=src, field=e.field, value=e.value) from None
    gpus = set(router.gpus)
    for i, (job, hs) in enumerate(zip(jobs, hosts)):
        cfg = getattr(job, "config", None)
        have = sum(1 for n in gpus if router.host_of(n) in set(hs))
        if spec.jobs[i].train is not None and cfg.gpus != have:
            raise InputError(f"tp x pp x dp = {cfg.tp} x {cfg.pp} x {cfg.dp} = {cfg.gpus} GPUs, but the job's "
                             f"servers have {have}", source=src, field=f"jobs[{i}].dp", value=cfg.dp)
    for g in spec.stragglers.slow_gpus:
        if g not in gpus:
            raise InputError("no such GPU in the topology (GPUs are named like h0.gpu3)", source=src,
                             field=f"stragglers.slow_gpus.{g}", value=g)
    st = spec.stragglers
    stragglers = checked(lambda: StragglerModel(st.distribution, st.cv, dict(st.slow_gpus)), src, "stragglers",
                         st.cv)
    from simulator.core.units import parse_time
    from simulator.training.cluster import LinkFlap
    degraded: dict[tuple[str, str], float] = {}
    flapping: list[LinkFlap] = []
    for i, d in enumerate(spec.degraded_links):
        pairs = _link_ids(router, d.link, src, f"degraded_links[{i}].link")
        if d.period is None:
            for pair in pairs:
                degraded[pair] = degraded.get(pair, 1.0) * d.fraction
            continue
        period = checked(lambda: parse_time(d.period, field="period", allow_zero=False, unit=True), src,
                         f"degraded_links[{i}].period", d.period)
        flapping.append(LinkFlap(tuple(pairs), d.fraction, period, 0.5 if d.duty is None else d.duty))
    params = checked(lambda: load_calibration(spec.calibration), src, "calibration", spec.calibration)
    if spec.nccl_version is not None:       # every job's collectives planned for it, whatever the calibration says
        from simulator.core.vocabulary import nccl_version
        params = params.with_nccl_version(checked(lambda: nccl_version(spec.nccl_version), src, "nccl_version",
                                                  spec.nccl_version))
    failures = None
    if spec.failures is not None:
        from simulator.training.goodput import failure_spec
        try:
            failures = failure_spec(spec.failures, src)
        except InputError as e:
            raise InputError(e.message, source=src, field=f"failures.{e.field}", value=e.value) from None
    run_s = checked(lambda: parse_time(spec.run, field="run", allow_zero=False, unit=True), src, "run", spec.run)
    return Scenario(spec.name, src, topology, router, jobs, hosts, params, placement.policy, spec.iterations, spec.seed,
                    stragglers, degraded, failures, run_s, tuple(flapping))


def run_scenario(sc: Scenario, top_links: int = 3) -> ClusterResult:
    """Simulate a scenario: :class:`simulator.training.cluster.ClusterResult`."""
    from simulator.training.cluster import simulate_cluster
    return simulate_cluster(sc.router, sc.jobs, sc.hosts, sc.params, iterations=sc.iterations,
                            stragglers=sc.stragglers, degraded=sc.degraded, flapping=sc.flapping, seed=sc.seed,
                            top_links=top_links)
