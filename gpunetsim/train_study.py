"""LLM-training points of a study (``train:`` in a study file): the grid, one row per point.

A study's ``train`` block lists values per axis, like the rest of the file::

    train:
      model: [gpt3-175b]                 # LLM zoo names, --model-spec strings or model files
      tp: 8
      pp: [8, 16]
      global_batch: 1536
      micro_batch: 1
      recompute: selective
      sequence_parallel: true
      zero: [0, 1]

Each point crosses these axes with the study's network axes (topology, nodes innermost, NIC
bandwidth, ...); ``dp`` defaults to the GPUs left over (GPUs / (tp x pp)). A point whose sizes do
not fit its cluster fails with its reason and the sweep goes on (``gpunetsim sweep`` names it).
Rows carry the same figures as ``gpunetsim train --json`` (memory flattened to ``memory_*_bytes``).
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from simulator.core.errors import InputError

_Pos = Annotated[int, Field(gt=0, strict=True)]
TRAIN_AXES = ("model", "tp", "pp", "dp", "global_batch", "micro_batch", "schedule", "virtual_stages",
              "recompute", "sequence_parallel", "flash_attention", "zero", "fsdp", "dtype", "order")


class TrainAxes(BaseModel):
    """The ``train`` block of a study file. Every field is a list of values (a scalar = one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: list[str] = Field(min_length=1)
    tp: list[_Pos] = [1]
    pp: list[_Pos] = [1]
    dp: list[_Pos | None] = [None]
    global_batch: list[_Pos] = Field(min_length=1)
    micro_batch: list[_Pos] = [1]
    schedule: list[Literal["1f1b", "interleaved"]] = ["1f1b"]
    virtual_stages: list[_Pos] = [1]
    recompute: list[Literal["none", "selective", "full"]] = ["none"]
    sequence_parallel: list[bool] = [False]
    flash_attention: list[bool] = [False]
    zero: list[Literal[0, 1, 2, 3]] = [0]
    fsdp: list[Literal["full", "grad-op", "hybrid"] | None] = [None]
    dtype: list[Literal["bf16", "fp16", "fp8"]] = ["bf16"]
    order: list[str] = ["tp-dp-pp"]

    @field_validator(*TRAIN_AXES, mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return list(v) if isinstance(v, (list, tuple)) else [v]


def check_models(axes: TrainAxes, source: str) -> None:
    """Every model resolves (zoo name, spec string or file), before anything runs."""
    for i, m in enumerate(axes.model):
        try:
            resolve_train_model(m)
        except InputError as e:
            raise InputError(e.message, source=source, field=f"train.model[{i}]", value=m) from None


def resolve_train_model(text: str):
    from simulator.training.llm.model import resolve_model
    return resolve_model(None, text) if "=" in text else resolve_model(text)


def train_settings(axes: TrainAxes) -> list[tuple[tuple[str, object], ...]]:
    """Every combination of the train axes, as (axis, value) pairs in :data:`TRAIN_AXES` order."""
    values = [getattr(axes, a) for a in TRAIN_AXES]
    return [tuple(zip(TRAIN_AXES, combo)) for combo in itertools.product(*values)]


def evaluate_train(point, cost_model, row: dict[str, object]) -> dict[str, object]:
    """The row of one train point: its settings, then ``simulate_train``'s figures."""
    from simulator.training.gpus import get_gpu
    from simulator.training.llm.compute import load_compute_params
    from simulator.training.llm.config import TrainConfig
    from simulator.training.llm.iteration import simulate_train
    from gpunetsim.study import gpu_of
    s = dict(point.train)
    row.pop("train", None)
    row.update({k: v for k, v in s.items() if k != "model"})
    router = cost_model.router
    n = len(router.gpus)
    dp = s["dp"]
    if dp is None:
        if n % (s["tp"] * s["pp"]):
            raise InputError(f"{n} GPUs are not a multiple of tp x pp = {s['tp'] * s['pp']}", field="train.pp",
                             value=s["pp"])
        dp = n // (s["tp"] * s["pp"])
    config = TrainConfig(s["tp"], s["pp"], dp, s["global_batch"], s["micro_batch"], s["schedule"],
                         s["virtual_stages"], s["recompute"], s["sequence_parallel"], s["zero"], s["fsdp"],
                         s["dtype"], s["order"], s["flash_attention"])
    gpu = get_gpu(gpu_of(cost_model, point.gpu))
    r = simulate_train(router, resolve_train_model(str(s["model"])), config, gpu, cost_model.params,
                       load_compute_params(point.calibration), record=False, parts=True)
    d = r.as_dict()
    mem = d.pop("memory_bytes")
    row.update({k: v for k, v in d.items() if k not in row or k in ("dp", "model")})
    row.update({f"memory_{k}_bytes": v for k, v in mem.items()})
    return row


def print_train_table(rows: list[dict]) -> None:
    """The train rows as a table: configuration, GPUs, iteration, tokens/s, MFU, memory."""
    if not rows:
        return
    varying = [a for a in TRAIN_AXES if len({str(r.get(a)) for r in rows}) > 1 and a != "dp"]
    labels = [", ".join(f"{a}={r.get(a)}" for a in varying) or str(r.get("model")) for r in rows]
    w = max(14, *(len(s) for s in labels))
    print(f"#{'LLM training':<{w - 1}} {'nodes':>5} {'GPUs':>5} {'TPxPPxDP':>10} {'iter(s)':>9} {'90% lo':>8} "
          f"{'90% hi':>8} {'tokens/s':>10} {'MFU':>6} {'mem(GiB)':>8}  fits")
    for lab, r in zip(labels, rows):
        shape = f"{r['tp']}x{r['pp']}x{r['dp']}"
        print(f"{lab:<{w}} {r['nodes']:>5} {r['total_gpus']:>5} {shape:>10} {r['iteration_s']:>9.3f} "
              f"{_s(r.get('iteration_lo_s'))} {_s(r.get('iteration_hi_s'))} {r['tokens_per_s']:>10.0f} {r['mfu'] * 100:>5.1f}% {r['memory_total_bytes'] / 2**30:>8.1f}  "
              f"{'yes' if r['fits'] else 'NO'}")


def _s(seconds: float | None) -> str:
    """Seconds in a column of 8, '-' when there is no interval."""
    return f"{'-':>8}" if seconds is None else f"{seconds:>8.3f}"
