"""Memory traffic of a collective that runs beside kernels on the same GPU.

A ring or direct NCCL collective streams every byte it moves through the GPU's own memory several
times: the sender's kernel reads it, the peer's kernel writes it into this GPU's receive buffer
over NVLink, this GPU's kernel reads it from there and writes the result (a reduction also reads
its local operand). Per byte on the bus (nccl-tests' busbw bytes: ``busbw_factor(op, n) x size``)
that is :data:`HBM_ACCESSES_PER_BUS_BYTE` accesses of local memory. While the collective runs beside
compute kernels the two share the memory bandwidth (and the SMs): the collective takes
:func:`bandwidth_share` of it, and :class:`Contention` slows the kernels by the shares of the
collectives in flight, for as long as they are in flight. A collective that overlaps kernels from
start to end delays them by its traffic over the achievable bandwidth (the compute model's
``mem_Bps``); one beside an idle GPU, or after the kernels, delays nothing. Nothing is fitted to the
runs it predicts. Four accesses is an estimate (with NCCL's P2P reads over NVLink some of them are
the peer's reads of this GPU's buffer); the overlap probe (``validation.runners.overlap``, ``python -m
validation.overlap_check``) measures the slowdown directly: on 4x H100 a median 3.55 accesses per bus
byte (2.56-5.05 over 48 points, 3.69 at 384 MiB), with compute-bound matmuls slowed as much as
memory-bound copies (validation/data/h100x4_2026-11-26j).

Evidence (``python -m validation.llm_real``, FSDP runs whose backward overlaps a reduce-scatter
and a prefetched all-gather per unit): without any charge, the communication-bound 4-GPU FSDP
runs were predicted 5-15% too fast, more on H100 (3.35 TB/s) than on H200 (4.8 TB/s) with the
same NVLink. Charged per unit whatever the overlap, the FSDP median error was 5.5% on the 4x H100
campaign (10.7% without), with NO_SHARD at hidden 4096 +15.6% on the blind 4-GPU test (its all-reduces
outlast the backward they follow); charged only while beside kernels, 4.4% and +13.6% (+8.8% with the
blind test's compute pinned by the issue probes; docs/accuracy.md, section 7).

Measured since (``validation/data/h200x2_2026-11-27_gemmnccl``, ``python -m validation.gemm_nccl``, 2x H200): the
share law, with no fitted factor, predicts a memory-bound copy beside transferring all-gathers / reduce-scatters /
all-reduces of 64-256 MiB at 8-32 NCCL channels (1.07-1.32x measured, 1.10-1.40x predicted). GEMMs are slowed by
something else: NCCL's blocks hold whole SMs for as long as the NCCL kernel is resident (waiting for a late peer
included), and cuBLAS's persistent GEMMs (one CTA per SM) then run part of their CTAs in a second round: 1.4-1.9x for
the training runs' shapes at 8 as at 32 channels (SMs / (SMs - channels) would give 1.06-1.32x), 1.8x in the profiled
FSDP steps at 2 and 4 GPUs alike. A constant for it (1.77, from that probe) was scored held out and not kept; see
``validation/gemm_nccl.py``. Nor does wave quantisation (rounds of output tiles per free SM) predict the factor per
kernel, and charged per unit it was not kept either (``validation/gemm_wave.py``).
"""

from __future__ import annotations

import simpy

from simulator.core.errors import InvariantError
from simulator.core.vocabulary import busbw_factor

HBM_ACCESSES_PER_BUS_BYTE = 4.0
"""Local memory accesses per bus byte: read to send, written in by the peer, read, written out."""


def collective_hbm_bytes(op: str, ranks: int, size_bytes: float) -> float:
    """Bytes one rank's memory moves for ``op`` of ``size_bytes`` (nccl-tests size) over ``ranks``."""
    if ranks < 2:
        return 0.0
    return HBM_ACCESSES_PER_BUS_BYTE * busbw_factor(op, ranks) * size_bytes


LOAD_TOLERANCE = 1e-9
"""Rounding left when the shares of collectives that started are removed in another order."""

MIN_SPEED = 0.1
"""Kernels never run slower than this share of their speed alone, whatever runs beside them."""


def bandwidth_share(op: str, ranks: int, size_bytes: float, duration_s: float, mem_Bps: float) -> float:
    """The share of one GPU's memory bandwidth ``op`` takes while it runs for ``duration_s``.

    The callers pass the collective's duration alone on the network (uncontended). An approximation:
    beside other collectives or kernels it may last longer and its traffic then spreads thinner
    (a smaller share), so the slowdown this gives the kernels is an upper bound for a collective
    that is itself slowed."""
    if duration_s <= 0 or mem_Bps <= 0:
        return 0.0
    return collective_hbm_bytes(op, ranks, size_bytes) / (duration_s * mem_Bps)


class Contention:
    """The compute stream's kernels beside the collectives in flight on the same GPU.

    Each collective adds its :func:`bandwidth_share` while it runs; kernels progress at ``1 -
    (sum of the shares)`` of their speed alone (at least :data:`MIN_SPEED`), so a collective that
    overlaps kernels from start to end delays them by its memory traffic over the bandwidth (the
    static charge of this module's docstring), and one that runs beside idle GPU time, or after the
    kernels are done, delays nothing."""

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self.load = 0.0
        self.changed = env.event()

    def add(self, share: float) -> None:
        """A collective starts (``share`` > 0) or ends (its share negated)."""
        if share == 0.0:
            return
        load = self.load + share
        if not load > -LOAD_TOLERANCE:
            raise InvariantError(f"a collective ended that never started (load {load:g})")
        self.load = load if load > LOAD_TOLERANCE else 0.0  # shares added and removed in another order
        event, self.changed = self.changed, self.env.event()
        event.succeed()

    def work(self, seconds: float):
        """A SimPy process body: ``seconds`` of kernels (their time alone) beside what is in flight."""
        env, left = self.env, seconds
        while left > 1e-15:
            speed = max(1.0 - self.load, MIN_SPEED)
            t0 = env.now
            changed = self.changed
            yield env.timeout(left / speed) | changed
            left -= (env.now - t0) * speed
            if not changed.triggered:
                break
