"""Multi-node clusters: servers joined by a two-tier fabric of leaf and spine switches.

Default: a rail-optimized fat tree. NIC k of every server connects to the leaf switch of rail k
(one leaf per rail for each group of ``hosts_per_leaf`` servers); leaves connect to a spine layer
(aggregated into one ``spine`` node) whose uplink capacity per leaf is
``hosts_per_leaf * nic_bw / oversubscription``. Traffic between GPUs of the same rail stays on its
leaf; cross-rail or cross-group traffic climbs to the spine.

``fabric="fat-tree"`` instead puts all NICs of a server on the same leaf (classic ToR design).

InfiniBand vs RoCE/Ethernet differ in switch and NIC latency (datasheets: NVIDIA Quantum-2
QM9700 port-to-port ~130 ns; Spectrum-4 Ethernet ~600 ns; ConnectX-7 RDMA adapter latency
taken as ~0.6 us (IB) and ~1.0 us (RoCE)); the model's per-hop protocol latency for the network
comes on top (cost-model parameters).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING

from simulator.core import limits
from simulator.core.errors import InputError
from simulator.core.units import parse_bandwidth
from topologies.graph import check_gpus_per_host
from topologies.presets import SERVERS, ServerSpec, server

if TYPE_CHECKING:
    import networkx as nx

TRANSPORTS = {
    "ib": {"switch_latency_s": 130e-9, "nic_latency_s": 0.6e-6},
    "roce": {"switch_latency_s": 600e-9, "nic_latency_s": 1.0e-6},
}


@dataclass(frozen=True)
class FabricSpec:
    """How servers are joined. ``nic_Bps``/``nics`` of None keep the server preset's values."""

    fabric: str = "rail"             # "rail" (rail-optimized) or "fat-tree"
    transport: str = "ib"            # "ib" or "roce"
    nic_Bps: float | None = None
    nics: int | None = None
    oversubscription: float = 1.0
    hosts_per_leaf: int = 32
    sharp: bool = False              # the switches reduce in the network (InfiniBand SHARP): CollNet possible

    @classmethod
    def from_options(cls, fabric: str = "rail", transport: str = "ib", nic_bw: str | None = None,
                     nics: int | None = None, oversubscription: float = 1.0, hosts_per_leaf: int = 32,
                     nic_bw_field: str = "nic_bw", sharp: bool = False) -> "FabricSpec":
        """The one place a fabric is made from user strings (CLI flags, study fields):
        ``nic_bw`` like "400 Gb/s" (None keeps the preset's); ``nic_bw_field`` names it in errors."""
        nic_Bps = parse_bandwidth(nic_bw, field=nic_bw_field, unit=True) if nic_bw is not None else None
        return cls(fabric=fabric, transport=transport, nic_Bps=nic_Bps, nics=nics,
                   oversubscription=oversubscription, hosts_per_leaf=hosts_per_leaf, sharp=sharp)

    def given(self) -> tuple[str, object] | None:
        """The first option that differs from its default, as (its field, as :meth:`from_options` names it, and
        its value), or None: the fabric of a topology file is the file's own, so an option given with one is
        refused rather than ignored."""
        for f in fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                return ("nic_bw", f"{value * 8 / 1e9:g} Gb/s") if f.name == "nic_Bps" else (f.name, value)
        return None

    def check(self) -> None:
        """Every field in its range (the API's ``nics="2"`` died in a TypeError before this)."""
        if self.nics is not None:
            limits.check_count(self.nics, field="nics", limit=limits.NICS)
        limits.check_count(self.hosts_per_leaf, field="hosts_per_leaf")
        limits.check_range(self.oversubscription, field="oversubscription", low=1.0,
                           high=limits.MAX_OVERSUBSCRIPTION)
        if self.fabric not in ("rail", "fat-tree"):
            raise InputError("fabric must be 'rail' or 'fat-tree'", field="fabric", value=self.fabric)
        if self.transport not in TRANSPORTS:
            raise InputError("transport must be 'ib' or 'roce'", field="transport", value=self.transport)
        if self.nic_Bps is not None and not self.nic_Bps > 0:
            raise InputError("must be positive", field="nic_bw", value=self.nic_Bps)
        if self.sharp and self.transport != "ib":
            raise InputError("SHARP (in-network reduction) is an InfiniBand switch feature; --transport roce "
                             "has none", field="sharp", value=self.transport)

def cluster_spec(preset: str, nodes: int, fabric: FabricSpec, sockets: int | None = None,
                 gpus: int | None = None) -> ServerSpec:
    """The server of ``preset`` as ``nodes`` of them joined by ``fabric`` use it (arguments checked;
    ``gpus``: the GPU count of a PCIe box, as :func:`cluster` takes it)."""
    if preset not in SERVERS:
        raise InputError(f"unknown topology preset; known: {', '.join(sorted(SERVERS))}",
                         field="topology", value=preset)
    limits.check_count(nodes, field="nodes")
    fabric.check()
    spec = SERVERS[preset]
    if gpus is not None:
        check_gpus_per_host(gpus, spec.gpus, preset, " (a bigger server: write a topology file)")
    limits.GPUS.check(nodes * (gpus or spec.gpus), field="nodes",
                      value=f"{nodes} servers x {gpus or spec.gpus} GPUs")
    if sockets is not None:
        spec = replace(spec, sockets=sockets)
    if fabric.nic_Bps is not None or fabric.nics is not None:
        spec = replace(spec, nic_Bps=fabric.nic_Bps or spec.nic_Bps, nics=fabric.nics or spec.nics)
    return spec


def cluster_attributes(nodes: int, fabric: FabricSpec) -> dict[str, object]:
    """Graph attributes a cluster adds to its servers' (topologies.graph)."""
    return dict(hosts=nodes, fabric=fabric.fabric if nodes > 1 else "none", transport=fabric.transport,
                oversubscription=fabric.oversubscription, sharp=fabric.sharp)


def cluster(preset: str, nodes: int = 1, *, gpus: int | None = None, p2p: bool | None = None,
            fabric: FabricSpec = FabricSpec(), sockets: int | None = None) -> nx.Graph:
    """``nodes`` servers of ``preset`` joined by ``fabric`` (a single server needs no fabric)."""
    import networkx as nx
    spec = cluster_spec(preset, nodes, fabric, sockets, gpus)
    G = nx.Graph()
    for h in range(nodes):
        server(spec, host=h, gpus=gpus, p2p=p2p, G=G)
    G.graph.update(cluster_attributes(nodes, fabric))
    if nodes > 1:
        _join(G, spec.nics, spec.nic_Bps, nodes, fabric)
    return G


@dataclass(frozen=True)
class Leaves:
    """The leaf and spine layer joining ``nodes`` servers: ``groups`` leaf groups of ``hosts_per_leaf``
    servers, ``rails`` leaves per group (NIC k of a server is on rail k, or all on rail 0 in a
    fat tree), one aggregated ``spine`` node when there is more than one leaf."""

    groups: int
    rails: int
    hosts_per_leaf: int
    spine: bool
    nic_link_Bps: float                  # NIC <-> leaf
    nic_link_latency_s: float
    uplink_Bps: tuple[float, ...]        # leaf <-> spine, per group
    uplink_latency_s: float

    @classmethod
    def of(cls, nics: int, nic_Bps: float, nodes: int, f: FabricSpec) -> "Leaves":
        lat = TRANSPORTS[f.transport]
        groups = -(-nodes // f.hosts_per_leaf)
        rails = nics if f.fabric == "rail" else 1
        hosts_in = [min(f.hosts_per_leaf, nodes - g * f.hosts_per_leaf) for g in range(groups)]
        uplinks = tuple(hosts_in[g] * nic_Bps * (nics if f.fabric == "fat-tree" else 1) / f.oversubscription
                        for g in range(groups))
        return cls(groups, rails, f.hosts_per_leaf, groups > 1 or rails > 1, nic_Bps,
                   lat["nic_latency_s"] + lat["switch_latency_s"], uplinks, lat["switch_latency_s"])

    def rail(self, nic_local: int) -> int:
        return nic_local if self.rails > 1 else 0

    def leaf(self, host: int, rail: int) -> str:
        return f"leaf.g{host // self.hosts_per_leaf}.r{rail}"


def _join(G: nx.Graph, nics: int, nic_Bps: float, nodes: int, f: FabricSpec) -> None:
    L = Leaves.of(nics, nic_Bps, nodes, f)
    if L.spine:
        G.add_node("spine", kind="spine", host=-1, local=-1)
    for g in range(L.groups):
        for r in range(L.rails):
            leaf = f"leaf.g{g}.r{r}"
            G.add_node(leaf, kind="leaf", host=-1, local=r)
            if L.spine:
                G.add_edge(leaf, "spine", kind="net", bw_Bps=L.uplink_Bps[g], latency_s=L.uplink_latency_s)
    for h in range(nodes):
        for k in range(nics):
            G.add_edge(f"h{h}.nic{k}", L.leaf(h, L.rail(k)), kind="net", bw_Bps=nic_Bps,
                       latency_s=L.nic_link_latency_s)
