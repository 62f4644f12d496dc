"""Rules for values a user writes that carry no unit, each defined once for every input.

* **A switch** (``p2p``, ``flash_attention``, ``gated_mlp``, ...) is ``true`` or ``false``. In a file that means
  YAML's or JSON's boolean, never a string that looks like one (``"yes"``, ``'true'``) nor a number (``1``):
  pydantic's lax bool took a study's ``flash_attention: "yes"`` as true while a topology file refused
  ``p2p: 'yes'``. In text from the command line (``--model-spec "gated_mlp=true"``), the words ``true`` and
  ``false`` (any case).
* **A comma-separated list** (``--gpus 8,16``, ``--micro-batches 1,2``, ``--ranks 2,8``, ``--model-spec``) has
  no empty item and no value twice: ``1,,2``, ``1,2,`` or ``8,8`` is refused naming the option and the value
  (an empty item was dropped silently by some options and refused by others; ``stragglers --ranks 8,8``
  printed its row twice).
* **A seed** (``--seed``, a scenario's ``seed``) is a whole number of at least 0, as numpy's generators take it
  (``--seed -1`` was numpy's ValueError, reported as an internal error).
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Sequence, TypeVar

from simulator.core.errors import InputError

T = TypeVar("T")

SWITCH_WORDS = "expected true or false (unquoted)"
"""The message of a refused switch."""


API_SWITCH_WORDS = "must be True or False"
"""The message of a refused switch given as a Python argument (the API's: no file, no quotes)."""


def switch(value: object, *, field: str | None = None, source: str | None = None, text: bool = False,
           api: bool = False) -> bool:
    """``value`` as a switch: a bool, or with ``text`` (a command line's words) ``true``/``false`` in any case;
    ``api``: a Python argument, refused in Python's words (:data:`API_SWITCH_WORDS`)."""
    if isinstance(value, bool):
        return value
    if text and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    words = API_SWITCH_WORDS if api else "expected true or false" if text else SWITCH_WORDS
    raise InputError(words, source=source, field=field, value=value)


def kind_of(value: object) -> str:
    """What a JSON or YAML value is, in a file's words ('null', 'a list'), for a message that expected another
    kind: Python's type names ('NoneType', 'dict') read as a program's, not a file's."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def text(value: object, *, field: str, source: str | None = None, example: str = "") -> str:
    """``value`` as a name or label written in a file: a non-empty string (``gpu_model: 5`` ran as the GPU "5", a
    list as "['H100']")."""
    if not isinstance(value, str) or not value.strip():
        raise InputError("expected text" + (f" such as {example!r}" if example else ""), source=source,
                         field=field, value=value)
    return value


def repeated(items: Sequence[T], same: Callable[[T, T], Any] = operator.eq) -> int | None:
    """The index of the first item ``same`` as an earlier one (None: every item different): the one rule for a
    value given twice, in a comma list, a study axis, a scenario's job names or a command's files."""
    return next((i for i, x in enumerate(items) if any(same(x, y) for y in items[:i])), None)


def comma_items(text: object, field: str, convert: Callable[[str], T] = str) -> list[T]:  # type: ignore[assignment]
    """The items of a comma-separated list, stripped and converted; an empty item (``1,,2``, ``1,2,``), an empty
    list or a value given twice (``8,8``) is refused naming ``field`` (the option) and the whole value. A
    ``convert`` error is the caller's to word."""
    items = [x.strip() for x in str(text).split(",")]
    if items == [""]:
        raise InputError("expected at least one value", field=field, value=text)
    if "" in items:
        raise InputError(f"item {items.index('') + 1} of the comma-separated list is empty", field=field,
                         value=text)
    out = [convert(x) for x in items]
    twice = repeated(out)
    if twice is not None:
        raise InputError(f"{out[twice]} is given twice: give each value once", field=field, value=text)
    return out


SEED_WORDS = "a seed is a whole number of at least 0"


def seed(value: object, *, field: str | None = None, source: str | None = None) -> int:
    """``value`` as a random generator's seed."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(SEED_WORDS, source=source, field=field, value=value)
    return value
