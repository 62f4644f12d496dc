"""Stragglers: per-GPU compute-time variability seen through synchronous collectives.

Each GPU's compute time in an iteration is its nominal time times a factor
``X_r = scale_r * Y_r``: ``scale_r`` is 1, or the factor of a GPU listed as slow, and ``Y_r`` is
drawn independently every iteration from one distribution of mean 1 and coefficient of variation
``cv``:

* ``normal``: ``Y = 1 + cv * Z`` with ``Z`` standard normal;
* ``lognormal``: ``Y = exp(mu + sigma * Z)``, ``sigma^2 = ln(1 + cv^2)``, ``mu = -sigma^2 / 2``;
* ``none``: ``Y = 1`` (only the slow GPUs' fixed factors).

A synchronous collective (every DDP bucket's all-reduce) waits for the slowest rank, so a job's
compute stretches by ``M = max_r X_r`` per iteration (clamped at 0 for the normal's far tail).
:func:`expected_max` integrates ``E[M] = int_0^inf (1 - prod_r F_r(x)) dx - int_-inf^0 prod_r F_r(x) dx``
numerically (``F_r`` the CDF of ``X_r``), :func:`max_quantiles` inverts ``prod_r F_r`` (where one
iteration's ``M`` falls: its 5% and 95% quantiles are the 90% interval of one iteration's multiplier, a
property of the model, not a measured spread); :func:`monte_carlo_max` estimates ``E[M]`` from draws of an
explicit, seeded ``numpy.random.Generator``. Both take the per-rank scales, so one slow GPU among
a thousand is exact, not approximated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
from scipy import special

from simulator.core.errors import InputError

DISTRIBUTIONS = ("none", "normal", "lognormal")


@dataclass(frozen=True)
class StragglerModel:
    """Compute-time variability of every GPU (``cv``, ``distribution``) and fixed slow GPUs
    (``slow``: GPU node name -> factor > 0 on its mean compute time)."""

    distribution: str = "none"
    cv: float = 0.0
    slow: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.distribution not in DISTRIBUTIONS:
            raise InputError(f"unknown distribution (expected one of {', '.join(DISTRIBUTIONS)})",
                             field="stragglers.distribution", value=self.distribution)
        if not (isinstance(self.cv, (int, float)) and 0 <= self.cv < math.inf):
            raise InputError("cv must be a non-negative number", field="stragglers.cv", value=self.cv)
        if self.distribution == "normal" and self.cv > 0.5:
            raise InputError("a normal compute time with cv above 0.5 is negative too often; use lognormal",
                             field="stragglers.cv", value=self.cv)
        for gpu, f in self.slow.items():
            if not (isinstance(f, (int, float)) and 0 < f < math.inf):
                raise InputError("a slow GPU's factor must be a positive number", field=f"stragglers.slow.{gpu}",
                                 value=f)

    @property
    def active(self) -> bool:
        return (self.distribution != "none" and self.cv > 0) or any(f != 1.0 for f in self.slow.values())

    def scales(self, gpus: Sequence[str]) -> np.ndarray:
        """Per-rank mean factors of ``gpus`` (1 except the slow ones)."""
        return np.array([float(self.slow.get(g, 1.0)) for g in gpus])

    def draw(self, rng: np.random.Generator, scales: np.ndarray, iterations: int) -> np.ndarray:
        """``iterations`` draws of ``M = max_r X_r`` (one row of rank factors per iteration)."""
        if self.distribution == "none" or self.cv == 0:
            return np.full(iterations, max(float(scales.max(initial=1.0)), 0.0) if len(scales) else 1.0)
        z = rng.standard_normal((iterations, len(scales)))
        if self.distribution == "normal":
            y = 1.0 + self.cv * z
        else:
            s2 = math.log1p(self.cv ** 2)
            y = np.exp(-s2 / 2 + math.sqrt(s2) * z)
        return np.maximum((scales * y).max(axis=1), 0.0)

    def sampler(self, rng: np.random.Generator, scales: np.ndarray) -> Callable[[], float]:
        """A function giving the next iteration's ``M`` (same seed, same sequence)."""
        if not self.active:
            return lambda: 1.0
        return lambda: float(self.draw(rng, scales, 1)[0])


def _cdf(model: StragglerModel, x: np.ndarray) -> np.ndarray:
    """CDF of ``Y`` (mean-1 factor) at ``x``."""
    if model.distribution == "normal":
        return special.ndtr((x - 1.0) / model.cv)
    s = math.sqrt(math.log1p(model.cv ** 2))
    with np.errstate(divide="ignore"):
        return special.ndtr((np.log(np.maximum(x, 1e-300)) + s * s / 2) / s) * (x > 0)


def _scales(scales: Sequence[float] | np.ndarray) -> np.ndarray:
    """``scales`` as an array, checked: a rank's scale is a finite number >= 0 (0: its compute takes no time, so
    its ``X`` is 0 whatever is drawn)."""
    scales = np.asarray(scales, dtype=float)
    bad = ~(np.isfinite(scales) & (scales >= 0))
    if bad.any():
        raise InputError("a rank's scale must be a finite number >= 0", field="scales", value=float(scales[bad][0]))
    return scales


def _max_cdf(model: StragglerModel, scales: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray]:
    """(grid x, CDF of the maximum ``prod_r F_r(x)`` on it), the grid covering the maximum's support: within
    the largest scale's 12-sigma band, above the smallest positive scale's -12 (a model with variability, some
    scale above 0). A lognormal's grid is geometric (even in log x): its 12-sigma band spans many decades once
    ``cv`` passes ~1, and an even grid there would put no point in the bulk (review s16 #10: cv 3 gave E[max] 64
    for 8 ranks of mean 1). A rank of scale 0 is a step at 0: it leaves the CDF of the others from 0 up, and 0
    below."""
    groups, counts = np.unique(scales[scales > 0], return_counts=True)
    s = math.sqrt(math.log1p(model.cv ** 2)) if model.distribution == "lognormal" else model.cv
    if model.distribution == "normal":
        x = np.linspace(min(0.0, groups.min() * (1 - 12 * s)), groups.max() * (1 + 12 * s), points)
    else:
        x = np.exp(np.linspace(math.log(groups.min()) - s * s / 2 - 12 * s,
                               math.log(groups.max()) - s * s / 2 + 12 * s, points))
    log_f = np.zeros_like(x)
    with np.errstate(divide="ignore"):
        for g, c in zip(groups, counts):
            log_f += c * np.log(_cdf(model, x / g))
    f = np.exp(log_f)
    return x, np.where(x >= 0, f, 0.0) if (scales == 0).any() else f


def expected_max(model: StragglerModel, scales: Sequence[float] | np.ndarray, points: int = 200_001) -> float:
    """``E[max_r scale_r * Y_r]`` by numerical integration of the CDF of the maximum (trapezoid
    rule on a grid covering the maximum's support, :func:`_max_cdf`; below a lognormal's grid the CDF is
    0 to 12 sigma, so that stretch adds its length; relative error below 1e-6 for cv >= 0.001)."""
    scales = _scales(scales)
    if not len(scales):
        return 0.0
    if model.distribution == "none" or model.cv == 0 or scales.max() == 0:
        return float(scales.max())
    x, f = _max_cdf(model, scales, points)
    integrand = np.where(x >= 0, 1.0 - f, -f)
    below = float(x[0]) if x[0] > 0 else 0.0           # int_0^x0 (1 - F) dx with F(x0) ~ 0
    return below + float(np.trapezoid(integrand, x))


def max_quantiles(model: StragglerModel, scales: Sequence[float] | np.ndarray, qs: Sequence[float],
                  points: int = 200_001) -> list[float]:
    """Quantiles of one iteration's ``M = max_r scale_r * Y_r`` (``qs`` in (0, 1)), where ``prod_r F_r(x)``
    crosses each (interpolated on the grid of :func:`expected_max`; clamped at 0 as the draws are):
    with 0.05 and 0.95, the 90% interval of one iteration's compute multiplier under the model."""
    scales = _scales(scales)
    if not len(scales):
        return [0.0 for _ in qs]
    if model.distribution == "none" or model.cv == 0 or scales.max() == 0:
        return [float(scales.max()) for _ in qs]
    x, f = _max_cdf(model, scales, points)
    keep = np.concatenate(([True], np.diff(f) > 0))      # strictly increasing for the interpolation
    return [max(0.0, float(np.interp(q, f[keep], x[keep]))) for q in qs]


def monte_carlo_max(model: StragglerModel, scales: Sequence[float] | np.ndarray, samples: int,
                    rng: np.random.Generator) -> tuple[float, float]:
    """(mean, standard error) of ``M`` over ``samples`` draws from ``rng``."""
    m = model.draw(rng, np.asarray(scales, dtype=float), samples)
    return float(m.mean()), float(m.std(ddof=1) / math.sqrt(samples)) if samples > 1 else math.inf
