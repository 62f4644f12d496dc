"""Preset clusters as tables (issue 13): the same links, routes and hop classes as their graphs.

The run-time path builds presets without a graph and without validating them; these tests are
where every generated preset is validated and checked against the graph router, pair by pair.
"""

import itertools

import pytest

import topologies
from simulator.core.errors import InputError
from simulator.collectives.nccl_model import NcclInputs
from simulator.network.closed_form import CostModel
from topologies.fabric import FabricSpec
from topologies.preset_cluster import PresetCluster
from topologies.preset_routing import PresetRouter
from topologies.routing import Router, router_for

CASES = [
    ("dgx-h100", 1, {}), ("dgx-h100", 3, dict(fabric=FabricSpec(hosts_per_leaf=2))),
    ("hgx-h200", 2, dict(gpus_per_node=4)), ("hgx-b200", 2, dict(fabric=FabricSpec(nics=4, oversubscription=2))),
    ("dgx-a100", 4, dict(gpus_per_node=4, fabric=FabricSpec(fabric="fat-tree", hosts_per_leaf=2))),
    ("pcie-gen3", 2, dict(p2p=False, fabric=FabricSpec(fabric="fat-tree"))),
    ("pcie-gen4", 2, dict(gpus_per_node=4, cpu_sockets=1)), ("pcie-gen5", 3, dict(gpus_per_node=2, sockets=True)),
    ("pcie-gen5", 3, dict(fabric=FabricSpec(nics=1, hosts_per_leaf=1, transport="roce"))),
    ("dgx-h100", 2, dict(nvls=False)),
]


@pytest.fixture(params=CASES, ids=lambda c: f"{c[0]}x{c[1]}-{'-'.join(sorted(c[2]))}")
def routers(request):
    preset, nodes, kw = request.param
    tables = topologies.prepare(preset, nodes=nodes, **kw)
    G = topologies.build(preset, nodes=nodes, **kw)
    topologies.validate(G)             # generated presets are validated here, not on every run
    return PresetRouter(tables), Router(G)


def test_prepare_gives_tables_for_presets_and_graphs_for_files(tmp_path):
    assert isinstance(topologies.prepare("dgx-h100", nodes=2), PresetCluster)
    assert isinstance(router_for(topologies.prepare("dgx-h100")), PresetRouter)


def test_same_link_table(routers):
    fast, graph = routers
    assert fast.link_names == graph.link_names
    assert fast.kind == graph.kind
    assert fast.capacity_Bps == graph.capacity_Bps and fast.latency_s == graph.latency_s
    assert fast.gpus == graph.gpus and fast.info == graph.info


def test_same_route_and_hop_class_for_every_pair(routers):
    fast, graph = routers
    pairs = list(itertools.product(graph.gpus, repeat=2))
    routes, kinds = fast.hop_group(pairs)
    assert list(routes) == [graph.route(a, b) for a, b in pairs]
    assert {fast.hop_kinds[k] for k in kinds} == {graph.hop(a, b)[1:4] for a, b in pairs}
    for a, b in pairs[:: max(1, len(pairs) // 40)]:
        assert fast.hop(a, b)[:4] == graph.hop(a, b)[:4]
        assert fast.path(a, b) == graph.path(a, b)


def test_same_neighbourhoods(routers):
    fast, graph = routers
    for h in range(graph.info.hosts):
        for kind in ("gpu", "nic", "nvswitch", "cpu"):
            nodes = graph.host_nodes(h, kind)
            assert fast.host_nodes(h, kind) == nodes
            for n in nodes:
                assert fast.neighbors(n) == graph.neighbors(n) and fast.node_kind(n) == kind
    assert NcclInputs.from_router(fast) == NcclInputs.from_router(graph)
    assert [fast.to_host_memory(g) for g in graph.gpus] == [graph.to_host_memory(g) for g in graph.gpus]


def test_same_predictions_at_scale():
    tables = topologies.prepare("dgx-h100", nodes=40, fabric=FabricSpec(hosts_per_leaf=16))
    fast, graph = CostModel(tables), CostModel(tables.to_graph())
    for op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
        for size in (1 << 10, 1 << 30):
            assert fast.best(op, size) == graph.best(op, size)


@pytest.mark.parametrize("kw, field", [(dict(nodes=0), "nodes"), (dict(gpus_per_node=9), "gpus"),
                                       (dict(cpu_sockets=3), "cpu_sockets"),
                                       (dict(fabric=FabricSpec(oversubscription=0.5)), "oversubscription")])
def test_tables_refuse_what_the_graph_refuses(kw, field):
    for make in (topologies.prepare, topologies.build):
        with pytest.raises(InputError) as e:
            make("dgx-h100", **kw)
        assert e.value.field == field


@pytest.mark.parametrize("preset, nodes, kw, hosts", [
    ("dgx-h100", 4, dict(fabric=FabricSpec(hosts_per_leaf=2, oversubscription=2)), (0, 2)),
    ("pcie-gen4", 3, dict(gpus_per_node=4), (1, 2)),
])
def test_a_jobs_view_routes_as_its_own_subgraph(preset, nodes, kw, hosts):
    """Router.for_hosts (how shared clusters plan each job, no graph) sees what the router of the
    cluster's graph restricted to the job's servers sees: GPUs, info, routes (by node names)."""
    from simulator.training.cluster import job_graph
    view = router_for(topologies.prepare(preset, nodes=nodes, **kw)).for_hosts(hosts)
    own = Router(job_graph(topologies.build(preset, nodes=nodes, **kw), hosts))
    assert view.gpus == own.gpus and view.info == own.info
    assert NcclInputs.from_router(view) == NcclInputs.from_router(own)
    for a, b in itertools.product(own.gpus, repeat=2):
        assert view.path(a, b) == own.path(a, b)
    graph_view = Router(topologies.build(preset, nodes=nodes, **kw)).for_hosts(hosts)
    assert graph_view.gpus == own.gpus and graph_view.info == own.info
