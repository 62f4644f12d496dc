"""``gpunetsim sweep STUDY.yaml`` and ``gpunetsim plan``: run a study, print a table, write
report.html, results.csv and results.jsonl (registered by gpunetsim.cli)."""

from __future__ import annotations

import argparse
from collections import Counter
import sys
import time
from typing import Sequence

from simulator.core.errors import InputError

DEFAULT_OUT = "gpunetsim-out"
_COLS = ("batch_size", "strategy", "backend", "topology", "gpus", "fabric", "transport", "nic_bw", "nics", "oversubscription",
         "hosts_per_leaf", "algo", "bucket_cap_mb", "engine", "calibration")


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=DEFAULT_OUT,
                   help=f"folder for report.html, results.csv, results.jsonl (default ./{DEFAULT_OUT})")
    run = p.add_mutually_exclusive_group()      # as search's: --workers was ignored beside --scheduler
    run.add_argument("--workers", type=int, default=None,
                     help="local worker processes (default: one per core; 1 = no subprocesses)")
    run.add_argument("--scheduler", default=None, metavar="tcp://HOST:8786",
                     help="run on a Dask cluster (needs gpunetsim[dask]); same rows, same order")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--resume", action="store_true",
                   help="keep the points already in --out/results.jsonl (an interrupted run) and "
                        "evaluate only the others")


def register(sub) -> None:
    p = sub.add_parser("sweep", help="run a study (a YAML grid of clusters and models) and write a report",
                       description="Evaluate every point of a study file; print a table and write "
                                   "report.html, results.csv and results.jsonl into --out.")
    p.add_argument("study", help="study YAML file (see docs/cli.md)")
    _run_args(p)
    p.set_defaults(func=_sweep)
    q = sub.add_parser("plan", help="the built-in capacity-planning study (also: gpunetsim with no arguments)",
                       description="ResNet-50 and GPT-2 under PyTorch DDP on DGX H100, 1 to 32 nodes, "
                                   "all_reduce bus bandwidth curves, and the fastest parallel plan of "
                                   "Llama 3 8B and 70B on 8 to 1024 GPUs.")
    _run_args(q)
    q.set_defaults(func=_plan)


def _sweep(args: argparse.Namespace) -> int:
    from gpunetsim.study import load_study
    return _run(load_study(args.study), args)


def _plan(args: argparse.Namespace) -> int:
    from gpunetsim.study import DEFAULT_STUDY, load_study
    return _run(load_study(DEFAULT_STUDY), args)


EXIT_FAILED_POINTS = 1
EXIT_INTERRUPTED = 130


def _run(study, args: argparse.Namespace) -> int:
    """Evaluate the study's points, streaming each finished one into ``--out``; a failing point
    is named and skipped; Ctrl-C keeps what finished. Exit 0 (all points), 1 (some failed) or
    130 (interrupted; rerun with --resume)."""
    from gpunetsim.report import build_report
    from gpunetsim.study_output import StudyOutput
    from gpunetsim.study_run import check_scheduler, stream_points
    if args.workers is not None and args.workers < 1:
        raise InputError("must be at least 1", field="--workers", value=args.workers)
    if args.scheduler is not None:
        check_scheduler(args.scheduler)     # before --out is cleared and the progress bar starts
    out = StudyOutput(args.out)
    by_index = {p.index: p for p in study.points}
    todo = out.start(study.points, resume=args.resume)
    if args.resume:
        print(f"# resume: {len(study.points) - len(todo)} of {len(study.points)} points already in "
              f"{out.path('results.jsonl')}"
              + (f"; {out.dropped} of its records match no point of this study (its axes changed) and are "
                 "dropped" if out.dropped else ""), file=sys.stderr)
    t0 = time.perf_counter()
    try:
        interrupted = stream_points(todo, lambda o: out.add(o, by_index[o.index]), workers=args.workers,
                                    scheduler=args.scheduler, progress=not args.no_progress, desc=study.name)
    finally:
        out.close()
    elapsed = time.perf_counter() - t0
    rows, failures = out.ordered_rows(), out.ordered_failures()
    print_table(study, rows, [index for index, _, _ in failures])
    for index, label, error in failures:
        print(f"# failed: {label}: {error}")
    spec = study.spec
    engines = ", ".join(spec.engine)
    status = ""
    if failures:
        status = f"; {len(failures)} of {len(study.points)} points failed"
    out.finish(None if interrupted else
               build_report(rows, title=f"gpunetsim: {spec.name} study",
                            subtitle=f"{spec.description} (engine: {engines}; parameters: "
                                     f"{spec.calibration or 'datasheet'}; {len(rows)} points{status})",
                            failures=[(label, error) for _, label, error in failures]))
    written = [out.path(n) for n in ("report.html", "results.csv", "results.jsonl") if out.path(n).exists()]
    if failures:
        written.append(out.path("failed.jsonl"))
    print(f"# wrote {', '.join(map(str, written))}")
    print(f"# {_ran(study, rows, [index for index, _, _ in failures])} in {elapsed:.1f} s", file=sys.stderr)
    if interrupted:
        print(f"gpunetsim: interrupted after {len(rows)} of {len(study.points)} points; what finished is "
              f"in {out.folder} (rerun with --resume to finish)", file=sys.stderr)
        return EXIT_INTERRUPTED
    if failures:
        print(f"gpunetsim: {len(failures)} of {len(study.points)} points failed (listed above, in "
              f"{out.path('failed.jsonl')} and in the report)", file=sys.stderr)
        return EXIT_FAILED_POINTS
    return 0


def _label(row: dict, cols: Sequence[str]) -> str:
    from gpunetsim.report import series_label
    return series_label(row, ["model", *cols])


def _ms(seconds: float | None) -> str:
    """An interval edge in ms, 8 wide; '-' where the row has none (DataParallel, or a row resumed from an
    older results.jsonl)."""
    return f"{'-':>8}" if seconds is None else f"{seconds * 1e3:>8.2f}"


def _ran(study, rows: Sequence[dict], failed: Sequence[int]) -> str:
    """'N points' when every point of the study ran, else how many ran, failed (named by index) and were not run
    (interrupted): the rows alone hid a failed point (review s26 #12: '# 1 DDP points, 0 collective points' for a
    study whose train point failed)."""
    total = len(study.points)
    if len(rows) == total:
        return f"{total} points"
    left = total - len(rows) - len(failed)
    return (f"{total} points ({len(rows)} ran"
            + (f", {len(failed)} failed: {', '.join(f'#{i}' for i in failed)}" if failed else "")
            + (f", {left} not run" if left else "") + ")")


def print_table(study, rows: Sequence[dict], failed: Sequence[int] = ()) -> None:
    """The DDP rows as a table, then a bus-bandwidth summary of the collective rows; the header counts the
    study's points of each kind (``failed``: the indexes of those that failed)."""
    from gpunetsim.report import _varying
    ddp = [r for r in rows if r["kind"] == "ddp"]
    coll = [r for r in rows if r["kind"] == "collective"]
    train = [r for r in rows if r["kind"] == "train"]
    plans = [r for r in rows if r["kind"] == "search"]
    spec = study.spec
    kinds = Counter(p.kind for p in study.points)
    print(f"# gpunetsim {study.name}: {spec.description or study.source}")
    print(f"# {kinds['ddp']} DDP points, {kinds['collective']} collective points"
          + (f", {kinds['train']} LLM training points" if kinds["train"] else "")
          + (f", {kinds['search']} LLM plan searches" if kinds["search"] else "")
          + f"; engine={','.join(spec.engine)}, params={spec.calibration or 'datasheet'}"
          + ("" if len(rows) == len(study.points) else f"; {_ran(study, rows, failed)}"))
    if train:
        from gpunetsim.train_study import print_train_table
        print_train_table(train)
    if ddp:
        cols = [c for c in _varying(ddp, _COLS) if c != "gpus"]
        labels = [_label(r, cols) for r in ddp]
        w = max(14, *(len(s) for s in labels))
        print(f"#{'configuration':<{w - 1}} {'nodes':>5} {'GPUs':>5} {'iter(ms)':>9} {'90% lo':>8} {'90% hi':>8} "
              f"{'samples/s':>10} {'scaling':>7} {'exposed(ms)':>11}  limit")
        for lab, r in zip(labels, ddp):
            print(f"{lab:<{w}} {r['nodes']:>5} {r['total_gpus']:>5} {r['iteration_s'] * 1e3:>9.2f} "
                  f"{_ms(r.get('iteration_lo_s'))} {_ms(r.get('iteration_hi_s'))} "
                  f"{r['samples_per_s'] or 0:>10.0f} {r['scaling_efficiency'] * 100:>6.1f}% "
                  f"{r['exposed_comm_s'] * 1e3:>11.3f}  {r['limit']}")
    if coll:
        from simulator.core.units import format_bytes
        sizes = sorted({r["size_bytes"] for r in coll})
        show = [s for s in (2**20, 32 * 2**20) if s in sizes[:-1]] + [sizes[-1]]
        cols = _varying(coll, ("topology", "gpus", "fabric", "transport", "nic_bw", "nics",
                               "oversubscription", "hosts_per_leaf", "algo", "engine"))
        op = coll[0]["op"]
        print(f"# {op} busbw (GB/s) by message size")
        head = " ".join(f"{format_bytes(s):>9}" for s in show)
        w = max(14, *(len(_label(r, cols)) - len(str(r['model'])) for r in coll))
        print(f"#{'network':<{w - 1}} {'nodes':>5} {'GPUs':>5} {head}  limit@{format_bytes(show[-1])}")
        groups: dict[tuple, dict[int, dict]] = {}
        for r in coll:
            groups.setdefault((tuple(r[c] for c in cols), r["nodes"]), {})[r["size_bytes"]] = r
        for (vals, nodes), by_size in groups.items():
            any_row = next(iter(by_size.values()))
            name = ", ".join(str(v) for v in vals) or str(any_row["topology"])
            bws = " ".join(f"{by_size[s]['busbw_GBps']:>9.1f}" if s in by_size else f"{'-':>9}" for s in show)
            last = by_size[show[-1]]["limit"] if show[-1] in by_size else "-"
            print(f"{name:<{w}} {nodes:>5} {any_row['total_gpus']:>5} {bws}  {last}")
    if plans:
        from gpunetsim.search_study import print_search_table
        print_search_table(plans)
