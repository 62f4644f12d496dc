"""Unaligned shares: the extra per-byte cost of a ring all_gather whose ranks' shares do not start on 16 bytes.

NCCL's mechanism (read in NVIDIA/nccl, ``src/device/common_kernel.h`` ``reduceCopy`` and ``src/device/all_gather.h``,
``src/device/reduce_scatter.h``, NCCL 2.2x master; older releases' ``ReduceOrCopyMulti`` does the same):

* Every Simple-protocol step copies (or reduces) with ``reduceCopy``. Before it starts, each warp checks that *all*
  its source and destination pointers are multiples of 16 bytes (``BigPackSize``). If they are, the copy runs in
  16-byte packs (one vector load and store per lane); if any one is not, the whole step falls back to packs of one
  element (``sizeof(T)`` bytes, unrolled more to keep loads in flight). Only the pointers' alignment matters, not
  the element count (a ragged tail is finished by the small packs either way).
* Ring all_gather: rank ``r``'s share lives at byte offset ``r * S/n`` of every rank's output buffer, and the ring
  runs in *direct* mode (``directCopySend`` / ``directRecvCopyDirectSend``: the step writes straight into the next
  GPU's output buffer over NVLink, at that offset). So a share whose offset ``r * S/n`` is not a multiple of 16 is
  copied element by element into the peer's memory on every hop; the channels' partition of each share
  (``ncclCollCbdPart``) keeps chunk boundaries on 16 bytes, so the rank offset is the only one that can break it.
* Ring reduce_scatter: the same offsets, but in NCCL's non-direct primitives (``Primitives<..., Direct=0, ...>``):
  the unaligned pointer is the local send buffer the step reads, while it writes the peer's FIFO buffer (aligned).
* send/recv (``src/device/sendrecv.h``): each peer's Simple send is a ``directSend`` from the pointer the caller
  gave, into the peer's buffer where P2P allows. A plain send_recv passes whole buffers (cudaMalloc / PyTorch's
  caching allocator: 512-byte aligned), so sizes alone never misalign it. all_to_all (nccl-tests' alltoall,
  ``torch.distributed.all_to_all_single``) is a group of sends and receives at ``sendbuff + b x S/n`` and
  ``recvbuff + a x S/n``: rank a's send to b is unaligned when either offset is.
* all_reduce: its chunks are counts rounded up to ``16 / sizeof(T)`` elements, so every chunk offset is aligned
  whatever the size.
* LL and LL128 copy the payload into their own flagged lines in the peer's FIFO (8 + 8 and 120 + 8 bytes): the user
  offset is again only a local read or a local final copy.

What the probe measured (``validation/data/h200x4_2026-11-27_proto``, 4x H200, NCCL 2.28.9, float32; each unaligned
point's fast level over the line through its op's aligned 8-64 MiB points, per variant and world size,
``python -m validation.align_probe``): ring / Simple all_gather (NCCL's default choice and the Ring + Simple pin,
24 channels) pays k = 1.79-2.26x per byte on the unaligned shares' bytes (median 2.045: the one fitted factor,
:data:`UNALIGNED_COPY_FACTOR`); reduce_scatter 0.83-1.30 (scatter around 1 at the same points: no effect, as the
code says); LL128 all_gather 1.30-1.77 (not modelled: NCCL picks Simple at these sizes); 12 channels 2.55-2.80,
32 channels 1.51-1.93 (the penalty is the copying CTAs' and grows as fewer of them carry the bytes; the model
keeps the one factor of NCCL's default 24).

The model: a plan of ring all_gather on the Simple protocol (NCCL's choice at these sizes) pays its per-byte cost (wire and local, as the probe's
slope measures it) for ``S x (1 + f (k - 1))`` bytes (:meth:`simulator.collectives.plans.Plan.costed_bytes`, which
the SimPy engine, the closed form and the fitter all take): every rank copies every share once per call, so the
call's bandwidth term is the aligned one times ``1 + f (k - 1)``, with f the fraction of shares whose offset is
unaligned (4 ranks, S/n = 12 mod
16: shares 1, 2, 3, f = 3/4; S/n = 8 mod 16: shares 1 and 3, f = 1/2). The probe's 4-GPU 11.3 and 22.6 MiB points
(f = 3/4 and 1/2) give the same k (2.24 / 2.09), where "any unaligned share slows the whole ring" would have
given one ratio at both. all_to_all (direct, Simple) pays the same factor with f the largest share of unaligned sends of one rank (its
sends run side by side, so the call waits for the rank with most; on 2 GPUs every send of an unaligned size is).
Not fitted on it: the proto probe has no all_to_all; scored held out on the bwfine campaign
(``python -m validation.align_probe``). Powers of two (and every size whose share is a multiple of 16 bytes) are
unchanged.
Held out (``python -m validation.align_probe``: every committed campaign with unaligned sizes besides the probe;
median |error| %, factor 1 -> fitted, unaligned points; "datasheet": no calibration; "2 -> 4": calibrated on the
campaign's pooled 2-GPU launches, all sizes, predicting its 4-GPU ones):

* ``h100x4_2026-11-27_bwfine`` (H100, not the probe's GPU): all_gather >= 16 MiB datasheet 2 GPUs 52.9 -> 31.2, 4 GPUs
  43.9 -> 13.5, 2 -> 4 29.8 -> 6.2; < 16 MiB datasheet 53.4 -> 43.3 / 50.6 -> 35.1, 2 -> 4 21.9 -> 9.4. all_to_all
  >= 16 MiB datasheet 57.7 -> 17.9 / 53.7 -> 11.0, 2 -> 4 44.8 -> 2.1; < 16 MiB 59.6 -> 40.0 / 60.1 -> 39.2, 2 -> 4
  21.2 -> 13.5.
* ``h200x4_2026-11-27_l2``: all_gather >= 16 MiB datasheet 52.9 -> 31.1 / 43.9 -> 13.4, 2 -> 4 32.6 -> 6.3; < 16 MiB
  55.5 -> 44.0 / 51.0 -> 32.1, 2 -> 4 31.1 -> 13.2. ``h200x2_2026-11-27_peercopy`` (2 GPUs): >= 16 MiB 52.6 -> 29.3,
  < 16 MiB 50.0 -> 37.1.
* Aligned points: the datasheet model is unchanged at every one (and ``gpunetsim collective --json`` byte for
  byte at powers of two); through the 2-GPU calibration, which no longer absorbs the unaligned points' slowness in
  its all_gather / all_to_all keys, the aligned 4-GPU points move: bwfine all_gather >= 16 MiB 1.3 -> 1.8, < 16 MiB
  9.7 -> 6.8, all_to_all >= 16 MiB 2.9 -> 5.0, < 16 MiB 11.3 -> 15.2, all_reduce 5.3 -> 5.6, send_recv 0.5 -> 0.8;
  l2 all_gather 1.0 -> 1.6, all_reduce 2.8 -> 2.7, broadcast 1.9 -> 1.9.

Element size: only the byte offset decides; the fallback pack is one element, which NCCL's larger unroll for
small packs is meant to offset; only float32 was measured.
"""

from __future__ import annotations

from functools import lru_cache

ALIGN_BYTES = 16
"""NCCL's vector pack (``BigPackSize``): a step whose pointers are not all multiples of it copies by elements."""

UNALIGNED_COPY_FACTOR = 2.045
"""Per-byte cost of a ring / Simple all_gather share whose offset is unaligned, over an aligned one: the median of
the 8 unaligned all_gather points of the proto probe's default and Ring + Simple launches (2 and 4 GPUs), fitted on
that dataset only (``python -m validation.align_probe``); a parameter (``unaligned_copy_factor``), so a calibration
file may carry another."""

SLOWED = (("all_gather", "ring", "simple"), ("all_to_all", "direct", "simple"))
"""(op, algorithm, protocol) whose copies into a peer's buffer start at each rank's share offset (NCCL's direct ring
all_gather on Simple; all_to_all's sends, Simple only)."""


def _off(offset: int) -> bool:
    return offset % ALIGN_BYTES != 0


def unaligned_share(ranks: int, size_bytes: float, op: str = "all_gather") -> float:
    """The fraction of the ``ranks`` shares of a gathered buffer of ``size_bytes`` (nccl-tests' convention: the
    whole output) whose byte offset ``r x share`` is not a multiple of :data:`ALIGN_BYTES` (all_to_all: the
    largest fraction of one rank's sends with an unaligned source or destination offset); the share is
    ``size_bytes / ranks`` in whole bytes (rounded down, as a count of elements is: nccl-tests' sizes and the
    training models' tensors are whole elements per rank)."""
    return _unaligned_fraction(ranks, int(size_bytes // ranks) % ALIGN_BYTES, op == "all_to_all")


@lru_cache(maxsize=4096)
def _unaligned_fraction(ranks: int, share: int, all_to_all: bool) -> float:
    """:func:`unaligned_share` for a share of ``share`` bytes modulo :data:`ALIGN_BYTES` (16 values per world size:
    cached, as the closed form asks it once per prediction)."""
    if all_to_all:
        # rank a sends the part at offset b x share of its buffer into offset a x share of b's: each rank's sends
        # run side by side, so the call waits for the rank with most unaligned pairs
        return max(sum(_off(a * share) or _off(b * share) for b in range(ranks) if b != a)
                   for a in range(ranks)) / (ranks - 1)
    return sum(_off(r * share) for r in range(ranks)) / ranks


def slowed(op: str, algo: str, proto: str) -> bool:
    """Whether a plan of ``op`` / ``algo`` / ``proto`` pays for unaligned shares (:data:`SLOWED`)."""
    return (op, algo, proto) in SLOWED
