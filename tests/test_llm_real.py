"""The LLM runners' committed H200 measurements predicted by gpunetsim train (accuracy regression)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simulator.core.errors import InputError
from validation.llm_real import (HostWork, RealPredictor, compute_targets, fit_compute, host_work_from, main,
                                 predict_files, preset_for)
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
    assert fit_pct < 12      # 4x H200: 11.4% (8.x% with its disturbed hidden-4096 profile launch, 7.70 ms, kept)
    errors = compare_runs(records, base.with_compute(compute).iteration_s)
    summary = error_summary(errors)
    assert summary["pp"]["median_abs_pct"] <= 8 and summary["pp"]["spearman"] >= 0.9
    # without the host's cost per collective call (the host fit's), a host-bound TP pass hides its collectives:
    # the profiles alone never predict a TP loop much slower than measured
    assert all(e.error_pct <= 8 for e in errors if e.runner == "tp")


def test_cli_prints_every_configuration(capsys: Any) -> None:
    assert main([str(TWO)]) == 0
    out = capsys.readouterr().out
    assert out.count("\nfsdp ") == 8 and "pp: n=3" in out and "compute fitted on 8" in out    # + 2 pipeline stages
    assert "host work: none" in out


@pytest.fixture(scope="module")
def hosts() -> dict[Path, tuple[HostWork, float]]:
    return {TWO: host_work_from([TWO], "h200-nvlink-2gpu"), FOUR: host_work_from([FOUR], "h200-nvlink")}


def test_host_work_is_alike_on_both_machines(hosts: dict) -> None:
    (two_work, two_pct), (four_work, four_pct) = hosts[TWO], hosts[FOUR]
    assert two_pct < 5 and four_pct < 8
    two, four = two_work.values, four_work.values
    for work in (two_work, four_work):          # each host's block issue time, from its own compute fit
        assert 0.5e-3 < work.host_block_s < 1e-3        # 0.675 and 0.736 ms
    for k in ("fsdp_unit_host_s", "fsdp_gather_host_s"):
        # (fsdp_gather_host_s 0.361 / 0.232 ms since the collective calibrations were refitted under the host
        # issue's overlap, #10: the split below is weakly determined, the pair's sum agrees within 1%)
        assert 0.1e-3 < two[k] < 1e-3 and abs(two[k] / four[k] - 1) < 0.6
    # what a gathered unit pass costs the host agrees closely; its split between the two keys is
    # weakly determined (only SHARD_GRAD_OP's backward, which gathers nothing, separates them)
    pair = [h["fsdp_unit_host_s"] + h["fsdp_gather_host_s"] for h in (two, four)]
    assert abs(pair[0] / pair[1] - 1) < 0.1
    for h in (two, four):                       # 101 us on both (36 and 59 us when collectives were added after
        assert 50e-6 < h["host_collective_s"] < 0.2e-3      # a host-bound pass instead of hidden behind it)


def test_host_work_is_carried_in_units_of_the_hosts_block_issue_time() -> None:
    """A host that issues a block in half the time does the framework's host work in half the time."""
    from simulator.training.llm.compute import ComputeParams
    work = HostWork({"host_collective_s": 100e-6, "fsdp_unit_host_s": 0.5e-3}, host_block_s=0.6e-3)
    faster = work.on(ComputeParams(host_block_s=0.3e-3))
    assert faster == pytest.approx({"host_collective_s": 50e-6, "fsdp_unit_host_s": 0.25e-3})
    assert work.on(ComputeParams(host_block_s=0.6e-3)) == pytest.approx(work.values)


@pytest.mark.parametrize("source_s, target_s", [(0.6e-3, 0.0), (0.0, 0.3e-3)])
def test_host_work_without_a_block_issue_time_is_an_input_error(source_s: float, target_s: float) -> None:
    """A host whose compute fit left host_block_s at 0 cannot carry host work: an error naming the key and
    its value, never a silent scale of 1."""
    from simulator.training.llm.compute import ComputeParams
    work = HostWork({"host_collective_s": 100e-6}, host_block_s=source_s)
    with pytest.raises(InputError, match="host_block_s") as err:
        work.on(ComputeParams(host_block_s=target_s))
    assert err.value.value == 0.0


@pytest.mark.parametrize("path, calibration, other", [(TWO, "h200-nvlink-2gpu", FOUR), (FOUR, "h200-nvlink", TWO)])
def test_fsdp_and_tp_runs_predicted_with_host_work_from_the_other_campaign(path: Path, calibration: str,
                                                                           other: Path, hosts: dict) -> None:
    summary = error_summary(predict_files([path], calibration, hosts[other][0]).errors)
    assert summary["fsdp"]["n"] == 8 and summary["fsdp"]["median_abs_pct"] <= 8 and summary["fsdp"]["spearman"] >= 0.8
    assert summary["tp"]["median_abs_pct"] <= 8 and summary["tp"]["spearman"] >= 0.85      # 0.89 on 4x H200


def test_hybrid_shard_over_one_rank_is_predicted_as_one_gpu() -> None:
    records = read_llm_records(TWO)
    run = next(r for r in records.runs if r.strategy == "hybrid_shard" and r.replicate == r.world)
    config, gpus = RealPredictor.config(run)
    assert gpus == 1 and config.fsdp == "full"           # FSDP1's NO_SHARD on a one-rank group
    run4 = next(r for r in read_llm_records(FOUR).runs if r.strategy == "hybrid_shard" and r.replicate == 2)
    config4, gpus4 = RealPredictor.config(run4)
    assert gpus4 == 4 and config4.fsdp_shard == 2


def test_accuracy_section_lists_every_campaign_and_runner() -> None:
    from validation.llm_real import CAMPAIGNS, ISSUE_CAMPAIGNS, OTHER_GPU_CAMPAIGNS, real_section
    lines, figs = real_section()
    rows = [line for line in lines if line.startswith(tuple(f"| {c[0]} " for c in CAMPAIGNS))]
    assert len(rows) == 5 * len(CAMPAIGNS)                                        # + the FSDP host fits
    assert sum(line.startswith("| h100x4_2026-11-26h") for line in lines) == 4 * len(OTHER_GPU_CAMPAIGNS)
    assert set(figs) == {c[0] for c in CAMPAIGNS} | {c[0] for c in OTHER_GPU_CAMPAIGNS} | {c[0] for c in ISSUE_CAMPAIGNS}
    probes = [line for line in lines if "| tp (issue probe loops) | 4 |" in line]
    assert len(probes) == len(ISSUE_CAMPAIGNS) and probes[1].endswith("| 3 of 4 |")     # recorded 22.4% (1 of 4) and 11.8% (3 of 4)
    # the host measured after the op-count backward and the host work in block issue units were fixed: 12.8%
    # with a fixed 2x backward and host work carried in seconds
    # with a fixed 2x backward and host work carried in seconds; 8.7% until the TP blocks had their own host term
    # and the host ran ahead of the GPU (stop 16)
    assert figs["h100x2_2026-11-26_tp2"]["tp"]["median_abs_pct"] == pytest.approx(4.7, abs=0.5)
    # 2x H200 probe host measured after that model was merged (lead's device call, 20:30): 4.0%; 6.0% since the
    # 4x H200 campaign's host work is fitted without its disturbed profile launch (validation.profile_launches);
    # 11.4% with the TP blocks' own host term (its fit: 0.96 ms per TP block, 0.80 unsharded)
    assert figs["h200x2_2026-11-26_tp"]["tp"]["median_abs_pct"] == pytest.approx(11.4, abs=0.5)
    assert probes[2].endswith("| 3 of 4 |")
    # 4x H200 probe host, predicted blind by main 73cb86f (lead's device call, 21:37): 6.9%, 3 of 4 inside; 4.6%
    # since the disturbed profile launch is left out; 3.4% with the TP blocks' own host term
    assert figs["h200x4_2026-11-26_tp"]["tp"]["median_abs_pct"] == pytest.approx(3.4, abs=0.5)
    # the first 2x H100 probe: 17.2% before the TP blocks' own host term, 8.3% with it
    assert figs["h100x2_2026-11-26_tp"]["tp"]["median_abs_pct"] == pytest.approx(8.3, abs=0.5)
    assert all(figs[c[0]][r]["median_abs_pct"] <= 8 for c in CAMPAIGNS for r in ("pp", "tp", "fsdp"))
    h100_tp = next(line for line in lines if line.startswith("| h100") and "| tp |" in line)
    # 2 of 4 with a fixed 2x backward issue and host work carried in seconds; 4 of 4 before the disturbed profile
    # launch of the 4x H200 campaign (which gives the host work) was left out; 3 of 4 with the TP blocks' own host term
    assert h100_tp.endswith("| 3 of 4 |")
    assert any(line.startswith("**TP blocks, pipeline stages and the host's run-ahead**") for line in lines)
    assert any(line.startswith("**Disturbed profile launches**") for line in lines)
    assert any("differ by up to 42%" in line for line in lines)
    # each issue probe's launch spread is computed (the 4x H100 probe's 64% was typed text until review s13)
    spread = next(line for line in lines if "A configuration's launches differ by up to" in line)
    assert "64% on `h100x4_2026-11-26_tp`" in spread and all(f"% on `{c[0]}`" in spread for c in ISSUE_CAMPAIGNS)
    assert any(line.startswith("| h2048 L4 s2048 mb1 tp=2 sp=on comm=on |") for line in lines)       # the issue probes' tables
    assert any(line.startswith("| h2048 L4 s2048 mb1 tp=4 sp=on comm=on |") for line in lines)


def test_h100_campaign_predicted_with_host_work_from_h200(hosts: dict) -> None:
    """4x H100 (another machine than the collective calibration's), host work from the 4x H200 campaign:
    the figures as first predicted (docs/accuracy.md section 7), pinned so that a change shows."""
    h100 = DATA / "h100x4_2026-11-26h" / "llm_world4.jsonl"
    result = predict_files([h100], "h100-nvlink-2gpu", hosts[FOUR][0])
    assert result.preset == "dgx-h100" and result.targets == 10         # + its 4 pipeline stages alone
    summary = error_summary(result.errors)
    expected = {"fsdp": (8, 2.4, 8.3), "tp": (4, 8.9, 24.7), "pp": (4, 0.2, 1.1)}
    # fsdp 2.6 / 5.4 before FSDP1's post-backward hook's kernels and reduction call were charged to the backward's
    # host (h14fsdp21);
    # pp 3.9 / 4.4 before the gradient accumulation of micro-batches 2..M and the send's call on the host (stop 18);
    # fsdp 2.9 / 8.4, tp 8.3 / 26.2, pp 6.8 / 8.2 before the TP blocks' own host term, the stage targets and the
    # host's run-ahead (stop 16);
    # fsdp 4.0 / 8.0, tp 7.9 / 21.3 while the 4x H200 campaign's host work was fitted with its disturbed profile
    # launch (validation.profile_launches);
    # fsdp 2.6 / 8.3, pp 6.5 / 8.4 before h100-nvlink-2gpu and h200-nvlink were refitted under the host issue's
    # overlap (#10, simulator/network/host_overlap.py);
    # fsdp 1.9 / 8.1, tp 7.9 / 21.4, pp 7.8 / 11.8 with 8 bytes per logit in the cross-entropy backward (22 now);
    # with a fixed 2x backward issue and the host work carried in seconds: fsdp 4.4 / 9.5, tp 8.9 / 27.0,
    # pp 6.9 / 10.4; fsdp 10.7 / 15.5 before the memory-traffic charge, 5.5 with it static; tp 13.3 / 25.0
    # with collectives after a pass
    for runner, (n, median, p90) in expected.items():
        s = summary[runner]
        assert s["n"] == n
        assert s["median_abs_pct"] == pytest.approx(median, abs=0.5)
        assert s["p90_abs_pct"] == pytest.approx(p90, abs=0.5)
    assert summary["pp"]["spearman"] == pytest.approx(1.0) and summary["fsdp"]["spearman"] >= 0.9


def test_no_shard_is_hybrid_over_one_rank_shards_and_unknown_strategies_fail() -> None:
    from dataclasses import replace
    run = next(r for r in read_llm_records(FOUR).runs if r.strategy == "full_shard")
    config, gpus = RealPredictor.config(replace(run, strategy="no_shard", replicate=4))
    assert gpus == 4 and config.fsdp == "hybrid" and config.fsdp_shard == 1
    with pytest.raises(InputError, match="strategy"):
        RealPredictor.config(replace(run, strategy="zero3"))


def test_residuals_show_each_compute_only_target(capsys: Any) -> None:
    assert main([str(FOUR), "--calibration", "h200-nvlink", "--residuals"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(("model ", "no-comm "))]
    assert len(rows) == 6 and all(line.rstrip().endswith("%") for line in rows)
    assert "compute-only target" in out


def test_predictions_equal_but_for_the_last_bit_tie_in_the_rank_correlation() -> None:
    """Two host-bound TP passes priced alike must tie, whichever way a refit's rounding breaks them
    (a calibration moved by 1e-9 once turned 0.89 into 0.74 on four configurations)."""
    from validation.llm_records import spearman
    measured = [8.46e-3, 10.2e-3, 9.27e-3, 11.9e-3]
    tied = spearman([8.628e-3, 11.145e-3, 8.628e-3, 11.145e-3], measured)
    assert spearman([8.628e-3 * (1 + 1e-15), 11.145e-3, 8.628e-3, 11.145e-3], measured) == tied
    assert spearman([8.628e-3, 11.145e-3 * (1 + 1e-15), 8.628e-3, 11.145e-3], measured) == tied


def test_values_straddling_a_rounding_boundary_still_tie() -> None:
    """2e-15 apart across a 9th-digit rounding boundary: rounding to 9 digits ordered them (rho 1.0)."""
    from validation.llm_records import spearman
    x, y = 1.000000005000001, 1.000000004999999
    assert spearman([x, y, 3, 4], [2, 1, 3, 4]) == spearman([x, x, 3, 4], [2, 1, 3, 4]) == pytest.approx(0.9487, abs=1e-4)
    assert spearman([1.0, 1.0 + 1e-6, 3, 4], [2, 1, 3, 4]) < 0.9     # values 1e-6 apart are ordered


def test_host_work_fit_is_made_once_per_file_state(tmp_path: Path) -> None:
    """The same files and calibration give the same fit (made once per process, each caller its own dict); a path
    that is not a file is an InputError naming it, not an OSError."""
    first, pct = host_work_from([TWO], "h200-nvlink-2gpu")
    again, pct2 = host_work_from([TWO], "h200-nvlink-2gpu")
    assert first == again and pct == pct2 and first.values is not again.values
    with pytest.raises(InputError, match="missing.jsonl"):
        host_work_from([tmp_path / "missing.jsonl"], "h200-nvlink-2gpu")


def test_cost_model_is_built_once_by_its_predictor() -> None:
    """review_s17c #20: the closed-form model of a server's GPUs is cached by the predictor that builds it (and the
    predictors with_compute derives), not in a module-level dict of validation.part_checks."""
    pred = RealPredictor("NVIDIA H100 80GB HBM3", "h100-nvlink-2gpu")
    model = pred.cost_model(2)
    assert pred.cost_model(2) is model and pred.with_compute(pred.compute).cost_model(2) is model
    assert pred.cost_model(4) is not model
    assert pred.collective_s("all_reduce", 1 << 20, 2) == float(model.time_s("all_reduce", 1 << 20))
