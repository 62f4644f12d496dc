"""NCCL's own cost model (src/graph/tuning.cc, NCCL 2.2x), as a baseline and as the tuner.

NCCL picks an algorithm and protocol per call by minimising ``latency + bytes / bandwidth`` from a
table it builds at init. This module rebuilds that table from a topology, so that:

- ``auto`` in gpunetsim chooses what NCCL would run (``NcclModel.choose``), and the simulator then
  times that choice with its own model;
- docs/accuracy.md can report NCCL's own prediction as the baseline to beat.

Inputs NCCL gets from its topology search are estimated from the graph: intra-server bandwidth
per channel (``bwIntra``: the GPU's NVLink or PCIe bandwidth x 0.8, over 12 channels for NVLink
and 2 for PCIe, as NCCL 2.28 printed for 4 H200 GPUs: 12 channels of 30 GB/s), inter-server
bandwidth per channel (the server's NIC bandwidth over the channels), the hop type (NVLink or PCI)
and the compute capability. Constants are NCCL's; only the table layout is ours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from topologies.routing import Router

from simulator.collectives.algorithms import generation
from simulator.collectives.availability import why_unavailable
from simulator.collectives.nccl_constants import (BASE_LAT, BASE_LAT_NEWER, COLLNET_ARITY_LATENCY_US,
                                                   COLLNET_HOPPER_FACTOR, HW_LAT, HW_LAT_NEWER, LL_MAX_BW,
                                                   NVLS_EFFICIENCY, PAT_BW_FACTOR, PAT_LOG_LATENCY_DIVISOR,
                                                   PAT_RANK_LATENCY_US, PER_CH_MAX_RING_LL128,
                                                   PER_CH_MAX_TREE, PER_CH_MAX_TREE_LL128, SPEED_INTER, SPEED_INTRA,
                                                   TREE_CORRECTION, generation_index, nodes_index,
                                                   per_channel_nvls_tree_GBps)
from simulator.core.vocabulary import NCCL_CURRENT, PROTOS, NcclVersion

TUNED_OPS = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce")
TUNER_VERSION = NCCL_CURRENT
"""The NCCL whose tuner ``auto`` follows unless told (the newest the model knows). ``NcclModel(..., version=(2, 27))``
gives the NVLS and NVLS-Tree bandwidth entries of NCCL before 2.28 (no nvlsEfficiency: the graph's bandwidth
x 5/6), which is what picked the algorithms of the published NCCL 2.27.7 runs (tests/test_nvls.py)."""


@dataclass(frozen=True)
class CollnetGraphs:
    """NCCL's CollNet graphs: channels and per-channel bandwidths (GB/s) of the Direct and Chain searches."""

    direct: bool            # CollNet Direct enabled (NVSwitch, at most 8 GPUs per server)
    direct_channels: int    # one per head (NIC)
    direct_bw_intra_GBps: float
    chain_channels: int     # the ring's channels
    chain_bw_intra_GBps: float


def _carried(speeds: tuple[float, ...], nic_GBps: float) -> int:
    """Index in ``speeds`` (NCCL's speed list, fastest first) of the highest speed a NIC of ``nic_GBps``
    carries; the slowest when it carries none."""
    return next((k for k, v in enumerate(speeds) if v <= nic_GBps + 1e-9), len(speeds) - 1)


def _tree_speed(speeds: tuple[float, ...], nic_GBps: float, intra_fits) -> tuple[float, float]:
    """(bwInter, bwIntra) of a tree-like NCCL graph search (trees, CollNet): the highest network speed
    ``nic_GBps`` carries, then bwIntra raised along the speed list to at most twice bwInter while the
    server's links carry it (``intra_fits(speed)``; search.cc's second pass)."""
    i = _carried(speeds, nic_GBps)
    inter = intra = speeds[i]
    while i > 0 and speeds[i - 1] <= 2 * inter + 1e-9 and intra_fits(speeds[i - 1]):
        i -= 1
        intra = speeds[i]
    return inter, intra


@dataclass(frozen=True)
class NcclInputs:
    """What NCCL's topology search would report for a communicator."""

    ranks: int
    nodes: int
    intra_hw: str           # "nvlink" or "pcie"
    channels: int
    bw_intra_GBps: float    # per channel
    bw_inter_GBps: float    # per channel
    comp_cap: int           # e.g. 90
    nvls: bool = False      # NVLS enabled (hardware, NCCL_NVLS_ENABLE) for all_reduce
    nvls_channels: int = 0  # NVLS graph: channels (one per head GPU of the domain)
    nvls_bw_intra_GBps: float = 0.0
    nvls_bw_inter_GBps: float = 0.0
    nvls_ag_rs: bool = False   # NVLS enabled for all_gather / reduce_scatter too
    nvls_tree: bool = False    # NVLS-Tree enabled (NVLS across several domains)
    collnet: CollnetGraphs | None = None   # CollNet on (NCCL_COLLNET_ENABLE=1, SHARP switches), several servers
    pat: bool = False          # PAT enabled (one GPU per server, several servers)
    tree_bw_intra_GBps: float = 0.0   # the tree graph's bwIntra (0: the ring's); see :meth:`from_router`

    @classmethod
    def from_router(cls, router: Router) -> "NcclInputs":
        gpus = router.gpus
        hosts = {router.host_of(g) for g in gpus}
        nodes = len(hosts)
        first = gpus[0]
        # NCCL's search counts its own per-link figures, taken here as 0.8 of the datasheet: the links'
        # datasheet bandwidth, not the share of it our timing carries (topologies.presets.nvlink_usable)
        cap, kind = getattr(router, "datasheet_Bps", router.capacity_Bps), router.kind
        ports = [out for _, out, _ in router.neighbors(first)]
        nvlink = sum(float(cap[i]) for i in ports if kind[i] == "nvlink")
        pcie = max((float(cap[i]) for i in ports if kind[i] == "pcie"), default=0.0)
        if nvlink > 0 and len(gpus) // nodes > 1:
            hw, channels, total = "nvlink", 12, 0.8 * nvlink
        else:
            hw, channels, total = "pcie", 2, 0.8 * pcie
            if not router.info.p2p:
                total *= 0.5
        if router.info.socket_transport:
            hw, channels, total = "pcie", 2, min(total, 5e9)
        bw_intra = total / 1e9 / channels
        bw_inter = bw_intra
        if nodes > 1:
            nic = sum(float(cap[out]) for n in router.host_nodes(router.host_of(first), "nic")
                      for _, out, _ in router.neighbors(n) if kind[out] == "net")
            bw_inter = min(bw_intra, nic / 1e9 / channels)
        # The ring graph's search raises bwIntra and bwInter together (search.cc), so across servers the
        # ring's bwIntra is its network speed; the tree graph's second pass raises bwIntra alone, to at
        # most twice bwInter, while the server's links carry it. NCCL's tuner reads bwIntra on <= 2 servers
        # (tuning.cc), so on two servers a tree runs near twice the ring's busbw through the same NICs.
        ring_intra, tree_intra = bw_intra, bw_intra
        if nodes > 1:
            ring_intra = bw_inter
            tree_intra = min(bw_intra, 2 * bw_inter)
        cc = router.info.compute_capability
        nvls = why_unavailable(router, "all_reduce", "nvls") is None
        tree = why_unavailable(router, "all_reduce", "nvls_tree") is None
        heads = len(gpus) // nodes
        nv_intra = nv_inter = 0.0
        if nvls or tree:
            # NCCL's NVLS graph search: one channel per head GPU, at the highest per-channel speed the
            # GPU's NVLink (0.8 x datasheet, as for the ring) carries for all of them; across domains,
            # each head's NIC at the highest network speed it carries.
            speeds = SPEED_INTRA[generation(cc)]
            nv_intra = next((s for s in speeds if (heads + 1) * s <= 0.8 * nvlink / 1e9 + 1e-9), speeds[-1])
            nv_inter = math.inf         # one domain: nothing between domains limits it
            if tree:
                nic_GBps = nic / max(1, router.info.nics_per_host) / 1e9      # one head's NIC
                inter_speeds = SPEED_INTER[generation(cc)]
                nv_inter = inter_speeds[_carried(inter_speeds, nic_GBps)]
        collnet = None
        if why_unavailable(router, "all_reduce", "collnet_chain") is None:
            speeds = SPEED_INTER[generation(cc)]
            nics = max(1, router.info.nics_per_host)
            one_nic = nic / nics / 1e9
            gpu_GBps = (0.8 * nvlink if nvlink > 0 else 0.8 * pcie) / 1e9
            direct = why_unavailable(router, "all_reduce", "collnet_direct") is None
            d_ch = min(nics, heads)
            # Direct: a head's NVLink carries its own channels and 1/(ppn-1) of every other channel
            own = -(-d_ch // heads)
            d_load = own + (d_ch - own) / max(1, heads - 1)
            _, d_intra = _tree_speed(speeds, one_nic, lambda s: d_load * s <= gpu_GBps + 1e-9)
            # Chain: the ring's channels, over the NICs; each GPU's link carries every channel's chain
            c_per_nic = -(-channels // nics)
            _, c_intra = _tree_speed(speeds, one_nic / c_per_nic, lambda s: channels * s <= gpu_GBps + 1e-9)
            collnet = CollnetGraphs(direct, d_ch, d_intra, channels, c_intra)
        pat = why_unavailable(router, "all_gather", "pat") is None
        return cls(len(gpus), nodes, hw, channels, ring_intra, bw_inter, cc, nvls, heads if nvls or tree else 0,
                   nv_intra, nv_inter, nvls and why_unavailable(router, "all_gather", "nvls") is None, tree,
                   collnet, pat, tree_intra)


class NcclModel:
    """NCCL's latency (us) / bandwidth (GB/s) table and its per-call time estimate."""

    def __init__(self, inputs: NcclInputs, version: NcclVersion | tuple[int, int] = TUNER_VERSION) -> None:
        self.x = inputs
        self.version = version
        self.table: dict[tuple[str, str, str], tuple[float, float]] = {}
        self._priced_rows: dict[tuple, tuple] = {}      # choose's rows per (op, allowed): see _priced
        x = inputs
        n, N = x.ranks, x.nodes
        ppn = n / N
        cc = generation_index(x.comp_cap)
        i2 = nodes_index(N)
        i1 = cc if N == 1 else 0
        ll_max = LL_MAX_BW[i1][i2]
        for op in TUNED_OPS:
            nsteps = 2 * (n - 1) if op == "all_reduce" else n - 1 if op in ("reduce_scatter", "all_gather") else n
            for algo in ("tree", "ring"):
                if algo == "tree" and op != "all_reduce":
                    continue
                for p, proto in enumerate(PROTOS):
                    intra_bw = x.tree_bw_intra_GBps if algo == "tree" and x.tree_bw_intra_GBps else x.bw_intra_GBps
                    bw = intra_bw if N <= 2 else x.bw_inter_GBps
                    bus = x.channels * bw
                    if algo == "ring" and proto == "ll":
                        bus = min(ll_max, bus * 0.5)
                    if algo == "ring" and proto == "ll128":
                        bus = min(bus * 0.92, x.channels * PER_CH_MAX_RING_LL128[cc][i2])
                    if algo == "tree":
                        bus = min(bus * 0.92, x.channels * PER_CH_MAX_TREE[cc][i2])
                        if proto == "ll":
                            bus = min(bus / 3.8, ll_max)
                        if proto == "ll128":
                            bus = min(bus * (7.0 / 9.0 if N == 1 else 120.0 / 128.0),
                                      x.channels * PER_CH_MAX_TREE_LL128[cc][i2])
                    bus *= (n / nsteps) if algo == "ring" else 0.5
                    intra_hw = x.intra_hw
                    lat = BASE_LAT[algo][p]
                    intra = HW_LAT[intra_hw][algo][p]
                    inter = HW_LAT["net"]["tree" if ppn == 1 else algo][p]
                    if algo == "ring":
                        if op in ("broadcast", "reduce"):
                            lat += HW_LAT[intra_hw if N == 1 else "net"][algo][p]
                        else:
                            if N > 1:
                                intra = max(intra, 3.0 if proto == "simple" else 1.0)
                            n_inter = 0 if N == 1 else (2 * (N - 1) if op == "all_reduce" else N - 1)
                            lat += (nsteps - n_inter) * intra + n_inter * inter
                    else:
                        lat += 2 * ((n // N - 1) * intra + int(math.log2(N)) * inter)
                    self.table[(op, algo, proto)] = (lat, bus)
        if x.nvls and x.nvls_channels >= 2:
            self._add_nvls()
        if x.nvls_tree and x.nvls_channels >= 2:
            self._add_nvls_tree()
        if x.collnet is not None:
            self._add_collnet()
        if x.pat:
            self._add_pat()

    def _add_collnet(self) -> None:
        """NCCL's CollNet entries (all_reduce, Simple): bus bandwidth = channels x the CollNet graph's
        bwIntra; Direct divided by the GPU/NIC factor (ppn/channels, softened halfway to 1) and x 0.85
        from Hopper on; x 0.5 to algorithm bandwidth. Latency: Direct 2 (min(1, ppn-1) NVLink steps +
        0.4 us per extra GPU) + one network step, Chain 2 (ppn-1) in-server steps + one network step
        (the network step is Tree's when ppn = 1). (With CollNet on, NVLS also runs across servers:
        its entry is :meth:`_add_nvls`'s, with the network's latency and the head's network speed.)"""
        x, cg = self.x, self.x.collnet
        n, N = x.ranks, x.nodes
        ppn = n // N
        hw = "nvlink" if x.intra_hw == "nvlink" else "pcie"
        inter = {a: HW_LAT["net"]["tree"][2] if ppn == 1 else HW_LAT_NEWER["net"][a]
                 for a in ("collnet_direct", "collnet_chain")}
        if cg.direct:
            factor = ppn / cg.direct_channels
            factor -= (factor - 1) / 2
            bus = cg.direct_channels * cg.direct_bw_intra_GBps / factor
            if x.comp_cap >= 90:
                bus *= COLLNET_HOPPER_FACTOR
            lat = (2 * (min(1, ppn - 1) * HW_LAT_NEWER[hw]["collnet_direct"] + (ppn - 1) * COLLNET_ARITY_LATENCY_US)
                   + inter["collnet_direct"])
            self.table[("all_reduce", "collnet_direct", "simple")] = (lat, bus * 0.5)
        bus = cg.chain_channels * cg.chain_bw_intra_GBps
        lat = 2 * (ppn - 1) * HW_LAT_NEWER[hw]["collnet_chain"] + inter["collnet_chain"]
        self.table[("all_reduce", "collnet_chain", "simple")] = (lat, bus * 0.5)

    def _add_pat(self) -> None:
        """NCCL's PAT entries (all_gather, reduce_scatter; Simple; one GPU per server): bus bandwidth =
        the ring graph's channels x bandwidth x 0.75, not converted to algorithm bandwidth; latency
        8 + log2(nodes) x (Tree's network latency / 3.5) + ranks x 2.8 us."""
        x = self.x
        bw = x.bw_intra_GBps if x.nodes <= 2 else x.bw_inter_GBps
        lat = (BASE_LAT_NEWER["pat"] + int(math.log2(x.nodes)) * HW_LAT["net"]["tree"][2] / PAT_LOG_LATENCY_DIVISOR
               + x.ranks * PAT_RANK_LATENCY_US)
        for op in ("all_gather", "reduce_scatter"):
            self.table[(op, "pat", "simple")] = (lat, x.channels * bw * PAT_BW_FACTOR)

    def _add_nvls_tree(self) -> None:
        """NCCL's NVLS-Tree entry (all_reduce): per channel min(NVLS's intra-domain bandwidth, the head's
        network bandwidth (doubled on 2 domains), perChMaxNVLSTreeBw); latency NVLS's NVLink step plus
        2 log2(N) network steps."""
        x = self.x
        n, N, c = x.ranks, x.nodes, x.nvls_channels
        gen = generation(x.comp_cap)
        if self.version < (2, 28):     # min(bwIntra, bwInter (halved beyond 2 domains)) x 5/6
            bus = c * min(x.nvls_bw_intra_GBps, x.nvls_bw_inter_GBps / (1.0 if N <= 2 else 2.0)) * 5 / 6
        else:
            intra = x.nvls_bw_intra_GBps * NVLS_EFFICIENCY.get(gen, 0.0) * (c - 1) / c * 2.0
            inter = x.nvls_bw_inter_GBps * (2.0 if N <= 2 else 1.0)
            cap = per_channel_nvls_tree_GBps(x.comp_cap, N)
            bus = c * min(intra, inter, cap) * n / (2 * (n - 1))
        lat = HW_LAT_NEWER["nvlink"]["nvls_tree"] + 2 * int(math.log2(N)) * HW_LAT_NEWER["net"]["nvls_tree"]
        self.table[("all_reduce", "nvls_tree", "simple")] = (lat, bus)

    def _add_nvls(self) -> None:
        """NCCL's NVLS entries (tuning.cc): bus bandwidth per channel = the NVLS graph's intra-domain
        bandwidth x nvlsEfficiency x (c-1)/c, doubled for all_reduce (two pipelined halves), x (ppn-1)/ppn
        for all_gather / reduce_scatter; latency = NVLS's NVLink latency (+ the network's across domains)."""
        x = self.x
        n, N, c = x.ranks, x.nodes, x.nvls_channels
        eff = NVLS_EFFICIENCY.get(generation(x.comp_cap), 0.0)
        ppn = n / N
        for op in ("all_reduce", "reduce_scatter", "all_gather"):
            if op != "all_reduce" and not x.nvls_ag_rs:
                continue
            if self.version < (2, 28):     # before 2.28: the graph's bandwidth, x 5/6 for all_reduce
                if op == "all_reduce":
                    bus = c * min(x.nvls_bw_intra_GBps, x.nvls_bw_inter_GBps) * 5 / 6
                else:
                    bus = c * min(x.nvls_bw_intra_GBps * (ppn - 1) / ppn, x.nvls_bw_inter_GBps * 0.9)
                self.table[(op, "nvls", "simple")] = (HW_LAT_NEWER["nvlink"]["nvls"] + (
                    HW_LAT_NEWER["net"]["nvls"] if N > 1 else 0.0), bus)
                continue
            intra = x.nvls_bw_intra_GBps * eff * (c - 1) / c * (2.0 if op == "all_reduce" else (ppn - 1) / ppn)
            bus = c * min(intra, x.nvls_bw_inter_GBps)
            if op == "all_reduce":
                bus *= n / (2 * (n - 1))
            lat = HW_LAT_NEWER["nvlink"]["nvls"] + (HW_LAT_NEWER["net"]["nvls"] if N > 1 else 0.0)
            self.table[(op, "nvls", "simple")] = (lat, bus)

    def time_s(self, op: str, size_bytes: float, algo: str, proto: str) -> float:
        """NCCL's estimate (ncclTopoGetAlgoTime) for one call, seconds; inf when not available."""
        log_size = int(math.log2(size_bytes // 64)) if size_bytes >= 64 else -1
        return self._time_s(op, size_bytes, algo, proto, log_size)

    def _time_s(self, op: str, size_bytes: float, algo: str, proto: str, log_size: int) -> float:
        rows = self._priced(op, ((algo, proto),))
        return self._row_time_s(rows[0], size_bytes, log_size) if rows else math.inf

    def _row_time_s(self, row: tuple, size_bytes: float, log_size: int) -> float:
        """NCCL's predicted time of one :meth:`_priced` row: latency plus bytes over the bus bandwidth, the tree
        all_reduce's bandwidth corrected per size and the multi-node ring/Simple all_reduce's latency raised."""
        _, lat, bw, tree, ring_lat = row
        if tree is not None and 0 <= log_size < 23:
            bw *= tree[log_size]
        if ring_lat and size_bytes / self._ring_ranks >= 64:
            lat *= ring_lat
        return (lat + size_bytes / (1000.0 * bw)) * 1e-6

    def choose(self, op: str, size_bytes: float, allowed: tuple[tuple[str, str], ...] | None = None) -> tuple[str, str]:
        """The (algorithm, protocol) NCCL's tuner picks among the ``allowed`` pairs (default: every entry
        of its table for ``op``, i.e. every algorithm the topology enables)."""
        if allowed is None:
            allowed = tuple((a, p) for (o, a, p) in self.table if o == op) or (("ring", "simple"),)
        log_size = int(math.log2(size_bytes // 64)) if size_bytes >= 64 else -1
        best, choice = math.inf, allowed[0]
        row_time_s = self._row_time_s
        for row in self._priced(op, allowed):       # the pairs the table prices; the others cost inf, never chosen
            t = row_time_s(row, size_bytes, log_size)
            if t < best:
                best, choice = t, row[0]
        return choice

    @property
    def _ring_ranks(self) -> int:
        return self.x.channels * self.x.ranks

    def _priced(self, op: str, allowed: tuple[tuple[str, str], ...]) -> tuple:
        """Per pair of ``allowed`` that the table prices (the others cost inf, never chosen): (pair, latency us,
        bus bandwidth GB/s, the tree all_reduce's correction row or None, the multi-node ring/Simple all_reduce's
        latency factor or 0), the terms :meth:`_row_time_s` prices. Read once per (op, allowed) from the table,
        which is complete when ``__init__`` returns (the closed form asks per prediction)."""
        key = (op, tuple(allowed))
        rows = self._priced_rows.get(key)
        if rows is None:
            out = []
            for a, p in key[1]:
                entry = self.table.get((op, a, p))
                if entry is None or entry[1] <= 0:
                    continue
                tree = TREE_CORRECTION[PROTOS.index(p)] if a == "tree" and op == "all_reduce" else None
                ring = ((1.4 if self.x.comp_cap >= 80 else 1.9)
                        if a == "ring" and p == "simple" and self.x.nodes > 1 and op == "all_reduce" else 0.0)
                out.append(((a, p), entry[0], entry[1], tree, ring))
            rows = self._priced_rows[key] = tuple(out)
        return rows
