"""AWS's tuner plugin region tables (simulator.collectives.ofi_tuner) and where they reach the tuner."""

import pytest

import topologies
from simulator.collectives import ofi_tuner
from simulator.collectives.planner import Planner
from simulator.collectives.tuner import Tuner
from validation.compare import tuner_plugin

P6 = "p6-b200.48xlarge"
MIB = 1 << 20
EVERY = (("tree", "ll"), ("tree", "ll128"), ("tree", "simple"), ("ring", "ll"), ("ring", "ll128"),
         ("ring", "simple"), ("nvls_tree", "simple"))


@pytest.mark.parametrize("op, size_bytes, pair", [
    ("all_reduce", 64 << 10, ("tree", "ll")),
    ("all_reduce", 16 * MIB, ("tree", "ll128")),
    ("all_reduce", 32 * MIB, ("ring", "ll128")),          # on the region's edge at 32 ranks: inside
    ("all_reduce", 64 * MIB, ("ring", "ll128")),
    ("all_reduce", 128 * MIB, ("nvls_tree", "simple")),
    ("all_reduce", 256 * MIB, ("nvls_tree", "simple")),
    ("all_reduce", 512 * MIB, ("ring", "simple")),        # above the 415 MiB vertex at 32 ranks
    ("all_reduce", 16 << 30, ("ring", "simple")),
    ("all_gather", 1 * MIB, ("ring", "ll")),
    ("all_gather", 64 * MIB, ("ring", "ll128")),
    ("reduce_scatter", 1 << 30, ("ring", "simple")),
])
def test_p6_regions_on_four_nodes(op, size_bytes, pair):
    """The p6-b200 tables at 32 ranks on 4 nodes, read off the plugin's vertices by hand."""
    assert ofi_tuner.choose(P6, op, size_bytes, 32, 4, EVERY) == pair


@pytest.mark.parametrize("ranks, nodes, platform, op", [
    (16, 2, P6, "all_reduce"),          # two nodes or fewer: NCCL's own tuner
    (8, 1, P6, "all_reduce"),
    (16, 4, P6, "all_reduce"),          # four GPUs a node: no table
    (32, 4, "p5.48xlarge", "all_reduce"),   # not transcribed
    (32, 4, P6, "broadcast"),
])
def test_nccl_decides_where_the_plugin_has_no_table(ranks, nodes, platform, op):
    assert ofi_tuner.choose(platform, op, 256 * MIB, ranks, nodes, EVERY) is None


def test_a_region_whose_pair_nccl_does_not_offer_is_skipped():
    """NCCL marks pairs it cannot run (or NCCL_ALGO/NCCL_PROTO filter out); the plugin skips their regions."""
    without_nvls = tuple(p for p in EVERY if p[0] != "nvls_tree")
    assert ofi_tuner.choose(P6, "all_reduce", 256 * MIB, 32, 4, without_nvls) is None
    without_ll128 = tuple(p for p in EVERY if p[1] != "ll128")
    assert ofi_tuner.choose(P6, "all_reduce", 64 * MIB, 32, 4, without_ll128) == ("nvls_tree", "simple")


def test_extend_region_follows_the_line_to_the_bound():
    """extend_region: a vertical line goes up to the rank bound, a sloped one to whichever bound comes first."""
    assert ofi_tuner.extend((393216, 16), (393216, 1024)) == pytest.approx((393216, ofi_tuner.TUNER_MAX_RANKS))
    x, y = ofi_tuner.extend((96993280, 1024), (106430464, 2048))
    assert (x == pytest.approx(ofi_tuner.TUNER_MAX_SIZE)) != (y == pytest.approx(ofi_tuner.TUNER_MAX_RANKS))


def test_inside_counts_edges_and_rejects_outside():
    square = ((1 << 10, 2), (1 << 20, 2), (1 << 20, 64), (1 << 10, 64))
    assert ofi_tuner.inside((1 << 15, 8), square)
    assert ofi_tuner.inside((1 << 20, 8), square)          # on an edge
    assert not ofi_tuner.inside((1 << 21, 8), square)
    assert not ofi_tuner.inside((1 << 15, 128), square)


def _tuner(nodes: int, plugin: str | None) -> Tuner:
    cluster = topologies.prepare("hgx-b200", nodes=nodes, gpus_per_node=8,
                                 fabric=topologies.FabricSpec(nic_Bps=50e9))
    return Tuner(Planner(cluster, nccl_version=(2, 27), tuner_plugin=plugin))


def test_the_tuner_takes_the_plugins_pair_where_it_decides():
    """Four p6-b200 nodes with the plugin run its pair; without it, or on two nodes, NCCL's own choice."""
    with_plugin, without = _tuner(4, P6), _tuner(4, None)
    assert with_plugin.decided("all_reduce", 256 * MIB) == ("nvls_tree", "simple")
    assert without.decided("all_reduce", 256 * MIB) == without.planner.nccl.choose(
        "all_reduce", 256 * MIB, without.planner.choices("all_reduce"))
    assert with_plugin.decided("all_reduce", 512 * MIB) == ("ring", "simple")
    two = _tuner(2, P6)
    assert two.decided("all_reduce", 256 * MIB) == two.planner.nccl.choose("all_reduce", 256 * MIB,
                                                                          two.planner.choices("all_reduce"))
    assert with_plugin.decided("all_reduce", 256 * MIB, algo="ring")[0] == "ring"     # NCCL_ALGO still binds


@pytest.mark.parametrize("meta, platform", [
    ({"hardware": "4x AWS p6-b200.48xlarge: 32x B200", "nccl_version": "2.27.7 (AWS NCCL_TUNER_PLUGIN=ofi)"}, P6),
    ({"hardware": "1x AWS p6-b200.48xlarge", "env": {"NCCL_TUNER_PLUGIN": "libnccl-ofi-tuner.so"}}, P6),
    ({"hardware": "4x AWS p6-b200.48xlarge", "nccl_version": "2.27.7"}, None),       # no plugin loaded
    ({"hardware": "2x AWS p5.48xlarge", "env": {"NCCL_TUNER_PLUGIN": "ofi"}}, None),  # no table here
])
def test_tuner_plugin_read_from_the_header(meta, platform):
    assert tuner_plugin(meta) == platform
