"""NCCL's p2p path picks its protocol by a rule, not a tuner: LL while each peer's bytes fit in
(p2p channels per peer) x 16 KiB (NCCL_P2P_LL_THRESHOLD), Simple above, never LL128; Simple across servers
(network p2p connections have no LL buffers by default). NCCL 2.28's src/enqueue.cc (addP2pToPlan /
scheduleP2pTasksToPlan); the channels per peer come from the topology (src/graph/paths.cc): 32 on an NVSwitch
server, as NCCL 2.28.9 prints in validation/data/*_lat/nccl_w*.log."""

import pytest

import topologies
from simulator.collectives.p2p import P2pChannels
from simulator.collectives.planner import Planner
from simulator.network.closed_form import CostModel
from topologies.routing import router_for

KiB, MiB = 1 << 10, 1 << 20
SIZES = [2 ** e for e in range(8, 31)]


def _model(preset="hgx-h200", gpus=4, nodes=1, select="nccl"):
    return CostModel(Planner(router_for(topologies.prepare(preset, nodes=nodes, gpus_per_node=gpus))), select=select)


def test_ll_up_to_16_kib_per_channel_of_a_peer_then_simple():
    ch = P2pChannels(32, 32, 8, 64 * KiB, 16 * MiB)
    assert ch.protocol(16 * KiB) == "ll" and ch.protocol(512 * KiB) == "ll"
    assert ch.protocol(512 * KiB + 1) == "simple" and ch.protocol(MiB) == "simple"
    assert P2pChannels(32, 32, 8, 64 * KiB, 16 * MiB, peer_share=0.25).protocol(2 * MiB) == "ll"
    assert P2pChannels(8, 2, 1, 16 * KiB, 4 * MiB).protocol(32 * KiB + 1) == "simple"


def test_the_threshold_counts_the_channels_a_peer_may_use_not_those_the_call_uses():
    """NCCL 2.28 compares a peer's bytes with p2pnChannelsPerPeer x 16 KiB: a 256 KiB call that its 8 ranks'
    share of the channels spreads over 4 of them still runs LL (4 x 16 KiB would say Simple)."""
    ch = P2pChannels(32, 32, 4, 64 * KiB, 16 * MiB)
    assert ch.count(256 * KiB, "ll") == 4 and ch.protocol(256 * KiB) == "ll"


def test_an_ll_call_sizes_its_parts_from_lls_step():
    """LL's step is its 512 KiB buffer over 8 steps (64 KiB), parts 1/8 of it: a 256 KiB send/recv on 2 GPUs
    spreads over its 16 channels under LL, over 4 (64 KiB parts of the 512 KiB chunk) under Simple."""
    ch = P2pChannels(32, 32, 16, 64 * KiB, 16 * MiB)
    assert (ch.count(256 * KiB, "ll"), ch.count(256 * KiB, "simple")) == (16, 4)
    assert ch.count(16 * KiB, "ll") == 2 and ch.count(16 * KiB) == 1


@pytest.mark.parametrize("preset, gpus, nodes, op, peer_bytes, proto", [
    ("dgx-h100", 8, 1, "send_recv", 256 * KiB, "ll"),
    ("dgx-h100", 8, 1, "all_to_all", 256 * KiB, "ll"),
    ("dgx-h100", 8, 1, "send_recv", 512 * KiB, "ll"),
    ("dgx-h100", 8, 1, "send_recv", MiB, "simple"),
    ("dgx-h100", 8, 1, "all_to_all", MiB, "simple"),
    ("hgx-h200", 4, 1, "all_to_all", 256 * KiB, "ll"),
    ("hgx-h200", 2, 1, "send_recv", 256 * KiB, "ll"),
    ("pcie-gen4", 8, 1, "send_recv", 32 * KiB, "ll"),         # 2 channels per PCIe peer: 32 KiB
    ("pcie-gen4", 8, 1, "send_recv", 64 * KiB, "simple"),
    ("dgx-h100", 8, 2, "send_recv", 16 * KiB, "simple"),      # across servers: no LL buffers
    ("dgx-h100", 8, 2, "send_recv", 256 * KiB, "simple"),
    ("dgx-h100", 8, 2, "all_to_all", 256 * KiB, "simple"),
])
def test_the_threshold_follows_the_topologys_channels_per_peer(preset, gpus, nodes, op, peer_bytes, proto):
    m = _model(preset, gpus=gpus, nodes=nodes)
    size = peer_bytes * (gpus * nodes if op == "all_to_all" else 1)
    assert m.choose(op, size) == ("direct", proto)


def test_across_the_network_p2p_runs_simple_at_every_size():
    assert P2pChannels(8, 2, 2, 64 * KiB, 128 * KiB, net=True).protocol(256) == "simple"


@pytest.mark.parametrize("op", ["send_recv", "all_to_all"])
@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_the_tuner_follows_nccls_p2p_rule_on_one_server(op, gpus):
    m = _model(gpus=gpus)
    for s in SIZES:
        peer = s if op == "send_recv" else s / gpus
        assert m.choose(op, s) == ("direct", "ll" if peer <= 32 * 16 * KiB else "simple"), s


@pytest.mark.parametrize("op", ["send_recv", "all_to_all"])
def test_p2p_never_runs_ll128_and_runs_simple_across_servers(op):
    m = _model("dgx-h100", gpus=8, nodes=2)
    assert {m.choose(op, s)[1] for s in SIZES} == {"simple"}


def test_a_2_mib_send_recv_on_4_gpus_runs_simple():
    """32 channels per peer x 16 KiB = 512 KiB: NCCL runs Simple at 2 MiB (the fastest-priced choice was LL)."""
    assert _model(gpus=4).choose("send_recv", 2 * MiB) == ("direct", "simple")


def test_fastest_still_prices_the_pairs():
    m = _model(gpus=4, select="fastest")
    t = {p: m.time_s("send_recv", 2 * MiB, proto=p) for p in ("ll", "simple")}     # never LL128 (below)
    assert m.time_s("send_recv", 2 * MiB) == min(t.values())


@pytest.mark.parametrize("op", ["send_recv", "all_to_all"])
def test_forcing_ll128_on_a_p2p_op_is_refused_and_fastest_never_prices_it(op):
    """NCCL's p2p path never runs LL128: --proto ll128 on send_recv / all_to_all is an error naming --proto, and
    select='fastest' chooses among LL and Simple only (it priced LL128 for them)."""
    from simulator.core.errors import InputError
    model = _model(select="fastest")
    with pytest.raises(InputError) as err:
        model.planner.choices(op, "auto", "ll128")
    assert err.value.field == "proto" and "never ll128" in str(err.value)
    assert {p for _, p in model.planner.choices(op)} == {"ll", "simple"}
    assert model.planner.choices("all_reduce", "ring", "ll128") == (("ring", "ll128"),)


def test_cli_refuses_ll128_for_send_recv():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "gpunetsim.cli", "collective", "--op", "send_recv", "--proto", "ll128",
                           "-b", "1M", "-e", "1M"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--proto" in done.stderr and "Traceback" not in done.stderr
