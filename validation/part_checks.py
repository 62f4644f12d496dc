"""Held-out checks of the propagated intervals of `gpunetsim train`'s communication parts
(simulator.training.llm.part_intervals) where a campaign measures a part on its own:

* **TP communication**: the TP runner times each configuration's loop with its collectives and the same loop
  with them stubbed (``nocomm_median_s``); their difference is what the collectives add. The model's
  counterpart is the predicted loop less the predicted loop without collectives (``RealPredictor``, its compute
  fitted on the campaign's compute-only points, as section 7 predicts it), and the propagated interval moves
  it by the seconds the collectives' own 90% intervals allow (the shipped rule: each call's interval from the
  campaign's collective calibration, which no TP run was fitted on).
* **pipeline sends**: the PP runner times one activation from stage 0 to stage 1 (``p2p_s``); the model's
  send on the same two GPUs with its collective interval (NCCL send/recv).

Medians over a configuration's launches; a configuration counts as inside when its measured part lies in
the interval. The collectives' intervals were never fitted on these runs, so the figures are held out.

Each band records its ``domain``: the GPU models, group sizes (``world``: the TP degree of the TP loops, the
stages of the PP runs) and bytes per call (``call_bytes``: the TP loops' collectives, the PP runs' activations)
of its runs; ``gpunetsim train`` widens a part to the band only inside it (simulator.training.llm.part_intervals,
review s16 #2).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Mapping

import numpy as np

from validation import iteration_bands as ib

DATA = Path(__file__).resolve().parent / "data"


def _calls_interval(model, calls) -> tuple[float, float, float]:
    """(predicted, low, high) seconds of ``calls`` ((op, bytes, count) ...) on ``model``'s GPUs."""
    t = lo = hi = 0.0
    for op, size, count in calls:
        s, algo, proto = model.best(op, size)
        iv = model.intervals.interval(op, algo, proto, size, s)
        t, lo, hi = t + count * s, lo + count * min(iv.lo_s, s), hi + count * max(iv.hi_s, s)
    return t, lo, hi


Row = tuple[str, float, float, float, float, int, tuple[int, ...]]


def tp_rows(fits: Mapping[str, object]) -> list[Row]:
    """(campaign, measured part, predicted part, low, high, TP degree, bytes of each call) per TP configuration
    of every campaign with a fit."""
    from validation.issue_check import probe_tp_runs
    from validation.llm_real import CAMPAIGNS, ISSUE_CAMPAIGNS, OTHER_GPU_CAMPAIGNS, RealPredictor
    from validation.llm_records import group_runs, read_llm_records
    out = []
    sources = [(f, c, read_llm_records([DATA / f / n]).runs) for f, n, c, *_ in (*CAMPAIGNS, *OTHER_GPU_CAMPAIGNS)]
    sources += [(f, c, probe_tp_runs([DATA / f / n]).runs) for f, n, c, _ in ISSUE_CAMPAIGNS]
    for folder, calibration, runs in sources:
        tp = [r for r in runs if r.runner == "tp" and r.nocomm_median_s is not None]
        if folder not in fits or not tp:
            continue
        pred = RealPredictor(tp[0].gpu, calibration).with_compute(fits[folder])
        for g in group_runs(tp):
            r = g.first
            measured = statistics.median(x.median_s - x.nocomm_median_s for x in g.runs)
            model = pred.cost_model(r.tp)
            t, lo, hi = _calls_interval(model, r.collectives)
            part = pred.iteration_s(r) - pred.blocks_s(r.spec, r.micro_batch, r.tp, r.sequence_parallel)
            out.append((folder, measured, part, part - (t - lo), part + (hi - t), r.tp,
                        tuple(int(size) for _, size, _ in r.collectives)))
    return out


def pp_rows() -> list[Row]:
    """(campaign, measured send, predicted send, low, high, stages, (activation bytes,)) per PP configuration
    (one activation, stage 0 to 1)."""
    from validation.llm_real import CAMPAIGNS, OTHER_GPU_CAMPAIGNS, RealPredictor
    from validation.llm_records import group_runs, read_llm_records
    out = []
    for folder, name, calibration, *_ in (*CAMPAIGNS, *OTHER_GPU_CAMPAIGNS):
        pp = [r for r in read_llm_records([DATA / folder / name]).runs
              if r.runner == "pp" and r.p2p_s is not None and r.activation_bytes]
        if not pp:
            continue
        pred = RealPredictor(pp[0].gpu, calibration)
        for g in group_runs(pp):
            r = g.first
            model = pred.cost_model(r.world)
            pair = tuple(model.router.gpus[:2])
            plan = model.planner.plan("send_recv", "direct", "simple", pair)
            t = model.timer.shape(plan).sized(r.activation_bytes).time_s(r.activation_bytes)
            iv = model.intervals.interval("send_recv", "direct", "simple", r.activation_bytes, t, ranks=pair)
            out.append((folder, statistics.median(x.p2p_s for x in g.runs), t, min(iv.lo_s, t), max(iv.hi_s, t),
                        r.world, (int(r.activation_bytes),)))
    return out


def band_domain(rows: list[Row]) -> dict:
    """The ``domain`` of a band built from ``rows``: its runs' GPU models (their campaign folders'), group sizes
    and bytes per call."""
    gpus = sorted({g for folder, *_ in rows for g in ib.folder_domain(folder)[0]})
    groups = [r[5] for r in rows]
    sizes = [s for r in rows for s in r[6]]
    return {"gpus": gpus, "world": [min(groups), max(groups)], "call_bytes": [min(sizes), max(sizes)]}


def section_lines(fits: Mapping[str, object], write: bool) -> list[str]:
    """The report's table (per part and campaign: the propagated interval alone, and widened to the band of the
    *other* campaigns, as shipped), the bands; with ``write`` the shipped file (iteration_bands.COMM_PARTS_FILE)."""
    import json
    from simulator.training.iteration_bands import COMM_PARTS_FILE, part_bands
    parts = {"tp_comm": ("TP communication", tp_rows(fits)), "pp_comm": ("pipeline send", pp_rows())}
    built, table = {}, []
    for key, (label, rows) in parts.items():
        groups: dict[str, list[tuple]] = {}
        for folder, m, p, lo, hi, *_ in rows:
            groups.setdefault(folder, []).append((m, p, lo, hi))
        logs = {f: [float(np.log(m / p)) for m, p, _, _ in rs] for f, rs in groups.items()}
        built[key] = ib.make_band(logs, f"{label}: log(measured / predicted) per campaign (validation.part_checks)",
                                  covers=band_domain(rows))
        for folder, rs in groups.items():
            a, b = ib.band_edges({f: v for f, v in logs.items() if f != folder})
            alone = sum(lo <= m <= hi for m, _, lo, hi in rs)
            wide = [(min(lo, p * a), max(hi, p * b)) for _, p, lo, hi in rs]
            inside = sum(lo <= m <= hi for (m, _, _, _), (lo, hi) in zip(rs, wide))
            width = float(np.median([(hi - lo) / p * 100 for (_, p, _, _), (lo, hi) in zip(rs, wide)]))
            table.append(f"| {label} | {folder} | {len(rs)} | {alone} | {inside} | {width:.0f} | "
                         f"{float(np.median([m / p for m, p, _, _ in rs])):.2f} |")
    if write:
        COMM_PARTS_FILE.write_text(json.dumps(built, indent=1) + "\n")
        part_bands.cache_clear()
    shipped = part_bands()
    same = all(k in shipped and list(shipped[k]["log_ratio"]) == built[k]["log_ratio"]
               and shipped[k].get("domain") == built[k]["domain"] for k in built)
    rel = "simulator/collectives/calibrations/uncertainty/comm_parts.json"
    check = (f"The shipped `{rel}` holds these bands." if same else
             f"**The shipped `{rel}` differs from these bands: rerun `python -m validation.accuracy --calibrations`.**")
    return ["Held out, where a campaign times a communication part on its own (`validation.part_checks`: the TP "
            "runner's loop less the same loop with its collectives stubbed; the PP runner's one activation from "
            "stage 0 to stage 1; medians over launches): the interval propagated from the collectives' 90% "
            "intervals (the campaign's collective calibration, fitted on no TP or PP run) alone, and widened to "
            "the band of log(measured / predicted) of the *other* campaigns, as `gpunetsim train` applies it "
            "(the band from every campaign):", "",
            "| part | campaign left out | configurations | inside, collectives' intervals alone | inside, widened | "
            "median width % (widened) | median measured / predicted |", "|---|---|---|---|---|---|---|", *table, "",
            "The collectives' intervals alone hold few: on these small loops the host's cost of each collective "
            "call and its issue, not the transfer, set the difference. `gpunetsim train` widens a part to its band "
            "only inside the band's runs (GPU models, group sizes, bytes per call: the band's `domain`); outside "
            "it keeps the calls' own intervals and says so (`comm_extrapolated`). Bands: "
            + "; ".join(ib.band_sentence(k, b) for k, b in built.items()) + ". " + check, ""]
