"""Gloo and MPI collectives: read measurements, fit the ``gloo.*`` (``mpi.*``) parameters, predict.

::

    python -m validation.host_calibrate --measurements gloo_world2.jsonl --topology hgx-h200 \\
        --tensors cpu --out gloo-cal.json

Measurements are the collectives runner's ``kind:"coll"`` records with ``backend:"gloo"``
(``validation/runners/collectives.py``; one variant per launch, e.g. ``cpu-L0``). Each
(world, tensors, op, size) point is the median over launches of each launch's median time, and
the launches' spread is kept. The fit (:func:`validation.calibrate.fit_log`: log-time least
squares with a mild pull towards the defaults) moves the per-call and per-step latencies, the
loopback bandwidth and the CPU reduction rate on CPU tensors, and the staging efficiency on CUDA
tensors (the other parameters held at the CPU fit), so that "calibrate on 2 processes, predict
4" is a prediction: the 4-process points are never fitted. The calibration carries the fit's residual
spread as its ``host_uncertainty`` block (validation.host_intervals.fit_block), from which
``gpunetsim collective --backend gloo|mpi --calibration FILE`` prints 90% intervals; on fewer than
MIN_BAND_POINTS (10) points it carries none (the datasheet's interval applies), and a fit with no more
points than keys is refused.
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from simulator.collectives.params import Parameters, save_calibration
from simulator.core import limits
from simulator.core.errors import InputError
from validation.fields import Fields
from validation.calibrate import MIN_BAND_POINTS
from validation.host_intervals import fit_block
from validation.runners.records import read_measurement_records
from validation.check_cli import run_command

CPU_KEYS = ("gloo.call_overhead_s", "gloo.step_latency_s.loopback", "gloo.loopback_Bps", "gloo.reduce_Bps")
CUDA_KEYS = ("gloo.staging_efficiency", "gloo.staging_overhead_s")
MPI_KEYS = ("mpi.call_overhead_s", "mpi.step_latency_s.shm", "mpi.shm_Bps", "mpi.reduce_Bps")
"""What MPI's fit moves (CPU tensors on one server; ``mpi.step_latency_s.net`` and
``mpi.net_efficiency`` need runs across servers and are left to ``keys``)."""


@dataclass(frozen=True)
class HostPoint:
    """One collective at one size: median over launches (seconds) and the launches' range."""

    op: str
    world: int
    tensors: str
    size_bytes: int
    time_s: float
    launch_times_s: tuple[float, ...]

    @property
    def spread_pct(self) -> float:
        """(slowest - fastest launch) / median, in percent."""
        return 100.0 * (max(self.launch_times_s) - min(self.launch_times_s)) / self.time_s


def read_points(paths: Iterable[str | Path], backend: str = "gloo") -> list[HostPoint]:
    """The measured points of ``backend`` in the JSONL files, one per (op, world, tensors, size)."""
    per: dict[tuple[str, int, str, int], list[float]] = {}
    for path in paths:
        for n, r in read_measurement_records(path):
            if r.get("kind") != "coll" or r.get("backend") != backend:
                continue
            f = Fields(r, str(path), f"line {n}", "coll")
            key = (f.text("op"), f.whole("world", low=1, high=limits.GPUS.value), f.text("device", "cpu"),
                   f.whole("bytes", high=limits.MAX_SIZE_BYTES))
            per.setdefault(key, []).append(float(f.number("time_s", positive=True)))  # type: ignore[arg-type]
    return [HostPoint(op, w, t, b, statistics.median(v), tuple(v)) for (op, w, t, b), v in sorted(per.items())]


class HostPredictor:
    """Predicted times of host-backend points on one server preset (one process per GPU)."""

    def __init__(self, topology: str, backend: str = "gloo") -> None:
        self.topology, self.backend = topology, backend

    def predict(self, points: Sequence[HostPoint], params: Parameters) -> np.ndarray:
        import topologies
        from simulator.network.host_collectives import HostCollectiveModel
        models: dict[tuple[int, str], HostCollectiveModel] = {}
        out = np.empty(len(points))
        for i, p in enumerate(points):
            key = (p.world, p.tensors)
            if key not in models:
                cluster = topologies.prepare(self.topology, gpus_per_node=p.world)
                models[key] = HostCollectiveModel(cluster, params, self.backend, p.tensors)
            out[i] = models[key].time_s(p.op, p.size_bytes)
        return out


def _key_sets(predictor: HostPredictor) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return (("cpu", MPI_KEYS),) if predictor.backend == "mpi" else (("cpu", CPU_KEYS), ("cuda", CUDA_KEYS))


def fitted_keys(points: Sequence[HostPoint], predictor: HostPredictor) -> tuple[str, ...]:
    """The keys :func:`fit` moves on ``points`` (those of the tensor kinds they hold)."""
    return tuple(k for tensors, keys in _key_sets(predictor) if any(p.tensors == tensors for p in points)
                 for k in keys)


def fit(points: Sequence[HostPoint], predictor: HostPredictor, params: Parameters | None = None,
        name: str = "gloo-calibrated") -> Parameters:
    """Parameters fitted to ``points``: the CPU keys on CPU-tensor points, then the staging
    efficiency on CUDA-tensor points (either set may be absent); MPI's keys for an MPI predictor."""
    from validation.calibrate import fit_log
    params = params or Parameters()
    for tensors, keys in _key_sets(predictor):
        pts = [p for p in points if p.tensors == tensors]
        if pts:
            params = fit_log(params, keys, lambda q: predictor.predict(pts, q),
                             np.array([p.time_s for p in pts]), name=name)
    return params


def errors_pct(points: Sequence[HostPoint], predicted: np.ndarray) -> np.ndarray:
    """|predicted / measured - 1| in percent, per point."""
    return 100.0 * np.abs(predicted / np.array([p.time_s for p in points]) - 1.0)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m validation.host_calibrate", description=__doc__.splitlines()[0])
    ap.add_argument("--measurements", nargs="+", required=True, help="JSONL files of the collectives runner")
    ap.add_argument("--topology", default="hgx-h200", help="server preset the processes ran on")
    ap.add_argument("--backend", default="gloo", choices=["gloo", "mpi"],
                    help="whose records to read and whose parameters to fit")
    ap.add_argument("--world", type=int, default=None, help="fit only this number of processes")
    ap.add_argument("--out", required=True, help="calibration JSON to write")
    a = ap.parse_args(argv)
    return run_command(lambda: _calibrate(a))


def _calibrate(a: argparse.Namespace) -> None:
    """``main``'s work: fit, write ``--out``, print the fitted keys."""
    pts = [p for p in read_points(a.measurements, a.backend) if a.world is None or p.world == a.world]
    if not pts:
        raise InputError(f"no {a.backend} collective in these files", field="measurements", value=a.measurements)
    pred = HostPredictor(a.topology, a.backend)
    before = errors_pct(pts, pred.predict(pts, Parameters()))
    params = fit(pts, pred, name=f"{a.backend}-calibrated")
    after = errors_pct(pts, pred.predict(pts, params))
    block = fit_block(pts, pred, params, len(fitted_keys(pts, pred)))
    if block is not None:
        params = params.with_host_uncertainty({a.backend: block})
    save_calibration(params, a.out, fitted_on=[str(m) for m in a.measurements], topology=a.topology,
                     points=len(pts), median_err_pct_before=float(np.median(before)),
                     median_err_pct_after=float(np.median(after)))
    print(f"{len(pts)} points: median error {np.median(before):.1f}% with defaults, "
          f"{np.median(after):.1f}% fitted (in sample) -> {a.out}")
    for k, v in sorted(params.diff().items()):
        print(f"  {k} = {v:.4g}")
    if block is None:
        print(f"  no {a.backend} interval block: fewer than {MIN_BAND_POINTS} points; predictions with this "
              f"calibration take the datasheet's {a.backend} interval")


if __name__ == "__main__":
    raise SystemExit(main())
