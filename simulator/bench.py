"""Speed benchmark of the simulator itself: ``python -m simulator.bench``.

Prints the wall time of one discrete-event simulation of a 1 GiB all-reduce (ring, Simple, NCCL's
choice at that size) on 8, 64, 512 and 4096 GPUs of DGX-H100 servers, split into building the model
(topology, routes, plan) and running the simulation, and the closed form's predictions per second
on 64 GPUs once its plans are built. Targets on a 2-core machine: 4096 GPUs under 2 s; at least
100,000 closed-form predictions per second.
"""

from __future__ import annotations

import argparse
import time

import topologies
from simulator.network.closed_form import CostModel
from simulator.network.engine import simulate_plan

SIZE = 1 << 30


def time_des(gpus: int) -> tuple[float, float, float]:
    """(build seconds, simulate seconds, simulated time) for a 1 GiB all-reduce on ``gpus`` GPUs."""
    t0 = time.perf_counter()
    model = CostModel(topologies.build("dgx-h100", nodes=max(1, gpus // 8)))
    _, algo, proto = model.best("all_reduce", SIZE)
    plan = model.shape("all_reduce", algo, proto).plan
    t1 = time.perf_counter()
    simulated, _ = simulate_plan(model.router, model.params, plan, SIZE)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, simulated


def closed_form_rate(n: int = 200_000) -> float:
    model = CostModel(topologies.build("dgx-h100", nodes=8))
    for op in ("all_reduce", "all_gather", "reduce_scatter"):
        model.best(op, 1 << 20)          # build the plans once
    ops = ("all_reduce", "all_gather", "reduce_scatter")
    t0 = time.perf_counter()
    for i in range(n):
        model.best(ops[i % 3], 1 << (i % 34))
    return n / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m simulator.bench", description=__doc__.splitlines()[0])
    p.add_argument("--gpus", default="8,64,512,4096", help="comma-separated GPU counts")
    a = p.parse_args(argv)
    print(f"{'GPUs':>6} {'build (s)':>10} {'simulate (s)':>13} {'total (s)':>10} {'simulated time (ms)':>20}")
    for g in (int(x) for x in a.gpus.split(",")):
        b, s, sim = time_des(g)
        print(f"{g:>6} {b:>10.3f} {s:>13.3f} {b + s:>10.3f} {sim * 1e3:>20.3f}")
    rate = closed_form_rate()
    print(f"closed form (auto algorithm/protocol choice, 64 GPUs): {rate:,.0f} predictions/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
