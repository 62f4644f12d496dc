"""Capacity-planning studies: a YAML grid of clusters and models, evaluated point by point.

A study file names lists of values (a scalar means a list of one) for each axis::

    name: nic-what-if
    model: [resnet50, gpt2]            # zoo names or workload files
    topology: dgx-h100                 # presets or topology files
    nodes: [1, 2, 4, 8]
    nic_bw: ["400 Gb/s", "200 Gb/s"]
    bucket_cap_mb: [25]
    engine: closed
    collectives: {op: all_reduce, min_bytes: 8, max_bytes: 1G}

:func:`load_study` validates it (every problem is an :class:`InputError` naming the file, the
field path and the value), :func:`expand` turns it into :class:`Point` s in a fixed order (the
axes of :data:`AXES` nested left to right, ``nodes`` innermost so that a scaling curve is
contiguous; collective points follow the DDP points), :func:`evaluate` turns one point into one
row (a flat dict) and :func:`run_points` evaluates many, serially, on local processes or on a
Dask cluster, always returning rows in point order.

Evaluation is a pure function of the point: a process may memoise cost models and workloads
(plans are the expensive part), which changes speed, never results.
"""

from __future__ import annotations

import csv
import itertools
import json
import logging
import math
from dataclasses import asdict, dataclass, field, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Callable, Iterable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from simulator.network.closed_form import CostModel
from simulator.core.config import Bandwidth, BucketMiB, Count, axis, checked, validate
from simulator.core import limits
from simulator.core.errors import InputError
from simulator.core.inputs import names_a_file
from simulator.core.vocabulary import Limit, nccl_version
from gpunetsim.search_study import SearchAxes, check_search, search_settings
from gpunetsim.train_study import TrainAxes, check_models, evaluate_train, model_path, train_settings

log = logging.getLogger(__name__)

DEFAULT_STUDY = Path(__file__).resolve().parent / "studies" / "default.yaml"

# Grid axes of DDP points, outermost first. ``nodes`` is innermost: one scaling curve per
# combination of the others.
AXES = ("model", "batch_size", "strategy", "backend", "topology", "gpus", "fabric", "transport", "nic_bw",
        "nics", "oversubscription", "hosts_per_leaf", "algo", "bucket_cap_mb", "engine", "nodes")
# Axes that shape the network (collective points use only these, plus algo and engine).
NETWORK_AXES = ("topology", "gpus", "fabric", "transport", "nic_bw", "nics", "oversubscription",
                "hosts_per_leaf")


# ------------------------------------------------------------------------------ file schema



class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CollectivesSpec(_Strict):
    """Bus-bandwidth-vs-size curves: nccl-tests sizes from min_bytes to max_bytes."""

    op: Literal["all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all",
                "send_recv"] = "all_reduce"
    min_bytes: int | str = 8
    max_bytes: int | str = "128M"
    factor: Annotated[float, Field(gt=1)] = 2.0


class StudySpec(_Strict):
    """The validated study file. List-valued fields are grid axes."""

    name: str = "study"
    description: str = ""
    model: list[str] = []
    batch_size: list[Count | None] = [None]
    gpu: str | None = None
    topology: list[str] = ["dgx-h100"]
    nodes: list[Count] = [1]
    gpus: list[Count | None] = [None]
    fabric: list[Literal["rail", "fat-tree"]] = ["rail"]
    transport: list[Literal["ib", "roce"]] = ["ib"]
    nic_bw: list[Bandwidth | None] = [None]
    nics: list[Count | None] = [None]
    oversubscription: list[Annotated[float, Field(ge=1.0, le=limits.MAX_OVERSUBSCRIPTION,
                                                  allow_inf_nan=False)]] = [1.0]
    hosts_per_leaf: list[Count] = [32]
    algo: list[Literal["auto", "ring", "tree"]] = ["auto"]
    strategy: list[Literal["ddp", "dataparallel"]] = ["ddp"]
    backend: list[Literal["nccl", "gloo", "mpi"]] = ["nccl"]
    bucket_cap_mb: list[BucketMiB] = [25.0]
    engine: list[Literal["des", "closed"]] = ["des"]
    nccl_version: list[str | float | None] = [None]     # a float only to refuse it by name (YAML's 2.20 is 2.2)
    calibration: str | None = None
    collectives: CollectivesSpec | None = None
    train: TrainAxes | None = None
    search: SearchAxes | None = None

    @field_validator("model", "batch_size", "topology", "nodes", "gpus", "fabric", "transport",
                     "nic_bw", "nics", "oversubscription", "hosts_per_leaf", "algo", "bucket_cap_mb",
                     "engine", "strategy", "backend", "nccl_version", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return axis(v)


def _validate(data: object, source: str | None) -> StudySpec:
    return validate(StudySpec, data, source, "a mapping of axis names to values")


# ------------------------------------------------------------------------------ study and points

@dataclass(frozen=True)
class Point:
    """One configuration to evaluate. File paths are absolute; ``kind`` is 'ddp' or 'collective'.

    For collective points ``model``/``batch_size``/``bucket_cap_mb`` are unused and ``op`` and
    ``size_bytes`` say which collective to time.
    """

    index: int
    kind: str
    topology: str
    nodes: int
    gpus: int | None
    fabric: str
    transport: str
    nic_bw: str | None
    nics: int | None
    oversubscription: float
    hosts_per_leaf: int
    algo: str
    engine: str
    calibration: str | None
    model: str = ""
    gpu: str | None = None
    batch_size: int | None = None
    bucket_cap_mb: float | None = None
    op: str = ""
    size_bytes: int = 0
    strategy: str = "ddp"
    backend: str = "nccl"
    train: tuple[tuple[str, object], ...] = ()      # LLM-training settings of a 'train' point
    search: tuple[tuple[str, object], ...] = ()     # model, GPU count and space of a 'search' point
    cluster: Any = field(default=None, compare=False)  # a 'search' point's Cluster (made once, by check_search)
    nccl_version: str | None = None                 # the NCCL planned for (None: the newest modelled)

    def columns(self) -> dict[str, object]:
        """The configuration columns of this point's row (paths shortened to file names)."""
        d = asdict(self)
        del d["cluster"]
        if not self.search:
            del d["search"]
        d["topology"] = _short(self.topology)
        d["model"] = _short(self.model)
        d["calibration"] = _short(self.calibration) if self.calibration else "datasheet"
        d["nccl_version"] = "" if self.backend not in ("", "nccl") else \
            self.nccl_version or str(_params(self.calibration).planned_nccl_version())   # the calibration's
        return d


def _short(s: str | None) -> str:
    if not s:
        return ""
    p = Path(s)
    return p.name if p.is_absolute() else s


@dataclass(frozen=True)
class Study:
    """A validated study: the spec, where it came from, and its points in evaluation order."""

    spec: StudySpec
    source: str
    points: tuple[Point, ...]

    @property
    def name(self) -> str:
        return self.spec.name


def load_study(path: str | Path) -> Study:
    """Read, validate and expand a study file; relative paths are taken from the file's folder."""
    from simulator.core.inputs import read_structured
    src = str(path)
    spec = _validate(read_structured(path, what="study file"), src)
    return study_from_spec(spec, source=src, base=Path(path).resolve().parent)


def study_from_spec(spec: StudySpec, source: str = "<study>", base: Path | None = None) -> Study:
    base = base or Path.cwd()
    return Study(spec, source, tuple(expand(spec, source, base)))


def _resolve(value: str, base: Path, is_name: Callable[[str], bool]) -> str:
    """A built-in name as is, else the file path made absolute (relative to ``base``)."""
    if is_name(value):
        return value
    p = Path(value).expanduser()
    return str(p if p.is_absolute() else (base / p).resolve())


def _is_zoo(name: str) -> bool:
    from simulator.training.zoo import zoo_model
    try:
        zoo_model(name)
        return True
    except InputError:
        return False


def expand(spec: StudySpec, source: str = "<study>", base: Path | None = None) -> list[Point]:
    """The study's points: DDP points (:data:`AXES` nested, ``nodes`` innermost), then collective
    points (network axes, algo, engine, nodes, then sizes innermost). Checks every file, model and
    topology up front so that a bad value fails before any evaluation, naming its field."""
    import topologies
    from simulator.core.units import parse_size
    base = base or Path.cwd()
    if not spec.model and spec.train is None and spec.search is None:
        raise InputError("a study needs model (DDP workloads), train (LLM training) or search (LLM plans)",
                         source=source, field="model")
    if spec.train is not None:
        spec = spec.model_copy(update={"train": spec.train.model_copy(
            update={"model": [model_path(m, base) for m in spec.train.model]})})
        check_models(spec.train, source)
    if spec.search is not None:
        spec = spec.model_copy(update={"search": spec.search.model_copy(
            update={"model": [model_path(m, base) for m in spec.search.model]})})
    models = [_resolve(m, base, _is_zoo) for m in spec.model]
    topos = [_resolve(t, base, lambda t: t in topologies.SERVERS) for t in spec.topology]
    clusters = check_search(spec.search, topos, source) if spec.search is not None else {}
    calib = None
    if spec.calibration is not None:
        from simulator.collectives.params import SHIPPED_DIR
        from simulator.core.inputs import path_exists
        calib = _resolve(spec.calibration, base,
                         lambda c: not Path(c).suffix and path_exists(SHIPPED_DIR / f"{c}.json"))
        _check(lambda: _params(calib), source, "calibration", spec.calibration)
    for i, (m, raw) in enumerate(zip(models, spec.model)):
        if not _is_zoo(m) and not names_a_file(m):       # a misspelt zoo name, not a missing file
            from simulator.training.zoo import zoo_names
            raise InputError(f"not a workload file nor a zoo model; zoo: {', '.join(zoo_names())}", source=source,
                             field=f"model[{i}]", value=raw)
        if not _is_zoo(m):
            _check(lambda: _file_workload(m), source, f"model[{i}]", raw)
    if spec.gpu is not None:
        from simulator.training.gpus import get_gpu
        _check(lambda: get_gpu(spec.gpu), source, "gpu", spec.gpu)
        if models and not any(map(_is_zoo, models)) and spec.train is None and spec.search is None:
            # the rows said gpu a100 beside the file's own (measured) times, as 'gpunetsim ddp --gpu' did
            log.warning(f"{source}: gpu: {spec.gpu!r} changes no time: every model is a workload file, whose times "
                        "are its own (gpu applies to zoo models, train and search)")
    for i, (t, raw) in enumerate(zip(topos, spec.topology)):
        if t not in topologies.SERVERS:
            if not names_a_file(t):             # a misspelt preset, not a missing file
                raise InputError(topologies.unknown_topology(raw).message, source=source, field=f"topology[{i}]",
                                 value=raw)
            _check(lambda: topologies.load_topology(t), source, f"topology[{i}]", raw)
            if any(n != 1 for n in spec.nodes):
                raise InputError("nodes applies to presets only; a topology file describes every server",
                                 source=source, field="nodes", value=spec.nodes)
    sizes: list[int] = []
    if spec.collectives is not None:
        c = spec.collectives
        lo = _check(lambda: parse_size(c.min_bytes, field="collectives.min_bytes"), source,
                    "collectives.min_bytes", c.min_bytes)
        hi = _check(lambda: parse_size(c.max_bytes, field="collectives.max_bytes"), source,
                    "collectives.max_bytes", c.max_bytes)
        if not 1 <= lo <= hi:
            raise InputError("need 1 <= min_bytes <= max_bytes", source=source,
                             field="collectives.min_bytes", value=f"{c.min_bytes}..{c.max_bytes}")
        from simulator.core.vocabulary import size_ladder
        sizes = _check(lambda: size_ladder(lo, hi, c.factor), source, "collectives.factor", c.factor)

    network = (topos, spec.gpus, spec.fabric, spec.transport, spec.nic_bw, spec.nics, spec.oversubscription,
               spec.hosts_per_leaf, spec.algo, spec.engine, spec.nodes)
    count = math.prod(map(len, (models, spec.batch_size, spec.strategy, spec.backend, spec.bucket_cap_mb, *network)))
    if spec.collectives is not None:
        count += math.prod(map(len, network)) * len(spec.backend) * len(sizes)
    settings = train_settings(spec.train) if spec.train is not None else []
    count += math.prod(map(len, network)) * len(settings)
    searches = search_settings(spec.search) if spec.search is not None else []
    count += len(topos) * len(spec.nic_bw) * len(spec.oversubscription) * len(searches)
    versions = [None if v is None else str(_check(lambda: nccl_version(v, f"nccl_version[{i}]"), source,
                                                    f"nccl_version[{i}]", v))
                for i, v in enumerate(spec.nccl_version)]
    limits.POINTS.check(count * len(versions), source=source, field="points")
    points: list[Point] = []
    if "ddp" in spec.strategy:
        from simulator.collectives.backends import check_support
        for be in spec.backend:          # DDP trains on the GPUs: its buckets are CUDA tensors
            _check(lambda: check_support(be, "cuda", "all_reduce"), source, "backend", be)
    if "dataparallel" in spec.strategy and all(n > 1 for n in spec.nodes):
        raise InputError("DataParallel is one process on one server: the study needs nodes: 1 for it",
                         source=source, field="strategy", value=spec.strategy)
    grid = itertools.product(models, spec.batch_size, spec.strategy, spec.backend, topos, spec.gpus, spec.fabric,
                             spec.transport, spec.nic_bw, spec.nics, spec.oversubscription, spec.hosts_per_leaf,
                             spec.algo, spec.bucket_cap_mb, spec.engine, spec.nodes)
    seen_dp: set[tuple] = set()
    for (m, bs, strat, be, t, g, fab, tr, bw, nics, ovs, hpl, algo, cap, eng, n) in grid:
        if strat == "dataparallel":
            # One process on one server, no process group: no backend, algorithm, bucket or engine
            # choice, so one point per remaining combination (on one server only).
            key = (m, bs, t, g, fab, tr, bw, nics, ovs, hpl)
            if n != 1 or key in seen_dp:
                continue
            seen_dp.add(key)
            be, algo, cap, eng = "", "auto", None, "closed"
        points.append(Point(len(points), "ddp", t, n, g, fab, tr, bw, nics, ovs, hpl, algo, eng, calib,
                            model=m, gpu=spec.gpu, batch_size=bs, bucket_cap_mb=cap, strategy=strat, backend=be))
    if spec.collectives is not None:
        op = spec.collectives.op
        cgrid = (topos, spec.gpus, spec.fabric, spec.transport, spec.nic_bw, spec.nics,
                 spec.oversubscription, spec.hosts_per_leaf, spec.algo, spec.engine, spec.nodes, sizes)
        for be in spec.backend:
            from simulator.collectives.backends import check_support, default_tensors
            _check(lambda: check_support(be, default_tensors(be), op), source, "backend", be)
        for (be, t, g, fab, tr, bw, nics, ovs, hpl, algo, eng, n, size) in itertools.product(spec.backend, *cgrid):
            points.append(Point(len(points), "collective", t, n, g, fab, tr, bw, nics, ovs, hpl, algo, eng,
                                calib, op=op, size_bytes=size, backend=be))
    for st in settings:
        for (t, g, fab, tr, bw, nics, ovs, hpl, algo, eng, n) in itertools.product(*network):
            points.append(Point(len(points), "train", t, n, g, fab, tr, bw, nics, ovs, hpl, algo, eng, calib,
                                model=str(dict(st)["model"]), gpu=spec.gpu, train=st))
    for t, bw, ovs in itertools.product(topos, spec.nic_bw, spec.oversubscription):
        for st in searches:      # a cluster of whole servers (or part of one), rail-optimized InfiniBand
            cl = clusters[(t, int(dict(st)["gpus"]))]
            points.append(Point(len(points), "search", t, cl.nodes, None if cl.nodes > 1 else cl.gpus, "rail", "ib",
                                bw, None, ovs, 32, "auto", "des", calib, model=str(dict(st)["model"]),
                                gpu=spec.gpu, search=st, cluster=cl))
    if versions != [None]:      # the NCCL version is the outermost axis: every point once per version
        points = [replace(p, index=i, nccl_version=v)
                  for i, (v, p) in enumerate((v, p) for v in versions for p in points)]
    for key in sorted({_topo_key(p) for p in points if p.kind != "search"}, key=repr):
        model = _network_checked(key, source)
        if any(_topo_key(p) == key and (p.kind == "train" or (p.kind == "ddp" and _is_zoo(p.model)))
               for p in points):
            try:
                gpu_of(model, spec.gpu)
            except InputError as e:
                raise InputError(e.message, source=source, field="gpu", value=e.value) from None
    return points


_check = checked


def _network_checked(key: tuple, source: str):
    """The cost model of one network of the grid; a bad value of one of its axes is named as that axis (``gpus: ...
    (got 9)``, not ``topology: gpus: ... (got 9) (got 'dgx-h100')``), anything else as the topology."""
    try:
        return _cost_model(*key)
    except InputError as e:
        own = (e.field or "").lstrip("-").replace("-", "_")
        if not e.source and own in NETWORK_AXES + ("nodes",):
            raise InputError(e.message, source=source, field=own, value=e.value) from None
        raise InputError(f"{e}", source=source, field="topology", value=_short(key[0])) from None


# ------------------------------------------------------------------------------ evaluation

@lru_cache(maxsize=8)
def _params(calibration: str | None):
    from simulator.collectives.params import load_calibration
    return load_calibration(calibration)


def _topo_key(p: Point) -> tuple:
    return (p.topology, p.nodes, p.gpus, p.fabric, p.transport, p.nic_bw, p.nics, p.oversubscription,
            p.hosts_per_leaf, p.calibration, p.nccl_version)


@lru_cache(maxsize=64)
def _cost_model(topology: str, nodes: int, gpus: int | None, fabric: str, transport: str,
                nic_bw: str | None, nics: int | None, oversubscription: float, hosts_per_leaf: int,
                calibration: str | None, version: str | None = None) -> CostModel:
    """``version``: the NCCL planned for, as the study file names it (checked by :func:`expand`)."""
    import topologies
    spec = topologies.FabricSpec.from_options(fabric, transport, nic_bw, nics, oversubscription, hosts_per_leaf)
    return CostModel(topologies.prepare(topology, nodes=nodes, gpus_per_node=gpus, fabric=spec), _params(calibration),
                     nccl_version=None if version is None else nccl_version(version))


def _model_for(p: Point) -> CostModel:
    base = _cost_model(*_topo_key(p))
    return base if p.algo == "auto" else base.with_algo(p.algo)


@lru_cache(maxsize=16)
def _file_workload(path: str):
    from simulator.training.workload import load_workload
    return load_workload(path)


@lru_cache(maxsize=32)
def _workload(model: str, gpu: str, batch_size: int | None):
    if Path(model).is_absolute():
        w = _file_workload(model)
        if batch_size is not None and batch_size != w.batch_size:
            w = w.scaled_to_batch(batch_size)
        return w
    from simulator.training.zoo import zoo_workload
    return zoo_workload(model, gpu=gpu, batch_size=batch_size)


def gpu_of(model: CostModel, override: str | None) -> str:
    """The GPU whose compute a zoo workload assumes: the study's ``gpu``, else the topology's
    (``H100 SXM`` -> ``h100``, as ``gpunetsim ddp`` decides). PCIe boxes and most topology files
    name no GPU we know: then the study must say (``gpu: h100``), never a silent guess."""
    if override:
        return override
    from simulator.training.gpus import gpu_for_model
    gpu_model = model.router.info.gpu_model
    try:
        return gpu_for_model(gpu_model)
    except InputError:
        raise InputError(f"cannot tell which GPU topology {model.router.info.name!r} has; "
                         "set 'gpu' in the study (e.g. gpu: h100)", field="gpu", value=gpu_model) from None


def _comm_model(point: Point):
    """NCCL's cost model, or Gloo's/MPI's host model for DDP on that backend (CUDA tensors)."""
    if point.backend in ("", "nccl"):
        return _model_for(point)
    from simulator.network.host_collectives import collective_model
    base = _model_for(point)
    return collective_model(base.router, base.params, point.backend,
                            "cuda" if point.kind == "ddp" else None)


def _dataparallel_row(point: Point, model: CostModel, row: dict[str, object]) -> dict[str, object]:
    from simulator.training.dataparallel import simulate_dataparallel
    gpu = gpu_of(model, point.gpu)
    w = _workload(point.model, gpu, point.batch_size)
    r = simulate_dataparallel(model, w)
    ph = {x.name: x.gpu_s for x in r.phases}
    comm = sum(ph.get(k, 0.0) for k in ("scatter", "replicate", "gather", "reduce"))
    row.update(gpu=gpu, batch_size=r.batch_size, iteration_s=r.iteration_s, iteration_lo_s=r.iteration_lo_s,
               iteration_hi_s=r.iteration_hi_s, iteration_extrapolated=list(r.iteration_extrapolated),
               samples_per_s=r.samples_per_s,
               scaling_efficiency=r.scaling_efficiency, single_gpu_iteration_s=r.single_gpu_iteration_s,
               forward_s=ph.get("forward", 0.0), backward_s=ph.get("backward", 0.0),
               optimizer_s=ph.get("optimizer", 0.0), exposed_comm_s=comm, comm_s=comm,
               overlap_fraction=0.0, buckets=r.chunks, overhead_s=max(0.0, r.host_path_s - r.gpu_path_s),
               gradient_bytes=w.total_bytes, limit=r.limit,
               explanation=(f"DataParallel, {r.limit}: replicate, scatter, gather and the gradient reduce "
                            f"onto GPU 0 take {comm * 1e3:.2f} ms, none of it overlapped; the host path "
                            f"(one Python process) is {r.host_path_s * 1e3:.2f} ms "
                            f"({r.gpus} GPUs, scaling efficiency {r.scaling_efficiency:.0%})."))
    return row


def evaluate(point: Point) -> dict[str, object]:
    """One row for ``point``: its configuration columns and the model's prediction."""
    if point.kind == "search":          # runs a plan search on the cluster it carries (gpunetsim.search)
        from gpunetsim.search_study import evaluate_search
        return evaluate_search(point, point.columns())
    if point.strategy == "dataparallel":
        model = _model_for(point)
        row = point.columns()
        row["total_gpus"] = model.ranks
        return _dataparallel_row(point, model, row)
    model = _comm_model(point)
    row = point.columns()
    row["total_gpus"] = model.ranks
    if point.kind == "collective":
        from simulator.network.run import run_collective, run_host_collective
        r = (run_collective(model, point.op, point.size_bytes, "auto", "auto", point.engine)
             if isinstance(model, CostModel) else run_host_collective(model, point.op, point.size_bytes))
        row.update(time_s=r.time_s, time_lo_s=r.time_lo_s, time_hi_s=r.time_hi_s, algbw_GBps=r.algbw_GBps,
                   busbw_GBps=r.busbw_GBps, algo_used=r.algo, proto_used=r.proto,
                   limit=str(model.limit(point.op, point.size_bytes)))
        return row
    if point.kind == "train":
        return evaluate_train(point, model, row)
    from simulator.training.ddp import DDPConfig, replica_fits, simulate_iteration
    from simulator.training.ddp_intervals import with_interval
    from simulator.training.gpus import get_gpu
    gpu = gpu_of(model, point.gpu)
    w = _workload(point.model, gpu, point.batch_size)
    r = with_interval(model, simulate_iteration(model, w, DDPConfig(bucket_cap_mb=float(point.bucket_cap_mb or 25.0)),
                                                engine=point.engine), w)
    row.update(gpu=gpu, batch_size=r.batch_size, iteration_s=r.iteration_s, iteration_lo_s=r.iteration_lo_s,
               iteration_hi_s=r.iteration_hi_s, iteration_extrapolated=list(r.iteration_extrapolated),
               samples_per_s=r.samples_per_s,
               scaling_efficiency=r.scaling_efficiency, single_gpu_iteration_s=r.single_gpu_iteration_s,
               forward_s=r.forward_s, backward_s=r.backward_s, optimizer_s=r.optimizer_s,
               exposed_comm_s=r.exposed_comm_s, comm_s=r.comm_s, overlap_fraction=r.overlap_fraction,
               buckets=r.buckets if isinstance(r.buckets, int) else len(r.buckets),
               overhead_s=r.iteration_overhead_s, gradient_bytes=w.total_bytes, limit=r.limit.description,
               fits=replica_fits(w, get_gpu(gpu).memory_bytes))
    row["explanation"] = explain(row, r.limit)
    return row


def explain(row: dict[str, object], limit: Limit) -> str:
    """A plain-language line saying what limits a DDP row's configuration and what would help."""
    it = float(row["iteration_s"])  # type: ignore[arg-type]
    exposed = float(row["exposed_comm_s"])  # type: ignore[arg-type]
    opt = float(row["optimizer_s"])  # type: ignore[arg-type]
    frac = exposed / it if it > 0 else 0.0
    eff = float(row.get("scaling_efficiency") or 0.0)  # type: ignore[arg-type]
    gpus = row.get("total_gpus")
    head = f"{limit.description}: "
    if limit is Limit.COMPUTE:
        tail = (f"communication is hidden behind backward ({frac:.0%} of the iteration exposed); "
                f"more GPUs scale at {eff:.0%} efficiency")
        if it > 0 and opt / it > 0.25:
            tail += f"; the optimizer step takes {opt / it:.0%} of the iteration"
    elif limit is Limit.LATENCY:
        tail = (f"{frac:.0%} of the iteration waits on many small all-reduces; larger buckets "
                f"(bucket_cap_mb) or fewer, bigger messages help more than bandwidth")
    elif limit is Limit.NET:
        tail = (f"{frac:.0%} of the iteration waits on gradient all-reduce across servers; faster or "
                f"more NICs, a non-blocking fabric or a larger batch per GPU help")
    elif limit is Limit.BUCKET_OVERHEAD:
        tail = (f"{frac:.0%} of the iteration is per-bucket launch and copy cost after backward; "
                f"fewer, larger buckets (bucket_cap_mb) or gradient_as_bucket_view help")
    elif limit is Limit.PROTOCOL:
        tail = (f"{frac:.0%} of the iteration waits on all-reduces capped by NCCL's protocol "
                f"(LL/LL128) ceiling rather than by a link; larger buckets help")
    elif limit is Limit.KERNEL:
        tail = (f"{frac:.0%} of the iteration waits on NVLS-Tree all-reduces at the pace of NCCL's kernel "
                f"(its per-channel rate), below what the NVLink and the NICs carry; faster links do not help")
    elif limit in (Limit.NVLINK, Limit.PCIE, Limit.SOCKET):
        tail = (f"{frac:.0%} of the iteration waits on gradient all-reduce inside the server; "
                f"a faster GPU interconnect or a larger batch per GPU help")
    else:
        tail = f"{frac:.0%} of the iteration is exposed communication"
    return f"{head}{tail} ({gpus} GPUs, scaling efficiency {eff:.0%})."


# ------------------------------------------------------------------------------ running

def run_points(points: Sequence[Point], *, workers: int | None = None, scheduler: str | None = None,
               progress: bool = True, desc: str = "sweep") -> list[dict[str, object]]:
    """Evaluate ``points``; rows come back in point order whatever runs them.

    ``scheduler`` (``tcp://HOST:8786``) sends the points to a Dask cluster through
    ``dask.distributed`` (workers need gpunetsim installed and any study files at the same
    paths). Otherwise ``workers`` local processes (default: the number of cores; 1 = in this
    process). A tqdm progress bar goes to stderr unless ``progress`` is false. Every point is
    evaluated even when one fails; then the first failure is raised as an InputError naming its
    point (``gpunetsim sweep`` instead keeps the other rows: :mod:`gpunetsim.study_run`).
    """
    from gpunetsim.study_run import PointOutcome, stream_points
    done: dict[int, PointOutcome] = {}
    if stream_points(points, lambda o: done.__setitem__(o.index, o), workers=workers, scheduler=scheduler,
                     progress=progress, desc=desc):
        raise KeyboardInterrupt
    failed = sorted((o for o in done.values() if o.error), key=lambda o: o.index)
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise InputError(f"point {failed[0].index} failed: {failed[0].error}{more}", field="points")
    return [done[p.index].row for p in points]  # type: ignore[misc]


# ------------------------------------------------------------------------------ writing

def columns_of(rows: Iterable[dict[str, object]]) -> list[str]:
    """Every key of ``rows`` in order of first appearance."""
    cols: dict[str, None] = {}
    for r in rows:
        for k in r:
            cols.setdefault(k, None)
    return list(cols)


def csv_text(rows: Sequence[dict[str, object]]) -> str:
    """All rows as CSV text (a ``kind`` column tells DDP rows from collective rows)."""
    import io
    f = io.StringIO(newline="")
    w = csv.DictWriter(f, fieldnames=columns_of(rows), restval="")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else "; ".join(map(str, v)) if isinstance(v, (list, tuple)) else v)
                    for k, v in r.items()})
    return f.getvalue()


def jsonl_line(row: dict[str, object]) -> str:
    """One row as one JSON line (with its newline)."""
    return json.dumps(row, sort_keys=False) + "\n"


def write_csv(rows: Sequence[dict[str, object]], path: str | Path) -> Path:
    """All rows in one CSV, written atomically."""
    from simulator.core.outputs import write_atomic
    return write_atomic(path, csv_text(rows))


def write_jsonl(rows: Sequence[dict[str, object]], path: str | Path) -> Path:
    """All rows as JSON lines, written atomically."""
    from simulator.core.outputs import write_atomic
    return write_atomic(path, "".join(jsonl_line(r) for r in rows))


def point_fields() -> list[str]:
    return [f.name for f in fields(Point)]
