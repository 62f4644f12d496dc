"""How long the accuracy report takes, and whether it still prints the committed docs/accuracy.md.

    python -m validation.accuracy_timing            # one run into a temporary folder: wall, CPU, load, verdict
    python -m validation.accuracy_timing --runs 2   # the same twice (compare with another checkout run alike)

Issue 10 keeps ``python -m validation.accuracy`` under :data:`TARGET_S` seconds of wall time on the 2-core
machine, so that CI (``.ci/run``) can rerun it as a check. This prints the figure rather than asserting it in a
test: the time depends on the machine and its load, which the line reports beside it (the load average before
and after). Each run is a fresh process, as in CI: every cache of the report lives in its process. Exits 1 when
the report's output differs from the committed one (the figures must not move when only speed changes).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "accuracy.md"
TARGET_S = 60.0
"""Issue 10's limit on the report's wall time (seconds, on the project's 2-core machine at low load)."""


def timed(cmd: list[str]) -> tuple[float, float, float, int]:
    """(wall seconds, user CPU seconds, system CPU seconds, exit status) of ``cmd`` and every process it
    starts (the report's worker processes are its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, rc


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.accuracy_timing", description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1, help="how many fresh runs (default 1)")
    a = p.parse_args(argv)
    if a.runs < 1:
        print("error: --runs must be at least 1", file=sys.stderr)
        return 2
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "accuracy.md"
        for i in range(a.runs):
            load = _load()
            wall, user, system, rc = timed([sys.executable, "-m", "validation.accuracy", "--out", str(out)])
            if rc != 0:
                print(f"python -m validation.accuracy failed (exit {rc})", file=sys.stderr)
                return 1
            identical = out.read_bytes() == DOC.read_bytes()
            same = same and identical
            print(f"run {i + 1}: {wall:.1f} s wall, {user:.1f} s user, {system:.1f} s system, {os.cpu_count()} cores, "
                  f"load {load} before, {_load()} after; target {TARGET_S:.0f} s: "
                  f"{'met' if wall < TARGET_S else 'missed'}; output "
                  f"{'identical to' if identical else 'DIFFERS from'} docs/accuracy.md")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
