"""Max-min fair rates for coupled flow groups (progressive filling / water-filling).

Each group moves all of its flows at one common rate r_g. A group loads link l with
``count[g, l] * r_g`` (a group may cross a link more than once). Rates grow together until a link
saturates or a group reaches its own cap; the groups on that link freeze, and the rest keep growing.
"""

from __future__ import annotations

import numpy as np


def max_min_rates(use_group: np.ndarray, use_link: np.ndarray, use_count: np.ndarray,
                  capacity_Bps: np.ndarray, group_cap_Bps: np.ndarray) -> np.ndarray:
    """Rates (bytes/s) per group.

    ``use_group[k], use_link[k], use_count[k]``: group ``use_group[k]`` crosses link ``use_link[k]``
    ``use_count[k]`` times. Groups crossing no link get their cap (infinite if uncapped).
    """
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
