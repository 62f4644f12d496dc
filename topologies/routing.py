"""Routes: which directed links a transfer from one GPU to another crosses.

Rules (what NCCL does on such machines; the in-server ones written once in topologies.route_rules, which
both routers ask):
- Inside a server, the path of highest bandwidth (NVLink through the NVSwitch plane if there is
  one, else PCIe). Other GPUs and NICs are never transit nodes. With peer-to-peer off
  (``ClusterInfo.p2p`` is False) GPU-to-GPU traffic goes up to the CPU and back down (host memory).
- Between servers, rail-aligned with PXN: the destination GPU's rail picks the NIC on both ends;
  if that NIC belongs to another GPU of the source server, data first crosses NVLink to that GPU
  (NCCL's PXN), then PCIe to the NIC, then the fabric, then the remote NIC's PCIe to the GPU.
- A GPU-to-GPU route that climbs to a CPU (across PCIe switches or sockets) is classed ``shm``:
  NCCL's default P2P level stops at PCIe switches (PXB), so such pairs go through host memory.

A route is a tuple of integer link ids; ``Router.capacity_Bps[id]``, ``Router.latency_s[id]`` and
``Router.kind[id]`` give each directed link's bandwidth (its datasheet ``bw_Bps`` x ``usable``: topologies.graph;
``Router.datasheet_Bps[id]`` without it), wire latency and class (plain lists). One builder makes every route from cached segments;
servers built from the same preset share one template so a 4096-GPU cluster routes in well under a
second.
"""

from __future__ import annotations

import copy
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Iterable, Sequence

from simulator.core.errors import InputError
from topologies.graph import ClusterInfo, cluster_info, gpus as gpu_nodes, info_from_attributes
from topologies.route_rules import crossable, nearest, nic_for_gpu, server_path, uses_pxn

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np

    from topologies.route_table import Routes

    from topologies.preset_cluster import PresetCluster


def router_for(topology: "nx.Graph | PresetCluster | Router") -> "Router":
    """The router of a topology graph, of a preset cluster's tables (no graph built), or ``topology``
    itself if it is a router already."""
    if isinstance(topology, Router):
        return topology
    from topologies.preset_cluster import PresetCluster
    if isinstance(topology, PresetCluster):
        from topologies.preset_routing import PresetRouter
        return PresetRouter(topology)
    return Router(topology)


class Router:
    """Link table and route cache for one topology graph."""

    @cached_property
    def kind_array(self) -> "np.ndarray":
        """:attr:`kind` as a numpy array of str (built on first use, for code that tests the kinds of thousands of
        route entries at once, e.g. ``router.kind_array[links] == "net"``)."""
        import numpy as np
        return np.array(self.kind)

    def __init__(self, G: nx.Graph) -> None:
        self.G = G
        self.gpus: list[str] = gpu_nodes(G)
        self.info: ClusterInfo = cluster_info(G)
        self.p2p = self.info.p2p
        self.socket_transport = self.info.socket_transport
        ids: dict[tuple[str, str], int] = {}
        cap, sheet, kind, lat = [], [], [], []
        for u, v, d in G.edges(data=True):
            for a, b in ((u, v), (v, u)):
                ids[(a, b)] = len(cap)
                sheet.append(float(d["bw_Bps"]))
                cap.append(sheet[-1] * float(d.get("usable", 1.0)))
                kind.append(d["kind"])
                lat.append(float(d.get("latency_s", 0.0)))
        self.link_id = ids
        self.capacity_Bps: list[float] = cap
        self.datasheet_Bps: list[float] = sheet       # capacity_Bps before the link's ``usable`` share
        self.kind: list[str] = kind
        self.latency_s: list[float] = lat
        self.link_names = [None] * len(cap)
        for (a, b), i in ids.items():
            self.link_names[i] = (a, b)
        self._host = {n: d.get("host", 0) for n, d in G.nodes(data=True)}
        self._kind = {n: d.get("kind") for n, d in G.nodes(data=True)}
        self._local = {n: d.get("local", 0) for n, d in G.nodes(data=True)}
        # PCIe switch neighbourhoods, for NIC choice (one pass over the edges)
        self._switches_of: dict[str, list[str]] = {}
        self._nics_on: dict[str, list[str]] = {}
        self._gpus_on: dict[str, list[str]] = {}
        for u, v in G.edges():
            for a, b in ((u, v), (v, u)):
                if self._kind[b] == "pcie_switch" and self._kind[a] in ("gpu", "nic"):
                    self._switches_of.setdefault(a, []).append(b)
                    (self._gpus_on if self._kind[a] == "gpu" else self._nics_on).setdefault(b, []).append(a)
        for d in (self._nics_on, self._gpus_on):
            for k in d:
                d[k].sort(key=lambda n: (self._local[n], str(n)))
        self._switches_of = {k: sorted(v) for k, v in self._switches_of.items()}
        for n, k in self._kind.items():
            if k in ("gpu", "nic"):
                self._switches_of.setdefault(n, [])
            elif k == "pcie_switch":
                self._nics_on.setdefault(n, [])
                self._gpus_on.setdefault(n, [])
        self._gpus_per_host: dict[int, int] = {}
        for g in self.gpus:
            self._gpus_per_host[self._host[g]] = self._gpus_per_host.get(self._host[g], 0) + 1
        self._templated = all(str(n).startswith(f"h{h}.") for n, h in self._host.items() if h >= 0)
        self._has_nvswitch = {self._host[n] for n, k in self._kind.items() if k == "nvswitch"}
        self._nics: dict[int, list[str]] = {}
        for n, k in self._kind.items():
            if k == "nic":
                self._nics.setdefault(self._host[n], []).append(n)
        for h in self._nics:
            self._nics[h].sort(key=lambda n: (G.nodes[n].get("local", 0), str(n)))
        self._template_host = self._host[self.gpus[0]] if self.gpus else 0
        self._leaf = {n: next((m for m in G[n] if self._kind[m] == "leaf"), None)
                      for n, k in self._kind.items() if k == "nic"}
        self._route_cache: dict[tuple[str, str], tuple[int, ...]] = {}
        self._per_host: dict[tuple[str, ...] | None, dict[int, list[str]]] = {}
        self._hop_cache: dict[tuple[str, str], tuple[tuple[int, ...], str, float, bool, int]] = {}
        self._hop_kind_ids: dict[tuple[str, float, bool], int] = {}
        self.hop_kinds: list[tuple[str, float, bool]] = []
        self._fabric_nodes = [n for n, k in self._kind.items() if k in ("leaf", "spine")]
        self._fabric_graph = G.subgraph(self._fabric_nodes)
        self._rail_nic = {(h, self._local[n]): n for h, ns in self._nics.items() for n in reversed(ns)}
        self._to_cpu = {i for i, (a, b) in enumerate(self.link_names) if self._kind[b] == "cpu"}
        self._tmpl_routes: dict[tuple[str, str], tuple[int, ...]] = {}
        self._up: dict[tuple[str, str], tuple[int, ...]] = {}
        self._local_cache: dict[tuple[str, str], tuple[int, ...]] = {}
        self._across: dict[tuple[str, str], tuple[int, ...]] = {}
        self._host_maps = self._build_host_maps()
        self._host_path = lru_cache(maxsize=None)(self._host_path_uncached)
        self._fabric_path = lru_cache(maxsize=None)(self._fabric_path_uncached)
        self._nic_of_gpu = lru_cache(maxsize=None)(self._nic_of_gpu_uncached)
        self._owner_of_nic = lru_cache(maxsize=None)(self._owner_of_nic_uncached)

    # ----------------------------------------------------------------- public
    def host_of(self, node: str) -> int:
        return self._host[node]

    def route(self, src: str, dst: str) -> tuple[int, ...]:
        """Directed link ids from GPU ``src`` to GPU ``dst`` (empty for src == dst); cached.

        The one route builder: a route is made of segments (inside a server, across the fabric),
        each cached as link ids; servers built from one template share their in-server segments."""
        key = (src, dst)
        r = self._route_cache.get(key)
        if r is None:
            r = self._route_cache[key] = self._route(src, dst)
        return r

    def for_hosts(self, hosts: Iterable[int]) -> "Router":
        """This router as one job on servers ``hosts`` sees the cluster: their GPUs only (in order),
        ``info.hosts`` counting those servers, the same routes and link ids (a route between two of
        them never leaves their servers and the fabric), caches shared with this router."""
        keep = set(hosts)
        view = copy.copy(self)
        view.gpus = [g for g in self.gpus if self.host_of(g) in keep]
        view._per_host = {}               # its own: the cache's key None stands for the view's GPUs
        view.info = self._info_of(keep)
        return view

    def _info_of(self, hosts: set[int]) -> ClusterInfo:
        """The :class:`ClusterInfo` of the graph restricted to ``hosts`` and the fabric."""
        gpus_on: dict[int, int] = {}
        nics_on: dict[int, int] = {}
        nvswitch = False
        for n, k in self._kind.items():
            h = self._host[n]
            if h in hosts:
                if k == "gpu":
                    gpus_on[h] = gpus_on.get(h, 0) + 1
                elif k == "nic":
                    nics_on[h] = nics_on.get(h, 0) + 1
            nvswitch = nvswitch or (k == "nvswitch" and (h in hosts or h < 0))     # fabric switches stay
        return info_from_attributes(self.G.graph, len(gpus_on), max(gpus_on.values(), default=0),
                                    max(nics_on.values(), default=0), nvswitch)

    def ranks_per_host(self, ranks: Sequence[str]) -> dict[int, list[str]]:
        """``ranks`` grouped by server, in rank order; cached per rank list (read it, never change it)."""
        # every GPU in order (most plans): one key, without hashing thousands of names each call
        key = None if len(ranks) == len(self.gpus) and ranks == self.gpus else tuple(ranks)
        per = self._per_host.get(key)
        if per is None:
            per = {}
            for r in self.gpus if key is None else key:
                per.setdefault(self.host_of(r), []).append(r)
            self._per_host[key] = per
        return per

    def path(self, src: str, dst: str) -> list[str]:
        """Node names from ``src`` to ``dst`` along :meth:`route`."""
        r = self.route(src, dst)
        return [src] + [self.link_names[i][1] for i in r]

    def _route(self, src: str, dst: str) -> tuple[int, ...]:
        if src == dst:
            return ()
        hs, hd = self._host[src], self._host[dst]
        if hs == hd:
            return self._local_route(src, dst)
        if not self._nics.get(hs):
            raise InputError(f"GPU {src!r} has no NIC to reach GPU {dst!r} on another server", field="nodes",
                             value=src)
        nic_d = self._nic_of_gpu(dst)
        # Rail-aligned: the destination's rail picks the NIC on both ends (NCCL's PXN).
        nic_s = self._rail_nic.get((hs, self._local[nic_d])) or self._nic_of_gpu(src)
        return self._up_route(src, nic_s) + self._across_route(nic_s, nic_d) + self._local_route(nic_d, dst)

    def _across_route(self, nic_s: str, nic_d: str) -> tuple[int, ...]:
        """NIC to NIC through the fabric (leaf, spines, leaf); cached per NIC pair."""
        key = (nic_s, nic_d)
        across = self._across.get(key)
        if across is None:
            la, lb = self._leaf.get(nic_s), self._leaf.get(nic_d)
            if la is None or lb is None:
                bad = nic_s if la is None else nic_d
                raise InputError(f"NIC {bad!r} is not connected to a leaf switch", field="links", value=bad)
            fab = [nic_s, *self._fabric_path(la, lb), nic_d]
            across = self._across[key] = tuple(self.link_id[(x, y)] for x, y in zip(fab, fab[1:]))
        return across

    def _up_route(self, src: str, nic: str) -> tuple[int, ...]:
        """GPU to the NIC it sends through: over NVLink to the NIC's own GPU first (PXN) if needed; with
        peer-to-peer off (no NVLink between the GPUs, so no PXN) straight through PCIe and the CPUs."""
        key = (src, nic)
        up = self._up.get(key)
        if up is None:
            owner = self._owner_of_nic(nic)
            if uses_pxn(src, owner, self._host[src] in self._has_nvswitch, self.p2p):
                up = self._local_route(src, owner) + self._local_route(owner, nic)
            else:
                up = self._local_route(src, nic)
            self._up[key] = up
        return up

    # Identical servers share route templates: a route inside server h is the template server's
    # route with each link id mapped to server h's copy of that link.
    def _build_host_maps(self) -> dict[int, dict[int, int]]:
        if not self._templated:
            return {}
        t = self._template_host
        pre_t = f"h{t}."
        tmpl = [(i, a[len(pre_t):], b[len(pre_t):]) for (a, b), i in self.link_id.items()
                if self._host.get(a) == t and self._host.get(b) == t]
        maps: dict[int, dict[int, int]] = {}
        for h in {v for v in self._host.values() if v >= 0}:
            pre = f"h{h}."
            m = {}
            for i, a, b in tmpl:
                j = self.link_id.get((pre + a, pre + b))
                if j is None:
                    return {}          # servers differ: each server is routed on its own
                m[i] = j
            maps[h] = m
        return maps

    def _local_route(self, a: str, b: str) -> tuple[int, ...]:
        """Route between two nodes of one server; cached. Identical servers map the template's."""
        r = self._local_cache.get((a, b))
        if r is None:
            if self._host_maps:
                h = self._host[a]
                pre = f"h{h}."
                key = (a[len(pre):], b[len(pre):])
                tr = self._tmpl_routes.get(key)
                if tr is None:
                    pre_t = f"h{self._template_host}."
                    p = [pre_t + n for n in self._host_path(key[0], key[1], self._template_host)]
                    tr = self._tmpl_routes[key] = tuple(self.link_id[(x, y)] for x, y in zip(p, p[1:]))
                m = self._host_maps[h]
                r = tuple(m[i] for i in tr)
            else:
                p = self._host_path(a, b, -1)
                r = tuple(self.link_id[(x, y)] for x, y in zip(p, p[1:]))
            self._local_cache[(a, b)] = r
        return r

    def hop(self, src: str, dst: str) -> tuple[tuple[int, ...], str, float, bool, int]:
        """(route, route class, wire latency in seconds, crosses servers, kind id) from GPU ``src`` to
        ``dst``; cached. The kind id numbers the distinct (class, wire latency, crosses) triples
        (``self.hop_kinds[id]``), so callers can collect them without re-hashing routes."""
        key = (src, dst)
        h = self._hop_cache.get(key)
        if h is None:
            r = self.route(src, dst)
            kind = (self.route_class(r), self.wire_latency_s(r), self._host[src] != self._host[dst])
            kid = self._hop_kind_ids.setdefault(kind, len(self._hop_kind_ids))
            if kid == len(self.hop_kinds):
                self.hop_kinds.append(kind)
            h = (r, *kind, kid)
            self._hop_cache[key] = h
        return h

    def hop_group(self, pairs: Iterable[tuple[str, str]]) -> tuple[tuple[tuple[int, ...], ...], set[int]]:
        """Routes of the GPU pairs ``pairs`` (in order) and the distinct kind ids of their hops
        (``self.hop_kinds``): what a collective's flow group needs, in one call."""
        hops = [self.hop(a, b) for a, b in pairs]
        return tuple(h[0] for h in hops), {h[4] for h in hops}

    def gpu_ids(self, gpus: Sequence[str]) -> list[int]:
        """Ids of GPUs for :meth:`hop_group_ids` (fixed for this router and its views)."""
        index = self.__dict__.get("_gpu_index")
        if index is None:
            index = self._gpu_index = ({g: i for i, g in enumerate(self.gpus)}, list(self.gpus))
        try:
            return [index[0][g] for g in gpus]
        except KeyError as e:
            raise InputError("not a GPU of this topology", field="gpus", value=e.args[0]) from None

    def hop_group_ids(self, src: Sequence[int], dst: Sequence[int]) -> tuple[Routes, set[int]]:
        """:meth:`hop_group` of the pairs ``(src[i], dst[i])`` given by :meth:`gpu_ids` (a list or an
        int array each): what layouts built with arrays of GPU ids ask for."""
        names = self._gpu_index[1]
        src, dst = (x.tolist() if hasattr(x, "tolist") else x for x in (src, dst))
        return self.hop_group(zip(map(names.__getitem__, src), map(names.__getitem__, dst)))

    def neighbors(self, node: str) -> list[tuple[str, int, int]]:
        """``(neighbour, link node -> neighbour, link neighbour -> node)`` in the graph's adjacency order."""
        return [(m, self.link_id[(node, m)], self.link_id[(m, node)]) for m in self.G[node]]

    def ports(self, node: str, link_kind: str, peer_kind: str) -> list[tuple[int, int]]:
        """``(link node -> neighbour, link neighbour -> node)`` of ``node``'s links of class
        ``link_kind`` to neighbours of class ``peer_kind`` (e.g. a GPU's NVLinks to NVSwitches), in
        :meth:`neighbors` order."""
        return [(out, back) for nb, out, back in self.neighbors(node)
                if self.kind[out] == link_kind and self.node_kind(nb) == peer_kind]

    def node_kind(self, node: str) -> str:
        """The node's class (topologies.graph.NODE_KINDS)."""
        return self._kind[node]

    def host_nodes(self, host: int, kind: str) -> list[str]:
        """Nodes of class ``kind`` (topologies.graph.NODE_KINDS) in server ``host``, in graph order."""
        return [n for n, k in self._kind.items() if k == kind and self._host[n] == host]

    def route_class(self, route: tuple[int, ...]) -> str:
        """Link class that sets a hop's protocol latency: socket (TCP transport) > net > shm (via CPU)
        > pcie > nvlink."""
        kinds = {self.kind[i] for i in route}
        if self.socket_transport and ("net" in kinds or not self._to_cpu.isdisjoint(route)):
            return "socket"
        if "net" in kinds:
            return "net"
        if not kinds:
            return "nvlink"
        if not self._to_cpu.isdisjoint(route):
            return "shm"
        if kinds == {"nvlink"}:
            return "nvlink"
        return "pcie"

    def to_host_memory(self, gpu: str) -> tuple[int, ...]:
        """Directed link ids from ``gpu`` to the nearest CPU of its server (a copy to pinned host
        memory, e.g. Gloo staging a CUDA tensor); the reverse links carry the copy back."""
        host = self._host[gpu]
        allowed = crossable((gpu,), lambda n: self._host.get(n) == host, self._kind.get)
        return self._local_route(gpu, nearest(gpu, "cpu", self._lengths(gpu, allowed), self._kind.get))

    def wire_latency_s(self, route: tuple[int, ...]) -> float:
        return float(sum(self.latency_s[i] for i in route))

    # ---------------------------------------------------------------- helpers
    def _host_path_uncached(self, a: str, b: str, h: int) -> tuple[str, ...]:
        if h >= 0:
            pre = f"h{h}."
            a, b = pre + a, pre + b
        host = self._host[a]
        p = server_path(a, b, self.p2p, lambda n: self._host.get(n) == host, self._kind.get, self._dijkstra,
                        self._lengths)
        if h >= 0:
            p = [n[len(f"h{h}."):] for n in p]
        return tuple(p)

    def _dijkstra(self, a: str, b: str, weight) -> list[str]:
        import networkx as nx
        try:
            return nx.dijkstra_path(self.G, a, b, weight=weight)
        except nx.NetworkXNoPath:
            raise InputError(f"no route from {a!r} to {b!r} inside its server", field="links",
                             value=f"{a} -> {b}") from None

    def _lengths(self, a: str, allowed) -> dict[str, int]:
        """Hop counts from ``a`` through the nodes ``allowed`` says a route may cross."""
        import networkx as nx
        return nx.single_source_shortest_path_length(self.G.subgraph([n for n in self.G if allowed(n)]), a)

    def _nic_of_gpu_uncached(self, gpu: str) -> str:
        """The NIC a GPU uses: the one on its own PCIe switch, balanced by local index, else nearest."""
        h = self._host[gpu]
        nics = self._nics.get(h, [])
        if not nics:
            raise InputError(f"GPU {gpu!r} is on a server without NIC but must talk to another server",
                             field="nodes", value=gpu)
        return nic_for_gpu(self._local[gpu], [n for sw in self._switches_of[gpu] for n in self._nics_on[sw]], nics,
                           self._gpus_per_host[h])

    def _owner_of_nic_uncached(self, nic: str) -> str | None:
        """The GPU sharing a PCIe switch with ``nic`` whose own NIC it is (None if no such GPU)."""
        for sw in self._switches_of[nic]:
            for g in self._gpus_on[sw]:
                if self._nic_of_gpu(g) == nic:
                    return g
        return None

    def _fabric_path_uncached(self, a: str, b: str) -> tuple[str, ...]:
        """Switch path between two leaf switches (through the spine layer when different)."""
        import networkx as nx
        try:
            return tuple(nx.shortest_path(self._fabric_graph, a, b))
        except nx.NetworkXNoPath:
            raise InputError(f"no path through the fabric from {a!r} to {b!r}", field="links",
                             value=f"{a} -> {b}") from None
