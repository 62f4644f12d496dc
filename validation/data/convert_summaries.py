"""Maintainer tool (called by convert_public): public bus-bandwidth tables without a time column.

Some public NVLS and B200 results were published as busbw (or busbw and algbw) per size only. The
time of one call follows from nccl-tests' definition, time = size x factor / busbw (factor 2(n-1)/n
for all_reduce, (n-1)/n for all_gather / reduce_scatter), so these tables enter the accuracy report
like the others; each point keeps the published bus bandwidth and says ``"time_from": "busbw"``
in the dataset's meta. The provenance is written by hand from each file's header, the figures are
the published ones.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from simulator.core.vocabulary import busbw_factor
from validation.parsers import CollMeasurement, Dataset, write_jsonl

_STAS00 = {"repo": "stas00/ml-engineering", "path": "network/README.md",
           "commit": "744d01e18b79512572f64a6bbd8b5f4a725203a7",
           "url": "https://github.com/stas00/ml-engineering/blob/master/network/README.md"}
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _size(label: str) -> int:
    """Binary size labels: '32KiB', '1GiB'."""
    m = re.fullmatch(r"(\d+)([KMG])iB", label.strip())
    if not m:
        raise SystemExit(f"unreadable size label {label!r}")
    return int(m.group(1)) * _UNITS[m.group(2)]


def _point(op: str, world: int, size: int, busbw: float, variant: str, env: dict[str, str],
           in_place: bool = False) -> CollMeasurement:
    algbw = busbw / busbw_factor(op, world)
    return CollMeasurement(op, world, size, size / (algbw * 1e9), round(algbw, 4), busbw, variant=variant,
                           in_place=in_place, env=tuple(sorted(env.items())))


def _rows(text: str, pattern: str) -> list[tuple[str, ...]]:
    return re.findall(pattern, text, re.M)


def _azure(text: str) -> list[CollMeasurement]:
    """Labels '1K' ... '8G' round the powers of two 1024 ... 8 GiB ('65K', '132K'): one row per power."""
    env = {"NCCL_ALGO": "NVLS"}
    rows = _rows(text, r"^\|\s*(\d+[KMG])\s*\|\s*([\d.]+)\s*\|")
    return [_point("all_reduce", 8, 1024 << i, float(b), "default", env, in_place=True)
            for i, (_, b) in enumerate(rows)]


def _gpucount(text: str, which: str) -> list[CollMeasurement]:
    """stas00's NVLS-vs-Ring sweep by GPU count (8 GiB all_reduce): default and NCCL_NVLS_ENABLE=0."""
    block = text.split("The same sweep on an 8x B200")[0 if which == "h200" else 1].split("[...]")[0]
    pts = []
    seen = set()
    for n, _algo, bus, bus_off in _rows(block, r"^\|\s*(\d)\s*\|\s*(\w+)\s*\|\s*([\d.]+)GBps\s*\|\s*([\d.]+)GBps"):
        if n in seen:
            continue
        seen.add(n)
        pts.append(_point("all_reduce", int(n), 8 << 30, float(bus), "default", {}))
        pts.append(_point("all_reduce", int(n), 8 << 30, float(bus_off), "nvls_off", {"NCCL_NVLS_ENABLE": "0"}))
    if which == "h200":   # 16 GiB, 8 GPUs: each collective, NVLS on and off
        for name, bus in _rows(text, r"^\|\s*(all-reduce, `NCCL_NVLS_ENABLE=[01]`|all-gather|reduce-scatter)\s*"
                                     r"\|\s*\w+\s*\|\s*([\d.]+)GBps"):
            op = {"all-g": "all_gather", "reduc": "reduce_scatter"}.get(name[:5], "all_reduce")
            env = {"NCCL_NVLS_ENABLE": name[-2]} if op == "all_reduce" else {}
            variant = "nvls_off" if env.get("NCCL_NVLS_ENABLE") == "0" else "default"
            pts.append(_point(op, 8, 16 << 30, float(bus), variant, env))
    return pts


def _torch_sweep(text: str, which: str) -> list[CollMeasurement]:
    """stas00's torch all_reduce_bench sweeps: 8x H200 (PART 2), P6-B200 one node or four (PART 1)."""
    if which == "h200":
        part = text.split("## PART 2")[1]
        return [_point("all_reduce", 8, _size(s), float(b), "default", {})
                for s, b in _rows(part, r"^\|\s*(\d+[KMG]iB)\s*\|\s*([\d.]+)GBps\s*\|\s*[\d.]+GBps\s*\|")]
    part = text.split("## PART 1")[1].split("## PART 2")[0]
    col = 1 if which == "b200_1node" else 2
    world = 8 if which == "b200_1node" else 32
    return [_point("all_reduce", world, _size(r[0]), float(r[col]), "default", {})
            for r in _rows(part, r"^\|\s*(\d+[KMG]iB)\s*\|\s*([\d.]+)GBps\s*\|\s*([\d.]+)GBps\s*\|")]


def _topo(preset: str, nodes: int, gpus: int, nic_bw_per_node: str | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"preset": preset, "nodes": nodes, "gpus_per_node": gpus}
    if nic_bw_per_node:
        t["nic_bw_per_node"] = nic_bw_per_node
    return t


SUMMARIES: dict[str, dict[str, Any]] = {
    "azure_ndh100v5_8xH100_allreduce_nvls_busbw": {
        "raw": "azure_ndh100v5_8xH100_allreduce_nvls_busbw", "read": _azure,
        "source": {"repo": "Azure/AI-benchmarking-guide", "path": "Azure Results/ND_H100_v5_results.md",
                   "commit": "f350e7e65b82cfcb9220b32b582bc34342d9c1a6",
                   "url": "https://github.com/Azure/AI-benchmarking-guide"},
        "hardware": "Azure ND H100 v5: 8x H100 80GB SXM5, NVLink4 / NVSwitch gen3 (one VM, no network)",
        "nccl_version": "2.18.5 (stated; the script builds NCCL master, so possibly newer)",
        "env": {"NCCL_ALGO": "NVLS"}, "command": "NCCL_ALGO=NVLS all_reduce_perf -b 8 -e 8G -f 2 -g 8 -n 40",
        "measured_algo": "NVLS (NCCL_ALGO=NVLS)",
        "notes": "in-place busbw only; sizes are the powers of two the labels round",
        "topology": _topo("dgx-h100", 1, 8),
        "fitted": "nvls_fill_rounds (simulator.collectives.algorithms) is fitted on this table at >= 16 MiB",
    },
    "stas00_8xH200_nvls_vs_ring_gpucount": {
        "raw": "stas00_8xH200_8xB200_nvls_vs_ring_gpucount_collectives", "read": lambda t: _gpucount(t, "h200"),
        "source": _STAS00, "hardware": "8x H200 SXM, NVLink4 / NVSwitch gen3 (AWS p5en.48xlarge), 4 to 8 GPUs used",
        "nccl_version": "2.27.7", "env": {}, "command": "all_reduce_perf -b 8G -e 8G -g N (and 16G, 8 GPUs)",
        "measured_algo": "NCCL's choice as published: Ring on 4 GPUs, NVLS on 5-8 (8 GiB); NVLS off (variant "
                         "nvls_off, NCCL_NVLS_ENABLE=0): Ring; all_gather / reduce_scatter: Ring",
        "topology": _topo("hgx-h200", 1, 8),
    },
    "stas00_8xB200_nvls_vs_ring_gpucount": {
        "raw": "stas00_8xH200_8xB200_nvls_vs_ring_gpucount_collectives", "read": lambda t: _gpucount(t, "b200"),
        "source": _STAS00, "hardware": "8x B200, NVLink5 / NVSwitch (AWS p6-b200.48xlarge), 4 to 8 GPUs used",
        "nccl_version": "2.27.7 (AWS NCCL_TUNER_PLUGIN=ofi)", "env": {}, "command": "all_reduce_perf -b 8G -e 8G -g N",
        "date": "2026-08-09",       # "measured 2026-08-09" (the B200 table)
        "measured_algo": "NCCL's choice as published: Ring on 4-5 GPUs, NVLS on 6-8 (8 GiB); NVLS off: Ring",
        "topology": _topo("hgx-b200", 1, 8),
    },
    "stas00_8xH200_torch_allreduce": {
        "raw": "stas00_p6b200_1v4node_and_8xH200_torch_allreduce_sweep", "read": lambda t: _torch_sweep(t, "h200"),
        "source": _STAS00, "hardware": "1 node 8x H200 SXM, NVLink4 / NVSwitch gen3",
        "nccl_version": "2.27.7", "tool": "torch.distributed.all_reduce (all_reduce_bench.py), not nccl-tests",
        "env": {}, "command": "torch.distributed.run --nproc_per_node=8 all_reduce_bench.py",
        "measured_algo": "Ring LL up to 1 MiB, NVLS (Simple) from 2 MiB (NCCL_DEBUG, as published)",
        "topology": _topo("hgx-h200", 1, 8),
    },
    **{f"stas00_p6b200_{nodes}node_torch_allreduce": {
        "raw": "stas00_p6b200_1v4node_and_8xH200_torch_allreduce_sweep",
        "read": (lambda which: (lambda t: _torch_sweep(t, which)))(f"b200_{nodes}node"),
        "source": _STAS00, "hardware": hardware, "nccl_version": "2.27.7 (AWS NCCL_TUNER_PLUGIN=ofi)",
        "tool": "torch.distributed.all_reduce (all_reduce_bench.py), not nccl-tests",
        "env": {}, "command": f"all_reduce_bench.py, {8 * nodes} ranks", "measured_algo": algo,
        "date": "2026-08-02",       # the table's commit (cbbf431), per the header
        "topology": _topo("hgx-b200", nodes, 8, "3200 Gb/s" if nodes > 1 else None),
    } for nodes, hardware, algo in (
        (1, "1x AWS p6-b200.48xlarge: 8x B200, NVLink5 / NVSwitch",
         "not stated (AWS's tuner plugin chooses; the jump at 8 GiB suggests Ring below, NVLS above)"),
        (4, "4x AWS p6-b200.48xlarge: 32x B200, NVLink5; 8x 400G EFA v4 per node",
         "not verified by the author (4-node H200 runs of the same setup chose Ring)"))},
}


def convert_summaries(shared: Path, out_dir: Path) -> list[str]:
    """Write one JSONL per entry of :data:`SUMMARIES`; returns the names written."""
    written = []
    for name, spec in SUMMARIES.items():
        raw = shared / "public" / f"{spec['raw']}.txt"
        read: Callable[[str], list[CollMeasurement]] = spec["read"]
        points = read(raw.read_text(encoding="utf-8"))
        if not points:
            raise SystemExit(f"{name}: no rows read from {raw.name}")
        meta = {"name": name, "raw_file": f"public/{spec['raw']}.txt", "tool": spec.get("tool", "nccl-tests"),
                **{k: v for k, v in spec.items() if k not in ("raw", "read", "tool")},
                "time_from": "busbw (time = size x busbw factor / busbw; the table has no time column)"}
        write_jsonl(Dataset(meta=meta, points=tuple(points)), out_dir / f"{name}.jsonl")
        written.append(name)
    return written
