"""NCCL's default LL128 enablement (tuning.cc: only where the GPUs of a server meet over NVLink): the tuner's
``auto`` choices follow it, an explicit LL128 runs anywhere."""

import pytest

import topologies
from simulator.collectives.availability import ll128_by_default
from simulator.collectives.params import Parameters
from simulator.network.closed_form import CostModel


@pytest.mark.parametrize("kwargs, enabled", [
    (dict(topology="hgx-h200", gpus_per_node=4), True),                        # NVLink, peer-to-peer on
    (dict(topology="hgx-h200", gpus_per_node=4, p2p=False), False),           # through host memory (SHM)
    (dict(topology="hgx-h200", gpus_per_node=4, p2p=False, sockets=True), False),   # the socket transport
    (dict(topology="pcie-gen4", gpus_per_node=2), False),                     # no NVLink between the GPUs
    (dict(topology="pcie-gen4", nodes=2, gpus_per_node=1), True),             # one GPU per server: no such path
])
def test_ll128_is_on_by_default_only_where_a_servers_gpus_meet_over_nvlink(kwargs, enabled):
    G = topologies.build(kwargs.pop("topology"), **kwargs)
    m = CostModel(G, Parameters())
    assert ll128_by_default(m.router) is enabled
    protos = {p for _, p in m.planner.choices("all_reduce")}
    assert ("ll128" in protos) is enabled
    assert m.planner.choices("all_reduce", "ring", "ll128") == (("ring", "ll128"),)   # NCCL_PROTO=LL128 runs it
