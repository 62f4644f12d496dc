"""Forwards in fresh and in persistent threads: what DataParallel's ``parallel_apply`` pays per thread.

``torch.nn.parallel.parallel_apply`` starts one new ``threading.Thread`` per replica on *every*
call and joins it. Some of PyTorch's caches are thread-local: the cuDNN v8 convolution execution
plans (``aten/src/ATen/native/cudnn/Conv_v8.cpp``: ``thread_local BenchmarkCache ...
benchmark_cache``, "cuDNN Execution Plans are not guaranteed to be thread safe") and the cuDNN
attention graphs (``MHA.cpp``). A fresh thread finds them empty and rebuilds every plan it
needs (heuristics query and plan finalisation, GIL released) on each DataParallel iteration;
the main thread of a single-GPU run and the autograd engine's per-device threads (which run
backward and live for the whole process) do not. Separately, all replica threads share one
GIL for their Python work.

Two measurements tell the two apart (the DataParallel runner records both):

* :func:`thread_launch_s` (one GPU): the host time to launch one forward from a fresh thread
  and from a thread that has already run one. Their difference is the per-thread cold-start
  cost, paid by every replica thread in parallel; it does not grow with the number of GPUs.
* :func:`thread_pair_launch_s` (one GPU): the same with *two* threads launching at once, fresh
  and persistent. Whether the per-thread cold-start cost runs in parallel across threads (work
  with the GIL released, e.g. cuDNN plan building) or one thread after the other (under the GIL
  or another process-wide lock) is a property of the host side, so one GPU shows it:
  ``(fresh pair - warm pair) / (fresh - warm) - 1`` is the share of it that queues.
* :class:`WorkerPool` + :func:`persistent_apply` (n GPUs): ``parallel_apply``'s work with one
  persistent thread per device, reused across calls (warm caches), so what is left above one
  replica's launch time is GIL contention between the n threads.

Works on CPU tensors too (devices ``None``), which the tests use.
"""

from __future__ import annotations

import queue
import statistics
import threading
import time
from typing import Any, Callable, Sequence


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


class WorkerPool:
    """One persistent thread per slot; :meth:`run` hands slot i its function and waits for all.

    Each thread keeps its thread-local state (cuDNN plan caches, cuBLAS handles) between calls,
    unlike ``parallel_apply``'s fresh threads."""

    def __init__(self, slots: int) -> None:
        self._inbox: list[queue.Queue] = [queue.Queue() for _ in range(slots)]
        self._outbox: queue.Queue = queue.Queue()
        self._threads = [threading.Thread(target=self._loop, args=(i,), daemon=True) for i in range(slots)]
        for t in self._threads:
            t.start()

    def _loop(self, i: int) -> None:
        while True:
            fn = self._inbox[i].get()
            if fn is None:
                return
            try:
                self._outbox.put((i, _timed(fn), None))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, re-raised there
                self._outbox.put((i, None, exc))

    def run(self, fns: Sequence[Callable[[], Any]]) -> list[tuple[float, Any]]:
        """(host seconds inside the thread, result) of ``fns[i]`` run on thread i, all at once."""
        if len(fns) > len(self._threads):
            raise ValueError(f"{len(fns)} functions for {len(self._threads)} threads")
        for i, fn in enumerate(fns):
            self._inbox[i].put(fn)
        out: list[Any] = [None] * len(fns)
        error = None
        for _ in fns:
            i, result, exc = self._outbox.get()
            out[i] = result
            error = error or exc
        if error is not None:
            raise error
        return out

    def close(self) -> None:
        for box in self._inbox:
            box.put(None)
        for t in self._threads:
            t.join()


def in_fresh_thread(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(host seconds, result) of ``fn`` run in a new thread, as ``parallel_apply`` runs a replica."""
    box: list[Any] = []

    def work() -> None:
        try:
            box.append((_timed(fn), None))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box.append((None, exc))
    t = threading.Thread(target=work)
    t.start()
    t.join()
    result, exc = box[0]
    if exc is not None:
        raise exc
    return result


def thread_launch_s(fn: Callable[[], Any], reps: int, sync: Callable[[], None]) -> dict[str, float]:
    """Median host time to launch ``fn`` from a fresh thread and from a persistent one (which ran
    it once before), each started on an idle device (``sync`` before), as DataParallel's profile
    fields ``forward_fresh_thread_host_s`` and ``forward_warm_thread_host_s``."""
    fresh, warm = [], []
    for _ in range(reps):
        sync()
        fresh.append(in_fresh_thread(fn)[0])
        sync()
    pool = WorkerPool(1)
    try:
        pool.run([fn])
        for _ in range(reps):
            sync()
            warm.append(pool.run([fn])[0][0])
            sync()
    finally:
        pool.close()
    return {"forward_fresh_thread_host_s": statistics.median(fresh),
            "forward_warm_thread_host_s": statistics.median(warm)}


def _fresh_pair(fn: Callable[[], Any]) -> float:
    """Host seconds until both of two new threads, started together, have run ``fn``."""
    errors: list[BaseException] = []

    def work() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            errors.append(exc)
    threads = [threading.Thread(target=work) for _ in range(2)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return elapsed


def thread_pair_launch_s(fn: Callable[[], Any], reps: int, sync: Callable[[], None]) -> dict[str, float]:
    """Median host time until *two* threads launching ``fn`` at once are done: both fresh
    (``forward_fresh_pair_host_s``) and both persistent, warmed by one call first
    (``forward_warm_pair_host_s``), each pair started on an idle device."""
    fresh, warm = [], []
    for _ in range(reps):
        sync()
        fresh.append(_fresh_pair(fn))
        sync()
    pool = WorkerPool(2)
    try:
        pool.run([fn, fn])
        for _ in range(reps):
            sync()
            t0 = time.perf_counter()
            pool.run([fn, fn])
            warm.append(time.perf_counter() - t0)
            sync()
    finally:
        pool.close()
    return {"forward_fresh_pair_host_s": statistics.median(fresh),
            "forward_warm_pair_host_s": statistics.median(warm)}


def persistent_apply(pool: WorkerPool, modules: Sequence[Any], inputs: Sequence[Any], kwargs: Sequence[dict],
                     devices: Sequence[int | None], autocast: bool) -> list[Any]:
    """``parallel_apply``'s work on ``pool``'s persistent threads: replica i's forward on thread i,
    under the same device, stream, grad and autocast settings as ``parallel_apply`` sets."""
    import contextlib

    import torch
    grad = torch.is_grad_enabled()

    def job(module: Any, inp: Any, kw: dict, dev: int | None) -> Callable[[], Any]:
        def run() -> Any:
            torch.set_grad_enabled(grad)
            ctx = contextlib.ExitStack()
            if dev is not None:
                ctx.enter_context(torch.cuda.device(dev))
                ctx.enter_context(torch.cuda.stream(torch.cuda.current_stream(dev)))
                ctx.enter_context(torch.amp.autocast("cuda", enabled=autocast))
            with ctx:
                args = inp if isinstance(inp, (list, tuple)) else (inp,)
                return module(*args, **kw)
        return run
    return [r for _, r in pool.run([job(m, i, k, d) for m, i, k, d in zip(modules, inputs, kwargs, devices)])]


__all__ = ["WorkerPool", "in_fresh_thread", "persistent_apply", "thread_launch_s", "thread_pair_launch_s"]
