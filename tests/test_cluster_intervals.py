"""90% intervals of `gpunetsim cluster`'s iteration times (simulator.training.cluster_intervals). Before, the
healthy, alone and shared times (and the failures table's effective time) had none."""

from __future__ import annotations

import json
import math

import pytest

from gpunetsim.cli import main
from simulator.training import iteration_bands as sib

MIXED = """name: mixed
topology: dgx-h100
nodes: 4
hosts_per_leaf: 2
oversubscription: 4
placement: spread
iterations: 2
jobs:
  - {name: llm, train: "hidden=1024,layers=4,heads=16,seq=1024", tp: 8, global_batch: 8, nodes: 1}
  - {name: g, workload: gpt2, nodes: 2}
  - {name: c, collective: all_reduce, size: 256 MiB, algo: ring, compute: 2 ms, nodes: 1}
stragglers: {distribution: lognormal, cv: 0.05}
failures: {mtbf_gpu: 50000 h, checkpoint: 1 min, restart: 5 min}
run: 30 d
"""


def _run(tmp_path, capsys, text: str, *extra: str) -> dict:
    f = tmp_path / "s.yaml"
    f.write_text(text)
    assert main(["cluster", str(f), "--json", *extra]) == 0
    return {j["name"]: j for j in json.loads(capsys.readouterr().out)["jobs"]}


@pytest.fixture
def mixed(tmp_path, capsys):
    return _run(tmp_path, capsys, MIXED)


def test_every_time_of_every_job_has_an_interval_that_holds_it(mixed):
    for j in mixed.values():
        for t in ("healthy", "alone", "shared", "effective"):
            lo, hi = j[f"{t}_lo_s"], j[f"{t}_hi_s"]
            assert lo is not None and hi is not None, (j["name"], t)
            assert 0 < lo <= j[f"{t}_s"] <= hi and hi > lo, (j["name"], t)


def test_alone_and_shared_keep_the_healthy_relative_width(mixed):
    for j in mixed.values():
        for t in ("alone", "shared"):
            assert j[f"{t}_hi_s"] / j[f"{t}_s"] == pytest.approx(j["healthy_hi_s"] / j["healthy_s"])
            assert j[f"{t}_lo_s"] / j[f"{t}_s"] == pytest.approx(j["healthy_lo_s"] / j["healthy_s"])


def test_train_job_takes_the_train_band(mixed, capsys):
    """Centred as gpunetsim train centres a datasheet interval: on the larger of the iteration and its host-issue
    floor (simulator.training.llm.host_prior; this small TP 8 job is host-bound)."""
    _, _, hi = sib.bands(sib.TRAIN_FILE)["datasheet"]["log_ratio"]
    assert main(["train", "--topology", "dgx-h100", "--nodes", "1", "--model-spec", "hidden=1024,layers=4,heads=16,seq=1024",
                 "--tp", "8", "--global-batch", "8", "--json"]) == 0
    floor = json.loads(capsys.readouterr().out)["host_floor_s"]
    centre = max(mixed["llm"]["healthy_s"], floor)
    assert centre > mixed["llm"]["healthy_s"]
    assert mixed["llm"]["healthy_hi_s"] / centre == pytest.approx(math.exp(max(hi, 0.0)))


def test_ddp_job_alone_has_gpunetsim_ddps_interval(tmp_path, capsys):
    jobs = _run(tmp_path, capsys, "name: one\ntopology: dgx-h100\nnodes: 2\niterations: 2\n"
                                  "jobs:\n  - {name: g, workload: gpt2, nodes: 2}\n")
    assert main(["ddp", "--topology", "dgx-h100", "--nodes", "2", "--workload", "gpt2", "--engine", "closed",
                 "--json"]) == 0
    ddp = json.loads(capsys.readouterr().out)
    g = jobs["g"]
    assert g["healthy_s"] == pytest.approx(ddp["iteration_s"], rel=1e-6)
    assert (g["healthy_lo_s"], g["healthy_hi_s"]) == pytest.approx((ddp["iteration_lo_s"], ddp["iteration_hi_s"]),
                                                                   rel=1e-6)


def test_collective_job_is_its_compute_plus_the_collectives_interval(tmp_path, capsys):
    jobs = _run(tmp_path, capsys, "name: c\ntopology: dgx-h100\nnodes: 2\niterations: 2\njobs:\n"
                                  "  - {name: c, collective: all_reduce, size: 1 GiB, algo: ring, compute: 2 ms, nodes: 2}\n")
    assert main(["collective", "--topology", "dgx-h100", "--nodes", "2", "--op", "all_reduce", "--algo", "ring",
                 "-b", "1G", "-e", "1G", "--engine", "closed", "--json"]) == 0
    coll = json.loads(capsys.readouterr().out)
    c = jobs["c"]
    assert c["healthy_s"] == pytest.approx(2e-3 + coll["time_s"], rel=1e-6)
    assert c["healthy_lo_s"] == pytest.approx(2e-3 + coll["time_lo_s"], rel=1e-6)
    assert c["healthy_hi_s"] == pytest.approx(2e-3 + coll["time_hi_s"], rel=1e-6)


def test_tables_print_the_interval_columns(tmp_path, capsys, mixed):
    f = tmp_path / "s.yaml"
    f.write_text(MIXED)
    assert main(["cluster", str(f)]) == 0
    out = capsys.readouterr().out.splitlines()
    heads = [i for i, x in enumerate(out) if "90% lo" in x and "90% hi" in x]
    assert len(heads) == 2                                   # the jobs' table and the failures table
    for name, j in mixed.items():
        row = next(x for x in out[heads[0]:] if x.startswith(name + " "))
        assert f"{j['shared_lo_s'] * 1e3:.3f}" in row and f"{j['shared_hi_s'] * 1e3:.3f}" in row
        eff = next(x for x in out[heads[1]:] if x.startswith(name + " "))
        assert f"{j['effective_lo_s'] * 1e3:.3f}" in eff and f"{j['effective_hi_s'] * 1e3:.3f}" in eff
