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
  the copy back's bytes at ``ddp.bucket_copy_Bps`` (the copy into the buckets' rate; returned as
  ``ddp.copy_back_s_per_byte``, so the model charges exactly what was subtracted, whatever the kernel
  comes to), per small kernel (2 per gradient tensor, 1 per buffer): the median over those points,
  0 when negative.

The other keys of the model (the collectives, ``ddp.compute_slowdown``) come from the calibration passed
in; the CLI uses the shipped ``h200-nvlink-ddp`` (fitted on H200s) for every host and says so.

Buffer counts are a property of the model (not of the host): they come from the DataParallel
runner's profile of the same model (``buffer_tensors``, :data:`STRUCTURE`).
"""

from __future__ import annotations

import math
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from simulator.collectives.params import Parameters
from simulator.core.errors import InputError
from simulator.core.units import MiB
from simulator.training.buckets import assign_buckets
from simulator.training.ddp import buffer_count, buffer_tensors, host_extra_s
from simulator.training.workload import Workload, step_compute_s, workload_from_dict
from validation.runners.records import read_measurement_records
from validation.check_cli import run_command

DATA = Path(__file__).resolve().parent / "data"
PROBE = DATA / "h100x4_2026-11-26_ddp"
STRUCTURE = DATA / "h100x4_2026-11-26_dp" / "dp_world4.jsonl"
TOPOLOGY = "dgx-h100"
CAP_MB = 25.0
HOST_KEYS = ("ddp.tensor_host_s", "ddp.bucket_host_s", "ddp.buffer_host_s")
KERNEL_KEY = "ddp.tensor_kernel_s"
COPY_KEY = "ddp.copy_back_s_per_byte"
GPU_KEYS = (KERNEL_KEY, COPY_KEY)
MIN_POINTS = len(HOST_KEYS)
"""Points (model and rank count) the host fit needs: three keys."""
CALIBRATION = "h200-nvlink-ddp"
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
        return buffer_tensors(self.workload)


def _buffer_counts(path: Path = STRUCTURE) -> dict[str, int]:
    out = {}
    for i, r in read_measurement_records(path):
        if r.get("kind") != "dp_profile":
            continue
        prof = r.get("profile")
        if not isinstance(prof, dict) or "model" not in r:
            raise InputError("a dp_profile record needs 'model' and a 'profile' object", source=f"{path}:{i}",
                             field="profile", value=prof)
        out[r["model"]] = buffer_count(prof.get("buffer_tensors", 0), f"{path}:{i}")
    return out


def _check_fields(path: Path) -> None:
    """What :func:`read_probe` reads beyond :func:`validation.compute_check.read_compute`'s checks, with
    the record's file:line: a non-empty ``host_iter_s`` list of seconds on every synchronised and
    ``no_sync()`` record, a ``profile`` object on every profile record."""
    for i, r in read_measurement_records(path):
        if r.get("kind") != "ddp_compute":
            continue
        where = f"{path}:{i}"
        if r.get("variant") in ("sync", "nosync"):
            v = r.get("host_iter_s")
            if v is None:
                raise InputError("missing field", source=where, field="host_iter_s")
            if not isinstance(v, list) or not v or not all(
                    isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and t >= 0
                    for t in v):
                raise InputError("must be a non-empty list of seconds >= 0", source=where, field="host_iter_s",
                                 value=v)
        elif r.get("variant") == "profile" and not isinstance(r.get("profile"), dict):
            raise InputError("missing or not an object", source=where, field="profile", value=r.get("profile"))


def read_probe(folder: Path = PROBE) -> list[ProbePoint]:
    """The probe's points, every world size it holds (none from a file with no round after the first).
    InputError for a missing folder, a model missing from :data:`STRUCTURE`, or a record missing a field."""
    from validation.compute_check import read_compute, summarize
    from validation.ddp_compare import scale_compute
    if not Path(folder).is_dir():
        raise InputError("no such folder", source=str(folder))
    buffers = _buffer_counts()
    out = []
    for path in sorted(Path(folder).glob("compute_world*.jsonl")):
        records = read_compute(path)
        _check_fields(path)
        bound = {(r.model, r.world): r.gpu_bound_rounds == r.rounds for r in summarize(records)}
        steady = [r for r in records if int(r["round"]) > 0]
        by: dict[tuple[str, int, str], list[dict]] = {}
        for r in steady:
            by.setdefault((r["model"], int(r["world"]), r["variant"]), []).append(r)
        for (model, world, variant), rs in sorted(by.items()):
            if variant != "sync" or (model, world, "nosync") not in by or (model, world, "profile") not in by:
                continue
            if model not in buffers:
                raise InputError(f"model has no dp_profile record in {STRUCTURE.name} (its buffer count)",
                                 source=str(path), field="model", value=model)
            nos = by[(model, world, "nosync")]
            nosync_s = statistics.median(float(r["median_s"]) for r in nos)
            w = workload_from_dict(dict(by[(model, world, "profile")][0]["profile"]), source=str(path))
            w = replace(w, extras=tuple(w.extras) + (("buffer_tensors", buffers[model]),))
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
    """The five per-tensor keys measured on the probe (module docstring), from ``params``'s other keys.
    InputError with fewer than :data:`MIN_POINTS` points (the three host keys would be underdetermined)."""
    from scipy.optimize import nnls
    pts = list(read_probe() if points is None else points)
    if len(pts) < MIN_POINTS:
        raise InputError(f"{len(pts)} probe point(s) (model and rank count with synchronised and no_sync() rounds "
                         f"after the first); the host keys need at least {MIN_POINTS}", field="compute_world*.jsonl",
                         value=len(pts))
    unit = [params.with_values({k: float(k == h) for k in HOST_KEYS}) for h in HOST_KEYS]
    a = np.array([[host_extra_s(u, p.tensors, p.buckets, p.buffers) for u in unit] for p in pts])
    y = np.array([p.sync_host_s - p.nosync_host_s for p in pts])
    host, _ = nnls(a, y)
    per_byte = 1.0 / params["ddp.bucket_copy_Bps"]
    base = params.with_values({KERNEL_KEY: 0.0, COPY_KEY: 0.0})
    per_kernel = [(p.sync_s - _predict(p, base) - p.workload.total_bytes * per_byte)
                  / (2 * p.tensors + p.buffers) for p in pts if p.gpu_bound]
    return {**dict(zip(HOST_KEYS, (float(x) for x in host))),
            KERNEL_KEY: max(0.0, statistics.median(per_kernel)) if per_kernel else 0.0, COPY_KEY: per_byte}


def table_lines(params: Parameters, points: Sequence[ProbePoint] | None = None) -> tuple[list[str], dict[str, float]]:
    """A markdown table of the probe's points: measured vs modelled host extra and steady iteration,
    and the measured keys."""
    pts = list(read_probe() if points is None else points)
    keys = measure(params, pts)
    with_keys = params.with_values(keys)
    without = params.with_values({k: 0.0 for k in GPU_KEYS})
    lines = ["| model | ranks | gradient tensors | buckets | buffers | host extra per step, measured / model (ms) | "
             "synchronised step, measured (ms) | model without / with per-tensor work (ms) | GPU sets the pace |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p in pts:
        model_host = host_extra_s(with_keys, p.tensors, p.buckets, p.buffers)
        lines.append(f"| {p.model} | {p.world} | {p.tensors} | {p.buckets} | {p.buffers} | "
                     f"{(p.sync_host_s - p.nosync_host_s) * 1e3:.2f} / {model_host * 1e3:.2f} | {p.sync_s * 1e3:.2f} | "
                     f"{_predict(p, without) * 1e3:.2f} / {_predict(p, with_keys) * 1e3:.2f} | "
                     f"{'yes' if p.gpu_bound else 'no'} |")
    return lines, keys


def key_text(key: str, value: float) -> str:
    """One measured key as text: seconds per tensor/bucket/buffer in us, the copy back as its rate."""
    if key == COPY_KEY:
        return f"`{key}` {value:.3g} s/B ({1 / value / 1e12:.3g} TB/s)" if value > 0 else f"`{key}` 0"
    return f"`{key}` {value * 1e6:.1f} us"


def main(argv: Sequence[str] | None = None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m validation.ddp_host",
                                 description="DDP's per-tensor costs measured on one host's ddpcompute probe.")
    ap.add_argument("folder", nargs="?", default=str(PROBE),
                    help="a dataset folder with compute_world*.jsonl (default: the committed 4x H100 probe)")
    a = ap.parse_args(argv)
    return run_command(lambda: _print_table(a.folder))


def _print_table(folder: str) -> None:
    from simulator.collectives.params import load_calibration
    pts = read_probe(Path(folder))
    if not pts:
        raise InputError("no synchronised and no_sync() rounds after the first in compute_world*.jsonl",
                         source=folder)
    lines, keys = table_lines(load_calibration(CALIBRATION), pts)
    print(f"Collective and DDP keys other than these from the shipped calibration `{CALIBRATION}` (fitted on "
          "H200s), whatever host the folder holds.")
    print("\n".join(lines))
    print(", ".join(key_text(k, v).replace("`", "") for k, v in keys.items()))


if __name__ == "__main__":
    sys.exit(main())
