"""90% intervals of the host backends (Gloo, MPI): simulator.collectives.host_uncertainty, validation.host_intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import topologies
from gpunetsim.cli import main
from simulator.collectives.host_uncertainty import MPI_PRIOR, check_host_block
from simulator.collectives.params import load_calibration, save_calibration
from simulator.core.errors import InputError
from simulator.network.host_collectives import HostCollectiveModel
from simulator.network.run import run_host_collective

DATA = Path(__file__).resolve().parents[1] / "validation" / "data"


def _rows(capsys, *argv: str) -> list[dict]:
    assert main(list(argv)) == 0
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()]


@pytest.mark.parametrize("backend", ["gloo", "mpi"])
def test_collective_json_and_table_carry_an_interval(capsys, backend: str) -> None:
    """Before, --backend gloo/mpi printed time_lo_s/time_hi_s null and '-' in the table."""
    rows = _rows(capsys, "collective", "--topology", "hgx-h200", "--gpus", "4", "--backend", backend,
                 "-b", "4K", "-e", "64M", "-f", "16", "--json")
    assert len(rows) == 4
    for r in rows:       # the datasheet's Gloo residuals are biased (its defaults predict small calls too fast):
        assert 0 < r["time_lo_s"] < r["time_hi_s"]     # the interval may lie wholly above the prediction, and says so
        below = [w for w in r["extrapolated"] if w.startswith("prediction below its own 90% interval")]
        assert (r["time_lo_s"] < r["time_s"] < r["time_hi_s"]) != bool(below)
        assert not below or (backend == "gloo" and "datasheet defaults are biased" in below[0])
    assert main(["collective", "--topology", "hgx-h200", "--gpus", "4", "--backend", backend, "-b", "1M", "-e", "1M"]) == 0
    line = [x for x in capsys.readouterr().out.splitlines() if not x.startswith("#")][0].split()
    assert line[-1] != "-" and 0 < float(line[-2]) < float(line[-1])


def test_gloo_datasheet_interval_lies_above_the_prediction_under_16_mib() -> None:
    """What docs/cli.md says of the datasheet's Gloo block: under 16 MiB even its 5% quantile of
    log(measured / predicted) is above 0 (the defaults predict too fast), so those rows are flagged."""
    from simulator.collectives.host_uncertainty import datasheet_blocks
    by = datasheet_blocks()["gloo"]["residual"]["by_size"]
    assert by["edges_bytes"][-1] == 1 << 24 and all(q[0] > 0 for q in by["q"][:-1])


def test_mpi_interval_is_a_prior_and_says_so(capsys) -> None:
    rows = _rows(capsys, "collective", "--topology", "hgx-h200", "--gpus", "2", "--backend", "mpi",
                 "-b", "1K", "-e", "1K", "--json")
    assert any("no mpi measurement" in why for why in rows[0]["extrapolated"])
    lo, hi = MPI_PRIOR["residual"]["latency"][0], MPI_PRIOR["residual"]["latency"][2]
    # a latency-bound 1 KiB call: the prior's latency quantiles (a factor e^1.5 either way)
    assert rows[0]["time_hi_s"] / rows[0]["time_s"] == pytest.approx(2.718281828 ** hi, rel=0.1)
    assert rows[0]["time_lo_s"] / rows[0]["time_s"] == pytest.approx(2.718281828 ** lo, rel=0.1)


def test_gloo_calibration_uses_its_own_residuals(capsys) -> None:
    """h200-dataparallel carries the Gloo fit's out-of-sample residuals; inside their domain (all_reduce, 4 KiB -
    256 MiB, 2-8 processes) a prediction is no extrapolation, outside (broadcast) it says so."""
    cal = load_calibration("h200-dataparallel")
    assert "gloo" in cal.host_uncertainty
    rows = _rows(capsys, "collective", "--topology", "hgx-h200", "--gpus", "4", "--backend", "gloo",
                 "--calibration", "h200-dataparallel", "-b", "64M", "-e", "64M", "--json")
    assert rows[0]["extrapolated"] == [] and rows[0]["time_lo_s"] < rows[0]["time_s"] < rows[0]["time_hi_s"]
    q = cal.host_uncertainty["gloo"]["residual"]["by_size"]["q"][2]
    assert rows[0]["time_hi_s"] / rows[0]["time_s"] == pytest.approx(2.718281828 ** q[2])
    rows = _rows(capsys, "collective", "--topology", "hgx-h200", "--gpus", "4", "--backend", "gloo",
                 "--calibration", "h200-dataparallel", "--op", "broadcast", "-b", "64M", "-e", "64M", "--json")
    assert any("broadcast not in the data" in why for why in rows[0]["extrapolated"])


def test_ddp_on_gloo_carries_an_interval(capsys) -> None:
    """Before, gpunetsim ddp --backend gloo printed iteration_lo_s/iteration_hi_s null."""
    rows = _rows(capsys, "ddp", "--topology", "hgx-h200", "--gpus", "2", "--workload", "resnet50", "--backend",
                 "gloo", "--json")
    r = rows[0]
    assert r["iteration_lo_s"] <= r["iteration_s"] < r["iteration_hi_s"]


def test_calibration_file_round_trip_and_bad_blocks(tmp_path) -> None:
    cal = load_calibration("h200-dataparallel")
    out = tmp_path / "c.json"
    save_calibration(cal, out)
    assert load_calibration(str(out)).host_uncertainty == json.loads(json.dumps(dict(cal.host_uncertainty)))
    good = dict(cal.host_uncertainty["gloo"])
    for block, field in (({"nccl": good}, "host_uncertainty"), ([good], "host_uncertainty"),
                         ({"gloo": {**good, "residual": {"latency": [1, 0, 2]}}}, "host_uncertainty.gloo.residual"),
                         ({"gloo": {**good, "keys": ["call_overhead_s"], "scale": [1e-5], "cov": [[1.0]]}},
                          "host_uncertainty.gloo.keys")):
        with pytest.raises(InputError) as e:
            check_host_block(block, "c.json")
        assert str(e.value.field).startswith(field) and e.value.source == "c.json"
    data = json.loads(out.read_text())
    data["host_uncertainty"] = {"gloo": {"residual": "wide"}}
    out.write_text(json.dumps(data))
    with pytest.raises(InputError, match="host_uncertainty.gloo.residual"):
        load_calibration(str(out))


def test_host_calibrate_writes_the_fits_widened_residuals(tmp_path) -> None:
    from validation.host_calibrate import main as host_main
    out = tmp_path / "gloo.json"
    assert host_main(["--measurements", str(DATA / "h200x2_2026-11-26c" / "gloo_world2.jsonl"), "--out", str(out)]) == 0
    block = load_calibration(str(out)).host_uncertainty["gloo"]
    assert block["domain"]["worlds"] == [2] and "widened by sqrt(n / (n - k))" in block["source"]
    assert "for its 6 keys" in block["source"]          # 4 CPU keys and 2 staging keys (CPU and CUDA points)
    cluster = topologies.prepare("hgx-h200", gpus_per_node=2)
    m = HostCollectiveModel(cluster, load_calibration(str(out)), "gloo", "cpu")
    r = run_host_collective(m, "all_reduce", 2**20)
    assert r.time_lo_s < r.time_s < r.time_hi_s and r.extrapolated == ()
    assert run_host_collective(HostCollectiveModel(topologies.prepare("hgx-h200", gpus_per_node=4),
                                                   load_calibration(str(out)), "gloo", "cpu"),
                               "all_reduce", 2**20).extrapolated == ("4 GPUs (fitted on 2)",)


def _gloo_subset(tmp_path, sizes: set[int], variant: str = "cpu") -> Path:
    """The 2-process Gloo records of h200x2_2026-11-26c at ``sizes`` only, ``variant`` tensors only."""
    out = tmp_path / "few.jsonl"
    lines = [x for x in (DATA / "h200x2_2026-11-26c" / "gloo_world2.jsonl").read_text().splitlines()
             if json.loads(x)["variant"].startswith(variant)
             and (json.loads(x)["kind"] == "meta" or json.loads(x)["bytes"] in sizes)]
    out.write_text("\n".join(lines) + "\n")
    return out


def test_host_calibrate_refuses_a_fit_with_no_more_points_than_keys(tmp_path, capsys) -> None:
    """Before, 3 CPU points for 4 CPU keys wrote a block 'widened by sqrt(n / (n - k)) = 2.00' (a made-up
    factor) whose one-point band gave a zero-width interval (review s14, finding 11)."""
    from validation.host_calibrate import main as host_main
    out = tmp_path / "g3.json"
    assert host_main(["--measurements", str(_gloo_subset(tmp_path, {4096, 16384, 65536})), "--out", str(out)]) == 2
    assert "3 points for 4 fitted keys" in capsys.readouterr().err and not out.exists()


def test_host_calibrate_on_few_points_writes_no_interval_block(tmp_path, capsys) -> None:
    from validation.host_calibrate import main as host_main
    out = tmp_path / "g6.json"
    sizes = {4096 << (2 * i) for i in range(6)}
    assert host_main(["--measurements", str(_gloo_subset(tmp_path, sizes)), "--out", str(out)]) == 0
    assert "no gloo interval block: fewer than 10 points" in capsys.readouterr().out
    assert not load_calibration(str(out)).host_uncertainty


def test_residual_block_has_no_band_with_fewer_than_min_points() -> None:
    """A band's 5-95% quantiles from one point gave lo == mid == hi; an empty band took every point's silently."""
    from types import SimpleNamespace
    from validation.calibrate import MIN_BAND_POINTS
    from validation.host_intervals import residual_block
    pts = [SimpleNamespace(op="all_reduce", world=2, tensors="cpu", size_bytes=4096 << i, time_s=1e-4 * (1 + i % 3))
           for i in range(MIN_BAND_POINTS + 2)]                       # 4 KiB - 8 MiB: nothing >= 16 MiB
    block = residual_block(pts, [1e-4] * len(pts), [1.0] * len(pts), "test")
    assert "by_size" not in block["residual"] and "no per-band quantiles" in block["source"]
    assert "bandwidth regime: 0 points, every point's quantiles" in block["source"]
    assert block["residual"]["bandwidth"] == block["residual"]["latency"]
    lo, mid, hi = block["residual"]["latency"]
    assert lo < mid < hi
    check_host_block({"gloo": block})


def test_ddp_interval_says_where_it_extrapolates(capsys) -> None:
    """The buckets' reasons reach the iteration (review s14, finding 12): Gloo's intervals come from loopback
    TCP on one server with 2-8 processes; 16 ranks over the NICs were printed without a word."""
    argv = ["ddp", "--backend", "gloo", "--topology", "dgx-h100", "--nodes", "2", "--workload", "gpt2"]
    (r,) = _rows(capsys, *argv, "--json")
    assert "16 GPUs (fitted on 2, 3, 4, 8)" in r["iteration_extrapolated"]
    assert "2 servers over the NICs (measured on 1: TCP over loopback)" in r["iteration_extrapolated"]
    assert main(argv) == 0
    assert "# extrapolated beyond the calibration's data (16 GPUs" in capsys.readouterr().out
    (inside,) = _rows(capsys, "ddp", "--topology", "hgx-h200", "--gpus", "2", "--workload", "resnet50", "--backend",
                      "gloo", "--calibration", "h200-dataparallel", "--json")
    assert inside["iteration_extrapolated"] == []
    (biased,) = _rows(capsys, "ddp", "--topology", "hgx-h200", "--gpus", "2", "--workload", "resnet50", "--backend",
                      "gloo", "--json")             # the datasheet defaults: its small buckets predicted too fast
    assert [w[:37] for w in biased["iteration_extrapolated"]] == ["prediction below its own 90% interval"]
    rows = _rows(capsys, "collective", "--backend", "gloo", "--topology", "dgx-h100", "--nodes", "1", "--gpus", "2",
                 "-b", "1M", "-e", "1M", "--json")
    assert not any("servers" in why for why in rows[0]["extrapolated"])
