"""GPUDirect RDMA off (``gdr``): NCCL stages every network byte through host memory.

NCCL turns GPUDirect RDMA off where a GPU and its NIC sit further apart than NCCL_NET_GDR_LEVEL (PXB by
default: on different root ports or sockets, ``nvidia-smi topo -m`` showing NODE or SYS); its net
transport then has the GPU's SMs write to and read from a host buffer that the NIC reads and writes.
"""

from __future__ import annotations

import json

import pytest

import topologies
from simulator.collectives.params import Parameters
from simulator.collectives.plans import host_staged_uses, layout
from simulator.core.errors import InputError
from simulator.network.closed_form import CostModel
from topologies.graph import cluster_info
from validation.compare import Topo, topo_from_hint
from validation.data import DATA_DIR
from validation.parsers import read_jsonl

GiB = 1 << 30


def _ring_s(gdr: bool | None, preset: str = "hgx-h200", gpus: int = 1, params: Parameters | None = None) -> float:
    m = CostModel(topologies.prepare(preset, nodes=2, gpus_per_node=gpus, gdr=gdr), params or Parameters())
    return m.time_s("all_reduce", GiB, "ring", "simple")


def test_gdr_is_on_unless_said_off():
    assert topologies.prepare("hgx-h200", nodes=2).info.gdr is True
    assert topologies.prepare("hgx-h200", nodes=2, gdr=False).info.gdr is False
    assert cluster_info(topologies.build("hgx-h200", nodes=2, gdr=False)).gdr is False


def test_staging_slows_a_network_bound_ring_by_the_host_memory_factor():
    """One GPU per server: the ring's only hop crosses the network, so staging it through host memory runs its
    network legs at shm_efficiency (0.5) of their rate: half the NIC-bound rate."""
    on, off = _ring_s(None), _ring_s(False)
    assert off > 1.5 * on
    # with host memory as fast as GPUDirect (shm_efficiency 1) the staged ring is the NIC-bound one again
    fast = Parameters().with_values({"shm_efficiency": 1.0})
    assert _ring_s(False, params=fast) == pytest.approx(_ring_s(None, params=fast), rel=1e-9)


def test_gdr_changes_nothing_inside_one_server():
    one = CostModel(topologies.prepare("pcie-gen4", gpus_per_node=2, gdr=False))
    ref = CostModel(topologies.prepare("pcie-gen4", gpus_per_node=2))
    assert one.time_s("all_reduce", GiB, "ring", "simple") == ref.time_s("all_reduce", GiB, "ring", "simple")


def test_socket_groups_are_not_staged_twice():
    """The socket transport stages through the host already and has its own ceiling: gdr off changes nothing."""
    m = CostModel(topologies.prepare("pcie-gen4", nodes=2, gpus_per_node=1, sockets=True, gdr=False))
    lay = layout(m.router, "all_reduce", "ring", m.router.gpus)
    assert lay.groups and all(g.socket for g in lay.groups)
    assert all(host_staged_uses(m.router, g, 0.5) is None for g in lay.groups)


def test_topology_file_field(tmp_path):
    spec = {"name": "two", "gdr": False, "nodes": [{"name": "gpu0", "kind": "gpu"}, {"name": "gpu1", "kind": "gpu"}],
            "links": [{"a": "gpu0", "b": "gpu1", "kind": "pcie", "bandwidth": "25 GB/s"}]}
    f = tmp_path / "t.json"
    f.write_text(json.dumps(spec))
    assert cluster_info(topologies.load_topology(str(f))).gdr is False
    f.write_text(json.dumps({**spec, "gdr": "no"}))
    with pytest.raises(InputError, match="gdr: expected true or false"):
        topologies.load_topology(str(f))


def test_the_l40s_roce_header_says_gdr_and_p2p_off():
    """The L40S RoCE run's source (a Dell R760xa, nvidia-smi topo NODE between GPU and NICs, GPUs on different
    root complexes) is carried into its topology hint, and the hint into the predictor's topology."""
    meta = read_jsonl(DATA_DIR / "public" / "roce_L40S_2node_and_dgxH200_2node_socket_redhat.jsonl").meta
    hint = meta["topology_by_variant"]["l40s_2x2_roce"]
    assert hint["gdr"] is False and hint["p2p"] is False
    topo = topo_from_hint(hint)
    assert topo.gdr is False and topo.p2p is False
    assert Topo("pcie-gen4", 2, 2).build(4).info.gdr is True
    assert topo.build(4).info.gdr is False


def test_cli_no_gdr_flag(capsys):
    """``--no-gdr`` reaches the model: a network-bound ring across two PCIe servers runs at half the rate."""
    from gpunetsim.cli import main
    args = ["collective", "--topology", "pcie-gen4", "--nodes", "2", "--gpus", "1", "--op", "all_reduce",
            "-b", "1G", "-e", "1G", "--algo", "ring", "--engine", "closed", "--json"]
    rates = []
    for extra in ([], ["--no-gdr"]):
        assert main(args + extra) in (0, None)
        rates.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["busbw_GBps"])
    assert rates[1] < 0.6 * rates[0]


def test_api_no_gdr_is_the_flag():
    import gpunetsim
    assert cluster_info(gpunetsim.topology("pcie-gen4", nodes=2, no_gdr=True)).gdr is False
    assert cluster_info(gpunetsim.topology("pcie-gen4", nodes=2)).gdr is True


@pytest.mark.parametrize("engine", ["closed", "des"])
def test_a_tree_across_servers_is_staged_too(engine):
    """A tree's groups join its chains and its network hops: with gdr off its network bytes are staged like a
    ring's (review s18b: the tree's groups lost ``inter`` and ran at the GPUDirect rate), in both engines."""
    from simulator.network.run import run_collective
    times = []
    for gdr in (None, False):
        m = CostModel(topologies.prepare("hgx-h200", nodes=2, gpus_per_node=8, gdr=gdr), Parameters())
        lay = layout(m.router, "all_reduce", "tree", m.router.gpus)
        assert any(host_staged_uses(m.router, g, 0.5) is not None for g in lay.groups) is (gdr is False)
        times.append(run_collective(m, "all_reduce", GiB, "tree", "simple", engine=engine).time_s)
    # only its network legs slow down (review s19): its NVLink chains stay direct, so it is slower, not twice as slow
    assert 1.05 * times[0] < times[1] < 1.5 * times[0]


@pytest.mark.parametrize("key", ["gdr", "p2p"])
def test_a_hint_that_is_not_true_or_false_is_an_error(key):
    """A dataset's ``"gdr": "false"`` built a GDR-on topology (bool("false")); it names the field instead."""
    with pytest.raises(InputError, match=f"meta.topology.{key}"):
        topo_from_hint({"preset": "pcie-gen4", "nodes": 2, key: "false"})
    assert getattr(topo_from_hint({"preset": "pcie-gen4", "nodes": 2, key: False}), key) is False


def test_calibrate_and_compare_take_no_gdr_with_topology():
    """A GDR-off machine measured with ``--topology`` is fitted as one (review s18b #7): without the flag the fit
    folds the staging into link_efficiency, and a later ``--no-gdr`` prediction would stage twice."""
    import argparse
    from validation import cli as vcli
    ap = argparse.ArgumentParser()
    vcli.register(ap.add_subparsers())
    f = str(DATA_DIR / "h200x2_2026-11-26c" / "coll_world2_r15.jsonl")
    args = ap.parse_args(["compare", "--measurements", f, "--topology", "pcie-gen4", "--nodes", "2", "--no-gdr"])
    assert vcli._topo(args).gdr is False and vcli._topo(args).build(2).info.gdr is False
    with pytest.raises(InputError, match="--no-gdr"):
        vcli._load(ap.parse_args(["compare", "--measurements", f, "--no-gdr"]))


def _ring_group(gdr: bool | None, preset: str = "hgx-h200"):
    m = CostModel(topologies.prepare(preset, nodes=2, gpus_per_node=8, gdr=gdr), Parameters())
    return m.router, layout(m.router, "all_reduce", "ring", m.router.gpus).groups[0]


def test_only_the_network_legs_are_staged():
    """GPUDirect RDMA off stages the network legs only: NCCL's P2P transport over NVLink does not need GDR, so a
    ring across two 8-GPU servers keeps every NVLink link's use as it is and counts its network links twice (at
    shm_efficiency 0.5) (review s19: staging slowed every leg, NVLink's included)."""
    router, g = _ring_group(False)
    staged = host_staged_uses(router, g, 0.5)
    assert staged is not None
    plain = dict(zip(g.uses.link_ids, g.uses.link_counts))
    kinds = {router.kind[i] for i in plain}
    assert {"nvlink", "net"} <= kinds
    for link, count in zip(staged.link_ids, staged.link_counts):
        kind = router.kind[link]
        expected = plain[link] if kind == "nvlink" else 2 * plain[link]
        assert count == pytest.approx(expected), (kind, link)
    assert host_staged_uses(*_ring_group(None), 0.5) is None


def test_staged_nvlink_legs_keep_their_share_beside_other_traffic():
    """The plan's wire bytes are the payload's (no staging factor): the staging sits on the network links' uses, so
    an NVLink link a staged ring shares with other traffic sees the ring's true rate there."""
    m = CostModel(topologies.prepare("hgx-h200", nodes=2, gpus_per_node=8, gdr=False), Parameters())
    ref = CostModel(topologies.prepare("hgx-h200", nodes=2, gpus_per_node=8), Parameters())
    on, off = (x.planner.plan("all_reduce", "ring", "simple") for x in (ref, m))
    assert [g.bytes_per_byte for g in off.groups] == pytest.approx([g.bytes_per_byte for g in on.groups])
    for a, b in zip(on.groups, off.groups):
        nv = [i for i, link in enumerate(a.uses.link_ids) if m.router.kind[link] == "nvlink"]
        assert nv and [b.uses.link_counts[i] for i in nv] == [a.uses.link_counts[i] for i in nv]


def test_collnet_is_staged_without_gdr():
    """NCCL's CollNet transport checks GPUDirect RDMA as the net transport does (ncclTopoCheckGdr in
    transport/coll_net.cc) and stages through host buffers without it; CollNet groups were never staged."""
    times = []
    for gdr in (None, False):
        m = CostModel(topologies.prepare("dgx-h100", nodes=4, gdr=gdr,
                                         fabric=topologies.FabricSpec.from_options("fat-tree", "ib", None, None, 1.0,
                                                                                   32, sharp=True)), Parameters())
        times.append(m.time_s("all_reduce", GiB, "collnet_direct", "simple"))
    assert times[1] > 1.3 * times[0]


@pytest.mark.parametrize("p2p, gdr, weighted", [(True, False, False), (True, False, True), (False, None, False),
                                                (False, False, True)])
def test_large_route_tables_are_staged_in_arrays_with_the_loops_numbers(p2p, gdr, weighted):
    """A 4096-GPU tree's groups (RouteTables of 8190 hops) take the numpy path of host_staged_uses (rv20: 0.68 ->
    0.86 s at 4096 GPUs --no-gdr came from the loop); it gives the loop's numbers exactly, float for float (each
    link's uses added in route order), with and without per-route weights, for net legs (GDR off) and SHM hops
    (P2P off)."""
    from dataclasses import replace
    from topologies.route_table import RouteTable
    from topologies.routing import router_for
    router = router_for(topologies.prepare("dgx-h100", nodes=512, p2p=p2p, gdr=gdr))
    lay = layout(router, "all_reduce", "tree", router.gpus)
    big = [g for g in lay.groups if isinstance(g.routes, RouteTable) and g.routes.entries() >= 1024]
    assert big
    flat, pos = big[0].routes.flat_in_order()             # the loop's visiting order: route by route
    assert flat.tolist() == [l for r in big[0].routes for l in r]
    assert pos.tolist() == [k for k, r in enumerate(big[0].routes) for _ in r]
    for i, g in enumerate(big[:4]):
        if weighted:
            g = replace(g, weights=tuple(1.0 + ((k * 7 + i) % 5) / 3 for k in range(len(g.routes))))
        arrays = host_staged_uses(router, g, 0.3)
        assert arrays is not None and arrays is not g.uses
        loop = host_staged_uses(router, replace(g, routes=tuple(g.routes)), 0.3)      # tuples: the loop
        assert arrays.link_ids == loop.link_ids and arrays.link_counts == loop.link_counts
        assert type(arrays.link_counts[0]) is float
