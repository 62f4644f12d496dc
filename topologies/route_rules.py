"""The route rules inside a server, written once for both routers.

:class:`topologies.routing.Router` routes a graph of the whole cluster; :class:`topologies.preset_routing.PresetRouter`
routes one preset server's template and maps it to every server. Both ask the rules here (what NCCL does on such
machines; topologies.routing's docstring), giving them their own graph operations:

* :func:`server_path`: the path of highest bandwidth (weight ``1 / bw_Bps`` per link) between two nodes of one server,
  crossing no GPU or NIC but its own two ends (:func:`crossable`); between two GPUs with peer-to-peer off, a trip
  through host memory: up to the CPU nearest the sender, then down to the receiver, each leg crossing no GPU but its
  own end (back through the sender and its NVLink would be peer-to-peer).
* :func:`nearest`: the node of a class fewest hops away, ties by name.
* :func:`uses_pxn`: a GPU sends through another GPU's NIC over NVLink first (NCCL's PXN) only where the server has
  an NVSwitch plane and peer-to-peer is on.
* :func:`nic_for_gpu`: the NIC a GPU uses.
"""

from __future__ import annotations

from typing import Callable, Sequence

from simulator.core.errors import InputError

NOT_TRANSIT = ("gpu", "nic")
"""Node classes a route inside a server never passes through (only starts or ends at)."""

Weight = Callable[[str, str, dict], "float | None"]


def crossable(ends: Sequence[str], in_server: Callable[[str], bool],
              kind_of: Callable[[str], str | None]) -> Callable[[str], bool]:
    """Nodes a leg between ``ends`` may cross: its server's (``in_server``), no GPU or NIC but its own ends."""
    return lambda n: in_server(n) and (n in ends or kind_of(n) not in NOT_TRANSIT)


def leg_weight(ok: Callable[[str], bool]) -> Weight:
    """Dijkstra's edge weight of a leg: ``1 / bw_Bps`` (the widest path), None (no edge) through a node not ``ok``."""
    return lambda u, v, d: 1.0 / d["bw_Bps"] if ok(u) and ok(v) else None


def nearest(a: str, kind: str, lengths: dict[str, int], kind_of: Callable[[str], str | None], name: str = "") -> str:
    """The node of class ``kind`` fewest hops from ``a`` (``lengths``: hop counts through the nodes a route may
    cross), ties broken by name; ``name`` is ``a``'s name for the error (default ``a``)."""
    cands = sorted((d, str(n)) for n, d in lengths.items() if kind_of(n) == kind)
    if not cands:
        raise InputError(f"{name or a!r} reaches no {kind} node in its server", field="links", value=name or a)
    return cands[0][1]


def server_path(a: str, b: str, p2p: bool, in_server: Callable[[str], bool], kind_of: Callable[[str], str | None],
                shortest: Callable[[str, str, Weight], list[str]],
                lengths: Callable[[str, Callable[[str], bool]], dict[str, int]]) -> list[str]:
    """Nodes from ``a`` to ``b`` inside their server (module docstring). ``shortest(x, y, weight)``: the router's
    Dijkstra path (networkx's tie-breaking; raises when there is none); ``lengths(x, allowed)``: hop counts from
    ``x`` through ``allowed`` nodes."""
    if kind_of(a) == "gpu" and kind_of(b) == "gpu" and not p2p:
        cpu = nearest(a, "cpu", lengths(a, crossable((a,), in_server, kind_of)), kind_of)
        return (shortest(a, cpu, leg_weight(crossable((a, cpu), in_server, kind_of)))
                + shortest(cpu, b, leg_weight(crossable((cpu, b), in_server, kind_of)))[1:])
    return shortest(a, b, leg_weight(crossable((a, b), in_server, kind_of)))


def uses_pxn(src: str, owner: str | None, nvswitch: bool, p2p: bool) -> bool:
    """Whether GPU ``src`` reaches the NIC owned by GPU ``owner`` over NVLink to ``owner`` first (NCCL's PXN): only
    with an NVSwitch plane in the server (``nvswitch``) and peer-to-peer on; else straight through PCIe (and the
    CPUs)."""
    return owner is not None and owner != src and nvswitch and p2p


def nic_for_gpu(local_index: int, switch_nics: Sequence[str], server_nics: Sequence[str], gpus_per_server: int) -> str:
    """The NIC of the GPU of place ``local_index``: one on its own PCIe switch(es) (``switch_nics``), balanced by
    place; else the server's NICs (``server_nics``, by place) shared by blocks of consecutive GPUs."""
    if switch_nics:
        return switch_nics[local_index % len(switch_nics)]
    per = max(1, -(-gpus_per_server // len(server_nics)))
    return server_nics[min(len(server_nics) - 1, local_index // per)]
