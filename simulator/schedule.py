"""Collective schedules: plain, immutable data built from a topology, executed elsewhere.

A :class:`Plan` says, for one collective (op, algorithm, protocol, ranks), which flows run and how
many bytes each carries *per byte of the collective's size*; a :class:`Schedule` is a plan scaled
to one size. Both the discrete-event executor (simulator.engine) and the closed form
(simulator.closed_form) consume the same plan, so they can check each other.

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
from functools import lru_cache

from simulator.errors import InputError
from simulator.params import Parameters
from topologies.routing import Router

OPS = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all", "send_recv")
ALGOS_FOR_OP = {op: ("ring",) for op in OPS}
ALGOS_FOR_OP["all_reduce"] = ("ring", "tree")
ALGOS_FOR_OP["all_to_all"] = ("direct",)
ALGOS_FOR_OP["send_recv"] = ("direct",)

# nccl-tests' bus-bandwidth factors (busbw = algbw * factor), n = ranks.
def busbw_factor(op: str, n: int) -> float:
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("reduce_scatter", "all_gather", "all_to_all"):
        return (n - 1) / n
    return 1.0


@dataclass(frozen=True)
class FlowGroup:
    """Flows that move at one common rate (a pipeline); each flow carries ``bytes_per_byte * S``."""

    routes: tuple[tuple[int, ...], ...]
    bytes_per_byte: float
    label: str = ""
    efficiency: float = 1.0          # payload / wire bytes (protocol, host-memory copies)
    rate_cap_Bps: float = math.inf   # wire-rate ceiling of each flow of the group


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

    def schedule(self, size_bytes: int) -> "Schedule":
        return Schedule(self, size_bytes)


@dataclass(frozen=True)
class Schedule:
    plan: Plan
    size_bytes: int

    def group_bytes(self, g: FlowGroup) -> float:
        return g.bytes_per_byte * self.size_bytes


def _ring_order(router: Router, channel: int, per_host: dict[int, list[str]]) -> list[str]:
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
    nics = max(1, int(router.G.graph.get("nics_per_host", 1)))
    return min(nics, min(len(g) for g in per_host.values())) if nics > 1 else 1


def _merge(groups: list[FlowGroup]) -> tuple[FlowGroup, ...]:
    """Merge groups with identical routes (same links): their bytes add, their rate is shared."""
    merged: dict[tuple, FlowGroup] = {}
    for g in groups:
        key = (tuple(sorted(g.routes)), g.rate_cap_Bps)
        if key in merged:
            m = merged[key]
            merged[key] = replace(m, bytes_per_byte=m.bytes_per_byte + g.bytes_per_byte)
        else:
            merged[key] = g
    return tuple(merged.values())


def _step_latency(router: Router, params: Parameters, routes, algo: str, proto: str) -> tuple[float, float]:
    """(intra-server, inter-server) per-step latency: protocol hop latency + wire latency, worst hop."""
    intra, inter = 0.0, 0.0
    for r in routes:
        cls = router.route_class(r)
        lat = params.hop_latency_s(cls, algo, proto) + router.wire_latency_s(r)
        if cls == "net":
            inter = max(inter, lat)
        else:
            intra = max(intra, lat)
    return intra, inter


def _efficiency(router: Router, params: Parameters, routes, algo: str, proto: str) -> float:
    eff = params.proto_efficiency(algo if algo != "direct" else "ring", proto)
    if any(router.route_class(r) == "shm" for r in routes):
        eff *= params["shm_efficiency"]
    return eff


def build_plan(router: Router, op: str, algo: str, proto: str, params: Parameters,
               ranks: tuple[str, ...] | None = None) -> Plan:
    """The flows and latency of one collective on ``ranks`` (default: every GPU, in rank order)."""
    if op not in OPS:
        raise InputError(f"unknown operation (expected one of {', '.join(OPS)})", field="op", value=op)
    if algo not in ALGOS_FOR_OP[op]:
        raise InputError(f"algorithm not available for {op} (available: {', '.join(ALGOS_FOR_OP[op])})",
                         field="algo", value=algo)
    if proto not in ("ll", "ll128", "simple"):
        raise InputError("unknown protocol (expected ll, ll128 or simple)", field="proto", value=proto)
    rk = list(ranks) if ranks is not None else list(router.gpus)
    n = len(rk)
    if n < 2:
        raise InputError("a collective needs at least 2 GPUs", field="gpus", value=n)
    per_host = _hosts(router, rk)
    N = len(per_host)
    builder = {"ring": _ring, "tree": _tree, "direct": _direct}[algo]
    groups, latency = builder(router, params, op, proto, rk, per_host)
    if proto == "ll" and algo != "direct":
        # NCCL caps LL's bus bandwidth (llMaxBw); a tree's algorithm bandwidth is half its bus bandwidth.
        scale = params["ll_max_busbw_Bps"] * (0.5 if algo == "tree" else 1.0)
        total = sum(g.bytes_per_byte for g in groups)
        groups = tuple(replace(g, rate_cap_Bps=scale * (g.bytes_per_byte / total) / g.efficiency)
                       for g in groups)
    return Plan(op, algo, proto, n, N, _channels(router, per_host), groups,
                params.base_latency_s("ring" if algo == "direct" else algo, proto) + latency,
                params["call_overhead_s"])


def _ring(router, params, op, proto, rk, per_host):
    n, N = len(rk), len(per_host)
    C = _channels(router, per_host)
    per_flow = {"all_reduce": 2.0 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n,
                "broadcast": 1.0, "reduce": 1.0}[op]
    chain = op in ("broadcast", "reduce")
    groups, all_routes = [], []
    for c in range(C):
        order = _ring_order(router, c, per_host) if N > 1 else rk
        hops = [(order[i], order[(i + 1) % n]) for i in range(n)]
        if chain:
            hops = hops[:-1] if op == "broadcast" else [(b, a) for a, b in hops[:-1]]
        routes = tuple(router.route(a, b) for a, b in hops)
        all_routes.extend(routes)
        eff = _efficiency(router, params, routes, "ring", proto)
        groups.append(FlowGroup(routes, per_flow / C / eff, f"ring ch{c}", eff))
    intra, inter = _step_latency(router, params, all_routes, "ring", proto)
    if chain:
        latency = inter if N > 1 else intra
    else:
        nsteps = 2 * (n - 1) if op == "all_reduce" else n - 1
        n_inter = 0 if N == 1 else (2 * (N - 1) if op == "all_reduce" else N - 1)
        latency = (nsteps - n_inter) * intra + n_inter * inter
    return _merge(groups), latency


def _binary_tree(N: int, mirror: bool) -> list[tuple[int, int]]:
    """(child, parent) edges of a balanced binary tree over N servers (heap layout);
    the mirrored tree puts the other half of the servers inside (NCCL's double binary tree)."""
    idx = list(range(N))[::-1] if mirror else list(range(N))
    return [(idx[i], idx[(i - 1) // 2]) for i in range(1, N)]


def _tree(router, params, op, proto, rk, per_host):
    n, N = len(rk), len(per_host)
    C = _channels(router, per_host)
    hosts = sorted(per_host)
    groups, all_routes = [], []
    for c in range(C):
        chains = {}
        for h in hosts:
            g = per_host[h]
            k = c % len(g)
            chains[h] = g[k:] + g[:k]          # chains[h][0] is the head, which talks to the network
        for t, mirror in enumerate((False, True)):
            hops = []
            for h in hosts:
                ch = chains[h]
                hops += [(ch[i + 1], ch[i]) for i in range(len(ch) - 1)]      # up the chain
                hops += [(ch[i], ch[i + 1]) for i in range(len(ch) - 1)]      # down the chain
            for child, parent in _binary_tree(N, mirror):
                a, b = chains[hosts[child]][0], chains[hosts[parent]][0]
                hops += [(a, b), (b, a)]
            if not hops:
                continue
            routes = tuple(router.route(a, b) for a, b in hops)
            all_routes.extend(routes)
            eff = _efficiency(router, params, routes, "tree", proto)
            groups.append(FlowGroup(routes, 1.0 / (2 * C) / eff, f"tree ch{c} t{t}", eff))
    intra, inter = _step_latency(router, params, all_routes, "tree", proto)
    ppn = n // N
    latency = 2 * ((ppn - 1) * intra + int(math.log2(N)) * inter)
    return _merge(groups), latency


def _direct(router, params, op, proto, rk, per_host):
    """send_recv: each rank to the next, one group per pair. all_to_all: every ordered pair at once,
    one coupled group (NCCL launches all the sends of one all_to_all together)."""
    n = len(rk)
    if op == "send_recv":
        pairs = [(rk[i], rk[(i + 1) % n]) for i in range(n)]
        groups = []
        for a, b in pairs:
            r = (router.route(a, b),)
            eff = _efficiency(router, params, r, "ring", proto)
            groups.append(FlowGroup(r, 1.0 / eff, f"{a}->{b}", eff))
        routes = [g.routes[0] for g in groups]
    else:
        routes = [router.route(a, b) for a in rk for b in rk if a != b]
        eff = _efficiency(router, params, routes, "ring", proto)
        groups = [FlowGroup(tuple(routes), 1.0 / n / eff, "all_to_all", eff)]
    intra, inter = _step_latency(router, params, routes, "ring", proto)
    return tuple(groups), max(intra, inter)
