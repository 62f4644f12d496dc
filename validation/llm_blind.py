"""A blind test of the FSDP model on a machine it has never seen: the FSDP runs of
``validation/data/h100x4_2026-11-26f`` (4x H100 80GB HBM3), predicted from

* compute: the compute model fitted on the runs' own single-GPU whole-model profiles
  (``llm_profile`` records of the same launches; :func:`validation.llm_real.fitted_predictor`);
* network: the shipped calibration ``h100-nvlink-2gpu``, fitted by ``gpunetsim calibrate`` on this
  campaign's 2-GPU bf16 collective sweep only (``llm_coll_world2.jsonl``); the 4-GPU sweep is
  held out and scored here;
* host work (:data:`validation.llm_real.HOST_KEYS`): fitted on an H200 campaign of the same
  world size (:data:`HOST_FROM`), never on these H100 runs.

Nothing is fitted on the FSDP runs themselves. The diagnostics after the headline figures say
which term misses; the last one (host_block_s carried from H200) was chosen after seeing the
miss and is labelled so.

::

    python -m validation.llm_blind
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import replace
from pathlib import Path

from validation.llm_real import (CAMPAIGNS, FIT_KEYS, HOST_KEYS, RealPredictor, compute_targets, fit_compute,
                                 fitted_predictor, host_work_from)
from validation.llm_records import RunError, compare_runs, error_summary, read_llm_records

DATA = Path(__file__).resolve().parent / "data"
FOLDER = "h100x4_2026-11-26f"
CALIBRATION = "h100-nvlink-2gpu"
HOST_FROM = {2: CAMPAIGNS[0], 4: CAMPAIGNS[1]}
"""World size -> (H200 folder, file, calibration) whose FSDP and TP runs give the host work."""
PRERECORDED_MS = {("no_shard", 4, 2048): 24.5, ("no_shard", 4, 4096): 16.4,
                  ("no_shard", 2, 2048): 22.7, ("no_shard", 2, 4096): 13.9}
"""NO_SHARD predictions for H200 recorded before the H100 run (commit 831553e's session)."""


def blind_file(world: int) -> Path:
    return DATA / FOLDER / f"fsdp_world{world}.jsonl"


def host_for(world: int) -> tuple[dict[str, float], str]:
    folder, name, calibration = HOST_FROM[world]
    return host_work_from([DATA / folder / name], calibration)[0], folder


def _errors(pred: RealPredictor, records: object) -> list[RunError]:
    return compare_runs(records, pred.iteration_s)  # type: ignore[arg-type]


def _hidden(e: RunError) -> int:
    return int(e.point.split("hidden=")[1].split(",")[0])


def _strategy(e: RunError) -> str:
    return e.point.split()[1]


def collective_check() -> list[str]:
    """The calibration (fitted on 2 GPUs) on the held-out 4-GPU sweep, by size regime."""
    from simulator.collectives.params import load_calibration
    from validation.compare import Predictor, Topo, compare, dataset_points, summary
    from validation.parsers import read_jsonl

    pred = Predictor(Topo("dgx-h100"), load_calibration(CALIBRATION))
    rows = []
    for world in (2, 4):
        comps, _ = compare(dataset_points(read_jsonl(DATA / FOLDER / f"llm_coll_world{world}.jsonl")), pred)
        for label, sub in (("1-8 MiB", [c for c in comps if c.point.size_bytes < 1 << 24]),
                           (">= 16 MiB", [c for c in comps if c.point.size_bytes >= 1 << 24])):
            s = summary(sub)
            rows.append(f"| {world} | {'fitted' if world == 2 else 'held out'} | {label} | {len(sub)} | "
                        f"{s['median_time_pct']:.1f} | {s['p90_time_pct']:.1f} |")
    return rows


def section() -> tuple[list[str], dict[str, dict[str, float]]]:
    """Markdown lines (a subsection of docs/accuracy.md's LLM section) and the FSDP figures per world."""
    figs: dict[str, dict[str, float]] = {}
    table = ["| GPUs | configuration | measured ms (launches' range) | predicted ms | error % | "
             "H200 prediction recorded before the run, ms |", "|---|---|---|---|---|---|"]
    summary_rows = ["| GPUs | host work from | configurations | median err % | p90 err % | Spearman |",
                    "|---|---|---|---|---|---|"]
    diag = ["| GPUs | what | FSDP median err % | per configuration (NO_SHARD h2048, FULL_SHARD h2048, "
            "NO_SHARD h4096, FULL_SHARD h4096) % |", "|---|---|---|---|"]
    terms = ["| GPUs | spec | one GPU, whole model: measured / predicted ms | NO_SHARD over one GPU (FSDP host work, "
             "gradient all-reduces): measured / predicted ms | FULL_SHARD over NO_SHARD (the all-gathers): "
             "measured / predicted ms |", "|---|---|---|---|---|"]
    spreads: list[float] = []
    pre_errs: list[float] = []
    gather_short: list[float] = []      # FULL_SHARD over NO_SHARD: measured minus predicted, ms
    fsdp_ratio: list[float] = []        # NO_SHARD over one GPU at the smaller hidden size: measured / predicted
    restricted_pct: list[float] = []
    post_pct: list[float] = []
    no_host_pct: list[tuple[float, float]] = []     # (blind, without the FSDP host keys) per world size
    computes = []
    for world in (2, 4):
        records = read_llm_records([blind_file(world)])
        pred, fit_pct, n_targets = fitted_predictor(records, CALIBRATION)
        host, host_folder = host_for(world)
        blind = pred.with_compute(replace(pred.compute, **host))  # type: ignore[type-var]
        errs = _errors(blind, records)
        s = error_summary(errs)["fsdp"]
        figs[f"world{world}"] = s
        computes.append((world, n_targets, fit_pct, pred.compute, host, host_folder))
        summary_rows.append(f"| {world} | {host_folder} | {s['n']:.0f} | {s['median_abs_pct']:.1f} | "
                            f"{s['p90_abs_pct']:.1f} | {s['spearman']:.2f} |")
        for e in errs:
            pre = PRERECORDED_MS.get((_strategy(e), world, _hidden(e)))
            if pre is not None:
                pre_errs.append((pre * 1e-3 / e.measured_s - 1) * 100)
            table.append(f"| {world} | {e.point.split(' mb=')[0]} h{_hidden(e)} | {e.measured_s * 1e3:.2f} "
                         f"({e.low_s * 1e3:.2f}-{e.high_s * 1e3:.2f}) | {e.predicted_s * 1e3:.2f} | "
                         f"{e.error_pct:+.1f} | {'' if pre is None else f'{pre:.1f}'} |")

        def row(what: str, errors: list[RunError]) -> str:
            return (f"| {world} | {what} | {error_summary(errors)['fsdp']['median_abs_pct']:.1f} | "
                    + ", ".join(f"{e.error_pct:+.1f}" for e in errors) + " |")

        singles = {t.spec.hidden: (t.measured_s, pred.compute_only_s(t))  # type: ignore[attr-defined]
                   for t in compute_targets(records)}
        by = {(_strategy(e), _hidden(e)): e for e in errs}
        for hidden, (one_m, one_p) in sorted(singles.items()):
            no, full = by[("no_shard", hidden)], by[("full_shard", hidden)]
            gather_short.append(((full.measured_s - no.measured_s) - (full.predicted_s - no.predicted_s)) * 1e3)
            if hidden == min(singles):
                fsdp_ratio.append((no.measured_s - one_m) / (no.predicted_s - one_p))
            terms.append(f"| {world} | h{hidden} | {one_m * 1e3:.2f} / {one_p * 1e3:.2f} | "
                         f"{(no.measured_s - one_m) * 1e3:.2f} / {(no.predicted_s - one_p) * 1e3:.2f} | "
                         f"{(full.measured_s - no.measured_s) * 1e3:.2f} / "
                         f"{(full.predicted_s - no.predicted_s) * 1e3:.2f} |")
        spreads += [(r.p90_s - r.p10_s) / r.median_s * 100 for r in records.runs]  # type: ignore[attr-defined]
        no_host = pred.with_compute(replace(pred.compute, **{k: 0.0 for k in HOST_KEYS}))  # type: ignore[type-var]
        diag.append(row("blind (as above)", errs))
        no_host_errs = _errors(no_host, records)
        no_host_pct.append((error_summary(errs)['fsdp']['median_abs_pct'],
                            error_summary(no_host_errs)['fsdp']['median_abs_pct']))
        diag.append(row("the same without the FSDP host work (host keys 0)", no_host_errs))
        folder, name, calibration = HOST_FROM[world]
        h200 = read_llm_records([DATA / folder / name])
        h200_pred = fitted_predictor(h200, calibration)[0]
        restricted, _ = fit_compute(RealPredictor(h200.runs[0].gpu, calibration),
                                    [t for t in compute_targets(h200) if t.tp == 1])
        other = HOST_FROM[6 - world]
        other_host = host_work_from([DATA / other[0] / other[1]], other[2])[0]
        h200_fsdp = replace(h200, runs=tuple(r for r in h200.runs if r.runner == "fsdp"))
        h200_errs = _errors(h200_pred.with_compute(replace(restricted, **other_host)), h200_fsdp)  # type: ignore[type-var]
        restricted_pct.append(error_summary(h200_errs)['fsdp']['median_abs_pct'])
        diag.append(f"| {world} | H200 `{folder}` FSDP runs, compute fitted on its whole-model profiles only "
                    f"(as here), host work from `{other[0]}` | "
                    f"{error_summary(h200_errs)['fsdp']['median_abs_pct']:.1f} | (8 configurations) |")
        carried, _ = fit_compute(pred, compute_targets(records),
                                 {"host_block_s": h200_pred.compute.host_block_s})  # type: ignore[attr-defined]
        post_errs = _errors(pred.with_compute(replace(carried, **host)), records)  # type: ignore[type-var]
        post_pct.append(error_summary(post_errs)['fsdp']['median_abs_pct'])
        diag.append(row(f"post hoc: host_block_s carried from `{folder}` "
                        f"({h200_pred.compute.host_block_s * 1e3:.3f} ms), the rest refitted on the profiles",  # type: ignore[attr-defined]
                        post_errs))
    lines = [f"### Blind test: FSDP on 4x H100 (`{FOLDER}`), a GPU the model had never seen", "",
             "Produced by `python -m validation.llm_blind` (also part of `--only llm`). FULL_SHARD and NO_SHARD "
             "of two GPT specs on 2 and 4 H100 80GB HBM3 (NV18 all pairs), each the median of 3 launches. "
             "What was fitted where:", "",
             "- compute: the compute model fitted on the same launches' single-GPU whole-model profiles "
             "(`llm_profile`, 2 specs; these runs have no TP no-communication points, so the 5 compute keys "
             "meet 2 targets and `host_block_s` stays at its 0.2 ms start):"]
    for world, n, pct, comp, host, folder in computes:
        lines.append(f"  {world} GPUs: {n} targets, {pct:.1f}% after the fit, "
                     + ", ".join(f"{k}={getattr(comp, k):.4g}" for k in FIT_KEYS) + ";")
    lines += [f"- network: the shipped calibration `{CALIBRATION}`, `gpunetsim calibrate` on this campaign's "
              "2-GPU bf16 sweep only (`llm_coll_world2.jsonl`, 1 MiB-1 GiB, `--topology dgx-h100 --gpus 2`); "
              "the 4-GPU sweep is held out:", "",
              "| GPUs | | sizes | points | median time err % | p90 time err % |", "|---|---|---|---|---|---|",
              *collective_check(), "",
              "- host work (FSDP1's per unit pass and per all-gather, per collective call): fitted by "
              "`llm_real`'s host fit on the H200 campaign of the same world size, never on these runs:"]
    for world, _, _, _, host, folder in computes:
        lines.append(f"  {world} GPUs from `{folder}`: "
                     + ", ".join(f"{k}={host[k] * 1e3:.3f} ms" for k in HOST_KEYS) + ";")
    lines += ["", *summary_rows, "", *table, "",
              "The H200 column holds the NO_SHARD predictions the FSDP model's author recorded for the H200 "
              "machines before this run; the run came on H100, so they compare only qualitatively: the "
              "measured H100 times are of the same size as the H200 ones (whole-model profiles 14.0 vs 13.4 ms "
              "for h2048), so these small models are host-bound and the GPU matters little. Those predictions, made "
              "with the full method on H200 (its compute fit has TP no-communication points too), would be "
              f"{min(pre_errs):+.0f}% to {max(pre_errs):+.0f}% off the H100 measurements, closer than the blind "
              "ones: consistent with the diagnosis below, though the GPUs differ.", "",
              "**Where the time goes** (differences of medians; the one-GPU prediction equals the measurement "
              "because the compute is fitted on it):", "", *terms, "",
              "**Diagnostics** (which term misses):", "", *diag, "",
              "Reading: the compute kernels are right by construction (fitted on the one-GPU profiles) and the "
              f"all-gathers are short by {min(gather_short):.1f}-{max(gather_short):.1f} ms (FULL_SHARD over "
              "NO_SHARD); the miss is in what FSDP adds to a one-GPU iteration even without gathers (NO_SHARD "
              f"over one GPU: measured {min(fsdp_ratio):.1f}-{max(fsdp_ratio):.1f}x predicted at h2048). That part is the host: FSDP1's hooks and the host's issuing of every block, which on a "
              "host-bound model decide whether the GPU waits. The FSDP host keys carried from H200 are not the "
              "culprit (dropping them gives " + " and ".join(f"{b:.1f}% instead of {a:.1f}%" for a, b in no_host_pct)
              + ", second row); the compute fit is: without TP "
              "no-communication points the whole-model profiles cannot separate the host's issue time per "
              "block (`host_block_s`) from kernel time, so `host_block_s` stays at its start and the kernels "
              "absorb the time. The same restricted fit on the H200 campaigns, where the full method is within "
              f"8%, misses their FSDP runs by {min(restricted_pct):.0f}-{max(restricted_pct):.0f}% (third row): most of the H100 miss is this blind spot of "
              "the method, not the GPU. The collective calibration holds on the held-out 4-GPU sweep in the "
              "bandwidth regime the FSDP messages (100-530 MB of bf16 per unit) are in. The last row was tried after "
              "seeing the miss and is no blind figure: carrying H200's `host_block_s` (a host property, the "
              f"same software stack) brings both world sizes to {max(post_pct):.1f}% or less. The memory-traffic "
              "charge of collectives beside a unit's backward (docs/training.md, FSDP) overshoots one point: "
              "NO_SHARD h4096 on 4 GPUs, whose per-unit all-reduce lasts longer than the backward it overlaps, "
              "comes out too slow. The measurement is noisy too: the "
              f"median spread p10-p90 within a launch is {statistics.median(spreads):.0f}% of the median "
              "iteration on this machine. To make the next blind test work, the campaign should include the "
              "TP runner's no-communication points (or a host-issue profile), which pin `host_block_s`.", ""]
    return lines, figs


def main() -> int:
    lines, _ = section()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
