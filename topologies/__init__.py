"""Topologies: networkx graphs of GPUs, switches, NICs and fabrics (see topologies.graph).

:func:`build` gives the graph of a preset cluster or a topology file. :func:`prepare` gives what a
router is made from with the least work: for a preset, its tables (one server and index
arithmetic, no graph, no networkx import; :mod:`topologies.preset_cluster`), else the file's graph.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulator.core.errors import InputError
from simulator.core.inputs import names_a_file
from topologies.fabric import FabricSpec, cluster
from topologies.graph import (ClusterInfo, cluster_info, first_gpus, gpus, nvls_capable, set_nvls,
                              transport_attributes, validate)
from topologies.preset_cluster import PresetCluster
from topologies.presets import SERVERS, preset_names
from topologies.routing import Router, router_for

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["FabricSpec", "PresetCluster", "Router", "SERVERS", "build", "cluster", "first_gpus", "gpus",
           "load_topology", "nvls_capable", "prepare", "preset_names", "router_for", "validate"]


def __getattr__(name: str) -> Any:
    if name == "load_topology":           # topology files: imported when one is read
        from topologies.files import load_topology
        return load_topology
    raise AttributeError(f"module 'topologies' has no attribute {name!r}")


def prepare(topology: str, *, nodes: int = 1, gpus_per_node: int | None = None, p2p: bool | None = None,
            fabric: FabricSpec = FabricSpec(), sockets: bool = False, cpu_sockets: int | None = None,
            nvls: bool | None = None, collnet: bool | None = None, gdr: bool | None = None) -> PresetCluster | nx.Graph:
    """What :func:`build` describes (same arguments, same checks), as a :class:`PresetCluster` for a
    preset (its graph is ``.to_graph()``) or as the graph of a topology file."""
    if topology in SERVERS:
        return PresetCluster(topology, nodes, gpus_per_node=gpus_per_node, p2p=p2p, fabric=fabric,
                             socket_transport=sockets, cpu_sockets=cpu_sockets, nvls=nvls, collnet=collnet, gdr=gdr)
    return build(topology, nodes=nodes, gpus_per_node=gpus_per_node, p2p=p2p, fabric=fabric, sockets=sockets,
                 cpu_sockets=cpu_sockets, nvls=nvls, collnet=collnet, gdr=gdr)


def build(topology: str, *, nodes: int = 1, gpus_per_node: int | None = None, p2p: bool | None = None,
          fabric: FabricSpec = FabricSpec(), sockets: bool = False, cpu_sockets: int | None = None,
          nvls: bool | None = None, collnet: bool | None = None, gdr: bool | None = None) -> nx.Graph:
    """A preset name (with ``nodes``, ``gpus_per_node``, ``fabric``) or a YAML/JSON file path.

    ``p2p=False``: GPU peer-to-peer off (NCCL_P2P_DISABLE=1): traffic through host memory.
    ``gdr=False``: GPUDirect RDMA off between GPUs and NICs (NCCL's rule when they sit further apart than
    NCCL_NET_GDR_LEVEL, PXB by default): every network byte staged through host memory (topologies.graph).
    ``sockets=True``: NCCL's socket transport (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1, or
    NCCL_IB_DISABLE=1 across servers): every hop through the host's TCP stack.
    ``cpu_sockets``: 1 or 2 CPU sockets per server (presets; PCIe switches are split over them).
    ``nvls``: NVLink SHARP; None = NCCL's default (on where the hardware has it), False =
    NCCL_NVLS_ENABLE=0, True = required (an InputError where the hardware cannot).
    ``collnet``: NCCL's CollNet (SHARP); None = on where the fabric's switches reduce (``fabric.sharp``,
    ``sharp: true`` in a file), False = NCCL_COLLNET_ENABLE=0, True = required (InputError without SHARP).
    """
    if topology in SERVERS:
        return PresetCluster(topology, nodes, gpus_per_node=gpus_per_node, p2p=p2p, fabric=fabric,
                             socket_transport=sockets, cpu_sockets=cpu_sockets, nvls=nvls, collnet=collnet,
                             gdr=gdr).to_graph()
    if cpu_sockets is not None:
        raise InputError("--cpu-sockets applies to presets only", field="cpu_sockets", value=cpu_sockets)
    if names_a_file(topology):
        from topologies.files import load_topology
        G = load_topology(topology)
        if nodes != 1:
            raise InputError("--nodes applies to presets only; describe every server in the file",
                             field="nodes", value=nodes)
        given = fabric.given()
        if given is not None:       # it was ignored without a word: the file's net links set the network
            raise InputError("applies to presets only; a topology file describes its own network (its nic nodes "
                             "and net links, and `sharp: true` for in-network reduction)", field=given[0],
                             value=given[1])
        if gpus_per_node is not None:
            G = first_gpus(G, gpus_per_node)
        if p2p is not None:
            G.graph["p2p"] = p2p
        if gdr is not None:
            G.graph["gdr"] = bool(gdr)
        return transport_attributes(G, sockets, nvls, collnet)
    raise unknown_topology(topology)


def unknown_topology(value: str) -> InputError:
    """The error for a name that is neither a preset nor a topology file (a misspelt preset)."""
    return InputError(f"unknown topology: not a preset ({', '.join(preset_names())}) nor a .yaml/.json file",
                      field="topology", value=value)
