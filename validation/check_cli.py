"""What the validation layer's command lines share: bad input is one line on stderr and exit status 2, never a
traceback (:func:`run_command`, the one place it is said); and the record-checking scripts' ``files...`` command
(:func:`files_main`): read the files named, print the report lines; and the probe reports' ``[FOLDER]`` command
(:func:`folder_main`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Iterable, Sequence, TypeVar

from simulator.core.errors import InputError

T = TypeVar("T")

BAD_INPUT = 2
"""Exit status of a command refused for bad input (an :class:`InputError`), as argparse's for a bad option."""


def run_command(work: Callable[[], int | None]) -> int:
    """Run a command's ``work`` (after its options are parsed) and return its exit status (None: 0). Bad input (an
    :class:`InputError`, which names the file, field and value) is one line ``error: ...`` on stderr and exit status
    :data:`BAD_INPUT`, never a traceback; what ``work`` printed before it stays printed."""
    try:
        return int(work() or 0)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return BAD_INPUT


def print_lines(make: Callable[[], Iterable[str]]) -> int:
    """:func:`run_command` of a report: print ``make()``'s lines (nothing of it when ``make`` refuses its input)."""
    return run_command(lambda: print("\n".join(make())))


def files_main(prog: str, description: str, read: Callable[[list[str]], T],
               report: Callable[[T], list[str]], argv: Sequence[str] | None = None,
               default: Callable[[], list[str]] | None = None) -> int:
    """Parse ``files...`` from ``argv`` (none: ``default()``'s, where given), ``read`` them, print ``report``'s
    lines; exit status 2 on bad input."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("files", nargs="*" if default is not None else "+")
    a = p.parse_args(argv)
    return print_lines(lambda: report(read(a.files or (default() if default is not None else []))))


def folder_main(prog: str, description: str, report: Callable[[Path], Iterable[str]], default: Path,
                argv: Sequence[str] | None = None) -> int:
    """Parse an optional ``FOLDER`` from ``argv`` (none: ``default``), print ``report``'s lines for it; exit status 2
    on bad input."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("folder", nargs="?", type=Path, default=default)
    a = p.parse_args(argv)
    return print_lines(lambda: report(a.folder))
