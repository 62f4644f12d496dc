"""validation/scripts/a2a_growth_s27.py: NCCL's one-server p2p schedule of an all_to_all (rounds on disjoint channels,
parts of S/32 on 2 and 4 GPUs) and its two-point line (no lease figure is pinned: the script prints them)."""

import pytest

from simulator.collectives.p2p import P2pChannels
from tests.conftest import load_script

MIB = 1 << 20


@pytest.fixture(scope="module")
def script():
    return load_script("a2a_growth_s27")


def nvlink_p2p(ranks: int) -> P2pChannels:
    """An NVSwitch server's p2p channels as NCCL 2.28 prints them: 32 in all, 32 a peer, 32 / ranks to start."""
    return P2pChannels(32, 32, 32 // ranks, 64 * 1024, 16 * MIB, 1.0 / ranks)


@pytest.mark.parametrize("x, bits, want", [(0, 5, 0), (1, 5, 16), (2, 5, 8), (3, 5, 24), (7, 5, 28), (1, 3, 4),
                                           (0, 0, 0)])
def test_bit_reverse(script, x, bits, want):
    assert script.bit_reverse(x, bits) == want


def test_a_round_strides_its_parts_over_the_channels(script):
    assert script.round_channels(1, 8, 32) == (1, 17, 9, 25, 5, 21, 13, 29)


@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("size", [16 * MIB, 64 * MIB, 256 * MIB])
def test_rounds_take_disjoint_channels_and_parts_of_s_over_32(script, ranks, size):
    r = script.schedule(nvlink_p2p(ranks), ranks, size)
    assert (r.channels, r.ctas, r.overlapping) == (32 // ranks, 32, False)
    assert r.part_bytes == size / 32
    assert r.chunks == size / (16 * MIB)


def test_at_1_gib_on_4_gpus_the_rounds_share_channels(script):
    # a peer's 256 MiB over 8 channels would be 32 MiB parts, above 32 chunks: NCCL doubles to 16 a peer
    r = script.schedule(nvlink_p2p(4), 4, 1024 * MIB)
    assert (r.channels, r.ctas, r.overlapping) == (16, 32, True)


def test_line_through_64_and_256_mib(script):
    # 4 and 16 chunks: 10 us + 30 us a chunk gives 130 and 490 us
    step, fixed = script.line(130e-6, 490e-6)
    assert step == pytest.approx(30e-6)
    assert fixed == pytest.approx(10e-6)


def row(size: int, time_s: float, predicted_s: float, op: str = "all_to_all"):
    """A scored point (validation.transfer.Scored's fields the script reads)."""
    from types import SimpleNamespace
    point = SimpleNamespace(op=op, size_bytes=size, variant="default", time_s=time_s)
    return SimpleNamespace(pooled=SimpleNamespace(point=point), comparison=SimpleNamespace(predicted_s=predicted_s),
                           error=predicted_s / time_s - 1)


def test_bound_clears_only_the_all_to_all_points_it_names(script):
    rows = [row(16 * MIB, 1.0, 0.8), row(64 * MIB, 1.0, 0.9), row(64 * MIB, 1.0, 1.05, op="all_reduce"),
            row(8 * MIB, 1.0, 1.5)]                          # 8 MiB: below the target's sizes
    model, above16, exact = script.bound_p90s(rows)
    assert model == pytest.approx(18.0)       # 90th percentile of 20, 10, 5 %
    assert above16 == pytest.approx(17.0)     # 20, 0, 5: the 16 MiB point stays
    assert exact == pytest.approx(4.0)        # 0, 0, 5


def test_trial_moves_only_the_all_to_all_points_from_its_size_on(script):
    rows = [row(16 * MIB, 100e-6, 90e-6), row(1 * MIB, 50e-6, 50e-6), row(16 * MIB, 100e-6, 110e-6, op="all_reduce")]
    # 10 us later (+0 a chunk) from 16 MiB on: the 16 MiB all_to_all becomes exact, 1 MiB and all_reduce stay
    p90, med, a2a_big, a2a_small = script.trial_figures(rows, 10e-6, 0.0, min_bytes=16 * MIB)
    assert (a2a_big, a2a_small) == (pytest.approx(0.0), pytest.approx(0.0))
    assert med == pytest.approx(5.0)           # median of 0 and 10 %
    # at every size the 1 MiB point is 10 us (20%) late too
    assert script.trial_figures(rows, 10e-6)[3] == pytest.approx(20.0)
    assert script.trial_figures(rows)[2] == pytest.approx(10.0)


def test_design_residual_is_the_line_through_the_big_all_to_all_residuals(script):
    # residuals 12 and 18 us at 4 and 16 chunks: 10 us + 0.5 us a chunk; 16 MiB and all_reduce points left out
    rows = [row(64 * MIB, 112e-6, 100e-6), row(256 * MIB, 418e-6, 400e-6), row(16 * MIB, 200e-6, 50e-6),
            row(64 * MIB, 500e-6, 100e-6, op="all_reduce")]
    fixed, step = script.design_residual(rows)
    assert fixed == pytest.approx(10e-6)
    assert step == pytest.approx(0.5e-6)
