"""The GEMM-beside-NCCL probe runner (2 gloo processes on CPU) and its settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simulator.core.errors import InputError
from validation.runners.gemm_nccl import Work, kernel_grids, parse_settings, parse_work
from tests.test_runners import records, run_module


@pytest.mark.parametrize("text, work", [("gemm:2048x6144x2048", Work("gemm", (2048, 6144, 2048))),
                                        ("attention:16x2048", Work("attention", (16, 2048))),
                                        ("copy:256M", Work("copy", (256 * 2**20,)))])
def test_works_parse(text: str, work: Work) -> None:
    assert parse_work(text) == work
    assert parse_work(work.label) == work


@pytest.mark.parametrize("bad", ["gemm:2048x2048", "gemm:0x1x1", "attention:16", "conv:3x3", "copy:0"])
def test_bad_work_names_the_field(bad: str) -> None:
    with pytest.raises(InputError, match="works"):
        parse_work(bad)


def test_collectives_must_outlast_the_work() -> None:
    with pytest.raises(InputError, match="cover"):
        parse_settings(["--cover", "1", "--out", "x"])
    with pytest.raises(InputError, match="modes"):
        parse_settings(["--modes", "idle", "--out", "x"])


def test_kernel_grids_keep_launch_shapes() -> None:
    trace = {"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "nvjet_gemm", "dur": 25.0,
         "args": {"grid": [132, 1, 1], "block": [384, 1, 1], "registers per thread": 168, "shared memory": 200000,
                  "blocks per SM": 1.0, "warps per SM": 12.0, "stream": 7}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "dur": 3.0, "args": {}}]}
    (k,) = kernel_grids(trace)
    assert k["grid"] == [132, 1, 1] and k["registers_per_thread"] == 168 and k["duration_s"] == pytest.approx(25e-6)


def test_probe_records_every_point(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "g.jsonl"
    run_module(["-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone", "-m",
                "validation.runners.gemm_nccl", "--works", "gemm:64x64x64,copy:16K", "--sizes", "4K",
                "--ops", "all_gather,all_reduce", "--reps", "2", "--warmup", "1", "--work-ms", "0.1",
                "--out", str(out)])
    recs = records(out)
    assert recs[0]["kind"] == "meta"
    points = [r for r in recs if r["kind"] == "gemm_nccl"]
    assert {(r["mode"], r["work"], r["op"]) for r in points} == {
        (m, w, o) for w in ("gemm:64x64x64", "copy:16384")
        for m, o in (("alone", None), ("xfer", "all_gather"), ("xfer", "all_reduce"), ("spin", "all_gather"))}
    assert all(len(r["work_alone_s"]) == 2 and r["work_kernels"] >= 1 for r in points)
    assert all(r["coll_calls"] >= 1 and len(r["work_beside_s"]) == 2 for r in points if r["mode"] != "alone")


# ------------------------------------------------------------------ the committed probe (validation.gemm_nccl)


def test_committed_probe_copy_follows_the_hbm_law_and_gemms_do_not_follow_the_sm_law() -> None:
    from validation.gemm_nccl import FOLDER, copy_Bps, hbm_law, read_probe, sm_law

    for channels in (8, 32):
        path = FOLDER / f"gemmnccl_ch{channels}.jsonl"
        points, grids, sms = read_probe(path)
        assert sms == 132 and {g["grid"][0] for g in grids if "nccl" in g["name"].lower()} == {channels}
        mem = copy_Bps(path)
        copies = [p for p in points if p.work.startswith("copy:") and p.mode == "xfer" and p.inside
                  and p.size_bytes >= 64 << 20]
        assert len(copies) == 12
        assert all(abs(p.ratio - hbm_law(p.op, 2, p.size_bytes, p.coll_one_s, mem)) < 0.2 for p in copies)
        spin = {p.work: p.ratio for p in points if p.mode == "spin"}
        assert spin["gemm:2048x2048x2048"] > sm_law(channels, sms) + 0.25      # persistent GEMM: a second round
        assert spin["copy:268435456"] < 1.1                                     # waiting NCCL: no memory traffic


def test_profiled_gemms_slow_alike_at_two_and_four_gpus(capsys: Any) -> None:
    from validation.gemm_nccl import main

    assert main([]) == 0
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines() if "| gemm |" in line]
    assert [r[0].strip("| ") for r in rows] == ["h200x2_2026-11-27_fsdpprof", "h200x4_2026-11-27_fsdpprof4"]
    spin = [float(r[3].split()[0]) for r in rows]
    beside = [float(r[6]) for r in rows]
    assert abs(spin[0] - spin[1]) < 0.1 and spin[0] > 1.4     # the same factor per kernel
    assert beside[1] > beside[0] + 0.1                         # more of the GEMMs beside NCCL at 4 GPUs


def test_simulated_charge_is_the_shares_only() -> None:
    """The simulation without the units' bandwidth shares is never slower than with them."""
    from validation.fsdp_profile import predictors
    from validation.gemm_nccl import PROFILES, simulated_charge_s

    path = sorted(PROFILES[1].glob("fsdpprof_world*.jsonl"))[0]
    charges = [simulated_charge_s(*pr) for pr in predictors(path).values()]
    assert len(charges) == 4
    assert all(busy >= -1e-12 and end >= -1e-12 and iteration > 0.01 for busy, end, iteration in charges)
    assert max(busy for busy, _, _ in charges) > 1e-4        # a GPU-bound configuration pays some


def _damaged(tmp_path: Path, change) -> Path:
    """The committed 8-channel probe file with its first xfer record changed by ``change`` (a record -> None)."""
    import json

    from validation.gemm_nccl import FOLDER
    lines = (FOLDER / "gemmnccl_ch8.jsonl").read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if '"mode": "xfer"' in line)
    r = json.loads(lines[i])
    change(r)
    lines[i] = json.dumps(r)
    folder = tmp_path / "probe"
    folder.mkdir()
    (folder / "gemmnccl_ch8.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize("change, field", [
    (lambda r: r.pop("mode"), "mode"),
    (lambda r: r.update(work_beside_s=[1e-3]), "work_beside_s"),          # one rank's, two ranks ran
    (lambda r: r.update(work_alone_s=["fast", 1e-3]), "work_alone_s"),
    (lambda r: r.update(coll_one_s=None), "coll_one_s"),
    (lambda r: r.update(env=None), "env"),
    (lambda r: r.update(bytes="16M"), "bytes"),
])
def test_gemm_nccl_report_refuses_a_damaged_record(tmp_path: Path, capsys: Any, change, field: str) -> None:
    """python -m validation.gemm_nccl FOLDER: a damaged record is one line naming the file, line and field, exit 2
    (it was a KeyError / TypeError traceback)."""
    from validation.gemm_nccl import main
    folder = _damaged(tmp_path, change)
    assert main([str(folder)]) == 2
    err = capsys.readouterr().err
    assert "gemmnccl_ch8.jsonl" in err and f": {field}" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
