"""Errors raised for bad user input.

Every error that reaches the command line is an :class:`InputError`: it names the file, the field
and the offending value, so the CLI can print one clear line and exit non-zero instead of a
traceback. The formatting is bounded whatever the input: a value is quoted with at most
:data:`QUOTE_CHARS` characters, a file name or field is shortened in the middle, and the line never
contains a newline, so a 100k-character path or an expanded YAML alias stays one short line.
"""

from __future__ import annotations

import re

QUOTE_CHARS = 80
"""Most characters of a value (its ``repr``) an error message quotes."""
_NAME_CHARS = 120      # most characters of a file name or field path
_MESSAGE_CHARS = 600   # most characters of the whole message text


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` on one line, cut in the middle with ``...`` when longer than ``limit``."""
    text = " ".join(str(text).splitlines()) if ("\n" in text or "\r" in text) else text
    if len(text) <= limit:
        return text
    head = (limit - 3) * 2 // 3
    return text[:head] + "..." + text[len(text) - (limit - 3 - head):]


def quote(value: object, limit: int = QUOTE_CHARS) -> str:
    """``repr(value)``, at most ``limit`` characters (a huge container is never fully rendered)."""
    if isinstance(value, (list, tuple, dict, set, frozenset)) and len(value) > limit:
        return f"<{type(value).__name__} of {len(value)} items>"
    try:
        text = repr(value)
    except (RecursionError, ValueError):      # self-referencing data, ints beyond str() limits
        return f"<{type(value).__name__}>"
    return shorten(text, limit)


class InputError(ValueError):
    """Bad input from a user: a file, a field within it and the value that is wrong."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None,
                 value: object = None) -> None:
        self.message = message
        self.source = source
        self.field = field
        self.value = value
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.source:
            where.append(shorten(str(self.source), _NAME_CHARS))
        if self.field:
            where.append(shorten(str(self.field), _NAME_CHARS))
        prefix = ": ".join(where)
        text = shorten(_without_field(str(self.message), self.field), _MESSAGE_CHARS)
        if self.value is not None:
            shown = quote(self.value)
            if f"(got {shown}" not in text:
                text = f"{text} (got {shown})"
        return f"{prefix}: {text}" if prefix else text

    def within(self, source: str) -> "InputError":
        """The same error attributed to ``source`` (a file path), unless it already names one."""
        if self.source:
            return self
        return InputError(self.message, source=source, field=self.field, value=self.value)


def _without_field(message: str, field: str | None) -> str:
    """``message`` without a subject that repeats the field it is printed after: '--tp: --tp must divide ...',
    '--compression: compression must be ...' read '--tp: must divide ...' (review s26: 30-odd messages named their
    field or option twice). The option itself is dropped before any word; its bare name ('compression',
    'hosts_per_leaf'), the last part of a path ('links[0].bandwidth: bandwidth must ...') or the name in words
    ('--batch-size: batch size must ...') only before a verb, so a formula ('--tp: tp x pp = ...') keeps its
    names."""
    if not field:
        return message
    field = str(field)
    if message.startswith(field + " "):
        return message[len(field) + 1:]
    bare = field.lstrip("-")
    last = re.sub(r"\[[^\]]*\]", "", bare).rsplit(".", 1)[-1].lstrip("-")
    names = {bare, bare.replace("-", "_"), last, last.replace("-", " ").replace("_", " ")}
    for name in sorted(names, key=len, reverse=True):
        rest = message[len(name) + 1:] if name and message.startswith(name + " ") else ""
        if rest.split(" ", 1)[0] in ("must", "needs", "has", "is"):
            return rest
    return message


class InvariantError(RuntimeError):
    """A broken internal invariant: a bug in gpunetsim, never bad input. Raised explicitly where an
    ``assert`` would vanish under ``python -O`` and let a wrong number through."""
