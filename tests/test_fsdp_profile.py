"""validation.fsdp_profile: the profiled FSDP steps read back, and the host's gaps split at unit boundaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from validation import fsdp_profile as fpr

DATA = Path(__file__).resolve().parents[1] / "validation/data/h200x2_2026-11-27_fsdpprof"


def test_host_split_puts_each_gap_at_its_unit_boundary_or_inside() -> None:
    """2 layers, 4 GEMMs per block forward and 8 backward, the head 1 + 2: 27 GEMMs. Gaps of 1 ms inside units,
    10 ms across the forward's block boundary (gap 3) and 20 ms at the backward's two (head -> block 1, block 1 ->
    block 0: gaps 10 and 18; gap 8 runs from the head's forward to its backward)."""
    gaps = [1.0] * 26
    gaps[3] = 10.0
    gaps[10] = gaps[18] = 20.0
    launches = [0.0]
    for g in gaps:
        launches.append(launches[-1] + g)
    s = fpr.host_split(launches, layers=2)
    assert s is not None
    assert (s.forward_boundaries, s.backward_boundaries) == (1, 2)
    assert s.forward_boundary_s == 10.0 and s.backward_boundary_s == 40.0
    assert s.forward_inner_s == 7.0                    # gaps 0-7 less the boundary: the forward's 9 GEMMs
    assert s.backward_inner_s == 16.0                  # gaps 8-25 less the two boundaries
    assert fpr.host_split(launches[:-1], layers=2) is None     # a GEMM count off the GPT's shape


def test_measured_parts_read_the_compute_stream_of_a_summary() -> None:
    summary = {"span_s": 10.0, "compute_stream": "7", "compute_busy_s": 4.0, "idle_host_s": 5.0,
               "idle_nccl_s": 0.5, "idle_other_s": 0.5, "nccl_s": 3.0, "nccl_exposed_s": 2.0,
               "busy_s": {"7": {"gemm": 2.0, "attention": 0.5, "compute": 1.0, "copy": 0.25, "memset": 0.25},
                          "9": {"all_gather": 3.0}}}
    p = fpr.measured_parts(summary)
    assert (p.gemm_s, p.other_s, p.copy_s) == (2.5, 1.0, 0.5)
    assert p.idle_s == 6.0 and p.idle_host_s == 5.0


def test_committed_profiles_read_back_with_both_ranks_and_the_model_alone() -> None:
    profiled = fpr.read_profiled(DATA / "fsdpprof_world2_L1.jsonl")
    assert len(profiled) == 12                          # 2 specs x (NO_SHARD, FULL_SHARD) x 3 launches
    for p in profiled:
        assert len(p.summaries) == 2 and len(p.model_timelines) == 2
        for t in p.record["timeline"]:
            assert fpr.host_split(fpr.gemm_launches(t), int(p.record["layers"])) is not None
    full = [p for p in profiled if p.record["strategy"] == "full_shard" and p.record["hidden"] == 2048]
    # host-bound: the compute stream idles longer than it works, most of it waiting for the host
    for p in full:
        for s in p.summaries:
            parts = fpr.measured_parts(s)
            assert parts.idle_s > parts.busy_s and parts.idle_host_s > 0
    assert all(p.record["copy_Bps"] == pytest.approx(4.05e12, rel=0.05) for p in profiled)


def test_cli_names_a_bad_file_in_one_line_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert fpr.main(["/nonexistent/fsdpprof_world2.jsonl"]) == 2
    assert capsys.readouterr().err.startswith("error: /nonexistent/fsdpprof_world2.jsonl")


def _mutate(how):
    import json
    recs = [json.loads(x) for x in (DATA / "fsdpprof_world2_L1.jsonl").read_text().splitlines()]
    fsdp = next(r for r in recs if r["kind"] == "llm_fsdp")
    profile = next(r for r in recs if r["kind"] == "llm_profile")
    how(fsdp, profile)
    return "\n".join(json.dumps(r) for r in recs) + "\n"


@pytest.mark.parametrize("how, field, words", [
    (lambda f, p: f["timeline"][0]["summary"].pop("busy_s"), "line 3: timeline[0].summary.busy_s", "missing field"),
    (lambda f, p: f["timeline"][0]["events"].__setitem__(0, [7, "compute"]), "line 3: timeline[0].events[0]",
     "expected [stream, class"),
    (lambda f, p: f.__setitem__("timeline", "oops"), "line 3: timeline", "(got 'oops')"),
    (lambda f, p: f.pop("launch_index"), "line 3", "'llm_fsdp' record has no 'launch_index'"),
    (lambda f, p: p["model_timeline"][0].__setitem__("summary", {"span_s": 1}),
     "line 2: model_timeline[0].summary.compute_stream", "missing field"),
])
@pytest.mark.parametrize("boundaries", [False, True])
def test_a_malformed_profile_is_refused_naming_file_field_and_value(tmp_path, capsys, how, field, words, boundaries):
    """A fresh user's bad file (rv21: each of these was a KeyError / TypeError traceback, or silently accepted) is
    one line naming the file, the field and the value, exit status 2."""
    bad = tmp_path / "fsdpprof_world2_L1.jsonl"
    bad.write_text(_mutate(how))
    assert fpr.main([str(bad)] + (["--boundaries"] if boundaries else [])) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}: {field}") and words in err and err.count("\n") == 1


@pytest.mark.parametrize("text", ["", '{"kind": "meta", "runner": "fsdp"}\n'])
def test_a_file_without_profiled_steps_is_named(tmp_path, capsys, text):
    bad = tmp_path / "x.jsonl"
    bad.write_text(text)
    assert fpr.main([str(bad)]) == 2
    assert "x.jsonl: no llm_fsdp record with a profiled step" in capsys.readouterr().err
