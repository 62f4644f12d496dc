"""NVLS (NVLink SHARP): plans, both engines, availability, NCCL's tuner choice and the --nvls switch."""

import pytest

import topologies
from simulator.collectives.algorithms import NvlsChunks, nvls_chunk_bytes
from simulator.collectives.params import Parameters
from simulator.collectives.planner import Planner
from simulator.core.errors import InputError
from simulator.network.closed_form import CostModel
from simulator.network.engine import simulate_plan
from validation.compare import Predictor, Topo, choice_for, env_algo
from validation.parsers import CollMeasurement

NO_FILL = Parameters().with_values({"nvls_fill_rounds": 0.0})


@pytest.mark.parametrize("preset, gpus", [("dgx-h100", None), ("hgx-h200", 4), ("hgx-b200", 8)])
@pytest.mark.parametrize("op", ["all_reduce", "reduce_scatter", "all_gather"])
def test_discrete_event_agrees_with_closed_form(preset, gpus, op):
    m = CostModel(topologies.build(preset, gpus_per_node=gpus))
    shape = m.shape(op, "nvls", "simple")
    for size in (8, 4096, 1 << 20, 1 << 24, 1 << 27, 1 << 31):
        des, _ = simulate_plan(m.router, m.params, shape.plan, size)
        assert des == pytest.approx(shape.time_s(size), rel=0.01), size


@pytest.mark.parametrize("n", [5, 6, 7, 8])
def test_all_reduce_moves_n_plus_one_over_n_each_way(n):
    """Without the pipeline fill, all_reduce takes (n+1)/n x S over NVLink x nvlsEfficiency:
    busbw = 2(n-1)/(n+1) x 450 GB/s x 0.8 x 0.85."""
    m = CostModel(topologies.build("hgx-h200", gpus_per_node=n), NO_FILL)
    size = 1 << 34
    t = m.time_s("all_reduce", size, "nvls", "simple")
    busbw = 2 * (n - 1) / n * size / t
    assert busbw == pytest.approx(2 * (n - 1) / (n + 1) * 450e9 * 0.8 * 0.85, rel=1e-3)


@pytest.mark.parametrize("op", ["reduce_scatter", "all_gather"])
def test_half_collectives_move_the_whole_buffer_once(op):
    """reduce_scatter: S up, S/n down; all_gather: S/n up, S down: time = S / (NVLink x 0.85)."""
    m = CostModel(topologies.build("dgx-h100"), NO_FILL)
    size = 1 << 34
    assert m.time_s(op, size, "nvls", "simple") == pytest.approx(25e-6 + size / (450e9 * 0.8 * 0.85), rel=1e-6)


def test_chunk_sizes_follow_nccl():
    """concurrentOps = 16 channels x 8 heads on a DGX H100: 128 KiB from 1 GiB, 64 KiB from 64 MiB,
    32 KiB from 8 MiB, else 16 KiB."""
    ops = 16 * 8
    assert [nvls_chunk_bytes(s, ops) for s in (1 << 30, (1 << 30) - 1, 1 << 26, 1 << 23, (1 << 23) - 1)] == \
        [131072, 65536, 65536, 32768, 16384]


def test_the_pipeline_fill_costs_more_at_larger_chunks():
    m = CostModel(topologies.build("dgx-h100"))
    plan = m.shape("all_reduce", "nvls", "simple").plan
    assert plan.pad_bytes(1 << 30) == pytest.approx(2 * plan.pad_bytes(1 << 29))
    assert plan.channels == 16


def test_nvls_not_on_hardware_without_it():
    with pytest.raises(InputError, match="NVSwitch"):
        topologies.build("dgx-a100", nvls=True)
    m = CostModel(topologies.build("dgx-a100"))
    assert all(a != "nvls" for a, _ in m.choices("all_reduce"))
    with pytest.raises(InputError, match="nvls is not available"):
        m.time_s("all_reduce", 1 << 20, "nvls", "auto")


def test_nvls_off_is_never_chosen():
    m = CostModel(topologies.build("dgx-h100", nvls=False))
    assert {a for a, _ in m.choices("all_reduce")} == {"ring", "tree"}
    with pytest.raises(InputError, match="off"):
        m.shape("all_reduce", "nvls", "simple")


def test_nvls_runs_simple_only():
    m = CostModel(topologies.build("dgx-h100"))
    assert m.choices("all_reduce", "nvls") == [("nvls", "simple")]
    with pytest.raises(InputError, match="simple protocol only"):
        m.choices("all_reduce", "nvls", "ll")


@pytest.mark.parametrize("preset, gpus, expected", [
    # stas00/ml-engineering, 8 GiB all_reduce, NCCL 2.27.7: "algo NCCL picks" per GPU count (6 B200s: NCCL
    # 2.27.7 picked NVLS, 2.28's table keeps Ring, see below)
    ("hgx-h200", 4, "ring"), ("hgx-h200", 5, "nvls"), ("hgx-h200", 6, "nvls"), ("hgx-h200", 7, "nvls"),
    ("hgx-h200", 8, "nvls"), ("hgx-b200", 4, "ring"), ("hgx-b200", 5, "ring"), ("hgx-b200", 7, "nvls"),
    ("hgx-b200", 8, "nvls")])
def test_auto_picks_what_nccl_picked(preset, gpus, expected):
    m = CostModel(topologies.build(preset, gpus_per_node=gpus))
    assert m.best("all_reduce", 8 << 30)[1] == expected


@pytest.mark.parametrize("preset, gpus, expected", [
    ("hgx-h200", 4, "ring"), ("hgx-h200", 5, "nvls"), ("hgx-h200", 6, "nvls"), ("hgx-h200", 7, "nvls"),
    ("hgx-h200", 8, "nvls"), ("hgx-b200", 4, "ring"), ("hgx-b200", 5, "ring"), ("hgx-b200", 6, "nvls"),
    ("hgx-b200", 7, "nvls"), ("hgx-b200", 8, "nvls")])
def test_nccl_2_27_tuner_picks_every_published_row(preset, gpus, expected):
    """The published runs used NCCL 2.27.7, whose NVLS entry is the graph's bandwidth x 5/6 (2.28 added
    nvlsEfficiency and x n/(2(n-1))): with it every row, 6 B200s included, is NCCL's pick."""
    from simulator.collectives.nccl_model import NcclModel
    m = CostModel(topologies.build(preset, gpus_per_node=gpus))
    assert NcclModel(m.nccl.x, (2, 27)).choose("all_reduce", 8 << 30, tuple(m.choices("all_reduce")))[0] == expected


def test_nccl_2_28_keeps_ring_on_6_b200():
    """NCCL 2.28's table on 6 B200s: Ring 12 x 60 x 6/10 = 432 GB/s against NVLS 6 heads x 90 GB/s
    (7 x 90 <= 720 on each GPU's NVLink) x 0.74 x 5/6 x 2 x 6/10 = 399.6: Ring. NVLS on 8 B200s: 9 x 80 <= 720,
    8 x 80 x 0.74 x 7/8 x 2 x 8/14 = 473.6 GB/s."""
    t = CostModel(topologies.build("hgx-b200", gpus_per_node=6)).nccl.table
    assert t[("all_reduce", "ring", "simple")][1] == pytest.approx(432.0)
    assert t[("all_reduce", "nvls", "simple")][1] == pytest.approx(399.6)
    assert CostModel(topologies.build("hgx-b200")).nccl.table[("all_reduce", "nvls", "simple")] == pytest.approx(
        (25.0, 473.6))


def test_auto_on_8_h200_switches_from_ring_ll_to_nvls_at_2_mib():
    """stas00: 'Algo RING proto LL up to a 1MiB payload and Algo NVLS proto SIMPLE from 2MiB up'; all_gather
    and reduce_scatter stay on Ring at 16 GiB."""
    m = CostModel(topologies.build("hgx-h200"))
    assert m.best("all_reduce", 1 << 20)[1:] == ("ring", "ll")
    for size in (2 << 20, 64 << 20, 16 << 30):
        assert m.best("all_reduce", size)[1:] == ("nvls", "simple")
    assert m.best("all_gather", 16 << 30)[1] == "ring"
    assert m.best("reduce_scatter", 16 << 30)[1] == "ring"


def test_nccl_nvls_table_entry_on_dgx_h100():
    """NCCL's model: 8 channels x 40 GB/s x 0.85 x 7/8 x 2 = 476 GB/s bus -> 272 GB/s algorithm bandwidth, 25 us."""
    lat, bw = CostModel(topologies.build("dgx-h100")).nccl.table[("all_reduce", "nvls", "simple")]
    assert (lat, bw) == pytest.approx((25.0, 272.0))


def test_env_switches_nvls_off_in_comparisons():
    p = CollMeasurement("all_reduce", 8, 1 << 30, 1.0, None, None, env=(("NCCL_NVLS_ENABLE", "0"),))
    assert choice_for(p)[3] is False
    pred = Predictor(Topo("dgx-h100"), Parameters())
    assert pred.predict(p).algo == "ring"
    assert pred.predict(CollMeasurement("all_reduce", 8, 1 << 30, 1.0, None, None)).algo == "nvls"


@pytest.mark.parametrize("value, op, expected", [("NVLS", "all_reduce", "nvls"), ("Ring", "all_gather", "ring"),
                                                 ("allreduce:Tree", "all_reduce", "tree"),
                                                 ("allreduce:Tree", "all_gather", None), ("^NVLS", "all_reduce", None),
                                                 ("ring,tree", "all_reduce", None)])
def test_nccl_algo_env(value, op, expected):
    assert env_algo(value, op) == expected


@pytest.mark.parametrize("preset, nodes", [("dgx-h100", 2), ("dgx-h100", 4), ("hgx-b200", 2)])
def test_nvls_tree_discrete_event_agrees_with_closed_form(preset, nodes):
    m = CostModel(topologies.build(preset, nodes=nodes))
    shape = m.shape("all_reduce", "nvls_tree", "simple")
    for size in (8, 1 << 20, 1 << 27, 1 << 31):
        des, _ = simulate_plan(m.router, m.params, shape.plan, size)
        assert des == pytest.approx(shape.time_s(size), rel=0.01), size


def test_nvls_tree_latency_is_nvlink_step_plus_two_log_n_network_steps():
    m = CostModel(topologies.build("dgx-h100", nodes=4))
    plan = m.shape("all_reduce", "nvls_tree", "simple").plan
    wire = max(w for _, w in m.planner._layouts[("all_reduce", "nvls_tree", tuple(m.router.gpus))].inter)
    assert plan.latency_s == pytest.approx(25e-6 + 2 * 2 * (20.9e-6 + wire))


def test_nvls_tree_needs_several_domains_and_nvls():
    one = CostModel(topologies.build("dgx-h100"))
    assert "nvls_tree" not in {a for a, _ in one.choices("all_reduce")}
    with pytest.raises(InputError, match="several NVLink domains"):
        one.shape("all_reduce", "nvls_tree", "simple")
    off = CostModel(topologies.build("dgx-h100", nodes=2, nvls=False))
    assert "nvls_tree" not in {a for a, _ in off.choices("all_reduce")}
    two = CostModel(topologies.build("dgx-h100", nodes=2))
    assert "nvls" not in {a for a, _ in two.choices("all_reduce")}     # NVLS alone needs CollNet across nodes


def test_auto_picks_nvls_tree_for_large_all_reduce_on_two_dgx_h100():
    """NCCL's model: 8 channels x min(40 x 0.85 x 7/8 x 2, 48 x 2, 57.7) = 461.6 GB/s bus -> 246 GB/s; 66.8 us."""
    m = CostModel(topologies.build("dgx-h100", nodes=2))
    assert m.nccl.table[("all_reduce", "nvls_tree", "simple")] == pytest.approx((66.8, 246.19), abs=0.01)
    assert m.best("all_reduce", 1 << 30)[1] == "nvls_tree"
    assert m.best("all_reduce", 1 << 16)[1] != "nvls_tree"


@pytest.mark.parametrize("preset, nodes, per_channel_GBps", [("dgx-h100", 2, 57.7), ("dgx-h100", 4, 45.5)])
def test_nvls_tree_runs_at_most_nccls_per_channel_rate(preset, nodes, per_channel_GBps):
    """NVLS-Tree's kernel carries perChMaxNVLSTreeBw of bus bandwidth per channel (one per head GPU): on
    two DGX H100s 8 x 57.7 = 462 GB/s, below what NVLS inside each server would carry (two H100 clusters
    measured 465 and 479 GB/s from 4 GiB: docs/accuracy.md section 1b); both engines, without the fill."""
    from simulator.core.vocabulary import busbw_factor
    m = CostModel(topologies.build(preset, nodes=nodes), NO_FILL)
    shape = m.shape("all_reduce", "nvls_tree", "simple")
    size = 1 << 34
    cap_Bps = 8 * per_channel_GBps * 1e9
    busbw = size * busbw_factor("all_reduce", m.ranks) / shape.time_s(size)
    assert busbw <= cap_Bps * 1.0001
    if nodes == 2:
        assert busbw == pytest.approx(cap_Bps, rel=0.01)
        from simulator.core.vocabulary import Limit
        assert m.limit("all_reduce", size, "nvls_tree", "simple") is Limit.KERNEL
    des, _ = simulate_plan(m.router, m.params, shape.plan, size)
    assert des == pytest.approx(shape.time_s(size), rel=0.01)
    b200 = CostModel(topologies.build("hgx-b200", nodes=2), NO_FILL)    # 8 x 96 GB/s: the NICs bind first
    s = b200.shape("all_reduce", "nvls_tree", "simple")
    assert size * busbw_factor("all_reduce", 16) / s.time_s(size) < 0.95 * 8 * 96e9


def test_regret_finds_tree_where_nccl_keeps_ring():
    """Four DGX H100s, 200 Gb/s NICs, 32 MiB: NCCL picks Ring, Tree is faster. (The issue's case was two
    servers; there NCCL's tree graph carries up to twice the ring's intra bandwidth and NCCL picks the tree.)"""
    from simulator.network.regret import tuner_regret
    m = CostModel(topologies.build("dgx-h100", nodes=4, nvls=False,
                                   fabric=topologies.FabricSpec(nic_Bps=25e9)))
    r = tuner_regret(m, "all_reduce", 32 << 20)
    assert (r.chosen_algo, r.best_algo) == ("ring", "tree")
    assert r.marked and r.regret_pct == pytest.approx(
        (m.time_s("all_reduce", 32 << 20) / m.time_s("all_reduce", 32 << 20, "tree", "simple") - 1) * 100)


def test_no_regret_when_nccl_picks_the_fastest():
    from simulator.network.regret import tuner_regret
    m = CostModel(topologies.build("dgx-h100"))
    r = tuner_regret(m, "all_reduce", 1 << 30)
    assert (r.best_algo, r.regret_pct, r.marked) == ("nvls", 0.0, False)
    assert tuner_regret(m, "all_reduce", 1 << 30, "ring", "simple").regret_pct == 0.0   # one choice allowed


def test_collective_json_carries_regret(capsys):
    import json
    from gpunetsim.cli import main
    assert main(["collective", "--nodes", "4", "--nic-bw", "200 Gb/s", "--nvls", "off", "-b", "32M", "-e", "32M",
                 "--json", "--engine", "closed"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["algo"], row["best_algo"], row["best_proto"]) == ("ring", "tree", "simple")
    assert row["regret_pct"] > 10


def test_gb200_nvl72_is_one_nvlink_domain_and_partitions_use_nvls_tree():
    """72 GPUs behind one NVSwitch plane (NCCL: one node), NVLS inside; NVL36x2 partitions join over IB."""
    rack = CostModel(topologies.build("gb200-nvl72"))
    assert rack.ranks == 72 and rack.router.info.hosts == 1 and rack.router.info.compute_capability == 100
    assert rack.best("all_reduce", 1 << 30)[1] == "nvls"
    assert rack.shape("all_reduce", "nvls", "simple").plan.channels == 24       # Blackwell, one NVLink domain
    halves = CostModel(topologies.build("gb200-nvl72", gpus_per_node=36, nodes=2))
    assert halves.ranks == 72 and halves.best("all_reduce", 1 << 30)[1] == "nvls_tree"
    assert halves.shape("all_reduce", "nvls_tree", "simple").plan.channels == 32  # across NVLink domains


NVL4 = """name: two-trays-one-nvlink-domain
compute_capability: 100
gpus_per_nvlink_domain: {k}
nodes:
  - {{name: t0.gpu0, host: 0}}
  - {{name: t0.gpu1, host: 0}}
  - {{name: t1.gpu0, host: 1}}
  - {{name: t1.gpu1, host: 1}}
  - {{name: nvsw, kind: nvswitch, host: 0}}
links:
  - {{a: t0.gpu0, b: nvsw, kind: nvlink, bandwidth: "900 GB/s"}}
  - {{a: t0.gpu1, b: nvsw, kind: nvlink, bandwidth: "900 GB/s"}}
  - {{a: t1.gpu0, b: nvsw, kind: nvlink, bandwidth: "900 GB/s"}}
  - {{a: t1.gpu1, b: nvsw, kind: nvlink, bandwidth: "900 GB/s"}}
"""


def test_topology_file_nvlink_domain_joins_trays_into_one_server(tmp_path):
    f = tmp_path / "nvl4.yaml"
    f.write_text(NVL4.format(k=4))
    G = topologies.build(str(f))
    assert G.graph["hosts"] == 1 and {d["host"] for _, d in G.nodes(data=True)} == {0}
    assert sorted(d["tray"] for n, d in G.nodes(data=True) if d["kind"] == "gpu") == [0, 0, 1, 1]
    m = CostModel(G)
    assert "nvls" in {a for a, _ in m.choices("all_reduce")}


@pytest.mark.parametrize("k, message", [(3, "would split"), (8, "last NVLink domain"), ("x", "whole number")])
def test_topology_file_nvlink_domain_must_hold_whole_hosts(tmp_path, k, message):
    f = tmp_path / "bad.yaml"
    f.write_text(NVL4.format(k=k))
    with pytest.raises(InputError, match=message):
        topologies.build(str(f))


def test_nvls_step_overhead_is_paid_per_round_of_chunks():
    """nvls_step_overhead_s: each round of chunks (chunk x channels x heads bytes) costs it once, in
    the closed form and the event engine alike; 0 (the datasheet) changes nothing."""
    S = 1 << 30
    m0 = CostModel(topologies.build("hgx-h200"))
    m1 = CostModel(topologies.build("hgx-h200"), Parameters().with_values({"nvls_step_overhead_s": 5e-6}))
    s0, s1 = m0.shape("all_reduce", "nvls", "simple"), m1.shape("all_reduce", "nvls", "simple")
    ch = s1.plan.chunking
    rounds = S / (ch.chunk_bytes(S) * ch.concurrent_ops)
    assert s1.time_s(S) - s0.time_s(S) == pytest.approx(5e-6 * rounds, rel=1e-9)
    des, _ = simulate_plan(m1.router, m1.params, s1.plan, S)
    assert des == pytest.approx(s1.time_s(S), rel=1e-6)
    assert s0.plan.chunk_overhead_s(S) == 0.0


def test_nvls_chunk_settings_set_the_largest_chunk_as_nccl_reads_them():
    """enqueue.cc (2.22 on): NVLS at most nvlsChunkSize; NVLS-Tree that, capped by NCCL_NVLSTREE_MAX_CHUNKSIZE
    (unset: 64 KiB on 4+ domains); an older NCCL keeps its defaults whatever the run set."""
    default, aws = NvlsChunks(), NvlsChunks(524288, 524288)
    assert [default.max_chunk("nvls", 1), default.max_chunk("nvls_tree", 2), default.max_chunk("nvls_tree", 4)] == \
        [131072, 131072, 65536]
    assert [aws.max_chunk("nvls", 1), aws.max_chunk("nvls_tree", 4)] == [524288, 524288]
    assert NvlsChunks(524288).max_chunk("nvls_tree", 4) == 65536
    assert aws.taken_by((2, 20)) == default and aws.taken_by((2, 27)) == aws and aws.taken_by(None) == aws
    with pytest.raises(InputError):
        NvlsChunks(0)


def test_aws_nvls_chunk_moves_the_b200_chunk_steps():
    """8 B200s (24 channels x 8 heads): with 512 KiB chunks 4 GiB runs 64 KiB chunks (below 64 x 192 x 512 KiB =
    6 GiB) and 8 GiB 512 KiB; NCCL's 128 KiB default gives 128 KiB to both. The planner passes the run's setting
    through, unless its NCCL predates it."""
    router = topologies.prepare("hgx-b200", gpus_per_node=8)
    plans = {v: Planner(router, nccl_version=v, nvls_chunks=NvlsChunks(524288, 524288)).plan(
        "all_reduce", "nvls", "simple").chunking for v in ((2, 27), (2, 20))}
    plain = Planner(router).plan("all_reduce", "nvls", "simple").chunking
    assert [plans[(2, 27)].chunk_bytes(s) for s in (4 << 30, 8 << 30)] == [65536, 524288]
    assert [plain.chunk_bytes(s) for s in (4 << 30, 8 << 30)] == [131072, 131072]
    assert plans[(2, 20)] == plain
