"""AWS's tuner plugin region tables (simulator.collectives.ofi_tuner) and where they reach the tuner."""

import pytest

import topologies
from simulator.collectives import ofi_tuner
from simulator.collectives.planner import Planner
from simulator.collectives.tuner import Tuner
from simulator.collectives.algorithms import NvlsChunks
from simulator.core.errors import InputError
from validation.compare import nvls_chunk_settings, topo_from_hint, tuner_plugin

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


@pytest.mark.parametrize("platform, ranks, op, size_bytes, pair", [
    ("p5.48xlarge", 32, "all_reduce", 16 * MIB, ("tree", "ll128")),
    ("p5.48xlarge", 32, "all_reduce", 64 * MIB, ("ring", "ll128")),       # right of (36 MiB, 32)
    ("p5.48xlarge", 32, "all_reduce", 2 << 30, ("ring", "simple")),       # right of the ~1.49 GiB edge at 32
    ("p5e.48xlarge", 128, "all_reduce", 64 * MIB, ("tree", "ll128")),     # left of (288 MiB, 128)
    ("p5.48xlarge", 128, "all_reduce", 2 << 30, ("ring", "ll128")),       # on two regions' vertex: the first
    ("p5.48xlarge", 256, "all_reduce", 512 * MIB, ("nvls_tree", "simple")),
    ("p5en.48xlarge", 32, "all_reduce", 64 << 10, ("tree", "ll")),
    ("p5en.48xlarge", 32, "all_reduce", 64 * MIB, ("ring", "ll128")),
    ("p5en.48xlarge", 32, "all_reduce", 400 * MIB, ("nvls_tree", "simple")),  # between 280 and 486 MiB at 32
    ("p5en.48xlarge", 32, "all_reduce", 512 * MIB, ("ring", "simple")),
    ("p5en.48xlarge", 128, "all_reduce", 2 << 30, ("nvls_tree", "simple")),
    ("p5en.48xlarge", 32, "all_gather", 1 * MIB, ("ring", "ll")),
    ("p5en.48xlarge", 32, "all_gather", 256 * MIB, ("ring", "ll128")),
    ("p5en.48xlarge", 32, "all_gather", 1 << 30, ("ring", "simple")),
    ("p5en.48xlarge", 32, "reduce_scatter", 512 * MIB, ("ring", "ll128")),
    ("p5en.48xlarge", 32, "reduce_scatter", 1 << 30, ("ring", "simple")),
])
def test_p5_and_p5en_regions(platform, ranks, op, size_bytes, pair):
    """The p5/p5e and p5en tables (eight GPUs a node), read off the plugin's vertices by hand."""
    assert ofi_tuner.choose(platform, op, size_bytes, ranks, ranks // 8, EVERY) == pair


@pytest.mark.parametrize("ranks, nodes, platform, op", [
    (16, 2, P6, "all_reduce"),          # two nodes or fewer: NCCL's own tuner
    (8, 1, P6, "all_reduce"),
    (16, 4, P6, "all_reduce"),          # four GPUs a node: no table
    (32, 4, "p4d.24xlarge", "all_reduce"),  # no tables for this instance type
    (32, 4, "p5.48xlarge", "all_gather"),   # p5/p5e: all_reduce only
    (16, 2, "p5en.48xlarge", "all_reduce"),
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
    ({"hardware": "2x AWS p5.48xlarge", "env": {"NCCL_TUNER_PLUGIN": "ofi"}}, "p5.48xlarge"),
    ({"hardware": "4x AWS p5en.48xlarge", "env": {"NCCL_TUNER_PLUGIN": "ofi"}}, "p5en.48xlarge"),
    ({"hardware": "2x AWS p4d.24xlarge", "env": {"NCCL_TUNER_PLUGIN": "ofi"}}, None),  # no table here
])
def test_tuner_plugin_read_from_the_header(meta, platform):
    assert tuner_plugin(meta) == platform


def _algos(capsys, *extra):
    from gpunetsim.cli import main
    code = main(["collective", "--topology", "hgx-h200", "--engine", "closed", "-b", "64M", "-e", "1G", "-f", "4",
                 "--json", *extra])
    out = capsys.readouterr().out
    assert code == 0
    return [(r["algo"], r["proto"]) for r in map(__import__("json").loads, out.splitlines())]


def test_cli_tuner_plugin_sets_the_pair_from_three_nodes(capsys):
    """--tuner-plugin aws-ofi:p5en.48xlarge: on 4 nodes the plugin's regions choose (Ring/LL128 at 64-256 MiB,
    Ring/Simple at 1 GiB); on 2 nodes NCCL's own choice stays, as without the flag."""
    plugin = ("--tuner-plugin", "aws-ofi:p5en.48xlarge")
    assert _algos(capsys, "--nodes", "4", *plugin) == [("ring", "ll128"), ("ring", "ll128"), ("ring", "simple")]
    assert _algos(capsys, "--nodes", "4") != _algos(capsys, "--nodes", "4", *plugin)
    assert _algos(capsys, "--nodes", "2", *plugin) == _algos(capsys, "--nodes", "2")


@pytest.mark.parametrize("spec, needle", [
    ("aws-ofi", "name the instance type"),
    ("aws-ofi:p4d.24xlarge", "pass --proto simple"),      # no tables; its network plugin forces Simple
    ("aws-ofi:g5.48xlarge", "no region tables"),
    ("nccl-example", "AWS's"),
    ("aws-ofi:p5", "not its family: aws-ofi:p5.48xlarge"),       # a family has tables: name its size, not "none"
    ("aws-ofi:p5en", "not its family: aws-ofi:p5en.48xlarge"),
])
def test_cli_tuner_plugin_refuses_what_it_cannot_model(capsys, spec, needle):
    from gpunetsim.cli import main
    code = main(["collective", "--topology", "hgx-h200", "--nodes", "4", "-b", "1M", "-e", "1M",
                 "--tuner-plugin", spec])
    err = capsys.readouterr().err
    assert code == 2 and "--tuner-plugin" in err and needle in err and len(err.strip().splitlines()) == 1


def test_tuner_plugin_is_refused_with_a_host_backend(capsys):
    from gpunetsim.cli import main
    code = main(["collective", "--topology", "hgx-h200", "--gpus", "4", "--backend", "gloo", "-b", "1M", "-e", "1M",
                 "--tuner-plugin", "aws-ofi:p5en.48xlarge"])
    assert code == 2 and "tuner plugin" in capsys.readouterr().err


def test_api_collective_takes_the_plugin():
    import gpunetsim
    kw = dict(topology="hgx-h200", nodes=4, size_bytes="512M", engine="closed")
    assert gpunetsim.collective(**kw, tuner_plugin="aws-ofi:p5en.48xlarge").algo == "ring"
    assert gpunetsim.collective(**kw).algo == "nvls_tree"


def test_ddp_buckets_follow_the_plugin():
    """gpunetsim.ddp(tuner_plugin=...) (and ddp --tuner-plugin): GPT-2's 25 MiB buckets on 4 p5en-like nodes run
    the plugin's Ring/LL128, NVLS-Tree without it."""
    import gpunetsim
    kw = dict(topology="hgx-h200", nodes=4, workload="gpt2", engine="closed")
    pairs = {(b.algo, b.proto) for b in gpunetsim.ddp(**kw, tuner_plugin="aws-ofi:p5en.48xlarge").buckets}
    assert ("ring", "ll128") in pairs and ("nvls_tree", "simple") not in pairs
    assert ("nvls_tree", "simple") in {(b.algo, b.proto) for b in gpunetsim.ddp(**kw).buckets}


@pytest.mark.parametrize("argv, reason", [
    (("--nodes", "2"), "2 nodes: the plugin decides from 3 nodes"),
    (("--nodes", "4", "--gpus", "4"), "4 GPUs a node: its tables are for 8"),
    (("--nodes", "4", "--op", "broadcast"), "no broadcast table for p5en.48xlarge"),
    (("--nodes", "4"), None),
])
def test_cli_says_when_the_plugin_decides_nothing(capsys, argv, reason):
    """The table's closing line names why the plugin's tables chose no row (NCCL's own tuner did)."""
    from gpunetsim.cli import main
    assert main(["collective", "--topology", "hgx-h200", "--engine", "closed", "-b", "1G", "-e", "1G",
                 "--tuner-plugin", "aws-ofi:p5en.48xlarge", *argv]) == 0
    notes = [l for l in capsys.readouterr().out.splitlines() if l.startswith("# tuner plugin")]
    assert notes == ([] if reason is None else
                     [f"# tuner plugin aws-ofi:p5en.48xlarge: NCCL's own tuner chose every row ({reason})"])


@pytest.mark.parametrize("nodes, reason", [("1", "1 node: the plugin decides from 3 nodes"), ("4", None)])
def test_ddp_names_the_plugin_and_says_when_it_decides_nothing(capsys, nodes, reason):
    """ddp --tuner-plugin (docs/cli.md: collective and ddp) says so in its header and, where the plugin's tables
    choose no bucket's pair, why, as collective does."""
    from gpunetsim.cli import main
    assert main(["ddp", "--topology", "hgx-h200", "--nodes", nodes, "--workload", "gpt2", "--engine", "closed",
                 "--tuner-plugin", "aws-ofi:p5en.48xlarge"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(", tuner plugin=aws-ofi:p5en.48xlarge (NVLS chunks 512 KiB)")
    assert [l for l in out if l.startswith("# tuner plugin")] == ([] if reason is None else
        [f"# tuner plugin aws-ofi:p5en.48xlarge: NCCL's own tuner chose every row ({reason})"])


def test_dataparallel_refuses_the_plugin(capsys):
    """ddp --strategy dataparallel timed its broadcasts without the plugin and said nothing: refused instead."""
    from gpunetsim.cli import main
    code = main(["ddp", "--topology", "hgx-h200", "--workload", "gpt2", "--strategy", "dataparallel",
                 "--tuner-plugin", "aws-ofi:p5en.48xlarge"])
    err = capsys.readouterr().err
    assert code == 2 and "--tuner-plugin" in err and "aws-ofi:p5en.48xlarge" in err and "Traceback" not in err


@pytest.mark.parametrize("meta, settings", [
    ({"hardware": "1x AWS p6-b200.48xlarge", "nccl_version": "2.27.7 (AWS NCCL_TUNER_PLUGIN=ofi)", "date": "2026-08-02"},
     {"nvls_chunk_bytes": 524288, "nvls_tree_max_chunk_bytes": 524288}),
    ({"hardware": "1x AWS p5.48xlarge", "env": {"NCCL_TUNER_PLUGIN": "ofi"}, "date": "2024-10-30"},
     {"nvls_chunk_bytes": 524288, "nvls_tree_max_chunk_bytes": 524288}),
    ({"hardware": "1x AWS p5.48xlarge", "env": {"NCCL_TUNER_PLUGIN": "ofi"}, "date": "2024-02-01"}, {}),  # before PR 372
    ({"hardware": "1x AWS p6-b200.48xlarge", "nccl_version": "2.27.7 (AWS NCCL_TUNER_PLUGIN=ofi)"}, {}),   # undated
    ({"hardware": "2x AWS p5.48xlarge", "date": "2024-04-19"}, {}),                                 # plugin not named
    ({"hardware": "1x AWS p5.48xlarge", "env": {"NCCL_TUNER_PLUGIN": "ofi", "NCCL_NVLS_CHUNKSIZE": "128K"},
      "date": "2024-10-30"}, {"nvls_chunk_bytes": 131072, "nvls_tree_max_chunk_bytes": 524288}),   # the run's own wins
    ({"hardware": "Azure ND H100 v5", "env": {"NCCL_NVLS_CHUNKSIZE": "262144"}}, {"nvls_chunk_bytes": 262144}),
])
def test_nvls_chunk_settings_read_from_the_header(meta, settings):
    """AWS's network plugin adds NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE (512 KiB) on p5 and later from
    April 2024 (ofi_tuner.PLATFORM_ENV), where the header loads it; a run's own setting stands."""
    assert nvls_chunk_settings(meta) == settings


def test_a_bad_nvls_chunk_setting_names_the_dataset_and_variable():
    with pytest.raises(InputError) as e:
        nvls_chunk_settings({"name": "run", "env": {"NCCL_NVLS_CHUNKSIZE": "big"}})
    assert (e.value.source, e.value.field, e.value.value) == ("run", "env.NCCL_NVLS_CHUNKSIZE", "big")
    with pytest.raises(InputError) as e:
        topo_from_hint({"preset": "hgx-b200", "nvls_chunk_bytes": 0}, source="run.jsonl")
    assert (e.value.source, e.value.field) == ("run.jsonl", "meta.topology.nvls_chunk_bytes")
    t = topo_from_hint({"preset": "hgx-b200", "nvls_tree_max_chunk_bytes": 524288})
    assert t.nvls_chunks == NvlsChunks(131072, 524288)


def _nvls_2g(capsys, *extra):
    """(time_s, header) of an NVLS all_reduce of 2 GiB on one 8-GPU H100 server, as ``gpunetsim collective``."""
    from gpunetsim.cli import main
    argv = ["collective", "--topology", "dgx-h100", "--algo", "nvls", "-b", "2G", "-e", "2G", "--engine", "closed",
            *extra]
    assert main([*argv, "--json"]) == 0
    time_s = __import__("json").loads(capsys.readouterr().out)["time_s"]
    assert main(argv) == 0
    return time_s, capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize("version, chunks", [((2, 22), True), ((2, 21), False), (None, True)])
def test_cli_plugin_takes_the_corpus_nvls_chunks(capsys, version, chunks):
    """--tuner-plugin aws-ofi:p5.48xlarge applies the 512 KiB NVLS chunks AWS's network plugin sets
    (ofi_tuner.plugin_nvls_chunks), as the corpus does for a header that loads the plugin (nvls_chunk_settings):
    the CLI's prediction differs from the one without the flag (it did not before) and equals the corpus' path on
    an NCCL that reads them (2.22 on: NvlsChunks.taken_by); the corpus' 2.21 keeps NCCL's defaults."""
    from validation.compare import Predictor
    from simulator.collectives.params import load_calibration
    with_plugin, header = _nvls_2g(capsys, "--tuner-plugin", "aws-ofi:p5.48xlarge")
    without, _ = _nvls_2g(capsys)
    assert with_plugin != pytest.approx(without, rel=1e-3)
    assert header.endswith(", tuner plugin=aws-ofi:p5.48xlarge (NVLS chunks 512 KiB), params=datasheet")
    meta = {"hardware": "1x AWS p5.48xlarge", "env": {"NCCL_TUNER_PLUGIN": "ofi"}, "date": "2024-10-30"}
    topo = topo_from_hint({"preset": "dgx-h100", "tuner_plugin": tuner_plugin(meta), **nvls_chunk_settings(meta),
                           **({"nccl_version": f"{version[0]}.{version[1]}"} if version else {})})
    corpus = Predictor(topo, load_calibration(None)).model(8, None).best("all_reduce", 2 << 30, "nvls", "simple")[0]
    assert corpus == pytest.approx(with_plugin if chunks else without, rel=1e-9)


def test_api_plugin_takes_the_nvls_chunks():
    """gpunetsim.collective(tuner_plugin=...) takes the chunks too, in both engines."""
    import gpunetsim
    kw = dict(topology="dgx-h100", size_bytes="2G", algo="nvls")
    for engine in ("closed", "des"):
        assert gpunetsim.collective(**kw, engine=engine, tuner_plugin="aws-ofi:p5.48xlarge").time_s < \
            gpunetsim.collective(**kw, engine=engine).time_s * 0.995
    assert ofi_tuner.plugin_nvls_chunks("p5en.48xlarge") == NvlsChunks(524288, 524288)
    assert ofi_tuner.plugin_nvls_chunks(None) is None
