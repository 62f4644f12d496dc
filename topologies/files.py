"""Topology files (YAML or JSON) with units, e.g.::

    name: two-gpus-one-link
    p2p: true
    nodes:
      - {name: gpu0, kind: gpu}
      - {name: gpu1, kind: gpu}
    links:
      - {a: gpu0, b: gpu1, kind: nvlink, bandwidth: "100 GB/s", latency: "1 us"}

Node fields: ``name`` (required), ``kind`` (gpu, nvswitch, pcie_switch, cpu, nic, leaf, spine),
``host`` (server index, default 0). Link fields: ``a``, ``b``, ``kind`` (nvlink, pcie, socket, net),
``bandwidth`` (per direction, e.g. "400 Gb/s", "900 GB/s"), ``latency`` (e.g. "1.5 us", default 0).
Top-level optional fields: ``name``, ``gpu_model``, ``p2p`` (default true), ``gdr`` (default true:
GPUDirect RDMA between GPUs and NICs; false stages every network byte through host memory, as NCCL does
where a GPU and its NIC are further apart than NCCL_NET_GDR_LEVEL), ``compute_capability``,
``gpus_per_nvlink_domain`` (multi-node NVLink, e.g. 72 for a GB200 NVL72: consecutive hosts whose
GPUs add up to that many share one NVLink domain; each domain becomes one server for routing and
for NCCL, as NCCL treats an NVLink domain as one node; a node's ``tray`` attribute keeps its host),
``sharp`` (default false: true says the fabric's InfiniBand switches reduce in the network, SHARP,
which turns NCCL's CollNet on unless ``--collnet off``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from simulator.core import limits
from simulator.core.errors import InputError
from simulator.core.inputs import read_structured
from simulator.core.units import parse_bandwidth, parse_time
from simulator.core.values import kind_of, switch, text
from topologies.graph import NODE_KINDS, LINK_KINDS, validate

if TYPE_CHECKING:
    import networkx as nx

_TOP = {"name", "gpu_model", "p2p", "gdr", "compute_capability", "nodes", "links", "description", "gpus_per_nvlink_domain",
        "sharp"}



def _node_name(value: object, src: str, field: str) -> str:
    """A node's name (or a link end naming one): a string, or a number taken as its text (``name: 0`` and ``a: 0``
    meet); a list, mapping, boolean or null is refused here, not read as the text ``['gpu0']`` (review s24)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise InputError("a node name is a non-empty string", source=src, field=field, value=value)
    return str(value)

def load_topology(path: str | Path) -> nx.Graph:
    """Read and validate a topology file; any problem raises InputError naming file, field, value."""
    src = str(path)
    data = read_structured(path, what="topology file")
    try:
        return _build(data, src)
    except InputError as e:
        raise e.within(src) from None


def _build(data: object, src: str) -> nx.Graph:
    if not isinstance(data, dict):
        raise InputError(f"a topology file must be a mapping with 'nodes' and 'links', not {kind_of(data)}",
                         source=src)
    unknown = set(data) - _TOP
    if unknown:
        raise InputError(f"unknown field (allowed: {', '.join(sorted(_TOP))})", source=src,
                         field=sorted(unknown)[0], value=sorted(unknown)[0])
    for key in ("nodes", "links"):
        if not isinstance(data.get(key), list) or not data[key]:
            raise InputError("must be a non-empty list", source=src, field=key, value=data.get(key))
    limits.GPUS.check(sum(1 for n in data["nodes"] if not isinstance(n, dict) or n.get("kind", "gpu") == "gpu"),
                      source=src, field="nodes")
    import networkx as nx
    G = nx.Graph()
    local_count: dict[tuple[int, str], int] = {}
    specs: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    for i, n in enumerate(data["nodes"]):
        f = f"nodes[{i}]"
        if not isinstance(n, dict) or "name" not in n:
            raise InputError("each node needs a 'name'", source=src, field=f, value=n)
        extra = set(n) - {"name", "kind", "host"}
        if extra:
            raise InputError("unknown node field (allowed: name, kind, host)", source=src,
                             field=f"{f}.{sorted(extra)[0]}", value=sorted(extra)[0])
        name, kind = _node_name(n["name"], src, f"{f}.name"), n.get("kind", "gpu")
        if kind not in NODE_KINDS:
            raise InputError(f"unknown node kind (expected one of {', '.join(NODE_KINDS)})", source=src,
                             field=f"{f}.kind", value=kind)
        host = n.get("host", 0)
        limits.check_count(host, source=src, field=f"{f}.host", low=0)     # YAML's true is not host 1
        if name in G or name in seen:
            raise InputError("duplicate node name", source=src, field=f"{f}.name", value=name)
        seen.add(name)
        specs.append((name, kind, host))
    domain = _nvlink_domains(data, specs, src)
    for name, kind, host in specs:
        h = domain.get(host, host)
        local = local_count.get((h, kind), 0)
        local_count[(h, kind)] = local + 1
        G.add_node(name, kind=kind, host=h, local=local, tray=host)
    for i, ln in enumerate(data["links"]):
        f = f"links[{i}]"
        if not isinstance(ln, dict):
            raise InputError("each link must be a mapping", source=src, field=f, value=ln)
        extra = set(ln) - {"a", "b", "kind", "bandwidth", "latency"}
        if extra:
            raise InputError("unknown link field (allowed: a, b, kind, bandwidth, latency)", source=src,
                             field=f"{f}.{sorted(extra)[0]}", value=sorted(extra)[0])
        ends = [_node_name(ln.get(end), src, f"{f}.{end}") for end in ("a", "b")]
        for end, name in zip(("a", "b"), ends):
            if name not in G:
                raise InputError("link to a missing node", source=src, field=f"{f}.{end}", value=ln.get(end))
        if ends[0] == ends[1]:
            raise InputError("a link must join two different nodes", source=src, field=f"{f}.b", value=ln["b"])
        kind = ln.get("kind")
        if kind not in LINK_KINDS:
            raise InputError(f"unknown link kind (expected one of {', '.join(LINK_KINDS)})", source=src,
                             field=f"{f}.kind", value=kind)
        if "bandwidth" not in ln:
            raise InputError("missing bandwidth", source=src, field=f"{f}.bandwidth")
        # with their units: 'bandwidth: 400' was 400 B/s ('out of range'), 'latency: 0.5' half a second
        bw = parse_bandwidth(ln["bandwidth"], field=f"{f}.bandwidth", unit=True)
        lat = parse_time(ln.get("latency", 0), field=f"{f}.latency", max_s=limits.MAX_LATENCY_S, unit=True)
        G.add_edge(ends[0], ends[1], kind=kind, bw_Bps=bw, latency_s=lat)
    hosts = sorted({d["host"] for _, d in G.nodes(data=True) if d["kind"] == "gpu"})
    per_host = max((local_count.get((h, "gpu"), 0) for h in hosts), default=0)
    p2p = switch(data.get("p2p", True), source=src, field="p2p")
    gdr = switch(data.get("gdr", True), source=src, field="gdr")      # GPUDirect RDMA between the GPUs and the NICs
    cc = data.get("compute_capability", 90)
    if isinstance(cc, bool) or not isinstance(cc, int) or not 10 <= cc <= 999:
        raise InputError("compute_capability is a whole number such as 90 (for 9.0)", source=src,
                         field="compute_capability", value=cc)
    sharp = switch(data.get("sharp", False), source=src, field="sharp")    # InfiniBand SHARP: switches reduce
    name = text(data.get("name", Path(src).stem), source=src, field="name")
    gpu_model = text(data.get("gpu_model", "GPU"), source=src, field="gpu_model", example="H100 SXM")
    G.graph.update(name=name, gpu_model=gpu_model,
                   p2p=p2p, gdr=gdr, compute_capability=cc, hosts=len(hosts), sharp=sharp,
                   gpus_per_host=per_host, datasheets="user topology file " + src)
    return validate(G, source=src)


def _nvlink_domains(data: dict, specs: list[tuple[str, str, int]], src: str) -> dict[int, int]:
    """Host -> NVLink domain index when ``gpus_per_nvlink_domain`` is given (else no regrouping):
    hosts in order, each domain filled with whole hosts up to exactly that many GPUs."""
    k = data.get("gpus_per_nvlink_domain")
    if k is None:
        return {}
    limits.check_count(k, source=src, field="gpus_per_nvlink_domain", words="must be a whole number of GPUs, e.g. 72")
    gpus: dict[int, int] = {}
    for _, kind, host in specs:
        if kind == "gpu":
            gpus[host] = gpus.get(host, 0) + 1
    mapping, filled, d = {}, 0, 0
    for host in sorted(gpus):
        if filled + gpus[host] > k:
            raise InputError(f"host {host}'s {gpus[host]} GPUs would split an NVLink domain of {k} GPUs "
                             f"(domains hold whole hosts)", source=src, field="gpus_per_nvlink_domain", value=k)
        mapping[host] = d
        filled += gpus[host]
        if filled == k:
            d, filled = d + 1, 0
    if filled:
        raise InputError(f"the last NVLink domain has {filled} GPUs, not {k}", source=src,
                         field="gpus_per_nvlink_domain", value=k)
    for _, kind, host in specs:          # hosts without GPUs (switch trays) join the domain before them
        if host not in mapping:
            mapping[host] = max((mapping[h] for h in mapping if h < host), default=0)
    return mapping
