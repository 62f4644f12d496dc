"""DDP's runtime-stats sampling holds the host back on the first 10 synchronised iterations
(validation.ddp_logger): which timed iterations are steady, and the committed data showing it."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from validation.ddp_logger import STEADY_WARMUP, held_back, steady_median_s, steady_times_s

DATA = Path(__file__).resolve().parents[1] / "validation" / "data"


def test_which_synchronised_iterations_wait_on_the_gpu():
    # the logger reads the previous iteration's events when that one was sampled (counts 1-10, then 100, 200...)
    assert [j for j in range(1, 15) if held_back(j)] == list(range(2, 12))
    assert held_back(101) and held_back(201) and not held_back(100) and not held_back(150)
    # the DataParallel runner's settings: warmup 3, 10 timed -> the first 8 held back; warmup 5, 15 timed -> 6
    assert steady_times_s(list(range(10)), 3) == [8, 9]
    assert steady_times_s(list(range(15)), 5) == list(range(6, 15))
    assert steady_times_s(list(range(5)), STEADY_WARMUP) == list(range(5))


def test_steady_median_of_a_record():
    r = {"median_s": 0.035, "iter_times_s": [0.04] * 8 + [0.030, 0.032], "warmup": 3}
    assert steady_median_s(r) == pytest.approx(0.031)
    assert steady_median_s({**r, "sync_warmup": STEADY_WARMUP}) == pytest.approx(0.04)   # all steady then
    assert steady_median_s({"median_s": 0.035}) == 0.035                 # no per-iteration times
    # warmup 0: only the first timed iteration (count 1) is steady, counts 2-10 are held back
    assert steady_median_s({**r, "warmup": 0, "iter_times_s": [0.01 * (i + 1) for i in range(10)]}) == pytest.approx(0.01)
    assert steady_median_s({**r, "warmup": 1, "iter_times_s": [0.04] * 3}) == 0.035   # all held back


def test_committed_resnet50_ddp_runs_are_slower_while_held_back():
    """ResNet-50 is GPU-bound on every lent host (its no_sync() steps repeat to 1%): the held-back DDP
    iterations are slower than the steady ones in every launch of every DataParallel campaign."""
    gaps, warmed = [], []
    for path in sorted(DATA.glob("*/dp_world*.jsonl")):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            if r.get("kind") != "ddp" or r["model"] != "resnet50":
                continue
            times = r["iter_times_s"]
            split = steady_times_s(times, r["warmup"])      # as if timed right after the runner's --warmup
            early = [t for t in times[1:] if t not in split]    # the first timed step also pays an idle GPU
            if not (split and early):
                continue
            (warmed if "sync_warmup" in r else gaps).append(statistics.median(early) - statistics.median(split))
    assert len(gaps) >= 15
    assert min(gaps) > 0 and statistics.median(gaps) > 1e-3
    # runs warmed up past the sampling (sync_warmup): the same iterations are no slower (the 2x H200 host's
    # second launch ran them 1.8 ms faster: launch noise, in the other direction)
    assert len(warmed) >= 3 and max(warmed) < 0.3e-3
