"""The closed-form (alpha-beta) model: time = call overhead + latency + size * seconds_per_byte.

Alpha (latency) and beta (seconds per byte) come from the same collective plan that the
discrete-event engine executes: beta is the slowest group's wire bytes per byte over its max-min
fair rate on an idle network. A plan is built once per (op, algorithm, protocol); afterwards a
prediction is a few arithmetic operations (over 100,000 per second).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx
import numpy as np

from simulator.core.errors import InputError
from simulator.network.fairness import max_min_rates
from simulator.collectives.nccl_model import TUNED_OPS
from simulator.collectives.params import PROTOS, Parameters
from simulator.collectives.plans import ALGOS_FOR_OP, OPS, Plan, build_plan
from topologies.routing import Router


@dataclass(frozen=True)
class Shape:
    """alpha/beta of one collective: time(S) = alpha_s + S * beta_s_per_byte."""

    alpha_s: float
    beta_s_per_byte: float
    plan: Plan
    bottleneck: str = ""        # link class that saturates first: nvlink, pcie, socket, net (NIC/fabric)

    def time_s(self, size_bytes: float) -> float:
        return self.alpha_s + size_bytes * self.beta_s_per_byte


def link_uses(router: Router, routes: tuple[tuple[int, ...], ...]) -> tuple[np.ndarray, np.ndarray]:
    """(distinct link ids, times each is crossed) of a flow group's routes; cached on the router
    (plans of every protocol share their layout's route tuples, which the router's cache keeps alive)."""
    key = ("uses", id(routes))
    hit = router.cache.get(key)
    if hit is None or hit[0] is not routes:
        links, counts = np.unique(np.fromiter((l for r in routes for l in r), dtype=np.int64), return_counts=True)
        hit = router.cache[key] = (routes, links, counts.astype(float))
    return hit[1], hit[2]


def _rates_and_bottleneck(router: Router, params: Parameters, plan: Plan) -> tuple[np.ndarray, str]:
    cap = router.capacity_Bps * np.array([params.link_efficiency(k) for k in router.kind])
    ug, ul, uc = [], [], []
    for i, g in enumerate(plan.groups):
        links, counts = link_uses(router, g.routes)
        ug.append(np.full(len(links), i))
        ul.append(links)
        uc.append(counts)
    if not ug:
        return np.zeros(0), ""
    caps = np.array([g.rate_cap_Bps for g in plan.groups])
    g_, l_, c_ = np.concatenate(ug), np.concatenate(ul), np.concatenate(uc)
    rates = max_min_rates(g_, l_, c_, cap, caps)
    load = np.bincount(l_, weights=c_ * rates[g_], minlength=len(cap))
    slowest = int(np.argmax([g.bytes_per_byte / r if r > 0 else np.inf for g, r in zip(plan.groups, rates)]))
    mine = l_[g_ == slowest]
    util = load[mine] / cap[mine]
    if len(mine) == 0 or util.max() < 0.999:
        return rates, "protocol"            # limited by the protocol's own ceiling (e.g. LL), not a link
    return rates, router.kind[int(mine[int(np.argmax(util))])]


class CostModel:
    """Alpha-beta predictions for every collective on one topology and parameter set."""

    def __init__(self, G_or_router: nx.Graph | Router, params: Parameters | None = None,
                 select: str = "nccl") -> None:
        """``select``: how ``auto`` picks algorithm and protocol: ``"nccl"`` (what NCCL's own tuner
        would run, from its cost model: simulator.collectives.nccl_model) or ``"fastest"`` (our fastest prediction)."""
        if select not in ("nccl", "fastest"):
            raise InputError("select must be 'nccl' or 'fastest'", field="select", value=select)
        self.router = G_or_router if isinstance(G_or_router, Router) else Router(G_or_router)
        self.params = params or Parameters()
        self.select = select
        self._shapes: dict[tuple[str, str, str], Shape] = {}
        self._allowed: dict[tuple[str, str, str], tuple[tuple[str, str], ...]] = {}
        self._nccl = None

    @property
    def nccl(self):
        """NCCL's own cost model for this topology (its tuning table)."""
        if self._nccl is None:
            from simulator.collectives.nccl_model import NcclInputs, NcclModel
            self._nccl = NcclModel(NcclInputs.from_router(self.router))
        return self._nccl

    @property
    def ranks(self) -> int:
        return len(self.router.gpus)

    def shape(self, op: str, algo: str, proto: str) -> Shape:
        key = (op, algo, proto)
        s = self._shapes.get(key)
        if s is None:
            plan = build_plan(self.router, op, algo, proto, self.params)
            rates, neck = _rates_and_bottleneck(self.router, self.params, plan)
            beta = max((g.bytes_per_byte / r if r > 0 else math.inf) for g, r in zip(plan.groups, rates)) \
                if plan.groups else 0.0
            s = Shape(plan.call_overhead_s + plan.latency_s, beta + plan.local_s_per_byte, plan, neck)
            self._shapes[key] = s
        return s

    def limit(self, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> str:
        """What limits this collective at this size: 'latency' when the alpha term dominates,
        else the saturated link class ('nvlink', 'pcie', 'socket', 'net') or 'protocol'."""
        t, a, p = self.best(op, size_bytes, algo, proto)
        s = self.shape(op, a, p)
        return "latency" if s.alpha_s >= size_bytes * s.beta_s_per_byte else s.bottleneck

    def time_s(self, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> float:
        return self.best(op, size_bytes, algo, proto)[0]

    def choices(self, op: str, algo: str = "auto", proto: str = "auto") -> list[tuple[str, str]]:
        if op not in OPS:
            raise InputError(f"unknown operation (expected one of {', '.join(OPS)})", field="op", value=op)
        algos = ALGOS_FOR_OP[op]
        if algo != "auto":
            if algo not in algos and not (algo == "ring" and algos == ("direct",)):
                raise InputError(f"algorithm not available for {op} (available: {', '.join(algos)})",
                                 field="algo", value=algo)
            algos = (algo,) if algo in algos else algos
        protos = PROTOS if proto == "auto" else (proto,)
        if proto != "auto" and proto not in PROTOS:
            raise InputError("unknown protocol (expected ll, ll128, simple or auto)", field="proto", value=proto)
        return [(a, p) for a in algos for p in protos]

    def best(self, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> tuple[float, str, str]:
        """(seconds, algorithm, protocol): NCCL's tuner's choice among the allowed ones (``select="nccl"``,
        for the collectives NCCL tunes), or our fastest prediction; timed by this model."""
        key = (op, algo, proto)
        allowed = self._allowed.get(key)
        if allowed is None:
            allowed = self._allowed[key] = tuple(self.choices(op, algo, proto))
        if self.select == "nccl" and len(allowed) > 1 and op in TUNED_OPS:
            a, p = self.nccl.choose(op, size_bytes, allowed)
            return self.shape(op, a, p).time_s(size_bytes), a, p
        best = (math.inf, "", "")
        for a, p in allowed:
            t = self.shape(op, a, p).time_s(size_bytes)
            if t < best[0]:
                best = (t, a, p)
        return best
