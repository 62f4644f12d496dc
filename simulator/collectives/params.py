"""The parameter set: every number a measurement could correct, in one flat, frozen mapping.

Keys are dotted names; values are SI floats (seconds, bytes/s) or dimensionless factors:

- ``base_latency_s.{ring,tree}.{ll,ll128,simple}``: fixed cost of one collective launch on the GPU
  (NCCL's ``baseLat``).
- ``hop_latency_s.{nvlink,pcie,shm,net}.{ring,tree}.{ll,ll128,simple}``: per pipeline step over a
  hop of that class (NCCL's ``hwLat``; ``shm`` is GPU->host memory->GPU when peer-to-peer is off;
  ``socket`` is NCCL's TCP socket transport, defaulting to the network's values).
- ``proto_efficiency.{ring,tree}.{ll,ll128,simple}``: payload fraction of the wire bandwidth
  (LL sends 4 bytes of data per 8-byte store, LL128 120 of 128 bytes; NCCL's model refinements).
- ``ll_max_busbw_Bps``: rate of the LL protocol's steps (NCCL's ``llMaxBw``, Hopper): LL's CTAs, not the
  wire, set its pace on NVLink, so a ring's LL bus bandwidth is this rate times the share of its steps
  that move data (``plans.ring_step_share``: 2(n-1)/(2n-1) for all-reduce, 2/3 on 2 GPUs, 6/7 on 4;
  measured on 2 and 4 H200s: 121 and 149 GB/s); a tree's is half of it. The LL line efficiency stays
  a fitted parameter: on NVLink the step rate binds and the efficiency moves no point, but across
  servers older NCCL models LL at a quarter of the wire for all-reduce (its tuning model's 1/4 before
  it became 1/2), and fixing it at 1/2 left the 2021 AWS p4d EFA runs (NCCL 2.8/2.9) misfitted.
- ``link_efficiency.{nvlink,pcie,socket,net}``: achievable fraction of a link's datasheet bandwidth (NVLink:
  of Hopper's; other generations' links carry NCCL's per-link share relative to Hopper's,
  topologies.presets.nvlink_usable).
- ``shm_efficiency``: extra factor on routes through host memory (two copies instead of one).
- ``p2p_channel_Bps``: payload rate of one NCCL p2p channel (one CTA copying a peer's part and
  receiving another's) between GPUs of one server; a send/recv or all-to-all flow gets NCCL's channel
  count for its size and rank count (simulator.collectives.p2p) times this, rounded off against the
  flow's share of its NVLink port (``p2p.port_limited_Bps``). 21 GB/s: measured on 4 H100s (NCCL 2.28,
  validation/data/h100x4_2026-11-26_p2p: 8 channels carry 166 GB/s of a 32-128 MiB send/recv, 16 carry
  296-309, 32 carry 349-378: 21 GB/s a channel against the port gives 166, 292 and 353 at the default
  NVLink efficiency); Hopper's SM copy rate, unmeasured on other GPU generations. Across servers and
  through host memory no per-channel ceiling is modelled (the CTA copies into a local buffer).
- ``socket_max_Bps``: bandwidth of one hop through the socket transport (TCP through the kernel).
- ``call_overhead_s``: per-call cost outside NCCL's model (framework launch, e.g. PyTorch's
  ``dist.all_reduce`` adds tens of microseconds); 0 in the datasheet set. With ``op_overhead_s.{op}``
  and ``rank_overhead_s`` it is the host's issue of the call (``Plan.host_s``), which overlaps the
  previous call's GPU work in a stream of calls (simulator.network.host_overlap): small calls run at
  its pace, large ones hide it.
- ``net_call_overhead_s``: per-call cost of a collective whose ranks span several servers, beyond
  NCCL's per-step network latency: the fabric's own per-message path (AWS EFA's SRD through libfabric,
  GCP's GPUDirect-TCPX/TCPXO through host or NIC offload engines). 0 in the datasheet set (verbs: NCCL's
  constants hold); the public TCPX/TCPXO clusters pay 0.05-0.8 ms a call (validation/corpus.py's tcpx group:
  not adopted). EFA's cost follows NCCL's flush of GPUDirect receives: ``net_flush_overhead_s``.
- ``net_flush_overhead_s``: per-call cost of a collective across servers where NCCL flushes each GPUDirect RDMA
  receive before the GPU reads it (simulator.collectives.nccl_constants.flushes_gdr_receives: GPUs before Hopper,
  Hopper with NCCL before 2.19.1 or NCCL_NET_FORCE_FLUSH=1), on top of ``net_call_overhead_s``; a Simple ring pays
  it again for each ring loop after the first, its receives flushing anew (simulator.collectives.layout.RingLoops).
  0 in the datasheet set; on AWS EFA the flushing clusters pay 0.5-2 ms a call and the others 0.1-0.4 ms
  (``--calibration corpus-efa``, fitted by validation/corpus.py on the flushing EFA clusters, each predicted by a
  fit to the others).
- ``rank_overhead_s``: added to every call once per doubling of the number of ranks
  (``log2(n)`` times): a collective waits for its slowest rank's launch, and the slowest of n grows
  with n. 0 in the datasheet set; a 2-GPU fit cannot tell it from ``call_overhead_s``, so
  calibration reads it off the repetitions' order statistics instead (validation.rank_sync).
- ``op_efficiency.{op}``, ``op_overhead_s.{op}``: per-collective bandwidth factor and extra fixed
  cost relative to ``call_overhead_s`` (negative when an op launches faster than the others; the
  per-call total never goes below 0), 1 and 0 in the datasheet set. NCCL's model treats all collectives alike; measurements do not
  (e.g. all_gather reaches a lower bus bandwidth than all_reduce on 2 H200s; send_recv launches two
  operations).
- ``op_local_s_per_byte.{op}``: seconds per byte of the collective's size spent outside the network
  (copies and reductions in GPU memory); 0 in the datasheet set. Unlike the wire term it does not
  shrink with (n-1)/n.
- ``op_shard_s_per_byte.{op}``: seconds per byte of one rank's shard (S/n) spent outside the network
  (each rank's copy or reduction of its own shard, which does not overlap the wire transfer); 0 in
  the datasheet set. It shrinks as 1/n, which is why bus bandwidth grows from 2 to 4 GPUs on the
  same links (all_gather on 4 H200s: 269 -> 325 GB/s).
- ``nvls_efficiency.{sm90,sm100}``: fraction of the NVLink rate NVLS reaches while the switch
  reduces and multicasts (NCCL's ``nvlsEfficiency``, Hopper and Blackwell); ``collnet_efficiency``
  the same for SHARP switches; ``nvls_fill_rounds``: NVLS pipeline fill in rounds of chunks
  (simulator.collectives.nvls); ``nvls_step_overhead_s``: cost of each round of NVLS chunks besides
  its bytes (0 in the datasheet set; simulator.collectives.layout.Chunking). The newer algorithms (nvls, nvls_tree, collnet_direct,
  collnet_chain, pat) have ``base_latency_s``/``hop_latency_s``/``proto_efficiency`` keys for the
  simple protocol only (simulator.collectives.algorithms).
- ``unaligned_copy_factor``: per-byte cost of a ring / Simple all_gather share whose offset is not a multiple of
  16 bytes, over an aligned one (NCCL's element-wide copy path; simulator.collectives.alignment, fitted on the
  proto probe); 1 in :func:`ideal`.
- ``ddp.*``: the DDP iteration model's parameters (see simulator.training.ddp).
- ``dp.*``: ``nn.DataParallel`` (simulator.training.dataparallel): ``dp.copy_Bps`` 1 TB/s
  (flattening a chunk: a read and a write of HBM, as ``ddp.bucket_copy_Bps``);
  ``dp.copy_latency_s`` 10 us (launching peer copies); ``dp.replicate_s_per_module`` 8 us and
  ``dp.replicate_s_per_tensor`` 3 us per replica (``replicate`` copies each module's
  ``__dict__`` in Python and wires each parameter and buffer: a few microseconds of interpreter
  work each); ``dp.lock_handoff_s`` 20 us (taking the GIL back
  from another ``parallel_apply`` thread after an operator; paid once per operator per contended
  acquisition, so the forwards' launches queue behind each other as threads are added);
  ``dp.cold_lock_share`` 0.5 (the share of a fresh thread's cold cost, measured on one GPU as a
  forward launched from a new thread minus one from a warm thread, that holds the GIL: 0 when
  every replica thread rebuilds its caches in parallel, 1 when they do it one after the other;
  both fitted on 2-GPU runs, see docs/accuracy.md; a profile with the two-thread diagnostic
  gives its own share); ``dp.fresh_thread_s`` 50 ms (a fresh thread's cold cost for workloads
  that did not measure it, e.g. the zoo's: measured on one H200 with torch 2.11 and bf16 autocast,
  48 ms for bert-base, 50 ms for gpt2, 71 ms for resnet50, 0.4 ms for a 4-layer MLP,
  validation/data/h200x4_2026-11-26e); ``dp.thread_s`` 50 us (starting and joining one ``parallel_apply`` thread);
  ``dp.chunk_host_s`` 20 us (Python bookkeeping of one coalesced chunk); ``dp.nccl_device_s`` 20 us
  (per coalesced chunk and GPU: one process issues each GPU's part of the broadcast or reduce in
  turn inside an NCCL group); ``dp.launch_s_per_tensor``
  40 us (host time to launch a forward or a backward, per parameter tensor, when the workload
  gives no measured host times: the DataParallel runner's single-GPU profiles on an H200 host
  measured 33-52 us per tensor for the forward, 42-73 us for the backward, with bf16 autocast);
  ``dp.step_overhead_s`` 200 us (the rest of ``DataParallel.forward``'s Python and the loss, per
  iteration) and ``dp.copy_host_s`` 50 us (per GPU, for each of scatter and gather: the autograd
  function's Python and one copy launch); the DataParallel runner's breakdown on H200 hosts
  measured 0.7-1.5 ms for scatter, gather and loss together on 2-4 GPUs.
- ``gloo.*``: PyTorch's Gloo backend (simulator.network.host_collectives), host-based: every
  step is a TCP send/receive between processes through the kernel, reductions run on a CPU core.
  ``gloo.call_overhead_s`` 30 us (ProcessGroupGloo hands each call to a worker thread and is
  woken when it is done: two thread wake-ups of 10-15 us on a server); ``gloo.step_latency_s.
  {loopback,net}`` 40 us / 50 us per algorithm step on two processes (a TCP send and receive: two
  system calls, the receiver's I/O thread woken by epoll, the waiting thread woken by it, about
  twice the call's cost; across a NIC add the wire round trip), times H(n)/H(2) for n processes (the
  expected last of n memoryless wake-ups, simulator.network.host_collectives.slowest_of); ``gloo.loopback_Bps`` 4 GB/s per connection (one TCP stream through the loopback
  device copies every byte twice in the kernel; iperf-style single streams reach 3-5 GB/s on
  server CPUs); ``gloo.host_memory_Bps`` 40 GB/s shared by every connection of one host at a
  time (the kernel's copies of all local streams compete for the CPU's memory bandwidth and
  cores, which is why 4 local processes do not get 4 x one stream); ``gloo.tcp_stream_max_Bps``
  3 GB/s per connection across hosts (a single TCP stream, Gloo's one pair per peer) and
  ``gloo.net_efficiency`` 0.9 of the NIC shared by the host's connections;
  ``gloo.reduce_Bps`` 8 GB/s (bytes of the buffer summed per second by one CPU thread: two
  reads and a write per element, vectorised); ``gloo.staging_efficiency`` 0.8 of the PCIe
  route's bandwidth for the copies of CUDA tensors to pinned host memory and back, and
  ``gloo.staging_overhead_s`` 50 us per call for them (two copy launches and the stream
  synchronisations around them, 10-15 us each).
- ``mpi.*``: a generic host-based MPI (Open MPI/MPICH with shared memory inside a server and
  the NIC across servers): ``mpi.call_overhead_s`` 5 us, ``mpi.step_latency_s.{shm,net}``
  1 us / 3 us (shared-memory and RDMA-verbs message latencies), ``mpi.shm_Bps`` 10 GB/s per
  pair (one single-copy CMA transfer) sharing ``mpi.host_memory_Bps`` 40 GB/s as Gloo's, ``mpi.net_efficiency`` 0.9 of the NIC,
  ``mpi.reduce_Bps`` 8 GB/s (as Gloo's). A calibration on the cluster's own MPI replaces them.

Defaults are NCCL 2.2x's tuning constants (src/graph/tuning.cc) and datasheet bandwidths.
``--calibration FILE`` replaces any subset of them (``load_calibration``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Mapping, Sequence

from simulator.collectives.algorithms import param_defaults as newer_algorithm_defaults
from simulator.collectives.alignment import UNALIGNED_COPY_FACTOR
from simulator.collectives.nccl_constants import BASE_LAT, HW_LAT
from simulator.core.errors import InputError
from simulator.core.inputs import parse_json, path_exists, read_text, refuse_misspelt_keys
from simulator.core.outputs import write_atomic
from simulator.core.vocabulary import NCCL_CURRENT, OPS, PROTOS, LinkClass, NcclVersion, nccl_version

ALGOS = ("ring", "tree")
HOP_CLASSES = ("nvlink", "pcie", "shm", "net", "socket")
LINK_CLASSES = tuple(c.value for c in LinkClass)

_US = 1e-6
# Host-memory hops (shm) take NCCL's PCI latencies; the socket transport takes the network's.
_HOP = {**HW_LAT, "shm": HW_LAT["pcie"], "socket": HW_LAT["net"]}
_EFF = {"ring": (0.5, 0.92, 1.0), "tree": (0.92 / 3.8, 0.92 * 7.0 / 9.0, 0.92)}


def _defaults() -> dict[str, float]:
    d: dict[str, float] = {}
    for a in ALGOS:
        for p, v in zip(PROTOS, BASE_LAT[a]):
            d[f"base_latency_s.{a}.{p}"] = v * _US
            d[f"proto_efficiency.{a}.{p}"] = _EFF[a][PROTOS.index(p)]
    for c in HOP_CLASSES:
        for a in ALGOS:
            for p, v in zip(PROTOS, _HOP[c][a]):
                d[f"hop_latency_s.{c}.{a}.{p}"] = v * _US
    d.update({
        "ll_max_busbw_Bps": 141e9,
        "link_efficiency.nvlink": 0.8,
        "link_efficiency.pcie": 0.8,
        "link_efficiency.socket": 0.8,
        "link_efficiency.net": 0.92,
        "shm_efficiency": 0.5,
        "p2p_channel_Bps": 21e9,               # one p2p channel (CTA) on one server; see the docstring
        "socket_max_Bps": 5e9,                 # per hop through NCCL's socket transport (TCP)
        "unaligned_copy_factor": UNALIGNED_COPY_FACTOR,   # simulator.collectives.alignment
        "call_overhead_s": 0.0,
        "net_call_overhead_s": 0.0,            # per call across servers, beyond NCCL's per-step latency
        "net_flush_overhead_s": 0.0,           # per call across servers where NCCL flushes GPUDirect receives
        "rank_overhead_s": 0.0,                # extra per-call cost per doubling of the ranks
        **{f"op_efficiency.{op}": 1.0 for op in OPS},
        **{f"op_overhead_s.{op}": 0.0 for op in OPS},
        **{f"op_local_s_per_byte.{op}": 0.0 for op in OPS},
        **{f"op_shard_s_per_byte.{op}": 0.0 for op in OPS},
        # DDP iteration model (simulator.training.ddp)
        "ddp.bucket_overhead_s": 20 * _US,     # per bucket: launch + bookkeeping on the comm stream
        "ddp.bucket_copy_Bps": 1.0e12,         # copying gradients into the flat bucket (HBM, read+write)
        # fraction backward compute slows while an all-reduce runs: measured, not 0. The overlap probe
        # (validation/data/h100x4_2026-11-26j: all_reduce of 64 and 384 MiB beside bf16 matmuls and copies,
        # 2 and 4 H100s) delays the work by x of the all-reduce's time, s = x / (1 - x): median 0.49 over 16
        # points, range 0.26-1.10 (python -m validation.overlap_check validation/data/h100x4_2026-11-26j/
        # overlap_world{4,2}.jsonl; tests/test_overlap_probe.py recomputes it). A fit to DDP iterations
        # cannot tell it from a compute error (0.41 with profile compute, 1.8 with no_sync compute: accuracy.md section 4).
        "ddp.compute_slowdown": 0.49,
        "ddp.iteration_overhead_s": 0.0,       # fixed per-iteration cost (data loader, host sync)
        # DDP's per-tensor work (simulator.training.ddp, "Per-tensor work"): 0 in the datasheet set, so DDP adds
        # no per-tensor work; a workload with host launch times still takes the longer of its GPU timeline and
        # its host path (those times). validation.ddp_host measures them on one host (section 6)
        "ddp.tensor_kernel_s": 0.0,            # GPU: fixed cost of one small per-tensor kernel (copy, scale)
        "ddp.tensor_host_s": 0.0,              # host: reducer hook and its launches, per gradient tensor
        "ddp.bucket_host_s": 0.0,              # host: launching one bucket's all-reduce
        "ddp.buffer_host_s": 0.0,              # host: broadcasting one buffer tensor before the forward
        "ddp.copy_back_s_per_byte": 0.0,       # GPU: the gradients' bytes copied back from the buckets into .grad
        # torch.nn.DataParallel (simulator.training.dataparallel)
        "dp.copy_Bps": 1.0e12,
        "dp.copy_latency_s": 10 * _US,
        "dp.replicate_s_per_module": 8 * _US,
        "dp.replicate_s_per_tensor": 3 * _US,
        "dp.lock_handoff_s": 20 * _US,         # taking the GIL from another thread (per operator)
        "dp.cold_lock_share": 0.5,             # share of a fresh thread's cold cost under the GIL
        "dp.fresh_thread_s": 50e-3,            # a fresh thread's cold cost when the workload has not measured it
        "dp.thread_s": 50 * _US,
        "dp.chunk_host_s": 20 * _US,
        "dp.nccl_device_s": 20 * _US,          # per coalesced chunk and GPU: one GPU's part of an NCCL group call
        "dp.launch_s_per_tensor": 40 * _US,
        "dp.step_overhead_s": 200 * _US,
        "dp.copy_host_s": 50 * _US,
        # host-based backends (simulator.network.host_collectives); see the module docstring
        "gloo.call_overhead_s": 30 * _US,
        "gloo.step_latency_s.loopback": 40 * _US,
        "gloo.step_latency_s.net": 50 * _US,
        "gloo.loopback_Bps": 4e9,
        "gloo.host_memory_Bps": 40e9,
        "gloo.tcp_stream_max_Bps": 3e9,
        "gloo.net_efficiency": 0.9,
        "gloo.reduce_Bps": 8e9,
        "gloo.staging_efficiency": 0.8,
        "gloo.staging_overhead_s": 50 * _US,
        "mpi.call_overhead_s": 5 * _US,
        "mpi.step_latency_s.shm": 1 * _US,
        "mpi.step_latency_s.net": 3 * _US,
        "mpi.shm_Bps": 10e9,
        "mpi.host_memory_Bps": 40e9,
        "mpi.net_efficiency": 0.9,
        "mpi.reduce_Bps": 8e9,
    })
    d.update(newer_algorithm_defaults())       # NVLS, NVLS-Tree, CollNet, PAT (simple protocol only)
    return d


DEFAULTS: Mapping[str, float] = MappingProxyType(_defaults())

MIN_BASE_LATENCY_S = 1e-6
"""No collective completes faster than a kernel launch on the GPU (~1 us)."""
MIN_HOP_LATENCY_S = 1e-7
"""No protocol step crosses a hop faster than ~100 ns (a flag write seen by the peer)."""


def bounds(key: str) -> tuple[float, float]:
    """The physical range of a parameter (calibration files and the fitter both keep to it).

    Efficiencies are at most 1: a fit that wants more than the wire carries has found a feature the
    model lacks (e.g. NVLink SHARP), and is refused rather than absorbed."""
    if "efficiency" in key:
        return (0.05 if key.startswith("op_efficiency.") else 1e-3, 1.0)
    if key.startswith("base_latency_s."):
        return (MIN_BASE_LATENCY_S, 1.0)
    if key.startswith("hop_latency_s."):
        return (MIN_HOP_LATENCY_S, 1.0)
    if key.startswith("op_overhead_s."):
        return (-100e-6, 1.0)           # relative to call_overhead_s: an op may launch faster than the rest
    if key == "ddp.compute_slowdown":
        return (0.0, 5.0)
    if key == "dp.lock_handoff_s":
        return (0.0, 1e-3)
    if key == "dp.fresh_thread_s":
        return (0.0, 10.0)
    if key == "nvls_fill_rounds":
        return (0.0, 8.0)
    if key == "unaligned_copy_factor":
        return (1.0, 8.0)               # an unaligned copy is never faster than an aligned one
    if "_s_per_byte" in key:
        return (0.0, 1e-9)              # up to 1 ns per byte (1 GB/s)
    if key.endswith("_Bps"):
        return (1e6, 1e15)
    return (0.0, 1.0)


def out_of_range_message(key: str, value: float | None = None) -> str:
    """Why a value of ``key`` outside :func:`bounds` is refused, in words a user can act on: for ``value`` (a
    file's), the side it is on; without one (a fit pinned at the limit :func:`bounds` documents), that limit's."""
    lo, hi = bounds(key)
    low = value is not None and value < lo
    high = value is not None and value > hi
    if "efficiency" in key:
        if low:
            what = "negative" if value < 0 else f"below {lo:g}"   # type: ignore[operator]
            return (f"an efficiency must lie in [{lo:g}, 1]; this one is {what}, and an efficiency is the share of the wire's bandwidth "
                    "that a link or an op achieves")
        return (f"an efficiency must lie in [{lo:g}, 1]; above 1 the data show a feature the model lacks "
                "(e.g. NVLink SHARP or a faster link than the topology says), which a parameter must not absorb")
    if key.startswith(("base_latency_s.", "hop_latency_s.")):
        if high:
            return f"above {hi:g} s: a per-call or per-hop latency of seconds is not a collective's"
        return (f"below the physical minimum {lo * 1e6:g} us: a fit that wants less "
                "latency than a kernel launch or a flag write is absorbing another term")
    return f"out of range [{lo:g}, {hi:g}]"


@dataclass(frozen=True)
class Parameters:
    """A complete parameter set: defaults overridden by calibration values."""

    values: Mapping[str, float] = field(default_factory=lambda: DEFAULTS)
    name: str = "datasheet"
    uncertainty: Mapping | None = field(default=None, compare=False)
    """The calibration's ``uncertainty`` block (simulator.collectives.uncertainty reads it), or None:
    the datasheet's own, fitted to the spread of the public measurements."""
    host_uncertainty: Mapping | None = field(default=None, compare=False)
    """The calibration's ``host_uncertainty`` block (Gloo and MPI; simulator.collectives.host_uncertainty)."""
    nccl_version: NcclVersion | None = None
    """The NCCL release these values hold for: the one a calibration's measurements were taken with (its
    ``nccl_version``) or a scenario names. The Planner plans for it unless told another (``--nccl-version``);
    None: the newest the model knows."""
    fitted_gpu_model: str | None = field(default=None, compare=False)
    """The GPU model of the machine a calibration was measured on (the ``gpu_model`` of the preset its file's
    ``topology`` metadata names), None where it names none: a prediction on another GPU says so among its
    interval's reasons (simulator.network.intervals), its interval unchanged."""

    def __getitem__(self, key: str) -> float:
        return self.values[key]

    @cached_property
    def values_key(self) -> tuple[tuple[str, float], ...]:
        """The values as one hashable key, sorted by name: what caches of plans, simulations and fits made with
        this set key on (built once per set)."""
        return tuple(sorted(self.values.items()))

    def base_latency_s(self, algo: str, proto: str) -> float:
        return self.values[f"base_latency_s.{algo}.{proto}"]

    def hop_latency_s(self, hop_class: str, algo: str, proto: str) -> float:
        return self.values[f"hop_latency_s.{hop_class}.{algo}.{proto}"]

    def proto_efficiency(self, algo: str, proto: str) -> float:
        return self.values[f"proto_efficiency.{algo}.{proto}"]

    def link_efficiency(self, link_class: str) -> float:
        return self.values[f"link_efficiency.{link_class}"]

    def achievable_Bps(self, capacity_Bps: Sequence[float], link_classes: Sequence[str]) -> list[float]:
        """Each link's datasheet bandwidth times its class's efficiency (bytes/s)."""
        eff = {k: self.link_efficiency(k) for k in set(link_classes)}
        # one float object per distinct (bandwidth, class): a 16384-GPU table has 10^5 links, a few values
        usable: dict[tuple[float, str], float] = {}
        for pair in set(zip(capacity_Bps, link_classes)):
            usable[pair] = float(pair[0]) * eff[pair[1]]
        return list(map(usable.__getitem__, zip(capacity_Bps, link_classes)))

    def replace(self, name: str | None = None, **updates: float) -> "Parameters":
        """A copy with some values changed; keys may use '__' for '.' (``ddp__compute_slowdown``)."""
        return self.with_values({k.replace("__", "."): v for k, v in updates.items()}, name=name)

    def with_values(self, updates: Mapping[str, float], name: str | None = None,
                    source: str | None = None) -> "Parameters":
        merged = dict(self.values)
        for k, v in updates.items():
            if k not in DEFAULTS:
                close = [d for d in DEFAULTS if d.split(".")[0] == k.split(".")[0]][:4]
                hint = f" (known keys of that kind: {', '.join(close)})" if close else ""
                raise InputError(f"unknown parameter{hint}", source=source, field=f"params.{k}", value=k)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InputError("parameter values must be numbers", source=source, field=f"params.{k}", value=v)
            lo, hi = bounds(k)
            if not lo <= float(v) <= hi:
                raise InputError(out_of_range_message(k, float(v)), source=source, field=f"params.{k}", value=v)
            merged[k] = float(v)
        return replace(self, values=MappingProxyType(merged), name=name or self.name)

    def nudged(self, key: str, value: float) -> "Parameters":
        """A copy with one value changed and no range check (finite differences near a bound)."""
        return replace(self, values=MappingProxyType({**self.values, key: float(value)}))

    def with_uncertainty(self, uncertainty: Mapping | None) -> "Parameters":
        """The same values with a calibration's uncertainty block (see simulator.collectives.uncertainty)."""
        return replace(self, uncertainty=uncertainty)

    def with_host_uncertainty(self, block: Mapping | None) -> "Parameters":
        """The same values with a ``host_uncertainty`` block (see simulator.collectives.host_uncertainty)."""
        return replace(self, host_uncertainty=block)

    def with_nccl_version(self, version: NcclVersion | None) -> "Parameters":
        """The same values, holding for NCCL ``version`` (see :attr:`nccl_version`)."""
        return replace(self, nccl_version=version)

    def planned_nccl_version(self, asked: tuple[int, ...] | None = None) -> NcclVersion:
        """The NCCL a run with these values plans for: ``asked`` (``--nccl-version``), else the release these
        values hold for (:attr:`nccl_version`: a calibration's or a scenario's), else NCCL_CURRENT."""
        return NcclVersion(*asked) if asked else self.nccl_version or NCCL_CURRENT

    def diff(self) -> dict[str, float]:
        """The values that differ from the datasheet defaults."""
        return {k: v for k, v in self.values.items() if DEFAULTS.get(k) != v}


def ideal() -> Parameters:
    """No protocol or launch cost and full link bandwidth: time = wire latency + bytes / bandwidth (no CTA
    ceiling either: LL's step rate and a p2p channel's rate are unbounded)."""
    zero = {k: 0.0 for k in DEFAULTS if "latency_s" in k}
    ones = {k: 1.0 for k in DEFAULTS if "efficiency" in k}
    # built directly: zero latency is below the physical minimum that calibration files must respect
    return Parameters(MappingProxyType({**DEFAULTS, **zero, **ones, "ll_max_busbw_Bps": 1e15, "p2p_channel_Bps": 1e15,
                                         "unaligned_copy_factor": 1.0}),
                      name="ideal")


CALIBRATION_FORMAT = "gpunetsim-calibration/1"
#: The top-level keys of a calibration file that are read (this module reads the first six, the LLM compute model
#: (simulator.training.llm.compute) the rest); every other key is free-form metadata (fit data, residuals, notes;
#: ``topology.preset``, when it names a preset, gives :attr:`Parameters.fitted_gpu_model`),
#: except one spelt so close to a key that changes a prediction (all but ``format`` and ``name``, whose absence only
#: renames: a user's ``names`` or ``formats`` stays metadata) that it is surely meant as that key.
CALIBRATION_KEYS = ("format", "name", "params", "uncertainty", "host_uncertainty", "nccl_version", "llm", "llm_gpus",
                    "pass_profile")
_TYPO_CHECKED_KEYS = tuple(k for k in CALIBRATION_KEYS if k not in ("format", "name"))
SHIPPED_DIR = Path(__file__).resolve().parent / "calibrations"


def load_calibration(path_or_name: str | Path | None) -> Parameters:
    """Datasheet defaults overridden by a calibration file (or a shipped calibration's name)."""
    if path_or_name is None:
        return Parameters()
    data, src = read_calibration(path_or_name)
    if not isinstance(data, dict) or not isinstance(data.get("params"), dict):
        raise InputError("a calibration file is a JSON object with a 'params' object", source=src,
                         field="params")
    fmt = data.get("format", CALIBRATION_FORMAT)
    if fmt != CALIBRATION_FORMAT:
        raise InputError(f"unsupported format (expected {CALIBRATION_FORMAT!r})", source=src, field="format",
                         value=fmt)
    params = Parameters().with_values(data["params"], name=str(data.get("name", Path(src).stem)), source=src)
    unc = data.get("uncertainty")
    if unc is not None:
        from simulator.collectives.uncertainty import check_block
        params = params.with_uncertainty(check_block(unc, src))
    if data.get("host_uncertainty") is not None:
        from simulator.collectives.host_uncertainty import check_host_block
        params = params.with_host_uncertainty(check_host_block(data["host_uncertainty"], src))
    gpu_model = _fitted_gpu_model(data.get("topology"))
    if gpu_model is not None:
        params = replace(params, fitted_gpu_model=gpu_model)
    if data.get("nccl_version") is not None:        # the release the measurements were taken with
        v = data["nccl_version"]
        try:
            params = params.with_nccl_version(nccl_version(v, "nccl_version"))
        except InputError as e:
            raise e.within(src) from None
    return params


def _fitted_gpu_model(topology: object) -> str | None:
    """The GPU model of the preset a calibration file's ``topology`` metadata names (written by ``calibrate``);
    None for a topology file or no record (metadata: never refused)."""
    from topologies.presets import SERVERS
    preset = topology.get("preset") if isinstance(topology, Mapping) else None
    return SERVERS[preset].gpu_model if isinstance(preset, str) and preset in SERVERS else None


def read_calibration(path_or_name: str | Path) -> tuple[object, str]:
    """(parsed JSON, path) of a calibration file or a shipped calibration's name; other models
    (e.g. the LLM compute set under ``llm``) read their own objects from the same file."""
    p = Path(path_or_name)
    if not path_exists(p) and path_exists(SHIPPED_DIR / f"{path_or_name}.json"):
        p = SHIPPED_DIR / f"{path_or_name}.json"
    src = str(p)
    if not path_exists(p):
        shipped = sorted(q.stem for q in SHIPPED_DIR.glob("*.json")) if SHIPPED_DIR.exists() else []
        raise InputError("calibration file not found" + (f"; shipped calibrations: {', '.join(shipped)}"
                                                          if shipped else ""), source=src)
    data = parse_json(read_text(p, what="calibration file"), src)
    if isinstance(data, dict):      # a misspelt key would drop what it holds (the intervals, the LLM compute set)
        refuse_misspelt_keys(data, _TYPO_CHECKED_KEYS, src, known=CALIBRATION_KEYS)
    return data, src


def save_calibration(params: Parameters, path: str | Path, **meta: object) -> None:
    """Write the values that differ from the defaults, plus free-form metadata (fit data, residuals)."""
    out = {"format": CALIBRATION_FORMAT, "name": params.name, **meta, "params": params.diff()}
    if params.nccl_version is not None and "nccl_version" not in out:
        out["nccl_version"] = str(params.nccl_version)
    if params.uncertainty is not None and "uncertainty" not in out:
        out["uncertainty"] = dict(params.uncertainty)
    if params.host_uncertainty is not None and "host_uncertainty" not in out:
        out["host_uncertainty"] = dict(params.host_uncertainty)
    text = json.dumps(out, indent=2, sort_keys=False)
    # lists of numbers (a covariance row, residual quantiles) on one line each
    text = re.sub(r"\[\s*([-+0-9.eE]+(?:,\s*[-+0-9.eE]+)*)\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)
    write_atomic(path, text + "\n")
