"""Plan search, the public API: :func:`search` ranks the parallel plans of an LLM on candidate
clusters (:mod:`simulator.training.llm.plan_search` does the work), :func:`worker_pool` runs its
simulations on local processes, :func:`sensitivity` re-simulates the best plan with other NIC
bandwidths and GPU counts (the HTML report's last figures).

The plan is kept in :func:`sensitivity` (TP, PP, micro-batch, schedule, recomputation, sharding);
a different GPU count changes DP only (the global batch stays, so plans whose batch no longer
divides are left out).
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import replace

from simulator.core.errors import InputError
from simulator.training.llm.plan_search import (Cluster, ClusterSimulator, PlanResult, SearchOutcome,
                                                make_cluster, search)

__all__ = ["Cluster", "ClusterSimulator", "PlanResult", "SearchOutcome", "make_cluster", "search",
           "sensitivity", "worker_pool"]


def worker_pool(workers: int) -> Executor:
    """A local process pool (each worker keeps the routes of the clusters it has simulated)."""
    from concurrent.futures import ProcessPoolExecutor
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError("must be a positive integer", field="--workers", value=workers)
    return ProcessPoolExecutor(workers)


NIC_FACTORS = (0.25, 0.5, 1.0, 2.0)
GPU_FACTORS = (0.5, 1.0, 2.0, 4.0)


def sensitivity(best: PlanResult, sim: ClusterSimulator, nic_factors=NIC_FACTORS,
                gpu_factors=GPU_FACTORS) -> list[dict]:
    """Rows ``{axis: 'nic'|'gpus', factor, gpus, nic_Bps, iteration_s, tokens_per_s, mfu, fits}``."""
    base = best.cluster
    nic0 = base.nic_Bps or float(base.build().graph.get("nic_Bps") or 0.0)
    rows = []
    for f in nic_factors:
        if not nic0:
            break
        cl = replace(base, nic_Bps=nic0 * f)
        r = best.result if f == 1.0 else sim.simulate(cl, best.config)
        rows.append(_row("nic", f, cl.gpus, nic0 * f, r))
    for f in gpu_factors:
        gpus = int(base.gpus * f)
        dp = best.config.dp * f
        if gpus < 1 or dp != int(dp) or dp < 1:
            continue
        try:
            cl = make_cluster(base.topology, gpus, None, base.nic_Bps, base.oversubscription)
            cl = replace(cl, price_per_gpu_h=base.price_per_gpu_h)
            config = replace(best.config, dp=int(dp))
        except InputError:
            continue
        r = best.result if f == 1.0 else sim.simulate(cl, config)
        rows.append(_row("gpus", f, gpus, nic0, r))
    return rows


def _row(axis: str, factor: float, gpus: int, nic_Bps: float, r: dict) -> dict:
    return {"axis": axis, "factor": factor, "gpus": gpus, "nic_Bps": nic_Bps, "iteration_s": r["iteration_s"],
            "tokens_per_s": r["tokens_per_s"], "mfu": r["mfu"], "fits": r["fits"]}
