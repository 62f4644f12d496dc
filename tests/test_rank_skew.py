"""Rank skew of collectives' issue (validation.rank_skew): the order statistic and the readers of profiled steps."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from simulator.core.errors import InputError
from validation.rank_skew import collective_skews, expected_max, lathost_spreads, main, step_hosts


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

