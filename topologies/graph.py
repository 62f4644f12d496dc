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
    usable      optional share of ``bw_Bps`` the link's generation carries relative to the one its class's
                efficiency (``link_efficiency.*``) stands for (NVLink by GPU generation: topologies.presets.
                nvlink_usable); default 1. Routers carry ``bw_Bps x usable`` as the link's capacity.
    latency_s   one-way latency of the link, seconds

Graph attributes (``G.graph``), every one that a builder sets; read them through
:func:`cluster_info` (a frozen :class:`ClusterInfo`), never with ``G.graph.get`` elsewhere:
    name                str, the preset or file name
    gpu_model           str, e.g. "H100 SXM" (the GPU catalog's key is derived from it)
    hosts               int, servers holding GPUs
    gpus_per_host       int, GPUs per server (the largest server's count)
    nics_per_host       int, NICs per server (presets; counted from the nodes when absent)
    nic_Bps             float, bandwidth of one NIC (presets)
    p2p                 bool, GPU peer-to-peer allowed (False: through host memory, NCCL_P2P_DISABLE=1)
    socket_transport    bool, NCCL's TCP socket transport for every hop (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1)
    gdr                 bool, GPUDirect RDMA between a server's GPUs and its NICs (default true). False: NCCL
                        stages every network byte through host memory (a GPU and its NIC further apart than
                        NCCL_NET_GDR_LEVEL, PXB by default: e.g. on different PCIe root ports or sockets, as
                        ``nvidia-smi topo -m`` shows NODE or SYS between them; or NCCL_NET_GDR_LEVEL=LOC)
    fabric              str, "rail", "fat-tree" or "none" (one server)
    transport           str, "ib" or "roce"
    oversubscription    float, leaf down/up bandwidth ratio
    compute_capability  int, e.g. 90
    datasheets          str, where the numbers come from
    nvls                bool, NVLink SHARP allowed (default: where the hardware has it, see ``nvls_capable``;
                        False = NCCL_NVLS_ENABLE=0)
    sharp               bool, the fabric's InfiniBand switches reduce in the network (SHARP, with NCCL's SHARP
                        plugin set up; default false; topology files: ``sharp: true``; presets: ``--sharp``)
    collnet             bool, NCCL's CollNet on (NCCL_COLLNET_ENABLE=1; default: ``sharp``; see ``set_collnet``)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from simulator.core import limits
from simulator.core.errors import InputError

if TYPE_CHECKING:
    import networkx as nx

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
    import networkx as nx
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
    check_gpus_per_host(count, per_host, G.graph.get("name", "this topology"))
    if count == per_host:
        return G
    drop = [n for n in gpus(G) if G.nodes[n].get("local", 0) >= count]
    H = G.copy()
    H.remove_nodes_from(drop)
    H.graph = dict(G.graph, gpus_per_host=count)
    return H


def check_gpus_per_host(count: int, per_host: int, name: str, hint: str = "") -> None:
    """``--gpus count`` must pick between 1 and all ``per_host`` GPUs of each server, a whole number (the Python
    API's ``gpus="4"`` died in a TypeError, ``gpus=4.0`` ran); ``hint`` follows the range's message."""
    limits.check_count(count, field="gpus", high=per_host, words=f"must be between 1 and {per_host} for {name}{hint}")


@dataclass(frozen=True)
class ClusterInfo:
    """The graph attributes, read once (see the module docstring for each field)."""

    name: str
    gpu_model: str
    hosts: int
    gpus_per_host: int
    nics_per_host: int
    nic_Bps: float | None
    p2p: bool
    socket_transport: bool
    fabric: str
    transport: str
    oversubscription: float
    compute_capability: int
    datasheets: str
    nvswitch: bool = False          # an NVSwitch plane joins the GPUs of a server
    nvls: bool = False              # NVLS usable: capable hardware, allowed, GPU traffic not through the host
    collnet: bool = False           # CollNet on: SHARP switches and NCCL_COLLNET_ENABLE=1
    sharp: bool = False             # the fabric's switches can reduce (SHARP)
    gdr: bool = True                # GPUDirect RDMA: NICs read and write GPU memory (False: staged through the host)


def cluster_info(G: nx.Graph) -> ClusterInfo:
    """The :class:`ClusterInfo` of ``G``; defaults for attributes a hand-written graph leaves out."""
    gpus_on: dict[int, int] = {}
    for n in gpus(G):
        h = G.nodes[n].get("host", 0)
        gpus_on[h] = gpus_on.get(h, 0) + 1
    nics: dict[int, int] = {}
    for n, d in G.nodes(data=True):
        if d.get("kind") == "nic":
            nics[d.get("host", 0)] = nics.get(d.get("host", 0), 0) + 1
    return info_from_attributes(G.graph, len(gpus_on), max(gpus_on.values(), default=0),
                                max(nics.values(), default=0), _has_nvswitch(G))


def info_from_attributes(a: Mapping[str, Any], hosts: int, gpus_per_host: int, nics_per_host: int,
                         nvswitch: bool) -> ClusterInfo:
    """The :class:`ClusterInfo` of graph attributes ``a``; the counts stand in for absent attributes."""
    return ClusterInfo(
        name=str(a.get("name", "topology")), gpu_model=str(a.get("gpu_model", "GPU")),
        hosts=hosts, gpus_per_host=int(a.get("gpus_per_host", gpus_per_host)),
        nics_per_host=int(a.get("nics_per_host", nics_per_host)),
        nic_Bps=a.get("nic_Bps"), p2p=bool(a.get("p2p", True)),
        socket_transport=bool(a.get("socket_transport", False)),
        fabric=str(a.get("fabric", "none")), transport=str(a.get("transport", "ib")),
        oversubscription=float(a.get("oversubscription", 1.0)),
        compute_capability=int(a.get("compute_capability", 90)), datasheets=str(a.get("datasheets", "")),
        nvswitch=nvswitch, nvls=_nvls_enabled(a, nvswitch), collnet=bool(a.get("collnet", a.get("sharp", False))),
        sharp=bool(a.get("sharp", False)), gdr=bool(a.get("gdr", True)))


def _has_nvswitch(G: nx.Graph) -> bool:
    return any(d.get("kind") == "nvswitch" for _, d in G.nodes(data=True))


def nvls_capable(G: nx.Graph) -> bool:
    """NVLink SHARP needs NVSwitch gen3+ with multicast: an NVSwitch plane and compute capability 9.0+
    (H100, H200, B200, GB200)."""
    return _nvls_capable(G.graph, _has_nvswitch(G))


def _nvls_capable(a: Mapping[str, Any], nvswitch: bool) -> bool:
    return int(a.get("compute_capability", 0)) >= 90 and nvswitch


def nvls_enabled(G: nx.Graph) -> bool:
    """NVLS available to NCCL: capable hardware, not turned off (``nvls`` false), and GPU traffic not
    forced through host memory or sockets (peer-to-peer off)."""
    return _nvls_enabled(G.graph, _has_nvswitch(G))


def _nvls_enabled(a: Mapping[str, Any], nvswitch: bool) -> bool:
    return (bool(a.get("nvls", True)) and bool(a.get("p2p", True)) and not a.get("socket_transport", False)
            and _nvls_capable(a, nvswitch))


def nvls_attribute(a: Mapping[str, Any], nvswitch: bool, on: bool | None, source: str | None = None) -> bool:
    """The ``nvls`` graph attribute for a request ``on`` (see :func:`set_nvls`)."""
    if on and not _nvls_capable(a, nvswitch):
        lacks = f"compute capability {a.get('compute_capability')}" if nvswitch else "no NVSwitch"
        raise InputError(f"NVLS needs an NVSwitch plane (gen3+) and compute capability 9.0+; "
                         f"{a.get('name', 'this topology')} has {lacks}", source=source, field="nvls", value="on")
    return _nvls_capable(a, nvswitch) if on is None else bool(on)


def set_nvls(G: nx.Graph, on: bool | None, source: str | None = None) -> nx.Graph:
    """``on``: None keeps NCCL's default (on where capable), False is NCCL_NVLS_ENABLE=0, True asks for it
    (an InputError where the hardware cannot)."""
    G.graph["nvls"] = nvls_attribute(G.graph, _has_nvswitch(G), on, source)
    return G


def collnet_attribute(a: Mapping[str, Any], on: bool | None, source: str | None = None) -> bool:
    """The ``collnet`` graph attribute for a request ``on``: None = the fabric's default (on where its
    switches reduce, ``sharp``), False = NCCL_COLLNET_ENABLE=0, True = NCCL_COLLNET_ENABLE=1 (an
    InputError where the fabric's switches cannot reduce)."""
    sharp = bool(a.get("sharp", False))
    if on and not sharp:
        raise InputError("CollNet needs switches that reduce in the network (SHARP): say so with --sharp "
                         "(presets, InfiniBand) or 'sharp: true' in a topology file", source=source,
                         field="collnet", value="on")
    return sharp if on is None else bool(on)


def set_collnet(G: nx.Graph, on: bool | None, source: str | None = None) -> nx.Graph:
    """Sets ``collnet`` (see :func:`collnet_attribute`)."""
    G.graph["collnet"] = collnet_attribute(G.graph, on, source)
    return G


def transport_attributes(G: nx.Graph, socket_transport: bool, nvls: bool | None,
                         collnet: bool | None = None) -> nx.Graph:
    """Sets ``socket_transport`` (and peer-to-peer off) if asked, ``nvls`` (see :func:`set_nvls`) and
    ``collnet`` (see :func:`set_collnet`) unless the graph has them and nothing is asked."""
    if socket_transport:
        G.graph.update(socket_transport=True, p2p=False)
    if nvls is not None or "nvls" not in G.graph:
        set_nvls(G, nvls)
    if collnet is not None or "collnet" not in G.graph:
        set_collnet(G, collnet)
    return G
