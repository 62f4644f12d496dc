"""The ``gpunetsim`` command line. Every subcommand prints an InputError as one line, exit 2."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Callable, Sequence

from gpunetsim import cluster_cli, collective_cli, ddp_cli, goodput_cli, study_cli
# Subcommand modules written before cli_args existed import these three from here.
from gpunetsim.cli_args import add_topology_args, params_from_args, topology_from_args  # noqa: F401
from simulator.core.errors import InputError, shorten
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


class _StderrHandler(logging.Handler):
    """Warnings as ``gpunetsim: warning: ...`` lines on the current ``sys.stderr``."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(f"gpunetsim: warning: {shorten(record.getMessage(), 600)}", file=sys.stderr)
        except Exception:               # never let a warning break a run
            self.handleError(record)


def _log_warnings() -> None:
    """Route warnings of the library loggers to stderr once (the CLI's own diagnostics)."""
    for name in ("gpunetsim", "simulator", "topologies", "validation"):
        logger = logging.getLogger(name)
        if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
            logger.addHandler(_StderrHandler(logging.WARNING))


def main(argv: Sequence[str] | None = None) -> int:
    _log_warnings()
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
