"""A new user's first hour (review rv27, session stop 27): the leftovers of the last review and what a walk
through README.md and docs/ from a fresh clone met. Each test failed before its fix."""

from __future__ import annotations

import pytest

from gpunetsim.cli import main


def _one_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and "Traceback" not in cap.err
    return cap.err


# ------------------------------------------------------------------ an unknown study field lists the known ones
@pytest.mark.parametrize("block, text", [
    ("search:\n  model: llama-3-8b\n  gpus: 8\n  global_batch: 64\n  objectiv: cost\n",
     "search.objectiv: unknown field (known: model, gpus, global_batch, batch_per_gpu, tokens, max_tp, max_pp, "
     "micro_batches, schedules, virtual_stages, recompute, sharding, flash_attention, dtype) (got 'cost')"),
    ("collectives: {op: all_reduce, facto: 2}\n", "collectives.facto: unknown field (known: op, min_bytes, "
     "max_bytes, factor) (got 2)"),
    ("topolgy: dgx-a100\n", "topolgy: unknown field (known: name, description, model, "),
])
def test_an_unknown_study_field_lists_the_known_ones(tmp_path, capsys, block, text):
    """``search.objectiv`` said 'unknown field (got 'cost')' without the fields ``search:`` takes."""
    f = tmp_path / "s.yaml"
    f.write_text("topology: dgx-h100\n" + block)
    assert text in _one_error(capsys, ["sweep", str(f), "--out", str(tmp_path / "o"), "--no-progress"])
