"""Writes docs/accuracy.md (and the shipped calibrations): predicted vs measured on every dataset.

    python -m validation.accuracy                  # rewrites docs/accuracy.md, prints it
    python -m validation.accuracy --calibrations   # also refits simulator/collectives/calibrations/*.json
    python -m validation.accuracy --only nvls      # only section 5 (NVLS and B200), in seconds
    python -m validation.accuracy --only dp        # only section 6 (DataParallel vs DDP, Gloo), in seconds
    python -m validation.accuracy --only llm       # only section 7 (LLM training, about 2 minutes)

Sections: (1) uncalibrated predictions (datasheet parameters) and NCCL's own cost model against the
public nccl-tests outputs; (2) our 4x H200 measurements: measurement noise, calibrate on 2 GPUs and
predict 4 GPUs, calibrate on both; (3) DDP iterations predicted from the collective calibration and
single-GPU profiles; (5) NVLS and B200 datasets with and without NVLS (validation.accuracy_nvls);
(6) DataParallel vs DDP and Gloo all-reduce (validation.dp_accuracy); (7) LLM training iterations and
memory against the public Megatron runs (validation.llm_accuracy).
Every figure is computed here from committed data; nothing is typed in.
"""

from __future__ import annotations

import argparse
import glob
from pathlib import Path

from simulator.collectives.params import SHIPPED_DIR, Parameters, load_calibration, save_calibration
from validation.accuracy_nvls import evaluate as nvls_section, replace_section
from validation.calibrate import calibrate
from validation.compare import Predictor, Topo, compare, dataset_points, noise_pct, summary, topo_from_hint
from validation.ddp_compare import (DdpPredictor, aggregate, calibrate_ddp, compare_ddp, ddp_summary,
                                    load_workloads, read_ddp)
from validation.parsers import read_jsonl

DATA = Path(__file__).resolve().parent / "data"
CAL = SHIPPED_DIR
DOC = Path(__file__).resolve().parent.parent / "docs" / "accuracy.md"
CAMPAIGN = DATA / "h200x4_2026-11-26b"
PROFILES = DATA / "h200x1_2026-11-26"      # single-GPU profiles (events read at the end)
TOPO = Topo("hgx-h200")
TARGET_COLL_MEDIAN, TARGET_DDP_MEDIAN, TARGET_P90 = 5.0, 6.0, 12.0


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _row(name: str, s: dict, extra: str = "") -> str:
    if not s.get("points"):
        return f"| {name} | 0 | - | - | - |{extra}"
    return (f"| {name} | {s['points']} | {s['median_time_pct']:.1f} | {s['p90_time_pct']:.1f} | "
            f"{s['worst_time_pct']:.1f} |{extra}")


def _crow(name: str, s: dict) -> str:
    """A collective row with the share of predictions inside the repetitions' range."""
    return _row(name, s, f" {_f(s.get('within_range_pct'))} |")


def public_section(params: Parameters, fitted_out: list[float] | None = None) -> list[str]:
    lines = ["## 1. Uncalibrated (datasheet parameters) vs public nccl-tests outputs", "",
             "Each dataset's topology comes from its `topology` hint (preset, servers, NIC bandwidth per "
             "server). Errors are absolute percentage errors of the time over every size of every table in "
             "the file (out-of-place columns); busbw error is |measured/predicted - 1|. The NCCL-model column "
             "is NCCL's own estimate (its tuning table, rebuilt by `simulator.collectives.nccl_model`) for the same "
             "algorithm and protocol: the baseline to beat. The last error column is after `gpunetsim calibrate` "
             "on that same file (in sample: what a user gets for their own cluster from one nccl-tests run).", "",
             "| dataset | points | median time err % | p90 time err % | worst time err % | median busbw err % "
             "| worst busbw err % | NCCL model median time err % | calibrated on the file, median time err % "
             "| skipped |", "|---|---|---|---|---|---|---|---|---|---|"]
    for f in sorted(glob.glob(str(DATA / "public" / "*.jsonl"))):
        ds = read_jsonl(f)
        name = Path(f).stem
        by_variant = ds.meta.get("topology_by_variant") or {}
        parts = [(f"{name} [{v}]", h, [p for p in dataset_points(ds) if p.variant == v])
                 for v, h in by_variant.items()] or [(name, ds.meta.get("topology") or {}, dataset_points(ds))]
        for label, hint, pts in parts:
            pred = Predictor(topo_from_hint(hint, f), params)
            c, s = compare(pts, pred)
            sm = summary(c)
            fitted = calibrate(pts, pred).after["median_time_pct"] if c else None
            if fitted is not None and fitted_out is not None:
                fitted_out.append(fitted)
            extra = (f" {_f(sm.get('median_busbw_pct'))} | {_f(sm.get('worst_busbw_pct'))} "
                     f"| {_f(sm.get('nccl_median_time_pct'))} | {_f(fitted)} | {len(s)} |")
            lines.append(_row(label, sm, extra))
    return lines


def _size_class(b: int) -> str:
    return "<= 64 KiB" if b <= 1 << 16 else "64 KiB - 16 MiB" if b < 1 << 24 else ">= 16 MiB"


def _by_size(comps) -> list[str]:
    rows = []
    for cls in ("<= 64 KiB", "64 KiB - 16 MiB", ">= 16 MiB"):
        sub = [c for c in comps if _size_class(c.point.size_bytes) == cls]
        rows.append(_crow(f"  sizes {cls}", summary(sub)))
    return rows


def slow_mode(path: Path) -> tuple[float, float]:
    """Small messages (<= 64 KiB, default variant): mean share of repetitions slower than 1.4x the
    point's fastest, and the median extra time of those slow repetitions (us)."""
    import statistics
    from simulator.core.inputs import read_jsonl
    shares, extra = [], []
    for _, r in read_jsonl(path):
        if r.get("kind") != "coll" or r.get("variant") != "default" or r["bytes"] > 1 << 16:
            continue
        reps = r.get("rep_times_s") or []
        if not reps:
            continue
        fastest = min(reps)
        slow = [x for x in reps if x > 1.4 * fastest]
        shares.append(len(slow) / len(reps))
        if slow:
            extra.append(statistics.median(slow) - fastest)
    return statistics.mean(shares) * 100, statistics.median(extra) * 1e6


def campaign_section(write_calibrations: bool) -> tuple[list[str], dict]:
    d2 = read_jsonl(CAMPAIGN / "coll_world2_r15.jsonl")
    d4 = read_jsonl(CAMPAIGN / "coll_world4_r15.jsonl")
    figures: dict = {}
    lines = ["", "## 2. Collectives on 4x H200 (our measurements, `validation/data/h200x4_2026-11-26b`)", "",
             "Every op from 4 B to 1 GiB on 2 and 4 GPUs of an HGX H200 board (NVLink 4 through NVSwitch), NCCL "
             "2.28.9, PyTorch 2.11, 15 repetitions per point (files `coll_world{2,4}_r15.jsonl`; variants "
             "`default` and NCCL_ALGO=allreduce:Tree). The median of repetitions is the measured value; "
             "'min' rows use each point's fastest repetition instead.", ""]
    for world, ds in ((2, d2), (4, d4)):
        figures[f"noise_{world}"] = noise_pct(dataset_points(ds))
    slow2 = slow_mode(CAMPAIGN / "coll_world2_r15.jsonl")
    slow4 = slow_mode(CAMPAIGN / "coll_world4_r15.jsonl")
    lines += ["**The measurement's own noise.** Repetitions of one point are bimodal on this machine (e.g. a "
              "4-byte all-reduce on 2 GPUs takes about 19 us in some repetitions and 40-50 us in others). "
              f"The median gap between a point's median and its fastest repetition is "
              f"{figures['noise_2']:.1f}% on 2 GPUs and {figures['noise_4']:.1f}% on 4 GPUs: a model cannot "
              "be expected to land closer than that to the medians. For messages up to 64 KiB, "
              f"{slow2[0]:.0f}% of the repetitions on 2 GPUs and {slow4[0]:.0f}% on 4 GPUs are in the slow mode "
              f"(over 1.4x the point's fastest; {slow2[1]:.0f} us and {slow4[1]:.0f} us slower): the share does not "
              "grow with the number of ranks, so it is the host, not stragglers that more GPUs would multiply.", "",
              "The last column is the share of predictions that fall inside the range of the point's "
              "repetitions (fastest to slowest).", "",
              "| what | points | median time err % | p90 time err % | worst time err % | inside the repetitions' "
              "range % |", "|---|---|---|---|---|---|"]
    pred0 = Predictor(TOPO, Parameters())
    for world, ds in ((2, d2), (4, d4)):
        c, _ = compare(dataset_points(ds), pred0)
        lines.append(_crow(f"datasheet parameters, {world} GPUs", summary(c)))
        nc = summary(c).get("nccl_median_time_pct")
        lines.append(f"| NCCL's own model, {world} GPUs (median) | {len(c)} | {_f(nc)} | - | - | - |")
    results = {}
    for stat in ("median", "min"):
        p2, p4 = dataset_points(d2, statistic=stat), dataset_points(d4, statistic=stat)
        fit2 = calibrate(p2, pred0, name=f"h200-nvlink-2gpu-{stat}")
        c4, _ = compare(p4, pred0.with_params(fit2.params))
        lines.append(_crow(f"calibrated on 2 GPUs ({stat}), 2 GPUs (in sample)", fit2.after))
        lines.append(_crow(f"calibrated on 2 GPUs ({stat}), **predict 4 GPUs**", summary(c4)))
        lines += _by_size(c4)
        results[stat] = (fit2, summary(c4))
        if stat == "median" and write_calibrations:
            save_calibration(fit2.params.with_values({}, name="h200-nvlink-2gpu"), CAL / "h200-nvlink-2gpu.json",
                             fitted_on=["h200x4_2026-11-26b/coll_world2_r15.jsonl"], statistic=stat,
                             topology=TOPO.__dict__, after=fit2.after)
    both = calibrate(dataset_points(d2) + dataset_points(d4), pred0, name="h200-nvlink")
    lines.append(_crow("calibrated on 2 and 4 GPUs (median), both (in sample)", both.after))
    figures.update(two_to_four=results["median"][1], two_to_four_min=results["min"][1], both=both.after)
    if write_calibrations:
        save_calibration(both.params, CAL / "h200-nvlink.json", statistic="median", topology=TOPO.__dict__,
                         fitted_on=["h200x4_2026-11-26b/coll_world2_r15.jsonl",
                                    "h200x4_2026-11-26b/coll_world4_r15.jsonl"], after=both.after)
    older = read_jsonl(DATA / "h200x4_2026-11-26" / "coll_world2.jsonl")
    c_old, _ = compare(dataset_points(older), pred0.with_params(both.params))
    lines.append(_crow("that calibration on an earlier 2-GPU run of the same kind of machine "
                      "(`h200x4_2026-11-26`, 5 repetitions; nop2p and socket variants included)", summary(c_old)))
    return lines, figures


def ddp_section(write_calibrations: bool) -> tuple[list[str], dict]:
    workloads = load_workloads(sorted(glob.glob(str(PROFILES / "profile_*.json"))))
    d2 = aggregate(read_ddp(CAMPAIGN / "ddp_world2.jsonl"))
    d4 = aggregate(read_ddp(CAMPAIGN / "ddp_world4.jsonl"))
    comm = load_calibration(str(CAL / "h200-nvlink.json"))
    lines = ["", "## 3. DDP iterations on 2 and 4 H200s (calibrate on collectives, predict iterations)", "",
             "ResNet-50 (batch 64), BERT-base (32 x 128 tokens), GPT-2 small (8 x 512) and an 8-layer "
             "4096-wide MLP (64), bf16 autocast, SGD with momentum, bucket caps 1, 5, 25, 100 and 1000 MB, "
             "two separate launches per configuration, 20 timed iterations each (`ddp_world{2,4}.jsonl`). "
             "Measured = median over launches of each launch's median; the spread is the launches' p10 to "
             "p90. Communication parameters: the collective calibration `h200-nvlink` (section 2); compute: "
             "the single-GPU profiles (`h200x1_2026-11-26/profile_*.json`, taken on another H200 machine, "
             "as a user would profile one GPU before renting a cluster), or those profiles scaled to each run's measured "
             "`no_sync()` iteration (which isolates the communication and overlap model).", "",
             "| what | configurations | median time err % | p90 time err % | worst time err % | "
             "measured p10-p90 spread % | predictions inside the spread % |", "|---|---|---|---|---|---|---|"]
    figures: dict = {}
    for compute in ("profile", "nosync"):
        pred = DdpPredictor(TOPO, comm, workloads, compute)
        for world, pts in ((2, d2), (4, d4)):
            s = ddp_summary(compare_ddp(pts, pred))
            lines.append(_row(f"compute from {compute}, DDP parameters datasheet, {world} GPUs", s,
                              f" {s['median_spread_pct']:.1f} | {s['within_p10_p90_pct']:.0f} |"))
            figures[f"{compute}_{world}"] = s
        params, _, after2 = calibrate_ddp(d2, pred, name="h200-nvlink-ddp")
        s4 = ddp_summary(compare_ddp(d4, pred.with_params(params)))
        lines.append(_row(f"compute from {compute}, DDP parameters fitted on 2 GPUs, **predict 4 GPUs**", s4,
                          f" {s4['median_spread_pct']:.1f} | {s4['within_p10_p90_pct']:.0f} |"))
        figures[f"{compute}_fit2_4"] = s4
        if compute == "profile" and write_calibrations:
            save_calibration(params.with_values({}, name="h200-nvlink-ddp"), CAL / "h200-nvlink-ddp.json",
                             statistic="median", topology=TOPO.__dict__,
                             fitted_on=["h200x4_2026-11-26b/coll_world2_r15.jsonl",
                                        "h200x4_2026-11-26b/coll_world4_r15.jsonl",
                                        "h200x4_2026-11-26b/ddp_world2.jsonl"], ddp_compute=compute)
    lines += ["", "Per model (compute from profile, DDP parameters datasheet, both world sizes):", "",
              "| model | configurations | median time err % | p90 time err % | worst time err % |",
              "|---|---|---|---|---|"]
    pred = DdpPredictor(TOPO, comm, workloads, "profile")
    comps = compare_ddp(d2 + d4, pred)
    for m in sorted({c.point.model for c in comps}):
        lines.append(_row(m, ddp_summary([c for c in comps if c.point.model == m])))
    return lines, figures


def targets_section(coll: dict, ddp: dict, public_fitted: list[float]) -> list[str]:
    t = coll["two_to_four"]
    b = coll["both"]
    dd = ddp["profile_fit2_4"]
    dn = ddp["nosync_fit2_4"]

    def verdict(v: float, target: float) -> str:
        return "met" if v <= target else "**missed**"

    return ["", "## 4. Targets", "",
            f"- Collectives, calibrate on 2 GPUs and predict 4 GPUs: median {t['median_time_pct']:.1f}% "
            f"(target {TARGET_COLL_MEDIAN:g}%: {verdict(t['median_time_pct'], TARGET_COLL_MEDIAN)}), 90th percentile "
            f"{t['p90_time_pct']:.1f}% (target {TARGET_P90:g}%: {verdict(t['p90_time_pct'], TARGET_P90)}). In sample "
            f"on both sizes: median {b['median_time_pct']:.1f}%, p90 {b['p90_time_pct']:.1f}%, with "
            f"{b.get('within_range_pct', 0):.0f}% of predictions inside the range of their point's repetitions.",
            f"- DDP iterations, DDP parameters fitted on 2 GPUs, predict 4 GPUs: median {dd['median_time_pct']:.1f}% "
            f"with compute from the single-GPU profiles (target {TARGET_DDP_MEDIAN:g}%: "
            f"{verdict(dd['median_time_pct'], TARGET_DDP_MEDIAN)}; p90 {dd['p90_time_pct']:.1f}%: "
            f"{verdict(dd['p90_time_pct'], TARGET_P90)}), {dn['median_time_pct']:.1f}% with compute from each run's "
            f"no_sync baseline (p90 {dn['p90_time_pct']:.1f}%).",
            "- Why the misses: (i) the measurements' own noise (section 2) is of the order of the target on "
            "small and medium messages, where repetitions are bimodal; (ii) 2-GPU runs cannot separate the "
            "wire term from the per-byte local term, per-hop from fixed latency (every 2-GPU ring has one "
            "hop each way), nor the per-doubling launch cost (`rank_overhead_s`) from the fixed one, so the fit "
            "splits them as the prior towards the datasheet makes it, and the 4-GPU prediction inherits the "
            "error; (iii) NCCL's send/recv and broadcast slow down more from 2 to 4 GPUs than one extra hop "
            "explains; (iv) for DDP, BERT-base's compute itself varies by 30-50% between launches (its "
            "`no_sync()` iterations range from 22 to 36 ms), and the MLP's `no_sync()` iterations (2.5-3.2 ms) are "
            "shorter than its single-GPU profile (3.8 ms) for a reason not yet established, so profile-based "
            "compute is off by more than the communication model there.",
            "- The public datasets (section 1) are far off uncalibrated: cloud fabrics (EFA, TCPX) add tens to "
            "hundreds of microseconds per call that no datasheet states, and NCCL's own model misses them the same "
            f"way. Calibrated on its own file, {sum(v < 8 for v in public_fitted)} of the {len(public_fitted)} public "
            f"datasets land under 8% median error (in sample, 20-odd parameters on 7-140 points: a measure of what "
            f"the parameter set can express, not a prediction)."]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.accuracy", description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(DOC))
    p.add_argument("--calibrations", action="store_true", help="refit and rewrite simulator/collectives/calibrations/*.json")
    p.add_argument("--only", choices=["nvls", "dp", "llm"], default=None,
                   help="recompute one section and rewrite it in place (nvls: NVLS and B200 datasets; dp: "
                        "DataParallel vs DDP and Gloo; seconds; llm: LLM training, minutes)")
    a = p.parse_args(argv)
    if a.only == "llm":
        from validation import llm_accuracy
        section = llm_accuracy.llm_section()[0]
        doc = Path(a.out)
        doc.write_text(replace_section(doc.read_text() if doc.exists() else "", section, llm_accuracy.LLM_BEGIN,
                                       llm_accuracy.LLM_END))
        print("\n".join(section))
        return 0
    if a.only == "dp":
        from validation import dp_accuracy
        section = dp_accuracy.section(a.calibrations)
        doc = Path(a.out)
        doc.write_text(replace_section(doc.read_text() if doc.exists() else "", section, dp_accuracy.BEGIN,
                                       dp_accuracy.END))
        print("\n".join(section))
        return 0
    if a.only == "nvls":
        section, _ = nvls_section()
        doc = Path(a.out)
        doc.write_text(replace_section(doc.read_text() if doc.exists() else "", section))
        print("\n".join(section))
        return 0
    lines = ["# Accuracy", "",
             "Produced by `python -m validation.accuracy` from the datasets committed under `validation/data/` "
             "(do not edit by hand). 'err' is |predicted/measured - 1| of the time of one call (collectives) "
             "or one iteration (DDP). Sizes follow nccl-tests.", ""]
    public_fitted: list[float] = []
    lines += public_section(Parameters(), public_fitted)
    coll_lines, coll = campaign_section(a.calibrations)
    ddp_lines, ddp = ddp_section(a.calibrations)
    lines += coll_lines + ddp_lines + targets_section(coll, ddp, public_fitted)
    lines += [""] + nvls_section()[0]
    from validation import dp_accuracy
    lines += [""] + dp_accuracy.section(a.calibrations)
    from validation import llm_accuracy
    lines += [""] + llm_accuracy.llm_section()[0]
    text = "\n".join(lines) + "\n"
    Path(a.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
