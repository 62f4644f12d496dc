"""A small undirected graph with networkx's insertion order, for building and routing one server.

The presets describe a server once (``topologies.presets.server``) and every server of a preset
cluster is a copy of it, so the hot path never needs a full ``networkx.Graph`` (nor networkx's
import, about 0.1 s). :class:`SmallGraph` implements the part of ``networkx.Graph`` the builders
call, with the same insertion-ordered adjacency, so its edge order (hence link ids) is the one a
``networkx.Graph`` built by the same calls would give; :func:`dijkstra_path` and
:func:`bfs_lengths` break ties exactly as ``networkx.dijkstra_path`` and
``networkx.single_source_shortest_path_length`` do.
"""

from __future__ import annotations

from heapq import heappop, heappush
from itertools import count
from typing import Any, Callable, Iterator


class SmallGraph:
    """Undirected graph: ``graph`` attributes, ``nodes[n]`` attribute dicts, ``adj[n][m]`` edge dicts."""

    def __init__(self) -> None:
        self.graph: dict[str, Any] = {}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.adj: dict[str, dict[str, dict[str, Any]]] = {}

    def add_node(self, n: str, **attr: Any) -> None:
        if n not in self.nodes:
            self.nodes[n] = {}
            self.adj[n] = {}
        self.nodes[n].update(attr)

    def add_edge(self, u: str, v: str, **attr: Any) -> None:
        for n in (u, v):
            if n not in self.nodes:
                self.add_node(n)
        d = self.adj[u].get(v, {})
        d.update(attr)
        self.adj[u][v] = d
        self.adj[v][u] = d

    def remove_nodes_from(self, nodes) -> None:
        for n in nodes:
            for m in self.adj.pop(n, {}):
                del self.adj[m][n]
            self.nodes.pop(n, None)

    def edges(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """``(u, v, data)`` in ``networkx.Graph.edges(data=True)`` order: nodes in insertion order,
        each with its neighbours not yet visited, in adjacency order."""
        seen: set[str] = set()
        for n, nbrs in self.adj.items():
            for m, d in nbrs.items():
                if m not in seen:
                    yield n, m, d
            seen.add(n)


def dijkstra_path(G: SmallGraph, a: str, b: str,
                  weight: Callable[[str, str, dict], float | None]) -> list[str] | None:
    """``networkx.dijkstra_path(G, a, b, weight)`` with the same tie-breaking; None if no path."""
    dist: dict[str, float] = {}
    seen = {a: 0.0}
    pred: dict[str, str] = {}
    c = count()
    fringe: list[tuple[float, int, str]] = [(0.0, next(c), a)]
    while fringe:
        d, _, v = heappop(fringe)
        if v in dist:
            continue
        dist[v] = d
        if v == b:
            break
        for u, e in G.adj[v].items():
            cost = weight(v, u, e)
            if cost is None:
                continue
            vu = d + cost
            if u not in dist and (u not in seen or vu < seen[u]):
                seen[u] = vu
                heappush(fringe, (vu, next(c), u))
                pred[u] = v
    if b not in dist:
        return None
    path = [b]
    while path[-1] != a:
        path.append(pred[path[-1]])
    return path[::-1]


def bfs_lengths(G: SmallGraph, a: str, allowed: Callable[[str], bool]) -> dict[str, int]:
    """Hop counts from ``a`` to every node reachable through ``allowed`` nodes."""
    lengths = {a: 0}
    level = [a]
    while level:
        nxt = []
        for v in level:
            for u in G.adj[v]:
                if u not in lengths and allowed(u):
                    lengths[u] = lengths[v] + 1
                    nxt.append(u)
        level = nxt
    return lengths
