"""GPUDirect RDMA off (``gdr``): NCCL stages every network byte through host memory.

NCCL turns GPUDirect RDMA off where a GPU and its NIC sit further apart than NCCL_NET_GDR_LEVEL (PXB by
default: on different root ports or sockets, ``nvidia-smi topo -m`` showing NODE or SYS); its net
transport then has the GPU's SMs write to and read from a host buffer that the NIC reads and writes.
"""

from __future__ import annotations

import json

import pytest

import topologies
from simulator.collectives.params import Parameters
from simulator.collectives.plans import host_staged, layout
from simulator.core.errors import InputError
from simulator.network.closed_form import CostModel
from topologies.graph import cluster_info
from validation.compare import Topo, topo_from_hint
from validation.data import DATA_DIR
from validation.parsers import read_jsonl

GiB = 1 << 30


def _ring_s(gdr: bool | None, preset: str = "hgx-h200", gpus: int = 1, params: Parameters | None = None) -> float:
    m = CostModel(topologies.prepare(preset, nodes=2, gpus_per_node=gpus, gdr=gdr), params or Parameters())
    return m.time_s("all_reduce", GiB, "ring", "simple")


def test_gdr_is_on_unless_said_off():
    assert topologies.prepare("hgx-h200", nodes=2).info.gdr is True
    assert topologies.prepare("hgx-h200", nodes=2, gdr=False).info.gdr is False
    assert cluster_info(topologies.build("hgx-h200", nodes=2, gdr=False)).gdr is False


def test_staging_slows_a_network_bound_ring_by_the_host_memory_factor():
    """One GPU per server: the ring's only hop crosses the network, so staging it through host memory prices
    its PCIe leg at shm_efficiency (0.5: 63 x 0.8 x 0.5 = 25 GB/s below the 50 GB/s NIC)."""
    on, off = _ring_s(None), _ring_s(False)
    assert off > 1.5 * on
    # with host memory as fast as GPUDirect (shm_efficiency 1) the staged ring is the NIC-bound one again
    fast = Parameters().with_values({"shm_efficiency": 1.0})
    assert _ring_s(False, params=fast) == pytest.approx(_ring_s(None, params=fast), rel=1e-9)


def test_gdr_changes_nothing_inside_one_server():
    one = CostModel(topologies.prepare("pcie-gen4", gpus_per_node=2, gdr=False))
    ref = CostModel(topologies.prepare("pcie-gen4", gpus_per_node=2))
    assert one.time_s("all_reduce", GiB, "ring", "simple") == ref.time_s("all_reduce", GiB, "ring", "simple")


def test_socket_groups_are_not_staged_twice():
    """The socket transport stages through the host already and has its own ceiling: gdr off changes nothing."""
    m = CostModel(topologies.prepare("pcie-gen4", nodes=2, gpus_per_node=1, sockets=True, gdr=False))
    lay = layout(m.router, "all_reduce", "ring", m.router.gpus)
    assert lay.groups and all(g.socket for g in lay.groups)
    assert not any(host_staged(m.router, g) for g in lay.groups)


def test_topology_file_field(tmp_path):
    spec = {"name": "two", "gdr": False, "nodes": [{"name": "gpu0", "kind": "gpu"}, {"name": "gpu1", "kind": "gpu"}],
            "links": [{"a": "gpu0", "b": "gpu1", "kind": "pcie", "bandwidth": "25 GB/s"}]}
    f = tmp_path / "t.json"
    f.write_text(json.dumps(spec))
    assert cluster_info(topologies.load_topology(str(f))).gdr is False
    f.write_text(json.dumps({**spec, "gdr": "no"}))
    with pytest.raises(InputError, match="gdr must be true or false"):
        topologies.load_topology(str(f))


def test_the_l40s_roce_header_says_gdr_and_p2p_off():
    """The L40S RoCE run's source (a Dell R760xa, nvidia-smi topo NODE between GPU and NICs, GPUs on different
    root complexes) is carried into its topology hint, and the hint into the predictor's topology."""
    meta = read_jsonl(DATA_DIR / "public" / "roce_L40S_2node_and_dgxH200_2node_socket_redhat.jsonl").meta
    hint = meta["topology_by_variant"]["l40s_2x2_roce"]
    assert hint["gdr"] is False and hint["p2p"] is False
    topo = topo_from_hint(hint)
    assert topo.gdr is False and topo.p2p is False
    assert Topo("pcie-gen4", 2, 2).build(4).info.gdr is True
    assert topo.build(4).info.gdr is False


def test_cli_no_gdr_flag(capsys):
    """``--no-gdr`` reaches the model: a network-bound ring across two PCIe servers runs at half the rate."""
    from gpunetsim.cli import main
    args = ["collective", "--topology", "pcie-gen4", "--nodes", "2", "--gpus", "1", "--op", "all_reduce",
            "-b", "1G", "-e", "1G", "--algo", "ring", "--engine", "closed", "--json"]
    rates = []
    for extra in ([], ["--no-gdr"]):
        assert main(args + extra) in (0, None)
        rates.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["busbw_GBps"])
    assert rates[1] < 0.6 * rates[0]


def test_api_no_gdr_is_the_flag():
    import gpunetsim
    assert cluster_info(gpunetsim.topology("pcie-gen4", nodes=2, no_gdr=True)).gdr is False
    assert cluster_info(gpunetsim.topology("pcie-gen4", nodes=2)).gdr is True
