"""Failures and goodput: Daly's model, the optimum interval three ways, the CLI."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given, settings, strategies as st

from gpunetsim.cli import main
from simulator.core.errors import InputError
from simulator.training.goodput import (Components, daly_interval, expected_run, failure_rate, failure_spec, goodput,
                                        optimal_interval, segment_s, young_interval)

HOUR = 3600.0


def test_failure_rate_adds_component_rates():
    spec = failure_spec({"mtbf_gpu": "1000 h", "mtbf_node": "500 h", "mtbf_nic": "2000 h", "mtbf_switch": "100 h"})
    c = Components(gpus=16, nodes=2, nics=16, switches=1)
    want = 16 / (1000 * HOUR) + 2 / (500 * HOUR) + 16 / (2000 * HOUR) + 1 / (100 * HOUR)
    assert failure_rate(c, spec) == pytest.approx(want)


def test_segment_without_failures_is_work_plus_checkpoint():
    assert segment_s(600, 30, 100, math.inf) == 630


def test_segment_first_order():
    """For (tau + delta) << M the expected segment is tau + delta + (tau + delta)^2 / 2M + R (tau + delta)/M."""
    tau, d, r, m = 100.0, 10.0, 20.0, 1e7
    first = (tau + d) + (tau + d) ** 2 / (2 * m) + r * (tau + d) / m
    assert segment_s(tau, d, r, m) == pytest.approx(first, rel=1e-9)


@pytest.mark.parametrize("delta, mtbf", [(60, 10 * HOUR), (10, 100 * HOUR), (60, 2 * HOUR), (300, 24 * HOUR)])
def test_daly_formula_matches_the_numeric_optimum(delta, mtbf):
    assert daly_interval(delta, mtbf) == pytest.approx(optimal_interval(delta, 300, mtbf), rel=1e-3)


@pytest.mark.parametrize("delta, mtbf", [(60, 10 * HOUR), (10, 100 * HOUR)])
def test_young_is_the_first_order_optimum(delta, mtbf):
    """Young's sqrt(2 delta M) is within sqrt(delta / 2M) of the optimum (its next-order term)."""
    opt = optimal_interval(delta, 0, mtbf)
    assert young_interval(delta, mtbf) == pytest.approx(opt, rel=2 * math.sqrt(delta / (2 * mtbf)))


def test_restart_time_does_not_move_the_optimum():
    assert optimal_interval(60, 0, 5 * HOUR) == pytest.approx(optimal_interval(60, 3600, 5 * HOUR), rel=1e-6)


@settings(max_examples=30, deadline=None)
@given(delta=st.floats(1, 600), mtbf_h=st.floats(0.5, 1000), restart=st.floats(0, 3600),
       factor=st.floats(0.1, 10))
def test_the_optimum_is_a_maximum(delta, mtbf_h, restart, factor):
    m = mtbf_h * HOUR
    opt = optimal_interval(delta, restart, m)
    assert goodput(opt, delta, restart, m) >= goodput(opt * factor, delta, restart, m) - 1e-12


@settings(max_examples=30, deadline=None)
@given(mtbf_h=st.floats(1, 1e5), better=st.floats(1.0, 10.0))
def test_more_reliable_never_lowers_goodput(mtbf_h, better):
    spec = failure_spec({"mtbf_gpu": f"{mtbf_h!r} h", "checkpoint": "60 s", "restart": "300 s"})
    spec2 = failure_spec({"mtbf_gpu": f"{mtbf_h * better!r} h", "checkpoint": "60 s", "restart": "300 s"})
    c = Components(1024, 128)
    assert expected_run(c, spec2, 86400).goodput >= expected_run(c, spec, 86400).goodput - 1e-12


def test_expected_run_accounts_every_second():
    spec = failure_spec({"mtbf_gpu": "50000 h", "checkpoint": "1 min", "restart": "5 min", "interval": "30 min"})
    r = expected_run(Components(4096, 512, 4096, 128), spec, 30 * 86400)
    assert r.wall_s == pytest.approx(r.work_s + r.checkpoint_total_s + r.lost_s)
    assert r.failures == pytest.approx(r.wall_s * r.failure_rate_per_s)
    assert r.checkpoint_total_s == pytest.approx(30 * 86400 / 1800 * 60)
    assert r.mtbf_s == pytest.approx(50000 * HOUR / 4096)


@pytest.mark.parametrize("data, field", [
    ({"mtbf_gpu": "-3 h"}, "mtbf_gpu"),
    ({"mtbf_gpu": "3 parsecs"}, "mtbf_gpu"),
    ({"checkpoint": "-1 s"}, "checkpoint"),
    ({"mtbf_gpus": "3 h"}, "mtbf_gpus"),
])
def test_bad_failure_figures_name_the_field(data, field):
    with pytest.raises(InputError) as e:
        failure_spec(data, "f.yaml")
    assert e.value.field == field and e.value.source == "f.yaml"


ARGS = ["goodput", "--gpus", "4096", "--mtbf-gpu", "50000 h", "--mtbf-node", "100000 h", "--checkpoint-s", "60",
        "--restart-s", "300"]


def test_cli_table(capsys):
    assert main(ARGS + ["--interval", "1 h"]) == 0
    out = capsys.readouterr().out
    assert "Daly" in out and "optimum (numeric)" in out and "yours" in out


def test_cli_json_and_html(tmp_path, capsys):
    html = tmp_path / "g.html"
    assert main(ARGS + ["--json", "--html", str(html)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["optimum_s"] == pytest.approx(d["daly_s"], rel=1e-3)
    assert 0 < d["goodput"] < 1
    assert html.read_text().count('class="plotly-graph-div"') == 2


@pytest.mark.parametrize("extra, flag", [
    (["--mtbf-nic", "soon"], "--mtbf-nic"),
    (["--restart", "-5 min"], "--restart"),
    (["--run", "0 d"], "--run"),
    (["--gpus-per-node", "0"], "--gpus-per-node"),
    (["--switches", "-1"], "--switches"),
])
def test_cli_bad_flags_exit_2(capsys, extra, flag):
    assert main(ARGS + extra) == 2
    err = capsys.readouterr().err
    assert flag in err and "Traceback" not in err



@pytest.mark.parametrize("extra", [
    ["--mtbf-gpu", "5 s", "--checkpoint", "60 s", "--restart", "60 s"],   # printed 10^89 days as figures
    ["--mtbf-node", "1 s", "--checkpoint", "1 h"],
    ["--checkpoint", "60 s", "--mtbf-gpu", "300 h", "--interval", "28 d"],  # an interval of the user's
])
def test_a_run_that_never_ends_says_so_and_prints_no_astronomic_figure(capsys, extra):
    """Beyond any duration (10^12 s) a run never finishes: goodput 0, no wall time in --json, 'inf' in the table
    with a line saying why; never a wall time of 10^89 days."""
    assert main(["goodput", "--gpus", "8", *extra, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["goodput"] == 0.0 and r["wall_s"] is None and r["wall_hi_s"] is None
    assert any("never finishes" in n for n in r["spread_notes"])
    assert main(["goodput", "--gpus", "8", *extra]) == 0
    out = capsys.readouterr().out
    assert "never finishes" in out and not re.search(r"\d{13}", out)


@pytest.mark.parametrize("extra", [["--mtbf-gpu", "1 h", "--restart", "5 min"], ["--mtbf-gpu", "1 h"]])
def test_failures_with_free_checkpoints_are_refused_naming_checkpoint(capsys, extra):
    """Was 'goodput 100%, no checkpoint needed' in the table while --json timed one 30-day segment (goodput 0)."""
    assert main(["goodput", "--gpus", "8", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpunetsim: error: --checkpoint:") and "Traceback" not in err
