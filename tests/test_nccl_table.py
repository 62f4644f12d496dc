"""Configured like NCCL (tuning.cc constants, datasheet NVLink), the closed form reproduces the tuning
table NCCL 2.28.9 printed for a 4-GPU H200 communicator (validation/data/h200x4_2026-11-26)."""

import re

import pytest

import topologies
from simulator.collectives.plans import ring_step_share
from simulator.network.closed_form import CostModel
from validation.data import data_path
from validation.parsers import NCCL_OP_NAMES

COLL = NCCL_OP_NAMES


def nccl_table():
    """{(op, algo, proto): (latency_us, algbw_GBps)} for Tree and Ring."""
    text = data_path("h200x4_2026-11-26/nccl_tuning_world4.txt").read_text()
    rows = {}
    block = text.split("Algorithm   |")[1]        # first block: Tree, Ring, CollNetDirect
    for line in block.splitlines():
        name = line.split("|")[0].strip()
        if name in COLL:
            cells = re.findall(r"([\d.]+)/\s*([\d.]+)", line)
            for i, (algo, proto) in enumerate((a, p) for a in ("tree", "ring") for p in ("ll", "ll128", "simple")):
                lat, bw = map(float, cells[i])
                if bw > 0:
                    rows[(COLL[name], algo, proto)] = (lat, bw)
    return rows


TABLE = nccl_table()


def test_table_has_every_ring_and_tree_entry():
    assert len(TABLE) == 18   # 5 ops x 3 protocols ring, + all_reduce x 3 protocols tree


@pytest.mark.parametrize("key", sorted(TABLE))
def test_closed_form_matches_nccl_tuning_table(key):
    """Bandwidths all match but Ring LL's, which is NCCL's ceiling (llMaxBw) times the share of the
    ring's steps that move data (gpunetsim's departure from NCCL's table: LL's bus bandwidth rises with
    the ranks as measured; docs/algorithms.md). Latencies match for all_reduce, all_gather and
    reduce_scatter; for broadcast/reduce gpunetsim charges the n-1 hops of the pipelined chain where
    NCCL charges one."""
    op, algo, proto = key
    lat_us, bw_GBps = TABLE[key]
    model = CostModel(topologies.build("hgx-h200", gpus_per_node=4))
    shape = model.shape(op, algo, proto)
    extra_hops = 2 if op in ("broadcast", "reduce") else 0          # 4 GPUs: 3 chain hops, NCCL counts 1
    hop_us = model.params.hop_latency_s("nvlink", algo, proto) * 1e6
    assert shape.alpha_s * 1e6 == pytest.approx(lat_us + extra_hops * hop_us, abs=0.051)
    share = ring_step_share(op, 4) if (algo, proto) == ("ring", "ll") else 1.0
    assert 1.0 / shape.beta_s_per_byte / 1e9 == pytest.approx(bw_GBps * share, rel=0.005)


@pytest.mark.parametrize("key", sorted(TABLE))
def test_nccl_model_rebuilds_the_printed_table(key):
    """simulator.collectives.nccl_model (NCCL's own formulas, inputs estimated from the topology) gives the same table."""
    from simulator.collectives.nccl_model import NcclInputs, NcclModel
    from topologies.routing import Router
    model = NcclModel(NcclInputs.from_router(Router(topologies.build("hgx-h200", gpus_per_node=4))))
    lat, bw = model.table[key]
    assert (lat, bw) == pytest.approx(TABLE[key], abs=0.051)


def test_auto_follows_nccl_tuner_choice():
    model = CostModel(topologies.build("dgx-h100", nodes=2))
    for size in (8, 1 << 16, 1 << 20, 1 << 24, 1 << 30):
        _, algo, proto = model.best("all_reduce", size)
        assert (algo, proto) == model.nccl.choose("all_reduce", size)


def test_two_servers_ring_at_the_network_speed_tree_up_to_twice_it():
    """NCCL's graph search raises a ring's bwIntra together with its bwInter, a tree's bwIntra alone to at
    most twice bwInter; its tuner reads bwIntra on <= 2 servers. On two A100 servers with 4x 100G EFA
    (p4de) the network-bound tree wins from 1 GiB (measured 78 GB/s busbw, above the NICs' 50 GB/s)."""
    from simulator.collectives.nccl_model import NcclInputs
    from topologies.routing import Router
    router = Router(topologies.build("dgx-a100", nodes=2, fabric=topologies.FabricSpec(nic_Bps=12.5e9)))
    x = NcclInputs.from_router(router)
    assert x.bw_intra_GBps == pytest.approx(x.bw_inter_GBps)
    assert x.tree_bw_intra_GBps == pytest.approx(2 * x.bw_inter_GBps)
    model = CostModel(router)
    assert model.nccl.choose("all_reduce", 1 << 30)[0] == "tree"
    one = NcclInputs.from_router(Router(topologies.build("dgx-a100")))      # one server: unchanged
    assert one.tree_bw_intra_GBps == one.bw_intra_GBps


@pytest.mark.parametrize("cc, row", [(70, 0), (80, 1), (86, 1), (90, 2), (100, 3), (120, 3)])
def test_one_generation_rule_for_every_per_generation_table(cc, row):
    """tuning.cc's [Volta, Ampere, Hopper, Blackwell] rows: one rule in nccl_constants, used by NCCL's table and
    by the NVLS-Tree per-channel cap (they were spelled twice, with N == 1 against domains <= 1)."""
    from simulator.collectives import nccl_constants as c, nccl_model
    assert c.generation_index(cc) == row
    assert c.per_channel_nvls_tree_GBps(cc, 2) == c.PER_CH_MAX_NVLS_TREE[row][1]
    assert not hasattr(nccl_model, "_cc_index")


@pytest.mark.parametrize("nodes, column", [(1, 0), (2, 1), (3, 2), (4, 2), (64, 2)])
def test_one_node_count_rule_for_every_n1_n2_n4_table(nodes, column):
    from simulator.collectives.nccl_constants import nodes_index
    assert nodes_index(nodes) == column


@pytest.mark.parametrize("topo, nodes", [("hgx-h200", 1), ("dgx-h100", 1), ("dgx-h100", 4), ("dgx-a100", 2)])
def test_choose_takes_the_pair_of_least_estimated_time(topo, nodes):
    """NcclModel.choose (its pairs' table terms read once per op and allowed set) picks what time_s ranks first,
    for every op, size and allowed subset, asked in turn on one model (a subset never answers for another)."""
    from itertools import combinations
    nccl = CostModel(topologies.prepare(topo, nodes=nodes)).nccl
    for op in sorted({o for o, _, _ in nccl.table}):
        pairs = [(a, p) for o, a, p in nccl.table if o == op] + [("nvls", "ll")]   # one pair the table lacks
        subsets = [c for n in range(1, len(pairs) + 1) for c in combinations(pairs, n)]
        for size in (0, 8, 4096, 3 << 20, 1 << 26, 3 << 30):
            for allowed in subsets:
                times = [nccl.time_s(op, size, a, p) for a, p in allowed]
                want = allowed[times.index(min(times))] if min(times) < float("inf") else allowed[0]
                assert nccl.choose(op, size, allowed) == want, (op, size, allowed)
