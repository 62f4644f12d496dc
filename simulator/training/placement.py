"""Placing jobs on a cluster's servers: explicit node lists or a policy (packed, spread, random).

Jobs get whole servers (hosts), as cluster schedulers give large training jobs. Servers are
grouped by the leaf switches their NICs hang from (one group per ``hosts_per_leaf`` servers in
the presets' fabrics):

* ``packed``: each job, in order, takes the lowest-numbered free servers, so a job fills one leaf
  group before touching the next (least traffic through the spine);
* ``spread``: servers are dealt round-robin over the leaf groups (the first server of every group,
  then the second, ...), so every job spans as many groups as it can (most spine traffic);
* ``random``: a permutation of the free servers drawn from ``numpy.random.default_rng(seed)``.

Jobs with an explicit node list are placed first; the policy fills the others from what is left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from simulator.core.errors import InputError
from topologies.routing import Router, router_for

if TYPE_CHECKING:
    import networkx as nx

    from topologies.preset_cluster import PresetCluster

POLICIES = ("packed", "spread", "random")


def servers(topology: nx.Graph | PresetCluster | Router) -> list[int]:
    """Host indices of the servers holding GPUs, ascending."""
    router = router_for(topology)
    return sorted({router.host_of(g) for g in router.gpus})


def leaf_groups(topology: nx.Graph | PresetCluster | Router) -> dict[int, int]:
    """Host -> index of its leaf group (hosts whose NICs reach the same leaf switches share one)."""
    router = router_for(topology)
    leaves_of: dict[int, set[str]] = {}
    names = router.link_names
    for i, kind in enumerate(router.kind):       # NIC -> leaf links (of class net)
        if kind == "net":
            a, b = names[i]
            if router.node_kind(b) == "leaf" and router.node_kind(a) == "nic":
                leaves_of.setdefault(router.host_of(a), set()).add(str(b))
    ids: dict[tuple[str, ...], int] = {}
    return {h: ids.setdefault(tuple(sorted(leaves_of.get(h, ()))), len(ids)) for h in servers(router)}


def _order(router: Router, free: list[int], policy: str, seed: int | None) -> list[int]:
    if policy == "packed":
        return sorted(free)
    if policy == "spread":
        group = leaf_groups(router)
        rank: dict[int, int] = {}
        seen: dict[int, int] = {}
        for h in sorted(free):
            rank[h] = seen.get(group[h], 0)
            seen[group[h]] = rank[h] + 1
        return sorted(free, key=lambda h: (rank[h], group[h], h))
    if policy == "random":
        rng = np.random.default_rng(seed)
        return [free[i] for i in rng.permutation(len(free))]
    raise InputError(f"unknown placement policy (expected one of {', '.join(POLICIES)})",
                     field="placement.policy", value=policy)


def place(topology: nx.Graph | PresetCluster | Router, requests: Sequence[int | Sequence[int]], policy: str = "packed",
          seed: int | None = None) -> list[tuple[int, ...]]:
    """Servers for each job: ``requests[j]`` is a number of servers or an explicit list of host
    indices. Returns one sorted tuple of hosts per job; raises InputError naming the job when
    servers are unknown, shared by two jobs, or too few."""
    router = router_for(topology)
    all_hosts = servers(router)
    known = set(all_hosts)
    taken: dict[int, int] = {}
    out: list[tuple[int, ...] | None] = [None] * len(requests)
    for j, req in enumerate(requests):
        if isinstance(req, int):
            continue
        hosts = tuple(sorted(req))
        if not hosts or len(set(hosts)) != len(hosts):
            raise InputError("a node list needs distinct servers", field=f"jobs[{j}].node_list", value=list(req))
        for h in hosts:
            if h not in known:
                raise InputError(f"no such server (the cluster has servers 0..{max(all_hosts)})",
                                 field=f"jobs[{j}].node_list", value=h)
            if h in taken:
                raise InputError(f"server {h} is already given to job {taken[h]}", field=f"jobs[{j}].node_list",
                                 value=h)
            taken[h] = j
        out[j] = hosts
    free = _order(router, [h for h in all_hosts if h not in taken], policy, seed)
    for j, req in enumerate(requests):
        if out[j] is not None:
            continue
        n = int(req)  # type: ignore[arg-type]
        if n < 1:
            raise InputError("a job needs at least one server", field=f"jobs[{j}].nodes", value=n)
        if n > len(free):
            raise InputError(f"not enough free servers ({len(free)} left of {len(all_hosts)})",
                             field=f"jobs[{j}].nodes", value=n)
        out[j] = tuple(sorted(free[:n]))
        free = free[n:]
    return [o for o in out if o is not None]
