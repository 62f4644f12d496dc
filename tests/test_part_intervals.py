"""90% intervals of the parts of an LLM training iteration (simulator.training.llm.part_intervals) and the
compute-only band behind them (validation.compute_bands). Before, `gpunetsim train` gave compute_s, tp_comm_s,
pp_bubble_s and dp_comm_exposed_s without an interval of their own."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from gpunetsim.cli import main
from simulator.collectives.params import load_calibration
from simulator.training import iteration_bands as sib
from simulator.training.gpus import get_gpu
from simulator.training.llm.compute import ComputeParams, load_compute_params
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.iteration import simulate_train
from simulator.training.llm.model import resolve_model
from simulator.training.llm.part_intervals import PARTS
from topologies.presets import server
from topologies.routing import router_for

DOC = Path(__file__).resolve().parents[1] / "docs" / "accuracy.md"
TINY = "hidden=1024,layers=8,heads=16,seq=1024"


def _train(capsys, *extra: str) -> dict:
    argv = ["train", "--topology", "dgx-h100", "--nodes", "2", "--model-spec", TINY, "--global-batch", "16", *extra]
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _holds(r: dict) -> None:
    for p in PARTS:
        lo, hi = r[f"{p}_lo_s"], r[f"{p}_hi_s"]
        assert lo is not None and hi is not None, p
        assert 0 <= lo <= r[f"{p}_s"] <= hi, p
        if r[f"{p}_s"] > 0 and p != "pp_comm":
            assert hi > lo, p


@pytest.mark.parametrize("plan", [("--tp", "8"), ("--tp", "4", "--pp", "2", "--zero", "1"),
                                  ("--tp", "2", "--pp", "2", "--fsdp", "full"),
                                  ("--tp", "2", "--pp", "4", "--schedule", "interleaved")])
def test_every_part_has_an_interval_that_holds_it(capsys, plan):
    r = _train(capsys, *plan)
    _holds(r)
    assert r["tp_comm_s"] > 0 and r["dp_comm_exposed_s"] > 0


def test_pipeline_parts_have_widths(capsys):
    r = _train(capsys, "--tp", "4", "--pp", "2")
    assert r["pp_comm_s"] > 0 and r["pp_comm_hi_s"] > r["pp_comm_s"]
    assert r["pp_bubble_s"] > 0 and r["pp_bubble_hi_s"] > r["pp_bubble_s"]


@pytest.mark.parametrize("calibration, topology, kind", [(None, "dgx-h100", "datasheet"),
                                                         ("a100-megatron", "dgx-h100", "datasheet"),
                                                         ("a100-megatron", "dgx-a100", "calibrated")])
def test_compute_parts_take_the_compute_band_of_their_kind(capsys, calibration, topology, kind):
    """A fitted set takes the calibrated band on the GPU it was fitted on only (review s15 #8)."""
    extra = ["--calibration", calibration] if calibration else []
    r = _train(capsys, "--tp", "8", "--topology", topology, *extra)
    lo, _, hi = sib.bands(sib.COMPUTE_FILE)[kind]["log_ratio"]
    for p in ("compute", "optimizer"):
        assert r[f"{p}_hi_s"] / r[f"{p}_s"] == pytest.approx(math.exp(max(hi, 0.0)))
        assert r[f"{p}_lo_s"] / r[f"{p}_s"] == pytest.approx(math.exp(min(lo, 0.0)))


def test_communication_parts_follow_the_collective_calibration(capsys):
    """The TP interval is the collectives' own: a fitted calibration (covariance and its residuals) gives another
    width than the datasheet's spread of the public corpus."""
    sheet = _train(capsys, "--tp", "8")
    fitted = _train(capsys, "--tp", "8", "--calibration", "h100-nvlink-2gpu")
    w = [r["tp_comm_hi_s"] / r["tp_comm_lo_s"] for r in (sheet, fitted)]
    assert w[0] != pytest.approx(w[1], rel=1e-3)


def test_text_prints_each_parts_interval(capsys):
    argv = ["train", "--topology", "dgx-h100", "--model-spec", TINY, "--global-batch", "16", "--tp", "4", "--pp", "2"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    for label in ("compute", "TP communication", "pipeline sends", "pipeline bubble", "DP exposed", "optimizer"):
        line = next(x for x in out if x.strip().startswith(label))
        assert "90% " in line and " - " in line, line


def test_parts_are_opt_in_and_as_dict_names_them():
    router = router_for(server("dgx-h100"))
    cfg = TrainConfig(4, 2, 1, 8, 1)
    args = (router, resolve_model(None, TINY), cfg, get_gpu("h100"), load_calibration(None), ComputeParams())
    plain, parts = simulate_train(*args, record=False), simulate_train(*args, record=False, parts=True)
    assert plain.part_bounds == () and "compute_lo_s" not in plain.as_dict()
    assert plain.iteration_s == parts.iteration_s
    d = parts.as_dict()
    keys = list(d)
    for p in PARTS:
        i = keys.index(f"{p}_s")
        assert keys[i + 1: i + 3] == [f"{p}_lo_s", f"{p}_hi_s"]
        assert parts.bounds(p) == (d[f"{p}_lo_s"], d[f"{p}_hi_s"])


def test_compute_band_file_is_shipped_and_reported():
    b = sib.bands(sib.COMPUTE_FILE)
    assert set(b) == set(sib.KINDS)
    assert "calibrations/uncertainty/compute.json` holds these bands" in DOC.read_text()
    assert sib.train_kind(load_compute_params("a100-megatron"), "A100-SXM-80GB") == "calibrated"


def test_calibrated_compute_band_never_predicts_a_campaign_with_its_own_fit():
    from validation.compute_bands import residuals

    class Target:
        def __init__(self, s):
            self.measured_s, self.spec, self.micro_batch, self.tp, self.part = s, None, 1, 1, "loop"

    data = {"a": ("NVIDIA H200", [Target(1.0)]), "b": ("NVIDIA H200", [Target(2.0)]), "c": ("NVIDIA H100", [Target(3.0)])}
    seen = []

    class Stub:
        def __init__(self, tag):
            self.tag = tag

        def compute_only_s(self, t):
            seen.append((self.tag, t.measured_s))
            return 1.0

        def with_compute(self, compute):
            return Stub(compute)

    import validation.llm_real as lr
    orig = lr.RealPredictor
    lr.RealPredictor = lambda gpu, cal: Stub(None)
    try:
        sheet, cal = residuals(data, {"a": "fit-a", "c": "fit-c"})
    finally:
        lr.RealPredictor = orig
    assert set(sheet) == {"a", "b", "c"}
    assert set(cal) == {"b"}                      # a's fit predicts b (same GPU); c has no other H100 campaign
    assert ("fit-a", 1.0) not in seen and ("fit-a", 2.0) in seen and ("fit-c", 3.0) not in seen


def test_search_plans_carry_training_time_gpu_hours_and_cost_intervals(capsys):
    """Training time, GPU-hours and cost are the iteration times a constant: the iteration's interval ratio."""
    argv = ["search", "--model-spec", TINY, "--topology", "dgx-a100", "--gpus", "8", "--global-batch", "16",
            "--top", "2", "--price", "a100=2/h", "--json"]
    assert main(argv) == 0
    for p in json.loads(capsys.readouterr().out)["plans"]:
        for k, lo, hi in (("training_s", "training_lo_s", "training_hi_s"), ("gpu_hours", "gpu_hours_lo", "gpu_hours_hi"),
                          ("cost", "cost_lo", "cost_hi")):
            assert p[lo] <= p[k] <= p[hi] and p[hi] > p[lo]
            assert p[hi] / p[k] == pytest.approx(p["iteration_hi_s"] / p["iteration_s"])


def test_measured_comm_part_bands_are_shipped_and_reported():
    b = sib.part_bands()
    assert set(b) == {"tp_comm", "pp_comm"}
    for band in b.values():
        assert band["level"] == 0.9 and len(band["datasets"]) >= 3
    assert "calibrations/uncertainty/comm_parts.json` holds these bands" in DOC.read_text()


def test_tp_comm_interval_holds_the_measured_band(capsys):
    """The TP interval is at least the measured band of the TP runs' collective share (validation.part_checks):
    the collectives' own intervals alone held 6 of 32 measured configurations."""
    r = _train(capsys, "--tp", "8", "--calibration", "h100-nvlink-2gpu")
    lo, hi = sib.interval(r["tp_comm_s"], sib.part_bands()["tp_comm"])
    assert r["tp_comm_lo_s"] <= lo * (1 + 1e-12) and r["tp_comm_hi_s"] >= hi * (1 - 1e-12)


def test_part_checks_leave_each_campaign_out():
    """The report's 'inside, widened' column of a campaign uses the band of the other campaigns only."""
    from validation import part_checks
    rows = {"a": [(2.0, 1.0, 0.9, 1.1)], "b": [(1.0, 1.0, 0.9, 1.1)], "c": [(1.0, 1.0, 0.9, 1.1)]}
    logs = {f: [math.log(m / p) for m, p, _, _ in rs] for f, rs in rows.items()}
    a, b = part_checks._band_edges({f: v for f, v in logs.items() if f != "a"})
    assert b == pytest.approx(1.0)             # b and c measured what was predicted: a's 2x is outside
    a2, b2 = part_checks._band_edges(logs)
    assert b2 > 1.5                           # with a in, the band reaches it
