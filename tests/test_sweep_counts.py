"""A sweep's header counts the study's points, and says how many ran and which failed (review s26 #12: a study
whose only train point failed printed '# 1 DDP points, 0 collective points' and '# 1 points in 0.1 s')."""

from __future__ import annotations

from gpunetsim.cli import main

STUDY = """name: s
model: [resnet50]
topology: dgx-h100
nodes: [1]
engine: closed
train:
  model: llama-3-8b
  tp: [%s]
  global_batch: 64
"""


def _sweep(tmp_path, capsys, tp: int) -> tuple[int, str, str]:
    f = tmp_path / "s.yaml"
    f.write_text(STUDY % tp)
    rc = main(["sweep", str(f), "--out", str(tmp_path / "out"), "--no-progress"])
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_failed_point_is_counted_and_named(tmp_path, capsys):
    rc, out, err = _sweep(tmp_path, capsys, 3)          # tp=3 does not divide 8 GPUs: point #1 fails
    assert rc == 1
    assert out.splitlines()[1] == ("# 1 DDP points, 0 collective points, 1 LLM training points; engine=closed, "
                                   "params=datasheet; 2 points (1 ran, 1 failed: #1)")
    assert "# 2 points (1 ran, 1 failed: #1) in " in err


def test_a_complete_run_keeps_its_header(tmp_path, capsys):
    rc, out, err = _sweep(tmp_path, capsys, 1)
    assert rc == 0
    assert out.splitlines()[1] == ("# 1 DDP points, 0 collective points, 1 LLM training points; engine=closed, "
                                   "params=datasheet")
    assert "# 2 points in " in err
