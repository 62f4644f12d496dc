"""The ``gpunetsim`` command line. Every subcommand prints an InputError as one line, exit 2."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import NoReturn, Sequence

# Subcommand modules written before cli_args existed import these three from here.
from gpunetsim.cli_args import add_topology_args, params_from_args, topology_from_args  # noqa: F401
from gpunetsim.study_cli import EXIT_INTERRUPTED  # noqa: F401 (128 + SIGINT, as shells report Ctrl-C)
from simulator.core.errors import InputError, shorten

EXIT_INPUT = 2
EXIT_INTERNAL = 70                                # EX_SOFTWARE: a bug, never bad input


# ------------------------------------------------------------------- driver
def _register(sub, module: str) -> None:
    """Import one subcommand module (named as in :data:`SUBCOMMANDS`) and register its commands."""
    if module == "collective":
        from gpunetsim import collective_cli as m
    elif module == "ddp":
        from gpunetsim import ddp_cli as m
    elif module == "train":
        from gpunetsim import train_cli as m
    elif module == "validation":
        from validation import cli as m
    elif module == "study":
        from gpunetsim import study_cli as m
    elif module == "cluster":
        from gpunetsim import cluster_cli as m
    elif module == "goodput":
        from gpunetsim import goodput_cli as m
    else:
        from gpunetsim import search_cli as m
    m.register(sub)


SUBCOMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("collective", ("collective",)), ("ddp", ("ddp",)), ("train", ("train",)),
    ("validation", ("calibrate", "compare")), ("study", ("sweep", "plan")), ("cluster", ("cluster", "stragglers")),
    ("goodput", ("goodput",)), ("search", ("search",)))
"""(module, its commands) per subcommand module, in --help order; a module is imported only to
register its commands, and only its own are registered when the command line names one of them
(a plain run imports nothing of the others: start-up time)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or only of ``command``'s module when it names one."""
    parser = OneLineParser(prog="gpunetsim",
                                     description="Simulate multi-GPU training networks: NCCL collectives "
                                                 "and PyTorch DDP iterations.")
    from gpunetsim import __version__
    parser.add_argument("--version", action="version", version=f"gpunetsim {__version__}")
    sub = parser.subcommands = parser.add_subparsers(dest="command")
    known = any(command in names for _, names in SUBCOMMANDS)
    for module, names in SUBCOMMANDS:
        if not known or command in names:
            _register(sub, module)
    return parser


class _Once(argparse.Action):
    """An option that holds one value refuses to be given twice: argparse would keep the last one without a
    word (``--nodes 2 --nodes 4`` ran 4 nodes, ``calibrate --out a.json --out b.json`` wrote only b.json).
    Options meant to repeat (``search --topology``) use ``action="append"``. Built on argparse's public
    :class:`argparse.Action` and registered under the names ``store``, ``store_const``, ``store_true`` and
    ``store_false`` (:meth:`argparse.ArgumentParser.register`), so no option needs to name it."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if self.option_strings and isinstance(parser, OneLineParser):
            parser.refuse_twice(self.dest, option_string, values)
        setattr(namespace, self.dest, self.stored(values))

    def stored(self, values: object) -> object:
        """What the option sets its destination to: the values given."""
        return values


class _OnceValue(_Once):
    """``action="store"`` (the default): the option's value, once."""

    def __init__(self, option_strings, dest, nargs=None, const=None, **kwargs) -> None:
        if nargs == 0:
            raise ValueError("nargs for store actions must be != 0; if you have nothing to store, actions such as "
                             "store true or store const may be more appropriate")
        if const is not None and nargs != argparse.OPTIONAL:
            raise ValueError(f"nargs must be {argparse.OPTIONAL!r} to supply const")
        super().__init__(option_strings, dest, nargs=nargs, const=const, **kwargs)


class _OnceConst(_Once):
    """``action="store_const"``: a flag that sets ``const``, once."""

    def __init__(self, option_strings, dest, const=None, default=None, required=False, help=None,
                 metavar=None) -> None:
        super().__init__(option_strings, dest, nargs=0, const=const, default=default, required=required,
                         help=help, metavar=metavar)

    def stored(self, values: object) -> object:
        return self.const


class _OnceTrue(_OnceConst):
    """``action="store_true"``, once."""

    def __init__(self, option_strings, dest, default=False, required=False, help=None) -> None:
        super().__init__(option_strings, dest, const=True, default=default, required=required, help=help)


class _OnceFalse(_OnceConst):
    """``action="store_false"``, once."""

    def __init__(self, option_strings, dest, default=True, required=False, help=None) -> None:
        super().__init__(option_strings, dest, const=False, default=default, required=required, help=help)


def _shown(values: object) -> str:
    return " ".join(map(str, values)) if isinstance(values, list) else str(values)


ONCE_ACTIONS: dict[str | None, type[argparse.Action]] = {
    None: _OnceValue, "store": _OnceValue, "store_const": _OnceConst, "store_true": _OnceTrue,
    "store_false": _OnceFalse}
"""The single-valued actions :class:`OneLineParser` registers in place of argparse's own (None: no action named)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line on stderr (exit 2), like every other error, and whose
    single-valued options refuse to be given twice (:class:`_Once`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.subcommands: argparse.Action | None = None     # what add_subparsers returned (build_parser)
        self._given: dict[str, tuple[str | None, object]] = {}
        for name, cls in ONCE_ACTIONS.items():
            self.register("action", name, cls)

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        self._given = {}            # each parse counts its own options
        return super().parse_known_args(args, namespace)

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        """argparse's, except that an unknown option is refused by the subcommand it was given to, so the
        message names that command's help (it said ``gpunetsim: error: unrecognized arguments: --bogus (see
        gpunetsim --help)`` after ``gpunetsim collective --bogus``)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self._subcommand(getattr(parsed, "command", None))
            (command or self).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _subcommand(self, name: object) -> argparse.ArgumentParser | None:
        """The parser of subcommand ``name`` (None: not one of this parser's)."""
        choices = getattr(self.subcommands, "choices", None) or {}
        return choices.get(name) if isinstance(name, str) else None

    def refuse_twice(self, dest: str, option_string: str | None, values: object) -> None:
        """Note that ``dest`` was given (as ``option_string``, with ``values``); a usage error if it was before."""
        if dest in self._given:
            first, before = self._given[dest]
            shown = "" if values in ([], None) else f" ({_shown(before)}, then {_shown(values)})"
            self.error(f"argument {option_string}: given twice{shown}; give it once"
                       + (f" (the first as {first})" if first != option_string else ""))
        self._given[dest] = (option_string, values)

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {shorten(message, 600)} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(EXIT_INPUT)


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


class _OutlivesReader:
    """``sys.stdout`` for a command whose reader may stop early (``gpunetsim sweep s.yaml | head``):
    once the pipe is closed, the rest of the output goes to /dev/null and the command goes on to write
    its files (report.html, results.csv, ``--out``, ``--trace``) and exit with its own status, instead
    of stopping at the next print with its files half written."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._discard()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._discard()

    def _discard(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``parser`` and of its commands' parsers."""
    out: set[str] = set()
    for action in parser._actions:
        out.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out |= _options(sub)
    return out


def as_typed(error: InputError, parser: argparse.ArgumentParser, args: argparse.Namespace) -> InputError:
    """``error`` naming the option the user typed (``--gpu``) where the layer below named the bare field
    (``gpu``) of a value this command took from its command line; errors about a file's field are left alone."""
    field = error.field
    if error.source or not field or field not in vars(args):
        return error
    option = "--" + field.replace("_", "-")
    if option not in _options(parser):
        return error
    return InputError(error.message, field=option, value=error.value)


def main(argv: Sequence[str] | None = None) -> int:
    # No command does linear algebra worth threads; OpenBLAS would start one per core when numpy is
    # first imported (lazily, by the commands that need arrays), costing more CPU than it saves.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _log_warnings()
    as_program = argv is None
    if as_program and not isinstance(sys.stdout, _OutlivesReader):
        try:
            sys.stdout.fileno()
            sys.stdout = _OutlivesReader(sys.stdout)
        except (AttributeError, OSError, ValueError):       # no file descriptor: nothing to outlive
            pass
    argv = list(sys.argv[1:] if argv is None else argv) or ["plan"]    # the default study (gpunetsim plan)
    parser = build_parser(argv[0])
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:                  # --help (0) or a usage error (2, one line printed)
        return e.code if isinstance(e.code, int) else EXIT_INPUT
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        code = int(args.func(args) or 0)
    except InputError as e:
        print(f"gpunetsim: error: {as_typed(e, parser, args)}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("gpunetsim: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    except MemoryError:
        print("gpunetsim: error: out of memory (make the topology, sweep or input smaller)", file=sys.stderr)
        return EXIT_INPUT
    except Exception as e:                   # a bug: one line, the traceback only when asked for
        if os.environ.get("GPUNETSIM_DEBUG"):
            raise
        print(f"gpunetsim: internal error: {shorten(f'{type(e).__name__}: {e}', 400)} (please report "
              "it; GPUNETSIM_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
    if code == EXIT_INTERRUPTED and as_program:
        # Stop now: what finished is written; tearing down a large model's objects can take seconds.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
