"""docs/accuracy.md, section 3: a whole 2 -> 3/4 GPU campaign on a machine no fit or model change saw.

``h200x4_2026-11-26_lat3`` (4 B - 256 KiB on 2, 3 and 4 H200s, with every rank's host issue times and
NCCL's per-call choices) and ``h200x4_2026-11-26_bw2`` (1 MiB - 1 GiB on 2 and 4 GPUs, the same host a
minute earlier) were measured by the lead under main 73cb86f; their README gives the blind figures,
written before anyone changed the model for them (:data:`BLIND`). This module scores them under the
model as it is now, the way section 3 scores the pooled 4x H200 campaigns: ``gpunetsim calibrate``
(validation.calibrate) on every 2-GPU launch of both folders pooled, prediction of the pooled 3- and
4-GPU launches, which no fit sees, per size band. With it: the host-or-GPU table, the host issue
times' reading chosen on the campaign's own 2-GPU data (validation.rank_sync.self_check) and NCCL's
choices from its INFO lines.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from validation.calibrate import SIZE_EDGES_BYTES

DATA = Path(__file__).resolve().parent / "data"
LAT = DATA / "h200x4_2026-11-26_lat3"
BW = DATA / "h200x4_2026-11-26_bw2"
PREFIX = "h200c_heldout"
"""Figures' keys: ``{PREFIX}_{GPUs} {sizes}`` (sizes a band of validation.transfer.BANDS, '< 16 MiB' or 'all')."""

BLIND = {"< 64 KiB": (7.7, 80.0), "64 KiB - 16 MiB": (16.2, 86.0), "< 16 MiB": (15.2, 83.0, 78.0, 47.0),
         ">= 16 MiB": (3.0, 46.0, 14.0), "3 GPUs": (14.0, 94.0)}
"""The blind figures of LAT's README (main 73cb86f, before any model change), 4 GPUs unless named:
(median err %, inside the launches' range %[, 90% coverage %, median width %]; >= 16 MiB: its p90 err % third)."""

SMALL = ("< 16 MiB", 0, SIZE_EDGES_BYTES[-1])
"""Every size band below the last (validation.transfer.BANDS, the calibration's residual bands)."""
MACHINE = f"4x H200, `{LAT.name}`"
"""The campaign in validation.rank_model_error.MACHINES."""


def files(lat: Path | None = None, bw: Path | None = None) -> dict[int, list[Path]]:
    """A campaign's launches per world size (both folders; by default this module's :data:`LAT` and :data:`BW`,
    read when called)."""
    lat = LAT if lat is None else lat
    bw = BW if bw is None else bw
    return {n: sorted(lat.glob(f"lat_world{n}_L*.jsonl")) + sorted(bw.glob(f"bw_world{n}_L*.jsonl"))
            for n in (2, 3, 4)}


def score_campaign() -> tuple[list[str], dict, object, object, dict]:
    """The campaign's table rows, figures, the 2-GPU fit, the 2- and 3-GPU fit and the pooled points."""
    from validation import extrapolation_scale, rank_model_error
    from validation.calibrate import calibrate
    pooled = rank_model_error.pooled(MACHINE)
    pred0 = rank_model_error.predictor(MACHINE)
    sd = rank_model_error.model_sd_s(MACHINE)       # the per-rank cost's model error of the other machines
    fit = rank_model_error.two_gpu_fit(MACHINE)
    bare = calibrate([replace(q.point, rank_host_times_s=()) for q in pooled[2]], pred0, name="reps-only",
                     rank_model_sd_s=sd)
    fit23 = rank_model_error.several_fit(MACHINE)
    lines, figures = score_fits(pooled, pred0, (fit, bare, fit23),
                                lambda params: extrapolation_scale.judged(params, MACHINE), PREFIX)
    return lines, figures, fit, fit23, pooled


def score_fits(pooled: dict, pred0, fits: tuple, judged, prefix: str) -> tuple[list[str], dict]:
    """Table rows and figures (keys ``{prefix}_{GPUs}{case} {sizes}``) of a campaign's pooled points per world
    size predicted by its 2-GPU fit, the same fit with the per-rank cost from the repetitions only, and the fit on
    2 and 3 GPUs (``fits``, validation.calibrate.Fit each), each calibration given its extrapolation shares by
    ``judged`` (validation.extrapolation_scale.judged with the machines to learn them on)."""
    from validation import accuracy_latency, transfer
    fit, bare, fit23 = fits

    def on(params):
        return pred0.with_params(judged(params))
    bands = transfer.BANDS[:-1] + (SMALL,) + transfer.BANDS[-1:]
    cases = [(2, "2 (fitted)", on(fit.params), "", (SMALL, transfer.BANDS[-1])),
             (3, "3", on(fit.params), "", (SMALL,)),
             (4, "4", on(fit.params), "", bands),
             (3, f"3, per-rank cost from the repetitions only ({bare.params['rank_overhead_s'] * 1e6:.1f} us per "
              "doubling)", on(bare.params), "_reps_only", (SMALL,)),
             (4, f"4, per-rank cost from the repetitions only ({bare.params['rank_overhead_s'] * 1e6:.1f} us per "
              "doubling)", on(bare.params), "_reps_only", (SMALL,)),
             (4, "4, fitted on 2 and 3 GPUs", on(fit23.params), "_fit23", (SMALL,))]
    lines = ["| GPUs | sizes | points | median err % | p90 err % | inside range % | 90% coverage % | median width % "
             "| single repetitions inside the any-launch band % | band width % |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    figures: dict = {}
    for n, label, pred, suffix, which in cases:
        rows = transfer.score(pooled[n], pred)
        for name, lo, hi in which:
            st = transfer.stats([r for r in rows if lo <= r.pooled.point.size_bytes < hi])
            if st.get("points"):
                figures[f"{prefix}_{n}{suffix} {name}"] = st
                lines.append(accuracy_latency.held_out_row([label, name], st))
    return lines, figures


def host_growth(split: dict) -> dict[str, float]:
    """Per op, the slowest host's issue time per call in fast repetitions (``host_fast_s`` of
    validation.accuracy_latency.host_split) on the largest world size minus the smallest (seconds)."""
    out = {}
    for op in sorted({op for op, _ in split}):
        worlds = sorted(n for o, n in split if o == op)
        if len(worlds) >= 2:
            out[op] = split[(op, worlds[-1])]["host_fast_s"] - split[(op, worlds[0])]["host_fast_s"]
    return out


def section() -> tuple[list[str], dict, tuple[str, object, object]]:
    """Markdown lines, figures and (the folder's name, the 2-GPU fit, the 2- and 3-GPU fit) for the
    per-rank cost check (validation.accuracy_latency.rank_cost_check)."""
    from validation import accuracy_latency, rank_sync
    if not LAT.exists() or not BW.exists():
        return [], {}, None
    rows, figures, fit, fit23, pooled = score_campaign()
    pts2 = [q.point for q in pooled[2]]
    check = rank_sync.self_check(pts2)
    how = rank_sync.reading(pts2)
    rank = next(v for v in fit.verdicts if v.key == "rank_overhead_s")
    now = figures.get(f"{PREFIX}_4 < 16 MiB", {})
    b = BLIND["< 16 MiB"]
    lines = ["", f"**A fifth machine, held out and blind** (`{LAT.name}` with `{BW.name}`: 4x H200 on another lease, "
             "every op from 4 B to 256 KiB on 2, 3 and 4 GPUs with every rank's host issue time, and from 1 MiB to "
             "1 GiB on 2 and 4 GPUs, the launches of each interleaved on one host; measured by the lead under main "
             "73cb86f). `gpunetsim calibrate` on every 2-GPU launch of both folders pooled "
             f"({len(pts2)} points); the 3- and 4-GPU launches, pooled the same way, are never fitted (except the 3-GPU "
             "ones in the table's last row). This is the second campaign measured on the device that the issue's "
             "targets name (section 8 judges its blind figures). The "
             f"campaign's README gives its blind figures, computed under 73cb86f's model before anyone changed the "
             f"model for it: 4 GPUs under 16 MiB {b[0]:.1f}% median, {b[1]:.0f}% inside the launches' range, 90% "
             f"coverage {b[2]:.0f}% at a median width of {b[3]:.0f}%; 3 GPUs {BLIND['3 GPUs'][0]:.1f}%. The table is "
             "under the model as it is now"
             + (f" ({now['median_pct']:.1f}% median, {now['inside_range_pct']:.0f}% inside the range under 16 MiB on "
                "4 GPUs); where the two differ, a change made after the blind figures were known moved it, and only "
                "the README's figures are a blind test" if now else "")
             + f". The per-rank cost comes {rank.reason}."
             + (f" The host issue times' two readings reproduce this campaign's own 2-GPU medians within "
                f"{check['shared'] * 100:.1f}% (R drawn as measured) and {check['median'] * 100:.1f}% (R held at its "
                f"median): the calibration reads them {'with R drawn as measured' if how == 'shared' else 'with R held at its median'}"
                " (`validation.rank_sync.reading`, chosen on `h100x4_2026-11-26_lat2`; this machine never saw the "
                "choice)." if check else ""), "", *rows]
    if check:
        figures[f"host reading self check {LAT.name}"] = {**check, "reading": how}
    split = accuracy_latency.host_split(sorted(LAT.glob("lat_world*_L*.jsonl")))
    host_lines, host_figures = accuracy_latency.host_section(f"`{LAT.name}`", split)
    lines += host_lines
    figures.update(host_figures)
    ratio = [v["gpu_fast_s"] / v["host_fast_s"] for v in split.values() if v["host_fast_s"] > 0]
    growth = host_growth(split)
    figures[f"host growth {LAT.name}"] = growth
    if ratio and growth:
        lines += ["", f"As on `h100x4_2026-11-26_lat2`, fast repetitions run at the host's pace: GPU time per call "
                  f"{np.median(ratio):.2f}x the slowest rank's host issue time (median over ops and world sizes, "
                  f"{min(ratio):.2f}-{max(ratio):.2f}). Unlike there, that issue time itself grows with the ranks on "
                  "this host, from 2 to 4 GPUs by " + ", ".join(
                      f"{v * 1e6:+.1f} us ({op})" for op, v in sorted(growth.items(), key=lambda kv: -kv[1]))
                  + " in fast repetitions: every process issues more slowly when more share the host, a cost the "
                  "2-GPU host times (the slowest of more draws of one process's issue time) do not contain, so the "
                  "per-rank cost read off them is below what the fit on 2 and 3 GPUs finds (the rank-cost table "
                  "below)."]
    choices = accuracy_latency.nccl_choices(LAT)
    if choices:
        figures[f"nccl choices {LAT.name}"] = {n: sorted(v["algos"]) for n, v in choices.items()}
        lines += ["", accuracy_latency.nccl_line(choices)]
    return lines, figures, (LAT.name, fit, fit23)
