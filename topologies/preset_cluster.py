"""Preset clusters as tables: one server and index arithmetic instead of a graph of every node.

A cluster of identical preset servers joined by a generated fabric (:mod:`topologies.fabric`) is
fully described by one server, the fabric's shape and how links are numbered. :class:`PresetCluster`
holds exactly that, so a 16384-GPU cluster is set up in milliseconds and without networkx;
:meth:`PresetCluster.to_graph` builds the equivalent ``networkx`` graph when one is asked for (the
documented graph API), and the tests check, preset by preset, that both give the same link table
and the same routes.

Links are numbered as :class:`topologies.routing.Router` numbers the graph's (the order of
``networkx.Graph.edges``; undirected edge e gives directed link 2e as listed and 2e+1 reversed):

* server h owns block h, ids ``[h * B, (h + 1) * B)``: its edges, NIC-to-leaf ones included, in the
  same order in every server, so a server's link is the first server's plus ``h * B``;
* then the spine's edges to the leaves, ``(spine, leaf g r)`` for each leaf group g and rail r.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from simulator.core.errors import InputError
from topologies.fabric import FabricSpec, Leaves, cluster, cluster_attributes, cluster_spec
from topologies.graph import (ClusterInfo, check_gpus_per_host, collnet_attribute, first_gpus, info_from_attributes,
                              nvls_attribute, transport_attributes, validate)
from topologies.presets import SERVERS, server
from topologies.smallgraph import SmallGraph

if TYPE_CHECKING:
    import networkx as nx

#: Name of server 0's stand-in for the leaf of rail r (a server's NIC-to-leaf links are in its block).
_RAIL_LEAF = "rail{}"


class PresetCluster:
    """``nodes`` servers of a preset (the first ``gpus_per_node`` GPUs of each, for NVLink servers)
    joined by ``fabric``; arguments as :func:`topologies.build` takes them, checked the same way."""

    def __init__(self, preset: str, nodes: int = 1, *, gpus_per_node: int | None = None,
                 p2p: bool | None = None, fabric: FabricSpec = FabricSpec(), socket_transport: bool = False,
                 cpu_sockets: int | None = None, nvls: bool | None = None, collnet: bool | None = None,
                 gdr: bool | None = None) -> None:
        if cpu_sockets is not None and cpu_sockets not in (1, 2):
            raise InputError("a server has 1 or 2 CPU sockets", field="cpu_sockets", value=cpu_sockets)
        pcie_box = preset in SERVERS and SERVERS[preset].nvlink_Bps is None
        spec = cluster_spec(preset, nodes, fabric, cpu_sockets, gpus_per_node if pcie_box else None)
        self.preset, self.nodes, self.fabric = preset, nodes, fabric
        self._args = dict(gpus_per_node=gpus_per_node, p2p=p2p, socket_transport=socket_transport,
                          cpu_sockets=cpu_sockets, nvls=nvls, collnet=collnet, gdr=gdr)
        T = SmallGraph()
        server(spec, host=0, gpus=gpus_per_node if pcie_box else None, p2p=p2p, G=T)
        attrs = dict(T.graph, **cluster_attributes(nodes, fabric))
        if gpus_per_node is not None and not pcie_box:
            check_gpus_per_host(gpus_per_node, attrs["gpus_per_host"], attrs["name"])
            T.remove_nodes_from([n for n, d in T.nodes.items()
                                 if d["kind"] == "gpu" and d["local"] >= gpus_per_node])
            attrs["gpus_per_host"] = gpus_per_node
        if socket_transport:
            attrs.update(socket_transport=True, p2p=False)
        if gdr is not None:
            attrs["gdr"] = bool(gdr)
        nvswitch = any(d["kind"] == "nvswitch" for d in T.nodes.values())
        attrs["nvls"] = nvls_attribute(attrs, nvswitch, nvls)
        attrs["collnet"] = collnet_attribute(attrs, collnet)
        self.leaves = Leaves.of(spec.nics, spec.nic_Bps, nodes, fabric) if nodes > 1 else None
        if self.leaves is not None:
            for r in sorted({self.leaves.rail(k) for k in range(spec.nics)}):
                T.add_node(_RAIL_LEAF.format(r), kind="leaf", host=-1, local=r)
            for k in range(spec.nics):
                T.add_edge(f"h0.nic{k}", _RAIL_LEAF.format(self.leaves.rail(k)), kind="net",
                           bw_Bps=self.leaves.nic_link_Bps, latency_s=self.leaves.nic_link_latency_s)
        self.server = T
        self.attributes = attrs
        nics = sum(1 for d in T.nodes.values() if d.get("kind") == "nic")
        gpus = sum(1 for d in T.nodes.values() if d.get("kind") == "gpu")
        self.info: ClusterInfo = info_from_attributes(attrs, nodes, gpus, nics, nvswitch)
        # server 0's directed links: (from, to, class, bandwidth, latency), in graph order
        links = []
        for u, v, d in T.edges():
            links.append((u, v, d))
            links.append((v, u, d))
        self.server_links: list[tuple[str, str]] = [(u, v) for u, v, _ in links]
        self.block = len(links)                      # B: directed links per server
        L = self.leaves
        up = list(L.uplink_Bps) if L is not None and L.spine else []
        fabric_cap = [bw for bw in up for _ in range(L.rails) for _ in (0, 1)] if up else []
        self.datasheet_Bps: list[float] = ([float(d["bw_Bps"]) for _, _, d in links] * nodes
                                           + [float(bw) for bw in fabric_cap])
        usable = [float(d.get("usable", 1.0)) for _, _, d in links] * nodes + [1.0] * len(fabric_cap)
        self.capacity_Bps: list[float] = [bw * u for bw, u in zip(self.datasheet_Bps, usable)]
        self.latency_s: list[float] = ([float(d.get("latency_s", 0.0)) for _, _, d in links] * nodes
                                       + [float(L.uplink_latency_s) if up else 0.0] * len(fabric_cap))
        self.kind: list[str] = [d["kind"] for _, _, d in links] * nodes + ["net"] * len(fabric_cap)

    # -------------------------------------------------------------------- numbering
    @property
    def fabric_base(self) -> int:
        """Id of the first spine link (after every server's block)."""
        return self.nodes * self.block

    def uplink(self, host: int, rail: int) -> int:
        """Directed link leaf (of ``host``'s group, ``rail``) -> spine."""
        return self.fabric_base + 2 * ((host // self.leaves.hosts_per_leaf) * self.leaves.rails + rail) + 1

    def downlink(self, host: int, rail: int) -> int:
        """Directed link spine -> leaf (of ``host``'s group, ``rail``)."""
        return self.uplink(host, rail) - 1

    def node_name(self, server_node: str, host: int) -> str:
        """Server 0's node (or rail-leaf stand-in) as seen in server ``host``."""
        if server_node.startswith("rail"):
            return self.leaves.leaf(host, int(server_node[4:]))
        return f"h{host}.{server_node[3:]}"

    @cached_property
    def link_names(self) -> list[tuple[str, str]]:
        """(from, to) node names of every directed link."""
        names = [(self.node_name(a, h), self.node_name(b, h)) for h in range(self.nodes) for a, b in self.server_links]
        L = self.leaves
        if L is not None and L.spine:
            for g in range(L.groups):
                for r in range(L.rails):
                    leaf = f"leaf.g{g}.r{r}"
                    names += [("spine", leaf), (leaf, "spine")]
        return names

    def to_graph(self) -> nx.Graph:
        """The same cluster as a ``networkx`` graph (topologies.graph), as :func:`topologies.build` gives it."""
        a = self._args
        pcie_box = SERVERS[self.preset].nvlink_Bps is None
        G = cluster(self.preset, self.nodes, gpus=a["gpus_per_node"] if pcie_box else None, p2p=a["p2p"],
                    fabric=self.fabric, sockets=a["cpu_sockets"])
        if a["gpus_per_node"] is not None and not pcie_box:
            G = first_gpus(G, a["gpus_per_node"])
        if a["gdr"] is not None:
            G.graph["gdr"] = bool(a["gdr"])
        return transport_attributes(validate(G), a["socket_transport"], a["nvls"], a["collnet"])


def preset_cluster(topology: str, **kwargs) -> PresetCluster:
    """:class:`PresetCluster` of a preset name (InputError for anything else)."""
    if topology not in SERVERS:
        raise InputError(f"unknown topology preset; known: {', '.join(sorted(SERVERS))}",
                         field="topology", value=topology)
    return PresetCluster(topology, **kwargs)
