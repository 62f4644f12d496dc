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
  from each rank to the next (nccl-tests' sendrecv pattern).

Channels whose flows follow exactly the same links are merged into one group (a ring inside one
server has a single channel): this keeps a 4096-GPU all-reduce to a handful of groups.
Wire bytes include the protocol's overhead (payload / efficiency).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Sequence

import numpy as np

from simulator.core.errors import InputError
from simulator.core.vocabulary import OPS, PROTOS
from simulator.collectives.params import Parameters
from topologies.routing import Router

ALGOS_FOR_OP = {op: ("ring",) for op in OPS}
ALGOS_FOR_OP["all_reduce"] = ("ring", "tree")
ALGOS_FOR_OP["all_to_all"] = ("direct",)
ALGOS_FOR_OP["send_recv"] = ("direct",)


@dataclass(frozen=True)
class FlowGroup:
    """Flows that move at one common rate (a pipeline); each flow carries ``bytes_per_byte * S``."""

    routes: tuple[tuple[int, ...], ...]
    bytes_per_byte: float
    label: str = ""
    efficiency: float = 1.0          # payload / wire bytes (protocol, host-memory copies)
    rate_cap_Bps: float = math.inf   # wire-rate ceiling of each flow of the group

    @cached_property
    def uses(self) -> tuple[np.ndarray, np.ndarray]:
        """(distinct link ids, times the group's flows cross each), computed once per group."""
        flat = np.fromiter((l for r in self.routes for l in r), dtype=np.int64)
        links, counts = np.unique(flat, return_counts=True)
        return links, counts.astype(float)


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


def _ring_order(channel: int, per_host: dict[int, list[str]]) -> list[str]:
    order: list[str] = []
    for h in sorted(per_host):
        g = per_host[h]
        c = channel % len(g)
        order.extend(g[c:] + g[:c])
    return order


def _hosts(router: Router, ranks: list[str]) -> dict[int, list[str]]:
    per: dict[int, list[str]] = {}
    for r in ranks:
        per.setdefault(router.host_of(r), []).append(r)
    return per


def _channels(router: Router, per_host: dict[int, list[str]]) -> int:
    if len(per_host) == 1:
        return 1
    nics = max(1, router.info.nics_per_host)
    return min(nics, min(len(g) for g in per_host.values())) if nics > 1 else 1


@dataclass(frozen=True)
class _LayoutGroup:
    """A group before protocol choice: routes, payload bytes per byte of S, hop classes."""

    routes: tuple[tuple[int, ...], ...]
    payload_per_byte: float
    label: str
    shm: bool
    socket: bool = False


@dataclass(frozen=True)
class _Layout:
    groups: tuple[_LayoutGroup, ...]
    intra: tuple[tuple[str, float], ...]    # distinct (class, wire latency) of intra-server hops
    inter: tuple[tuple[str, float], ...]    # the same for hops between servers
    steps_intra: int                        # latency steps (NCCL's counting), see _ring/_tree/_direct
    steps_inter: int
    worst_of_both: bool = False             # one step whose latency is the worst hop of either kind


def _layout_group(router: Router, pairs, payload: float, label: str, acc) -> _LayoutGroup:
    hop = router.hop
    hops = [hop(a, b) for a, b in pairs]
    kinds = [router.hop_kinds[k] for k in {h[4] for h in hops}]   # distinct (class, wire, crosses servers)
    for cls, wire, inter in kinds:
        acc["inter" if inter else "intra"].add((cls, wire))
    classes = {k[0] for k in kinds}
    return _LayoutGroup(tuple(h[0] for h in hops), payload, label, "shm" in classes, "socket" in classes)


def _merge(groups: list[_LayoutGroup]) -> tuple[_LayoutGroup, ...]:
    """Merge groups with identical routes (same links): their bytes add, their rate is shared."""
    merged: dict[tuple, _LayoutGroup] = {}
    for g in groups:
        key = (len(g.routes), frozenset(g.routes))      # order-free; the length keeps multiplicities apart
        if key in merged:
            m = merged[key]
            merged[key] = replace(m, payload_per_byte=m.payload_per_byte + g.payload_per_byte)
        else:
            merged[key] = g
    return tuple(merged.values())


def layout(router: Router, op: str, algo: str, rk: Sequence[str]) -> _Layout:
    """The protocol-free part of a plan: its flow groups (routes) and latency steps."""
    rk = list(rk)
    per_host = _hosts(router, rk)
    acc = {"intra": set(), "inter": set()}
    groups, si, sn, worst = {"ring": _ring, "tree": _tree, "direct": _direct}[algo](router, op, rk, per_host, acc)
    return _Layout(groups, tuple(sorted(acc["intra"])), tuple(sorted(acc["inter"])), si, sn, worst)


def build_plan(router: Router, op: str, algo: str, proto: str, params: Parameters,
               ranks: tuple[str, ...] | None = None, layouts: dict | None = None) -> Plan:
    """The flows and latency of one collective on ``ranks`` (default: every GPU, in rank order).

    ``layouts``: a cache of :func:`layout` results, kept by the caller (the Planner) so that the
    three protocols of one algorithm share their routes."""
    if op not in OPS:
        raise InputError(f"unknown operation (expected one of {', '.join(OPS)})", field="op", value=op)
    if algo not in ALGOS_FOR_OP[op]:
        raise InputError(f"algorithm not available for {op} (available: {', '.join(ALGOS_FOR_OP[op])})",
                         field="algo", value=algo)
    if proto not in PROTOS:
        raise InputError("unknown protocol (expected ll, ll128 or simple)", field="proto", value=proto)
    rk = list(ranks) if ranks is not None else list(router.gpus)
    n = len(rk)
    if n < 2:
        raise InputError("a collective needs at least 2 GPUs", field="gpus", value=n)
    key = (op, algo, tuple(rk))
    lay = layouts.get(key) if layouts is not None else None
    if lay is None:
        lay = layout(router, op, algo, rk)
        if layouts is not None:
            layouts[key] = lay
    a = "ring" if algo == "direct" else algo
    intra = max((params.hop_latency_s(c, a, proto) + w for c, w in lay.intra), default=0.0)
    inter = max((params.hop_latency_s(c, a, proto) + w for c, w in lay.inter), default=0.0)
    latency = max(intra, inter) if lay.worst_of_both else lay.steps_intra * intra + lay.steps_inter * inter
    groups = []
    for g in lay.groups:
        eff = (params.proto_efficiency(a, proto) * params[f"op_efficiency.{op}"]
               * (params["shm_efficiency"] if g.shm else 1.0))
        cap = params["socket_max_Bps"] if g.socket else math.inf
        groups.append(FlowGroup(g.routes, g.payload_per_byte / eff, g.label, eff, cap))
    if proto == "ll" and algo != "direct":
        # NCCL caps LL's bus bandwidth (llMaxBw); a tree's algorithm bandwidth is half its bus bandwidth.
        scale = params["ll_max_busbw_Bps"] * (0.5 if algo == "tree" else 1.0)
        total = sum(g.bytes_per_byte for g in groups)
        groups = [replace(g, rate_cap_Bps=min(g.rate_cap_Bps, scale * (g.bytes_per_byte / total) / g.efficiency))
                  for g in groups]
    return Plan(op, algo, proto, n, len(_hosts(router, rk)), _channels(router, _hosts(router, rk)),
                tuple(groups), params.base_latency_s(a, proto) + latency,
                params["call_overhead_s"] + params[f"op_overhead_s.{op}"] + params["rank_overhead_s"] * math.log2(n),
                params[f"op_local_s_per_byte.{op}"])


def _ring(router, op, rk, per_host, acc):
    """Latency steps as NCCL counts them: all_reduce 2(n-1), of which 2(N-1) cross servers;
    reduce_scatter/all_gather n-1 and N-1; broadcast/reduce n-1 chain hops (NCCL counts one)."""
    n, N = len(rk), len(per_host)
    C = _channels(router, per_host)
    per_flow = {"all_reduce": 2.0 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n,
                "broadcast": 1.0, "reduce": 1.0}[op]
    chain = op in ("broadcast", "reduce")
    groups = []
    for c in range(C):
        order = _ring_order(c, per_host) if N > 1 else rk
        hops = [(order[i], order[(i + 1) % n]) for i in range(n)]
        if chain:
            hops = hops[:-1] if op == "broadcast" else [(b, a) for a, b in hops[:-1]]
        groups.append(_layout_group(router, hops, per_flow / C, f"ring ch{c}", acc))
    if chain:
        # A pipelined chain: the last rank sees the first byte after n-1 hops (NCCL's own table
        # charges one hop; measured broadcasts on 4 H200s take longer than on 2, as the chain does).
        return _merge(groups), (n - 1) - (N - 1), N - 1, False
    nsteps = 2 * (n - 1) if op == "all_reduce" else n - 1
    n_inter = 0 if N == 1 else (2 * (N - 1) if op == "all_reduce" else N - 1)
    return _merge(groups), nsteps - n_inter, n_inter, False


def _binary_tree(N: int, mirror: bool) -> list[tuple[int, int]]:
    """(child, parent) edges of a balanced binary tree over N servers (heap layout);
    the mirrored tree puts the other half of the servers inside (NCCL's double binary tree)."""
    idx = list(range(N))[::-1] if mirror else list(range(N))
    return [(idx[i], idx[(i - 1) // 2]) for i in range(1, N)]


def _tree(router, op, rk, per_host, acc):
    """Latency: 2 * ((ranks per server - 1) intra steps + floor(log2 N) inter steps), as NCCL."""
    n, N = len(rk), len(per_host)
    C = _channels(router, per_host)
    hosts = sorted(per_host)
    groups = []
    for c in range(C):
        chains = {}
        chain_hops = []
        for h in hosts:
            g = per_host[h]
            k = c % len(g)
            ch = chains[h] = g[k:] + g[:k]     # ch[0] is the head, which talks to the network
            chain_hops += [(ch[i + 1], ch[i]) for i in range(len(ch) - 1)]      # up the chain
            chain_hops += [(ch[i], ch[i + 1]) for i in range(len(ch) - 1)]      # down the chain
        chain = _layout_group(router, chain_hops, 0.0, "", acc) if chain_hops else None
        for t, mirror in enumerate((False, True)):     # both trees of a channel share its chains
            net_hops = []
            for child, parent in _binary_tree(N, mirror):
                a, b = chains[hosts[child]][0], chains[hosts[parent]][0]
                net_hops += [(a, b), (b, a)]
            parts = [g for g in (chain, _layout_group(router, net_hops, 0.0, "", acc) if net_hops else None) if g]
            if parts:
                groups.append(_LayoutGroup(tuple(r for g in parts for r in g.routes), 1.0 / (2 * C),
                                           f"tree ch{c} t{t}", any(g.shm for g in parts),
                                           any(g.socket for g in parts)))
    ppn = n // N
    return _merge(groups), 2 * (ppn - 1), 2 * int(math.log2(N)), False


def _direct(router, op, rk, per_host, acc):
    """send_recv: each rank to the next, one group per pair. all_to_all: every ordered pair at once,
    one coupled group (NCCL launches all the sends of one all_to_all together). One latency step."""
    n = len(rk)
    if op == "send_recv":
        groups = tuple(_layout_group(router, [(rk[i], rk[(i + 1) % n])], 1.0, f"{rk[i]}->{rk[(i + 1) % n]}", acc)
                       for i in range(n))
    else:
        pairs = [(a, b) for a in rk for b in rk if a != b]
        groups = (_layout_group(router, pairs, 1.0 / n, "all_to_all", acc),)
    return groups, 0, 0, True
