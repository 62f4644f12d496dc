"""The public Python API: its docstring examples run, and it answers as the CLI does."""

from __future__ import annotations

import doctest
import json

import pytest

import gpunetsim
import gpunetsim.api
import topologies
from gpunetsim.cli import main
from simulator.core.errors import InputError


def test_docstring_examples_run():
    res = doctest.testmod(gpunetsim.api, extraglobs={"gpunetsim": gpunetsim, "topologies": topologies})
    assert res.attempted >= 10 and res.failed == 0


def test_collective_matches_the_cli_json(capsys):
    r = gpunetsim.collective(topology="dgx-h100", nodes=2, op="all_reduce", size_bytes=2**26, algo="tree")
    assert main(["collective", "--topology", "dgx-h100", "--nodes", "2", "--algo", "tree",
                 "-b", "64M", "-e", "64M", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == r.as_dict()
    assert r.time_s > 0 and r.algo == "tree" and r.busbw_GBps > 0


def test_ddp_matches_the_cli_json(capsys):
    r = gpunetsim.ddp(topology="dgx-h100", nodes=2, workload="gpt2", bucket_cap_mb=50, engine="closed")
    assert main(["ddp", "--topology", "dgx-h100", "--nodes", "2", "--workload", "gpt2",
                 "--bucket-cap-mb", "50", "--engine", "closed", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(r.as_dict()))


def test_bad_input_raises_input_error_naming_the_field():
    with pytest.raises(InputError) as e:
        gpunetsim.collective(op="all_scatter")
    assert e.value.field == "op"
    with pytest.raises(InputError) as e:
        gpunetsim.collective(nic_bw="fast", nodes=2)
    assert e.value.field == "nic_bw"


def test_unknown_attribute():
    with pytest.raises(AttributeError):
        gpunetsim.simulate_everything  # noqa: B018


def test_docs_api_examples_run():
    from pathlib import Path
    doc = Path(__file__).resolve().parents[1] / "docs" / "api.md"
    res = doctest.testfile(str(doc), module_relative=False)
    assert res.attempted >= 8 and res.failed == 0


def test_train_matches_the_cli_json(capsys):
    """``gpunetsim.train`` (the LLM iteration had no Python API function) answers as ``gpunetsim train --json``."""
    r = gpunetsim.train(topology="dgx-a100", nodes=2, nics=4, nic_bw="200 Gb/s", model_spec="hidden=1024,layers=8,"
                        "heads=16,seq=1024", tp=2, pp=2, global_batch=16, schedule="interleaved", zero=1)
    assert main(["train", "--topology", "dgx-a100", "--nodes", "2", "--nics", "4", "--nic-bw", "200 Gb/s",
                 "--model-spec", "hidden=1024,layers=8,heads=16,seq=1024", "--tp", "2", "--pp", "2",
                 "--global-batch", "16", "--schedule", "interleaved", "--zero", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(r.as_dict()))
    with pytest.raises(InputError) as e:
        gpunetsim.train(model="llama-3-8b", tp=3, global_batch=8)
    assert e.value.field == "--tp"
