"""Seconds for the kernels of :mod:`.layer` on one GPU: a GEMM efficiency curve and a roofline.

* A GEMM of ``F`` FLOPs with shape (m, n, k) runs at ``peak * gemm_efficiency * e(shape)``, where
  ``e = d / (d + gemm_half_dim)`` and ``d = min(m, n, k)``: thin products (a head dimension of 64,
  a hidden size split 8 ways) reuse less data per load and fill the tensor cores less. It never
  runs faster than its operands can stream from memory (``bytes / (mem_bw * mem_efficiency)``).
* A memory-bound kernel moves its bytes at ``mem_bw * mem_efficiency``.
* Every kernel pays ``kernel_overhead_s`` (launch and tail).
* The optimizer step streams ``optimizer_bytes_per_param`` bytes per local parameter (fp32
  master weights, Adam moments, gradients read, 16-bit weights written).
* Gradient accumulation over micro-batches streams ``grad_accumulation_bytes_per_param`` bytes per
  local parameter in every backward pass of a model chunk after its first of the iteration: PyTorch's
  ``AccumulateGrad`` adds each new gradient into the one the earlier micro-batches left (``grad +=
  new``: read both, write one, 3 x 2 bytes in bf16); the first backward after ``zero_grad(set_to_none=
  True)`` takes the new gradient as it is. 0 in the default set: Megatron-LM's gradient-accumulation
  fusion adds into the main gradient inside the weight-gradient GEMM, no kernel of its own.
* The host (Python, the framework, kernel launches) needs ``host_block_s`` to issue one block's
  forward, and for any other pass that time per kernel of the forward times the kernels the pass
  launches (``LayerWork.host_ops``: a GPT block's backward 1.4 forwards, 2.4 when it recomputes the
  forward; the TP issue probe measures 1.2-1.8 without recomputation). Kernels and the
  pass's tensor-parallel collectives queue asynchronously, so a pass with its collectives takes
  the longer of its GPU time (kernels plus collectives) and its host time: small models on fast
  GPUs are host-bound, and then their TP collectives cost nothing extra. 0 in the default set
  (large models are GPU-bound).
* ``host_tp_block_s``: the same for one tensor-parallel block's forward (``tp > 1``): its shards
  run through the framework's own autograd functions around every collective (Megatron's ``f`` and
  ``g``), which the host pays for in both passes even where the collective is local. 0 (the default)
  takes ``host_block_s``. ``python -m validation.llm_real`` fits it on the TP runner's
  no-communication loops and ``host_block_s`` on the unsharded measurements (whole model, pipeline
  stages alone), so the two cannot trade against each other.
* ``host_runs_ahead``: true (the default) when the host issues a stage's passes one after another
  without waiting for the GPU (PyTorch queues kernels and NCCL calls asynchronously; the LLM runners'
  pipelines: their one-micro-batch pipelines take the stages' kernels, not their host time), false when it
  waits for each pass's GPU work before issuing the next, so each pass takes the longer of its kernels
  and its host time (the vTrain runs of Megatron-DeepSpeed fit that better: ``a100-megatron`` sets it).
  A file's 0 and 1 (what files said before it was a switch) read as false and true.
* ``iteration_overhead_s``: a fixed cost per iteration (data loading, logging, host syncs).
* ``host_collective_s``: host seconds per collective call a pass issues (its TP all-reduces,
  all-gathers, reduce-scatters: the framework's call into the communication library), added to
  the pass's host time. 0 in the default set.
* PyTorch FSDP's own host work (:mod:`.fsdp_engine`): ``fsdp_unit_host_s`` per FSDP unit and pass
  (its pre- and post-forward or pre- and post-backward hooks, the gradient reduction call) and
  ``fsdp_gather_host_s`` per all-gather a unit issues (allocating the unsharded flat parameter, the
  collective call, pointing the module's parameters at it, freeing it after use). 0 in the default
  set; ``python -m validation.llm_real`` fits them on measured FSDP runs.
* Each data-parallel rank's own host pace under FSDP (:class:`.fsdp_engine.RankPaces`): ``fsdp_rank_cv``, the
  spread of the ranks' paces over an iteration (each rank at an expected order statistic of its group), and
  ``fsdp_unit_cv``, a further spread drawn per rank and unit (seeded); a unit's all-gather or reduction then starts
  when the group's last host has issued it. 0 in the default set: one host for the group.
* ``fsdp_steady``: time an FSDP iteration (without pipeline stages) as the second of two issued back to back, as
  the runners time theirs, so its last reductions drain while the host issues the next (false, the default: one
  iteration from a cold start, which pays that drain).

Defaults are datasheet peaks times round efficiencies typical of published cuBLAS benchmarks
(large fp16/bf16 GEMMs reach 70-85% of the dense peak, STREAM-like kernels ~80% of HBM
bandwidth). :func:`load_compute_params` reads a calibration file's ``llm`` object, so the same
``--calibration FILE`` that corrects the collectives can carry fitted compute parameters
(``validation.llm_accuracy`` fits the A100 set shipped as ``a100-megatron``), its
``pass_profile`` list: measured pass times per shape that replace this model for the plans they
cover (:mod:`.pass_profile`), and ``llm_gpus``: the GPUs the set was fitted on (default: the pass
profile's), which decide its interval band (simulator.training.iteration_bands).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Sequence

from simulator.core.errors import InputError
from simulator.training.gpus import GpuSpec
from simulator.training.llm.layer import FusedAttention, Gemm, Kernel, MemOp, Pass
from simulator.training.llm.pass_profile import PassProfile, parse_profile


SWITCHES = {"host_runs_ahead": "must be true (the host runs ahead of the GPU) or false (it waits for each pass)",
            "fsdp_steady": "must be true (time an FSDP iteration issued behind another) or false (from a cold start)"}
"""The parameters that are true or false, with what each means."""


@dataclass(frozen=True)
class ComputeParams:
    """The per-GPU compute model's parameters (dimensionless, seconds, bytes)."""

    gemm_efficiency: float = 0.8
    gemm_half_dim: float = 32.0
    mem_efficiency: float = 0.8
    kernel_overhead_s: float = 4e-6
    optimizer_bytes_per_param: float = 36.0
    grad_accumulation_bytes_per_param: float = 0.0
    iteration_overhead_s: float = 0.0
    host_block_s: float = 0.0
    host_tp_block_s: float = 0.0
    fsdp_unit_host_s: float = 0.0
    fsdp_gather_host_s: float = 0.0
    host_collective_s: float = 0.0
    host_runs_ahead: bool = True
    fsdp_rank_cv: float = 0.0
    fsdp_unit_cv: float = 0.0
    fsdp_steady: bool = False
    name: str = "datasheet"
    profile: PassProfile | None = None          # measured pass times per shape (:mod:`.pass_profile`)
    fitted_gpus: tuple[str, ...] = ()           # catalog GPUs the set was fitted on (its interval band's key)

    def __post_init__(self) -> None:
        for f, lo, hi in (("gemm_efficiency", 1e-3, 1.0), ("gemm_half_dim", 0.0, 1e5),
                          ("mem_efficiency", 1e-3, 1.0), ("kernel_overhead_s", 0.0, 1e-2),
                          ("optimizer_bytes_per_param", 0.0, 1e3), ("grad_accumulation_bytes_per_param", 0.0, 1e3),
                          ("iteration_overhead_s", 0.0, 60.0),
                          ("host_block_s", 0.0, 1.0), ("host_tp_block_s", 0.0, 1.0),
                          ("fsdp_unit_host_s", 0.0, 1.0),
                          ("fsdp_gather_host_s", 0.0, 1.0), ("host_collective_s", 0.0, 0.1),
                          ("fsdp_rank_cv", 0.0, 1.0), ("fsdp_unit_cv", 0.0, 1.0)):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InputError(f"must be a number in [{lo:g}, {hi:g}]", field=f"llm.{f}", value=v)
            if not lo <= v <= hi:
                raise InputError(f"out of range [{lo:g}, {hi:g}]", field=f"llm.{f}", value=v)
        for f, words in SWITCHES.items():
            if not isinstance(getattr(self, f), bool):
                raise InputError(words, field=f"llm.{f}", value=getattr(self, f))

    def values(self) -> dict[str, float | bool]:
        return {name: getattr(self, name) for name in PARAM_NAMES}      # in field order, as PARAM_NAMES is


PARAM_NAMES = tuple(f.name for f in fields(ComputeParams) if f.name not in ("name", "profile", "fitted_gpus"))


def load_compute_params(path_or_name: str | Path | None) -> ComputeParams:
    """Defaults overridden by the ``llm`` object of a calibration file (or a shipped one's name),
    with its ``pass_profile`` list if it has one; a file without them gives the defaults, named as such
    (``compute=datasheet`` in ``gpunetsim train``'s header, not the file's name: its collectives alone are
    calibrated)."""
    if path_or_name is None:
        return ComputeParams()
    from simulator.collectives.params import read_calibration
    data, src = read_calibration(path_or_name)
    llm = data.get("llm", {}) if isinstance(data, dict) else None
    if not isinstance(llm, dict):
        raise InputError("'llm' must be an object of compute parameters", source=src, field="llm")
    for k in llm:
        if k not in PARAM_NAMES:
            raise InputError(f"unknown compute parameter (known: {', '.join(PARAM_NAMES)})", source=src,
                             field=f"llm.{k}", value=k)
    profile = parse_profile(data["pass_profile"], src) if "pass_profile" in data else None
    try:
        named = bool(llm) or profile is not None or "llm_gpus" in data
        return replace(ComputeParams(), name=str(data.get("name", Path(src).stem)) if named else ComputeParams.name,
                       profile=profile,
                       fitted_gpus=_fitted_gpus(data, profile), **{k: _switch(v) if k in SWITCHES else v
                                                                  for k, v in llm.items()})
    except InputError as e:
        raise e.within(src) from None


def _switch(v: object) -> object:
    """A file's ``host_runs_ahead``: true / false, or the 0 / 1 of files written before it was a switch (anything
    else is left for ComputeParams to refuse)."""
    if not isinstance(v, bool) and isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    return v


def _fitted_gpus(data: dict, profile: PassProfile | None) -> tuple[str, ...]:
    """The catalog GPUs a calibration's compute set was fitted on: its ``llm_gpus`` list, else its pass profile's
    GPUs, else none (simulator.training.iteration_bands then gives it the datasheet band, and says why)."""
    from simulator.training.gpus import get_gpu
    names = data.get("llm_gpus")
    if names is None:
        names = sorted({e.gpu for e in profile.entries}) if profile is not None else []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError("must be a list of GPU names", field="llm_gpus", value=names)
    try:
        return tuple(sorted({get_gpu(n).name for n in names}))
    except InputError as e:
        raise InputError(e.message, field="llm_gpus", value=e.value) from None


@dataclass(frozen=True)
class ComputeModel:
    """Kernel times on one GPU in one dtype."""

    gpu: GpuSpec
    dtype: str
    params: ComputeParams

    @cached_property
    def peak_flops(self) -> float:
        if self.dtype == "fp8":
            if self.gpu.fp8_tflops is None:
                raise InputError(f"{self.gpu.name} has no fp8 tensor cores", field="--dtype", value="fp8")
            return self.gpu.fp8_tflops * 1e12
        return self.gpu.peak_flops(self.dtype)

    @cached_property
    def mem_Bps(self) -> float:
        return self.gpu.mem_bw_Bps * self.params.mem_efficiency

    def gemm_s(self, g: Gemm, elem_bytes: int) -> float:
        p = self.params
        d = min(g.m, g.n, g.k)
        eff = p.gemm_efficiency * d / (d + p.gemm_half_dim)
        compute = g.flops / (self.peak_flops * eff)
        memory = g.batch * (g.m * g.k + g.k * g.n + g.m * g.n) * elem_bytes / self.mem_Bps
        return max(compute, memory) + p.kernel_overhead_s

    def kernel_s(self, k: Kernel, elem_bytes: int) -> float:
        if isinstance(k, Gemm):
            return self.gemm_s(k, elem_bytes)
        if isinstance(k, FusedAttention):
            p = self.params
            eff = p.gemm_efficiency * k.head_dim / (k.head_dim + p.gemm_half_dim)
            return k.flops / (self.peak_flops * eff) + p.kernel_overhead_s
        assert isinstance(k, MemOp)
        return k.size_bytes / self.mem_Bps + self.params.kernel_overhead_s

    def pass_s(self, work: Pass, elem_bytes: int) -> float:
        """Compute seconds of a pass (its TP collectives are timed on the network). A chunk of ``n`` blocks
        (``Pass.times``) repeats one block's kernel objects ``n`` times: each distinct kernel is timed once and
        the sum taken over every kernel in order (``Pass.layout``)."""
        distinct, order = work.layout
        kernel_s = self.kernel_s
        times = [kernel_s(k, elem_bytes) for k in distinct]
        return sum(map(times.__getitem__, order))

    def block_host_s(self, tp: int = 1) -> float:
        """Host seconds to issue one block's forward, sharded ``tp`` ways (``host_tp_block_s`` for
        ``tp > 1`` where it is set, else ``host_block_s``)."""
        p = self.params
        return p.host_tp_block_s if tp > 1 and p.host_tp_block_s > 0 else p.host_block_s

    def host_s(self, blocks: int, ops: float, calls: float = 0, tp: int = 1) -> float:
        """Host time to issue ``blocks`` blocks' passes (sharded ``tp`` ways) of ``ops`` forwards'
        kernels each (``LayerWork.host_ops``) and ``calls`` collective calls."""
        return blocks * ops * self.block_host_s(tp) + calls * self.params.host_collective_s

    def issue_s(self, kernels_s: float, host_s: float, comm_s: float) -> float:
        """GPU seconds of a pass before its TP collectives (``comm_s`` of them, timed on the network
        after it). The host enqueues kernels and NCCL collectives without waiting for them, so a
        pass and its collectives take ``max(kernels + comm, host)``: a host-bound pass hides its
        collectives behind the host's issue time."""
        return max(kernels_s, host_s - comm_s)

    def timeline_s(self, passes: Sequence[tuple[float, float, float]]) -> float:
        """Seconds of passes run one after another on one GPU, each ``(kernels_s, host_s, comm_s)``
        followed by its collectives (``comm_s``), as :mod:`.pipeline_engine` runs a stage (both through
        :func:`issue_pass`). The host issues pass after pass without waiting for the GPU
        (``host_runs_ahead``), so a host that ran ahead while the GPU was busy costs the next pass nothing;
        with ``host_runs_ahead`` false it starts each pass when the GPU has ended the one before."""
        gpu = host = 0.0
        for kernels, issue, comm in passes:
            host, dt = issue_pass(gpu, host if self.params.host_runs_ahead else gpu, kernels, issue, comm)
            gpu = gpu + dt + comm
        return gpu

    def optimizer_s(self, local_params: float) -> float:
        return local_params * self.params.optimizer_bytes_per_param / self.mem_Bps

    def accumulation_s(self, local_params: float) -> float:
        """GPU seconds a backward pass adds to add its gradients of ``local_params`` parameters into those of
        the iteration's earlier micro-batches (``grad_accumulation_bytes_per_param``; 0 when that is 0)."""
        return local_params * self.params.grad_accumulation_bytes_per_param / self.mem_Bps


def issue_pass(start_s: float, host_s: float, kernels_s: float, issue_s: float, hidden_s: float
               ) -> tuple[float, float]:
    """The host run-ahead rule for one pass whose GPU work can start at ``start_s`` (seconds): (when the host
    has issued it, the pass's GPU seconds from ``start_s``). The host, done issuing earlier passes at
    ``host_s``, needs ``issue_s`` for this one; its kernels (``kernels_s``) end no earlier than that, less the
    collectives queued behind them (``hidden_s``) that a host-bound pass hides (:meth:`ComputeModel.issue_s`).
    A pass with no issue time takes its kernels. Nothing bounds how far the host runs ahead (no launch queue
    depth, no wait for a pass's input). The one rule of :meth:`ComputeModel.timeline_s` and of
    :mod:`.pipeline_engine`'s stages."""
    if issue_s <= 0:
        return host_s, kernels_s
    host = host_s + issue_s
    return host, max(kernels_s, host - hidden_s - start_s)
