"""Accuracy regression on the committed 4x H200 measurements with the shipped calibrations.

Deterministic: the data and calibrations are files in the repository. The bounds sit just above
today's figures (docs/accuracy.md), so a change that makes the model worse fails here.
"""

import glob

import pytest

from simulator.collectives.params import Parameters, load_calibration
from validation.compare import Predictor, Topo, compare, dataset_points, summary
from validation.data import data_path
from validation.ddp_compare import DdpPredictor, aggregate, compare_ddp, ddp_summary, load_workloads, read_ddp
from validation.parsers import read_jsonl

CAMPAIGN = "h200x4_2026-11-26b"
TOPO = Topo("hgx-h200")


@pytest.fixture(scope="module")
def collectives():
    return (dataset_points(read_jsonl(data_path(f"{CAMPAIGN}/coll_world2_r15.jsonl")))
            + dataset_points(read_jsonl(data_path(f"{CAMPAIGN}/coll_world4_r15.jsonl"))))


def test_shipped_collective_calibration(collectives):
    cal = summary(compare(collectives, Predictor(TOPO, load_calibration("h200-nvlink")))[0])
    raw = summary(compare(collectives, Predictor(TOPO, Parameters()))[0])
    assert cal["points"] == raw["points"] == 455
    assert cal["median_time_pct"] < 12.5 and cal["p90_time_pct"] < 40
    assert raw["median_time_pct"] > 5 * cal["median_time_pct"]


def test_large_messages_after_calibration(collectives):
    big = [p for p in collectives if p.size_bytes >= 1 << 24]
    s = summary(compare(big, Predictor(TOPO, load_calibration("h200-nvlink")))[0])
    assert s["median_time_pct"] < 6


@pytest.fixture(scope="module")
def ddp():
    workloads = load_workloads(sorted(glob.glob(str(data_path("h200x1_2026-11-26/profile_mlp.json").parent / "profile_*.json"))))
    pts = aggregate(read_ddp(data_path(f"{CAMPAIGN}/ddp_world2.jsonl")) + read_ddp(data_path(f"{CAMPAIGN}/ddp_world4.jsonl")))
    return workloads, pts


@pytest.mark.parametrize("model, bound", [("resnet50", 5.0), ("gpt2", 10.0)])
def test_ddp_iterations_of_steady_models(ddp, model, bound):
    """ResNet-50 and GPT-2 run steadily on this machine; BERT-base's compute alone varies 30-50%."""
    workloads, pts = ddp
    comps = compare_ddp([p for p in pts if p.model == model],
                        DdpPredictor(TOPO, load_calibration("h200-nvlink-ddp"), workloads, "profile"))
    assert ddp_summary(comps)["median_time_pct"] < bound


def test_ddp_with_measured_compute_baseline(ddp):
    workloads, pts = ddp
    s = ddp_summary(compare_ddp(pts, DdpPredictor(TOPO, load_calibration("h200-nvlink"), workloads, "nosync")))
    assert s["points"] == 40 and s["median_time_pct"] < 10


def test_two_gpu_calibration_predicts_four_gpus_in_the_bandwidth_regime():
    """Shipped 2-GPU calibration (fitted on the pooled 2-GPU campaigns only) against the pooled
    4-GPU campaigns, >= 16 MiB, the pool of docs/accuracy.md section 3 (all three 4-GPU campaigns,
    validation.accuracy.CAMPAIGNS_4): 2.9% median, p90 14.8%, 93% coverage of intervals 34% wide when
    written; 92% coverage at 22% wide since the intervals keep a quarter of the covariance's
    extrapolation spread there (validation.extrapolation_scale; the share was learned on the other machine,
    `h200x4_2026-11-26_lat3`, too). LL's step rate (ring_step_share) took the 4-GPU LL all-reduces from +15% to -7% and the
    p90 from 16.7% to 14.8%; what remains above 8% is mostly 16-32 MiB (docs/accuracy.md, "What sets
    the >= 16 MiB p90"). On the two h200x4_2026-11-26b campaigns alone the median is 3.1% (2.3% before
    the step share: the fit trades the LL rows' 15% against a few points at 16-32 MiB)."""
    from validation import transfer
    from validation.accuracy import CAMPAIGNS_4
    pooled = [q for q in transfer.pooled_points(CAMPAIGNS_4) if q.point.size_bytes >= 1 << 24]
    rows = transfer.score(pooled, Predictor(TOPO, load_calibration("h200-nvlink-2gpu")))
    s = transfer.stats(rows)
    assert s["points"] == 98 and s["median_pct"] < 3.0 and s["coverage_pct"] > 85
    assert s["median_width_pct"] < 30 and s["p90_pct"] < 15.0


def test_one_two_gpu_campaign_alone_calibrates():
    """`gpunetsim calibrate` on one 2-GPU sweep (h200x2_2026-11-26c): the refit after dropping weakly
    determined keys starts from the fit found so far (restarted from the prior it stopped at its
    iteration cap far from the optimum: 34% median and 426% p90 in sample)."""
    from validation.calibrate import calibrate
    pts = dataset_points(read_jsonl(data_path("h200x2_2026-11-26c/coll_world2_r15.jsonl")))
    fit = calibrate(pts, Predictor(Topo("hgx-h200", gpus_per_node=2), Parameters()))
    assert fit.after["median_time_pct"] < 15 and fit.after["p90_time_pct"] < 60


def test_ddp_from_pooled_plain_steps_predicts_four_gpus():
    """docs/accuracy.md section 4's headline: collective calibration, datasheet DDP parameters, compute from
    plain single-GPU steps pooled over 6 launches of other device calls (4.3% median, 75% coverage when
    written); the one profile launch alone misses (9.0%)."""
    from validation.accuracy_ddp import CAMPAIGN as DDP_CAMPAIGN, predictors
    comm = load_calibration("h200-nvlink")
    d4 = aggregate(read_ddp(DDP_CAMPAIGN / "ddp_world4.jsonl"))
    preds = predictors(comm)
    s = ddp_summary(compare_ddp(d4, preds["pooled plain steps"]))
    assert s["points"] == 20 and s["median_time_pct"] < 6.0 and s["interval_coverage_pct"] >= 70
    assert ddp_summary(compare_ddp(d4, preds["profile"]))["median_time_pct"] > 6.0
