"""How much a time's growth with the ranks varies between machines, for intervals below 16 MiB.

A 2-GPU calibration predicts 4 GPUs from its structure (the per-rank cost read off the order statistics,
NCCL's per-step latencies). How a latency-bound call's time actually grows from 2 to 4 GPUs differs from
lease to lease and launch to launch of the same GPUs (validation.lease_spread: another lease's measured
growth of an op, or another launch's on the same hosts, predicts a lease's 4-GPU medians no better than
the model), and no calibration's own world sizes show it. So an interval on a world size the calibration
did not see adds a growth spread ``g`` per doubling of the ranks (``residual.growth`` of a
calibration's uncertainty block, simulator.collectives.uncertainty), in quadrature with the parameters'
part: per size band below 16 MiB, the smallest ``g`` on a grid of :data:`STEP` whose intervals hold the
level (90%) of the pooled unseen points of the machines' largest world sizes in that band
(validation.extrapolation_scale.records: the same points and residual quantiles as the >= 16 MiB share).
At >= 16 MiB, where a call's time is its GPU's and reproduces to ~1% across launches, ``g`` is 0.

The shipped figures (:data:`GROWTH_SD`) are learned on every committed machine; the accuracy report judges
each machine with the figures of the other machines (:func:`growth_for` with ``exclude``), so no machine's
coverage rests on a figure its own points set.
"""

from __future__ import annotations

import math

import numpy as np

GROWTH_SD = (0.2, 0.2, 0.0)
"""The shipped growth spread per size band (validation.calibrate.SIZE_EDGES_BYTES: < 64 KiB, 64 KiB -
16 MiB, >= 16 MiB), log time per doubling of the ranks: :func:`growth_for` over every machine; the report
refuses to run when they differ."""
STEP = 0.025
TOP = 1.0
LEARNED_BANDS = (0, 1)
"""Bands whose growth spread is learned (< 16 MiB)."""


def machine_rows(name: str) -> tuple[np.ndarray, float]:
    """(validation.extrapolation_scale.records of the machine, doublings from its 2-GPU calibration to its
    largest world size)."""
    from validation import extrapolation_scale, rank_model_error
    return extrapolation_scale.records(name), math.log2(max(rank_model_error.pooled(name)) / 2)


def coverage(parts: list[tuple[np.ndarray, float]], band: int, g: float, level: float = 0.9) -> tuple[float, float]:
    """(share inside, median width) of the level's intervals of the machines' points in ``band`` with the
    growth spread ``g`` per doubling (and the band's shipped share of the covariance's extrapolation)."""
    from validation import extrapolation_scale
    k = extrapolation_scale.PARAM_SCALE[band]
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


def learned(parts: list[tuple[np.ndarray, float]], band: int, level: float = 0.9) -> float:
    """The smallest ``g`` on the grid from 0 to TOP whose intervals hold ``level`` of the points; 0 without points."""
    if not any(np.any(rows[:, 0] == band) for rows, _ in parts):
        return 0.0
    for g in np.arange(0.0, TOP + 1e-9, STEP):
        if coverage(parts, band, float(g), level)[0] >= level:
            return round(float(g), 3)
    return TOP


def growth_for(exclude: str | None = None) -> tuple[float, ...]:
    """The growth spread per size band learned on the machines other than ``exclude``."""
    from validation import rank_model_error
    from validation.calibrate import SIZE_EDGES_BYTES
    parts = [machine_rows(m.name) for m in rank_model_error.MACHINES if m.name != exclude]
    return tuple(learned(parts, b) if b in LEARNED_BANDS else 0.0 for b in range(len(SIZE_EDGES_BYTES) + 1))


def check_shipped() -> tuple[float, ...]:
    """The growth spreads over every machine; InvariantError when the shipped :data:`GROWTH_SD` is not them."""
    from validation.extrapolation_scale import shipped_matches
    return shipped_matches("validation.world_growth.GROWTH_SD", GROWTH_SD, growth_for(), 3)


def section() -> tuple[list[str], dict]:
    """docs/accuracy.md section 3's lines and figures: per machine and band below 16 MiB, its unseen points'
    coverage and width without the growth spread and with the one the other machines give."""
    from simulator.collectives.uncertainty import size_bands
    from validation import rank_model_error
    from validation.calibrate import SIZE_EDGES_BYTES
    every = check_shipped()
    names = size_bands(SIZE_EDGES_BYTES)
    lines = ["", "**How a time's growth with the ranks varies (intervals below 16 MiB).** Another lease's growth of an op "
             "predicts a lease's 4-GPU medians no better than the model (below), and no calibration's own world sizes "
             "show that spread, so an interval on a world size the calibration did not see adds a growth spread per "
             "doubling of the ranks, in quadrature: per band, the smallest (grid "
             f"{STEP:g}) whose intervals hold 90% of the other machines' unseen points (`validation/world_growth.py`; "
             "each machine's figures in section 3 use the other machines' figure, the shipped calibrations the one "
             "over all of them: " + ", ".join(f"{names[b][0]} {every[b]:g}" for b in LEARNED_BANDS) + " of log time "
             "per doubling). Unseen points of each machine's largest world size, predicted from its 2 GPUs:", "",
             "| machine | sizes | points | without it: coverage %, width % | from the other machines, per doubling "
             "| with it: coverage %, width % |", "|---|---|---|---|---|---|"]
    figures: dict = {"growth spread shipped": every}
    for m in rank_model_error.MACHINES:
        part = [machine_rows(m.name)]
        g = growth_for(m.name)
        for b in LEARNED_BANDS:
            n = int(np.sum(part[0][0][:, 0] == b))
            if not n:
                continue
            none, used = coverage(part, b, 0.0), coverage(part, b, g[b])
            figures[f"growth spread {m.name} {names[b][0]}"] = {"points": n, "growth_sd": g[b], "none": none,
                                                                "used": used}
            lines.append(f"| {m.name} | {names[b][0]} | {n} | {none[0] * 100:.0f}, {none[1] * 100:.0f} | {g[b]:g} | "
                         f"{used[0] * 100:.0f}, {used[1] * 100:.0f} |")
    return lines, figures


def block(growth: tuple[float, ...] | None = None) -> dict:
    """The ``residual.growth`` block a calibration carries (default the shipped :data:`GROWTH_SD`); empty
    where every figure is 0."""
    from validation.calibrate import SIZE_EDGES_BYTES
    sd = GROWTH_SD if growth is None else growth
    if not any(sd):
        return {}
    return {"growth": {"edges_bytes": [int(e) for e in SIZE_EDGES_BYTES], "sd": [float(x) for x in sd]}}


def judged(params, exclude: str | None):
    """``params`` (a calibration) with the growth spreads learned on the machines other than ``exclude``."""
    unc = dict(params.uncertainty)
    residual = {k: v for k, v in unc["residual"].items() if k != "growth"}
    return params.with_uncertainty({**unc, "residual": {**residual, **block(growth_for(exclude))}})
