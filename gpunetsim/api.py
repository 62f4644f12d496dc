"""The public Python API: one function per question, keyword arguments named like the CLI flags.

>>> import gpunetsim
>>> r = gpunetsim.collective(topology="dgx-h100", op="all_reduce", size_bytes=2**30)
>>> (r.algo, r.proto, round(r.busbw_GBps))
('nvls', 'simple', 455)
>>> it = gpunetsim.ddp(topology="dgx-h100", nodes=2, workload="resnet50")
>>> it.gpus, it.limit.description
(16, 'compute-bound')

Every function raises :class:`simulator.core.errors.InputError` (with ``field`` and ``value``) for
bad input, as the CLI does before it prints the message and exits 2.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import topologies
from gpunetsim.cli_args import on_off
from simulator.collectives.params import Parameters, load_calibration
from simulator.core.errors import InputError
from simulator.core.limits import check_count
from simulator.core.units import parse_size
from simulator.core.values import seed as seed_value
from simulator.core.values import switch
from simulator.core.vocabulary import NCCL_TESTS_DTYPE, dtype_bytes, nccl_tests_size, whole_elements_words
from simulator.core.vocabulary import nccl_version as parse_nccl_version
from simulator.network.closed_form import CostModel
from simulator.network.run import CollectiveResult, run_collective
from simulator.training.dataparallel import DataParallelResult, simulate_dataparallel
from simulator.training.ddp import DDPConfig, IterationResult, simulate_iteration

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["CollectiveResult", "DataParallelResult", "IterationResult", "StudyResult", "cluster", "collective", "ddp",
           "dataparallel", "goodput", "run_study", "topology", "train"]


def topology(topology: str = "dgx-h100", *, nodes: int = 1, gpus: int | None = None, no_p2p: bool = False,
             socket_transport: bool = False, cpu_sockets: int | None = None, fabric: str = "rail",
             transport: str = "ib", nic_bw: str | None = None, nics: int | None = None,
             oversubscription: float = 1.0, hosts_per_leaf: int = 32, nvls: str | bool | None = None,
             sharp: bool = False, collnet: str | bool | None = None, no_gdr: bool = False) -> nx.Graph:
    """The topology graph the other functions build from these arguments (the CLI's topology flags;
    ``nvls`` is ``--nvls``: "on"/"off" or a bool, None = on where the hardware has it; ``sharp`` is
    ``--sharp`` and ``collnet`` ``--collnet``, None = on where the fabric has SHARP).

    >>> G = gpunetsim.topology("dgx-h100", nodes=2, nic_bw="200 Gb/s")
    >>> len(topologies.gpus(G))
    16
    """
    return _described(topologies.build, topology, nodes, gpus, no_p2p, socket_transport, cpu_sockets, fabric,
                      transport, nic_bw, nics, oversubscription, hosts_per_leaf, nvls, sharp, collnet, no_gdr)


def _described(make: Callable, topology: str = "dgx-h100", nodes: int = 1, gpus: int | None = None,
               no_p2p: bool = False, socket_transport: bool = False, cpu_sockets: int | None = None,
               fabric: str = "rail", transport: str = "ib", nic_bw: str | None = None, nics: int | None = None,
               oversubscription: float = 1.0, hosts_per_leaf: int = 32, nvls: str | bool | None = None,
               sharp: bool = False, collnet: str | bool | None = None, no_gdr: bool = False, **unknown: Any):
    """``make`` (topologies.build or topologies.prepare) applied to :func:`topology`'s arguments; the flags'
    switches are bools (``sharp="no"`` was true). A keyword that is neither the calling function's nor a topology
    option is refused by name (``ddp(model=...)`` raised a TypeError naming this private function)."""
    for name, value in unknown.items():
        options = ", ".join(p for p in inspect.signature(_described).parameters if p not in ("make", "unknown"))
        raise InputError(f"not an argument of this function nor a topology option ({options})", field=name,
                         value=value)
    for name, value in (("no_p2p", no_p2p), ("socket_transport", socket_transport), ("sharp", sharp),
                        ("no_gdr", no_gdr)):
        switch(value, field=name, api=True)
    spec = topologies.FabricSpec.from_options(fabric, transport, nic_bw, nics, oversubscription, hosts_per_leaf,
                                              sharp=sharp)
    return make(topology, nodes=nodes, gpus_per_node=gpus, p2p=False if no_p2p else None,
                fabric=spec, sockets=socket_transport, cpu_sockets=cpu_sockets,
                nvls=_on_off(nvls, "nvls"), collnet=_on_off(collnet, "collnet"), gdr=False if no_gdr else None)


def _on_off(value: str | bool | None, field: str) -> bool | None:
    """``nvls``/``collnet`` as :func:`topology` takes them: "on" or "off" (as ``--nvls``), a bool, or None (the
    hardware's default). Any other word was read as "off" ("On" turned NVLS off)."""
    if value is None or isinstance(value, bool):
        return value
    if value not in ("on", "off"):
        raise InputError("expected 'on', 'off', True, False or None", field=field, value=value)
    return on_off(value)


def _model(calibration: str | Parameters | None, topo: dict[str, Any], tuner_plugin: str | None = None,
           nccl_version: str | None = None) -> CostModel:
    """``tuner_plugin``: ``"aws-ofi:INSTANCE"`` as ``--tuner-plugin`` takes it, or None; ``nccl_version`` as
    ``--nccl-version`` (None: the newest modelled)."""
    from simulator.collectives.ofi_tuner import platform_of
    params = calibration if isinstance(calibration, Parameters) else load_calibration(calibration)
    return CostModel(_described(topologies.prepare, **topo), params,      # presets: tables, no graph
                     tuner_plugin=platform_of(tuner_plugin, "tuner_plugin") if tuner_plugin else None,
                     nccl_version=_version(nccl_version))


def _version(nccl_version: str | None):
    """``nccl_version=`` parsed (simulator.core.vocabulary.nccl_version), None when not given."""
    return None if nccl_version is None else parse_nccl_version(nccl_version, "nccl_version")


def collective(topology: str = "dgx-h100", op: str = "all_reduce", size_bytes: int | str = 2**30, *,
               dtype: str = NCCL_TESTS_DTYPE, algo: str = "auto", proto: str = "auto", engine: str = "des",
               calibration: str | Parameters | None = None, tuner_plugin: str | None = None,
               nccl_version: str | None = None, **topology_options: Any) -> CollectiveResult:
    """One collective at one size, as ``gpunetsim collective`` prints it (nccl-tests' figures plus
    the algorithm and protocol NCCL's tuner would pick, and ``regret``: the fastest enabled choice in
    gpunetsim's timing). ``size_bytes`` may be a string ("64M"); ``tuner_plugin`` as ``--tuner-plugin``
    (``"aws-ofi:p5en.48xlarge"``: AWS's region tables choose where they cover the communicator); ``nccl_version``
    as ``--nccl-version`` (``"2.20.3"``; None: the newest modelled). The size timed is nccl-tests' for
    ``size_bytes`` and ``dtype`` (whole elements per rank, as ``--dtype``; ``result.size_bytes``); a size below
    one element per rank is refused, as the command refuses it.

    >>> r = gpunetsim.collective(topology="hgx-h200", gpus=4, op="all_gather", size_bytes="64M",
    ...                          calibration="h200-nvlink")
    >>> r.gpus, r.algo
    (4, 'ring')
    >>> gpunetsim.collective(nodes=4, sharp=True, nvls="off", size_bytes="1M").algo
    'collnet_direct'
    """
    size = parse_size(size_bytes, field="size_bytes")
    if size < 1:
        raise InputError("a collective moves at least 1 byte", field="size_bytes", value=size_bytes)
    type_bytes = dtype_bytes(dtype)
    model = _model(calibration, dict(topology=topology, **topology_options), tuner_plugin, nccl_version)
    timed, _ = nccl_tests_size(op, model.ranks, size, type_bytes)
    if timed == 0:
        raise InputError(f"{whole_elements_words(op, model.ranks, dtype, type_bytes)}, and {size} B is below it "
                         "(nccl-tests would print size 0)", field="size_bytes", value=size_bytes)
    return run_collective(model, op, timed, algo, proto, engine, regret=True)


def ddp(topology: str = "dgx-h100", workload: str = "resnet50", *, gpu: str | None = None,
        batch_size: int | None = None, bucket_cap_mb: float = 25.0, first_bucket_mb: float | None = 1.0,
        compression: str | None = None, gradient_as_bucket_view: bool = False, accumulation_steps: int = 1,
        engine: str = "des", calibration: str | Parameters | None = None, backend: str = "nccl",
        tuner_plugin: str | None = None, nccl_version: str | None = None, **topology_options: Any) -> IterationResult:
    """One PyTorch DDP iteration, as ``gpunetsim ddp`` prints it; ``workload`` is a zoo name or a
    workload file; ``result.as_dict()`` has the fields of ``gpunetsim ddp --json`` (``fits``: the model states
    within the GPU's memory, a warning logged when not). ``backend``
    ``"gloo"`` times the buckets' all-reduces as Gloo on CUDA tensors (closed form); ``tuner_plugin`` as
    ``--tuner-plugin`` and ``nccl_version`` as ``--nccl-version`` (NCCL only).

    >>> r = gpunetsim.ddp(topology="dgx-h100", nodes=4, workload="gpt2", bucket_cap_mb=50)
    >>> r.gpus, len(r.buckets) > 1, r.iteration_s > r.forward_s + r.backward_s
    (32, True, True)
    >>> gpunetsim.ddp(topology="hgx-h200", gpus=4, backend="gloo").buckets[0].proto
    'tcp'
    """
    from gpunetsim.ddp_cli import load_any_workload, with_fits
    model = _model(calibration, dict(topology=topology, **topology_options), tuner_plugin,
                   nccl_version if backend == "nccl" else None)
    if backend != "nccl":
        from simulator.network.host_collectives import collective_model
        model = collective_model(model.router, model.params, backend, "cuda", model.planner.tuner_plugin,
                                 _version(nccl_version))
    w = load_any_workload(workload, gpu, model.router.info.gpu_model, batch_size)
    config = DDPConfig(bucket_cap_mb, first_bucket_mb, compression, gradient_as_bucket_view, accumulation_steps)
    from simulator.training.ddp_intervals import with_interval
    return with_fits(with_interval(model, simulate_iteration(model, w, config, engine), w), w, gpu,
                     model.router.info.gpu_model)


def dataparallel(topology: str = "dgx-h100", workload: str = "resnet50", *, gpu: str | None = None,
                 batch_size: int | None = None, calibration: str | Parameters | None = None,
                 **topology_options: Any) -> DataParallelResult:
    """One ``torch.nn.DataParallel`` iteration on one server, as ``gpunetsim ddp --strategy
    dataparallel`` prints it (phases on GPU 0 and on the host).

    >>> r = gpunetsim.dataparallel(topology="hgx-h200", gpus=4, workload="resnet50",
    ...                            calibration="h200-dataparallel")
    >>> r.gpus, r.limit.startswith("host-bound"), r.iteration_s > r.single_gpu_iteration_s
    (4, True, True)
    """
    from gpunetsim.ddp_cli import load_any_workload
    model = _model(calibration, dict(topology=topology, **topology_options))
    w = load_any_workload(workload, gpu, model.router.info.gpu_model, batch_size)
    return simulate_dataparallel(model, w)


def train(topology: str = "dgx-h100", model: str | None = None, *, global_batch: int, model_spec: str | None = None,
          seq: int | None = None, tp: int = 1, pp: int = 1, dp: int | None = None, micro_batch: int = 1,
          schedule: str = "1f1b", virtual_stages: int | None = None, recompute: str = "none",
          sequence_parallel: bool = False, flash_attention: bool = False, zero: int = 0, fsdp: str | None = None,
          fsdp_shard: int | None = None, dtype: str = "bf16", order: str = "tp-dp-pp", gpu: str | None = None,
          calibration: str | None = None, nccl_version: str | None = None, **topology_options: Any):
    """One LLM training iteration, as ``gpunetsim train`` prints it: ``model`` a zoo name or a model file, or
    ``model_spec`` (``"hidden=..,layers=..,heads=..,seq=.."``); ``result.as_dict()`` is ``gpunetsim train
    --json`` (breakdown with each part's 90% interval, MFU, memory per GPU, ``fits``); ``result.records`` the
    timeline ``gpunetsim.trace.write_chrome_trace`` turns into a trace; ``nccl_version`` as ``--nccl-version``.

    >>> r = gpunetsim.train(topology="dgx-h100", nodes=2, model="llama-3-8b", tp=8, pp=2, global_batch=16,
    ...                     recompute="selective", sequence_parallel=True, flash_attention=True)
    >>> r.gpus, r.config.dp, r.memory.fits, bool(r.iteration_lo_s <= r.iteration_s <= r.iteration_hi_s)
    (16, 1, True, True)
    """
    from gpunetsim.train_study import train_config, warn_train
    from simulator.training.gpus import get_gpu, gpu_for_model
    from simulator.training.llm.compute import load_compute_params
    from simulator.training.llm.iteration import simulate_train
    from simulator.training.llm.model import resolve_model, with_seq
    spec = with_seq(resolve_model(model, model_spec), seq)
    router = topologies.router_for(_described(topologies.prepare, topology, **topology_options))
    settings = dict(tp=tp, pp=pp, dp=dp, global_batch=global_batch, micro_batch=micro_batch, schedule=schedule,
                    virtual_stages=virtual_stages, recompute=recompute, sequence_parallel=sequence_parallel,
                    zero=zero, fsdp=fsdp, dtype=dtype, order=order, flash_attention=flash_attention,
                    fsdp_shard=fsdp_shard)
    config = train_config(settings, len(router.gpus))
    g = get_gpu(gpu or gpu_for_model(router.info.gpu_model))
    result = simulate_train(router, spec, config, g, load_calibration(calibration), load_compute_params(calibration),
                            parts=True, nccl_version=_version(nccl_version))
    warn_train(settings, result)
    return result


@dataclass(frozen=True)
class StudyResult:
    """The rows of a study (one dict per point, the columns of ``results.csv``), in point order."""

    name: str
    rows: tuple[dict[str, object], ...]

    def write(self, out: str | Path) -> Path:
        """Write ``report.html``, ``results.csv`` and ``results.jsonl`` into folder ``out``."""
        from gpunetsim.report import write_report
        from gpunetsim.study import write_csv, write_jsonl
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        write_report(list(self.rows), folder / "report.html", title=f"gpunetsim: {self.name} study")
        write_csv(list(self.rows), folder / "results.csv")
        write_jsonl(list(self.rows), folder / "results.jsonl")
        return folder


def run_study(path: str | Path | None = None, *, workers: int | None = 1, progress: bool = False) -> StudyResult:
    """Run a study file (YAML/JSON, see docs/cli.md), or the built-in default study
    (``gpunetsim plan``) when ``path`` is None.

    >>> res = gpunetsim.run_study(workers=1)
    >>> res.name, len(res.rows) > 10
    ('default', True)
    """
    from gpunetsim.study import DEFAULT_STUDY, load_study, run_points
    spec = load_study(DEFAULT_STUDY if path is None else path)
    rows = run_points(spec.points, workers=workers, progress=progress, desc=spec.name)
    return StudyResult(spec.name, tuple(rows))


def cluster(scenario: str | Path, *, placement: str | None = None, iterations: int | None = None,
            seed: int | None = None, top_links: int = 3):
    """Several jobs on one cluster, as ``gpunetsim cluster`` prints it: ``scenario`` is a scenario
    file or a built-in scenario's name (docs/shared-clusters.md); the keywords override the file's.
    Returns a :class:`simulator.training.cluster.ClusterResult` (``as_dict()`` is ``--json``'s).

    >>> r = gpunetsim.cluster("shared-spine", iterations=1)
    >>> [j.name for j in r.jobs], r.jobs[1].slowdown >= 1.0
    (['gpt2', 'allreduce'], True)
    """
    from dataclasses import replace

    from gpunetsim.scenario import load_scenario, run_scenario
    sc = load_scenario(scenario, placement)
    if iterations is not None:
        sc = replace(sc, iterations=check_count(iterations, field="iterations"))
    if seed is not None:            # a negative seed ran (the CLI and a scenario file refuse it)
        sc = replace(sc, seed=seed_value(seed, field="seed"))
    check_count(top_links, field="top_links", low=0, words="must be 0 or more")   # "x", 1.5: TypeErrors
    return run_scenario(sc, top_links)


def goodput(gpus: int, *, gpus_per_node: int = 8, nics_per_node: int | None = None, switches: int | None = None,
            mtbf_gpu: str | float | None = None, mtbf_node: str | float | None = None,
            mtbf_nic: str | float | None = None, mtbf_switch: str | float | None = None,
            checkpoint: str | float = 0.0, restart: str | float = 0.0, interval: str | float | None = None,
            run: str | float = "30 d"):
    """Expected goodput of ``run`` (training work) on ``gpus`` GPUs under failures, as ``gpunetsim
    goodput`` prints it (times as text with units, ``"50000 h"``, or Python numbers of seconds: a text without a
    unit is refused, as in a file or on the command line; an MTBF of None never fails). ``switches``
    defaults to the leaves of a rail-optimized fabric: NICs per server x ceil(servers / 32).
    Returns a :class:`simulator.training.goodput.GoodputResult`.

    >>> g = gpunetsim.goodput(4096, mtbf_gpu="50000 h", checkpoint="1 min", restart="5 min")
    >>> round(g.mtbf_s / 3600, 2), round(g.optimum_s / 60, 1), round(g.daly_s / 60, 1)
    (12.21, 37.6, 37.6)
    """
    from simulator.core.units import parse_time
    from simulator.training.goodput import Components, expected_run, failure_spec
    for name, v in (("gpus", gpus), ("gpus_per_node", gpus_per_node)):
        check_count(v, field=name)
    if gpus % gpus_per_node:                    # was rounded up to whole servers without a word
        lo, hi = gpus // gpus_per_node * gpus_per_node, -(-gpus // gpus_per_node) * gpus_per_node
        raise InputError(f"must be a multiple of gpus_per_node ({gpus_per_node}), a whole number of servers: "
                         f"e.g. {' or '.join(str(n) for n in (lo, hi) if n)}", field="gpus", value=gpus)
    for name, v in (("nics_per_node", nics_per_node), ("switches", switches)):
        if v is not None:
            check_count(v, field=name, low=0)
    for name, count, mtbf in (("nics_per_node", nics_per_node, mtbf_nic), ("switches", switches, mtbf_switch)):
        if count == 0 and mtbf is not None:     # the MTBF was dropped without a word: nothing of that kind fails
            raise InputError(f"{name} is 0, so nothing of this kind can fail: drop the MTBF or give a count",
                             field="mtbf_" + ("nic" if name == "nics_per_node" else "switch"), value=mtbf)
    nodes = gpus // gpus_per_node
    nics_per = gpus_per_node if nics_per_node is None else nics_per_node
    comps = Components(gpus, nodes, nodes * nics_per,
                       nics_per * -(-nodes // HOSTS_PER_LEAF) if switches is None else switches)
    times = dict(mtbf_gpu=mtbf_gpu, mtbf_node=mtbf_node, mtbf_nic=mtbf_nic, mtbf_switch=mtbf_switch,
                 checkpoint=checkpoint, restart=restart, interval=interval)
    spec = failure_spec({k: f"{v!r} s" if _number(v) else v for k, v in times.items()})   # a number: seconds
    work = parse_time(run, field="run", allow_zero=False, unit=isinstance(run, str))
    return expected_run(comps, spec, work)


def _number(v: object) -> bool:
    """Whether ``v`` is a positive finite Python number (the API's seconds; a text needs its unit, as in a file; 0
    and the numbers refused are left to :func:`simulator.core.units.parse_time`, which names them as given)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < float("inf")


#: Servers under one leaf switch per rail when counting default switches (as --hosts-per-leaf).
HOSTS_PER_LEAF = 32
