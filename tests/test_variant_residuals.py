"""validation.variant_residuals: the one-campaign < 16 MiB points by variant."""

import math
from types import SimpleNamespace

import pytest

from validation import variant_residuals as v
from validation.parsers import CollMeasurement
from validation.transfer import PooledPoint


def _scored(variant, size, measured_s, predicted_s, launches=1, algo="ring", proto="ll", op="all_reduce"):
    p = CollMeasurement(op, 4, size, measured_s, None, None, variant=variant, launches=launches)
    return SimpleNamespace(pooled=PooledPoint(p, (measured_s,) * launches),
                           comparison=SimpleNamespace(predicted_s=predicted_s, algo=algo, proto=proto),
                           error=predicted_s / measured_s - 1)


def test_points_pair_each_one_campaign_point_with_its_two_gpu_error():
    rows4 = [_scored("ll", 64, 20e-6, 30e-6), _scored("default", 64, 30e-6, 30e-6, launches=3)]
    rows2 = [_scored("ll", 64, 40e-6, 30e-6)]
    (q,) = v.points(rows4, rows2)
    assert q.variant == "ll" and q.error == pytest.approx(0.5) and q.error2 == pytest.approx(-0.25)
    assert q.growth_part == pytest.approx(math.log(1.5) - math.log(0.75))


def test_a_variant_long_at_every_point_is_a_bias_and_one_of_mixed_sign_scatter():
    pts = [v.Point("ll", "all_reduce", 4 << i, "ring", "ll", 1.0, 1.3, -0.1) for i in range(6)]
    pts += [v.Point("simple", "all_reduce", 4 << i, "ring", "simple", 1.0, 1.2 if i % 2 else 0.8, 0.0)
            for i in range(6)]
    rows = v.variant_rows(pts, [])
    assert rows["ll"]["verdict"] == "bias (long)" and rows["ll"]["short"] == 0
    assert rows["simple"]["verdict"] == "scatter"


def test_median_counts_one_variant_exact():
    pairs = [("a", 0.3), ("a", 0.3), ("b", 0.1)]
    assert v.median_exact_pct(pairs) == pytest.approx(30.0)
    assert v.median_exact_pct(pairs, "a") == pytest.approx(0.0)
    assert v.median_exact_pct(pairs, "b") == pytest.approx(30.0)


def test_the_default_measured_elsewhere_predicts_only_points_run_alike_on_its_transport():
    rows = [_scored("default", 64, 30e-6, 30e-6, launches=3), _scored("ring", 64, 20e-6, 30e-6),
            _scored("simple", 64, 25e-6, 30e-6, proto="simple"), _scored("nop2p", 64, 40e-6, 30e-6)]
    rows[3].pooled = PooledPoint(CollMeasurement("all_reduce", 4, 64, 40e-6, None, None, variant="nop2p",
                                                 env=(("NCCL_P2P_DISABLE", "1"),)), rows[3].pooled.campaign_medians)
    floor = v.other_launch_floor(rows)
    assert floor == {"ring": (1, pytest.approx(50.0), pytest.approx(50.0))}     # 30 us for 20 us


def test_growth_without_levels_takes_the_launches_swing_out():
    pts = [v.Point("ll", "all_reduce", 64, "ring", "ll", 20e-6, 30e-6, -0.25)]   # growth part log(1.5 / 0.75)
    levels = {"ll": {2: math.log(1.5), 4: math.log(0.75)}}                        # slow on 2 GPUs, fast on 4
    assert v.growth_without_levels(pts, levels)["ll"] == pytest.approx(0.0, abs=1e-9)


def test_committed_variant_launches_ran_slow_on_two_gpus_and_fast_on_four():
    """The forced ring and LL launches run what the default runs below 64 KiB (ring / LL), so their level against
    the default's pooled medians is their launch's host state: above it on 2 GPUs, below it on 4."""
    from validation import rank_model_error
    from validation.accuracy import H200
    levels = v.launch_levels(rank_model_error.pooled(H200))
    for variant in ("ring", "ll"):
        assert math.expm1(levels[variant][2]) > 0.3 and math.expm1(levels[variant][4]) < -0.1


def test_main_refuses_an_unknown_argument_before_scoring():
    with pytest.raises(SystemExit) as e:
        v.main(["--bogus"])
    assert e.value.code == 2
