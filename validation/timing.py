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


SLEEP_CALIBRATION_CYCLES = 20_000_000
"""Cycles of the sleep that ``sleep_cycles_per_s`` times (about 10 ms at the H100/H200's 1.98 GHz boost)."""


def sleep_cycles_per_s() -> float:
    """Cycles a second of ``torch.cuda._sleep`` on the current GPU, timed once after a warm-up sleep, so a runner's
    sleep of ``seconds`` lasts that long at the clock the GPU runs at (the runners queue calls behind it)."""
    import torch

    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(SLEEP_CALIBRATION_CYCLES)  # warm
    a.record()
    torch.cuda._sleep(SLEEP_CALIBRATION_CYCLES)
    b.record()
    torch.cuda.synchronize()
    return SLEEP_CALIBRATION_CYCLES / (a.elapsed_time(b) / 1e3)


def gpu_sleep(seconds: float, cycles_per_s: float) -> None:
    """Queue a GPU sleep of ``seconds`` at the rate ``sleep_cycles_per_s`` measured."""
    import torch

    torch.cuda._sleep(int(seconds * cycles_per_s))
