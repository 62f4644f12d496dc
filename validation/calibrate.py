"""Fit the parameter set to measured collective times (calibration).

Least squares (scipy) on log(predicted / measured) over every point, so a 10 us and a 10 ms point
weigh the same. Only parameters that the data can move are fitted: a candidate key stays free when
nudging it changes at least one prediction. Latencies are fitted in seconds, efficiencies as
fractions, within the bounds of ``simulator.collectives.params.bounds``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import least_squares

from simulator.collectives.params import DEFAULTS, Parameters, bounds
from validation.compare import Comparison, Predictor, compare, summary
from validation.parsers import CollMeasurement

CANDIDATES = (
    ["call_overhead_s", "rank_overhead_s", "shm_efficiency", "ll_max_busbw_Bps", "socket_max_Bps"]
    + [k for k in DEFAULTS if k.startswith(("base_latency_s.", "proto_efficiency.", "link_efficiency."))]
    + [k for k in DEFAULTS if k.startswith(("op_efficiency.", "op_overhead_s.", "op_local_s_per_byte."))]
    + [k for k in DEFAULTS if k.startswith("hop_latency_s.")]
)


@dataclass(frozen=True)
class Fit:
    params: Parameters
    keys: tuple[str, ...]
    before: dict
    after: dict
    comparisons: tuple[Comparison, ...]
    skipped: int


def _predict_all(predictor: Predictor, points: Sequence[CollMeasurement]) -> np.ndarray:
    out = np.empty(len(points))
    for i, p in enumerate(points):
        c = predictor.predict(p)
        out[i] = c.predicted_s if c else np.nan
    return out


def free_keys(predictor: Predictor, points: Sequence[CollMeasurement],
              candidates: Sequence[str] = CANDIDATES) -> list[str]:
    """Candidate keys whose change moves at least one prediction."""
    base = _predict_all(predictor, points)
    keep = []
    for k in candidates:
        v = predictor.params[k]
        nudged = v * 1.25 if v > 0 else 1e-6
        lo, hi = bounds(k)
        nudged = min(max(nudged, lo), hi) if nudged != v else v * 0.8
        trial = _predict_all(predictor.with_params(predictor.params.with_values({k: nudged})), points)
        if np.nanmax(np.abs(trial / base - 1.0)) > 1e-6:
            keep.append(k)
    return keep


PRIOR_WEIGHT = 0.1
"""Pull of the datasheet values: a parameter moved by 100% of its default costs as much as one point
mispredicted by 10%. Parameters the data cannot pin down (e.g. per-hop latency from 2-GPU runs,
where every ring has one hop) then stay near NCCL's values instead of drifting."""


def _prior_ref(key: str) -> float:
    """Scale of a parameter for the prior: its default, or a typical size when the default is 0."""
    d = DEFAULTS[key]
    if d > 0:
        return d
    return 1e-12 if "_s_per_byte" in key else 10e-6


def fit_log(params: Parameters, keys: Sequence[str], predict: Callable[[Parameters], np.ndarray],
            measured: np.ndarray, prior_weight: float = PRIOR_WEIGHT, name: str = "calibrated") -> Parameters:
    """``params`` with ``keys`` refitted: minimises sum(log(predict(p)/measured)^2) +
    prior_weight^2 * sum(((p - default) / scale)^2) within the keys' bounds. ``predict`` maps a
    parameter set to one predicted time per measurement (any model: NCCL, DDP, Gloo, ...)."""
    keys = list(keys)
    scale = np.array([_prior_ref(k) for k in keys])       # every unknown of order 1
    lo = np.array([bounds(k)[0] for k in keys]) / scale
    hi = np.array([bounds(k)[1] for k in keys]) / scale
    # start off the bounds (a default of 0 sits on its lower bound, where trust regions stall)
    x0 = np.clip(np.array([params[k] for k in keys]) / scale, lo + 0.05 * (hi - lo).clip(max=1), hi)
    default = np.array([DEFAULTS[k] for k in keys])

    def residuals(x: np.ndarray) -> np.ndarray:
        pred = predict(params.with_values(dict(zip(keys, x * scale))))
        return np.concatenate([np.log(pred / measured), prior_weight * (x * scale - default) / scale])

    sol = least_squares(residuals, x0, bounds=(lo, hi), x_scale=1.0, diff_step=1e-3, max_nfev=200 * max(1, len(keys)))
    return params.with_values(dict(zip(keys, sol.x * scale)), name=name)


def calibrate(points: Sequence[CollMeasurement], predictor: Predictor, keys: Sequence[str] | None = None,
              name: str = "calibrated", prior_weight: float = PRIOR_WEIGHT) -> Fit:
    """Fitted parameters for ``points`` (measured collectives) on ``predictor``'s topology.

    Minimises sum(log(predicted/measured)^2) + prior_weight^2 * sum(((p - default) / scale)^2)."""
    usable, skipped = compare(points, predictor)
    pts = [c.point for c in usable]
    if not pts:
        from simulator.core.errors import InputError
        raise InputError("no measurement the model can represent (check the op, world size and variant)",
                         field="measurements")
    keys = list(keys) if keys is not None else free_keys(predictor, pts)
    measured = np.array([p.time_s for p in pts])
    fitted = fit_log(predictor.params, keys, lambda q: _predict_all(predictor.with_params(q), pts), measured,
                     prior_weight, name)
    after, _ = compare(pts, predictor.with_params(fitted))
    return Fit(fitted, tuple(keys), summary(usable), summary(after), tuple(after), len(skipped))
