"""90% prediction intervals for collective times.

A prediction is ``alpha + S * beta`` (simulator.network.closed_form), its host issue overlapping the rest
(simulator.network.host_overlap). Its uncertainty has two parts
(simulator.collectives.uncertainty): the parameters' covariance, carried to log time through the
sensitivities d(alpha)/d(param) and d(beta)/d(param) of the plan that runs, and the residual spread
the parameters do not explain (host noise, bimodal launches), which differs between latency- and
bandwidth-bound sizes. With the calibration's repetition spread an interval also carries the
'any launch' band (where a single launch's time falls, not the median over launches). Sensitivities are finite differences on the same routes (one re-planned
plan per parameter, computed once per op/algorithm/protocol), so an interval costs a few
arithmetic operations per size afterwards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.collectives import uncertainty as unc_mod
from simulator.collectives.params import bounds
from simulator.network.closed_form import ClosedFormTimer, CostModel, call_time_s
from simulator.network.host_overlap import stream_partials

_STEP = 1e-2      # finite-difference step, in each key's scaled units (1% of its scale)


@dataclass(frozen=True)
class _Sensitivity:
    alpha_s: float
    beta_s_per_byte: float
    d_alpha: tuple[float, ...]     # seconds per scaled unit of each key
    d_beta: tuple[float, ...]      # seconds per byte per scaled unit
    host_s: float = 0.0            # the host's issue (part of alpha; simulator.network.host_overlap)
    d_host: tuple[float, ...] = ()

    def time_s(self, size_bytes: float) -> float:
        """closed_form.call_time_s of alpha, beta and the issue (overlapping the rest), without a pipelined
        plan's fill and chunk steps: for chunked (NVLS) plans not the closed form's time, and their
        chunk-step keys get no sensitivity here."""
        return call_time_s(self.alpha_s, self.beta_s_per_byte, 0.0, size_bytes, host_s=self.host_s)

    def gradient(self, size_bytes: float) -> list[float]:
        """d time / d each key (seconds per scaled unit) at ``size_bytes``."""
        th, tg = stream_partials(self.host_s, self.alpha_s - self.host_s + size_bytes * self.beta_s_per_byte)
        dh = self.d_host or (0.0,) * len(self.d_alpha)
        return [th * h + tg * (a - h + size_bytes * b) for a, b, h in zip(self.d_alpha, self.d_beta, dh)]


@dataclass(frozen=True)
class Interval:
    """A prediction's interval and whether it lies inside the calibration's domain."""

    lo_s: float
    hi_s: float
    outside: tuple[str, ...] = ()     # why the prediction extrapolates (empty: inside the domain)
    launch_lo_s: float | None = None  # where one launch's time falls (None: the calibration has no
    launch_hi_s: float | None = None  # repetition spread; simulator.collectives.uncertainty)


class IntervalModel:
    """Intervals for one cost model (topology + parameters), sensitivities cached per plan choice."""

    def __init__(self, model: CostModel) -> None:
        self.model = model
        self.unc = unc_mod.of(model.params)
        self._sens: dict[tuple, _Sensitivity] = {}
        self._classes: dict[tuple, list[str]] = {}
        self._perturbed: list[tuple[object, ClosedFormTimer, float]] | None = None
        self._prior_shapes: dict[tuple, tuple] = {}
        self._machine = machine_caveats(model)

    def _perturbations(self):
        """(planner, timer, step in scaled units) per key with an uncertainty."""
        if self._perturbed is None:
            out = []
            p0 = self.model.params
            for k, s in zip(self.unc.keys, self.unc.scale):
                v = p0[k]
                h = _STEP * s
                hi = bounds(k)[1]
                step = _STEP if v + h <= hi else -_STEP
                p = p0.nudged(k, v + step * s)
                out.append((self.model.planner.with_params(p), ClosedFormTimer(self.model.router, p), step))
            self._perturbed = out
        return self._perturbed

    def sensitivity(self, op: str, algo: str, proto: str, size_bytes: float | None = None,
                    ranks: tuple[str, ...] | None = None) -> _Sensitivity:
        """Sensitivities of the plan's alpha-beta (a p2p plan's at NCCL's channel count for ``size_bytes``);
        ``ranks``: the plan of a group of the topology's GPUs (default: all of them)."""
        base = (self.model.shape(op, algo, proto) if ranks is None
                else self.model.timer.shape(self.model.planner.plan(op, algo, proto, ranks)))
        channels = base.plan.channels_at(size_bytes) if size_bytes is not None else None
        key = (op, algo, proto, channels, ranks)
        hit = self._sens.get(key)
        if hit is None:
            base = base.sized(size_bytes) if channels is not None else base
            da, db, dh = [], [], []
            for planner, timer, step in self._perturbations():
                s = timer.shape(planner.plan(op, algo, proto, ranks), channels)
                da.append((s.alpha_s - base.alpha_s) / step)
                db.append((s.beta_s_per_byte - base.beta_s_per_byte) / step)
                dh.append((s.host_s - base.host_s) / step)
            hit = self._sens[key] = _Sensitivity(base.alpha_s, base.beta_s_per_byte, tuple(da), tuple(db),
                                                 base.host_s, tuple(dh))
        return hit

    def interval(self, op: str, algo: str, proto: str, size_bytes: float, time_s: float | None = None,
                 ranks: tuple[str, ...] | None = None) -> Interval:
        """The interval of one call; ``time_s`` (e.g. a discrete-event time) defaults to the closed form's;
        ``ranks``: a call on that group of the topology's GPUs (default: all of them)."""
        s = self.sensitivity(op, algo, proto, size_bytes, ranks)
        plan = self.model.planner.plan(op, algo, proto, ranks)
        costed = plan.costed_bytes(size_bytes)     # the bytes its per-byte terms pay (unaligned shares: more)
        t_cf = s.time_s(costed)
        t = t_cf if time_s is None else time_s
        if not (t_cf > 0 and math.isfinite(t_cf)):
            return Interval(t, t)
        classes = self._classes.get((op, algo, proto, ranks))
        if classes is None:
            classes = self._classes[(op, algo, proto, ranks)] = link_classes(self.model, plan)
        sd = self._param_sd(s, costed, t_cf) if s.d_alpha else 0.0
        unseen = self.unc.unseen_classes(classes) if self.unc.keys else []
        prior = self._prior_sd(op, algo, proto, size_bytes, t_cf, unseen, ranks) if unseen else 0.0
        lo, hi = self.unc.bounds(t, min(1.0, s.alpha_s / t_cf), sd, size_bytes,
                                 scaled=self.unc.share_applies(plan.ranks, classes), prior_sd=prior, world=plan.ranks)
        outside = self.unc.outside(plan.ranks, classes, size_bytes, op) + self._machine
        launch = self.unc.launch_bounds(t, lo, hi, size_bytes, plan.ranks)
        return Interval(lo, hi, tuple(outside), *(launch or (None, None)))

    def _prior_sd(self, op: str, algo: str, proto: str, size_bytes: float, t_cf: float,
                  unseen: list[str], ranks: tuple[str, ...] | None = None) -> float:
        """Standard deviation of log time from the keys of link classes the calibration's data never crossed
        (``unseen``), each at its prior spread (simulator.collectives.priors): a calibration on one server knows
        nothing of the network's keys, so a prediction across servers carries their prior, not zero."""
        from simulator.collectives.priors import class_keys, prior_sd, scale
        keys = [k for c in unseen for k in class_keys(c)
                if k not in self.unc.keys and not k.startswith(("gloo.", "mpi."))]
        p0 = self.model.params
        t0 = (self.model.shape(op, algo, proto) if ranks is None
              else self.model.timer.shape(self.model.planner.plan(op, algo, proto, ranks))).time_s(size_bytes)
        var = 0.0
        for k in keys:
            shape = self._prior_shapes.get((op, algo, proto, ranks, k))
            if shape is None:
                step = _STEP if p0[k] + _STEP * scale(k) <= bounds(k)[1] else -_STEP
                p = p0.nudged(k, p0[k] + step * scale(k))
                plan = self.model.planner.with_params(p).plan(op, algo, proto, ranks)
                shape = self._prior_shapes[(op, algo, proto, ranks, k)] = (
                    ClosedFormTimer(self.model.router, p).shape(plan), step)
            d = (shape[0].time_s(size_bytes) - t0) / shape[1]      # seconds per scaled unit of k
            var += (d / t_cf * prior_sd(k)) ** 2
        return math.sqrt(var)

    def _param_sd(self, s: _Sensitivity, size_bytes: float, t_cf: float) -> float:
        """Standard deviation of log time from the parameters' covariance (keys with an uncertainty)."""
        import numpy as np
        g = np.array(s.gradient(size_bytes)) / t_cf
        return math.sqrt(max(float(g @ self.unc.cov @ g), 0.0))


def machine_caveats(model: CostModel) -> list[str]:
    """The reason a prediction leaves its calibration's machine: a calibration measured on another GPU model
    (``Parameters.fitted_gpu_model``) than the topology's. Its interval is not widened for it (no data says by how
    much), so the reason says which interval it keeps: the calibration's, or the datasheet's where the calibration
    carries no uncertainty block."""
    fitted, here = model.params.fitted_gpu_model, model.router.info.gpu_model
    if fitted is None or fitted == here:
        return []
    whose = ("the calibration's" if model.params.uncertainty is not None
             else "the datasheet's (uncalibrated: the calibration has no uncertainty block)")
    return [f"GPU {here} (calibration measured on {fitted}): the interval is {whose}, not widened for another GPU"]


def link_classes(model: CostModel, plan) -> list[str]:
    """The link classes (nvlink, pcie, net, ...) a plan's flows cross."""
    kinds: set[str] = set()
    for g in plan.groups:
        kinds.update(map(model.router.kind.__getitem__, g.uses.ids_once()))
    return sorted(map(str, kinds))
