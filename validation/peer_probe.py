"""Issue 10's peer-copy probe: does the ring ops' mid-size per-byte step appear without NCCL?

validation.slope_probe found all_reduce 17% slower per byte at 16-64 MiB than at 256 MiB - 1 GiB on 2 H200s, in
every NCCL setting it tried. The probe (``bash validation/scripts/gpu_campaign.sh peercopy OUT`` and ``peerraw
OUT``, dataset ``h200x2_2026-11-27_peercopy``) copies GPU 0's memory into GPU 1's without NCCL
(validation.runners.peer_copy: the copy engine, an SM kernel storing into the peer, one way and both ways at once)
and runs NCCL all_reduce and all_gather beside it in the same launches, 4 MiB - 1 GiB in steps of sqrt(2), two
passes each. This module prints every variant's slope per doubling of size (fast levels: each size's repetitions of
both passes pooled, their 10th percentile, as validation.slope_probe), the mid (16-64 MiB) and big (256 MiB - 1 GiB)
lines of validation.bw_lines, and the sizes whose host issue set the pace (the host's issue time at least
:data:`HOST_BOUND` of the time per call in some repetition: their slope says nothing of the GPU).

What it showed (2x H200, NCCL 2.28.9, two leases; the dataset's README says more): issued through CUDA directly
(``raw_*``, lease 2), the copy engine moves 4 MiB - 1 GiB at one per-byte time (2.64-2.74 us/MiB per doubling,
mid/big +0.2% one way, +0.7% both ways) and a whole-GPU SM kernel storing into the peer at 2.79-2.96 (+1.2%, +1.1%),
while NCCL in the same launches runs all_reduce +18.2% and all_gather +14.2% slower per byte at the mid sizes (lease
1: +18.4%, +13.0%). The step is NCCL's, not NVLink's or HBM's. A copy kernel on 24 blocks (NCCL's 24 channels on
this pair) is slower per byte throughout (3.65 us/MiB) and steps the other way (3.0-3.1 up to 16-32 MiB): the
source then stays in the 60 MB L2 between calls. The PyTorch copies (``ce_*``, ``sm_*``, lease 1) agree from 22.6
MiB up (mid/big +0.6% and +1.1% one way) but their host issue (~50 us a call) sets the pace below.

::

    python -m validation.peer_probe [FOLDER]   # default: the shipped dataset
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from simulator.core.errors import InputError
from validation.bw_lease_spread import FAST_PCT
from validation.bw_lines import Line
from validation.fields import Fields
from validation.runners.records import read_measurement_records
from validation.slope_probe import US_PER_MIB, doubling_slopes, lines, print_report

DATASET = "h200x2_2026-11-27_peercopy"
"""The shipped probe (2x H200, 2026-11-27, two leases)."""
DOUBLINGS_MIB = ((4, 8), (8, 16), (16, 32), (32, 64), (64, 128), (128, 256), (256, 512), (512, 1024))
HOST_BOUND = 0.9
"""A size is host-bound when its host issue time per call reaches this share of its time per call."""


@dataclass(frozen=True)
class Series:
    """One variant's fast levels (size in bytes -> s), its host-bound sizes (MiB) and its mid and big lines
    through the levels (:func:`validation.slope_probe.lines`, fitted once when built by :func:`series`)."""

    name: str
    times_s: dict[int, float]
    host_bound_mib: tuple[float, ...]
    mid: Line | None
    big: Line | None


def mib_key(size_bytes: int) -> int:
    """Sizes within 16 bytes of a whole MiB count as that MiB (the runner rounds sizes to 16-byte words)."""
    mib = round(size_bytes / (1 << 20))
    return mib << 20 if abs(size_bytes - (mib << 20)) < 16 else size_bytes


def series(records: Sequence[tuple[str, int, Mapping]]) -> list[Series]:
    """Per copy variant (``kind:"peer"``) and NCCL op (``kind:"coll"``, named ``nccl <op>``): fast levels pooled
    over ``records``' passes (``(file, line number, record)``: a bad field is an error naming all three), and the
    sizes where a repetition's host issue reached :data:`HOST_BOUND`."""
    reps: dict[str, dict[int, list[float]]] = {}
    host: dict[str, set[float]] = {}
    for src, n, r in records:
        if r.get("kind") not in ("peer", "coll"):
            continue
        f = Fields(r, src, f"line {n}", str(r["kind"]))
        name = f.text("variant") if r["kind"] == "peer" else f"nccl {f.text('op')}"
        size = mib_key(f.whole("bytes", low=1))
        times = f.times("rep_times_s")
        if not times:
            raise f.bad("rep_times_s", "missing: every probe record holds its repetitions' times")
        reps.setdefault(name, {}).setdefault(size, []).extend(times)
        issued = f.times("rep_issue_s") if f.has("rep_issue_s") else ()
        if any(h >= HOST_BOUND * t for h, t in zip(issued, times)):
            host.setdefault(name, set()).add(round(size / (1 << 20), 2))
    out = []
    for n, by in sorted(reps.items()):
        times_s = {s: float(np.percentile(t, FAST_PCT)) for s, t in sorted(by.items())}
        out.append(Series(n, times_s, tuple(sorted(host.get(n, ()))), *lines(times_s)))
    return out


def load(folder: str | os.PathLike[str]) -> dict[str, list[tuple[str, int, dict]]]:
    """The records per lease: ``peer_L*`` with ``nccl_world2_L1/L2`` (PyTorch copies) and ``peerraw_L*`` with
    ``nccl_world2_L3/L4`` (CUDA directly), each a list of ``(file, line number, record)``."""
    groups = {"torch": ("peer_L*.jsonl", "nccl_world2_L[12].jsonl"),
              "raw": ("peerraw_L*.jsonl", "nccl_world2_L[34].jsonl")}
    out: dict[str, list[dict]] = {}
    for name, patterns in groups.items():
        files = sorted(f for p in patterns for f in glob.glob(os.path.join(folder, p)))
        recs = [(f, n, r) for f in files for n, r in read_measurement_records(f)]
        if recs:
            out[name] = recs
    if not out:
        raise InputError("no peer_L*/peerraw_L* files", field="folder", value=str(folder))
    return out


def report(folder: str | os.PathLike[str]) -> list[str]:
    """The markdown table this module prints."""
    heads = " | ".join(f"{lo}-{hi}" for lo, hi in DOUBLINGS_MIB)
    out = ["Slope per doubling of size (us per MiB; fast levels, passes pooled), the mid (16-64 MiB) and big "
           "(256 MiB-1 GiB) lines, and the sizes whose host issue set the pace.", "",
           f"| lease | variant | {heads} | mid | big | mid / big - 1 | host-bound MiB |",
           "|---|---|" + "---|" * len(DOUBLINGS_MIB) + "---|---|---|---|"]
    for lease, recs in load(folder).items():
        for s in series(recs):
            d = doubling_slopes(s.times_s, DOUBLINGS_MIB)
            cells = " | ".join(f"{d[x] * US_PER_MIB:.2f}" if x in d else "-" for x in DOUBLINGS_MIB)
            mid, big = s.mid, s.big
            ratio = f"{mid.slope_s_per_byte / big.slope_s_per_byte - 1:+.1%}" if mid and big else "-"
            host = ", ".join(f"{m:g}" for m in s.host_bound_mib) or "none"
            out.append(f"| {lease} | {s.name} | {cells} | "
                       f"{mid.slope_s_per_byte * US_PER_MIB:.2f} | {big.slope_s_per_byte * US_PER_MIB:.2f} | "
                       f"{ratio} | {host} |" if mid and big else f"| {lease} | {s.name} | {cells} | - | - | - | {host} |")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    return print_report(argv, "validation.peer_probe", DATASET, report)


if __name__ == "__main__":
    raise SystemExit(main())
