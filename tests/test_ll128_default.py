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


@pytest.mark.parametrize("topology, kwargs, version, enabled", [
    ("dgx-a100", {}, "2.8", True),                    # Volta and Ampere: every release the model plans for
    ("dgx-h100", {}, "2.14", False),                  # Hopper from 2.15 (nccl_constants.LL128_COMPUTE_CAPABILITIES)
    ("dgx-h100", {}, "2.15", True),
    ("hgx-b200", {}, "2.24.3", False),                # 2.24.3's tuning.cc lists 70, 80, 90 only
    ("hgx-b200", {}, "2.25", True),                   # Blackwell, and any GPU from 7.0, from 2.25
    ("pcie-gen4", dict(nodes=2, gpus_per_node=1), "2.24", False),     # Ada, one GPU per server: the GPU rule alone
    ("pcie-gen4", dict(nodes=2, gpus_per_node=1), "2.25", True),
])
def test_ll128_by_default_follows_the_nccl_release(topology, kwargs, version, enabled):
    from simulator.collectives.planner import Planner
    from simulator.core.vocabulary import nccl_version
    planner = Planner(topologies.build(topology, **kwargs), Parameters(), nccl_version(version))
    assert ll128_by_default(planner.router, None, planner.nccl_version) is enabled
    assert ("ll128" in {p for _, p in planner.choices("all_reduce")}) is enabled
    assert planner.choices("all_reduce", "ring", "ll128") == (("ring", "ll128"),)   # NCCL_PROTO=LL128 runs it


@pytest.mark.parametrize("cc, version, enabled", [(60, "2.28", False), (70, "2.8", True), (75, "2.24", False),
                                                  (75, "2.25", True), (89, "2.28", True), (90, "2.14", False)])
def test_ll128_capable_by_compute_capability(cc, version, enabled):
    from simulator.collectives.nccl_constants import ll128_capable
    from simulator.core.vocabulary import nccl_version
    assert ll128_capable(cc, nccl_version(version)) is enabled


def test_the_rule_reaches_the_command_line(capsys):
    import json
    from gpunetsim.cli import main
    picked = {}
    for v in ("2.14", "2.15"):
        assert main(["collective", "--topology", "dgx-h100", "-b", "4M", "-e", "4M", "--nccl-version", v, "--json"]) == 0
        row = json.loads(capsys.readouterr().out)
        picked[v] = (row["algo"], row["proto"])
    assert picked == {"2.14": ("ring", "ll"), "2.15": ("ring", "ll128")}
