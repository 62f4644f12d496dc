"""Link uses: which directed links a set of routes crosses, and how many times each.

A flow group moves all of its routes at one common rate, so the load it puts on the network is
fully described by its distinct link ids and the number of its routes crossing each. Both the
discrete-event engine and the closed form consume this; plans compute it once per layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Iterable

import numpy as np


@dataclass(frozen=True, eq=False)
class LinkUses:
    """``links``: distinct directed link ids, ascending (int64); ``counts``: how many routes cross
    each (float, so it can weight rates directly)."""

    links: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, routes: Iterable[Iterable[int]]) -> "LinkUses":
        flat = np.fromiter(chain.from_iterable(routes), dtype=np.int64)
        links, counts = np.unique(flat, return_counts=True)
        return cls(links, counts.astype(float))

    def __len__(self) -> int:
        return len(self.links)
