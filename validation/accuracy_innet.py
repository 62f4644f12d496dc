"""The CollNet/SHARP and PAT part of docs/accuracy.md (section 10).

    python -m validation.accuracy --only innet     # recomputes this part alone (seconds), rewrites it in place

No committed dataset ran with CollNet/SHARP or PAT (the section lists what it looked for in every
dataset's header), so instead of errors against measurements it reports a sanity check against
NCCL's own cost model (simulator.collectives.nccl_model): gpunetsim's time of the algorithm over
NCCL's estimate for it, in the latency regime (< 16 MiB) and the bandwidth regime (>= 16 MiB), and
how often the two models agree on whether the algorithm beats the ring.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import topologies
from simulator.network.closed_form import CostModel
from validation.calibrate import BANDWIDTH_REGIME_BYTES

DATA = Path(__file__).resolve().parent / "data"
BEGIN, END = "<!-- innet:begin -->", "<!-- innet:end -->"
BANDWIDTH_REGIME = BANDWIDTH_REGIME_BYTES
SIZES = tuple(1 << k for k in range(16, 31, 2))           # 64 KiB .. 1 GiB
PREFIXES = ("NCCL_COLLNET", "NCCL_PAT", "NCCL_SHARP", "SHARP_")
"""Environment variables (prefixes) that switch CollNet, PAT or the SHARP plugin on."""

CASES = (
    # (label, preset, nodes, gpus per node, sharp, nvls, op, algo)
    ("4x DGX H100, SHARP, NVLS off", "dgx-h100", 4, None, True, False, "all_reduce", "collnet_direct"),
    ("4x DGX H100, SHARP, NVLS off", "dgx-h100", 4, None, True, False, "all_reduce", "collnet_chain"),
    ("16x DGX H100, SHARP, NVLS off", "dgx-h100", 16, None, True, False, "all_reduce", "collnet_chain"),
    ("4x DGX H100, SHARP", "dgx-h100", 4, None, True, None, "all_reduce", "nvls"),
    ("64 servers x 1 H100", "dgx-h100", 64, 1, False, None, "all_gather", "pat"),
    ("64 servers x 1 H100", "dgx-h100", 64, 1, False, None, "reduce_scatter", "pat"),
    ("512 servers x 1 H100", "dgx-h100", 512, 1, False, None, "all_gather", "pat"),
)


def scan_headers(root: Path = DATA) -> list[str]:
    """Names of the datasets under ``root`` whose header switches CollNet, SHARP or PAT on."""
    hits = []
    for f in sorted(root.rglob("*.jsonl")):
        with f.open() as fh:
            first = fh.readline()
        try:
            meta = json.loads(first)
        except ValueError:
            continue
        if meta.get("kind") != "meta":
            continue
        env = {str(k).upper(): str(v).lower() for k, v in (meta.get("env") or {}).items()}
        algo = env.get("NCCL_ALGO", "") + " " + str(meta.get("measured_algo", "")).lower()
        if any(k.startswith(PREFIXES) for k in env) or "collnet" in algo or "pat" in algo.replace(",", " ").split():
            hits.append(meta.get("name", f.stem))
    return hits


def _ring_best(m: CostModel, op: str, size: int) -> tuple[float, float]:
    """(gpunetsim's, NCCL's) fastest ring time over the protocols."""
    ours = min(m.time_s(op, size, "ring", p) for p in ("ll", "ll128", "simple"))
    nccl = min(m.nccl.time_s(op, size, "ring", p) for p in ("ll", "ll128", "simple"))
    return ours, nccl


def evaluate(data: Path = DATA) -> tuple[list[str], dict]:
    """Section 10's lines and figures. Only the names of datasets that run CollNet, SHARP or PAT enter the
    text, never the total, so adding other data leaves docs/accuracy.md as it is."""
    hits = scan_headers(data)
    rows, figures = [], {}
    for label, preset, nodes, gpus, sharp, nvls, op, algo in CASES:
        m = CostModel(topologies.prepare(preset, nodes=nodes, gpus_per_node=gpus, nvls=nvls,
                                         fabric=topologies.FabricSpec(sharp=sharp)))
        small, large, agree = [], [], 0
        for size in SIZES:
            ours = m.time_s(op, size, algo, "simple")
            nccl = m.nccl.time_s(op, size, algo, "simple")
            (large if size >= BANDWIDTH_REGIME else small).append(ours / nccl)
            ring_ours, ring_nccl = _ring_best(m, op, size)
            agree += (ours < ring_ours) == (nccl < ring_nccl)
        big = SIZES[-1]
        rows.append(f"| {label} | {op} | {algo} | {np.median(small):.2f} | {np.median(large):.2f} | "
                    f"{big / m.time_s(op, big, algo, 'simple') / 1e9:.0f} | "
                    f"{big / m.nccl.time_s(op, big, algo, 'simple') / 1e9:.0f} | {agree}/{len(SIZES)} |")
        figures[f"{nodes}x{gpus or 8} {op} {algo}"] = float(np.median(large))
    lines = [BEGIN, "", "## 10. CollNet (SHARP) and PAT: no measurements; sanity check against NCCL's model", "",
             "`python -m validation.accuracy --only innet` recomputes this section alone. "
             f"Datasets under `validation/data/` whose header sets a variable starting with {', '.join(PREFIXES)}, "
             "or whose NCCL_ALGO or measured algorithm names CollNet or PAT: "
             + (", ".join(hits) if hits else "none") +
             ", so CollNet Direct/Chain, NVLS with SHARP and PAT are not validated against measurements. "
             "Instead: gpunetsim's time (closed form, datasheet parameters) over NCCL's own estimate for the same "
             "algorithm (`simulator/collectives/nccl_model.py`), medians over 64 KiB to 1 GiB in steps of 4x, "
             "and in how many sizes both models agree on whether the algorithm beats the best ring.", "",
             "| cluster | op | algorithm | ours/NCCL < 16 MiB | ours/NCCL >= 16 MiB | ours at 1 GiB (GB/s algbw) | "
             "NCCL at 1 GiB | agree vs ring |",
             "|---|---|---|---|---|---|---|---|", *rows, "",
             "Where the ratio departs from 1 the models differ by construction: gpunetsim's CollNet Direct on DGX "
             "H100 is limited by each GPU's NVLink (2 x 7/8 x S for the in-server scatter and gather), NCCL's "
             "table by the NICs with its 0.85 factor; NVLS with SHARP carries gpunetsim's NVLS pipeline fill; "
             "PAT's latency follows NCCL's terms in both, its bandwidth is the NIC's at 0.75 in both.", "", END]
    return lines, figures
