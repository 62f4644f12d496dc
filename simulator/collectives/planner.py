"""The planner: builds the plan of every collective on one topology with one parameter set, once.

It is the one owner of plan caches (protocol-free layouts and finished plans); timers and the tuner
ask it for plans and never fill caches of their own on its behalf.
"""

from __future__ import annotations

import weakref
from functools import cached_property
from typing import TYPE_CHECKING

from simulator.collectives.algorithms import PROTOS_FOR_ALGO, SIMPLE_ONLY, NvlsChunks
from simulator.collectives.availability import available, ll128_by_default, why_unavailable
from simulator.collectives.nccl_constants import TUNER_PLUGIN_FROM, flushes_gdr_receives, net_latency_taken
from simulator.collectives.params import Parameters
from simulator.collectives.plans import ALGOS_FOR_OP, Plan, build_plan, p2p_of
from simulator.core.errors import InputError
from simulator.core.gc_pause import cyclic_gc_paused
from simulator.core.vocabulary import NCCL_CURRENT, PROTOS, NcclVersion, check_op
from topologies.routing import Router, router_for

if TYPE_CHECKING:
    import networkx as nx

    from topologies.preset_cluster import PresetCluster


class Planner:
    """Plans of collectives over every GPU of a topology (or a subset of ranks), cached."""

    def __init__(self, G_or_router: nx.Graph | PresetCluster | Router, params: Parameters | None = None,
                 nccl_version: NcclVersion | tuple[int, int] | None = None, tuner_plugin: str | None = None,
                 force_flush: bool | None = None, nvls_chunks: NvlsChunks | None = None,
                 net_latency_s: float = 0.0) -> None:
        """``nccl_version``: the NCCL planned for (None: the one ``params`` carry, a calibration's or a scenario's
        ``nccl_version``, else NCCL_CURRENT, the newest modelled): the algorithms it runs
        (availability.why_unavailable), where it enables LL128 (availability.ll128_by_default), its tuner's table
        (nccl_model), whether it flushes network receives and takes NVLS chunk settings, whether it loads a tuner
        plugin (TUNER_PLUGIN_FROM); the one version every rule reads, ``--nccl-version`` and the corpus's headers
        alike.
        ``tuner_plugin``: the instance type whose AWS tuner plugin (``NCCL_TUNER_PLUGIN=ofi``) was loaded, whose
        region tables then come before NCCL's own choice (simulator.collectives.ofi_tuner); None: none loaded.
        ``force_flush``: NCCL_NET_FORCE_FLUSH as set (None: NCCL's default for ``nccl_version``); with the GPU
        generation and GPUDirect RDMA it decides whether NCCL flushes network receives (``net_flush``).
        ``nvls_chunks``: NCCL_NVLS_CHUNKSIZE / NCCL_NVLSTREE_MAX_CHUNKSIZE as the run set them (None: unset); what
        ``nccl_version`` takes of them (NvlsChunks.taken_by) sets the NVLS plans' chunks.
        ``net_latency_s``: the latency the network plugin states to NCCL (0: NCCL's own transports state none); what
        ``nccl_version`` adds of it to each network step (nccl_constants.net_latency_taken) joins the hop's."""
        self.router = router_for(G_or_router)
        self.params = params or Parameters()
        self.nccl_version = self.params.planned_nccl_version(nccl_version)
        if tuner_plugin is not None and self.nccl_version < TUNER_PLUGIN_FROM:
            raise InputError(f"NCCL loads a tuner plugin from {NcclVersion(*TUNER_PLUGIN_FROM)} on (this "
                             f"plans for NCCL {self.nccl_version})", field="tuner_plugin", value=tuner_plugin)
        nccl_version = self.nccl_version
        self.tuner_plugin = tuner_plugin
        self.force_flush = force_flush
        self.nvls_chunks = nvls_chunks
        self._chunks = None if nvls_chunks is None else nvls_chunks.taken_by(nccl_version)
        self.net_latency_s = net_latency_s
        self._net_latency_s = net_latency_taken(net_latency_s, nccl_version)
        info = self.router.info
        self.net_flush = flushes_gdr_receives(info.compute_capability, info.gdr, nccl_version, force_flush)
        self._layouts: dict = _layouts_of(self.router)
        self._plans: dict[tuple, Plan] = {}
        self._choices: dict[tuple[str, str, str], tuple[tuple[str, str], ...]] = {}

    def with_params(self, params: Parameters) -> "Planner":
        """A planner for other parameter values on the same routes (protocol-free layouts shared)."""
        return Planner(self.router, params, self.nccl_version, self.tuner_plugin, self.force_flush, self.nvls_chunks,
                       self.net_latency_s)

    @property
    def ranks(self) -> int:
        return len(self.router.gpus)

    def plan(self, op: str, algo: str, proto: str, ranks: tuple[str, ...] | None = None) -> Plan:
        """The plan of ``op`` under ``algo``/``proto`` (no ``auto`` here: see the tuner)."""
        key = (op, algo, proto, ranks)
        p = self._plans.get(key)
        if p is None:
            with cyclic_gc_paused():     # ~10^5 small route tuples at scale, no cycles
                p = self._plans[key] = build_plan(self.router, op, algo, proto, self.params, ranks, self._layouts,
                                                  self._search_channels, self.net_flush, self._chunks,
                                                  self._net_latency_s)
        return p

    def choices(self, op: str, algo: str = "auto", proto: str = "auto") -> tuple[tuple[str, str], ...]:
        """The (algorithm, protocol) pairs ``auto`` may choose among for ``op``, or the one asked for."""
        key = (op, algo, proto)
        hit = self._choices.get(key)
        if hit is None:
            hit = self._choices[key] = tuple(_choices(self.router, op, algo, proto, self.nccl_version))
        return hit

    def p2p_protocol(self, op: str, size_bytes: float, ranks: tuple[str, ...] | None = None) -> str:
        """The protocol NCCL's p2p path runs a send_recv or all_to_all of ``size_bytes`` with: LL up to
        16 KiB per p2p channel of a peer (512 KiB per peer on an NVSwitch server), Simple above or across servers
        (simulator.collectives.p2p.P2pChannels.protocol)."""
        rk = ranks if ranks is not None else tuple(self.router.gpus)
        return p2p_of(self.router, op, rk, self._layouts, self._search_channels).protocol(size_bytes)

    def plugin_choice(self, op: str, size_bytes: float,
                      allowed: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
        """The tuner plugin's pair among ``allowed`` (None: no plugin, or it leaves the choice to NCCL)."""
        if self.tuner_plugin is None:
            return None
        from simulator.collectives.ofi_tuner import choose
        return choose(self.tuner_plugin, op, size_bytes, self.ranks, self._nodes, allowed)

    @cached_property
    def _nodes(self) -> int:
        """Servers holding this planner's GPUs (the plugin's tables are per node count)."""
        return len({self.router.host_of(g) for g in self.router.gpus})

    def _search_channels(self) -> int:
        """The channels NCCL's ring/tree search finds here (a direct plan's p2p channels follow them)."""
        return self.nccl.x.channels

    @cached_property
    def nccl(self):
        """NCCL's own cost model for this topology (its tuning table)."""
        from simulator.collectives.nccl_model import NcclInputs, NcclModel
        return NcclModel(NcclInputs.from_router(self.router), version=self.nccl_version)


_LAYOUTS: "weakref.WeakKeyDictionary[Router, dict]" = weakref.WeakKeyDictionary()


def _layouts_of(router: Router) -> dict:
    """The layout cache of ``router``: layouts (and NCCL's p2p channel counts) depend on the routes and
    ranks only, not on the parameters, so every planner of one router shares them (a calibration
    builds one planner per parameter set it tries; a training simulation one per run). Kept as long
    as the router lives."""
    hit = _LAYOUTS.get(router)
    if hit is None:
        hit = _LAYOUTS[router] = {}
    return hit


def _choices(router: Router, op: str, algo: str, proto: str,
             nccl_version: NcclVersion = NCCL_CURRENT) -> list[tuple[str, str]]:
    """``auto``: every algorithm the topology and NCCL ``nccl_version`` enable (simulator.collectives.availability),
    with the protocols each runs; an explicit algorithm that they cannot run is an InputError."""
    check_op(op)
    known = ALGOS_FOR_OP[op]
    if algo != "auto":
        if algo not in known and not (algo == "ring" and known == ("direct",)):
            raise InputError(f"algorithm not available for {op} (available: {', '.join(known)})",
                             field="algo", value=algo)
        why = why_unavailable(router, op, algo, None, nccl_version) if algo in known else None
        if why:
            raise InputError(f"{algo} is not available here: {why}", field="algo", value=algo)
        algos = (algo,) if algo in known else known
    else:
        algos = available(router, op, nccl_version)
    if proto != "auto" and proto not in PROTOS:
        raise InputError("unknown protocol (expected ll, ll128, simple or auto)", field="proto", value=proto)
    # NCCL_PROTO unset: LL128 only where NCCL enables it by default (an explicit ll128 runs anywhere)
    protos = (PROTOS if ll128_by_default(router, None, nccl_version) else tuple(p for p in PROTOS if p != "ll128")) \
        if proto == "auto" else (proto,)
    pairs = [(a, p) for a in algos for p in protos
             if (p == "simple" or a not in SIMPLE_ONLY) and p in PROTOS_FOR_ALGO.get(a, PROTOS)]
    if not pairs:
        if all(a in PROTOS_FOR_ALGO for a in algos):
            runs = " or ".join(PROTOS_FOR_ALGO[algos[0]])
            raise InputError(f"{op} runs on NCCL's point-to-point path, which uses the {runs} protocol, never "
                             f"{proto}", field="proto", value=proto)
        raise InputError(f"{algo} runs NCCL's simple protocol only", field="proto", value=proto)
    return pairs
