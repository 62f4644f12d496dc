"""Validated configuration files: a pydantic model's first problem as an InputError.

Workload, study and other YAML/JSON inputs are declared as pydantic models; :func:`validate`
turns pydantic's report into one line naming the file, the field path (``params[3].bytes``) and
the value, as every user-facing error in gpunetsim does.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

from pydantic import BaseModel, ValidationError

from simulator.core.errors import InputError

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def field_path(loc: Sequence[object]) -> str:
    """pydantic's location tuple as ``a.b[3].c``; union-member tags (``x[...]``) are dropped."""
    out = ""
    for part in loc:
        if isinstance(part, str) and "[" in part:
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validate(cls: type[M], data: object, source: str | None, what: str = "a mapping (JSON object)") -> M:
    """``cls.model_validate(data)``, the first problem raised as an InputError."""
    if not isinstance(data, dict):
        raise InputError(f"expected {what} at the top level", source=source, value=type(data).__name__)
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        err: dict[str, Any] = errors[0]
        where = field_path(err["loc"])
        if err["type"] == "missing":
            # a misspelt required field reads as two problems: say the one the user typed (train.global_bach)
            typo = next((e for e in errors if e["type"] == "extra_forbidden"
                         and tuple(e["loc"][:-1]) == tuple(err["loc"][:-1])), None)
            if typo is None:
                raise InputError("missing required field", source=source, field=where) from None
            err = typo
            raise InputError(f"unknown field; required {where} is missing (got {err.get('input')!r})",
                             source=source, field=field_path(err["loc"]), value=err.get("input")) from None
        msg = "unknown field" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        # the value once, shortened (InputError adds it); none for a check of the whole file, which it would dump
        value = err.get("input") if err["loc"] else None
        raise InputError(msg, source=source, field=where or None, value=value) from None


def checked(fn: Callable[[], T], source: str | None, field: str, value: object) -> T:
    """Run ``fn``; an InputError it raises is re-raised naming ``source`` (a file), ``field`` and ``value``
    (its own field dropped when it is that same field: ``gpu: unknown GPU``, not ``gpu: gpu: ...``; also when it
    is the last part of ``field`` or its command-line option: ``jobs[0].size: size ...``, ``nic_bw[0]: nic_bw: ...``,
    ``jobs[0].workload: --workload: ...``)."""
    try:
        return fn()
    except InputError as e:
        own = (e.field or "").lstrip("-").replace("-", "_")
        same = not e.source and bool(own) and own in (field, field.rsplit(".", 1)[-1].split("[")[0])
        raise InputError(e.message if same else f"{e}", source=source, field=field, value=value) from None
