"""validation/scripts/p90_misses_s27.py: its readers of NCCL's logged choices and its hindsight bound (no model figure
is pinned: the script prints them)."""

import pytest

from tests.conftest import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("p90_misses_s27")


@pytest.mark.parametrize("gpu, world, op", [("H200", 4, "all_reduce"), ("H200", 2, "all_reduce"),
                                            ("H200", 4, "all_gather"), ("H200", 4, "reduce_scatter"),
                                            ("H100", 4, "all_reduce"), ("H100", 2, "all_gather")])
def test_nccl_runs_ring_simple_on_24_channels_at_16_mib(script, gpu, world, op):
    assert script.nccl_choices(gpu, world)[(op, 16 << 20)] == {"ring/simple/24ch"}


def test_nccl_choices_leave_the_nop2p_launch_out(script):
    # the H100 probe's 2-GPU nop2p launch ran all_reduce 16 MiB on 4 channels (NCCL_P2P_DISABLE=1)
    assert script.nccl_choices("H100", 2)[("all_reduce", 16 << 20)] == {"ring/simple/24ch"}


def test_nccl_choices_start_at_16_mib(script):
    # all_reduce 8 MiB on 4 GPUs runs LL128 (the probes' one other choice); the reader keeps >= 16 MiB only
    assert min(size for _, size in script.nccl_choices("H200", 4)) == 16 << 20


@pytest.mark.parametrize("excess, left", [([0.0, 0.02, 0.05], 0), ([0.0, 0.3], 1), ([0.0, 0.01, 0.3, 0.31], 2),
                                          ([0.0, 0.1, 0.2], 1)])
def test_best_constant_leaves_the_fewest_medians_beyond_8_percent(script, excess, left):
    c, got = script.best_constant(excess)
    assert got == left
    assert sum(abs(c / (1 + e) - 1) > 0.08 for e in excess) == left


def test_prior_refuses_an_unknown_parameter(script):
    with pytest.raises(SystemExit, match="not a parameter: hop_latency_s.nvlink.ring.simpel"):
        script.set_priors({"hop_latency_s.nvlink.ring.simpel": 1e-6})
