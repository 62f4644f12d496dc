"""Measured pass times (a profile) in place of the analytic kernel model, for the plan shapes it covers.

The analytic model (:mod:`.compute`) times a block's kernels from a GEMM efficiency curve and a
roofline, and the host's issue time from one cost per block. On vTrain's Megatron-DeepSpeed runs on
A100s that leaves a residual that depends only on the per-GPU shape of a pass (hidden size, TP
degree, micro-batch), not on pipeline or data parallelism, the GPU count or the number of
micro-batches (``python -m validation.pass_profile --features`` prints the evidence), and whose
shape no single mechanism of the analytic model reproduces (e.g. TP 4 at hidden 2048 runs a pass
faster than TP 4 at hidden 1024). So, as vTrain itself does with its per-layer profiles, a
calibration can carry measured times per shape; a plan whose shape is listed uses them, any other
plan the analytic model.

An entry (the ``pass_profile`` list of a calibration file) names the shape (``gpu``, ``hidden``,
``heads``, ``seq``, ``ffn``, ``vocab``, ``tp``, ``micro_batch``, ``dtype``, ``recompute``,
``sequence_parallel``, ``flash_attention``) and two times on one GPU for one micro-batch:

* ``block_pass_s``: one transformer block's forward, kernels, host issue and its TP collectives
  together; a backward counts two such passes, three with full recomputation;
* ``microbatch_s``: the rest of a micro-batch's forward and backward (embedding, output layer,
  loss), charged to the last pipeline stage's output layer (a third forward, two thirds backward).

The simulation keeps its own TP collectives on the network: a chunk's pass lasts the profile's time
less its collectives alone on an idle network, then the collectives run (so contention still adds).
``python -m validation.pass_profile --fit`` estimates the entries from measured iterations.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property

from simulator.core.errors import InputError
from simulator.training.gpus import get_gpu
from simulator.training.llm.config import Recompute, TrainConfig
from simulator.training.llm.model import TransformerSpec

_INT_KEYS = ("hidden", "heads", "seq", "ffn", "vocab", "tp", "micro_batch")
_BOOL_KEYS = ("sequence_parallel", "flash_attention")


@dataclass(frozen=True)
class ProfileEntry:
    """Measured times of one pass shape (see the module docstring)."""

    gpu: str
    hidden: int
    heads: int
    seq: int
    ffn: int
    vocab: int
    tp: int
    micro_batch: int
    dtype: str
    recompute: str
    sequence_parallel: bool
    flash_attention: bool
    block_pass_s: float
    microbatch_s: float

    @property
    def key(self) -> tuple:
        return tuple(getattr(self, f.name) for f in fields(self)[:12])

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def shape_key(gpu: str, model: TransformerSpec, config: TrainConfig) -> tuple:
    """The key of the profile entry that would describe ``config``'s passes of ``model`` on ``gpu``."""
    return (gpu, model.hidden, model.heads, model.seq, model.ffn, model.vocab, config.tp, config.micro_batch,
            config.dtype, config.recompute.value, config.sequence_parallel, config.flash_attention)


@dataclass(frozen=True)
class PassProfile:
    """A calibration's measured pass times, looked up by shape."""

    entries: tuple[ProfileEntry, ...]

    def lookup(self, gpu: str, model: TransformerSpec, config: TrainConfig) -> ProfileEntry | None:
        """The entry for ``config``'s shape, or None (then the analytic model times it). FSDP plans
        are always analytic (the profile's passes carry no FSDP hooks)."""
        if config.fsdp:
            return None
        return self._by_shape.get(shape_key(gpu, model, config))

    @cached_property
    def _by_shape(self) -> dict[tuple, ProfileEntry]:
        """The entries by :func:`shape_key` (the first of two for one shape, which parse_profile refuses)."""
        return {e.key: e for e in reversed(self.entries)}


def backward_passes(config: TrainConfig) -> int:
    """Block passes one backward counts (data and weight gradients, plus the recomputed forward)."""
    return 3 if config.recompute is Recompute.FULL else 2


def chunk_total_s(entry: ProfileEntry, config: TrainConfig, blocks: int, last: bool, forward: bool) -> float:
    """Seconds of a chunk's forward or backward pass with ``blocks`` blocks (its TP collectives
    included), the output layer's share of ``microbatch_s`` on the last virtual stage."""
    passes = 1 if forward else backward_passes(config)
    head = entry.microbatch_s * (1 / 3 if forward else 2 / 3) if last else 0.0
    return blocks * passes * entry.block_pass_s + head


def parse_profile(raw: object, source: str) -> PassProfile:
    """A calibration file's ``pass_profile`` list, checked (InputError naming the entry and field)."""
    if not isinstance(raw, list):
        raise InputError("must be a list of entries", source=source, field="pass_profile")
    out = []
    for i, e in enumerate(raw):
        where = f"pass_profile[{i}]"
        if not isinstance(e, dict):
            raise InputError("must be an object", source=source, field=where)
        names = [f.name for f in fields(ProfileEntry)]
        unknown = sorted(set(e) - set(names))
        if unknown:
            raise InputError(f"unknown key (known: {', '.join(names)})", source=source, field=f"{where}.{unknown[0]}",
                             value=unknown[0])
        for k in names:
            if k not in e:
                raise InputError("missing", source=source, field=f"{where}.{k}")
            v = e[k]
            ok = (isinstance(v, int) and not isinstance(v, bool) and v >= 1 if k in _INT_KEYS else
                  isinstance(v, bool) if k in _BOOL_KEYS else
                  isinstance(v, str) if k in ("gpu", "dtype", "recompute") else
                  isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 60)
            if not ok:
                raise InputError("invalid value", source=source, field=f"{where}.{k}", value=v)
        try:
            get_gpu(e["gpu"])
        except InputError as err:
            raise InputError(err.message, source=source, field=f"{where}.gpu", value=e["gpu"]) from None
        if e["recompute"] not in {r.value for r in Recompute}:
            raise InputError("unknown recomputation", source=source, field=f"{where}.recompute", value=e["recompute"])
        out.append(ProfileEntry(**{k: e[k] for k in names}))
    keys = [e.key for e in out]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise InputError("two entries for one shape", source=source, field="pass_profile", value=str(dup))
    return PassProfile(tuple(out))
