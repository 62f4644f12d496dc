"""One training iteration of PyTorch's single-process ``nn.DataParallel``, in steady state.

Read against PyTorch 2.13's ``torch/nn/parallel/data_parallel.py``, ``replicate.py``,
``parallel_apply.py``, ``comm.py`` and ``_functions.py``. One Python process drives every GPU of
one server; per iteration, with a per-GPU batch B on n GPUs (global batch n B on GPU 0):

1. **scatter**: the input batch, on GPU 0, is cut in n chunks; chunk i is copied to GPU i
   (peer copies, all at once, over the topology's routes from GPU 0).
2. **replicate**: the module is copied to every GPU. Parameters and buffers are broadcast from
   GPU 0 with ``comm.broadcast_coalesced``: tensors in chunks of up to 10 MiB, each chunk
   flattened into one buffer (a copy when it holds several tensors) and sent with an NCCL
   broadcast. On the host, ``replicate`` builds n module copies in Python (a cost per module and
   per tensor per replica: ``dp.replicate_s_per_module``, ``dp.replicate_s_per_tensor``).
3. **parallel_apply**: one *new* Python thread per GPU runs its replica's forward, on every
   iteration (:func:`parallel_apply_s` simulates them as events). Two costs, told apart by the
   runner's single-GPU diagnostics (``validation.runners.thread_forward``):

   * a per-fresh-thread cost ``cold_s`` = ``forward_fresh_thread_host_s`` -
     ``forward_warm_thread_host_s`` (PyTorch's thread-local caches, e.g. cuDNN execution plans
     and attention graphs, rebuilt by every new thread): every thread pays it whatever the number
     of GPUs; a share of it runs under the host lock, the rest in parallel: measured on one GPU
     by two threads launching at once (``forward_fresh_pair_host_s`` - ``forward_warm_pair_host_s``
     = ``cold_s`` x (1 + share)), else ``dp.cold_lock_share``;
   * host-lock queuing: each of the forward's ``forward_ops`` operators releases the GIL for its
     C++ work and retakes it; taking it from *another* thread costs ``dp.lock_handoff_s`` during
     which nobody else runs Python, so the hand-offs queue and grow with the number of threads.

   Starting each thread costs the main thread ``dp.thread_s``; the phase ends when the last
   thread has launched its forward (joined).
4. **gather**: the outputs are copied to GPU 0 (peer copies into GPU 0 at once); the loss is
   computed there.
5. **backward** on every GPU (``backward_s``); the gradient of the gathered output is scattered
   back first (its differentiated bytes, ``output_grad_bytes_per_sample``). The autograd
   engine runs each replica's backward on its GPU's own device thread, in C++, but those threads
   still take the GIL: every tensor Python once held that the graph saved (the replicas'
   parameters, which ``replicate`` set as module attributes, and the forward's activations) has
   its Python object kept alive by the tensor (PyTorch's PyObject preservation,
   ``THPVariable_tryResurrect``), and freeing it in backward takes the GIL to release that object
   (``concrete_decref_fn``). So the n device threads queue on the GIL as the forwards do:
   :func:`parallel_apply_s` with n threads, no fresh-thread cost, each launching the single-GPU
   ``backward_host_s`` as ``forward_ops + parameter tensors`` GIL acquisitions, each costing
   ``dp.lock_handoff_s`` when another thread held the lock last (on one GPU nothing contends).
6. **reduce**: the gradients of all replicas meet in one autograd node (the broadcast's
   backward, ``ReduceAddCoalesced``), which runs when *all* of backward has ended, so nothing
   overlaps: per 10 MiB chunk, a flatten on every GPU and an NCCL reduce onto GPU 0
   (``comm.reduce_add_coalesced``): ``dp.chunk_host_s`` of Python per chunk plus
   ``dp.nccl_device_s`` per chunk and GPU (one process drives every GPU's part of each NCCL
   call, one device after the other inside an NCCL group); the broadcast of step 2 pays the same
   per chunk and GPU.
7. **optimizer** on GPU 0 only (``optimizer_s``, as on one GPU).

The iteration is the longer of two paths, as in steady state the host runs ahead of the GPUs
(nothing in a DataParallel step waits for the GPU) until one of them paces the other:

* the GPU path, GPU 0's timeline: the sum of the phases' GPU work above;
* the host path: one Python process issues everything: replicate, the threads' launches,
  backward and optimizer launches, per-chunk work, ``dp.copy_host_s`` per GPU for each of
  scatter and gather (the ``Scatter``/``Gather`` autograd functions issue one copy per GPU) and
  ``dp.step_overhead_s`` (the rest of ``DataParallel.forward``'s Python and the loss, counted
  with the scatter).

Copies between GPUs are point-to-point flows on the topology's routes, shared max-min fairly
(:func:`transfer_time_s`); broadcasts and reduces are NCCL's, timed by the cost model.

What DataParallel moves and launches comes from the workload's optional fields (the
DataParallel runner's profile writes them; the zoo sets the byte counts): ``input_bytes_per_sample``,
``output_bytes_per_sample``, ``output_grad_bytes_per_sample``, ``buffer_bytes``,
``buffer_tensors``, ``modules``, ``forward_host_s``, ``backward_host_s``, ``optimizer_host_s``,
``forward_fresh_thread_host_s``, ``forward_warm_thread_host_s``, ``forward_ops``,
``forward_fresh_pair_host_s``, ``forward_warm_pair_host_s`` (without the fresh/warm pair the
cold cost is ``dp.fresh_thread_s``; without ``forward_ops``, one operator per parameter tensor).
Host launch times a workload does not give are estimated at ``dp.launch_s_per_tensor`` per
parameter tensor for forward and for backward (zero for the fused optimizer step).

Single server only: DataParallel is one process.
"""

from __future__ import annotations

import functools
import heapq
import weakref
from dataclasses import asdict, dataclass, replace
from typing import Sequence

import numpy as np

from simulator.collectives.params import Parameters
from simulator.core.errors import InputError
from simulator.network.closed_form import CostModel
from simulator.network.records import Record
from simulator.network.fairness import max_min_rates
from simulator.training.iteration_bands import dataparallel_caveats, dataparallel_interval
from simulator.training.workload import HOST_TIMES, Workload

COALESCE_BYTES = 10 * 2**20
"""``torch.cuda.comm``'s ``buffer_size``: broadcast and reduce_add_coalesced chunk at 10 MiB."""
PHASES = ("scatter", "replicate", "forward", "gather", "backward", "reduce", "optimizer")


@dataclass(frozen=True)
class DPFacts:
    """What DataParallel moves and launches per iteration, from a workload (bytes, seconds)."""

    input_bytes_per_sample: float
    output_bytes_per_sample: float
    output_grad_bytes_per_sample: float
    tensor_bytes: tuple[int, ...]       # parameters in registration order, then buffers
    param_tensors: int
    modules: int
    forward_host_s: float
    backward_host_s: float
    optimizer_host_s: float
    cold_s: float | None = None         # per fresh thread: fresh-thread minus warm-thread launch (None: not measured)
    forward_ops: int = 1
    cold_lock_share: float | None = None   # measured on one GPU with two threads (None: not measured)

    @classmethod
    def from_workload(cls, w: Workload, launch_s_per_tensor: float) -> "DPFacts":
        ex = dict(w.extras)

        def num(key: str, default: float) -> float:
            v = ex.get(key, default)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise InputError("must be a number >= 0", field=key, value=v)
            return float(v)
        n = len(w.params)
        buffers = int(num("buffer_tensors", 0))
        buffer_bytes = int(num("buffer_bytes", 0))
        per_buffer = [buffer_bytes // buffers] * buffers if buffers else ([buffer_bytes] if buffer_bytes else [])
        out = num("output_bytes_per_sample", 0.0)
        fresh, warm = ex.get("forward_fresh_thread_host_s"), ex.get("forward_warm_thread_host_s")
        cold = max(0.0, num("forward_fresh_thread_host_s", 0.0) - num("forward_warm_thread_host_s", 0.0)) \
            if fresh is not None and warm is not None else None
        pair = (num("forward_fresh_pair_host_s", 0.0) - num("forward_warm_pair_host_s", 0.0)) \
            if "forward_fresh_pair_host_s" in ex and "forward_warm_pair_host_s" in ex else None
        share = min(1.0, max(0.0, pair / cold - 1.0)) if pair is not None and cold else None
        return cls(num("input_bytes_per_sample", 0.0), out, num("output_grad_bytes_per_sample", out),
                   tuple(p.size_bytes for p in w.params) + tuple(per_buffer), n,
                   int(num("modules", n)), num(HOST_TIMES[0], n * launch_s_per_tensor),
                   num(HOST_TIMES[1], n * launch_s_per_tensor), num(HOST_TIMES[2], 0.0), cold,
                   max(1, int(num("forward_ops", n))), share)


@dataclass(frozen=True)
class DPPhase:
    """One phase: seconds on GPU 0's timeline and seconds of host (Python) work."""

    name: str
    gpu_s: float
    host_s: float
    bytes: float = 0.0


@dataclass(frozen=True)
class DataParallelResult:
    """A simulated DataParallel iteration (see the module docstring)."""

    iteration_s: float
    gpu_path_s: float
    host_path_s: float
    phases: tuple[DPPhase, ...]
    gpus: int
    batch_size: int | None             # per GPU
    samples_per_s: float | None
    single_gpu_iteration_s: float
    scaling_efficiency: float
    limit: str
    workload: str
    records: tuple[Record, ...]
    chunks: int = 0
    iteration_lo_s: float | None = None     # 90% interval (simulator.training.iteration_bands)
    iteration_hi_s: float | None = None
    iteration_extrapolated: tuple[str, ...] = ()    # why the interval is not what its band measured (caveats)
    nccl_version: str = ""                  # the NCCL its broadcast and reduce are planned for (Planner.nccl_version)

    @property
    def overhead_s(self) -> float:
        """Seconds DataParallel adds to one GPU's iteration."""
        return self.iteration_s - self.single_gpu_iteration_s

    def as_dict(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k not in ("phases", "records")}
        out["phases"] = [asdict(p) for p in self.phases]
        return out


def chunk_sizes(tensor_bytes: Sequence[int], limit: int = COALESCE_BYTES) -> list[tuple[int, int]]:
    """(bytes, tensors) of each chunk as ``torch._utils._take_tensors`` forms them: consecutive
    tensors until the next would pass ``limit``; a tensor above the limit is a chunk alone."""
    chunks: list[tuple[int, int]] = []
    size = count = 0
    for b in tensor_bytes:
        if count and size + b > limit:
            chunks.append((size, count))
            size = count = 0
        size, count = size + b, count + 1
    if count:
        chunks.append((size, count))
    return chunks


_GPU_MEMO: "weakref.WeakKeyDictionary[CostModel, dict]" = weakref.WeakKeyDictionary()
"""Per cost model: the GPU seconds of its transfers and coalesced calls. They depend on the model's
routes and collective parameters only (and the ``dp.`` copy keys, passed in and part of each memo key), so the trials
of a host fit, which vary ``dp.`` keys on one model, price each once."""


def _memo(model: CostModel) -> dict:
    hit = _GPU_MEMO.get(model)
    if hit is None:
        hit = _GPU_MEMO[model] = {}
    return hit


def transfer_time_s(model: CostModel, transfers: Sequence[tuple[str, str, float]], copy_latency_s: float) -> float:
    """Seconds until the last of ``transfers`` (src GPU, dst GPU, bytes), started together, ends:
    each flow at its max-min fair rate over its route on an idle network, plus its wire latency
    and ``copy_latency_s`` (a peer copy's launch, ``dp.copy_latency_s`` of the parameters in use:
    always passed, never read from the model, whose ``dp.`` keys a host fit's trials override)."""
    memo, key = _memo(model), ("transfer", tuple(transfers), copy_latency_s)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = _transfer_time_s(model, transfers, copy_latency_s)
    return hit


def _transfer_time_s(model: CostModel, transfers: Sequence[tuple[str, str, float]], lat: float) -> float:
    r, p = model.router, model.params
    flows = [(r.route(s, d), b) for s, d, b in transfers if s != d and b > 0]
    if not flows:
        return 0.0
    cap = r.capacity_Bps * np.array([p.link_efficiency(k) for k in r.kind])
    g_ = np.concatenate([np.full(len(route), i) for i, (route, _) in enumerate(flows)])
    l_ = np.concatenate([np.asarray(route, dtype=np.int64) for route, _ in flows])
    rates = max_min_rates(g_, l_, np.ones(len(l_)), cap, np.full(len(flows), np.inf))
    return float(max(b / rate + r.wire_latency_s(route) for (route, b), rate in zip(flows, rates)) + lat)


def _coalesced(model: CostModel, op: str, chunks: Sequence[tuple[int, int]], copy_Bps: float) -> float:
    """GPU seconds of a coalesced broadcast or reduce: per chunk, a flatten copy at ``copy_Bps``
    (chunks of several tensors) and one NCCL call."""
    memo, key = _memo(model), (op, tuple(chunks), copy_Bps)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = float(sum((size / copy_Bps if count > 1 else 0.0) + model.time_s(op, size)
                                    for size, count in chunks))
    return hit


@functools.lru_cache(maxsize=1 << 14)
def parallel_apply_s(threads: int, launch_s: float, ops: int, cold_s: float, cold_lock_share: float,
                     handoff_s: float, start_s: float) -> float:
    """Host seconds from ``parallel_apply``'s call until its last replica thread has launched its
    forward, simulated as events (one clock, a FIFO host lock).

    Thread i starts at ``i * start_s`` (the main thread starts them one by one); it pays its
    fresh-thread cost ``cold_s`` (the share ``cold_lock_share`` holding the lock, the rest free),
    then ``ops`` times: ``launch_s / ops`` of operator work with the lock released, then retakes
    the lock, which costs ``handoff_s`` when another thread held it last. One thread alone takes
    ``cold_s + launch_s``; hand-offs only happen between threads, so the queue grows with them.
    Remembered per arguments (a host fit's trials repeat them for every key the queue does not read)."""
    segments = ([(False, cold_s * (1 - cold_lock_share)), (True, cold_s * cold_lock_share)] if cold_s > 0 else []) \
        + [(False, launch_s / ops), (True, 0.0)] * ops
    events: list[tuple[float, int, int]] = [(i * start_s, i, i) for i in range(threads)]   # (time, seq, thread)
    heapq.heapify(events)
    step = [0] * threads
    seq, holder, last, waiting, end = threads, -1, -1, [], 0.0

    def grant(t: float, i: int) -> None:
        nonlocal seq, holder, last
        hold = segments[step[i]][1] + (handoff_s if last not in (-1, i) else 0.0)
        holder, last = i, i
        step[i] += 1
        heapq.heappush(events, (t + hold, -1 - seq, i))   # negative seq: a release
        seq += 1

    while events:
        t, tag, i = heapq.heappop(events)
        if tag < 0:                                         # thread i releases the lock
            holder = -1
            if waiting:
                grant(t, waiting.pop(0))
        if step[i] == len(segments):
            end = max(end, t)
            continue
        locked, d = segments[step[i]]
        if not locked:
            step[i] += 1
            heapq.heappush(events, (t + d, seq, i))
            seq += 1
        elif holder == -1:
            grant(t, i)
        else:
            waiting.append(i)
    return end


def backward_threads_s(threads: int, facts: DPFacts, handoff_s: float) -> float:
    """Host seconds until the autograd engine's ``threads`` device threads have launched every
    replica's backward (module docstring, step 5): each launches the single-GPU
    ``backward_host_s`` and takes the GIL ``forward_ops + param_tensors`` times to free tensors
    Python held, paying ``handoff_s`` when another thread held it last; they start together."""
    if threads == 1:
        return facts.backward_host_s
    return parallel_apply_s(threads, facts.backward_host_s, facts.forward_ops + facts.param_tensors, 0.0, 0.0,
                            handoff_s, 0.0)


def simulate_dataparallel(model: CostModel, workload: Workload, params: Parameters | None = None) -> DataParallelResult:
    """One ``nn.DataParallel`` iteration of ``workload`` (per-GPU batch) on every GPU of ``model``'s
    topology, which must be one server. ``params``: the ``dp.`` keys to use instead of the model's
    (its collectives and links keep the model's own parameters), so that the trials of a host fit share
    one model's plans."""
    r, p = model.router, params or model.params
    version = str(model.planner.nccl_version)
    gpus = list(r.gpus)
    n = len(gpus)
    if r.info.hosts > 1:
        raise InputError("DataParallel is one process on one server; use --strategy ddp for several "
                         "servers", field="nodes", value=r.info.hosts)
    f = DPFacts.from_workload(workload, p["dp.launch_s_per_tensor"])
    fwd, bwd, opt = workload.forward_s, workload.backward_s, workload.optimizer_s
    bs = workload.batch_size or 1
    single = max(fwd + bwd + opt, f.forward_host_s + f.backward_host_s + f.optimizer_host_s)
    if n == 1:
        phases = (DPPhase("forward", fwd, f.forward_host_s), DPPhase("backward", bwd, f.backward_host_s),
                  DPPhase("optimizer", opt, f.optimizer_host_s))
        return replace(_result(phases, 1, workload, single, 0, p, _gpu_name(r)), nccl_version=version)
    g0 = gpus[0]
    chunks = chunk_sizes(f.tensor_bytes)
    grad_chunks = chunk_sizes(f.tensor_bytes[:f.param_tensors])
    tensors = len(f.tensor_bytes)
    replicate_host = n * (f.modules * p["dp.replicate_s_per_module"] + tensors * p["dp.replicate_s_per_tensor"])
    share = p["dp.cold_lock_share"] if f.cold_lock_share is None else f.cold_lock_share
    cold = p["dp.fresh_thread_s"] if f.cold_s is None else f.cold_s
    apply_s = parallel_apply_s(n, f.forward_host_s, f.forward_ops, cold, share,
                               p["dp.lock_handoff_s"], p["dp.thread_s"])
    backward_host = backward_threads_s(n, f, p["dp.lock_handoff_s"])
    per_chunk = p["dp.chunk_host_s"] + n * p["dp.nccl_device_s"]
    in_b, out_b, grad_b = (bs * x for x in (f.input_bytes_per_sample, f.output_bytes_per_sample,
                                            f.output_grad_bytes_per_sample))
    phases = (
        DPPhase("scatter", transfer_time_s(model, [(g0, g, in_b) for g in gpus], p["dp.copy_latency_s"]),
                p["dp.step_overhead_s"] + n * p["dp.copy_host_s"], in_b * (n - 1)),
        DPPhase("replicate", _coalesced(model, "broadcast", chunks, p["dp.copy_Bps"]),
                replicate_host + len(chunks) * per_chunk, sum(f.tensor_bytes)),
        DPPhase("forward", fwd, apply_s + p["dp.thread_s"]),
        DPPhase("gather", transfer_time_s(model, [(g, g0, out_b) for g in gpus], p["dp.copy_latency_s"]),
                n * p["dp.copy_host_s"],
                out_b * (n - 1)),
        DPPhase("backward", bwd + transfer_time_s(model, [(g0, g, grad_b) for g in gpus], p["dp.copy_latency_s"]),
                backward_host),
        DPPhase("reduce", _coalesced(model, "reduce", grad_chunks, p["dp.copy_Bps"]),
                len(grad_chunks) * per_chunk, sum(f.tensor_bytes[:f.param_tensors])),
        DPPhase("optimizer", opt, f.optimizer_host_s),
    )
    return replace(_result(phases, n, workload, single, len(chunks), p, _gpu_name(r)), nccl_version=version)


def _gpu_name(router) -> str | None:
    """The catalog name of the topology's GPU (None when its ``gpu_model`` names none we know: not checked)."""
    from simulator.training.gpus import get_gpu, gpu_for_model
    try:
        return get_gpu(gpu_for_model(router.info.gpu_model)).name
    except InputError:
        return None


def _result(phases: Sequence[DPPhase], n: int, w: Workload, single: float, chunks: int,
            params: Parameters, gpu_name: str | None = None) -> DataParallelResult:
    gpu = sum(ph.gpu_s for ph in phases)
    host = sum(ph.host_s for ph in phases)
    it = max(gpu, host)
    records, t = [], 0.0
    for ph in phases:
        records.append(Record("gpu0", ph.name, t, t + ph.gpu_s, ph.bytes))
        t += ph.gpu_s
    t = 0.0
    for ph in phases:
        if ph.host_s > 0:
            records.append(Record("host", ph.name, t, t + ph.host_s))
            t += ph.host_s
    overhead = {ph.name: ph.gpu_s for ph in phases if ph.name in ("scatter", "replicate", "gather", "reduce")}
    if host > gpu:
        limit = "host-bound (one Python process: replicate and GIL-serialised launches)"
    elif n > 1 and max(overhead.values()) > 0.01 * it:
        limit = f"GPU-bound ({max(overhead, key=lambda k: overhead[k])} is the largest DataParallel cost)"
    else:
        limit = "compute-bound"
    bs = w.batch_size
    return DataParallelResult(it, gpu, host, tuple(phases), n, bs, n * bs / it if bs else None, single,
                              single / it if it > 0 else 1.0, limit, w.name,
                              tuple(sorted(records, key=lambda x: (x.start_s, x.track))), chunks,
                              *dataparallel_interval(it, params),
                              iteration_extrapolated=dataparallel_caveats(params, gpu_name, n))
