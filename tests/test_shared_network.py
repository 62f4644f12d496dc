"""The shared flow network: per-job accounting, contention, capacity changes (hand-computed)."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from simulator.network.shared import SharedFlowNetwork


def _run(net: SharedFlowNetwork, env: simpy.Environment, *procs):
    done = [env.process(p) for p in procs]
    env.run(simpy.AllOf(env, done))
    net.settle()
    return [d.value for d in done]


def test_two_jobs_share_one_link_and_are_accounted():
    """Job 0 moves 100 B, job 1 moves 50 B over one 100 B/s link: both at 50 B/s until job 1 ends
    at 1 s, then job 0 alone at 100 B/s: it ends at 1.5 s. Contended (saturated, two jobs) for 1 s."""
    env = simpy.Environment()
    net = SharedFlowNetwork(env, np.array([100.0]), jobs=2)

    def move(job, size):
        yield net.port(job).transfer_group(((0,),), size)
        return env.now

    ends = _run(net, env, move(0, 100.0), move(1, 50.0))
    assert ends == pytest.approx([1.5, 1.0])
    assert net.link_bytes[:, 0] == pytest.approx([100.0, 50.0])
    assert net.contended_s[0] == pytest.approx(1.0)


def test_capacity_change_rerates_running_transfers():
    """100 B at 100 B/s; at 0.5 s the link drops to 50 B/s: the last 50 B take 1 s (end 1.5 s).
    Back at 100 B/s, the same transfer again takes 1 s (rates remembered per capacity state)."""
    env = simpy.Environment()
    cap = np.array([100.0])
    net = SharedFlowNetwork(env, cap, jobs=1)

    def move():
        yield net.transfer_group(((0,),), 100.0)
        t1 = env.now
        net.set_capacity(np.array([0]), 100.0)
        yield net.transfer_group(((0,),), 100.0)
        return t1, env.now

    def degrade():
        yield env.timeout(0.5)
        net.set_capacity(np.array([0]), 50.0)

    (t1, t2), _ = _run(net, env, move(), degrade())
    assert (t1, t2) == pytest.approx((1.5, 2.5))
    assert cap[0] == 100.0                      # the caller's array is never changed
