"""Collective schedules: plain, immutable data built from a topology, executed elsewhere.

A :class:`Plan` says, for one collective (op, algorithm, protocol, ranks), which flows run and how
many bytes each carries *per byte of the collective's size*. Both the discrete-event executor
(simulator.network.engine, which scales it to one size) and the closed form (simulator.network.closed_form)
consume the same plan, so they can check each other.

NCCL's algorithms, in flow terms (n ranks, N servers, C channels, S = nccl-tests size):

- ring: a pipelined ring; every rank sends to its successor. NCCL's pipeline moves at the pace of
  the slowest hop, so all hops of one channel form a *coupled group* (one common rate). Data per
  hop: all_reduce 2(n-1)/n*S, reduce_scatter/all_gather (n-1)/n*S, broadcast/reduce S (a chain of
  n-1 hops). Across servers, channel c enters each server at GPU c and leaves from GPU c-1 through
  NIC c (rail-aligned, NCCL's PXN), so channels spread over the NICs.
- tree (all_reduce only): NCCL's double binary tree over servers, a chain inside each server;
  reduce up and broadcast down are pipelined, so both directions of both trees run at once. Each
  of the 2 trees of each channel carries S/(2C).
- direct: all_to_all sends S/n from every rank to every other rank at once; send_recv sends S
  from each rank to the next (nccl-tests' sendrecv pattern). Each peer's bytes are spread over
  NCCL's p2p channels (simulator.collectives.p2p), whose count depends on the size and shrinks as
  ranks grow; a flow between GPUs of one server moves at most ``channels x p2p_channel_Bps``,
  rounded off against the flow's share of its NVLink port (``Plan.rate_caps``,
  simulator.collectives.p2p.port_limited_Bps), so a direct plan's rate depends on the size it is run at.

Channels whose flows follow exactly the same links are merged into one group (a ring inside one
server has a single channel): this keeps a 4096-GPU all-reduce to a handful of groups.
Wire bytes include the protocol's overhead (payload / efficiency).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Sequence

from simulator.core.arrays import use_arrays
from simulator.core.errors import InputError
from simulator.core.vocabulary import PROTOS, busbw_factor
from simulator.collectives.algorithms import ALGOS_FOR_OP, SIMPLE_ONLY, NvlsChunks, check_known
from simulator.collectives.alignment import slowed, unaligned_share
from simulator.collectives.availability import why_unavailable
from simulator.collectives.layout import (Chunking, Layout, LayoutGroup, binary_tree, both_ways, chain_hops, channel_offset,
                                          channels, RingLoops,
                                          gpu_grid, hosts, layout_group, layout_group_ids, merge, rotated,
                                          successors, tree_edges)
from simulator.collectives.innet import collnet_chain_layout, collnet_direct_layout, nvls_sharp_layout, pat_layout
from simulator.collectives.nvls import nvls_layout, nvls_tree_layout
from simulator.collectives.p2p import P2pChannels, p2p_channels, port_limited_Bps
from simulator.collectives.nccl_constants import RING_CHANNEL_COPIES, ring_loop_bytes
from simulator.collectives.params import Parameters
from topologies.route_table import RouteTable, join_routes
from topologies.routes import LinkUses
from topologies.routing import Router

if TYPE_CHECKING:
    from topologies.route_table import Routes

__all__ = ["ALGOS_FOR_OP", "FlowGroup", "Plan", "build_plan", "layout"]

LOOPED_RING_OPS = ("all_reduce", "all_gather", "reduce_scatter")
"""Ring ops whose Simple loop is channels x ranks x chunk (nccl_constants.ring_loop_bytes); broadcast and reduce
loop over channels x chunk and pay no per-loop flush here."""

NEWER_LAYOUTS = {"nvls": nvls_layout, "nvls_tree": nvls_tree_layout, "collnet_direct": collnet_direct_layout,
                 "collnet_chain": collnet_chain_layout, "pat": pat_layout}
"""Layout builders of the algorithms newer than ring and tree (simulator.collectives.nvls, .innet)."""


@dataclass(frozen=True)
class FlowGroup:
    """Flows that move at one common rate (a pipeline); each flow carries ``bytes_per_byte * S``."""

    routes: Routes                   # tuples of link ids, or a table of them (topologies.route_table)
    bytes_per_byte: float
    label: str = ""
    efficiency: float = 1.0          # payload / wire bytes (protocol, host-memory copies)
    rate_cap_Bps: float = math.inf   # wire-rate ceiling of each flow of the group
    weights: tuple[float, ...] | None = None   # flows each route stands for (PAT's steps; default 1)
    channel_Bps: float = math.inf    # wire rate of one p2p channel of each flow (direct plans on one server)
    port_Bps: float = math.inf       # with channel_Bps: each flow's share of its busiest link's usable rate

    @cached_property
    def uses(self) -> LinkUses:
        """Distinct links of ``routes`` and how often each is crossed; computed once (plans built
        here share their layout's, so the three protocols of one layout compute it once)."""
        return LinkUses.of(self.routes, self.weights)

    def _sharing_uses(self, uses: LinkUses) -> "FlowGroup":
        self.__dict__["uses"] = uses          # seeds the cached property; ``replace`` copies drop it
        return self


@dataclass(frozen=True)
class Plan:
    op: str
    algo: str
    proto: str
    ranks: int
    hosts: int
    channels: int
    groups: tuple[FlowGroup, ...]
    latency_s: float             # base + per-step hop latencies (+ wire), without call overhead
    call_overhead_s: float
    local_s_per_byte: float = 0.0   # per byte of S outside the network (local copies, reductions)
    chunking: Chunking | None = None    # pipelined chunks (NVLS): the engines add chunking.pad_bytes(S)
    p2p: P2pChannels | None = None      # NCCL's p2p channels by size (direct plans)
    host_s: float = 0.0                 # the host's issue of the call (part of call_overhead_s): in a stream
    #                                     of calls it overlaps the previous call's GPU work (closed_form.call_time_s)
    unaligned_extra: float = 0.0        # extra cost per byte of an unaligned share, over an aligned one (k - 1;
    #                                     simulator.collectives.alignment; 0 where the plan does not pay it)
    loops: RingLoops | None = None      # a flushing Simple ring's cost per further loop (layout.RingLoops)

    def pad_bytes(self, size_bytes: float) -> float:
        """Extra bytes of S the flows carry for the pipeline's fill (0 for most algorithms)."""
        return self.chunking.pad_bytes(size_bytes) if self.chunking is not None else 0.0

    def costed_bytes(self, size_bytes: float) -> float:
        """The bytes a call of ``size_bytes`` pays its per-byte cost (wire and local) for: S, plus ``k - 1`` times
        the bytes of its shares whose offset is unaligned (ring / Simple all_gather; simulator.collectives.alignment,
        whose factor is measured against the whole per-byte cost); S for every other plan and size."""
        if self.unaligned_extra > 0:
            return size_bytes * (1.0 + unaligned_share(self.ranks, size_bytes, self.op) * self.unaligned_extra)
        return size_bytes

    def chunk_overhead_s(self, size_bytes: float) -> float:
        """Seconds of the chunk steps' own cost besides their bytes, and of a flushing ring's further loops (0 for
        most algorithms)."""
        return (self.chunking.overhead_s(size_bytes) if self.chunking is not None else 0.0) + \
            (self.loops.overhead_s(size_bytes) if self.loops is not None else 0.0)

    def channels_at(self, size_bytes: float) -> int | None:
        """NCCL's p2p channels per peer of a call of ``size_bytes`` under this plan's protocol (None: not a
        p2p plan)."""
        return self.p2p.count(size_bytes, self.proto) if self.p2p is not None else None

    def caps_for(self, channels: int | None) -> tuple[float, ...]:
        """Each group's wire-rate ceiling when every peer's bytes use ``channels`` p2p channels: the
        channels' rate rounded off against the flow's port (simulator.collectives.p2p.port_limited_Bps)."""
        if channels is None:
            return tuple(g.rate_cap_Bps for g in self.groups)
        return tuple(min(g.rate_cap_Bps, port_limited_Bps(channels * g.channel_Bps, g.port_Bps)) for g in self.groups)

    def rate_caps(self, size_bytes: float) -> tuple[float, ...]:
        """Each group's wire-rate ceiling in a call of ``size_bytes`` (what the engines pass on)."""
        return self.caps_for(self.channels_at(size_bytes))


def _ring_order(channel: int, per_host: dict[int, list[str]], nics: int) -> list[str]:
    order: list[str] = []
    for h in sorted(per_host):
        g = per_host[h]
        c = channel_offset(channel, len(g), nics)
        order.extend(g[c:] + g[:c])
    return order


def layout(router: Router, op: str, algo: str, rk: Sequence[str]) -> Layout:
    """The protocol-free part of a plan: its flow groups (routes) and latency steps."""
    rk = list(rk)
    per_host = hosts(router, rk)
    if algo == "nvls" and len(per_host) > 1:
        return nvls_sharp_layout(router, op, rk, per_host)
    if algo in NEWER_LAYOUTS:
        return NEWER_LAYOUTS[algo](router, op, rk, per_host)
    acc = {"intra": set(), "inter": set()}
    groups, si, sn, worst = {"ring": _ring, "tree": _tree, "direct": _direct}[algo](router, op, rk, per_host, acc)
    return Layout(groups, tuple(sorted(acc["intra"])), tuple(sorted(acc["inter"])), si, sn, worst)


def build_plan(router: Router, op: str, algo: str, proto: str, params: Parameters,
               ranks: tuple[str, ...] | None = None, layouts: dict | None = None,
               search_channels: Callable[[], int] | None = None, net_flush: bool = False,
               nvls_chunks: NvlsChunks | None = None, net_latency_s: float = 0.0) -> Plan:
    """The flows and latency of one collective on ``ranks`` (default: every GPU, in rank order).

    ``layouts``: a cache of :func:`layout` results, kept by the caller (the Planner) so that the
    three protocols of one algorithm share their routes. ``search_channels``: gives the channels NCCL's
    ring/tree search finds on ``router``, which set a direct plan's p2p channels (the Planner's cached
    NCCL model has them), asked only when those are not in ``layouts`` yet; None: searched here. ``net_flush``:
    NCCL flushes each GPUDirect receive from the network here (the Planner's nccl_constants.flushes_gdr_receives),
    so a call across servers also pays ``net_flush_overhead_s``, and a Simple ring that again for each loop after
    its first (layout.RingLoops). ``nvls_chunks``: the NVLS chunk settings the run's
    NCCL takes (the Planner's NvlsChunks.taken_by); None: NCCL's defaults, which the layouts carry. ``net_latency_s``:
    what NCCL adds to each network step for the latency its network plugin states (the Planner's
    nccl_constants.net_latency_taken), on top of the network hop's own, for Simple only (NET_LATENCY_FROM says why)."""
    check_known(op, algo)
    if proto not in PROTOS:
        raise InputError("unknown protocol (expected ll, ll128 or simple)", field="proto", value=proto)
    if algo in SIMPLE_ONLY and proto != "simple":
        raise InputError(f"{algo} runs NCCL's simple protocol only", field="proto", value=proto)
    rk = list(ranks) if ranks is not None else list(router.gpus)
    n = len(rk)
    if n < 2:
        raise InputError("a collective needs at least 2 GPUs", field="gpus", value=n)
    if algo in SIMPLE_ONLY:
        why = why_unavailable(router, op, algo, rk)
        if why:
            raise InputError(f"{algo} is not available here: {why}", field="algo", value=algo)
    key = (op, algo, tuple(rk))
    lay = layouts.get(key) if layouts is not None else None
    if lay is None:
        lay = layout(router, op, algo, rk)
        if layouts is not None:
            layouts[key] = lay
    a = "ring" if algo == "direct" else algo
    intra = max((params.hop_latency_s(c, a, proto) + w for c, w in lay.intra), default=0.0)
    plugin = net_latency_s if proto == "simple" else 0.0
    inter = max((params.hop_latency_s(c, a, proto) + w + (plugin if c == "net" else 0.0) for c, w in lay.inter),
                default=0.0)
    latency = max(intra, inter) if lay.worst_of_both else lay.steps_intra * intra + lay.steps_inter * inter
    latency += lay.extra_latency_s
    groups = []
    effs: dict[str, float] = {}       # per kind of group (a 4096-GPU NVLS-Tree has 528 groups)
    staged_uses: list[LinkUses | None] = []
    for g in lay.groups:
        eff = effs.get(g.in_network)
        if eff is None:
            eff = effs[g.in_network] = (params.proto_efficiency(a, proto) * params[f"op_efficiency.{op}"]
                                        * _switch_efficiency(router, g.in_network, params))
        staged_uses.append(host_staged_uses(router, g, params["shm_efficiency"]))
        cap = params["socket_max_Bps"] if g.socket else math.inf
        # one server, GPU to GPU: the sending CTAs copy straight into the peer, at p2p_channel_Bps each
        ch = params["p2p_channel_Bps"] / eff if algo == "direct" and not (g.inter or g.shm or g.socket) \
            else math.inf
        groups.append(FlowGroup(g.routes, g.payload_per_byte / eff, g.label, eff, cap, g.weights, channel_Bps=ch,
                                port_Bps=_port_share_Bps(router, g.uses, params) if ch < math.inf else math.inf))
    if proto == "ll" and algo != "direct":
        # NCCL caps LL's bus bandwidth (llMaxBw); a tree's algorithm bandwidth is half its bus bandwidth.
        # A ring's LL ceiling is its CTAs' step rate, of which only the steps that move data count.
        scale = params["ll_max_busbw_Bps"] * (0.5 if algo == "tree" else ring_step_share(op, n))
        total = sum(g.bytes_per_byte for g in groups)
        groups = [replace(g, rate_cap_Bps=min(g.rate_cap_Bps, scale * (g.bytes_per_byte / total) / g.efficiency))
                  for g in groups]
    if lay.busbw_cap_Bps < math.inf:
        # a ceiling on the whole collective's bus bandwidth: every pipelined group finishes its bytes no
        # sooner than S x busbw factor / ceiling
        factor = busbw_factor(op, n)
        groups = [replace(g, rate_cap_Bps=min(g.rate_cap_Bps, g.bytes_per_byte * lay.busbw_cap_Bps / factor))
                  for g in groups]
    groups = [g._sharing_uses(su or lg.uses) for g, lg, su in zip(groups, lay.groups, staged_uses)]
    per_host = hosts(router, rk)
    chunking = replace(lay.chunking, fill_rounds=params["nvls_fill_rounds"],
                       step_overhead_s=params["nvls_step_overhead_s"]) if lay.chunking else None
    if chunking is not None and nvls_chunks is not None and algo in ("nvls", "nvls_tree"):
        chunking = replace(chunking, max_chunk_bytes=nvls_chunks.max_chunk(algo, len(per_host)))
    p2p = None
    if algo == "direct" and any(g.channel_Bps < math.inf for g in groups):
        p2p = p2p_of(router, op, rk, layouts, search_channels)
    # A ring's LL steps copy and reduce the words of their own lines as they forward them: its local
    # work is part of the step rate (the ceiling above), not added to it.
    local = 0.0 if proto == "ll" and algo == "ring" else \
        params[f"op_local_s_per_byte.{op}"] + params[f"op_shard_s_per_byte.{op}"] / n
    # the host's issue of the call (framework, launch, the slowest rank's): hides under the GPU work of the
    # call before it in a stream of calls; the network's own per-call cost across servers does not
    host = max(0.0, params["call_overhead_s"] + params[f"op_overhead_s.{op}"]
               + params["rank_overhead_s"] * math.log2(n))
    nch = lay.channels or channels(router, per_host)
    flushing = net_flush and len(per_host) > 1
    loops = RingLoops(ring_loop_bytes(RING_CHANNEL_COPIES * nch, n), params["net_flush_overhead_s"]) \
        if flushing and algo == "ring" and proto == "simple" and op in LOOPED_RING_OPS else None
    return Plan(op, algo, proto, n, len(per_host), nch,
                tuple(groups), params.base_latency_s(a, proto) + latency,
                host + (params["net_call_overhead_s"] + (params["net_flush_overhead_s"] if flushing else 0.0)
                        if len(per_host) > 1 else 0.0),
                local, chunking, p2p, host,
                params["unaligned_copy_factor"] - 1.0 if slowed(op, algo, proto) else 0.0, loops)


def host_staged(router: Router, g: LayoutGroup, route: Sequence[int]) -> bool:
    """Whether the hop ``route`` of flow group ``g`` passes through host memory: a network leg where
    GPUDirect RDMA is off (``ClusterInfo.gdr``: NCCL's net and CollNet transports then stage each byte in a
    host buffer that the GPU's SMs write or read and the NIC reads or writes; a SHARP tree's every link is a
    network leg), or a GPU-to-GPU hop with peer-to-peer off (NCCL's SHM transport: ``g.shm``). NVLink hops
    stay direct when only GPUDirect RDMA is off (NCCL's P2P transport does not need it). The socket
    transport stages too but has its own ceiling (``socket_max_Bps``), so its groups are never staged."""
    if g.socket:
        return False
    kinds = router.kind
    network = g.in_network == "sharp" or any(kinds[link] == "net" for link in route)
    return not router.info.gdr if network else g.shm


def host_staged_uses(router: Router, g: LayoutGroup, shm_efficiency: float) -> LinkUses | None:
    """The link uses of ``g`` with each staged hop's (:func:`host_staged`) links other than NVLink counted
    ``1 / shm_efficiency`` times: those legs run at ``shm_efficiency`` of their rate (two copies through host
    memory instead of one), the group's other legs at theirs; None when no hop is staged (``g.uses`` as it
    is). Only the staged legs slow down: a ring across servers with GPUDirect RDMA off keeps its NVLink legs'
    full rate, so it takes its fair share of NVLink beside other traffic."""
    if g.socket or (router.info.gdr and not g.shm):
        return None
    if isinstance(g.routes, RouteTable) and use_arrays(g.routes.entries()):
        return _host_staged_uses_arrays(router, g, g.routes, shm_efficiency)
    kinds = router.kind
    routes: list[tuple[int, ...]] = []       # a staged hop as two: its NVLink links, its others slowed
    weights: list[float] = []
    staged = False
    for route, w in zip(g.routes, g.weights or (1.0,) * len(g.routes)):
        if host_staged(router, g, route):
            staged = True
            routes += [tuple(l for l in route if kinds[l] == "nvlink"), tuple(l for l in route if kinds[l] != "nvlink")]
            weights += [w, w / shm_efficiency]
        else:
            routes.append(tuple(route))
            weights.append(w)
    return LinkUses.of(routes, weights) if staged else None


def _host_staged_uses_arrays(router: Router, g: LayoutGroup, table: RouteTable, shm_efficiency: float
                             ) -> LinkUses | None:
    """:func:`host_staged_uses` of a large route table in arrays (a 4096-GPU tree's 8190 hops per group), the
    same numbers: each link's count adds its routes' shares in route order, as the loop does (``bincount``
    adds in entry order)."""
    import numpy as np
    flat, pos = table.flat_in_order()
    kinds = router.kind_array[flat]
    n = len(table)
    if g.in_network == "sharp":
        network = np.ones(n, dtype=bool)
    else:
        network = np.bincount(pos, weights=kinds == "net", minlength=n) > 0
    staged = np.where(network, not router.info.gdr, g.shm)          # host_staged, per route
    if not staged.any():
        return None
    w = (np.asarray(g.weights, dtype=float) if g.weights is not None else np.ones(n))[pos]
    share = np.where(staged[pos] & (kinds != "nvlink"), w / shm_efficiency, w)
    ids = np.flatnonzero(np.bincount(flat))
    return LinkUses(tuple(ids.tolist()), tuple(np.bincount(flat, weights=share)[ids].tolist()))


def p2p_of(router: Router, op: str, ranks: Sequence[str], layouts: dict | None = None,
           search_channels: Callable[[], int] | None = None) -> P2pChannels:
    """NCCL's p2p channels of ``op`` (send_recv or all_to_all) on ``ranks``: the routes' alone, like the
    layout, so cached with it in ``layouts``."""
    rk = tuple(ranks)
    share = 1.0 if op == "send_recv" else 1.0 / len(rk)
    p2p = layouts.get(("p2p", rk, share)) if layouts is not None else None
    if p2p is None:
        p2p = p2p_channels(router, rk, share, search_channels() if search_channels else None)
        if layouts is not None:
            layouts[("p2p", rk, share)] = p2p
    return p2p


def _port_share_Bps(router: Router, uses: LinkUses, params: Parameters) -> float:
    """One flow's share of its busiest link on an idle network: each link's usable rate over the flows of
    the group that cross it, the least over the links (an all-to-all's 3 peers on 4 GPUs share each GPU's
    port; a send/recv's one flow has it alone). What a p2p flow's channels round off against."""
    return min(float(router.capacity_Bps[i]) * params.link_efficiency(str(router.kind[i])) / c
               for i, c in zip(uses.link_ids, uses.link_counts))


def ring_step_share(op: str, n: int) -> float:
    """Share of a ring rank's primitive steps that move a chunk to the next rank (NCCL's ring kernels).

    Per loop of n chunks, a rank runs 2n-1 steps of an all-reduce (send, n-2 recvReduceSend,
    recvReduceCopySend, n-2 recvCopySend, recv) but moves 2(n-1) chunks; n steps of an all-gather or
    reduce-scatter for n-1 chunks; broadcast and reduce run one step per chunk along their chain. When
    the CTAs' step processing, not the wire, sets the rate (LL: every thread polls the flags of its own
    16-byte lines), the bus bandwidth is that rate times this share: 2/3 of it on 2 GPUs, 6/7 on 4."""
    if op == "all_reduce":
        return 2.0 * (n - 1) / (2 * n - 1)
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) / n
    return 1.0


def _switch_efficiency(router: Router, switch: str, params: Parameters) -> float:
    """Extra bandwidth factor of a group whose switch reduces (``LayoutGroup.in_network``): the
    NVSwitch's while it reduces and multicasts (NCCL's nvlsEfficiency, per GPU generation), the SHARP
    switches' (CollNet: NCCL's 0.85 for CollNet on Hopper and later)."""
    if switch == "nvswitch":
        cc = router.info.compute_capability
        return params["nvls_efficiency.sm100" if cc >= 100 else "nvls_efficiency.sm90"]
    if switch == "sharp":
        return params["collnet_efficiency"]
    return 1.0


def _ring(router, op, rk, per_host, acc):
    """Latency steps as NCCL counts them: all_reduce 2(n-1), of which 2(N-1) cross servers;
    reduce_scatter/all_gather n-1 and N-1; broadcast/reduce n-1 chain hops (NCCL counts one)."""
    n, N = len(rk), len(per_host)
    C = channels(router, per_host)
    per_flow = {"all_reduce": 2.0 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n,
                "broadcast": 1.0, "reduce": 1.0}[op]
    chain = op in ("broadcast", "reduce")
    groups = []
    grid = gpu_grid(router, per_host)
    nics = router.info.nics_per_host
    for c in range(C):
        if grid is not None:              # the same hops, as arrays of GPU ids
            src, dst = successors((rotated(grid, channel_offset(c, grid.shape[1], nics)) if N > 1 else grid).ravel())
            if chain:
                src, dst = (src[:-1], dst[:-1]) if op == "broadcast" else (dst[:-1], src[:-1])
            groups.append(layout_group_ids(router, src, dst, per_flow / C, f"ring ch{c}", acc))
            continue
        order = _ring_order(c, per_host, nics) if N > 1 else rk
        hops = [(order[i], order[(i + 1) % n]) for i in range(n)]
        if chain:
            hops = hops[:-1] if op == "broadcast" else [(b, a) for a, b in hops[:-1]]
        groups.append(layout_group(router, hops, per_flow / C, f"ring ch{c}", acc))
    if chain:
        # A pipelined chain: the last rank sees the first byte after n-1 hops (NCCL's own table
        # charges one hop; measured broadcasts on 4 H200s take longer than on 2, as the chain does).
        return merge(groups), (n - 1) - (N - 1), N - 1, False
    nsteps = 2 * (n - 1) if op == "all_reduce" else n - 1
    n_inter = 0 if N == 1 else (2 * (N - 1) if op == "all_reduce" else N - 1)
    return merge(groups), nsteps - n_inter, n_inter, False


def _tree(router, op, rk, per_host, acc):
    """Latency: 2 * ((ranks per server - 1) intra steps + floor(log2 N) inter steps), as NCCL."""
    n, N = len(rk), len(per_host)
    C = channels(router, per_host)
    hosts = sorted(per_host)
    groups = []
    grid = gpu_grid(router, per_host)
    nics = router.info.nics_per_host
    for c in range(C):
        if grid is not None:              # the same hops, as arrays of GPU ids
            ch = rotated(grid, channel_offset(c, grid.shape[1], nics))
            chain = layout_group_ids(router, *chain_hops(ch), 0.0, "", acc) if ch.shape[1] > 1 else None
            for t, mirror in enumerate((False, True)):
                child, parent = tree_edges(N, mirror)
                net = layout_group_ids(router, *both_ways(ch[child, 0], ch[parent, 0]), 0.0, "", acc) \
                    if N > 1 else None
                groups += _tree_group([g for g in (chain, net) if g], c, t, C)
            continue
        chains = {}
        up_down = []
        for h in hosts:
            g = per_host[h]
            k = channel_offset(c, len(g), nics)
            ch = chains[h] = g[k:] + g[:k]     # ch[0] is the head, which talks to the network
            up_down += [(ch[i + 1], ch[i]) for i in range(len(ch) - 1)]      # up the chain
            up_down += [(ch[i], ch[i + 1]) for i in range(len(ch) - 1)]      # down the chain
        chain = layout_group(router, up_down, 0.0, "", acc) if up_down else None
        for t, mirror in enumerate((False, True)):     # both trees of a channel share its chains
            net_hops = []
            for child, parent in binary_tree(N, mirror):
                a, b = chains[hosts[child]][0], chains[hosts[parent]][0]
                net_hops += [(a, b), (b, a)]
            parts = [g for g in (chain, layout_group(router, net_hops, 0.0, "", acc) if net_hops else None) if g]
            groups += _tree_group(parts, c, t, C)
    ppn = n // N
    return merge(groups), 2 * (ppn - 1), 2 * int(math.log2(N)), False


def _tree_group(parts: list[LayoutGroup], c: int, t: int, C: int) -> list[LayoutGroup]:
    """Tree ``t`` of channel ``c``: its chains and network hops as one group (none if both are empty)."""
    if not parts:
        return []
    return [LayoutGroup(join_routes([g.routes for g in parts]), 1.0 / (2 * C), f"tree ch{c} t{t}",
                        any(g.shm for g in parts), any(g.socket for g in parts), inter=any(g.inter for g in parts))]


def _direct(router, op, rk, per_host, acc):
    """send_recv: each rank to the next, one group per pair. all_to_all: every ordered pair at once,
    one coupled group (NCCL launches all the sends of one all_to_all together). One latency step."""
    n = len(rk)
    if op == "send_recv":
        groups = tuple(layout_group(router, [(rk[i], rk[(i + 1) % n])], 1.0, f"{rk[i]}->{rk[(i + 1) % n]}", acc)
                       for i in range(n))
    else:
        pairs = [(a, b) for a in rk for b in rk if a != b]
        groups = (layout_group(router, pairs, 1.0 / n, "all_to_all", acc),)
    return groups, 0, 0, True
