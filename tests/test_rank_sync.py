"""Per-rank synchronisation from the repetitions' order statistics, and what one world size may fit (issue 10)."""

import numpy as np
import pytest

from simulator.collectives.params import Parameters
from validation import rank_sync
from validation.calibrate import calibrate, point_sd
from validation.compare import Predictor, Topo
from validation.parsers import CollMeasurement, Dataset, read_jsonl, write_jsonl

PRED = Predictor(Topo("hgx-h200"), Parameters())


def host_cost(rng, shape, fast_s=20e-6, slow_s=40e-6, p_slow=0.2, jitter_s=1e-6):
    """One rank's per-call host cost in a repetition: fast or slow for the whole repetition (bimodal)."""
    slow = rng.random(shape) < p_slow
    return np.where(slow, slow_s, fast_s) + rng.normal(0.0, jitter_s, shape).clip(-3 * jitter_s, 3 * jitter_s)


def measured(rng, world, reps, gpu_s):
    """Repetition times of a back-to-back stream: the slowest of ``world`` ranks' hosts, plus the GPU."""
    return host_cost(rng, (reps, world)).max(axis=1) + gpu_s


def sweep(world, reps, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for op in ("all_reduce", "all_gather", "broadcast"):
        for k in range(2, 16):
            p = CollMeasurement(op, world, 2**k * world, 1.0, None, None)
            gpu = PRED.predict(p).predicted_s
            t = measured(rng, world, reps, gpu)
            out.append(CollMeasurement(op, world, p.size_bytes, float(np.median(t)), None, None,
                                       min_s=float(t.min()), max_s=float(t.max()),
                                       rep_times_s=tuple(float(x) for x in t)))
    return out


def test_order_statistics_predict_the_median_of_more_ranks():
    """With i.i.d. ranks, one doubling moves the median to the 0.707 quantile: the estimate from 2 GPUs
    matches the growth of the median measured on 4 GPUs (simulated), which is far from 0."""
    est = rank_sync.estimate(sweep(2, 400), PRED)
    rng = np.random.default_rng(1)
    true_step = float(np.median(host_cost(rng, (200000, 4)).max(axis=1))
                      - np.median(host_cost(rng, (200000, 2)).max(axis=1)))
    assert true_step > 5e-6
    assert est is not None and est.world == 2 and est.points == 42
    assert est.per_doubling_s == pytest.approx(true_step, rel=0.25)
    assert est.steps_s[0] == est.per_doubling_s and len(est.steps_s) == rank_sync.DOUBLINGS
    assert "per doubling" in est.describe()


def test_no_estimate_without_repetitions_or_with_several_world_sizes():
    assert rank_sync.estimate(sweep(2, 5), PRED) is None                   # too few repetitions
    assert rank_sync.estimate(sweep(2, 400) + sweep(4, 400), PRED) is None  # a fit can use both


def test_calibrate_takes_the_per_rank_cost_from_the_repetitions():
    pts = sweep(2, 60)
    fit = calibrate(pts, PRED)
    verdict = {v.key: v for v in fit.verdicts}
    est = rank_sync.estimate(pts, PRED)
    assert fit.params["rank_overhead_s"] == pytest.approx(est.per_doubling_s)
    assert verdict["rank_overhead_s"].determined and "from the repetitions" in verdict["rank_overhead_s"].reason
    assert "rank_overhead_s" not in fit.keys                  # not fitted by least squares
    # one world size: the per-step hop latencies keep NCCL's values
    hops = [v for k, v in verdict.items() if k.startswith("hop_latency_s.")]
    assert hops and not any(v.determined for v in hops)
    assert all(fit.params[v.key] == Parameters()[v.key] for v in hops)
    # 2 GPUs again: the per-call cost absorbed the per-rank one (log2(2) = 1), predictions unchanged
    assert fit.after["median_time_pct"] < 10


def test_point_weight_is_the_uncertainty_of_its_median():
    few = CollMeasurement("all_reduce", 2, 8, 30e-6, None, None, min_s=20e-6, max_s=40e-6,
                          rep_times_s=(20e-6, 30e-6, 40e-6))
    many = CollMeasurement("all_reduce", 2, 8, 30e-6, None, None, min_s=20e-6, max_s=40e-6,
                           rep_times_s=(20e-6, 30e-6, 40e-6) * 11)
    bare = CollMeasurement("all_reduce", 2, 8, 30e-6, None, None, min_s=20e-6, max_s=40e-6)
    assert point_sd(bare) == pytest.approx(np.log(2) / 4)
    assert point_sd(many) == pytest.approx(point_sd(few) / np.sqrt(11))
    assert point_sd(CollMeasurement("all_reduce", 2, 8, 30e-6, None, None)) == pytest.approx(0.02)


def test_repetitions_round_trip_through_our_jsonl(tmp_path):
    pts = sweep(2, 12)[:3]
    path = tmp_path / "r.jsonl"
    write_jsonl(Dataset(meta={}, points=tuple(pts)), path)
    back = read_jsonl(path).points
    assert [p.rep_times_s for p in back] == [p.rep_times_s for p in pts]


def test_bad_repetitions_name_the_field(tmp_path):
    from simulator.core.errors import InputError
    path = tmp_path / "bad.jsonl"
    path.write_text('{"kind": "coll", "op": "all_reduce", "world": 2, "bytes": 8, "time_s": 1e-5, '
                    '"rep_times_s": [1e-5, -1]}\n')
    with pytest.raises(InputError, match="rep_times_s"):
        read_jsonl(path)
