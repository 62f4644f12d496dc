"""Bad inputs that review s26 left with a program's words (#13-#15 and the field restated in other words): each is
one line naming file, field and value, in the words the command line uses for the same mistake."""

from __future__ import annotations

import pytest

import gpunetsim
from gpunetsim.cli import main
from simulator.core.errors import InputError

BANDWIDTH = "not a bandwidth: write a number and a unit such as '400 Gb/s' or '900 GB/s'"


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err
    return err.removeprefix("gpunetsim: error: ").rstrip("\n")


# ------------------------------------------------------------------ a bandwidth without its unit (#13)
def test_the_command_line_says_it(capsys):
    assert _error(capsys, ["collective", "--nodes", "2", "--nic-bw", "200"]) == f"--nic-bw: {BANDWIDTH} (got '200')"


def test_a_study_says_the_same(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("name: s\nmodel: [resnet50]\ntopology: dgx-h100\nnodes: [2]\nnic_bw: [200]\n")
    assert _error(capsys, ["sweep", str(f), "--out", str(tmp_path / "o")]) == f"{f}: nic_bw[0]: {BANDWIDTH} (got 200)"


def test_a_scenario_says_the_same(tmp_path, capsys):
    f = tmp_path / "c.yaml"
    f.write_text("topology: dgx-h100\nnodes: 2\nnic_bw: 200\njobs:\n  - {name: a, workload: resnet50, size: 8}\n")
    assert _error(capsys, ["cluster", str(f)]) == f"{f}: nic_bw: {BANDWIDTH} (got 200)"


def test_the_api_says_the_same():
    with pytest.raises(InputError, match="not a bandwidth: write a number and a unit"):
        gpunetsim.topology("dgx-h100", nodes=2, nic_bw=200)


def test_a_bandwidth_with_its_unit_still_runs(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("name: s\nmodel: [resnet50]\ntopology: dgx-h100\nnodes: [2]\nnic_bw: ['200 Gb/s']\n")
    assert main(["sweep", str(f), "--out", str(tmp_path / "o"), "--no-progress"]) == 0


# ------------------------------------------------------------------ search's prices and micro-batches (#14)
SEARCH = ["search", "--model", "llama-3-8b", "--gpus", "8", "--global-batch", "64"]


@pytest.mark.parametrize("option, shown", [
    (["--price", "h100=-1/h"], "--price: a price is at least 0 dollars per GPU-hour (got 'h100=-1/h')"),
    (["--price", "h100=x/h"], "--price: expected GPU=DOLLARS/h, e.g. h100=2.5/h (got 'h100=x/h')"),   # a format error
    (["--micro-batches", "0"], "--micro-batches: must be a positive integer (got 0)"),
    (["--micro-batches", "1,-2"], "--micro-batches: must be a positive integer (got -2)"),
    (["--micro-batches", "1,1.5"], "--micro-batches: must be a whole number (got '1.5')"),
])
def test_search_names_the_item_at_fault(capsys, option, shown):
    assert _error(capsys, [*SEARCH, *option]) == shown


# ------------------------------------------------------------------ topology files and files of null (#15)
TOPOLOGY = ("%snodes:\n  - {name: g0}\n  - {name: g1}\n"
            "links:\n  - {a: g0, b: g1, kind: nvlink, bandwidth: '100 GB/s'}\n")


@pytest.mark.parametrize("top, shown", [
    ("gpu_model: 5\n", "gpu_model: expected text such as 'H100 SXM' (got 5)"),
    ("name: [a]\n", "name: expected text (got ['a'])"),
])
def test_a_topology_files_text_fields_take_text(tmp_path, capsys, top, shown):
    f = tmp_path / "t.yaml"
    f.write_text(TOPOLOGY % top)
    assert _error(capsys, ["collective", "--topology", str(f)]) == f"{f}: {shown}"


def test_a_topology_files_gpu_model_as_text_runs(tmp_path, capsys):
    f = tmp_path / "t.yaml"
    f.write_text(TOPOLOGY % "gpu_model: H100 SXM\n")
    assert main(["collective", "--topology", str(f), "-b", "1M", "-e", "1M"]) == 0


@pytest.mark.parametrize("argv, expected", [
    (["sweep"], "expected a mapping of axis names to values at the top level, not null"),
    (["cluster"], "expected a mapping (the scenario) at the top level, not null"),
    (["ddp", "--workload"], "expected a mapping (JSON object) at the top level, not null"),
    (["train", "--global-batch", "8", "--model"], "expected a mapping of model fields, not null"),
    (["collective", "--topology"], "a topology file must be a mapping with 'nodes' and 'links', not null"),
])
def test_a_file_of_null_is_called_null(tmp_path, capsys, argv, expected):
    f = tmp_path / "n.yaml"
    f.write_text("null\n")
    assert _error(capsys, [*argv, str(f)]) == f"{f}: {expected}"


# ------------------------------------------------------------------ the field restated in other words
@pytest.mark.parametrize("argv, shown", [
    (["ddp", "--workload", "resnet50", "--bucket-cap-mb", "0"], "--bucket-cap-mb: must be a positive number of MiB"),
    (["collective", "--nodes", "2", "--nic-bw", "-5 Gb/s"], "--nic-bw: must be positive and finite"),
    (["goodput", "--gpus", "8", "--interval", "0"], "--interval: must be positive and finite"),
    (["goodput", "--gpus", "8", "--checkpoint", "1e30 s"], "--checkpoint: out of range (at most 1e+12 s)"),
    (["stragglers", "--ranks", "0"], "--ranks: each must be at least 1"),
    (["collective", "-b", "-1"], "--min-bytes: must be non-negative and finite"),
])
def test_an_error_does_not_restate_its_field(capsys, argv, shown):
    assert _error(capsys, argv).startswith(shown + " (got ")


def test_a_path_field_is_named_once(tmp_path, capsys):
    f = tmp_path / "t.yaml"
    f.write_text((TOPOLOGY % "").replace("'100 GB/s'", "'0 GB/s'"))
    assert _error(capsys, ["collective", "--topology", str(f)]) == (
        f"{f}: links[0].bandwidth: must be positive and finite (got '0 GB/s')")


def test_a_model_of_no_vocabulary_is_refused_not_divided_by_zero(capsys):
    assert _error(capsys, ["train", "--model-spec", "hidden=64,layers=2,heads=2,seq=8,vocab=0", "--gpus", "8",
                           "--global-batch", "8"]) == "--model-spec: vocab: must be a positive integer (got 0)"
