"""validation.fsdp_issue on bad records (review s15 #3): every bad field is an InputError naming the file, the line,
the field and the value (exit 2 from the CLI), never a traceback or a silent number."""

import json
from pathlib import Path

import pytest

from simulator.core.errors import InputError
from validation.fsdp_issue import host_splits, main, read_points, report

DATA = Path(__file__).resolve().parents[1] / "validation" / "data" / "h100x4_2026-11-27_fsdpissue" / "fsdpissue_world4.jsonl"


def changed(tmp_path: Path, name: str = "bad.jsonl", **fields) -> Path:
    """A copy of the committed world-4 file with ``fields`` set on every llm_fsdp record."""
    out = []
    for line in DATA.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("kind") == "llm_fsdp":
            rec.update(fields)
        out.append(json.dumps(rec))
    path = tmp_path / name
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.mark.parametrize("fields, field", [({"unit_params": 5}, "unit_params"),
                                           ({"unit_params": "abc"}, "unit_params"),
                                           ({"unit_params": [1, -2]}, "unit_params"),
                                           ({"strategy": "bogus"}, "strategy")])
def test_a_bad_field_names_file_line_field_and_value(tmp_path, capsys, fields, field):
    path = changed(tmp_path, **fields)
    with pytest.raises(InputError, match=field) as e:
        read_points([path])
    assert "bad.jsonl" in str(e.value) and "line" in str(e.value)
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and field in err and len(err.strip().splitlines()) == 1


def test_negative_host_work_is_refused(tmp_path, capsys):
    """A one-rank NO_SHARD forward issued faster than the plain model's gives negative host work per unit."""
    path = changed(tmp_path, issue_forward_s=1e-12)
    with pytest.raises(InputError, match="issue_forward_s"):
        read_points([path])
    assert main([str(path)]) == 2


def test_micro_batches_are_kept_apart(tmp_path):
    """Records of two micro-batches give a split per micro-batch, not the last one read for the spec."""
    lines = []
    for line in DATA.read_text().splitlines():
        rec = json.loads(line)
        lines.append(json.dumps(rec))
        if rec.get("kind") in ("llm_fsdp", "llm_profile"):
            lines.append(json.dumps({**rec, "micro_batch": 2, **{k: v * 3 for k, v in rec.items()
                                                                  if k.endswith("issue_forward_s")}}))
    path = tmp_path / "mb.jsonl"
    path.write_text("\n".join(lines) + "\n")
    points = read_points([path])
    splits = host_splits(points)
    one = host_splits(read_points([DATA]))
    assert len(splits) == 2 * len(one)
    assert {s.micro_batch for s in splits} == {1, 2}
    mb1 = [s for s in splits if s.micro_batch == 1]
    assert [s.forward_per_unit_s for s in mb1] == pytest.approx([s.forward_per_unit_s for s in one])
    text = "\n".join(report(points))
    assert "mb2" in text and "mb1" in text
    assert "mb1" not in "\n".join(report(read_points([DATA])))      # one micro-batch: the table as before
