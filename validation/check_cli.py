"""The command line every record-checking script shares: read the files named, print the report lines.

Bad input (an :class:`InputError` while reading) is one line on stderr and exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence, TypeVar

from simulator.core.errors import InputError

T = TypeVar("T")


def files_main(prog: str, description: str, read: Callable[[list[str]], T],
               report: Callable[[T], list[str]], argv: Sequence[str] | None = None,
               default: Callable[[], list[str]] | None = None) -> int:
    """Parse ``files...`` from ``argv`` (none: ``default()``'s, where given), ``read`` them, print ``report``'s
    lines; exit status 2 on bad input."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("files", nargs="*" if default is not None else "+")
    a = p.parse_args(argv)
    try:
        data = read(a.files or (default() if default is not None else []))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(report(data)))
    return 0
