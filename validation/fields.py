"""Typed fields of measurement records (our JSONL, nccl-tests ``-J`` JSON, DDP records).

A :class:`Fields` wraps one parsed record and hands out its fields with their type and range
checked: a wrong type (``"size": "big"``, ``"env": 5``, ``"algbw_GBps": "fast"``), a missing
field, a NaN, a negative or zero time all raise one :class:`InputError` naming the file, the
line or result index, the field and the value. The record schemas are the calls made on it.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from simulator.core.errors import InputError
from simulator.core.limits import MAX_SIZE_BYTES, MAX_TIME_S
from simulator.core.values import kind_of

_NA = ("N/A", "NA", "-", "")


class Fields:
    """Checked access to one record; ``where`` is ``line 12`` or ``results[3]``."""

    def __init__(self, record: Mapping[str, Any], source: str, where: str, kind: str = "record") -> None:
        if not isinstance(record, Mapping):
            raise InputError(f"a {kind} must be a JSON object, not {kind_of(record)}", source=source, field=where)
        self.record, self.source, self.where, self.kind = record, source, where, kind

    def bad(self, name: str, message: str, value: object = None) -> InputError:
        return InputError(message, source=self.source, field=f"{self.where}: {name}" if self.where else name,
                          value=value)

    def has(self, name: str) -> bool:
        return self.record.get(name) is not None

    def _get(self, name: str) -> Any:
        if name not in self.record:
            raise InputError(f"'{self.kind}' record has no '{name}'", source=self.source, field=self.where)
        return self.record[name]

    def text(self, name: str, default: str | None = None) -> str:
        v = self.record.get(name, default) if default is not None else self._get(name)
        if v is None and default is not None:
            return default
        if not isinstance(v, str):
            raise self.bad(name, "must be a string", v)
        return v

    def whole(self, name: str, *, low: int = 0, high: int = MAX_SIZE_BYTES, default: int | None = None) -> int:
        v = self.record.get(name, default) if default is not None else self._get(name)
        if isinstance(v, str) and v.strip().lstrip("-").isdigit() and len(v.strip()) <= 19:
            v = int(v)                             # nccl-tests -J may quote numbers
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.bad(name, "must be a whole number", v)
        if not low <= v <= high:
            raise self.bad(name, f"must be between {low:,} and {high:,}", v)
        return v

    def number(self, name: str, *, positive: bool = False, high: float = MAX_TIME_S,
              required: bool = True, na_ok: bool = False) -> float | None:
        """A finite number ``>= 0`` (``> 0`` if ``positive``) and ``<= high``; ``None`` when
        absent and not ``required`` (or ``N/A`` when ``na_ok``)."""
        if name not in self.record or self.record[name] is None:
            if required:
                self._get(name)
                raise self.bad(name, "must be a number", None)
            return None
        v = self.record[name]
        if isinstance(v, str):
            text = v.strip()
            if na_ok and text.upper() in _NA:
                return None
            try:
                v = float(text)
            except ValueError:
                raise self.bad(name, "must be a number", v) from None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.bad(name, "must be a number", v)
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if not math.isfinite(f):
            if na_ok and math.isnan(f):
                return None
            raise self.bad(name, "must be a finite number", v)
        if f < 0 or (positive and f == 0) or f > high:
            raise self.bad(name, f"must be {'>' if positive else '>='} 0 and <= {high:g}", v)
        return f

    def times(self, name: str) -> tuple[float, ...]:
        """An optional list of positive finite times in seconds (each ``<= MAX_TIME_S``); ``()`` when absent."""
        v = self.record.get(name)
        if v is None:
            return ()
        if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                              and math.isfinite(x) and 0 < x <= MAX_TIME_S for x in v):
            raise self.bad(name, "must be a list of positive times in seconds", v)
        return tuple(float(x) for x in v)

    def flag(self, name: str, default: bool = False) -> bool:
        v = self.record.get(name, default)
        if not isinstance(v, bool):
            raise self.bad(name, "must be true or false", v)
        return v

    def env(self, name: str = "env") -> tuple[tuple[str, str], ...]:
        """Environment variables as sorted (name, value) pairs, from a mapping, a list of pairs
        or a list of ``"K=V"`` strings."""
        v = self.record.get(name)
        if v is None:
            return ()
        if isinstance(v, Mapping):
            items = list(v.items())
        elif isinstance(v, (list, tuple)):
            items = []
            for item in v:
                if isinstance(item, str) and "=" in item:
                    items.append(tuple(item.split("=", 1)))
                elif isinstance(item, (list, tuple)) and len(item) == 2:
                    items.append(tuple(item))
                else:
                    raise self.bad(name, "entries must be 'KEY=VALUE' strings or [key, value] pairs", item)
        else:
            raise self.bad(name, "must be a mapping of variable names to values", v)
        for k, val in items:
            if not isinstance(k, str) or isinstance(val, (dict, list)):
                raise self.bad(name, "must map names to plain values", {k: val} if isinstance(k, str) else k)
        return tuple(sorted((str(k), str(val)) for k, val in items))
