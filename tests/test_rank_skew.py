"""Rank skew of collectives' issue (validation.rank_skew): the order statistic and the readers of profiled steps."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from simulator.core.errors import InputError
from validation.rank_skew import (collective_skews, expected_max, lathost_spreads, main, rank_windows, rms, step_hosts,
                                  step_windows)


@pytest.mark.parametrize("n, value", [(1, 0.0), (2, 1 / math.sqrt(math.pi)), (3, 1.5 / math.sqrt(math.pi))])
def test_expected_max_hand_values(n: int, value: float) -> None:
    assert expected_max(n) == pytest.approx(value, abs=1e-4)


def test_expected_max_grows_slower_than_the_ranks() -> None:
    e = [expected_max(n) for n in (2, 4, 8, 16)]
    assert all(b > a for a, b in zip(e, e[1:]))
    assert all(b - a < a for a, b in zip(e, e[1:]))


def test_expected_max_refuses_no_ranks() -> None:
    with pytest.raises(InputError, match="ranks"):
        expected_max(0)


def _profiled(timelines: list[dict[str, Any]]) -> Any:
    return SimpleNamespace(record={"point": "fsdp full_shard replicate=1 mb=1 hidden=2048,layers=8",
                                   "launch_index": 0, "timeline": timelines})


def test_arrival_spread_is_the_mean_wait_for_the_last_rank() -> None:
    # rank 0 arrives 0.8 ms before rank 1 (clocks 5 ms apart): both end together, rank 0's kernel waits
    r0 = {"events": [[7, "gemm", 0.0, 1e-3, 0.0], [9, "all_gather", 1.0e-3, 1.0e-3, 0.9e-3]]}
    r1 = {"events": [[7, "gemm", 0.0, 1e-3, 0.0], [9, "all_gather", 6.8e-3, 0.2e-3, 6.7e-3]]}
    (s,) = collective_skews(_profiled([r0, r1]))
    assert s.ranks == 2 and s.op == "all_gather"
    assert s.arrival_s == pytest.approx(0.4e-3)
    assert s.issue_s == pytest.approx(0.4e-3)            # launches 0.8 ms apart on the aligned clocks


def test_ranks_with_different_collective_counts_give_nothing() -> None:
    r0 = {"events": [[9, "all_gather", 0.0, 1e-3, 0.0]]}
    r1 = {"events": [[9, "all_gather", 0.0, 1e-3, 0.0], [9, "all_gather", 2e-3, 1e-3, 2e-3]]}
    assert collective_skews(_profiled([r0, r1])) == []


def test_step_hosts_leave_out_blocking_waits() -> None:
    t = {"events": [], "wall_s": 0.040, "runtime_calls": {"cudaDeviceSynchronize": [2, 0.005],
                                                          "cudaEventSynchronize": [17, 0.003],
                                                          "cudaLaunchKernel": [200, 0.002]}}
    busy, wall = step_hosts(_profiled([t, dict(t, wall_s=0.041)]))
    assert busy == pytest.approx([0.032, 0.033])
    assert wall == pytest.approx(0.041)
    assert step_hosts(_profiled([{"events": [], "wall_s": 0.04}])) is None


def test_lathost_spread_is_the_slowest_rank_over_the_mean(tmp_path: Path) -> None:
    rec = {"kind": "coll", "op": "all_reduce", "world": 2, "bytes": 4, "dtype": "float32", "time_s": 50e-6,
           "rep_times_s": [40e-6, 50e-6], "rank_host_times_s": [[10e-6, 20e-6], [30e-6, 20e-6]]}
    (tmp_path / "lat_world2_L1.jsonl").write_text(json.dumps({"kind": "meta"}) + "\n" + json.dumps(rec) + "\n")
    assert lathost_spreads(tmp_path)[2] == pytest.approx([0.5, 0.0])


def test_report_runs_on_the_committed_profiles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "4 ranks over 2" in out and "h200x4_2026-11-27_fsdpprof4" in out and "Tried, not kept" in out



def _rank(launches: list[float], collective: str = "all_gather") -> dict[str, Any]:
    """A rank's profiled step holding its collectives' launches and one GEMM (which the windows must ignore)."""
    return {"events": [[7, "gemm", 0.0, 1e-3, 0.0]] + [[20, collective, t, 1e-4, t] for t in launches]}


def test_rank_windows_take_each_ranks_host_between_its_collective_launches() -> None:
    """Windows of 2 then 4 ms (rank 0) and 3 then 3 ms (rank 1, its clock 50 ms on): spreads sqrt(2)/3 and 0, the
    slowest rank's excess over the mean 1 ms then 0, mean window 3 ms."""
    w = rank_windows([_rank([0.0, 2e-3, 5e-3]), _rank([50e-3, 54e-3, 57e-3])], "all_gather")
    assert w is not None and w.ranks == 2
    assert w.spread == pytest.approx((math.sqrt(2) / 3, 0.0))
    assert w.excess_s == pytest.approx(1e-3) and w.mean_s == pytest.approx(3e-3)
    assert rank_windows([_rank([0.0, 2e-3, 5e-3]), _rank([0.0, 2e-3])], "all_gather") is None    # counts differ
    assert rank_windows([_rank([0.0, 2e-3, 5e-3])], "all_gather") is None                      # one rank
    assert rank_windows([_rank([0.0, 2e-3]), _rank([0.0, 2e-3])], "all_reduce") is None       # no all-reduce


def test_full_shard_hosts_move_together_on_two_gpus_and_apart_on_four() -> None:
    """The committed profiles, as the module docstring records them: NO_SHARD's free-running hosts spread alike on
    2 and 4 GPUs (RMS 0.165 pooled on 2); FULL_SHARD h2048's slowest rank's summed excess per step is below 4 ms in
    most 2-GPU steps and above it in every 4-GPU one."""
    w = step_windows()
    no_shard = {n: rms([x for (k, name), ws in w.items() if k == n and name.startswith("NO_SHARD")
                        for s in ws for x in s.spread]) for n in (2, 4)}
    full2, full4 = ([s.excess_s for s in w[(n, "FULL_SHARD h2048")]] for n in (2, 4))
    assert no_shard[2] == pytest.approx(0.165, abs=0.005) and abs(no_shard[4] / no_shard[2] - 1) < 0.15
    assert min(full4) > 4e-3 > sorted(full2)[len(full2) // 2]


def test_rate_limited_hosts_lose_the_max_of_their_walks_not_a_max_per_window() -> None:
    """No spread, no loss; one rank, no loss; with spread the loss grows with the ranks but stays well below the
    per-window maximum (windows x window x cv x e(n)) while the GPU side is shorter than a window."""
    import numpy as np
    from validation.rank_skew import limiter_extension

    rng = np.random.default_rng(0)
    assert limiter_extension(4, 16, 2.4e-3, 0.0, 1e-3, 10, rng) == pytest.approx(0.0, abs=1e-12)
    assert limiter_extension(1, 16, 2.4e-3, 0.165, 1e-3, 4000, rng) == pytest.approx(0.0, abs=5e-5)
    two, four = (limiter_extension(n, 16, 2.4e-3, 0.165, 1e-3, 4000, rng) for n in (2, 4))
    assert 0 < two < four < 0.5 * 16 * 2.4e-3 * 0.165 * expected_max(4)


def test_pace_spread_splits_a_kept_pace_from_the_window_spread() -> None:
    """Two ranks, one 10% slower in every window: all of it is a pace kept for the step, none window to window; the
    same deviations alternating window by window: none kept. The committed 2-GPU NO_SHARD profiles give the spreads
    the h14fsdp26 trial used (0.132 kept, 0.084 window to window)."""
    from validation.rank_skew import RankWindows, free_paces, pace_spread

    kept = RankWindows(2, (), 0.0, 1.0, ((0.05,) * 8, (-0.05,) * 8))
    s = pace_spread([kept])
    assert s.unit_cv == pytest.approx(0.0, abs=1e-12) and s.step_cv == pytest.approx(0.05 * 2 ** 0.5)
    alternating = RankWindows(2, (), 0.0, 1.0, ((0.05, -0.05) * 4, (-0.05, 0.05) * 4))
    s = pace_spread([alternating])
    assert s.step_cv == 0.0 and s.unit_cv > 0.05
    two = free_paces()
    assert (round(two.step_cv, 3), round(two.unit_cv, 3), two.steps) == (0.132, 0.084, 18)
