"""Repeated launches of the LLM runners (FSDP, TP, PP) within a wall-clock budget.

::

    python -m validation.runners.llm_sweep --nproc 2 --preset gpu --runners fsdp,tp,pp \\
        --launches 3 --budget-s 330 --out llm_world2.jsonl

Each (runner, launch index) is its own ``torchrun`` with a distinct ``launch_id``; launches are
interleaved (launch 0 of every runner, then launch 1, ...) so drift of the machine spreads over
all runners and a budget that runs out costs repetitions, not whole runners. A runner's
arguments come from ``--preset`` (:data:`PRESETS`), followed by those of ``--runner-args
RUNNER=ARGS`` (a later option wins, so ``--runner-args "pp=--micro-batches 2,4"`` changes just
that). The NVLS/multicast switches of :data:`validation.runners.sweep.ALWAYS_ENV` are always set.

A launch that fails or passes its time limit is recorded as ``{"kind": "llm_failed", ...}``
naming the first of its points still missing (the one it was most likely running); the runner
is relaunched for the same launch index without that point, at most ``--max-failed-launches``
times, and later launch indices skip it too (a point that crashed once costs no more launches). Points already in the output file are never measured again, so rerunning the command
only fills gaps. The sweep exits with status 1 when any planned point is still missing at the
end (failed, excluded, or not reached within ``--budget-s``), else 0.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any, Sequence

from simulator.core.errors import InputError
from validation.runners import fsdp, pp, tp
from validation.runners.launch import add_process_args, entry_point, run_launch, torchrun_argv
from validation.runners.llm_session import missing_points
from validation.runners.records import append_record
from validation.runners.sweep import launch_env

log = logging.getLogger("validation.runners.llm_sweep")

RUNNERS: dict[str, Any] = {"fsdp": fsdp, "tp": tp, "pp": pp}
"""Runner name -> its module (``parse_settings``, ``plan_labels``; run as ``python -m``)."""

GPU_FSDP_SPECS = ("hidden=2048,layers=8,heads=16,seq=2048,vocab=32000;"
                  "hidden=4096,layers=4,heads=32,seq=512,vocab=32000")
GPU_TP_SPECS = ("hidden=2048,layers=4,heads=16,seq=2048,vocab=32000;"
                "hidden=4096,layers=4,heads=32,seq=2048,vocab=32000")
GPU_PP_SPECS = "hidden=2048,layers=8,heads=16,seq=2048,vocab=32000"
TINY_SPECS = "hidden=32,layers=4,heads=2,seq=16,vocab=64"

PRESETS: dict[str, dict[str, str]] = {
    "gpu": {
        "fsdp": f"--specs '{GPU_FSDP_SPECS}' --micro-batch 1 "
                "--strategies full_shard,shard_grad_op,hybrid_shard --replicate 1,2 "
                "--iters 10 --warmup 3",
        "tp": f"--specs '{GPU_TP_SPECS}' --micro-batch 1 --sequence-parallel off,on "
              "--iters 20 --warmup 5",
        "pp": f"--specs '{GPU_PP_SPECS}' --micro-batch 1 --micro-batches 1,2,4,8 "
              "--iters 10 --warmup 3",
    },
    "tiny": {
        "fsdp": f"--specs '{TINY_SPECS}' --micro-batch 2 --strategies "
                "full_shard,shard_grad_op,hybrid_shard --replicate 1,2 --iters 3 --warmup 1",
        "tp": f"--specs '{TINY_SPECS}' --micro-batch 2 --sequence-parallel off,on "
              "--iters 3 --warmup 1",
        "pp": f"--specs '{TINY_SPECS}' --micro-batch 2 --micro-batches 1,3 --iters 3 --warmup 1",
    },
}
"""Runner arguments per preset: ``gpu`` is the 2-4 GPU campaign (bf16), ``tiny`` CPU tests."""

MIN_LAUNCH_S = 20.0
"""A launch is not started with less budget than this left."""


@dataclass(frozen=True)
class Job:
    """One runner's arguments and the labels of its points (per launch index)."""

    runner: str
    args: tuple[str, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True)
class LlmSweepSettings:
    nproc: int
    jobs: tuple[Job, ...]
    launches: int
    out: str
    child_args: tuple[str, ...]
    env: dict[str, str]
    launch_timeout_s: float
    budget_s: float
    max_failed_launches: int


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.llm_sweep",
                                description="Repeated launches of the FSDP, TP and PP runners.")
    p.add_argument("--nproc", type=int, required=True, help="processes (GPUs) per launch")
    p.add_argument("--runners", default="fsdp,tp,pp", help="comma-separated: " + ",".join(RUNNERS))
    p.add_argument("--preset", default="gpu", choices=sorted(PRESETS))
    p.add_argument("--runner-args", action="append", default=[], metavar="RUNNER=ARGS",
                   help="arguments added after the preset's for one runner (repeatable)")
    p.add_argument("--launches", type=int, default=3, help="separate launches per runner")
    add_process_args(p)
    p.add_argument("--launch-timeout-s", type=float, default=180.0)
    p.add_argument("--budget-s", type=float, default=3600.0,
                   help="no launch starts after this many seconds; launches end by then")
    p.add_argument("--max-failed-launches", type=int, default=2,
                   help="failed launches of one runner and launch index before giving up")
    p.add_argument("--extra-env", action="append", default=[],
                   help="KEY=VAL added to every launch's environment (repeatable)")
    p.add_argument("--out", required=True)
    return p


def parse_settings(argv: Sequence[str] | None) -> LlmSweepSettings:
    a = build_parser().parse_args(argv)
    if a.nproc < 1 or a.launches < 1 or a.max_failed_launches < 1:
        raise InputError("need nproc, launches and max-failed-launches >= 1", field="nproc",
                         value=(a.nproc, a.launches, a.max_failed_launches))
    overrides: dict[str, str] = {}
    for item in a.runner_args:
        name, eq, rest = item.partition("=")
        if not eq or name not in RUNNERS:
            raise InputError(f"write RUNNER=ARGS with RUNNER one of {', '.join(RUNNERS)}",
                             field="runner-args", value=item)
        overrides[name] = overrides.get(name, "") + " " + rest
    env = launch_env(a.extra_env)
    child = ("--backend", a.backend, "--device", a.device, "--out", a.out)
    jobs = []
    for name in (r.strip() for r in a.runners.split(",") if r.strip()):
        if name not in RUNNERS:
            raise InputError(f"choose from {', '.join(RUNNERS)}", field="runners", value=name)
        args = tuple(shlex.split(PRESETS[a.preset][name] + overrides.get(name, "")))
        module = RUNNERS[name]
        settings = module.parse_settings([*args, *child])
        jobs.append(Job(name, args, tuple(module.plan_labels(settings, a.nproc))))
    return LlmSweepSettings(a.nproc, tuple(jobs), a.launches, a.out, child, env,
                            a.launch_timeout_s, a.budget_s, a.max_failed_launches)


def run_job(s: LlmSweepSettings, job: Job, index: int, sweep_id: str, deadline: float,
            excluded: list[str]) -> bool:
    """Launch ``job`` for ``index`` until its points are in or failures run out. ``excluded``
    holds the points that crashed a launch of this runner (any index); found culprits are added.
    Returns False when the budget ran out before it could (re)launch."""
    failures = 0
    while True:
        todo = [p for p in missing_points(s.out, job.labels, s.nproc, index) if p not in excluded]
        if not todo:
            return True
        left_s = deadline - time.monotonic()
        if left_s < MIN_LAUNCH_S:
            log.warning("%s launch %d: budget spent, %d points not measured", job.runner, index,
                        len(todo))
            return False
        launch_id = f"{sweep_id}-{job.runner}-L{index}" + (f"r{failures}" if failures else "")
        args = [*job.args, *s.child_args, "--launch-id", launch_id, "--launch-index", str(index)]
        for label in excluded:
            args += ["--exclude", label]
        log.info("%s launch %d (%s): %d points", job.runner, index, launch_id, len(todo))
        result = run_launch(torchrun_argv(s.nproc, RUNNERS[job.runner].__name__, args), s.env,
                            min(s.launch_timeout_s, left_s))
        log.info("%s launch %d: %.1f s", job.runner, index, result.wall_s)
        if result.ok:
            return True
        missing = [p for p in missing_points(s.out, job.labels, s.nproc, index)
                   if p not in excluded]
        culprit = missing[0] if missing else None
        reason = (f"timed out after {min(s.launch_timeout_s, left_s):g} s" if result.timed_out
                  else f"launch exited with status {result.returncode}")
        log.warning("%s launch %d: %s (point %s)", job.runner, index, reason, culprit)
        append_record(s.out, {"kind": "llm_failed", "runner": job.runner, "point": culprit,
                              "world": s.nproc, "launch_id": launch_id, "launch_index": index,
                              "reason": reason, "returncode": result.returncode,
                              "timed_out": result.timed_out, "env": s.env,
                              "output_tail": result.output_tail})
        failures += 1
        if culprit is None or failures >= s.max_failed_launches:
            return True
        excluded.append(culprit)


def run(s: LlmSweepSettings) -> int:
    sweep_id = uuid.uuid4().hex[:8]
    deadline = time.monotonic() + s.budget_s
    excluded: dict[str, list[str]] = {job.runner: [] for job in s.jobs}
    for index in range(s.launches):
        for job in s.jobs:
            if not run_job(s, job, index, sweep_id, deadline, excluded[job.runner]):
                break
    missing = [(job.runner, index, p) for index in range(s.launches) for job in s.jobs
               for p in missing_points(s.out, job.labels, s.nproc, index)]
    for runner, index, point in missing:
        log.error("missing: %s launch %d: %s", runner, index, point)
    total = s.launches * sum(len(j.labels) for j in s.jobs)
    log.info("llm sweep done: %d of %d points in %s", total - len(missing), total, s.out)
    return 1 if missing else 0


def main(argv: Sequence[str] | None = None) -> int:
    return entry_point(parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
