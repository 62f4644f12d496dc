"""Fitting the DDP model's parameters weighs each configuration by its measured spread (validation.ddp_compare)."""

from dataclasses import replace

import pytest

from simulator.collectives.params import Parameters
from validation.data import data_path
from validation.ddp_compare import (SPREAD_FLOOR, DdpMeasurement, DdpPredictor, calibrate_ddp, compute_gap,
                                    load_workloads, spread_sd)
from validation.compare import Topo


def _point(cap, median, p10=None, p90=None, nosync=None, model="mlp", batch=64):
    return DdpMeasurement(model, batch, 2, cap, median, p10 or median * 0.995, p90 or median * 1.005, nosync, "x")


def test_spread_is_the_p10_p90_width_in_log_units_with_a_floor():
    assert spread_sd(_point(25, 1.0, 0.8, 1.25)) == pytest.approx(0.4463 / 2.5632, rel=1e-3)
    assert spread_sd(_point(25, 1.0, 1.0, 1.0)) == SPREAD_FLOOR


def test_a_noisy_configuration_does_not_drag_the_fit():
    """Measurements made by the model with slowdown 0.3, one of them 30% off but with a launch spread
    that wide: the fit recovers 0.3 (an unweighted fit follows the outlier)."""
    workloads = load_workloads([data_path("h200x1_2026-11-26/profile_gpt2.json")])
    truth = Parameters().with_values({"ddp.compute_slowdown": 0.3})
    pred = DdpPredictor(Topo("hgx-h200"), truth, workloads)
    points = [_point(cap, pred.predict(_point(cap, 1.0, model="gpt2", batch=8)).predicted_s, model="gpt2", batch=8)
              for cap in (1, 5, 25, 100)]
    noisy = replace(points[1], median_s=points[1].median_s * 1.3)
    noisy = replace(noisy, p10_s=noisy.median_s * 0.6, p90_s=noisy.median_s * 1.5)
    start = pred.with_params(Parameters().with_values({"ddp.compute_slowdown": 0.05}))
    params, _, _ = calibrate_ddp([points[0], noisy] + points[2:], start, keys=("ddp.compute_slowdown",))
    assert params["ddp.compute_slowdown"] == pytest.approx(0.3, abs=0.1)


def test_compute_gap_is_the_profile_against_the_runs_no_sync():
    workloads = load_workloads([data_path("h200x1_2026-11-26/profile_mlp.json")])
    w = workloads["mlp"]
    total = w.forward_s + w.backward_s + w.optimizer_s
    assert compute_gap([_point(25, 1.0, nosync=total / 1.25)], workloads) == pytest.approx(25.0)
    assert compute_gap([_point(25, 1.0)], workloads) is None
