"""The one vocabulary of gpunetsim: collective operations, dtypes, bus-bandwidth factors, size
ladders and the labels that travel between layers.

Everything that names an operation, a dtype or a limit imports it from here; no other module keeps
its own list. Names follow nccl-tests and PyTorch (``all_reduce``, ``bfloat16``).
"""

from __future__ import annotations

import math
import re
from enum import Enum
from typing import NamedTuple

from simulator.core import limits
from simulator.core.errors import InputError

# ----------------------------------------------------------------------------- operations
OPS: tuple[str, ...] = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce",
                        "all_to_all", "send_recv")
"""Every collective gpunetsim models, in nccl-tests' order of its binaries."""
REDOP_OPS: tuple[str, ...] = ("all_reduce", "reduce_scatter", "reduce")
"""Operations that reduce (nccl-tests prints a ``redop`` column for them)."""
ROOTED_OPS: tuple[str, ...] = ("broadcast", "reduce")
"""Operations with a root rank."""
GATHER_LIKE: frozenset[str] = frozenset({"all_gather", "reduce_scatter", "all_to_all"})
"""Operations whose nccl-tests ``size`` is the whole gathered buffer (n x the per-rank part)."""
NCCL_TESTS_OPS: tuple[str, ...] = OPS + ("gather", "scatter")
"""Operations nccl-tests measures (gather and scatter are read from files but not modelled)."""
NCCL_TESTS_BINARY_OPS: dict[str, str] = {"alltoall": "all_to_all", "sendrecv": "send_recv"}
"""nccl-tests binary stems that differ from our names (``alltoall_perf`` -> ``all_to_all``)."""

PROTOS: tuple[str, ...] = ("ll", "ll128", "simple")
"""NCCL's protocols, in NCCL's index order."""
ENGINES: tuple[str, ...] = ("des", "closed")
"""Timers: the discrete-event simulation and the closed form."""


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with its noun, singular for one (``counted(1, "micro-batch", "micro-batches")``: '1 micro-batch'; the
    plural is the noun + 's' unless given): output read '1 micro-batches' and '1 iterations'."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def check_op(op: object, field: str = "op") -> str:
    """``op`` if it names a modelled collective, else an :class:`InputError` listing them."""
    if op not in OPS:
        raise InputError(f"unknown operation (expected one of {', '.join(OPS)})", field=field, value=op)
    return str(op)


def busbw_factor(op: str, ranks: int) -> float:
    """nccl-tests' busbw/algbw factor: all_reduce 2(n-1)/n, gather-likes (n-1)/n, others 1."""
    check_op(op)
    if ranks < 1:
        raise InputError("must be at least 1", field="ranks", value=ranks)
    if op == "all_reduce":
        return 2.0 * (ranks - 1) / ranks
    if op in GATHER_LIKE:
        return (ranks - 1) / ranks
    return 1.0


def nccl_tests_size(op: str, ranks: int, size_bytes: int, type_bytes: int) -> tuple[int, int]:
    """(size, count) as nccl-tests prints them for a ``-b``/``-e`` size of ``size_bytes``: ``count`` is the
    elements of ``type_bytes`` each rank passes to NCCL, rounded down, and ``size`` the bytes they make (NVIDIA's
    nccl-tests, ``src/common.cu`` ``setupArgs`` and each op's ``GetCollByteCount``): all_gather, reduce_scatter
    and all_to_all ``size // (type x ranks)`` per rank and the whole buffer ``count x type x ranks``; the others
    ``size // type``. A size below one element per rank is ``(0, 0)``, which nccl-tests prints and NCCL runs as
    nothing. nccl-tests from 2.14.1 (its commit 29f4114, 2025) also rounds the gather-likes' per-rank count down to
    16 bytes; this is the earlier rule, which ``validation.runners.collectives`` measures with (its unaligned sizes
    are what :mod:`simulator.collectives.alignment` times)."""
    check_op(op)
    per_rank = ranks if op in GATHER_LIKE else 1
    count = int(size_bytes) // (type_bytes * per_rank)
    return count * type_bytes * per_rank, count


NCCL_TESTS_DTYPE = "float"     # nccl-tests' default ``-d``: the type of the count column unless one is named


def whole_elements_words(op: str, ranks: int, dtype: str, type_bytes: int) -> str:
    """The smallest size :func:`nccl_tests_size` keeps, in words, for the message that refuses or skips a size below
    it (``gpunetsim collective`` and the API's ``collective``)."""
    if op in GATHER_LIKE:
        return (f"{op} on {ranks} ranks passes whole {dtype} elements per rank: at least {ranks * type_bytes} B "
                f"({ranks} x {type_bytes} B)")
    return f"{op} passes whole {dtype} elements: at least {type_bytes} B"


def size_ladder(min_bytes: int, max_bytes: int, factor: float = 2.0) -> list[int]:
    """nccl-tests' ``-b/-e/-f`` sizes: min, min*factor, ... up to and including max."""
    if min_bytes <= 0 or max_bytes < min_bytes:
        raise InputError("need 0 < min bytes <= max bytes", field="min_bytes", value=(min_bytes, max_bytes))
    if not factor > 1:
        raise InputError("must be greater than 1", field="factor", value=factor)
    if factor != float("inf"):
        steps = math.floor(math.log(max_bytes / min_bytes) / math.log(factor) + 1e-9) + 1
        limits.SIZES.check(steps, field="factor", value=factor)
    sizes, size = [], float(min_bytes)
    while size <= max_bytes * (1 + 1e-12):
        sizes.append(int(size))
        size *= factor
    return sizes


# ----------------------------------------------------------------------------- NCCL versions
class NcclVersion(NamedTuple):
    """An NCCL release, compared as a tuple: ``NcclVersion(2, 20, 3) < (2, 22)``. The model's version rules
    (simulator.collectives.nccl_constants' ``*_FROM``) name (major, minor) only; ``patch`` 0 means unstated."""

    major: int
    minor: int
    patch: int = 0

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}" + (f".{self.patch}" if self.patch else "")


NCCL_CURRENT = NcclVersion(2, 28)
"""The newest NCCL the model knows (its tuner table, NVLS constants and every version rule): what a run plans
for unless told otherwise (``--nccl-version``, a study's ``nccl_version``, the API's ``nccl_version=``)."""
NCCL_OLDEST = NcclVersion(2, 8)
"""The oldest NCCL the model plans for: older releases predate every rule it knows (and the corpus's oldest
runs, 2.8.3 on AWS p4d)."""
_VERSION = re.compile(r"\s*(\d+)\.(\d+)(?:\.(\d+))?")


def read_nccl_version(text: object) -> NcclVersion | None:
    """The version a dataset header's text starts with (``"2.20.3 (likely, not stated)"``: 2.20.3), or None
    where it starts with none (``"unknown"``); no range check: the header says what ran."""
    m = _VERSION.match(str(text or ""))
    return NcclVersion(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


def nccl_version(value: object, field: str = "nccl_version") -> NcclVersion:
    """The NCCL a user names (``"2.20.3"``, ``"2.22"``, or an NcclVersion): an :class:`InputError` naming
    ``field`` and the value where it is ill-formed, older than NCCL_OLDEST or of another major release than
    NCCL_CURRENT (a later 2.x is accepted and planned with NCCL_CURRENT's rules: :func:`nccl_release_words`)."""
    if isinstance(value, tuple) and len(value) in (2, 3) and all(isinstance(v, int) and not isinstance(v, bool)
                                                                  for v in value):
        v = NcclVersion(*value)
    elif isinstance(value, float):      # YAML's 2.20 is the number 2.2: never guess which release was meant
        raise InputError("write the NCCL version as a string, e.g. '2.20' (a number loses its trailing zeros)",
                         field=field, value=value)
    else:
        text = value.strip() if isinstance(value, str) else ""
        m = _VERSION.fullmatch(text) if text else None
        if m is None:
            raise InputError("expected an NCCL version MAJOR.MINOR[.PATCH], e.g. 2.22 or 2.20.3", field=field,
                             value=value)
        v = read_nccl_version(text)
    if v[:2] < NCCL_OLDEST[:2] or v.major != NCCL_CURRENT.major:
        raise InputError(f"the model knows NCCL {NCCL_OLDEST} to {NCCL_CURRENT} (its version rules) and plans a "
                         f"later {NCCL_CURRENT.major}.x as {NCCL_CURRENT}; "
                         f"{'older' if v[:2] < NCCL_OLDEST[:2] else 'other major'} releases are not modelled",
                         field=field, value=value)
    return v


def nccl_release_words(version: NcclVersion | str) -> str:
    """How a header names the NCCL planned for: ``"2.22"``, or for a release newer than the model knows
    ``"2.30 (planned as 2.28, the newest the model knows)"``: every version rule holds from its release on, so a
    later NCCL gets the newest rules, and the header says so instead of refusing a user on a current NCCL."""
    v = version if isinstance(version, tuple) else read_nccl_version(version)
    if v is not None and v[:2] > NCCL_CURRENT[:2]:
        return f"{v} (planned as {NCCL_CURRENT}, the newest the model knows)"
    return str(version)


# ----------------------------------------------------------------------------- dtypes
DTYPE_BYTES: dict[str, int] = {
    "int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
    "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "float8_e4m3": 1, "float8_e5m2": 1,
}
"""Bytes per element of every dtype, by its canonical (PyTorch) name."""
DTYPE_ALIASES: dict[str, str] = {
    # nccl-tests (-d) and C names
    "char": "int8", "int": "int32", "half": "float16", "float": "float32", "double": "float64",
    "f8e4m3": "float8_e4m3", "fp8_e4m3": "float8_e4m3", "f8e5m2": "float8_e5m2", "fp8_e5m2": "float8_e5m2",
    # short names
    "bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64", "fp8": "float8_e4m3",
    # PyTorch profiler (Kineto) names
    "c10::half": "float16", "c10::bfloat16": "bfloat16", "long int": "int64",
}
"""Other spellings of the dtypes above (case-insensitive, ``torch.`` prefix allowed)."""


def canonical_dtype(name: object, field: str = "dtype") -> str:
    """The canonical name of a dtype spelled any known way; :class:`InputError` otherwise."""
    if isinstance(name, str):
        text = name.strip().lower().removeprefix("torch.")
        text = DTYPE_ALIASES.get(text, text)
        if text in DTYPE_BYTES:
            return text
    raise InputError(f"unknown dtype (known: {', '.join(sorted(DTYPE_BYTES))})", field=field, value=name)


def dtype_bytes(name: object, field: str = "dtype") -> int:
    """Bytes per element of a dtype spelled any known way."""
    return DTYPE_BYTES[canonical_dtype(name, field)]


# ----------------------------------------------------------------------------- labels
class LinkClass(str, Enum):
    """Kinds of link a route crosses (the ``kind`` attribute of a topology edge)."""

    NVLINK = "nvlink"
    PCIE = "pcie"
    SOCKET = "socket"      # CPU-to-CPU link (UPI/xGMI) or NCCL's TCP socket transport
    NET = "net"            # NIC and fabric

    def __str__(self) -> str:
        return self.value


class Limit(str, Enum):
    """What limits a collective or an iteration: a saturated link class, or something else."""

    NVLINK = "nvlink"
    PCIE = "pcie"
    SOCKET = "socket"
    NET = "net"
    PROTOCOL = "protocol"    # the protocol's own ceiling (e.g. LL), no link saturated
    CHANNELS = "channels"    # NCCL's p2p channels (CTAs) of a send/recv or all-to-all, no link saturated
    KERNEL = "kernel"        # the kernel's own per-channel rate (NVLS-Tree's perChMaxNVLSTreeBw), no link saturated
    LATENCY = "latency"      # fixed costs dominate the size-proportional term
    # the host sets the pace: host-based backends (TCP/shared-memory copies, CPU reductions), and a DDP step
    # whose host path is longer than its GPU timeline (launch-bound; simulator.training.ddp)
    HOST = "host"
    COMPUTE = "compute"      # communication hidden behind compute
    BUCKET_OVERHEAD = "bucket-overhead"   # per-bucket launch and copy cost after backward
    NONE = ""                # nothing to move

    def __str__(self) -> str:
        return self.value

    @property
    def description(self) -> str:
        """How reports say it: ``NVLink-bound``, ``NIC-bound``, ``latency-bound``."""
        return _LIMIT_TEXT[self]


_LIMIT_TEXT = {Limit.NVLINK: "NVLink-bound", Limit.PCIE: "PCIe-bound", Limit.SOCKET: "CPU-socket-link-bound",
               Limit.NET: "NIC-bound", Limit.PROTOCOL: "protocol-bound", Limit.CHANNELS: "p2p-channel-bound", Limit.KERNEL: "kernel-bound", Limit.LATENCY: "latency-bound", Limit.HOST: "host-bound",
               Limit.COMPUTE: "compute-bound", Limit.BUCKET_OVERHEAD: "bucket-overhead-bound", Limit.NONE: ""}
