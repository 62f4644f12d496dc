"""The public Python API: one function per question, keyword arguments named like the CLI flags.

>>> import gpunetsim
>>> r = gpunetsim.collective(topology="dgx-h100", op="all_reduce", size_bytes=2**30)
>>> (r.algo, r.proto, round(r.busbw_GBps))
('ring', 'simple', 356)
>>> it = gpunetsim.ddp(topology="dgx-h100", nodes=2, workload="resnet50")
>>> it.gpus, it.limit.description
(16, 'compute-bound')

Every function raises :class:`simulator.core.errors.InputError` (with ``field`` and ``value``) for
bad input, as the CLI does before it prints the message and exits 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

import topologies
from simulator.collectives.params import Parameters, load_calibration
from simulator.core.units import parse_size
from simulator.network.closed_form import CostModel
from simulator.network.run import CollectiveResult, run_collective
from simulator.training.ddp import DDPConfig, IterationResult, simulate_iteration

__all__ = ["CollectiveResult", "IterationResult", "StudyResult", "collective", "ddp", "run_study", "topology"]


def topology(topology: str = "dgx-h100", *, nodes: int = 1, gpus: int | None = None, no_p2p: bool = False,
             socket_transport: bool = False, cpu_sockets: int | None = None, fabric: str = "rail",
             transport: str = "ib", nic_bw: str | None = None, nics: int | None = None,
             oversubscription: float = 1.0, hosts_per_leaf: int = 32) -> nx.Graph:
    """The topology graph the other functions build from these arguments (the CLI's topology flags).

    >>> G = gpunetsim.topology("dgx-h100", nodes=2, nic_bw="200 Gb/s")
    >>> len(topologies.gpus(G))
    16
    """
    spec = topologies.FabricSpec.from_options(fabric, transport, nic_bw, nics, oversubscription, hosts_per_leaf)
    return topologies.build(topology, nodes=nodes, gpus_per_node=gpus, p2p=False if no_p2p else None,
                            fabric=spec, sockets=socket_transport, cpu_sockets=cpu_sockets)


def _model(calibration: str | Parameters | None, topo: dict[str, Any]) -> CostModel:
    params = calibration if isinstance(calibration, Parameters) else load_calibration(calibration)
    return CostModel(topology(**topo), params)


def collective(topology: str = "dgx-h100", op: str = "all_reduce", size_bytes: int | str = 2**30, *,
               algo: str = "auto", proto: str = "auto", engine: str = "des",
               calibration: str | Parameters | None = None, **topology_options: Any) -> CollectiveResult:
    """One collective at one size, as ``gpunetsim collective`` prints it (nccl-tests' figures plus
    the algorithm and protocol NCCL's tuner would pick). ``size_bytes`` may be a string ("64M").

    >>> r = gpunetsim.collective(topology="hgx-h200", gpus=4, op="all_gather", size_bytes="64M",
    ...                          calibration="h200-nvlink")
    >>> r.gpus, r.algo
    (4, 'ring')
    """
    size = parse_size(size_bytes, field="size_bytes") if isinstance(size_bytes, str) else int(size_bytes)
    model = _model(calibration, dict(topology=topology, **topology_options))
    return run_collective(model, op, size, algo, proto, engine)


def ddp(topology: str = "dgx-h100", workload: str = "resnet50", *, gpu: str | None = None,
        batch_size: int | None = None, bucket_cap_mb: float = 25.0, first_bucket_mb: float | None = 1.0,
        compression: str | None = None, gradient_as_bucket_view: bool = False, accumulation_steps: int = 1,
        engine: str = "des", calibration: str | Parameters | None = None,
        **topology_options: Any) -> IterationResult:
    """One PyTorch DDP iteration, as ``gpunetsim ddp`` prints it; ``workload`` is a zoo name or a
    workload file; ``result.as_dict()`` has the fields of ``gpunetsim ddp --json``.

    >>> r = gpunetsim.ddp(topology="dgx-h100", nodes=4, workload="gpt2", bucket_cap_mb=50)
    >>> r.gpus, len(r.buckets) > 1, r.iteration_s > r.forward_s + r.backward_s
    (32, True, True)
    """
    from gpunetsim.ddp_cli import load_any_workload
    model = _model(calibration, dict(topology=topology, **topology_options))
    w = load_any_workload(workload, gpu, model.router.info.gpu_model, batch_size)
    config = DDPConfig(bucket_cap_mb, first_bucket_mb, compression, gradient_as_bucket_view, accumulation_steps)
    return simulate_iteration(model, w, config, engine)


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
