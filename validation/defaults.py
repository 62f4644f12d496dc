"""The uncalibrated defaults' uncertainty, from the spread of the public nccl-tests corpus.

Without a calibration, a prediction uses NCCL's constants and datasheet bandwidths. How far that
lands from a real cluster is what the public corpus shows: per-call floors of 8-GPU H100 runs span
~13 to ~40 us between clusters, cloud fabrics deliver a fraction of their nominal bandwidth. The
quantiles of log(measured / predicted) over every public dataset, for latency-bound and
bandwidth-bound points apart, are the datasheet's uncertainty block
(``simulator/collectives/calibrations/uncertainty/datasheet.json``, written by
``python -m validation.accuracy --calibrations``): the uncalibrated 90% intervals.

:func:`leave_one_out_intervals` is the honest check: each dataset's points against quantiles
computed from the other datasets only.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import numpy as np

from simulator.collectives.params import Parameters
from simulator.collectives.uncertainty import LEVEL
from validation.compare import (Predictor, compare, dataset_points, force_flush, net_latency, net_plugin_proto,
                                nvls_chunk_settings, topo_from_hint, tuner_plugin)
from validation.parsers import CollMeasurement, read_jsonl


@dataclass(frozen=True)
class Residuals:
    """One public dataset's points under the datasheet parameters."""

    name: str
    size_bytes: np.ndarray
    log_ratio: np.ndarray        # log(measured / predicted)
    latency_bound: np.ndarray    # alpha >= S * beta for the plan that runs


def public_parts(data_dir: Path) -> Iterator[tuple[str, str, Mapping, list[CollMeasurement]]]:
    """(label, file, topology hint, points) of every public dataset; a file whose variants ran on
    different machines (``topology_by_variant``) gives one part per variant."""
    for f in sorted(glob.glob(str(data_dir / "public" / "*.jsonl"))):
        ds = read_jsonl(f)
        name = Path(f).stem
        by_variant = ds.meta.get("topology_by_variant") or {}
        parts = [(f"{name} [{v}]", h, [p for p in dataset_points(ds) if p.variant == v])
                 for v, h in by_variant.items()] or [(name, ds.meta.get("topology") or {}, dataset_points(ds))]
        for label, hint, pts in parts:      # the NCCL (and tuner plugin) that ran picks the algorithms
            yield label, f, {**hint, "nccl_version": ds.meta.get("nccl_version"),
                             "tuner_plugin": tuner_plugin(ds.meta), "plugin_proto": net_plugin_proto(ds.meta),
                             "force_flush": force_flush(ds.meta), "net_latency_s": net_latency(ds.meta),
                             **nvls_chunk_settings(ds.meta)}, pts


def public_residuals(data_dir: Path, params: Parameters) -> list[Residuals]:
    out = []
    for label, f, hint, pts in public_parts(data_dir):
        pred = Predictor(topo_from_hint(hint, f), params)
        comps, _ = compare(pts, pred)
        if not comps:
            continue
        lat = [pred.latency_bound(c) for c in comps]
        out.append(Residuals(label, np.array([c.point.size_bytes for c in comps]),
                             np.log([c.point.time_s / c.predicted_s for c in comps]), np.array(lat)))
    return out


def _quantiles(values: np.ndarray, level: float) -> list[float]:
    return [float(x) for x in np.quantile(values, (0.5 - level / 2, 0.5, 0.5 + level / 2))]


def uncertainty_block(res: Sequence[Residuals], level: float = LEVEL) -> dict:
    """The datasheet's uncertainty block: residual quantiles by regime, every dataset weighing the
    same (each dataset's points weighted by 1 / its number of points, by resampling to equal counts)."""
    lat = np.concatenate([_equalised(r.log_ratio[r.latency_bound]) for r in res])
    bw = np.concatenate([_equalised(r.log_ratio[~r.latency_bound]) for r in res])
    return {"level": level, "keys": [], "scale": [], "cov": [],
            "residual": {"latency": _quantiles(lat, level), "bandwidth": _quantiles(bw, level)},
            "domain": {}}


def _equalised(x: np.ndarray, n: int = 64) -> np.ndarray:
    """``n`` values with the same distribution as ``x`` (its quantiles), so datasets weigh alike."""
    return np.quantile(x, np.linspace(0, 1, n)) if len(x) else np.zeros(0)


def leave_one_out_intervals(res: Sequence[Residuals], level: float = LEVEL) -> dict[str, tuple[np.ndarray, ...]]:
    """Per dataset: (size_bytes, inside the interval, interval width over the prediction) of each
    point, the regimes' quantiles computed from the other datasets only."""
    out = {}
    for i, r in enumerate(res):
        q = uncertainty_block([x for j, x in enumerate(res) if j != i], level)["residual"]
        lo = np.where(r.latency_bound, q["latency"][0], q["bandwidth"][0])
        hi = np.where(r.latency_bound, q["latency"][2], q["bandwidth"][2])
        out[r.name] = (r.size_bytes, (lo <= r.log_ratio) & (r.log_ratio <= hi), np.exp(hi) - np.exp(lo))
    return out
