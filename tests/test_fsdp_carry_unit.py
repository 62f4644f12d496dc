"""validation.fsdp_carry_unit: which held-out rows the carry unit moves, and FULL_SHARD's own time on 4 GPUs."""

from __future__ import annotations

import statistics

import pytest

from validation import fsdp_carry_unit as fcu
from validation.llm_real import HOST_KEYS, UNSHARDED_SHARE, HostWork

HOST = HostWork({"fsdp_unit_host_s": 0.6e-3, "fsdp_gather_host_s": 0.3e-3, "host_collective_s": 0.1e-3}, 0.7e-3)


def test_in_unsharded_blocks_scales_only_the_keys_named() -> None:
    one = fcu.in_unsharded_blocks(HOST, ("fsdp_unit_host_s",))
    assert one.values["fsdp_unit_host_s"] == pytest.approx(0.6e-3 / UNSHARDED_SHARE)
    assert one.values["fsdp_gather_host_s"] == HOST.values["fsdp_gather_host_s"]
    assert one.host_block_s == HOST.host_block_s
    every = fcu.in_unsharded_blocks(HOST)
    assert all(every.values[k] == pytest.approx(HOST.values[k] / UNSHARDED_SHARE) for k in HOST_KEYS)


@pytest.mark.parametrize("name", ["carry", "unit on block_host_s only", "unit on fsdp_unit_host_s"])
def test_an_unknown_variant_is_refused(name: str) -> None:
    with pytest.raises(ValueError):
        fcu.variant(HOST, name)


def test_no_fsdp_host_work_is_zero_and_as_now_is_the_same_object() -> None:
    assert fcu.variant(HOST, "as now") is HOST
    assert set(fcu.variant(HOST, "no FSDP host work").values.values()) == {0.0}


@pytest.fixture(scope="module")
def held_out() -> list[fcu.Row]:
    return fcu.held_out_rows()


def test_held_out_lease_is_over_predicted_on_every_row_and_the_carry_unit_adds_to_each(held_out: list) -> None:
    """The sign: every configuration of the held-out 4x H200 lease is predicted slow already (+6.4 to +29.5% on
    main 8f68bca), and carrying the host work in unsharded blocks makes each slower still."""
    assert len(held_out) == 8
    for r in held_out:
        assert r.error_pct("as now") > 0
        assert r.error_pct("carry unit") > r.error_pct("as now") + 1.0
    medians = {w: statistics.median(abs(r.error_pct("carry unit")) for r in held_out if r.world == w) for w in (2, 4)}
    assert medians[2] > 25 and medians[4] > 25         # 30.4 / 28.9 (16.4 / 19.6 as now)


def test_the_unit_key_carries_all_of_no_shards_rise(held_out: list) -> None:
    """``fsdp_gather_host_s`` is charged to gathered units only, so NO_SHARD rises through ``fsdp_unit_host_s`` alone;
    ``host_collective_s`` moves no row by a point."""
    for r in held_out:
        if r.strategy == "no_shard":
            assert r.error_pct("unit on fsdp_gather_host_s only") == pytest.approx(r.error_pct("as now"), abs=1e-9)
            assert r.error_pct("unit on fsdp_unit_host_s only") > r.error_pct("as now") + 1.0
        else:
            assert r.error_pct("unit on fsdp_gather_host_s only") > r.error_pct("as now")
        assert r.error_pct("unit on host_collective_s only") - r.error_pct("as now") < 1.0


def test_the_held_out_4_gpu_median_is_set_by_full_shard_h2048_and_no_shard_h4096(held_out: list) -> None:
    """Why a FULL_SHARD change on 4 GPUs cannot keep this lease within 0.3 points: its two middle rows."""
    four = sorted((r for r in held_out if r.world == 4), key=lambda r: r.error_pct("as now"))
    assert [(r.strategy, r.hidden) for r in four[1:3]] == [("full_shard", 2048), ("no_shard", 4096)]


def test_full_shard_over_no_shard_at_h4096_is_short_on_every_4_gpu_file() -> None:
    """FULL_SHARD's time over NO_SHARD's at hidden 4096 on 4 GPUs: measured 2.3-5.7 ms, predicted -0.7 to +1.4 ms
    (main 8f68bca), the held-out lease included. The thirteenth sealed lease (h200x4_2026-11-28c, opened after this
    was written) holds it on its fsdp4 file (4.75 ms short) but only by 0.73 ms on its paired file: more than 1 ms
    short on all but one of 25 files, more than 0.5 ms on every one."""
    gaps = [g for g in fcu.gap_rows() if g.world == 4 and g.hidden == 4096]
    assert len(gaps) >= 25
    assert all(g.measured_s - g.predicted_s > 0.5e-3 for g in gaps)
    assert sum(g.measured_s - g.predicted_s > 1e-3 for g in gaps) >= len(gaps) - 1
    assert any(g.label.startswith("h200x4_2026-11-26_fsdp") for g in gaps)


def test_both_sides_miss_at_h4096_on_the_sealed_4_gpu_files() -> None:
    """FULL_SHARD h4096 predicted fast and NO_SHARD h4096 slow on 17 of the 18 sealed 4-GPU FSDP-only files (main
    8f68bca), each side's own error beside the gap. With the thirteenth sealed lease (opened after this was written):
    FULL_SHARD fast on 19 of 20, NO_SHARD slow on 18 of 20 (its paired file's NO_SHARD is -4.8%)."""
    sealed = [g for g in fcu.gap_rows() if g.world == 4 and g.hidden == 4096 and g.label.endswith("(sealed)")]
    assert len(sealed) >= 20
    assert sum(g.full_pct < 0 for g in sealed) >= len(sealed) - 1
    assert sum(g.no_pct > 0 for g in sealed) >= len(sealed) - 2


def test_the_command_takes_no_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert fcu.main(["--help"]) == 2
    assert "python -m validation.fsdp_carry_unit" in capsys.readouterr().err


def test_profiled_transfers_cover_both_leases_and_every_collective() -> None:
    """The shortest of the ranks' kernels per collective: both profiled leases, each configuration's collectives,
    and a unit's reduce-scatter never faster than its all-gather by more than the kernels' jitter."""
    rows = fcu.transfer_rows()
    assert {n for _, n, _, _, _, _ in rows} == {2, 4}
    assert {op for *_, op, _, _ in rows} == {"all_gather", "reduce_scatter", "all_reduce"}
    t = {(n, name, op): s for _, n, name, op, _, s in rows}
    for (n, name, op), s in t.items():
        assert 1e-4 < s < 5e-3
        if op == "reduce_scatter":
            assert s > 0.95 * t[(n, name, "all_gather")]


def test_phases_split_a_step_at_the_compute_streams_first_and_last_kernel() -> None:
    """A gather 0-1, kernels 1-3 and 4-5, a reduction 4.5-7: head 1, window 4, drain 2."""
    p = fcu.phases_of([(0.0, 1.0, False), (1.0, 3.0, True), (4.0, 5.0, True), (4.5, 7.0, False)])
    assert (p.head_s, p.window_s, p.tail_s, p.span_s) == (1.0, 4.0, 2.0, 7.0)
    with pytest.raises(ValueError):
        fcu.phases_of([(0.0, 1.0, False)])


@pytest.fixture(scope="module")
def drains() -> list:
    return fcu.drain_rows()


def test_no_shards_4_gpu_over_prediction_at_h4096_is_its_cold_start_drain(drains: list) -> None:
    """The simulated iteration pays the drain (NO_SHARD's root all-reduce after the last kernel), about twice
    FULL_SHARD's; without it NO_SHARD h4096 on 4 GPUs is within 2% (median) and FULL_SHARD falls further short
    (main 13de568: +11.9 / -7.2% -> -1.5 / -14.4%). With the thirteenth sealed lease (opened after this was written,
    its two files -11.3 and -17.9% without the drain): 25 files, +11.3 / -7.5% -> -3.2 / -14.6%."""
    four = {s: [d for d in drains if d.world == 4 and d.strategy == s] for s in ("no_shard", "full_shard")}
    assert len(four["no_shard"]) >= 20 and len(four["full_shard"]) >= 20
    drain = {s: statistics.median(d.drain_s for d in v) for s, v in four.items()}
    assert drain["no_shard"] > 1.5 * drain["full_shard"]
    no_now = statistics.median(d.error_pct() for d in four["no_shard"])
    no_without = statistics.median(d.error_pct(True) for d in four["no_shard"])
    full_without = statistics.median(d.error_pct(True) for d in four["full_shard"])
    assert no_now > 8 and abs(no_without) < 4
    assert full_without < no_without - 8


@pytest.fixture(scope="module")
def phases() -> list:
    return fcu.phase_rows()


def test_a_measured_step_hides_its_drain(phases: list) -> None:
    """In every profiled configuration the unprofiled median step is the profiled step less its drain, within 3 ms,
    though the drains reach 11 ms: the runners time steps back to back."""
    by: dict = {}
    for r in phases:
        by.setdefault((r.world, r.strategy, r.hidden), []).append(r)
    assert len(by) == 10
    for rows in by.values():
        gap = statistics.median(r.unprofiled_s - (r.measured.span_s - r.measured.tail_s) for r in rows)
        assert abs(gap) < 3e-3
    assert max(r.measured.tail_s for r in phases) > 8e-3


def test_full_shards_4_gpu_window_is_short_where_no_shards_is_not(phases: list) -> None:
    """On the 4-GPU profile the compute window (first kernel to last) is simulated 2.7 ms short for FULL_SHARD h4096
    and 0.9 ms for NO_SHARD h4096 (medians): FULL_SHARD's own time is missing there, not in the head or drain."""
    def short(strategy: str) -> float:
        return statistics.median(r.measured.window_s - r.simulated.window_s for r in phases
                                 if r.world == 4 and r.hidden == 4096 and r.strategy == strategy)
    assert short("full_shard") > short("no_shard") + 1e-3
    assert short("no_shard") < 1.5e-3
