"""How much a time's growth with the ranks varies between leases, for intervals below 32 MiB.

A 2-GPU calibration predicts 4 GPUs from its structure (the per-rank cost read off the order statistics,
NCCL's per-step latencies). How a latency-bound call's time actually grows from 2 to 4 GPUs differs from
lease to lease and launch to launch of the same GPUs (validation.lease_spread: another lease's measured
growth of an op, or another launch's on the same hosts, predicts a lease's 4-GPU medians no better than
the model), and no calibration's own world sizes show it. So an interval on a world size the calibration
did not see adds a growth spread ``g`` per doubling of the ranks (``residual.growth`` of a
calibration's uncertainty block, simulator.collectives.uncertainty), in quadrature with the parameters'
part. From :data:`SLOW_MODE_TOP_BYTES` (32 MiB) up, where a call's time is its GPU's and reproduces to ~1% across
launches, ``g`` is 0.

At 16 MiB (the band from 16 MiB to :data:`SLOW_MODE_TOP_BYTES`, its own band of the growth block,
:data:`GROWTH_EDGES_BYTES`) the repetitions of a 4-GPU call are a mixture: most run at the point's fast level and a
share runs 17-82% above it (10th-90th percentile; validation.slow_mode), a share that differs from lease to lease
and sits near one half on 4 GPUs (37-67% of a lease's repetitions, 23-48% on 2), so the median the truth files
report falls on the fast level on some leases and in the slow mode on others, and nothing a 2-GPU calibration
measures tells which (validation.slow_mode tests the candidates leave one lease out). Until stop 20 that band had
``g`` = 0 with the rest of >= 16 MiB and its intervals held 57-100% of the leases' 16 MiB medians; it now learns
its own ``g`` by the rule below, so the interval at 16 MiB covers the slow mode where the leases show it.

Per size band below 32 MiB ``g`` is learned the way it is judged: on the unseen points of each lease's largest
world size predicted by that lease's own 2-GPU calibration (:func:`lease_rows`: the committed machines of
validation.rank_model_error.MACHINES and the sealed campaigns of validation.sealed_campaign.SEALED), as the
smallest ``g`` on a grid of :data:`STEP` whose intervals hold the level (90%) of each lease's points *on average
over the leases*, each lease weighing alike. A lease's points share its growth (the host state of its hour), so
a lease is one draw of that growth, not its points' number of draws: pooled over points (the rule until the
session of 2026-11-27 stop 17) the 302 points of the 4x H200 campaigns set ``g`` alone (recorded then: every other
lease's intervals held 96-100% of its points at nominal 90%; docs/accuracy.md section 3 computes both rules today).

The shipped figures (:data:`GROWTH_SD`) are learned on every lease; the accuracy report judges each lease with
the figures of the other leases (:func:`growth_for` with ``exclude``: leave one lease out), so no lease's
coverage rests on a figure its own points set.

How much of the width is the truth's own scatter: validation.launch_floor (section 3's launches' column). Below
16 MiB a lease's own 4-GPU launches need a 32-88% band (median 51%) to hold 90% of their medians around the lease's
median, beside widths of 61-100% (session of 2026-11-27 stop 19, branch h10small19).

Tried and not kept (the same session and branch; ``python validation/scripts/growth_rules_s19.py`` prints every
figure): a growth spread that depends on what a 2-GPU calibration measures, or split finer, each learned by the
rule above and judged leave one lease out. Mean over the 9 leases of their < 16 MiB coverage / median width, least
coverage, leases below 80%; the shipped rule 90.2 / 78.6%, 74%, 2 (`h200x4_2026-11-27d` 74%,
`h100x4_2026-11-26_lat` 75%):

* times the lease's 2-GPU level (median < 64 KiB time): 89.6 / 77.7%, 72%, 2; its host issue time per call (lat
  launches): 89.8 / 78.4%, 72%, 2; its 2-GPU slow share: 90.6 / 78.6%, 74%, 1; its 2-GPU launches' 90% band: 89.7 /
  83.0%, 72%, 2; over its calibration's residual width: 90.5 / 78.0%, 72%, 1 (the pooled 4x H200 falls to 80%);
* per point, times the square root of its 2-GPU repetitions' log q90/q10: 90.4 / 83.0%, 67%, 2; of its 2-GPU launch
  medians' spread: 89.9 / 82.9%, 67%, 1;
* per op: 88.8 / 72.9%, 67%, 2 (the pooled 4x H200 85 -> 79%, `h200x4_2026-11-27d` 74 -> 67%: coverage lost where it
  was short); per GPU (learned on the leases of the same GPU): 88.3 / 81.3%, 63%, 2; each tail learned on its own
  (5% above, 5% below): 90.6 / 82.4%, 74%, 1; a floor the residual spread is topped up to instead of quadrature:
  90.3 / 81.1%, 75%, 3;
* < 1 KiB learned apart from 1-64 KiB: 90.1 / 76.7%, 74%, 1, the only rule that keeps every lease's coverage at or
  above 80% where it was and narrows the mean, by 1.9 points (narrower on 7 leases, wider on `h200x4_2026-11-27` 80 ->
  86% and `h200x4_2026-11-27d` 68 -> 73%). Not kept: it was the best of the 13 rules here, all chosen after seeing the
  per-lease figures, so its 1.9 points are within what picking among them gives; no mechanism sets 1 KiB apart (the
  times below 64 KiB are the host's issue time at every size); and 77% is far from the 25% target.

None of the 2-GPU figures orders the leases by the growth spread they need (0 to 0.3 per doubling at < 64 KiB): the
lease that misses most (`h200x4_2026-11-27d`, its < 64 KiB points' median measured / predicted 1.24) has an unremarkable 2-GPU
level, host issue time, slow share and launch scatter.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from validation.calibrate import RESIDUAL_EDGES_BYTES, SIZE_EDGES_BYTES, SLOW_MODE_TOP_BYTES

GROWTH_EDGES_BYTES = RESIDUAL_EDGES_BYTES
"""The growth block's size bands: those of the calibration's residuals (validation.calibrate.RESIDUAL_EDGES_BYTES,
>= 16 MiB split at :data:`SLOW_MODE_TOP_BYTES`: < 64 KiB, 64 KiB - 16 MiB, 16 MiB - 32 MiB, >= 32 MiB)."""
GROWTH_SD = (0.125, 0.125, 0.125, 0.0)
"""The shipped growth spread per band of :data:`GROWTH_EDGES_BYTES`, log time per doubling of the ranks:
:func:`growth_for` over every lease; the report refuses to run when they differ. The < 64 KiB band was 0.15 until
the fifteenth sealed lease (h200x4_2026-11-28e) landed; the report judges each lease with the other leases' value."""
STEP = 0.025
TOP = 1.0
SMALL_BANDS = (0, 1)
"""The bands below 16 MiB (the latency regime: the shift check and the launch floors)."""
LEARNED_BANDS = SMALL_BANDS + (2,)
"""Bands whose growth spread is learned (< 32 MiB: below 16 MiB and the 16 MiB slow mode)."""
Part = tuple[np.ndarray, float]
"""One lease's unseen points (validation.extrapolation_scale.rows_of, column 0 the band of :data:`GROWTH_EDGES_BYTES`
instead of the residual band: :func:`growth_banded`) and their doublings from 2 GPUs."""


def growth_banded(rows: np.ndarray) -> np.ndarray:
    """validation.extrapolation_scale.rows_of rows with their band (column 0) that of :data:`GROWTH_EDGES_BYTES`, from
    their size (the last column)."""
    from simulator.collectives.uncertainty import size_band
    out = rows.copy()
    out[:, 0] = [size_band(s, GROWTH_EDGES_BYTES) for s in rows[:, -1]]
    return out


def residual_band(band: int) -> int:
    """The report's band (validation.calibrate.SIZE_EDGES_BYTES, the index of
    validation.extrapolation_scale.PARAM_SCALE) a band of :data:`GROWTH_EDGES_BYTES` lies in."""
    return min(band, len(SIZE_EDGES_BYTES))


def machine_rows(name: str) -> Part:
    """(validation.extrapolation_scale.records of the machine, doublings from its 2-GPU calibration to its
    largest world size)."""
    from validation import extrapolation_scale, rank_model_error
    return growth_banded(extrapolation_scale.records(name)), math.log2(max(rank_model_error.pooled(name)) / 2)


def sealed_rows(c) -> Part:
    """The same for a sealed campaign (validation.sealed_campaign.Sealed): its largest world size's pooled points
    predicted by its 2-GPU calibration."""
    from validation import extrapolation_scale, sealed_campaign
    pooled, pred0 = sealed_campaign.campaign(c.lat, c.bw, c.topology)
    n = max(w for w, pts in pooled.items() if pts)
    return (growth_banded(extrapolation_scale.rows_of(pooled[n], pred0.with_params(sealed_campaign.two_gpu_fit(c).params))),
            math.log2(n / 2))


@lru_cache(maxsize=None)
def lease_rows() -> tuple[tuple[str, Part], ...]:
    """(name, :data:`Part`) of every lease measured beyond 2 GPUs: the committed machines, then the sealed
    campaigns (their names as in validation.lease_spread)."""
    from validation import rank_model_error, sealed_campaign
    return (tuple((m.name, machine_rows(m.name)) for m in rank_model_error.MACHINES)
            + tuple((c.lease, sealed_rows(c)) for c in sealed_campaign.SEALED if c.lat.exists() and c.bw.exists()))


def coverage(parts: list[Part], band: int, g: float, level: float = 0.9) -> tuple[float, float]:
    """(share inside, median width) of the level's intervals of the leases' points in ``band`` pooled, with the
    growth spread ``g`` per doubling (and the band's shipped share of the covariance's extrapolation)."""
    from validation import extrapolation_scale
    k = extrapolation_scale.PARAM_SCALE[residual_band(band)]
    inside, widths = [], []
    for rows, doublings in parts:
        r = rows[rows[:, 0] == band]
        if len(r):
            c, w, flags, ws = extrapolation_scale.coverage(r, k, level, growth_sd=g * doublings, each=True)
            inside += list(flags)
            widths += list(ws)
    if not inside:
        return float("nan"), float("nan")
    return float(np.mean(inside)), float(np.median(widths))


def lease_coverage(parts: list[Part], band: int, g: float, level: float = 0.9) -> float:
    """Mean over the leases with points in ``band`` of each one's share inside (each lease weighing alike); nan
    without points."""
    shares = [coverage([part], band, g, level)[0] for part in parts if np.any(part[0][:, 0] == band)]
    return float(np.mean(shares)) if shares else float("nan")


def learned(parts: list[Part], band: int, level: float = 0.9, pooled: bool = False) -> float:
    """The smallest ``g`` on the grid from 0 to TOP whose intervals hold ``level`` of each lease's points on average
    over the leases (``pooled``: of the points pooled, each lease weighing by its points); 0 without points."""
    if not any(np.any(rows[:, 0] == band) for rows, _ in parts):
        return 0.0
    for g in np.arange(0.0, TOP + 1e-9, STEP):
        share = coverage(parts, band, float(g), level)[0] if pooled else lease_coverage(parts, band, float(g), level)
        if share >= level - 1e-9:
            return round(float(g), 3)
    return TOP


def growth_for(exclude: str | None = None, pooled: bool = False) -> tuple[float, ...]:
    """The growth spread per size band learned on the leases other than ``exclude`` (``pooled``: by
    :func:`learned`'s earlier rule). Learned once per process for the same leases (:func:`lease_rows`' result,
    by identity: a cleared cache or a test's own leases start afresh) and shares: the report judges every
    calibration of a lease with it (~160 calls, a few dozen distinct)."""
    from validation import extrapolation_scale
    leases = lease_rows()
    if _LEARNED[0] is not leases:
        _LEARNED[:] = [leases, {}]
    key = (extrapolation_scale.PARAM_SCALE, exclude, pooled)
    hit = _LEARNED[1].get(key)
    if hit is None:
        parts = [part for name, part in leases if name != exclude]
        hit = _LEARNED[1][key] = tuple(learned(parts, b, pooled=pooled) if b in LEARNED_BANDS else 0.0
                                       for b in range(len(GROWTH_EDGES_BYTES) + 1))
    return hit


_LEARNED: list = [None, {}]
""":func:`growth_for`'s memo: [the :func:`lease_rows` result it is for, {(covariance shares, exclude, pooled):
growth spreads}] (:func:`coverage` reads the shares as validation.extrapolation_scale.PARAM_SCALE)."""


def check_shipped() -> tuple[float, ...]:
    """The growth spreads over every lease; InvariantError when the shipped :data:`GROWTH_SD` is not them."""
    from validation.extrapolation_scale import shipped_matches
    return shipped_matches("validation.world_growth.GROWTH_SD", GROWTH_SD, growth_for(), 3)


def held_out(pooled: bool = False) -> dict[str, dict[int, dict]]:
    """Per lease and learned band with points: its points' number, the growth spread the other leases give (by
    :func:`learned`'s rule, or ``pooled``: the earlier one) and its (coverage, width) without and with it."""
    out: dict[str, dict[int, dict]] = {}
    for name, part in lease_rows():
        g = growth_for(name, pooled)
        for b in LEARNED_BANDS:
            n = int(np.sum(part[0][:, 0] == b))
            if n:
                out.setdefault(name, {})[b] = {"points": n, "growth_sd": g[b], "none": coverage([part], b, 0.0),
                                               "used": coverage([part], b, g[b])}
    return out


def shift_check() -> dict[str, dict[str, float]]:
    """Would the leases' typical growth, learned on the other leases, centre a lease's predictions below 16 MiB?
    Per lease: its unseen points' median |predicted / measured - 1| (%) as predicted, the shift (log time) the other
    leases give (the median over them of each one's median log(measured / predicted)) and the median error with the
    predictions moved by it; ``own_median``: the lease's own median log(measured / predicted)."""
    def small(part: Part) -> np.ndarray:
        rows = part[0]
        return rows[np.isin(rows[:, 0], SMALL_BANDS), 1]
    r = {name: small(part) for name, part in lease_rows()}
    out = {}
    for name, x in r.items():
        shift = float(np.median([np.median(v) for k, v in r.items() if k != name and len(v)]))
        out[name] = {"points": len(x), "own_median": float(np.median(x)) if len(x) else float("nan"), "median_pct": float(np.median(np.abs(np.expm1(-x)))) * 100, "shift": shift,
                     "shifted_median_pct": float(np.median(np.abs(np.expm1(shift - x)))) * 100}
    return out


def shift_lines(check: dict[str, dict[str, float]]) -> list[str]:
    """:func:`shift_check` as a sentence for section 3."""
    better = [k for k, v in check.items() if v["shifted_median_pct"] < v["median_pct"]]
    worse = {k: v for k, v in check.items() if k not in better}
    before, after = (float(np.mean([v[k] for v in check.values()])) for k in ("median_pct", "shifted_median_pct"))
    above = sum(v["own_median"] > 0 for v in check.values())
    return ["", "**Would the other leases' growth centre the predictions?** Measured over predicted on the leases' "
            "unseen points below 16 MiB is above 1 on "
            f"{above} of {len(check)} leases"
            + (" (the model's 4-GPU growth falls short on most)" if 2 * above > len(check) else "")
            + ", so a shift "
            "of log time learned on the other leases (the median of their median log ratios; leave one lease out) "
            "might lower the median error. Per lease, median err % as predicted -> with the shift: " + "; ".join(
                f"{k} {v['median_pct']:.1f} -> {v['shifted_median_pct']:.1f} (shift {v['shift']:+.3f})"
                for k, v in check.items())
            + f". It helps {len(better)} of {len(check)} leases (mean over leases {before:.1f} -> {after:.1f}%)"
            + ("" if not worse else "; " + ", ".join(
                f"{k} goes {v['median_pct']:.1f} -> {v['shifted_median_pct']:.1f}%" for k, v in worse.items()))
            + ". Not taken: one shift for every op, size and GPU was chosen after seeing the sign of these errors (the "
            "session of 2026-11-27 stop 17), it is no mechanism the 2-GPU data show (a lease's hosts slowing every "
            "process when more share them, `h200x4_2026-11-26_lat3`'s host table, is one candidate; leases whose "
            "several-world per-rank cost is below the order statistics go the other way), and the same shift per op, "
            "or the per-rank cost corrected by the other leases' misses, raised the mean over leases (recorded, not "
            "recomputed: scripts outside the code on branch h10width7, session of 2026-11-27 stop 17, over the 7 leases "
            "then: 16.1 -> 17.0% and 16.1 -> 18.4%). The growth spread above carries it; a lease measured after this "
            "choice is its test."]


def section() -> tuple[list[str], dict]:
    """docs/accuracy.md section 3's lines and figures: per lease and learned band (below 32 MiB), its unseen points'
    coverage and width without the growth spread and with the one the other leases give, and the mean over the
    leases by this rule and by the earlier one (points pooled)."""
    from simulator.collectives.uncertainty import size_bands
    from validation import launch_floor
    every = check_shipped()
    names = size_bands(GROWTH_EDGES_BYTES)
    now, before = held_out(), held_out(pooled=True)
    lines = ["", "**How a time's growth with the ranks varies (intervals below 32 MiB).** Another lease's growth of an op "
             "predicts a lease's 4-GPU medians no better than the model (below), and no calibration's own world sizes "
             "show that spread (at 16 MiB: where a lease's 4-GPU medians fall, on the fast level or in the slow "
             "mode, next paragraph), so an interval on a world size the calibration did not see adds a growth spread per "
             "doubling of the ranks, in quadrature: per band, the smallest (grid "
             f"{STEP:g}) whose intervals hold 90% of each lease's unseen points on average over the leases, each "
             "lease weighing alike (a lease's points share its hour's growth: one draw of it, however many points), "
             "learned on the other leases, the sealed ones among them (`validation/world_growth.py`; each lease's "
             "figures in section 3 use the other leases' figure, the shipped calibrations the one over all of them: "
             + ", ".join(f"{names[b][0]} {every[b]:g}" for b in LEARNED_BANDS) + " of log time per doubling). Unseen "
             "points of each lease's largest world size, predicted from its 2 GPUs:", "",
             "| lease | sizes | points | without it: coverage %, width % | from the other leases, per doubling "
             "| with it: coverage %, width % | the lease's own 4-GPU launches alone: 90% band width % "
             "| points pooled (the rule until 2026-11-27 stop 17): per doubling, "
             "coverage %, width % |", "|---|---|---|---|---|---|---|---|"]
    figures: dict = {"growth spread shipped": every}
    for name, bands in now.items():
        for b, v in bands.items():
            old = before[name][b]
            figures[f"growth spread {name} {names[b][0]}"] = {**v, "pooled rule": old}
            lines.append(f"| {name} | {names[b][0]} | {v['points']} | {v['none'][0] * 100:.0f}, {v['none'][1] * 100:.0f} "
                         f"| {v['growth_sd']:g} | {v['used'][0] * 100:.0f}, {v['used'][1] * 100:.0f} | "
                         f"{launch_floor.cell(name, names[b][0])} | "
                         f"{old['growth_sd']:g}: {old['used'][0] * 100:.0f}, {old['used'][1] * 100:.0f} |")
    means = {}
    for b in LEARNED_BANDS:
        rows = [(v[b], before[name][b]) for name, v in now.items() if b in v]
        means[names[b][0]] = tuple(float(np.mean([r[i]["used"][j] for r in rows])) * 100 for i in (0, 1) for j in (0, 1))
    figures["growth spread mean over leases"] = means
    lines += ["", "Mean over the leases, each judged with the other leases' figure (nominal 90%): " + "; ".join(
        f"{k} coverage {v[0]:.0f}% at a width of {v[1]:.0f}% (points pooled: {v[2]:.0f}% at {v[3]:.0f}%)"
        for k, v in means.items()) + ". A lease's coverage scatters around that mean because its points share one "
        "growth: a lease whose growth falls outside the others' spread misses many points at once."]
    text, floor_figures = launch_floor.paragraph({(name, names[b][0]): v["used"][1]
                                                  for name, bands in now.items() for b, v in bands.items()
                                                  if b in SMALL_BANDS})
    figures.update(floor_figures)
    lines += ["", text] if text else []
    check = shift_check()
    figures["growth shift check"] = check
    lines += shift_lines(check)
    return lines, figures


def block(growth: tuple[float, ...] | None = None) -> dict:
    """The ``residual.growth`` block a calibration carries (default the shipped :data:`GROWTH_SD`); empty
    where every figure is 0."""
    sd = GROWTH_SD if growth is None else growth
    if not any(sd):
        return {}
    return {"growth": {"edges_bytes": [int(e) for e in GROWTH_EDGES_BYTES], "sd": [float(x) for x in sd]}}


def judged(params, exclude: str | None):
    """``params`` (a calibration) with the growth spreads learned on the leases other than ``exclude``."""
    unc = dict(params.uncertainty)
    residual = {k: v for k, v in unc["residual"].items() if k != "growth"}
    return params.with_uncertainty({**unc, "residual": {**residual, **block(growth_for(exclude))}})
