"""Link uses: which directed links a set of routes crosses, and how many times each.

A flow group moves all of its routes at one common rate, so the load it puts on the network is
fully described by its distinct link ids and the number of its routes crossing each. Both the
discrete-event engine and the closed form consume this; plans compute it once per layout.
Small groups are counted in plain Python, large ones with numpy (simulator.core.arrays); either
form is made from the other on first ask.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain
from typing import TYPE_CHECKING, Iterable, Sequence

from simulator.core.arrays import use_arrays
from topologies.route_table import RouteTable

if TYPE_CHECKING:
    import numpy as np


class LinkUses:
    """Distinct directed link ids, ascending, and how many routes cross each (float, so it can weight
    rates directly): ``link_ids``/``link_counts`` as tuples, ``links``/``counts`` as numpy arrays
    (int64, float). Compared and hashed by identity."""

    __slots__ = ("_ids", "_counts", "_links", "_weights")

    def __init__(self, link_ids: tuple[int, ...] | None = None, link_counts: tuple[float, ...] | None = None,
                 links: np.ndarray | None = None, counts: np.ndarray | None = None) -> None:
        self._ids, self._counts, self._links, self._weights = link_ids, link_counts, links, counts

    @classmethod
    def of(cls, routes: Iterable[Iterable[int]], weights: Iterable[float] | None = None) -> LinkUses:
        """``weights``: one per route, how many flows it stands for (default 1 each): a route of
        weight w moves w times the group's bytes at w times its rate (PAT's steps of different sizes
        that finish together)."""
        if weights is None and isinstance(routes, RouteTable):
            return routes.link_uses()                  # counted from its arrays, no tuples made
        routes = routes if isinstance(routes, (tuple, list)) else tuple(routes)
        if weights is not None:
            total: dict[int, float] = {}
            for r, w in zip(routes, weights):
                for link in r:
                    total[link] = total.get(link, 0.0) + w
            ids = tuple(sorted(total))
            return cls(ids, tuple(total[i] for i in ids))
        n = sum(map(len, routes))
        if not use_arrays(n):
            seen = Counter(chain.from_iterable(routes))
            ids = tuple(sorted(seen))
            return cls(ids, tuple(map(float, map(seen.__getitem__, ids))))
        import numpy as np
        return cls.from_flat(np.fromiter(chain.from_iterable(routes), dtype=np.int64, count=n))

    @classmethod
    def from_flat(cls, flat: np.ndarray) -> LinkUses:
        """The uses of routes given as one array of all their link ids (int64), in array form."""
        import numpy as np
        n = len(flat)
        if n and int(flat.max()) < 64 * n:    # ids dense enough for one counting pass (no sort)
            per_link = np.bincount(flat)
            links = np.flatnonzero(per_link)
            return cls(links=links, counts=per_link[links].astype(float))
        links, counts = np.unique(flat, return_counts=True)
        return cls(links=links, counts=counts.astype(float))

    def same_links(self, other: LinkUses) -> bool:
        """Whether both cross the same set of links (how often aside)."""
        if self._ids is not None and other._ids is not None:
            return self._ids == other._ids
        import numpy as np
        return bool(np.array_equal(self.links, other.links))

    def held_ids(self) -> tuple[int, ...] | np.ndarray:
        """The link ids in the form held now (the tuple if there is one, else the array)."""
        return self._ids if self._ids is not None else self._links

    def held_counts(self) -> tuple[float, ...] | np.ndarray:
        """The counts in the form held now (the tuple if there is one, else the array)."""
        return self._counts if self._counts is not None else self._weights

    def ids_once(self) -> Sequence[int]:
        """The link ids, for one pass: the tuple if held, else a list that is not kept (memory)."""
        return self._ids if self._ids is not None else self._links.tolist()

    @property
    def link_ids(self) -> tuple[int, ...]:
        if self._ids is None:
            self._ids = tuple(self._links.tolist())
        return self._ids

    @property
    def link_counts(self) -> tuple[float, ...]:
        if self._counts is None:
            self._counts = tuple(self._weights.tolist())
        return self._counts

    @property
    def links(self) -> np.ndarray:
        if self._links is None:
            import numpy as np
            self._links = np.array(self._ids, dtype=np.int64)
        return self._links

    @property
    def counts(self) -> np.ndarray:
        if self._weights is None:
            import numpy as np
            self._weights = np.array(self._counts, dtype=float)
        return self._weights

    def span(self) -> tuple[int, int]:
        """(smallest, largest) link id; (-1, -1) for no link."""
        if self._ids is not None:
            return (self._ids[0], self._ids[-1]) if self._ids else (-1, -1)
        return (int(self._links[0]), int(self._links[-1])) if len(self._links) else (-1, -1)

    def __len__(self) -> int:
        return len(self._ids) if self._ids is not None else len(self._links)
