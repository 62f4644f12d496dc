"""What a new user meets first on the LLM and calibration paths (issues 10 and 14, audited from a fresh
clone): every bad input is one line naming the option or study field at fault, a study's defaults are
the CLI's, and the commands write their files even when the reader of their output stops early."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpunetsim.cli import main
from simulator.core.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
SPEC = "hidden=1024,layers=8,heads=16,seq=1024"
TRAIN = ["train", "--topology", "dgx-a100", "--nodes", "1", "--model-spec", SPEC, "--global-batch", "8"]


def _one_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and "Traceback" not in cap.err
    return cap.err


@pytest.mark.parametrize("extra, text", [
    (["--tp", "0"], "--tp: must be a positive integer (got 0)"),
    (["--tp", "-2"], "--tp: must be a positive integer (got -2)"),
    (["--pp", "0"], "--pp: must be a positive integer (got 0)"),
    (["--tp", "3"], "--tp: tp x pp = 3 x 1 = 3 does not divide the 8 GPUs"),
    (["--tp", "4", "--pp", "4"], "--pp: tp x pp = 4 x 4 = 16 does not divide the 8 GPUs"),
    (["--seq", "0"], "--seq: must be a positive integer (got 0)"),
])
def test_train_sizes_name_the_option_at_fault(capsys, extra, text):
    """``--tp 0`` used to be reported as ``--pp: ... (got 1)``: the option and value the user gave."""
    assert text in _one_error(capsys, TRAIN + extra)


def _study(tmp_path: Path, train: str) -> Path:
    f = tmp_path / "s.yaml"
    f.write_text(f"topology: dgx-a100\nnodes: 1\ntrain:\n  model: ['{SPEC}']\n{train}")
    return f


def test_study_interleaved_takes_the_cli_default_of_two_chunks(tmp_path, capsys):
    """A study's ``schedule: interleaved`` without ``virtual_stages`` ran one chunk per stage (a 1F1B
    timeline under the interleaved label); ``gpunetsim train`` takes 2."""
    from gpunetsim.study import evaluate, load_study
    (point,) = load_study(_study(tmp_path, "  pp: 2\n  global_batch: 16\n  schedule: interleaved\n")).points
    row = evaluate(point)
    assert main(TRAIN[:-1] + ["16", "--pp", "2", "--schedule", "interleaved", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert row["virtual_stages"] == cli["virtual_stages"] == 2
    assert row["iteration_s"] == pytest.approx(cli["iteration_s"], rel=1e-12)


@pytest.mark.parametrize("train, field", [("  tp: 3\n  global_batch: 8\n", "train.tp"),
                                          ("  global_batch: 7\n", "train.global_batch"),
                                          ("  global_batch: 8\n  sequence_parallel: true\n", "train.sequence_parallel")])
def test_study_train_failures_name_the_point_and_the_study_field(tmp_path, train, field):
    from gpunetsim.study import evaluate, load_study
    from gpunetsim.study_output import describe
    (point,) = load_study(_study(tmp_path, train)).points
    assert describe(point).startswith(f"#0 train {SPEC} tp=") and " 0 B" not in describe(point)
    with pytest.raises(InputError) as e:
        evaluate(point)
    assert e.value.field == field


def test_study_model_file_error_keeps_the_file_and_its_field(tmp_path):
    from gpunetsim.study import load_study
    (tmp_path / "m.yaml").write_text("hidden: 1024\nlayerz: 8\nheads: 16\nseq: 1024\n")
    f = tmp_path / "s.yaml"
    f.write_text("train:\n  model: [m.yaml]\n  global_batch: 8\n")
    with pytest.raises(InputError) as e:
        load_study(f)
    assert "train.model[0]: " in str(e.value) and "m.yaml: layerz: unknown field" in str(e.value)


def test_study_model_files_are_found_from_the_study_folder(tmp_path, monkeypatch):
    """Relative paths of a study are taken from its folder: ``train.model`` and ``search.model`` were
    taken from the working directory, so a sweep run from elsewhere did not find its model file."""
    from gpunetsim.study import evaluate, load_study
    (tmp_path / "m.yaml").write_text("hidden: 1024\nlayers: 8\nheads: 16\nseq: 1024\n")
    f = tmp_path / "s.yaml"
    f.write_text("topology: dgx-a100\ntrain:\n  model: [m.yaml]\n  tp: 8\n  global_batch: 8\n"
                 "search:\n  model: [m.yaml]\n  gpus: [8]\n  global_batch: 8\n  micro_batches: [1]\n")
    monkeypatch.chdir(tmp_path.parent)
    rows = [evaluate(p) for p in load_study(f).points]
    assert [r["kind"] for r in rows] == ["train", "search"] and all(r["iteration_s"] > 0 for r in rows)


SEARCH = ["search", "--model-spec", SPEC, "--gpus", "8"]


@pytest.mark.parametrize("extra, text", [
    (["--global-batch", "0"], "--global-batch: must be a positive integer (got 0)"),
    (["--global-batch", "16", "--micro-batches", "3"], "--global-batch: no plan to try"),
])
def test_search_without_a_plan_to_try_is_an_error(capsys, extra, text):
    """Both used to print 'no plan fits in memory' and exit 0."""
    assert text in _one_error(capsys, SEARCH + extra)


def test_pass_profile_unknown_gpu_names_its_entry(tmp_path, capsys):
    entry = {"gpu": "z100", "hidden": 1024, "heads": 16, "seq": 1024, "ffn": 4096, "vocab": 51200, "tp": 1,
             "micro_batch": 1, "dtype": "bf16", "recompute": "none", "sequence_parallel": False,
             "flash_attention": False, "block_pass_s": 0.001, "microbatch_s": 0.01}
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"format": "gpunetsim-calibration/1", "params": {}, "pass_profile": [entry]}))
    assert "c.json: pass_profile[0].gpu: unknown GPU" in _one_error(capsys, TRAIN + ["--calibration", str(f)])


HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong"
          "     time   algbw   busbw #wrong\n")


@pytest.mark.parametrize("content, text", [("", "the file is empty"), ("\n  \n", "the file is empty"),
                                           (HEADER, "a result table header but no result rows")])
def test_measurement_files_without_points_say_why(tmp_path, capsys, content, text):
    f = tmp_path / "all_reduce_perf.txt"
    f.write_text(content)
    err = _one_error(capsys, ["calibrate", "--measurements", str(f), "--topology", "dgx-h100", "--gpus", "2",
                              "--out", str(tmp_path / "c.json")])
    assert "all_reduce_perf.txt: " + text in err


def test_a_reader_that_stops_early_does_not_cost_the_files(tmp_path):
    """``gpunetsim sweep s.yaml | head``: the table's first print used to end the command (exit 0)
    before report.html and results.csv were written."""
    study = _study(tmp_path, "  tp: [1, 2, 4, 8]\n  global_batch: 8\n")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-m", "gpunetsim", "sweep", str(study), "--workers", "1",
                          "--no-progress", "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, cwd=tmp_path)
    p.stdout.close()                        # the reader is gone before the first line
    err = p.stderr.read().decode()
    assert p.wait() == 0, err
    assert {"report.html", "results.csv", "results.jsonl"} <= {f.name for f in out.iterdir()}
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_gpus_says_which_measured_points_it_leaves_out(tmp_path, capsys):
    """``calibrate --measurements world2 world4 --gpus 4`` fitted the world-4 points alone without a word."""
    data = ROOT / "validation" / "data" / "h200x4_2026-11-26b"
    argv = ["calibrate", "--measurements", str(data / "coll_world2.jsonl"), str(data / "coll_world4.jsonl"),
            "--topology", "hgx-h200", "--gpus", "4", "--out", str(tmp_path / "c.json")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "keeps the points measured on 4 ranks" in err and "on world sizes 2 are left out" in err


@pytest.mark.parametrize("text", ["hidden: 1024\nlayers: 8\nheads: 16\nseq: 1024\nhidden: 2048\n",
                                  "train:\n  model: [llama-3-8b]\n  tp: 2\n  tp: 4\n"])
def test_a_yaml_key_given_twice_is_an_error(tmp_path, capsys, text):
    """YAML keeps the last of two equal keys without a word: a model file's second ``hidden`` or a study's
    second ``tp`` changed the prediction silently."""
    f = tmp_path / "f.yaml"
    f.write_text(text)
    argv = TRAIN[:5] + ["--model", str(f), "--global-batch", "8"] if "hidden" in text else ["sweep", str(f)]
    err = _one_error(capsys, argv)
    assert "f.yaml: " in err and "given twice (lines " in err


def test_yaml_merge_keys_may_still_be_overridden():
    from simulator.core.inputs import parse_yaml
    data = parse_yaml("base: &b {hidden: 1024, layers: 4}\nm:\n  <<: *b\n  hidden: 2048\n", "m.yaml")
    assert data["m"] == {"hidden": 2048, "layers": 4}


def test_a_json_key_given_twice_is_an_error(tmp_path, capsys):
    f = tmp_path / "cal.json"
    f.write_text('{"format": "gpunetsim-calibration/1", "params": {"call_overhead_s": 1e-5, "call_overhead_s": 2e-5}}')
    err = _one_error(capsys, ["collective", "--topology", "dgx-h100", "--gpus", "2", "--calibration", str(f)])
    assert "cal.json: call_overhead_s: given twice" in err


def test_a_jsonl_key_given_twice_is_an_error_naming_its_line():
    """review_s17c #16: a measurement line with a key twice kept the last value silently (JSONL skipped the check)."""
    from simulator.core.errors import InputError
    from simulator.core.inputs import jsonl_records
    text = '{"kind": "coll", "time_s": 1e-5}\n{"kind": "coll", "time_s": 1e-5, "time_s": 2e-5}\n'
    with pytest.raises(InputError) as e:
        list(jsonl_records(text, "m.jsonl"))
    assert str(e.value).startswith("m.jsonl: line 2, time_s: given twice")


@pytest.mark.parametrize("argv, option", [
    (TRAIN + ["--gpu", "zz"], "--gpu"),
    (["ddp", "--topology", "dgx-a100", "--nodes", "1", "--workload", "resnet50", "--gpu", "zz"], "--gpu"),
    (TRAIN[:3] + ["--nodes", "0"] + TRAIN[5:], "--nodes"),
    (["collective", "--topology", "dgx-a100", "--nodes", "0"], "--nodes"),
    (["collective", "--topology", "zz", "--nodes", "1"], "--topology"),
])
def test_command_line_errors_name_the_option_typed(capsys, argv, option):
    """A value given on the command line is named as the option the user typed (it read 'gpu: unknown GPU',
    'nodes: --nodes must be at least 1')."""
    err = _one_error(capsys, argv)
    assert err.startswith(f"gpunetsim: error: {option}: "), err
    assert err.count(option) == 1, err
