"""The NVLS and B200 part of docs/accuracy.md: every public dataset that ran with NVLS or on B200,
predicted with NVLS (as NCCL would run it, each run's NCCL_NVLS_ENABLE respected) and without.

    python -m validation.accuracy --only nvls      # recomputes this part alone (seconds), rewrites it in place

Each row states the algorithm the measured runs used (from the file's header) and the one gpunetsim
predicts at >= 16 MiB (the most common choice there). Errors are |predicted/measured - 1| of the time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from simulator.collectives.params import Parameters
from validation.calibrate import BANDWIDTH_REGIME_BYTES
from validation.compare import Comparison, Predictor, compare, dataset_points, summary, topo_from_hint
from validation.parsers import CollMeasurement, read_jsonl

DATA = Path(__file__).resolve().parent / "data" / "public"
BEGIN, END = "<!-- nvls:begin -->", "<!-- nvls:end -->"
BANDWIDTH_REGIME = BANDWIDTH_REGIME_BYTES    # >= 16 MiB
TARGET_DGX_NVLS, TARGET_RING, TARGET_NVLS_OTHER = 5.0, 3.0, 8.0

DATASETS = (
    # (file, role): "fit" = nvls_fill_rounds was fitted on it (in sample); "check" = held out
    ("azure_ndh100v5_8xH100_allreduce_nvls_busbw", "fit"),
    ("nvidia_dgxc_dgxh100_1node_8gpu_allreduce", "dgx"),
    ("aws_p5_1node_8xH100_batch_allreduce", "check"),
    ("stas00_8xH200_nvls_vs_ring_gpucount", "check"),
    ("stas00_8xH200_torch_allreduce", "check"),
    ("stas00_8xB200_nvls_vs_ring_gpucount", "check"),
    ("stas00_p6b200_1node_torch_allreduce", "check"),
    ("aws_2x_p5_16xH100_efa3200_allreduce", "multi"),
    ("aws_2x_p5_16xH100_eks_nccl2.18.5_allreduce_partial", "multi"),
    ("nebius_2node_16xH100_ib_allreduce_dstack", "multi"),
    ("lambda_2node_16xB200_ib_allreduce_dstack", "multi"),
    ("gcp_a4_2node_16xB200_roce_allreduce_dstack_partial", "multi"),
    ("stas00_p6b200_4node_torch_allreduce", "multi"),
)


def _nvls_off(p: CollMeasurement) -> CollMeasurement:
    env = {k: v for k, v in p.env if not (k == "NCCL_ALGO" and "nvls" in v.lower())}
    env["NCCL_NVLS_ENABLE"] = "0"
    return replace(p, env=tuple(sorted(env.items())))


def _median(comps: list[Comparison]) -> float | None:
    return float(np.median([abs(c.error) for c in comps]) * 100) if comps else None


def _algo(comps: list[Comparison]) -> str:
    if not comps:
        return "-"
    counts = Counter(f"{c.algo}/{c.proto}" for c in comps)
    return ", ".join(a for a, _ in counts.most_common(2))


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def evaluate(params: Parameters | None = None) -> tuple[list[str], dict]:
    """(markdown lines, figures) of the NVLS/B200 comparison."""
    params = params or Parameters()
    rows, figures = [], {"dgx": [], "ring": [], "other": [], "fit": [], "all_on": [], "all_off": []}
    for name, role in DATASETS:
        path = DATA / f"{name}.jsonl"
        ds = read_jsonl(path)
        pts = dataset_points(ds)
        pred = Predictor(topo_from_hint(ds.meta.get("topology"), str(path)), params)
        on, _ = compare(pts, pred)
        off, _ = compare([_nvls_off(p) for p in pts], pred)
        big_on = [c for c in on if c.point.size_bytes >= BANDWIDTH_REGIME]
        big_off = [c for c in off if c.point.size_bytes >= BANDWIDTH_REGIME]
        nccl = summary(big_on).get("nccl_median_time_pct")
        worlds = sorted({p.world for p in pts})
        gpus = "-" if not worlds else str(worlds[0]) if len(worlds) == 1 else f"{worlds[0]}-{worlds[-1]}"
        rows.append(f"| {name} | {role} | {gpus} | {ds.meta.get('measured_algo', '-')} | "
                    f"{len(big_on)} | {_algo(big_on)} | {_f(_median(big_on))} | {_f(_median(on))} | "
                    f"{_algo(big_off)} | {_f(_median(big_off))} | {_f(nccl)} |")
        figures["all_on"] += big_on
        figures["all_off"] += big_off
        nvls_rows = [c for c in big_on if c.algo.startswith("nvls")]
        ring_rows = [c for c in big_on if c.algo == "ring" and dict(c.point.env).get("NCCL_NVLS_ENABLE") == "0"
                     or c.point.op != "all_reduce" and c.point.world == 8 and role != "multi"]
        if role == "dgx":
            figures["dgx"] += nvls_rows
        elif role == "fit":
            figures["fit"] += nvls_rows
        elif role == "check":
            figures["other"] += nvls_rows
        figures["ring"] += [c for c in ring_rows if role != "multi"]
    lines = [BEGIN, "", "## 5. NVLS and B200 (public datasets, uncalibrated)", "",
             "`python -m validation.accuracy --only nvls` recomputes this section alone. Every public dataset that "
             "ran with NVLS or on B200: the measured algorithm as the file's header states it, gpunetsim's "
             "prediction with NVLS (as NCCL would run it; a run's `NCCL_NVLS_ENABLE=0` or `NCCL_ALGO` respected) "
             "and with `--nvls off`, time errors at >= 16 MiB (bandwidth regime) and over all sizes. Role: "
             "`fit` = `nvls_fill_rounds` was fitted on it (in sample), `dgx` = the DGX H100 target, `check` = "
             "held out, `multi` = several servers. Tables published as busbw only have times derived from "
             "busbw (their meta says so). The NCCL column is NCCL's own model for the predicted choice.", "",
             "| dataset | role | GPUs | measured algorithm (header) | points >= 16 MiB | predicted with NVLS "
             "| median err % >= 16 MiB | median err % all sizes | predicted, NVLS off | median err % >= 16 MiB, "
             "NVLS off | NCCL model median err % >= 16 MiB |",
             "|---|---|---|---|---|---|---|---|---|---|---|", *rows, ""]
    dgx, ring, other = _median(figures["dgx"]), _median(figures["ring"]), _median(figures["other"])

    def verdict(v: float | None, t: float) -> str:
        return "-" if v is None else ("met" if v <= t else "**missed**")

    lines += [f"- DGX H100, 8 GPUs, NVLS all-reduce >= 16 MiB (NVIDIA dgxc): median {_f(dgx)}% "
              f"(target {TARGET_DGX_NVLS:g}%: {verdict(dgx, TARGET_DGX_NVLS)}; {len(figures['dgx'])} points). "
              f"In sample on the Azure table the fill was fitted to: {_f(_median(figures['fit']))}%.",
              f"- Ring on the same machines (runs with NVLS off, and all_gather/reduce_scatter, one server) "
              f">= 16 MiB: median {_f(ring)}% (target {TARGET_RING:g}%: {verdict(ring, TARGET_RING)}; "
              f"{len(figures['ring'])} points).",
              f"- H200 and B200 NVLS datasets held out (one server) >= 16 MiB: median {_f(other)}% "
              f"(target {TARGET_NVLS_OTHER:g}%: {verdict(other, TARGET_NVLS_OTHER)}; {len(figures['other'])} points).",
              f"- All rows above >= 16 MiB: median {_f(_median(figures['all_on']))}% with NVLS, "
              f"{_f(_median(figures['all_off']))}% with `--nvls off`.", "", END]
    return lines, figures


def replace_section(doc: str, lines: list[str], begin: str = BEGIN, end: str = END) -> str:
    """``doc`` with a section (between the markers ``begin`` and ``end``, by default the NVLS
    section's) replaced, or appended when it has none."""
    block = "\n".join(lines)
    if begin in doc and end in doc:
        head, rest = doc.split(begin, 1)
        return head + block + rest.split(end, 1)[1]
    return doc.rstrip("\n") + "\n\n" + block + "\n"
