"""topologies.route_rules: the in-server route rules both routers ask (rv21: they were written in each router)."""

from __future__ import annotations

import pytest

import topologies
from simulator.core.errors import InputError
from topologies.route_rules import crossable, nearest, nic_for_gpu, uses_pxn


@pytest.mark.parametrize("owner, nvswitch, p2p, want", [
    ("g1", True, True, True),          # another GPU's NIC behind an NVSwitch plane: PXN
    ("g1", True, False, False),        # peer-to-peer off: no NVLink between GPUs, no PXN
    ("g1", False, True, False),        # no NVSwitch plane
    ("g0", True, True, False),         # its own NIC
    (None, True, True, False),         # a NIC no GPU owns
])
def test_pxn_only_with_peer_to_peer_and_an_nvswitch_plane(owner, nvswitch, p2p, want):
    assert uses_pxn("g0", owner, nvswitch, p2p) is want


def test_a_leg_crosses_no_gpu_or_nic_but_its_ends():
    kinds = {"g0": "gpu", "g1": "gpu", "n0": "nic", "sw": "pcie_switch", "cpu": "cpu", "x.sw": "pcie_switch"}
    ok = crossable(("g0", "cpu"), lambda n: not n.startswith("x."), kinds.get)
    assert [n for n in kinds if ok(n)] == ["g0", "sw", "cpu"]


def test_nearest_breaks_ties_by_name_and_names_the_node_when_none():
    kinds = {"a": "gpu", "cpu1": "cpu", "cpu0": "cpu", "far": "cpu"}
    assert nearest("a", "cpu", {"a": 0, "cpu1": 1, "cpu0": 1, "far": 2}, kinds.get) == "cpu0"
    with pytest.raises(InputError, match="'h3.gpu0' reaches no cpu node"):
        nearest("gpu0", "cpu", {"gpu0": 0}, kinds.get, "h3.gpu0")


def test_nic_for_gpu_prefers_its_switch_then_blocks_of_gpus():
    assert nic_for_gpu(3, ["n2", "n3"], ["n0", "n1", "n2", "n3"], 8) == "n3"
    assert [nic_for_gpu(i, [], ["n0", "n1", "n2", "n3"], 8) for i in range(8)] == ["n0", "n0", "n1", "n1", "n2",
                                                                                    "n2", "n3", "n3"]


@pytest.mark.parametrize("preset", ["dgx-h100", "dgx-a100", "pcie-gen4"])
@pytest.mark.parametrize("p2p", [True, False])
def test_both_routers_give_the_same_routes(preset, p2p):
    """One definition of the rules: the graph router and the preset router agree on every GPU pair, the trips to
    host memory, and across servers (PXN or not)."""
    from topologies.routing import Router, router_for
    a = router_for(topologies.prepare(preset, nodes=2, p2p=p2p))
    b = Router(topologies.build(preset, nodes=2, p2p=p2p))
    assert a.gpus == b.gpus
    for g in a.gpus:
        assert a.to_host_memory(g) == b.to_host_memory(g)
        for h in a.gpus[::3]:
            assert a.route(g, h) == b.route(g, h), (g, h)
