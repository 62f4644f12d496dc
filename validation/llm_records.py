"""Read the LLM runners' records (``validation.runners.fsdp``, ``tp``, ``pp``) into typed runs,
group repeated launches, and compare a predictor with them.

What a prediction of one run needs, and where it is:

* the model: :attr:`LlmRun.spec` (a :class:`validation.gpt_spec.GPTSpec`). In
  ``simulator.training.llm.model.TransformerSpec`` terms it is ``hidden, layers, heads, seq, ffn,
  vocab`` with ``kv_heads = heads``, ``gated_mlp = False``, ``bias = True`` (LayerNorm, biases,
  learned positions) and ``tied_embeddings = False`` (:func:`transformer_fields`);
* the parallelism: ``tp``, ``pp``, ``dp``, ``micro_batch``, ``global_batch``, and
  ``strategy`` / ``replicate`` (FSDP), ``sequence_parallel`` (TP), ``micro_batches`` (PP);
  dtype bf16 for everything on CUDA; attention is PyTorch's fused (flash) SDPA;
* what was timed: forward and backward only, **no optimizer step**, no gradient accumulation in
  FSDP; TP runs have no embedding or head (:attr:`LlmRun.has_embedding_and_head`);
* the compute: the :class:`LayerProfile` of the same spec and micro-batch (``tp = 1``, or the
  sharded block for TP), measured alone on each GPU of the same launch; :func:`profile_for`
  finds it. TP runs also carry their own compute-only time (``nocomm_median_s``), PP runs the
  per-stage times of one micro-batch and one activation transfer (``stage_forward_s``, ...).

Repeated launches of one configuration (same ``point`` label and world) are grouped by
:func:`group_runs`: the measured value is the median of the per-launch medians, the spread the
lowest and highest of them.
"""

from __future__ import annotations

from functools import lru_cache

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from simulator.core.errors import InputError
from validation.fields import Fields
from validation.gpt_spec import SPEC_FIELDS, GPTSpec
from validation.runners.records import read_measurement_records

PHASE_FIELDS = ("embed_forward_s", "embed_backward_s", "block_forward_s", "block_backward_s",
                "head_forward_s", "head_backward_s")


@dataclass(frozen=True)
class LayerProfile:
    """Forward / backward seconds of one micro-batch through the embedding, one block and the
    head, alone on one GPU (``embed_*`` and ``head_*`` are ``None`` for a TP-sharded block)."""

    spec: GPTSpec
    micro_batch: int
    tp: int
    sequence_parallel: bool
    embed_forward_s: float | None
    embed_backward_s: float | None
    block_forward_s: float
    block_backward_s: float
    head_forward_s: float | None
    head_backward_s: float | None
    model_median_s: float | None  # whole model, one GPU (from the FSDP runner)
    launch_id: str
    launch_index: int
    world: int
    gpu: str | None
    model_iter_times_s: tuple[float, ...] = ()  # every timed whole-model iteration (MAX over ranks)

    @property
    def key(self) -> tuple[str, int, int, bool]:
        return (self.spec.text, self.micro_batch, self.tp, self.sequence_parallel)


@dataclass(frozen=True)
class LlmRun:
    """One measured configuration in one launch."""

    runner: str  # "fsdp", "tp" or "pp"
    point: str
    spec: GPTSpec
    world: int
    tp: int
    pp: int
    dp: int
    micro_batch: int
    global_batch: int
    median_s: float
    p10_s: float
    p90_s: float
    iter_times_s: tuple[float, ...]
    launch_id: str
    launch_index: int
    gpu: str | None
    dtype: str
    peak_memory_bytes: int | None
    strategy: str | None = None          # fsdp: full_shard, shard_grad_op, hybrid_shard
    replicate: int | None = None         # fsdp: replicas (hybrid_shard mesh rows)
    unit_params: tuple[int, ...] = ()    # fsdp: parameters per FSDP unit, root first
    sequence_parallel: bool = False      # tp
    nocomm_median_s: float | None = None  # tp: the same loop without collectives
    collectives: tuple[tuple[str, int, int], ...] = ()  # tp: (op, bytes, count) per iteration
    micro_batches: int | None = None     # pp: M
    stage_layers: tuple[int, ...] = ()   # pp: blocks per stage
    stage_forward_s: tuple[float, ...] = ()   # pp: one micro-batch per stage, alone
    stage_backward_s: tuple[float, ...] = ()
    p2p_s: float | None = None           # pp: one activation from stage 0 to stage 1
    activation_bytes: int | None = None  # pp: bytes of one activation send

    @property
    def has_embedding_and_head(self) -> bool:
        return self.runner != "tp"

    @property
    def sp_regathers(self) -> bool:
        """Sequence parallelism with Megatron's backward re-gather (6 all-gathers per block per
        iteration); records taken before it (the 2-GPU campaign 2026-11-26c) list 4."""
        gathers = sum(count for op, _, count in self.collectives if op == "all_gather")
        return self.sequence_parallel and gathers == 6 * self.spec.layers

    @property
    def profile_tp(self) -> int:
        """The ``tp`` of the layer profile that predicts this run."""
        return self.tp if self.runner == "tp" else 1


@dataclass(frozen=True)
class LlmRecords:
    """Everything in one or more result files."""

    runs: tuple[LlmRun, ...]
    profiles: tuple[LayerProfile, ...]
    failures: tuple[dict[str, Any], ...]


def transformer_fields(spec: GPTSpec) -> dict[str, Any]:
    """Keyword arguments of ``simulator.training.llm.model.TransformerSpec`` (after ``name``)
    describing the runners' GPT exactly."""
    return {**spec.fields(), "kv_heads": spec.heads, "gated_mlp": False, "bias": True,
            "tied_embeddings": False}


def record_spec(f: Fields) -> GPTSpec:
    """The runners' GPT of a record (every field of :data:`SPEC_FIELDS`), errors naming the line."""
    try:
        return GPTSpec(**{k: f.whole(k, low=1) for k in SPEC_FIELDS})
    except InputError as e:                  # the spec's own checks name no line; Fields' errors already do
        named = e.field if e.field and e.field.startswith(str(f.where)) else f"{f.where}: {e.field}"
        raise InputError(e.message, source=f.source, field=named, value=e.value) from None


def _numbers(f: Fields, name: str) -> tuple[float, ...]:
    values = f.record.get(name)
    if not isinstance(values, list) or not values:
        raise f.bad(name, "must be a non-empty list of numbers", values)
    return tuple(float(Fields({name: v}, f.source, f.where).number(name)) for v in values)  # type: ignore[arg-type]


def _wholes(f: Fields, name: str) -> tuple[int, ...]:
    values = f.record.get(name)
    if not isinstance(values, list) or not values:
        raise f.bad(name, "must be a non-empty list of whole numbers", values)
    return tuple(Fields({name: v}, f.source, f.where).whole(name) for v in values)


def _profile(f: Fields) -> LayerProfile:
    return LayerProfile(record_spec(f), f.whole("micro_batch", low=1), f.whole("tp", low=1),
                        f.flag("sequence_parallel"),
                        f.number("embed_forward_s", positive=True, required=False),
                        f.number("embed_backward_s", positive=True, required=False),
                        float(f.number("block_forward_s", positive=True)),  # type: ignore[arg-type]
                        float(f.number("block_backward_s", positive=True)),  # type: ignore[arg-type]
                        f.number("head_forward_s", positive=True, required=False),
                        f.number("head_backward_s", positive=True, required=False),
                        f.number("model_median_s", positive=True, required=False),
                        f.text("launch_id"), f.whole("launch_index"), f.whole("world", low=1),
                        f.text("gpu", "") or None,
                        _numbers(f, "model_iter_times_s") if "model_iter_times_s" in f.record else ())


def _run(f: Fields) -> LlmRun:
    runner = f.text("kind").removeprefix("llm_")
    extra: dict[str, Any] = {}
    if runner == "fsdp":
        extra = {"strategy": f.text("strategy"), "replicate": f.whole("replicate", low=1),
                 "unit_params": _wholes(f, "unit_params")}
    elif runner == "tp":
        colls = f.record.get("collectives")
        if not isinstance(colls, list):
            raise f.bad("collectives", "must be a list of {op, bytes, count}", colls)
        checked = [Fields(c, f.source, f"{f.where}: collectives[{i}]") for i, c in enumerate(colls)]
        extra = {"sequence_parallel": f.flag("sequence_parallel"),
                 "nocomm_median_s": f.number("nocomm_median_s", positive=True),
                 "collectives": tuple((c.text("op"), c.whole("bytes"), c.whole("count"))
                                      for c in checked)}
    else:
        extra = {"micro_batches": f.whole("micro_batches", low=1),
                 "stage_layers": _wholes(f, "stage_layers"),
                 "stage_forward_s": _numbers(f, "stage_forward_s"),
                 "stage_backward_s": _numbers(f, "stage_backward_s"),
                 "p2p_s": f.number("p2p_s"), "activation_bytes": f.whole("activation_bytes")}
    median, p10, p90 = (float(f.number(k, positive=True))  # type: ignore[arg-type]
                        for k in ("median_s", "p10_s", "p90_s"))
    if not p10 <= median <= p90:
        raise f.bad("p10_s", "needs p10_s <= median_s <= p90_s", (p10, median, p90))
    peak = f.record.get("peak_memory_bytes")
    return LlmRun(runner, f.text("point"), record_spec(f), f.whole("world", low=1), f.whole("tp", low=1),
                  f.whole("pp", low=1), f.whole("dp", low=1), f.whole("micro_batch", low=1),
                  f.whole("global_batch", low=1), median, p10, p90, _numbers(f, "iter_times_s"),
                  f.text("launch_id"), f.whole("launch_index"), f.text("gpu", "") or None,
                  f.text("dtype"), None if peak is None else f.whole("peak_memory_bytes"), **extra)


def read_llm_records(paths: str | Path | Sequence[str | Path]) -> LlmRecords:
    """Runs, layer profiles and failure records of JSONL files; other kinds are skipped, and
    so are lines that are no JSON object (a line cut short by a killed run).

    A record missing a field or holding a wrong value is an :class:`InputError` naming the file,
    the line and the field. Files read before (same path, size and modification time) are not read
    again: the accuracy report reads each campaign in several sections."""
    return _read_llm_records(file_keys(paths))


def file_keys(paths: str | Path | Sequence[str | Path]) -> tuple[tuple[str, int, int], ...]:
    """(path, size, modification time in ns) of each file (-1, -1 for one that does not exist: the
    reader then names it)."""
    out = []
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        try:
            st = Path(path).stat()
            out.append((str(path), st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((str(path), -1, -1))
    return tuple(out)


@lru_cache(maxsize=64)
def _read_llm_records(keys: tuple[tuple[str, int, int], ...]) -> LlmRecords:
    files = [_read_llm_file(key) for key in keys]
    return LlmRecords(*(tuple(x for f in files for x in getattr(f, part)) for part in ("runs", "profiles", "failures")))


@lru_cache(maxsize=256)
def _read_llm_file(key: tuple[str, int, int]) -> LlmRecords:
    """One file's records (``key``: :func:`file_keys`'), read once per process: the report reads a file alone and
    in several lists of files (a 3.4 MB profile file five times)."""
    runs, profiles, failures = [], [], []
    path, _, _ = key
    src = str(path)
    for number, r in read_measurement_records(path, skip_bad=True, torn_only=True):
        kind = r.get("kind")
        f = Fields(r, src, f"line {number}", str(kind))
        if kind == "llm_profile":
            profiles.append(_profile(f))
        elif kind in ("llm_fsdp", "llm_tp", "llm_pp"):
            runs.append(_run(f))
        elif kind == "llm_failed":
            failures.append(r)
    return LlmRecords(tuple(runs), tuple(profiles), tuple(failures))


def profile_for(run: LlmRun, profiles: Sequence[LayerProfile]) -> LayerProfile | None:
    """The layer profile that predicts ``run``: same spec, micro-batch, ``tp`` (and sequence
    parallelism for TP), preferably from the same launch, else from the same launch index and
    world, else any (the first in file order)."""
    key = (run.spec.text, run.micro_batch, run.profile_tp,
           run.sequence_parallel if run.runner == "tp" else False)
    same = [p for p in profiles if p.key == key]
    for pick in ([p for p in same if p.launch_id == run.launch_id],
                 [p for p in same if p.launch_index == run.launch_index and p.world == run.world],
                 same):
        if pick:
            return pick[0]
    return None


@dataclass(frozen=True)
class RunGroup:
    """All launches of one configuration: the runs and the summary over launches."""

    point: str
    world: int
    runs: tuple[LlmRun, ...]

    @property
    def median_s(self) -> float:
        """Median over launches of the per-launch medians."""
        return statistics.median(r.median_s for r in self.runs)

    @property
    def low_s(self) -> float:
        return min(r.median_s for r in self.runs)

    @property
    def high_s(self) -> float:
        return max(r.median_s for r in self.runs)

    @property
    def first(self) -> LlmRun:
        return self.runs[0]


def group_runs(runs: Sequence[LlmRun]) -> list[RunGroup]:
    """Runs grouped by (point, world), in first-seen order."""
    groups: dict[tuple[str, int], list[LlmRun]] = {}
    for r in runs:
        groups.setdefault((r.point, r.world), []).append(r)
    return [RunGroup(p, w, tuple(rs)) for (p, w), rs in groups.items()]


Predictor = Callable[[LlmRun, "LayerProfile | None"], float]
"""Predicted iteration seconds of a run, given its layer profile (``None`` when there is none)."""


@dataclass(frozen=True)
class RunError:
    """A configuration's prediction against the median over its launches."""

    runner: str
    point: str
    world: int
    launches: int
    measured_s: float
    low_s: float
    high_s: float
    predicted_s: float

    @property
    def error_pct(self) -> float:
        """Signed: positive when the prediction is too slow."""
        return (self.predicted_s / self.measured_s - 1.0) * 100.0


def compare_runs(records: LlmRecords, predict: Predictor) -> list[RunError]:
    """One :class:`RunError` per configuration; ``predict`` sees the group's first run and the
    layer profile :func:`profile_for` finds for it."""
    out = []
    for g in group_runs(records.runs):
        run = g.first
        pred = float(predict(run, profile_for(run, records.profiles)))
        if not (math.isfinite(pred) and pred > 0):
            raise InputError("the predictor must return a positive number of seconds",
                             field=g.point, value=pred)
        out.append(RunError(run.runner, g.point, g.world, len(g.runs), g.median_s, g.low_s,
                            g.high_s, pred))
    return out


TIE_RELATIVE = 1e-9
"""Values within this fraction of each other tie in :func:`spearman`: two configurations a model
prices alike (e.g. host-bound TP passes of two widths) must not be ordered by floating-point noise in
the last bit, which a refit moving a parameter by 1e-9 flips. A tolerance, not rounding: rounding
splits two values 1e-15 apart that straddle a rounding boundary."""


def _tied(values: Sequence[float]) -> list[float]:
    """``values`` with every value within :data:`TIE_RELATIVE` of the next smaller one's tie value given
    that tie value (in sorted order, so a run ties to its smallest), so the ranks tie there and nowhere
    else."""
    out = [float(x) for x in values]
    order = sorted(range(len(out)), key=out.__getitem__)
    for prev, i in zip(order, order[1:]):
        if abs(out[i] - out[prev]) <= TIE_RELATIVE * max(abs(out[i]), abs(out[prev])):
            out[i] = out[prev]
    return out


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman rank correlation (average ranks for ties, values within TIE_RELATIVE of each other
    tying); NaN with fewer than 3 pairs."""
    a, b = _tied(a), _tied(b)
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return float("nan")
    from scipy.stats import spearmanr
    return float(spearmanr(a, b).statistic)


def error_summary(errors: Sequence[RunError]) -> dict[str, dict[str, float]]:
    """Per runner (and ``all``): ``n``, ``median_abs_pct``, ``p90_abs_pct`` of ``|error|``, and
    ``spearman`` between predicted and measured seconds."""
    import numpy as np

    out: dict[str, dict[str, float]] = {}
    for name in sorted({e.runner for e in errors}) + ["all"]:
        sel = [e for e in errors if name in ("all", e.runner)]
        if not sel:
            continue
        abs_pct = np.abs([e.error_pct for e in sel])
        out[name] = {"n": len(sel), "median_abs_pct": float(np.median(abs_pct)),
                     "p90_abs_pct": float(np.percentile(abs_pct, 90)),
                     "spearman": spearman([e.predicted_s for e in sel],
                                          [e.measured_s for e in sel])}
    return out


def error_table(errors: Sequence[RunError], predicted: str = "predicted") -> list[str]:
    """Printable lines: one per configuration (median and range over launches in ms, the
    prediction, the signed error), then the :func:`error_summary` per runner."""
    lines = [f"{'configuration':<70} {'n':>2} {'measured ms':>11} {'range ms':>15} "
             f"{predicted:>10} {'error':>7}"]
    for e in errors:
        lines.append(f"{e.point[:70]:<70} {e.launches:>2} {e.measured_s * 1e3:>11.2f} "
                     f"{e.low_s * 1e3:>7.2f}-{e.high_s * 1e3:<7.2f} {e.predicted_s * 1e3:>10.2f} "
                     f"{e.error_pct:>+6.1f}%")
    for name, s in error_summary(errors).items():
        lines.append(f"{name}: n={s['n']:.0f} median |error| {s['median_abs_pct']:.1f}%, "
                     f"p90 {s['p90_abs_pct']:.1f}%, Spearman {s['spearman']:.2f}")
    return lines
