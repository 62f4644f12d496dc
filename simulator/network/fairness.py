"""Max-min fair rates for coupled flow groups (progressive filling / water-filling).

Each group moves all of its flows at one common rate r_g. A group loads link l with
``count[g, l] * r_g`` (a group may cross a link more than once). Rates grow together until a link
saturates or a group reaches its own cap; the groups on that link freeze, and the rest keep growing.

:func:`max_min_rates` fills with numpy arrays; :class:`FlowGroups` (and :func:`group_rates`) take
flow groups' link uses and fill in plain Python when they are few (simulator.core.arrays), with the
same arithmetic in the same order, so both give the same numbers to the last bit
(tests/test_arrays.py compares them).
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING, Sequence

from simulator.core.arrays import use_arrays

if TYPE_CHECKING:
    import numpy as np

    from topologies.routes import LinkUses


class LinkCapacity:
    """Usable capacity per directed link (bytes/s) as a list, and as a numpy array once a large
    computation asks for one (kept until the capacity changes)."""

    def __init__(self, capacity_Bps: Sequence[float]) -> None:
        self.values: list[float] = (capacity_Bps.tolist() if hasattr(capacity_Bps, "tolist")   # an array
                                    else list(capacity_Bps))
        self._array: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, link: int) -> float:
        return self.values[link]

    def array(self) -> np.ndarray:
        if self._array is None:
            import numpy as np
            self._array = np.array(self.values, dtype=float)
        return self._array

    def set(self, links: Sequence[int], capacity_Bps: Sequence[float] | float) -> None:
        """Change some links' capacity (one value for all, or one per link)."""
        links = [int(i) for i in links]
        new = [float(capacity_Bps)] * len(links) if isinstance(capacity_Bps, (int, float)) \
            else [float(c) for c in capacity_Bps]
        for i, c in zip(links, new):
            self.values[i] = c
        self._array = None


class FlowGroups:
    """The link uses of several flow groups taken together (one per group): what their max-min fair
    rates and the links' loads are computed from, in plain Python or, when there are many uses,
    with numpy arrays made once (simulator.core.arrays)."""

    def __init__(self, uses: Sequence[LinkUses]) -> None:
        self.uses = list(uses)
        self.arrays = use_arrays(sum(map(len, self.uses)))
        self._flat: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _concatenated(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(group, link, count) of every use, as arrays."""
        if self._flat is None:
            import numpy as np
            u = self.uses
            self._flat = (np.repeat(np.arange(len(u)), [len(x) for x in u]),
                          _joined([x.held_ids() for x in u], np.int64), _joined([x.held_counts() for x in u], float))
        return self._flat

    def rates(self, group_cap_Bps: Sequence[float], capacity: LinkCapacity) -> list[float]:
        """Max-min fair rates (bytes/s), one per group."""
        if not self.arrays:
            return _remembered_sparse_rates([(u.link_ids, u.link_counts) for u in self.uses], group_cap_Bps,
                                            capacity.values)
        import numpy as np
        ug, ul, uc = self._concatenated()
        return max_min_rates(ug, ul, uc, capacity.array(), np.array(group_cap_Bps, dtype=float)).tolist()

    def busiest_link(self, group: int, rates: Sequence[float], capacity: LinkCapacity) -> tuple[float, int]:
        """(utilisation, link) of the most utilised of ``group``'s links (the first of them on a tie)
        when every group runs at ``rates``; (0, -1) for a group on no link."""
        if not self.arrays:
            mine = self.uses[group].link_ids
            load = dict.fromkeys(mine, 0.0)
            for u, r in zip(self.uses, rates):      # the same sums, in the same order, as np.bincount
                for l, c in zip(u.link_ids, u.link_counts):
                    if l in load:
                        load[l] += c * r
            util = [load[l] / capacity[l] for l in mine]
            if not util:
                return 0.0, -1
            top = max(util)
            return top, mine[util.index(top)]
        import numpy as np
        ug, ul, uc = self._concatenated()
        cap = capacity.array()
        load = np.bincount(ul, weights=uc * np.array(rates)[ug], minlength=len(cap))
        mine = self.uses[group].links
        if not len(mine):
            return 0.0, -1
        util = load[mine] / cap[mine]
        i = int(np.argmax(util))
        return float(util[i]), int(mine[i])


def _joined(parts: Sequence, dtype) -> np.ndarray:
    """One array of ``parts`` (tuples and arrays) in order; runs of tuples are read in one pass
    rather than made into one small array each (an NVLS-Tree plan has a group per server)."""
    import numpy as np
    out, run = [], []
    for p in parts:
        if isinstance(p, tuple):
            run.append(p)
            continue
        if run:
            out.append(np.fromiter(chain.from_iterable(run), dtype=dtype))
            run = []
        out.append(p)
    if run:
        out.append(np.fromiter(chain.from_iterable(run), dtype=dtype))
    return np.concatenate(out) if out else np.zeros(0, dtype=dtype)


def group_rates(uses: Sequence[LinkUses], group_cap_Bps: Sequence[float], capacity: LinkCapacity) -> list[float]:
    """Max-min fair rates (bytes/s) of flow groups given by their link uses, one per group."""
    return FlowGroups(uses).rates(group_cap_Bps, capacity)


_SPARSE_RATES: dict[tuple, tuple[float, ...]] = {}
""":func:`_sparse_rates` by value (each group's links and counts, the caps, the used links' capacities): a
calibration's finite differences and the next calibration of the same machine fill the same few groups under
the same capacities again, with new plan objects (about half of the accuracy report's fillings)."""
SPARSE_RATES_KEEP = 1 << 16
"""Fillings :data:`_SPARSE_RATES` keeps before it starts again (a few tens of MB at most)."""


def _remembered_sparse_rates(groups: Sequence[tuple[Sequence[int], Sequence[float]]],
                             group_cap_Bps: Sequence[float], capacity_Bps: Sequence[float]) -> list[float]:
    """:func:`_sparse_rates`, filled once per process for the same inputs (a pure function of them)."""
    key = (tuple(groups), tuple(group_cap_Bps), tuple(capacity_Bps[link] for links, _ in groups for link in links))
    hit = _SPARSE_RATES.get(key)
    if hit is None:
        if len(_SPARSE_RATES) >= SPARSE_RATES_KEEP:
            _SPARSE_RATES.clear()
        hit = _SPARSE_RATES[key] = tuple(_sparse_rates(groups, group_cap_Bps, capacity_Bps))
    return list(hit)


def _sparse_rates(groups: Sequence[tuple[Sequence[int], Sequence[float]]], group_cap_Bps: Sequence[float],
                  capacity_Bps: Sequence[float]) -> list[float]:
    """:func:`max_min_rates` in plain Python over the links in use only (the others never load)."""
    caps = [float(c) for c in group_cap_Bps]
    rate = [0.0] * len(groups)
    active = [bool(links) for links, _ in groups]
    for g, (links, _) in enumerate(groups):
        if not links:
            rate[g] = caps[g]
    residual = {l: float(capacity_Bps[l]) for links, _ in groups for l in links}
    while any(active):
        demand: dict[int, float] = {}
        for g, (links, counts) in enumerate(groups):
            if active[g]:
                for l, c in zip(links, counts):
                    demand[l] = demand.get(l, 0.0) + c
        loaded = {l: d for l, d in demand.items() if d > 0}
        link_dt = {l: residual[l] / d for l, d in loaded.items()}
        dt = max(0.0, min(min(link_dt.values(), default=float("inf")),
                          min((caps[g] - rate[g] for g in range(len(groups)) if active[g]), default=float("inf"))))
        for g in range(len(groups)):
            if active[g]:
                rate[g] += dt
        for l, d in demand.items():
            residual[l] -= dt * d
        saturated = {l for l in loaded if residual[l] <= 1e-9 * max(capacity_Bps[l], 1.0)}
        frozen = [active[g] and not saturated.isdisjoint(groups[g][0]) for g in range(len(groups))]
        for g in range(len(groups)):
            c = caps[g]
            if active[g] and c != float("inf") and c - rate[g] <= 1e-12 * c:
                frozen[g] = True
        if not any(frozen):          # numerical safety: freeze the tightest link's groups
            low = min(link_dt.values()) * (1 + 1e-12)
            tight = {l for l, t in link_dt.items() if t <= low}
            frozen = [active[g] and not tight.isdisjoint(groups[g][0]) for g in range(len(groups))]
        active = [a and not f for a, f in zip(active, frozen)]
    return rate


def max_min_rates(use_group: np.ndarray, use_link: np.ndarray, use_count: np.ndarray,
                  capacity_Bps: np.ndarray, group_cap_Bps: np.ndarray) -> np.ndarray:
    """Rates (bytes/s) per group.

    ``use_group[k], use_link[k], use_count[k]``: group ``use_group[k]`` crosses link ``use_link[k]``
    ``use_count[k]`` times. Groups crossing no link get their cap (infinite if uncapped).
    """
    import numpy as np
    n_groups = len(group_cap_Bps)
    rate = np.zeros(n_groups)
    active = np.ones(n_groups, dtype=bool)
    residual = capacity_Bps.astype(float).copy()
    n_links = len(capacity_Bps)
    has_links = np.bincount(use_group, minlength=n_groups) > 0
    rate[~has_links] = group_cap_Bps[~has_links]
    active &= has_links
    while active.any():
        mask = active[use_group]
        demand = np.bincount(use_link[mask], weights=use_count[mask], minlength=n_links)
        loaded = demand > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            link_dt = np.where(loaded, residual / np.where(loaded, demand, 1.0), np.inf)
        cap_dt = np.where(active, group_cap_Bps - rate, np.inf)
        dt = max(0.0, min(link_dt.min(), cap_dt.min()))
        rate[active] += dt
        residual -= dt * demand
        saturated = loaded & (residual <= 1e-9 * np.maximum(capacity_Bps, 1.0))
        frozen = np.zeros(n_groups, dtype=bool)
        if saturated.any():
            hit = saturated[use_link] & mask
            frozen[use_group[hit]] = True
        finite = np.isfinite(group_cap_Bps)
        frozen |= active & finite & (group_cap_Bps - rate <= 1e-12 * np.where(finite, group_cap_Bps, 1.0))
        if not frozen.any():          # numerical safety: freeze the tightest link's groups
            tight = loaded & (link_dt <= link_dt.min() * (1 + 1e-12))
            frozen[use_group[tight[use_link] & mask]] = True
        active &= ~frozen
    return rate
