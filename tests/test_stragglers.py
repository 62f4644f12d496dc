"""Stragglers: the expected maximum over ranks, analytic vs Monte Carlo, and seeded draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from simulator.core.errors import InputError
from simulator.training.stragglers import StragglerModel, expected_max, max_quantiles, monte_carlo_max

# E[max of n standard normals] (tables, e.g. Harter 1961; n=2 is 1/sqrt(pi) exactly)
NORMAL_MAX = {2: 1 / math.sqrt(math.pi), 3: 1.5 / math.sqrt(math.pi), 4: 1.0293753730, 10: 1.5387527308,
              100: 2.5075936364}


@pytest.mark.parametrize("n, z", sorted(NORMAL_MAX.items()))
def test_expected_max_of_normals_matches_the_tables(n, z):
    assert expected_max(StragglerModel("normal", 0.05), np.ones(n)) == pytest.approx(1 + 0.05 * z, abs=1e-7)


@pytest.mark.parametrize("dist", ["normal", "lognormal"])
@pytest.mark.parametrize("n", [1, 8, 1024])
def test_monte_carlo_agrees_with_the_integral(dist, n):
    model = StragglerModel(dist, 0.05)
    mean, se = monte_carlo_max(model, np.ones(n), 20_000, np.random.default_rng(7))
    assert abs(mean - expected_max(model, np.ones(n))) < 4 * se


def test_one_slow_gpu_among_many():
    """One GPU 30% slower among 1023 at cv 5%: the maximum is almost always that GPU (E = 1.3 and a bit)."""
    model = StragglerModel("normal", 0.05, {"h0.gpu0": 1.3})
    scales = model.scales(["h0.gpu0"] + [f"h{i}.gpu1" for i in range(1023)])
    e = expected_max(model, scales)
    mean, se = monte_carlo_max(model, scales, 20_000, np.random.default_rng(1))
    assert 1.3 < e < 1.31 and abs(mean - e) < 4 * se


def test_fixed_factors_without_variability():
    model = StragglerModel("none", 0.0, {"a": 1.5})
    assert expected_max(model, model.scales(["a", "b"])) == 1.5
    assert model.draw(np.random.default_rng(0), model.scales(["a", "b"]), 3).tolist() == [1.5] * 3


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 64), cv=st.floats(0.0, 0.5))
def test_same_seed_same_draws(seed, n, cv):
    model = StragglerModel("lognormal", cv)
    a = model.draw(np.random.default_rng(seed), np.ones(n), 5)
    b = model.draw(np.random.default_rng(seed), np.ones(n), 5)
    assert np.array_equal(a, b)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 200), cv=st.floats(0.001, 0.3))
def test_more_ranks_never_lower_the_expected_max(n, cv):
    model = StragglerModel("normal", cv)
    assert expected_max(model, np.ones(n + 1)) >= expected_max(model, np.ones(n)) - 1e-9


@pytest.mark.parametrize("kwargs, field", [
    ({"distribution": "cauchy"}, "stragglers.distribution"),
    ({"distribution": "normal", "cv": -0.1}, "stragglers.cv"),
    ({"distribution": "normal", "cv": 0.8}, "stragglers.cv"),
    ({"slow": {"h0.gpu0": 0}}, "stragglers.slow.h0.gpu0"),
])
def test_bad_models_name_the_field(kwargs, field):
    with pytest.raises(InputError) as e:
        StragglerModel(**kwargs)
    assert e.value.field == field


@pytest.mark.parametrize("dist, cv, n, slow", [("normal", 0.05, 2, 1.0), ("normal", 0.05, 1024, 1.0),
                                               ("lognormal", 0.1, 1024, 1.2), ("lognormal", 0.3, 8, 1.0)])
def test_one_iterations_interval_holds_ninety_percent_of_draws(dist, cv, n, slow):
    """stragglers' 90% lo/hi: the 5% and 95% quantiles of one iteration's M (before: no interval)."""
    model = StragglerModel(dist, cv, {"s": slow})
    scales = model.scales(["s"] + [""] * (n - 1))
    lo, mid, hi = max_quantiles(model, scales, (0.05, 0.5, 0.95))
    assert lo < mid < hi and lo < expected_max(model, scales) < hi
    draws = model.draw(np.random.default_rng(3), scales, 40000)
    assert np.mean(draws < lo) == pytest.approx(0.05, abs=0.006)
    assert np.mean(draws > hi) == pytest.approx(0.05, abs=0.006)


def test_two_normals_quantile_by_hand():
    """max of 2 normals: P(M <= x) = Phi(z)^2 = 0.05 at z = Phi^-1(sqrt(0.05))."""
    from statistics import NormalDist
    z = NormalDist().inv_cdf(math.sqrt(0.05))
    assert max_quantiles(StragglerModel("normal", 0.05), np.ones(2), (0.05,))[0] == pytest.approx(1 + 0.05 * z, abs=1e-6)


def test_no_variability_gives_a_point():
    model = StragglerModel("none", 0.0, {"a": 1.5})
    assert max_quantiles(model, model.scales(["a", "b"]), (0.05, 0.95)) == [1.5, 1.5]


def test_cli_prints_and_json_carries_the_interval(capsys):
    import json

    from gpunetsim.cli import main
    argv = ["stragglers", "--distribution", "normal", "--cv", "0.05", "--ranks", "2,64", "--samples", "1000"]
    assert main([*argv, "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    for r in rows:
        assert r["iteration_max_lo"] < r["expected_max"] < r["iteration_max_hi"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert "90% lo" in out[1] and "90% hi" in out[1]
    assert f"{rows[1]['iteration_max_hi']:.5f}" in out[3]


@pytest.mark.parametrize("cv", [1.0, 3.0, 10.0])
def test_heavy_lognormal_tails_keep_the_integral_and_quantiles_right(cv):
    """Review s16 #10: an even grid over a lognormal's 12-sigma band put no point in the bulk once cv passed ~1
    (cv 3, 8 ranks: E[max] 64 against a Monte Carlo 4.5; 90% lo 6.4). The expectation of the maximum of 8 mean-1
    factors is at most 8; the quantiles must hold 90% of the draws."""
    model = StragglerModel("lognormal", cv)
    scales = np.ones(8)
    e = expected_max(model, scales)
    assert 1.0 < e < 8.0
    # the mean of the maximum by a fine quadrature in log space of E[M] = int P(M > x) dx (independent check)
    s = math.sqrt(math.log1p(cv * cv))
    u = np.linspace(-s * s / 2 - 14 * s, -s * s / 2 + 14 * s, 2_000_001)
    x = np.exp(u)
    from scipy import special
    f = special.ndtr((u + s * s / 2) / s) ** 8
    assert e == pytest.approx(x[0] + np.trapezoid((1 - f) * x, u), rel=1e-5)
    lo, hi = max_quantiles(model, scales, (0.05, 0.95))
    draws = model.draw(np.random.default_rng(5), scales, 40000)
    assert np.mean(draws < lo) == pytest.approx(0.05, abs=0.006)
    assert np.mean(draws > hi) == pytest.approx(0.05, abs=0.006)


@pytest.mark.parametrize("dist", ["normal", "lognormal"])
def test_a_rank_of_zero_scale_adds_nothing_to_the_maximum(dist):
    """Review s17 #19: a rank whose compute is scaled to 0 (X = 0 whatever is drawn, as draw() gives it) leaves the
    maximum of the others (the draws are clamped at 0); the lognormal grid took the log of 0 and raised."""
    model = StragglerModel(dist, 0.1)
    with_zero, without = np.array([0.0, 1.0, 1.2]), np.array([1.0, 1.2])
    assert expected_max(model, with_zero) == pytest.approx(expected_max(model, without), rel=1e-9)
    assert max_quantiles(model, with_zero, (0.05, 0.95)) == pytest.approx(max_quantiles(model, without, (0.05, 0.95)),
                                                                          rel=1e-9)
    mean, se = monte_carlo_max(model, with_zero, 20_000, np.random.default_rng(3))
    assert abs(mean - expected_max(model, with_zero)) < 4 * se
    assert expected_max(model, np.zeros(4)) == 0.0 and max_quantiles(model, np.zeros(4), (0.05, 0.95)) == [0.0, 0.0]
    with pytest.raises(InputError, match="scale"):
        expected_max(model, np.array([1.0, -0.5]))
