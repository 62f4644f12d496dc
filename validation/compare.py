"""Predicted vs measured: collective times from the model against a measurement dataset.

A dataset's points are grouped by what configures the model: world size (ranks), and the NCCL
variant (``default`` = NCCL's own choice, ``ring``/``tree`` = NCCL_ALGO, ``ll``/``ll128``/``simple`` =
NCCL_PROTO, ``nop2p`` = NCCL_P2P_DISABLE=1, traffic through host memory). ``socket`` = NCCL's TCP
socket transport (P2P and SHM off, or IB off). Points the model cannot represent (one rank, a
non-positive time) are reported as skipped, never guessed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence

import numpy as np

import topologies
from simulator.network.closed_form import CostModel
from simulator.core.config import checked
from simulator.core.errors import InputError
from simulator.core.limits import check_count
from simulator.collectives.algorithms import ALGOS_FOR_OP, NvlsChunks
from simulator.collectives.params import Parameters
from simulator.collectives.planner import Planner
from simulator.core.units import parse_bandwidth, parse_size
from simulator.core.vocabulary import NcclVersion, busbw_factor, read_nccl_version
from validation.parsers import CollMeasurement, Dataset

VARIANTS = {
    "default": ("auto", "auto", None), "ring": ("ring", "auto", None), "tree": ("tree", "auto", None),
    "ll": ("auto", "ll", None), "ll128": ("auto", "ll128", None), "simple": ("auto", "simple", None),
    "nop2p": ("auto", "auto", False), "noshm": ("auto", "auto", None),
}
_ENV_ALGO = {"ring": "ring", "tree": "tree", "nvls": "nvls", "nvlstree": "nvls_tree",
             "collnetdirect": "collnet_direct", "collnetchain": "collnet_chain", "pat": "pat"}
_ENV_PROTO = {"ll": "ll", "ll128": "ll128", "simple": "simple"}
_NCCL_FUNC = {"all_reduce": "allreduce", "reduce_scatter": "reducescatter", "all_gather": "allgather",
              "broadcast": "broadcast", "reduce": "reduce"}


def env_algo(value: str, op: str) -> str | None:
    """Our algorithm for NCCL_ALGO's setting for ``op`` (``Ring``, ``allreduce:Tree;...``) when it names
    exactly one, else None."""
    chosen = None
    for part in str(value).lower().split(";"):
        func, _, names = part.rpartition(":")
        if func and func.strip() != _NCCL_FUNC.get(op):
            continue
        algos = [a.strip() for a in names.split(",") if a.strip()]
        if len(algos) == 1 and not algos[0].startswith("^"):
            chosen = _ENV_ALGO.get(algos[0], chosen)
    return chosen


def nvls_from_env(env: Mapping[str, str] | tuple) -> bool | None:
    """NCCL_NVLS_ENABLE: "0" -> False (NVLS off), "1" -> True, unset -> None (NCCL's default)."""
    v = str(dict(env).get("NCCL_NVLS_ENABLE", "")).strip()
    return False if v == "0" else True if v == "1" else None


@dataclass(frozen=True)
class Topo:
    """How to build the simulator topology for a dataset (from a dataset's ``topology`` hint or CLI)."""

    preset: str
    nodes: int = 1
    gpus_per_node: int | None = None
    nic_Bps: float | None = None
    p2p: bool | None = None
    nccl_version: NcclVersion | None = None         # the NCCL that ran (the Planner's version rules); None: newest
    gdr: bool | None = None                         # GPUDirect RDMA (topologies.graph); None: the preset's (on)
    tuner_plugin: str | None = None                 # instance type of a loaded AWS tuner plugin (tuner_plugin())
    nics: int | None = None                         # NICs NCCL sees per server; None: the preset's
    plugin_proto: str | None = None                 # NCCL_PROTO the network plugin sets (net_plugin_proto())
    force_flush: bool | None = None                 # NCCL_NET_FORCE_FLUSH as the run set it; None: NCCL's default
    nvls_chunks: NvlsChunks | None = None           # NVLS chunk settings the run made (nvls_chunks()); None: unset
    net_latency_s: float = 0.0                      # latency the network plugin states to NCCL (net_latency())
    source: str = field(default="", compare=False)  # the dataset whose hint this is ("": the command line's)

    @property
    def server_nic_Bps(self) -> float | None:
        """Every NIC of one server together (the header's bandwidth per server), or None where unknown."""
        spec = topologies.SERVERS.get(self.preset)
        if not self.nic_Bps or spec is None:
            return None
        return self.nic_Bps * (self.nics or spec.nics)

    def build(self, world: int, p2p: bool | str | None = None, nvls: bool | None = None):
        """What a cost model is made from (topologies.prepare: a preset's tables, no graph).
        ``p2p``: None (the topology's own), False (through host memory), "socket" (TCP transport).
        ``nvls``: None (NCCL's default: on where the hardware has it), False (NCCL_NVLS_ENABLE=0)."""
        per = self.gpus_per_node
        if self.nodes == 1:
            per = world
            server = topologies.SERVERS.get(self.preset)
            if server is not None and world > server.gpus:     # not "--gpus must be ... (got 16)": none was given
                need = -(-world // server.gpus)
                if self.source:          # the dataset's own hint said one server
                    raise InputError(f"{world} ranks were measured, more than one {self.preset} server holds "
                                     f"({server.gpus} GPUs): the hint needs nodes: {need} (or pass --topology and "
                                     f"--nodes)", source=self.source, field="meta.topology.nodes", value=self.nodes)
                raise InputError(f"{world} ranks were measured, more than one {self.preset} server holds "
                                 f"({server.gpus} GPUs): pass --nodes {need}", field="--nodes", value=self.nodes)
        elif per is None or per * self.nodes != world:
            per = max(1, world // self.nodes)
        fabric = topologies.FabricSpec(nic_Bps=self.nic_Bps, nics=self.nics)
        sockets = p2p == "socket"
        return topologies.prepare(self.preset, nodes=self.nodes, gpus_per_node=per,
                                p2p=False if sockets else (self.p2p if p2p is None else p2p), fabric=fabric,
                                sockets=sockets, nvls=nvls, gdr=self.gdr)


def topo_from_hint(hint: Mapping | None, source: str = "") -> Topo:
    if not hint or "preset" not in hint:
        raise InputError("the dataset names no topology: pass --topology", source=source, field="meta.topology")
    nic, nics = None, None
    if hint.get("nic_bw_per_node"):
        from topologies.presets import SERVERS
        spec = SERVERS.get(hint["preset"])
        if spec is not None:
            nics = nics_seen(str(hint.get("nic", "")), spec.gpus)
            nic = checked(lambda: parse_bandwidth(hint["nic_bw_per_node"]), source, "meta.topology.nic_bw_per_node",
                          hint["nic_bw_per_node"]) / (nics or spec.nics)
    for key in ("p2p", "gdr"):      # a string ("false") would read as on: say so instead
        if hint.get(key) is not None and not isinstance(hint[key], bool):
            raise InputError(f"{key} must be true, false or absent", source=source, field=f"meta.topology.{key}",
                             value=hint[key])
    for key in ("nodes", "gpus_per_node"):   # int("two") was a traceback
        if hint.get(key) is not None:
            check_count(hint[key], source=source, field=f"meta.topology.{key}", words="must be a positive whole number")
    from simulator.collectives.ofi_tuner import PLATFORMS
    from simulator.core.vocabulary import PROTOS
    for key, known in (("plugin_proto", PROTOS), ("tuner_plugin", tuple(PLATFORMS))):   # read from the run's headers
        if hint.get(key) is not None and hint[key] not in known:
            raise InputError(f"expected one of {', '.join(known)} or absent", source=source,
                             field=f"meta.topology.{key}", value=hint[key])
    if hint.get("force_flush") is not None and not isinstance(hint["force_flush"], bool):   # NCCL_NET_FORCE_FLUSH
        raise InputError("expected true, false or absent", source=source, field="meta.topology.force_flush",
                         value=hint["force_flush"])
    chunk, tree = hint.get("nvls_chunk_bytes"), hint.get("nvls_tree_max_chunk_bytes")
    chunks = checked(lambda: NvlsChunks.of(chunk, tree), source, "meta.topology.nvls_chunk_bytes", (chunk, tree))
    latency = hint.get("net_latency_s") or 0.0
    if not isinstance(latency, (int, float)) or isinstance(latency, bool) or latency < 0:
        raise InputError("expected a latency in seconds >= 0 or absent", source=source, field="meta.topology.net_latency_s",
                         value=latency)
    return Topo(str(hint["preset"]), int(hint.get("nodes", 1)), hint.get("gpus_per_node"), nic, hint.get("p2p"),
                read_nccl_version(hint.get("nccl_version")), hint.get("gdr"), hint.get("tuner_plugin"), nics,
                hint.get("plugin_proto"), hint.get("force_flush"), chunks, float(latency), source=source)


def nics_seen(nic: str, gpus: int) -> int | None:
    """The NICs per server NCCL sees, from a header's NIC description ("4x 100G EFA": 4), where fewer than the
    server's GPUs (GPUs then share a NIC through their PCIe switch, as 8 A100s share 4 EFA NICs on AWS p4d);
    None where it gives no count or at least one per GPU (AWS's plugin groups a p5's 32 EFA NICs into one
    device per GPU: the preset's NICs stand)."""
    m = re.match(r"\s*(\d+)\s*x", nic)
    return int(m.group(1)) if m and 0 < int(m.group(1)) < gpus else None


def tuner_plugin(meta: Mapping) -> str | None:
    """The AWS instance type whose tuner plugin ran, from a dataset's header: the header loads aws-ofi-nccl's
    tuner (``NCCL_TUNER_PLUGIN`` naming ``ofi`` in its environment or its NCCL line) and its hardware line
    names an instance type the plugin has tables for (simulator.collectives.ofi_tuner.PLATFORMS); else None."""
    from simulator.collectives.ofi_tuner import PLATFORMS
    env = dict(meta.get("env") or {})
    loaded = "ofi" in str(env.get("NCCL_TUNER_PLUGIN", "")).lower() or \
        re.search(r"NCCL_TUNER_PLUGIN=\S*ofi", str(meta.get("nccl_version") or "")) is not None
    hardware = str(meta.get("hardware") or "")
    return next((name for name in PLATFORMS if name in hardware), None) if loaded else None


PLUGIN_SETS_PROTO_FROM = "2022"
"""aws-ofi-nccl sets NCCL_PROTO=simple itself from its 2022 releases on (AWS's 1.5.0aws build logs it);
in December 2021 its maintainers told users to set it themselves (issue #76). The corpus's p4d/p4de runs
date from 2021 and 2024, so any cutoff in 2022-2023 classes them alike."""


def net_plugin_proto(meta: Mapping) -> str | None:
    """The NCCL_PROTO AWS's network plugin set in a dataset's run: ``"simple"`` where its hardware line names an
    instance of simulator.collectives.ofi_tuner.EFA_WITHOUT_LL, it is dated from :data:`PLUGIN_SETS_PROTO_FROM` on and its environment
    sets no NCCL_PROTO of its own (the plugin leaves a user's setting alone); else None."""
    from simulator.collectives.ofi_tuner import EFA_WITHOUT_LL
    hardware = str(meta.get("hardware") or "")
    if not any(name in hardware for name in EFA_WITHOUT_LL) or "NCCL_PROTO" in dict(meta.get("env") or {}):
        return None
    return "simple" if str(meta.get("date") or "") >= PLUGIN_SETS_PROTO_FROM else None


def net_latency(meta: Mapping) -> float | None:
    """The latency a dataset's network plugin stated to NCCL (simulator.collectives.nccl_constants.NET_LATENCY_FROM),
    seconds: AWS's (aws-ofi-nccl) where its network is EFA (the header's NIC or hardware line names it), by the
    instance type its hardware line names (simulator.collectives.ofi_tuner.plugin_net_latency_s); None elsewhere
    (NCCL's own IB and socket transports state none; GCP's TCPX/TCPXO plugins are not read here)."""
    from simulator.collectives.ofi_tuner import PLATFORM_LATENCY_S, plugin_net_latency_s
    hint = meta.get("topology") or {}
    if not re.search(r"\befa\b", f"{hint.get('nic', '')} {meta.get('hardware', '')}".lower()):
        return None
    hardware = str(meta.get("hardware") or "")
    return plugin_net_latency_s(next((name for name in PLATFORM_LATENCY_S if name in hardware), ""))


def force_flush(meta: Mapping) -> bool | None:
    """NCCL_NET_FORCE_FLUSH as a dataset's environment sets it (simulator.collectives.nccl_constants.
    flushes_gdr_receives), or None where it is not set (NCCL's default for its version)."""
    value = dict(meta.get("env") or {}).get("NCCL_NET_FORCE_FLUSH")
    return None if value is None else str(value).strip() not in ("0", "")


def nvls_chunk_settings(meta: Mapping) -> dict[str, int]:
    """NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE as a dataset's run set them, as topology hint keys
    (``nvls_chunk_bytes``, ``nvls_tree_max_chunk_bytes``; none where unset): its environment's, else what AWS's
    network plugin adds (simulator.collectives.ofi_tuner.PLATFORM_ENV) where its header loads the plugin on an
    instance type of that table (:func:`tuner_plugin`) and is dated from PLUGIN_SETS_NVLS_CHUNKS_FROM on. Which
    NCCL reads them is simulator.collectives.algorithms.NvlsChunks.taken_by's to say."""
    from simulator.collectives.ofi_tuner import NVLS_CHUNK_ENV, PLUGIN_SETS_NVLS_CHUNKS_FROM, nvls_chunk_env
    dated = str(meta.get("date") or "") >= PLUGIN_SETS_NVLS_CHUNKS_FROM
    settings = nvls_chunk_env(tuner_plugin(meta) if dated else None, dict(meta.get("env") or {}))
    names = dict(zip(NVLS_CHUNK_ENV, ("nvls_chunk_bytes", "nvls_tree_max_chunk_bytes")))
    return {names[key]: checked(lambda: parse_size(v, key), str(meta.get("name", "")), f"env.{key}", v)
            for key, v in settings.items()}


@dataclass(frozen=True)
class Comparison:
    point: CollMeasurement
    predicted_s: float
    algo: str
    proto: str
    nccl_s: float | None = None      # NCCL's own cost model for the same choice (baseline)

    @property
    def error(self) -> float:
        """Signed relative error of the predicted time: (predicted - measured) / measured."""
        return self.predicted_s / self.point.time_s - 1.0

    @property
    def predicted_busbw_GBps(self) -> float:
        return self.point.size_bytes / self.predicted_s / 1e9 * busbw_factor(self.point.op, self.point.world)


def choice_for(p: CollMeasurement) -> tuple[str, str, bool | str | None, bool | None] | None:
    """(algo, proto, transport override, nvls) for a measured point: override None (the topology's own),
    False (peer-to-peer off: host memory) or "socket" (NCCL's TCP socket transport); nvls from
    NCCL_NVLS_ENABLE (None: NCCL's default)."""
    env = dict(p.env)
    algo, proto, p2p = VARIANTS.get(p.variant, ("auto", "auto", None))
    if "socket" in p.variant or str(env.get("NCCL_IB_DISABLE", "")) == "1" \
            or str(env.get("NCCL_NET", "")).lower() == "socket":
        p2p = "socket"
    algo = env_algo(env.get("NCCL_ALGO", ""), p.op) or algo
    proto = _ENV_PROTO.get(str(env.get("NCCL_PROTO", "")).lower(), proto)
    if str(env.get("NCCL_P2P_DISABLE", "")) == "1" and p2p is None:
        p2p = False
    if str(env.get("NCCL_SHM_DISABLE", "")) == "1" and p2p is False:
        p2p = "socket"
    return algo, proto, p2p, nvls_from_env(env)


class Predictor:
    """Cost models per (world, p2p) for one topology description and parameter set."""

    def __init__(self, topo: Topo, params: Parameters) -> None:
        self.topo, self.params = topo, params
        self._models: dict[tuple, CostModel] = {}
        self._planners: dict[tuple, object] = {}

    def model(self, world: int, p2p: bool | str | None, nvls: bool | None = None) -> CostModel:
        key = (world, p2p, nvls)
        m = self._models.get(key)
        if m is None:
            base = self._planners.get(key)      # a planner of the same topology: routes and layouts kept
            m = CostModel(base.with_params(self.params) if base is not None
                          else Planner(self.topo.build(world, p2p, nvls), self.params, self.topo.nccl_version,
                                       self.topo.tuner_plugin, self.topo.force_flush, self.topo.nvls_chunks,
                                       self.topo.net_latency_s))
            self._planners[key] = m.planner
            self._models[key] = m
        return m

    def with_params(self, params: Parameters) -> "Predictor":
        """Same topologies (routes and plan layouts kept), new parameters."""
        p = Predictor(self.topo, params)
        p._planners = self._planners
        return p

    def setup(self, p: CollMeasurement) -> tuple[CostModel, str, str] | None:
        """(model, algorithm, protocol asked for) of a measured point; None if not representable."""
        c = choice_for(p)
        if c is None or p.world < 2:
            return None
        algo, proto, p2p, nvls = c
        if proto == "auto" and self.topo.plugin_proto:      # the network plugin's NCCL_PROTO (net_plugin_proto)
            proto = self.topo.plugin_proto
        m = self.model(p.world, p2p, nvls)
        if algo not in ALGOS_FOR_OP[p.op]:       # NCCL_ALGO=Tree on an all_gather: NCCL's own choice
            algo = "auto"
        return m, algo, proto

    def interval(self, c: Comparison) -> tuple[float, float]:
        """(low, high) seconds of the comparison's prediction: the 90% interval of the calibration
        (simulator.network.intervals) for the algorithm and protocol it was predicted with."""
        iv = self.setup(c.point)[0].intervals.interval(c.point.op, c.algo, c.proto, c.point.size_bytes, c.predicted_s)
        return iv.lo_s, iv.hi_s

    def latency_bound(self, c: Comparison) -> bool:
        """Whether the compared point, run as predicted (``c.algo``/``c.proto``), is latency-bound
        (simulator.network.closed_form.Shape.latency_bound, the rule of CostModel.limit)."""
        return self.setup(c.point)[0].shape(c.point.op, c.algo, c.proto).latency_bound(c.point.size_bytes)

    def predict(self, p: CollMeasurement) -> Comparison | None:
        s = self.setup(p)
        if s is None:
            return None
        m, algo, proto = s
        t, a, pr = m.best(p.op, p.size_bytes, algo, proto)
        nccl = m.nccl.time_s(p.op, p.size_bytes, a, pr) if a != "direct" else math.inf
        return Comparison(p, t, a, pr, nccl if math.isfinite(nccl) else None)


def compare(points: Iterable[CollMeasurement], predictor: Predictor) -> tuple[list[Comparison], list[CollMeasurement]]:
    """(comparisons, skipped points). Points with a non-positive time are skipped."""
    done, skipped = [], []
    for p in points:
        c = predictor.predict(p) if p.time_s > 0 else None
        (done.append(c) if c is not None else skipped.append(p))
    return done, skipped


def summary(comps: Sequence[Comparison]) -> dict[str, float]:
    """Median, 90th percentile and worst absolute percentage error of time and of busbw."""
    if not comps:
        return {"points": 0}
    e = np.array([abs(c.error) for c in comps]) * 100
    bus = np.array([abs(c.point.time_s / c.predicted_s - 1.0) for c in comps]) * 100   # busbw error
    out = {"points": len(comps), "median_time_pct": float(np.median(e)), "p90_time_pct": float(np.percentile(e, 90)),
           "worst_time_pct": float(e.max()), "median_busbw_pct": float(np.median(bus)),
           "worst_busbw_pct": float(bus.max())}
    ranged = [c for c in comps if c.point.min_s and c.point.max_s]
    if ranged:
        out["within_range_pct"] = float(np.mean([c.point.min_s <= c.predicted_s <= c.point.max_s
                                                 for c in ranged]) * 100)
    nccl = np.array([abs(c.nccl_s / c.point.time_s - 1.0) for c in comps if c.nccl_s]) * 100
    if len(nccl):
        out["nccl_median_time_pct"] = float(np.median(nccl))
    return out


def interval_summary(comps: Sequence[Comparison], bounds: Sequence[tuple[float, float]]) -> dict[str, float]:
    """Share of measured times inside their prediction's 90% interval and the median interval width over the
    prediction, percent ({} without points)."""
    if not comps:
        return {}
    return {"interval_coverage_pct": float(np.mean([lo <= c.point.time_s <= hi for c, (lo, hi) in zip(comps, bounds)])
                                           * 100),
            "interval_width_pct": float(np.median([(hi - lo) / c.predicted_s for c, (lo, hi) in zip(comps, bounds)])
                                        * 100)}


def dataset_points(ds: Dataset, in_place: bool = False, statistic: str = "median") -> list[CollMeasurement]:
    """The dataset's points (out-of-place, or in-place where the file has nothing else);
    ``statistic="min"`` takes each point's fastest repetition where recorded (the noise-free floor
    on a shared machine) instead of the file's time (a median for our runner)."""
    if statistic not in ("median", "min"):
        raise InputError("statistic must be 'median' or 'min'", field="statistic", value=statistic)
    pts = [p for p in ds.points if p.in_place == in_place and math.isfinite(p.time_s)]
    if not pts and not in_place:       # a table published with its in-place columns only
        pts = [p for p in ds.points if p.in_place and math.isfinite(p.time_s)]
    if statistic == "min":
        pts = [replace(p, time_s=p.min_s) if p.min_s else p for p in pts]
    return pts


def noise_pct(points: Sequence[CollMeasurement]) -> float | None:
    """Median over points of (time - fastest repetition) / time, %: the measurement's own spread."""
    gaps = [(p.time_s - p.min_s) / p.time_s * 100 for p in points if p.min_s and p.time_s > 0]
    return float(np.median(gaps)) if gaps else None
