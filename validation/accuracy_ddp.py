"""docs/accuracy.md section 4: DDP iterations from the collective calibration and single-GPU compute.

    python -m validation.accuracy --only ddp

The truth is the 4x H200 campaign's DDP runs (``h200x4_2026-11-26b/ddp_world{2,4}.jsonl``: 4 models x 5
bucket caps, 2 launches each), measured over their steady iterations (``validation.ddp_compare.read_ddp``:
the iterations PyTorch's DDP holds the host back on are left out, as in section 6). Communication: the
collective calibration ``h200-nvlink``; DDP parameters: the datasheet's (``ddp.compute_slowdown`` from the overlap probe, ``ddp.bucket_overhead_s`` 20 us), or fitted
on the 2-GPU runs to predict the 4-GPU ones. Compute, from single-GPU measurements taken in other device
calls (none on the campaign's machine, none fitted):

* ``profile``: the one profile launch ``h200x1_2026-11-26/profile_*.json`` (the profiler's hooked capture);
* ``pooled profiles``: that shape scaled to the median over 7 profile launches (h200x1 and the
  DataParallel runner's ``dp_profile`` of ``h200x4_2026-11-26d`` and ``-e``, 3 launches each);
* ``pooled plain steps``: scaled to the median over the 6 launches' plain single-GPU step (``dp`` on one
  GPU in ``-d`` and ``-e``: whole steps timed with CUDA events, no hooks, as the DDP runner times its
  iterations); the launches' 5-95% band rides along as the compute band of the interval;
* ``nosync``: each run's own ``no_sync()`` iteration (a diagnostic: isolates communication and overlap).

Intervals: each row's before -> after is the model's interval alone -> widened to the held-out DDP band of its
compute's kind built *without* this campaign (validation.ddp_bands, which also judges every other DDP dataset
left out and writes the shipped band with ``--calibrations``).

Why pooling and plain steps: ``h100x4_2026-11-26_ddp`` (validation.compute_check) shows on one host that DDP's
``no_sync()`` step is the plain step, that the hooked capture reads 1% above it where the GPU sets the pace and
up to half again where the host does, and that launch-bound models move by a third between rounds a minute apart.
"""

from __future__ import annotations

import glob
import statistics
from pathlib import Path

from simulator.collectives.params import DEFAULTS, SHIPPED_DIR, load_calibration, save_calibration
from validation.compare import Topo
from validation.compute_check import read_compute, summarize, table_lines
from validation.compute_pool import LAUNCHES_KEY, profile_samples, pooled_workloads, read_single_gpu
from validation.ddp_compare import (DDP_KEYS, DdpPredictor, aggregate, calibrate_ddp, compare_ddp, compute_gap,
                                    ddp_summary, load_workloads, read_ddp)
from validation.ddp_logger import steady_times_s
from validation.runners.records import read_measurement_records
from validation.targets import DDP_MEDIAN_PCT
from validation import ddp_bands
from validation import iteration_bands as ib

DATA = Path(__file__).resolve().parent / "data"
CAMPAIGN = DATA / "h200x4_2026-11-26b"
PROFILES = DATA / "h200x1_2026-11-26"
SINGLE_GPU = {"h200x4_2026-11-26d": DATA / "h200x4_2026-11-26d" / "dp_world4.jsonl",
              "h200x4_2026-11-26e": DATA / "h200x4_2026-11-26e" / "dp_world4.jsonl"}
COMPUTE_PROBE = [DATA / "h100x4_2026-11-26_ddp" / f"compute_world{n}.jsonl" for n in (2, 4)]
TOPO = Topo("hgx-h200")
SOURCES = ("profile", "pooled profiles", "pooled plain steps", "nosync")
HEADLINE = "pooled plain steps"


def _row(name: str, s: dict, before: dict) -> str:
    """A table row; the interval columns as ``before`` (the model's interval alone) -> ``s`` (widened)."""
    def iv(k: str) -> str:
        return "-" if s.get(k) is None else f"{before[k]:.0f} -> {s[k]:.0f}"
    return (f"| {name} | {s['points']} | {s['median_time_pct']:.1f} | {s['p90_time_pct']:.1f} | "
            f"{s['worst_time_pct']:.1f} | {s['median_spread_pct']:.1f} | "
            f"{iv('interval_coverage_pct')} | {iv('interval_width_pct')} |")


def band_lines(write: bool) -> list[str]:
    """The held-out DDP bands' paragraph and leave-one-dataset-out table; ``write``: also the shipped file."""
    from simulator.training.iteration_bands import DDP_FILE
    built = ddp_bands.built()
    if write:
        ddp_bands.write(built)
    sentence = "; ".join(ib.band_sentence(k, b) for k, b in built.items())
    summary = "; ".join(
        f"{k}: coverage {ddp_bands.lodo_summary(k, True)[0]:.0f}% -> {ddp_bands.lodo_summary(k)[0]:.0f}%, median "
        f"width {ddp_bands.lodo_summary(k, True)[2]:.0f}% -> {ddp_bands.lodo_summary(k)[2]:.0f}%"
        for k in ddp_bands.DDP_KINDS)
    return ["", "**Held-out DDP bands, each dataset left out** (`python -m validation.ddp_bands`; "
            "validation.ddp_bands, shipped as `simulator/collectives/calibrations/uncertainty/ddp.json` by "
            "`python -m validation.accuracy --calibrations`). The model's interval leaves out what moves a DDP "
            "iteration beyond its collectives and one compute figure: the host's pace on the predicted machine "
            "(launch-bound models), the overlap slowdown's spread, the host's issue of buckets, and with one "
            "profile launch any compute spread at all. Every committed DDP dataset (the DDP runner's "
            "`h200x4_2026-11-26b` and the DataParallel runner's DDP runs) is predicted with datasheet DDP "
            "parameters, its GPU's shipped collective calibration (" + ", ".join(
                f"{g} `{c}`" for g, c in ddp_bands.COMM.items()) + ") and compute from single-GPU measurements of "
            "*other* datasets of the same GPU: each one profile launch alone, or the plain steps pooled. The band "
            "is exp of the 5% / 95% quantiles of log(measured / predicted), each dataset weighing the same "
            "(validation.iteration_bands); the interval is the wider of it and the model's. Bands: " + sentence
            + ". " + ib.shipped_check(DDP_FILE, built, ddp_bands.DDP_KINDS) + " Each dataset against the band of "
            "the others, the interval the simulator gives (model alone -> widened): " + summary + ".", "",
            *ddp_bands.lodo_table()]


def _count(values) -> str:
    """Distinct counts as text: ``3`` or ``2-3``."""
    v = sorted(set(values))
    return "none" if not v else f"{v[0]}" if v[0] == v[-1] else f"{v[0]}-{v[-1]}"


def campaign_facts(preds: dict[str, DdpPredictor]) -> dict[str, str]:
    """What the text says about the campaign and the pooled launches, read from the data: launches
    per configuration, timed iterations per launch, and the launches each pooled compute holds
    (``compute_launches`` of its workloads), overall and per single-GPU file."""
    raw = [p for w in (2, 4) for p in read_ddp(CAMPAIGN / f"ddp_world{w}.jsonl")]
    per_config: dict[tuple, set] = {}
    for p in raw:
        per_config.setdefault((p.model, p.world, p.bucket_cap_mb), set()).add(p.launch_index)
    records = [r for w in (2, 4) for _, r in read_measurement_records(CAMPAIGN / f"ddp_world{w}.jsonl") if r.get("kind") == "ddp"]
    iters = [r["iters"] for r in records if "iters" in r]
    held = [len(r["iter_times_s"]) - len(steady_times_s(r["iter_times_s"], r.get("sync_warmup", r["warmup"])))
            for r in records if "iter_times_s" in r and "warmup" in r]

    def launches(source: str) -> str:
        return _count(dict(w.extras).get(LAUNCHES_KEY, 0) for w in preds[source].workloads.values())
    per_file = [sum(1 for s in read_single_gpu(f) if s.kind == "plain" and s.model == m)
                for f in SINGLE_GPU.values() for m in {s.model for s in read_single_gpu(f)}]
    return {"launches": _count(len(v) for v in per_config.values()), "iters": _count(iters),
            "profile_launches": launches("pooled profiles"), "plain_launches": launches(HEADLINE),
            "per_file": _count(per_file), "held_back": _count(held)}


def _pct_or_na(x: float | None, fmt: str = ".0f") -> str:
    return "n/a" if x is None else f"{x:{fmt}}%"


def predictors(comm, bands=None) -> dict[str, DdpPredictor]:
    """The section's predictors; ``bands``: the held-out DDP bands their intervals widen to (None: shipped;
    ``{}``: none: the section widens them to those built without this campaign, validation.ddp_bands)."""
    shapes = load_workloads(sorted(glob.glob(str(PROFILES / "profile_*.json"))))
    samples = [s for f in SINGLE_GPU.values() for s in read_single_gpu(f)]
    samples += profile_samples(shapes, str(PROFILES))
    return {"profile": DdpPredictor(TOPO, comm, shapes, "profile", bands),
            "pooled profiles": DdpPredictor(TOPO, comm, pooled_workloads(shapes, samples, ("profile",)), "profile",
                                            bands),
            "pooled plain steps": DdpPredictor(TOPO, comm, pooled_workloads(shapes, samples, ("plain",)), "profile",
                                               bands),
            "nosync": DdpPredictor(TOPO, comm, shapes, "nosync", bands)}


def held_out_campaigns(comm, widen: bool = True) -> dict:
    """The DDP runs of ``-d`` and ``-e`` (cap 25 MB, 4 GPUs, 3 launches each), each predicted with the plain
    steps of the other campaign only (its own single-GPU runs held out); ``widen``: the interval widened to the
    held-out DDP band built without the predicted campaign (else the model's interval alone)."""
    shapes = load_workloads(sorted(glob.glob(str(PROFILES / "profile_*.json"))))
    comps = []
    for name, path in SINGLE_GPU.items():
        others = [s for n, f in SINGLE_GPU.items() if n != name for s in read_single_gpu(f)]
        pred = DdpPredictor(TOPO, comm, pooled_workloads(shapes, others, ("plain",)), "profile", {})
        mine = compare_ddp(aggregate(read_ddp(path)), pred)
        comps += ddp_bands.widened(mine, ddp_bands.band_without(name).get(ddp_bands.kind_of(pred))) if widen else mine
    return ddp_summary(comps)


def evaluate(write_calibrations: bool = False) -> tuple[list[str], dict]:
    d2 = aggregate(read_ddp(CAMPAIGN / "ddp_world2.jsonl"))
    d4 = aggregate(read_ddp(CAMPAIGN / "ddp_world4.jsonl"))
    comm = load_calibration(str(SHIPPED_DIR / "h200-nvlink.json"))
    preds = predictors(comm, {})          # the model's interval; widened below to the band without this campaign
    held = ddp_bands.band_without(CAMPAIGN.name)
    facts = campaign_facts(preds)
    lines = ["", "## 4. DDP iterations on 2 and 4 H200s (calibrate on collectives, predict iterations)", "",
             "ResNet-50 (batch 64), BERT-base (32 x 128 tokens), GPT-2 small (8 x 512) and an 8-layer "
             "4096-wide MLP (64), bf16 autocast, SGD with momentum, bucket caps "
             + ", ".join(f"{c:g}" for c in sorted({p.bucket_cap_mb for p in d2 + d4})) + " MB, "
             f"{facts['launches']} separate launches per configuration, {facts['iters']} timed iterations each "
             "(`h200x4_2026-11-26b/"
             "ddp_world{2,4}.jsonl`). Measured = median over launches of each launch's median over its steady "
             f"iterations: the first {facts['held_back']} timed iterations of each launch ran while PyTorch's DDP "
             "sampled runtime stats, which holds the host back (`validation.ddp_logger`, as in section 6), and are "
             "left out; the spread is the launches' p10 to p90 of those. Communication: the collective calibration `h200-nvlink` (section 2). DDP "
             f"parameters: the datasheet's (`ddp.compute_slowdown` {DEFAULTS['ddp.compute_slowdown']:.2f} measured by "
             "the overlap probe, "
             "docs/ddp-model.md), or fitted on the 2-GPU runs to predict the 4-GPU ones. Compute, from "
             "single-GPU measurements of other device calls (none on this machine, none fitted): `profile` the "
             "one profile launch `h200x1_2026-11-26/profile_*.json` (the profiler's capture, one gradient hook "
             "per parameter); `pooled profiles` that shape scaled to the median over "
             f"{facts['profile_launches']} profile launches (h200x1 and the DataParallel runner's single-GPU "
             f"profiles of `h200x4_2026-11-26d` and `-e`, {facts['per_file']} launches each); `pooled plain steps` "
             f"scaled to the median over those {facts['plain_launches']} launches' plain single-GPU "
             "step (whole steps timed with CUDA events, no hooks, as the DDP runner times its iterations); "
             "`nosync` each run's own `no_sync()` iteration (a diagnostic that isolates the communication and "
             "overlap model). The 90% interval (`iteration_lo_s`/`iteration_hi_s` of `gpunetsim ddp --json`) "
             "adds the collective calibration's interval of each bucket and, for pooled compute, the launches' "
             "5-95% band of the step (`compute_lo_ratio`/`compute_hi_ratio`), then widens to hold the held-out "
             "DDP band of its compute's kind (one profile or pooled launches: simulator.training.ddp_intervals, "
             "below); here that band is built *without* this campaign, so the coverage is held out. "
             "Coverage counts the measured medians inside the interval; before -> after: the model's interval "
             "alone -> widened.", "",
             "| compute, DDP parameters, GPUs | configurations | median time err % | p90 time err % | "
             "worst time err % | measured p10-p90 spread % | 90% interval coverage % before -> after | "
             "median interval width % before -> after |",
             "|---|---|---|---|---|---|---|---|"]
    figures: dict = {"ddp_plain_launches": facts["plain_launches"]}
    for compute in SOURCES:
        pred = preds[compute]
        band = held.get(ddp_bands.kind_of(pred))
        for world, pts in ((2, d2), (4, d4)):
            comps = compare_ddp(pts, pred)
            s = ddp_summary(ddp_bands.widened(comps, band))
            lines.append(_row(f"{compute}, datasheet, {world}", s, ddp_summary(comps)))
            figures[f"{compute}_{world}"] = s
        params, _, _ = calibrate_ddp(d2, pred, name="h200-nvlink-ddp")
        comps = compare_ddp(d4, pred.with_params(params))
        s4 = ddp_summary(ddp_bands.widened(comps, band))
        lines.append(_row(f"{compute}, fitted on 2 GPUs, **predict 4**", s4, ddp_summary(comps)))
        figures[f"{compute}_fit2_4"] = s4
        figures[f"{compute}_fit2_params"] = {k: params[k] for k in DDP_KEYS}
        if compute == "profile" and write_calibrations:   # the shipped file is the profile-compute fit (its ddp_compute says so)
            save_calibration(params.with_values({}, name="h200-nvlink-ddp"), SHIPPED_DIR / "h200-nvlink-ddp.json",
                             statistic="median", topology=TOPO.__dict__,
                             fitted_on=["h200x4_2026-11-26b/coll_world2_r15.jsonl",
                                        "h200x4_2026-11-26b/coll_world4_r15.jsonl",
                                        "h200x4_2026-11-26b/ddp_world2.jsonl"], ddp_compute="profile")
    ho = held_out_campaigns(comm)
    figures["held_out_campaigns"] = ho
    lines.append(_row("held out: the DDP runs of `h200x4_2026-11-26d` and `-e` (cap 25 MB), each from the "
                      "other's plain steps, datasheet, 4", ho, held_out_campaigns(comm, widen=False)))
    lines += band_lines(write_calibrations)
    figures["ddp_band_lodo"] = {k: ddp_bands.lodo_summary(k) for k in ddp_bands.DDP_KINDS}
    lines += ["", "Per model (datasheet DDP parameters, both world sizes); the last columns: the single-GPU "
              "compute against the same run's `no_sync()` iteration (median over configurations):", "",
              "| model | median err %, one profile | median err %, pooled plain steps | one profile vs no_sync % | "
              "pooled profiles vs no_sync % | pooled plain steps vs no_sync % |", "|---|---|---|---|---|---|"]
    comps = {c: compare_ddp(d2 + d4, preds[c]) for c in ("profile", HEADLINE)}
    gaps = {}
    for m in sorted({c.point.model for c in comps["profile"]}):
        pts = [c.point for c in comps["profile"] if c.point.model == m]
        g = [compute_gap(pts, preds[c].workloads) for c in ("profile", "pooled profiles", HEADLINE)]
        gaps[m] = g
        lines.append(f"| {m} | " + " | ".join(
            f"{ddp_summary([c for c in comps[k] if c.point.model == m])['median_time_pct']:.1f}"
            for k in ("profile", HEADLINE)) + " | " + " | ".join("-" if v is None else f"{v:+.1f}" for v in g) + " |")
    probe = summarize([r for f in COMPUTE_PROBE for r in read_compute(f)])
    pf = probe_facts(probe)
    gpt2 = sorted(s.step_s for f in SINGLE_GPU.values() for s in read_single_gpu(f)
                  if s.model == "gpt2" and s.kind == "plain")
    lines += ["", f"**Why one profile misses, measured on one host** (`h100x4_2026-11-26_ddp`, 4x H100, {pf['rounds']} "
              "interleaved rounds per model; `python -m validation.compute_check "
              "validation/data/h100x4_2026-11-26_ddp/compute_world2.jsonl validation/data/h100x4_2026-11-26_ddp/"
              "compute_world4.jsonl`; ratios are medians over rounds of each variant over the same round's plain "
              "step):", "", *table_lines(probe), "",
              f"DDP's `no_sync()` step is the plain step (within {pf['nosync_pct']:.1f}% wherever the GPU sets the "
              "pace), so the DDP runs' compute is the plain single-GPU step. The profiler's hooked capture reads "
              f"{pf['profile_pct']:+.1f}% against it where the GPU sets the pace (median) and more where the host "
              "does (its hooks are host work), and a launch-bound model (" + pf["host_bound"] + ") moves with the "
              "host's pace between rounds. On the H200s GPT-2 and the MLP sit at that edge too (GPT-2's plain "
              f"single-GPU steps over the pooled launches: {gpt2[0] * 1e3:.1f}-{gpt2[-1] * 1e3:.1f} ms), so one "
              "profile launch is one draw of the host's pace: the "
              "h200x1 launch drew a slow one (" + ", ".join(f"{m} {g[0]:+.0f}%" for m, g in gaps.items()
                                                           if g[0] is not None)
              + " against the runs' `no_sync()`). Pooling launches and timing whole plain steps removes most of it ("
              + ", ".join(f"{m} {g[2]:+.0f}%" for m, g in gaps.items() if g[2] is not None)
              + "); what remains is the host's pace on the day, which the interval's compute band carries. Fitted "
              "on 2 GPUs, the overlap slowdown comes out at "
              + ", ".join(f"{figures[f'{c}_fit2_params']['ddp.compute_slowdown']:.2f} ({c})" for c in SOURCES)
              + f" against the probe's direct {DEFAULTS['ddp.compute_slowdown']:.2f}: a fit to DDP iterations absorbs "
              "compute errors into it, which is why the default is the probe's measurement."]
    return lines, figures


def probe_facts(probe) -> dict:
    """The figures the text quotes from the compute probe (validation.compute_check rows): rounds, how
    far ``no_sync()`` and the hooked profile sit from the plain step where the GPU sets the pace, and
    the host-bound models' GPU time against their steps' range."""
    bound = [r for r in probe if r.gpu_bound_rounds == r.rounds]
    host = [r for r in probe if r.gpu_bound_rounds == 0 and "queued" in r.ratios]
    by_model: dict[str, list] = {}
    for r in host:
        by_model.setdefault(r.model, []).append(r)
    text = "; ".join(
        f"{m} here: {statistics.median(r.plain_s * r.ratios['queued'] for r in rs) * 1e3:.1f} ms of GPU time, steps "
        f"of {min(r.plain_lo_s for r in rs) * 1e3:.0f}-{max(r.plain_hi_s for r in rs) * 1e3:.0f} ms"
        for m, rs in sorted(by_model.items())) or "none on this host"
    return {"rounds": _count(r.rounds for r in probe),
            "nosync_pct": max((100 * abs(r.ratios["nosync"] - 1) for r in bound if "nosync" in r.ratios), default=0.0),
            "profile_pct": statistics.median([100 * (r.ratios["profile"] - 1) for r in bound if "profile" in r.ratios]
                                             or [float("nan")]),
            "host_bound": text}


def target_line(figures: dict) -> str | None:
    """The targets section's DDP line."""
    if f"{HEADLINE}_4" not in figures:
        return None
    h, one = figures[f"{HEADLINE}_4"], figures["profile_4"]
    verdict = "met" if h["median_time_pct"] <= DDP_MEDIAN_PCT else "**missed**"
    return (f"- DDP iterations from collective calibrations only (datasheet DDP parameters), 4 GPUs, compute from "
            f"plain single-GPU steps pooled over {figures.get('ddp_plain_launches', 'n/a')} launches of other device "
            f"calls: median {h['median_time_pct']:.1f}% "
            f"(target {DDP_MEDIAN_PCT:g}%: {verdict}), 90% interval coverage {_pct_or_na(h.get('interval_coverage_pct'))} "
            f"(width {_pct_or_na(h.get('interval_width_pct'))}); 2 GPUs {figures[f'{HEADLINE}_2']['median_time_pct']:.1f}%; "
            f"held-out campaigns {figures['held_out_campaigns']['median_time_pct']:.1f}%; from the one profile "
            f"launch {one['median_time_pct']:.1f}% (section 4 says why).")
