"""Fit the parameter set to measured collective times (calibration), saying what the data determine.

The residual of a point is log(predicted / measured) over the uncertainty of its median (from its
repetitions: their spread over the square root of their number, at least :data:`MODEL_SD`;
:func:`point_sd`), so a 10 us and a 10 ms point weigh alike, a bimodal small-message point weighs
less than a reproducible large one, and a point pooled from many repetitions more than one launch's
few. The loss is Huber's (quadratic within :data:`HUBER_SCALE` spreads, linear beyond), so one wild
point cannot pull the fit.

Before fitting, the Jacobian of the log predictions says which candidate parameters the points
determine (validation.identifiability): collinear and inert ones keep their prior (the predictor's
value: the datasheet's unless a calibration was loaded) and are reported as such, never invented. Points of one world size cannot determine what
scales with the ranks: the per-step hop latencies keep NCCL's values (the socket transport's, which has none, is
fitted where its ops were measured over another transport too: :func:`_one_world`), and the per-rank cost
(``rank_overhead_s``) comes from the repetitions' order statistics (validation.rank_sync) instead
of a fit. Where the points mix launches, NCCL's launch latency of an algorithm and protocol that only
one launch's small points determine keeps NCCL's value (:func:`_one_launch`: those points show that launch's host
state). A fitted efficiency that wants to exceed 1, or a
latency below its physical minimum (simulator.collectives.params.bounds), is refused: the key goes
back to its prior and the refusal names it. The result carries the posterior covariance of every
parameter the points touch (data plus prior), the residual spread and the domain of the data:
the calibration's ``uncertainty`` block, from which every prediction's 90% interval is computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import least_squares

from simulator.collectives.params import DEFAULTS, Parameters, bounds, out_of_range_message
from simulator.collectives.priors import prior_sd, scale
from simulator.collectives.uncertainty import LEVEL, Uncertainty, size_band
from simulator.core.errors import InputError
from simulator.network.closed_form import call_time_s
from validation.compare import Comparison, Predictor, choice_for, compare, summary
from validation.identifiability import Verdict, data_sd, identifiable, posterior
from validation.parsers import CollMeasurement
from validation.rank_sync import RankSync

SHARDED_OPS = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all")
"""Ops in which each rank owns a shard (S/n) it copies or reduces locally; broadcast, reduce and
send/recv move the whole buffer along a chain or a pair, so their wire term alone sets the link
efficiency that the sharded ops share."""

NO_LOCAL_WORK = ("op_local_s_per_byte.send_recv",)
"""A send/recv has no copy or reduction outside its pipeline: the receiving CTA's copy out of the
peer's buffer is part of each p2p channel's rate (``p2p_channel_Bps``), so a separate per-byte term
would only be collinear with it."""

CANDIDATES = (
    ["call_overhead_s", "rank_overhead_s", "shm_efficiency", "ll_max_busbw_Bps", "socket_max_Bps", "p2p_channel_Bps",
     "nvls_efficiency.sm90", "nvls_efficiency.sm100", "collnet_efficiency", "nvls_fill_rounds"]
    + [k for k in DEFAULTS if k.startswith(("base_latency_s.", "proto_efficiency.", "link_efficiency."))]
    + [k for k in DEFAULTS if k.startswith(("op_efficiency.", "op_overhead_s.", "op_local_s_per_byte."))
       and k not in NO_LOCAL_WORK]
    + [f"op_shard_s_per_byte.{op}" for op in SHARDED_OPS]
    + [k for k in DEFAULTS if k.startswith("hop_latency_s.")]
)

PRIOR_WEIGHT = 1.0
"""Pull of the prior: a parameter moved by one prior standard deviation costs as much as one point
off by its own spread. 0 = plain (robust) least squares."""
MODEL_SD = 0.02
"""Smallest spread credited to a point (log units): the model is not better than ~2% anywhere."""
MEDIAN_SE = 1.2533
"""Standard error of a median over that of a mean (sqrt(pi/2)), per repetition."""
HUBER_SCALE = 2.0
"""Residuals beyond 2 spreads count linearly."""
MAX_ITERATIONS = 40
"""Trust-region steps at most (the objective has kinks where a plan's slowest hop changes)."""


REFUSED = "refused (below)"
"""The verdict of a key the fit pushed out of its physical range: kept at its prior, the refusal message in
:attr:`Fit.refused` (not determined, so no table or calibration file calls it fitted)."""


@dataclass(frozen=True)
class Fit:
    params: Parameters
    keys: tuple[str, ...]                 # the keys fitted (determined by the data)
    before: dict
    after: dict
    comparisons: tuple[Comparison, ...]
    skipped: int
    verdicts: tuple[Verdict, ...] = ()    # one per candidate the points touch
    refused: tuple[str, ...] = ()         # messages naming refused keys
    uncertainty: Uncertainty | None = None
    domain: dict = field(default_factory=dict)
    rank_sync: RankSync | None = None     # the per-rank cost read off the order statistics, not fitted

    def trusted_for(self) -> str:
        """One line: the predictions this calibration was fitted for."""
        d = self.domain
        return (f"world sizes {', '.join(map(str, d.get('worlds', [])))}; hop classes "
                f"{', '.join(d.get('hop_classes', [])) or '-'}; sizes {d.get('min_bytes')}-{d.get('max_bytes')} B; "
                f"ops {', '.join(d.get('ops', []))}")


def _predict_all(predictor: Predictor, points: Sequence[CollMeasurement]) -> np.ndarray:
    out = np.empty(len(points))
    for i, p in enumerate(points):
        c = predictor.predict(p)
        out[i] = c.predicted_s if c else np.nan
    return out


class _Recording(dict):
    """A parameter mapping that remembers which keys were read (to learn what a plan depends on)."""

    def __init__(self, values) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> float:
        self.read.add(key)
        return super().__getitem__(key)


class Evaluator:
    """Predictions of fixed points under many parameter sets, as Predictor.predict makes them.

    NCCL's tuner and its p2p protocol rule do not look at our parameters, so each such point's (algorithm,
    protocol) is found once (simulator.collectives.tuner.Tuner.decided); other points take the fastest of
    their allowed pairs at every evaluation. A
    parameter set then costs one alpha/beta per distinct plan, and a plan is re-timed only when a
    parameter it reads changed (a finite-difference step on one key re-times a few plans)."""

    def __init__(self, predictor: Predictor, points: Sequence[CollMeasurement]) -> None:
        self.predictor = predictor
        self.size = np.array([float(p.size_bytes) for p in points])
        plans: dict[tuple, int] = {}
        choices: list[list[int]] = []
        for p in points:
            m, algo, proto = predictor.setup(p)
            decided = m.tuner.decided(p.op, p.size_bytes, algo, proto)
            allowed = [decided] if decided is not None else m.choices(p.op, algo, proto)
            mk = choice_for(p)[2:]
            # a p2p plan's beta depends on NCCL's channel count at this size (not on the parameters)
            choices.append([plans.setdefault(((p.world, *mk), p.op, a, pr,
                                              m.planner.plan(p.op, a, pr).channels_at(p.size_bytes)), len(plans))
                            for a, pr in allowed])
        self.plans = list(plans)
        width = max(len(c) for c in choices)
        self.choice = np.array([c + [c[0]] * (width - len(c)) for c in choices])   # points x width
        self.deps: list[tuple[str, ...]] = []
        self._cache: dict[tuple, tuple] = {}
        self._pad_cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._rates: dict[tuple, object] = {}    # per topology key: simulator.network.closed_form.RateCache
        for key, op, a, pr, ch in self.plans:
            rec = _Recording(predictor.params.values)
            self._time_plan(predictor.params.__class__(rec, predictor.params.name), key, op, a, pr, ch)
            self.deps.append(tuple(sorted(rec.read)))
        # each plan's parameter values as one key (operator.itemgetter: a tuple, the value itself for one key)
        self._deps_of = [itemgetter(*d) if d else (lambda v: ()) for d in self.deps]
        # every plan's terms as rows, rewritten only where a plan's cache entry differs from the last call's (a
        # finite-difference step re-times a few plans; stacking every plan's rows again cost more than the fit)
        n = len(self.plans)
        self._last: list[tuple | None] = [None] * n
        self._terms = np.empty((n, 4))
        self._rows = tuple(np.empty((n, len(self.size))) for _ in range(3))    # pads, steps, costed bytes

    def _time_plan(self, params: Parameters, key, op, a, pr, channels=None) -> tuple:
        """(alpha, beta, the pipeline fill's seconds per byte, host seconds, the plan) of one plan: Shape.time_s's
        terms (the plan for its extra bytes, Plan.pad_bytes)."""
        from simulator.network.closed_form import ClosedFormTimer, RateCache
        planner = self.predictor.model(*key).planner.with_params(params)
        rates = self._rates.get(key)
        if rates is None:
            rates = self._rates[key] = RateCache(planner.router)
        s = ClosedFormTimer(planner.router, params, rates).shape(planner.plan(op, a, pr), channels)
        return s.alpha_s, s.beta_s_per_byte, s.wire_s_per_byte, s.host_s, s.plan

    def _pads(self, j: int, plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(bytes of plan ``j``'s pipeline fill, seconds of its chunk steps, the bytes it pays its per-byte cost
        for: Plan.costed_bytes) at every point's size; they change with the parameters through its chunking and
        its unaligned shares' cost only."""
        key = (j, plan.chunking, plan.loops, plan.unaligned_extra)
        hit = self._pad_cache.get(key)
        if hit is None:
            zeros = np.zeros(len(self.size))
            stepped = plan.chunking is not None or plan.loops is not None
            hit = self._pad_cache[key] = (
                np.array([plan.pad_bytes(s) for s in self.size]) if plan.chunking is not None else zeros,
                np.array([plan.chunk_overhead_s(s) for s in self.size]) if stepped else zeros,
                np.array([plan.costed_bytes(s) for s in self.size], dtype=float))
        return hit

    def __call__(self, params: Parameters) -> np.ndarray:
        v, cache, last = params.values, self._cache, self._last
        ab, (pads, steps, costed) = self._terms, self._rows
        for j, deps in enumerate(self._deps_of):
            ck = (j, deps(v))
            hit = cache.get(ck)
            if hit is None:
                t = self._time_plan(params, *self.plans[j])
                hit = cache[ck] = (t[:4], *self._pads(j, t[4]))
            if hit is not last[j]:
                last[j] = hit
                ab[j], pads[j], steps[j], costed[j] = hit
        rows = np.arange(len(self.size))[:, None]
        c = self.choice
        t = call_time_s(ab[c, 0], ab[c, 1], ab[c, 2], costed[c, rows], pads[c, rows], steps[c, rows], ab[c, 3])
        return t.min(axis=1)


def point_sd(p: CollMeasurement) -> float:
    """Uncertainty of a point's time in log units, at least MODEL_SD: the spread of its repetitions
    (a quarter of their log range) over the square root of their number, times 1.2533 (the standard
    error of a median), when the file lists them; the spread alone when it records only the fastest
    and slowest. A point pooled from 33 repetitions of three campaigns is known 3.3x better than one
    launch's 3 repetitions with the same spread: on shared hosts both are bimodal, and what the fit
    needs is how well each point's median is known, not how wide its repetitions range."""
    if not (p.min_s and p.max_s and p.max_s > p.min_s > 0):
        return MODEL_SD
    spread = np.log(p.max_s / p.min_s) / 4.0
    if len(p.rep_times_s) >= 2:
        spread *= MEDIAN_SE / np.sqrt(len(p.rep_times_s))
    return max(spread, MODEL_SD)


def _jacobian(ev: Evaluator, params: Parameters, keys, x: np.ndarray, sc: np.ndarray,
              base: np.ndarray) -> np.ndarray:
    """d log(pred) / d x (scaled units), one-sided steps of 1% of each key's scale, inside bounds."""
    J = np.zeros((len(base), len(keys)))
    for j, k in enumerate(keys):
        step = 0.01
        hi = bounds(k)[1] / sc[j]
        if x[j] + step > hi:
            step = -step
        trial = ev(params.nudged(k, (x[j] + step) * sc[j]))
        J[:, j] = (np.log(trial) - np.log(base)) / step
    J[~np.isfinite(J)] = 0.0
    return J


def domain_of(predictor: Predictor, comps: Sequence[Comparison]) -> dict:
    """What the points cover: world sizes, link classes their plans cross, sizes, operations."""
    from simulator.network.intervals import link_classes
    classes: set[str] = set()
    for c in comps:
        m = predictor.setup(c.point)[0]
        classes.update(link_classes(m, m.planner.plan(c.point.op, c.algo, c.proto)))
    pts = [c.point for c in comps]
    return {"worlds": sorted({p.world for p in pts}), "hop_classes": sorted(classes),
            "min_bytes": min(p.size_bytes for p in pts), "max_bytes": max(p.size_bytes for p in pts),
            "ops": sorted({p.op for p in pts})}


BANDWIDTH_REGIME_BYTES = 1 << 24
"""Issue 10's split of sizes: the bandwidth regime from here up (>= 16 MiB), the latency regime below; the one
definition the report's modules import."""
SIZE_EDGES_BYTES = (1 << 16, BANDWIDTH_REGIME_BYTES)
"""The report's size bands (< 64 KiB, 64 KiB - 16 MiB, >= 16 MiB), which the residual bands refine."""
SLOW_MODE_TOP_BYTES = 2 * BANDWIDTH_REGIME_BYTES
"""The first size above the 16 MiB slow mode: at 32 MiB 25% of the pooled 4x H200 campaigns' 4-GPU repetitions run
more than 10% above their fast level, at 64 MiB 2-18% per lease (validation.bw_residuals' slow shares), so from
here up a 4-GPU median is its fast level; at 16 MiB 37-67% (tests/test_slow_mode.py checks both on the committed
leases)."""
RESIDUAL_EDGES_BYTES = SIZE_EDGES_BYTES + (SLOW_MODE_TOP_BYTES,)
"""Size bands of a calibration's residual quantiles and in-sample spread (``residual.by_size``): the report's bands
with >= 16 MiB split at :data:`SLOW_MODE_TOP_BYTES`. The 16 MiB points' slow mode (validation.slow_mode: a share of
a 2-GPU point's repetitions 17-82% above its fast level) sets the tails of the whole bandwidth regime's residuals,
so the band from 16 MiB keeps those (it holds the slow mode) and the band from 32 MiB, where a call reproduces to
~1%, takes its own points' (:func:`residual_quantiles`), standardised rather than left out (:data:`STANDARDISED_FROM_BYTES`)."""
STANDARDISED_FROM_BYTES = SLOW_MODE_TOP_BYTES
"""From here up a residual enters its band's quantiles standardised, r / sqrt(1 - h) (h its leverage), not left out,
r / (1 - h), and the band's in-sample parameter spread is 0 (:func:`in_sample_param_sd`), so a prediction adds its
parameters' whole spread from the covariance. Each op's bandwidth terms there are pinned by that op's few points
(leverage up to the clip's 0.95 on a lease's 2-GPU sweep: send_recv's and all_to_all's 1 GiB points have 1 / (1 - h)
of 14-20), so a left-out residual is the prior's error for an op the calibration never saw (a 1% residual read as
15-20%), while a prediction of that op on more ranks keeps the fitted terms, whose spread the covariance carries: the
standard prediction interval, noise plus the parameters' spread, instead of counting the parameters' spread inside
the residuals. Below it the leverages are small and the left-out residuals stay (unchanged). How much of the
covariance's extrapolation the band keeps is then learned on the committed machines' unseen points as before
(validation.extrapolation_scale.PARAM_SCALE: 0.25 -> 0.3 with this change)."""
MIN_BAND_POINTS = 10
"""Fewer points than this in any band: no per-band quantiles, the latency/bandwidth mix applies."""


def leave_one_out_factor(J: np.ndarray, psd: Sequence[float], prior_weight: float) -> np.ndarray:
    """1 / (1 - h_i) per point, h_i its leverage in the (linearised, prior-regularised) fit of the
    columns ``J`` (points x fitted keys, residual units): a point's residual divided by 1 - h_i is
    what it would be had the fit not seen it. A fit with many parameters for its points (20 keys for
    32 points) shrinks its own residuals; quantiles of the left-out ones say how far a new point
    falls."""
    if J.shape[1] == 0:
        return np.ones(J.shape[0])
    A = J.T @ J + prior_weight ** 2 * np.diag(1.0 / np.asarray(psd) ** 2)
    h = np.einsum("ij,ij->i", J @ np.linalg.pinv(A), J)
    return 1.0 / np.clip(1.0 - h, 0.05, 1.0)


def by_residual_band(pairs: Sequence[tuple[float, float]]) -> list[list[float]]:
    """The values of (size in bytes, value) ``pairs`` per band of :data:`RESIDUAL_EDGES_BYTES`: the report's bands
    below 16 MiB; from 16 MiB the whole bandwidth regime (its 16 MiB slow mode sets the regime's tails, and a 16 MiB
    prediction keeps them); from :data:`SLOW_MODE_TOP_BYTES` its own points where it has MIN_BAND_POINTS, else the
    whole regime's too."""
    below = [[v for s, v in pairs if size_band(s, SIZE_EDGES_BYTES) == b] for b in range(len(SIZE_EDGES_BYTES))]
    regime = [v for s, v in pairs if s >= BANDWIDTH_REGIME_BYTES]
    top = [v for s, v in pairs if s >= SLOW_MODE_TOP_BYTES]
    return below + [regime, top if len(top) >= MIN_BAND_POINTS else regime]


def residual_quantiles(comps: Sequence[Comparison], predictor: Predictor, level: float = LEVEL,
                       inflate: np.ndarray | None = None) -> dict:
    """Quantiles of log(measured / predicted) for latency- and bandwidth-bound points, and per size
    band of :data:`RESIDUAL_EDGES_BYTES` (``by_size``, :func:`by_residual_band`) when every band has
    MIN_BAND_POINTS points; ``inflate``: a factor per point on its residual (:func:`leave_one_out_factor`; its
    square root from :data:`STANDARDISED_FROM_BYTES`).
    An interval is for the median over launches: when every band has MIN_BAND_POINTS points pooled over
    several launches (``launches`` > 1), the bands' quantiles come from those alone, since a point measured
    in one launch strays from that median by its launch's host state as well (section 3 of
    docs/accuracy.md: points measured in one launch only miss the pooled median two to three times as far)."""
    lat, bw = [], []
    every: list[tuple[float, float, bool]] = []
    for i, c in enumerate(comps):
        f = 1.0 if inflate is None else float(inflate[i])
        r = float(np.log(c.point.time_s / c.predicted_s)) * (np.sqrt(f) if c.point.size_bytes >= STANDARDISED_FROM_BYTES
                                                            else f)
        (lat if predictor.latency_bound(c) else bw).append(r)
        every.append((c.point.size_bytes, r, c.point.launches > 1))
    q = (0.5 - level / 2, 0.5, 0.5 + level / 2)
    out: dict = {}
    for name, vals, other in (("latency", lat, bw), ("bandwidth", bw, lat)):
        v = vals or other
        out[name] = [float(x) for x in np.quantile(v, q)] if v else [0.0, 0.0, 0.0]
    bands = by_residual_band([(s, r) for s, r, _ in every])
    pooled = by_residual_band([(s, r) for s, r, several in every if several])
    if all(len(b) >= MIN_BAND_POINTS for b in pooled):
        bands = pooled
    if all(len(b) >= MIN_BAND_POINTS for b in bands):
        out["by_size"] = {"edges_bytes": list(RESIDUAL_EDGES_BYTES),
                          "q": [[float(x) for x in np.quantile(b, q)] for b in bands]}
    reps = repetition_quantiles([c.point for c in comps])
    if reps:
        out["reps"] = reps
    return out


def in_sample_param_sd(J: np.ndarray, cov: np.ndarray, points: Sequence[CollMeasurement]) -> list[float]:
    """Median, per size band of :data:`RESIDUAL_EDGES_BYTES` (:func:`by_residual_band`), of the calibration
    points' own standard deviation of log time from the parameters' covariance (``J``: points x keys, log
    time per scaled unit). Leave-one-out residuals already hold the parameters' uncertainty where they were
    fitted; a prediction adds only what its own exceeds this (simulator.collectives.uncertainty), i.e. what
    extrapolating brings, not the same uncertainty twice. 0 in the bands from :data:`STANDARDISED_FROM_BYTES`,
    whose standardised residuals hold none of it."""
    var = np.einsum("ij,jk,ik->i", J, cov, J)
    bands = by_residual_band([(p.size_bytes, float(np.sqrt(max(v, 0.0)))) for v, p in zip(var, points)])
    return [float(f"{np.median(b):.4g}") if b and lo < STANDARDISED_FROM_BYTES else 0.0
            for b, lo in zip(bands, (0,) + RESIDUAL_EDGES_BYTES)]


REP_PROBS = tuple(round(0.005 + 0.0099 * i, 4) for i in range(101))
"""Probabilities at which the repetitions' spread is stored (0.005 to 0.995): fine enough that the
order statistics of more ranks (quantile p ** (n0 / n)) can be read off it."""


def repetition_quantiles(points: Sequence[CollMeasurement]) -> dict | None:
    """Quantiles of log(repetition / the point's median) per size band, over the points of one world
    size whose repetitions the file lists: the spread of a single launch around the median, from
    which the 'any launch' band of a prediction comes (simulator.collectives.uncertainty). A band with
    fewer than MIN_BAND_POINTS such points has no row (an empty list); None when no band has enough
    or the points span several world sizes. When every band has MIN_BAND_POINTS points pooled over
    several launches, only those count: their repetitions span launches, the others' one launch's
    host state, which sits around its own median, not the median over launches."""
    if len({p.world for p in points}) != 1:
        return None
    pooled = [p for p in points if p.launches > 1 and len(p.rep_times_s) >= 2]
    if all(n >= MIN_BAND_POINTS for n in np.bincount([size_band(p.size_bytes, SIZE_EDGES_BYTES) for p in pooled],
                                                     minlength=len(SIZE_EDGES_BYTES) + 1)):
        points = pooled
    bands: list[list[float]] = [[] for _ in range(len(SIZE_EDGES_BYTES) + 1)]
    counts = [0] * len(bands)
    for p in points:
        if len(p.rep_times_s) < 2:
            continue
        r = np.log(np.asarray(p.rep_times_s))
        band = size_band(p.size_bytes, SIZE_EDGES_BYTES)
        bands[band].extend(r - np.median(r))
        counts[band] += 1
    if max(counts) < MIN_BAND_POINTS:
        return None
    return {"world": points[0].world, "edges_bytes": list(SIZE_EDGES_BYTES), "p": list(REP_PROBS),
            "q": [[float(f"{x:.5g}") for x in np.quantile(b, REP_PROBS)] if n >= MIN_BAND_POINTS else []
                  for b, n in zip(bands, counts)]}


def calibrate(points: Sequence[CollMeasurement], predictor: Predictor, keys: Sequence[str] | None = None,
              name: str = "calibrated", prior_weight: float = PRIOR_WEIGHT,
              rank_model_sd_s: float | None = None, param_scale: Sequence[float] | None = None,
              growth_sd: Sequence[float] | None = None) -> Fit:
    """Fitted parameters for ``points`` (measured collectives) on ``predictor``'s topology.

    ``keys``: fit exactly these (no identifiability screening); default: every candidate the points
    determine. The prior is ``predictor.params`` (the datasheet's values unless a calibration was
    loaded): the fit pulls towards it, and refused and weakly determined keys go back to it. Minimises
    Huber's loss over the rows log(pred/meas) / sd_i and prior_weight * (p - prior) / prior_sd
    (:func:`_objective`). ``rank_model_sd_s``: the per-rank cost's model error when it is read off the
    order statistics (default validation.rank_sync.MODEL_SD_S; the accuracy report passes each machine
    the figure of the other machines, so its coverage is judged on a term it did not set);
    ``param_scale``: per size band, the share of the covariance's extrapolation spread the intervals keep
    (default validation.extrapolation_scale.PARAM_SCALE, learned on other machines' unseen points);
    ``growth_sd``: per size band, the intervals' growth spread on world sizes the points do not cover (default
    validation.world_growth.GROWTH_SD, likewise learned)."""
    usable, skipped = compare(points, predictor)
    pts = [c.point for c in usable]
    if not pts:
        raise InputError("no measurement the model can represent (check the op, world size and variant)",
                         field="measurements")
    measured = np.array([p.time_s for p in pts])
    sd = np.array([point_sd(p) for p in pts])
    base = np.array([c.predicted_s for c in usable])
    cand = list(keys) if keys is not None else list(CANDIDATES)
    sc_all = np.array([scale(k) for k in cand])
    x_prior_all = np.array([predictor.params[k] for k in cand]) / sc_all
    ev = Evaluator(predictor, pts)
    start, sync = _host_start(pts, predictor.params, cand), None
    if start is not predictor.params:
        base = ev(start)
        x_prior_all = np.array([start[k] for k in cand]) / sc_all
    J0 = _jacobian(ev, start, cand, x_prior_all, sc_all, base) / sd[:, None]
    if keys is None:
        verdicts = identifiable(J0, cand)
        touched = [v.key for v in verdicts if v.reason != "moves no point"]
        verdicts = _one_world(pts, verdicts)
        verdicts = _one_launch(pts, J0, cand, verdicts)
        fit_keys = [v.key for v in verdicts if v.determined]
        start, sync, verdicts = _rank_sync(pts, predictor, verdicts, start, rank_model_sd_s)
    else:
        verdicts = [Verdict(k, True, "asked for") for k in cand]
        touched, fit_keys = list(cand), list(cand)
    refused: list[str] = []
    prior = predictor.params        # what every fit pulls towards and what refused and weak keys return to
    starts = [start]
    for _ in range(3):          # refit without refused or weakly determined keys
        params, sol_x = min((_fit(ev, s, measured, sd, fit_keys, prior_weight, prior) for s in starts),
                            key=lambda fx: _objective(ev, fx[0], fit_keys, measured, sd, prior_weight, prior))
        pinned = _pinned(fit_keys, sol_x)
        if pinned:
            refused += [f"{k}: {out_of_range_message(k)}; kept at its prior {prior[k]:.4g}" for k in pinned]
            fit_keys = [k for k in fit_keys if k not in pinned]
            verdicts = [Verdict(v.key, False, REFUSED) if v.key in pinned else v for v in verdicts]
            # refit from the prior and from the fit so far (the refused keys back at their prior): either
            # can stop at the iteration cap far from the other's optimum; the better one stays
            starts = [start, _at_prior(params, pinned, prior)]
            continue
        break
    sc = np.array([scale(k) for k in fit_keys])
    after, _ = compare(pts, predictor.with_params(params))
    pred_after = np.array([c.predicted_s for c in after])
    x_all = np.array([params[k] for k in touched]) / np.array([scale(k) for k in touched])
    idx = [cand.index(k) for k in touched]
    J1 = _jacobian(ev, params, touched, x_all, sc_all[idx], pred_after) / sd[:, None]
    r = np.log(pred_after / measured) / sd
    noise = max(1.4826 * float(np.median(np.abs(r - np.median(r)))), 1.0)
    if keys is None and fit_keys:   # weakly determined: the data alone pin it down worse than its prior
        moved = [abs(params[k] - prior[k]) / scale(k) for k in fit_keys]
        weak = weak_keys(J1[:, [touched.index(k) for k in fit_keys]], fit_keys, noise, moved)
        if weak:
            verdicts = [Verdict(v.key, False, (f"weak: the data alone give +-{sdv:.2g} x its scale, "
                                               f"its prior +-{prior_sd(v.key):.2g}") if np.isfinite(sdv) else
                                "moves no point at the fit (e.g. a host issue hidden under the GPU work)")
                        if v.key in weak else v for v in verdicts for sdv in [weak.get(v.key, 0.0)]]
            fit_keys = [k for k in fit_keys if k not in weak]
            # from the fit so far, the weak keys back at their prior (a restart from the prior can
            # stop at the iteration cap far from the optimum the first fit had found)
            params, _ = _fit(ev, _at_prior(params, weak, prior), measured, sd, fit_keys, prior_weight, prior)
            after, _ = compare(pts, predictor.with_params(params))
    if fit_keys:
        spread = dict(zip(fit_keys, data_sd(J1[:, [touched.index(k) for k in fit_keys]], noise)))
        verdicts = [Verdict(v.key, v.determined, f"{v.reason} (+-{spread[v.key]:.2g} x its scale)"
                            if v.key in spread else v.reason, float(spread.get(v.key, np.nan)))
                    for v in verdicts]
    psd = [sync.prediction_sd_s / scale(k) if sync is not None and k == RANK_KEY else prior_sd(k) for k in touched]
    cov = posterior(J1, noise, np.array(psd)) if touched else np.zeros((0, 0))
    dom = domain_of(predictor, usable)
    loo = leave_one_out_factor(J1[:, [touched.index(k) for k in fit_keys]], [prior_sd(k) for k in fit_keys],
                               prior_weight) if len(after) == len(pts) else None
    residual = residual_quantiles(after, predictor.with_params(params), inflate=loo)
    if "by_size" in residual and touched:
        from validation.extrapolation_scale import PARAM_SCALE, per_residual_band
        residual["by_size"]["param_sd"] = in_sample_param_sd(J1 * sd[:, None], cov, pts)
        residual["by_size"]["param_scale"] = per_residual_band(PARAM_SCALE if param_scale is None else param_scale)
    from validation import world_growth
    residual.update(world_growth.block(None if growth_sd is None else tuple(growth_sd)))
    unc = Uncertainty.from_block({"keys": list(touched), "scale": [scale(k) for k in touched], "cov": cov,
                                  "residual": residual, "domain": dom})
    params = params.with_values({}, name=name).with_uncertainty(unc.to_block())
    verdicts = [v for v in verdicts if v.key in touched or keys is not None]
    return Fit(params, tuple(fit_keys), summary(usable), summary(after), tuple(after), len(skipped),
               tuple(verdicts), tuple(refused), unc, dom, sync)


RANK_KEY = "rank_overhead_s"
RANK_SCALED = ("hop_latency_s.", RANK_KEY)
"""Keys whose effect changes with the number of ranks (per pipeline step, per doubling)."""


SOCKET_HOP = "hop_latency_s.socket."
"""The per-step latencies of NCCL's TCP socket transport: no NCCL constant (:func:`_one_world`)."""


def _one_world(pts: Sequence[CollMeasurement], verdicts: list[Verdict]) -> list[Verdict]:
    """Points of one world size keep the per-step hop latencies at NCCL's values: every op there has a
    fixed number of steps, so what seems to separate a hop latency from the per-op and per-algorithm
    costs is a contrast between ops or algorithms, which the per-op terms explain as well; a value
    fitted that way is multiplied by the extra steps of a larger world (a 4-GPU ring all-reduce has
    3x the steps of a 2-GPU one). Several world sizes determine them.

    The socket transport's (:data:`SOCKET_HOP`) is the exception where the same ops were also measured over
    another transport: NCCL has no constant for it (its tuning prices a one-server ring without peer-to-peer at
    PCI's latency, and the datasheet borrows the network's 2.7-14 us), and its contrast is one of transports,
    not of ops: the per-op, per-algorithm and per-protocol costs are the other transport's points', and what the
    socket points add is what each of their steps adds, a message handed by the sending rank's proxy thread to
    the kernel's TCP stack and picked up by the receiving rank's (NCCL's net_socket.cc: by default the proxy
    thread itself moves the data, on one socket per connection, after a size message on it)."""
    if len({p.world for p in pts}) > 1:
        return verdicts
    free = _socket_contrast(pts)
    return [Verdict(v.key, False, "one world size cannot tell a per-step latency from the per-op cost "
                    "(NCCL's value)") if v.determined and v.key.startswith(RANK_SCALED[0])
            and not (free and v.key.startswith(SOCKET_HOP)) else v
            for v in verdicts]


def _socket_contrast(pts: Sequence[CollMeasurement]) -> bool:
    """Whether an op measured over the socket transport was measured over another transport too."""
    ops: dict[bool, set[str]] = {True: set(), False: set()}
    for p in pts:
        choice = choice_for(p)
        ops[choice is not None and choice[2] == "socket"].add(p.op)
    return bool(ops[True] & ops[False])


ONE_LAUNCH_KEYS = ("base_latency_s.",)
"""Keys :func:`_one_launch` keeps at their prior when only one launch's small points determine them: NCCL's per-
algorithm and per-protocol launch latency (tuning.cc's baseLat), a GPU-side constant."""
ONE_LAUNCH_REASON = ("determined only by points below 16 MiB measured in one launch, whose times are that launch's "
                     "host state (NCCL's value)")


def _one_launch(pts: Sequence[CollMeasurement], J: np.ndarray, keys: Sequence[str],
                verdicts: list[Verdict]) -> list[Verdict]:
    """A launch latency (:data:`ONE_LAUNCH_KEYS`) that the points measured in several launches or in the bandwidth
    regime do not determine keeps NCCL's value, where the data hold points of both kinds. Below 16 MiB a call runs
    at its host's pace, and a launch's repetitions share one host state (on shared hosts a fast mode and one about
    twice as slow, section 3 of docs/accuracy.md): a forced NCCL_ALGO / NCCL_PROTO variant measured in one launch
    then shows that launch's mode, which a launch latency fitted on its points alone takes as a GPU constant and
    carries to every world size (validation.variant_residuals: the LL128 variant's 2-GPU launch ran +54% above the
    default's pooled medians on host-paced calls, and set tree / LL128's latency at 30 us against NCCL's 14).
    Data measured in one launch throughout have no other launches to tell it by: they keep what they determine."""
    several = np.array([p.launches > 1 or p.size_bytes >= BANDWIDTH_REGIME_BYTES for p in pts])
    if several.all() or not any(p.launches > 1 for p in pts):
        return verdicts
    trusted = {v.key for v in identifiable(J[several], keys) if v.determined}
    return [Verdict(v.key, False, ONE_LAUNCH_REASON)
            if v.determined and v.key.startswith(ONE_LAUNCH_KEYS) and v.key not in trusted else v for v in verdicts]


def _host_start(pts: Sequence[CollMeasurement], params: Parameters, cand: Sequence[str]) -> Parameters:
    """Where the fit starts and screens the keys: ``params``, with the host's issue cost per call
    (``call_overhead_s``) at the fastest point's time when ``params`` has none. A call's host issue
    overlaps the GPU work of the call before it (closed_form.call_time_s), so at 0 it moves no point and
    the screening would call it undetermined; no call of a back-to-back stream costs less than its issue."""
    if "call_overhead_s" not in cand or params["call_overhead_s"] > 0:
        return params
    return params.with_values({"call_overhead_s": min(p.time_s for p in pts)})


def _rank_sync(pts: Sequence[CollMeasurement], predictor: Predictor, verdicts: list[Verdict],
               start: Parameters | None = None, model_sd_s: float | None = None):
    """(start parameters, estimate, verdicts): a per-rank cost the fit cannot determine (one world
    size) taken from the repetitions' order statistics (validation.rank_sync) instead of its prior 0."""
    from validation import rank_sync
    start = predictor.params if start is None else start
    v = next((v for v in verdicts if v.key == RANK_KEY), None)
    if v is None or v.determined:
        return start, None, verdicts
    sync = rank_sync.estimate(pts, predictor, model_sd_s=model_sd_s)
    if sync is None:
        return start, None, verdicts
    verdicts = [Verdict(RANK_KEY, True, f"from {sync.source}, not fitted: {sync.describe()}",
                        sync.sd_s / scale(RANK_KEY)) if u.key == RANK_KEY else u for u in verdicts]
    return start.with_values({RANK_KEY: sync.per_doubling_s}), sync, verdicts


LOG_FIT_PRIOR_WEIGHT = 0.1
"""fit_log's pull of the defaults: a parameter moved by 100% of its scale costs as much as one point
mispredicted by 10% (unweighted log residuals)."""


def fit_log(params: Parameters, keys: Sequence[str], predict: Callable[[Parameters], np.ndarray],
            measured: np.ndarray, prior_weight: float = LOG_FIT_PRIOR_WEIGHT, name: str = "calibrated") -> Parameters:
    """``params`` with ``keys`` refitted: minimises sum(log(predict(p)/measured)^2) +
    prior_weight^2 * sum(((p - default) / scale)^2) within the keys' bounds. ``predict`` maps a
    parameter set to one predicted time per measurement (any model: DDP, DataParallel, Gloo, ...);
    the collective fitter above adds identifiability, robust weights and uncertainty on top."""
    keys = list(keys)
    sc = np.array([scale(k) for k in keys])       # every unknown of order 1
    lo = np.array([bounds(k)[0] for k in keys]) / sc
    hi = np.array([bounds(k)[1] for k in keys]) / sc
    # start off the bounds (a default of 0 sits on its lower bound, where trust regions stall)
    x0 = np.clip(np.array([params[k] for k in keys]) / sc, lo + 0.05 * (hi - lo).clip(max=1), hi)
    default = np.array([DEFAULTS[k] for k in keys])

    def residuals(x: np.ndarray) -> np.ndarray:
        pred = predict(params.with_values(dict(zip(keys, x * sc))))
        return np.concatenate([np.log(pred / measured), prior_weight * (x * sc - default) / sc])

    sol = least_squares(residuals, x0, bounds=(lo, hi), x_scale=1.0, diff_step=1e-3, max_nfev=200 * max(1, len(keys)))
    return params.with_values(dict(zip(keys, sol.x * sc)), name=name)


MOVED_SDS = 2.0
"""A key the fit moved further than this many of its data-alone standard deviations from its prior is
determined, however wide that deviation: the data reject the prior. (The deviation scales with the
residuals' spread, so a model that misfits a dataset widens every key's; without this rule a 175 us
per-call floor fitted on an EFA run, 17 deviations from its 10 us prior, was dropped as weak and the
refit, left with no latency term, missed the run by 80%: aws p4d, section 1 of docs/accuracy.md.)"""


def weak_keys(J: np.ndarray, keys: list[str], noise: float, moved: Sequence[float] | None = None) -> dict[str, float]:
    """Keys the data determine worse than their prior (data-alone sd > prior sd) unless the fit moved
    them more than MOVED_SDS such deviations (``moved``: |fitted - prior| per key, scaled units),
    dropped one at a time from the end of the preference order so that of two near-collinear keys the
    preferred stays."""
    from validation.identifiability import priority
    keep = list(range(len(keys)))
    moved = [0.0] * len(keys) if moved is None else list(moved)
    weak: dict[str, float] = {}
    while keep:
        sdv = data_sd(J[:, keep], noise)
        bad = [(priority(keys[i]), n, s) for n, (i, s) in enumerate(zip(keep, sdv))
               if s > prior_sd(keys[i]) and moved[i] <= MOVED_SDS * s]
        if not bad:
            break
        _, n, s = max(bad)
        weak[keys[keep[n]]] = float(s)
        keep.pop(n)
    return weak


def _fit(ev: Evaluator, start: Parameters, measured, sd, keys, prior_weight,
         prior: Parameters | None = None) -> tuple[Parameters, np.ndarray]:
    """``start`` with ``keys`` fitted: minimises :func:`_objective` (``prior``: the values the prior
    pulls towards, default the datasheet's) from ``start``; also the solution in scaled units."""
    if not keys:
        return start, np.zeros(0)
    sc = np.array([scale(k) for k in keys])
    lo = np.array([bounds(k)[0] for k in keys]) / sc
    hi = np.array([bounds(k)[1] for k in keys]) / sc
    psd = np.array([prior_sd(k) for k in keys])
    # start off the bounds (a default of 0 sits on its lower bound, where trust regions stall)
    x0 = np.clip(np.array([start[k] for k in keys]) / sc, lo + 0.05 * (hi - lo).clip(max=1),
                 hi - 1e-6 * (hi - lo))

    def residuals(x: np.ndarray) -> np.ndarray:
        return _rows(ev, start.with_values(dict(zip(keys, np.clip(x, lo, hi) * sc))), keys, measured, sd,
                     prior_weight, prior)

    def jac(x: np.ndarray) -> np.ndarray:
        base = ev(start.with_values(dict(zip(keys, x * sc))))
        J = _jacobian(ev, start.with_values(dict(zip(keys, x * sc))), keys, x, sc, base) / sd[:, None]
        return np.vstack([J, prior_weight * np.diag(1.0 / psd)])

    sol = least_squares(residuals, x0, jac=jac, bounds=(lo, hi), loss="huber", f_scale=HUBER_SCALE,
                        max_nfev=MAX_ITERATIONS, xtol=1e-6, ftol=1e-6)
    x = np.clip(sol.x, lo, hi)
    return start.with_values(dict(zip(keys, x * sc))), x


def _rows(ev: Evaluator, params: Parameters, keys, measured, sd, prior_weight,
          prior: Parameters | None = None) -> np.ndarray:
    """The fit's residual rows at ``params``: each point's log(predicted / measured) over its spread,
    then each key's distance from its prior value (``prior``, default the datasheet's) over its prior
    deviation, times ``prior_weight``."""
    pv = DEFAULTS if prior is None else prior
    pull = np.array([(params[k] - pv[k]) / scale(k) / prior_sd(k) for k in keys])
    return np.concatenate([np.log(ev(params) / measured) / sd, prior_weight * pull])


def huber(r: np.ndarray) -> np.ndarray:
    """Huber's loss of residuals ``r`` at HUBER_SCALE, as scipy's least_squares sums it (times 2):
    r^2 within the scale, linear beyond."""
    z = (np.asarray(r) / HUBER_SCALE) ** 2
    return np.where(z <= 1, z, 2 * np.sqrt(z) - 1) * HUBER_SCALE ** 2


def _objective(ev: Evaluator, params: Parameters, keys, measured, sd, prior_weight,
               prior: Parameters | None = None) -> float:
    """What :func:`_fit` minimises at ``params``: Huber's loss summed over every row of :func:`_rows`,
    the prior's rows included (least_squares applies the loss to all of them): a key the data pull
    far from its prior costs linearly, so data that reject the prior can move it."""
    return float(np.sum(huber(_rows(ev, params, keys, measured, sd, prior_weight, prior))))


def _at_prior(params: Parameters, keys, prior: Parameters) -> Parameters:
    """``params`` with ``keys`` back at their prior values, unchecked: a prior may sit on its own bound
    (NCCL's base latency of NVLS and NVLS-Tree is 0, below the fitter's 1 us minimum)."""
    for k in keys:
        params = params.nudged(k, prior[k])
    return params


def _pinned(keys, x) -> list[str]:
    """Keys the fit pushed onto a physical limit: efficiencies at 1, latencies at their minimum."""
    out = []
    for k, v in zip(keys, x):
        lo, hi = bounds(k)
        val = v * scale(k)
        if "efficiency" in k and val >= hi * (1 - 1e-3):
            out.append(k)
        elif k.startswith(("base_latency_s.", "hop_latency_s.")) and val <= lo * (1 + 1e-3):
            out.append(k)
    return out
