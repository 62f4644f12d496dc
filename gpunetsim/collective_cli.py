"""``gpunetsim collective``: nccl-tests' table for one collective over a range of sizes."""

from __future__ import annotations

import argparse
import json

from gpunetsim.cli_args import add_topology_args, params_from_args, topology_from_args
from simulator.collectives.algorithms import ALGOS
from simulator.core.errors import InputError
from simulator.core.limits import require_finite
from simulator.core.vocabulary import ENGINES, OPS, PROTOS


def register(sub) -> None:
    p = sub.add_parser("collective", help="time one NCCL-style collective over a range of sizes",
                       description="Predict nccl-tests-style results for a collective on a topology.")
    add_topology_args(p)
    p.add_argument("--op", default="all_reduce",
                   choices=OPS)
    p.add_argument("-b", "--min-bytes", default="8", help="smallest size (nccl-tests -b), e.g. 8, 1K, 1M")
    p.add_argument("-e", "--max-bytes", default="128M", help="largest size (nccl-tests -e), e.g. 8G")
    p.add_argument("-f", "--factor", type=float, default=2.0, help="size multiplier between steps")
    p.add_argument("--algo", default="auto", choices=["auto", *ALGOS],
                   help="NCCL's algorithm (auto: what NCCL's tuner picks among those the topology enables)")
    p.add_argument("--proto", default="auto", choices=["auto", *PROTOS])
    p.add_argument("--dtype", default="float", help="element type for the count column")
    p.add_argument("--engine", default="des", choices=ENGINES,
                   help="discrete-event simulation (des) or closed-form alpha-beta (closed)")
    p.add_argument("--json", action="store_true", help="one JSON object per size")
    p.set_defaults(func=_collective)


def _collective(args: argparse.Namespace) -> int:
    from simulator.network.closed_form import CostModel
    from simulator.core.vocabulary import GATHER_LIKE, REDOP_OPS, ROOTED_OPS, dtype_bytes, size_ladder
    from simulator.network.run import require_ranks, run_collective
    from simulator.core.units import parse_size
    lo = parse_size(args.min_bytes, field="--min-bytes")
    hi = parse_size(args.max_bytes, field="--max-bytes")
    if lo < 1 or hi < lo:
        raise InputError("need 1 <= --min-bytes <= --max-bytes", field="--min-bytes", value=f"{lo}..{hi}")
    if not args.factor > 1:
        raise InputError("--factor must be > 1", field="--factor", value=args.factor)
    tsize = dtype_bytes(args.dtype, field="--dtype")
    sizes = size_ladder(lo, hi, args.factor)
    model = CostModel(topology_from_args(args), params_from_args(args))
    n = model.ranks
    require_ranks(n)
    if not args.json:
        print(f"# gpunetsim collective: {args.op} on {model.router.info.name} x{args.nodes} "
              f"({n} GPUs), engine={args.engine}, params={model.params.name}")
        print(f"#{'size':>11} {'count':>12} {'type':>8} {'redop':>6} {'root':>5} {'time':>10} "
              f"{'algbw':>8} {'busbw':>8}  {'algo':>6} {'proto':>6}")
        print(f"#{'(B)':>11} {'(elements)':>12} {'':>8} {'':>6} {'':>5} {'(us)':>10} "
              f"{'(GB/s)':>8} {'(GB/s)':>8}")
    per_rank = args.op in GATHER_LIKE
    for size in sizes:
        r = run_collective(model, args.op, size, args.algo, args.proto, args.engine)
        require_finite(r.as_dict(), "predicted collective")
        if args.json:
            print(json.dumps(r.as_dict()))
            continue
        count = size // tsize // (n if per_rank else 1)
        redop = "sum" if args.op in REDOP_OPS else "none"
        root = 0 if args.op in ROOTED_OPS else -1
        print(f"{size:>12} {count:>12} {args.dtype:>8} {redop:>6} {root:>5} {r.time_s * 1e6:>10.2f} "
              f"{r.algbw_GBps:>8.2f} {r.busbw_GBps:>8.2f}  {r.algo:>6} {r.proto:>6}")
    return 0
