"""Trial 3 of ``validation.fsdp_carry_unit.TRIED`` (branch h14h4096s25, session of 2026-11-28 stop 25), not kept: each
FSDP collective lengthened by :data:`SLOWDOWN` seconds per second of kernels that run beside it, the collective's HBM
share kept on for that time.

:data:`SLOWDOWN` is the overlap probe's collective beside a matmul over alone, less 1 (median of the 384 MiB points on
2 and 4 H100s, ``validation/data/h100x4_2026-11-26j``; :func:`probe_slowdown` reads it again). The engine is patched
for the run only (``FsdpStreams._kernels`` counts the kernels' seconds, ``FsdpStreams._collectives`` waits the extra
time after the transfer), then the command whose figures were compared runs::

    python validation/scripts/fsdp_collective_slowdown_s25.py sealed   # python -m validation.sealed_campaign, ~1 min
    python validation/scripts/fsdp_collective_slowdown_s25.py llm      # python -m validation.accuracy --only llm
"""

from __future__ import annotations

import statistics
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from simulator.training.llm.collective_job import job_record, run_concurrent  # noqa: E402
from simulator.training.llm.fsdp_engine import NCCL_TRACK, FsdpStreams  # noqa: E402

SLOWDOWN = 0.10
PROBE = Path(__file__).resolve().parents[1] / "data" / "h100x4_2026-11-26j"


def probe_slowdown(size_bytes: int = 384 << 20) -> float:
    """The probe's median ``coll_beside_s / coll_alone_s - 1`` beside a matmul at ``size_bytes``."""
    from validation.overlap_check import read_overlap

    return statistics.median(r["coll_beside_s"] / r["coll_alone_s"] - 1 for w in (2, 4)
                             for r in read_overlap(PROBE / f"overlap_world{w}.jsonl")
                             if r["work"] == "matmul" and r["bytes"] == size_bytes)


@contextmanager
def trial() -> Iterator[None]:
    kernels, collectives = FsdpStreams._kernels, FsdpStreams._collectives

    def kernel_seconds(self: FsdpStreams) -> float:
        since = getattr(self, "_since", None)
        return getattr(self, "_kernel_s", 0.0) + (0.0 if since is None else self.env.now - since)

    def work(contention, seconds):  # the Contention.work of one FsdpStreams, timed
        self = contention._streams
        self._since = self.env.now
        yield from contention._work(seconds)
        self._kernel_s = kernel_seconds(self)
        self._since = None

    def patched_kernels(self: FsdpStreams, *args, **kwargs):
        if not hasattr(self.contention, "_streams"):
            self.contention._streams, self.contention._work = self, self.contention.work
            self.contention.work = lambda seconds: work(self.contention, seconds)
        yield from kernels(self, *args, **kwargs)

    def patched_collectives(self: FsdpStreams, prev, ready, jobs, name, done, load, track=NCCL_TRACK):
        yield prev
        if ready is not None:
            yield ready
        t0, k0 = self.env.now, kernel_seconds(self)
        self.contention.add(load)
        yield from run_concurrent(self.env, self.net, jobs)
        yield self.env.timeout(SLOWDOWN * (kernel_seconds(self) - k0))
        self.contention.add(-load)
        self.rec.append(job_record(track, name, t0, self.env.now, jobs))
        done.succeed()

    FsdpStreams._kernels, FsdpStreams._collectives = patched_kernels, patched_collectives  # type: ignore[method-assign]
    try:
        yield
    finally:
        FsdpStreams._kernels, FsdpStreams._collectives = kernels, collectives  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    if argv not in (["sealed"], ["llm"]):
        print("usage: python validation/scripts/fsdp_collective_slowdown_s25.py sealed|llm", file=sys.stderr)
        return 2
    print(f"collective beside a matmul over alone, less 1, at 384 MiB: {probe_slowdown():.3f} (used {SLOWDOWN})")
    with trial():
        if argv == ["sealed"]:
            from validation.sealed_campaign import main as run
            return run([])
        from validation.accuracy import main as run
        return run(["--only", "llm"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
