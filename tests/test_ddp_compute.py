"""Single-GPU compute for DDP predictions: pooled over launches, its band in the DDP interval, and the
on-host measurement of profile vs plain vs DDP compute (validation/data/h100x4_2026-11-26_ddp)."""

from __future__ import annotations

import contextlib
import io
import math
import json
from dataclasses import replace
from pathlib import Path

import pytest

from simulator.core.errors import InputError
from simulator.training.workload import ParamGrad, Workload
from validation.compute_check import read_compute, summarize, table_lines
from validation.compute_pool import StepSample, compute_s, pooled

DATA = Path(__file__).resolve().parents[1] / "validation" / "data"


def _shape() -> Workload:
    params = tuple(ParamGrad(f"p{i}", 4 << 20, 0.002 * (i + 1)) for i in range(4))
    return Workload("m", 0.004, 0.008, 0.002, params, batch_size=8)


def test_pooled_scales_the_shape_to_the_median_step_and_carries_the_band():
    samples = [StepSample("m", 8, "plain", t, "x") for t in (0.020, 0.021, 0.028)]
    samples += [StepSample("m", 8, "profile", 0.5, "x"), StepSample("m", 16, "plain", 0.5, "x"),
                StepSample("other", 8, "plain", 0.5, "x")]
    w = pooled(_shape(), samples, ("plain",))
    assert compute_s(w) == pytest.approx(0.021)
    assert w.forward_s / w.backward_s == pytest.approx(0.5)          # the profile's shape is kept
    assert w.params[-1].grad_ready_s == pytest.approx(0.008 * 0.021 / 0.014)
    extras = dict(w.extras)
    assert extras["compute_launches"] == 3
    assert extras["compute_lo_ratio"] == pytest.approx((0.020 + 0.05 * 2 * 0.001) / 0.021)
    assert 1.0 < extras["compute_hi_ratio"] < 0.028 / 0.021
    with pytest.raises(InputError, match="no single-GPU step"):
        pooled(_shape(), samples, ("queued",))


def test_ddp_interval_adds_the_compute_band():
    from simulator.network.closed_form import CostModel
    from simulator.collectives.params import Parameters
    from simulator.training.ddp import DDPConfig, simulate_iteration
    from simulator.training.ddp_intervals import with_interval
    from validation.compare import Topo

    model = CostModel(Topo("hgx-h200").build(4), Parameters())
    w = _shape()
    banded = replace(w, extras=(("compute_lo_ratio", 0.9), ("compute_hi_ratio", 1.2)))
    r = simulate_iteration(model, w, DDPConfig(bucket_cap_mb=25), "closed")
    plain, wide = with_interval(model, r, w, shipped={}), with_interval(model, r, banded, shipped={})
    compute = r.forward_s + r.backward_s + r.optimizer_s
    assert wide.iteration_lo_s == pytest.approx(plain.iteration_lo_s - 0.1 * compute)
    assert wide.iteration_hi_s == pytest.approx(plain.iteration_hi_s + 0.2 * compute)
    for bad in ((("compute_lo_ratio", 1.1), ("compute_hi_ratio", 1.2)), (("compute_lo_ratio", 0.9),),
                (("compute_lo_ratio", "x"), ("compute_hi_ratio", 1.2))):
        with pytest.raises(InputError, match="compute_lo_ratio"):
            with_interval(model, r, replace(w, extras=bad))


def test_cli_json_interval_carries_a_workload_band(tmp_path):
    from gpunetsim.cli import main
    from validation.profiler import ParamInfo, workload_dict

    d = workload_dict("m", 0.004, 0.008, 0.002, 8, "cuda", "bfloat16",
                      [ParamInfo(f"p{i}", 4 << 20, "float32") for i in range(4)], [0.002, 0.004, 0.006, 0.008])
    plain, banded = tmp_path / "w.json", tmp_path / "wb.json"
    plain.write_text(json.dumps(d))
    banded.write_text(json.dumps({**d, "compute_lo_ratio": 0.8, "compute_hi_ratio": 1.3}))
    rows = []
    for path in (plain, banded):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["ddp", "--topology", "hgx-h200", "--gpus", "4", "--workload", str(path), "--json"]) == 0
        rows.append(json.loads(buf.getvalue()))
    from simulator.training.ddp_intervals import ddp_band
    t = rows[0]["iteration_s"]
    assert rows[1]["iteration_s"] == pytest.approx(t)
    compute = rows[0]["forward_s"] + rows[0]["backward_s"] + rows[0]["optimizer_s"]
    assert rows[1]["iteration_hi_s"] >= t + 0.3 * compute - 1e-12        # the workload's compute band
    for row, band in ((rows[0], ddp_band(None)), (rows[1], ddp_band((0.8, 1.3)))):   # its kind's held-out band
        lo, _, hi = band["log_ratio"]
        assert row["iteration_lo_s"] <= t * math.exp(lo) + 1e-12 and row["iteration_hi_s"] >= t * math.exp(hi) - 1e-12


def test_committed_probe_no_sync_is_the_plain_step_and_the_hooks_add():
    """4x H100 (h100x4_2026-11-26_ddp): where the GPU sets the pace, DDP no_sync() equals the plain step
    within 1% and the hooked profile reads 0.5-2% above it; BERT-base is launch-bound (GPU time alone well
    under its steps)."""
    recs = [r for n in (2, 4) for r in read_compute(DATA / "h100x4_2026-11-26_ddp" / f"compute_world{n}.jsonl")]
    rows = {(r.model, r.world): r for r in summarize(recs)}
    assert len(rows) == 8 and all(r.rounds == 3 for r in rows.values())
    for model in ("resnet50", "gpt2"):
        for world in (2, 4):
            r = rows[(model, world)]
            assert abs(r.ratios["nosync"] - 1) < 0.01 and 0.005 < r.ratios["profile"] - 1 < 0.02
            assert r.gpu_bound_rounds == 3
    for world in (2, 4):
        assert rows[("bert-base", world)].ratios["queued"] < 0.6 and rows[("bert-base", world)].gpu_bound_rounds == 0
    assert len(table_lines(list(rows.values()))) == 10


def test_read_compute_rejects_bad_records(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text(json.dumps({"kind": "meta"}) + "\n")
    with pytest.raises(InputError, match="no ddp_compute"):
        read_compute(p)
    p.write_text(json.dumps({"kind": "ddp_compute", "model": "m", "world": 2, "round": 0, "variant": "x",
                             "median_s": 1.0}) + "\n")
    with pytest.raises(InputError, match="variant"):
        read_compute(p)
    from validation.compute_check import main
    assert main([str(p)]) == 2


def test_pooling_errors_name_their_cause_and_source(tmp_path):
    """Review finding 11: the no-step error names the samples' files; a zero-compute shape or a shape
    without a batch size is an InputError saying so (they were a ZeroDivisionError and a misleading
    'no single-GPU step at batch None'); a second pooling keeps one compute_launches."""
    samples = [StepSample("m", 8, "plain", t, "launch1.jsonl") for t in (0.020, 0.021, 0.028)]
    with pytest.raises(InputError) as err:
        pooled(_shape(), samples, ("profile",))
    assert err.value.source == "launch1.jsonl"
    with pytest.raises(InputError, match="above 0 s") as err:
        pooled(replace(_shape(), forward_s=0.0, backward_s=0.0, optimizer_s=0.0), samples, ("plain",))
    assert err.value.field == "forward_s"
    with pytest.raises(InputError, match="no batch size") as err:
        pooled(replace(_shape(), batch_size=None), samples, ("plain",))
    assert err.value.field == "batch_size"
    twice = pooled(pooled(_shape(), samples, ("plain",)), samples, ("plain",))
    keys = [k for k, _ in twice.extras]
    assert sorted(keys) == sorted(set(keys)) == ["compute_hi_ratio", "compute_launches", "compute_lo_ratio"]
    assert compute_s(twice) == pytest.approx(0.021)


def test_read_single_gpu_rejects_a_step_of_zero(tmp_path):
    from validation.compute_pool import read_single_gpu
    path = tmp_path / "dp_world1.jsonl"
    path.write_text(json.dumps({"kind": "dp", "gpus": 1, "model": "m", "batch_size": 8, "median_s": 0.0}) + "\n")
    with pytest.raises(InputError, match="more than 0 s") as err:
        read_single_gpu(path)
    assert str(path) in err.value.source


def test_ddp_section_text_reads_its_figures_and_says_na_without_coverage():
    """Review: the DDP target line printed 0% for a missing coverage; the probe text typed its ms figures."""
    from validation.accuracy_ddp import HEADLINE, probe_facts, target_line
    from validation.compute_check import ModelCompute
    s = {"median_time_pct": 4.0, "p90_time_pct": 6.0, "worst_time_pct": 9.0, "median_spread_pct": 1.0, "points": 5}
    line = target_line({f"{HEADLINE}_4": s, f"{HEADLINE}_2": s, "profile_4": s, "held_out_campaigns": s,
                        "ddp_plain_launches": "6"})
    assert "coverage n/a (width n/a)" in line and "pooled over 6 launches" in line
    rows = [ModelCompute("resnet50", 2, 3, 0.031, 0.031, 0.032, {"queued": 1.0, "profile": 1.02, "nosync": 1.003}, 3),
            ModelCompute("bert-base", 2, 3, 0.040, 0.030, 0.050, {"queued": 0.5, "profile": 1.2, "nosync": 1.05}, 0)]
    f = probe_facts(rows)
    assert f["rounds"] == "3" and f["nosync_pct"] == pytest.approx(0.3) and f["profile_pct"] == pytest.approx(2.0)
    assert f["host_bound"] == "bert-base here: 20.0 ms of GPU time, steps of 30-50 ms"


def _iteration():
    from simulator.network.closed_form import CostModel
    from simulator.collectives.params import Parameters
    from simulator.training.ddp import DDPConfig, simulate_iteration
    from validation.compare import Topo

    model = CostModel(Topo("hgx-h200").build(4), Parameters())
    return model, simulate_iteration(model, _shape(), DDPConfig(bucket_cap_mb=25), "closed")


@pytest.mark.parametrize("extras,kind", [((), "one profile"),
                                         ((("compute_lo_ratio", 0.99), ("compute_hi_ratio", 1.01)), "pooled")])
def test_ddp_interval_widens_to_the_held_out_band_of_its_compute_kind(extras, kind):
    """The interval holds the prediction times the held-out band of the workload's kind; the median is untouched."""
    from simulator.training.ddp_intervals import with_interval
    model, r = _iteration()
    w = replace(_shape(), extras=extras)
    other = "pooled" if kind == "one profile" else "one profile"
    band = {kind: {"level": 0.9, "log_ratio": [-0.5, 0.0, 0.7]}, other: {"level": 0.9, "log_ratio": [0, 0, 0]}}
    narrow, wide = with_interval(model, r, w, shipped={}), with_interval(model, r, w, shipped=band)
    assert wide.iteration_s == narrow.iteration_s == r.iteration_s
    assert wide.iteration_lo_s == pytest.approx(min(narrow.iteration_lo_s, r.iteration_s * math.exp(-0.5)))
    assert wide.iteration_hi_s == pytest.approx(max(narrow.iteration_hi_s, r.iteration_s * math.exp(0.7)))
    assert wide.iteration_hi_s > narrow.iteration_hi_s and wide.iteration_lo_s < narrow.iteration_lo_s


def test_shipped_ddp_band_applies_and_names_its_source():
    """The shipped band file exists, widens a one-profile prediction beyond the model's interval, and the CLI
    text names it; outside its GPU counts the interval says it extrapolates the band."""
    from simulator.training.ddp_intervals import band_source, ddp_band, with_interval
    from simulator.training.iteration_bands import DDP_FILE
    model, r = _iteration()
    assert DDP_FILE.exists() and ddp_band(None) is not None and ddp_band((0.9, 1.1)) is not None
    shipped, narrow = with_interval(model, r, _shape()), with_interval(model, r, _shape(), shipped={})
    assert shipped.iteration_hi_s - shipped.iteration_lo_s > narrow.iteration_hi_s - narrow.iteration_lo_s
    assert DDP_FILE.name in band_source(None) and "one profile" in band_source(None)
    assert "pooled" in band_source((0.9, 1.1))
    assert not any("held-out DDP band" in c for c in shipped.iteration_extrapolated)
    band = {"one profile": {"level": 0.9, "log_ratio": [-0.2, 0, 0.3], "domain": {"gpus": ["H200-SXM"], "world": [8, 16]}}}
    assert any("held-out DDP band: 4 GPUs" in c for c in with_interval(model, r, _shape(), shipped=band).iteration_extrapolated)


def test_gloo_ddp_interval_is_not_widened_by_the_nccl_band():
    """The held-out bands are of NCCL runs: a host backend's interval stays its own."""
    from simulator.training.ddp_intervals import iteration_interval
    _, r = _iteration()

    class Host:                      # not a CostModel: a host backend (Gloo, MPI) without bucket intervals
        def time_s(self, *_):
            return 1e-3

        def interval(self, *_):
            return None
    band = {"one profile": {"level": 0.9, "log_ratio": [-0.5, 0.0, 0.7]}}
    assert iteration_interval(Host(), r, None, band) == iteration_interval(Host(), r, None, {})


def test_read_single_gpu_keeps_a_captures_host_time(tmp_path):
    """A dp_profile capture's host launch times (forward + backward + optimizer) ride with its sample; a capture
    without forward and backward host times, and a plain step, carry none."""
    from validation.compute_pool import read_single_gpu
    prof = {"forward_s": 0.01, "backward_s": 0.02, "optimizer_s": 0.001, "batch_size": 8}
    rows = [{"kind": "dp_profile", "model": "m", "profile": {**prof, "forward_host_s": 0.004,
                                                              "backward_host_s": 0.005, "optimizer_host_s": 0.001}},
            {"kind": "dp_profile", "model": "m", "profile": {**prof, "forward_host_s": 0.004}},
            {"kind": "dp", "gpus": 1, "model": "m", "batch_size": 8, "median_s": 0.03}]
    path = tmp_path / "dp_world1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with_host, without, plain = read_single_gpu(path)
    assert with_host.host_s == pytest.approx(0.010) and with_host.step_s == pytest.approx(0.031)
    assert without.host_s is None and plain.host_s is None
