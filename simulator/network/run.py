"""Public entry points for one collective: predict (closed form) or simulate (discrete events)."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.network.closed_form import CostModel
from simulator.network.engine import simulate_plan
from simulator.collectives.plans import busbw_factor

DTYPE_SIZES = {"int8": 1, "uint8": 1, "half": 2, "float16": 2, "bfloat16": 2, "bf16": 2, "fp16": 2,
               "float": 4, "float32": 4, "int32": 4, "int": 4, "double": 8, "float64": 8, "int64": 8}
REDOP_OPS = ("all_reduce", "reduce_scatter", "reduce")
ROOTED_OPS = ("broadcast", "reduce")


@dataclass(frozen=True)
class CollectiveResult:
    """One collective at one size, with nccl-tests' derived figures."""

    op: str
    size_bytes: int
    gpus: int
    time_s: float
    algo: str
    proto: str
    engine: str

    @property
    def algbw_GBps(self) -> float:
        return self.size_bytes / self.time_s / 1e9 if self.time_s > 0 else 0.0

    @property
    def busbw_GBps(self) -> float:
        return self.algbw_GBps * busbw_factor(self.op, self.gpus)

    def as_dict(self) -> dict:
        return {"op": self.op, "bytes": self.size_bytes, "gpus": self.gpus, "time_s": self.time_s,
                "algbw_GBps": self.algbw_GBps, "busbw_GBps": self.busbw_GBps, "algo": self.algo,
                "proto": self.proto, "engine": self.engine}


def run_collective(model: CostModel, op: str, size_bytes: int, algo: str = "auto", proto: str = "auto",
                   engine: str = "des") -> CollectiveResult:
    """Choose algorithm/protocol with the closed form (as NCCL's tuner does), then time it.

    ``engine="des"`` runs the discrete-event simulation of the chosen schedule;
    ``engine="closed"`` returns the alpha-beta prediction.
    """
    t, a, p = model.best(op, size_bytes, algo, proto)
    if engine == "des":
        t, _ = simulate_plan(model.router, model.params, model.shape(op, a, p).plan, size_bytes)
    return CollectiveResult(op, int(size_bytes), model.ranks, t, a, p, engine)


def nccl_sizes(min_bytes: int, max_bytes: int, factor: float = 2.0) -> list[int]:
    """Sizes as nccl-tests steps them: min, min*f, ... up to max (inclusive)."""
    sizes, s = [], float(min_bytes)
    while s <= max_bytes * (1 + 1e-12):
        sizes.append(int(s))
        s = s * factor
    return sizes
