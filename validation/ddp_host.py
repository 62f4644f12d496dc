"""DDP's per-tensor costs, measured on one host: the compute probe's synchronised vs ``no_sync()`` steps.

    python -m validation.ddp_host [FOLDER]   # the measured keys and the probe's points, as a table

The probe ``validation/data/h100x4_2026-11-26_ddp`` (:mod:`validation.runners.ddp_compute`, 4x H100,
2 and 4 ranks) trains each model under DDP with and without ``no_sync()`` in interleaved rounds, each
step timed with CUDA events and the host's time between step starts kept (``host_iter_s``). Only
rounds after the first are read: the first synchronised round's iterations include DDP's first 10,
which its runtime-stats sampling holds back (:mod:`validation.ddp_logger`).

* Host (:data:`HOST_KEYS`): the first two timed steps of a round start from an idle GPU, so the host
  runs ahead and ``host_iter_s`` is its own issue time. The synchronised step's extra over
  ``no_sync()`` is fitted, non-negative least squares over the models and rank counts, as
  ``ddp.tensor_host_s`` per gradient tensor + ``ddp.bucket_host_s`` per bucket (25 MiB) +
  ``ddp.buffer_host_s`` per buffer tensor: a direct measurement of host time, not a fit to iterations.
* GPU (``ddp.tensor_kernel_s``): where the GPU sets the pace (the plain step equals its GPU time in
  every round: validation.compute_check's ``gpu_bound_rounds``), the steady synchronised step minus the
  DDP model's prediction without per-tensor work (compute = the same rounds' ``no_sync()`` step), less
  the copy back's bytes at ``ddp.bucket_copy_Bps``, per small kernel (2 per gradient tensor, 1 per
  buffer): the median over those points.

Buffer counts are a property of the model (not of the host): they come from the DataParallel
runner's profile of the same model (``buffer_tensors``, :data:`STRUCTURE`).
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from simulator.collectives.params import Parameters
from simulator.core.inputs import read_jsonl
from simulator.core.units import MiB
from simulator.training.buckets import assign_buckets
from simulator.training.workload import Workload, step_compute_s, workload_from_dict

DATA = Path(__file__).resolve().parent / "data"
PROBE = DATA / "h100x4_2026-11-26_ddp"
STRUCTURE = DATA / "h100x4_2026-11-26_dp" / "dp_world4.jsonl"
TOPOLOGY = "dgx-h100"
CAP_MB = 25.0
HOST_KEYS = ("ddp.tensor_host_s", "ddp.bucket_host_s", "ddp.buffer_host_s")
KERNEL_KEY = "ddp.tensor_kernel_s"
HEAD_STEPS = 2
"""Timed steps at the start of a round whose host time is the host's own issue time (the GPU idle)."""


@dataclass(frozen=True)
class ProbePoint:
    """One model at one rank count on the probe host (seconds; medians over the steady rounds)."""

    model: str
    world: int
    workload: Workload             # the hooked profile scaled to the no_sync() step, with buffer_tensors
    buckets: int
    sync_s: float
    nosync_s: float
    sync_host_s: float             # the host's issue time of one step (first steps of each round)
    nosync_host_s: float
    gpu_bound: bool

    @property
    def tensors(self) -> int:
        return len(self.workload.params)

    @property
    def buffers(self) -> int:
        return int(dict(self.workload.extras).get("buffer_tensors", 0))


def _buffer_counts(path: Path = STRUCTURE) -> dict[str, int]:
    return {r["model"]: int(r["profile"].get("buffer_tensors", 0)) for _, r in read_jsonl(path)
            if r.get("kind") == "dp_profile"}


def read_probe(folder: Path = PROBE) -> list[ProbePoint]:
    """The probe's points, every world size it holds."""
    from validation.compute_check import read_compute, summarize
    buffers = _buffer_counts()
    out = []
    for path in sorted(folder.glob("compute_world*.jsonl")):
        records = read_compute(path)
        bound = {(r.model, r.world): r.gpu_bound_rounds == r.rounds for r in summarize(records)}
        steady = [r for r in records if int(r["round"]) > 0]
        by: dict[tuple[str, int, str], list[dict]] = {}
        for r in steady:
            by.setdefault((r["model"], int(r["world"]), r["variant"]), []).append(r)
        for (model, world, variant), rs in sorted(by.items()):
            if variant != "sync" or (model, world, "nosync") not in by or (model, world, "profile") not in by:
                continue
            nos = by[(model, world, "nosync")]
            nosync_s = statistics.median(float(r["median_s"]) for r in nos)
            prof = dict(by[(model, world, "profile")][0]["profile"])
            w = workload_from_dict(prof, source=str(path))
            w = replace(w, extras=tuple(w.extras) + (("buffer_tensors", buffers.get(model, 0)),))
            from validation.ddp_compare import scale_compute
            w = scale_compute(w, nosync_s / step_compute_s(w))
            nb = len(assign_buckets(w.params, int(CAP_MB * MiB), int(CAP_MB * MiB)))
            out.append(ProbePoint(model, world, w, nb, statistics.median(float(r["median_s"]) for r in rs), nosync_s,
                                  statistics.median(t for r in rs for t in r["host_iter_s"][:HEAD_STEPS]),
                                  statistics.median(t for r in nos for t in r["host_iter_s"][:HEAD_STEPS]),
                                  bound.get((model, world), False)))
    return out


def _predict(point: ProbePoint, params: Parameters) -> float:
    import topologies
    from simulator.network.closed_form import CostModel
    from simulator.training.ddp import DDPConfig, simulate_iteration
    model = CostModel(topologies.prepare(TOPOLOGY, gpus_per_node=point.world, nvls=False), params)
    return simulate_iteration(model, point.workload, DDPConfig(bucket_cap_mb=CAP_MB, first_bucket_mb=None),
                              "closed").iteration_s


def measure(params: Parameters, points: Sequence[ProbePoint] | None = None) -> dict[str, float]:
    """The four per-tensor keys measured on the probe (module docstring), from ``params``'s other keys."""
    from scipy.optimize import nnls
    pts = list(read_probe() if points is None else points)
    a = np.array([[p.tensors, p.buckets, p.buffers] for p in pts], dtype=float)
    y = np.array([p.sync_host_s - p.nosync_host_s for p in pts])
    host, _ = nnls(a, y)
    base = params.with_values({KERNEL_KEY: 0.0})
    per_kernel = [(p.sync_s - _predict(p, base) - p.workload.total_bytes / params["ddp.bucket_copy_Bps"])
                  / (2 * p.tensors + p.buffers) for p in pts if p.gpu_bound]
    return {**dict(zip(HOST_KEYS, (float(x) for x in host))),
            KERNEL_KEY: max(0.0, statistics.median(per_kernel)) if per_kernel else 0.0}


def table_lines(params: Parameters, points: Sequence[ProbePoint] | None = None) -> tuple[list[str], dict[str, float]]:
    """A markdown table of the probe's points: measured vs modelled host extra and steady iteration,
    and the measured keys."""
    pts = list(read_probe() if points is None else points)
    keys = measure(params, pts)
    with_keys = params.with_values(keys)
    lines = ["| model | ranks | gradient tensors | buckets | buffers | host extra per step, measured / model (ms) | "
             "synchronised step, measured (ms) | model without / with per-tensor work (ms) | GPU sets the pace |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p in pts:
        model_host = p.tensors * keys[HOST_KEYS[0]] + p.buckets * keys[HOST_KEYS[1]] + p.buffers * keys[HOST_KEYS[2]]
        lines.append(f"| {p.model} | {p.world} | {p.tensors} | {p.buckets} | {p.buffers} | "
                     f"{(p.sync_host_s - p.nosync_host_s) * 1e3:.2f} / {model_host * 1e3:.2f} | {p.sync_s * 1e3:.2f} | "
                     f"{_predict(p, params.with_values({KERNEL_KEY: 0.0})) * 1e3:.2f} / {_predict(p, with_keys) * 1e3:.2f} | "
                     f"{'yes' if p.gpu_bound else 'no'} |")
    return lines, keys


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    from simulator.collectives.params import load_calibration
    from simulator.core.errors import InputError
    ap = argparse.ArgumentParser(prog="python -m validation.ddp_host",
                                 description="DDP's per-tensor costs measured on one host's ddpcompute probe.")
    ap.add_argument("folder", nargs="?", default=str(PROBE),
                    help="a dataset folder with compute_world*.jsonl (default: the committed 4x H100 probe)")
    a = ap.parse_args(argv)
    try:
        pts = read_probe(Path(a.folder))
        if not pts:
            raise InputError("no synchronised and no_sync() rounds after the first in compute_world*.jsonl",
                             source=a.folder)
        lines, keys = table_lines(load_calibration("h200-nvlink-ddp"), pts)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    print(", ".join(f"{k} = {v * 1e6:.1f} us" for k, v in keys.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
