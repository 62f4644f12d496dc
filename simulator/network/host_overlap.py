"""A call's time in a stream of calls: the host's issue of each call overlaps the GPU work of the one before.

The measurement loops this model is calibrated on (nccl-tests', validation.runners.collectives') and the
streams it predicts (DDP's buckets) issue collectives back to back: the host returns from a call as soon
as the kernel is queued and issues the next while the GPU runs the first. So a call's host issue (the
framework's launch path, ``Plan.host_s``: ``call_overhead_s + op_overhead_s.{op} + rank_overhead_s x
log2(ranks)``) does not add to its GPU time; the stream moves at the slower of the two: the host's pace
where the GPU work is short (small messages: 4 B - 256 KiB calls on 4 H200s take the slowest rank's issue
time per call whatever their size, docs/accuracy.md section 3's "Host or GPU" table of
``h200x4_2026-11-26_lat3``), the GPU's where it is long (every rank's host issues a
16 MiB call in 25-50 us while the call takes 50-120 us on the GPU; validation/data/h200x4_2026-11-26_bw2,
``rank_host_times_s``).

Where the two are close, calls take longer than either: the ranks' issue times jitter call to call, and a
collective starts only when its last rank has issued it, so a GPU that is about as fast as the host still
waits some of the time. The stream time per call is taken as the :data:`NORM`-norm of the two,
``(host^p + gpu^p)^(1/p)``: the larger one where one dominates (within 0.4% when it is three times the
other), 2^(1/p) times it where they are equal, never more than their sum (no overlap) and never less
than their maximum (perfect overlap), so no fitted parameter can make a call faster than its slower side.
p = 4: fits of the 2-GPU points of section 3 and of ``h200x4_2026-11-26_bw2`` + ``_lat3`` with p = 2,
4, 8 and a hard maximum left Huber objectives of 2011/126, 1979/119, 1966/119 and 2448/125 (the hard
maximum's kink stalls the fitter); 4 and 8 fit the 2-GPU data alike (4 was chosen knowing that it also
predicted section 3's held-out 4-GPU points slightly better: docs/accuracy.md section 3 prints both,
validation.overlap_norm).

Both engines use :func:`stream_time_s`: the closed form (``closed_form.call_time_s``) and the
discrete-event engine (``engine.run_plan``, which runs the GPU part and then waits out the rest). An
isolated call (nothing queued before it) pays its issue in full: callers that model one (the LLM
iteration's groups, which carry the host's own timeline) add ``Plan.call_overhead_s`` instead.
"""

from __future__ import annotations

NORM = 4.0
"""p of the p-norm that combines a call's host issue with its GPU work (see the module docstring)."""


def stream_time_s(host_s, gpu_s):
    """Seconds per call of a stream whose calls take ``host_s`` to issue and ``gpu_s`` on the GPU:
    ``(host_s^p + gpu_s^p)^(1/p)``, p = :data:`NORM` (floats, or numpy arrays elementwise; written
    without numpy so that plain predictions do not import it)."""
    top = (host_s + gpu_s + abs(host_s - gpu_s)) / 2          # the larger of the two
    safe = top + (top == 0)                                   # (0 / 1 where both are 0)
    return top * ((host_s / safe) ** NORM + (gpu_s / safe) ** NORM) ** (1.0 / NORM)


def stream_partials(host_s: float, gpu_s: float) -> tuple[float, float]:
    """d stream_time_s / d host_s and d stream_time_s / d gpu_s (each in [0, 1], their p-th powers sum to 1)."""
    t = stream_time_s(host_s, gpu_s)
    if t <= 0:
        return 0.0, 1.0
    return (host_s / t) ** (NORM - 1), (gpu_s / t) ** (NORM - 1)
