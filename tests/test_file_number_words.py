"""A study's, a scenario's and the command line's numbers say the same thing in the project's words (review s26 rv26c
#2, #3): ``bucket_cap_mb: "25 MiB"`` and ``--bucket-cap-mb "25 MiB"`` said pydantic's ``unable to parse string as a
number`` and argparse's ``invalid float value``, neither that the number is in MiB; study counts said pydantic's
``Input should be greater than 0`` where ``check_count`` says ``must be at least 1``."""
import pytest

from gpunetsim.cli import main


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0].removeprefix("gpunetsim: error: ")


@pytest.mark.parametrize("written, hint", [('"25 MiB"', "write 25"), ('"1G"', "write 1024"),
                                           ('"lots"', "such as 25")])
def test_a_bucket_cap_with_a_unit_says_the_number_is_in_mib(tmp_path, capsys, written, hint):
    f = tmp_path / "s.yaml"
    f.write_text(f"name: s\nmodel: resnet50\nbucket_cap_mb: [{written}]\n")
    value = written.strip('"')
    assert _error(capsys, ["sweep", str(f)]) == (
        f"{f}: bucket_cap_mb[0]: a number of MiB without a unit{': ' if 'write' in hint else ', '}{hint} "
        f"(got '{value}')")
    assert _error(capsys, ["ddp", "--workload", "resnet50", "--bucket-cap-mb", value]) == (
        f"--bucket-cap-mb: a number of MiB without a unit{': ' if 'write' in hint else ', '}{hint} (got '{value}')")


def test_a_scenario_bucket_cap_says_the_same(tmp_path, capsys):
    f = tmp_path / "c.yaml"
    f.write_text("topology: dgx-h100\nnodes: 2\njobs:\n  - {name: a, workload: resnet50, nodes: 1, "
                 "bucket_cap_mb: 25 MiB}\n")
    assert _error(capsys, ["cluster", str(f)]) == (
        f"{f}: jobs[0].bucket_cap_mb: a number of MiB without a unit: write 25 (got '25 MiB')")


def test_a_plain_number_of_mib_still_runs(tmp_path, capsys):
    assert main(["ddp", "--workload", "resnet50", "--bucket-cap-mb", "50", "--engine", "closed"]) == 0
    f = tmp_path / "s.yaml"
    f.write_text("name: s\nmodel: resnet50\nbucket_cap_mb: [\"50\", 12.5]\nengine: closed\n")
    assert main(["sweep", str(f)]) == 0


@pytest.mark.parametrize("field, written, expected", [
    ("nodes", "[1, 0]", "nodes[1]: must be at least 1 (got 0)"),
    ("batch_size", "2.0", "batch_size[0]: must be a whole number (got 2.0)"),
    ("nics", "'4'", "nics[0]: must be a whole number (got '4')"),
    ("hosts_per_leaf", "-3", "hosts_per_leaf[0]: must be at least 1 (got -3)"),
])
def test_a_study_count_is_in_check_counts_words(tmp_path, capsys, field, written, expected):
    f = tmp_path / "s.yaml"
    f.write_text(f"name: s\nmodel: resnet50\n{field}: {written}\n")
    assert _error(capsys, ["sweep", str(f)]) == f"{f}: {expected}"


@pytest.mark.parametrize("body, expected", [
    ("train: {model: gpt2-small, global_batch: 8, tp: 0}", "train.tp[0]: must be at least 1 (got 0)"),
    ("search: {model: gpt2-small, gpus: [8, 0]}", "search.gpus[1]: must be at least 1 (got 0)"),
])
def test_train_and_search_counts_too(tmp_path, capsys, body, expected):
    f = tmp_path / "s.yaml"
    f.write_text(f"name: s\n{body}\n")
    assert _error(capsys, ["sweep", str(f)]) == f"{f}: {expected}"


def test_a_scenario_count_and_node_index(tmp_path, capsys):
    f = tmp_path / "c.yaml"
    f.write_text("topology: dgx-h100\nnodes: 2\niterations: 0\njobs:\n  - {name: a, workload: resnet50, nodes: 1}\n")
    assert _error(capsys, ["cluster", str(f)]) == f"{f}: iterations: must be at least 1 (got 0)"
    f.write_text("topology: dgx-h100\nnodes: 2\njobs:\n  - {name: a, workload: resnet50, node_list: [-1]}\n")
    assert _error(capsys, ["cluster", str(f)]) == f"{f}: jobs[0].node_list[0]: must be at least 0 (got -1)"
