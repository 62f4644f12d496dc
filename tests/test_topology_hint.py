"""A dataset's topology hint (validation.compare.topo_from_hint): bad values name the file and field (review s19)."""

from __future__ import annotations

import pytest

from simulator.core.errors import InputError
from validation.compare import Topo, topo_from_hint


@pytest.mark.parametrize("key, value", [("nodes", "two"), ("nodes", 0), ("gpus_per_node", 2.5), ("nodes", True)])
def test_a_bad_count_names_the_file_and_field(key, value):
    """``int("two")`` was a traceback (exit 70, 'internal error') instead of a bad-input error."""
    with pytest.raises(InputError) as e:
        topo_from_hint({"preset": "hgx-h200", key: value}, "run.jsonl")
    assert (e.value.source, e.value.field) == ("run.jsonl", f"meta.topology.{key}")


def test_a_bad_nic_bandwidth_names_the_file():
    with pytest.raises(InputError) as e:
        topo_from_hint({"preset": "dgx-h100", "nodes": 2, "nic_bw_per_node": "fast"}, "run.jsonl")
    assert (e.value.source, e.value.field) == ("run.jsonl", "meta.topology.nic_bw_per_node")


def test_too_many_ranks_for_the_hints_one_server_names_the_hint():
    """The hint said one server, the records 16 ranks: the fix is in the file (or --topology/--nodes), not a
    --nodes the user never gave."""
    with pytest.raises(InputError) as e:
        topo_from_hint({"preset": "hgx-h200"}, "run.jsonl").build(16)
    assert (e.value.source, e.value.field) == ("run.jsonl", "meta.topology.nodes") and "nodes: 2" in e.value.message
    with pytest.raises(InputError) as e:
        Topo("hgx-h200").build(16)
    assert e.value.field == "--nodes" and "--nodes 2" in e.value.message
    assert topo_from_hint({"preset": "hgx-h200"}, "a.jsonl") == topo_from_hint({"preset": "hgx-h200"}, "b.jsonl")


@pytest.mark.parametrize("nic, nics", [("4x 100G EFA, GPUDirect RDMA", 4), ("4x200G GPUDirect-TCPX", 4),
                                       ("8x 400G NDR InfiniBand", None), ("32x 100G EFA (v2), 4 per GPU", None),
                                       ("400G ConnectX-7", None)])
def test_nics_fewer_than_gpus_come_from_the_header(nic, nics):
    """GPUs sharing NICs (4 for 8 A100s on p4d) is read from the NIC description; a NIC per GPU or more (a p5's
    32 EFA NICs, grouped one per GPU by AWS's plugin) keeps the preset's, and the per-NIC rate divides the
    server's bandwidth by the count that stands."""
    from validation.compare import nics_seen
    assert nics_seen(nic, 8) == nics
    topo = topo_from_hint({"preset": "dgx-a100", "nodes": 2, "nic": nic, "nic_bw_per_node": "400 Gb/s"})
    assert topo.nics == nics and topo.nic_Bps == pytest.approx(400e9 / 8 / (nics or 8))
    assert topo.server_nic_Bps == pytest.approx(400e9 / 8)        # the header's bandwidth per server, either way


@pytest.mark.parametrize("key, value", [("plugin_proto", "bogus"), ("plugin_proto", "LL"),
                                        ("tuner_plugin", "p5"), ("tuner_plugin", 5), ("force_flush", "yes"),
                                        ("force_flush", 1)])
def test_a_bad_plugin_hint_names_the_file_and_field(key, value):
    """meta.topology.plugin_proto reached the predictor as a protocol ('proto: unknown protocol', no file or field)."""
    with pytest.raises(InputError) as e:
        topo_from_hint({"preset": "dgx-h100", key: value}, source="run.jsonl")
    assert e.value.source == "run.jsonl" and e.value.field == f"meta.topology.{key}" and e.value.value == value


def test_the_plugin_hints_the_corpus_writes_are_read():
    t = topo_from_hint({"preset": "dgx-h100", "plugin_proto": "simple", "tuner_plugin": "p5.48xlarge"})
    assert (t.plugin_proto, t.tuner_plugin) == ("simple", "p5.48xlarge")


@pytest.mark.parametrize("value", [-1e-6, "75 us", True])
def test_a_bad_net_latency_hint_names_the_file_and_field(value):
    with pytest.raises(InputError) as e:
        topo_from_hint({"preset": "dgx-h100", "net_latency_s": value}, source="run.jsonl")
    assert e.value.source == "run.jsonl" and e.value.field == "meta.topology.net_latency_s"


def test_the_net_latency_hint_is_read():
    assert topo_from_hint({"preset": "dgx-h100", "net_latency_s": 7.5e-5}).net_latency_s == 7.5e-5
    assert topo_from_hint({"preset": "dgx-h100"}).net_latency_s == 0.0
