"""NCCL's tuning constants (src/graph/tuning.cc, NCCL 2.2x; the newer algorithms' from 2.28 with
src/transport/nvls.cc, src/enqueue.cc and src/graph/search.cc), defined once.

Used by NCCL's own cost model (simulator.collectives.nccl_model) and as the datasheet defaults of
our parameter set (simulator.collectives.params). Latencies in microseconds, bandwidths in GB/s.
"""

from __future__ import annotations

# Index: [algorithm][ll, ll128, simple]; hop classes are NCCL's NVLink, PCI and network latencies.
BASE_LAT = {"tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4)}
HW_LAT = {"nvlink": {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4)},
          "pcie": {"tree": (1.0, 1.9, 4.0), "ring": (1.0, 2.5, 5.7)},
          "net": {"tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0)}}
# [Volta, Ampere, Hopper, Blackwell][N1, N2, N4]
LL_MAX_BW = ((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0), (282.0, 90.0, 70.0))
PER_CH_MAX_RING_LL128 = ((20.0,) * 3, (20.0,) * 3, (36.7,) * 3, (40.0,) * 3)
PER_CH_MAX_TREE_LL128 = ((20.0,) * 3, (20.0,) * 3, (36.7, 36.7, 29.0), (55.6, 31.67, 20.0))
PER_CH_MAX_TREE = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0), (70.0, 42.8, 24.0))
TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9),
)

# Newer algorithms (NCCL 2.28), Simple protocol only; latencies in us.
BASE_LAT_NEWER = {"nvls": 0.0, "nvls_tree": 0.0, "collnet_direct": 0.0, "collnet_chain": 0.0, "pat": 8.0}
HW_LAT_NEWER = {
    "nvlink": {"nvls": 25.0, "nvls_tree": 25.0, "collnet_direct": 3.7, "collnet_chain": 2.8, "pat": 4.0},
    "pcie": {"nvls": 0.0, "nvls_tree": 0.0, "collnet_direct": 3.7, "collnet_chain": 2.8, "pat": 4.0},
    "net": {"nvls": 18.0, "nvls_tree": 20.9, "collnet_direct": 31.0, "collnet_chain": 30.0, "pat": 14.0},
}
NVLS_EFFICIENCY = {90: 0.85, 100: 0.74}
"""NCCL's ``nvlsEfficiency`` (Hopper, Blackwell): achievable fraction of the NVLink bandwidth
while the NVSwitch reduces and multicasts."""
# perChMaxNVLSTreeBws [Volta, Ampere, Hopper, Blackwell][N1, N2, N4] (GB/s)
PER_CH_MAX_NVLS_TREE = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5), (0.0, 96.0, 80.0))


def generation_index(compute_capability: int) -> int:
    """The row of the [Volta, Ampere, Hopper, Blackwell] tables above for a compute capability (e.g. 90)."""
    cc = compute_capability
    return 3 if cc >= 100 else 2 if cc >= 90 else 1 if cc >= 80 else 0


def nodes_index(nodes: int) -> int:
    """The column of the [N1, N2, N4] tables above: one node (NVLink domain), two, or more."""
    return 0 if nodes <= 1 else 1 if nodes == 2 else 2


def per_channel_nvls_tree_GBps(compute_capability: int, domains: int) -> float:
    """NCCL's ``perChMaxNVLSTreeBw``: the bus bandwidth (GB/s) one channel of the NVLS-Tree kernel
    reaches, by GPU generation and number of NVLink domains (N1, N2, N4 and more)."""
    return PER_CH_MAX_NVLS_TREE[generation_index(compute_capability)][nodes_index(domains)]


ALGO_FROM = {"nvls": (2, 17), "nvls_tree": (2, 18), "pat": (2, 23)}
"""The first NCCL that runs each algorithm newer than ring and tree (simulator.collectives.availability reads it;
older releases lack the kernel, so ``auto`` never picks it there and an explicit ``--algo`` is refused). Sources:
NVLS (one NVLink domain) from 2.17: NVIDIA/nccl issue #807, its maintainers on 2023-03-23 ("NCCL_ALGO=NVLS supports
intra-node NVLink SHARP ... an AllReduce in NCCL 2.17.x"). NVLS-Tree from 2.18: the 2.18.1 release notes ("Add
inter-node algorithms for NVLink SHARP: NVLink SHARP + IB SHARP (NVLS), NVLink SHARP + Tree (NVLSTREE)"). PAT from
2.23: NVIDIA/nccl issue #1473 ("in 2.23 we introduced the PAT algorithms ... only support one GPU per node") and
2.23.4's tuning.cc (NVIDIA/nccl a6979c9f: ``NCCL_ALGO_PAT``, ``ncclPatEnable``); 2.20.3's (b6475625) has none."""
NVLS_ACROSS_SERVERS_FROM = (2, 18)
"""NVLS all_reduce across servers (NVLink SHARP inside each, IB SHARP between them): NCCL 2.18.1 on (the release
notes quoted at ALGO_FROM)."""
TUNER_PLUGIN_FROM = (2, 19)
"""The first NCCL that loads a tuner plugin (NCCL_TUNER_PLUGIN): the ext-tuner interface (``ncclTuner_v1_t``,
ext-tuner/example/plugin.c) first appears at NVIDIA/nccl f9c3dc25, whose makefiles/version.mk says 2.19.1
(NVIDIA/nccl issue #1036: "the branch 2.19.1-1 mentions the addition of tuning plugin support"); 2.19.3 was the
first 2.19 release. aws-ofi-nccl PR #922: 2.19-2.20 load a tuner only where NCCL_TUNER_PLUGIN names it."""
LL128_COMPUTE_CAPABILITIES = {70: (2, 7), 80: (2, 7), 90: (2, 15)}
"""NCCL_PROTO unset, tuning.cc up to 2.24 enables LL128 only on the compute capabilities its switch lists (every GPU
alike, ``minCompCap == maxCompCap``; any other ``default: pEnable &= 0``), from the release given: Volta (70) and
Ampere (80) in every release the model plans for (2.7.5's tuning.cc, NVIDIA/nccl 01afd20, lists both); Hopper (90)
from 2.15, the first release built for sm_90 (cupy issue #7094: "NCCL 2.15 adds support for H100"; the case is in
2.16.5's tuning.cc, quoted in NVIDIA/nccl issue #786, and in 2.17.1's, 5d3ab08b; 2.15's own copy not found). 2.20.3's,
2.23.4's and 2.24.3's tuning.cc (b6475625, a6979c9f, 6aae3792) still list only 70, 80 and 90: Blackwell and every
other GPU run LL and Simple there unless NCCL_PROTO asks for LL128."""
LL128_ANY_COMPUTE_CAPABILITY_FROM = (2, 25)
"""From here the model enables LL128 by default on every compute capability from LL128_MIN_COMPUTE_CAPABILITY on, as
2.28.3's tuning.cc does (``pEnable &= !(minCompCap < 70 || ...)``). 2.25.1 added Blackwell (its notes, "Add
Blackwell/SM100 support", as synced in ROCm/rccl PR #1662), and a copy of tuning.cc with Blackwell tables from between
2.25 and 2.27 (release not pinned) lists ``case 100`` and ``case 120`` beside 70-90: Blackwell is on from 2.25
either way. For other GPUs (Turing, Ampere 8.6, Ada) 2.25-2.27 may still run that switch, which leaves them off; no
copy pinned to one of those releases was found, so the model keeps its 2.28 rule there (the public L40S run, NCCL
2.27.3, is predicted with LL128 on, as before)."""
LL128_MIN_COMPUTE_CAPABILITY = 70


def ll128_capable(compute_capability: int, nccl_version: tuple[int, int]) -> bool:
    """Whether NCCL ``nccl_version`` enables LL128 by default on GPUs of ``compute_capability`` (the GPU half of
    tuning.cc's rule; the path half is simulator.collectives.availability.ll128_by_default's)."""
    if compute_capability < LL128_MIN_COMPUTE_CAPABILITY:
        return False
    if nccl_version[:2] >= LL128_ANY_COMPUTE_CAPABILITY_FROM:
        return True
    first = LL128_COMPUTE_CAPABILITIES.get(compute_capability)
    return first is not None and nccl_version[:2] >= first


FORCE_FLUSH_OFF_FROM = (2, 19)
"""NCCL_NET_FORCE_FLUSH defaults to 0 from NCCL 2.19.1 and to 1 before (aws-ofi-nccl's src/platform-aws.cpp notes it
where it sets the variable itself on p5); NCCL's first 2.19 release was 2.19.3, so (major, minor) tells them apart."""


def flushes_gdr_receives(compute_capability: int, gdr: bool, nccl_version: tuple[int, int] | None,
                         force_flush: bool | None = None) -> bool:
    """Whether NCCL flushes every GPUDirect RDMA receive from the network before the GPU reads it (paths.cc
    ``ncclTopoNeedFlush``, transport/net.cc): always on GPUs before Hopper, on Hopper and later only with
    NCCL_NET_FORCE_FLUSH=1 (``force_flush``; None: its default for ``nccl_version``, None meaning a current
    NCCL). Without GPUDirect RDMA (``gdr`` False) there is nothing to flush: bytes land in host memory."""
    if not gdr:
        return False
    if compute_capability < 90:
        return True
    if force_flush is not None:
        return force_flush
    return nccl_version is not None and nccl_version < FORCE_FLUSH_OFF_FROM


NET_LATENCY_FROM = (2, 12)
"""The first NCCL whose network plugin API (``ncclNetProperties_v5``) carries the network's latency, which its tuner
adds to every network step: 2.20.3's tuning.cc (NVIDIA/nccl b6475625) ``interLat = hwLat[NCCL_HW_NET][a][p] +
graphs[a]->latencyInter``, and once more for Simple, "the flush extra latency" (the model prices flushes where NCCL
runs them: ``net_flush_overhead_s``). NCCL's own IB and socket transports report none; a network plugin states its
own (AWS's: simulator.collectives.ofi_tuner.plugin_net_latency_s). Earlier APIs (v4, NCCL 2.9-2.11) have no latency.
The timed model charges it to Simple's network steps only: NCCL's tuner adds it to LL and LL128 too, but the EFA runs'
latency-bound calls leave no room for it there (the p5 run's 8 B all_reduce, Tree/LL, measures 69 us; with it on LL
it would be predicted 178 us, without it 28 us), and charged to Simple alone the corpus figure is the same (section 1b,
validation.corpus_checks: 7.13%, 127 of 286 within 5%, either way)."""


def net_latency_taken(net_latency_s: float, nccl_version: tuple[int, int] | None) -> float:
    """Seconds NCCL ``nccl_version`` (None: a current one) adds to each network step for a network whose plugin
    states ``net_latency_s``: all of it from NET_LATENCY_FROM on, none before."""
    return 0.0 if nccl_version is not None and nccl_version[:2] < NET_LATENCY_FROM else net_latency_s


PAT_BW_FACTOR = 0.75                 # NCCL: PAT's bus bandwidth x 0.75 (2.23.4's tuning.cc, a6979c9f: x 0.85; not by version)
PAT_LOG_LATENCY_DIVISOR = 3.5        # NCCL: PAT latency = 8 + log2(nodes) x (network latency / 3.5) + ...
PAT_RANK_LATENCY_US = 2.8            # ... + ranks x 2.8 us ("still a linear part")
COLLNET_HOPPER_FACTOR = 0.85         # NCCL: CollNet Direct all_reduce on compute capability 9.0+
COLLNET_ARITY_LATENCY_US = 0.4       # NCCL: CollNet Direct, per local rank beyond the first, twice
MAX_DIRECT_ARITY = 7                 # NCCL_MAX_DIRECT_ARITY: CollNet Direct runs on at most 8 GPUs per server

# --- NVLS runtime constants (src/transport/nvls.cc, src/enqueue.cc) ----------------------------
NVLS_CHANNELS_SM90 = 16              # NVLS_NCHANNELS_SM90
NVLS_CHANNELS_SM100_NVL = 24         # Blackwell inside one NVLink domain
NVLS_CHANNELS_SM100 = 32             # Blackwell across NVLink domains
NVLS_CHUNK_BYTES = 128 * 1024        # NCCL_NVLS_CHUNKSIZE default
NVLS_CHUNK_STEPS = ((64, 65536), (8, 32768), (2, 16384))
"""enqueue.cc: while the size is below ``factor x concurrentOps x chunk``, the chunk shrinks to
the given bytes (concurrentOps = NVLS channels x heads)."""
NVLS_TREE_CHUNK_STEPS = ((32, 262144), (16, 131072), (4, 65536), (1, 32768))
NVLS_TREE_WIDE_CHUNK_BYTES = 65536   # NCCL_NVLSTREE_MAX_CHUNKSIZE unset: an NVLS-Tree chunk on 4+ domains
NVLS_TREE_WIDE_DOMAINS = 4
NVLS_CHUNK_PARAM_FROM = (2, 22)
"""The first NCCL whose enqueue.cc takes both NVLS chunks from ``nvlsChunkSize`` (NCCL_NVLS_CHUNKSIZE): NVLS at
most it, NVLS-Tree it capped by NCCL_NVLSTREE_MAX_CHUNKSIZE (unset: 64 KiB on 4+ domains, else it). The 2.20
code (``computeCollChunkInfo``) still caps NVLS at a constant 128 KiB and starts NVLS-Tree from the Simple
buffer's step; 2.21's is not checked here. Before it the model keeps NCCL's defaults whatever the run set."""
MAX_NVLS_ARITY = 32                  # NCCL_MAX_NVLS_ARITY: GPUs of one multicast group for AG/RS

# NCCL's topology search tries these per-channel bandwidths (GB/s), highest first (search.cc).
SPEED_INTER = {90: (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12),
               100: (96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2,
                     0.24, 0.12)}
SPEED_INTRA = {90: (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
               100: (90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0)}

# --- point-to-point channels (src/graph/paths.cc, src/enqueue.cc; used by simulator.collectives.p2p) ---
MAX_CHANNELS = 64                 # NCCL's MAXCHANNELS (and NCCL_MAX_P2P_NCHANNELS' default)
NVLINK_CHUNK_BYTES = 512 * 1024   # NCCL_P2P_NVL_CHUNKSIZE
OTHER_CHUNK_BYTES = 128 * 1024    # NCCL_P2P_PCI_CHUNKSIZE and NCCL_P2P_NET_CHUNKSIZE
SIMPLE_BUFFER_BYTES = 4 << 20     # NCCL_BUFFSIZE: a chunk is at most buffer / NCCL_STEPS
STEPS = 8
RING_CHUNK_STEPS = STEPS // 2     # ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS: a Simple ring chunk is half a buffer
RING_CHANNEL_COPIES = 2           # connect.cc ncclTopoPostset: every ring/tree channel the search finds runs twice


def ring_loop_bytes(channels: int, ranks: int, buffer_bytes: int = SIMPLE_BUFFER_BYTES) -> int:
    """Bytes of one loop of NCCL's Simple ring (all_reduce, all_gather, reduce_scatter; their device code's
    ``loopSize = nChannels * nranks * chunkSize``): a chunk, RING_CHUNK_STEPS of the buffer's STEPS, per rank and
    channel (``channels`` as NCCL runs them)."""
    return channels * ranks * buffer_bytes * RING_CHUNK_STEPS // STEPS


NET_PEER_CHANNELS = 2             # NCCL_NCHANNELS_PER_NET_PEER's default start
P2P_LL_THRESHOLD_BYTES = 16384    # NCCL_P2P_LL_THRESHOLD: a p2p op runs LL up to this many bytes per channel of a peer
LL_BUFFER_BYTES = 8 * 512 * STEPS * 16  # NCCL's default LL buffer: 8 lines a thread x 512 threads x steps x 16-byte line
