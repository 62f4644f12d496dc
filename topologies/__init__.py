"""Topologies: networkx graphs of GPUs, switches, NICs and fabrics (see topologies.graph)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from simulator.core.errors import InputError
from simulator.core.inputs import path_exists
from topologies.fabric import FabricSpec, cluster
from topologies.files import load_topology
from topologies.graph import ClusterInfo, cluster_info, first_gpus, gpus, nvls_capable, set_nvls, validate
from topologies.presets import SERVERS, preset_names
from topologies.routing import Router

__all__ = ["FabricSpec", "Router", "SERVERS", "build", "cluster", "first_gpus", "gpus", "load_topology",
           "nvls_capable", "preset_names", "validate"]


def build(topology: str, *, nodes: int = 1, gpus_per_node: int | None = None, p2p: bool | None = None,
          fabric: FabricSpec = FabricSpec(), sockets: bool = False, cpu_sockets: int | None = None,
          nvls: bool | None = None) -> nx.Graph:
    """A preset name (with ``nodes``, ``gpus_per_node``, ``fabric``) or a YAML/JSON file path.

    ``p2p=False``: GPU peer-to-peer off (NCCL_P2P_DISABLE=1): traffic through host memory.
    ``sockets=True``: NCCL's socket transport (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1, or
    NCCL_IB_DISABLE=1 across servers): every hop through the host's TCP stack.
    ``cpu_sockets``: 1 or 2 CPU sockets per server (presets; PCIe switches are split over them).
    ``nvls``: NVLink SHARP; None = NCCL's default (on where the hardware has it), False =
    NCCL_NVLS_ENABLE=0, True = required (an InputError where the hardware cannot).
    """
    if cpu_sockets is not None:
        if topology not in SERVERS:
            raise InputError("--cpu-sockets applies to presets only", field="cpu_sockets", value=cpu_sockets)
        if cpu_sockets not in (1, 2):
            raise InputError("a server has 1 or 2 CPU sockets", field="cpu_sockets", value=cpu_sockets)
    G = _build(topology, nodes, gpus_per_node, p2p, fabric, cpu_sockets)
    if sockets:
        G.graph.update(socket_transport=True, p2p=False)
    if nvls is not None or "nvls" not in G.graph:
        set_nvls(G, nvls)
    return G


def _build(topology: str, nodes: int, gpus_per_node: int | None, p2p: bool | None,
           fabric: FabricSpec, cpu_sockets: int | None = None) -> nx.Graph:
    if topology in SERVERS:
        pcie_box = SERVERS[topology].nvlink_Bps is None
        G = cluster(topology, nodes, gpus=gpus_per_node if pcie_box else None, p2p=p2p, fabric=fabric,
                    sockets=cpu_sockets)
        if gpus_per_node is not None and not pcie_box:
            G = first_gpus(G, gpus_per_node)
        return validate(G)
    if Path(topology).suffix.lower() in (".yaml", ".yml", ".json") or path_exists(topology):
        G = load_topology(topology)
        if nodes != 1:
            from simulator.core.errors import InputError
            raise InputError("--nodes applies to presets only; describe every server in the file",
                             field="nodes", value=nodes)
        if gpus_per_node is not None:
            G = first_gpus(G, gpus_per_node)
        if p2p is not None:
            G.graph["p2p"] = p2p
        return G
    from simulator.core.errors import InputError
    raise InputError(f"unknown topology: not a preset ({', '.join(preset_names())}) nor a .yaml/.json file",
                     field="topology", value=topology)
