"""Repeat DDP runner launches so the spread across launches is visible.

::

    python -m validation.runners.ddp_sweep --nproc 8 --models resnet50,bert-base,gpt2 \\
        --bucket-caps 1,5,25,100,1000 --launches 3 --out ddp.jsonl

Each (model, launch) is its own ``torchrun`` of :mod:`validation.runners.ddp` with a distinct
``launch_id``; launches are interleaved (launch 0 of every model, then launch 1, ...) so slow
drift of the machine (clocks, temperature, neighbours) spreads over all models instead of
landing on one. The NVLS/multicast switches of :data:`validation.runners.sweep.ALWAYS_ENV` are
always set. A launch that fails or passes ``--launch-timeout-s`` is recorded as
``{"kind": "ddp_failed", ...}`` and the sweep goes on; a rerun skips (model, batch size, world,
launch index) combinations whose records are all in the file already.
"""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from typing import Any, Sequence

from simulator.core.errors import InputError
from validation.runners.ddp import MODEL_NAMES, parse_caps
from validation.runners.launch import add_process_args, require_torch, run_launch, torchrun_argv
from validation.runners.records import append_record, read_records
from validation.runners.sweep import launch_env
from validation.check_cli import run_command

log = logging.getLogger("validation.runners.ddp_sweep")

DEFAULT_BATCH = {"resnet50": 64, "bert-base": 32, "gpt2": 8, "mlp": 64}
"""Per-rank batch sizes used when ``--batch-size`` does not name one."""


def parse_batch_sizes(text: str | None, models: Sequence[str]) -> dict[str, int]:
    """``--batch-size``: one number for all models, or ``model:B,model:B`` (others default)."""
    sizes = {m: DEFAULT_BATCH[m] for m in models}
    if not text:
        return sizes
    try:
        if ":" not in text:
            return {m: int(text) for m in models}
        for item in filter(None, (t.strip() for t in text.split(","))):
            name, _, b = item.partition(":")
            if name not in sizes:
                raise InputError("batch size for a model not in --models", field="batch-size",
                                 value=name)
            sizes[name] = int(b)
    except ValueError:
        raise InputError("write a batch size as B or model:B,model:B", field="batch-size",
                         value=text) from None
    return sizes


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.ddp_sweep",
                                description="Repeated DDP runner launches per model.")
    p.add_argument("--nproc", type=int, required=True)
    p.add_argument("--models", default="resnet50", help="comma-separated: " + ",".join(MODEL_NAMES))
    p.add_argument("--batch-size", default=None, help="B, or model:B,model:B")
    p.add_argument("--bucket-caps", default="1,5,25,100,1000")
    p.add_argument("--launches", type=int, default=3, help="separate launches per model")
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--tiny", action="store_true")
    add_process_args(p)
    p.add_argument("--launch-timeout-s", type=float, default=1800.0)
    p.add_argument("--extra-env", action="append", default=[],
                   help="KEY=VAL added to every launch's environment (repeatable)")
    p.add_argument("--out", required=True)
    return p


LaunchKey = tuple[str, int, int, int, bool]
"""(model, batch_size, world, launch_index, tiny): one launch of the sweep."""


def recorded_caps(out: str) -> dict[LaunchKey, set[float]]:
    """The bucket caps already recorded for each launch of the output file."""
    seen: dict[LaunchKey, set[float]] = {}
    for r in read_records(out):
        if r.get("kind") != "ddp":
            continue
        try:
            key = (str(r["model"]), int(r["batch_size"]), int(r["world"]), int(r.get("launch_index", 0)),
                   bool(r.get("tiny", False)))
            seen.setdefault(key, set()).add(float(r["bucket_cap_mb"]))
        except (KeyError, TypeError, ValueError):
            continue                         # a damaged record measures nothing
    return seen


def caps_to_do(out: str, key: LaunchKey, caps: Sequence[float]) -> list[float]:
    """Caps of ``caps`` that launch ``key`` has not recorded yet (a rerun measures only those,
    so no (launch, cap) point is ever recorded twice)."""
    have = recorded_caps(out).get(key, set())
    return [c for c in caps if c not in have]


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    return run_command(lambda: _sweep(argv))


def _sweep(argv: Sequence[str] | None) -> int:
    """``main``'s work: check the options, then run the launches not recorded yet."""
    a = build_parser().parse_args(argv)
    models = [m.strip() for m in a.models.split(",") if m.strip()]
    for m in models:
        if m not in MODEL_NAMES:
            raise InputError(f"unknown model; choose from {', '.join(MODEL_NAMES)}",
                             field="models", value=m)
    caps = parse_caps(a.bucket_caps)
    batch = parse_batch_sizes(a.batch_size, models)
    env = launch_env(a.extra_env)
    require_torch()
    sweep_id = uuid.uuid4().hex[:8]
    for index in range(a.launches):
        for model in models:
            key = (model, batch[model], a.nproc, index, a.tiny)
            todo = caps_to_do(a.out, key, caps)
            if not todo:
                log.info("%s launch %d: already in %s, skipped", model, index, a.out)
                continue
            launch_id = f"{sweep_id}-{model}-L{index}"
            args = ["--model", model, "--batch-size", str(batch[model]), "--bucket-caps",
                    ",".join(repr(c) for c in todo), "--iters", str(a.iters), "--warmup", str(a.warmup),
                    "--backend", a.backend, "--device", a.device, "--out", a.out,
                    "--launch-id", launch_id, "--launch-index", str(index)]
            if a.tiny:
                args.append("--tiny")
            log.info("%s launch %d (%s)", model, index, launch_id)
            result = run_launch(torchrun_argv(a.nproc, "validation.runners.ddp", args), env,
                                a.launch_timeout_s)
            if not result.ok:
                reason = (f"timed out after {a.launch_timeout_s:g} s" if result.timed_out
                          else f"launch exited with status {result.returncode}")
                log.warning("%s launch %d: %s", model, index, reason)
                rec: dict[str, Any] = {"kind": "ddp_failed", "model": model,
                                       "batch_size": batch[model], "world": a.nproc,
                                       "launch_id": launch_id, "launch_index": index,
                                       "bucket_caps_mb": caps, "reason": reason,
                                       "returncode": result.returncode, "env": env,
                                       "output_tail": result.output_tail}
                append_record(a.out, rec)
    missing = [f"{m} launch {i}: caps {', '.join(f'{c:g}' for c in left)}"
               for i in range(a.launches) for m in models
               if (left := caps_to_do(a.out, (m, batch[m], a.nproc, i, a.tiny), caps))]
    if missing:
        log.error("sweep incomplete: %d launches left points missing in %s (%s); rerun the same "
                  "command to measure only those", len(missing), a.out, "; ".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
