"""What a parameter set knows about its own error: the data behind every prediction interval.

A calibration file carries an ``uncertainty`` block, written by ``gpunetsim calibrate``:

- ``level``: the intervals' coverage (0.9: 90% of measurements should fall inside).
- ``keys``, ``scale``: the parameters with an uncertainty and the SI unit of each one's column
  (the fitter's scale: a latency of 10 us is 1.0).
- ``cov``: their covariance in those units, the linearised posterior of the fit: the data's
  information plus each parameter's prior. A parameter the data do not determine keeps its prior
  variance, and so do the directions the data cannot tell apart (per-call cost against per-rank
  cost on 2 GPUs): a prediction that leans on them (4 GPUs from a 2-GPU fit) gets a wide interval,
  one that does not (2 GPUs again) a narrow one.
- ``residual``: quantiles (lower, median, upper at the level) of log(measured / predicted) that the
  parameters do not explain, for latency-bound and bandwidth-bound points. Prediction mixes them by
  the share of the predicted time that is latency. Optional ``residual.by_size``
  (``{"edges_bytes": [65536, 16777216], "q": [[lo, median, hi], ...]}``, one row per size band, one
  more than the edges) gives the quantiles per size band instead, which the prediction then uses:
  a calibration's residuals are bimodal host noise of tens of microseconds at small sizes and a few
  percent where the runs reproduce to ~1%, and a latency share alone (which grows with the ranks for
  the same size) mixes the two. Its optional ``param_sd`` (one per band) is the calibration points'
  own spread from the parameters' covariance (median per band; 0 where the band's residuals are
  standardised, not left out, validation.calibrate.STANDARDISED_FROM_BYTES): their leave-one-out residuals already
  hold it, so a prediction adds from the covariance only the part of its own spread above that
  (what extrapolating to other world sizes, ops or sizes brings), not the same uncertainty twice.
  Its optional ``param_scale`` (one factor in [0, 1] per band) multiplies that part: how much of the
  covariance's extrapolation a band's unseen points showed (validation.extrapolation_scale: at
  >= 16 MiB the 2 -> 4 GPU points of other machines fall inside the residual quantiles alone, the
  covariance's collinear directions, e.g. per-byte shard work against the wire's efficiency, carry
  far more spread than they show).
- ``residual.growth`` (optional): ``{"edges_bytes": [...], "sd": [...]}``, per size band (one more
  than the edges) a non-negative spread of log time per doubling of the ranks: how a time's growth
  with the ranks varies between machines and launches, which no calibration's own world sizes show.
  A prediction on a world size the calibration did not see adds it, times the doublings to the
  nearest fitted world size, in quadrature with the parameters' part (validation.world_growth: below
  16 MiB another lease's 2 -> 4 GPU growth of an op predicts a lease's no better than the model, and
  at 16 MiB a 4-GPU median falls on the fast level or in a slow mode by the lease, validation.slow_mode;
  docs/accuracy.md section 3). Its edges are its own (the shipped block splits >= 16 MiB at 32 MiB).
- ``residual.reps`` (optional): ``{"world": n0, "edges_bytes": [...], "p": [...], "q": [[...], ...]}``,
  quantiles (at probabilities ``p``) of log(repetition / the point's median) per size band, over the
  repetitions of the calibration's points (one world size n0): how far a single launch strays from
  the median. A prediction on n ranks gets an 'any launch' band from it: a back-to-back stream runs
  at its slowest rank's pace, so with independent ranks a repetition's distribution on n ranks is
  the one on n0 raised to the power n/n0, and the band is its quantiles 0.05 and 0.95 (those of the
  n0 spread at 0.05^(n0/n) and 0.95^(n0/n)) around its median, widened by the prediction's own 90%
  interval in quadrature. The 90% interval says where the median over launches will be; the band
  where one launch's time may fall (on shared hosts, e.g. 21-104 us for one small all-reduce).
- ``domain``: what the calibration was fitted on (world sizes, hop classes, sizes, operations);
  predictions outside it are extrapolations, and say so.

Without a calibration the datasheet's own block (``calibrations/uncertainty/datasheet.json``, fitted
by ``python -m validation.accuracy --calibrations`` to the spread of the public nccl-tests corpus)
applies.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Mapping, Sequence

from simulator.core.errors import InputError
from simulator.core.units import format_bytes

if TYPE_CHECKING:
    import numpy as np

DATASHEET_FILE = Path(__file__).resolve().parent / "calibrations" / "uncertainty" / "datasheet.json"
LEVEL = 0.9
REGIMES = ("latency", "bandwidth")
SHARE_CHECKED_WORLD = 4
SHARE_CHECKED_CLASSES = ("nvlink",)
"""Where ``param_scale`` was checked (validation.extrapolation_scale: the committed machines' 2 -> 3/4 GPU points
inside one NVLink host; tests/test_extrapolation_scale.py keeps these equal to them)."""



def size_band(size_bytes: float, edges_bytes: Sequence[float]) -> int:
    """Index of the size band ``size_bytes`` falls in: the number of (increasing) edges at or below it
    (elementwise on a numpy array of sizes)."""
    return sum(size_bytes >= e for e in edges_bytes)


def size_bands(edges_bytes: Sequence[float]) -> tuple[tuple[str, float, float], ...]:
    """(name, smallest size, first size above) of each band :func:`size_band` numbers, for tables:
    edges 64 KiB and 16 MiB give "< 64 KiB", "64 KiB - 16 MiB" and ">= 16 MiB"."""
    e = list(edges_bytes)
    if not e:
        return (("any size", 0.0, math.inf),)
    names = ([f"< {format_bytes(e[0])}"] + [f"{format_bytes(a)} - {format_bytes(b)}" for a, b in zip(e, e[1:])]
             + [f">= {format_bytes(e[-1])}"])
    return tuple(zip(names, [0.0] + e, e + [math.inf]))


@dataclass(frozen=True)
class Uncertainty:
    """Parameter covariance, unexplained residual spread and trust domain of one parameter set."""

    keys: tuple[str, ...]
    scale: np.ndarray | tuple[()]                   # SI unit of each key's column (() without keys)
    cov: np.ndarray | tuple[()]                     # covariance, scaled units
    residual: Mapping[str, tuple[float, float, float]]   # regime -> log quantiles (lo, median, hi)
    domain: Mapping
    level: float = LEVEL
    size_edges_bytes: tuple[float, ...] = ()                 # size bands' upper edges (by_size)
    size_residual: tuple[tuple[float, float, float], ...] = ()   # quantiles per size band
    size_param_sd: tuple[float, ...] = ()    # per size band: the parameters' spread the residuals hold
    size_param_scale: tuple[float, ...] = ()  # per size band: the share of the extrapolation spread kept
    reps: Mapping | None = None      # residual.reps: one launch's spread around the median, per band
    growth_edges_bytes: tuple[float, ...] = ()   # residual.growth: size bands' upper edges
    growth_sd: tuple[float, ...] = ()            # per band: log time per doubling of ranks beyond the fitted

    @property
    def z(self) -> float:
        """Standard-normal quantile of the two-sided level (1.645 for 90%)."""
        return NormalDist().inv_cdf(0.5 + self.level / 2)

    def residual_at(self, latency_share: float) -> tuple[float, float, float]:
        """Residual quantiles for a prediction whose time is ``latency_share`` latency."""
        f = min(max(latency_share, 0.0), 1.0)
        a, b = self.residual["latency"], self.residual["bandwidth"]
        return tuple(f * x + (1 - f) * y for x, y in zip(a, b))   # type: ignore[return-value]

    def residual_for(self, latency_share: float, size_bytes: float | None = None) -> tuple[float, float, float]:
        """Residual quantiles of one prediction: its size band's when the block has them, else the
        latency/bandwidth mix (:meth:`residual_at`)."""
        if self.size_residual and size_bytes is not None:
            band = size_band(size_bytes, self.size_edges_bytes)
            return self.size_residual[band]
        return self.residual_at(latency_share)

    def excess_sd(self, param_sd: float, size_bytes: float | None = None) -> float:
        """The part of a prediction's parameter spread (``param_sd``, log time) above its size band's
        in-sample spread, which the residuals already hold (all of it without per-band figures)."""
        if self.size_param_sd and size_bytes is not None:
            held = self.size_param_sd[size_band(size_bytes, self.size_edges_bytes)]
            return math.sqrt(max(param_sd ** 2 - held ** 2, 0.0))
        return param_sd

    def doublings(self, world: int | None) -> float:
        """Doublings of the ranks from ``world`` to the nearest world size the calibration was fitted on
        (0 inside its domain, or without one)."""
        fitted = [w for w in self.domain.get("worlds", ()) if w > 0]
        if world is None or world <= 0 or not fitted:
            return 0.0
        return min(abs(math.log2(world / w)) for w in fitted)

    def growth_spread(self, size_bytes: float | None, world: int | None) -> float:
        """The growth spread (log time) of a prediction of ``size_bytes`` on ``world`` ranks: its band's
        ``residual.growth`` figure times :meth:`doublings` (0 without the block)."""
        if not self.growth_sd or size_bytes is None:
            return 0.0
        return self.growth_sd[size_band(size_bytes, self.growth_edges_bytes)] * self.doublings(world)

    def bounds(self, time_s: float, latency_share: float, param_sd: float,
               size_bytes: float | None = None, scaled: bool = True, prior_sd: float = 0.0,
               world: int | None = None) -> tuple[float, float]:
        """(low, high) seconds around ``time_s``: residual quantiles (of the size band, when known)
        and the parameters' spread (``param_sd``: standard deviation of log time; with the band's
        in-sample spread known, only its excess over it, times the band's ``param_scale`` where
        ``scaled``: inside :meth:`share_applies`), ``prior_sd`` (log time: keys outside the
        covariance, e.g. a hop class the data never crossed, at their prior spread) and, on a ``world``
        the calibration did not see, the band's growth spread (:meth:`growth_spread`), added in
        quadrature on either side."""
        lo, mid, hi = self.residual_for(latency_share, size_bytes)
        param_sd = self.excess_sd(param_sd, size_bytes)
        if scaled and self.size_param_scale and size_bytes is not None:
            param_sd *= self.size_param_scale[size_band(size_bytes, self.size_edges_bytes)]
        zs = self.z * math.sqrt(param_sd ** 2 + prior_sd ** 2 + self.growth_spread(size_bytes, world) ** 2)
        return (time_s * math.exp(mid - math.hypot(mid - lo, zs)),
                time_s * math.exp(mid + math.hypot(hi - mid, zs)))

    def launch_bounds(self, time_s: float, lo_s: float, hi_s: float, size_bytes: float,
                      world: int) -> tuple[float, float] | None:
        """(low, high) seconds where one launch's time falls with the interval's level, on ``world``
        ranks, around the predicted median ``time_s`` whose own interval is (``lo_s``, ``hi_s``); None
        without the calibration's repetition spread."""
        if not self.reps or time_s <= 0 or lo_s <= 0:
            return None
        import numpy as np
        r = self.reps
        band = size_band(size_bytes, r["edges_bytes"])
        power = r["world"] / max(world, 1)          # F_n = F_n0 ** (n / n0): quantile p -> p ** (n0 / n)
        if not r["q"][band]:
            return None                              # too few repetitions of that size band
        p, q = np.asarray(r["p"], dtype=float), np.asarray(r["q"][band], dtype=float)
        a, mid, b = np.interp([(0.5 - self.level / 2) ** power, 0.5 ** power, (0.5 + self.level / 2) ** power], p, q)
        down = math.hypot(mid - a, math.log(time_s / lo_s))
        up = math.hypot(b - mid, math.log(hi_s / time_s))
        return time_s * math.exp(-down), time_s * math.exp(up)

    def share_applies(self, world: int, hop_classes: Sequence[str]) -> bool:
        """Whether ``param_scale`` was checked for a prediction on ``world`` ranks over ``hop_classes``: the shares
        are learned on 2 -> 3 and 4 GPU points inside one NVLink host (validation.extrapolation_scale), so any
        other prediction (more ranks, another link class, several servers) keeps the covariance's spread in full."""
        return world <= SHARE_CHECKED_WORLD and set(hop_classes) <= set(SHARE_CHECKED_CLASSES)

    def unseen_classes(self, hop_classes: Sequence[str]) -> list[str]:
        """The link classes of ``hop_classes`` that this calibration's data never crossed."""
        return sorted(set(hop_classes) - set(self.domain.get("hop_classes", hop_classes)))

    def outside(self, world: int, hop_classes: Sequence[str], size_bytes: float, op: str) -> list[str]:
        """Why a prediction is an extrapolation from this calibration (empty: inside its domain)."""
        d = self.domain
        why = []
        if d.get("worlds") and world not in d["worlds"]:
            why.append(f"{world} GPUs (fitted on {', '.join(map(str, d['worlds']))})")
        unseen = self.unseen_classes(hop_classes)
        if unseen:
            why.append(f"hop class {', '.join(unseen)} not in the data")
        if d.get("min_bytes") and not d["min_bytes"] <= size_bytes <= d["max_bytes"]:
            why.append(f"size {int(size_bytes)} B outside {d['min_bytes']}-{d['max_bytes']} B")
        if d.get("ops") and op not in d["ops"]:
            why.append(f"{op} not in the data")
        return why

    def to_block(self) -> dict:
        return {"level": self.level, "keys": list(self.keys), "scale": [float(x) for x in self.scale],
                "cov": [[float(f"{x:.6g}") for x in row] for row in self.cov],
                "residual": {**{r: [float(x) for x in self.residual[r]] for r in REGIMES},
                             **({"by_size": {"edges_bytes": [int(e) for e in self.size_edges_bytes],
                                             "q": [[float(x) for x in q] for q in self.size_residual],
                                             **({"param_sd": [float(x) for x in self.size_param_sd]}
                                                if self.size_param_sd else {}),
                                             **({"param_scale": [float(x) for x in self.size_param_scale]}
                                                if self.size_param_scale else {})}}
                                if self.size_residual else {}),
                             **({"growth": {"edges_bytes": [int(e) for e in self.growth_edges_bytes],
                                            "sd": [float(x) for x in self.growth_sd]}} if self.growth_sd else {}),
                             **({"reps": dict(self.reps)} if self.reps else {})},
                "domain": dict(self.domain)}

    @classmethod
    def from_block(cls, block: Mapping) -> "Uncertainty":
        keys = tuple(block.get("keys", ()))
        residual = {r: tuple(block["residual"][r]) for r in REGIMES}
        domain, level = dict(block.get("domain", {})), float(block.get("level", LEVEL))
        by_size = block["residual"].get("by_size") or {}
        bands = (tuple(float(e) for e in by_size.get("edges_bytes", ())),
                 tuple(tuple(q) for q in by_size.get("q", ())),
                 tuple(float(x) for x in by_size.get("param_sd", ())),
                 tuple(float(x) for x in by_size.get("param_scale", ())))
        reps = block["residual"].get("reps") or None
        g = block["residual"].get("growth") or {}
        growth = (tuple(float(e) for e in g.get("edges_bytes", ())), tuple(float(x) for x in g.get("sd", ())))
        if not keys:                 # residual spread only (the datasheet's): no arrays, no numpy
            return cls(keys, (), (), residual, domain, level, *bands, reps, *growth)
        import numpy as np
        cov = np.array(block.get("cov", []), dtype=float).reshape(len(keys), len(keys))
        return cls(keys, np.array(block.get("scale", []), dtype=float), cov, residual, domain, level, *bands, reps,
                   *growth)


def check_block(block: object, source: str | None = None) -> Mapping:
    """The ``uncertainty`` block of a calibration file, checked (InputError naming the field)."""
    def bad(msg: str, field: str, value: object = None) -> InputError:
        return InputError(msg, source=source, field=f"uncertainty.{field}" if field else "uncertainty", value=value)
    if not isinstance(block, Mapping):
        raise bad("must be a JSON object", "", block)
    keys = block.get("keys", [])
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise bad("must be a list of parameter names", "keys", keys)
    from simulator.collectives.params import DEFAULTS
    for k in keys:
        if k not in DEFAULTS:
            raise bad("unknown parameter", "keys", k)
    n = len(keys)
    scale, cov = block.get("scale", []), block.get("cov", [])
    if n or not (scale == [] and cov == []):      # numbers to check (none: a residual-only block)
        _check_covariance(n, scale, cov, bad)
    res = block.get("residual")
    if not isinstance(res, Mapping) or any(r not in res for r in REGIMES):
        raise bad("needs 'latency' and 'bandwidth' quantiles [low, median, high]", "residual", res)
    def quantiles(q: object, field: str) -> None:
        if (not isinstance(q, list) or len(q) != 3 or not all(isinstance(x, (int, float)) for x in q)
                or not q[0] <= q[1] <= q[2]):
            raise bad("needs three increasing numbers [low, median, high] (log of measured/predicted)", field, q)
    for r in REGIMES:
        quantiles(res[r], f"residual.{r}")
    by_size = res.get("by_size")
    if by_size is not None:
        edges = by_size.get("edges_bytes") if isinstance(by_size, Mapping) else None
        rows = by_size.get("q") if isinstance(by_size, Mapping) else None
        if (not isinstance(edges, list) or not all(isinstance(e, (int, float)) and e > 0 for e in edges)
                or sorted(edges) != edges or not isinstance(rows, list) or len(rows) != len(edges) + 1):
            raise bad("needs increasing positive 'edges_bytes' and one quantile row more than edges in 'q'",
                      "residual.by_size", by_size)
        for i, q in enumerate(rows):
            quantiles(q, f"residual.by_size.q[{i}]")
        psd = by_size.get("param_sd")
        if psd is not None and (not isinstance(psd, list) or len(psd) != len(rows) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0 for x in psd)):
            raise bad("needs one non-negative number per size band (the parameters' in-sample spread)",
                      "residual.by_size.param_sd", psd)
        pscale = by_size.get("param_scale")
        if pscale is not None and (not isinstance(pscale, list) or len(pscale) != len(rows) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x <= 1 for x in pscale)):
            raise bad("needs one number in [0, 1] per size band (the share of the extrapolation spread kept)",
                      "residual.by_size.param_scale", pscale)

    if res.get("reps") is not None:
        _check_reps(res["reps"], bad)
    if res.get("growth") is not None:
        _check_growth(res["growth"], bad)
    level = block.get("level", LEVEL)
    if not isinstance(level, (int, float)) or not 0 < level < 1:
        raise bad("must lie between 0 and 1", "level", level)
    if not isinstance(block.get("domain", {}), Mapping):
        raise bad("must be a JSON object", "domain", block.get("domain"))
    return block


def _check_growth(growth: object, bad) -> None:
    """``residual.growth``: increasing positive edges and one non-negative spread per band."""
    edges = growth.get("edges_bytes") if isinstance(growth, Mapping) else None
    sd = growth.get("sd") if isinstance(growth, Mapping) else None
    if (not isinstance(edges, list) or not all(isinstance(e, (int, float)) and not isinstance(e, bool) and e > 0
                                               for e in edges) or sorted(edges) != edges
            or not isinstance(sd, list) or len(sd) != len(edges) + 1 or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0 for x in sd)):
        raise bad("needs increasing positive 'edges_bytes' and one non-negative 'sd' per size band (log time per "
                  "doubling of the ranks)", "residual.growth", growth)


def _check_reps(reps: object, bad) -> None:
    """``residual.reps``: a world size, increasing edges, increasing probabilities in (0, 1) and one
    non-decreasing row of as many quantiles per size band."""
    def numbers(x: object) -> bool:
        return isinstance(x, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                           and math.isfinite(v) for v in x)
    ok = isinstance(reps, Mapping)
    world, edges, p, q = ((reps.get("world"), reps.get("edges_bytes"), reps.get("p"), reps.get("q"))
                          if ok else (None,) * 4)
    ok = (ok and isinstance(world, int) and not isinstance(world, bool) and world >= 1
          and numbers(edges) and edges == sorted(edges) and numbers(p) and len(p) >= 2
          and p == sorted(p) and 0 < p[0] and p[-1] < 1 and isinstance(q, list) and len(q) == len(edges) + 1
          and all(numbers(row) and len(row) in (0, len(p)) and row == sorted(row) for row in q))
    if not ok:
        raise bad("needs 'world' (>= 1), increasing 'edges_bytes', increasing probabilities 'p' in (0, 1) and "
                  "'q': one non-decreasing row of len(p) quantiles per size band (empty: no data)",
                  "residual.reps", reps)


def _check_covariance(n: int, scale: object, cov: object, bad) -> None:
    """``scale``: n positive numbers; ``cov``: an n x n finite matrix with a non-negative diagonal."""
    import numpy as np
    try:
        s = np.array(scale, dtype=float).reshape(-1)
        c = np.array(cov, dtype=float)
        c = c.reshape(0, 0) if c.size == 0 else c
    except (TypeError, ValueError):
        raise bad("scale and cov must hold numbers", "cov") from None
    if s.shape != (n,) or not np.all(s > 0):
        raise bad(f"needs {n} positive numbers, one per key", "scale", scale)
    if c.shape != (n, n) or not np.all(np.isfinite(c)) or np.any(np.diag(c) < 0):
        raise bad(f"needs a {n} x {n} covariance matrix with a non-negative diagonal", "cov")


_BROAD = {"level": LEVEL, "keys": [], "scale": [], "cov": [],
          "residual": {"latency": [-1.5, 0.0, 1.5], "bandwidth": [-0.5, 0.0, 0.5]}, "domain": {}}


@lru_cache(maxsize=1)
def datasheet() -> Uncertainty:
    """The datasheet parameters' uncertainty (from the public corpus), or a broad one if missing."""
    if DATASHEET_FILE.exists():
        block = json.loads(DATASHEET_FILE.read_text())
        return Uncertainty.from_block(check_block(block.get("uncertainty", block), str(DATASHEET_FILE)))
    return Uncertainty.from_block(_BROAD)


def of(params) -> Uncertainty:
    """The uncertainty that goes with a parameter set (its calibration's, else the datasheet's)."""
    block = getattr(params, "uncertainty", None)
    return Uncertainty.from_block(block) if block is not None else datasheet()
