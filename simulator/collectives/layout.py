"""Collective layouts: the flows of one algorithm on one set of ranks before the protocol is chosen.

A layout is plain data shared by every protocol's plan: flow groups (routes and payload bytes per
byte of the collective), the distinct hop classes it crosses (for latency) and NCCL's latency step
counts. Builders for each algorithm (simulator.collectives.plans for ring/tree/direct,
simulator.collectives.nvls for NVLS and NVLS-Tree, simulator.collectives.innet for CollNet and
PAT) return :class:`Layout`; ``simulator.collectives.plans.build_plan`` turns one into a plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from simulator.collectives.algorithms import nvls_chunk_bytes
from simulator.core.arrays import use_arrays
from topologies.route_table import same_route_set
from topologies.routes import LinkUses
from topologies.routing import Router

if TYPE_CHECKING:
    import numpy as np

    from topologies.route_table import Routes

#: Items one rank of a layout stands for when choosing hops by name or by arrays of GPU ids
#: (simulator.core.arrays): as many as a hop's route (topologies.preset_routing.ROUTE_ITEMS).
HOP_ITEMS = 16


@dataclass(frozen=True)
class LayoutGroup:
    """A group before protocol choice: routes, payload bytes per byte of S, hop classes."""

    routes: Routes                 # tuples of link ids, or a table of them (topologies.route_table)
    payload_per_byte: float
    label: str
    shm: bool
    socket: bool = False
    in_network: str = ""           # the switch that reduces / multicasts: "nvswitch" (NVLS), "sharp" (CollNet)
    weights: tuple[float, ...] | None = None   # flows per route (default 1 each; see LinkUses.of)
    inter: bool = False            # some hop crosses servers (the network)

    @cached_property
    def uses(self) -> LinkUses:
        """Distinct links of ``routes`` and how often each is crossed; shared by the plans of every
        protocol built on this layout."""
        return LinkUses.of(self.routes, self.weights)


@dataclass(frozen=True)
class Chunking:
    """How a pipelined algorithm cuts a collective into chunks (NCCL's NVLS kernels): the chunk for a
    size follows NCCL's ``steps``; ``concurrent_ops`` chunks move at once (channels x heads), and
    the pipeline drains ``fill_rounds`` rounds of them after the last one enters. The engines move
    ``pad_bytes(S)`` more bytes at the plan's own rate: the fill, paid as data would be. Each round
    of chunks also costs ``step_overhead_s`` besides its bytes (the kernel's flag waits and
    synchronisation per chunk step): ``overhead_s(S)``, S / (chunk x concurrent_ops) rounds of it, so a
    size NCCL cuts into smaller chunks runs at a lower rate, not only with a smaller fill."""

    concurrent_ops: int
    max_chunk_bytes: int
    steps: tuple[tuple[int, int], ...]
    fill_rounds: float = 0.0
    step_overhead_s: float = 0.0

    def chunk_bytes(self, size_bytes: float) -> int:
        return nvls_chunk_bytes(size_bytes, self.concurrent_ops, self.steps, self.max_chunk_bytes)

    def pad_bytes(self, size_bytes: float) -> float:
        if self.fill_rounds <= 0 or size_bytes <= 0:
            return 0.0
        return self.fill_rounds * self.chunk_bytes(size_bytes) * self.concurrent_ops

    def overhead_s(self, size_bytes: float) -> float:
        """Seconds the chunk steps cost besides their bytes: rounds of chunks x ``step_overhead_s``."""
        if self.step_overhead_s <= 0 or size_bytes <= 0:
            return 0.0
        return self.step_overhead_s * size_bytes / (self.chunk_bytes(size_bytes) * self.concurrent_ops)


@dataclass(frozen=True)
class RingLoops:
    """NCCL's Simple ring moves a collective in loops of ``loop_bytes`` (nccl_constants.ring_loop_bytes), each
    loop a full round of the ring's steps. Where NCCL flushes every GPUDirect receive from the network
    (nccl_constants.flushes_gdr_receives; Simple only: LL and LL128 carry their flags in the data), each loop's
    receives pay the flush round again: ``cost_s`` a loop. The plan's per-call cost holds the first loop's, so a
    call of S pays ``cost_s x (ceil(S / loop_bytes) - 1)`` more (:meth:`overhead_s`)."""

    loop_bytes: int
    cost_s: float

    def overhead_s(self, size_bytes: float) -> float:
        """Seconds of the loops after the first: ``cost_s`` each."""
        if self.cost_s <= 0 or size_bytes <= self.loop_bytes:
            return 0.0
        return self.cost_s * (math.ceil(size_bytes / self.loop_bytes) - 1)


@dataclass(frozen=True)
class Layout:
    groups: tuple[LayoutGroup, ...]
    intra: tuple[tuple[str, float], ...]    # distinct (class, wire latency) of intra-server hops
    inter: tuple[tuple[str, float], ...]    # the same for hops between servers
    steps_intra: int                        # latency steps (NCCL's counting)
    steps_inter: int
    worst_of_both: bool = False             # one step whose latency is the worst hop of either kind
    chunking: Chunking | None = None        # fill_rounds is set from the parameters by build_plan
    channels: int | None = None             # channel count to report (default: the ring/tree rule)
    extra_latency_s: float = 0.0            # fixed latency besides the steps (NCCL's per-rank terms)
    busbw_cap_Bps: float = math.inf         # the kernel's own ceiling on bus bandwidth (NVLS-Tree's channels)


def layout_group(router: Router, pairs, payload: float, label: str, acc) -> LayoutGroup:
    """The group of GPU-to-GPU hops ``pairs``; records their hop classes in ``acc``."""
    return _group(router, *router.hop_group(pairs), payload, label, acc)


def layout_group_ids(router: Router, src: np.ndarray, dst: np.ndarray, payload: float, label: str,
                     acc) -> LayoutGroup:
    """:func:`layout_group` of the hops ``src[i] -> dst[i]`` given as arrays of GPU ids (:func:`gpu_grid`)."""
    return _group(router, *router.hop_group_ids(src, dst), payload, label, acc)


def gpu_grid(router: Router, per_host: dict[int, list[str]]) -> np.ndarray | None:
    """The ranks of ``per_host`` as a (servers in order) x (ranks per server) array of GPU ids
    (``Router.gpu_ids``), from which large layouts make their hops with array operations instead
    of a Python tuple of names per hop; None where the servers hold different numbers of ranks or
    the layout is small (simulator.core.arrays): its hops are then made by name. Both give the
    same hops in the same order (tests/test_arrays.py)."""
    sizes = {len(g) for g in per_host.values()}
    n = sum(map(len, per_host.values()))
    if len(sizes) != 1 or not use_arrays(HOP_ITEMS * n):
        return None
    import numpy as np
    hosts = sorted(per_host)
    return np.array(router.gpu_ids([g for h in hosts for g in per_host[h]]), dtype=np.int64).reshape(len(hosts), -1)


def rotated(grid: np.ndarray, k: int) -> np.ndarray:
    """Each server's ranks rotated to start at its ``k``-th (``g[k:] + g[:k]`` per row)."""
    import numpy as np
    return np.roll(grid, -k, axis=1) if k else grid


def successors(order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A ring's hops: every rank of ``order`` to the next, the last to the first."""
    import numpy as np
    return order, np.roll(order, -1)


def chain_hops(chains: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's chain up (``c[i+1] -> c[i]``) then down (``c[i] -> c[i+1]``), row after row."""
    import numpy as np
    return (np.concatenate([chains[:, 1:], chains[:, :-1]], axis=1).ravel(),
            np.concatenate([chains[:, :-1], chains[:, 1:]], axis=1).ravel())


def both_ways(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hops ``a[i] -> b[i]`` and ``b[i] -> a[i]``, interleaved: (sources, destinations)."""
    import numpy as np
    return np.stack([a, b], axis=1).ravel(), np.stack([b, a], axis=1).ravel()


def tree_edges(N: int, mirror: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`binary_tree` as arrays (children, parents)."""
    import numpy as np
    idx = np.arange(N)[::-1] if mirror else np.arange(N)
    return idx[1:], idx[(np.arange(1, N) - 1) // 2]


def _group(router: Router, routes, kind_ids, payload: float, label: str, acc) -> LayoutGroup:
    kinds = [router.hop_kinds[k] for k in kind_ids]   # distinct (class, wire, crosses servers)
    for cls, wire, inter in kinds:
        acc["inter" if inter else "intra"].add((cls, wire))
    classes = {k[0] for k in kinds}
    return LayoutGroup(routes, payload, label, "shm" in classes, "socket" in classes,
                       inter=any(k[2] for k in kinds))


def merge(groups: list[LayoutGroup]) -> tuple[LayoutGroup, ...]:
    """Merge groups with identical routes (same links): their bytes add, their rate is shared.
    Order-free (the set of routes; their count keeps multiplicities apart); the sets are compared
    only between groups whose count of routes and distinct links, and smallest and largest link,
    agree, and so do their sets of links (implied by equal sets, and cheap: the link uses are needed
    for the plans anyway)."""
    merged: list[LayoutGroup] = []
    candidates: dict[tuple, list[int]] = {}
    for g in groups:
        if g.weights is not None:            # weighted routes: kept apart
            merged.append(g)
            continue
        key = (len(g.routes), len(g.uses), g.uses.span())
        same = candidates.setdefault(key, [])
        for i in same:
            if merged[i].uses.same_links(g.uses) and same_route_set(merged[i].routes, g.routes):
                uses = merged[i].uses
                merged[i] = replace(merged[i], payload_per_byte=merged[i].payload_per_byte + g.payload_per_byte)
                merged[i].__dict__["uses"] = uses          # the same routes: seed the cached property
                break
        else:
            same.append(len(merged))
            merged.append(g)
    return tuple(merged)


def hosts(router: Router, ranks: list[str]) -> dict[int, list[str]]:
    """Ranks per server, in rank order (the router's, cached: read it, never change it)."""
    return router.ranks_per_host(ranks)


def channels(router: Router, per_host: dict[int, list[str]]) -> int:
    """Ring/tree channels across servers: one per NIC of the server (rail-aligned), at most one per GPU."""
    if len(per_host) == 1:
        return 1
    nics = max(1, router.info.nics_per_host)
    return min(nics, min(len(g) for g in per_host.values())) if nics > 1 else 1


def channel_offset(channel: int, ranks_per_host: int, nics: int) -> int:
    """Where ring/tree channel ``channel`` starts in each server's list of ranks (the rank that meets the
    network): at a GPU of NIC ``channel % nics``. NCCL's search gives each channel a NIC in turn; GPUs
    share a NIC in blocks of ranks/NICs (the presets' NIC-to-GPU mapping), so with fewer NICs than GPUs (4
    for 8 A100s on AWS p4d) a channel starts every ranks/NICs GPUs and the channels spread over every NIC;
    with a NIC per GPU it is the channel's own index."""
    per_nic = max(1, ranks_per_host // max(1, nics))
    return (channel * per_nic) % ranks_per_host


def binary_tree(N: int, mirror: bool) -> list[tuple[int, int]]:
    """(child, parent) edges of a balanced binary tree over N servers (heap layout);
    the mirrored tree puts the other half of the servers inside (NCCL's double binary tree)."""
    idx = list(range(N))[::-1] if mirror else list(range(N))
    return [(idx[i], idx[(i - 1) // 2]) for i in range(1, N)]
