"""What carries a TP loop's per-call host cost of a collective between hosts (validation.tp_host_path), on the
committed TP issue probes: the figures of docs/accuracy.md section 7, pinned so that a change shows."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.core.errors import InputError
from validation.tp_host_path import (CARRIERS, HostPathReport, LoopPoint, in_loop_call_s, main, markdown_lines,
                                     report)


@pytest.fixture(scope="module")
def rep() -> HostPathReport:
    return report()


def test_in_loop_call_cost_from_the_points_without_sequence_parallelism() -> None:
    def point(spec: str, sp: bool, comm: bool, host_ms: float) -> LoopPoint:
        return LoopPoint(spec, 4, 2, sp, comm, 1.0, host_ms * 1e-3, 0.5)

    points = [point("a", False, False, 8.0), point("a", False, True, 11.2),      # 3.2 ms over 16 calls
              point("b", False, False, 9.0), point("b", False, True, 13.0),      # 4.0 ms over 16 calls
              point("a", True, False, 1.0), point("a", True, True, 99.0)]       # SP: stand-ins are copies, not used
    assert in_loop_call_s(points) == pytest.approx((200e-6 + 250e-6) / 2)
    with pytest.raises(InputError, match="sequence parallelism off"):
        in_loop_call_s([p for p in points if p.sp], "x")


def test_each_host_pays_several_times_its_standalone_call_in_the_loop(rep: HostPathReport) -> None:
    assert len(rep.hosts) == 5
    for h in rep.hosts:
        assert 2.0 < h.call_s / h.standalone_s < 4.5          # recorded 3.69, 3.64, 2.55, 3.92, 3.77
        assert 0.15 < h.call_s / h.block_s < 0.4              # recorded 0.331, 0.211, 0.211, 0.322, 0.260
    for carrier in CARRIERS:                                 # one ratio on every host would carry it; none does
        ratios = [h.call_s / h.carrier(carrier) for h in rep.hosts]
        assert max(ratios) / min(ratios) > 1.3                # recorded 1.54 (standalone), 1.57 (block)


def test_no_carrier_meets_the_target_on_every_held_out_campaign(rep: HostPathReport) -> None:
    # [20.0, 11.6, 8.7, 4.0, 6.9] while the 4x H200 campaign's host work was fitted with its disturbed profile launch
    # (validation.profile_launches); [17.2, 11.9, 8.7, 6.0, 4.6], standalone [8.6, 11.7, 13.8, 7.9, 5.2] and block
    # [14.2, 18.5, 8.2, 8.6, 6.6] before the TP blocks' own host term and the host's run-ahead (stop 16)
    assert [round(x, 1) for x in rep.shipped] == pytest.approx([8.3, 12.2, 4.7, 11.4, 3.4], abs=0.5)
    loo = {c: [e for _, e in rep.loo[c]] for c in CARRIERS}
    assert loo["standalone"] == pytest.approx([6.0, 11.7, 13.5, 10.4, 3.1], abs=0.5)
    assert loo["block"] == pytest.approx([10.2, 14.6, 8.1, 11.0, 4.4], abs=0.5)
    for carrier in CARRIERS:
        assert max(loo[carrier]) > 8
        ms = [m for m, _ in rep.loo[carrier]]
        assert max(ms) / min(ms) < 1.3                        # m fitted on three hosts is alike on any three


def test_the_floor_from_each_loops_own_host_issue(rep: HostPathReport) -> None:
    """Each loop from its own host issue and GPU time: within 8% on the 2-GPU hosts, not on 4x H100, whose loops
    with collectives outlast both."""
    pct = {h.folder: e for h, (_, e) in zip(rep.hosts, rep.floor)}
    assert pct["h100x4_2026-11-26_tp"] > 8 > max(v for k, v in pct.items() if k != "h100x4_2026-11-26_tp")
    assert all(0.85 < r < 1.0 for r, _ in rep.floor)      # loops a little under the held issue time: 0.93-0.94
    worst = max(loop / max(host, gpu) for h in rep.hosts for loop, host, gpu in h.loops)
    assert worst > 1.2                                       # 1.25: h2048 TP 4 with SP on 4x H100


def test_markdown_and_command(rep: HostPathReport, capsys: Any) -> None:
    text = "\n".join(markdown_lines(rep))
    assert text.count("| h100x") == 6 and text.count("| h200x2_2026-11-26_tp |") == 2
    assert text.count("| h200x4_2026-11-26_tp |") == 2
    assert "none is within 8% on every held-out campaign" in text and "The floor itself is above 8% on h100x4" in text
    assert "within 30% on every held-out campaign: as shipped" in "\n".join(markdown_lines(rep, target_pct=30.0))
    assert main([]) == 0
    assert capsys.readouterr().out.strip() == text.strip()
