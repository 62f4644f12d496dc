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
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from simulator.core.errors import InputError
from simulator.core.inputs import read_jsonl
from simulator.training.workload import Workload
from validation.ddp_compare import scale_compute

KINDS = ("profile", "plain")
BAND_PERCENTILES = (5.0, 95.0)


@dataclass(frozen=True)
class StepSample:
    """One launch's single-GPU step time of one model: ``kind`` is ``profile`` (the hooked capture's
    phase sum) or ``plain`` (whole steps, no hooks); ``source`` names the file."""

    model: str
    batch_size: int
    kind: str
    step_s: float
    source: str


def compute_s(w: Workload) -> float:
    return w.forward_s + w.backward_s + w.optimizer_s


def read_single_gpu(path: str | Path) -> list[StepSample]:
    """Per launch and model, the ``dp_profile`` capture and the one-GPU ``dp`` step of a DataParallel
    runner file (other records are skipped)."""
    out = []
    for i, r in read_jsonl(path):
        try:
            if r.get("kind") == "dp_profile":
                p = r["profile"]
                out.append(StepSample(r["model"], int(p["batch_size"]), "profile",
                                      float(p["forward_s"] + p["backward_s"] + p["optimizer_s"]), str(path)))
            elif r.get("kind") == "dp" and r.get("gpus") == 1:
                out.append(StepSample(r["model"], int(r["batch_size"]), "plain", float(r["median_s"]), str(path)))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{r.get('kind')} record without a usable {exc}", source=f"{path}:{i}") from None
    return out


def profile_samples(workloads: Mapping[str, Workload], source: str) -> list[StepSample]:
    """Workload files (one profile launch each) as samples."""
    return [StepSample(name, int(w.batch_size or 0), "profile", compute_s(w), source)
            for name, w in workloads.items()]


def pooled(shape: Workload, samples: Iterable[StepSample], kinds: Sequence[str] = KINDS) -> Workload:
    """``shape`` scaled to the median step of ``samples`` of its model, batch size and ``kinds``, with
    the samples' 5th-95th percentile band over that median as ``compute_lo_ratio``/``compute_hi_ratio``."""
    steps = [s.step_s for s in samples
             if s.model == shape.name and s.kind in kinds and s.batch_size == shape.batch_size]
    if not steps:
        raise InputError(f"no single-GPU step of {shape.name!r} at batch {shape.batch_size} among the "
                         f"samples ({', '.join(kinds)})", field="model", value=shape.name)
    mid = float(np.median(steps))
    lo, hi = (float(np.percentile(steps, q)) / mid for q in BAND_PERCENTILES)
    w = scale_compute(shape, mid / compute_s(shape))
    extras = tuple((k, v) for k, v in w.extras if k not in ("compute_lo_ratio", "compute_hi_ratio"))
    return replace(w, extras=extras + (("compute_lo_ratio", min(lo, 1.0)), ("compute_hi_ratio", max(hi, 1.0)),
                                       ("compute_launches", len(steps))))


def pooled_workloads(shapes: Mapping[str, Workload], samples: Sequence[StepSample],
                     kinds: Sequence[str] = KINDS) -> dict[str, Workload]:
    return {name: pooled(w, samples, kinds) for name, w in shapes.items()}
