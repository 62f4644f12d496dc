"""Time marks for the runners and the profiler: CUDA events on a GPU (read after a synchronize,
so the host can run ahead), the host clock on the CPU."""

from __future__ import annotations

import time
from typing import Any


def stamp(is_cuda: bool) -> Any:
    """A time mark: a recorded CUDA event, or ``time.perf_counter()`` on the CPU."""
    if is_cuda:
        import torch

        ev = torch.cuda.Event(enable_timing=True)
        ev.record()
        return ev
    return time.perf_counter()


def elapsed_s(a: Any, b: Any, is_cuda: bool) -> float:
    """Seconds from mark ``a`` to mark ``b`` (CUDA events must have completed)."""
    return a.elapsed_time(b) / 1e3 if is_cuda else b - a
