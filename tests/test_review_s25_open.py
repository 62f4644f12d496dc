"""The five findings review s25 (/work/notes/review_s25.md #13, #15, #16, #17) left open: a calibration used on
another GPU says so, ``TrainResult.bounds`` refuses a part that does not exist, ``sweep --resume`` counts (or
refuses) records that match no point, ``--scheduler`` is checked before anything runs, and the API's switch
errors are worded for Python."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import gpunetsim
from gpunetsim.cli import main
from simulator.collectives.params import SHIPPED_DIR, load_calibration
from simulator.core.errors import InputError


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


# --------------------------------------------------------------- a calibration used on another GPU (#13)
def _gpu_reasons(r) -> list[str]:
    return [w for w in r.extrapolated if w.startswith("GPU ")]


def test_a_calibration_on_another_gpu_says_the_gpu_differs_and_which_interval_it_keeps():
    """h200-nvlink (measured on hgx-h200) on dgx-a100 said only '8 GPUs (fitted on 2, 4)'."""
    r = gpunetsim.collective(topology="dgx-a100", size_bytes="64M", calibration="h200-nvlink")
    assert _gpu_reasons(r) == ["GPU A100 SXM (calibration measured on H200 SXM): the interval is the "
                               "calibration's, not widened for another GPU"]
    assert any(w.startswith("8 GPUs") for w in r.extrapolated)


def test_the_gpu_reason_widens_nothing():
    params = load_calibration("h200-nvlink")
    assert params.fitted_gpu_model == "H200 SXM"
    said = gpunetsim.collective(topology="dgx-a100", size_bytes="64M", calibration=params)
    unsaid = gpunetsim.collective(topology="dgx-a100", size_bytes="64M",
                                  calibration=replace(params, fitted_gpu_model=None))
    assert not _gpu_reasons(unsaid)
    assert (said.time_s, said.time_lo_s, said.time_hi_s) == (unsaid.time_s, unsaid.time_lo_s, unsaid.time_hi_s)


def test_the_same_gpu_gives_no_gpu_reason():
    r = gpunetsim.collective(topology="hgx-h200", nodes=2, size_bytes="64M", calibration="h200-nvlink")
    assert not _gpu_reasons(r) and r.extrapolated      # 16 GPUs and the network: said as before


def test_a_calibration_without_intervals_says_the_interval_is_the_datasheets(tmp_path):
    data = json.loads((SHIPPED_DIR / "h200-nvlink.json").read_text())
    del data["uncertainty"]
    f = tmp_path / "no_unc.json"
    f.write_text(json.dumps(data))
    r = gpunetsim.collective(topology="dgx-a100", size_bytes="64M", calibration=str(f))
    assert len(_gpu_reasons(r)) == 1 and "the datasheet's (uncalibrated" in _gpu_reasons(r)[0]


def test_a_calibration_on_another_gpu_says_so_in_the_table(capsys):
    code, out, _ = run(capsys, ["collective", "--topology", "dgx-a100", "--calibration", "h200-nvlink",
                                "-b", "1M", "-e", "1M"])
    assert code == 0 and "GPU A100 SXM (calibration measured on H200 SXM)" in out


def test_topology_metadata_that_names_no_preset_is_not_refused(tmp_path):
    data = json.loads((SHIPPED_DIR / "h200-nvlink.json").read_text())
    data["topology"] = {"preset": None, "source": "my.yaml"}
    f = tmp_path / "file_topo.json"
    f.write_text(json.dumps(data))
    assert load_calibration(str(f)).fitted_gpu_model is None


# --------------------------------------------------------------- TrainResult.bounds of an unknown part (#15)
@pytest.fixture(scope="module")
def train_result():
    return gpunetsim.train(topology="dgx-h100", model="llama-2-7b", tp=8, global_batch=8)


def test_bounds_of_a_part_is_its_interval(train_result):
    lo, hi = train_result.bounds("compute")
    assert lo <= train_result.compute_s <= hi


@pytest.mark.parametrize("part", ["typo", "tp", "compute_s", "iteration"])
def test_bounds_refuses_a_part_that_does_not_exist(train_result, part):
    """It returned None, as for a part without an interval."""
    with pytest.raises(InputError) as e:
        train_result.bounds(part)
    assert e.value.value == part and "compute, tp_comm, pp_comm" in e.value.message


# --------------------------------------------------------------- sweep --resume and --scheduler (#16)
STUDY = "name: t\nmodel: [resnet50]\ntopology: hgx-h200\ngpus: [2, 4]\nengine: closed\n"


@pytest.fixture
def finished(tmp_path) -> tuple[Path, Path]:
    """A study and the folder of its finished run."""
    s, out = tmp_path / "s.yaml", tmp_path / "o"
    s.write_text(STUDY)
    assert main(["sweep", str(s), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    return s, out


def test_resume_counts_the_records_that_match_no_point(finished, tmp_path, capsys):
    s, out = finished
    capsys.readouterr()
    changed = tmp_path / "changed.yaml"
    changed.write_text(STUDY.replace("gpus: [2, 4]", "gpus: [2, 8]"))
    code, _, err = run(capsys, ["sweep", str(changed), "--out", str(out), "--workers", "1", "--no-progress",
                                "--resume"])
    assert code == 0
    assert "resume: 1 of 2 points already in" in err
    assert "1 of its records match no point of this study (its axes changed) and are dropped" in err


def test_resume_into_another_studys_results_is_refused_and_keeps_them(finished, tmp_path, capsys):
    s, out = finished
    before = (out / "results.jsonl").read_bytes()
    capsys.readouterr()
    other = tmp_path / "other.yaml"
    other.write_text(STUDY.replace("gpus: [2, 4]", "gpus: [8]"))
    code, _, err = run(capsys, ["sweep", str(other), "--out", str(out), "--workers", "1", "--no-progress",
                                "--resume"])
    assert code != 0 and "--resume" in err and "none of the 2 records" in err
    assert (out / "results.jsonl").read_bytes() == before and (out / "report.html").exists()


def test_resume_of_the_same_study_says_nothing_of_dropped_records(finished, capsys):
    s, out = finished
    capsys.readouterr()
    code, _, err = run(capsys, ["sweep", str(s), "--out", str(out), "--no-progress", "--resume"])
    assert code == 0 and "resume: 2 of 2 points" in err and "dropped" not in err


@pytest.mark.parametrize("address", ["bogus", ""])
def test_a_bad_scheduler_is_refused_before_the_run_touches_anything(finished, capsys, address):
    """It was refused only after the progress bar had started and --out had been cleared."""
    s, out = finished
    before = sorted(p.name for p in out.iterdir())
    capsys.readouterr()
    code, _, err = run(capsys, ["sweep", str(s), "--out", str(out), "--scheduler", address])
    assert code != 0 and "--scheduler: expected a scheduler address" in err
    assert "pt/s" not in err and "it/s" not in err and "0/2" not in err       # no progress bar
    assert sorted(p.name for p in out.iterdir()) == before


def test_stream_points_refuses_a_bad_scheduler_before_its_progress_bar(monkeypatch):
    import tqdm
    from gpunetsim.study_run import stream_points
    started = []
    monkeypatch.setattr(tqdm, "tqdm", lambda *a, **k: started.append(1))
    with pytest.raises(InputError) as e:
        stream_points([], lambda o: None, scheduler="bogus")
    assert e.value.field == "--scheduler" and not started


# --------------------------------------------------------------- the API's switch errors (#17)
@pytest.mark.parametrize("call, field", [
    (lambda: gpunetsim.collective(nodes=2, size_bytes="1M", sharp="no"), "sharp"),
    (lambda: gpunetsim.collective(size_bytes="1M", no_p2p="yes"), "no_p2p"),
    (lambda: gpunetsim.ddp(topology="hgx-h200", gpus=2, workload="resnet50", gradient_as_bucket_view="yes"),
     "gradient_as_bucket_view"),
    (lambda: gpunetsim.train(topology="dgx-h100", model="llama-2-7b", tp=8, global_batch=8,
                             sequence_parallel="yes"), "--sequence-parallel"),
])
def test_an_api_switch_error_reads_as_python(call, field):
    """They said 'expected true or false (unquoted)', a YAML file's wording."""
    with pytest.raises(InputError) as e:
        call()
    assert e.value.field == field and e.value.message == "must be True or False"


def test_a_files_switch_error_keeps_the_files_wording(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text("name: t\np2p: 'no'\nnodes: [{name: g0}, {name: g1}]\n"
                 "links: [{a: g0, b: g1, kind: pcie, bandwidth: 25 GB/s}]\n")
    with pytest.raises(InputError) as e:
        gpunetsim.collective(topology=str(f), size_bytes="1M")
    assert e.value.message == "expected true or false (unquoted)"
