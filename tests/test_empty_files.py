"""An empty input file (or one of only comments) is called empty, the same way by every command (review s26): an
empty YAML workload said "expected a mapping (JSON object) at the top level (got 'NoneType')", a scenario "... (the
scenario) ...", a model file "expected a mapping of model fields", a topology file "must be a mapping with 'nodes'
and 'links'", and an empty .json file "invalid JSON at line 1, column 1: Expecting value"."""

from __future__ import annotations

import pytest

from gpunetsim.cli import main

COMMANDS = [
    (["ddp", "--workload"], "workload file"),
    (["cluster"], "scenario file"),
    (["sweep"], "study file"),
    (["train", "--global-batch", "8", "--model"], "model file"),
    (["collective", "--topology"], "topology file"),
]


@pytest.mark.parametrize("argv, what", COMMANDS)
@pytest.mark.parametrize("name, text", [("e.yaml", ""), ("e.json", "\n"), ("c.yaml", "# nothing yet\n---\n")])
def test_an_empty_file_is_called_empty(tmp_path, capsys, argv, what, name, text):
    f = tmp_path / name
    f.write_text(text)
    assert main([*argv, str(f)]) == 2
    assert capsys.readouterr().err == f"gpunetsim: error: {f}: the {what} is empty\n"


def test_a_file_of_null_is_not_empty(tmp_path, capsys):
    """``null`` is a value, refused by what the command expects, not called empty."""
    f = tmp_path / "n.yaml"
    f.write_text("null\n")
    assert main(["cluster", str(f)]) == 2
    assert "empty" not in capsys.readouterr().err
