"""validation.runners.thread_forward: fresh vs persistent threads (what parallel_apply pays per thread)."""

from __future__ import annotations

import threading

import pytest

from validation.runners.thread_forward import (WorkerPool, in_fresh_thread, persistent_apply, thread_launch_s,
                                               thread_pair_launch_s)


def test_pool_threads_persist_and_fresh_threads_do_not() -> None:
    local = threading.local()

    def first_use() -> bool:           # True the first time this thread runs it (a cold thread-local cache)
        cold = not getattr(local, "seen", False)
        local.seen = True
        return cold
    pool = WorkerPool(2)
    try:
        assert [r for _, r in pool.run([first_use, first_use])] == [True, True]
        assert [r for _, r in pool.run([first_use, first_use])] == [False, False]
    finally:
        pool.close()
    assert in_fresh_thread(first_use)[1] is True
    assert in_fresh_thread(first_use)[1] is True


def test_errors_reach_the_caller() -> None:
    def boom() -> None:
        raise ValueError("in a thread")
    with pytest.raises(ValueError):
        in_fresh_thread(boom)
    pool = WorkerPool(1)
    try:
        with pytest.raises(ValueError):
            pool.run([boom])
        with pytest.raises(ValueError):
            pool.run([boom, boom])      # more functions than threads
    finally:
        pool.close()


def test_thread_launch_s_sees_a_per_thread_cold_start() -> None:
    """A function that is slow only on a thread's first call (a thread-local cache filled then)
    costs more from fresh threads than from a persistent one."""
    import time
    local = threading.local()

    def fn() -> None:
        if not getattr(local, "warm", False):
            time.sleep(0.02)
            local.warm = True
    t = thread_launch_s(fn, 3, lambda: None)
    assert t["forward_fresh_thread_host_s"] >= 0.02 > t["forward_warm_thread_host_s"]


def test_persistent_apply_matches_the_replicas_forwards_on_cpu() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    mods = [torch.nn.Linear(4, 3) for _ in range(2)]
    xs = [torch.randn(5, 4) for _ in range(2)]
    pool = WorkerPool(2)
    try:
        outs = persistent_apply(pool, mods, xs, [{}, {}], [None, None], False)
    finally:
        pool.close()
    for m, x, o in zip(mods, xs, outs):
        assert torch.equal(o, m(x))
        assert o.requires_grad      # grad mode carried into the threads, as parallel_apply does


@pytest.mark.parametrize("locked", [False, True])
def test_thread_pair_launch_s_tells_parallel_from_queued_cold_starts(locked: bool) -> None:
    """A cold start that sleeps with no lock held overlaps between two fresh threads; one under a
    shared lock queues, so the fresh pair takes about two cold starts. The cold start is long (0.2 s)
    so that a loaded machine's scheduling delays (tens of ms) cannot move a pair across the line
    between one and two cold starts (0.03 s failed once at 0.0559 s under a load of 15)."""
    import time
    local, lock = threading.local(), threading.Lock()
    cold_s = 0.2

    def fn() -> None:
        if not getattr(local, "warm", False):
            if locked:
                with lock:
                    time.sleep(cold_s)
            else:
                time.sleep(cold_s)
            local.warm = True
    t = thread_pair_launch_s(fn, 3, lambda: None)
    assert t["forward_warm_pair_host_s"] < cold_s / 2
    if locked:
        assert t["forward_fresh_pair_host_s"] >= 2 * cold_s
    else:
        assert cold_s <= t["forward_fresh_pair_host_s"] < 1.75 * cold_s
