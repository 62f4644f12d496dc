"""`gpunetsim collective` prints and times the size nccl-tests would, not the size asked for (review s26 #11: an
all_gather of 10 B on 8 GPUs showed size 10 and count 0, a bf16 all_reduce of 3 B size 3 and count 1)."""

from __future__ import annotations

import json

import pytest

from gpunetsim.cli import main


@pytest.mark.parametrize("op, ranks, size, type_bytes, expected", [
    ("all_gather", 8, 100, 4, (96, 3)),         # 100 // (4 x 8) = 3 floats per rank, 3 x 4 x 8 B in all
    ("reduce_scatter", 3, 100, 4, (96, 8)),
    ("all_to_all", 4, 64, 2, (64, 8)),
    ("all_reduce", 8, 3, 2, (2, 1)),             # one bf16 element
    ("broadcast", 8, 10, 8, (8, 1)),
    ("send_recv", 2, 7, 4, (4, 1)),
    ("all_gather", 8, 10, 4, (0, 0)),            # below one float per rank: nccl-tests' size 0
])
def test_the_size_and_count_are_nccl_tests(op, ranks, size, type_bytes, expected):
    from simulator.core.vocabulary import nccl_tests_size
    assert nccl_tests_size(op, ranks, size, type_bytes) == expected


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line and not line.startswith("#")]


def test_the_table_shows_the_rounded_size(capsys):
    assert main(["collective", "--topology", "dgx-h100", "--gpus", "8", "--op", "all_gather", "-b", "100",
                 "-e", "100", "--engine", "closed"]) == 0
    assert _rows(capsys.readouterr().out)[0][:3] == ["96", "3", "float"]


def test_a_bf16_row_is_whole_elements(capsys):
    assert main(["collective", "--topology", "dgx-h100", "--op", "all_reduce", "--dtype", "bf16", "-b", "3",
                 "-e", "3", "--engine", "closed"]) == 0
    assert _rows(capsys.readouterr().out)[0][:2] == ["2", "1"]


def test_the_json_rows_carry_the_rounded_size(capsys):
    assert main(["collective", "--topology", "dgx-h100", "--gpus", "8", "--op", "all_gather", "-b", "100",
                 "-e", "100", "--engine", "closed", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bytes"] == 96


def test_sizes_below_one_element_per_rank_are_named_and_not_timed(capsys):
    assert main(["collective", "--topology", "dgx-h100", "--gpus", "8", "--op", "all_gather", "-b", "8",
                 "-e", "64", "--engine", "closed"]) == 0
    out, err = capsys.readouterr()
    assert [r[0] for r in _rows(out)] == ["32", "64"]
    assert "at least 32 B (8 x 4 B); the sizes below it (8, 16 B) are not timed" in err


def test_no_size_left_is_refused_in_one_line(capsys):
    assert main(["collective", "--topology", "dgx-h100", "--gpus", "8", "--op", "all_gather", "-b", "10",
                 "-e", "10"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("gpunetsim: error: --max-bytes: all_gather on 8 ranks passes whole float elements per rank: at "
                   "least 32 B (8 x 4 B), and every size is below it (nccl-tests would print size 0) (got '10')\n")
