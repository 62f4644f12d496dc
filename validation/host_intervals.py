"""Prediction intervals of the host backends (Gloo, MPI) from residuals, and their coverage.

The block format and how a prediction uses it: simulator.collectives.host_uncertainty. Here:

* :func:`residual_block`: quantiles (5%, 50%, 95%) of log(measured / predicted) per size band (edges 64 KiB
  and 16 MiB, as the NCCL intervals) when every band holds MIN_BAND_POINTS points (the NCCL fit's rule,
  validation.calibrate), and per regime (latency-bound: the model's per-call and per-step latency is half
  the predicted time or more), a regime with fewer points taking every point's quantiles; the source says
  which; with the domain the points cover;
* :func:`fit_block`: the block of a fit from its own residuals, widened by sqrt(n / (n - k)) (n points,
  k fitted keys: a least-squares fit's residuals are that much narrower than a new point's),
  what ``python -m validation.host_calibrate`` writes into a calibration (none on fewer than
  MIN_BAND_POINTS points; InputError when the fit has no more points than keys);
* :func:`gloo_blocks`: the two shipped Gloo blocks (docs/accuracy.md section 6): the calibration's, from the
  residuals of its predictions of every committed point it was not fitted on, and the datasheet's, from the
  defaults' residuals over every committed point; each with its coverage left one dataset out (the
  block built from the other datasets' points, tried on the held-out one's).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from simulator.collectives.params import Parameters
from simulator.collectives.uncertainty import LEVEL, size_band
from simulator.core.errors import InputError
from validation.calibrate import MIN_BAND_POINTS, SIZE_EDGES_BYTES   # the NCCL fit's residual bands and their minimum


def _q(r: Sequence[float]) -> list[float]:
    lo, mid, hi = np.quantile(np.asarray(r, dtype=float), [(1 - LEVEL) / 2, 0.5, (1 + LEVEL) / 2])
    return [float(f"{lo:.6g}"), float(f"{mid:.6g}"), float(f"{hi:.6g}")]


def residual_block(points: Sequence, predicted: Sequence[float], latency_share: Sequence[float],
                   source: str, widen: float = 1.0) -> dict:
    """The residual-only uncertainty block of ``points`` (HostPoint: op, world, tensors, size_bytes, time_s)
    against ``predicted`` seconds; ``latency_share`` per point splits the regimes; ``widen`` scales every
    quantile's distance from the median. Per-band quantiles only when every size band holds MIN_BAND_POINTS
    points (else the regimes' mix applies, as for the NCCL fit); a regime with fewer points takes every
    point's quantiles. ``source`` gets what was left out appended."""
    r = np.log(np.array([p.time_s for p in points]) / np.asarray(predicted, dtype=float))
    sizes = np.array([p.size_bytes for p in points], dtype=float)

    def q(mask: np.ndarray) -> list[float]:
        lo, mid, hi = _q(r[mask] if mask.sum() >= MIN_BAND_POINTS else r)
        return [mid - (mid - lo) * widen, mid, mid + (hi - mid) * widen]
    bands = np.array([size_band(s, SIZE_EDGES_BYTES) for s in sizes])
    counts = np.bincount(bands, minlength=len(SIZE_EDGES_BYTES) + 1)
    lat = np.asarray(latency_share) >= 0.5
    residual: dict = {"latency": q(lat), "bandwidth": q(~lat)}
    notes = [f"{name} regime: {int(m.sum())} points, every point's quantiles" for name, m in
             (("latency", lat), ("bandwidth", ~lat)) if m.sum() < MIN_BAND_POINTS]
    if counts.min() >= MIN_BAND_POINTS:
        residual["by_size"] = {"edges_bytes": list(SIZE_EDGES_BYTES),
                               "q": [q(bands == b) for b in range(len(SIZE_EDGES_BYTES) + 1)]}
    else:
        notes.insert(0, f"no per-band quantiles (points per size band {', '.join(map(str, counts))}; fewer than "
                        f"{MIN_BAND_POINTS} in one)")
    return {"level": LEVEL,
            "residual": residual,
            "domain": {"worlds": sorted({int(p.world) for p in points}), "ops": sorted({p.op for p in points}),
                       "min_bytes": int(sizes.min()), "max_bytes": int(sizes.max()),
                       "tensors": sorted({p.tensors for p in points}),
                       "servers": 1},          # the fits model one server (validation.host_calibrate.HostPredictor)
            "source": source + (f" ({'; '.join(notes)})" if notes else "")}


def latency_shares(points: Sequence, params: Parameters, topology: str, backend: str) -> list[float]:
    """Per point, the share of the predicted time that is per-call and per-step latency."""
    import topologies
    from simulator.network.host_collectives import HostCollectiveModel
    models: dict = {}
    out = []
    for p in points:
        key = (p.world, p.tensors)
        if key not in models:
            models[key] = HostCollectiveModel(topologies.prepare(topology, gpus_per_node=p.world), params,
                                              backend, p.tensors)
        t = models[key].timing(p.op, p.size_bytes)
        out.append((t.call_s + t.latency_s) / t.time_s if t.time_s > 0 else 1.0)
    return out


def fit_block(points: Sequence, predictor, params: Parameters, keys: int) -> dict | None:
    """The block of a fit of ``keys`` parameters to ``points``: its residuals widened by sqrt(n / (n - k));
    None on fewer than MIN_BAND_POINTS points (no spread worth the name); InputError when the fit has no
    more points than keys (its residuals say nothing of a new point's)."""
    n = len(points)
    if n <= keys:
        raise InputError(f"{n} points for {keys} fitted keys: a fit needs more points than keys (more sizes or "
                         "process counts)", field="measurements", value=n)
    if n < MIN_BAND_POINTS:
        return None
    widen = math.sqrt(n / (n - keys))
    return residual_block(points, predictor.predict(points, params),
                          latency_shares(points, params, predictor.topology, predictor.backend),
                          f"the fit's own residuals over {n} points, widened by sqrt(n / (n - k)) = {widen:.2f} "
                          f"for its {keys} keys", widen)


def coverage(points: Sequence, predicted: Sequence[float], block: dict) -> tuple[float, float]:
    """(share of measurements inside the interval, median interval width over the prediction), percent."""
    from simulator.collectives.uncertainty import Uncertainty
    unc = Uncertainty.from_block(block)
    inside, widths = [], []
    for p, t in zip(points, predicted):
        lo, hi = unc.bounds(float(t), 0.0, 0.0, p.size_bytes)
        inside.append(lo <= p.time_s <= hi)
        widths.append((hi - lo) / t)
    return 100.0 * float(np.mean(inside)), 100.0 * float(np.median(widths))


def _lodo(groups: dict[str, tuple[list, np.ndarray, list[float]]], source: str) -> tuple[dict, float, float]:
    """The block over every group, and its coverage / median width with each dataset left out in turn."""
    pts = [p for g in groups.values() for p in g[0]]
    pred = np.concatenate([g[1] for g in groups.values()])
    share = [s for g in groups.values() for s in g[2]]
    cov, wid = [], []
    for name, (gp, gpred, _) in groups.items():
        others = [k for k in groups if k != name]
        if not others:
            continue
        b = residual_block([p for k in others for p in groups[k][0]], np.concatenate([groups[k][1] for k in others]),
                           [s for k in others for s in groups[k][2]], source)
        c, w = coverage(gp, gpred, b)
        cov += [c] * len(gp)
        wid += [w] * len(gp)
    inside = float(np.mean(cov)) if cov else float("nan")
    widths = float(np.median(wid)) if wid else float("nan")
    return residual_block(pts, pred, share, source), inside, widths


def gloo_blocks(per: Sequence[tuple[Path, list]], fit_name: str, fitted: Parameters, predictor) -> dict:
    """{"calibrated": (block, coverage %, width %), "datasheet": (...)} for the Gloo data ``per``
    ([(dataset folder, points)]); the calibrated residuals leave out the fitted points (``fit_name``'s
    2-process runs)."""
    cal: dict[str, tuple] = {}
    sheet: dict[str, tuple] = {}
    defaults = Parameters()
    for folder, pts in per:
        held = [p for p in pts if not (folder.name == fit_name and p.world == 2)]
        if held:
            cal[folder.name] = (held, predictor.predict(held, fitted),
                                latency_shares(held, fitted, predictor.topology, predictor.backend))
        sheet[folder.name] = (pts, predictor.predict(pts, defaults),
                              latency_shares(pts, defaults, predictor.topology, predictor.backend))
    return {"calibrated": _lodo(cal, f"predictions of the Gloo fit on {fit_name}'s 2-process runs for every "
                                     f"committed Gloo point it was not fitted on ({', '.join(cal)})"),
            "datasheet": _lodo(sheet, f"the datasheet defaults against every committed Gloo point ({', '.join(sheet)})")}
