"""Errors raised for bad user input.

Every error that reaches the command line is an :class:`InputError`: it names the file, the field
and the offending value, so the CLI can print one clear line and exit non-zero instead of a
traceback.
"""

from __future__ import annotations


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
            where.append(str(self.source))
        if self.field:
            where.append(str(self.field))
        prefix = ": ".join(where)
        text = self.message
        if self.value is not None and repr(self.value) not in text:
            text = f"{text} (got {self.value!r})"
        return f"{prefix}: {text}" if prefix else text

    def within(self, source: str) -> "InputError":
        """The same error attributed to ``source`` (a file path), unless it already names one."""
        if self.source:
            return self
        return InputError(self.message, source=source, field=self.field, value=self.value)
