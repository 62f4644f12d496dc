"""NCCL's point-to-point channels: over how many channels one send (or receive) is spread.

A send/recv or all-to-all moves each peer's bytes over a number of *channels*; each channel is one
CTA on each GPU, and one CTA copies at a bounded rate (``p2p_channel_Bps``, simulator.collectives.params),
so a call spread over few channels cannot fill an NVLink port. How many channels a call gets is
NCCL's rule (NCCL 2.2x: src/graph/paths.cc at init, src/enqueue.cc per call), restated here:

- At init the communicator has ``total`` p2p channels: its collective channels (twice the channels
  the ring/tree search found, :func:`collective_channels`) rounded up to a power of two. Each peer
  may use ``per_peer`` of them: 2 per NVLink of the path to an NVLink peer, 2 for a PCIe peer, 2
  for a peer across the network (fewer as the communicator grows), the least over all peers,
  rounded up to a power of two and at most ``total``.
- Per call, NCCL starts from ``first`` channels: ``per_peer`` halved until ``first x ranks`` fits
  in ``total`` (the ranks share the channels), fewer when the bytes are too few for parts of
  ``min_part_bytes``, and doubles while a channel's part would exceed ``max_part_bytes``, up to
  ``per_peer``. A part is 1/8 to 32 steps on one server, 1/2 to 1 across servers; a Simple call's step
  is NCCL's p2p chunk (512 KiB on an all-NVLink server, 128 KiB over PCIe or across servers), an LL
  call's the LL buffer over its 8 steps (64 KiB: parts of 8 KiB to 2 MiB on one server).

**The protocol** (:meth:`P2pChannels.protocol`, NCCL 2.28's ``addP2pToPlan``/``scheduleP2pTasksToPlan`` in
src/enqueue.cc): NCCL's p2p path has no tuner and never runs LL128. A peer's bytes go LL when they are at
most ``per_peer x NCCL_P2P_LL_THRESHOLD`` (16 KiB for each p2p channel a peer may use, whether or not the
call spreads over them all) and the connection has LL buffers, Simple otherwise: on an NVSwitch server
(32 p2p channels per peer, printed by NCCL 2.28.9 on 2-4 H100s and H200s) LL up to 512 KiB per peer. The
protocol is picked before the channels and sets their part sizes (above). NCCL 2.29 and later compare the
bytes with the channels the call uses instead (16 KiB a channel in use). Connections across the network
have no LL buffers by default (their buffers are shared, ``NCCL_ALLOC_P2P_NET_LL_BUFFERS=0``), so a p2p
call that crosses servers runs Simple at every size. One protocol per call: NCCL picks one per peer
connection, so an all_to_all across servers runs LL to its same-server peers at small sizes where this
rule gives its every peer Simple.

So the channels per peer shrink as ranks grow (4 H200s give a 16-128 MiB send/recv 8 channels, 2
H200s 16: half the bandwidth, as measured) and grow with the size (from 256 MiB on 4 GPUs).
Learned from NCCL's source, not copied; only the rule is NCCL's.

**The channels against their port** (:func:`port_limited_Bps`). A flow's channels copy into the peer
through the GPU's NVLink port; as their demand (channels x one channel's rate) nears what the port
carries for the flow, the CTAs' writes queue behind each other and the rate rounds off below both
limits instead of meeting the lower one at a corner: ``(channels_Bps^-p + port_Bps^-p)^(-1/p)``,
p = :data:`PORT_NORM`. Measured on 4 H100s (validation/data/h100x4_2026-11-26_p2p, send/recv slopes
between sizes of one channel count): 8 channels carry 166 GB/s, 16 carry 296-309 (not twice 166), 32
carry 349-378 (the port's ceiling); p = 4 with 20.8 GB/s a channel and a 375 GB/s port gives 165, 295 and
366, a hard minimum 166, 333 and 375 (p = 2 cannot hold both 16 and 32 channels: 488 at 32). So a
calibration on 2 GPUs (16 channels, near the port) no longer reads the rounding-off as a slow channel
and underrates the 8 channels a 4-GPU send/recv gets (+10-13% on 4 H200s and 4 H100s at 32-128 MiB
with the hard minimum; docs/accuracy.md section 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from simulator.collectives.layout import hosts
from simulator.collectives.nccl_constants import (LL_BUFFER_BYTES, MAX_CHANNELS, NET_PEER_CHANNELS, NVLINK_CHUNK_BYTES,
                                                  OTHER_CHUNK_BYTES, P2P_LL_THRESHOLD_BYTES, SIMPLE_BUFFER_BYTES, STEPS)
from topologies.routing import Router


PORT_NORM = 4.0
"""p of the soft minimum of a p2p flow's channels and its port (module docstring: 'The channels against
their port'); the same p as the host/GPU overlap of simulator.network.host_overlap, chosen on the
H100 probe's 8/16/32-channel rates (p = 4 and 6 fit them within 3%, p = 2 not), not on the 4-GPU
points it is scored on."""


def port_limited_Bps(channels_Bps: float, port_Bps: float) -> float:
    """Rate of a p2p flow whose channels could carry ``channels_Bps`` through a port that gives it
    ``port_Bps``: ``(channels_Bps^-p + port_Bps^-p)^(-1/p)``, p = :data:`PORT_NORM` (below both, the
    lower one where the other is far above it: within 1% at 2.2 times it)."""
    if channels_Bps == math.inf or port_Bps == math.inf:
        return min(channels_Bps, port_Bps)
    if channels_Bps <= 0 or port_Bps <= 0:
        return 0.0
    top = max(channels_Bps, port_Bps)
    return top / ((top / channels_Bps) ** PORT_NORM + (top / port_Bps) ** PORT_NORM) ** (1.0 / PORT_NORM)


def pow2_up(x: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, x))))


def nvlink_link_Bps(compute_capability: int) -> float:
    """One NVLink's bandwidth per direction: 25 GB/s up to Hopper (NVLink 2-4), 50 GB/s on Blackwell."""
    return 50e9 if compute_capability >= 100 else 25e9


def part_bounds(step_bytes: int, net: bool) -> tuple[int, int]:
    """Smallest and largest part of a peer's bytes on one channel, from the protocol's step: 1/8 to 32
    steps on one server, 1/2 to 1 across servers (module docstring)."""
    return (step_bytes // 2, step_bytes) if net else (step_bytes // 8, step_bytes * 32)


@dataclass(frozen=True)
class P2pChannels:
    """NCCL's channel count of one peer's bytes, by size (see the module docstring)."""

    total: int               # p2p channels of the communicator
    per_peer: int            # the most channels one peer's bytes are spread over
    first: int               # channels a call starts from: per_peer shared among the ranks
    min_part_bytes: int
    max_part_bytes: int
    peer_share: float = 1.0  # bytes to one peer per byte of the collective's size (all_to_all: 1/n)
    net: bool = False        # peers across the network (connections without LL buffers)

    def peer_bytes(self, size_bytes: float) -> int:
        """Bytes of one peer's send (or receive) in a call of ``size_bytes``."""
        return math.ceil(size_bytes * self.peer_share)

    def protocol(self, size_bytes: float) -> str:
        """NCCL's protocol of a p2p call of ``size_bytes``: ``"ll"`` while each peer's bytes fit in
        ``per_peer x`` :data:`P2P_LL_THRESHOLD_BYTES` on connections with LL buffers (not across the
        network), ``"simple"`` above; never LL128 (module docstring: 'The protocol')."""
        if self.net or self.peer_bytes(size_bytes) > self.per_peer * P2P_LL_THRESHOLD_BYTES:
            return "simple"
        return "ll"

    def count(self, size_bytes: float, proto: str = "simple") -> int:
        """Channels of one peer's send (or receive) in a call of ``size_bytes`` run with ``proto``
        (LL's parts are sized from its own step, the others' from the p2p chunk)."""
        b = self.peer_bytes(size_bytes)
        if b <= 0:
            return 1
        lo, hi = part_bounds(LL_BUFFER_BYTES // STEPS, self.net) if proto == "ll" else \
            (self.min_part_bytes, self.max_part_bytes)
        c = max(1, min(self.first, -(-b // lo)))
        part = max(lo, -(-b // c))
        while part > hi and c <= self.per_peer // 2:
            c *= 2
            part = -(-b // c)
        return c


def collective_channels(search_channels: int) -> int:
    """The communicator's collective channels: NCCL doubles the channels its ring/tree search found
    (``search_channels``: 12 on an NVLink server, 2 over PCIe, simulator.collectives.nccl_model's
    ``NcclInputs.channels``) once rings and trees are connected."""
    return min(MAX_CHANNELS, 2 * search_channels)


def p2p_channels(router: Router, ranks: Sequence[str], peer_share: float = 1.0,
                 search_channels: int | None = None) -> P2pChannels:
    """NCCL's p2p channels for a communicator of ``ranks`` on ``router``'s topology.

    ``search_channels``: the channels NCCL's ring/tree search finds on ``router`` (the planner passes
    those of its cached ``Planner.nccl``); None: searched here."""
    if search_channels is None:
        from simulator.collectives.nccl_model import NcclInputs
        search_channels = NcclInputs.from_router(router).channels
    rk = list(ranks)
    n = len(rk)
    per_host = hosts(router, rk)
    coll = collective_channels(search_channels)
    total = pow2_up(min(coll, MAX_CHANNELS))
    wanted = coll
    local = next((g for g in per_host.values() if len(g) > 1), None)
    all_nvlink = False
    if local is not None:
        route = router.route(local[0], local[1])
        kinds = {str(router.kind[i]) for i in route}
        all_nvlink = kinds == {"nvlink"}
        if all_nvlink:
            bottleneck = min(float(router.capacity_Bps[i]) for i in route)
            links = max(1, round(bottleneck / nvlink_link_Bps(router.info.compute_capability)))
            wanted = min(wanted, 2 * links)
        else:
            wanted = min(wanted, 2)
    if len(per_host) > 1:
        net = NET_PEER_CHANNELS
        while net * n > total * 4 and net > 1:
            net //= 2
        wanted = min(wanted, net)
    per_peer = min(pow2_up(wanted), total)
    first = per_peer
    while first * n > total and first > 1:
        first //= 2
    chunk = OTHER_CHUNK_BYTES if len(per_host) > 1 or not all_nvlink else NVLINK_CHUNK_BYTES
    chunk = min(chunk, SIMPLE_BUFFER_BYTES // STEPS)
    lo, hi = part_bounds(chunk, len(per_host) > 1)
    return P2pChannels(total, per_peer, first, lo, hi, peer_share, net=len(per_host) > 1)
