"""Repeat :mod:`validation.runners.dataparallel` launches (DataParallel varies between launches).

::

    python -m validation.runners.dp_sweep --nproc 2 --models resnet50,bert-base,gpt2,mlp \\
        --launches 3 --out dp_world2.jsonl

Each launch is its own ``torchrun`` (a fresh process, CUDA context and NCCL communicator) with a
distinct ``launch_id``, so the spread between launches shows in the records. The NVLS/multicast
switches of :data:`validation.runners.sweep.ALWAYS_ENV` are always set. A launch that fails or
passes ``--launch-timeout-s`` is recorded as ``{"kind": "dp_failed", ...}`` and the sweep goes
on; a rerun skips launch indices whose ``dp`` records cover every model already.
"""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from typing import Sequence

from simulator.core.errors import InputError
from validation.runners.dataparallel import parse_batch, parse_models
from validation.runners.launch import require_torch, run_launch, torchrun_argv
from validation.runners.records import append_record, read_records
from validation.runners.sweep import ALWAYS_ENV
from validation.check_cli import run_command

log = logging.getLogger("validation.runners.dp_sweep")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.dp_sweep",
                                description="Repeated DataParallel-vs-DDP launches.")
    p.add_argument("--nproc", type=int, required=True, help="GPUs (ranks) per launch")
    p.add_argument("--models", default="resnet50,bert-base,gpt2,mlp")
    p.add_argument("--batch-size", default=None, help="per-GPU batch: B, or model:B,model:B")
    p.add_argument("--launches", type=int, default=3)
    p.add_argument("--iters", type=int, default=15)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--breakdown-reps", type=int, default=3)
    p.add_argument("--tiny", action="store_true")
    p.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    p.add_argument("--launch-timeout-s", type=float, default=900.0)
    p.add_argument("--out", required=True)
    return p


def done_launches(out: str, models: Sequence[str], world: int) -> set[int]:
    """Launch indices whose ``dp`` records (at ``world`` ranks) cover every model."""
    seen: dict[int, set[str]] = {}
    for r in read_records(out):
        if r.get("kind") == "dp" and int(r.get("world", 0)) == world:
            seen.setdefault(int(r.get("launch_index", 0)), set()).add(str(r["model"]))
    return {i for i, ms in seen.items() if set(models) <= ms}


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    return run_command(lambda: _sweep(argv))


def _sweep(argv: Sequence[str] | None) -> int:
    """``main``'s work: check the options, then run the launches not recorded yet."""
    a = build_parser().parse_args(argv)
    models = parse_models(a.models)
    parse_batch(a.batch_size, models)
    if a.nproc < 1 or a.launches < 1:
        raise InputError("need nproc >= 1 and launches >= 1", field="nproc",
                         value=(a.nproc, a.launches))
    require_torch()
    sweep_id = uuid.uuid4().hex[:8]
    done = done_launches(a.out, models, a.nproc)
    for index in range(a.launches):
        if index in done:
            log.info("launch %d: already in %s, skipped", index, a.out)
            continue
        launch_id = f"{sweep_id}-dp-L{index}"
        args = ["--models", ",".join(models), "--iters", str(a.iters), "--warmup", str(a.warmup),
                "--breakdown-reps", str(a.breakdown_reps), "--device", a.device, "--out", a.out,
                "--launch-id", launch_id, "--launch-index", str(index)]
        if a.batch_size:
            args += ["--batch-size", a.batch_size]
        if a.tiny:
            args.append("--tiny")
        log.info("launch %d (%s)", index, launch_id)
        result = run_launch(torchrun_argv(a.nproc, "validation.runners.dataparallel", args),
                            dict(ALWAYS_ENV), a.launch_timeout_s)
        log.info("launch %d: %.1f s", index, result.wall_s)
        if not result.ok:
            reason = (f"timed out after {a.launch_timeout_s:g} s" if result.timed_out
                      else f"launch exited with status {result.returncode}")
            log.warning("launch %d: %s", index, reason)
            append_record(a.out, {"kind": "dp_failed", "world": a.nproc, "models": list(models),
                                  "launch_id": launch_id, "launch_index": index, "reason": reason,
                                  "returncode": result.returncode,
                                  "output_tail": result.output_tail})
    return 0


if __name__ == "__main__":
    sys.exit(main())
