"""Collectives of process groups share plans per router and parameter values (issue 10: speed)."""

import pytest

import topologies
from simulator.collectives.params import Parameters
from simulator.training.llm.groups import GroupCollectives
from topologies.routing import router_for


@pytest.fixture(scope="module")
def router():
    return router_for(topologies.prepare("dgx-a100", nodes=2, gpus_per_node=8))


def test_same_parameters_share_plans_and_capacities(router) -> None:
    a, b = GroupCollectives(router, Parameters()), GroupCollectives(router, Parameters())
    ranks = tuple(router.gpus[:4])
    assert a.planner is b.planner and a.plan("all_reduce", ranks, 1 << 20) is b.plan("all_reduce", ranks, 1 << 20)
    with pytest.raises(ValueError):
        a.capacity_Bps[0] = 0.0                     # shared, so read-only


def test_other_parameters_get_their_own(router) -> None:
    a = GroupCollectives(router, Parameters())
    b = GroupCollectives(router, Parameters().with_values({"link_efficiency.nvlink": 0.5}))
    ranks = tuple(router.gpus[:4])
    assert a.planner is not b.planner
    assert b.time_s(b.plan("all_reduce", ranks, 1 << 30), ranks, 1 << 30) > \
        a.time_s(a.plan("all_reduce", ranks, 1 << 30), ranks, 1 << 30)


def test_the_choice_stays_per_instance(router) -> None:
    """A group decides its algorithm per power-of-two bucket from the first size it is asked for; a
    new simulation starts with no decisions, whatever earlier ones on the same router decided."""
    a, b = GroupCollectives(router, Parameters()), GroupCollectives(router, Parameters())
    a.plan("all_reduce", tuple(router.gpus[:4]), 3 << 20)
    assert a._choice and not b._choice
