"""Run the collectives runner once per NCCL variant (algorithm, protocol, transport).

::

    python -m validation.runners.sweep --nproc 8 --variants default,ring,tree,ll,ll128,simple,nop2p,noshm,socket \\
        --ops all_reduce,all_gather --max-bytes 1G --out results.jsonl

Each variant is one ``torchrun`` launch of :mod:`validation.runners.collectives` with the
variant's environment, plus, always, ``NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
NVSHMEM_DISABLE_NVLS=1`` (NVLink SHARP / multicast stays off). Every launch has a wall-clock
limit. A launch that exits non-zero or hangs is recorded as ``{"kind": "coll_failed", ...}``
naming the first op still missing points (the one it was most likely running), and the sweep
relaunches the variant for the ops after it, up to ``--max-failed-launches`` times; then it goes
on with the next variant. Points already in the output file are skipped, so rerunning the same
command only measures what is missing.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from typing import Sequence

from simulator.core.errors import InputError
from simulator.core.units import parse_size
from simulator.core.vocabulary import OPS, size_ladder
from validation.runners.collectives import DTYPE_SIZES, parse_ops, plan_points
from validation.runners.launch import add_process_args, entry_point, run_launch, torchrun_argv
from validation.runners.records import append_record, done_points, read_records

log = logging.getLogger("validation.runners.sweep")

ALWAYS_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
              "NVSHMEM_DISABLE_NVLS": "1"}
"""Set for every launch: NVLink multicast (NVLS) off."""

VARIANTS: dict[str, dict[str, str]] = {
    "default": {},
    "ring": {"NCCL_ALGO": "Ring"},
    # Tree exists for all-reduce only; a plain NCCL_ALGO=Tree also breaks the runner's own broadcasts.
    "tree": {"NCCL_ALGO": "allreduce:Tree"},
    "ll": {"NCCL_PROTO": "LL"},
    "ll128": {"NCCL_PROTO": "LL128"},
    "simple": {"NCCL_PROTO": "Simple"},
    "nop2p": {"NCCL_P2P_DISABLE": "1"},
    "noshm": {"NCCL_SHM_DISABLE": "1"},
    "socket": {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"},
}
"""Built-in variants: name -> NCCL environment (on top of :data:`ALWAYS_ENV`)."""


def launch_env(extra: Sequence[str]) -> dict[str, str]:
    """:data:`ALWAYS_ENV` plus ``KEY=VAL`` items (``--extra-env``): what every launch gets."""
    env = dict(ALWAYS_ENV)
    for item in extra:
        key, eq, val = item.partition("=")
        if not eq or not key:
            raise InputError("write extra env as KEY=VAL", field="extra-env", value=item)
        env[key] = val
    return env


def parse_extra_variant(text: str) -> tuple[str, dict[str, str]]:
    """``NAME:KEY=VAL[,KEY=VAL]`` -> (name, env). Lets a sweep try any NCCL setting."""
    name, sep, rest = text.partition(":")
    if not sep or not name.strip():
        raise InputError("write an extra variant as NAME:KEY=VAL[,KEY=VAL]",
                         field="extra-variant", value=text)
    env = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, val = item.partition("=")
        if not eq or not key:
            raise InputError("write an extra variant as NAME:KEY=VAL[,KEY=VAL]",
                             field="extra-variant", value=text)
        env[key.strip()] = val.strip()
    return name.strip(), env


def variant_env(name: str, extra: dict[str, dict[str, str]]) -> dict[str, str]:
    """The full environment a variant's launch gets (always including :data:`ALWAYS_ENV`)."""
    table = {**VARIANTS, **extra}
    if name not in table:
        raise InputError(f"unknown variant; choose from {', '.join(table)} or add one with "
                         "--extra-variant", field="variants", value=name)
    return {**ALWAYS_ENV, **table[name]}


@dataclass(frozen=True)
class SweepSettings:
    """Validated sweep settings."""

    nproc: int
    variants: tuple[str, ...]
    extra: dict[str, dict[str, str]]
    ops: tuple[str, ...]
    sizes: tuple[int, ...]
    child_args: tuple[str, ...]
    dtype: str
    out: str
    launch_timeout_s: float
    max_failed_launches: int


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.sweep",
                                description="One torchrun of the collectives runner per NCCL variant.")
    p.add_argument("--nproc", type=int, required=True, help="processes (GPUs) per launch")
    p.add_argument("--variants", default="default",
                   help="comma-separated: " + ",".join(VARIANTS) + " or --extra-variant names")
    p.add_argument("--extra-variant", action="append", default=[],
                   help="define a variant NAME:KEY=VAL[,KEY=VAL] (repeatable)")
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--min-bytes", default="4")
    p.add_argument("--max-bytes", default="1G")
    p.add_argument("--factor", type=float, default=2.0)
    p.add_argument("--dtype", default="float32", choices=sorted(DTYPE_SIZES))
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", default="auto")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--timeout-s", type=float, default=120.0,
                   help="process-group timeout inside each launch")
    p.add_argument("--launch-timeout-s", type=float, default=1800.0,
                   help="wall-clock limit of one launch; it is killed after that")
    p.add_argument("--max-failed-launches", type=int, default=3,
                   help="failed launches of one variant before giving up on it")
    add_process_args(p)
    p.add_argument("--rotate-bytes", default="0",
                   help="passed to the runner: 0 reuses one buffer set per point, else rotate this many bytes")
    p.add_argument("--out", required=True)
    return p


def parse_settings(argv: Sequence[str] | None) -> SweepSettings:
    a = build_parser().parse_args(argv)
    if a.nproc < 1:
        raise InputError("nproc must be at least 1", field="nproc", value=a.nproc)
    extra = dict(parse_extra_variant(t) for t in a.extra_variant)
    variants = tuple(v.strip() for v in a.variants.split(",") if v.strip())
    for v in variants:
        variant_env(v, extra)  # validates the name
    sizes = size_ladder(parse_size(a.min_bytes, "min-bytes"), parse_size(a.max_bytes, "max-bytes"),
                        a.factor)
    child = ("--min-bytes", str(a.min_bytes), "--max-bytes", str(a.max_bytes), "--factor",
             str(a.factor), "--dtype", a.dtype, "--warmup", str(a.warmup), "--iters", str(a.iters),
             "--reps", str(a.reps), "--timeout-s", str(a.timeout_s), "--backend", a.backend,
             "--device", a.device, "--rotate-bytes", str(a.rotate_bytes), "--out", a.out)
    return SweepSettings(a.nproc, variants, extra, tuple(parse_ops(a.ops)), tuple(sizes), child,
                         a.dtype, a.out, a.launch_timeout_s, a.max_failed_launches)


def ops_to_do(s: SweepSettings, variant: str, ops: Sequence[str]) -> list[str]:
    """Ops of ``ops`` that still have points missing from the output file."""
    done = done_points(read_records(s.out))
    return [op for op in ops if plan_points([op], s.nproc, s.dtype, s.sizes, variant, done)]


def sweep_variant(s: SweepSettings, variant: str) -> int:
    """Measure one variant, relaunching past failing ops. Returns the number of launches made."""
    env = variant_env(variant, s.extra)
    remaining = list(s.ops)
    failures = launches = 0
    while True:
        todo = ops_to_do(s, variant, remaining)
        if not todo:
            log.info("variant %s: nothing left to measure", variant)
            return launches
        argv = torchrun_argv(s.nproc, "validation.runners.collectives",
                             [*s.child_args, "--variant", variant, "--ops", ",".join(todo)])
        log.info("variant %s: launching for %s", variant, ",".join(todo))
        result = run_launch(argv, env, s.launch_timeout_s)
        launches += 1
        missing = ops_to_do(s, variant, todo)
        if result.ok and not missing:
            return launches
        failed_op = missing[0] if missing else None
        reason = (f"timed out after {s.launch_timeout_s:g} s" if result.timed_out
                  else f"launch exited with status {result.returncode}" if not result.ok
                  else "launch exited 0 but left points unmeasured (a rank killed or frozen?)")
        log.warning("variant %s: %s (op %s)", variant, reason, failed_op)
        append_record(s.out, {"kind": "coll_failed", "variant": variant, "op": failed_op,
                              "world": s.nproc, "dtype": s.dtype, "reason": reason,
                              "returncode": result.returncode, "timed_out": result.timed_out,
                              "env": env, "output_tail": result.output_tail})
        failures += 1
        remaining = [op for op in todo if op != failed_op]
        if failures >= s.max_failed_launches and remaining:
            append_record(s.out, {"kind": "coll_failed", "variant": variant, "op": None,
                                  "world": s.nproc, "dtype": s.dtype, "env": env,
                                  "reason": f"gave up after {failures} failed launches",
                                  "ops_left": remaining})
            return launches
        if failed_op is None:
            return launches


def missing_points(s: SweepSettings) -> dict[str, int]:
    """Points of the sweep still absent from the output file, counted per variant."""
    done = done_points(read_records(s.out))
    counts = {v: len(plan_points(list(s.ops), s.nproc, s.dtype, s.sizes, v, done)) for v in s.variants}
    return {v: n for v, n in counts.items() if n}


def run(s) -> int:
    """Every variant in turn; exit status 1 when points are still missing after the allowed
    relaunches (rerunning the same command measures only those)."""
    total = sum(sweep_variant(s, v) for v in s.variants)
    missing = missing_points(s)
    if missing:
        log.error("sweep incomplete after %d launches: points missing in %s (%s); rerun the same "
                  "command to measure them", total, s.out,
                  ", ".join(f"{v}: {n}" for v, n in missing.items()))
        return 1
    log.info("sweep done: %d launches, results in %s", total, s.out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return entry_point(parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
