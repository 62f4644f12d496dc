"""The tuner: which algorithm and protocol a collective runs at a given size.

``select="nccl"`` answers what NCCL's own tuner would run (its cost model, rebuilt in
simulator.collectives.nccl_model), for the operations NCCL tunes; everything else, and
``select="fastest"``, takes the pair a pricing function (a timer's prediction) says is fastest.
"""

from __future__ import annotations

import math
from typing import Callable

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
        if algo == "auto":
            algo = self.default_algo
        allowed = self.planner.choices(op, algo, proto)
        if len(allowed) == 1:
            return allowed[0]
        if self.select == "nccl" and op in TUNED_OPS:
            return self.planner.nccl.choose(op, size_bytes, allowed)
        best, pick = math.inf, allowed[0]
        for a, p in allowed:
            t = price(op, a, p, size_bytes)
            if t < best:
                best, pick = t, (a, p)
        return pick
