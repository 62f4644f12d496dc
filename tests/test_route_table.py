"""Routes kept as arrays (topologies.route_table): the same routes, link uses and route-set comparisons
as the tuples they stand for, without making the tuples."""

import pickle

import numpy as np
from hypothesis import given, settings, strategies as st

import topologies
from simulator.network.closed_form import CostModel
from topologies.route_table import RouteTable, join_routes, same_route_set
from topologies.routes import LinkUses


def _table(routes: list[tuple[int, ...]]) -> RouteTable:
    """A table of ``routes`` with one block per route length (as the router makes one per shape)."""
    by_width: dict[int, list[int]] = {}
    for i, r in enumerate(routes):
        by_width.setdefault(len(r), []).append(i)
    blocks = [(np.array([routes[i] for i in places], dtype=np.int64).reshape(len(places), w),
               np.array(places, dtype=np.int64)) for w, places in by_width.items()]
    return RouteTable(blocks, len(routes), _LINKS)


_LINKS = np.array(range(64), dtype=object)      # every link id as one shared int (the router's)


_routes = st.lists(st.lists(st.integers(0, 40), min_size=0, max_size=5).map(tuple), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(_routes, st.integers(0, 2000))
def test_a_table_is_its_routes(routes, threshold):
    t = _table(routes)
    assert t == tuple(routes) and tuple(routes) == t and list(t) == routes and len(t) == len(routes)
    assert hash(t) == hash(tuple(routes)) and t[0] == routes[0]
    assert pickle.loads(pickle.dumps(t)) == tuple(routes)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(_routes)
def test_link_uses_from_the_arrays_equal_those_of_the_tuples(routes):
    t = _table(routes)
    a, b = t.link_uses(), LinkUses.of(tuple(routes))
    assert (a.link_ids, a.link_counts) == (b.link_ids, b.link_counts)
    assert LinkUses.of(t).link_ids == b.link_ids


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_routes, st.data())
def test_same_route_set_is_frozenset_equality(routes, data):
    other = data.draw(st.one_of(st.permutations(routes), _routes,
                                st.lists(st.sampled_from(routes), min_size=1, max_size=60)))
    expected = frozenset(routes) == frozenset(other)
    assert same_route_set(_table(routes), _table(list(other))) == expected
    assert same_route_set(_table(routes), tuple(other)) == expected


def test_join_keeps_the_order_of_its_parts():
    a, b = [(1, 2), (3,), (4, 5)], [(6,), (7, 8), ()]
    joined = join_routes([_table(a), _table(b)])
    assert isinstance(joined, RouteTable) and joined == tuple(a + b)
    assert join_routes([tuple(a), _table(b)]) == tuple(a + b)


def test_a_large_flow_group_keeps_its_routes_as_a_table_until_read():
    """512 GPUs: a ring's groups hold tables (no tuple per route made); their uses are the tuples'."""
    m = CostModel(topologies.prepare("dgx-h100", nodes=64))
    g = m.planner.plan("all_reduce", "ring", "simple").groups[0]
    assert isinstance(g.routes, RouteTable) and g.routes._routes is None
    uses = LinkUses.of(tuple(g.routes))
    assert (g.uses.link_ids, g.uses.link_counts) == (uses.link_ids, uses.link_counts)
