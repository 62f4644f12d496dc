"""The docs' YAML examples altered by hand (review s26 rv26c #4): every bad value is one line naming the file, the
field and the value, in the words the command line uses, not pydantic's ('Input should be a valid number, unable to
parse string as a number', 'Input should be a valid string' for a list, 'Input should be less than or equal to 1');
a model file's ``name: [m]`` ran as the model "['m']"."""
import pytest

from gpunetsim.cli import main

TWO_JOBS = ("name: two-jobs\ntopology: dgx-h100\nnodes: 4\nhosts_per_leaf: 2\noversubscription: 4\n"
            "placement: spread\niterations: 2\njobs:\n"
            "  - {name: a, collective: all_reduce, size: 1 GiB, algo: ring, nodes: 2}\n"
            "  - {name: b, collective: all_reduce, size: 1 GiB, algo: ring, nodes: 2}\n")


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0].removeprefix("gpunetsim: error: ")


@pytest.mark.parametrize("old, new, expected", [
    ("oversubscription: 4", "oversubscription: 4x", "oversubscription: must be a number (got '4x')"),
    ("size: 1 GiB, algo", "size: [1 GiB], algo", "jobs[0].size: expected one value, not a list (got ['1 GiB'])"),
    ("collective: all_reduce, size: 1 GiB, algo: ring, nodes: 2}\n  - {name: b",
     "collective: [all_reduce], size: 1 GiB, algo: ring, nodes: 2}\n  - {name: b",
     "jobs[0].collective: expected one value, not a list (got ['all_reduce'])"),
    ("iterations: 2", "iterations: 2\nstragglers: {cv: 5%}", "stragglers.cv: must be a number (got '5%')"),
    ("iterations: 2", "iterations: 2\nstragglers: [{cv: 0.1}]",
     "stragglers: expected a mapping (key: value lines or {key: value}) (got [{'cv': 0.1}])"),
    ("iterations: 2", "iterations: 2\ndegraded_links: {link: h0.nic0 - leaf.g0.r0, fraction: 0.5}",
     "degraded_links: expected a list (- item lines or [a, b]) (got {'link': 'h0.nic0 - leaf.g0.r0', 'fraction': 0.5})"),
    ("iterations: 2", "iterations: 2\ndegraded_links: [{link: h0.nic0 - leaf.g0.r0, fraction: 2}]",
     "degraded_links[0].fraction: must be at most 1 (got 2)"),
])
def test_a_scenario_value_in_the_commands_words(tmp_path, capsys, old, new, expected):
    f = tmp_path / "c.yaml"
    assert old in TWO_JOBS
    f.write_text(TWO_JOBS.replace(old, new, 1))
    assert _error(capsys, ["cluster", str(f)]) == f"{f}: {expected}"


@pytest.mark.parametrize("body, expected", [
    ("topology: [[dgx-h100]]\nsearch: {model: llama-3-8b, gpus: 8}",
     "topology[0]: expected one value, not a list (got ['dgx-h100'])"),
    ("search: {model: llama-3-8b, gpus: 8, tokens: 1e12 tokens}",
     "search.tokens: expected a positive number, e.g. 1e12, '300B' or '15T' (got '1e12 tokens')"),
])
def test_a_study_value_in_the_commands_words(tmp_path, capsys, body, expected):
    f = tmp_path / "s.yaml"
    f.write_text(f"name: s\n{body}\n")
    assert _error(capsys, ["sweep", str(f), "--no-progress", "--out", str(tmp_path / "out")]) == f"{f}: {expected}"


@pytest.mark.parametrize("command", [["train", "--tp", "8"], ["search", "--max-pp", "1", "--micro-batches", "1"]])
def test_a_model_files_name_is_text(tmp_path, capsys, command):
    f = tmp_path / "m.yaml"
    f.write_text("name: [m]\nhidden: 256\nlayers: 2\nheads: 8\nseq: 128\n")
    assert _error(capsys, [*command, "--gpus", "8", "--global-batch", "8", "--model", str(f)]) == (
        f"{f}: name: expected text such as 'llama-3-8b' (got ['m'])")
