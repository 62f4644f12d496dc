"""The overlap probe runner (2 gloo processes on CPU) and its checker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simulator.core.errors import InputError
from simulator.training.llm.hbm_contention import collective_hbm_bytes
from validation.overlap_check import check_lines, main, read_overlap
from validation.runners.overlap import parse_settings
from tests.test_runners import records, run_module


def test_hbm_bytes_follow_the_bus_bytes() -> None:
    assert collective_hbm_bytes("reduce_scatter", 4, 1000.0) == pytest.approx(4 * 0.75 * 1000)
    assert collective_hbm_bytes("all_reduce", 2, 1000.0) == pytest.approx(4 * 1.0 * 1000)
    assert collective_hbm_bytes("all_gather", 1, 1000.0) == 0.0


def test_bad_settings_name_the_field() -> None:
    with pytest.raises(InputError, match="ops"):
        parse_settings(["--ops", "broadcast", "--out", "x"])
    with pytest.raises(InputError, match="sizes"):
        parse_settings(["--sizes", "0", "--out", "x"])


def test_probe_records_every_point_and_checker_reads_them(tmp_path: Path, capsys: Any) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "o.jsonl"
    run_module(["-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone", "-m",
                "validation.runners.overlap", "--sizes", "4K", "--ops", "reduce_scatter,all_reduce",
                "--reps", "2", "--warmup", "1", "--out", str(out)])
    recs = records(out)
    assert recs[0]["kind"] == "meta"
    points = [r for r in recs if r["kind"] == "overlap"]
    assert {(r["op"], r["work"]) for r in points} == {(o, w) for o in ("reduce_scatter", "all_reduce")
                                                      for w in ("copy", "matmul")}
    assert all(r["world"] == 2 and r["work_kernels"] >= 1 and r["both_s"] > 0 for r in points)
    assert len(read_overlap(out)) == 4
    assert main([str(out)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 7 and "local accesses per bus byte over 4 points" in out


def test_checker_charge_uses_the_copy_bandwidth(tmp_path: Path) -> None:
    rec = {"kind": "overlap", "op": "reduce_scatter", "bytes": 1000, "world": 4, "work": "copy",
           "work_bytes": 2e6, "work_alone_s": 1e-3, "coll_alone_s": 1e-4, "coll_beside_s": 2e-4,
           "work_beside_s": 1.5e-3, "both_s": 1.5e-3}
    line = check_lines([rec])[1]
    assert line.split()[-1] == f"{collective_hbm_bytes('reduce_scatter', 4, 1000) / 2e9 * 1e6:+.1f}"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"kind": "overlap", "op": "x"}) + "\n")
    with pytest.raises(InputError, match="missing"):
        read_overlap(bad)
    assert main([str(bad)]) == 2


@pytest.mark.parametrize("text, match", [("{\"kind\": \"overlap\",\n", "line 1"), ("[1, 2]\n", "JSON object"),
                                         ("", "no overlap records")])
def test_checker_refuses_a_bad_file_naming_it(tmp_path: Path, text: str, match: str) -> None:
    """A cut-short line, a line that is not a record (it raised AttributeError before the checker read
    files through simulator.core.inputs.read_jsonl) or no overlap records: an InputError naming the file."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    with pytest.raises(InputError, match=match) as e:
        read_overlap(bad)
    assert str(bad) in str(e.value)
    with pytest.raises(InputError, match="cannot read|no such|not found|does not exist"):
        read_overlap(tmp_path / "missing.jsonl")


def test_committed_probe_measures_about_the_charged_traffic() -> None:
    """4x H100 (validation/data/h100x4_2026-11-26j): the work's slowdown beside a collective, as local
    accesses per bus byte, brackets the model's constant (recorded: median 3.55, 3.69 at 384 MiB)."""
    from simulator.training.llm.hbm_contention import HBM_ACCESSES_PER_BUS_BYTE
    from validation.overlap_check import accesses_per_bus_byte, summary_line
    from validation.llm_real import PROBE

    data = Path(__file__).resolve().parents[1] / "validation" / "data" / PROBE[0]
    recs = [r for name in PROBE[1] for r in read_overlap(data / name)]
    acc = sorted(a for _, a in accesses_per_bus_byte(recs))
    assert len(acc) == 48 and acc[0] < HBM_ACCESSES_PER_BUS_BYTE < acc[-1]
    assert 3.0 < acc[len(acc) // 2] < 4.5
    assert "median 3.55" in summary_line(recs)


def test_ddp_compute_slowdown_default_is_the_probes_measurement() -> None:
    """``ddp.compute_slowdown`` defaults to the median slowdown the probe measured beside all_reduce
    (16 points on 2 and 4 H100s): the default is that measurement, not a typed-in or fitted number."""
    import statistics

    from simulator.collectives.params import DEFAULTS
    from validation.overlap_check import ddp_slowdown_line, ddp_slowdowns
    from validation.llm_real import PROBE

    data = Path(__file__).resolve().parents[1] / "validation" / "data" / PROBE[0]
    recs = [r for name in PROBE[1] for r in read_overlap(data / name)]
    s = ddp_slowdowns(recs)
    assert len(s) == 16 and all(0 < v < 2 for v in s)
    assert DEFAULTS["ddp.compute_slowdown"] == pytest.approx(statistics.median(s), abs=0.005)
    assert "median 0.49 over 16 points" in ddp_slowdown_line(recs)


def test_ddp_slowdown_inverts_the_ddp_model() -> None:
    """A point made by the DDP model's own rule (work at 1 / (1 + s) while the collective runs) gives s back."""
    from validation.overlap_check import ddp_slowdowns

    s, coll, work = 0.7, 1e-3, 1.5e-3
    rec = {"op": "all_reduce", "world": 2, "coll_alone_s": coll, "work_alone_s": work,
           "work_beside_s": work + coll * s / (1 + s)}
    assert ddp_slowdowns([rec]) == [pytest.approx(s)]
    assert ddp_slowdowns([{**rec, "world": 1}, {**rec, "op": "all_gather"}]) == []
