"""The topology graph: node and edge attributes, and the wiring check.

A topology is an undirected ``networkx.Graph``; every link is full duplex and its bandwidth is
per direction.

Node attributes:
    kind        one of NODE_KINDS ("gpu", "nvswitch", "pcie_switch", "cpu", "nic", "leaf", "spine")
    host        index of the server the node sits in (-1 for fabric switches)
    local       index of a GPU or NIC within its server (-1 otherwise)

Edge attributes:
    kind        link class, one of LINK_KINDS ("nvlink", "pcie", "socket", "net")
    bw_Bps      bandwidth per direction, bytes/s (datasheet value)
    latency_s   one-way latency of the link, seconds

Graph attributes (``G.graph``):
    name, hosts, gpus_per_host, gpu_model, p2p (bool: GPU peer-to-peer over PCIe allowed),
    compute_capability (int, e.g. 90), datasheets (str: where the numbers come from).
"""

from __future__ import annotations

import networkx as nx

from simulator.core.errors import InputError

NODE_KINDS = ("gpu", "nvswitch", "pcie_switch", "cpu", "nic", "leaf", "spine")
LINK_KINDS = ("nvlink", "pcie", "socket", "net")


def gpus(G: nx.Graph) -> list[str]:
    """GPU node names in rank order: by (host, local index), then name."""
    nodes = [n for n, d in G.nodes(data=True) if d.get("kind") == "gpu"]
    return sorted(nodes, key=lambda n: (G.nodes[n].get("host", 0), G.nodes[n].get("local", 0), str(n)))


def hosts(G: nx.Graph) -> int:
    """Number of servers holding GPUs."""
    return len({G.nodes[n].get("host", 0) for n in gpus(G)})


def validate(G: nx.Graph, source: str | None = None) -> nx.Graph:
    """Check the wiring; raise InputError naming the node or link that is wrong.

    Checks: node and link kinds are known, bandwidths positive and finite, latencies non-negative,
    at least one GPU, and every GPU can reach every other GPU.
    """
    for n, d in G.nodes(data=True):
        if d.get("kind") not in NODE_KINDS:
            raise InputError(f"unknown node kind (expected one of {', '.join(NODE_KINDS)})",
                             source=source, field=f"nodes.{n}.kind", value=d.get("kind"))
    for u, v, d in G.edges(data=True):
        where = f"links[{u} - {v}]"
        if d.get("kind") not in LINK_KINDS:
            raise InputError(f"unknown link kind (expected one of {', '.join(LINK_KINDS)})",
                             source=source, field=f"{where}.kind", value=d.get("kind"))
        bw = d.get("bw_Bps")
        if not isinstance(bw, (int, float)) or not 0 < bw < float("inf"):
            raise InputError("bandwidth must be positive and finite", source=source,
                             field=f"{where}.bandwidth", value=bw)
        lat = d.get("latency_s", 0.0)
        if not isinstance(lat, (int, float)) or not 0 <= lat < float("inf"):
            raise InputError("latency must be non-negative and finite", source=source,
                             field=f"{where}.latency", value=lat)
    g = gpus(G)
    if not g:
        raise InputError("the topology has no GPU", source=source, field="nodes")
    comp = nx.node_connected_component(G, g[0])
    for n in g[1:]:
        if n not in comp:
            raise InputError(f"GPU {n!r} cannot reach GPU {g[0]!r}: no path of links joins them",
                             source=source, field=f"nodes.{n}", value=n)
    return G


def first_gpus(G: nx.Graph, count: int) -> nx.Graph:
    """A copy of G keeping only the first ``count`` GPUs of each host (``--gpus G``).

    NICs stay; a NIC whose GPU was dropped still serves the rail (NCCL's PXN reaches it over NVLink).
    """
    per_host = G.graph.get("gpus_per_host", len(gpus(G)))
    if count < 1 or count > per_host:
        raise InputError(f"--gpus must be between 1 and {per_host} for {G.graph.get('name', 'this topology')}",
                         field="gpus", value=count)
    if count == per_host:
        return G
    drop = [n for n in gpus(G) if G.nodes[n].get("local", 0) >= count]
    H = G.copy()
    H.remove_nodes_from(drop)
    H.graph = dict(G.graph, gpus_per_host=count)
    return H
