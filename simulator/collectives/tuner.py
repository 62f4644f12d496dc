"""The tuner: which algorithm and protocol a collective runs at a given size.

``select="nccl"`` answers what NCCL would run: its own tuner's choice (its cost model, rebuilt in
simulator.collectives.nccl_model) for the operations NCCL tunes, or a loaded tuner plugin's where it decides
(AWS's region tables: simulator.collectives.ofi_tuner), and for send_recv and all_to_all the
protocol of NCCL's p2p path, which has no tuner (LL up to 16 KiB per p2p channel of a peer, else Simple, never LL128:
simulator.collectives.p2p); everything else, and ``select="fastest"``, takes the pair a pricing function
(a timer's prediction) says is fastest.
"""

from __future__ import annotations

import math
from typing import Callable

from simulator.collectives.algorithms import ALGOS_FOR_OP
from simulator.collectives.nccl_model import TUNED_OPS
from simulator.collectives.planner import Planner
from simulator.core.errors import InputError

SELECTS = ("nccl", "fastest")

Price = Callable[[str, str, str, float], float]
"""(op, algo, proto, size_bytes) -> seconds."""


class Tuner:
    """Chooses (algorithm, protocol) among the planner's allowed pairs."""

    def __init__(self, planner: Planner, select: str = "nccl", default_algo: str = "auto") -> None:
        if select not in SELECTS:
            raise InputError("select must be 'nccl' or 'fastest'", field="select", value=select)
        self.planner = planner
        self.select = select
        self.default_algo = default_algo

    def choose(self, op: str, size_bytes: float, price: Price, algo: str = "auto",
               proto: str = "auto") -> tuple[str, str]:
        """The pair to run; ``price`` is consulted only where NCCL's choice does not apply."""
        decided = self.decided(op, size_bytes, algo, proto)
        if decided is not None:
            return decided
        allowed = self.planner.choices(op, self.default_algo if algo == "auto" else algo, proto)
        best, pick = math.inf, allowed[0]
        for a, p in allowed:
            t = price(op, a, p, size_bytes)
            if t < best:
                best, pick = t, (a, p)
        return pick

    def decided(self, op: str, size_bytes: float, algo: str = "auto",
                proto: str = "auto") -> tuple[str, str] | None:
        """The pair to run where no price enters: the only one allowed, NCCL's tuner's choice or NCCL's
        p2p protocol (``select="nccl"``); None where the fastest priced pair is taken."""
        if algo == "auto":
            algo = self.default_algo
        allowed = self.planner.choices(op, algo, proto)
        if len(allowed) == 1:
            return allowed[0]
        if self.select != "nccl":
            return None
        if op in TUNED_OPS:
            planner = self.planner
            return (planner.tuner_plugin is not None and planner.plugin_choice(op, size_bytes, allowed)) \
                or planner.nccl.choose(op, size_bytes, allowed)
        if ALGOS_FOR_OP[op] == ("direct",):
            want = self.planner.p2p_protocol(op, size_bytes)
            return next((a, p) for a, p in allowed if p == want)
        return None
