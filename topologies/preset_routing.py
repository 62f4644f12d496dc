"""Routes of a preset cluster as arrays: one server's routes mapped to every server by index tables.

:class:`PresetRouter` follows the rules of :mod:`topologies.route_rules` (same routes, same link ids as
``Router(cluster.to_graph())``; the tests compare them pair by pair) without a graph of the
cluster. A route between two GPUs is fixed by its *shape*: the two GPUs' places in their servers
and whether the servers are the same, under one leaf, or joined through the spine. Each shape is
routed once, inside server 0 (the template), as columns ``const + B * source server + B * destination
server + 2 * rails * leaf group``; :meth:`PresetRouter.hop_group` then builds the routes of a whole
flow group with a few numpy operations per shape, with no call per GPU pair (small groups: one
short loop per pair, no numpy; simulator.core.arrays).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from itertools import chain
from typing import TYPE_CHECKING, Iterable, Sequence

from simulator.core.arrays import use_arrays
from simulator.core.errors import InputError
from topologies.graph import ClusterInfo
from topologies.preset_cluster import PresetCluster
from topologies.route_rules import crossable, nearest, nic_for_gpu, server_path, uses_pxn
from topologies.route_table import RouteTable
from topologies.routing import Router
from topologies.smallgraph import bfs_lengths, dijkstra_path

if TYPE_CHECKING:
    import numpy as np

    from topologies.route_table import Routes

_SAME_HOST, _SAME_LEAF, _VIA_SPINE = 0, 1, 2
#: Items one GPU pair stands for when choosing plain Python or arrays (simulator.core.arrays): the
#: array path builds its routes with a few operations per shape instead of a loop per pair.
ROUTE_ITEMS = 16


class _Shape:
    """A route's link ids as ``const + hs * src + hd * dst + gs * src_group + gd * dst_group``
    (per column), and its hop kind id."""

    def __init__(self, const: list[int], src: list[int], dst: list[int], src_group: list[int],
                 dst_group: list[int], kind_id: int) -> None:
        self.columns = tuple(zip(const, src, dst, src_group, dst_group))
        self.kind_id = kind_id
        self._arrays = None
        # runs of consecutive columns with the same coefficients: one offset per run
        runs: list[tuple[tuple[int, int, int, int], list[int]]] = []
        for c, *coef in self.columns:
            if runs and runs[-1][0] == tuple(coef):
                runs[-1][1].append(c)
            else:
                runs.append((tuple(coef), [c]))
        self._runs = tuple((coef, tuple(consts)) for coef, consts in runs)

    def route(self, hs: int, hd: int, gs: int, gd: int) -> tuple[int, ...]:
        """The route of one pair from server ``hs`` (leaf group ``gs``) to ``hd`` (``gd``)."""
        out: tuple[int, ...] = ()
        for (s, d, sg, dg), consts in self._runs:
            offset = hs * s + hd * d + gs * sg + gd * dg
            out += tuple(map(offset.__add__, consts)) if offset else consts
        return out

    def links(self, places: np.ndarray) -> np.ndarray:
        """Routes (one row each) of pairs whose rows of ``places`` are (source server, destination
        server, source leaf group, destination leaf group)."""
        import numpy as np
        if self._arrays is None:
            cols = np.array(self.columns, dtype=np.int64).reshape(-1, 5).T
            self._arrays = (cols[0], cols[1:])
        const, coef = self._arrays
        return const + places @ coef


class PresetRouter(Router):
    """Router of a :class:`~topologies.preset_cluster.PresetCluster` (the same interface as
    :class:`~topologies.routing.Router`; ``G`` is built only when asked for)."""

    def __init__(self, cluster: PresetCluster) -> None:          # noqa: D107 (no Router.__init__: no graph)
        self.cluster = c = cluster
        self.info = c.info
        self.p2p = c.info.p2p
        self.socket_transport = c.info.socket_transport
        self.capacity_Bps = c.capacity_Bps
        self.datasheet_Bps = c.datasheet_Bps
        self.kind = c.kind
        self.latency_s = c.latency_s
        T = self._T = c.server
        self._tgpus = sorted((n for n, d in T.nodes.items() if d.get("kind") == "gpu"),
                             key=lambda n: (T.nodes[n]["local"], n))
        self._P = len(self._tgpus)
        self.gpus = [f"h{h}.{g[3:]}" for h in range(c.nodes) for g in self._tgpus]
        self._rank = {g: i for i, g in enumerate(self.gpus)}
        self._all_gpus = self.gpus             # a view (Router.for_hosts) keeps the cluster's list here
        self._tid = {pair: i for i, pair in enumerate(c.server_links)}
        B = c.block
        to_cpu = [i for i, (_, b) in enumerate(c.server_links) if T.nodes[b].get("kind") == "cpu"]
        self._to_cpu = {i + B * h for h in range(c.nodes) for i in to_cpu}
        self._hop_kind_ids: dict[tuple[str, float, bool], int] = {}
        self.hop_kinds: list[tuple[str, float, bool]] = []
        self._shapes: dict[tuple[int, int, int], _Shape] = {}
        self._tpaths: dict[tuple[str, str], tuple[int, ...]] = {}
        self._per_host: dict[tuple[str, ...] | None, dict[int, list[str]]] = {}
        self._tadj: dict[str, list[tuple[str | None, str, int, int]]] = {}
        self._tports: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
        self._tkind = {n: d["kind"] for n, d in T.nodes.items()}
        nics = sorted((n for n, d in T.nodes.items() if d.get("kind") == "nic"), key=lambda n: (T.nodes[n]["local"], n))
        self._tnics = nics
        self._rail_nic = {T.nodes[n]["local"]: n for n in reversed(nics)}
        self._has_nvswitch = any(d.get("kind") == "nvswitch" for d in T.nodes.values())

    def _info_of(self, hosts: set[int]) -> ClusterInfo:
        """Identical servers: the cluster's :class:`ClusterInfo` with ``hosts`` counting the servers."""
        return replace(self.info, hosts=len(hosts & set(range(self.cluster.nodes))))

    @cached_property
    def _link_objects(self) -> np.ndarray:
        """Every link id as one shared Python int (an object array): large groups' routes refer to
        these instead of holding an int object per entry (most of a 16384-GPU plan's memory)."""
        import numpy as np
        return np.array(range(len(self.capacity_Bps)), dtype=object)

    # ----------------------------------------------------------------- graph views
    @cached_property
    def G(self):                                    # noqa: N802 (Router's name)
        """The cluster as a networkx graph, built on first use."""
        return self.cluster.to_graph()

    @cached_property
    def link_names(self) -> list[tuple[str, str]]:
        return self.cluster.link_names

    @cached_property
    def link_id(self) -> dict[tuple[str, str], int]:
        return {pair: i for i, pair in enumerate(self.link_names)}

    def host_of(self, node: str) -> int:
        r = self._rank.get(node)
        if r is not None:
            return r // self._P
        dot = node.find(".")
        if dot > 1 and node[0] == "h" and node[1:dot].isdigit():
            return int(node[1:dot])
        return -1

    def _server_node(self, node: str) -> tuple[str, int]:
        """(server 0's name, server) of a server node; ("", -1) for a fabric switch."""
        h = self.host_of(node)
        return ("h0." + node[node.index(".") + 1:], h) if h >= 0 else ("", -1)

    def neighbors(self, node: str) -> list[tuple[str, int, int]]:
        t, h = self._server_node(node)
        if h < 0:
            return super().neighbors(node)
        adj = self._tadj.get(t)
        if adj is None:
            tid = self._tid
            adj = self._tadj[t] = [(None if m.startswith("rail") else m[3:], m, tid[(t, m)], tid[(m, t)])
                                   for m in self._T.adj[t]]
        off, pre = h * self.cluster.block, f"h{h}."
        return [(pre + own if own is not None else self.cluster.node_name(m, h), out + off, back + off)
                for own, m, out, back in adj]

    def ports(self, node: str, link_kind: str, peer_kind: str) -> list[tuple[int, int]]:
        r = self._rank.get(node)
        if r is not None:
            t, h = self._tgpus[r % self._P], r // self._P
        else:
            t, h = self._server_node(node)
            if h < 0:
                return super().ports(node, link_kind, peer_kind)
        key = (t, link_kind, peer_kind)
        found = self._tports.get(key)
        if found is None:        # server 0's, found once; server h's are the same links + h * block
            found = self._tports[key] = super().ports(t, link_kind, peer_kind)
        off = h * self.cluster.block
        return [(out + off, back + off) for out, back in found] if off else list(found)

    def node_kind(self, node: str) -> str:
        t, h = self._server_node(node)
        if h < 0:
            return "spine" if node == "spine" else "leaf"
        return self._tkind[t]

    def host_nodes(self, host: int, kind: str) -> list[str]:
        return [f"h{host}.{n[3:]}" for n, d in self._T.nodes.items() if d.get("kind") == kind]

    # ----------------------------------------------------------------- routes
    def route(self, src: str, dst: str) -> tuple[int, ...]:
        return self.hop_group(((src, dst),))[0][0]

    def hop(self, src: str, dst: str) -> tuple[tuple[int, ...], str, float, bool, int]:
        key, hs, hd, gs, gd = self._shape_key(src, dst)
        shape = self._shape(*self._unkey(key))
        return (shape.route(hs, hd, gs, gd), *self.hop_kinds[shape.kind_id], shape.kind_id)

    def hop_group(self, pairs: Iterable[tuple[str, str]]) -> tuple[Routes, set[int]]:
        pairs = list(pairs)
        if use_arrays(ROUTE_ITEMS * len(pairs)):
            import numpy as np
            try:
                ids = np.fromiter(map(self._rank.__getitem__, chain.from_iterable(pairs)), dtype=np.int64,
                                  count=2 * len(pairs))
            except KeyError as e:
                raise InputError("not a GPU of this topology", field="gpus", value=e.args[0]) from None
            return self._hop_group_arrays(ids[0::2], ids[1::2])
        keyed = [self._shape_key(a, b) for a, b in pairs]
        for key in sorted({k[0] for k in keyed}):        # shapes made in the order the array path makes them
            self._shape(*self._unkey(key))
        routes, kinds = [], set()
        for key, hs, hd, gs, gd in keyed:
            shape = self._shape(*self._unkey(key))
            kinds.add(shape.kind_id)
            routes.append(shape.route(hs, hd, gs, gd))
        return tuple(routes), kinds

    def gpu_ids(self, gpus: Sequence[str]) -> list[int]:
        try:
            return [self._rank[g] for g in gpus]          # places among the cluster's GPUs (views too)
        except KeyError as e:
            raise InputError("not a GPU of this topology", field="gpus", value=e.args[0]) from None

    def hop_group_ids(self, src: Sequence[int], dst: Sequence[int]) -> tuple[Routes, set[int]]:
        if not use_arrays(ROUTE_ITEMS * len(src)):
            names = self._all_gpus
            return self.hop_group([(names[a], names[b]) for a, b in zip(src, dst)])
        import numpy as np
        return self._hop_group_arrays(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64))

    def _hop_group_arrays(self, si: np.ndarray, di: np.ndarray) -> tuple[RouteTable, set[int]]:
        """:meth:`hop_group` of the GPUs ``si[i]`` to ``di[i]`` (places in the cluster) with a few numpy
        operations per shape (no call per GPU pair); the routes as a
        :class:`~topologies.route_table.RouteTable` (tuples made only if they are read)."""
        import numpy as np
        keys, hs, hd, gs, gd = self._shape_keys(si, di)
        places = np.stack([hs, hd, gs, gd], axis=1)
        order = np.argsort(keys, kind="stable")            # pairs grouped by shape, in pair order
        ordered = keys[order]
        bounds = np.concatenate(([0], np.flatnonzero(ordered[1:] != ordered[:-1]) + 1, [len(keys)]))
        kinds = set()
        blocks = []
        for s, key in enumerate(ordered[bounds[:-1]].tolist()):
            shape = self._shape(*self._unkey(key))
            kinds.add(shape.kind_id)
            members = order[bounds[s]:bounds[s + 1]]
            blocks.append((shape.links(places[members]), members))
        return RouteTable(blocks, len(si), self._link_objects), kinds

    def _shape_key(self, src: str, dst: str) -> tuple[int, int, int, int, int]:
        """One pair's shape key (source place, destination place, relation), servers and leaf groups."""
        try:
            si, di = self._rank[src], self._rank[dst]
        except KeyError as e:
            raise InputError("not a GPU of this topology", field="gpus", value=e.args[0]) from None
        P = self._P
        hs, hd = si // P, di // P
        per_leaf = self.cluster.leaves.hosts_per_leaf if self.cluster.leaves is not None else 1
        gs, gd = hs // per_leaf, hd // per_leaf
        rel = _SAME_HOST if hs == hd else _SAME_LEAF if gs == gd else _VIA_SPINE
        return ((si % P) * P + di % P) * 3 + rel, hs, hd, gs, gd

    def _shape_keys(self, si: np.ndarray, di: np.ndarray):
        """:meth:`_shape_key` of many pairs of GPUs (places in the cluster), as arrays."""
        import numpy as np
        hs, hd = si // self._P, di // self._P
        per_leaf = self.cluster.leaves.hosts_per_leaf if self.cluster.leaves is not None else 1
        gs, gd = hs // per_leaf, hd // per_leaf
        rel = np.where(hs == hd, _SAME_HOST, np.where(gs == gd, _SAME_LEAF, _VIA_SPINE))
        return ((si % self._P) * self._P + di % self._P) * 3 + rel, hs, hd, gs, gd

    def _unkey(self, key: int) -> tuple[int, int, int]:
        places, rel = divmod(key, 3)
        return places // self._P, places % self._P, rel

    def _shape(self, ts: int, td: int, rel: int) -> _Shape:
        key = (ts, td, rel)
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shapes[key] = self._build_shape(self._tgpus[ts], self._tgpus[td], rel)
        return shape

    def _build_shape(self, src: str, dst: str, rel: int) -> _Shape:
        """Route from ``src`` to ``dst`` (server 0's names) with the destination in the same server,
        under the same leaf, or behind the spine; as columns of :class:`_Shape`."""
        c = self.cluster
        B = c.block
        if rel == _SAME_HOST:
            local = list(self._local_route(src, dst))
            n = len(local)
            shape = _Shape(local, [B] * n, [0] * n, [0] * n, [0] * n, -1)
            example = tuple(local)
        else:
            if not self._tnics:
                raise InputError(f"GPU {self.gpus[0]!r} has no NIC to reach GPU on another server", field="nodes",
                                 value=self.gpus[0])
            nic_d = self._nic_of_gpu(dst)
            nic_s = self._rail_nic.get(self._T.nodes[nic_d]["local"]) or self._nic_of_gpu(src)
            rail_s = c.leaves.rail(self._T.nodes[nic_s]["local"])
            rail_d = c.leaves.rail(self._T.nodes[nic_d]["local"])
            up = list(self._up_route(src, nic_s)) + [self._tid[(nic_s, f"rail{rail_s}")]]
            down = [self._tid[(f"rail{rail_d}", nic_d)]] + list(self._local_route(nic_d, dst))
            const, s_, d_, sg, dg = up[:], [B] * len(up), [0] * len(up), [0] * len(up), [0] * len(up)
            if rel == _VIA_SPINE:
                step = 2 * c.leaves.rails
                const += [c.fabric_base + 2 * rail_s + 1, c.fabric_base + 2 * rail_d]
                s_ += [0, 0]
                d_ += [0, 0]
                sg += [step, 0]
                dg += [0, step]
            const += down
            s_ += [0] * len(down)
            d_ += [B] * len(down)
            sg += [0] * len(down)
            dg += [0] * len(down)
            shape = _Shape(const, s_, d_, sg, dg, -1)
            # an example of this shape: server 0 to server 1 (same leaf) or to the first server of group 1
            other = 1 if rel == _SAME_LEAF else c.leaves.hosts_per_leaf
            example = shape.route(0, other, 0, other // c.leaves.hosts_per_leaf)
        kind = (self.route_class(example), self.wire_latency_s(example), rel != _SAME_HOST)
        shape.kind_id = self._hop_kind_ids.setdefault(kind, len(self._hop_kind_ids))
        if shape.kind_id == len(self.hop_kinds):
            self.hop_kinds.append(kind)
        return shape

    # ------------------------------------------------------- inside server 0 (the template)
    def _local_route(self, a: str, b: str) -> tuple[int, ...]:
        """Server 0's link ids from node ``a`` to node ``b``; cached."""
        r = self._tpaths.get((a, b))
        if r is None:
            p = self._host_path(a, b) if a != b else (a,)
            r = self._tpaths[(a, b)] = tuple(self._tid[(x, y)] for x, y in zip(p, p[1:]))
        return r

    def _host_path(self, a: str, b: str) -> tuple[str, ...]:
        return tuple(server_path(a, b, self.p2p, self._in_server, self._tkind.get, self._dijkstra,
                                 lambda x, allowed: bfs_lengths(self._T, x, allowed)))

    def _in_server(self, n: str) -> bool:
        return self._T.nodes[n].get("host") == 0

    def _dijkstra(self, x: str, y: str, weight) -> list[str]:
        p = dijkstra_path(self._T, x, y, weight)
        if p is None:
            raise InputError(f"no route from {x!r} to {y!r} inside its server", field="links", value=f"{x} -> {y}")
        return p

    def _nearest_cpu(self, gpu: str, name: str) -> str:
        """Server 0's CPU nearest to its GPU ``gpu`` (route_rules.nearest); ``name`` is the GPU's own name for
        errors."""
        allowed = crossable((gpu,), self._in_server, self._tkind.get)
        return nearest(gpu, "cpu", bfs_lengths(self._T, gpu, allowed), self._tkind.get, name)

    def to_host_memory(self, gpu: str) -> tuple[int, ...]:
        t, h = self._server_node(gpu)
        return tuple(i + h * self.cluster.block for i in self._local_route(t, self._nearest_cpu(t, gpu)))

    def _switches_of(self, n: str) -> list[str]:
        return sorted(m for m in self._T.adj[n] if self._T.nodes[m].get("kind") == "pcie_switch")

    def _on_switch(self, sw: str, kind: str) -> list[str]:
        T = self._T
        return sorted((m for m in T.adj[sw] if T.nodes[m].get("kind") == kind), key=lambda m: (T.nodes[m]["local"], m))

    def _nic_of_gpu(self, gpu: str) -> str:
        """The NIC a GPU uses: the one on its own PCIe switch, balanced by local index, else nearest."""
        on_switch = [n for sw in self._switches_of(gpu) for n in self._on_switch(sw, "nic")]
        return nic_for_gpu(self._T.nodes[gpu]["local"], on_switch, self._tnics, self._P)

    def _owner_of_nic(self, nic: str) -> str | None:
        for sw in self._switches_of(nic):
            for g in self._on_switch(sw, "gpu"):
                if self._nic_of_gpu(g) == nic:
                    return g
        return None

    def _up_route(self, src: str, nic: str) -> tuple[int, ...]:
        """GPU to the NIC it sends through: over NVLink to the NIC's own GPU first (PXN) if needed; with
        peer-to-peer off (no NVLink between the GPUs, so no PXN) straight through PCIe and the CPUs."""
        owner = self._owner_of_nic(nic)
        if uses_pxn(src, owner, self._has_nvswitch, self.p2p):
            return self._local_route(src, owner) + self._local_route(owner, nic)
        return self._local_route(src, nic)
