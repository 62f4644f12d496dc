"""Single-GPU compute pooled over launches: one step's compute for the DDP predictions, with its spread.

On the lent machines bert-base, gpt2 and mlp are launch-bound at the benchmark batch sizes: the host
issues kernels no faster than the GPU runs them, so their step time is the host's pace, which moves
by 20% and more between launches on the same machine, even between two loops of one launch
(docs/accuracy.md section 4 lists it per model); resnet50 is GPU-bound and repeats to 1-2%. One
profile launch is one draw of that pace. This module pools the draws of several launches:

* :func:`read_single_gpu` reads what the DataParallel runner records per launch on one GPU (rank 0
  alone, the other GPUs idle): the profiler's capture (``dp_profile``: forward + backward +
  optimizer medians of a step instrumented with one gradient hook per parameter) and the plain step
  (``dp`` with one GPU: whole steps timed with CUDA events, no hooks, as the DDP runner times its
  iterations), and a workload file as one profile launch;
* :func:`pooled` scales a profile's shape (phases and gradient-ready times) to the median step over
  the launches and records the launches' 5th-95th percentile band as ``compute_lo_ratio`` and
  ``compute_hi_ratio``, which the DDP interval adds (simulator.training.ddp_intervals).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from simulator.core.errors import InputError
from simulator.training.ddp_intervals import COMPUTE_BAND_KEYS
from simulator.training.workload import HOST_TIMES, Workload, step_compute_s as compute_s
from validation.ddp_compare import scale_compute
from validation.runners.records import read_measurement_records

KINDS = ("profile", "plain")
BAND_PERCENTILES = (5.0, 95.0)
LAUNCHES_KEY = "compute_launches"
POOL_KEYS = COMPUTE_BAND_KEYS + (LAUNCHES_KEY,)
"""The extras :func:`pooled` writes (a second pooling replaces them)."""


@dataclass(frozen=True)
class StepSample:
    """One launch's single-GPU step time of one model: ``kind`` is ``profile`` (the hooked capture's
    phase sum) or ``plain`` (whole steps, no hooks); ``source`` names the file; ``host_s``: the capture's host
    launch time of the step (its forward + backward + optimizer host times), None where the record has none (a
    plain step, a profile file, a capture without them)."""

    model: str
    batch_size: int
    kind: str
    step_s: float
    source: str
    host_s: float | None = None


def read_single_gpu(path: str | Path) -> list[StepSample]:
    """Per launch and model, the ``dp_profile`` capture and the one-GPU ``dp`` step of a DataParallel
    runner file (other records are skipped)."""
    out = []
    for i, r in read_measurement_records(path):
        try:
            if r.get("kind") == "dp_profile":
                p = r["profile"]
                step = SimpleNamespace(**{k: float(p[k]) for k in ("forward_s", "backward_s", "optimizer_s")})
                host = sum(float(p.get(k, 0.0)) for k in HOST_TIMES) if all(k in p for k in HOST_TIMES[:2]) else None
                sample = StepSample(r["model"], int(p["batch_size"]), "profile", compute_s(step), str(path), host)
            elif r.get("kind") == "dp" and r.get("gpus") == 1:
                sample = StepSample(r["model"], int(r["batch_size"]), "plain", float(r["median_s"]), str(path))
            else:
                continue
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{r.get('kind')} record without a usable {exc}", source=f"{path}:{i}") from None
        if not sample.step_s > 0:
            raise InputError("a single-GPU step must take more than 0 s", source=f"{path}:{i}", field="step_s",
                             value=sample.step_s)
        out.append(sample)
    return out


def profile_samples(workloads: Mapping[str, Workload], source: str) -> list[StepSample]:
    """Workload files (one profile launch each) as samples; each needs a batch size (samples pool
    by model and batch size) and compute above 0."""
    for name, w in workloads.items():
        _check_shape(w, source)
    return [StepSample(name, int(w.batch_size), "profile", compute_s(w), source) for name, w in workloads.items()]


def _check_shape(w: Workload, source: str) -> None:
    if w.batch_size is None:
        raise InputError("the workload has no batch size; single-GPU steps are pooled by model and batch size",
                         source=source, field="batch_size", value=None)
    if not compute_s(w) > 0:
        raise InputError("the workload's forward + backward + optimizer must be above 0 s to scale it",
                         source=source, field="forward_s", value=compute_s(w))


def pooled(shape: Workload, samples: Iterable[StepSample], kinds: Sequence[str] = KINDS) -> Workload:
    """``shape`` scaled to the median step of ``samples`` of its model, batch size and ``kinds``, with
    the samples' 5th-95th percentile band over that median as ``compute_lo_ratio``/``compute_hi_ratio``
    and their count as ``compute_launches`` (pooling a pooled workload replaces the three)."""
    samples = list(samples)
    _check_shape(shape, shape.name)
    steps = [s.step_s for s in samples
             if s.model == shape.name and s.kind in kinds and s.batch_size == shape.batch_size]
    if not steps:
        raise InputError(f"no single-GPU step of {shape.name!r} at batch {shape.batch_size} among the "
                         f"samples ({', '.join(kinds)})",
                         source=", ".join(dict.fromkeys(s.source for s in samples)) or None,
                         field="model", value=shape.name)
    if not min(steps) > 0:
        raise InputError("a single-GPU step must take more than 0 s", field="step_s", value=min(steps))
    mid = float(np.median(steps))
    lo, hi = (float(np.percentile(steps, q)) / mid for q in BAND_PERCENTILES)
    w = scale_compute(shape, mid / compute_s(shape))
    extras = tuple((k, v) for k, v in w.extras if k not in POOL_KEYS)
    return replace(w, extras=extras + ((COMPUTE_BAND_KEYS[0], min(lo, 1.0)), (COMPUTE_BAND_KEYS[1], max(hi, 1.0)),
                                       (LAUNCHES_KEY, len(steps))))


def pooled_workloads(shapes: Mapping[str, Workload], samples: Sequence[StepSample],
                     kinds: Sequence[str] = KINDS) -> dict[str, Workload]:
    return {name: pooled(w, samples, kinds) for name, w in shapes.items()}
