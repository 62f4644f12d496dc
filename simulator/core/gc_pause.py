"""Pausing Python's cyclic garbage collector around bursts of allocation that create no garbage cycles.

Building a plan at scale makes ~10^5 small route tuples, and simulating one collective alone makes
an event and a transfer per flow group (thousands at 16384 GPUs); none of them is freed while the
burst runs. The collector's passes over them in the meantime free nothing, and its full passes
scan every object alive, so they cost more the larger the model (a quarter of a 16384-GPU plan's
build). Reference counting still frees everything at once; the collector runs again afterwards.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (unless it was off already: then it stays off)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
