"""The LLM-training section of docs/accuracy.md, and the fit of the shipped A100 compute set.

    python -m validation.accuracy --only llm      # rewrites only this section (7) of docs/accuracy.md
    python -m validation.llm_accuracy --fit       # refits simulator/collectives/calibrations/a100-megatron.json
                                                  # (its six parameters, then its pass profile)

Datasets (``validation/data/public/llm/``): Megatron-LM on Selene (Korthikanti et al. 2022: 8
iteration times of 22B-1T models on 8-512 A100s, per-GPU memory) and vTrain's 1,440 Megatron-
DeepSpeed runs on 2-8 A100s of one server. The fit: six global compute parameters
(:data:`FIT_KEYS`) by least squares on log(predicted / measured) over a fixed random sample of the
vTrain runs on 2 and 4 GPUs; every 8-GPU run is held out and predicted. Selene is predicted with
the datasheet set and with the fitted set, no per-run tuning.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from simulator.collectives.params import CALIBRATION_FORMAT, SHIPPED_DIR
from simulator.training.llm.compute import ComputeParams, load_compute_params
from validation.llm_compare import LLM_DATA, LlmPredictor, LlmRun, errors_pct, read_llm, spearman
from validation.llm_blind import held_out_lease, issue_lease, section as blind_section
from validation.iteration_bands import log_ratios
from validation.llm_real import real_section

SELENE = LLM_DATA / "megatron_selene_a100.jsonl"
VTRAIN = LLM_DATA / "vtrain_single_a100.jsonl"
CALIBRATION = "a100-megatron"
FIT_KEYS = ("gemm_efficiency", "gemm_half_dim", "mem_efficiency", "host_block_s", "kernel_overhead_s",
            "iteration_overhead_s")
_SCALE = np.array([1.0, 100.0, 1.0, 1e-3, 1e-5, 1e-2])
_LO = np.array([0.2, 0.0, 0.2, 0.0, 0.0, 0.0])
_HI = np.array([1.0, 2000.0, 1.0, 0.02, 1e-3, 1.0])
FIT_SAMPLE, FIT_SEED = 60, 1
HOST_RUNS_AHEAD = False
"""vTrain's Megatron-DeepSpeed runs are fitted with the host waiting for each pass (``ComputeParams.host_runs_ahead``
false): refitted with the host running ahead, the fit's in-sample median error on its 60 runs rises from 4.45% to 5.76%
and the held-out 8-GPU runs' from 3.5% to 6.4% (python -m validation.llm_accuracy --fit, 2026-11-27; not kept)."""
HOST_RULE_TRIED = ((4.45, 5.76), (3.5, 6.4))
"""The figures of that choice (median err %: host waiting, host running ahead), in sample then on the 8-GPU runs;
recorded by ``python -m validation.llm_accuracy --fit`` on 2026-11-27 (stop 16), not recomputed. The 8-GPU runs'
figure was in view when the rule was chosen, so for that one choice they are not held out (review s17 #7)."""


def host_rule_note() -> str:
    """The report's words on the one structural choice made with the 8-GPU vTrain runs' figure in view."""
    (in_wait, in_ahead), (out_wait, out_ahead) = HOST_RULE_TRIED
    return (f"One structural choice of `{CALIBRATION}` saw the 8-GPU runs' figure: the host waits for each pass "
            f"(`host_runs_ahead` {str(HOST_RUNS_AHEAD).lower()}), chosen over the host running ahead (in sample {in_wait:g}% "
            f"against {in_ahead:g}%, the 8-GPU runs {out_wait:g}% against {out_ahead:g}%; recorded by `--fit`, not "
            "recomputed), so for that choice they are not held out")
TARGET_MEDIAN, TARGET_MEMORY, TARGET_SPEARMAN = 8.0, 5.0, 0.9
LLM_BEGIN, LLM_END = "<!-- llm:begin -->", "<!-- llm:end -->"


def fit_sample(runs: list[LlmRun]) -> list[LlmRun]:
    """The fixed training sample: FIT_SAMPLE runs on fewer than 8 GPUs, seeded."""
    pool = [r for r in runs if r.config.gpus < 8]
    return random.Random(FIT_SEED).sample(pool, min(FIT_SAMPLE, len(pool)))


def fit(runs: list[LlmRun]) -> tuple[ComputeParams, dict]:
    """Least squares on log-time ratios over ``runs``; (fitted set, fit summary)."""
    from scipy.optimize import least_squares
    meas = np.array([r.iteration_s for r in runs])
    base = ComputeParams(host_runs_ahead=HOST_RUNS_AHEAD)

    def params(x: np.ndarray) -> ComputeParams:
        return replace(base, name=CALIBRATION, **{k: float(v) for k, v in zip(FIT_KEYS, x * _SCALE)})

    def residuals(x: np.ndarray) -> np.ndarray:
        P = LlmPredictor(compute=params(x))
        return np.log(np.array([P.iteration_s(r) for r in runs]) / meas)

    x0 = np.array([getattr(base, k) for k in FIT_KEYS]) / _SCALE
    x0[3] = 1.0                                  # host_block_s start: 1 ms
    sol = least_squares(residuals, x0, bounds=(_LO / _SCALE, _HI / _SCALE), diff_step=0.05, max_nfev=60)
    e = np.abs(np.exp(sol.fun) - 1) * 100
    return params(sol.x), {"runs": len(runs), "median_pct": float(np.median(e)), "p90_pct": float(np.percentile(e, 90))}


def calibration_data(cp: ComputeParams, summary: dict) -> dict:
    """The calibration file of fitted set ``cp`` (``summary`` as :func:`fit` returns it), as :func:`write_calibration`
    writes it (validation.pass_profile then adds its profile)."""
    return {"format": CALIBRATION_FORMAT, "name": CALIBRATION,
            "fit": {"data": "validation/data/public/llm/vtrain_single_a100.jsonl",
                    "runs": f"{summary['runs']} runs on 2 and 4 A100s (random sample, seed {FIT_SEED})",
                    "in_sample_median_pct": round(summary["median_pct"], 2),
                    "in_sample_p90_pct": round(summary["p90_pct"], 2), "tool": "python -m validation.llm_accuracy --fit"},
            "params": {}, "llm": {**{k: getattr(cp, k) for k in FIT_KEYS}, "host_runs_ahead": HOST_RUNS_AHEAD},
            "llm_gpus": [LlmPredictor().gpu.name]}     # the GPU its runs are on: its interval band's key


def write_calibration(cp: ComputeParams, summary: dict) -> Path:
    out = SHIPPED_DIR / f"{CALIBRATION}.json"
    out.write_text(json.dumps(calibration_data(cp, summary), indent=2) + "\n")
    return out


def _stats(pred: list[float], meas: list[float]) -> tuple[float, float, float]:
    e = errors_pct(pred, meas)
    return float(np.median(e)), float(np.percentile(e, 90)), float(e.max())


def llm_section(number: int = 7, write_bands: bool = False) -> tuple[list[str], dict]:
    """The markdown lines and the headline figures; ``write_bands`` also rewrites the shipped interval bands
    of ``gpunetsim train`` (simulator.training.iteration_bands.TRAIN_FILE)."""
    fitted = load_compute_params(CALIBRATION)
    sheet = LlmPredictor()
    cal = LlmPredictor(compute=fitted)
    _, sel_runs, sel_mem = read_llm(SELENE)
    _, vt_runs, _ = read_llm(VTRAIN)
    public = public_datasheet_results()
    sheet_s = {id(r): res.iteration_s for r, (_, res) in zip(sel_runs + vt_runs, public["Selene"] + public["vTrain"])}  # type: ignore[attr-defined]
    figs: dict = {}
    lines = [LLM_BEGIN, "", f"## {number}. LLM training (`gpunetsim train`) vs public Megatron runs", "",
             "Each run's model, TP x PP x DP, micro-batch, schedule, recomputation and sequence parallelism are "
             "rebuilt from the dataset and simulated on DGX A100 servers (`dgx-a100`, 8x 200 Gb/s HDR per "
             "server). Two compute parameter sets: the datasheet defaults (`simulator.training.llm.compute`), and "
             f"`--calibration {CALIBRATION}`: {len(FIT_KEYS)} global parameters ({', '.join(FIT_KEYS)}) fitted "
             f"by `python -m validation.llm_accuracy --fit` on {FIT_SAMPLE} vTrain runs on 2 and 4 GPUs (seeded "
             "sample); every 8-GPU vTrain run and every Selene run is out of sample of the fit. " + host_rule_note()
             + ". Collective parameters are "
             "the datasheet set in both. Spearman is the rank correlation of predicted and measured times.", "",
             "### Megatron-LM on Selene (Korthikanti et al. 2022, Table 5)", "",
             "| run | GPUs | TP x PP x DP, v | measured s | datasheet s | err % | fitted set s | err % |",
             "|---|---|---|---|---|---|---|---|"]
    ps, pc, ms = [], [], []
    for r in sel_runs:
        a, b = sheet_s[id(r)], cal.iteration_s(r)
        c = r.config
        ps.append(a), pc.append(b), ms.append(r.iteration_s)
        lines.append(f"| {r.label} | {c.gpus} | {c.tp} x {c.pp} x {c.dp}, {c.chunks} | {r.iteration_s:.2f} | {a:.2f} | "
                     f"{(a / r.iteration_s - 1) * 100:+.1f} | {b:.2f} | {(b / r.iteration_s - 1) * 100:+.1f} |")
    s_sheet, s_cal = _stats(ps, ms), _stats(pc, ms)
    figs["selene_datasheet"], figs["selene_fitted"] = s_sheet, s_cal
    figs["selene_runs"], figs["selene_memory_runs"] = len(sel_runs), len(sel_mem)
    lines += ["", f"Median / p90 / worst error: datasheet {s_sheet[0]:.1f} / {s_sheet[1]:.1f} / {s_sheet[2]:.1f}%, "
              f"fitted set {s_cal[0]:.1f} / {s_cal[1]:.1f} / {s_cal[2]:.1f}%; Spearman "
              f"{spearman(ps, ms):.3f} / {spearman(pc, ms):.3f}.", "",
              "### Memory per GPU on Selene (Korthikanti et al. 2022, Figure 1; first pipeline stage)", "",
              "Figure 1 counts the transformer blocks' parameters, gradients and optimizer states (18 bytes per "
              "parameter: its states are 18 bytes times the blocks' parameters per GPU, no embedding) and their "
              "activations; gpunetsim's first stage also holds the embedding table, shown apart. The like-for-like "
              "comparison is the blocks' states plus the activations (what the figure counts); the total with the "
              "embedding is what the first stage's GPU holds, more than the figure shows by the embedding's states.", "",
              "| run | states GiB | predicted (blocks) | predicted (with embedding) | activations GiB | predicted | "
              "like-for-like total err % | total with embedding err % |", "|---|---|---|---|---|---|---|---|"]
    worst_total = worst_blocks = worst_act = worst_like = 0.0
    for r in sel_mem:
        states, act = sheet.memory_GiB(r)
        blocks = states - r.model.embedding_params() / r.config.tp * 18 / 2**30
        figure = r.states_GiB + r.activations_GiB
        total_err = ((states + act) / figure - 1) * 100
        like_err = ((blocks + act) / figure - 1) * 100
        worst_total = max(worst_total, abs(total_err))
        worst_like = max(worst_like, abs(like_err))
        worst_blocks = max(worst_blocks, abs(blocks / r.states_GiB - 1) * 100)
        worst_act = max(worst_act, abs(act / r.activations_GiB - 1) * 100)
        lines.append(f"| {r.label} | {r.states_GiB:.2f} | {blocks:.2f} | {states:.2f} | {r.activations_GiB:.2f} | "
                     f"{act:.2f} | {like_err:+.2f} | {total_err:+.1f} |")
    figs["memory_worst_total_pct"] = worst_total
    figs["memory_worst_like_pct"] = worst_like
    lines += ["", f"Worst error: blocks' states {worst_blocks:.2f}%, activations {worst_act:.2f}%, like-for-like "
              f"total {worst_like:.2f}%; per-GPU total with the embedding {worst_total:.1f}% (the embedding's "
              "states, which the figure leaves out).", "",
              "### vTrain: Megatron-DeepSpeed on 2-8 A100s of one server", "",
              "Activation checkpointing on (full recomputation), 1F1B, fp16. Per model size (hidden, layers) over the "
              "8-GPU runs (held out), and over all runs:", "",
              "| model | 8-GPU runs | median err % | p90 err % | Spearman | all runs | median err % | Spearman | "
              "datasheet median err % |", "|---|---|---|---|---|---|---|---|---|"]
    pred_cal = {id(r): cal.iteration_s(r) for r in vt_runs}
    pred_sheet = {id(r): sheet_s[id(r)] for r in vt_runs}
    by_size: dict[tuple[int, int], list[LlmRun]] = defaultdict(list)
    for r in vt_runs:
        by_size[(r.model.hidden, r.model.layers)].append(r)
    rhos, all8p, all8m = [], [], []
    for (h, L), runs in sorted(by_size.items()):
        r8 = [r for r in runs if r.config.gpus == 8]
        p8, m8 = [pred_cal[id(r)] for r in r8], [r.iteration_s for r in r8]
        pa, ma = [pred_cal[id(r)] for r in runs], [r.iteration_s for r in runs]
        st8, sta = _stats(p8, m8), _stats(pa, ma)
        rho = spearman(p8, m8)
        rhos.append(rho)
        all8p += p8
        all8m += m8
        sheet_med = _stats([pred_sheet[id(r)] for r in runs], ma)[0]
        lines.append(f"| h{h} x {L} layers | {len(r8)} | {st8[0]:.1f} | {st8[1]:.1f} | {rho:.3f} | {len(runs)} | "
                     f"{sta[0]:.1f} | {spearman(pa, ma):.3f} | {sheet_med:.1f} |")
    s8 = _stats(all8p, all8m)
    figs["vtrain8"] = s8
    figs["vtrain8_min_spearman"] = min(rhos)
    figs["vtrain8_runs"], figs["vtrain8_sizes"] = len(all8m), len(rhos)
    own: dict[str, list[float]] = {}
    fits: dict[str, object] = {}
    real_lines, figs["own_runs"] = real_section(own, fits)
    blind_lines, figs["blind_h100"] = blind_section(own)
    held_lines, figs["held_out_h200"] = held_out_lease(own)
    issue_lines, figs["issue_h100"] = issue_lease()
    from validation import fsdp_host_carry
    carry_lines, figs["fsdp_host_carry"] = fsdp_host_carry.markdown_lines()
    from validation import fsdp_pair
    pair_lines, figs["fsdp_pair"] = fsdp_pair.markdown_lines()
    from validation import sealed_campaign
    sealed_lines: list[str] = []
    figs["sealed"] = {}
    for c in sealed_campaign.SEALED:
        more, figs["sealed"][c.prefix] = sealed_campaign.llm(c)
        sealed_lines += more
    r8 = [r for r in vt_runs if r.config.gpus == 8]
    calibrated = {"Selene": log_ratios(ms, pc), "vTrain 8 GPUs": log_ratios([r.iteration_s for r in r8],
                                                                            [pred_cal[id(r)] for r in r8]), **own}
    from validation import host_floor
    public_runs, own_runs = host_floor.public_runs(public), host_floor.own_runs()
    band_lines = train_band_lines(
        host_floor.log_ratios({**public_runs, **own_runs}, reference=True),
        calibrated,
        write_bands, {"Selene": ({sheet.gpu.name}, {r.config.gpus for r in sel_runs}),
                      "vTrain": ({sheet.gpu.name}, {r.config.gpus for r in vt_runs}),
                      "vTrain 8 GPUs": ({sheet.gpu.name}, {r.config.gpus for r in r8})})
    floor_lines, figs["host_floor"] = host_floor.section_lines(public_runs, own_runs)
    band_lines += floor_lines
    from validation.tp_intervals import section_lines as tp_interval_lines
    tp_lines, figs["tp_intervals"] = tp_interval_lines(calibrated)
    band_lines += ["", *tp_lines, ""]
    from validation.compute_bands import section_lines as compute_band_lines
    band_lines += compute_band_lines(fits, write_bands)
    from validation.part_checks import section_lines as comm_part_lines
    band_lines += comm_part_lines(fits, write_bands)
    from validation.pass_profile import feature_table
    feat_lines, analytic8 = feature_table()
    figs["vtrain8_analytic_median"] = analytic8
    n_shapes = len(fitted.profile.entries) if fitted.profile else 0
    lines += ["", f"All 8-GPU runs: median {s8[0]:.1f}%, p90 {s8[1]:.1f}%, worst {s8[2]:.1f}%; lowest Spearman within a "
              f"model size {min(rhos):.3f}.", "",
              "#### Where the analytic model missed, and the pass profile", "",
              f"The fitted set also carries a measured pass profile ({n_shapes} shapes, "
              "`simulator/training/llm/pass_profile.py`, `python -m validation.pass_profile --fit`): for each "
              "per-GPU pass shape (hidden x TP x micro-batch) of the 2- and 4-GPU runs, one block's pass (kernels, host "
              "issue and TP collectives together) and a micro-batch's embedding, output layer and loss, by least "
              "squares on those runs' measured iterations less the optimizer step, exposed gradient reduction and "
              "per-iteration overhead the simulation charges. A plan of a listed shape takes its passes from the "
              "profile (its TP collectives still run on the network), any other plan stays analytic (TP 8 here: only "
              f"the 8-GPU runs have it). With the analytic model alone the 8-GPU median is {analytic8:.1f}%. Why a "
              "profile: the analytic model's residual (log measured / predicted, all runs) is a matter of the pass "
              "shape; grouping the runs by it removes most of the spread, while pipeline and data parallelism and "
              "the micro-batch count without the shape explain little (`python -m validation.pass_profile --features`):", "",
              *feat_lines, "",
              "Within a shape the residual is a fixed time per block pass and per micro-batch, the same at 2, 4 and 8 "
              "GPUs and at every PP and DP degree, so it is the time of a pass on one GPU. Its shape matches no "
              "single mechanism of the analytic model: " + _profile_facts(fitted) + " A host cost per TP "
              "collective call, small-message collective latency or kernel launches that grow with TP only add time "
              "as TP grows or the shape shrinks, where here a larger shape can take less.", "",
              *real_lines, *blind_lines, *held_lines, *issue_lines, *carry_lines, *pair_lines, *sealed_lines, *band_lines,
              "### Targets", "",
              f"- Selene iteration times, median <= {TARGET_MEDIAN:g}% without per-run tuning: datasheet "
              f"{s_sheet[0]:.1f}% ({_verdict(s_sheet[0] <= TARGET_MEDIAN)}), fitted set {s_cal[0]:.1f}% "
              f"({_verdict(s_cal[0] <= TARGET_MEDIAN)}).",
              f"- Selene memory within {TARGET_MEMORY:g}%: like for like (what Figure 1 counts) worst "
              f"{worst_like:.2f}% ({_verdict(worst_like <= TARGET_MEMORY)}); the first stage's whole memory, with "
              f"the embedding the figure leaves out, worst {worst_total:.1f}% above the figure.",
              f"- vTrain 8-GPU runs, median <= {TARGET_MEDIAN:g}%: {s8[0]:.1f}% ({_verdict(s8[0] <= TARGET_MEDIAN)}); "
              f"Spearman >= {TARGET_SPEARMAN:g} within each model size: lowest {min(rhos):.3f} "
              f"({_verdict(min(rhos) >= TARGET_SPEARMAN)}); one choice of the fitted set's host rule saw these runs' "
              "figure (section 7's opening).",
              "- Own FSDP runs on an unseen GPU (4x H100, blind), median <= "
              f"{TARGET_MEDIAN:g}%: " + ", ".join(
                  f"{w[5:]} GPUs {s['median_abs_pct']:.1f}% ({_verdict(s['median_abs_pct'] <= TARGET_MEDIAN)})"
                  for w, s in figs["blind_h100"].items()) + "; the same runs on a held-out 4x H200 lease measured "
              "after the model was fixed: " + ", ".join(
                  f"{w[5:]} GPUs {s['median_abs_pct']:.1f}% ({_verdict(s['median_abs_pct'] <= TARGET_MEDIAN)})"
                  for w, s in figs["held_out_h200"].items()) + "; " + issue_lease_target(figs["issue_h100"]),
              own_probe_target(figs["fsdp_host_carry"]),
              fsdp_pair.target_line(figs["fsdp_pair"]),
              *sealed_targets(figs["sealed"]),
              f"- The fitted set ({', '.join(f'{k} = {getattr(fitted, k):.3g}' for k in FIT_KEYS)}) is host-bound: "
              "vTrain's small models spend more time issuing kernels (Python, DeepSpeed's checkpointing) than "
              "computing, which the datasheet set, built for GPU-bound large models, does not charge; "
              "`mem_efficiency` at its bound of 1 says the memory-bound kernel byte counts are upper estimates.", "",
              LLM_END]
    return lines, figs


def public_datasheet_results() -> dict[str, list[tuple[float, object]]]:
    """Selene's and every vTrain run's (measured s, datasheet ``TrainResult``), in the datasets' order: the
    datasheet band's public datasets (the result carries the host-issue floor the band is centred on)."""
    sheet = LlmPredictor()
    return {name: [(r.iteration_s, sheet.result(r)) for r in read_llm(path)[1]]
            for name, path in (("Selene", SELENE), ("vTrain", VTRAIN))}


def datasheet_own_runs() -> dict[str, list[float]]:
    """log(measured / reference) of every own LLM campaign of this section (the FSDP/TP/PP campaigns, the blind
    FSDP runs, the held-out lease, the TP issue probes) predicted as a user without any calibration would:
    datasheet compute (no optimizer step, which the runners do not time) and datasheet collectives; the reference
    is the larger of the prediction and its host-issue floor (validation.host_floor)."""
    from validation import host_floor
    return host_floor.log_ratios(host_floor.own_runs(), reference=True)


def train_band_lines(datasheet: dict[str, list[float]], calibrated: dict[str, list[float]], write: bool,
                     known: dict | None = None) -> list[str]:
    """The subsection on ``gpunetsim train``'s intervals: the two bands from the held-out log(measured / predicted)
    per dataset, each dataset left out in turn (validation.iteration_bands); with ``write``, the shipped file;
    ``known``: the GPUs and GPU counts of the datasets that are no campaign folder (the public runs)."""
    from simulator.training.iteration_bands import TRAIN_FILE
    from validation import iteration_bands as ib
    built = {"datasheet": ib.make_band(datasheet, "the datasheet compute and collective sets' predictions of the "
                                       "public Megatron runs (Selene, every vTrain run) and of every own campaign "
                                       "(validation.llm_accuracy)", known),
             "calibrated": ib.make_band(calibrated, "held-out predictions with a fitted compute set: Selene and the "
                                        "8-GPU vTrain runs with a100-megatron, the own FSDP/TP/PP campaigns, the TP "
                                        "issue probes, the blind FSDP runs and the held-out lease (validation.llm_accuracy)",
                                        known)}
    if write:
        ib.write(TRAIN_FILE, built)
    sentence, tables = ib.left_out_lines(built, {"datasheet": datasheet, "calibrated": calibrated}, TRAIN_FILE,
                                         "compute")
    out = ["### Intervals of `gpunetsim train` and `gpunetsim search`", "",
           "`iteration_lo_s`/`iteration_hi_s` (`--json`; the text's `90% interval` line; plan search and study rows) "
           "come from these measurements, not from the parts of the iteration: no dataset times the compute, TP, "
           "pipeline and data-parallel parts of an iteration apart, so what is measured is the whole iteration's "
           "error. The interval is the prediction times exp of the 5% and 95% quantiles of log(measured / predicted) "
           "over the held-out predictions above, each dataset weighing the same (vTrain's 720 runs do not set the "
           "band alone), widened to hold the prediction (simulator.training.iteration_bands). *Datasheet*: the "
           "compute set's defaults, from the datasheet predictions of Selene and vTrain and of every own campaign "
           "above predicted as a user without a calibration would (datasheet compute without the optimizer step, "
           "which the runners do not time, and datasheet collectives; `llm_accuracy.datasheet_own_runs`), each against "
           "the larger of its prediction and its host-issue floor, on which the datasheet interval is centred (the "
           "next subsection; its widths below are of that centre); *calibrated*: a compute set that differs from the defaults "
           "and was fitted on the GPU it predicts (`--calibration a100-megatron` on A100s, a fit on the GPU's profiles; "
           "every dataset below pairs a set with its own GPU model, so a set used on another GPU takes the datasheet "
           "band and says so), from every held-out prediction of this "
           "section with a fitted compute set (in-sample points, the 2- and 4-GPU vTrain runs the set was fitted on, "
           "are left out). Each band records the GPUs and GPU counts of its runs; a prediction outside them, or under "
           "a band wholly above the prediction, prints its caveats (`iteration_extrapolated`). Each dataset left out "
           "in turn (its points against the band of the other datasets): "
           + sentence]
    return out + tables + [""]


def _profile_facts(cp) -> str:
    """A sentence of the profile's own numbers that no per-call or per-launch cost explains."""
    if not cp.profile:
        return ""
    by = {(e.hidden, e.tp, e.micro_batch): e for e in cp.profile.entries}
    out = []
    a, b = by.get((2048, 4, 2)), by.get((1024, 4, 2))
    if a and b:
        out.append(f"at TP 4 and micro-batch 2 a block pass of hidden 2048 takes {a.block_pass_s * 1e3:.2f} ms and "
                   f"one of hidden 1024 {b.block_pass_s * 1e3:.2f} ms (four times the GEMM FLOPs, less time)")
    c, d = by.get((1024, 1, 8)), by.get((1024, 2, 8))
    if c and d:
        out.append(f"at hidden 1024 a micro-batch of 8 costs {c.microbatch_s * 1e3:.1f} ms outside the blocks at TP 1 "
                   f"and {d.microbatch_s * 1e3:.1f} ms at TP 2 (splitting the output layer in two saves "
                   f"{(1 - d.microbatch_s / c.microbatch_s) * 100:.0f}%)")
    return "; ".join(out) + "."


def sealed_targets(sealed: dict) -> list[str]:
    """The Targets bullets on the sealed leases of validation.sealed_campaign.SEALED (``sealed``: {its prefix: its
    figures}, empty for a campaign not committed): today's median per row with its verdict beside the blind one."""
    from validation.sealed_campaign import SEALED
    out = []
    for c in SEALED:
        figs = sealed.get(c.prefix)
        if not figs:
            continue
        seen = c.held_out_of + ("; one change was chosen on it: section 7" if c.after or c.tried is not None else "")
        if c.fsdp_only_seen:
            seen += ("; its FSDP-only rows' method (its GPU's probes and calibration, its own host issue probe) was "
                     "changed on branch h14fsdp7 after their figures were seen: for those rows a check, not blind")
        out.append(f"- Own PP / TP / FSDP runs on a {c.gpus} lease sealed until its session's model was final, median "
                   f"<= {TARGET_MEDIAN:g}%: " + ", ".join(
                       f"{k} {s['median_abs_pct']:.1f}% ({_verdict(s['median_abs_pct'] <= TARGET_MEDIAN)}; "
                       + (f"blind {b['median_abs_pct']:.1f}%" if (b := figs["blind"].get(k)) else "no blind figure")
                       + _spread_words(s) + ")"
                       for k, s in figs.items() if k != "blind")
                   + f" (blind: `{c.llm.name}`'s README, main {c.blind_commit}; {seen}).")
    return out


def _spread_words(s: dict[str, float]) -> str:
    """A sealed TP row's judgement against its launches' own spread (validation.sealed_campaign.llm's
    ``spread_prediction_pct`` / ``spread_launch_pct``), for its Targets bullet beside the median's verdict; '' for
    other rows."""
    if "spread_prediction_pct" not in s:
        return ""
    from validation.tp_launches import within_spread
    inside = within_spread(s["spread_prediction_pct"], s["spread_launch_pct"])
    return (f"; against its launches' spread {s['spread_prediction_pct']:.1f} vs a launch's "
            f"{s['spread_launch_pct']:.1f}%: {'within' if inside else 'outside'}")


def issue_lease_target(today: dict[str, dict[str, float]]) -> str:
    """The Targets bullet's part on :data:`validation.llm_blind.ISSUE_LEASE`: the one-rank groups' divisions were
    found on that lease, so the verdicts judge its blind figures (main 2dc75c7) and today's per-world medians
    (``today["world2"]`` ...) are printed as not held out, without verdicts (review s15 #1)."""
    from validation.llm_blind import ISSUE_BLIND_PCT
    blind = ", ".join(f"{w} GPUs {pct:.1f}% ({_verdict(pct <= TARGET_MEDIAN)})" for w, pct in ISSUE_BLIND_PCT.items())
    after = ", ".join(f"{w[5:]} GPUs {s['median_abs_pct']:.1f}%" for w, s in today.items() if "_" not in w[5:])
    return (f"another 4x H100 lease measured after it, blind (main 2dc75c7): {blind}; after the one-rank groups' "
            f"divisions found on this lease were charged (main 34bfbc1) and its own plain-model host issue became its "
            f"compute fit's host targets (branch h14fsdp7): not held out, no verdicts: {after}.")


def own_probe_target(carry: dict[str, float]) -> str:
    """The Targets bullet on the leases measured after FSDP-only leases took their own host issue measurements
    (:data:`validation.fsdp_host_carry.OWN_HELD_OUT`, held out of that choice): FSDP median per lease and world size."""
    from validation.fsdp_host_carry import OWN_HELD_OUT
    rows = [(f, k.split()[-2], v) for f in OWN_HELD_OUT for k, v in sorted(carry.items()) if k.startswith(f"own {f} ")]
    return (f"- Own FSDP runs on H200 leases measured after FSDP-only leases took their own host issue "
            f"measurements (branch h14fsdp7, held out of that choice), median <= {TARGET_MEDIAN:g}%: "
            + ", ".join(f"`{f}` {w} GPUs {v:.1f}% ({_verdict(v <= TARGET_MEDIAN)})" for f, w, v in rows) + ".")


def _verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.llm_accuracy", description=__doc__.splitlines()[0])
    p.add_argument("--fit", action="store_true", help=f"refit and rewrite the shipped {CALIBRATION} calibration")
    a = p.parse_args(argv)
    if a.fit:
        _, runs, _ = read_llm(VTRAIN)
        cp, summary = fit(fit_sample(runs))
        print(f"wrote {write_calibration(cp, summary)}: {summary}")
        from validation.pass_profile import fit_profile, training_runs, write_profile
        entries, prof = fit_profile(training_runs())      # the profile is fitted on top of the new set
        print(f"wrote {write_profile(entries, prof)}: pass profile {prof}")
        return 0
    print("\n".join(llm_section()[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
