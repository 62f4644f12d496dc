"""docs/accuracy.md, NCCL's p2p channels: send/recv on 2 and 4 H100s against the channel rule.

The probe (validation/data/h100x4_2026-11-26_p2p) measured send/recv (each rank to the next) on 2
and 4 GPUs of one NVSwitch board. The table puts beside each size the channels NCCL gives one peer
(simulator.collectives.p2p: a rule of NCCL's, nothing fitted), the measured bandwidth and the
predicted one with the datasheet parameters, and without the per-channel ceiling (what the model
predicted before it knew about channels). The one number read off these points is the prior of
``p2p_channel_Bps`` (20 GB/s); the step sizes and positions are NCCL's rule.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simulator.collectives.params import Parameters
from validation.calibrate import BANDWIDTH_REGIME_BYTES
from validation.compare import Predictor, compare, topo_from_hint
from validation.parsers import read_jsonl

DATA = Path(__file__).resolve().parent / "data" / "h100x4_2026-11-26_p2p"


def _points(world: int):
    ds = read_jsonl(DATA / f"sendrecv_world{world}.jsonl")
    return ds, [p for p in ds.points if p.variant == "default" and p.size_bytes >= 8 << 20]


def section() -> tuple[list[str], dict]:
    """Markdown lines and figures (median |err| >= 16 MiB with and without the channel ceiling)."""
    with_ch, without = Parameters(), Parameters().with_values({"p2p_channel_Bps": 1e15}, name="no channel ceiling")
    rows: dict[int, dict] = {}
    errs: dict[str, list[float]] = {"with": [], "without": []}
    for world in (2, 4):
        ds, pts = _points(world)
        topo = topo_from_hint(ds.meta.get("topology"), str(DATA))
        for name, params in (("with", with_ch), ("without", without)):
            pred = Predictor(topo, params)
            comps, _ = compare(pts, pred)
            for c in comps:
                r = rows.setdefault(c.point.size_bytes, {})
                r[(world, "meas")] = c.point.algbw_GBps
                r[(world, name)] = c.point.size_bytes / c.predicted_s / 1e9
                if name == "with":
                    plan = pred.setup(c.point)[0].planner.plan("send_recv", c.algo, c.proto)
                    r[(world, "ch")] = plan.channels_at(c.point.size_bytes)
                if c.point.size_bytes >= BANDWIDTH_REGIME_BYTES:
                    errs[name].append(abs(c.error) * 100)
    lines = ["", "**NCCL's p2p channels (send/recv on 2 and 4 H100s, `validation/data/h100x4_2026-11-26_p2p`).** "
             "NCCL spreads a peer's bytes over channels (one CTA each, ~20 GB/s each way): a call starts from "
             "32/ranks channels and doubles while a channel's part exceeds 16 MiB "
             "(`simulator/collectives/p2p.py`, NCCL's rule). That is why 16-128 MiB runs at half the 2-GPU "
             "bandwidth on 4 GPUs and catches up from 192 MiB. Algorithm bandwidth in GB/s, datasheet parameters "
             "(the prior `p2p_channel_Bps` = 20 GB/s was read off these points; the channel counts are not fitted); "
             "'no ceiling' is the model without per-channel limits.", "",
             "| size | channels, 2 GPUs | measured | predicted | no ceiling | channels, 4 GPUs | measured | predicted "
             "| no ceiling |", "|---|---|---|---|---|---|---|---|---|"]
    for size in sorted(rows):
        r = rows[size]
        cells = []
        for w in (2, 4):
            if (w, "meas") in r:
                cells += [str(r[(w, "ch")]), f"{r[(w, 'meas')]:.0f}", f"{r[(w, 'with')]:.0f}", f"{r[(w, 'without')]:.0f}"]
            else:
                cells += ["-"] * 4
        lines.append(f"| {size >> 20} MiB | " + " | ".join(cells) + " |")
    fig = {"p2p_median_with_pct": float(np.median(errs["with"])), "p2p_median_without_pct": float(np.median(errs["without"])),
           "p2p_worst_with_pct": float(np.max(errs["with"])), "p2p_worst_without_pct": float(np.max(errs["without"]))}
    lines += ["", f">= 16 MiB, both world sizes: median error {fig['p2p_median_with_pct']:.1f}% (worst "
              f"{fig['p2p_worst_with_pct']:.1f}%) with NCCL's channels, {fig['p2p_median_without_pct']:.1f}% (worst "
              f"{fig['p2p_worst_without_pct']:.1f}%) without."]
    return lines, fig
