"""The LLM runners' committed H200 measurements predicted by gpunetsim train (accuracy regression)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simulator.core.errors import InputError
from validation.llm_real import (RealPredictor, compute_targets, fit_compute, main, modelled,
                                 preset_for)
from validation.llm_records import compare_runs, error_summary, read_llm_records

DATA = Path(__file__).resolve().parents[1] / "validation" / "data"
TWO = DATA / "h200x2_2026-11-26c" / "llm_world2.jsonl"
FOUR = DATA / "h200x4_2026-11-26d" / "llm_world4.jsonl"


def test_preset_for_gpu_names() -> None:
    assert preset_for("NVIDIA H200") == ("hgx-h200", "h200")
    assert preset_for("NVIDIA H100 80GB HBM3") == ("dgx-h100", "h100")
    with pytest.raises(InputError):
        preset_for("Tesla T4")


@pytest.mark.parametrize("path, calibration", [(TWO, "h200-nvlink-2gpu"), (FOUR, "h200-nvlink")])
def test_pipeline_and_tensor_parallel_runs_from_profiles(path: Path, calibration: str) -> None:
    records = read_llm_records(path)
    base = RealPredictor(records.runs[0].gpu, calibration)
    targets = compute_targets(records)
    assert {t.tp for t in targets} == {1, records.runs[-1].world}  # whole models, TP no-comm loops
    compute, fit_pct = fit_compute(base, targets)
    assert fit_pct < 10
    kept, skipped = modelled(records)
    assert {(r.replicate, r.world) for r in skipped} <= {(2, 4)}
    summary = error_summary(compare_runs(kept, base.with_compute(compute).iteration_s))
    assert summary["pp"]["median_abs_pct"] <= 8 and summary["pp"]["spearman"] >= 0.9
    assert summary["tp"]["median_abs_pct"] <= 12


def test_cli_prints_every_configuration(capsys: Any) -> None:
    assert main([str(TWO)]) == 0
    out = capsys.readouterr().out
    assert out.count("\nfsdp ") == 8 and "pp: n=3" in out and "compute fitted on 6" in out


def test_accuracy_section_lists_every_campaign_and_runner() -> None:
    from validation.llm_real import CAMPAIGNS, real_section
    lines, figs = real_section()
    rows = [line for line in lines if line.startswith("| h200")]
    assert len(rows) == 4 * len(CAMPAIGNS) and set(figs) == {c[0] for c in CAMPAIGNS}
    assert all(figs[c]["pp"]["median_abs_pct"] <= 8 for c in figs)
