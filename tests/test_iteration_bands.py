"""90% intervals of DataParallel, LLM training and plan search predictions (simulator.training.iteration_bands,
validation.iteration_bands). Before, `gpunetsim ddp --strategy dataparallel`, `gpunetsim train` and `gpunetsim
search` printed no interval and their --json had no iteration_lo_s/iteration_hi_s."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import gpunetsim
from gpunetsim.cli import main
from simulator.collectives.params import load_calibration
from simulator.core.errors import InputError
from simulator.training import iteration_bands as sib
from simulator.training.llm.compute import ComputeParams, load_compute_params
from validation import iteration_bands as vib

DOC = Path(__file__).resolve().parents[1] / "docs" / "accuracy.md"
TINY = "hidden=1024,layers=8,heads=16,seq=1024"
TRAIN_STUDY = f"topology: dgx-a100\ntrain:\n  model: ['{TINY}']\n  tp: 8\n  global_batch: 16\n"
SEARCH_STUDY = (f"topology: dgx-a100\nsearch:\n  model: ['{TINY}']\n  gpus: [8]\n  global_batch: 16\n  micro_batches: [1]\n"
                "  recompute: [none]\n  sharding: [ddp]\n")


def _json(capsys, *argv: str):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def _holds(r: dict) -> None:
    assert r["iteration_lo_s"] is not None and r["iteration_hi_s"] is not None
    assert 0 < r["iteration_lo_s"] <= r["iteration_s"] <= r["iteration_hi_s"]
    assert r["iteration_hi_s"] > r["iteration_lo_s"]


def test_shipped_bands_exist_and_are_checked():
    for path in (sib.DATAPARALLEL_FILE, sib.TRAIN_FILE):
        b = sib.bands(path)
        assert set(b) == set(sib.KINDS)
        for band in b.values():
            assert band["level"] == 0.9 and band["datasets"] and 0 <= band["coverage_pct"] <= 100


@pytest.mark.parametrize("calibration, kind", [(None, "datasheet"), ("h200-dataparallel", "calibrated")])
def test_dataparallel_json_text_and_api_carry_the_band(capsys, calibration, kind):
    extra = ["--calibration", calibration] if calibration else []
    argv = ["ddp", "--strategy", "dataparallel", "--topology", "hgx-h200", "--gpus", "4", "--workload", "resnet50",
            *extra]
    r = _json(capsys, *argv, "--json")
    _holds(r)
    assert r["ddp_iteration_lo_s"] <= r["ddp_iteration_s"] <= r["ddp_iteration_hi_s"]
    band = sib.bands(sib.DATAPARALLEL_FILE)[kind]["log_ratio"]
    assert r["iteration_hi_s"] / r["iteration_s"] == pytest.approx(math.exp(max(band[2], 0.0)))
    assert r["iteration_lo_s"] / r["iteration_s"] == pytest.approx(math.exp(min(band[0], 0.0)))
    assert main(argv) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("90% interval"))
    assert f"{kind} host keys" in line
    api = gpunetsim.dataparallel(topology="hgx-h200", gpus=4, workload="resnet50", calibration=calibration)
    assert (api.iteration_lo_s, api.iteration_hi_s) == pytest.approx((r["iteration_lo_s"], r["iteration_hi_s"]))


def test_band_kind_follows_the_fitted_keys():
    assert sib.dataparallel_kind(load_calibration(None)) == "datasheet"
    assert sib.dataparallel_kind(load_calibration("h200-nvlink")) == "datasheet"      # no dp. key fitted
    assert sib.dataparallel_kind(load_calibration("h200-dataparallel")) == "calibrated"
    assert sib.train_kind(ComputeParams(), "A100-SXM-80GB") == "datasheet"
    assert sib.train_kind(load_compute_params("h200-nvlink"), "H200-SXM") == "datasheet"   # no llm block: defaults
    assert sib.train_kind(load_compute_params("a100-megatron"), "A100-SXM-80GB") == "calibrated"


@pytest.mark.parametrize("calibration, kind", [(None, "datasheet"), ("a100-megatron", "calibrated")])
def test_train_json_and_text_carry_the_band(capsys, calibration, kind):
    extra = ["--calibration", calibration] if calibration else []
    argv = ["train", "--topology", "dgx-a100", "--model-spec", "hidden=1024,layers=8,heads=16,seq=1024",
            "--tp", "2", "--pp", "2", "--global-batch", "8", *extra]
    r = _json(capsys, *argv, "--json")
    _holds(r)
    band = sib.bands(sib.TRAIN_FILE)[kind]["log_ratio"]
    centre = max(r["iteration_s"], r["host_floor_s"]) if kind == "datasheet" else r["iteration_s"]   # host floor
    assert r["iteration_hi_s"] / centre == pytest.approx(math.exp(max(band[2], 0.0)))
    assert main(argv) == 0
    assert any("90% interval" in x and f"{kind} compute" in x for x in capsys.readouterr().out.splitlines())


def test_search_plans_and_table_carry_the_band(capsys):
    argv = ["search", "--model-spec", "hidden=1024,layers=8,heads=16,seq=1024", "--topology", "dgx-a100",
            "--gpus", "8", "--global-batch", "16", "--micro-batches", "1", "--recompute", "none", "--top", "3"]
    out = _json(capsys, *argv, "--json")
    assert out["plans"]
    for p in out["plans"]:
        _holds(p)
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(x for x in lines if x.lstrip().startswith("# cluster")).split()
    assert head[head.index("iter(s)") + 1:head.index("iter(s)") + 5] == ["90%", "lo", "90%", "hi"]
    first = next(x for x in lines if x.lstrip().startswith("1 ")).split()
    i = first.index(f"{out['plans'][0]['iteration_s']:.3f}")
    assert float(first[i + 1]) == pytest.approx(out["plans"][0]["iteration_lo_s"], abs=1e-3)
    assert float(first[i + 2]) == pytest.approx(out["plans"][0]["iteration_hi_s"], abs=1e-3)


def test_study_rows_of_train_dataparallel_and_search_carry_the_band(tmp_path):
    from gpunetsim.study import evaluate, load_study
    f = tmp_path / "s.yaml"
    f.write_text(TRAIN_STUDY)
    _holds(evaluate(load_study(f).points[0]))
    f.write_text("model: resnet50\ntopology: hgx-h200\ngpus: 2\nengine: closed\nstrategy: dataparallel\n")
    _holds(evaluate(load_study(f).points[0]))
    f.write_text(SEARCH_STUDY)
    _holds(evaluate(load_study(f).points[0]))


def test_plan_study_table_prints_the_interval(tmp_path, capsys):
    from gpunetsim.search_study import print_search_table
    from gpunetsim.study import evaluate, load_study
    f = tmp_path / "s.yaml"
    f.write_text(SEARCH_STUDY)
    row = evaluate(load_study(f).points[0])
    print_search_table([row])
    head, line = capsys.readouterr().out.splitlines()[1:3]
    assert "90% lo" in head and "90% hi" in head
    cols = line.split()
    i = cols.index(f"{row['iteration_s']:.3f}")
    assert cols[i + 1:i + 3] == [f"{row['iteration_lo_s']:.3f}", f"{row['iteration_hi_s']:.3f}"]


def test_train_study_table_prints_the_interval(tmp_path, capsys):
    from gpunetsim.study import evaluate, load_study
    from gpunetsim.train_study import print_train_table
    f = tmp_path / "s.yaml"
    f.write_text(TRAIN_STUDY)
    row = evaluate(load_study(f).points[0])
    print_train_table([row])
    lines = capsys.readouterr().out.splitlines()
    assert "90% lo" in lines[0] and "90% hi" in lines[0]
    assert f"{row['iteration_lo_s']:.3f}" in lines[1] and f"{row['iteration_hi_s']:.3f}" in lines[1]


def test_interval_always_holds_the_prediction():
    """A band wholly above 0 (every held-out run slower than predicted) still holds the prediction."""
    assert sib.interval(2.0, {"log_ratio": [0.1, 0.2, 0.3]}) == pytest.approx((2.0, 2.0 * math.exp(0.3)))
    assert sib.interval(2.0, {"log_ratio": [-0.3, -0.2, -0.1]}) == pytest.approx((2.0 * math.exp(-0.3), 2.0))
    assert sib.interval(2.0, None) == (None, None)


@pytest.mark.parametrize("band, field", [([], "datasheet"), ({"level": 2, "log_ratio": [0, 0, 0]}, "datasheet.level"),
                                         ({"level": 0.9, "log_ratio": [1, 0, 2]}, "datasheet.log_ratio"),
                                         ({"level": 0.9, "log_ratio": [0, "x", 1]}, "datasheet.log_ratio")])
def test_bad_band_names_the_field(band, field):
    with pytest.raises(InputError) as e:
        sib.check_band(band, "f.json", field.split(".")[0])
    assert e.value.field == field and e.value.source == "f.json"


def test_datasets_weigh_the_same_and_coverage_leaves_each_out():
    groups = {"big": [0.0] * 1000, "small": [1.0] * 10}
    # each dataset weighs half: the upper quartile is the small one's (by points it would be the big one's 0)
    assert vib.weighted_quantiles(groups, [0.25, 0.75]) == pytest.approx([0.0, 1.0])
    rows = {r[0]: r for r in vib.lodo_rows({"a": [0.0, 0.1], "b": [0.05, 0.08], "c": [1.0, 1.0]})}
    assert rows["c"][4] == 0                                  # the others' band (within 0.1) misses c
    assert rows["a"][4] == 100 and rows["b"][4] == 100        # c widens the others' band to 1.0
    cov, mean_cov, width = vib.summary(list(rows.values()))
    assert cov == pytest.approx(200 / 3) and mean_cov == pytest.approx(200 / 3) and width > 0


def test_accuracy_report_quotes_the_shipped_bands():
    """docs/accuracy.md (the generated report) says the shipped band files hold the bands built from its residuals."""
    text = DOC.read_text()
    for name in ("dataparallel.json", "train.json"):
        assert f"calibrations/uncertainty/{name}` holds these bands" in text
    assert "differs from these bands" not in text


def test_compare_rows_carry_the_interval_and_its_coverage(capsys):
    """gpunetsim compare: every collective and DDP row has predicted_lo_s <= predicted_s <= predicted_hi_s, and the
    summaries the measurements' coverage (before: no interval in compare's output)."""
    data = Path(__file__).resolve().parents[1] / "validation" / "data" / "h200x4_2026-11-26b"
    argv = ["compare", "--measurements", str(data / "coll_world4.jsonl"), str(data / "ddp_world4.jsonl"),
            "--profiles", *(str(p) for p in sorted(data.glob("profile_*.json"))), "--calibration", "h200-nvlink",
            "--html", ""]
    assert main([*argv, "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    points = [r for r in rows if "kind" in r]
    assert {r["kind"] for r in points} == {"coll", "ddp"}
    for r in points:
        assert 0 < r["predicted_lo_s"] <= r["predicted_s"] <= r["predicted_hi_s"]
    inside = [r["predicted_lo_s"] <= r["measured_s"] <= r["predicted_hi_s"] for r in points if r["kind"] == "coll"]
    assert rows[-1]["summary"]["interval_coverage_pct"] == pytest.approx(100 * sum(inside) / len(inside))
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.count("90% lo") == 2 and "inside the 90% interval" in text


A100, H100 = "A100-SXM-80GB", "H100-SXM"
MEGATRON_22B = ["train", "--nodes", "1", "--model", "megatron-22b", "--tp", "8", "--global-batch", "4",
                "--micro-batch", "4", "--recompute", "selective", "--sequence-parallel", "--dtype", "fp16"]


def test_a_compute_set_takes_the_calibrated_bands_only_on_the_gpu_it_was_fitted_on(capsys):
    """Review s15 #8 / s16 #1: every calibrated dataset pairs a fitted set with runs of its own GPU model, so
    a100-megatron (fitted on A100s) used on an H100 takes the datasheet band, for the iteration and the compute
    parts, and says why; on an A100 it keeps the calibrated bands."""
    cp = load_compute_params("a100-megatron")
    assert cp.fitted_gpus == (A100,)
    assert sib.train_kind(cp, A100) == "calibrated" and sib.train_kind(cp, H100) == "datasheet"
    h100 = _json(capsys, *MEGATRON_22B, "--topology", "dgx-h100", "--calibration", "a100-megatron", "--json")
    sheet = sib.bands(sib.TRAIN_FILE)["datasheet"]["log_ratio"]
    assert h100["iteration_hi_s"] / h100["iteration_s"] == pytest.approx(math.exp(sheet[2]))
    compute = sib.bands(sib.COMPUTE_FILE)["datasheet"]["log_ratio"]
    assert h100["compute_hi_s"] / h100["compute_s"] == pytest.approx(math.exp(compute[2]))
    assert any("a100-megatron fitted on A100-SXM-80GB, used on H100-SXM" in c for c in h100["iteration_extrapolated"])
    assert any("used on H100-SXM" in c for c in h100["parts_extrapolated"])
    a100 = _json(capsys, *MEGATRON_22B, "--topology", "dgx-a100", "--calibration", "a100-megatron", "--json")
    cal = sib.bands(sib.TRAIN_FILE)["calibrated"]["log_ratio"]
    assert a100["iteration_hi_s"] / a100["iteration_s"] == pytest.approx(math.exp(cal[2]))
    assert not any("fitted on" in c for c in a100["iteration_extrapolated"])
    assert main([*MEGATRON_22B, "--topology", "dgx-h100", "--calibration", "a100-megatron"]) == 0
    text = capsys.readouterr().out
    assert "datasheet compute)" in text and "(caveats of the interval: compute set a100-megatron" in text


def test_fitted_gpus_come_from_llm_gpus_or_the_pass_profile_and_bad_names_are_refused(tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"llm": {"host_block_s": 0.001}, "llm_gpus": ["h100"]}))
    assert load_compute_params(str(f)).fitted_gpus == (H100,)
    f.write_text(json.dumps({"llm": {"host_block_s": 0.001}}))
    cp = load_compute_params(str(f))
    assert cp.fitted_gpus == () and sib.train_kind(cp, H100) == "datasheet"
    assert any("no GPU it names" in c for c in sib.train_caveats(cp, H100))
    for bad in (["tpu-v9"], "h100", [3]):
        f.write_text(json.dumps({"llm": {"host_block_s": 0.001}, "llm_gpus": bad}))
        with pytest.raises(InputError, match="llm_gpus"):
            load_compute_params(str(f))


def test_a_band_wholly_above_its_prediction_says_so(capsys):
    """Review s15 #2 / s16 #3: the datasheet bands' 5% quantiles are above 0 (every held-out run slower than
    predicted), so the interval starts at the prediction; the output says the model is biased there."""
    band = {"level": 0.9, "log_ratio": [0.1, 0.5, 1.0]}
    (c,) = sib.caveats(band)
    assert "lies above the prediction" in c and "1.11-2.72x" in c and "median 1.65x" in c
    assert "lies below" in sib.caveats({"level": 0.9, "log_ratio": [-1.0, -0.5, -0.1]})[0]
    assert sib.caveats({"level": 0.9, "log_ratio": [-0.1, 0.0, 0.1]}) == ()
    r = _json(capsys, *MEGATRON_22B, "--topology", "dgx-a100", "--json")
    assert not any("lies above" in c for c in r["iteration_extrapolated"])   # centred on the host floor since s20
    assert any("lies above the prediction" in c for c in r["parts_extrapolated"])


def test_bands_record_their_runs_domain_and_flag_predictions_outside_it(capsys):
    """Review s15 #9: the DataParallel and train bands record the GPU models and GPU counts of their runs; a
    prediction outside them says it extrapolates (as DDP's intervals do)."""
    band = {"level": 0.9, "log_ratio": [-0.1, 0.0, 0.1], "domain": {"gpus": [H100], "world": [2, 4]}}
    assert sib.caveats(band, H100, 4) == ()
    assert sib.caveats(band, H100, 8) == ("8 GPUs (the band's runs: 2-4 GPUs)",)
    assert sib.caveats(band, A100, 1) == ("1 GPUs (the band's runs: 2-4 GPUs)", f"{A100} (the band's runs: {H100})")
    for path in (sib.DATAPARALLEL_FILE, sib.TRAIN_FILE, sib.COMPUTE_FILE):
        for b in sib.bands(path).values():
            assert b["domain"]["gpus"] and 1 <= b["domain"]["world"][0] <= b["domain"]["world"][1]
    dp = sib.bands(sib.DATAPARALLEL_FILE)["datasheet"]["domain"]
    assert dp["world"] == [2, 4] and set(dp["gpus"]) == {"H100-SXM", "H200-SXM"}
    argv = ["ddp", "--strategy", "dataparallel", "--topology", "hgx-h200", "--workload", "resnet50"]
    assert _json(capsys, *argv, "--gpus", "8", "--json")["iteration_extrapolated"] == [
        "8 GPUs (the band's runs: 2-4 GPUs)"]
    assert _json(capsys, *argv, "--gpus", "4", "--json")["iteration_extrapolated"] == []
    assert main([*argv, "--gpus", "8"]) == 0
    assert "(caveats of the interval: 8 GPUs (the band's runs: 2-4 GPUs))" in capsys.readouterr().out
    r = _json(capsys, "train", "--topology", "hgx-b200", "--model-spec", TINY, "--tp", "8", "--global-batch", "8",
              "--json")
    assert any(c.startswith("B200 (the band's runs:") for c in r["iteration_extrapolated"])


def test_band_domain_is_checked_on_read(tmp_path):
    for bad in ({"gpus": [], "world": [2, 4]}, {"gpus": ["H100-SXM"], "world": [4, 2]},
                {"gpus": ["H100-SXM"], "world": [0, 2]}, {"gpus": ["H100-SXM"]}, "H100"):
        with pytest.raises(InputError, match="domain"):
            sib.check_band({"level": 0.9, "log_ratio": [0, 0, 0], "domain": bad}, "f.json", "datasheet")


def test_folder_domain_counts_a_campaigns_runs_only():
    """h200x2_2026-11-26c also holds 4-rank gloo loops: its LLM runs are 2 GPUs; its DataParallel runs 2."""
    assert vib.folder_domain("h200x2_2026-11-26c") == (frozenset({"H200-SXM"}), frozenset({2}))
    assert vib.folder_domain("h100x4_2026-11-26_tp") == (frozenset({H100}), frozenset({4}))     # TP issue probes
    assert vib.domain({"a": [0.1], "Selene": [0.2], "empty": []}, {"a": ({H100}, {2}), "Selene": ({A100}, {64, 3072})}) \
        == {"gpus": [A100, H100], "world": [2, 3072]}


def test_a_band_takes_the_domain_its_caller_knows_without_reading_folders():
    """Review s17 #13: validation.part_checks knows its bands' domain (GPUs, group sizes, bytes per call); make_band
    takes it instead of reading every campaign folder for one it threw away (these datasets are no folders)."""
    covers = {"gpus": [H100], "world": [2, 4], "call_bytes": [1024, 4096]}
    band = vib.make_band({"no-such-folder": [0.1, 0.2], "nor-this": [0.0]}, "test", covers=covers)
    assert band["domain"] == covers and band["datasets"] == {"no-such-folder": 2, "nor-this": 1}
    with pytest.raises(ValueError, match="no-such-folder"):
        vib.make_band({"no-such-folder": [0.1, 0.2]}, "test")      # without it, the folders are read
