"""Identifiability, refusals and 90% prediction intervals (issue 10)."""

import json

import numpy as np
import pytest

from gpunetsim.cli import main
from simulator.collectives.params import Parameters, load_calibration
from simulator.collectives.uncertainty import Uncertainty, check_block
from simulator.core.errors import InputError
from simulator.network.closed_form import CostModel
from simulator.network.run import run_collective
from validation.calibrate import REFUSED, calibrate
from validation.compare import Predictor, Topo
from validation.identifiability import identifiable
from validation.parsers import CollMeasurement, Dataset, write_jsonl

import topologies

TRUE = {"call_overhead_s": 20e-6, "rank_overhead_s": 5e-6, "link_efficiency.nvlink": 0.7}


def points(params: Parameters, worlds=(2,), step: int = 3) -> list[CollMeasurement]:
    pred = Predictor(Topo("hgx-h200"), params)
    out = []
    for world in worlds:
        for op in ("all_reduce", "all_gather", "broadcast"):
            for k in range(2, 31, step):
                p = CollMeasurement(op, world, 2**k * world, 1.0, None, None)
                t = pred.predict(p).predicted_s
                out.append(CollMeasurement(op, world, p.size_bytes, t, None, None, min_s=0.97 * t, max_s=1.05 * t))
    return out


@pytest.fixture(scope="module")
def fit2():
    return calibrate(points(Parameters().with_values(TRUE)), Predictor(Topo("hgx-h200"), Parameters()))


def test_collinear_columns_are_left_at_their_prior():
    J = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 2.0]])
    v = identifiable(J, ["rank_overhead_s", "call_overhead_s", "link_efficiency.nvlink"])
    assert [x.determined for x in v] == [False, True, True]
    assert "call_overhead_s" in v[0].reason


def test_two_gpus_do_not_determine_per_rank_cost(fit2):
    verdict = {v.key: v for v in fit2.verdicts}
    assert verdict["call_overhead_s"].determined
    assert not verdict["rank_overhead_s"].determined
    assert fit2.params["rank_overhead_s"] == Parameters()["rank_overhead_s"]      # kept at its prior
    assert fit2.domain["worlds"] == [2]


def test_both_world_sizes_determine_per_rank_cost():
    fit = calibrate(points(Parameters().with_values(TRUE), (2, 4)), Predictor(Topo("hgx-h200"), Parameters()))
    verdict = {v.key: v for v in fit.verdicts}
    assert verdict["rank_overhead_s"].determined
    assert fit.params["rank_overhead_s"] == pytest.approx(5e-6, rel=0.2)


def _interval(params: Parameters, gpus: int, size: int):
    model = CostModel(topologies.build("hgx-h200", gpus_per_node=gpus), params)
    return run_collective(model, "all_reduce", size, engine="closed")


def test_interval_brackets_the_prediction_and_widens_when_extrapolating(fit2):
    for gpus in (2, 4):
        r = _interval(fit2.params, gpus, 1024)
        assert r.time_lo_s < r.time_s < r.time_hi_s
    at2, at4 = _interval(fit2.params, 2, 1024), _interval(fit2.params, 4, 1024)
    assert (at4.time_hi_s - at4.time_lo_s) / at4.time_s > (at2.time_hi_s - at2.time_lo_s) / at2.time_s
    assert at4.extrapolated and not at2.extrapolated


def test_calibration_file_round_trips_its_uncertainty(fit2, tmp_path):
    from simulator.collectives.params import save_calibration
    path = tmp_path / "c.json"
    save_calibration(fit2.params, path)
    back = load_calibration(str(path))
    assert back.uncertainty is not None
    r1, r2 = _interval(fit2.params, 4, 1 << 20), _interval(back, 4, 1 << 20)
    assert r1.time_lo_s == pytest.approx(r2.time_lo_s) and r1.time_hi_s == pytest.approx(r2.time_hi_s)


@pytest.mark.parametrize("block, field", [
    ({"keys": ["nope"], "scale": [1], "cov": [[1]], "residual": {"latency": [0, 0, 0], "bandwidth": [0, 0, 0]}},
     "uncertainty.keys"),
    ({"keys": [], "scale": [], "cov": [], "residual": {"latency": [1, 0, 0], "bandwidth": [0, 0, 0]}},
     "uncertainty.residual.latency"),
    ({"keys": ["call_overhead_s"], "scale": [1e-5], "cov": [[1, 2]],
      "residual": {"latency": [0, 0, 0], "bandwidth": [0, 0, 0]}}, "uncertainty.cov"),
    ({"keys": [], "scale": [], "cov": [], "residual": {"latency": [0, 0, 0], "bandwidth": [0, 0, 0],
                                                       "by_size": {"edges_bytes": [65536], "q": [[0, 0, 0]]}}},
     "uncertainty.residual.by_size"),
    ({"keys": [], "scale": [], "cov": [], "residual": {"latency": [0, 0, 0], "bandwidth": [0, 0, 0],
                                                       "by_size": {"edges_bytes": [65536],
                                                                   "q": [[0, 0, 0], [0.1, 0, 0]]}}},
     "uncertainty.residual.by_size.q[1]"),
    ({"keys": [], "scale": [], "cov": [], "residual": {"latency": [0, 0, 0], "bandwidth": [0, 0, 0],
                                                       "by_size": {"edges_bytes": [65536], "q": [[0, 0, 0]] * 2,
                                                                   "param_sd": [0.1, -0.1]}}},
     "uncertainty.residual.by_size.param_sd"),
])
def test_bad_uncertainty_blocks_name_the_field(block, field):
    with pytest.raises(InputError) as e:
        check_block(block, "x.json")
    assert e.value.field == field


def test_efficiency_above_one_in_a_calibration_file_is_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"params": {"op_efficiency.all_reduce": 1.14}}))
    with pytest.raises(InputError) as e:
        load_calibration(str(path))
    assert e.value.field == "params.op_efficiency.all_reduce" and "feature the model lacks" in str(e.value)


def test_latency_below_the_physical_minimum_is_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"params": {"hop_latency_s.nvlink.ring.ll": 1e-9}}))
    with pytest.raises(InputError, match="physical minimum"):
        load_calibration(str(path))


def test_fit_that_wants_an_efficiency_above_one_is_refused():
    """Data 15% faster on the wire than NCCL's efficiencies allow: the fit refuses to go above 1."""
    truth = Parameters().with_values({"link_efficiency.nvlink": 1.0, "proto_efficiency.ring.simple": 1.0})
    fast = [CollMeasurement(p.op, p.world, p.size_bytes, p.time_s / 1.15, None, None)
            for p in points(truth) if p.size_bytes >= 1 << 24]
    fit = calibrate(fast, Predictor(Topo("hgx-h200"), Parameters()),
                    keys=["link_efficiency.nvlink", "call_overhead_s"])
    assert any(r.startswith("link_efficiency.nvlink") for r in fit.refused)
    assert fit.params["link_efficiency.nvlink"] == Parameters()["link_efficiency.nvlink"]
    # the table and the file's `parameters` block said "determined" for it, next to the refusal
    (v,) = [v for v in fit.verdicts if v.key == "link_efficiency.nvlink"]
    assert not v.determined and v.reason == REFUSED and "link_efficiency.nvlink" not in fit.keys


def test_collective_json_rows_carry_the_interval(capsys):
    assert main(["collective", "--topology", "hgx-h200", "--gpus", "2", "-b", "1K", "-e", "1K", "--json"]) == 0
    row = json.loads(capsys.readouterr().out.strip().splitlines()[0])
    assert row["time_lo_s"] < row["time_s"] < row["time_hi_s"]


def test_uncertainty_mixes_latency_and_bandwidth_residuals():
    u = Uncertainty((), np.zeros(0), np.zeros((0, 0)), {"latency": (-0.5, 0.0, 0.5), "bandwidth": (-0.1, 0.0, 0.1)},
                    {})
    lo, hi = u.bounds(1.0, 1.0, 0.0)
    assert lo == pytest.approx(np.exp(-0.5)) and hi == pytest.approx(np.exp(0.5))
    lo, hi = u.bounds(1.0, 0.0, 0.0)
    assert hi == pytest.approx(np.exp(0.1))


def test_ddp_json_carries_the_iteration_interval(capsys):
    assert main(["ddp", "--topology", "hgx-h200", "--gpus", "4", "--workload", "resnet50", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["iteration_lo_s"] <= row["iteration_s"] <= row["iteration_hi_s"]
    assert row["iteration_hi_s"] > row["iteration_lo_s"]


def test_size_band_residuals_replace_the_regime_mix():
    u = Uncertainty.from_block({"keys": [], "scale": [], "cov": [],
                                "residual": {"latency": [-0.5, 0.0, 0.5], "bandwidth": [-0.3, 0.0, 0.3],
                                             "by_size": {"edges_bytes": [65536, 16777216],
                                                         "q": [[-0.4, 0.1, 0.6], [-0.2, 0.0, 0.2],
                                                               [-0.03, 0.0, 0.02]]}}})
    assert u.bounds(1.0, 1.0, 0.0, size_bytes=4) == pytest.approx((np.exp(-0.4), np.exp(0.6)))
    assert u.bounds(1.0, 0.5, 0.0, size_bytes=1 << 20) == pytest.approx((np.exp(-0.2), np.exp(0.2)))
    assert u.bounds(1.0, 0.0, 0.0, size_bytes=1 << 30) == pytest.approx((np.exp(-0.03), np.exp(0.02)))
    assert u.bounds(1.0, 0.0, 0.0) == pytest.approx((np.exp(-0.3), np.exp(0.3)))      # size unknown: regimes
    back = Uncertainty.from_block(check_block(u.to_block()))
    assert back.size_edges_bytes == u.size_edges_bytes and back.size_residual == u.size_residual


def test_calibration_intervals_are_narrow_where_runs_reproduce():
    """Residuals of a few percent at large sizes and tens of percent at small ones: the fit's intervals
    follow the size band (a latency share alone would give large sizes the small sizes' spread)."""
    truth = Parameters().with_values(TRUE)
    rng = np.random.default_rng(7)
    noisy = []
    for p in points(truth, step=1):
        sd = 0.3 if p.size_bytes < 1 << 16 else 0.1 if p.size_bytes < 1 << 24 else 0.01
        t = p.time_s * float(np.exp(rng.normal(0.0, sd)))
        noisy.append(CollMeasurement(p.op, p.world, p.size_bytes, t, None, None,     # repetitions spread as
                                     min_s=t * np.exp(-2 * sd), max_s=t * np.exp(2 * sd)))  # the noise
    fit = calibrate(noisy, Predictor(Topo("hgx-h200"), Parameters()))
    assert fit.uncertainty.size_edges_bytes == (1 << 16, 1 << 24, 1 << 25)    # validation.calibrate.RESIDUAL_EDGES_BYTES
    small, big = _interval(fit.params, 2, 1024), _interval(fit.params, 2, 1 << 30)
    width = lambda r: (r.time_hi_s - r.time_lo_s) / r.time_s
    assert width(big) < 0.15 < width(small)


def test_left_out_residuals_grow_with_the_parameters_per_point():
    """Leverages of a least-squares fit sum to its parameter count; each residual left out is the
    fitted one over 1 - leverage, so a fit with nearly as many keys as points widens its quantiles."""
    from validation.calibrate import leave_one_out_factor
    rng = np.random.default_rng(0)
    J = rng.normal(size=(40, 8))
    f = leave_one_out_factor(J, [1e9] * 8, 1.0)       # a vanishing prior: plain least squares
    assert np.all(f >= 1) and np.sum(1 - 1 / f) == pytest.approx(8, rel=1e-3)
    tight = leave_one_out_factor(J, [1e-3] * 8, 1.0)  # a prior that pins the keys: nothing is fitted
    assert np.allclose(tight, 1, atol=1e-3)
    assert leave_one_out_factor(np.zeros((5, 0)), [], 1.0).tolist() == [1.0] * 5


def test_interval_adds_only_the_parameter_spread_beyond_the_calibrations_own():
    """Leave-one-out residuals already hold the parameters' spread where they were fitted: a prediction
    with the same spread gets the residual quantiles alone, a larger one (extrapolating) adds the excess."""
    block = {"keys": [], "scale": [], "cov": [],
             "residual": {"latency": [-0.5, 0.0, 0.5], "bandwidth": [-0.3, 0.0, 0.3],
                          "by_size": {"edges_bytes": [65536], "q": [[-0.4, 0.0, 0.4], [-0.05, 0.0, 0.05]],
                                      "param_sd": [0.05, 0.03]}}}
    u = Uncertainty.from_block(check_block(block))
    assert u.bounds(1.0, 0.0, 0.03, size_bytes=1 << 20) == pytest.approx((np.exp(-0.05), np.exp(0.05)))
    z = u.z * 0.04                                     # sqrt(0.05^2 - 0.03^2)
    assert u.bounds(1.0, 0.0, 0.05, size_bytes=1 << 20) == pytest.approx(
        (np.exp(-np.hypot(0.05, z)), np.exp(np.hypot(0.05, z))))
    assert Uncertainty.from_block(check_block(u.to_block())).size_param_sd == (0.05, 0.03)


def test_residual_quantiles_come_from_points_pooled_over_launches():
    """Points measured in one launch stray by that launch's host state; with enough points pooled over
    several launches in every size band, the interval (of the median over launches) uses those alone,
    and so does the any-launch band's repetition spread."""
    from dataclasses import replace
    from validation.calibrate import MIN_BAND_POINTS, residual_quantiles
    pred = Predictor(Topo("hgx-h200", gpus_per_node=2), Parameters())
    rng = np.random.default_rng(3)
    comps = []
    for k in range(2, 31):
        for pooled in (True, False):
            for op in ("all_reduce", "all_gather", "broadcast", "reduce"):
                p = CollMeasurement(op, 2, 2 ** k * 2, 1.0, None, None)
                t = pred.predict(p).predicted_s * float(np.exp(rng.normal(0, 0.02 if pooled else 0.4)))
                reps = tuple(t * np.exp(rng.normal(0, 0.05 if pooled else 0.01, 8)))
                p = replace(p, time_s=t, min_s=min(reps), max_s=max(reps), rep_times_s=reps,
                            launches=3 if pooled else 1)
                comps.append(pred.predict(p))
    assert sum(c.point.launches > 1 and c.point.size_bytes >= 1 << 24 for c in comps) >= MIN_BAND_POINTS
    both = residual_quantiles(comps, pred)["by_size"]["q"]
    alone = residual_quantiles([c for c in comps if c.point.launches > 1], pred)
    assert both == alone["by_size"]["q"] and all(hi - lo < 0.15 for lo, _, hi in both)
    spread = residual_quantiles(comps, pred)["reps"]["q"][0]
    assert spread[-1] - spread[0] > 0.15       # the pooled points' 5% spread, not the one launch's 1%
    assert np.ptp(residual_quantiles([c for c in comps if c.point.launches == 1], pred)["reps"]["q"][0]) < 0.1
    one_launch = residual_quantiles([c for c in comps if c.point.launches == 1], pred)["by_size"]["q"]
    assert all(hi - lo > 0.6 for lo, _, hi in one_launch)


def _collective_json(capsys, calibration: str, nodes: int, gpus: int) -> dict:
    rc = main(["collective", "--calibration", calibration, "--topology", "hgx-h200", "--nodes", str(nodes), "--gpus",
               str(gpus), "--op", "all_reduce", "-b", "1G", "-e", "1G", "--algo", "ring", "--json"])
    assert rc == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_the_extrapolation_share_applies_only_where_it_was_checked(capsys, tmp_path):
    """The >= 16 MiB share (0.25) was learned on 2 -> 4 GPUs inside one NVLink host: 64 GPUs over the network keep
    the covariance's spread in full, and the network keys the 2-GPU data never touched add their prior spread
    (review s15 #4); 4 GPUs on one host keep the share."""
    from simulator.collectives.params import read_calibration
    block, _ = read_calibration("h200-nvlink-2gpu")
    by_size = block["uncertainty"]["residual"]["by_size"]
    assert by_size["param_scale"][-1] < 1
    by_size["param_scale"] = [1.0] * len(by_size["param_scale"])
    full = tmp_path / "full.json"
    full.write_text(json.dumps(block))
    shipped_64, full_64 = (_collective_json(capsys, c, 8, 8) for c in ("h200-nvlink-2gpu", str(full)))
    assert shipped_64["time_s"] == pytest.approx(full_64["time_s"])
    assert shipped_64["time_lo_s"] == pytest.approx(full_64["time_lo_s"])       # no share outside the check
    assert shipped_64["time_hi_s"] == pytest.approx(full_64["time_hi_s"])
    shipped_4, full_4 = (_collective_json(capsys, c, 1, 4) for c in ("h200-nvlink-2gpu", str(full)))
    assert full_4["time_lo_s"] < shipped_4["time_lo_s"] < shipped_4["time_s"] < shipped_4["time_hi_s"] < full_4["time_hi_s"]
    # crossing the network widens the interval beyond one server's at the same world size's share rule
    one_server = _collective_json(capsys, "h200-nvlink-2gpu", 1, 8)
    rel = lambda r: (r["time_hi_s"] - r["time_lo_s"]) / r["time_s"]  # noqa: E731
    assert rel(shipped_64) > rel(one_server)


@pytest.mark.parametrize("value,words", [(-0.5, "negative"), (0.01, "below 0.05"), (1.14, "feature the model lacks")])
def test_an_efficiency_out_of_range_is_told_which_side(tmp_path, value, words):
    """A negative efficiency got the 'above 1' wording; the message says what is wrong with the value given."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"params": {"op_efficiency.all_reduce": value}}))
    with pytest.raises(InputError) as e:
        load_calibration(str(path))
    assert e.value.field == "params.op_efficiency.all_reduce" and words in str(e.value)
    assert ("above 1" in str(e.value)) == (value > 1)


def test_a_latency_above_its_range_is_not_called_below_the_minimum(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"params": {"base_latency_s.ring.simple": 2.0}}))
    with pytest.raises(InputError) as e:
        load_calibration(str(path))
    assert "above 1 s" in str(e.value) and "below the physical minimum" not in str(e.value)
