"""Workloads: what one data-parallel rank computes per iteration, and when each gradient is ready.

A :class:`Workload` is plain data: forward, backward and optimizer times (seconds) and the model's
parameters in registration order, each with its gradient size (bytes) and the time its gradient
is ready, measured from the start of backward. The DDP model buckets these gradients
(:mod:`simulator.training.buckets`) and overlaps their all-reduce with the rest of backward.

Workloads come from three places:

* a workload file (JSON or YAML) in the *measured form* (times and ready times given) or the
  *layer form* (per-layer parameter counts and FLOPs, turned into times with a GPU's peak rate
  and an efficiency; see :func:`workload_from_layers`), read by :func:`load_workload`;
* a profile record written by our profiler (:func:`workload_from_profile_record`);
* the built-in zoo (:mod:`simulator.training.zoo`).

Reading and writing files lives in :mod:`simulator.training.workload_files` (pydantic), imported
only when a file is read; its functions are also reachable from here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from simulator.core import vocabulary
from simulator.core.errors import InputError
from simulator.core.limits import MAX_BATCH_SIZE, check_count
from simulator.training.gpus import GpuSpec, get_gpu

GRAD_DTYPES = ("float64", "float32", "bfloat16", "float16")
"""The gradient dtypes a workload may use (PyTorch names; sizes in simulator.core.vocabulary)."""
#: A gradient may be ready up to this fraction after the measured end of backward (timer noise).
READY_SLACK = 1.05
#: Default fraction of peak FLOP/s reached by layer-form workloads.
DEFAULT_EFFICIENCY = 0.45
#: Bytes of memory traffic per parameter of an optimizer step with fp32 parameters and state:
#: SGD with momentum reads param, grad, momentum and writes param, momentum (5 x 4 bytes);
#: Adam/AdamW read param, grad, m, v and write param, m, v (7 x 4 bytes).
OPTIMIZER_BYTES_PER_PARAM: dict[str, int] = {"sgd": 20, "adam": 28, "adamw": 28}
#: Fraction of peak memory bandwidth an eager PyTorch optimizer step reaches. Our single-GPU
#: H200 profiles (SGD momentum, foreach kernels) measured 0.2-0.45 of 4.8 TB/s.
OPTIMIZER_BW_EFFICIENCY = 0.3


def canonical_dtype(value: object) -> str:
    """PyTorch's name ("float32", "bfloat16", ...) for a gradient dtype or alias ("bf16",
    "torch.float16"); raises ``ValueError`` (for pydantic validators) for anything else."""
    try:
        name = vocabulary.canonical_dtype(value)
    except InputError:
        name = None
    if name not in GRAD_DTYPES:
        raise ValueError(f"unknown gradient dtype {value!r}; known: {sorted(GRAD_DTYPES)}")
    return name


@dataclass(frozen=True)
class ParamGrad:
    """One parameter's gradient: its size in bytes and when it is ready (seconds from the start
    of backward)."""

    name: str
    size_bytes: int
    grad_ready_s: float
    dtype: str = "float32"


HOST_TIMES = ("forward_host_s", "backward_host_s", "optimizer_host_s")
"""A workload's host launch times (extras, seconds; the DataParallel runner's profile writes them): the
one place these keys are spelled (simulator.training.ddp's host path, simulator.training.dataparallel)."""


def step_compute_s(step) -> float:
    """Forward + backward + optimizer seconds of anything that has the three (a workload, a
    simulated DDP iteration): the one place this sum is spelled."""
    return step.forward_s + step.backward_s + step.optimizer_s


@dataclass(frozen=True)
class Workload:
    """Per-iteration compute of one rank and its gradients, in the model's registration order.

    ``extras`` holds optional fields of the source file (``flops``, ``device``, ...) as read,
    in file order, so that a saved workload round-trips.
    """

    name: str
    forward_s: float
    backward_s: float
    optimizer_s: float
    params: tuple[ParamGrad, ...]
    batch_size: int | None = None
    extras: tuple[tuple[str, object], ...] = ()

    @property
    def total_bytes(self) -> int:
        """Bytes of gradient all-reduced per iteration (sum over parameters)."""
        return sum(p.size_bytes for p in self.params)

    def scaled_to_batch(self, batch_size: int) -> "Workload":
        """The same model at another per-rank batch size: forward, backward and ready times scale
        linearly with the batch size (compute-bound assumption); optimizer time and gradient
        bytes do not depend on it. A name ending in ``-bs<old>`` is renamed."""
        if self.batch_size is None:
            raise InputError("workload has no batch_size, so it cannot be rescaled",
                             field="batch_size", value=None)
        check_count(batch_size, field="batch_size", high=MAX_BATCH_SIZE)
        k = batch_size / self.batch_size
        name = self.name
        if name.endswith(f"-bs{self.batch_size}"):
            name = name[: -len(f"-bs{self.batch_size}")] + f"-bs{batch_size}"
        params = tuple(replace(p, grad_ready_s=p.grad_ready_s * k) for p in self.params)
        return replace(self, name=name, forward_s=self.forward_s * k,
                       backward_s=self.backward_s * k, params=params, batch_size=batch_size)


# --------------------------------------------------------------------------- layer form


@dataclass(frozen=True)
class LayerSpec:
    """One layer in forward execution order: its parameters ``(full name, numel)`` and its
    forward FLOPs per sample (2 x multiply-accumulates). A layer may own no parameters (e.g. a
    tied output projection) and still cost time."""

    name: str
    params: tuple[tuple[str, int], ...]
    forward_flops: float


@dataclass(frozen=True)
class ModelSpec:
    """A model as layers in forward execution order.

    ``registration_order`` lists every parameter name in PyTorch registration order
    (``named_parameters()``); empty means the order the parameters appear in ``layers``.
    ``seq_len`` is the tokens per sample the FLOPs assume (``None`` for images).
    """

    name: str
    layers: tuple[LayerSpec, ...]
    registration_order: tuple[str, ...] = ()
    default_batch_size: int | None = None
    seq_len: int | None = None
    optimizer: str = "adam"
    notes: str = ""

    @property
    def num_params(self) -> int:
        """Total parameter count (elements)."""
        return sum(n for layer in self.layers for _, n in layer.params)

    @property
    def forward_flops(self) -> float:
        """Forward FLOPs per sample."""
        return sum(layer.forward_flops for layer in self.layers)

    def param_numels(self) -> list[tuple[str, int]]:
        """``(name, numel)`` of every parameter in registration order."""
        numel = {name: n for layer in self.layers for name, n in layer.params}
        order = self.registration_order or tuple(numel)
        return [(name, numel[name]) for name in order]


def workload_from_layers(model: ModelSpec, gpu: str | GpuSpec, batch_size: int, *,
                         dtype: str = "bf16", efficiency: float = DEFAULT_EFFICIENCY,
                         grad_dtype: str | None = None, optimizer: str | None = None,
                         optimizer_s: float | None = None, name: str | None = None) -> Workload:
    """A workload from per-layer FLOPs on a GPU.

    Assumptions (all first-order):

    * each layer runs at ``efficiency`` x the GPU's peak for ``dtype`` (bf16/fp16/tf32 tensor
      cores, or fp32 CUDA cores): ``forward_s = sum(flops) * batch_size / (peak * efficiency)``;
    * backward costs twice the forward FLOPs of each layer (input and weight gradients) and
      walks the layers in reverse; a layer's gradients are ready when its backward ends;
    * gradients are fp32 unless ``grad_dtype`` says otherwise: mixed precision (autocast) keeps
      fp32 parameters, so DDP all-reduces fp32 gradients even when computing in bf16/fp16;
    * unless ``optimizer_s`` is given, the optimizer step is memory-bound:
      ``OPTIMIZER_BYTES_PER_PARAM[optimizer] * params / (mem_bw * OPTIMIZER_BW_EFFICIENCY)``.
    """
    spec = gpu if isinstance(gpu, GpuSpec) else get_gpu(gpu)
    check_count(batch_size, field="batch_size", high=MAX_BATCH_SIZE)
    if not (isinstance(efficiency, (int, float)) and 0 < efficiency <= 1):
        raise InputError("efficiency must be in (0, 1]", field="efficiency", value=efficiency)
    opt = (optimizer or model.optimizer).lower()
    if opt not in OPTIMIZER_BYTES_PER_PARAM:
        raise InputError(f"unknown optimizer; known: {sorted(OPTIMIZER_BYTES_PER_PARAM)}",
                         field="optimizer", value=optimizer)
    try:
        gdtype = canonical_dtype(grad_dtype or "float32")
    except ValueError as err:
        raise InputError(str(err), field="grad_dtype", value=grad_dtype) from None
    rate = spec.peak_flops(dtype) * efficiency
    forward_s = sum(layer.forward_flops for layer in model.layers) * batch_size / rate
    ready: dict[str, float] = {}
    t = 0.0
    for layer in reversed(model.layers):
        t += 2.0 * layer.forward_flops * batch_size / rate
        for pname, _ in layer.params:
            ready.setdefault(pname, t)
    backward_s = t
    itemsize = vocabulary.DTYPE_BYTES[gdtype]
    params = tuple(ParamGrad(pname, numel * itemsize, ready[pname], gdtype)
                   for pname, numel in model.param_numels())
    if optimizer_s is None:
        optimizer_s = (OPTIMIZER_BYTES_PER_PARAM[opt] * model.num_params
                       / (spec.mem_bw_Bps * OPTIMIZER_BW_EFFICIENCY))
    extras: tuple[tuple[str, object], ...] = (
        ("gpu", spec.name), ("dtype", dtype), ("efficiency", float(efficiency)),
        ("optimizer", opt), ("forward_flops_per_sample", model.forward_flops))
    if model.seq_len is not None:
        extras += (("seq_len", model.seq_len),)
    return Workload(name or f"{model.name}-bs{batch_size}", forward_s, backward_s,
                    float(optimizer_s), params, batch_size, extras)


_FILE_FUNCTIONS = ("load_profile", "load_workload", "save_workload", "workload_from_dict",
                   "workload_from_profile_record", "workload_to_dict")


def __getattr__(name: str) -> Any:
    """The file functions of :mod:`simulator.training.workload_files`, imported on first use."""
    if name in _FILE_FUNCTIONS:
        from simulator.training import workload_files
        return getattr(workload_files, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "GRAD_DTYPES", "LayerSpec", "ModelSpec", "ParamGrad", "Workload", "canonical_dtype",
    "load_profile", "load_workload", "save_workload", "step_compute_s", "workload_from_dict",
    "workload_from_layers", "workload_from_profile_record", "workload_to_dict",
]
