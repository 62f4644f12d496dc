"""The catalogue of NCCL's algorithms: which collectives each runs, what hardware it needs, and
NCCL's own constants for the algorithms beyond ring and tree (NCCL 2.28, ``src/graph/tuning.cc``,
``src/transport/nvls.cc``, ``src/enqueue.cc``).

- ``ring``, ``tree``: every NCCL, every machine (tree: all_reduce only).
- ``nvls`` (NVLink SHARP): the NVSwitch reduces. Needs NVSwitch gen3+ with multicast (compute
  capability 9.0+: H100/H200/B200/GB200) inside one NVLink domain; all_reduce, reduce_scatter,
  all_gather. On by default where the hardware has it (``NCCL_NVLS_ENABLE=0`` turns it off).
- ``nvls_tree``: NVLS inside each NVLink domain, a tree between domains (all_reduce, several domains).
- ``collnet_direct``, ``collnet_chain``: in-network reduction by SHARP-capable InfiniBand switches
  (all_reduce, several servers); only with ``--collnet on`` (NCCL_COLLNET_ENABLE=1), which the fabric
  allows where it says its switches can (``sharp``). With CollNet on, ``nvls`` also runs across
  servers (NVLS inside each, SHARP between them), as NCCL's does.
- ``pat``: Parallel Aggregated Trees (NCCL 2.23+), all_gather / reduce_scatter with one GPU per
  server, several servers.
- ``direct``: gpunetsim's name for all_to_all and send_recv (point-to-point, no algorithm choice).

The newer algorithms run NCCL's Simple protocol only; NCCL's constants for them live in
simulator.collectives.nccl_constants. simulator.collectives.availability says which algorithms a
topology allows for an operation; ``auto`` chooses among them.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.collectives.nccl_constants import (BASE_LAT_NEWER, COLLNET_HOPPER_FACTOR, HW_LAT_NEWER, MAX_NVLS_ARITY,
                                                   NVLS_CHANNELS_SM100, NVLS_CHANNELS_SM100_NVL, NVLS_CHANNELS_SM90,
                                                   NVLS_CHUNK_BYTES, NVLS_CHUNK_PARAM_FROM, NVLS_CHUNK_STEPS, NVLS_EFFICIENCY,
                                                   NVLS_TREE_WIDE_CHUNK_BYTES, NVLS_TREE_WIDE_DOMAINS, PAT_BW_FACTOR,
                                                   PAT_LOG_LATENCY_DIVISOR)
from simulator.core.errors import InputError
from simulator.core.limits import check_count
from simulator.core.vocabulary import OPS

__all__ = ["ALGOS", "ALGOS_FOR_OP", "MAX_NVLS_ARITY", "NVLS_CHUNK_BYTES", "NVLS_CHUNK_STEPS", "NvlsChunks", "OPS",
           "SIMPLE_ONLY", "check_known", "generation", "nvls_channels", "nvls_chunk_bytes", "param_defaults"]
ALGOS_FOR_OP: dict[str, tuple[str, ...]] = {
    "all_reduce": ("ring", "tree", "nvls", "nvls_tree", "collnet_direct", "collnet_chain"),
    "reduce_scatter": ("ring", "nvls", "pat"),
    "all_gather": ("ring", "nvls", "pat"),
    "broadcast": ("ring",),
    "reduce": ("ring",),
    "all_to_all": ("direct",),
    "send_recv": ("direct",),
}
ALGOS: tuple[str, ...] = tuple(dict.fromkeys(a for algos in ALGOS_FOR_OP.values() for a in algos))
"""Every algorithm name ``--algo`` takes (besides ``auto``)."""
SIMPLE_ONLY = ("nvls", "nvls_tree", "collnet_direct", "collnet_chain", "pat")
"""Algorithms NCCL runs with the Simple protocol only (the ones newer than ring and tree)."""
PROTOS_FOR_ALGO = {"direct": ("ll", "simple")}
"""Protocols an algorithm runs where not all of them: NCCL's point-to-point path (``direct``) runs LL or Simple,
never LL128 (simulator.collectives.p2p.P2pChannels.protocol picks between the two); SIMPLE_ONLY ones Simple."""

def generation(compute_capability: int) -> int:
    """90 for Hopper, 100 for Blackwell and later; 0 for GPUs without NVLS (before Hopper)."""
    return 100 if compute_capability >= 100 else 90 if compute_capability >= 90 else 0


def nvls_channels(compute_capability: int, domains: int) -> int:
    """NCCL's NVLS channel (CTA) count."""
    if generation(compute_capability) >= 100:
        return NVLS_CHANNELS_SM100 if domains > 1 else NVLS_CHANNELS_SM100_NVL
    return NVLS_CHANNELS_SM90


def nvls_chunk_bytes(size_bytes: float, concurrent_ops: int, steps=NVLS_CHUNK_STEPS,
                     max_chunk: int = NVLS_CHUNK_BYTES) -> int:
    """The chunk NCCL's NVLS kernels move per step for a collective of ``size_bytes``."""
    chunk = max_chunk
    for factor, small in steps:
        if size_bytes < factor * concurrent_ops * chunk and chunk > small:
            chunk = small
    return chunk


@dataclass(frozen=True)
class NvlsChunks:
    """The chunk settings NCCL's NVLS kernels start from (enqueue.cc): ``chunk_bytes`` NCCL_NVLS_CHUNKSIZE
    (``nvlsChunkSize``, 128 KiB unless set), ``tree_max_bytes`` NCCL_NVLSTREE_MAX_CHUNKSIZE (None: unset).
    AWS's network plugin sets both to 512 KiB on p5 and later (simulator.collectives.ofi_tuner.PLATFORM_ENV)."""

    chunk_bytes: int = NVLS_CHUNK_BYTES
    tree_max_bytes: int | None = None

    def __post_init__(self) -> None:
        for name, v in (("NCCL_NVLS_CHUNKSIZE", self.chunk_bytes), ("NCCL_NVLSTREE_MAX_CHUNKSIZE", self.tree_max_bytes)):
            if v is not None:
                check_count(v, field=name, words="must be a positive number of bytes")

    @staticmethod
    def of(chunk_bytes: int | None, tree_max_bytes: int | None) -> "NvlsChunks | None":
        """The settings a run made of the two variables (None: unset); None where it set neither."""
        if chunk_bytes is None and tree_max_bytes is None:
            return None
        return NvlsChunks(NVLS_CHUNK_BYTES if chunk_bytes is None else chunk_bytes, tree_max_bytes)

    def taken_by(self, nccl_version: tuple[int, int] | None) -> "NvlsChunks":
        """What NCCL ``nccl_version`` (None: a current one) takes of these settings: before
        NVLS_CHUNK_PARAM_FROM its kernels ignore them (the model keeps NCCL's defaults there)."""
        return NvlsChunks() if nccl_version is not None and nccl_version < NVLS_CHUNK_PARAM_FROM else self

    def max_chunk(self, algo: str, domains: int) -> int:
        """The largest chunk of ``algo`` (``nvls`` or ``nvls_tree``) on ``domains`` NVLink domains, before
        :func:`nvls_chunk_bytes` shrinks it for smaller collectives."""
        if algo != "nvls_tree":
            return self.chunk_bytes
        cap = self.tree_max_bytes if self.tree_max_bytes is not None else \
            NVLS_TREE_WIDE_CHUNK_BYTES if domains >= NVLS_TREE_WIDE_DOMAINS else self.chunk_bytes
        return min(self.chunk_bytes, cap)


def param_defaults() -> dict[str, float]:
    """Parameter-set defaults for the newer algorithms (simulator.collectives.params): NCCL's
    constants above; only the Simple protocol exists for them."""
    d: dict[str, float] = {}
    for a in SIMPLE_ONLY:
        d[f"base_latency_s.{a}.simple"] = BASE_LAT_NEWER[a] * 1e-6
        d[f"proto_efficiency.{a}.simple"] = PAT_BW_FACTOR if a == "pat" else 1.0
        for c in ("nvlink", "pcie", "shm", "net", "socket"):
            src = {"shm": "pcie", "socket": "net"}.get(c, c)
            d[f"hop_latency_s.{c}.{a}.simple"] = HW_LAT_NEWER[src][a] * 1e-6
    for c in ("net", "socket"):     # PAT's log2(nodes) steps cost NCCL's network latency / 3.5 each
        d[f"hop_latency_s.{c}.pat.simple"] = HW_LAT_NEWER["net"]["pat"] / PAT_LOG_LATENCY_DIVISOR * 1e-6
    d["nvls_efficiency.sm90"] = NVLS_EFFICIENCY[90]
    d["nvls_efficiency.sm100"] = NVLS_EFFICIENCY[100]
    d["collnet_efficiency"] = COLLNET_HOPPER_FACTOR
    d["nvls_fill_rounds"] = NVLS_FILL_ROUNDS
    d["nvls_step_overhead_s"] = 0.0
    return d


NVLS_FILL_ROUNDS = 2.5
"""Pipeline fill of NVLS, in rounds of ``chunk x concurrentOps`` bytes: the last chunk leaves the
switch this many rounds after the first one enters (reduce and multicast stages pipelined). From the
Azure ND H100 v5 NVLS table (busbw only, not in the accuracy sets' tuning); see docs/algorithms.md."""


def check_known(op: str, algo: str) -> None:
    if op not in OPS:
        raise InputError(f"unknown operation (expected one of {', '.join(OPS)})", field="op", value=op)
    if algo not in ALGOS_FOR_OP[op]:
        raise InputError(f"algorithm not available for {op} (available: {', '.join(ALGOS_FOR_OP[op])})",
                         field="algo", value=algo)
