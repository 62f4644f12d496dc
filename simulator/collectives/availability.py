"""Which of NCCL's algorithms a topology allows for a collective, and why not when it does not.

NCCL's rules (tuning.cc, nvls.cc): NVLS needs NVLS hardware inside one NVLink domain (and at most
NCCL_MAX_NVLS_ARITY ranks for all_gather / reduce_scatter); NVLS-Tree needs NVLS and several domains;
CollNet needs SHARP-capable switches (``G.graph["collnet"]``) and several servers, CollNet Direct an
NVSwitch as well; PAT needs one GPU per server on several servers. ``auto`` chooses among the
available ones.
"""

from __future__ import annotations

from simulator.collectives.algorithms import ALGOS_FOR_OP, MAX_NVLS_ARITY
from topologies.routing import Router


def _domains(router: Router, ranks: list[str]) -> tuple[int, int]:
    """(servers, fewest ranks on one server) of ``ranks``."""
    per = router.ranks_per_host(ranks)
    return len(per), min(map(len, per.values()))


def why_unavailable(router: Router, op: str, algo: str, ranks: list[str] | None = None) -> str | None:
    """None if ``algo`` can run ``op`` on ``ranks`` (default: every GPU), else the reason."""
    if algo not in ALGOS_FOR_OP.get(op, ()):
        return f"{op} has no {algo} algorithm"
    rk = list(ranks) if ranks is not None else list(router.gpus)
    info = router.info
    nodes, ppn = _domains(router, rk)
    why = None
    if algo in ("nvls", "nvls_tree"):
        if not (info.nvswitch and info.compute_capability >= 90):
            why = "NVLS needs an NVSwitch plane (gen3+) and compute capability 9.0+"
        elif not info.nvls:
            why = "NVLS is off (--nvls off / NCCL_NVLS_ENABLE=0, or GPU traffic through the host)"
        elif algo == "nvls" and nodes > 1:
            why = "NVLS runs inside one NVLink domain; across domains NCCL runs nvls_tree"
        elif algo == "nvls_tree" and nodes == 1:
            why = "NVLS-Tree needs several NVLink domains (servers)"
        elif algo == "nvls" and op != "all_reduce" and len(rk) > MAX_NVLS_ARITY:
            why = f"NVLS all_gather/reduce_scatter takes at most {MAX_NVLS_ARITY} GPUs"
    elif algo in ("collnet_direct", "collnet_chain"):
        if not info.collnet:
            why = "the fabric's switches do not reduce (SHARP): --collnet on"
        elif nodes == 1:
            why = "CollNet needs several servers"
        elif algo == "collnet_direct" and not info.nvswitch:
            why = "CollNet Direct needs an NVSwitch inside the server"
    elif algo == "pat":
        if nodes == 1 or ppn != 1 or nodes != len(rk):
            why = "PAT runs with one GPU per server on several servers"
    return why


def available(router: Router, op: str) -> tuple[str, ...]:
    """The algorithms NCCL could run for ``op`` on every GPU of ``router``'s topology."""
    return tuple(a for a in ALGOS_FOR_OP[op] if why_unavailable(router, op, a) is None)
