"""One rule for a count (``limits.check_count``), review s26: FabricSpec.check, check_gpus_per_host and eight other
constructors each wrote ``isinstance(v, bool) or not isinstance(v, int)`` with their own message, so ``tp=2.0`` was
"must be a positive integer" while ``gpus=4.0`` was "must be a whole number", and three messages named their
option twice ("--gpus: --gpus must be between ...", "--hosts-per-leaf: hosts_per_leaf must be >= 1")."""

from __future__ import annotations

import pytest

import gpunetsim
from gpunetsim.cli import main
from simulator.collectives.algorithms import NvlsChunks
from simulator.core.errors import InputError
from simulator.training.ddp import DDPConfig
from simulator.training.goodput import Components
from simulator.training.llm.config import TrainConfig, default_dp
from simulator.training.llm.model import TransformerSpec
from simulator.training.llm.search_space import SearchSpace
from topologies.fabric import FabricSpec
from validation.compare import topo_from_hint

SPEC = dict(name="m", hidden=1024, layers=4, heads=16, seq=512)


@pytest.mark.parametrize("make, field", [
    (lambda v: FabricSpec(nics=v).check(), "nics"),
    (lambda v: FabricSpec(hosts_per_leaf=v).check(), "hosts_per_leaf"),
    (lambda v: TrainConfig(tp=v, pp=1, dp=1, global_batch=8), "--tp"),
    (lambda v: default_dp(8, 2, v), "--pp"),
    (lambda v: TransformerSpec(**dict(SPEC, layers=v)), "layers"),
    (lambda v: TransformerSpec(**SPEC, vocab=v), "vocab"),
    (lambda v: SearchSpace(max_tp=v), "--max-tp"),
    (lambda v: DDPConfig(accumulation_steps=v), "accumulation_steps"),
    (lambda v: Components(gpus=8, nodes=v), "nodes"),
    (lambda v: NvlsChunks(chunk_bytes=v), "NCCL_NVLS_CHUNKSIZE"),
    (lambda v: gpunetsim.goodput(16, gpus_per_node=v), "gpus_per_node"),
    (lambda v: gpunetsim.goodput(16, switches=v), "switches"),
    (lambda v: gpunetsim.cluster("shared-spine", iterations=v), "iterations"),
    (lambda v: gpunetsim.cluster("shared-spine", iterations=1, top_links=v), "top_links"),   # a TypeError
    (lambda v: topo_from_hint({"preset": "hgx-h200", "nodes": v}), "meta.topology.nodes"),
])
@pytest.mark.parametrize("value", [2.0, "2", True])
def test_a_count_that_is_not_an_int_is_not_a_whole_number(make, field, value):
    with pytest.raises(InputError) as e:
        make(value)
    assert (e.value.field, e.value.message, e.value.value) == (field, "must be a whole number", value)


@pytest.mark.parametrize("argv, message", [
    (["--topology", "dgx-h100", "--gpus", "9"], "--gpus: must be between 1 and 8 for dgx-h100 (got 9)"),
    (["--topology", "dgx-h100", "--gpus", "0"], "--gpus: must be between 1 and 8 for dgx-h100 (got 0)"),
    (["--nodes", "2", "--hosts-per-leaf", "0"], "--hosts-per-leaf: must be at least 1 (got 0)"),
    (["--nodes", "2", "--nics", "0"], "--nics: must be at least 1 (got 0)"),
    # below 1 and above the limit: one range, one message
    (["--nodes", "2", "--oversubscription", "0.5"], "--oversubscription: out of range [1, 1000] (got 0.5)"),
    (["--nodes", "2", "--oversubscription", "1e9"], "--oversubscription: out of range [1, 1000] (got 1000000000.0)"),
])
def test_a_fabric_count_out_of_range_names_its_option_once(capsys, argv, message):
    assert main(["collective", *argv]) == 2
    assert capsys.readouterr().err == f"gpunetsim: error: {message}\n"


def test_a_caller_keeps_its_own_range_words():
    """Tests and docs quote "--tp: must be a positive integer (got 0)"; the rule keeps a caller's wording."""
    with pytest.raises(InputError, match="must be a positive integer"):
        TrainConfig(tp=0, pp=1, dp=1, global_batch=8)
    with pytest.raises(InputError, match="must be a non-negative integer"):
        Components(gpus=8, nodes=-1)


@pytest.mark.parametrize("edit, message", [
    ("host: -1", "nodes[1].host: must be at least 0 (got -1)"),
    ("host: 1.0", "nodes[1].host: must be a whole number (got 1.0)"),
])
def test_a_topology_file_host_is_a_count(tmp_path, capsys, edit, message):
    """It read 'nodes[1].host: host must be a non-negative integer': the field twice."""
    f = tmp_path / "t.yaml"
    f.write_text("name: t\nnodes:\n  - {name: g0}\n  - {name: g1, %s}\n  - {name: sw, kind: pcie_switch}\n"
                 "links:\n  - {a: g0, b: sw, kind: pcie, bandwidth: 32 GB/s}\n"
                 "  - {a: g1, b: sw, kind: pcie, bandwidth: 32 GB/s}\n" % edit)
    assert main(["collective", "--topology", str(f)]) == 2
    assert capsys.readouterr().err == f"gpunetsim: error: {f}: {message}\n"


@pytest.mark.parametrize("message, field, shown", [
    ("--tp must divide the KV heads", "--tp", "--tp: must divide the KV heads (got 3)"),
    ("compression must be none, bf16 or fp16", "--compression", "--compression: must be none, bf16 or fp16 (got 3)"),
    ("hosts_per_leaf must be >= 1", "--hosts-per-leaf", "--hosts-per-leaf: must be >= 1 (got 3)"),
    ("tp x pp = 3 x 1 = 3 does not divide", "--tp", "--tp: tp x pp = 3 x 1 = 3 does not divide (got 3)"),   # a formula
    ("batch size must be positive", "--batch-size", "--batch-size: must be positive (got 3)"),   # in words
    ("bandwidth must be positive", "links[0].bandwidth", "links[0].bandwidth: must be positive (got 3)"),   # a path
])
def test_an_error_names_its_field_once(message, field, shown):
    """'--tp: --tp must divide ...' and '--global-batch: --global-batch must be a multiple ...': 30-odd messages
    repeated the field they are printed after."""
    assert str(InputError(message, field=field, value=3)) == shown
