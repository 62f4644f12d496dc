"""RateCache: timers of one router under many parameter sets share capacities and max-min rates
exactly where the link efficiencies agree, and time every plan as a timer without the cache does."""

from __future__ import annotations

import topologies
from simulator.collectives.params import Parameters
from simulator.collectives.planner import Planner
from simulator.network.closed_form import ClosedFormTimer, RateCache
from topologies.routing import router_for

PLANS = [("all_reduce", "ring", "simple"), ("all_reduce", "ring", "ll"), ("all_reduce", "tree", "ll128"),
         ("all_gather", "ring", "simple"), ("send_recv", "direct", "simple")]


def _router():
    return router_for(topologies.prepare("dgx-h100", nodes=2, gpus_per_node=4))   # NVLink and the NICs


def test_times_with_the_cache_equal_times_without():
    r = _router()
    base = Parameters()
    sets = [base, base.nudged("call_overhead_s", 2e-5), base.nudged("link_efficiency.nvlink", 0.6),
            base.nudged("proto_efficiency.ll", 0.3), base, base.nudged("call_overhead_s", 3e-5)]
    cache = RateCache(r)
    for p in sets:
        planner = Planner(r, p)
        shared, alone = ClosedFormTimer(r, p, cache), ClosedFormTimer(r, p)
        for op, algo, proto in PLANS:
            plan = planner.plan(op, algo, proto)
            for size in (8, 1 << 16, 1 << 24, 1 << 30):
                assert shared.time(plan, size) == alone.time(plan, size), (p.diff(), op, algo, proto, size)
            assert shared.shape(plan).bottleneck == alone.shape(plan).bottleneck


def test_shared_only_between_equal_link_efficiencies_and_bounded():
    r = _router()
    base = Parameters()
    cache = RateCache(r, keep=2)
    a = ClosedFormTimer(r, base, cache)
    b = ClosedFormTimer(r, base.nudged("call_overhead_s", 2e-5), cache)       # latency only: shared
    c = ClosedFormTimer(r, base.nudged("link_efficiency.nvlink", 0.6), cache)  # another capacity
    assert b._rates is a._rates and b.capacity is a.capacity
    assert c._rates is not a._rates and c.capacity.values != a.capacity.values
    d = ClosedFormTimer(r, base.nudged("link_efficiency.nvlink", 0.5), cache)  # evicts the least recent: base
    assert ClosedFormTimer(r, base, cache)._rates is not a._rates               # made again (evicts c's)
    assert ClosedFormTimer(r, base.nudged("link_efficiency.nvlink", 0.5), cache)._rates is d._rates
    assert ClosedFormTimer(r, base.nudged("link_efficiency.nvlink", 0.6), cache)._rates is not c._rates


def test_a_cache_of_another_router_is_refused_even_under_python_O():
    """The check was an ``assert``: under ``python -O`` a cache made for another router served its rates."""
    import subprocess
    import sys
    code = ("import topologies\n"
            "from simulator.collectives.params import Parameters\n"
            "from simulator.core.errors import InvariantError\n"
            "from simulator.network.closed_form import ClosedFormTimer, RateCache\n"
            "from topologies.routing import router_for\n"
            "r = lambda: router_for(topologies.prepare('dgx-h100', nodes=2, gpus_per_node=4))\n"
            "try:\n"
            "    ClosedFormTimer(r(), Parameters(), RateCache(r()))\n"
            "except InvariantError as e:\n"
            "    print('refused:', e)\n")
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("refused: a rate cache serves the router it was made for")
