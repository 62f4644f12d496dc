"""A new user's first hour (review rv27, session stop 27): the leftovers of the last review and what a walk
through README.md and docs/ from a fresh clone met. Each test failed before its fix."""

from __future__ import annotations

import pytest

from tests.test_new_user_paths import _one_error


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


# ------------------------------------------------------------------ ffn 0 / kv_heads 0 are refused, not the default
SPEC = "hidden=1024,layers=8,heads=16,seq=1024"


@pytest.mark.parametrize("extra, text", [
    (",ffn=0", "--model-spec: ffn: must be a positive integer (leave it out for 4 x hidden) (got 0)"),
    (",kv_heads=0", "--model-spec: kv_heads: must be a positive integer (leave it out for heads) (got 0)"),
])
def test_a_zero_ffn_or_kv_heads_spec_is_refused(capsys, extra, text):
    """``ffn=0`` ran a 4 x hidden feed-forward layer, a meaning no help or doc gave."""
    err = _one_error(capsys, ["train", "--topology", "dgx-a100", "--model-spec", SPEC + extra, "--global-batch", "8"])
    assert text in err


def test_a_zero_ffn_model_file_is_refused(tmp_path, capsys):
    f = tmp_path / "m.yaml"
    f.write_text("hidden: 1024\nlayers: 8\nheads: 16\nseq: 1024\nkv_heads: 0\n")
    err = _one_error(capsys, ["train", "--topology", "dgx-a100", "--model", str(f), "--global-batch", "8"])
    assert "m.yaml: kv_heads: must be a positive integer (leave it out for heads) (got 0)" in err


@pytest.mark.parametrize("field", ["ffn", "kv_heads"])
def test_the_python_spec_takes_none_as_the_default_and_refuses_zero(field):
    from simulator.core.errors import InputError
    from simulator.training.llm.model import TransformerSpec
    m = TransformerSpec("m", 1024, 8, 16, 1024)
    assert (m.ffn, m.kv_heads) == (4096, 16)
    with pytest.raises(InputError, match="must be a positive integer"):
        TransformerSpec("m", 1024, 8, 16, 1024, **{field: 0})
