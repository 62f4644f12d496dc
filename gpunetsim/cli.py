"""The ``gpunetsim`` command line. Every subcommand prints an InputError as one line, exit 2."""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from gpunetsim import cluster_cli, collective_cli, ddp_cli, goodput_cli, study_cli
# Subcommand modules written before cli_args existed import these three from here.
from gpunetsim.cli_args import add_topology_args, params_from_args, topology_from_args  # noqa: F401
from simulator.core.errors import InputError
from validation import cli as validation_cli

EXIT_INPUT = 2


# ------------------------------------------------------------------- driver
SUBCOMMANDS: tuple[Callable, ...] = (collective_cli.register, ddp_cli.register, validation_cli.register,
                                     study_cli.register, cluster_cli.register,
                                     goodput_cli.register)
"""Each subcommand module's ``register(subparsers)``; they import their heavy modules when run."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpunetsim",
                                     description="Simulate multi-GPU training networks: NCCL collectives "
                                                 "and PyTorch DDP iterations.")
    sub = parser.add_subparsers(dest="command")
    for reg in SUBCOMMANDS:
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
