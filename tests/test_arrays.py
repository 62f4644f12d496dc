"""Small work in plain Python, large work in numpy (simulator.core.arrays): both paths give the same
numbers to the last bit, so where the threshold lies never changes a result."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import topologies
from simulator.core import arrays
from simulator.network.closed_form import CostModel
from simulator.network.engine import DesTimer
from simulator.network.fairness import LinkCapacity, _sparse_rates, group_rates, max_min_rates
from topologies.routes import LinkUses

PLAIN, ARRAYS = 10**12, 0          # thresholds: never / always numpy


def _everything(preset: str, nodes: int, gpus: int | None, **kw) -> list:
    """Routes, link uses, rates, closed-form shapes and DES times of every plan of every op."""
    m = CostModel(topologies.prepare(preset, nodes=nodes, gpus_per_node=gpus, **kw))
    des = DesTimer(m.router, m.params)
    out = []
    for op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "send_recv"):
        for algo, proto in m.choices(op):
            plan = m.planner.plan(op, algo, proto)
            s = m.shape(op, algo, proto)
            out.append((op, algo, proto, [g.routes for g in plan.groups],
                        [(g.uses.link_ids, g.uses.link_counts) for g in plan.groups],
                        s.alpha_s, s.beta_s_per_byte, s.bottleneck, des.time(plan, 1 << 20), des.time(plan, 1 << 30)))
    return out


@pytest.mark.parametrize("preset, nodes, gpus, kw", [
    ("dgx-h100", 1, None, {}), ("dgx-h100", 3, None, dict(fabric=topologies.FabricSpec(hosts_per_leaf=2))),
    ("pcie-gen3", 2, None, dict(p2p=False)), ("hgx-b200", 2, 4, {}), ("dgx-a100", 4, None, {}),
])
def test_plain_python_and_numpy_paths_agree_exactly(monkeypatch, preset, nodes, gpus, kw):
    monkeypatch.setattr(arrays, "ARRAY_MIN_ITEMS", PLAIN)
    plain = _everything(preset, nodes, gpus, **kw)
    monkeypatch.setattr(arrays, "ARRAY_MIN_ITEMS", ARRAYS)
    assert _everything(preset, nodes, gpus, **kw) == plain      # ==: the same floats, not approximately


@st.composite
def _groups(draw):
    n_links = draw(st.integers(1, 12))
    capacity = draw(st.lists(st.sampled_from([1.0, 2.5, 3e9, 7e10, 12.5e9, 4e11]), min_size=n_links,
                             max_size=n_links))
    groups = []
    for _ in range(draw(st.integers(1, 6))):
        links = sorted(draw(st.sets(st.integers(0, n_links - 1), max_size=n_links)))
        counts = [float(draw(st.integers(1, 4))) for _ in links]
        cap = draw(st.sampled_from([math.inf, math.inf, 1.0, 5e9, 2e10]))
        groups.append((tuple(links), tuple(counts), cap))
    return capacity, groups


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_groups())
def test_plain_water_filling_equals_numpy(case):
    capacity, groups = case
    ug = np.array([g for g, (links, _, _) in enumerate(groups) for _ in links], dtype=np.int64)
    ul = np.array([l for links, _, _ in groups for l in links], dtype=np.int64)
    uc = np.array([c for _, counts, _ in groups for c in counts])
    caps = [c for _, _, c in groups]
    with np.errstate(invalid="ignore"):        # an uncapped group on no link: inf - inf
        expected = max_min_rates(ug, ul, uc, np.array(capacity), np.array(caps)).tolist()
    assert _sparse_rates([(links, counts) for links, counts, _ in groups], caps, capacity) == expected


def test_link_uses_forms_agree(monkeypatch):
    routes = ((3, 1, 4), (1, 5), (9, 2, 6, 5), ())
    monkeypatch.setattr(arrays, "ARRAY_MIN_ITEMS", PLAIN)
    plain = LinkUses.of(routes)
    monkeypatch.setattr(arrays, "ARRAY_MIN_ITEMS", ARRAYS)
    big = LinkUses.of(routes)
    assert plain.link_ids == big.link_ids == (1, 2, 3, 4, 5, 6, 9)
    assert plain.link_counts == big.link_counts == (2.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0)
    assert plain.links.tolist() == big.links.tolist() and plain.counts.tolist() == big.counts.tolist()
    assert len(plain) == len(big) == 7
    assert plain.span() == big.span() == (1, 9) and LinkUses.of([()]).span() == (-1, -1)
    assert list(plain.ids_once()) == list(big.ids_once()) == [1, 2, 3, 4, 5, 6, 9]


def test_group_rates_of_no_group_and_of_a_linkless_capped_group():
    cap = LinkCapacity([1.0, 2.0])
    assert group_rates([], [], cap) == []
    assert group_rates([LinkUses.of([()])], [5.0], cap) == [5.0]
