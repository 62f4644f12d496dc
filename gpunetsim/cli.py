"""The ``gpunetsim`` command line. Every subcommand prints an InputError as one line, exit 2."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, Sequence

from simulator.core.errors import InputError
from simulator.core.vocabulary import ENGINES

EXIT_INPUT = 2


def add_topology_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("topology")
    g.add_argument("--topology", default="dgx-h100",
                   help="preset (dgx-h100, hgx-h200, dgx-a100, pcie-gen3/4/5) or a YAML/JSON file")
    g.add_argument("--nodes", type=int, default=1, help="number of servers (presets)")
    g.add_argument("--gpus", type=int, default=None, help="GPUs used per server (first G)")
    g.add_argument("--no-p2p", action="store_true", help="GPU peer-to-peer off: traffic through host memory")
    g.add_argument("--socket-transport", action="store_true",
                   help="NCCL's socket transport (P2P and SHM off, or IB off): every hop through TCP")
    g.add_argument("--cpu-sockets", type=int, default=None, help="CPU sockets per server: 1 or 2 (presets)")
    g.add_argument("--fabric", default="rail", choices=["rail", "fat-tree"], help="multi-node fabric layout")
    g.add_argument("--transport", default="ib", choices=["ib", "roce"], help="InfiniBand or RoCE/Ethernet")
    g.add_argument("--nic-bw", default=None, help="NIC bandwidth, e.g. '400 Gb/s' (default: preset's)")
    g.add_argument("--nics", type=int, default=None, help="NICs per server (default: preset's)")
    g.add_argument("--oversubscription", type=float, default=1.0,
                   help="leaf:spine oversubscription (matters for traffic that crosses the spine)")
    g.add_argument("--hosts-per-leaf", type=int, default=32,
                   help="servers under one leaf switch per rail; more servers than this span several "
                        "leaf groups joined through the spine")
    p.add_argument("--calibration", default=None, help="calibration JSON (or a shipped calibration's name)")


def topology_from_args(args: argparse.Namespace):
    import topologies
    from simulator.core.units import parse_bandwidth
    fabric = topologies.FabricSpec(
        fabric=args.fabric, transport=args.transport,
        nic_Bps=parse_bandwidth(args.nic_bw, field="--nic-bw") if args.nic_bw else None,
        nics=args.nics, oversubscription=args.oversubscription, hosts_per_leaf=args.hosts_per_leaf)
    return topologies.build(args.topology, nodes=args.nodes, gpus_per_node=args.gpus,
                            p2p=False if args.no_p2p else None, fabric=fabric, sockets=args.socket_transport,
                            cpu_sockets=args.cpu_sockets)


def params_from_args(args: argparse.Namespace):
    from simulator.collectives.params import load_calibration
    return load_calibration(args.calibration)


# ---------------------------------------------------------------- collective
def _collective_parser(sub) -> None:
    p = sub.add_parser("collective", help="time one NCCL-style collective over a range of sizes",
                       description="Predict nccl-tests-style results for a collective on a topology.")
    add_topology_args(p)
    p.add_argument("--op", default="all_reduce",
                   choices=["all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce",
                            "all_to_all", "send_recv"])
    p.add_argument("-b", "--min-bytes", default="8", help="smallest size (nccl-tests -b), e.g. 8, 1K, 1M")
    p.add_argument("-e", "--max-bytes", default="128M", help="largest size (nccl-tests -e), e.g. 8G")
    p.add_argument("-f", "--factor", type=float, default=2.0, help="size multiplier between steps")
    p.add_argument("--algo", default="auto", choices=["auto", "ring", "tree", "direct"])
    p.add_argument("--proto", default="auto", choices=["auto", "ll", "ll128", "simple"])
    p.add_argument("--dtype", default="float", help="element type for the count column")
    p.add_argument("--engine", default="des", choices=ENGINES,
                   help="discrete-event simulation (des) or closed-form alpha-beta (closed)")
    p.add_argument("--json", action="store_true", help="one JSON object per size")
    p.set_defaults(func=_collective)


def _collective(args: argparse.Namespace) -> int:
    from simulator.network.closed_form import CostModel
    from simulator.core.vocabulary import GATHER_LIKE, REDOP_OPS, ROOTED_OPS, dtype_bytes, size_ladder
    from simulator.network.run import run_collective
    from simulator.core.units import parse_size
    lo = parse_size(args.min_bytes, field="--min-bytes")
    hi = parse_size(args.max_bytes, field="--max-bytes")
    if lo < 1 or hi < lo:
        raise InputError("need 1 <= --min-bytes <= --max-bytes", field="--min-bytes", value=f"{lo}..{hi}")
    if not args.factor > 1:
        raise InputError("--factor must be > 1", field="--factor", value=args.factor)
    tsize = dtype_bytes(args.dtype, field="--dtype")
    model = CostModel(topology_from_args(args), params_from_args(args))
    n = model.ranks
    if not args.json:
        print(f"# gpunetsim collective: {args.op} on {model.router.info.name} x{args.nodes} "
              f"({n} GPUs), engine={args.engine}, params={model.params.name}")
        print(f"#{'size':>11} {'count':>12} {'type':>8} {'redop':>6} {'root':>5} {'time':>10} "
              f"{'algbw':>8} {'busbw':>8}  {'algo':>6} {'proto':>6}")
        print(f"#{'(B)':>11} {'(elements)':>12} {'':>8} {'':>6} {'':>5} {'(us)':>10} "
              f"{'(GB/s)':>8} {'(GB/s)':>8}")
    per_rank = args.op in GATHER_LIKE
    for size in size_ladder(lo, hi, args.factor):
        r = run_collective(model, args.op, size, args.algo, args.proto, args.engine)
        if args.json:
            print(json.dumps(r.as_dict()))
            continue
        count = size // tsize // (n if per_rank else 1)
        redop = "sum" if args.op in REDOP_OPS else "none"
        root = 0 if args.op in ROOTED_OPS else -1
        print(f"{size:>12} {count:>12} {args.dtype:>8} {redop:>6} {root:>5} {r.time_s * 1e6:>10.2f} "
              f"{r.algbw_GBps:>8.2f} {r.busbw_GBps:>8.2f}  {r.algo:>6} {r.proto:>6}")
    return 0


# ------------------------------------------------------------------- driver
SUBCOMMANDS: list[Callable] = [_collective_parser]


def _optional_subcommands() -> list[Callable]:
    """Subcommands defined in other modules (each exposes ``register(subparsers)``)."""
    import importlib
    regs = []
    for mod in ("gpunetsim.ddp_cli", "validation.cli", "gpunetsim.study_cli", "gpunetsim.cluster_cli"):
        try:
            regs.append(importlib.import_module(mod).register)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise
    return regs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpunetsim",
                                     description="Simulate multi-GPU training networks: NCCL collectives "
                                                 "and PyTorch DDP iterations.")
    sub = parser.add_subparsers(dest="command")
    for reg in SUBCOMMANDS + _optional_subcommands():
        reg(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        if "plan" in parser._subparsers._group_actions[0].choices:   # the default study (gpunetsim plan)
            argv = ["plan"]
        else:
            parser.print_help()
            return 0
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except InputError as e:
        print(f"gpunetsim: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
