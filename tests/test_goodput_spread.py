"""Where one run falls under the failure model (simulator.training.goodput_spread): the 90% intervals of
`gpunetsim goodput`'s wall time, goodput, failures and lost time, checked against a seeded Monte Carlo of the
same process. Before, goodput printed expectations only."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from gpunetsim.cli import main
from simulator.training.goodput import segment_s
from simulator.training.goodput_spread import run_bounds, segment_moments
from tests.conftest import with_options


def _monte_carlo(n: int, length: float, restart: float, mtbf: float, samples: int, seed: int = 0):
    """Wall times and failure counts of ``samples`` runs of ``n`` segments, drawn from the process itself."""
    rng = np.random.default_rng(seed)
    p, p_r = math.exp(-length / mtbf), math.exp(-restart / mtbf)
    k = rng.negative_binomial(n, p, samples)                    # failed attempts of the n segments
    k_r = rng.negative_binomial(np.maximum(k, 1), p_r) * (k > 0)  # failed restarts after them

    def truncated(total: np.ndarray, length_s: float) -> np.ndarray:
        u = rng.random(int(total.sum()))
        x = -mtbf * np.log1p(-u * -math.expm1(-length_s / mtbf))
        idx = np.repeat(np.arange(samples), total)
        return np.bincount(idx, weights=x, minlength=samples)

    wall = n * length + truncated(k, length) + truncated(k_r, restart) + k * restart
    return wall, k + k_r


CASES = [(1149, 2256.0 + 60.0, 300.0, 43945.3),        # gpunetsim goodput's 4096-GPU example at its optimum
         (3, 20 * 3600.0, 3600.0, 30 * 3600.0)]        # few long segments: a skewed run


@pytest.mark.parametrize("n, length, restart, mtbf", CASES)
def test_moments_match_the_process(n, length, restart, mtbf):
    t_mean, t_var, f_mean, f_var = segment_moments(length, restart, mtbf)
    assert t_mean == pytest.approx(segment_s(length, 0.0, restart, mtbf), rel=1e-9)    # Daly's expectation
    assert f_mean == pytest.approx(t_mean / mtbf, rel=1e-9)                            # failures at rate 1/M
    wall, fails = _monte_carlo(n, length, restart, mtbf, 40000)
    se = wall.std() / math.sqrt(len(wall))
    assert abs(wall.mean() - n * t_mean) < 4 * se
    assert wall.var() == pytest.approx(n * t_var, rel=0.05)
    assert fails.mean() == pytest.approx(n * f_mean, rel=0.02)
    assert fails.var() == pytest.approx(n * f_var, rel=0.05)


@pytest.mark.parametrize("n, length, restart, mtbf", CASES + [(10, 36000.0, 600.0, 20000.0), (1, 3600.0, 300.0, 36000.0)])
def test_interval_leaves_five_percent_of_runs_on_either_side(n, length, restart, mtbf):
    """Equal tails, except where no failure at all (the run at its floor, n L) is more likely than 5%: the low
    end is then the floor itself and holds that point."""
    (w_lo, w_hi), (f_lo, f_hi) = run_bounds(n * 1000.0, 1000.0, length - 1000.0, restart, mtbf)
    wall, fails = _monte_carlo(n, length, restart, mtbf, 40000, seed=1)
    none = math.exp(-n * length / mtbf)
    assert w_lo >= n * length and (w_lo == n * length) == (none >= 0.05)
    assert np.mean(wall > w_hi) == pytest.approx(0.05, abs=0.012)
    assert np.mean(wall < w_lo) == pytest.approx(0.05 if none < 0.05 else 0.0, abs=0.012)
    assert 0.85 <= np.mean((fails >= f_lo) & (fails <= f_hi)) <= 0.995    # a count: discrete steps at the ends


def test_without_failures_the_run_is_exact():
    (w_lo, w_hi), (f_lo, f_hi) = run_bounds(3600.0, 600.0, 10.0, 60.0, math.inf)
    assert w_lo == w_hi == pytest.approx(6 * 610.0) and f_lo == f_hi == 0.0


def test_json_and_table_carry_the_intervals(capsys):
    argv = ["goodput", "--gpus", "4096", "--mtbf-gpu", "50000 h", "--checkpoint-s", "60", "--restart-s", "300",
            "--interval", "1 h"]
    assert main([*argv, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    for name in ("wall_s", "lost_s"):
        lo, hi = r[name.replace("_s", "_lo_s")], r[name.replace("_s", "_hi_s")]
        assert lo < r[name] < hi
    assert r["goodput_lo"] < r["goodput"] < r["goodput_hi"] and r["failures_lo"] < r["failures"] < r["failures_hi"]
    assert r["goodput_lo"] == pytest.approx(r["work_s"] / r["wall_hi_s"])
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    i = next(k for k, x in enumerate(out) if x.startswith("90% interval of one run"))
    yours = next(x for x in out[i:] if x.startswith("yours"))
    assert f"{r['goodput_lo'] * 100:.2f}%" in yours and f"{r['failures_hi']:.1f}" in yours


def test_segments_many_mtbfs_long_never_end_instead_of_overflowing(capsys):
    """Before, an MTBF of 0.36 s against a 10-minute restart raised OverflowError (exit 70)."""
    argv = ["goodput", "--gpus", "100000", "--mtbf-gpu", "10 h", "--checkpoint-s", "600", "--restart-s", "600",
            "--interval", "1 d", "--json"]
    assert main(argv) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["goodput"] == 0.0 and r["wall_s"] is None and r["wall_hi_s"] is None and r["goodput_hi"] == 0.0


SHORT = ["goodput", "--gpus", "8", "--mtbf-gpu", "50000 h", "--checkpoint-s", "60", "--restart-s", "300",
         "--interval", "1 h"]


def test_a_run_shorter_than_one_interval_says_its_interval_misleads(capsys):
    """A 1 s run checkpointing every hour (review s16 #6): no failure is likely, so both ends of one run's interval
    are the failure-free wall time while the expectation lies above it; n = W / tau < 1 is outside Daly's model;
    lost time is never negative (was '-0 ms - -0 ms')."""
    assert main([*SHORT, "--run", "1 s", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["lost_lo_s"] == 0.0 and r["lost_hi_s"] == 0.0 and r["lost_s"] >= 0
    assert r["wall_s"] > r["wall_hi_s"]
    assert [n.split(":")[0] for n in r["spread_notes"]] == ["the run is shorter than one interval",
                                                            "the expectation lies outside one run's 90% interval"]
    assert main([*SHORT, "--run", "1 s"]) == 0
    text = capsys.readouterr().out
    assert "-0" not in text
    assert f"  (Young sqrt(2dM), Daly, optimum (numeric), yours: {r['spread_notes'][0]})" in text


def test_a_long_run_with_many_failures_has_no_notes(capsys):
    argv = with_options(SHORT, ["--gpus", "4096", "--run", "30 d"])
    assert main([*argv, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["spread_notes"] == [] and r["wall_lo_s"] <= r["wall_s"] <= r["wall_hi_s"]
    assert main(argv) == 0
    assert "(Young" not in capsys.readouterr().out
