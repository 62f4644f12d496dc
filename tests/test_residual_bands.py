"""The calibration's residual bands (validation.calibrate.RESIDUAL_EDGES_BYTES): the bandwidth regime split at 32 MiB,
the 16 MiB slow mode kept in the band from 16 MiB only, and the residuals from 32 MiB standardised, not left out."""

from types import SimpleNamespace

import numpy as np
import pytest

from validation.calibrate import (BANDWIDTH_REGIME_BYTES, MIN_BAND_POINTS, RESIDUAL_EDGES_BYTES, SLOW_MODE_TOP_BYTES,
                                  STANDARDISED_FROM_BYTES, by_residual_band, in_sample_param_sd, residual_quantiles)
from validation.extrapolation_scale import per_residual_band

MiB = 1 << 20
SIZES = (1 << 10, 1 << 20, 16 * MiB, 64 * MiB)
"""One size per band of RESIDUAL_EDGES_BYTES."""


def test_the_bands_split_the_bandwidth_regime_where_the_slow_mode_ends():
    assert RESIDUAL_EDGES_BYTES == (1 << 16, BANDWIDTH_REGIME_BYTES, SLOW_MODE_TOP_BYTES) == (1 << 16, 16 * MiB, 32 * MiB)
    assert STANDARDISED_FROM_BYTES == SLOW_MODE_TOP_BYTES


def test_the_16_mib_band_holds_the_whole_regime_and_the_top_band_its_own_points():
    n = MIN_BAND_POINTS
    pairs = [(16 * MiB, 0.3)] * n + [(64 * MiB, 0.01)] * n + [(1 << 10, 1.0)] * n
    small, mid, regime, top = by_residual_band(pairs)
    assert small == [1.0] * n and mid == []
    assert sorted(regime) == sorted([0.3] * n + [0.01] * n)       # the slow mode stays where it applies
    assert top == [0.01] * n                                        # and nowhere else


def test_a_top_band_with_too_few_points_takes_the_whole_regime():
    pairs = [(16 * MiB, 0.3)] * MIN_BAND_POINTS + [(64 * MiB, 0.01)] * (MIN_BAND_POINTS - 1)
    _, _, regime, top = by_residual_band(pairs)
    assert top == regime and len(top) == 2 * MIN_BAND_POINTS - 1


def _comparisons(ratio: float) -> list:
    """MIN_BAND_POINTS fake comparisons per band, each measured ``ratio`` times its prediction (and one 10% off, so
    the quantiles spread), pooled over two launches."""
    out = []
    for size in SIZES:
        for i in range(MIN_BAND_POINTS):
            r = ratio * (1.1 if i == 0 else 1.0)
            point = SimpleNamespace(size_bytes=size, time_s=r, launches=2, world=2, rep_times_s=())
            out.append(SimpleNamespace(point=point, predicted_s=1.0))
    return out


def test_residuals_from_32_mib_enter_standardised_and_below_left_out():
    comps = _comparisons(np.exp(0.02))
    predictor = SimpleNamespace(latency_bound=lambda c: c.point.size_bytes < BANDWIDTH_REGIME_BYTES)
    q = residual_quantiles(comps, predictor, inflate=np.full(len(comps), 4.0))["by_size"]
    assert q["edges_bytes"] == list(RESIDUAL_EDGES_BYTES)
    medians = [row[1] for row in q["q"]]
    assert medians[0] == pytest.approx(0.08) and medians[1] == pytest.approx(0.08)     # r / (1 - h): 4 r
    assert medians[3] == pytest.approx(0.04)                                              # r / sqrt(1 - h): 2 r
    assert q["q"][3][2] - q["q"][3][0] < q["q"][1][2] - q["q"][1][0]


def test_no_in_sample_parameter_spread_is_held_where_residuals_are_standardised():
    points = [SimpleNamespace(size_bytes=s) for s in SIZES for _ in range(3)]
    J = np.ones((len(points), 1))
    assert in_sample_param_sd(J, np.array([[0.01]]), points) == [pytest.approx(0.1)] * 3 + [0.0]


@pytest.mark.parametrize("edges, shares", [(None, [1.0, 1.0, 0.3, 0.3]), ((1 << 16, 16 * MiB), [1.0, 1.0, 0.3])])
def test_each_residual_band_takes_the_share_of_the_report_band_it_lies_in(edges, shares):
    assert per_residual_band((1.0, 1.0, 0.3), edges) == shares


def test_a_slow_mode_at_16_mib_no_longer_widens_the_larger_sizes():
    """2-GPU points reproducing to 1% except a slow mode at 16 MiB (+30% on two ops of three): the calibration's
    intervals from 32 MiB are those of the 1% points, the band from 16 MiB keeps the slow mode."""
    from simulator.collectives.params import Parameters
    from validation.calibrate import calibrate
    from validation.compare import Predictor, Topo
    from validation.parsers import CollMeasurement
    from tests.test_intervals import TRUE, _interval, points
    rng = np.random.default_rng(3)
    noisy = []
    for i, p in enumerate(points(Parameters().with_values(TRUE), step=1)):
        slow = 1.3 if p.size_bytes == 16 * MiB and i % 3 else 1.0
        sd = 0.2 if p.size_bytes < BANDWIDTH_REGIME_BYTES else 0.01
        t = p.time_s * slow * float(np.exp(rng.normal(0.0, sd)))
        noisy.append(CollMeasurement(p.op, p.world, p.size_bytes, t, None, None, min_s=t * 0.98, max_s=t * 1.02))
    fit = calibrate(noisy, Predictor(Topo("hgx-h200"), Parameters()))
    rows = fit.uncertainty.size_residual
    spread = [hi - lo for lo, _, hi in rows]
    assert spread[3] < spread[2] / 2
    width = lambda r: (r.time_hi_s - r.time_lo_s) / r.time_s  # noqa: E731
    assert width(_interval(fit.params, 2, 1 << 30)) < width(_interval(fit.params, 2, 16 * MiB)) / 2
