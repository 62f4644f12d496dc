"""Validated configuration files: a pydantic model's first problem as an InputError.

Workload, study and other YAML/JSON inputs are declared as pydantic models; :func:`validate`
turns pydantic's report into one line naming the file, the field path (``params[3].bytes``) and
the value, as every user-facing error in gpunetsim does.
"""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Callable, Sequence, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ValidationError

from simulator.core import limits, units, values
from simulator.core.values import kind_of
from simulator.core.errors import InputError

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def _rule(check: Callable[[Any], T]) -> BeforeValidator:
    """A :mod:`simulator.core.values` rule as a pydantic check: its message, for :func:`validate` to place."""
    def run(v: Any) -> T:
        try:
            return check(v)
        except InputError as e:
            raise ValueError(e.message) from None
    return BeforeValidator(run)


Switch = Annotated[bool, _rule(values.switch)]
"""A file's switch, by :func:`simulator.core.values.switch`'s rule (pydantic's own bool took ``"yes"``, ``"on"``
and ``1`` as true)."""
Seed = Annotated[int, _rule(values.seed)]
"""A file's seed, by :func:`simulator.core.values.seed`'s rule."""
Bandwidth = Annotated[str, _rule(units.bandwidth_text)]
"""A bandwidth with its unit, kept as written ("200 Gb/s"), by :func:`simulator.core.units.bandwidth_text`'s rule (the
command line's message for ``--nic-bw 200``)."""
Amount = Annotated[float, _rule(units.parse_amount)]
"""A file's large amount (training tokens) as a number or with a decimal suffix ('300B', '15T'), by
:func:`simulator.core.units.parse_amount`'s rule."""
Count = Annotated[int, _rule(lambda v: limits.check_count(v, field="count", high=limits.MAX_INT))]
"""A file's count (nodes, tp, iterations), by :func:`simulator.core.limits.check_count`'s rule: the command line's words
(``must be at least 1``, ``must be a whole number``), not pydantic's ``Input should be greater than 0``."""
Index = Annotated[int, _rule(lambda v: limits.check_count(v, field="index", low=0, high=limits.MAX_INT))]
"""A file's index from 0 (a node of ``node_list``), by the same rule."""
BucketMiB = Annotated[float, _rule(lambda v: units.mebibytes(v, field="bucket_cap_mb", high=limits.MAX_BUCKET_CAP_MB))]
"""PyTorch's ``bucket_cap_mb``: a number of MiB, by :func:`simulator.core.units.mebibytes`'s rule (``"25 MiB"``: write
25, the message of ``--bucket-cap-mb``)."""


def axis(v: Any) -> list[Any]:
    """A study axis's values (a ``mode="before"`` validator): a scalar is one value; a list needs at least one value
    and none twice (``tp: []`` made an empty study without a word, ``tp: [2, 2]`` ran and reported one point
    twice). A mapping is neither: wrapped as one value, it was reported at the axis's item ``[0]`` (``search.model[0]``
    for ``model: {a: 1}``), an item the file does not have."""
    if isinstance(v, dict):
        raise ValueError("expected a value or a list of values, not a mapping")
    items = list(v) if isinstance(v, (list, tuple)) else [v]
    if not items:
        raise ValueError("an axis needs at least one value (an empty list would make an empty study)")
    twice = values.repeated(items, lambda x, y: x == y and isinstance(x, bool) == isinstance(y, bool))
    if twice is not None:
        raise ValueError(f"{items[twice]!r} is given twice: give each value once")
    return items


def field_path(loc: Sequence[object], cls: type[BaseModel] | None = None) -> str:
    """pydantic's location tuple as the file spells it: ``a.b[3].c``.

    pydantic puts a union member's tag into the location (``placement.PlacementSpec.seed``,
    ``min_bytes.int``, ``x.literal['a','b']``); with ``cls``, the model the location is in, each part is read
    along the declared types, so a part at a union is known to be a tag and dropped (a user's key of any
    spelling is kept). Past a type it cannot follow, or without ``cls``, tags with brackets are dropped."""
    out = ""
    kind: object = cls
    for part in loc:
        tag, kind = _step(kind, part)
        if tag or (kind is None and isinstance(part, str) and "[" in part):
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _step(kind: object, part: object) -> tuple[bool, object]:
    """(whether ``part`` is a union tag, the type below it) for a location part at type ``kind``
    (None: not followed)."""
    kind = _plain(kind)
    args = [a for a in get_args(kind) if a is not type(None)]
    if get_origin(kind) in (Union, UnionType) and len(args) > 1:
        member = next((a for a in args if getattr(_plain(a), "__name__", None) == part), None)
        return True, member
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        field = kind.model_fields.get(part) if isinstance(part, str) else None
        return False, field.annotation if field is not None else None
    if get_origin(kind) in (list, tuple, set, frozenset) and args:
        return False, args[0]
    if get_origin(kind) is dict and len(args) == 2:
        return False, args[1]
    return False, None


def _unknown(loc: Sequence[object], cls: type[BaseModel]) -> str:
    """'unknown field' with the fields the mapping at ``loc`` takes (a typo under ``search:`` named none of them)."""
    kind: object = cls
    for part in loc[:-1]:
        kind = _step(kind, part)[1]
    kind = _plain(kind)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return f"unknown field (known: {', '.join(kind.model_fields)})"
    return "unknown field"


def _plain(kind: object) -> object:
    """``kind`` without ``Annotated[...]`` and with ``X | None`` as ``X``."""
    while True:
        if get_origin(kind) is Annotated:
            kind = get_args(kind)[0]
            continue
        args = get_args(kind)
        if get_origin(kind) in (Union, UnionType) and type(None) in args and len(args) == 2:
            kind = next(a for a in args if a is not type(None))
            continue
        return kind


_MAPPING = "expected a mapping (key: value lines or {key: value})"
_SCALAR = ("float_parsing", "float_type", "int_parsing", "int_type", "int_from_float", "string_type", "bool_type",
           "bool_parsing", "literal_error", "enum")
_WORDS = {       # pydantic's types of error in the project's words (check_range, check_count, values.text)
    "float_parsing": "must be a number", "float_type": "must be a number", "finite_number": "must be a finite number",
    "int_parsing": "must be a whole number", "int_type": "must be a whole number", "int_from_float": "must be a whole number",
    "string_type": "expected text", "dict_type": _MAPPING, "model_type": _MAPPING,       # model_type's names the class
    "list_type": "expected a list (- item lines or [a, b])",
}
_BOUNDS = {"gt": "must be greater than {}", "ge": "must be at least {}", "lt": "must be less than {}",
           "le": "must be at most {}"}


def _words(err: dict[str, Any]) -> str:
    """One pydantic error's message in the words the command line uses for the same mistake (pydantic's own: 'Input
    should be a valid number, unable to parse string as a number', 'Input should be greater than 0'); a list or a
    mapping where one value belongs says so."""
    kind, given = err["type"], err.get("input")
    if kind in ("literal_error", "enum") and "expected" in (err.get("ctx") or {}):
        return f"expected {err['ctx']['expected']}"      # pydantic's 'Input should be 'rail' or 'fat-tree''
    if kind in _SCALAR and isinstance(given, (list, tuple, dict)):
        return f"expected one value, not {values.kind_of(given)}"
    if kind in _WORDS:
        return _WORDS[kind]
    bound = next((b for b in _BOUNDS if b in (err.get("ctx") or {})), None)
    if bound is not None and kind.startswith(("greater_than", "less_than")):
        return _BOUNDS[bound].format(f"{err['ctx'][bound]:g}" if isinstance(err["ctx"][bound], float)
                                     else err["ctx"][bound])
    return err["msg"].removeprefix("Value error, ")


def validate(cls: type[M], data: object, source: str | None, what: str = "a mapping (JSON object)") -> M:
    """``cls.model_validate(data)``, the first problem raised as an InputError."""
    if not isinstance(data, dict):
        raise InputError(f"expected {what} at the top level, not {kind_of(data)}", source=source)
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        err: dict[str, Any] = errors[0]
        where = field_path(err["loc"], cls)
        if err["type"] == "missing":
            # a misspelt required field reads as two problems: say the one the user typed (train.global_bach)
            typo = next((e for e in errors if e["type"] == "extra_forbidden"
                         and tuple(e["loc"][:-1]) == tuple(err["loc"][:-1])), None)
            if typo is None:
                raise InputError("missing required field", source=source, field=where) from None
            err = typo
            raise InputError(f"unknown field; required {where} is missing (got {err.get('input')!r})",
                             source=source, field=field_path(err["loc"], cls), value=err.get("input")) from None
        msg = _unknown(err["loc"], cls) if err["type"] == "extra_forbidden" else _words(err)
        if err["type"] == "model_type":
            # a union of a mapping and values (placement: spread or {policy: random, seed: 3}): a typo in the
            # value ('spred') failed both members, and the mapping's complaint hid the values it takes
            values = next((_words(e) for e in errors[1:] if e["type"] != "model_type"
                           and field_path(e["loc"], cls) == where), None)
            if values is not None:
                msg = f"{values}, or a mapping (key: value lines or {{key: value}})"
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
