"""DDP's runtime-stats sampling: which timed DDP iterations ran with the host held back by the GPU.

PyTorch's DDP logs runtime statistics on *sampled* iterations (``torch/csrc/distributed/c10d/reducer.cpp``,
``Reducer::should_collect_runtime_stats``: the first 10 synchronised iterations of a DDP object, then
every 100th). At the start of the forward after a sampled iteration, ``Logger::set_runtime_stats_and_log``
(``logger.cpp``, called from ``DistributedDataParallel._pre_forward``) reads that iteration's CUDA
timing events with ``CUDAEvent::synchronize`` ("called at the beginning of forward call, when it is
cheap to synchronize the cuda events of previous iteration"): the host waits until the GPU has
finished the previous iteration's backward and its all-reduces before it launches the next forward.
The host then no longer runs ahead of the GPU, so that iteration pays every gap where the GPU waits
for a launch: it is slower than the steady state. ``no_sync()`` iterations never call it (the check
needs ``require_backward_grad_sync``).

The runners timed DDP after ``--warmup`` synchronised iterations of the same DDP object
(:func:`validation.runners.ddp.measure_cap`), so with a warmup under 11 the first timed iterations
were held back: with the DataParallel runner's warmup of 3 (or 5) and 10 (or 15) timed iterations,
8 of 10 (6 of 15); the DDP runner's warmup now lasts at least :data:`STEADY_WARMUP` synchronised
iterations (recorded as ``sync_warmup``). The simulator predicts the steady state;
:func:`steady_median_s` is its measured counterpart: the median over the timed iterations that no
sampling held back.
"""

from __future__ import annotations

import statistics
from typing import Mapping, Sequence

LOGGER_FIRST_ITERATIONS = 10
"""``should_collect_runtime_stats``: every synchronised iteration up to this count is sampled..."""
LOGGER_SAMPLE_RATE = 100
"""... then every iteration whose count is a multiple of this (``kDDPRuntimeLoggingSampleRate``)."""
STEADY_WARMUP = LOGGER_FIRST_ITERATIONS + 1
"""Synchronised warmup iterations after which the next :data:`LOGGER_SAMPLE_RATE` - 11 are steady
(the runners warm DDP up at least this long: :func:`validation.runners.ddp.measure_cap`)."""


def held_back(sync_count: int) -> bool:
    """Whether the ``sync_count``-th synchronised forward of a DDP object (1-based) starts by waiting
    on the GPU: the previous iteration (count - 1, as the reducer's ``num_iterations_`` reads when the
    logger checks it, before ``prepare_for_forward`` counts this one) was sampled."""
    k = sync_count - 1
    return k > 0 and (k <= LOGGER_FIRST_ITERATIONS or k % LOGGER_SAMPLE_RATE == 0)


def steady_times_s(times_s: Sequence[float], warmup: int) -> list[float]:
    """The timed iterations (after ``warmup`` synchronised ones of the same DDP object) that were not
    held back."""
    return [t for i, t in enumerate(times_s) if not held_back(warmup + i + 1)]


def warmup_count(record: Mapping) -> int | None:
    """The record's synchronised warm-up iterations: ``sync_warmup``, else ``warmup`` (a null one absent);
    a whole float (3.0) counts as its integer; None when neither is a whole number."""
    warmup = record.get("sync_warmup")
    if warmup is None:
        warmup = record.get("warmup")
    if isinstance(warmup, float) and warmup.is_integer():
        warmup = int(warmup)
    return warmup if isinstance(warmup, int) and not isinstance(warmup, bool) else None


def _steady(record: Mapping, warmup: int | None = None) -> list[float]:
    """The record's steady iteration times (empty when it lacks ``iter_times_s`` or a warmup count);
    ``warmup``: the count when the caller has validated it, else :func:`warmup_count`."""
    times = record.get("iter_times_s")
    warmup = warmup_count(record) if warmup is None else warmup
    if not isinstance(times, list) or warmup is None:
        return []
    return steady_times_s([float(t) for t in times], warmup)


def steady_stats_s(record: Mapping, warmup: int | None = None) -> tuple[float, float, float]:
    """A ``kind: "ddp"`` record's measured iteration: median, p10 and p90 (as the runners compute them,
    :func:`validation.runners.ddp.summarize`) over its steady iterations (after ``sync_warmup``, else
    ``warmup``, synchronised iterations). The one definition of a measured DDP iteration: section 4
    (``validation.ddp_compare.read_ddp``) and the DataParallel comparison (section 6) both take it.
    The record's own ``median_s``, ``p10_s``, ``p90_s`` when it lacks the per-iteration times or the
    warmup count, or when every timed iteration was held back. ``warmup``: the count a reader validated
    (validation.ddp_compare), else read off the record (:func:`warmup_count`)."""
    from validation.runners.ddp import summarize
    steady = _steady(record, warmup)
    if not steady:
        return float(record["median_s"]), float(record["p10_s"]), float(record["p90_s"])
    s = summarize(steady)
    return s["median_s"], s["p10_s"], s["p90_s"]


def steady_median_s(record: Mapping) -> float:
    """The median of :func:`steady_stats_s` (needs no ``p10_s``/``p90_s``)."""
    steady = _steady(record)
    return statistics.median(steady) if steady else float(record["median_s"])
