"""The LLM section of studies (``search:`` block; gpunetsim plan's best plan per model and size)."""

from __future__ import annotations

import json
import textwrap

import pytest

from gpunetsim.cli import main
from gpunetsim.study import load_study, run_points
from gpunetsim.study_run import _chunks
from simulator.core.errors import InputError

TINY = "hidden=1024,layers=8,heads=16,seq=1024"
STUDY = f"""
name: plans
topology: dgx-a100
search:
  model: ["{TINY}", "hidden=12288,layers=96,heads=96,seq=2048"]
  gpus: [8, 16]
  global_batch: 16
  micro_batches: [1, 2]
  recompute: [none, full]
  sharding: [ddp, zero-1]
"""


def _study(tmp_path, text=STUDY):
    p = tmp_path / "study.yaml"
    p.write_text(textwrap.dedent(text))
    return load_study(p)


def test_one_point_per_model_and_gpu_count_sizes_innermost(tmp_path):
    pts = _study(tmp_path).points
    assert [(p.kind, dict(p.search)["gpus"]) for p in pts] == [("search", 8), ("search", 16)] * 2
    assert [(p.nodes, p.gpus) for p in pts[:2]] == [(1, 8), (2, None)]


def test_rows_hold_the_best_plan_and_say_when_none_fits(tmp_path):
    from gpunetsim.search import make_cluster, search
    from simulator.training.llm.model import resolve_model
    study = _study(tmp_path)
    rows = run_points(study.points, workers=1, progress=False)
    tiny = rows[1]
    assert tiny["fits"] and tiny["total_gpus"] == 16 and tiny["plans_simulated"] >= 1
    assert tiny["tp"] * tiny["pp"] * tiny["dp"] == 16
    direct = search(resolve_model(None, TINY), [make_cluster("dgx-a100", 16)], 16,
                    space=load_study_space(study), top=1)
    assert tiny["iteration_s"] == pytest.approx(direct.plans[0].iteration_s)
    big = rows[2]
    assert big["fits"] is False and big["iteration_s"] is None and big["plans_no_fit"] == big["plans"] > 0


def load_study_space(study):
    return study.spec.search.space()


def test_plan_table_and_report(tmp_path, capsys):
    p = tmp_path / "study.yaml"
    p.write_text(textwrap.dedent(STUDY))
    out = tmp_path / "out"
    assert main(["sweep", str(p), "--out", str(out), "--no-progress", "--workers", "2"]) == 0
    text = capsys.readouterr().out
    assert "# LLM plans" in text and "no plan fits in memory" in text
    assert text.count("100.0%") >= 1                   # the smallest size is the scaling reference
    page = (out / "report.html").read_text()
    assert 'id="fig-plans"' in page and 'id="fig-plans-breakdown"' in page
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["kind"] for r in rows] == ["search"] * 4


def test_resume_keeps_finished_search_points(tmp_path, capsys):
    p = tmp_path / "study.yaml"
    p.write_text(textwrap.dedent(STUDY))
    out = tmp_path / "out"
    assert main(["sweep", str(p), "--out", str(out), "--no-progress", "--workers", "1"]) == 0
    assert main(["sweep", str(p), "--out", str(out), "--no-progress", "--workers", "1", "--resume"]) == 0
    assert "4 of 4 points already in" in capsys.readouterr().err


@pytest.mark.parametrize("old, new, field", [
    ("gpus: [8, 16]", "gpus: [8, 12]", "search.gpus[1]"),
    (f'model: ["{TINY}", ', 'model: ["nosuchmodel", ', "search.model[0]"),
    ("global_batch: 16", "global_batch: 0", "search.global_batch"),
    ("sharding: [ddp, zero-1]", "sharding: [zero-9]", "search.sharding")])
def test_bad_search_block_names_the_field(tmp_path, old, new, field):
    assert old in STUDY
    with pytest.raises(InputError) as e:
        _study(tmp_path, STUDY.replace(old, new))
    assert field in str(e.value)


def test_search_points_are_sent_one_by_one_largest_first(tmp_path):
    study = load_study_default_like(tmp_path)
    chunks = _chunks(study.points, 2)
    heavy = [c for c in chunks if c[0].kind == "search"]
    assert all(len(c) == 1 for c in heavy) and chunks[:len(heavy)] == heavy
    assert [dict(c[0].search)["gpus"] for c in heavy[:2]] == [16, 8]
    assert sum(len(c) for c in chunks) == len(study.points)


def load_study_default_like(tmp_path):
    return _study(tmp_path, STUDY.replace("name: plans", "name: mixed\nmodel: gpt2\nnodes: [1, 2]\nengine: closed"))


def test_batch_per_gpu_grows_the_global_batch_with_the_gpus(tmp_path):
    study = _study(tmp_path, STUDY.replace("global_batch: 16", "batch_per_gpu: 2"))
    rows = run_points(study.points[:2], workers=1, progress=False)
    assert [r["global_batch"] for r in rows] == [16, 32]


@pytest.mark.parametrize("edit", ["global_batch: 16\n  batch_per_gpu: 2", ""])
def test_exactly_one_batch_rule(tmp_path, edit):
    with pytest.raises(InputError) as e:
        _study(tmp_path, STUDY.replace("global_batch: 16", edit))
    assert "batch_per_gpu" in str(e.value) and "search" in str(e.value)
    assert str(e.value).count("(got") == 1      # a long block was quoted twice, once in full


def test_the_70b_paragraph_of_search_md_quotes_the_searches_it_names(capsys):
    """docs/search.md's '70B: the plan changes with the size' typed figures that had drifted from the searches
    (6.74 s for a 6.94 s plan, 7.37 s for 7.57 s; the golden test checks console blocks only)."""
    from pathlib import Path
    import re
    text = " ".join((Path(__file__).resolve().parents[1] / "docs" / "search.md").read_text().split())
    para = text[text.index("**70B: the plan changes with the size.**"):text.index("a faster plan.")]
    quoted = [float(x) for x in re.findall(r"(\d+\.\d+) s\b", para)]

    def plans(gpus: int) -> list[dict]:
        assert main(["search", "--model", "llama-3-70b", "--gpus", str(gpus), "--global-batch", str(gpus),
                     "--micro-batches", "1,2", "--sharding", "zero-1,fsdp-full", "--flash-attention", "--max-pp", "16",
                     "--top", "3", "--json"]) == 0
        return json.loads(capsys.readouterr().out)["plans"]

    (w16, *_), (_, tp4, full, *_) = plans(16), plans(64)
    assert (tp4["tp"], tp4["dp"], full["tp"], full["recompute"]) == (4, 16, 1, "full")
    actual = [w16["tp_comm_s"], w16["iteration_s"], tp4["iteration_s"], full["iteration_s"], tp4["compute_s"],
              full["compute_s"], tp4["tp_comm_s"]]
    assert quoted == pytest.approx(actual, abs=0.051), (quoted, actual)
