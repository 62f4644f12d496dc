"""validation.small_bias: bias or scatter of the < 16 MiB miss per op, size and lease, and NCCL's side of it."""

import pytest

from validation import small_bias as b
from validation.accuracy_latency import nccl_calls, nccl_choices
from validation.parsers import CollMeasurement, Dataset, write_jsonl


@pytest.mark.parametrize("short,total,p", [(9, 10, 22 / 1024), (10, 10, 2 / 1024), (5, 10, 1.0), (0, 8, 2 / 256),
                                           (7, 10, 352 / 1024), (0, 0, 1.0)])
def test_sign_p_is_the_two_sided_binomial_tail(short, total, p):
    assert b.sign_p(short, total) == pytest.approx(p)
    assert b.sign_p(total - short, total) == pytest.approx(p)       # symmetric


@pytest.mark.parametrize("errors,verdict", [([-0.1] * 9 + [0.2], "bias (short)"), ([0.1] * 8, "bias (long)"),
                                            ([-0.1] * 7 + [0.1] * 3, "scatter"), ([-0.3] * 7 + [0.01], "scatter")])
def test_verdict_needs_the_leases_to_agree_beyond_chance(errors, verdict):
    assert b.verdict(errors) == verdict


def test_two_gpu_cell_takes_the_same_op_at_the_nearest_size():
    two = {("all_gather", 64): 0, ("all_gather", 1024): 0, ("all_reduce", 60): 0}
    assert b.two_gpu_cell(("all_gather", 60), two) == ("all_gather", 64)
    assert b.two_gpu_cell(("all_gather", 64), two) == ("all_gather", 64)
    assert b.two_gpu_cell(("all_gather", 100), two) is None        # 64 B is more than 10% away
    assert b.two_gpu_cell(("send_recv", 64), two) is None


@pytest.mark.parametrize("size,label", [(4, "4 B"), (60, "60 B"), (1024, "1 KiB"), (16380, "16380 B"),
                                        (262144, "256 KiB"), (4 << 20, "4 MiB")])
def test_size_label(size, label):
    assert b.size_label(size) == label


def _leases(signs, n=4):
    """Leases with one all_gather 64 B point each: measured 40 us at 2 GPUs and 50 at n, predicted 40 and 40 x (1 +
    sign x 0.1) x 1.1 (growth 4 us short or long)."""
    out = {}
    for i, sign in enumerate(signs):
        p4 = 50e-6 * (1 + sign * 0.1)
        out[f"lease {i}"] = {2: {("all_gather", 64): (40e-6, 40e-6, 0.0)},
                             n: {("all_gather", 60 if n == 3 else 64): (50e-6, p4, p4 / 50e-6 - 1)}}
    return out


def test_table_counts_leases_and_splits_the_growth_from_the_fit():
    rows = b.table(_leases([-1] * 9 + [1]), 4)
    (r,) = rows
    assert (r["op"], r["size_bytes"], r["short"], r["leases"], r["verdict"]) == ("all_gather", 64, 9, 10, "bias (short)")
    assert r["two_gpu_pct"] == pytest.approx(0.0)
    assert r["growth_pct"] == pytest.approx(-10.0)                 # all of it the growth's
    assert r["measured_growth_s"] == pytest.approx(10e-6)
    assert r["predicted_growth_s"] == pytest.approx(5e-6)


def test_table_matches_three_gpus_sizes_and_leaves_out_thin_cells():
    assert b.table(_leases([1] * 6, n=3), 3)[0]["size_bytes"] == 60
    assert b.table(_leases([1] * (b.MIN_LEASES - 1)), 4) == []


def test_size_rows_and_growth_gap_take_each_lease_as_one_draw():
    by = _leases([-1] * 8 + [1] * 2)
    (r,) = b.size_rows(by, 4)
    assert (r["short"], r["leases"], r["verdict"]) == (8, 10, "scatter")       # p 0.11
    gaps = b.growth_gap_s(by, 4)
    assert gaps["lease 0"] == pytest.approx(5e-6)                  # measured +10 us, predicted +5
    assert gaps["lease 9"] == pytest.approx(-5e-6)


def test_channel_check_raises_only_the_logged_cells():
    by = _leases([-1] * 6)
    nccl = [{"op": "all_gather", "size_bytes": 64, "channel_effect_s": {1e-6, 5e-6}}]
    before, after = b.channel_check(by, nccl, 4)["lease 0"]
    assert before == pytest.approx(10.0)
    assert after == pytest.approx(0.0)                             # 45 + 5 us = 50 us measured
    assert b.channel_check(by, [], 4)["lease 0"] == pytest.approx((10.0, 10.0))


def test_fewer_channels_cost_time_only_where_the_channels_ll_rate_binds():
    one = b.channel_effect_s("hgx-h200", 4, "all_reduce", 16384, 1)
    assert one > 0                                                 # one channel: below NCCL's LL ceiling
    assert b.channel_effect_s("hgx-h200", 4, "all_reduce", 16384, 24) == 0.0
    assert b.channel_effect_s("hgx-h200", 4, "all_reduce", 4, 1) < one


def test_nccl_growth_follows_its_step_counts():
    ar, ag, bc = (b.nccl_growth_s("hgx-h200", 4, op, 64) for op in ("all_reduce", "all_gather", "broadcast"))
    assert ar == pytest.approx(2 * ag)                              # 4 more ring steps against 2
    assert bc == pytest.approx(0.0)                                 # one hop at any rank count


LOG = ("vm:1:1 [0] NCCL INFO AllReduce: 262144 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..15}\n"
       "vm:1:1 [0] NCCL INFO AllGather: 16 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n"
       "vm:1:1 [0] NCCL INFO AllReduce: 262144 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..15}\n")


def test_nccl_calls_parse_every_logged_choice(tmp_path):
    (tmp_path / "nccl_w4.vm.1.log").write_text(LOG)
    (tmp_path / "nccl_w2.vm.1.log").write_text(LOG.replace("{0..15}", "{0..21}"))
    calls = nccl_calls(tmp_path)
    assert calls[4][("all_reduce", 262144)] == {("ring", "ll", 16)}
    assert calls[2][("all_reduce", 262144)] == {("ring", "ll", 22)}
    assert calls[4][("all_gather", 16)] == {("ring", "ll", 1)}
    assert 3 not in calls
    assert nccl_choices(tmp_path)[4] == {"algos": {("RING", "LL")}, "channels": {(262144, 16), (16, 1)}}


def test_nccl_rows_compare_the_tuner_with_the_logs(tmp_path):
    (tmp_path / "nccl_w4.vm.1.log").write_text(LOG)
    (tmp_path / "nccl_w2.vm.1.log").write_text(LOG.replace("{0..15}", "{0..21}").replace("16 Bytes", "32 Bytes"))
    rows = {(r["op"], r["size_bytes"]): r for r in b.nccl_rows([("x", tmp_path, "hgx-h200")], 4)}
    assert set(rows) == {("all_reduce", 262144), ("all_gather", 64)}   # all_gather logs a rank's part
    r = rows[("all_reduce", 262144)]
    assert (r["campaigns"], r["tuner_agrees"]) == (1, 1)
    assert r["nccl"] == {((("ring", "ll", 22),), (("ring", "ll", 16),))}


def _point(world, reps, hosts):
    return CollMeasurement("all_reduce", world, 64, sorted(reps)[len(reps) // 2], None, None, rep_times_s=tuple(reps),
                           rank_host_times_s=tuple(tuple(h) for h in hosts))


def test_host_paced_divides_by_the_slowest_ranks_host(tmp_path):
    write_jsonl(Dataset(points=(_point(2, [40e-6, 80e-6, 40e-6], [[40e-6, 40e-6, 40e-6], [20e-6, 40e-6, 30e-6]]),)),
                tmp_path / "lat_world2_L1.jsonl")
    assert b.host_paced(tmp_path) == {2: (pytest.approx(1.0), pytest.approx(1.0), 1)}


def test_check_lines_give_one_line_per_world_size_and_check():
    by = _leases([-1] * 8 + [1] * 2)
    lines = b.check_lines({n: b.size_rows(by, n) for n in (2, 4)}, b.growth_gap_s(by, 4),
                          b.channel_check(by, [], 4), 4)
    assert all(isinstance(x, str) for x in lines)
    text = "\n".join(lines)
    assert "at 2 GPUs: 64 B 0/10 short" in text and "at 4 GPUs: 64 B 8/10 short" in text
    assert "above 0 on 8 of 10 leases" in text
