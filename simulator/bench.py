"""Speed benchmark of the simulator itself: ``python -m simulator.bench``.

The source of every speed figure in the docs. Each figure is the median of ``--repeats`` runs
(default 3); "whole process" figures time a fresh ``gpunetsim`` process from start to exit, as a
user sees it (interpreter start-up and imports included, bytecode caches written by one untimed
run first), with its peak resident memory:

* start-up: ``gpunetsim collective`` on one 8-GPU DGX-H100 (the default 8 B..128 MiB sweep);
* a 1 GiB all-reduce with the discrete-event engine on 8..16384 GPUs of DGX-H100 servers
  (``gpunetsim collective -b 1G -e 1G --nodes N``), plus the same inside this process split into
  building the model (topology, routes, plan) and running the simulation;
* the cost growth exponent between the two largest sizes: ``log(t2 / t1) / log(n2 / n1)`` of the
  in-process cost (build + simulate; 1.0 is linear in the number of GPUs). In-process figures are
  the least CPU time of at least :data:`IN_PROCESS_RUNS` runs: other processes on a shared machine
  only ever add to a run's CPU time, and at 4096 GPUs a run is a few hundredths of a second (with
  medians of 5 the exponent ranged 0.67-1.26 between runs on a busy 2-core machine);
* one DDP iteration of llama-7b with the discrete-event engine on 512 and 4096 GPUs
  (``gpunetsim ddp --workload llama-7b --engine des --nodes N``);
* closed-form predictions per second (NCCL's algorithm/protocol choice, 64 GPUs, plans built);
* one 3D-parallel LLM training iteration (``gpunetsim train``): GPT-3 175B, TP 8 x PP 16 x DP 32
  on 4096 A100s (512 DGX A100), 1F1B over 48 micro-batches, SP + selective recomputation.

Targets (issue 13, on a 2-core machine): start-up <= 0.15 s; all-reduce <= 0.4 s at 4096 GPUs and
<= 1.2 s at 16384 GPUs; growth exponent <= 1.1; DDP at 4096 GPUs <= 1.5 s; peak memory at 16384
GPUs <= 200 MB; the 4096-GPU LLM iteration (issue 14) < 10 s. Timings on a shared machine are
noisy: compare medians from one run of this script (it prints the load average).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable, Sequence

SIZE = 1 << 30
#: Fewest runs behind each in-process figure (build, simulate): they are cheap.
IN_PROCESS_RUNS = 7
#: What the ``gpunetsim`` console script runs (without depending on where it is installed).
_ENTRY = "import sys; from gpunetsim.cli import main; sys.exit(main())"
TRAIN_4096 = ["train", "--topology", "dgx-a100", "--nodes", "512", "--model", "gpt3-175b", "--tp", "8", "--pp", "16",
              "--global-batch", "1536", "--recompute", "selective", "--sequence-parallel", "--json"]


@dataclass(frozen=True)
class ProcessRun:
    """One whole ``gpunetsim`` process: wall and CPU (user + system) seconds, and peak resident
    memory (MB, 1e6 bytes). CPU time varies less than wall time on a busy machine."""

    wall_s: float
    cpu_s: float
    peak_MB: float


def run_process(args: Sequence[str]) -> ProcessRun:
    """Run ``gpunetsim ARGS`` in a fresh interpreter, output discarded; raises if it fails (rerun the
    command by hand to see why). Python may write and read its bytecode caches, as in an installed
    package (PYTHONDONTWRITEBYTECODE is dropped: without caches every module is compiled again)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _ENTRY, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)   # warnings (e.g. a model that cannot fit) not timed
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"gpunetsim {' '.join(args)} exited with {proc.returncode}")
    scale = 1 if sys.platform == "darwin" else 1024        # ru_maxrss: bytes on macOS, KiB on Linux
    return ProcessRun(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * scale / 1e6)


def median_process(args: Sequence[str], repeats: int) -> ProcessRun:
    """Median of ``repeats`` runs after one untimed run (which writes the bytecode caches)."""
    run_process(args)
    runs = [run_process(args) for _ in range(repeats)]
    return ProcessRun(*(statistics.median(getattr(r, f) for r in runs) for f in ("wall_s", "cpu_s", "peak_MB")))


def time_des(gpus: int) -> tuple[float, float, float]:
    """(build seconds, simulate seconds, simulated seconds) of a 1 GiB all-reduce on ``gpus`` GPUs,
    in this process (imports excluded); CPU seconds, which a busy machine disturbs less than wall time."""
    import topologies
    from simulator.network.closed_form import CostModel
    from simulator.network.engine import simulate_plan
    t0 = time.process_time()
    model = CostModel(topologies.prepare("dgx-h100", nodes=max(1, gpus // 8)))
    algo, proto = model.choose("all_reduce", SIZE)
    plan = model.planner.plan("all_reduce", algo, proto)
    t1 = time.process_time()
    simulated, _ = simulate_plan(model.router, model.params, plan, SIZE)
    t2 = time.process_time()
    return t1 - t0, t2 - t1, simulated


def closed_form_rate(n: int = 200_000) -> float:
    """Closed-form predictions per CPU second on 64 GPUs, plans built beforehand."""
    import topologies
    from simulator.network.closed_form import CostModel
    model = CostModel(topologies.prepare("dgx-h100", nodes=8))
    ops = ("all_reduce", "all_gather", "reduce_scatter")
    for op in ops:
        model.best(op, 1 << 20)          # build the plans once
    t0 = time.process_time()
    for i in range(n):
        model.best(ops[i % 3], 1 << (i % 34))
    return n / (time.process_time() - t0)


def _median_of(f: Callable[[], float], repeats: int) -> float:
    return statistics.median(f() for _ in range(repeats))


def growth_exponent(n1: int, t1: float, n2: int, t2: float) -> float:
    """``k`` in ``t ~ n**k`` through two points."""
    return math.log(t2 / t1) / math.log(n2 / n1)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m simulator.bench", description=__doc__.splitlines()[0])
    p.add_argument("--gpus", default="8,64,512,4096,16384", help="comma-separated GPU counts (multiples of 8)")
    p.add_argument("--ddp-gpus", default="512,4096", help="GPU counts of the DDP runs ('' for none)")
    p.add_argument("--repeats", type=int, default=3, help="runs per figure; the median is printed")
    p.add_argument("--no-train", action="store_true", help="skip the 4096-GPU LLM training iteration")
    p.add_argument("--markdown", default=None, metavar="PATH",
                   help="also write the figures to this Markdown file (docs/speed.md)")
    a = p.parse_args(argv)
    for flag, text in (("--gpus", a.gpus), ("--ddp-gpus", a.ddp_gpus)):
        counts = [x.strip() for x in text.split(",") if x.strip()]
        if not all(x.isdigit() and int(x) >= 8 and int(x) % 8 == 0 for x in counts):
            # --gpus 12 timed 8 GPUs (12 // 8 servers) in a row labelled 12; --gpus abc was a ValueError traceback
            p.error(f"{flag}: give whole servers, comma-separated multiples of 8 (got {text!r})")
    if a.repeats < 1:
        p.error(f"--repeats: must be at least 1 (got {a.repeats})")
    lines: list[str] = []

    def out(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    load = os.getloadavg()[0]
    _run(a, out)
    load = max(load, os.getloadavg()[0])
    out(f"load average (1 min, highest of start and end): {load:.1f} on {os.cpu_count()} cores"
        + (": the machine was busy, wall times are inflated; compare CPU times" if load > (os.cpu_count() or 1) else ""))
    text = "\n".join(lines)
    if a.markdown:
        _write_markdown(a.markdown, text, argv if argv is not None else sys.argv[1:])
    return 0


def _write_markdown(path: str, text: str, argv: Sequence[str]) -> None:
    import platform
    from pathlib import Path
    cmd = " ".join(["python -m simulator.bench", *argv])
    Path(path).write_text(
        "# Speed\n\n"
        f"Written by `{cmd}` (simulator/bench.py, which says what each figure is) on "
        f"{platform.machine()} with {os.cpu_count()} CPU cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}. Shared machines are noisy: compare medians from one run.\n\n"
        "Targets (issue 13): start-up <= 0.15 s; 1 GiB all-reduce <= 0.4 s at 4096 GPUs and <= 1.2 s "
        "at 16384 GPUs; growth exponent <= 1.1; DDP llama-7b at 4096 GPUs <= 1.5 s; peak memory at "
        "16384 GPUs <= 200 MB.\n\n```\n" + text + "\n```\n", encoding="utf-8")


def _run(a: argparse.Namespace, out: Callable[[str], None]) -> None:
    gpus = [int(x) for x in a.gpus.split(",") if x]
    ddp_gpus = [int(x) for x in a.ddp_gpus.split(",") if x]
    r = a.repeats
    # Whole processes first, while this one is small: a child's peak memory counts what it shares
    # with its parent before it starts the new program.
    start = median_process(["collective"], r)
    procs = {g: median_process(["collective", "-b", "1G", "-e", "1G", "--nodes", str(max(1, g // 8))], r)
             for g in gpus}
    ddp = {g: median_process(["ddp", "--workload", "llama-7b", "--engine", "des", "--nodes", str(g // 8)], r)
           for g in ddp_gpus}
    train = None if a.no_train else median_process(TRAIN_4096, r)
    out(f"# gpunetsim speed, median of {r} run(s); 'process' = a whole gpunetsim process (start-up "
        f"included; wall and CPU seconds), 'build'/'simulate' = CPU seconds inside one process (the least "
        f"of {max(r, IN_PROCESS_RUNS)} runs)")
    out(f"start-up: gpunetsim collective (8 GPUs, 25 sizes): {start.wall_s:.3f} s wall, {start.cpu_s:.3f} s CPU, "
        f"{start.peak_MB:.0f} MB")
    out("")
    out("1 GiB all-reduce, discrete-event engine (gpunetsim collective -b 1G -e 1G --nodes GPUS/8)")
    out(f"{'GPUs':>6} {'process (s)':>12} {'CPU (s)':>8} {'peak (MB)':>10} {'build (s)':>10} "
        f"{'simulate (s)':>13} {'simulated (ms)':>15}")
    inproc: dict[int, float] = {}
    for g in gpus:
        w = procs[g]
        runs = [time_des(g) for _ in range(max(r, IN_PROCESS_RUNS))]
        b = min(x[0] for x in runs)
        sim = min(x[1] for x in runs)
        inproc[g] = min(x[0] + x[1] for x in runs)
        out(f"{g:>6} {w.wall_s:>12.3f} {w.cpu_s:>8.3f} {w.peak_MB:>10.0f} {b:>10.3f} {sim:>13.3f} "
            f"{runs[0][2] * 1e3:>15.3f}")
    if len(gpus) >= 2:
        n1, n2 = sorted(gpus)[-2:]
        out(f"cost growth exponent {n1} -> {n2} GPUs (build + simulate): "
            f"{growth_exponent(n1, inproc[n1], n2, inproc[n2]):.2f}")
    if ddp:
        out("")
        out("DDP iteration, llama-7b, discrete-event engine "
            "(gpunetsim ddp --workload llama-7b --engine des --nodes GPUS/8)")
        out(f"{'GPUs':>6} {'process (s)':>12} {'CPU (s)':>8} {'peak (MB)':>10}")
        for g, w in ddp.items():
            out(f"{g:>6} {w.wall_s:>12.3f} {w.cpu_s:>8.3f} {w.peak_MB:>10.0f}")
    if train is not None:
        out("")
        out(f"LLM training iteration, gpt3-175b, TP 8 x PP 16 x DP 32 on 4096 GPUs (gpunetsim {' '.join(TRAIN_4096)}): "
            f"{train.wall_s:.3f} s wall, {train.cpu_s:.3f} s CPU, {train.peak_MB:.0f} MB")
    out("")
    rate = _median_of(closed_form_rate, r)
    out(f"closed form (NCCL's algorithm/protocol choice, 64 GPUs): {rate:,.0f} predictions per CPU second")


if __name__ == "__main__":
    raise SystemExit(main())
