"""Running a study's points robustly: one failing point never stops the others, Ctrl-C stops
promptly, and every finished point reaches the caller as soon as it is done.

:func:`stream_points` evaluates points in this process, on local worker processes or on a Dask
cluster and calls ``on_done`` with each :class:`PointOutcome` (a row, or the error that point
raised) in completion order. A point fails alone: its error is caught where it ran and comes
back as text, never as a traceback of the pool. Ctrl-C (``KeyboardInterrupt``) cancels what is
queued, stops the worker processes (which ignore SIGINT themselves, so that only this process
decides), and returns ``True`` ("interrupted"); what finished before has already been delivered.
"""

from __future__ import annotations

import math
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from simulator.core.errors import InputError, shorten

Row = dict[str, object]


@dataclass(frozen=True)
class PointOutcome:
    """What evaluating one point gave: its row, or the one-line error that stopped it."""

    index: int
    row: Row | None
    error: str | None = None


def evaluate_safely(point: Any) -> PointOutcome:
    """``evaluate(point)`` with any error caught and turned into one line of text; a row holding
    an infinite or NaN number is an error too (never a silent number)."""
    from gpunetsim.study import evaluate
    from simulator.core.limits import require_finite
    try:
        row = evaluate(point)
        require_finite(row, "result")
        return PointOutcome(point.index, row)
    except InputError as e:
        return PointOutcome(point.index, None, shorten(str(e), 300))
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:                       # a bug for this point alone: report, go on
        return PointOutcome(point.index, None, shorten(f"{type(e).__name__}: {e}", 300))


def _evaluate_chunk(points: Sequence[Any]) -> list[PointOutcome]:
    return [evaluate_safely(p) for p in points]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stream_points(points: Sequence[Any], on_done: Callable[[PointOutcome], None], *,
                  workers: int | None = None, scheduler: str | None = None, progress: bool = True,
                  desc: str = "sweep") -> bool:
    """Evaluate ``points``, calling ``on_done`` for each as it finishes; True if interrupted.

    ``scheduler`` (``tcp://HOST:8786``): a Dask cluster; else ``workers`` local processes
    (default: one per core; 1 = in this process). A tqdm bar goes to stderr unless ``progress``
    is false."""
    from tqdm import tqdm
    n = (os.cpu_count() or 1) if workers is None else workers
    if not scheduler and n < 1:
        raise InputError("must be at least 1", field="--workers", value=workers)
    client = connect_dask(scheduler) if scheduler else None    # a bad address: refused before the bar starts
    bar = tqdm(total=len(points), desc=desc, unit="pt", file=sys.stderr, disable=not progress, leave=False)

    def done(outcome: PointOutcome) -> None:
        on_done(outcome)
        bar.update()

    try:
        if client is not None:
            return _run_dask(points, client, done)
        if n == 1 or len(points) <= 1:
            try:
                for p in points:
                    done(evaluate_safely(p))
            except KeyboardInterrupt:
                return True
            return False
        return _run_pool(points, min(n, len(points)), done)
    finally:
        bar.close()


def _run_pool(points: Sequence[Any], n: int, done: Callable[[PointOutcome], None]) -> bool:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    chunks = _chunks(points, n)
    ex = ProcessPoolExecutor(max_workers=n, initializer=_ignore_sigint)
    try:
        pending = {ex.submit(_evaluate_chunk, c) for c in chunks}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                for outcome in f.result():
                    done(outcome)
    except KeyboardInterrupt:
        _stop_pool(ex)
        return True
    except BaseException:
        _stop_pool(ex)
        raise
    ex.shutdown(wait=True)
    return False


HEAVY_KINDS = ("search",)
"""Point kinds that take seconds each (a plan search): sent one by one, first, so that the
workers share them instead of one worker getting a chunk of them."""


def _chunks(points: Sequence[Any], n: int) -> list[Sequence[Any]]:
    """The heavy points one by one, the largest (last listed) first, then contiguous chunks of
    the others (points that share a topology stay in one process, where plans are memoised)."""
    heavy = [p for p in points if getattr(p, "kind", None) in HEAVY_KINDS]
    light = [p for p in points if getattr(p, "kind", None) not in HEAVY_KINDS]
    size = max(1, math.ceil(len(light) / (n * 4)))
    return [[p] for p in reversed(heavy)] + [light[i:i + size] for i in range(0, len(light), size)]


def _stop_pool(ex: Any) -> None:
    """Cancel what is queued and end the workers now (a chunk in progress is abandoned)."""
    procs = list(getattr(ex, "_processes", {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)


def check_scheduler(scheduler: object) -> None:
    """InputError naming ``--scheduler`` when dask.distributed is missing or ``scheduler`` is no address
    (checked before a run clears its output folder or starts its progress bar)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise InputError("--scheduler needs dask.distributed: pip install 'gpunetsim[dask]'",
                         field="--scheduler", value=scheduler) from None
    if not isinstance(scheduler, str) or "://" not in scheduler:
        raise InputError("expected a scheduler address such as tcp://HOST:8786", field="--scheduler",
                         value=scheduler)


def connect_dask(scheduler: str):
    """A ``distributed.Client`` of the scheduler at ``tcp://HOST:8786``; InputError naming
    ``--scheduler`` when dask.distributed is missing or the scheduler cannot be reached."""
    check_scheduler(scheduler)
    from distributed import Client
    try:
        return Client(scheduler, timeout="20s")
    except (OSError, TimeoutError) as e:
        raise InputError(f"cannot reach the Dask scheduler ({e})", field="--scheduler", value=scheduler) from None


def _run_dask(points: Sequence[Any], client: Any, done: Callable[[PointOutcome], None]) -> bool:
    """Evaluate ``points`` on a connected ``distributed.Client`` (closed at the end)."""
    from distributed import as_completed
    futures: list[Any] = []
    try:
        import uuid
        run = uuid.uuid4().hex[:12]        # fresh keys: never reuse results a cluster still holds
        keys = [f"gpunetsim-evaluate-{run}-{p.index}" for p in points]
        futures = client.map(evaluate_safely, list(points), key=keys)
        for future in as_completed(futures):
            try:
                done(future.result())
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as e:              # the task could not run at all (worker lost...)
                index = points[futures.index(future)].index
                done(PointOutcome(index, None, shorten(f"{type(e).__name__}: {e}", 300)))
        return False
    except KeyboardInterrupt:
        client.cancel(futures)
        return True
    finally:
        client.close()
