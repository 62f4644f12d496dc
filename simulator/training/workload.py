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

File validation is done with pydantic; every problem becomes an :class:`InputError` naming the
file, the field path (``params[3].grad_ready_s``) and the value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from simulator.core.config import validate
from simulator.core import vocabulary
from simulator.core.errors import InputError
from simulator.core.inputs import read_jsonl, read_structured
from simulator.core.limits import MAX_BATCH_SIZE, check_count, MAX_SIZE_BYTES, MAX_TIME_S
from simulator.core.outputs import write_atomic
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


# --------------------------------------------------------------------------- file models

_Seconds = Annotated[float, Field(ge=0, le=MAX_TIME_S, allow_inf_nan=False)]
_Count = Annotated[int, Field(gt=0, le=MAX_SIZE_BYTES, strict=True)]
_Batch = Annotated[int, Field(gt=0, le=MAX_BATCH_SIZE, strict=True)]
_MAX_FLOPS = 1e24      # forward FLOPs of one layer per sample (GPT-3 as a whole is ~3.5e11 per token)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _ParamModel(_Strict):
    name: str
    bytes: _Count
    grad_ready_s: _Seconds
    dtype: str = "float32"

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, v: str) -> str:
        return canonical_dtype(v)


class _MeasuredModel(_Strict):
    model_config = ConfigDict(extra="allow")
    name: str
    forward_s: _Seconds
    backward_s: _Seconds
    optimizer_s: _Seconds
    params: list[_ParamModel] = Field(min_length=1)
    batch_size: _Batch | None = None


class _LayerParamModel(_Strict):
    name: str = ""
    numel: _Count


class _LayerModel(_Strict):
    name: str
    params: list[_LayerParamModel] = Field(default_factory=list)
    forward_flops: Annotated[float, Field(ge=0, le=_MAX_FLOPS, allow_inf_nan=False)]

    @field_validator("params", mode="before")
    @classmethod
    def _count_form(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            if v < 0:
                raise ValueError("parameter count must be >= 0")
            return [{"numel": v}] if v else []
        return v


class _LayerFormModel(_Strict):
    model_config = ConfigDict(extra="allow")
    name: str
    gpu: str
    dtype: str = "bf16"
    grad_dtype: str | None = None
    efficiency: Annotated[float, Field(gt=0, le=1)] = DEFAULT_EFFICIENCY
    batch_size: _Batch
    optimizer: Literal["sgd", "adam", "adamw"] = "adam"
    optimizer_s: _Seconds | None = None
    layers: list[_LayerModel] = Field(min_length=1)

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, v: str) -> str:
        try:
            return get_gpu(v).name
        except InputError as err:
            raise ValueError(err.message) from None


def _check_params(names: Sequence[str], ready: Sequence[float], backward_s: float,
                  source: str | None, ready_field: str = "grad_ready_s") -> None:
    seen: dict[str, int] = {}
    for i, (pname, t) in enumerate(zip(names, ready)):
        if pname in seen:
            raise InputError(f"duplicate parameter name (also params[{seen[pname]}])",
                             source=source, field=f"params[{i}].name", value=pname)
        seen[pname] = i
        if t > backward_s * READY_SLACK:
            raise InputError(f"gradient ready after backward ended (backward_s={backward_s!r})",
                             source=source, field=f"params[{i}].{ready_field}", value=t)


def workload_from_dict(data: object, source: str | None = None) -> Workload:
    """A workload from a parsed workload file (either form); ``source`` names it in errors."""
    if isinstance(data, dict) and "layers" in data:
        return _from_layer_form(data, source)
    m = validate(_MeasuredModel, data, source)
    _check_params([p.name for p in m.params], [p.grad_ready_s for p in m.params],
                  m.backward_s, source)
    params = tuple(ParamGrad(p.name, p.bytes, p.grad_ready_s, p.dtype) for p in m.params)
    extras = tuple((m.model_extra or {}).items())
    return Workload(m.name, m.forward_s, m.backward_s, m.optimizer_s, params, m.batch_size,
                    extras)


def _from_layer_form(data: dict, source: str | None) -> Workload:
    m = validate(_LayerFormModel, data, source)
    seen: set[str] = set()
    layers = []
    for i, layer in enumerate(m.layers):
        params = []
        for j, p in enumerate(layer.params):
            full = f"{layer.name}.{p.name}" if p.name else layer.name
            if full in seen:
                raise InputError("duplicate parameter name", source=source,
                                 field=f"layers[{i}].params[{j}].name", value=full)
            seen.add(full)
            params.append((full, p.numel))
        layers.append(LayerSpec(layer.name, tuple(params), layer.forward_flops))
    if not seen:
        raise InputError("the model has no parameters", source=source, field="layers")
    try:
        w = workload_from_layers(ModelSpec(m.name, tuple(layers)), m.gpu, m.batch_size,
                                 dtype=m.dtype, efficiency=m.efficiency,
                                 grad_dtype=m.grad_dtype, optimizer=m.optimizer,
                                 optimizer_s=m.optimizer_s, name=m.name)
    except InputError as err:
        raise err.within(source) if source else err
    return replace(w, extras=w.extras + tuple((m.model_extra or {}).items()))


def load_workload(path: str | Path) -> Workload:
    """Read a workload file (``.json``; anything else is parsed as YAML) in either form."""
    return workload_from_dict(read_structured(path, what="workload file"), source=str(path))


def workload_to_dict(w: Workload) -> dict[str, object]:
    """The measured-form file content of ``w``; :func:`workload_from_dict` reads it back equal."""
    out: dict[str, object] = {"name": w.name, "forward_s": w.forward_s,
                              "backward_s": w.backward_s, "optimizer_s": w.optimizer_s}
    if w.batch_size is not None:
        out["batch_size"] = w.batch_size
    out.update(w.extras)
    out["params"] = [{"name": p.name, "bytes": p.size_bytes, "grad_ready_s": p.grad_ready_s,
                      **({"dtype": p.dtype} if p.dtype != "float32" else {})}
                     for p in w.params]
    return out


def save_workload(w: Workload, path: str | Path) -> None:
    """Write ``w`` as a measured-form JSON workload file."""
    write_atomic(path, json.dumps(workload_to_dict(w), indent=1) + "\n")


# --------------------------------------------------------------------------- profiler records


class _ProfileParamModel(_Strict):
    model_config = ConfigDict(extra="allow")
    name: str
    numel: _Count
    bytes: _Count
    ready_s: _Seconds
    shape: list[int] | None = None
    dtype: str | None = None


class _ProfileModel(_Strict):
    model_config = ConfigDict(extra="allow")
    model: str
    bs: _Batch
    forward_s: _Seconds
    backward_s: _Seconds
    optimizer_s: _Seconds
    params: list[_ProfileParamModel] = Field(min_length=1)


def _profile_dtype(p: _ProfileParamModel, i: int, source: str | None) -> str:
    if p.dtype is not None:
        try:
            return canonical_dtype(p.dtype)
        except ValueError as err:
            raise InputError(str(err), source=source, field=f"params[{i}].dtype",
                             value=p.dtype) from None
    itemsize, rest = divmod(p.bytes, p.numel)
    guess = {8: "float64", 4: "float32", 2: "float16"}.get(itemsize)
    if rest or guess is None:
        raise InputError(f"bytes is not numel ({p.numel}) x 2, 4 or 8", source=source,
                         field=f"params[{i}].bytes", value=p.bytes)
    return guess


def workload_from_profile_record(rec: dict, source: str | None = None) -> Workload:
    """A workload from one profiler record (``model``, ``bs``, ``forward_s``, ``backward_s``,
    ``optimizer_s``, ``params: [{name, numel, bytes, shape, ready_s}]``).

    The name is ``f"{model}-bs{bs}"``; other record fields (``device``, ``amp``,
    ``iter_wall_s``, ...) are kept in ``extras``. A parameter's dtype is its ``dtype`` field, or
    else inferred from ``bytes / numel`` (2 bytes is taken as float16).
    """
    m = validate(_ProfileModel, rec, source)
    _check_params([p.name for p in m.params], [p.ready_s for p in m.params], m.backward_s,
                  source, ready_field="ready_s")
    params = tuple(ParamGrad(p.name, p.bytes, p.ready_s, _profile_dtype(p, i, source))
                   for i, p in enumerate(m.params))
    return Workload(f"{m.model}-bs{m.bs}", m.forward_s, m.backward_s, m.optimizer_s, params,
                    m.bs, tuple((m.model_extra or {}).items()))


def load_profile(path: str | Path) -> list[Workload]:
    """Workloads from a profiler output file: JSON lines (``.jsonl``, one record a line) or a
    JSON list. Records whose ``kind`` is present and not ``"profile"`` are skipped."""
    p = Path(path)
    if p.suffix.lower() != ".jsonl":
        data = read_structured(p, what="profile file")
        records = data if isinstance(data, list) else [data]
        items = [(f"{p}[{i}]", r) for i, r in enumerate(records)]
    else:
        items = [(f"{p}:{n}", r) for n, r in read_jsonl(p)]
    return [workload_from_profile_record(r, source=src) for src, r in items
            if not (isinstance(r, dict) and r.get("kind", "profile") != "profile")]


__all__ = [
    "GRAD_DTYPES", "LayerSpec", "ModelSpec", "ParamGrad", "Workload", "canonical_dtype",
    "load_profile", "load_workload", "save_workload", "workload_from_dict",
    "workload_from_layers", "workload_from_profile_record", "workload_to_dict",
]
