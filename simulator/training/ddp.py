"""One PyTorch ``DistributedDataParallel`` training iteration, in steady state.

The model (read against PyTorch 2.13's ``torch/nn/parallel/distributed.py`` and
``torch/csrc/distributed/c10d/reducer.cpp``):

* Gradients are grouped into buckets as the reducer's rebuild after the first iteration does
  (:func:`simulator.training.buckets.assign_buckets`): a first bucket of ``first_bucket_mb`` MiB, then
  ``bucket_cap_mb`` MiB. Bucket 0 holds the first gradients to become ready.
* Forward runs for ``forward_s``; backward starts when it ends. A bucket is ready when all its
  gradients are ready (``grad_ready_s`` from the start of backward; ready times later than
  ``backward_s`` are clamped to it).
* The reducer launches buckets strictly in order (``mark_bucket_ready`` waits for
  ``next_bucket_``) on one NCCL stream, so bucket k starts when it is ready *and* the stream is
  free. On the stream each bucket costs ``ddp.bucket_overhead_s``, a copy of its bytes at
  ``ddp.bucket_copy_Bps`` (skipped with ``gradient_as_bucket_view``; PyTorch copies each gradient
  into the bucket as it arrives, we charge the copy to the bucket), a cast when compressing
  (``bf16``/``fp16`` comm hooks: half the bytes of fp32 gradients; the casts to and back are
  charged as one copy of the bucket's bytes), then the all-reduce that NCCL's tuner picks
  (:meth:`CostModel.best`).
* While an all-reduce runs, backward compute slows by ``1 + ddp.compute_slowdown``; the compute
  after that point (and so the later ready times) stretches.
* The optimizer starts when backward has ended and the last bucket's all-reduce has ended; the
  iteration ends ``optimizer_s + ddp.iteration_overhead_s`` later.
* Gradient accumulation over ``k`` steps: ``k-1`` micro-steps of forward and backward under
  ``no_sync()`` (no communication, no slowdown), then one synchronised step.

Per-tensor work of the synchronised step (``reducer.cpp``, ``distributed.py``; all five keys 0 in the
datasheet set, :mod:`validation.ddp_host` measures them on one host):

* GPU: each gradient is scaled into its bucket as it becomes ready (``mark_variable_ready_dense``:
  ``mul_out``) and copied back into ``.grad`` after the all-reduces (``finalize_bucket_dense`` ->
  ``copy_bucket_to_grad``), and each buffer is copied back after DDP broadcasts the buffers before
  the forward (``broadcast_buffers=True``, ``_sync_buffers``): one small kernel each, costing
  ``ddp.tensor_kernel_s`` on the compute stream (the copies into the buckets lengthen backward, the
  buffers the forward, the copy back runs before the optimizer, its bytes at
  ``ddp.copy_back_s_per_byte``, a key of its own so that a tiny kernel cost does not switch on a whole
  copy). With ``gradient_as_bucket_view`` the gradients live in the buckets: the scale stays
  (``div_``), the copy back goes.
* Host: a workload that carries its host launch times (``forward_host_s``, ``backward_host_s``,
  ``optimizer_host_s``, as the DataParallel runner's profile does) gets a host path: those times
  plus, per synchronised step, ``ddp.tensor_host_s`` per gradient tensor (the reducer's autograd hook
  and its two launches), ``ddp.bucket_host_s`` per bucket (the all-reduce's launch) and
  ``ddp.buffer_host_s`` per buffer tensor (``workload`` extra ``buffer_tensors``). The iteration is
  the longer of the GPU timeline and the host path (``host_path_s``): a step whose host sets the
  pace is bounded by its host path. This holds with the DDP host keys at 0 too (the datasheet set):
  a host-bound workload's iteration is then its own host launch times, not the GPU timeline; only a
  workload without host times gets the GPU timeline alone.

Definitions (all seconds, from the start of the iteration):

* ``forward_s``/``backward_s``: total over all micro-steps, backward as stretched;
* ``exposed_comm_s``: how long the optimizer waited on communication after the last backward
  ended (``max(0, last all-reduce end - backward end)``), so
  ``iteration_s = forward_s + backward_s + exposed_comm_s + copy_back_s + optimizer_s +
  ddp.iteration_overhead_s`` on the GPU; the host path, when longer, replaces it (``limit`` host);
* ``comm_s``: the communication stream's busy time (preparation and all-reduces);
* ``overlap_fraction``: ``1 - exposed_comm_s / comm_s``, the part of communication hidden
  behind backward (1.0 when there is no communication).

One GPU has no communication. ``engine="des"`` runs the all-reduces as discrete events on one
shared network (:mod:`simulator.training.ddp_engine`); ``engine="closed"`` does the same arithmetic with
the alpha-beta times; they agree to rounding when ``ddp.compute_slowdown`` is 0.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

from simulator.training.buckets import Bucket, assign_buckets
from simulator.network.closed_form import CostModel
from simulator.training.ddp_jobs import BackwardTimeline, CommJob, JobTimes
from simulator.network.records import Record
from simulator.core.errors import InputError
from simulator.core.limits import ACCUMULATION_STEPS, MAX_BUCKET_CAP_MB, check_count
from simulator.core.values import switch
from simulator.core.units import MiB, mebibytes
from simulator.core.vocabulary import DTYPE_BYTES, ENGINES, Limit, dtype_bytes
from simulator.training.workload import HOST_TIMES, Workload

COMPRESSIONS = {"bf16": "bfloat16", "fp16": "float16"}
#: Exposed communication below this fraction of the iteration counts as compute-bound.
COMPUTE_BOUND_FRACTION = 0.01
#: Bytes DDP keeps per parameter on every GPU before activations: fp32 weights, gradients and Adam's two moments.
REPLICA_STATE_BYTES_PER_PARAM = 16


def replica_state_bytes(workload: Workload) -> float:
    """Bytes of model states one DDP rank holds (a full replica: :data:`REPLICA_STATE_BYTES_PER_PARAM` per
    parameter, activations not counted): what ``gpunetsim ddp`` compares with the GPU's memory (``fits``).
    Parameters are counted from each gradient's bytes and dtype (the one dtype table,
    simulator.core.vocabulary); an unknown dtype is refused, naming the workload, the parameter and the value."""
    params = 0.0
    for p in workload.params:
        try:
            params += p.size_bytes / dtype_bytes(p.dtype, f"params.{p.name}.dtype")
        except InputError as e:
            raise e.within(workload.name) from None
    return REPLICA_STATE_BYTES_PER_PARAM * params


def replica_fits(workload: Workload, memory_bytes: float) -> bool:
    """Whether one DDP rank's model states (:func:`replica_state_bytes`) fit ``memory_bytes`` (``fits`` of
    ``gpunetsim ddp --json`` and of a study's DDP rows)."""
    return replica_state_bytes(workload) <= memory_bytes


@dataclass(frozen=True)
class DDPConfig:
    """DDP's knobs. ``bucket_cap_mb``/``first_bucket_mb`` are MiB, as in PyTorch.

    ``first_bucket_mb=1.0`` is DDP's default (``bucket_cap_mb`` left unset); PyTorch gives the
    first bucket the same cap as the others when ``bucket_cap_mb`` is passed explicitly, which
    ``first_bucket_mb=None`` models. ``compression``: ``None``, ``"bf16"`` or ``"fp16"``
    (DDP's ``bf16_compress_hook``/``fp16_compress_hook``). ``accumulation_steps``: micro-steps
    per optimizer step, all but the last under ``no_sync()``.
    """

    bucket_cap_mb: float = 25.0
    first_bucket_mb: float | None = 1.0
    compression: str | None = None
    gradient_as_bucket_view: bool = False
    accumulation_steps: int = 1

    def __post_init__(self) -> None:
        for name in ("bucket_cap_mb", "first_bucket_mb"):
            v = getattr(self, name)
            if v is None and name == "first_bucket_mb":
                continue
            number = mebibytes(v, field=name, high=MAX_BUCKET_CAP_MB)
            if number * MiB < 1:
                raise InputError("must be at least one byte (1/1048576 MiB)", field=name, value=v)
            if isinstance(v, str):          # the command line's text, read once here
                object.__setattr__(self, name, number)
        if self.compression == "none":      # --compression's word for no hook (the message below offered it)
            object.__setattr__(self, "compression", None)
        switch(self.gradient_as_bucket_view, field="gradient_as_bucket_view", api=True)
        if self.compression not in (None, *COMPRESSIONS):
            raise InputError("compression must be none, bf16 or fp16", field="compression",
                             value=self.compression)
        check_count(self.accumulation_steps, field="accumulation_steps", limit=ACCUMULATION_STEPS)

    @property
    def limits_bytes(self) -> tuple[int, int]:
        """``(first_bucket_bytes, bucket_cap_bytes)``."""
        cap = int(self.bucket_cap_mb * MiB)
        first = cap if self.first_bucket_mb is None else int(self.first_bucket_mb * MiB)
        return first, cap


@dataclass(frozen=True)
class BucketTiming:
    """One bucket in the synchronised step: seconds from the iteration start. ``start_s`` is when
    the communication stream took it (preparation included), ``end_s`` when its all-reduce
    ended; ``comm_bytes`` is what was all-reduced (after compression)."""

    index: int
    size_bytes: int
    num_params: int
    ready_s: float
    start_s: float
    end_s: float
    algo: str
    proto: str
    comm_bytes: int = 0
    allreduce_start_s: float = 0.0
    limit: Limit = Limit.NONE


@dataclass(frozen=True)
class IterationResult:
    """A simulated DDP iteration; see the module docstring for the definitions."""

    iteration_s: float
    forward_s: float
    backward_s: float
    optimizer_s: float
    exposed_comm_s: float
    comm_s: float
    overlap_fraction: float
    buckets: tuple[BucketTiming, ...]
    gpus: int
    batch_size: int | None
    samples_per_s: float | None
    single_gpu_iteration_s: float
    scaling_efficiency: float
    limit: Limit
    records: tuple[Record, ...]
    workload: str = ""
    engine: str = "des"
    accumulation_steps: int = 1
    iteration_overhead_s: float = 0.0
    iteration_lo_s: float | None = None    # 90% interval (simulator.training.ddp_intervals)
    iteration_hi_s: float | None = None
    iteration_extrapolated: tuple[str, ...] = ()   # why the buckets' intervals leave their calibration's data
    host_path_s: float | None = None       # the host's issue time (workloads with host times only)
    copy_back_s: float = 0.0               # gradients copied back from the buckets before the optimizer
    forward_lo_s: float | None = None      # the parts' 90% intervals (ddp_intervals.part_intervals; forward,
    forward_hi_s: float | None = None      # backward and optimizer only with a workload's compute band)
    backward_lo_s: float | None = None
    backward_hi_s: float | None = None
    optimizer_lo_s: float | None = None
    optimizer_hi_s: float | None = None
    exposed_comm_lo_s: float | None = None
    exposed_comm_hi_s: float | None = None
    comm_lo_s: float | None = None
    comm_hi_s: float | None = None
    fits: bool | None = None               # model states within the GPU's memory (replica_fits); None: unchecked
    nccl_version: str | None = None        # the NCCL planned for (Planner.nccl_version); None: a host backend

    def as_dict(self) -> dict:
        """JSON-ready summary (records left out; see :mod:`gpunetsim.trace`)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("buckets", "records")}
        out["limit"] = self.limit.description
        out["buckets"] = [{**asdict(b), "limit": b.limit.description} for b in self.buckets]
        return out


def _nccl_of(model) -> str | None:
    """The NCCL ``model`` plans for (a CostModel's planner), None for a host backend's model."""
    planner = getattr(model, "planner", None)
    return None if planner is None else str(planner.nccl_version)


# ------------------------------------------------------------------------------ planning
def _comm_bytes_and_cast(bucket: Bucket, compression: str | None) -> tuple[int, bool]:
    if compression is None:
        return bucket.size_bytes, False
    target = COMPRESSIONS[compression]
    if bucket.dtype == target:
        return bucket.size_bytes, False
    return bucket.size_bytes // DTYPE_BYTES[bucket.dtype] * DTYPE_BYTES[target], True


def _jobs(model: CostModel, workload: Workload, buckets: Sequence[Bucket],
          config: DDPConfig) -> list[tuple[CommJob, str, str]]:
    p = model.params
    out = []
    scaled = 0            # gradients scaled into their buckets so far: each a ddp.tensor_kernel_s inside backward
    for b in buckets:
        scaled += len(b.param_indices)
        comm_bytes, cast = _comm_bytes_and_cast(b, config.compression)
        copies = (0 if config.gradient_as_bucket_view else 1) + (1 if cast else 0)
        prep_s = p["ddp.bucket_overhead_s"] + copies * b.size_bytes / p["ddp.bucket_copy_Bps"]
        t, algo, proto = model.best("all_reduce", comm_bytes)
        t = float(t)
        # Host-based backends (Gloo, MPI) have no flow plan: they are timed in closed form only.
        plan = None if getattr(model, "closed_form_only", False) else model.shape("all_reduce", algo, proto).plan
        name = f"bucket {b.index} all_reduce {algo}/{proto} {comm_bytes / MiB:.2f} MiB"
        ready = min(b.ready_s, workload.backward_s) + scaled * p["ddp.tensor_kernel_s"]
        out.append((CommJob(b.index, ready, prep_s, comm_bytes, plan, t, name),
                    algo, proto))
    return out


def comm_jobs(model: CostModel, workload: Workload, config: DDPConfig = DDPConfig()) -> tuple[CommJob, ...]:
    """The synchronised step's bucket all-reduces in launch order, as plain data (none on one GPU);
    what :func:`simulate_iteration` runs, for engines that run several jobs on one network."""
    if model.ranks < 2:
        return ()
    first, cap = config.limits_bytes
    return tuple(j for j, _, _ in _jobs(model, workload, assign_buckets(workload.params, cap, first), config))


# ----------------------------------------------------------------------- closed engine
def stretched_time(t0: float, work_s: float, intervals: Sequence[tuple[float, float]],
                   slowdown: float) -> float:
    """When compute started at ``t0`` has done ``work_s`` seconds of work, if it runs at
    ``1/(1+slowdown)`` during the sorted, disjoint ``intervals`` and at full rate otherwise."""
    t, done = t0, 0.0
    for a, b in intervals:
        if b <= t:
            continue
        a = max(a, t)
        if done + (a - t) >= work_s:
            return t + (work_s - done)
        done += a - t
        seg = (b - a) / (1.0 + slowdown)
        if done + seg >= work_s:
            return a + (work_s - done) * (1.0 + slowdown)
        done, t = done + seg, b
    return t + (work_s - done)


def _backward_closed(t0: float, backward_work_s: float, jobs: Sequence[CommJob],
                     slowdown: float) -> BackwardTimeline:
    intervals: list[tuple[float, float]] = []
    times: list[JobTimes] = []
    records: list[Record] = []
    free = t0
    for job in jobs:
        ready = stretched_time(t0, job.ready_work_s, intervals, slowdown)
        start = max(ready, free)
        ar_start = start + job.prep_s
        end = ar_start + job.allreduce_s
        if job.prep_s > 0:
            records.append(Record("comm", f"bucket {job.index} prep", start, ar_start, 0.0))
        records.append(Record("comm", job.name, ar_start, end, job.comm_bytes))
        intervals.append((ar_start, end))
        times.append(JobTimes(ready, start, ar_start, end))
        free = end
    return BackwardTimeline(stretched_time(t0, backward_work_s, intervals, slowdown), tuple(times),
                            tuple(records))


# ------------------------------------------------------------------------------ result
def _limit(model: CostModel, jobs: Sequence[CommJob], times: Sequence[JobTimes], backward_end_s: float,
           exposed_s: float, iteration_s: float) -> tuple[Limit, list[Limit]]:
    """What the exposed communication is mostly made of; and each bucket's limit."""
    per_bucket = [model.limit("all_reduce", j.comm_bytes) for j in jobs]
    if exposed_s <= COMPUTE_BOUND_FRACTION * iteration_s:
        return Limit.COMPUTE, per_bucket
    share: dict[Limit, float] = {}
    for lim, j, t in zip(per_bucket, jobs, times):
        prep = max(0.0, t.allreduce_start_s - max(t.start_s, backward_end_s))
        comm = max(0.0, t.end_s - max(t.allreduce_start_s, backward_end_s))
        share[Limit.BUCKET_OVERHEAD] = share.get(Limit.BUCKET_OVERHEAD, 0.0) + prep
        share[lim] = share.get(lim, 0.0) + comm
    return max(share, key=lambda k: share[k]), per_bucket


@dataclass(frozen=True)
class TensorWork:
    """GPU seconds of DDP's per-tensor work in the synchronised step (module docstring)."""

    forward_s: float = 0.0        # the buffers' copies after their broadcast
    backward_s: float = 0.0       # the gradients scaled into their buckets, inside backward
    copy_back_s: float = 0.0      # the gradients copied back into .grad, before the optimizer


def buffer_count(v, source: str) -> int:
    """A ``buffer_tensors`` value checked to be a whole number >= 0 (InputError naming ``source``)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or v != int(v):
        raise InputError("must be a whole number >= 0", source=source, field="buffer_tensors", value=v)
    return int(v)


def buffer_tensors(workload: Workload) -> int:
    """The workload's buffer tensors (extra ``buffer_tensors``, 0 when absent), validated."""
    return buffer_count(dict(workload.extras).get("buffer_tensors", 0), workload.name)


def tensor_work(p, workload: Workload, buckets: int, config: DDPConfig) -> TensorWork:
    """DDP's per-tensor GPU work for ``workload`` (module docstring); none without buckets. The kernels
    cost ``ddp.tensor_kernel_s`` each; the copy back's bytes cost ``ddp.copy_back_s_per_byte`` each,
    on their own (both 0 in the datasheet set)."""
    kernel, per_byte, tensors = p["ddp.tensor_kernel_s"], p["ddp.copy_back_s_per_byte"], len(workload.params)
    if not buckets:
        return TensorWork()
    back = 0.0 if config.gradient_as_bucket_view else tensors * kernel + workload.total_bytes * per_byte
    return TensorWork(buffer_tensors(workload) * kernel, tensors * kernel, back)


def host_times(workload: Workload) -> tuple[float, float, float] | None:
    """The workload's host launch times (:data:`simulator.training.workload.HOST_TIMES`; the first two give
    it a host path, the third is 0 when absent), each checked finite and >= 0 (InputError naming the key), or None
    when it carries no forward and backward host time."""
    ex = dict(workload.extras)
    if not all(k in ex for k in HOST_TIMES[:2]):
        return None
    out = []
    for k in HOST_TIMES:
        v = ex.get(k, 0.0)
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise InputError("host launch time must be a number", source=workload.name, field=k, value=v) from None
        if isinstance(v, bool) or not math.isfinite(x) or x < 0:
            raise InputError("host launch time must be a finite number >= 0", source=workload.name, field=k,
                             value=v)
        out.append(x)
    return out[0], out[1], out[2]


def host_extra_s(p, tensors: int, buckets: int, buffers: int) -> float:
    """DDP's host work of one synchronised step over ``no_sync()``'s (module docstring): the one formula
    that the model, :mod:`validation.ddp_host`'s fit and its table use."""
    return tensors * p["ddp.tensor_host_s"] + buckets * p["ddp.bucket_host_s"] + buffers * p["ddp.buffer_host_s"]


def host_path_s(p, workload: Workload, buckets: int, accumulation_steps: int = 1) -> float | None:
    """Host seconds to issue one iteration (module docstring), or None when the workload carries no
    host launch times: ``accumulation_steps`` forwards and backwards, one optimizer step, and DDP's
    host work of the synchronised step."""
    times = host_times(workload)
    if times is None:
        return None
    fwd, bwd, opt = times
    ddp = host_extra_s(p, len(workload.params), buckets, buffer_tensors(workload)) if buckets else 0.0
    return accumulation_steps * (fwd + bwd) + opt + ddp


def simulate_iteration(model: CostModel, workload: Workload, config: DDPConfig = DDPConfig(),
                       engine: str = "des") -> IterationResult:
    """Simulate one DDP iteration of ``workload`` on every GPU of ``model``'s topology.

    ``model`` may also be a Gloo or MPI model (simulator.network.host_collectives), DDP on
    ``backend="gloo"``: its all-reduces are timed in closed form, whatever ``engine`` says."""
    if engine not in ENGINES:
        raise InputError("engine must be des or closed", field="engine", value=engine)
    host_backend = getattr(model, "closed_form_only", False)
    if host_backend:
        engine = "closed"
    p = model.params
    k = config.accumulation_steps
    fwd, bwd, opt = workload.forward_s, workload.backward_s, workload.optimizer_s
    overhead = p["ddp.iteration_overhead_s"]
    # NCCL's kernels take SMs from backward; Gloo and MPI reduce on the CPU and stage with the copy engines.
    slowdown = 0.0 if host_backend else p["ddp.compute_slowdown"]
    n = model.ranks
    records: list[Record] = []
    t = 0.0
    for i in range(k - 1):
        records.append(Record("compute", f"forward (no_sync {i + 1}/{k - 1})", t, t + fwd))
        records.append(Record("compute", f"backward (no_sync {i + 1}/{k - 1})", t + fwd, t + fwd + bwd))
        t += fwd + bwd
    buckets = assign_buckets(workload.params, config.limits_bytes[1], config.limits_bytes[0]) if n > 1 else ()
    work = tensor_work(p, workload, len(buckets), config) if n > 1 else TensorWork()
    records.append(Record("compute", "forward", t, t + fwd + work.forward_s))
    t0 = t + fwd + work.forward_s
    planned = _jobs(model, workload, buckets, config)
    jobs = [j for j, _, _ in planned]
    bwd_work = bwd + work.backward_s
    if not jobs:
        timeline = BackwardTimeline(t0 + bwd_work, (), ())
    elif engine == "des":
        from simulator.training.ddp_engine import simulate_backward     # SimPy: only for this engine
        timeline = simulate_backward(model.router, p, t0, bwd_work, jobs, slowdown)
    else:
        timeline = _backward_closed(t0, bwd_work, jobs, slowdown)
    bwd_end = timeline.backward_end_s
    records.append(Record("compute", "backward", t0, bwd_end))
    records.extend(timeline.records)
    comm_end = max((jt.end_s for jt in timeline.jobs), default=bwd_end)
    opt_start = max(bwd_end, comm_end)
    if opt_start > bwd_end:
        records.append(Record("compute", "wait for gradients", bwd_end, opt_start))
    if work.copy_back_s > 0:
        records.append(Record("compute", "gradients back from the buckets", opt_start, opt_start + work.copy_back_s))
        opt_start += work.copy_back_s
    records.append(Record("compute", "optimizer", opt_start, opt_start + opt))
    iteration_s = opt_start + opt + overhead
    if overhead > 0:
        records.append(Record("compute", "iteration overhead", opt_start + opt, iteration_s))
    host_path = host_path_s(p, workload, len(buckets), k)
    gpu_iteration_s = iteration_s
    if host_path is not None and host_path > iteration_s:
        records.append(Record("host", "host sets the pace", 0.0, host_path))
        iteration_s = host_path
    exposed = opt_start - bwd_end
    comm_s = sum((jt.end_s - jt.start_s for jt in timeline.jobs), 0.0)
    limit, per_bucket = _limit(model, jobs, timeline.jobs, bwd_end, exposed, gpu_iteration_s)
    if iteration_s > gpu_iteration_s:
        limit = Limit.HOST
    timings = tuple(
        BucketTiming(b.index, b.size_bytes, len(b.param_indices), jt.ready_s, jt.start_s, jt.end_s, algo,
                     proto, job.comm_bytes, jt.allreduce_start_s, lim)
        for b, (job, algo, proto), jt, lim in zip(buckets, planned, timeline.jobs, per_bucket))
    single = max(k * (fwd + bwd) + opt + overhead, host_path_s(p, workload, 0, k) or 0.0)
    bs = workload.batch_size
    return IterationResult(
        iteration_s=iteration_s, forward_s=k * fwd + work.forward_s, backward_s=(k - 1) * bwd + (bwd_end - t0),
        optimizer_s=opt, exposed_comm_s=exposed, comm_s=comm_s,
        overlap_fraction=1.0 - exposed / comm_s if comm_s > 0 else 1.0, buckets=timings, gpus=n,
        batch_size=bs, samples_per_s=n * k * bs / iteration_s if bs else None,
        single_gpu_iteration_s=single, scaling_efficiency=single / iteration_s if iteration_s > 0 else 1.0,
        limit=limit, records=tuple(sorted(records, key=lambda r: (r.start_s, r.track))),
        workload=workload.name, engine=engine, accumulation_steps=k, iteration_overhead_s=overhead,
        host_path_s=host_path, copy_back_s=work.copy_back_s, nccl_version=_nccl_of(model))
