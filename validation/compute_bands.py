"""The compute-only bands of simulator.training.iteration_bands (``calibrations/uncertainty/compute.json``):
how far the LLM compute model's predictions of compute alone stray from measurements, per dataset.

The measurements: every own LLM campaign's compute-only points (validation.llm_real.compute_targets: each
spec's whole model on one GPU, ``llm_profile``, its disturbed launches left out (validation.profile_launches);
each TP configuration's loop with its collectives stubbed, ``llm_tp`` ``nocomm_median_s``, median over launches), the campaigns of ``llm_accuracy.datasheet_own_runs``.

* *datasheet*: log(measured / predicted) with the datasheet compute set (no optimizer step, which the runners
  do not time), per campaign;
* *calibrated*: each compute set fitted on one campaign (the fits of validation.llm_real.real_section) predicts
  the compute-only points of every *other* campaign on the same GPU model, grouped by the campaign predicted: no
  point is predicted by a set fitted on it. A user's own fit predicts shapes of the same lease, so this band
  (other leases, other hosts) is wider than that case needs: an upper estimate.

Each band is built and checked leaving one dataset out as validation.iteration_bands does for whole iterations.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping

from validation import iteration_bands as ib


def datasets() -> dict[str, tuple[str | None, list]]:
    """{campaign folder: (its GPU name, its compute-only targets)}."""
    from validation.issue_check import probe_tp_runs
    from validation.llm_blind import DATA, FOLDER, HELD_OUT_LEASE
    from validation.llm_real import CAMPAIGNS, ISSUE_CAMPAIGNS, OTHER_GPU_CAMPAIGNS, compute_targets
    from validation.llm_records import read_llm_records
    out: dict[str, tuple[str | None, list]] = {}
    files = [(f, [DATA / f / n]) for f, n, *_ in (*CAMPAIGNS, *OTHER_GPU_CAMPAIGNS)]
    files += [(f, [DATA / f / f"fsdp_world{w}.jsonl" for w in (2, 4)]) for f in (FOLDER, HELD_OUT_LEASE)]
    for folder, paths in files:
        records = read_llm_records(paths)
        out[folder] = (records.runs[0].gpu, compute_targets(records))
    for folder, name, *_ in ISSUE_CAMPAIGNS:
        records = probe_tp_runs([DATA / folder / name])
        out[folder] = (records.runs[0].gpu, compute_targets(records))
    return out


def residuals(data: Mapping[str, tuple[str | None, list]], fits: Mapping[str, object] | None = None
              ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """(datasheet, calibrated) {campaign: log(measured / predicted)} of its compute-only points; ``fits``:
    {campaign: fitted compute set} (the calibrated side: each set predicts the other campaigns of its GPU)."""
    from validation.llm_real import RealPredictor, preset_for
    sheet: dict[str, list[float]] = {}
    cal: dict[str, list[float]] = {}
    predictors: dict[str, RealPredictor] = {}
    for folder, (gpu, targets) in data.items():
        p = predictors.setdefault(preset_for(gpu)[0], RealPredictor(gpu, None))
        sheet[folder] = [math.log(t.measured_s / p.compute_only_s(t)) for t in targets]
    for fitted_on, compute in (fits or {}).items():
        gpu = data[fitted_on][0] if fitted_on in data else None
        if gpu is None:
            continue
        p = predictors[preset_for(gpu)[0]].with_compute(compute)
        for folder, (other_gpu, targets) in data.items():
            if folder != fitted_on and preset_for(other_gpu)[0] == preset_for(gpu)[0]:
                cal.setdefault(folder, []).extend(math.log(t.measured_s / p.compute_only_s(t)) for t in targets)
    return sheet, cal


def section_lines(fits: Mapping[str, object], write: bool) -> list[str]:
    """The accuracy report's subsection on the compute-only bands; with ``write``, the shipped file."""
    from simulator.training.iteration_bands import COMPUTE_FILE
    data = datasets()
    sheet, cal = residuals(data, fits)
    built = {"datasheet": ib.make_band(sheet, "the datasheet compute set's predictions of every own campaign's "
                                       "compute-only points (validation.compute_bands)"),
             "calibrated": ib.make_band(cal, "compute sets fitted on one campaign predicting another campaign's "
                                        "compute-only points on the same GPU model (validation.compute_bands)")}
    if write:
        ib.write(COMPUTE_FILE, built)
    n = sum(len(t) for _, t in data.values())
    sentence, tables = ib.left_out_lines(built, {"datasheet": sheet, "calibrated": cal}, COMPUTE_FILE, "compute alone")
    out = ["### Intervals of the parts of `gpunetsim train`", "",
           "`gpunetsim train` gives each part of the iteration its own 90% interval (`compute_lo_s`/`compute_hi_s`, "
           "`tp_comm_lo_s`, ... in `--json`; the text's second column; simulator.training.llm.part_intervals). The "
           "compute (and, unmeasured, the optimizer step and per-iteration overhead) takes the band of these "
           f"compute-only measurements: {n} points of {len(data)} campaigns (each spec's whole model on one GPU, "
           "each TP configuration's loop with its collectives stubbed, medians over launches). *Datasheet*: the "
           "datasheet compute set's predictions; *calibrated*: a set fitted on one campaign (the fits above) "
           f"predicting every other campaign of the same GPU model ({sum(len(v) for v in cal.values())} points; "
           "a user's own fit predicts shapes of its own lease, so this band is an upper estimate). The "
           "communication parts carry their collectives' intervals (the collective calibration's), widened to the "
           "measured band where campaigns time them on their own (below); the pipeline bubble and DP exposed are "
           "propagated from those, not measured (no dataset times them apart). Each dataset left out in turn: "
           + sentence]
    return out + tables + [""]

