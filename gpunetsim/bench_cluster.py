"""Speed benchmark of shared-cluster simulation: ``python -m gpunetsim.bench_cluster``.

Times the built-in ``bench-4096`` scenario (4 jobs of 1024 GPUs, three DDP models and an
all-reduce loop, on 512 DGX H100 servers with a 2:1 spine and lognormal stragglers): loading it
(topology, workloads, placement) and simulating it (each job's plans, each job alone healthy and
imperfect, then all four together). Target on the 2-core development machine: under 30 s. It
prints wall and CPU time: on a shared machine the wall time includes other processes' turns.
"""

from __future__ import annotations

import argparse
import time

from gpunetsim.scenario import load_scenario, run_scenario
from simulator.core.vocabulary import counted


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpunetsim.bench_cluster", description=__doc__.splitlines()[0])
    p.add_argument("--scenario", default="bench-4096", help="scenario file or built-in name")
    a = p.parse_args(argv)
    t0, c0 = time.perf_counter(), time.process_time()
    sc = load_scenario(a.scenario)
    t1 = time.perf_counter()
    r = run_scenario(sc)
    t2, c2 = time.perf_counter(), time.process_time()
    print(f"scenario {sc.name}: {sc.gpus} GPUs, {counted(len(sc.jobs), 'job')}, {counted(r.iterations, 'iteration')} each")
    print(f"load {t1 - t0:.2f} s, simulate {t2 - t1:.2f} s, total {t2 - t0:.2f} s wall (target < 30 s), "
          f"{c2 - c0:.2f} s CPU (wall above CPU means other processes shared the cores)")
    for j in r.jobs:
        print(f"  {j.name:<12} {j.gpus:>5} GPUs  alone {j.alone_s * 1e3:9.3f} ms  shared {j.shared_s * 1e3:9.3f} ms  "
              f"slowdown {j.slowdown:.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
