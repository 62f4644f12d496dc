import json

import pytest

import topologies
from simulator.core.errors import InputError
from topologies.routing import Router


@pytest.mark.parametrize("preset, gpus, nvlink_GBps", [
    ("dgx-h100", 8, 450), ("hgx-h200", 8, 450), ("dgx-a100", 8, 300)])
def test_nvlink_presets(preset, gpus, nvlink_GBps):
    G = topologies.build(preset)
    g = topologies.gpus(G)
    assert len(g) == gpus
    nv = [d["bw_Bps"] for u, v, d in G.edges(g[0], data=True) if d["kind"] == "nvlink"]
    assert nv == [nvlink_GBps * 1e9]


def test_gpus_option_keeps_first_gpus():
    G = topologies.build("hgx-h200", gpus_per_node=4)
    assert topologies.gpus(G) == [f"h0.gpu{i}" for i in range(4)]


def test_multi_node_has_one_nic_per_gpu_and_a_fabric():
    G = topologies.build("dgx-h100", nodes=4)
    assert len(topologies.gpus(G)) == 32
    nics = [n for n, d in G.nodes(data=True) if d["kind"] == "nic"]
    assert len(nics) == 32
    assert all(d["bw_Bps"] == 50e9 for _, _, d in G.edges("h0.nic0", data=True) if d["kind"] == "net")


def test_rail_route_uses_destination_rail_via_pxn():
    R = Router(topologies.build("dgx-h100", nodes=2))
    assert R.path("h0.gpu0", "h1.gpu3") == ["h0.gpu0", "h0.nvswitch", "h0.gpu3", "h0.pcie3", "h0.nic3",
                                            "leaf.g0.r3", "h1.nic3", "h1.pcie3", "h1.gpu3"]


def test_no_p2p_routes_through_cpu():
    R = Router(topologies.build("pcie-gen4", gpus_per_node=2, p2p=False))
    path = R.path("h0.gpu0", "h0.gpu1")
    assert "h0.cpu0" in path
    assert R.route_class(R.route("h0.gpu0", "h0.gpu1")) == "shm"


def test_oversubscription_cuts_spine_uplinks():
    fab = topologies.FabricSpec(oversubscription=4.0, hosts_per_leaf=2)
    G = topologies.build("dgx-h100", nodes=4, fabric=fab)
    assert G.edges["leaf.g0.r0", "spine"]["bw_Bps"] == pytest.approx(2 * 50e9 / 4)


def _write(tmp_path, data, name="topo.yaml"):
    p = tmp_path / name
    p.write_text(json.dumps(data) if name.endswith(".json") else __import__("yaml").safe_dump(data))
    return p


GOOD = {"name": "pair", "nodes": [{"name": "a", "kind": "gpu"}, {"name": "b", "kind": "gpu"}],
        "links": [{"a": "a", "b": "b", "kind": "nvlink", "bandwidth": "100 GB/s", "latency": "1 us"}]}


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_topology_file_loads_with_units(tmp_path, suffix):
    G = topologies.load_topology(_write(tmp_path, GOOD, f"t.{suffix}"))
    assert G.edges["a", "b"]["bw_Bps"] == 100e9 and G.edges["a", "b"]["latency_s"] == pytest.approx(1e-6)


@pytest.mark.parametrize("mutate, field, value", [
    (lambda d: d["links"][0].update(bandwidth="100 GX/s"), "links[0].bandwidth", "100 GX/s"),
    (lambda d: d["links"][0].update(bandwidth="-3 GB/s"), "links[0].bandwidth", "-3 GB/s"),
    (lambda d: d["links"][0].update(bandwidth="0 GB/s"), "links[0].bandwidth", "0 GB/s"),
    (lambda d: d["links"][0].update(b="c"), "links[0].b", "c"),
    (lambda d: d["links"][0].update(kind="warp"), "links[0].kind", "warp"),
    (lambda d: d["nodes"].append({"name": "c", "kind": "gpu"}), "nodes.c", "c"),
    (lambda d: d["nodes"][0].update(kind="tpu"), "nodes[0].kind", "tpu"),
    (lambda d: d.update(colour="red"), "colour", "colour"),
    (lambda d: d["nodes"][0].update(name=["a"]), "nodes[0].name", ["a"]),        # was read as the text "['a']"
    (lambda d: d["links"][0].update(a=["a"]), "links[0].a", ["a"]),
    (lambda d: d["nodes"][0].update(host=True), "nodes[0].host", True),          # was host 1
])
def test_bad_topology_files_name_field_and_value(tmp_path, mutate, field, value):
    data = json.loads(json.dumps(GOOD))
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as e:
        topologies.load_topology(path)
    msg = str(e.value)
    assert str(path) in msg and field in msg and repr(value) in msg


def test_a_numeric_node_name_is_its_text_for_links_too(tmp_path):
    """``name: 0`` and a link's ``a: 0`` name one node (the node was "0", the link end 0: 'link to a missing node')."""
    data = json.loads(json.dumps(GOOD))
    data["nodes"][0]["name"], data["links"][0]["a"] = 0, 0
    G = topologies.load_topology(_write(tmp_path, data))
    assert G.edges["0", "b"]["bw_Bps"] == 100e9


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("nodes: [\n  - {name: a\n")
    with pytest.raises(InputError) as e:
        topologies.load_topology(p)
    assert "broken.yaml" in str(e.value) and "line" in str(e.value)


def test_unknown_preset():
    with pytest.raises(InputError, match="unknown topology"):
        topologies.build("dgx-z900")


@pytest.mark.parametrize("preset, nodes, p2p", [("dgx-h100", 3, None), ("pcie-gen4", 2, False), ("dgx-a100", 2, None)])
def test_template_routes_equal_plain_routes(preset, nodes, p2p):
    """Identical servers sharing route templates give exactly the routes of routing each server alone."""
    import itertools
    G = topologies.build(preset, nodes=nodes, p2p=p2p)
    R, plain = Router(G), Router(G)
    assert R._host_maps
    plain._host_maps = {}
    for a, b in itertools.permutations(R.gpus, 2):
        assert R.route(a, b) == plain.route(a, b)
        p = R.path(a, b)
        assert p[0] == a and p[-1] == b and R.route(a, b) == tuple(R.link_id[(x, y)] for x, y in zip(p, p[1:]))


def test_cpu_sockets_option_and_shm_class_across_the_root_complex():
    one = Router(topologies.build("pcie-gen4", gpus_per_node=4, cpu_sockets=1))
    two = Router(topologies.build("pcie-gen4", gpus_per_node=4, cpu_sockets=2))
    assert "h0.cpu1" not in one.G and "h0.cpu1" in two.path("h0.gpu1", "h0.gpu2")
    assert two.route_class(two.route("h0.gpu0", "h0.gpu1")) == "pcie"     # same switch: P2P
    assert two.route_class(two.route("h0.gpu1", "h0.gpu2")) == "shm"      # through the CPU: host memory
    with pytest.raises(InputError, match="1 or 2"):
        topologies.build("pcie-gen4", cpu_sockets=4)


def test_nvlink_usable_follows_nccls_per_link_figures():
    """An NVLink carries NCCL's per-link share of its datasheet rate (src/graph/topo.h: 20.0 of 25 GB/s on
    NVLink3, 20.6 of 25 on NVLink4, 40.1 of 50 on NVLink5) relative to Hopper's, which link_efficiency.nvlink
    stands for; the graph keeps the datasheet bandwidth, both routers carry bandwidth x usable."""
    from topologies.preset_routing import PresetRouter
    from topologies.presets import nvlink_usable
    assert nvlink_usable(90) == 1.0
    assert nvlink_usable(80) == pytest.approx((20.0 / 25) / (20.6 / 25))
    assert nvlink_usable(100) == pytest.approx((40.1 / 50) / (20.6 / 25))
    assert nvlink_usable(70) == nvlink_usable(80) and nvlink_usable(60) == 1.0
    assert nvlink_usable(103) == nvlink_usable(100) and nvlink_usable(89) == nvlink_usable(80)
    # NCCL's ncclTopoNVLinkBw: SM86 (A40/A30-class NVLink bridges) has its own 12.0, not SM80's; its datasheet rate
    # per link differs by product, so it is an unknown generation here, not Ampere's share (review s15 #17)
    assert nvlink_usable(86) == 1.0
    for preset, cc, datasheet_GBps in (("dgx-a100", 80, 300), ("dgx-h100", 90, 450), ("hgx-b200", 100, 900)):
        G = topologies.build(preset)
        assert {d["bw_Bps"] for _, _, d in G.edges(data=True) if d["kind"] == "nvlink"} == {datasheet_GBps * 1e9}
        for r in (Router(G), PresetRouter(topologies.prepare(preset))):
            nv = [c for c, k in zip(r.capacity_Bps, r.kind) if k == "nvlink"]
            assert nv and nv == pytest.approx([datasheet_GBps * 1e9 * nvlink_usable(cc)] * len(nv))


@pytest.mark.parametrize("preset", ["dgx-h100", "hgx-b200", "gb200-nvl72"])
def test_peer_to_peer_off_routes_go_through_host_memory_only(preset):
    """P2P off: a GPU-to-GPU route climbs to a CPU and down to the peer, crossing no NVLink and no GPU but its two
    ends, in both routers. Each leg used to allow both ends, so a cross-socket pair went up to the CPU, back down
    to the sender and over NVLink to the peer; and a route to another server took PXN (over NVLink to the NIC's
    GPU), which needs peer-to-peer (rv20)."""
    from topologies.routing import Router, router_for
    for router in (router_for(topologies.prepare(preset, nodes=2, p2p=False)),
                   Router(topologies.build(preset, nodes=2, p2p=False))):
        here = [g for g in router.gpus if router.host_of(g) == router.host_of(router.gpus[0])][:8]
        for a in here:
            for b in here:
                if a == b:
                    continue
                names = [router.link_names[i] for i in router.route(a, b)]
                assert {router.kind[i] for i in router.route(a, b)} <= {"pcie", "socket"}, (a, b, names)
                nodes = [u for u, _ in names] + [names[-1][1]]
                assert nodes.count(a) == 1 and nodes.count(b) == 1, names
                assert any("cpu" in n for n in nodes), names
            there = next(g for g in router.gpus if router.host_of(g) != router.host_of(a))
            names = [router.link_names[i] for i in router.route(a, there)]      # no PXN: it rides NVLink
            assert "nvlink" not in {router.kind[i] for i in router.route(a, there)}, names
            nodes = [u for u, _ in names] + [names[-1][1]]
            assert [n for n in nodes if router.node_kind(n) == "gpu"] == [a, there], names
