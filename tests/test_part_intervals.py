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
from simulator.core.errors import InputError
from simulator.training import iteration_bands as sib
from simulator.training.gpus import get_gpu
from simulator.training.llm.compute import ComputeParams, load_compute_params
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.iteration import simulate_train
from simulator.training.llm.model import resolve_model
from simulator.training.llm.part_intervals import PARTS
from topologies.presets import server
from topologies.routing import router_for
from tests.conftest import with_options

DOC = Path(__file__).resolve().parents[1] / "docs" / "accuracy.md"
TINY = "hidden=1024,layers=8,heads=16,seq=1024"


def _train(capsys, *extra: str) -> dict:
    argv = with_options(["train", "--topology", "dgx-h100", "--nodes", "2", "--model-spec", TINY, "--global-batch",
                         "16"], list(extra))
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


IN_DOMAIN = ["train", "--topology", "dgx-h100", "--nodes", "1", "--model-spec", "hidden=4096,layers=8,heads=32,seq=2048",
             "--tp", "2", "--pp", "2", "--global-batch", "8", "--micro-batch", "1"]
"""A plan inside the measured TP and PP bands' runs: H100, TP 2 with 16 MiB calls, 2 stages sending 8 MiB."""
IN_DOMAIN_WITH_LOSS = [*IN_DOMAIN[:IN_DOMAIN.index("--pp")], "--global-batch", "8", "--micro-batch", "1"]
"""The same on one stage: its TP part also holds the output layer's 8 KiB loss all-reduces (under 10% of its time)."""
GPT3 = ["train", "--topology", "dgx-a100", "--nodes", "2", "--model", "gpt3-175b", "--tp", "8", "--pp", "2",
        "--global-batch", "64", "--micro-batch", "1"]


def _run(capsys, argv: list[str]) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _widened(r: dict, part: str) -> bool:
    lo, hi = sib.interval(r[f"{part}_s"], sib.part_bands()[part])
    return r[f"{part}_lo_s"] <= lo * (1 + 1e-12) and r[f"{part}_hi_s"] >= hi * (1 - 1e-12)


def test_tp_and_pp_intervals_hold_the_measured_band_inside_its_runs(capsys):
    """Inside the band's domain (its runs' GPUs, group sizes and bytes per call) the TP and PP intervals are at
    least the measured band of the runs' parts (validation.part_checks): the collectives' own intervals alone
    held 6 of 32 measured TP configurations."""
    r = _run(capsys, IN_DOMAIN)
    assert r["tp_comm_s"] > 0 and r["pp_comm_s"] > 0
    assert _widened(r, "tp_comm") and _widened(r, "pp_comm")
    assert r["comm_extrapolated"] == []
    r = _run(capsys, IN_DOMAIN_WITH_LOSS)
    assert r["pp_comm_s"] == 0 and _widened(r, "tp_comm") and r["comm_extrapolated"] == []


def test_comm_bands_record_their_runs_domain():
    """comm_parts.json says which runs its bands come from (review s16 #2): H100 / H200, 2-4 GPUs, 8-16 MiB."""
    for part, world in (("tp_comm", [2, 4]), ("pp_comm", [2, 4])):
        d = sib.part_bands()[part]["domain"]
        assert set(d["gpus"]) == {"H100-SXM", "H200-SXM"} and d["world"] == world
    assert sib.part_bands()["tp_comm"]["domain"]["call_bytes"] == [8 * 2**20, 16 * 2**20]
    assert sib.part_bands()["pp_comm"]["domain"]["call_bytes"] == [8 * 2**20, 8 * 2**20]


def test_tp_band_of_small_host_bound_loops_does_not_widen_a_large_model(capsys):
    """GPT-3 175B on 2x8 A100 (TP 8, 48 MiB calls) is outside every run of the TP band: its TP part keeps its
    calls' own interval (was 0.11x - 3.2x: the band's low end, 9x NVLink's bandwidth) and says why, in --json
    and in the text (review s16 #2). The same for its pipeline sends."""
    r = _run(capsys, GPT3)
    lo, hi = sib.interval(r["tp_comm_s"], sib.part_bands()["tp_comm"])
    assert r["tp_comm_lo_s"] > 2 * lo and r["tp_comm_lo_s"] <= r["tp_comm_s"] <= r["tp_comm_hi_s"]
    tp, pp = r["comm_extrapolated"]
    assert tp.startswith("TP communication: A100-SXM-80GB, TP 8, calls of ") and "not widened" in tp
    assert pp.startswith("pipeline sends: A100-SXM-80GB") and "not widened" in pp
    assert main(GPT3) == 0
    text = capsys.readouterr().out
    assert f"  ({tp})" in text and f"  ({pp})" in text


def test_tp_band_outside_its_call_sizes_only(capsys, monkeypatch):
    """Same GPUs and TP degree as the band's runs, calls of 2 MiB (hidden 1024, seq 1024; and the loss's 4 KiB
    all-reduces): outside on size alone, the TP part's interval is its calls' own (as without a band file)."""
    from simulator.training.llm import part_intervals as spi
    argv = ["train", "--topology", "dgx-h100", "--nodes", "1", "--model-spec", TINY, "--global-batch", "16",
            "--tp", "2"]
    r = _run(capsys, argv)
    assert len(r["comm_extrapolated"]) == 1
    assert r["comm_extrapolated"][0].startswith("TP communication: calls of 4 KiB-2 MiB (100% of its predicted time) "
                                                "outside")
    monkeypatch.setattr(spi, "part_bands", lambda: {})
    bare = _run(capsys, argv)
    assert (r["tp_comm_lo_s"], r["tp_comm_hi_s"]) == (bare["tp_comm_lo_s"], bare["tp_comm_hi_s"])
    assert bare["comm_extrapolated"] == []


def test_bad_call_bytes_domain_is_an_input_error(tmp_path, monkeypatch):
    from simulator.training.llm import part_intervals as spi
    bands = {"tp_comm": {**sib.part_bands()["tp_comm"], "domain": {"gpus": ["H100-SXM"], "world": [2, 4],
                                                                   "call_bytes": [16, 8]}}}
    monkeypatch.setattr(spi, "part_bands", lambda: bands)
    calls = type("C", (), {"sizes": [8.0]})()
    with pytest.raises(InputError, match="call_bytes"):
        spi.comm_caveats("tp_comm", "H100-SXM", 2, calls)


def test_part_checks_leave_each_campaign_out():
    """The report's 'inside, widened' column of a campaign uses the band of the other campaigns only."""
    from validation.iteration_bands import band_edges
    rows = {"a": [(2.0, 1.0, 0.9, 1.1)], "b": [(1.0, 1.0, 0.9, 1.1)], "c": [(1.0, 1.0, 0.9, 1.1)]}
    logs = {f: [math.log(m / p) for m, p, _, _ in rs] for f, rs in rows.items()}
    a, b = band_edges({f: v for f, v in logs.items() if f != "a"})
    assert b == pytest.approx(1.0)             # b and c measured what was predicted: a's 2x is outside
    a2, b2 = band_edges(logs)
    assert b2 > 1.5                           # with a in, the band reaches it
