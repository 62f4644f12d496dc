"""CollNet (SHARP) Direct and Chain, NVLS with SHARP across servers, and PAT: plans, both engines,
availability and errors, NCCL's tuner entries and choices, the --sharp/--collnet switches."""

import pytest

import topologies
from simulator.collectives.innet import pat_steps
from simulator.collectives.params import Parameters
from simulator.core.errors import InputError
from simulator.network.closed_form import CostModel
from simulator.network.engine import simulate_plan

NO_FILL = Parameters().with_values({"nvls_fill_rounds": 0.0})
SHARP = topologies.FabricSpec(sharp=True)


def sharp_cluster(preset="dgx-h100", nodes=4, tables=False, **kw):
    make = topologies.prepare if tables else topologies.build
    return make(preset, nodes=nodes, fabric=topologies.FabricSpec(sharp=True, **kw))


@pytest.mark.parametrize("algo", ["collnet_direct", "collnet_chain", "nvls"])
@pytest.mark.parametrize("preset, nodes, per_leaf", [("dgx-h100", 2, 32), ("dgx-h100", 4, 2), ("hgx-b200", 3, 32)])
def test_collnet_discrete_event_agrees_with_closed_form(algo, preset, nodes, per_leaf):
    m = CostModel(sharp_cluster(preset, nodes, hosts_per_leaf=per_leaf))
    shape = m.shape("all_reduce", algo, "simple")
    for size in (8, 1 << 20, 1 << 27, 1 << 31):
        des, _ = simulate_plan(m.router, m.params, shape.plan, size)
        assert des == pytest.approx(shape.time_s(size), rel=0.01), size


@pytest.mark.parametrize("op", ["all_gather", "reduce_scatter"])
@pytest.mark.parametrize("nodes, per_leaf", [(2, 32), (8, 32), (13, 4)])
def test_pat_discrete_event_agrees_with_closed_form(op, nodes, per_leaf):
    m = CostModel(topologies.build("dgx-h100", nodes=nodes, gpus_per_node=1,
                                   fabric=topologies.FabricSpec(hosts_per_leaf=per_leaf)))
    shape = m.shape(op, "pat", "simple")
    for size in (8, 1 << 20, 1 << 27, 1 << 31):
        des, _ = simulate_plan(m.router, m.params, shape.plan, size)
        assert des == pytest.approx(shape.time_s(size), rel=0.01), size


@pytest.mark.parametrize("algo, op, kw", [("collnet_direct", "all_reduce", {}), ("collnet_chain", "all_reduce", {}),
                                          ("nvls", "all_reduce", {}), ("pat", "all_gather", {"gpus_per_node": 1})])
def test_preset_tables_time_the_same_as_the_graph(algo, op, kw):
    """PresetRouter (tables, no graph) and Router (graph) give the same plan times."""
    fabric = topologies.FabricSpec(sharp=True, hosts_per_leaf=2)
    g = CostModel(topologies.build("dgx-h100", nodes=5, fabric=fabric, **kw))
    t = CostModel(topologies.prepare("dgx-h100", nodes=5, fabric=fabric, **kw))
    for size in (1 << 20, 1 << 30):
        assert t.time_s(op, size, algo, "simple") == pytest.approx(g.time_s(op, size, algo, "simple"), rel=1e-12)


@pytest.mark.parametrize("tables", [False, True])
def test_both_directions_of_a_link_are_a_pair(tables):
    """innet.reverse(link) = link ^ 1: the routers number a link's two directions 2i, 2i+1."""
    r = CostModel(sharp_cluster(nodes=3, tables=tables, hosts_per_leaf=2)).router
    names = r.link_names
    assert all(names[i ^ 1] == (b, a) for i, (a, b) in enumerate(names))


def test_sharp_tree_climbs_to_the_spine_only_when_heads_span_leaves():
    one_leaf = CostModel(sharp_cluster(nodes=4)).shape("all_reduce", "collnet_direct", "simple").plan
    two_leaves = CostModel(sharp_cluster(nodes=4, hosts_per_leaf=2)).shape("all_reduce", "collnet_direct",
                                                                           "simple").plan
    tree = [g for g in one_leaf.groups if "sharp r0" in g.label][0]
    spread = [g for g in two_leaves.groups if "sharp r0" in g.label][0]
    # each head: GPU -> PCIe switch -> NIC -> leaf (3 links up) and back; 2 leaves add 2 uplinks x 2 ways
    assert len(tree.routes) == 4 * 3 * 2
    assert len(spread.routes) == 4 * 3 * 2 + 2 * 2


def test_collnet_direct_moves_one_share_per_head_over_the_network():
    """Slow NICs make the network the limit: each head NIC carries S/8 each way at 0.92 (net) x 0.85 (SHARP)."""
    nic = 25e9 / 8                          # 25 Gb/s per NIC, in bytes/s
    m = CostModel(topologies.build("dgx-h100", nodes=4, fabric=topologies.FabricSpec(sharp=True, nic_Bps=nic)))
    size = 1 << 32
    plan = m.shape("all_reduce", "collnet_direct", "simple").plan
    t = m.time_s("all_reduce", size, "collnet_direct", "simple")
    assert t == pytest.approx(plan.call_overhead_s + plan.latency_s + size / 8 / (nic * 0.92 * 0.85), rel=1e-6)


@pytest.mark.parametrize("n", [2, 5, 8, 16])
def test_pat_moves_n_minus_one_blocks_per_nic(n):
    """One GPU per server: each NIC carries (n-1)/n x S at 0.92 (net) x 0.75 (NCCL's PAT factor)."""
    m = CostModel(topologies.build("dgx-h100", nodes=n, gpus_per_node=1))
    plan = m.shape("all_gather", "pat", "simple").plan
    size = 1 << 32
    nic = 400e9 / 8
    assert m.time_s("all_gather", size, "pat", "simple") == pytest.approx(
        plan.call_overhead_s + plan.latency_s + (n - 1) / n * size / (nic * 0.92 * 0.75), rel=1e-6)
    assert sum(b for _, b in pat_steps(n)) == n - 1


def test_latencies_are_nccls():
    """CollNet Direct 2(3.7 + 7 x 0.4) + 31, Chain 2 x 7 x 2.8 + 30, NVLS+SHARP 25 + 18, PAT on 8 servers
    8 + 3 x 14/3.5 + 8 x 2.8 us; each network step adds the path's wire latency."""
    m = CostModel(sharp_cluster(nodes=4))
    direct = m.shape("all_reduce", "collnet_direct", "simple").plan.latency_s
    wire = max(w for _, w in m.planner._layouts[("all_reduce", "collnet_direct", tuple(m.router.gpus))].inter)
    assert direct == pytest.approx((2 * (3.7 + 7 * 0.4) + 31) * 1e-6 + wire)
    assert m.shape("all_reduce", "collnet_chain", "simple").plan.latency_s == pytest.approx(
        (2 * 7 * 2.8 + 30) * 1e-6 + wire)
    assert m.shape("all_reduce", "nvls", "simple").plan.latency_s == pytest.approx(43e-6 + wire)
    p = CostModel(topologies.build("dgx-h100", nodes=8, gpus_per_node=1))
    lat = p.shape("all_gather", "pat", "simple").plan.latency_s
    pw = max(w for _, w in p.planner._layouts[("all_gather", "pat", tuple(p.router.gpus))].inter)
    assert lat == pytest.approx((8 + 3 * 4.0 + 8 * 2.8) * 1e-6 + 3 * pw)


def test_nccl_collnet_entries_on_four_dgx_h100():
    """NCCL's model (tuning.cc + search.cc): Direct 8 heads x 48 GB/s (400 Gb/s NIC) x 0.85 x 0.5 = 163.2,
    44 us; Chain 12 channels (2 per NIC: 24 GB/s, bwIntra raised to 30) x 0.5 = 180, 69.2 us; NVLS with
    SHARP 8 x min(40 x 0.85 x 7/8 x 2, 48) x 32/62 = 198.2, 43 us."""
    t = CostModel(sharp_cluster(nodes=4)).nccl.table
    assert t[("all_reduce", "collnet_direct", "simple")] == pytest.approx((44.0, 163.2))
    assert t[("all_reduce", "collnet_chain", "simple")] == pytest.approx((69.2, 180.0))
    assert t[("all_reduce", "nvls", "simple")] == pytest.approx((43.0, 8 * 48 * 32 / 62))


def test_nccl_pat_entry():
    """8 servers x 1 H100: 2 channels x 25.2 GB/s (PCIe gen5 x 0.8 / 2) x 0.75 = 37.8 GB/s, not converted
    to algorithm bandwidth; 8 + 3 x 14/3.5 + 8 x 2.8 = 42.4 us."""
    t = CostModel(topologies.build("dgx-h100", nodes=8, gpus_per_node=1)).nccl.table
    assert t[("all_gather", "pat", "simple")] == pytest.approx((42.4, 37.8))
    assert t[("reduce_scatter", "pat", "simple")] == t[("all_gather", "pat", "simple")]


@pytest.mark.parametrize("nodes, nvls, size, expected", [
    # with SHARP NCCL runs NVLS across servers (bus 8 x 48 at 43 us beats everything from 64 KiB up on 4+)
    (4, None, 1 << 30, "nvls"), (16, None, 1 << 16, "nvls"),
    # two servers: NVLS-Tree's doubled network speed (246 GB/s) still wins large sizes
    (2, None, 1 << 30, "nvls_tree"),
    # NVLS off: CollNet Direct's 44 us for latency, Chain's 180 GB/s for bandwidth
    (4, False, 1 << 20, "collnet_direct"), (4, False, 1 << 28, "collnet_chain"), (16, False, 1 << 30, "collnet_chain")])
def test_auto_picks_what_nccls_model_picks_with_sharp(nodes, nvls, size, expected):
    m = CostModel(topologies.build("dgx-h100", nodes=nodes, fabric=SHARP, nvls=nvls))
    assert m.best("all_reduce", size)[1] == expected


@pytest.mark.parametrize("nodes, size, expected", [(64, 1 << 20, "pat"), (64, 1 << 24, "pat"), (64, 1 << 28, "ring"),
                                                   (8, 1 << 16, "pat"), (8, 1 << 24, "ring"), (2, 1 << 16, "ring")])
def test_auto_picks_pat_at_scale_for_small_all_gather(nodes, size, expected):
    """PAT's 8 + log2 N x 4 + 2.8 N us against the ring's (N-1) network steps; its 0.75 x bandwidth loses
    at large sizes; at 2 servers the ring's LL is faster."""
    m = CostModel(topologies.prepare("dgx-h100", nodes=nodes, gpus_per_node=1))
    assert m.best("all_gather", size)[1] == expected
    assert m.best("reduce_scatter", size)[1] == expected


def test_collnet_is_off_without_sharp_and_on_with_it():
    assert "collnet_direct" not in {a for a, _ in CostModel(topologies.build("dgx-h100", nodes=2)).choices("all_reduce")}
    on = {a for a, _ in CostModel(sharp_cluster(nodes=2)).choices("all_reduce")}
    assert {"collnet_direct", "collnet_chain", "nvls"} <= on
    off = CostModel(topologies.build("dgx-h100", nodes=2, fabric=SHARP, collnet=False))
    assert not {"collnet_direct", "collnet_chain", "nvls"} & {a for a, _ in off.choices("all_reduce")}


def test_collnet_errors_name_the_field():
    with pytest.raises(InputError, match="--sharp") as e:
        topologies.build("dgx-h100", nodes=2, collnet=True)
    assert e.value.field == "collnet"
    with pytest.raises(InputError, match="InfiniBand") as e:
        topologies.build("dgx-h100", nodes=2, fabric=topologies.FabricSpec(sharp=True, transport="roce"))
    assert e.value.field == "sharp"
    with pytest.raises(InputError, match="several servers"):
        CostModel(sharp_cluster(nodes=1)).shape("all_reduce", "collnet_chain", "simple")
    with pytest.raises(InputError, match="NVSwitch"):
        CostModel(topologies.build("pcie-gen5", nodes=2, fabric=SHARP)).shape("all_reduce", "collnet_direct",
                                                                             "simple")
    assert "collnet_chain" in {a for a, _ in CostModel(topologies.build("pcie-gen5", nodes=2, fabric=SHARP)).choices(
        "all_reduce")}


def test_pat_needs_one_gpu_per_server():
    with pytest.raises(InputError, match=r"one GPU per server.*8 GPUs per server.*--gpus 1") as e:
        CostModel(topologies.build("dgx-h100", nodes=4)).choices("all_gather", "pat")
    assert e.value.field == "algo"
    with pytest.raises(InputError, match="several servers"):
        CostModel(topologies.build("dgx-h100", gpus_per_node=1)).choices("all_gather", "pat")
    with pytest.raises(InputError, match="not available for all_reduce"):
        CostModel(topologies.build("dgx-h100", nodes=4, gpus_per_node=1)).choices("all_reduce", "pat")
    with pytest.raises(InputError, match="simple protocol only"):
        CostModel(topologies.build("dgx-h100", nodes=4, gpus_per_node=1)).choices("all_gather", "pat", "ll")


FILE = """name: two-servers-sharp
{sharp}
nodes:
  - {{name: a.gpu0, host: 0}}
  - {{name: a.nic0, kind: nic, host: 0}}
  - {{name: b.gpu0, host: 1}}
  - {{name: b.nic0, kind: nic, host: 1}}
  - {{name: sw0, kind: {switch}}}
links:
  - {{a: a.gpu0, b: a.nic0, kind: pcie, bandwidth: "64 GB/s"}}
  - {{a: b.gpu0, b: b.nic0, kind: pcie, bandwidth: "64 GB/s"}}
  - {{a: a.nic0, b: sw0, kind: net, bandwidth: "400 Gb/s"}}
  - {{a: b.nic0, b: sw0, kind: net, bandwidth: "400 Gb/s"}}
"""


def test_topology_file_sharp_field(tmp_path):
    switch = "leaf"
    f = tmp_path / "sharp.yaml"
    f.write_text(FILE.format(sharp="sharp: true", switch=switch))
    m = CostModel(topologies.build(str(f)))
    assert {"collnet_chain"} <= {a for a, _ in m.choices("all_reduce")}
    assert "pat" in {a for a, _ in m.choices("all_gather")}
    # one 400 Gb/s NIC per server, S each way through the switch: S / (50 GB/s x 0.92 x 0.85)
    plan = m.shape("all_reduce", "collnet_chain", "simple").plan
    assert m.time_s("all_reduce", 1 << 30, "collnet_chain", "simple") == pytest.approx(
        plan.call_overhead_s + plan.latency_s + (1 << 30) / (50e9 * 0.92 * 0.85), rel=1e-6)
    assert "collnet_chain" not in {a for a, _ in CostModel(topologies.build(str(f), collnet=False)).choices(
        "all_reduce")}
    f.write_text(FILE.format(sharp="sharp: yes please", switch=switch))
    with pytest.raises(InputError, match="true or false") as e:
        topologies.build(str(f))
    assert e.value.field == "sharp"


def test_cli_rejects_pat_on_eight_gpus_per_server_before_any_output(capsys):
    from gpunetsim.cli import main
    assert main(["collective", "--nodes", "4", "--op", "all_gather", "--algo", "pat", "-b", "1M", "-e", "1M"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "algo" in err and "--gpus 1" in err and len(err.strip().splitlines()) == 1
    assert main(["collective", "--nodes", "4", "--collnet", "on", "-b", "1M", "-e", "1M"]) == 2
    assert "collnet" in capsys.readouterr().err


def test_accuracy_scan_finds_collnet_and_pat_headers(tmp_path):
    import json
    from validation.accuracy_innet import scan_headers
    metas = {"a": {"env": {"NCCL_COLLNET_ENABLE": "1"}}, "b": {"env": {"NCCL_ALGO": "PAT"}},
             "c": {"env": {"NCCL_ALGO": "Ring"}, "measured_algo": "NVLS (patched NCCL)"}, "d": {"env": {}}}
    for name, extra in metas.items():
        (tmp_path / f"{name}.jsonl").write_text(json.dumps({"kind": "meta", "name": name, **extra}) + "\n")
    assert scan_headers(tmp_path) == ["a", "b"]


def test_accuracy_section_does_not_change_when_other_data_is_added(tmp_path):
    """Section 10 names the CollNet/PAT datasets only, never the total: a data commit leaves it as it is."""
    import json
    from validation.accuracy_innet import evaluate
    (tmp_path / "a.jsonl").write_text(json.dumps({"kind": "meta", "name": "a", "env": {}}) + "\n")
    before = evaluate(tmp_path)[0]
    (tmp_path / "b.jsonl").write_text(json.dumps({"kind": "meta", "name": "b", "env": {}}) + "\n")
    assert evaluate(tmp_path)[0] == before and "CollNet or PAT: none, so" in "\n".join(before)
