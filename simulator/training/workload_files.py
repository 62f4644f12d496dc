"""Workload files: reading (JSON or YAML, validated with pydantic) and writing workloads.

Two file forms (see :mod:`simulator.training.workload`): the *measured form* (times and ready
times given) and the *layer form* (per-layer parameter counts and FLOPs); plus our profiler's
records. Every problem becomes an :class:`InputError` naming the file, the field path
(``params[3].grad_ready_s``) and the value. Kept apart from the workload data so that runs on zoo
models never import pydantic or YAML.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from simulator.core.config import validate
from simulator.core.errors import InputError
from simulator.core.inputs import read_jsonl, read_structured, refuse_misspelt_keys
from simulator.core.limits import MAX_BATCH_SIZE, MAX_SIZE_BYTES, MAX_TIME_S
from simulator.core.outputs import write_atomic
from simulator.training.ddp_intervals import COMPUTE_BAND_KEYS
from simulator.training.gpus import get_gpu
from simulator.training.workload import (DEFAULT_EFFICIENCY, READY_SLACK, LayerSpec, ModelSpec, ParamGrad,
                                         Workload, canonical_dtype, workload_from_layers)


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
        if not isinstance(data["layers"], list) and {"hidden", "heads"} <= set(data):
            raise InputError("this is an LLM model description (hidden, layers, heads, seq), not a DDP workload: "
                             "give it to gpunetsim train --model (a workload's layers are a list)", source=source,
                             field="layers", value=data["layers"])
        return _from_layer_form(data, source)
    if isinstance(data, dict):      # extras are kept: a misspelt field would be one, its default used
        refuse_misspelt_keys(data, (*_MeasuredModel.model_fields, *COMPUTE_BAND_KEYS), source)
    m = validate(_MeasuredModel, data, source)
    _check_params([p.name for p in m.params], [p.grad_ready_s for p in m.params],
                  m.backward_s, source)
    params = tuple(ParamGrad(p.name, p.bytes, p.grad_ready_s, p.dtype) for p in m.params)
    extras = tuple((m.model_extra or {}).items())
    return Workload(m.name, m.forward_s, m.backward_s, m.optimizer_s, params, m.batch_size,
                    extras)


def _from_layer_form(data: dict, source: str | None) -> Workload:
    refuse_misspelt_keys(data, tuple(_LayerFormModel.model_fields), source)
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
