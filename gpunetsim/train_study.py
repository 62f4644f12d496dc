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
import logging
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from simulator.core.config import Count, Switch, axis
from simulator.core.errors import InputError
from simulator.core.inputs import names_a_file

TRAIN_AXES = ("model", "seq", "tp", "pp", "dp", "global_batch", "micro_batch", "schedule", "virtual_stages",
              "recompute", "sequence_parallel", "flash_attention", "zero", "fsdp", "fsdp_shard", "dtype", "order")


def _stage(v: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, int):      # Literal took true as ZeRO-1 and 1.0 as 1
        raise ValueError("expected 0, 1, 2 or 3")
    return v


ZeroStage = Annotated[Literal[0, 1, 2, 3], BeforeValidator(_stage)]
"""A ZeRO stage as a study or scenario writes it: the number, never ``true``."""


class TrainAxes(BaseModel):
    """The ``train`` block of a study file. Every field is a list of values (a scalar = one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: list[str] = Field(min_length=1)
    seq: list[Count | None] = [None]               # None: the model's sequence length (gpunetsim train --seq)
    tp: list[Count] = [1]
    pp: list[Count] = [1]
    dp: list[Count | None] = [None]
    global_batch: list[Count] = Field(min_length=1)
    micro_batch: list[Count] = [1]
    schedule: list[Literal["1f1b", "interleaved"]] = ["1f1b"]
    virtual_stages: list[Count | None] = [None]     # None: 2 when interleaved, else 1 (gpunetsim train's default)
    recompute: list[Literal["none", "selective", "full"]] = ["none"]
    sequence_parallel: list[Switch] = [False]
    flash_attention: list[Switch] = [False]
    zero: list[ZeroStage] = [0]
    fsdp: list[Literal["full", "grad-op", "hybrid"] | None] = [None]
    fsdp_shard: list[Count | None] = [None]        # None: the DP peers of one server (gpunetsim train --fsdp-shard)
    dtype: list[Literal["bf16", "fp16", "fp8"]] = ["bf16"]
    order: list[str] = ["tp-dp-pp"]

    @field_validator(*TRAIN_AXES, mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return axis(v)

    @field_validator("order")
    @classmethod
    def _orders(cls, v: list[str]) -> list[str]:
        """Checked when the study loads, as the other choices are, not point by point."""
        from simulator.training.llm.config import ORDERS
        for x in v:
            if x not in ORDERS:
                raise ValueError(f"expected one of {', '.join(ORDERS)}")
        return v


def check_models(axes: TrainAxes, source: str) -> None:
    """Every model resolves (zoo name, spec string or file), before anything runs."""
    check_model_list(axes.model, source, "train.model")


def check_model_list(models: list[str], source: str, field: str) -> None:
    """Every ``model`` value of a study block (``train.model``, ``search.model``) resolves; an error names
    ``field[i]``, and a model file's own error keeps that file and its field."""
    for i, m in enumerate(models):
        try:
            resolve_train_model(m)
        except InputError as e:
            spec_field = (e.field or "").removeprefix("--model-spec: ")
            if e.source:                        # a model file's error: its file and field
                message, value = str(e), None
            elif spec_field != (e.field or ""):  # a spec string's field: name it and its value
                message, value = f"{spec_field}: {e.message}", e.value
            else:
                message, value = e.message, m
            raise InputError(message, source=source, field=f"{field}[{i}]", value=value) from None


def model_path(text: str, base: Path) -> str:
    """A ``model`` value of a study or scenario with a model file's path made absolute (relative to the file's
    folder ``base``, as every other path of the file); zoo names and spec strings as they are."""
    if "=" in text:
        return text
    p = Path(text).expanduser()
    p = p if p.is_absolute() else base / p
    return str(p.resolve()) if names_a_file(p) else text


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
    from simulator.training.llm.iteration import simulate_train
    from simulator.training.llm.model import with_seq
    from gpunetsim.study import gpu_of
    s = dict(point.train)
    row.update({k: v for k, v in s.items() if k != "model"})
    router = cost_model.router
    try:
        config = train_config(s, len(router.gpus))
        gpu = get_gpu(gpu_of(cost_model, point.gpu))
        model = with_seq(resolve_train_model(str(s["model"])), s["seq"])
        r = simulate_train(router, model, config, gpu, cost_model.params,
                           load_compute_params(point.calibration), record=False, parts=True,
                           nccl_version=cost_model.planner.nccl_version)
    except InputError as e:
        raise study_field(e) from None
    d = r.as_dict()         # no warn_train: a row says what ran (schedule 1f1b, sharding and dp), warnings from
                            # worker processes would be lost or cut through the progress bar
    mem = d.pop("memory_bytes")
    # the row keeps the point's own ``model`` and ``train`` columns, as search rows keep theirs: ``--resume`` matches
    # rows to points on them, and two --model-spec strings both named 'custom' stay two series
    row.update({k: v for k, v in d.items() if k not in row or k in ("dp", "schedule", "virtual_stages")})
    row.update({f"memory_{k}_bytes": v for k, v in mem.items()})
    return row


def train_config(s: dict, gpus: int):
    """The :class:`TrainConfig` of one point's train settings on ``gpus`` GPUs (``dp`` and
    ``virtual_stages`` default as in ``gpunetsim train``); ``gpunetsim train``'s options and the Python API's
    arguments go through it too."""
    from simulator.training.llm.config import TrainConfig, check_gpus, default_dp, virtual_stages_for
    dp = s["dp"] if s["dp"] is not None else default_dp(gpus, s["tp"], s["pp"])
    check_gpus(s["tp"], s["pp"], dp, gpus)      # before the batch checks: the layout is what is impossible
    return TrainConfig(s["tp"], s["pp"], dp, s["global_batch"], s["micro_batch"], s["schedule"],
                       virtual_stages_for(s["schedule"], s["virtual_stages"]), s["recompute"],
                       s["sequence_parallel"], s["zero"], s["fsdp"], s["dtype"], s["order"], s["flash_attention"],
                       s["fsdp_shard"])


def warn_train(s: dict, result) -> None:
    """Log (``gpunetsim.train``; the CLI prints ``gpunetsim: warning:`` lines on stderr) what ran otherwise than
    its settings ``s`` say: the interleaved schedule with one virtual stage ran as plain 1F1B (as Megatron-LM
    runs it), and FSDP on one-rank shard groups shards nothing (torch FSDP warns and switches to NO_SHARD
    there: 'FSDP is switching to use NO_SHARD ... since the world size is 1')."""
    log = logging.getLogger("gpunetsim.train")
    c = result.config
    if str(s.get("schedule")) == "interleaved" and c.schedule.value == "1f1b":
        log.warning("--schedule interleaved with --virtual-stages 1 is plain 1F1B (Megatron-LM runs a virtual "
                    "pipeline size of 1 without interleaving): simulated and reported as 1f1b")
    if result.fsdp_shard_group == 1:
        why = ("at DP 1" if c.dp == 1 else "with shard groups of 1 rank (" +
               ("--fsdp-shard 1)" if c.fsdp_shard == 1 else "the data-parallel peers of one server: pass --fsdp-shard)"))
        log.warning(f"--fsdp {c.fsdp} {why} shards nothing: every rank keeps whole parameters, gradients and "
                    "optimizer states (torch FSDP switches to NO_SHARD on a 1-rank group)")


def study_field(e: InputError, prefix: str = "train.", source: str | None = None) -> InputError:
    """``e`` with a command-line option it names (``--global-batch``, from TrainConfig) written as the
    file's field (``train.global_batch`` in a study, ``jobs[0].global_batch`` in a scenario: ``prefix``), and
    the options its message names as fields (``virtual_stages needs schedule interleaved``); errors naming a
    file or another field pass unchanged."""
    if e.source or not (e.field or "").startswith("--"):
        return e
    message = re.sub(r"--([a-z][a-z-]*)", lambda m: m.group(1).replace("-", "_"), e.message)
    return InputError(message, source=source, field=prefix + e.field.lstrip("-").replace("-", "_"), value=e.value)


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
