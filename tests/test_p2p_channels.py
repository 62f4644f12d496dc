"""NCCL's p2p channels (simulator.collectives.p2p) in the timed model: counts, engines, calibration."""

import math

import pytest

import topologies
from simulator.collectives.p2p import P2pChannels, p2p_channels, port_limited_Bps
from simulator.collectives.params import Parameters
from simulator.collectives.planner import Planner
from simulator.core.vocabulary import Limit
from simulator.network.closed_form import ClosedFormTimer, CostModel
from simulator.network.engine import DesTimer
from topologies.routing import router_for

MiB = 1 << 20


def _router(preset="hgx-h200", gpus=4, nodes=1):
    return router_for(topologies.prepare(preset, nodes=nodes, gpus_per_node=gpus))


@pytest.mark.parametrize("gpus, first", [(2, 16), (4, 8), (8, 4)])
def test_the_communicator_shares_its_32_p2p_channels_among_its_ranks(gpus, first):
    """NCCL 2.28 on an NVSwitch board prints 24 coll channels, 32 p2p channels, 32 per peer (both on
    2 and 4 ranks: validation/data/h100x4_2026-11-26_p2p/nccl_info_rank0.txt)."""
    r = _router(gpus=gpus)
    ch = p2p_channels(r, r.gpus)
    assert (ch.total, ch.per_peer, ch.first) == (32, 32, first)
    assert (ch.min_part_bytes, ch.max_part_bytes) == (64 * 1024, 16 * MiB)


@pytest.mark.parametrize("gpus, steps", [
    (2, {16: 16, 128: 16, 256: 16, 512: 32, 1024: 32}),
    (4, {16: 8, 128: 8, 192: 16, 256: 16, 512: 32}),       # the measured jump between 128 and 192 MiB
])
def test_channels_double_when_a_part_would_exceed_32_chunks(gpus, steps):
    r = _router(gpus=gpus)
    ch = p2p_channels(r, r.gpus)
    assert {m: ch.count(m * MiB) for m in steps} == steps


def test_small_calls_use_fewer_channels_and_never_none():
    ch = P2pChannels(32, 32, 8, 64 * 1024, 16 * MiB)
    assert ch.count(0) == 1 and ch.count(100) == 1 and ch.count(3 * 64 * 1024) == 3 and ch.count(MiB) == 8
    assert P2pChannels(32, 32, 8, 64 * 1024, 16 * MiB, peer_share=0.25).count(4 * MiB) == 8


def test_a_smaller_chunk_moves_the_doubling_down():
    """NCCL_P2P_NVL_CHUNKSIZE=128K moved the measured jump from 192 MiB down to 64 MiB."""
    ch = P2pChannels(32, 32, 8, 128 * 1024 // 8, 128 * 1024 * 32)
    assert [ch.count(m * MiB) for m in (32, 64, 128)] == [8, 16, 32]


def test_across_servers_each_peer_gets_few_channels():
    r = _router("dgx-h100", gpus=8, nodes=2)
    ch = p2p_channels(r, r.gpus)
    assert ch.per_peer == 2 and ch.max_part_bytes == 128 * 1024


@pytest.mark.parametrize("op", ["send_recv", "all_to_all"])
@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_closed_form_and_engine_agree_at_every_channel_count(op, gpus):
    r = _router(gpus=gpus)
    p = Parameters()
    plan = Planner(r, p).plan(op, "direct", "simple")
    cf, des = ClosedFormTimer(r, p), DesTimer(r, p)
    for size in (64 * 1024, MiB, 16 * MiB, 128 * MiB, 192 * MiB, 512 * MiB, 1 << 30):
        a, b = cf.time(plan, size), des.time(plan, size)
        assert a == pytest.approx(b, rel=1e-3), (size, a, b)


def test_four_gpus_move_a_64_mib_send_recv_at_their_channels_rate_against_the_port():
    """8 channels (4 GPUs) sit well below the port, 16 (2 GPUs) near it: more than half the 2-GPU rate."""
    p = Parameters().replace(call_overhead_s=0.0)
    bw = {}
    for gpus in (2, 4):
        m = CostModel(_router(gpus=gpus), p)
        s = m.shape("send_recv", "direct", "simple").sized(64 * MiB)
        bw[gpus] = 1.0 / s.beta_s_per_byte
        assert m.limit("send_recv", 64 * MiB) is Limit.CHANNELS
        port = m.planner.plan("send_recv", "direct", "simple").groups[0].port_Bps
        assert bw[gpus] == pytest.approx(port_limited_Bps(32 // gpus * p["p2p_channel_Bps"], port), rel=1e-6)
    assert bw[2] / 2 < bw[4] < bw[2]
    big = CostModel(_router(gpus=4), p)
    assert big.limit("send_recv", 1 << 30) is Limit.CHANNELS     # 32 channels round off at the port too


def test_the_port_rounds_off_below_both_limits():
    assert port_limited_Bps(100.0, math.inf) == 100.0 and port_limited_Bps(math.inf, 50.0) == 50.0
    assert port_limited_Bps(100.0, 100.0) == pytest.approx(100.0 / 2 ** 0.25)
    for a, b in ((10.0, 1000.0), (300.0, 375.0), (700.0, 375.0)):
        r = port_limited_Bps(a, b)
        assert r < min(a, b) and r == pytest.approx(port_limited_Bps(b, a))
    assert port_limited_Bps(10.0, 1000.0) == pytest.approx(10.0, rel=1e-6)


def test_the_h100_probe_rates_at_8_16_and_32_channels():
    """The default channel rate against the default NVLink port reproduces the probe's send/recv slopes
    (validation/data/h100x4_2026-11-26_p2p) at all three channel counts within 6%; a hard minimum with
    one channel rate cannot: 16 channels carry 1.86 times what 8 do, not 2."""
    from validation.parsers import read_jsonl
    d = "validation/data/h100x4_2026-11-26_p2p/"

    def slope_Bps(world, variant, lo, hi):
        t = {p.size_bytes: p.time_s for p in read_jsonl(f"{d}sendrecv_world{world}.jsonl").points
             if p.variant == variant}
        return (hi - lo) * MiB / (t[hi * MiB] - t[lo * MiB])

    measured = {8: slope_Bps(4, "default", 32, 128), 16: slope_Bps(2, "default", 64, 256),
                32: slope_Bps(4, "default_chunk128K", 192, 512)}
    p = Parameters()
    for ch, gpus, size in ((8, 4, 64 * MiB), (16, 2, 128 * MiB), (32, 2, 1 << 30)):
        s = CostModel(router_for(topologies.prepare("dgx-h100", gpus_per_node=gpus)), p) \
            .shape("send_recv", "direct", "simple").sized(size)
        assert s.channels == ch
        assert 1.0 / s.beta_s_per_byte == pytest.approx(measured[ch], rel=0.06), ch
    assert measured[16] / measured[8] < 1.9


def test_collectives_other_than_p2p_have_no_channel_ceiling():
    m = CostModel(_router(gpus=4), Parameters())
    plan = m.planner.plan("all_reduce", "ring", "simple")
    assert plan.p2p is None and plan.channels_at(MiB) is None
    assert m.shape("all_reduce", "ring", "simple").sized(MiB) is m.shape("all_reduce", "ring", "simple")


def test_a_2_gpu_send_recv_sweep_determines_the_channel_rate():
    """16-256 MiB are channel-bound on 2 GPUs, 512 MiB+ link-bound: the fit tells the two apart."""
    from validation.calibrate import calibrate
    from validation.compare import Predictor, Topo
    from validation.parsers import CollMeasurement
    truth = Parameters().replace(p2p_channel_Bps=15e9, link_efficiency__nvlink=0.75, call_overhead_s=30e-6)
    pred = Predictor(Topo("hgx-h200", 1, 2), truth)
    pts = []
    for m in (16, 32, 64, 128, 256, 512, 1024):
        p = CollMeasurement(op="send_recv", world=2, size_bytes=m * MiB, dtype="float32", time_s=1.0,
                            algbw_GBps=0.0, busbw_GBps=0.0)
        pts.append(CollMeasurement(op="send_recv", world=2, size_bytes=m * MiB, dtype="float32",
                                   time_s=pred.predict(p).predicted_s, algbw_GBps=0.0, busbw_GBps=0.0))
    fit = calibrate(pts, Predictor(Topo("hgx-h200", 1, 2), Parameters()),
                    keys=["p2p_channel_Bps", "link_efficiency.nvlink", "call_overhead_s"])
    assert fit.params["p2p_channel_Bps"] == pytest.approx(15e9, rel=0.02)
    assert fit.params["link_efficiency.nvlink"] == pytest.approx(0.75, rel=0.02)
