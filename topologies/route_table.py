"""Routes of a large flow group kept as arrays until someone reads them route by route.

:meth:`topologies.preset_routing.PresetRouter.hop_group` computes the routes of thousands of GPU
pairs with a few numpy operations per route *shape*: one block of equal-length rows of link ids per
shape. The closed form and the discrete-event engine need only the group's link uses
(:class:`topologies.routes.LinkUses`), which :meth:`RouteTable.link_uses` counts from the blocks
directly; the tuples of ``int`` (one per route, in pair order) are made only when a caller reads
the routes (iteration, indexing, equality). A 4096-GPU all-reduce then builds its ring and tree
plans (the tuner-regret column needs their closed-form times) without a Python tuple per route.

A :class:`RouteTable` is a read-only sequence of route tuples: equal to, and hashed as, the tuple
of its routes; pickled as that tuple.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Iterator, Union

if TYPE_CHECKING:
    import numpy as np

    from topologies.routes import LinkUses

    Routes = Union[tuple["Route", ...], "RouteTable"]     # a group's routes: tuples, or a table of them

Route = tuple[int, ...]


class RouteTable:
    """Routes as blocks ``(rows, places)``: ``rows[i]`` (link ids, int64) is the route at position
    ``places[i]`` of the group; every position in ``range(len)`` appears in exactly one block.
    ``objects``: an object array of every link id as one shared ``int`` (the router's), so that
    the tuples, once made, hold shared ints rather than one int object per entry (memory at scale)."""

    __slots__ = ("_blocks", "_n", "_objects", "_routes")

    def __init__(self, blocks: Sequence[tuple[np.ndarray, np.ndarray]], n: int, objects: np.ndarray) -> None:
        self._blocks = tuple(blocks)
        self._n = n
        self._objects = objects
        self._routes: tuple[Route, ...] | None = None

    # ------------------------------------------------------------ as a sequence of tuples
    @property
    def routes(self) -> tuple[Route, ...]:
        """The routes as tuples, in group order (made on first ask, then kept)."""
        if self._routes is None:
            self._routes = self._materialise()
        return self._routes

    def _materialise(self) -> tuple[Route, ...]:
        import numpy as np
        grouped: list[Route] = []
        order = []
        for rows, places in self._blocks:
            rows = self._objects[rows]                                   # shared int objects
            grouped += zip(*rows.T.tolist()) if rows.shape[1] else [()] * len(places)   # tuples, no lists
            order.append(places)
        if not grouped:
            return ()
        order = np.concatenate(order)
        where = np.empty(len(order), dtype=np.int64)
        where[order] = np.arange(len(order))
        return itemgetter(*where.tolist())(grouped) if len(grouped) > 1 else tuple(grouped)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        return self.routes[i]

    def __iter__(self) -> Iterator[Route]:
        return iter(self.routes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RouteTable):
            return other is self or self.routes == other.routes
        if isinstance(other, tuple):
            return self.routes == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.routes)

    def __repr__(self) -> str:
        return f"RouteTable({self._n} routes)"

    def __reduce__(self):
        return tuple, (self.routes,)          # pickled (e.g. to a worker process) as its tuple

    # ------------------------------------------------------------ without tuples
    def entries(self) -> int:
        """Link ids over all routes (the size of the flattened routes)."""
        return sum(rows.size for rows, _ in self._blocks)

    def link_uses(self) -> LinkUses:
        """:meth:`LinkUses.of` of these routes, counted from the blocks (the same numbers)."""
        from topologies.routes import LinkUses
        from simulator.core.arrays import use_arrays
        n = self.entries()
        if not use_arrays(n):
            return LinkUses.of(self.routes)
        import numpy as np
        flat = np.concatenate([rows.ravel() for rows, _ in self._blocks])
        return LinkUses.from_flat(flat)

    def flat_in_order(self) -> tuple[np.ndarray, np.ndarray]:
        """(every route's link ids, one route after another in group order; the position of each entry's route),
        both int64: what a loop over the routes visits, in that order, without tuples (numpy paths that must add
        up per link in the same order as the loop, e.g. :func:`simulator.collectives.plans.host_staged_uses`)."""
        import numpy as np
        flat = np.concatenate([rows.ravel() for rows, _ in self._blocks])
        pos = np.concatenate([np.repeat(places, rows.shape[1]) for rows, places in self._blocks])
        order = np.argsort(pos, kind="stable")          # stable: a route's links keep their order
        return flat[order], pos[order]

    def same_set(self, other: RouteTable) -> bool:
        """Whether both hold the same *set* of routes (``frozenset`` equality, without tuples)."""
        if self._fingerprints() != other._fingerprints():     # different sets of row hashes: different sets
            return False
        mine, theirs = self._distinct_rows(), other._distinct_rows()
        if mine.keys() != theirs.keys():
            return False
        import numpy as np
        return all(np.array_equal(mine[w], theirs[w]) for w in mine)

    def _fingerprints(self) -> dict[int, bytes]:
        """Route length -> its routes' distinct hashes (a function of the set of routes only)."""
        import numpy as np
        out = {}
        for w, rows in self._by_width().items():
            h = np.sort((rows.astype(np.uint64) * _multipliers(w)).sum(axis=1, dtype=np.uint64))  # mod 2**64
            out[w] = h[np.concatenate(([True], h[1:] != h[:-1]))].tobytes()
        return out

    def _by_width(self) -> dict[int, np.ndarray]:
        """Route length -> every route of that length (rows, in no particular order)."""
        import numpy as np
        by_width: dict[int, list[np.ndarray]] = {}
        for rows, _ in self._blocks:
            if len(rows):
                by_width.setdefault(rows.shape[1], []).append(rows)
        return {w: blocks[0] if len(blocks) == 1 else np.concatenate(blocks) for w, blocks in by_width.items()}

    def _distinct_rows(self) -> dict[int, np.ndarray]:
        """Route length -> its distinct routes (rows, sorted)."""
        import numpy as np
        out = {}
        for w, rows in self._by_width().items():
            rows = rows[np.lexsort(rows.T[::-1])] if w else rows[:1]
            keep = np.ones(len(rows), dtype=bool)
            keep[1:] = (rows[1:] != rows[:-1]).any(axis=1)
            out[w] = rows[keep]
        return out

    @classmethod
    def join(cls, parts: Sequence[RouteTable]) -> RouteTable:
        """The routes of ``parts`` one after the other (their blocks, positions shifted)."""
        blocks, n = [], 0
        for t in parts:
            blocks += [(rows, places + n) for rows, places in t._blocks]
            n += t._n
        return cls(blocks, n, parts[0]._objects)


@lru_cache(maxsize=None)
def _multipliers(width: int) -> np.ndarray:
    """Odd 64-bit multipliers, one per position of a route (fixed: hashes comparable across tables)."""
    import numpy as np
    return np.array([(0x9E3779B97F4A7C15 * (2 * i + 1)) % 2**64 for i in range(width)], dtype=np.uint64)


Sequence.register(RouteTable)     # a read-only sequence (registered, not subclassed: isinstance stays fast)


def join_routes(parts: Sequence[Routes]) -> Routes:
    """The routes of ``parts`` one after the other: a tuple, or a table when every part is one."""
    if parts and all(isinstance(p, RouteTable) for p in parts):
        return RouteTable.join(parts)
    return tuple(chain.from_iterable(parts))


def same_route_set(a: Routes, b: Routes) -> bool:
    """``frozenset(a) == frozenset(b)``, without making tuples when both are tables."""
    if isinstance(a, RouteTable) and isinstance(b, RouteTable):
        return a.same_set(b)
    return frozenset(a) == frozenset(b)
