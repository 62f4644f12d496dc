"""validation.check_cli.run_command: the one place the validation commands turn bad input into one line and exit
status 2 (rv21: nine commands and four runners each wrote ``except InputError: print(...); return 2``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simulator.core.errors import InputError
from validation.check_cli import BAD_INPUT, files_main, print_lines, run_command

ROOT = Path(__file__).resolve().parents[1]


def test_bad_input_is_one_line_and_status_2(capsys):
    def work():
        print("partial")
        raise InputError("no such file", source="x.jsonl", field="time_s", value=-1)
    assert run_command(work) == BAD_INPUT == 2
    out, err = capsys.readouterr()
    assert out == "partial\n"
    assert err == "error: x.jsonl: time_s: no such file (got -1)\n"


@pytest.mark.parametrize("ret, status", [(None, 0), (0, 0), (1, 1)])
def test_the_work_s_status_passes_through(ret, status):
    assert run_command(lambda: ret) == status


def test_a_report_that_refuses_prints_nothing_of_it(capsys):
    def make():
        yield "first line"
        raise InputError("bad field", field="op", value="all_sum")
    assert print_lines(make) == 2
    out, err = capsys.readouterr()
    assert out == "" and "op: bad field (got 'all_sum')" in err


def test_a_report_s_own_refusal_is_caught_too(capsys):
    """files_main used to catch only the reading; an InputError of the report was a traceback."""
    def report(data):
        raise InputError("unknown lease", field="lease", value=data[0])
    assert files_main("prog", "d", lambda files: files, report, ["f.jsonl"]) == 2
    assert "lease: unknown lease (got 'f.jsonl')" in capsys.readouterr().err


def test_no_validation_command_writes_the_wrapper_again():
    """The wrapper is written once: no other validation module prints an InputError and returns 2 itself."""
    pattern = re.compile(r"except InputError as (\w+):\n\s+print\(f\"error: \{\1\}\", file=sys\.stderr\)\n\s+return 2")
    hits = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "validation").rglob("*.py"))
            if p.name != "check_cli.py" and pattern.search(p.read_text())]
    assert hits == []


def _refuse(*_a, **_k):
    raise InputError("must be a number", source="validation/data/mine_lat/lat_world2_L1.jsonl", field="line 2: time_s",
                     value="x")


@pytest.mark.parametrize("module, target", [
    ("validation.small_bias", "validation.small_bias.collect"),
    ("validation.align_probe", "validation.align_probe.fit_points"),
    ("validation.host_floor", "validation.llm_accuracy.public_datasheet_results"),
    ("validation.corpus_gain", "validation.corpus.corpus_parts"),
])
def test_commands_that_read_every_committed_folder_refuse_a_bad_one_in_one_line(monkeypatch, capsys, module, target):
    """rv21 fresh-user pass: these read every matching folder of validation/data, so a user's own campaign folder
    with a bad record was a traceback (exit 1); now one line naming file, field and value, exit 2."""
    import importlib
    monkeypatch.setattr(target, _refuse)
    assert importlib.import_module(module).main([]) == 2
    err = capsys.readouterr().err
    assert err == "error: validation/data/mine_lat/lat_world2_L1.jsonl: line 2: time_s: must be a number (got 'x')\n"
