"""validation.bw_signs: the >= 16 MiB 2 -> 4 GPU residuals' signs over the leases, and each prediction's parts."""

from types import SimpleNamespace

import pytest

from simulator.collectives.params import Parameters
from validation import bw_signs as s
from validation.accuracy import TOPO
from validation.compare import Predictor

MIB = 1 << 20


@pytest.mark.parametrize("op, n, steps", [("all_reduce", 4, 6), ("all_reduce", 2, 2), ("all_gather", 4, 3)])
def test_parts_add_up_to_the_closed_form_and_count_nccls_ring_steps(op, n, steps):
    model = Predictor(TOPO, Parameters()).model(n, None)
    p = s.parts(model, op, 64 * MIB, "ring", "simple")
    assert p.gpu_s + p.overlap_s == pytest.approx(model.shape(op, "ring", "simple").time_s(64 * MIB))
    params = model.params
    assert p.hops_s == pytest.approx(steps * params.hop_latency_s("nvlink", "ring", "simple"))
    assert p.base_s == pytest.approx(params.base_latency_s("ring", "simple"))     # datasheet: no call overhead
    assert p.unaligned_s == 0 and p.fill_s == 0


def test_unaligned_shares_are_a_part_of_their_own():
    model = Predictor(TOPO, Parameters()).model(4, None)
    size = 16 * MIB + 4 * 12                  # a rank's share of 4: 12 mod 16 bytes
    p = s.parts(model, "all_gather", size, "ring", "simple")
    assert p.unaligned_s > 0
    assert p.gpu_s + p.overlap_s == pytest.approx(model.shape("all_gather", "ring", "simple").time_s(size))


@pytest.mark.parametrize("errors, fast, verdict", [
    ((5.0, -8.0, 12.0), (12.0, 14.0, 16.0), "model bias"),       # one sign on every lease's fast level
    ((5.0, -8.0, 12.0), (1.0, 14.0, 16.0), "lease"),             # one lease's fast level within noise
    ((-5.0, -8.0), (-1.0, -9.0), "-"),
    ((9.0,), (9.0,), "one lease: off"),
])
def test_verdict_needs_one_sign_on_every_lease(errors, fast, verdict):
    assert s.SignRow("all_reduce", "default", 16 * MIB, errors, fast).verdict == verdict


def _parts(total):
    return s.Parts(0.0, 0.0, 0.0, total, 0.0, 0.0, 0.0, total)


def _row(op, mib, fast2, fast4, pred2, pred4):
    return s.PartRow(op, "default", mib * MIB, ("ring/simple", "ring/simple"), _parts(pred2), _parts(pred4),
                     fast2, fast4)


def test_line_rows_extend_the_64_256_mib_line_to_0_and_to_16_mib():
    # fast levels on 2 GPUs: 10 + 1 per MiB at 64 and 256, 20 at 16 (6 below the line's 26); on 4: 12 + 2 per MiB
    rows = [_row("all_reduce", 16, 20.0, 40.0, 0.0, 0.0), _row("all_reduce", 64, 74.0, 140.0, 70.0, 150.0),
            _row("all_reduce", 256, 266.0, 524.0, 262.0, 534.0), _row("send_recv", 64, 1, 1, 1, 1)]
    (line,) = s.line_rows(rows)                # send_recv and ops without every size have no line
    assert line.intercept_s == pytest.approx((10.0, 12.0))
    assert line.intercept_predicted_s == pytest.approx((6.0, 22.0))
    assert line.below_16_s == pytest.approx((6.0, 4.0))


def test_committed_all_reduce_intercept_does_not_grow_with_the_ranks_where_the_model_adds_four_hops():
    """Section 3's pooled campaigns: the 64-256 MiB line of all_reduce meets 0 at the same time on 2 and 4 GPUs
    (within 3 us), while the 2-GPU calibration's 4-GPU prediction adds 4 ring steps' latency (13.6 us)."""
    from validation import rank_model_error
    from validation.accuracy import H200
    pooled = rank_model_error.pooled(H200)
    predictor = rank_model_error.predictor(H200).with_params(rank_model_error.two_gpu_fit(H200).params)
    (line,) = [r for r in s.line_rows(s.part_rows(pooled, predictor)) if r.op == "all_reduce"]
    assert abs(line.intercept_s[1] - line.intercept_s[0]) < 3e-6
    assert line.intercept_predicted_s[1] - line.intercept_predicted_s[0] == pytest.approx(13.6e-6, abs=0.2e-6)
    assert line.below_16_s[0] > 10e-6 and line.below_16_s[1] > 10e-6


def test_sign_rows_group_the_leases_points():
    r = SimpleNamespace(op="all_to_all", variant="default", size_bytes=64 * MIB, error=-0.1, error_fast=-0.05)
    (row,) = s.sign_rows({"a": [r], "b": [r]})
    assert row.errors == pytest.approx((-10.0, -10.0)) and row.verdict == "model bias"


@pytest.mark.parametrize("mib, world, buffer_mib, loops, chunk", [
    (16, 2, 4, 1, -(-(-(-16 * MIB // 24)) // 2)),      # one partial loop: the channel's bytes over the ranks
    (64, 4, 4, 1, -(-(-(-64 * MIB // 24)) // 4)),
    (256, 2, 4, 3, -(-(-(-256 * MIB // 24) - 2 * 4 * MIB) // 2)),   # 2 full loops of 2 x 2 MiB, then the rest
    (256, 2, 16, 1, -(-(-(-256 * MIB // 24)) // 2)),                 # a 16 MiB buffer: 8 MiB chunks, one loop
    (96 * 24, 2, 4, 24, 2 * MIB),                  # whole loops end on a full chunk
])
def test_ring_loops_follow_nccls_chunking(mib, world, buffer_mib, loops, chunk):
    assert s.ring_loops(mib * MIB, world, buffer_mib * MIB) == (loops, chunk)


def test_probe_rows_measure_the_16_mib_point_against_the_big_line():
    line = {m * MIB: 20e-6 + m * 3e-6 for m in (4, 8, 16, 64, 128, 256)}      # one straight line: on it
    bent = {**line, **{m * MIB: 40e-6 + m * 3e-6 for m in (64, 128, 256)}}  # the big sizes 20 us higher
    rows = s.probe_rows({"p": {("default", "all_reduce", 2): line, ("buf1", "all_reduce", 2): bent}},
                        {("p", "default"): 4 * MIB, ("p", "buf1"): MIB})
    by = {r.variant: r for r in rows}
    assert by["default"].below_us == pytest.approx(0, abs=1e-6)
    assert by["buf1"].below_us == pytest.approx(20)
    assert by["buf1"].small.intercept_s == pytest.approx(20e-6)
    assert "| 1 |" in s.probe_lines(rows)[2]       # the buffer in MiB
