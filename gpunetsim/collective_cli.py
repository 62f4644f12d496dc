"""``gpunetsim collective``: nccl-tests' table for one collective over a range of sizes."""

from __future__ import annotations

import argparse
import json
import logging
from typing import TYPE_CHECKING

from gpunetsim.cli_args import (add_backend_args, add_nccl_version_arg, add_topology_args, comm_model_from_args,
                                nccl_words, params_from_args, topology_from_args, tuner_plugin_idle)
from simulator.collectives.algorithms import ALGOS
from simulator.collectives.backends import ALGOS_FOR_HOST_OP
from simulator.core.errors import InputError
from simulator.core.limits import require_finite
from simulator.core.vocabulary import ENGINES, NCCL_TESTS_DTYPE, OPS, PROTOS

if TYPE_CHECKING:                     # registering the subcommand imports no simulator.network module
    from simulator.network.regret import Regret


def register(sub) -> None:
    p = sub.add_parser("collective", help="time one NCCL-style collective over a range of sizes",
                       description="Predict nccl-tests-style results for a collective on a topology.")
    add_topology_args(p)
    add_backend_args(p)
    add_nccl_version_arg(p)
    p.add_argument("--op", default="all_reduce",
                   choices=OPS)
    p.add_argument("-b", "--min-bytes", default="8", help="smallest size (nccl-tests -b), e.g. 8, 1K, 1M")
    p.add_argument("-e", "--max-bytes", default="128M", help="largest size (nccl-tests -e), e.g. 8G")
    p.add_argument("-f", "--factor", type=float, default=2.0, help="size multiplier between steps")
    host_algos = sorted({a for algos in ALGOS_FOR_HOST_OP.values() for a in algos} - set(ALGOS))
    p.add_argument("--algo", default="auto", choices=["auto", *ALGOS, *host_algos],
                   help="NCCL's algorithm (auto: what NCCL's tuner picks among those the topology enables); "
                        "gloo/mpi: ring or halving_doubling (all_reduce), tree (broadcast, reduce), direct")
    p.add_argument("--proto", default="auto", choices=["auto", *PROTOS])
    p.add_argument("--dtype", default=NCCL_TESTS_DTYPE, help="element type for the count column")
    p.add_argument("--engine", default="des", choices=ENGINES,
                   help="discrete-event simulation (des) or closed-form alpha-beta (closed); gloo and "
                        "mpi are timed in closed form")
    p.add_argument("--json", action="store_true", help="one JSON object per size")
    p.set_defaults(func=_collective)


def _collective(args: argparse.Namespace) -> int:
    from simulator.network.closed_form import CostModel
    from simulator.core.vocabulary import REDOP_OPS, ROOTED_OPS, dtype_bytes, nccl_tests_size, size_ladder
    from simulator.network.run import require_ranks, run_collective, run_host_collective
    from simulator.core.units import parse_size
    lo = parse_size(args.min_bytes, field="--min-bytes")
    hi = parse_size(args.max_bytes, field="--max-bytes")
    if lo < 1 or hi < lo:
        raise InputError("need 1 <= --min-bytes <= --max-bytes", field="--min-bytes", value=f"{lo}..{hi}")
    if not args.factor > 1:
        raise InputError("--factor must be > 1", field="--factor", value=args.factor)
    tsize = dtype_bytes(args.dtype, field="--dtype")
    sizes = size_ladder(lo, hi, args.factor)
    if args.backend != "nccl":       # the op asked for, not the one the host model checks (send_recv for MPI)
        from simulator.collectives.backends import check_support, default_tensors
        check_support(args.backend, args.tensors or default_tensors(args.backend), args.op)
    model = comm_model_from_args(args, topology_from_args(args), params_from_args(args))
    host = not isinstance(model, CostModel)
    if host:
        model.algos(args.op, args.algo)           # support matrix and algorithm checked before any output
        engine = "closed"
    else:
        model.choices(args.op, args.algo, args.proto)     # an algorithm the topology cannot run: before any output
        engine = args.engine
    n = model.ranks
    require_ranks(n)
    rows = [nccl_tests_size(args.op, n, size, tsize) for size in sizes]
    empty = [size for size, (_, count) in zip(sizes, rows) if count == 0]
    _warn_empty(args, n, tsize, empty, every=len(empty) == len(rows))
    if not args.json:
        what = f", backend={args.backend} ({model.tensors} tensors)" if host else nccl_words(args, model.planner)
        print(f"# gpunetsim collective: {args.op} on {model.router.info.name} x{args.nodes} "
              f"({n} {'processes' if host else 'GPUs'}), engine={engine}{what}, params={model.params.name}")
        print(f"#{'size':>11} {'count':>12} {'type':>8} {'redop':>6} {'root':>5} {'time':>10} "
              f"{'algbw':>8} {'busbw':>8}  {'algo':>14} {'proto':>6}  {'90% lo':>9} {'90% hi':>9}  tuner regret")
        print(f"#{'(B)':>11} {'(elements)':>12} {'':>8} {'':>6} {'':>5} {'(us)':>10} "
              f"{'(GB/s)':>8} {'(GB/s)':>8}  {'':>14} {'':>6}  {'(us)':>9} {'(us)':>9}")
    outside: set[str] = set()
    for size, count in rows:
        if count == 0:
            continue
        r = (run_host_collective(model, args.op, size, args.algo, args.proto) if host
             else run_collective(model, args.op, size, args.algo, args.proto, engine, regret=True))
        require_finite(r.as_dict(), "predicted collective")
        outside.update(r.extrapolated)
        if args.json:
            print(json.dumps(r.as_dict()))
            continue
        redop = "sum" if args.op in REDOP_OPS else "none"
        root = 0 if args.op in ROOTED_OPS else -1
        print(f"{size:>12} {count:>12} {args.dtype:>8} {redop:>6} {root:>5} {r.time_s * 1e6:>10.2f} "
              f"{r.algbw_GBps:>8.2f} {r.busbw_GBps:>8.2f}  {r.algo:>14} {r.proto:>6}  "
              + (f"{r.time_lo_s * 1e6:>9.2f} {r.time_hi_s * 1e6:>9.2f}" if r.time_lo_s is not None
                 else f"{'-':>9} {'-':>9}") + f"  {_marker(r.regret)}".rstrip())
    idle = tuner_plugin_idle(model, args, args.op)
    if idle and not args.json:
        print(idle)
    if outside and not args.json:
        head = "caveats of the interval" if host else "extrapolated beyond the calibration's data"
        print(f"# {head} ({'; '.join(sorted(outside))}): "
              + ("the interval is the backend's residual spread where it was measured "
                 "(simulator.collectives.host_uncertainty)" if host else
                 "the interval includes the parameters it could not determine"))
    return 0


def _warn_empty(args: argparse.Namespace, ranks: int, type_bytes: int, empty: list[int], every: bool) -> None:
    """Sizes below one element per rank are nccl-tests' rows of size 0, which NCCL runs as nothing: none is timed
    (a warning names them), and when ``every`` size is one of them the command is refused."""
    if not empty:
        return
    from simulator.core.vocabulary import whole_elements_words
    what = whole_elements_words(args.op, ranks, args.dtype, type_bytes)
    if every:
        raise InputError(f"{what}, and every size is below it (nccl-tests would print size 0)",
                         field="--max-bytes", value=args.max_bytes)
    shown = ", ".join(map(str, empty[:8])) + (", ..." if len(empty) > 8 else "")
    logging.getLogger("gpunetsim").warning(
        "--min-bytes: %s; the sizes below it (%s B) are not timed (nccl-tests prints them as size 0: NCCL runs "
        "nothing)",
        what, shown)


def _marker(regret: Regret | None) -> str:
    """'*' and the faster choice where the tuner's pick is over the threshold (10%) slower, else blank."""
    if regret is None or not regret.marked:
        return ""
    return f"* {regret.best_algo}/{regret.best_proto} {regret.regret_pct:+.0f}%"
