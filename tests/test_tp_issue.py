"""The TP issue probe runner (2 gloo processes on CPU): every point recorded, bad settings named."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from simulator.core.errors import InputError
from validation.issue_check import main as check_main
from validation.runners.tp_issue import kernel_class, parse_settings, plan_labels
from tests.test_runners import REPO, records, run_module

TINY = "hidden=32,layers=2,heads=2,seq=16,vocab=64"


def test_plan_has_the_unsharded_block_and_four_tp_loops_per_spec() -> None:
    s = parse_settings(["--specs", f"{TINY};hidden=64,layers=2,heads=2,seq=16", "--out", "x"])
    labels = plan_labels(s, 2)
    assert len(labels) == 10 and labels[0].startswith("issue tp=1 ")
    assert "issue tp=2 sp=on comm=off mb=1 " + s.common.specs[0].text in labels
    assert len(plan_labels(s, 1)) == 2


def test_bad_settings_name_the_field() -> None:
    with pytest.raises(InputError, match="op-issue"):
        parse_settings(["--specs", TINY, "--out", "x", "--op-issue", "broadcast"])
    with pytest.raises(InputError, match="^hold: ") as e:
        parse_settings(["--specs", TINY, "--out", "x", "--hold", "0.5"])
    assert "op-calls" not in str(e.value)
    with pytest.raises(InputError, match="op-calls"):
        parse_settings(["--specs", TINY, "--out", "x", "--op-calls", "0"])


def test_kernel_classes() -> None:
    assert kernel_class("ncclDevKernel_AllReduce_Sum_bf16_RING_LL") == "nccl"
    assert kernel_class("sm90_xmma_gemm_bf16bf16_bf16f32") == "gemm"
    assert kernel_class("pytorch_flash::flash_fwd_kernel") == "attention"
    assert kernel_class("vectorized_elementwise_kernel") == "other"


def test_import_needs_no_torch() -> None:
    code = "import sys; sys.modules['torch'] = None; import validation.runners.tp_issue"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)


def test_probe_records_every_point_and_the_checker_reads_them(tmp_path: Path, capsys: Any) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "i.jsonl"
    run_module(["-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone", "-m",
                "validation.runners.tp_issue", "--specs", TINY, "--iters", "2", "--warmup", "1",
                "--op-issue", "all_reduce,repeat", "--op-calls", "2", "--kernels",
                "--backend", "gloo", "--device", "cpu", "--out", str(out)])
    recs = records(out)
    assert recs[0]["kind"] == "meta" and recs[0]["runner"] == "tp_issue"
    points = [r for r in recs if r["kind"] == "llm_issue"]
    assert [(r["tp"], r["sequence_parallel"], r["comm"]) for r in points] == [
        (1, False, False), (2, False, False), (2, False, True), (2, True, False), (2, True, True)]
    for r in points:
        assert r["loop_s"] > 0 and r["issue_forward_s"] > 0 and r["issue_backward_s"] > 0
        assert r["gpu_s"] > 0 and r["outlasted_hold"] == 0 and len(r["loop_times_s"]) == 2
    ops = [r for r in recs if r["kind"] == "llm_op_issue"]
    assert [r["op"] for r in ops] == ["all_reduce", "repeat"] and all(r["issue_per_call_s"] > 0 for r in ops)
    assert check_main([str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("tp=2 sp=") == 4 and "h32 L2 s16 mb1 tp=2 comm=on:" in text and "repeat" in text
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "llm_issue", "point": "x"}\n')
    assert check_main([str(bad)]) == 2


def _issue_record(layers: int, sp: bool, launch: int = 0, **extra: Any) -> dict[str, Any]:
    spec = {"hidden": 64, "layers": layers, "heads": 2, "seq": 16, "vocab": 64, "ffn": 256}
    text = ",".join(f"{k}={v}" for k, v in spec.items())
    return {"kind": "llm_issue", "point": f"issue tp=2 sp={'on' if sp else 'off'} comm=on mb=1 {text}", **spec,
            "micro_batch": 1, "tp": 2, "sequence_parallel": sp, "comm": True, "world": 2, "launch_id": f"L{launch}",
            "launch_index": launch, "loop_s": 0.01 * layers * (2 if sp else 1), "issue_forward_s": 0.001,
            "issue_backward_s": 0.002, "gpu_s": 0.003, **extra}


def _write(path: Path, recs: list[dict[str, Any]]) -> Path:
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_points_differing_only_in_layers_are_kept_apart(tmp_path: Path, capsys: Any) -> None:
    f = _write(tmp_path / "i.jsonl", [_issue_record(n, sp) for n in (2, 4) for sp in (False, True)])
    assert check_main([str(f)]) == 0
    text = capsys.readouterr().out
    # each spec's SP pair on its own line: 2 layers add (0.04 - 0.02) / 2, 4 layers (0.08 - 0.04) / 4 per block
    assert "L2 s16 mb1 tp=2 comm=on: +0.000, +0.000, +0.000, +10.000" in text
    assert "L4 s16 mb1 tp=2 comm=on: +0.000, +0.000, +0.000, +10.000" in text


@pytest.mark.parametrize("field, value", [("tp", "four"), ("launch_index", "x"), ("loop_s", -1.0),
                                          ("kernels", {"count": {"gemm": "many"}})])
def test_a_bad_field_is_named(tmp_path: Path, capsys: Any, field: str, value: Any) -> None:
    from validation.issue_check import probe_tp_runs

    f = _write(tmp_path / "i.jsonl", [_issue_record(2, False, **{field: value})])
    with pytest.raises(InputError, match=field.split("_")[0]):
        probe_tp_runs([f])
    assert check_main([str(f)]) == 2
    assert field.split("_")[0] in capsys.readouterr().err


def test_a_record_without_gpu_clock_prints_no_ratio(tmp_path: Path, capsys: Any) -> None:
    f = _write(tmp_path / "i.jsonl", [_issue_record(2, False, issue_forward_s=0.0, issue_backward_s=0.0, gpu_s=0.0)])
    assert check_main([str(f)]) == 0
    assert "        -" in capsys.readouterr().out


def test_the_report_counts_the_launches_it_has(tmp_path: Path) -> None:
    from validation.issue_check import markdown_lines

    f = _write(tmp_path / "i.jsonl", [_issue_record(2, sp, launch) for launch in (0, 1) for sp in (False, True)])
    text = "\n".join(markdown_lines([f], "x"))
    assert "medians of 2 launches" in text and "medians of 3" not in text


def test_op_issue_sizes_its_hold_and_records_what_outlasted_it(monkeypatch: Any) -> None:
    """The op timing's GPU hold is sized from the op's own time (it was a fixed 0.05 s, silently too
    short for a slow host: the host then waited and the per-call figure was too high, unflagged)."""
    torch = pytest.importorskip("torch")
    import time

    from validation.runners import tp_issue

    class Clock:  # a GPU clock whose "sleep" costs no host time, as torch.cuda._sleep
        is_cuda = True

        def hold(self, seconds: float) -> None:
            pass

        def mark(self) -> float:
            return time.perf_counter()

        def between(self, a: float, b: float) -> float:
            return b - a

        def sync(self) -> None:
            pass

    class Session:
        world, rank, dtype, device = 2, 0, torch.float32, "cpu"
        recorded: list[dict[str, Any]] = []

        def max_over_ranks(self, values: Any) -> list[float]:
            return list(values)

        def record(self, kind: str, label: str, fields: dict[str, Any]) -> None:
            self.recorded.append(fields)

    monkeypatch.setattr(torch.distributed, "barrier", lambda: None)
    s = parse_settings(["--specs", "hidden=1024,layers=1,heads=2,seq=4096", "--out", "x", "--op-issue", "add",
                        "--op-calls", "4", "--iters", "2", "--warmup", "1", "--hold", "20"])
    ses = Session()
    tp_issue.measure_ops(ses, Clock(), s, s.common.specs[0])  # type: ignore[arg-type]
    (rec,) = ses.recorded
    assert rec["outlasted_hold"] == 0 and rec["hold_s"] > rec["issue_per_call_s"] * rec["calls"]


@pytest.mark.parametrize("read", ["read_issue", "probe_tp_runs"])
def test_one_label_with_two_configurations_is_named(tmp_path: Path, read: str) -> None:
    """Points are grouped by their label: a copy of a record with other blocks under the same label would be
    averaged into it (read_issue) or replace it (probe_tp_runs), so the reader refuses it."""
    import validation.issue_check as ic

    other = _issue_record(4, False, launch=1)
    other["point"] = _issue_record(2, False)["point"]
    f = _write(tmp_path / "i.jsonl", [_issue_record(2, False), other])
    with pytest.raises(InputError, match="point") as err:
        getattr(ic, read)([f])
    assert "line 2" in str(err.value) and "another configuration" in str(err.value)


def test_a_second_record_of_one_launch_is_named(tmp_path: Path) -> None:
    from validation.issue_check import probe_tp_runs

    f = _write(tmp_path / "i.jsonl", [_issue_record(2, False), _issue_record(2, False, loop_s=0.5)])
    with pytest.raises(InputError, match="launch_index"):
        probe_tp_runs([f])


def test_two_campaigns_with_the_same_launch_indices_are_two_launches(tmp_path: Path, capsys: Any) -> None:
    """launch_index restarts at 0 in every campaign: files of two campaigns read together were refused as 'a
    second record of point ... in this launch' (review s14, finding 7); a launch is its launch_id and index."""
    from validation.issue_check import probe_tp_runs

    def pair(launch_id: str, loop_s: float) -> list[dict[str, Any]]:
        on = _issue_record(2, False, launch_id=launch_id, loop_s=loop_s)
        return [on, {**on, "comm": False, "point": on["point"].replace("comm=on", "comm=off"), "loop_s": loop_s / 2}]

    files = [_write(tmp_path / "a.jsonl", pair("L0", 0.02)), _write(tmp_path / "b.jsonl", pair("other", 0.03))]
    runs = probe_tp_runs(files).runs
    assert sorted((r.launch_id, r.median_s, r.nocomm_median_s) for r in runs) == [("L0", 0.02, 0.01),
                                                                                   ("other", 0.03, 0.015)]
    assert check_main([str(f) for f in files]) == 0
    real = Path(__file__).resolve().parents[1] / "validation" / "data"
    assert check_main([str(real / d / "tp_issue_world2.jsonl") for d in ("h100x2_2026-11-26_tp",
                                                                          "h100x2_2026-11-26_tp2")]) == 0


def test_op_issue_reads_outlasted_hold_and_refuses_the_old_name(tmp_path: Path) -> None:
    """``outlasted_hold`` (repetitions whose issue outlasted the GPU hold) was called ``held_out``, this project's
    word for data no fit saw; a file with the old name is refused rather than read as 0."""
    from validation.issue_check import read_issue

    op = {"kind": "llm_op_issue", "op": "all_reduce", "issue_per_call_s": 1e-5, "outlasted_hold": 2}
    f = _write(tmp_path / "i.jsonl", [_issue_record(2, False), op])
    (issue,) = read_issue([f])[1]
    assert issue.outlasted_hold == 2
    old = _write(tmp_path / "old.jsonl", [_issue_record(2, False), {**op, "outlasted_hold": None, "held_out": 2}])
    with pytest.raises(InputError, match="held_out.*renamed outlasted_hold"):
        read_issue([old])
