"""The parts of a DDP iteration carry 90% intervals (simulator.training.ddp_intervals.part_intervals): the
communication on its stream and the exposed part from the buckets' all-reduce intervals, forward / backward /
optimizer from the workload's compute band when it has one. Before, only the whole iteration had one."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from gpunetsim.cli import main


def _ddp(capsys, *extra: str) -> dict:
    assert main(["ddp", "--topology", "dgx-h100", "--nodes", "2", "--workload", "gpt2", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("extra", [(), ("--engine", "closed"), ("--calibration", "h100-nvlink-2gpu")])
def test_communication_parts_hold_their_prediction(capsys, extra):
    r = _ddp(capsys, *extra)
    for part in ("comm", "exposed_comm"):
        assert r[f"{part}_lo_s"] <= r[f"{part}_s"] <= r[f"{part}_hi_s"] and r[f"{part}_hi_s"] > r[f"{part}_lo_s"]
    # the iteration's interval holds its exposed part's (same seconds added and removed), widened to the
    # held-out DDP band (simulator.training.ddp_intervals.ddp_band)
    assert r["iteration_hi_s"] - r["iteration_s"] >= r["exposed_comm_hi_s"] - r["exposed_comm_s"] - 1e-12
    assert r["iteration_s"] - r["iteration_lo_s"] >= r["exposed_comm_s"] - r["exposed_comm_lo_s"] - 1e-12
    assert r["forward_lo_s"] is None and r["backward_hi_s"] is None    # no compute band: no error known


def test_compute_parts_take_the_workload_band():
    from simulator.collectives.params import Parameters
    from simulator.network.closed_form import CostModel
    from simulator.training.ddp import DDPConfig, simulate_iteration
    from simulator.training.ddp_intervals import with_interval
    from simulator.training.zoo import zoo_workload
    from validation.compare import Topo

    model = CostModel(Topo("hgx-h200").build(4), Parameters())
    w = zoo_workload("resnet50", "h200")
    banded = replace(w, extras=(("compute_lo_ratio", 0.9), ("compute_hi_ratio", 1.2)))
    r = with_interval(model, simulate_iteration(model, banded, DDPConfig(), "closed"), banded)
    for part in ("forward", "backward", "optimizer"):
        v = getattr(r, f"{part}_s")
        assert (getattr(r, f"{part}_lo_s"), getattr(r, f"{part}_hi_s")) == pytest.approx((0.9 * v, 1.2 * v))


def test_text_prints_the_parts_intervals(capsys):
    assert main(["ddp", "--topology", "dgx-h100", "--nodes", "2", "--workload", "gpt2"]) == 0
    out = capsys.readouterr().out.splitlines()
    for start in ("  exposed comm", "communication"):
        line = next(x for x in out if x.startswith(start))
        assert "   90% " in line and " - " in line, line
