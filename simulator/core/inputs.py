"""The one way gpunetsim reads a user's file: bounded, strict, and every failure an InputError.

Every reader of a topology, workload, study, calibration, measurement or record file goes
through here, so every file kind gets the same protection:

* size limits: file bytes (:data:`limits.INPUT_BYTES`), nesting depth, values after YAML alias
  expansion (an "alias bomb" is refused before it is built), string and line length;
* numbers: NaN/Infinity are refused in JSON, integers beyond 64 bits and floats that overflow
  (``1e400``) are refused in JSON and YAML, so no reader ever meets ``OverflowError``;
* YAML through libyaml's C loader (``yaml.CSafeLoader``) when present (about 10x faster);
* ``OSError`` (missing file, a directory, permission, a name too long), ``UnicodeDecodeError``,
  ``RecursionError`` and parser errors become one :class:`InputError` naming the file.

:func:`read_structured` reads one JSON/YAML document, :func:`read_jsonl` one record per line
(optionally skipping torn or foreign lines, for runners resuming an interrupted file) and
:func:`read_text` a text file (nccl-tests output).
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from simulator.core import limits
from simulator.core.errors import InputError
from simulator.core.values import kind_of

if TYPE_CHECKING:
    import yaml


# --------------------------------------------------------------------------------- raw bytes

def read_text(path: str | os.PathLike[str], *, what: str = "file") -> str:
    """The UTF-8 text of a regular file of at most :data:`limits.INPUT_BYTES` bytes, with no line
    longer than :data:`limits.STRING_CHARS`."""
    if not isinstance(path, (str, os.PathLike)):     # the API's run_study(5): a TypeError from Path
        raise InputError(f"expected a path to a {what}", value=path)
    src = str(path)
    max_bytes = limits.INPUT_BYTES.value
    try:
        p = Path(path)
        st = p.stat()
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"is a directory, not a {what}", source=src)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"not a regular file (a {what} is read whole)", source=src)
        if st.st_size > max_bytes:
            limits.INPUT_BYTES.check(st.st_size, source=src)
        with p.open("rb") as f:
            data = f.read(max_bytes + 1)
        limits.INPUT_BYTES.check(len(data), source=src)
    except FileNotFoundError:
        raise InputError("file not found", source=src) from None
    except OSError as e:
        raise InputError(f"cannot read {what}: {e.strerror or e}", source=src) from None
    except ValueError as e:                  # "embedded null byte" in the name
        if isinstance(e, InputError):
            raise
        raise InputError(f"not a usable file name ({e})", source=src) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})",
                         source=src) from None
    _check_lines(text, src)
    return text.removeprefix("\ufeff")


def _check_lines(text: str, src: str) -> None:
    longest = limits.STRING_CHARS.value
    if len(text) <= longest:
        return
    start = 0
    for number, end in enumerate(_newlines(text), start=1):
        if end - start > longest:
            limits.STRING_CHARS.check(end - start, source=src, field=f"line {number}")
        start = end + 1


def _newlines(text: str) -> Iterator[int]:
    i = text.find("\n")
    while i >= 0:
        yield i
        i = text.find("\n", i + 1)
    yield len(text)


# --------------------------------------------------------------------------------- JSON

def _json_constant(name: str) -> float:
    raise InputError(f"{name} is not a number JSON allows", value=name)


def _json_int(text: str) -> int:
    # JSON's integers are an optional "-" and digits: at most 19 digits (never int() of a huge string), then 64 bits
    if len(text) - (text[0] == "-") > 19 or not -limits.MAX_INT <= (value := int(text)) <= limits.MAX_INT:
        raise InputError("integer out of range (more than 64 bits)", value=text)
    return value


def _json_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise InputError("number out of range (beyond 1.8e308)", value=text)
    return v


_TWICE = "given twice in one object; JSON would keep the last value silently"


def _twice(pairs: list[tuple[str, Any]]) -> str | None:
    """The first key given twice among an object's ``pairs`` (None: all different)."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    return None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: ``json`` keeps the last of two equal keys silently."""
    data = dict(pairs)
    if len(data) != len(pairs):
        raise InputError(_TWICE, field=_twice(pairs))
    return data


class _Twice(dict):
    """An object with a key given twice (``key``), kept to find its path: the parse hook sees no path."""
    key: str | None = None


def _marked(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = _Twice(pairs)
    data.key = _twice(pairs)
    return data


def _twice_path(text: str) -> str | None:
    """The path (``nodes[0].kind``) of the first key given twice in the JSON ``text``, which parses."""
    stack: list[tuple[Any, str]] = [(json.loads(text, object_pairs_hook=_marked, parse_int=str, parse_float=str, parse_constant=str), "")]
    while stack:
        value, where = stack.pop(0)
        if isinstance(value, _Twice) and value.key is not None:
            return data_path(where, value.key)
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend((v, data_path(where, k)) for k, v in items)
    return None


def parse_json(text: str, source: str = "", *, one_line: bool = False) -> Any:
    """One JSON document, checked like a file's (NaN, Infinity and huge numbers refused).
    ``one_line``: the text is one line of a JSONL file (errors give the column only)."""
    try:
        data = json.loads(text, parse_constant=_json_constant, parse_int=_json_int,
                          parse_float=_json_float, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        at = f"column {e.colno}" if one_line else f"line {e.lineno}, column {e.colno}"
        raise InputError(f"invalid JSON at {at}: {e.msg}", source=source) from None
    except RecursionError:
        raise InputError("nested too deeply", source=source) from None
    except InputError as e:
        if e.message == _TWICE:
            e = InputError(_TWICE, field=_twice_path(text) or e.field)
        raise e.within(source) from None
    if not _within_limits(text, data):
        check_data(data, source)
    return data


def _within_limits(text: str, data: Any) -> bool:
    """Whether the JSON ``text``, parsed to ``data``, is data :func:`check_data` must pass, found without its
    walk (which names the place of a refusal, and was most of the time of reading a measurement file): the
    parse hooks already refused NaN, Infinity, overflowing floats and integers beyond 64 bits; no string is
    longer than the text; a value nested ``d`` deep opens ``d`` brackets, and where the text has more brackets
    than :data:`limits.INPUT_DEPTH` the containers alone are walked for their depth."""
    if len(text) > limits.STRING_CHARS.value:
        return False
    most = limits.INPUT_DEPTH.value
    return text.count("{") + text.count("[") <= most or not _deeper_than(data, most)


def _deeper_than(data: Any, most: int) -> bool:
    """Whether a list or object of ``data`` is nested more than ``most`` deep (``data`` itself is 1 deep), as
    :func:`check_data` counts."""
    if not isinstance(data, (dict, list)):
        return False
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > most:
            return True
        for child in value.values() if isinstance(value, dict) else value:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


# --------------------------------------------------------------------------------- YAML

def parse_yaml(text: str, source: str = "") -> Any:
    """One YAML document with the C loader where available; aliases may not expand the
    document past :data:`limits.INPUT_ITEMS` values (nor past its own size, when bigger)."""
    import yaml          # here, not at the top: runs that read no YAML file never import it
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)     # SafeLoader: PyYAML without libyaml
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "&" in text:                  # anchors, hence maybe aliases: count before building
            _check_nodes(node, source)
        _check_unique_keys(node, source)
        data = loader.construct_document(node)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise InputError(f"invalid YAML{where}: {problem}", source=source) from None
    except RecursionError:
        raise InputError("nested too deeply", source=source) from None
    except (ValueError, OverflowError) as e:       # e.g. ints beyond Python's str() digit limit
        if isinstance(e, InputError):
            raise e.within(source) from None
        raise InputError(f"unreadable value ({e})", source=source) from None
    finally:
        loader.dispose()
    check_data(data, source)
    return data


def _check_nodes(root: yaml.Node, source: str) -> None:
    """Count the values the node graph expands to (aliases share nodes) without expanding it."""
    distinct: set[int] = set()
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    on_path: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            continue
        if key in size:
            continue
        if key in on_path:
            raise InputError("a YAML alias refers to the value that contains it (a cycle)",
                             source=source)
        distinct.add(key)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)
        if len(distinct) > 4 * limits.INPUT_ITEMS.value:
            break
    total = size.get(id(root), len(distinct))
    if total > max(limits.INPUT_ITEMS.value, len(distinct)):
        limits.INPUT_ITEMS.check(total, source=source)


def _check_unique_keys(root: yaml.Node, source: str) -> None:
    """No mapping gives one key twice: YAML would keep the last value without a word (``hidden: 1024``
    then ``hidden: 2048`` in a model file). Keys merged in with ``<<`` may be overridden, as YAML intends.
    The key is named by its path (``nodes[0].kind``), as every other problem in a file is."""
    import yaml
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    while stack:
        node, where = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(node.value))
        elif isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key, value in node.value:
                stack.append((key, where))
                if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                    stack.append((value, where))
                    continue
                path = data_path(where, key.value)
                stack.append((value, path))
                line = key.start_mark.line + 1
                if (key.tag, key.value) in first:
                    raise InputError(f"given twice (lines {first[key.tag, key.value]} and {line}); YAML would keep "
                                     "the last value silently", source=source, field=path)
                first[key.tag, key.value] = line


def data_path(where: str, key: object) -> str:
    """The path of ``key`` (a list index or a mapping key) inside the value at ``where``: ``nodes[0].kind``."""
    return f"{where}[{key}]" if isinstance(key, int) else (f"{where}.{key}" if where else str(key))


def _children(node: yaml.Node) -> list[yaml.Node]:
    import yaml
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


# --------------------------------------------------------------------------------- checks

def check_data(data: Any, source: str = "") -> None:
    """Depth, string length and number range of parsed JSON/YAML data (iterative: no recursion)."""
    max_depth = limits.INPUT_DEPTH.value
    max_chars = limits.STRING_CHARS.value
    stack: list[tuple[Any, int, str]] = [(data, 1, "")]
    while stack:
        value, depth, where = stack.pop()
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        else:
            _check_scalar(value, where, source, max_chars)
            continue
        if depth > max_depth:
            limits.INPUT_DEPTH.check(depth, source=source, field=where or None)
        for k, v in items:
            if isinstance(k, str):
                _check_scalar(k, where, source, max_chars)
            stack.append((v, depth + 1, data_path(where, k)[:200]))


def _check_scalar(value: Any, where: str, source: str, max_chars: int) -> None:
    if isinstance(value, str):
        if len(value) > max_chars:
            limits.STRING_CHARS.check(len(value), source=source, field=where or None)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InputError("must be a finite number", source=source, field=where or None, value=value)
    elif isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > limits.MAX_INT:
            raise InputError("integer out of range (more than 64 bits)", source=source,
                             field=where or None, value=f"{'-' if value < 0 else ''}<{value.bit_length()}-bit integer>")


# --------------------------------------------------------------------------------- files

def read_structured(path: str | os.PathLike[str], *, what: str = "file") -> Any:
    """A JSON (``.json``) or YAML (anything else; YAML reads JSON too) file, checked."""
    src = str(path)
    text = read_text(path, what=what)
    if Path(src).suffix.lower() == ".json":
        data = parse_json(text, src) if text.strip() else None
    else:
        data = parse_yaml(text, src)
    if data is None and _only_comments(text):
        # an empty YAML file is None, an empty JSON file a parse error: each command then said something else
        # ("expected a mapping ... (got 'NoneType')", "invalid JSON at line 1, column 1: Expecting value")
        raise InputError(f"the {what} is empty", source=src)
    return data


def _only_comments(text: str) -> bool:
    """Whether YAML ``text`` holds nothing but blank lines, comments and document markers."""
    return all(not line.strip() or line.lstrip().startswith("#") or line.strip() in ("---", "...")
               for line in text.splitlines())


def refuse_misspelt_keys(data: dict, read: tuple[str, ...], source: str | None, *, known: tuple[str, ...] = ()) -> None:
    """In a mapping that also keeps keys it does not read (a calibration's metadata, a workload's extras), a key one
    typo away from a key that is ``read`` (``uncertainy``, ``efficency``, ``batch_sise``) would be kept without a word
    while the read key takes its default: refused, naming the key meant. A typo keeps the read key's ``_``-words one
    for one, each the same or close; a key that adds, drops or replaces a word is another quantity
    (``pass_profile_fit``, ``backward_host_s``, ``forward_ops``, ``optimizer`` beside ``optimizer_s``). Keys in
    ``read`` or ``known`` pass."""
    import difflib
    for key in data:
        if key in read or key in known:
            continue
        near = difflib.get_close_matches(str(key), read, n=1, cutoff=0.8)
        words, meant = str(key).split("_"), near[0].split("_") if near else []
        if near and len(words) == len(meant) and all(
                w == m or difflib.SequenceMatcher(None, w, m).ratio() >= 0.75 for w, m in zip(words, meant)):
            raise InputError(f"unknown key; did you mean {near[0]!r}? (a misspelt key would be ignored)",
                             source=source, field=str(key), value=str(key))


def read_jsonl(path: str | os.PathLike[str], *, skip_bad: bool = False,
               missing_ok: bool = False, torn_only: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` for every JSON-object line of a JSONL file.

    ``skip_bad``: lines that are not a JSON object (a line cut short by a killed run) are
    skipped instead of refused; with ``torn_only`` only lines cut short are, and a whole line
    holding a refused value (NaN, Infinity, a huge number) is an InputError naming it;
    ``missing_ok``: a missing file has no records."""
    src = str(path)
    if missing_ok and not os.path.lexists(src):
        return
    yield from jsonl_records(read_text(path, what="JSONL file"), src, skip_bad=skip_bad, torn_only=torn_only)


def jsonl_records(text: str, source: str = "", *, skip_bad: bool = False, torn_only: bool = False
                  ) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` for every JSON-object line of JSONL text (see :func:`read_jsonl`)."""
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = parse_json(raw, source, one_line=True)
        except InputError as e:
            if skip_bad and not (torn_only and _complete(raw)):
                continue
            at = f"line {number}" if e.field is None else f"line {number}, {e.field}"
            raise InputError(e.message, source=source, field=at, value=e.value) from None
        if not isinstance(record, dict):
            if skip_bad:
                continue
            raise InputError(f"each line must be a JSON object, not {kind_of(record)}", source=source,
                             field=f"line {number}")
        yield number, record


def _complete(raw: str) -> bool:
    """Whether a refused line is a whole JSON document (e.g. one holding NaN or a huge number): a bad value to
    name, never a line cut short by a killed run, which ``skip_bad`` skips (review s16 #5)."""
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


def names_a_file(value: str | os.PathLike[str]) -> bool:
    """Whether an input value (``--topology``, ``--workload``, ``--model``, a study's ``model``) names a file: a
    .yaml/.yml/.json name, or any path that exists; anything else (a number or None from the Python API, too)
    is a built-in name, so the caller's unknown-name error reports it."""
    if not isinstance(value, (str, os.PathLike)):
        return False
    return Path(value).suffix.lower() in (".yaml", ".yml", ".json") or path_exists(value)


def path_exists(path: str | os.PathLike[str]) -> bool:
    """``Path(path).exists()`` that is False, not an exception, for names the OS refuses
    (too long, a NUL byte)."""
    try:
        return Path(path).exists()
    except (OSError, ValueError):
        return False
