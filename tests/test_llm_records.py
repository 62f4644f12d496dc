"""Reading the LLM runners' records, grouping launches, comparing a predictor (no torch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simulator.core.errors import InputError
from validation.gpt_spec import parse_spec
from validation.llm_baseline import compute_only_s, main
from validation.llm_records import (compare_runs, error_summary, group_runs, profile_for,
                                    read_llm_records, transformer_fields)

SPEC = parse_spec("hidden=64,layers=4,heads=4,seq=32,vocab=100")


def base(kind: str, point: str, launch: int, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "runner": kind.removeprefix("llm_"), "point": point, "world": 2,
            "launch_id": f"L{launch}", "launch_index": launch, "dtype": "bfloat16",
            "gpu": "NVIDIA H100", "peak_memory_bytes": 1000, "micro_batch": 1, **SPEC.fields(),
            **fields}


def timed(median_s: float) -> dict[str, Any]:
    return {"iter_times_s": [median_s] * 3, "median_s": median_s, "p10_s": median_s,
            "p90_s": median_s}


def profile(launch: int, tp: int = 1, sp: bool = False) -> dict[str, Any]:
    phases = {"block_forward_s": 0.001, "block_backward_s": 0.002}
    other = None if tp > 1 else 0.0005
    phases.update({f"{p}_{d}_s": other for p in ("embed", "head") for d in ("forward", "backward")})
    return base("llm_profile", f"profile tp={tp} sp={sp} L", launch, tp=tp, sequence_parallel=sp,
                model_median_s=0.02 if tp == 1 else None, **phases)


def fsdp(launch: int, median_s: float, strategy: str = "full_shard") -> dict[str, Any]:
    return base("llm_fsdp", f"fsdp {strategy}", launch, strategy=strategy, replicate=1, shard=2,
                tp=1, pp=1, dp=2, global_batch=2, unit_params=[1, 2], **timed(median_s))


def tp_run(launch: int, median_s: float) -> dict[str, Any]:
    return base("llm_tp", "tp sp=on", launch, tp=2, pp=1, dp=1, global_batch=1,
                sequence_parallel=True, nocomm_median_s=0.01,
                collectives=[{"op": "all_gather", "bytes": 8192, "count": 16}], **timed(median_s))


def pp_run(launch: int, median_s: float, m: int) -> dict[str, Any]:
    return base("llm_pp", f"pp m={m}", launch, tp=1, pp=2, dp=1, global_batch=m, micro_batches=m,
                stage_layers=[2, 2], stage_forward_s=[0.002, 0.003], stage_backward_s=[0.004, 0.005],
                p2p_s=0.0001, activation_bytes=4096, **timed(median_s))


@pytest.fixture
def data(tmp_path: Path) -> Path:
    recs = [{"kind": "meta"}, profile(0), profile(0, tp=2, sp=True), fsdp(0, 0.020),
            tp_run(0, 0.013), pp_run(0, 0.020, 1), pp_run(0, 0.040, 4), profile(1), fsdp(1, 0.030),
            {"kind": "llm_failed", "point": "x"}]
    p = tmp_path / "llm.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs) + '{"kind": "llm_tp", "po')
    return p


def test_reader_types_every_kind_and_skips_a_torn_last_line(data: Path) -> None:
    recs = read_llm_records(data)
    assert [r.runner for r in recs.runs] == ["fsdp", "tp", "pp", "pp", "fsdp"]
    assert len(recs.profiles) == 3 and len(recs.failures) == 1
    tp = recs.runs[1]
    assert tp.collectives == (("all_gather", 8192, 16),) and not tp.has_embedding_and_head
    assert not tp.sp_regathers  # 16 = 4 x layers: the first 2-GPU campaign's variant
    assert recs.runs[0].spec == SPEC and recs.runs[0].unit_params == (1, 2)


def test_profile_for_prefers_the_same_launch_and_matches_tp(data: Path) -> None:
    recs = read_llm_records(data)
    assert profile_for(recs.runs[4], recs.profiles).launch_id == "L1"
    assert profile_for(recs.runs[0], recs.profiles).launch_id == "L0"
    tp_prof = profile_for(recs.runs[1], recs.profiles)
    assert tp_prof is not None and tp_prof.tp == 2 and tp_prof.embed_forward_s is None


def test_groups_take_the_median_of_launch_medians(data: Path) -> None:
    groups = group_runs(read_llm_records(data).runs)
    g = groups[0]
    assert g.point == "fsdp full_shard" and len(g.runs) == 2
    assert (g.median_s, g.low_s, g.high_s) == pytest.approx((0.025, 0.020, 0.030))


def test_compare_and_summary(data: Path) -> None:
    errors = compare_runs(read_llm_records(data), lambda run, prof: 0.025)
    assert [round(e.error_pct) for e in errors] == [0, 92, 25, -38]
    s = error_summary(errors)
    assert s["all"]["n"] == 4 and s["pp"]["median_abs_pct"] == pytest.approx(31.25)
    with pytest.raises(InputError):
        compare_runs(read_llm_records(data), lambda run, prof: -1.0)


def test_baseline_is_compute_only(data: Path) -> None:
    recs = read_llm_records(data)
    fs, tp, pp1, pp4 = recs.runs[:4]
    assert compute_only_s(fs, profile_for(fs, recs.profiles)) == pytest.approx(4 * 0.003 + 4 * 0.0005)
    assert compute_only_s(tp, profile_for(tp, recs.profiles)) == pytest.approx(4 * 0.003)
    assert compute_only_s(pp1, None) == pytest.approx(0.006 + 0.008 + 2 * 0.0001)
    assert compute_only_s(pp4, None) == pytest.approx(0.014 + 3 * 0.008 + 2 * 0.0001)


def test_baseline_cli_prints_every_configuration(data: Path, capsys: Any) -> None:
    assert main([str(data)]) == 0
    out = capsys.readouterr().out
    assert "fsdp full_shard" in out and "all: n=4" in out and "1 failed launches" in out


def test_bad_record_names_file_line_and_field(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    rec = fsdp(0, 0.02)
    del rec["strategy"]
    p.write_text(json.dumps(rec) + "\n")
    with pytest.raises(InputError, match="line 1"):
        read_llm_records(p)
    rec = fsdp(0, 0.02)
    rec["hidden"] = "wide"
    p.write_text(json.dumps(rec) + "\n")
    with pytest.raises(InputError, match="line 1: hidden"):
        read_llm_records(p)
    assert main([str(p)]) == 2


def test_transformer_fields_say_untied_gpt() -> None:
    f = transformer_fields(SPEC)
    assert f["tied_embeddings"] is False and f["bias"] is True and f["kv_heads"] == 4


def test_a_whole_record_holding_nan_is_refused_not_skipped(data: Path, tmp_path: Path) -> None:
    """Review s16 #5: a line holding NaN was skipped like a torn line, so a campaign silently lost records (six
    single-GPU profiles of h200x4_2026-11-26d vanished and profile_launches printed nothing for the file); a line
    cut short by a killed run is still skipped."""
    import json
    from simulator.core.errors import InputError
    src = Path(__file__).resolve().parents[1] / "validation/data/h200x4_2026-11-26d/llm_world4.jsonl"
    lines = src.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if '"llm_profile"' in line)
    rec = json.loads(lines[i])
    rec["model_iter_times_s"] = [float("nan")] * 3
    bad = tmp_path / "nan.jsonl"
    bad.write_text("\n".join([*lines[:i], json.dumps(rec), *lines[i + 1:]]) + "\n")
    with pytest.raises(InputError, match=f"line {i + 1}"):
        read_llm_records([bad])
    torn = tmp_path / "torn.jsonl"
    torn.write_text("\n".join([*lines[:i], lines[i][:40], *lines[i + 1:]]) + "\n")
    assert len(read_llm_records([torn]).profiles) == len(read_llm_records([src]).profiles) - 1
