"""Failures, checkpoints and goodput of a long training run.

Model (the standard one for checkpoint/restart, Daly 2006, "A higher order estimate of the
optimum checkpoint interval for restart dumps", FGCS 22(3)):

* Components fail independently at constant rates (exponential lifetimes): a job on
  ``gpus`` GPUs in ``nodes`` servers with ``nics`` NICs and ``switches`` fabric switches fails at
  ``lambda = gpus/MTBF_gpu + nodes/MTBF_node + nics/MTBF_nic + switches/MTBF_switch``; its
  mean time between failures is ``M = 1/lambda``. Any failure stops the whole (synchronous) job.
* The job computes for ``tau`` seconds, writes a checkpoint for ``delta`` seconds, and so on. A
  failure loses the work since the last checkpoint; the job restarts (``R`` seconds, during which
  it can fail again) from that checkpoint.
* The expected wall time to finish one segment of ``tau`` seconds of work is
  ``M e^(R/M) (e^((tau+delta)/M) - 1)``, so for ``W`` seconds of work the run takes
  ``T(tau) = W/tau * M e^(R/M) (e^((tau+delta)/M) - 1)`` (``W/tau`` taken as a real number),
  and the goodput is ``W / T``.

Optimal interval: Young's first-order ``sqrt(2 delta M)``, Daly's higher-order
``sqrt(2 delta M) (1 + sqrt(delta/(2M))/3 + delta/(18 M)) - delta`` (``M`` if ``delta >= 2M``),
and the numeric maximum of the goodput above (:func:`optimal_interval`); the tests check that they
agree where the formulas hold (``delta << M``).

Expected failures over a run are ``T/M`` (failures arrive at rate ``1/M`` over the wall time,
restarts included); the time lost to failures (rework and restarts) is ``T - W - W/tau * delta``.
Where one run's wall time, goodput, failures and lost time fall (their 90% intervals under this model):
:mod:`.goodput_spread`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from pydantic import BaseModel, ConfigDict, field_validator
from scipy import optimize

from simulator.core.config import validate
from simulator.core.errors import InputError
from simulator.core.limits import MAX_DURATION_S, check_count
from simulator.core.units import format_duration, parse_time
from simulator.training.goodput_spread import exp_or_inf, expm1_or_inf, run_bounds

COMPONENTS = ("gpu", "node", "nic", "switch")


def _seconds(v: object, field: str, allow_zero: bool) -> float:
    """A time with its unit ("4 h"; 0 alone): a bare ``4``, in a file or on the command line, was read as 4 seconds
    where the user meant hours."""
    try:
        return parse_time(v, field=field, allow_zero=allow_zero, unit=True)
    except InputError as e:
        raise ValueError(e.message) from None


class FailureSpec(BaseModel):
    """Failure, checkpoint and restart figures (times with units, e.g. ``"50000 h"``, ``"2 min"``; a number alone is
    refused but 0).

    An MTBF of ``None`` means the component never fails (it is left out)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mtbf_gpu: float | None = None
    mtbf_node: float | None = None
    mtbf_nic: float | None = None
    mtbf_switch: float | None = None
    checkpoint: float = 0.0
    restart: float = 0.0
    interval: float | None = None

    @field_validator("mtbf_gpu", "mtbf_node", "mtbf_nic", "mtbf_switch", "interval", mode="before")
    @classmethod
    def _positive(cls, v: object, info) -> float | None:
        return None if v is None else _seconds(v, info.field_name, False)

    @field_validator("checkpoint", "restart", mode="before")
    @classmethod
    def _non_negative(cls, v: object, info) -> float:
        return _seconds(v, info.field_name, True)


def failure_spec(data: object, source: str | None = None) -> FailureSpec:
    """A validated :class:`FailureSpec` from a mapping (a file's ``failures:`` section, CLI flags)."""
    return validate(FailureSpec, data, source, "a mapping of failure figures")


@dataclass(frozen=True)
class Components:
    """How many of each failing component a job spans."""

    gpus: int
    nodes: int
    nics: int = 0
    switches: int = 0

    def __post_init__(self) -> None:
        for name in ("gpus", "nodes", "nics", "switches"):
            check_count(getattr(self, name), field=name, low=0, words="must be a non-negative integer")
        if self.gpus < 1:
            raise InputError("a job needs at least one GPU", field="gpus", value=self.gpus)


def failure_rate(components: Components, spec: FailureSpec) -> float:
    """Failures per second of the whole job (any component failing stops it)."""
    rate = 0.0
    for count, mtbf in ((components.gpus, spec.mtbf_gpu), (components.nodes, spec.mtbf_node),
                        (components.nics, spec.mtbf_nic), (components.switches, spec.mtbf_switch)):
        if mtbf is not None:
            rate += count / mtbf
    return rate


def segment_s(interval_s: float, checkpoint_s: float, restart_s: float, mtbf_s: float) -> float:
    """Expected wall time to finish ``interval_s`` of work and its checkpoint (Daly's model)."""
    if math.isinf(mtbf_s):
        return interval_s + checkpoint_s
    return mtbf_s * exp_or_inf(restart_s / mtbf_s) * expm1_or_inf((interval_s + checkpoint_s) / mtbf_s)


def goodput(interval_s: float, checkpoint_s: float, restart_s: float, mtbf_s: float) -> float:
    """Useful work / wall time at checkpoint interval ``interval_s`` (0 if a segment never ends)."""
    seg = segment_s(interval_s, checkpoint_s, restart_s, mtbf_s)
    return interval_s / seg if math.isfinite(seg) and seg > 0 else 0.0


def young_interval(checkpoint_s: float, mtbf_s: float) -> float:
    """Young's (1974) first-order optimum, ``sqrt(2 delta M)``."""
    return math.sqrt(2.0 * checkpoint_s * mtbf_s)


def daly_interval(checkpoint_s: float, mtbf_s: float) -> float:
    """Daly's (2006) higher-order optimum of the model above."""
    d, m = checkpoint_s, mtbf_s
    if d >= 2 * m:
        return m
    x = d / (2 * m)
    return math.sqrt(2 * d * m) * (1 + math.sqrt(x) / 3 + x / 9) - d


def optimal_interval(checkpoint_s: float, restart_s: float, mtbf_s: float) -> float:
    """The interval that maximises :func:`goodput`, found numerically (bounded search on
    ``log(interval)``; relative tolerance 1e-9). The restart time does not move the optimum."""
    if math.isinf(mtbf_s) or checkpoint_s == 0:
        raise InputError("no optimum: without failures or checkpoint cost the longest interval is best",
                         field="mtbf" if math.isinf(mtbf_s) else "checkpoint", value=checkpoint_s)
    guess = max(young_interval(checkpoint_s, mtbf_s), 1e-9)
    lo, hi = math.log(guess) - 12, math.log(max(guess, mtbf_s)) + 6
    res = optimize.minimize_scalar(lambda u: -goodput(math.exp(u), checkpoint_s, restart_s, mtbf_s),
                                   bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    return math.exp(res.x)


def spread_notes(work_s: float, interval_s: float, wall_s: float, wall_lo_s: float,
                 wall_hi_s: float) -> tuple[str, ...]:
    """Why one run's 90% interval (``wall_lo_s`` - ``wall_hi_s``) of ``work_s`` seconds of training checkpointed
    every ``interval_s`` may mislead beside the expectation ``wall_s`` (review s16 #6): a run shorter than one
    interval is a fraction of a segment (Daly's model takes ``n = W / tau`` as a real number; a real run would
    not checkpoint at all), and a run that most likely sees no failure has both ends at the failure-free wall
    time while rare failures pull the expectation above it."""
    out = []
    if math.isinf(wall_s):
        out.append("the run never finishes: a segment of work and its checkpoint almost never ends between failures "
                   "(wall time beyond 10^12 s, goodput 0)")
    if work_s < interval_s:
        out.append("the run is shorter than one interval: a fraction of a segment, outside Daly's model (which "
                   "charges that fraction of a checkpoint; a real run of this length would not checkpoint)")
    if math.isfinite(wall_s) and not wall_lo_s * (1 - 1e-12) <= wall_s <= wall_hi_s * (1 + 1e-12):
        out.append("the expectation lies outside one run's 90% interval: a run most likely sees no failure, "
                   "and rare failures pull the mean above the interval")
    return tuple(out)


def never_ends(wall_s: float) -> float:
    """``wall_s``, or infinity (the run never finishes: goodput 0) beyond any duration (10^12 s): a job that fails
    far more often than it checkpoints printed wall times of 10^89 days as if they were figures."""
    return wall_s if wall_s <= MAX_DURATION_S else math.inf


@dataclass(frozen=True)
class GoodputResult:
    """Expected figures of a run of ``work_s`` seconds of training at ``interval_s``."""

    components: Components
    failure_rate_per_s: float
    mtbf_s: float
    work_s: float
    interval_s: float
    checkpoint_s: float
    restart_s: float
    goodput: float
    wall_s: float
    failures: float
    checkpoint_total_s: float
    lost_s: float
    young_s: float
    daly_s: float
    optimum_s: float
    optimum_goodput: float
    wall_lo_s: float | None = None        # 90% intervals of one run (simulator.training.goodput_spread)
    wall_hi_s: float | None = None
    goodput_lo: float | None = None
    goodput_hi: float | None = None
    failures_lo: float | None = None
    failures_hi: float | None = None
    lost_lo_s: float | None = None
    lost_hi_s: float | None = None
    spread_notes: tuple[str, ...] = ()    # why one run's interval may mislead (:func:`spread_notes`)

    def at_interval(self, interval_s: float) -> "GoodputResult":
        """The same run checkpointing every ``interval_s`` seconds of training."""
        if not interval_s > 0:
            raise InputError("must be positive", field="interval", value=interval_s)
        gp = goodput(interval_s, self.checkpoint_s, self.restart_s, self.mtbf_s)
        wall = never_ends(self.work_s / gp if gp > 0 else math.inf)
        gp = gp if math.isfinite(wall) else 0.0
        ckpt = self.work_s / interval_s * self.checkpoint_s
        (w_lo, w_hi), (f_lo, f_hi) = run_bounds(self.work_s, interval_s, self.checkpoint_s, self.restart_s,
                                                self.mtbf_s)
        w_lo, w_hi = never_ends(w_lo), never_ends(w_hi)
        f_lo, f_hi = (f if math.isfinite(w) else math.inf for f, w in ((f_lo, w_lo), (f_hi, w_hi)))
        return replace(self, interval_s=interval_s, goodput=gp, wall_s=wall,
                       failures=wall / self.mtbf_s if math.isfinite(self.mtbf_s) else 0.0,
                       checkpoint_total_s=ckpt, lost_s=max(0.0, wall - self.work_s - ckpt),
                       wall_lo_s=w_lo, wall_hi_s=w_hi, goodput_lo=self.work_s / w_hi, goodput_hi=self.work_s / w_lo,
                       failures_lo=f_lo, failures_hi=f_hi, lost_lo_s=max(0.0, w_lo - self.work_s - ckpt),
                       lost_hi_s=max(0.0, w_hi - self.work_s - ckpt),
                       spread_notes=spread_notes(self.work_s, interval_s, wall, w_lo, w_hi))

    def as_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "components"}
        out.update({f"{k}": v for k, v in self.components.__dict__.items()})
        return {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in out.items()}


def expected_run(components: Components, spec: FailureSpec, work_s: float) -> GoodputResult:
    """Expected wall time, failures and goodput of ``work_s`` seconds of training, at the spec's
    interval (or the numeric optimum when it gives none)."""
    if not (work_s > 0 and math.isfinite(work_s)):
        raise InputError("must be positive (the training work to finish)", field="run", value=work_s)
    rate = failure_rate(components, spec)
    mtbf = 1.0 / rate if rate > 0 else math.inf
    d, r = spec.checkpoint, spec.restart
    if math.isinf(mtbf):
        young = daly = opt = math.inf
        opt_gp = 1.0
    elif d == 0:
        # Daly's optimum tends to 0 (checkpoint continuously), which no run does: the run was timed as one segment
        # that never ended, while the optimum said goodput 100% (the limit is e^(-R/M), restarts being paid)
        raise InputError(f"checkpoints that take no time beside failures (job MTBF {format_duration(mtbf)}) make "
                         "the best interval 0: give the time one checkpoint blocks training", field="checkpoint",
                         value=d)
    else:
        young, daly, opt = young_interval(d, mtbf), daly_interval(d, mtbf), optimal_interval(d, r, mtbf)
        opt_gp = goodput(opt, d, r, mtbf)
    tau = spec.interval if spec.interval is not None else opt
    if math.isinf(tau):
        tau = work_s                      # one segment: never worth checkpointing
    base = GoodputResult(components, rate, mtbf, work_s, tau, d, r, 1.0, work_s, 0.0, 0.0, 0.0, young, daly, opt,
                         opt_gp)
    return base.at_interval(tau)
