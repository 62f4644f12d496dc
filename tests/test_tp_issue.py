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
    with pytest.raises(InputError, match="op-calls"):
        parse_settings(["--specs", TINY, "--out", "x", "--hold", "0.5"])


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
        assert r["gpu_s"] > 0 and r["held_out"] == 0 and len(r["loop_times_s"]) == 2
    ops = [r for r in recs if r["kind"] == "llm_op_issue"]
    assert [r["op"] for r in ops] == ["all_reduce", "repeat"] and all(r["issue_per_call_s"] > 0 for r in ops)
    assert check_main([str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("tp=2 sp=") == 4 and "h32 tp=2 comm=on:" in text and "repeat" in text
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "llm_issue", "point": "x"}\n')
    assert check_main([str(bad)]) == 2
