"""When numpy pays off: small work in plain Python, large work in arrays.

Importing numpy costs about 0.05 s of CPU (plus its thread pool's start), a third of a plain
``gpunetsim collective`` on one server, whose routes, link uses and max-min rates involve a few
dozen numbers. So the code that scales with the cluster (routes of a flow group, link uses,
max-min fair rates, the closed form's bottleneck) keeps two paths with identical results (the tests
compare them number for number): plain Python below :data:`ARRAY_MIN_ITEMS` items, numpy (imported
then) from there on. One threshold for all of them, so a small run imports no numpy at all.
"""

from __future__ import annotations

#: Items (route entries, link uses, GPU pairs) from which a computation uses numpy arrays. Below it a
#: plain Python loop is faster than numpy's per-call overhead, and a run that stays below it never
#: imports numpy. An 8-GPU server's collectives have a few dozen; 64 GPUs' a few thousand.
ARRAY_MIN_ITEMS = 1024


def use_arrays(items: int) -> bool:
    """Whether a computation over ``items`` numbers should use numpy arrays."""
    return items >= ARRAY_MIN_ITEMS
