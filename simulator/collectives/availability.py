"""Which of NCCL's algorithms a topology allows for a collective, and why not when it does not.

NCCL's rules (tuning.cc, nvls.cc): NVLS needs NVLS hardware inside one NVLink domain (and at most
NCCL_MAX_NVLS_ARITY ranks for all_gather / reduce_scatter); NVLS-Tree needs NVLS and several domains;
CollNet needs CollNet on (``G.graph["collnet"]``: NCCL_COLLNET_ENABLE=1 on SHARP-capable switches) and
several servers, CollNet Direct an NVSwitch and at most 8 GPUs per server as well; with CollNet on,
NVLS all_reduce runs across servers too (SHARP between them); PAT needs one GPU per server on several
servers. An algorithm newer than the NCCL asked for (nccl_constants.ALGO_FROM) is not available either.
``auto`` chooses among the available ones.
"""

from __future__ import annotations

from simulator.collectives.algorithms import ALGOS_FOR_OP, MAX_NVLS_ARITY
from simulator.collectives.nccl_constants import ALGO_FROM, MAX_DIRECT_ARITY, NVLS_ACROSS_SERVERS_FROM, ll128_capable
from simulator.core.vocabulary import NCCL_CURRENT, NcclVersion
from topologies.routing import Router


def _domains(router: Router, ranks: list[str]) -> tuple[int, int]:
    """(servers, most ranks on one server) of ``ranks``."""
    per = router.ranks_per_host(ranks)
    return len(per), max(map(len, per.values()))


def why_unavailable(router: Router, op: str, algo: str, ranks: list[str] | None = None,
                    nccl_version: NcclVersion = NCCL_CURRENT) -> str | None:
    """None if ``algo`` can run ``op`` on ``ranks`` (default: every GPU) with NCCL ``nccl_version``, else the
    reason."""
    if algo not in ALGOS_FOR_OP.get(op, ()):
        return f"{op} has no {algo} algorithm"
    first = ALGO_FROM.get(algo)
    if first is not None and nccl_version < first:
        return f"NCCL runs {algo} from {NcclVersion(*first)} on (this plans for NCCL {nccl_version})"
    info = router.info
    if algo in ("ring", "tree", "direct"):
        return None
    if algo in ("collnet_direct", "collnet_chain") and not info.collnet:
        return ("CollNet is off (NCCL_COLLNET_ENABLE=0): --collnet on, on a fabric whose switches "
                "reduce (--sharp, or sharp: true in a topology file)")
    rk = list(ranks) if ranks is not None else router.gpus
    nodes, max_ppn = _domains(router, rk)
    why = None
    if algo in ("nvls", "nvls_tree"):
        if not (info.nvswitch and info.compute_capability >= 90):
            why = "NVLS needs an NVSwitch plane (gen3+) and compute capability 9.0+"
        elif not info.nvls:
            why = "NVLS is off (--nvls off / NCCL_NVLS_ENABLE=0, or GPU traffic through the host)"
        elif algo == "nvls" and nodes > 1 and not (info.collnet and op == "all_reduce"):
            why = ("NVLS runs inside one NVLink domain; across domains NCCL runs nvls_tree "
                   "(or all_reduce NVLS with SHARP between servers: --collnet on)")
        elif algo == "nvls" and nodes > 1 and nccl_version < NVLS_ACROSS_SERVERS_FROM:
            why = ("NCCL runs NVLS across servers (IB SHARP between them) from "
                   f"{NcclVersion(*NVLS_ACROSS_SERVERS_FROM)} on (this plans for NCCL {nccl_version})")
        elif algo == "nvls_tree" and nodes == 1:
            why = "NVLS-Tree needs several NVLink domains (servers)"
        elif algo == "nvls" and op != "all_reduce" and len(rk) > MAX_NVLS_ARITY:
            why = f"NVLS all_gather/reduce_scatter takes at most {MAX_NVLS_ARITY} GPUs"
    elif algo in ("collnet_direct", "collnet_chain"):
        if nodes == 1:
            why = "CollNet needs several servers"
        elif algo == "collnet_direct" and not info.nvswitch:
            why = "CollNet Direct needs an NVSwitch inside the server"
        elif algo == "collnet_direct" and max_ppn > MAX_DIRECT_ARITY + 1:
            why = (f"CollNet Direct takes at most {MAX_DIRECT_ARITY + 1} GPUs per server; this topology has "
                   f"{max_ppn} (--gpus)")
    elif algo == "pat":
        if nodes == 1:
            why = "PAT needs several servers (one GPU on each)"
        elif max_ppn != 1:
            why = (f"PAT runs with one GPU per server (NCCL 2.23+, its tuner's rule); this topology has "
                   f"{max_ppn} GPUs per server (--gpus 1 runs one per server)")
    return why


def available(router: Router, op: str, nccl_version: NcclVersion = NCCL_CURRENT) -> tuple[str, ...]:
    """The algorithms NCCL ``nccl_version`` could run for ``op`` on every GPU of ``router``'s topology."""
    return tuple(a for a in ALGOS_FOR_OP[op] if why_unavailable(router, op, a, None, nccl_version) is None)


def ll128_by_default(router: Router, ranks: list[str] | None = None, nccl_version: NcclVersion = NCCL_CURRENT) -> bool:
    """Whether NCCL ``nccl_version`` enables its LL128 protocol on ``ranks`` (default: every GPU) with NCCL_PROTO unset.

    tuning.cc enables LL128 by default only on the GPUs it has checked (nccl_constants.ll128_capable: Volta and
    Ampere always, Hopper from 2.15, Blackwell and any other GPU from compute capability 7.0 from 2.25) and only
    where the ring and tree graphs' path between the GPUs of a server is NVLink (``typeIntra <= PATH_NVB`` in 2.20.3's
    tuning.cc, ``PATH_NVL`` in 2.7.5's and 2.17.1's: the same on NVSwitch servers; with one GPU per server there is
    no such path): GPUs joined by NVLink with peer-to-peer on. With peer-to-peer off (NCCL_P2P_DISABLE=1: host
    memory, or the socket transport) the path runs through the CPU, and PCIe-only servers have no NVLink: NCCL then
    runs LL or Simple, LL128 only when NCCL_PROTO asks for it. Its conditions between servers (``typeInter``, the
    GPU-NIC path) are not modelled here."""
    if not ll128_capable(router.info.compute_capability, nccl_version):
        return False
    rk = list(ranks) if ranks is not None else router.gpus
    _, max_ppn = _domains(router, rk)
    if max_ppn == 1:
        return True
    if not router.info.p2p:
        return False
    kind = router.kind
    return any(kind[out] == "nvlink" for _, out, _ in router.neighbors(rk[0]))
