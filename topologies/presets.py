"""Named server presets. Pure functions returning ``nx.Graph`` (attributes in topologies.graph).

Datasheet sources (per direction unless noted):
- DGX H100 / HGX H100 / HGX H200: NVIDIA DGX H100 user guide and H100/H200 SXM datasheets:
  18 fourth-generation NVLinks per GPU, 900 GB/s bidirectional = 450 GB/s per direction,
  through 4 third-generation NVSwitch chips; PCIe Gen5 x16 per GPU (64 GB/s per direction raw,
  63 GB/s after 128b/130b coding); 8 ConnectX-7 400 Gb/s InfiniBand NDR NICs (one per GPU);
  2 Xeon Platinum 8480C sockets.
- HGX/DGX B200: DGX B200 datasheet: fifth-generation NVLink, 1.8 TB/s bidirectional per GPU
  (900 GB/s per direction) through 2 NVSwitch chips; 8 ConnectX-7 400 Gb/s NICs.
- GB200 NVL72: NVIDIA GB200 NVL72 datasheet and DGX GB200 user guide: 72 B200 GPUs in one
  NVLink domain (NVLink 5, 900 GB/s per direction per GPU) across 18 compute trays of 4 GPUs and
  2 Grace CPUs (NVLink-C2C, taken as 450 GB/s per direction per GPU in place of PCIe), joined by 9
  NVLink switch trays (one ``nvswitch`` node here); one ConnectX-7 400 Gb/s NIC per GPU. The whole
  rack is one server for routing and for NCCL (multi-node NVLink: NCCL treats the NVLink domain as
  one node); an NVL partition is ``--gpus K --nodes 72/K`` (e.g. NVL36x2: ``--gpus 36 --nodes 2``).
- DGX A100: DGX A100 user guide / A100 SXM datasheet: 12 third-generation NVLinks per GPU,
  600 GB/s bidirectional = 300 GB/s per direction, 6 NVSwitch chips; PCIe Gen4 x16 (31.5 GB/s);
  8 ConnectX-6 200 Gb/s HDR NICs; 2 AMD EPYC 7742.
- PCIe boxes: PCI-SIG base specifications: Gen3 x16 15.75 GB/s, Gen4 x16 31.5 GB/s,
  Gen5 x16 63 GB/s per direction; two GPUs per PCIe switch, switches split over the sockets;
  inter-socket link (UPI / xGMI) taken as 41.6 GB/s per direction (2 UPI 2.0 links at 20.8 GB/s).

The NVSwitch chips of one server are aggregated into one ``nvswitch`` node: a flow-level model
only needs each GPU's total NVLink bandwidth to the switch plane.
Intra-server link latencies are 0 by default: NCCL's per-hop protocol latencies (the cost-model
parameters) already contain them; multi-node wire and switch latencies live in topologies.fabric.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from simulator.core.errors import InputError

if TYPE_CHECKING:
    import networkx as nx

    from topologies.smallgraph import SmallGraph

GB = 1e9

NCCL_NVLINK_PER_LINK = {70: (20.0, 25.0), 80: (20.0, 25.0), 90: (20.6, 25.0), 100: (40.1, 50.0)}
"""Per GPU generation (compute capability): (NCCL's bandwidth of one NVLink, GB/s: src/graph/topo.h
``SM70/SM80/SM90/SM100_NVLINK_BW``, what its topology search and tuner count per link; the datasheet's
rate of one link per direction, GB/s: NVLink 2/3/4 25, NVLink 5 50)."""
NCCL_OWN_NVLINK_FIGURE = (86,)
"""Compute capabilities NCCL gives a per-link figure of their own outside :data:`NCCL_NVLINK_PER_LINK`
(``SM86_NVLINK_BW``): unknown generations here, never the previous generation's share."""
NVLINK_REFERENCE_CC = 90
"""The generation ``link_efficiency.nvlink`` stands for: Hopper, on which its datasheet value and every
shipped fit of it were measured (H100/H200 servers)."""


def nvlink_usable(compute_capability: int) -> float:
    """Share of its datasheet rate one NVLink of this generation carries, relative to Hopper's: NCCL's
    per-link figure over the datasheet's (0.800 NVLink3, 0.824 NVLink4, 0.802 NVLink5) divided by Hopper's.
    NCCL's own tables say an A100 or B200 link carries 2.9% / 2.7% less of its datasheet rate than an H100
    link; one ``link_efficiency.nvlink`` for every generation would miss that (the public corpus: rings
    from 1 GiB at 0.78 of NVLink3, 0.81 of NVLink4, 0.75 of NVLink5: docs/accuracy.md section 1b). Unknown
    generations (no NVLink table entry): 1, and so is SM86, which NCCL's ``ncclTopoNVLinkBw`` gives its own
    12.0 GB/s (``SM86_NVLINK_BW``, not SM80's) while its datasheet rate per link differs by product, and SM60
    (``SM60_NVLINK_BW`` 18.0, not in the table). NCCL's NVLS graph search also draws on these per-link figures
    (the GPU-NVSwitch links are ``count x ncclTopoNVLinkBw``, src/graph/topo.cc; ``ncclTopoSearchTryNvls``), so
    the share applies to NVLS paths as to rings."""
    ref_nccl, ref_sheet = NCCL_NVLINK_PER_LINK[NVLINK_REFERENCE_CC]
    cc = max((c for c in NCCL_NVLINK_PER_LINK if c <= compute_capability), default=None)
    if cc is None or compute_capability in NCCL_OWN_NVLINK_FIGURE:
        return 1.0
    nccl, sheet = NCCL_NVLINK_PER_LINK[cc]
    return (nccl / sheet) / (ref_nccl / ref_sheet)


@dataclass(frozen=True)
class ServerSpec:
    """Datasheet description of one server model."""

    name: str
    gpu_model: str
    gpus: int
    compute_capability: int
    nvlink_Bps: float | None        # per GPU, per direction, into the NVSwitch plane; None = no NVLink
    pcie_Bps: float                 # GPU <-> PCIe switch, per direction
    nic_Bps: float                  # per NIC, per direction
    nics: int
    sockets: int
    gpus_per_switch: int
    socket_Bps: float = 41.6 * GB
    p2p: bool = True
    datasheet: str = ""


SERVERS: dict[str, ServerSpec] = {
    "dgx-h100": ServerSpec("dgx-h100", "H100 SXM", 8, 90, 450 * GB, 63 * GB, 50 * GB, 8, 2, 1,
                           datasheet="NVIDIA DGX H100 user guide; H100 SXM5 datasheet (NVLink 4, 900 GB/s bidir)"),
    "hgx-h200": ServerSpec("hgx-h200", "H200 SXM", 8, 90, 450 * GB, 63 * GB, 50 * GB, 8, 2, 1,
                           datasheet="NVIDIA HGX H200 / H200 SXM datasheet (NVLink 4, 900 GB/s bidir)"),
    "hgx-b200": ServerSpec("hgx-b200", "B200 SXM", 8, 100, 900 * GB, 63 * GB, 50 * GB, 8, 2, 1,
                           datasheet="NVIDIA HGX B200 / DGX B200 datasheet (NVLink 5, 1.8 TB/s bidir); "
                                     "8x ConnectX-7 400 Gb/s"),
    "gb200-nvl72": ServerSpec("gb200-nvl72", "B200 (GB200)", 72, 100, 900 * GB, 450 * GB, 50 * GB, 72, 36, 2,
                              datasheet="NVIDIA GB200 NVL72 datasheet: 72 Blackwell GPUs in one NVLink domain "
                                        "(fifth-generation NVLink, 1.8 TB/s bidir per GPU, 130 TB/s in all) through "
                                        "9 NVLink switch trays; 18 compute trays of 2 GB200 superchips (1 Grace + 2 "
                                        "B200, NVLink-C2C 900 GB/s bidir); 4x ConnectX-7 400 Gb/s per tray (one per "
                                        "GPU)"),
    "dgx-a100": ServerSpec("dgx-a100", "A100 SXM", 8, 80, 300 * GB, 31.5 * GB, 25 * GB, 8, 2, 1,
                           datasheet="NVIDIA DGX A100 user guide; A100 SXM datasheet (NVLink 3, 600 GB/s bidir)"),
    "pcie-gen3": ServerSpec("pcie-gen3", "PCIe GPU", 8, 75, None, 15.75 * GB, 12.5 * GB, 1, 2, 2,
                            datasheet="PCI-SIG PCIe 3.0 x16; 100 Gb/s NIC"),
    "pcie-gen4": ServerSpec("pcie-gen4", "PCIe GPU", 8, 89, None, 31.5 * GB, 25 * GB, 2, 2, 2,
                            datasheet="PCI-SIG PCIe 4.0 x16; 2x 200 Gb/s NICs"),
    "pcie-gen5": ServerSpec("pcie-gen5", "PCIe GPU", 8, 89, None, 63 * GB, 50 * GB, 2, 2, 2,
                            datasheet="PCI-SIG PCIe 5.0 x16; 2x 400 Gb/s NICs"),
}


def preset_names() -> list[str]:
    return sorted(SERVERS)


def server(spec: ServerSpec | str, *, host: int = 0, gpus: int | None = None,
           p2p: bool | None = None, G: nx.Graph | SmallGraph | None = None) -> nx.Graph | SmallGraph:
    """One server as a graph (added to ``G`` if given), node names prefixed ``h{host}.``.

    ``gpus`` overrides the GPU count for PCIe boxes; ``p2p`` overrides peer-to-peer. ``G`` may be a
    :class:`~topologies.smallgraph.SmallGraph` (preset clusters describe one server that way).
    """
    if isinstance(spec, str):
        if spec not in SERVERS:
            raise InputError(f"unknown topology preset; known: {', '.join(preset_names())}",
                             field="topology", value=spec)
        spec = SERVERS[spec]
    n_gpus = spec.gpus if gpus is None else gpus
    if n_gpus < 1:
        raise InputError("a server needs at least one GPU", field="gpus", value=n_gpus)
    if G is None:
        import networkx as nx
        G = nx.Graph()
    p = f"h{host}."
    n_switch = -(-n_gpus // spec.gpus_per_switch)
    for s in range(spec.sockets):
        G.add_node(p + f"cpu{s}", kind="cpu", host=host, local=s)
    for s in range(1, spec.sockets):
        G.add_edge(p + "cpu0", p + f"cpu{s}", kind="socket", bw_Bps=spec.socket_Bps, latency_s=0.0)
    for w in range(n_switch):
        sw = p + f"pcie{w}"
        G.add_node(sw, kind="pcie_switch", host=host, local=w)
        G.add_edge(sw, p + f"cpu{w * spec.sockets // n_switch}", kind="pcie", bw_Bps=spec.pcie_Bps, latency_s=0.0)
    if spec.nvlink_Bps:
        G.add_node(p + "nvswitch", kind="nvswitch", host=host, local=-1)
    for i in range(n_gpus):
        g = p + f"gpu{i}"
        G.add_node(g, kind="gpu", host=host, local=i)
        G.add_edge(g, p + f"pcie{i // spec.gpus_per_switch}", kind="pcie", bw_Bps=spec.pcie_Bps, latency_s=0.0)
        if spec.nvlink_Bps:
            G.add_edge(g, p + "nvswitch", kind="nvlink", bw_Bps=spec.nvlink_Bps, latency_s=0.0,
                       usable=nvlink_usable(spec.compute_capability))
    for k in range(spec.nics):
        nic = p + f"nic{k}"
        G.add_node(nic, kind="nic", host=host, local=k)
        gpu_of_nic = k * n_gpus // spec.nics
        G.add_edge(nic, p + f"pcie{gpu_of_nic // spec.gpus_per_switch}", kind="pcie",
                   bw_Bps=spec.pcie_Bps, latency_s=0.0)
    G.graph.update(name=spec.name, gpu_model=spec.gpu_model, gpus_per_host=n_gpus,
                   compute_capability=spec.compute_capability,
                   p2p=spec.p2p if p2p is None else p2p, nic_Bps=spec.nic_Bps, nics_per_host=spec.nics,
                   datasheets=spec.datasheet)
    return G
