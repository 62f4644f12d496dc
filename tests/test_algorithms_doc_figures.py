"""docs/algorithms.md's prose figures are today's model (review s26: the NVLS plateau read 237 / 466 / 480 GB/s
busbw at 16 MiB / 1 GiB / 16 GiB on a DGX H100, figures of the NVLS change of 2026-11-26, while the model gives
234 / 455 / 475, as `gpunetsim plan`'s golden table does at 1 GiB (455.3); an unaligned all_gather read 81.0 us
for 80.9). The golden test checks console blocks only, so these sentences are read and rerun here (closed form:
both engines agree on one server)."""

from __future__ import annotations

import re
from pathlib import Path

import gpunetsim
from simulator.core.vocabulary import busbw_factor

ALGORITHMS = " ".join((Path(__file__).resolve().parents[1] / "docs" / "algorithms.md").read_text().split())


def _busbw_GBps(size: str, **kw) -> float:
    r = gpunetsim.collective(size_bytes=size, engine="closed", **kw)
    return r.size_bytes / r.time_s * busbw_factor(r.op, r.gpus) / 1e9


def test_the_nvls_plateau_is_the_models():
    m = re.search(r"DGX H100: (\d+) GB/s busbw at 16 MiB, (\d+) at 1 GiB, (\d+) at 16 GiB", ALGORITHMS)
    assert m
    for shown, size in zip(m.groups(), ("16M", "1G", "16G")):
        assert int(shown) == round(_busbw_GBps(size, topology="dgx-h100", algo="nvls")), size


def test_the_unaligned_all_gather_example_is_the_models():
    m = re.search(r"times 16 MiB \(16777216 B\) at ([\d.]+) us and 16 bytes less \(16777200 B: .*?\) at ([\d.]+) us",
                  ALGORITHMS)
    assert m
    for shown, size in zip(m.groups(), (16777216, 16777200)):
        r = gpunetsim.collective(topology="hgx-h200", gpus=4, op="all_gather", size_bytes=size, engine="closed")
        assert shown == f"{r.time_s * 1e6:.1f}"
