"""Readers and writers for collective-communication measurements (no torch needed).

Three input formats are understood:

* nccl-tests' printed tables (``all_reduce_perf`` and friends), old and new layouts: with or
  without the ``redop``/``root`` columns, ``#wrong``/``wrong``/``error`` columns, ``N/A`` values,
  MPI/srun output prefixes (``[1,0]<stdout>:``, ``0: ``), several tables in one file;
* nccl-tests' ``-J`` JSON report (one object per run, ``results`` list);
* our own JSONL: one object per line, ``kind: "meta"`` first, then ``kind: "coll"`` records with
  ``op, world, bytes, time_s`` (plus optional ``variant, dtype, env, algbw_GBps, busbw_GBps,
  in_place, source``); other kinds (``ddp``, ``profile``, ``coll_failed``...) are skipped.

Units: ``size_bytes`` in bytes following nccl-tests (for all_gather, reduce_scatter and all_to_all
the whole gathered buffer), ``time_s`` in seconds (nccl-tests prints microseconds), bandwidths in
GB/s = 1e9 bytes/s as nccl-tests prints them. Anything unreadable raises
:class:`simulator.core.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import json
import math
import logging
import os
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from simulator.core import limits
from simulator.core.errors import InputError
from simulator.core.inputs import jsonl_records, parse_json, read_text
from simulator.core.outputs import write_atomic
from simulator.core.vocabulary import (DTYPE_BYTES, NCCL_TESTS_BINARY_OPS, NCCL_TESTS_OPS, canonical_dtype,
                                      read_nccl_version)
from validation.fields import Fields
from validation.runners.records import check_kind

log = logging.getLogger(__name__)

OPS = NCCL_TESTS_OPS

NCCL_CALL_LINE = re.compile(r"(\w+): (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}")
"""NCCL's per-call INFO line (``NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING``): op name as NCCL logs it, bytes (per rank
for the gather-like ops), algorithm, protocol, first and last channel."""
NCCL_OP_NAMES = {"AllReduce": "all_reduce", "AllGather": "all_gather", "ReduceScatter": "reduce_scatter",
                 "Broadcast": "broadcast", "Reduce": "reduce"}
"""NCCL's log names of the collectives -> ours."""


@dataclass(frozen=True)
class CollMeasurement:
    """One measured collective call: op, ranks, size (bytes, nccl-tests convention), time (s)."""

    op: str
    world: int
    size_bytes: int
    time_s: float
    algbw_GBps: float | None
    busbw_GBps: float | None
    variant: str = "default"
    dtype: str = "float32"
    in_place: bool = False
    source: str = ""
    env: tuple[tuple[str, str], ...] = ()
    min_s: float | None = None   # fastest / slowest repetition, when the file records them
    max_s: float | None = None
    rep_times_s: tuple[float, ...] = ()   # every repetition's time, when the file records them
    launches: int = 1                      # launches (campaigns) whose repetitions the time pools
    rank_host_times_s: tuple[tuple[float, ...], ...] = ()   # per rank, its host issue time per call in every
    #                                      repetition (aligned with rep_times_s), when the file records them
    rep_end_unix_s: tuple[float, ...] = ()   # the writing rank's wall clock at the end of every repetition
    iters: int | None = None                 # calls per repetition, when the file records them


def _freeze(value: Any) -> Any:
    """Read-only copy of JSON-like data: dicts become mapping proxies, lists become tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    """Plain JSON-serialisable copy of data made by :func:`_freeze`."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Dataset:
    """A set of measurements and what is known about where they come from.

    ``meta`` is read-only (nested mappings/tuples) with keys such as ``source``, ``hardware``,
    ``nccl_version``, ``env``, ``command``, ``topology`` (a hint for building a simulator
    topology: ``preset``, ``nodes``, ``gpus_per_node``, ``nic``...) and ``notes``.
    """

    meta: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    points: tuple[CollMeasurement, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.meta, MappingProxyType):
            object.__setattr__(self, "meta", _freeze(dict(self.meta)))
        object.__setattr__(self, "points", tuple(self.points))

    def select(self, *, op: str | None = None, world: int | None = None,
               variant: str | None = None, in_place: bool | None = False) -> list[CollMeasurement]:
        """Points matching every given criterion (``None`` matches anything), sorted by size."""
        found = [p for p in self.points
                 if (op is None or p.op == op) and (world is None or p.world == world)
                 and (variant is None or p.variant == variant)
                 and (in_place is None or p.in_place == in_place)]
        return sorted(found, key=lambda p: (p.op, p.world, p.variant, p.size_bytes))


# --------------------------------------------------------------------------------------------
# small helpers

def op_from_binary(name: str) -> str | None:
    """Our op name for an nccl-tests binary (``./build/alltoall_perf_mpi`` -> ``all_to_all``)."""
    stem = os.path.basename(name)
    match = re.match(r"([a-z_]+?)_perf(?:_mpi)?$", stem)
    if not match:
        return None
    op = NCCL_TESTS_BINARY_OPS.get(match.group(1), match.group(1))
    return op if op in OPS else None


def _check_op(op: str, source: str, line: int | None = None) -> str:
    if op not in OPS:
        raise InputError(f"unknown collective; expected one of {', '.join(OPS)}",
                         source=source, field=_line_field(line) or "op", value=op)
    return op


def _line_field(line: int | None) -> str | None:
    return None if line is None else f"line {line}"


def _dtype(type_name: str) -> tuple[str, int | None]:
    try:
        name = canonical_dtype(type_name)
    except InputError:
        return type_name, None
    return name, DTYPE_BYTES[name]


def _number(token: str) -> float | None:
    """A float from a table cell, or ``None`` for ``N/A``, ``nan``, ``-``."""
    if token.upper() in ("N/A", "NA", "-", "NAN"):
        return None
    try:
        value = float(token.replace("_", ""))
    except ValueError:
        return None
    return None if value != value else value


def _us_to_s(token: str) -> float:
    """Seconds from a microseconds string, rounded once (``"13.24"`` -> ``1.324e-05`` exactly)."""
    try:
        return float(Decimal(token.replace("_", "")).scaleb(-6))
    except InvalidOperation:
        return float(token) * 1e-6


# --------------------------------------------------------------------------------------------
# nccl-tests text tables

_PREFIX = re.compile(r"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:|\d+:(?=\s))")
_RANK_LINE = re.compile(r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+\S+\s+device")
_NRANKS = re.compile(r"\bn[Rr]anks[\s=:]+(\d+)")
_TEST_START = re.compile(r"Collective test starting:\s*(\S+)")
_BINARY = re.compile(r"([A-Za-z0-9_./-]*?\b[a-z_]+_perf(?:_mpi)?)\b")
_TABLE_END = re.compile(r"(Avg bus bandwidth|Out of bounds values|Collective test concluded)")
_OUT_OF_BOUNDS = re.compile(r"Out of bounds values\s*:\s*(\d+)\s*FAILED")
_TESTS_VERSION = re.compile(r"nccl-tests version \S+ nccl-headers=\d+ nccl-library=(\d+)")
_NCCL_BANNER = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)")

# header token -> canonical column name
_COLUMN_NAMES = {
    "size": "size", "bytes": "size", "count": "count", "n": "count", "type": "type",
    "redop": "redop", "op": "redop", "root": "root", "time": "time", "cputime": "time",
    "algbw": "algbw", "busbw": "busbw", "#wrong": "wrong", "wrong": "wrong", "error": "error",
    "res": "error", "timestamp": "timestamp",
}


@dataclass(frozen=True)
class NcclTestsTable:
    """One result table of an nccl-tests text output and what preceded it.

    ``line`` is the 1-based line number of the column header; ``command`` the last command line
    naming an ``*_perf`` binary before the table (or ``""``).
    """

    op: str
    world: int
    line: int
    command: str
    points: tuple[CollMeasurement, ...]


@dataclass
class _Header:
    columns: list[str]
    line: int

    def index(self, name: str, group: int = 0) -> int | None:
        hits = [i for i, c in enumerate(self.columns) if c == name]
        return hits[group] if len(hits) > group else None


@dataclass
class _Context:
    """What the text said since the previous table (reset after each table)."""

    ranks: set[int] = field(default_factory=set)
    nranks: int | None = None
    op: str | None = None
    command: str = ""


def _row_shaped(header: _Header, tokens: list[str]) -> bool:
    """Whether a table line whose first token is not a size is still a result row (one cell per column and a known
    type in the type column: ``0x20 8 float sum ...``), not a log line printed inside the table (NCCL INFO)."""
    at = header.index("type")
    named = [c for c in header.columns if c != "timestamp"]
    return at is not None and len(tokens) == len(named) and _dtype(tokens[at])[1] is not None


def _parse_header(body: str, line: int) -> _Header | None:
    tokens = body.lstrip("#").split()
    if not tokens or tokens[0].lower() not in ("size", "bytes"):
        return None
    lowered = [t.lower() for t in tokens]
    if "time" not in lowered and "cputime" not in lowered:
        return None
    return _Header([_COLUMN_NAMES.get(t, t) for t in lowered], line)


def _infer_op_from_row(redop: str | None, root: int | None, ratio: float | None) -> str | None:
    """Collective from the row's redop/root and size/(count*type size); None if ambiguous."""
    if redop is None:
        return None
    reduces = redop.lower() not in ("none", "-")
    if root is not None and root >= 0:
        return "reduce" if reduces else "broadcast"
    if ratio is None:
        return None
    if reduces:
        return "all_reduce" if abs(ratio - 1.0) < 1e-9 else "reduce_scatter"
    return None  # all_gather and all_to_all print the same columns


def _resolve_world(ctx: _Context, op: str | None, ratio: float | None) -> int | None:
    if ctx.ranks:
        return max(ctx.ranks) + 1
    if ctx.nranks:
        return ctx.nranks
    if op in ("all_gather", "reduce_scatter") and ratio and ratio >= 1.0:
        return round(ratio)
    return None


class _TextParser:
    """Walks an nccl-tests text output line by line and collects its tables."""

    def __init__(self, *, op: str | None, world: int | None, source: str,
                 include_in_place: bool, default_world: int | None = None) -> None:
        self.op = _check_op(op, source) if op is not None else None
        self.world = world
        self.default_world = default_world
        self.dropped_wrong = 0          # rows whose #wrong column is > 0
        self.dropped_failed: list[tuple[int, int]] = []   # (line, rows) of tables that FAILED
        self.source = source
        self.include_in_place = include_in_place
        self.tables: list[NcclTestsTable] = []
        self._wrong_seen = False
        self.ctx = _Context()
        self.header: _Header | None = None
        self.rows: list[tuple[int, list[str]]] = []
        self.headers_seen = 0           # result table headers, with rows or without

    def feed(self, text: str) -> list[NcclTestsTable]:
        for number, raw in enumerate(text.splitlines(), start=1):
            self._line(number, _PREFIX.sub("", raw, count=1))
        self._close()
        if self.dropped_wrong:
            log.warning("%s: dropped %d rows whose data check failed (#wrong > 0)", self.source,
                        self.dropped_wrong)
        for line, n in self.dropped_failed:
            log.warning("%s: line %d: 'Out of bounds values ... FAILED': dropped the table's %d "
                        "points", self.source, line, n)
        return self.tables

    def _line(self, number: int, body: str) -> None:
        header = _parse_header(body.strip(), number)
        if header is not None:
            self._close()
            self.header = header
            self.headers_seen += 1
            return
        stripped = body.strip()
        if self.header is not None:
            if _TABLE_END.search(stripped):
                failed = _OUT_OF_BOUNDS.search(stripped)
                self._close(failed_line=number if failed and int(failed.group(1)) > 0 else None)
                return
            tokens = stripped.split()
            if tokens and (re.fullmatch(r"\d[\d_]*", tokens[0]) or _row_shaped(self.header, tokens)):
                self.rows.append((number, tokens))      # a row-shaped line with a bad size is refused, not skipped
            return
        self._context(stripped)

    def _context(self, stripped: str) -> None:
        rank = _RANK_LINE.match(stripped)
        if rank:
            self.ctx.ranks.add(int(rank.group(1)))
            return
        start = _TEST_START.search(stripped)
        if start:
            self.ctx.op = op_from_binary(start.group(1)) or self.ctx.op
            return
        nranks = _NRANKS.search(stripped)
        if nranks:
            self.ctx.nranks = int(nranks.group(1))
        binary = _BINARY.search(stripped)
        if binary and op_from_binary(binary.group(1)) and "concluded" not in stripped:
            self.ctx.op = op_from_binary(binary.group(1))
            self.ctx.command = stripped

    def _close(self, failed_line: int | None = None) -> None:
        header, rows = self.header, self.rows
        self.header, self.rows = None, []
        if header is None:
            return
        if rows:
            table = self._table(header, rows)
            if failed_line is not None and table.points and not self._wrong_seen:
                self.dropped_failed.append((failed_line, len(table.points)))
            elif table.points:
                self._refuse_a_repeat(table)
                self.tables.append(table)
        self.ctx = _Context()

    def _refuse_a_repeat(self, table: NcclTestsTable) -> None:
        """A table equal to an earlier one of the file, time for time, is the same output pasted twice: its points
        would count twice in a fit. Repeated launches differ in their times; one row alike can be chance."""
        def key(t: NcclTestsTable) -> tuple:
            return t.op, t.world, tuple((p.size_bytes, p.dtype, p.in_place, p.time_s) for p in t.points)
        if len(table.points) < 2:
            return
        earlier = next((t for t in self.tables if key(t) == key(table)), None)
        if earlier is not None:
            raise InputError(f"this table repeats the one at line {earlier.line} time for time (the same output "
                             "pasted twice would count every point twice): keep one", source=self.source,
                             field=_line_field(table.line), value=table.op)

    def _table(self, header: _Header, rows: list[tuple[int, list[str]]]) -> NcclTestsTable:
        op = self.op or self.ctx.op
        world = self.world
        points: list[CollMeasurement] = []
        parsed = [self._row(header, number, tokens) for number, tokens in rows]
        if op is None:
            guesses = {_infer_op_from_row(r["redop"], r["root"], r["ratio"]) for r in parsed}
            guesses.discard(None)
            if len(guesses) != 1:
                raise InputError("cannot tell which collective this table measures (all_gather and all_to_all "
                                 "print the same columns, and the rows' redop/root/count say nothing consistent): "
                                 "keep the nccl-tests command line (e.g. './build/all_gather_perf -b 8 -e 1G') or "
                                 "its '# Collective test starting: all_gather_perf' line above the table",
                                 source=self.source, field=_line_field(header.line))
            op = guesses.pop()
        if world is None:
            ratios = [r["ratio"] for r in parsed if r["ratio"]]
            own = self.ctx.ranks and max(self.ctx.ranks) + 1 or self.ctx.nranks
            if own and self.default_world and own != self.default_world:
                log.warning("%s: line %d: the log's own Rank lines say %d ranks, the topology "
                            "options %d: using the log's %d", self.source, header.line, own,
                            self.default_world, own)
            world = own or self.default_world or _resolve_world(self.ctx, op, ratios[-1] if ratios else None)
        if world is None or world < 1:
            raise InputError("cannot tell the number of ranks (no '# Using devices' Rank lines "
                             "or nranks): keep those lines of the log, or give the topology it ran on "
                             "(--topology, --nodes)", source=self.source,
                             field=_line_field(header.line))
        self._wrong_seen = False
        for r in parsed:
            if r["wrong"]:
                self.dropped_wrong += 1
                self._wrong_seen = True
                continue
            for in_place, half in ((False, r["out"]), (True, r["in"])):
                if half is None or (in_place and not self.include_in_place):
                    continue
                time_s, algbw, busbw = half
                points.append(CollMeasurement(
                    op=op, world=world, size_bytes=r["size"], time_s=time_s,
                    algbw_GBps=algbw, busbw_GBps=busbw, dtype=r["dtype"], in_place=in_place,
                    source=self.source))
        return NcclTestsTable(op=op, world=world, line=header.line, command=self.ctx.command,
                              points=tuple(points))

    def _row(self, header: _Header, number: int, tokens: list[str]) -> dict[str, Any]:
        def bad(message: str, value: object = None) -> InputError:
            return InputError(message, source=self.source, field=f"line {number}", value=value)

        columns = header.columns
        n_named = len([c for c in columns if c != "timestamp"])
        if len(tokens) < n_named:
            # nccl-tests prints blanks instead of the out-of-place half in some modes
            groups = columns.count("time")
            if groups == 2 and len(tokens) == n_named - 4:
                columns = columns[:header.index("time")] + columns[header.index("time", 1):]
            else:
                raise bad(f"row has {len(tokens)} fields, the header at line {header.line} "
                          f"has {n_named}", " ".join(tokens))
        elif len(tokens) > n_named and "timestamp" not in columns:   # a trailing cell no column names
            raise bad(f"row has {len(tokens)} fields, the header at line {header.line} has {n_named}: "
                      f"extra field {tokens[n_named]!r}", " ".join(tokens))
        cell: dict[str, list[str]] = {}
        for name, token in zip(columns, tokens):
            cell.setdefault(name, []).append(token)
        try:
            size = int(cell["size"][0].replace("_", ""))
        except (KeyError, ValueError):
            raise bad("size is not an integer", tokens[0]) from None
        count = _number(cell["count"][0]) if "count" in cell else None
        dtype, type_size = _dtype(cell["type"][0]) if "type" in cell else ("float32", 4)
        if type_size is None:           # was kept as a point of an unknown element size
            raise bad(f"unknown dtype in the type column (known: {', '.join(sorted(DTYPE_BYTES))})", dtype)
        root_value = _number(cell["root"][0]) if "root" in cell else None
        ratio = (size / (count * type_size)) if count and type_size else None
        halves: list[tuple[float, float | None, float | None] | None] = []
        n_groups = len(cell.get("time", []))
        if n_groups == 0:
            raise bad("no time column")
        for g in range(n_groups):
            time_us = _number(cell["time"][g])
            if time_us is None:
                raise bad("time is not a number", cell["time"][g])
            if not 0 < time_us <= limits.MAX_TIME_S * 1e6:     # negative, zero, infinite or 1e30: a broken row, not a point
                raise bad(f"time must be a positive number of microseconds, at most {limits.MAX_TIME_S * 1e6:.0e} "
                          f"({limits.MAX_TIME_S:.0e} s)", cell["time"][g])
            algbw = _number(cell["algbw"][g]) if len(cell.get("algbw", [])) > g else None
            busbw = _number(cell["busbw"][g]) if len(cell.get("busbw", [])) > g else None
            halves.append((_us_to_s(cell["time"][g]), algbw, busbw))
        if len(columns) != len(header.columns):  # only the in-place half was printed
            halves = [None] + halves
        wrong = any((_number(w) or 0) > 0 for w in cell.get("wrong", []))
        return {"size": size, "dtype": dtype, "ratio": ratio,
                "redop": cell["redop"][0] if "redop" in cell else None,
                "root": None if root_value is None else int(root_value),
                "out": halves[0], "in": halves[1] if len(halves) > 1 else None, "wrong": wrong}


def parse_nccl_tests_tables(text: str, *, op: str | None = None, world: int | None = None,
                            source: str = "", include_in_place: bool = False,
                            default_world: int | None = None) -> list[NcclTestsTable]:
    """Every result table in an nccl-tests text output, in file order.

    The collective comes from ``op`` if given, else the ``# Collective test starting:`` line or a
    command line naming an ``*_perf`` binary before the table, else the ``redop``/``root``/count
    columns. The number of ranks comes from ``world`` if given, else the ``# Using devices`` Rank
    lines, an ``nranks N`` mention, or (all_gather/reduce_scatter) size / (count x type size).
    Columns alone tell all_reduce, reduce_scatter, broadcast and reduce apart, but not all_gather
    from all_to_all: such a table needs ``op`` or a command line.
    ``default_world`` is used only where the log has no Rank lines or nranks of its own (a log's
    own count wins, with a warning when they differ).
    Out-of-place results are kept; in-place ones too (``in_place=True``) if ``include_in_place``.
    Rows whose ``#wrong`` column is above 0, and tables closed by ``Out of bounds values : N
    FAILED``, are dropped with a warning that counts them.
    """
    parser = _TextParser(op=op, world=world, source=source, include_in_place=include_in_place,
                         default_world=default_world)
    tables = parser.feed(text)
    if not tables and (parser.dropped_wrong or parser.dropped_failed):
        raise InputError("every result row failed its data check (#wrong > 0 or 'Out of bounds "
                         "values ... FAILED'); nothing to use", source=source)
    if not tables and parser.headers_seen:
        raise InputError("a result table header but no result rows (did the run stop before its first size?)",
                         source=source)
    if not tables:
        raise InputError("no nccl-tests result table found (expected a header line with "
                         "'size ... time algbw busbw')", source=source)
    return tables


def parse_nccl_tests_text(text: str, *, op: str | None = None, world: int | None = None,
                          source: str = "", include_in_place: bool = False,
                          default_world: int | None = None) -> list[CollMeasurement]:
    """All measurements of an nccl-tests text output (see :func:`parse_nccl_tests_tables`)."""
    tables = parse_nccl_tests_tables(text, op=op, world=world, source=source,
                                     include_in_place=include_in_place, default_world=default_world)
    return [p for t in tables for p in t.points]


def nccl_tests_text_version(text: str, source: str = "") -> tuple[str, str] | None:
    """(release, where) of the NCCL an nccl-tests text log ran with: nccl-tests' own header (``# nccl-tests version
    2.17.6 nccl-headers=22602 nccl-library=22602``: the library, the NCCL loaded at run time) or NCCL's banner
    (``NCCL version 2.21.5+cuda12.4``, printed with NCCL_DEBUG=INFO); ``where`` is ``"line N"`` of its first
    mention. None where neither appears. One log naming two releases is refused, naming both lines."""
    found: tuple[str, int] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        m = _TESTS_VERSION.search(line)
        release = nccl_version_string(int(m.group(1))) if m else None
        if release is None:
            banner = _NCCL_BANNER.search(line)
            release = banner.group(1) if banner else None
        if release is None:
            continue
        if found is None:
            found = (release, number)
        elif read_nccl_version(release) != read_nccl_version(found[0]):
            raise InputError(f"one log names two NCCL releases, {found[0]} (line {found[1]}) and {release}: give "
                             "each run's log apart", source=source, field=f"line {number}", value=release)
    return None if found is None else (found[0], f"line {found[1]}")


# --------------------------------------------------------------------------------------------
# nccl-tests -J JSON

def nccl_version_string(code: int) -> str:
    """``22809`` -> ``"2.28.9"``; ``2708`` -> ``"2.7.8"`` (NCCL's two version-code schemes)."""
    if code >= 20900:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def _json_report(obj: Mapping[str, Any], source: str, include_in_place: bool
                 ) -> tuple[dict[str, Any], list[CollMeasurement]]:
    def bad(message: str, where: str, value: object = None) -> InputError:
        return InputError(message, source=source, field=where, value=value)

    results = obj.get("results")
    if not isinstance(results, list):
        raise bad("not an nccl-tests JSON report (no 'results' list)", "results")
    raw_args = obj.get("args", [])
    if not isinstance(raw_args, list) or not all(isinstance(a, (str, int, float)) for a in raw_args):
        raise bad("must be a list of strings", "args", raw_args)
    args = [str(a) for a in raw_args]
    op = op_from_binary(args[0]) if args else None
    if op is None:
        raise bad("cannot tell the collective from 'args[0]'", "args[0]",
                  args[0] if args else None)
    config = obj.get("config") or {}
    if not isinstance(config, Mapping):
        raise bad("must be a JSON object", "config", config)
    cfg = Fields(config, source, "config", "config")
    devices = config.get("devices")
    devices = devices if isinstance(devices, list) else obj.get("devices", [])
    if not isinstance(devices, list):
        raise bad("must be a list", "devices", devices)
    per_process = cfg.whole("nthreads", low=1, high=limits.GPUS.value, default=1) * \
        cfg.whole("ngpus", low=1, high=limits.GPUS.value, default=1)
    world = limits.GPUS.check(max(1, len(devices)) * per_process, source=source, field="devices")
    env = {k: v for k, v in Fields(obj, source, "").env() if k.startswith("NCCL_")}
    points: list[CollMeasurement] = []
    wrong = 0
    for i, record in enumerate(results):
        f = Fields(record, source, f"results[{i}]", "result")
        size = f.whole("size", high=limits.MAX_SIZE_BYTES)
        dtype, _ = _dtype(f.text("type", "float"))
        for key, in_place in (("out_of_place", False), ("in_place", True)):
            half = record.get(key)
            if half is None or (in_place and not include_in_place):
                continue
            h = Fields(half, source, f"results[{i}].{key}", "result half")
            time_key = "time" if h.has("time") else "cpu_time"
            time_s = h.number(time_key, positive=True, high=limits.MAX_TIME_S * 1e6)
            if (h.number("wrong", required=False, na_ok=True, high=limits.MAX_SIZE_BYTES) or 0) > 0:
                wrong += 1
                continue
            points.append(CollMeasurement(
                op=op, world=world, size_bytes=size, time_s=_us_to_s(repr(time_s)),
                algbw_GBps=h.number("alg_bw", required=False, na_ok=True, high=1e9),
                busbw_GBps=h.number("bus_bw", required=False, na_ok=True, high=1e9),
                dtype=dtype, in_place=in_place, source=source, env=tuple(sorted(env.items()))))
    if wrong:
        log.warning("%s: dropped %d results whose data check failed (wrong > 0)", source, wrong)
    meta: dict[str, Any] = {"source": source, "format": "nccl-tests-json",
                            "command": " ".join(args), "env": env}
    version = obj.get("nccl_version")
    if isinstance(version, int) and not isinstance(version, bool) and 0 < version < 10**7:
        meta["nccl_version"], meta["nccl_version_where"] = nccl_version_string(version), "nccl_version"
    return meta, points


def parse_nccl_tests_json(text_or_obj: str | Mapping[str, Any] | list[Any], source: str = "",
                          *, include_in_place: bool = False) -> list[CollMeasurement]:
    """Measurements from an nccl-tests ``-J`` report (a JSON string or the loaded object).

    The collective comes from ``args[0]``, the number of ranks from the ``devices`` list (one
    entry per process) times ``nthreads x ngpus``; only ``NCCL_*`` variables of ``env`` are kept.
    A list of reports is accepted too.
    """
    obj: Any = text_or_obj
    if isinstance(text_or_obj, str):
        obj = parse_json(text_or_obj, source)
    reports = obj if isinstance(obj, list) else [obj]
    points: list[CollMeasurement] = []
    for report in reports:
        if not isinstance(report, Mapping):
            raise InputError("not an nccl-tests JSON report", source=source)
        points.extend(_json_report(report, source, include_in_place)[1])
    return points


# --------------------------------------------------------------------------------------------
# our JSONL

def _coll_from_record(record: Mapping[str, Any], source: str, line: int) -> CollMeasurement:
    f = Fields(record, source, f"line {line}", "coll")
    op = _check_op(f.text("op"), source, line)
    min_s = f.number("min_s", required=False, positive=True)
    max_s = f.number("max_s", required=False, positive=True)
    if min_s is not None and max_s is not None and min_s > max_s:
        raise f.bad("min_s", "the fastest repetition is slower than the slowest (min_s > max_s)",
                    {"min_s": min_s, "max_s": max_s})
    reps = record.get("rep_times_s") or []
    if not isinstance(reps, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                             and 0 < x < 1e9 for x in reps):
        raise f.bad("rep_times_s", "must be a list of positive times in seconds (one per repetition)", reps)
    host = record.get("rank_host_times_s") or []
    if not isinstance(host, list) or (host and not reps) or not all(
            isinstance(h, list) and len(h) == len(reps) and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x < 1e9 for x in h) for h in host):
        raise f.bad("rank_host_times_s", "must be a list (one per rank) of lists of positive times in seconds, "
                    "one per repetition of rep_times_s", host)
    ends = record.get("rep_end_unix_s") or []
    if not isinstance(ends, list) or len(ends) != (len(reps) if ends else 0) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in ends):
        raise f.bad("rep_end_unix_s", "must be a list of positive Unix times, one per repetition of rep_times_s", ends)
    time_s = f.number("time_s", positive=True)
    fastest = max([x for x in (min_s, min(reps, default=None)) if x is not None], default=0.0)
    slowest = min([x for x in (max_s, max(reps, default=None)) if x is not None], default=math.inf)
    if not fastest * (1 - 1e-9) <= time_s <= slowest * (1 + 1e-9):     # the median over its repetitions
        raise f.bad("time_s", f"must lie between the fastest and the slowest repetition ({fastest:.6g} to "
                    f"{slowest:.6g} s: min_s, max_s, rep_times_s)", time_s)
    world = f.whole("world", low=1, high=limits.GPUS.value)
    if host and len(host) != world:
        raise f.bad("rank_host_times_s", f"must hold one list per rank: {len(host)} lists for world {world}", host)
    return CollMeasurement(
        op=op, world=world,
        size_bytes=f.whole("bytes", high=limits.MAX_SIZE_BYTES), time_s=time_s,
        algbw_GBps=f.number("algbw_GBps", required=False, high=1e9),
        busbw_GBps=f.number("busbw_GBps", required=False, high=1e9),
        variant=f.text("variant", "default"), dtype=f.text("dtype", "float32"),
        in_place=f.flag("in_place"), source=f.text("source", "") or source, env=f.env(),
        min_s=min_s, max_s=max_s, rep_times_s=tuple(float(x) for x in reps),
        rank_host_times_s=tuple(tuple(float(x) for x in h) for h in host),
        rep_end_unix_s=tuple(float(x) for x in ends),
        iters=f.whole("iters", low=1) if record.get("iters") is not None else None)


def _parse_jsonl(text: str, source: str) -> Dataset:
    meta: dict[str, Any] = {}
    points: list[CollMeasurement] = []
    for number, record in jsonl_records(text, source):
        kind = check_kind(record, source, number).get("kind", "coll" if "op" in record else None)
        if kind == "meta":
            meta.update({k: v for k, v in record.items() if k != "kind"})
        elif kind == "coll":
            points.append(_coll_from_record(record, source, number))
    meta.setdefault("source", source)
    return Dataset(meta=meta, points=tuple(points))


def read_jsonl(path: str | os.PathLike[str]) -> Dataset:
    """Our JSONL format: a ``meta`` record (merged into ``Dataset.meta``) and ``coll`` records."""
    return _parse_jsonl(read_text(path, what="measurement file"), str(path))


def _coll_record(p: CollMeasurement) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": "coll", "op": p.op, "world": p.world,
                              "bytes": p.size_bytes, "dtype": p.dtype, "time_s": p.time_s,
                              "algbw_GBps": p.algbw_GBps, "busbw_GBps": p.busbw_GBps,
                              "variant": p.variant}
    if p.in_place:
        record["in_place"] = True
    if p.env:
        record["env"] = dict(p.env)
    if p.source:
        record["source"] = p.source
    if p.min_s is not None:
        record["min_s"] = p.min_s
    if p.max_s is not None:
        record["max_s"] = p.max_s
    if p.rep_times_s:
        record["rep_times_s"] = list(p.rep_times_s)
    if p.rank_host_times_s:
        record["rank_host_times_s"] = [list(h) for h in p.rank_host_times_s]
    if p.rep_end_unix_s:
        record["rep_end_unix_s"] = list(p.rep_end_unix_s)
    if p.iters is not None:
        record["iters"] = p.iters
    return record


def write_jsonl(dataset: Dataset, path: str | os.PathLike[str]) -> None:
    """Write ``dataset`` as our JSONL: one ``meta`` record, then one ``coll`` record per point."""
    lines = [json.dumps({"kind": "meta", **_thaw(dataset.meta)})]
    lines.extend(json.dumps(_coll_record(p)) for p in dataset.points)
    write_atomic(path, "\n".join(lines) + "\n")


# --------------------------------------------------------------------------------------------
# dispatch

def load_measurements(path: str | os.PathLike[str], *, op: str | None = None,
                      world: int | None = None, default_world: int | None = None) -> Dataset:
    """Read any supported file, telling the format from its content (JSONL, -J JSON, text).
    ``world`` overrides the number of ranks of nccl-tests text; ``default_world`` is used where
    the text does not say (see :func:`parse_nccl_tests_tables`)."""
    source = str(path)
    text = read_text(path, what="measurement file")
    stripped = text.lstrip()
    if not stripped:
        raise InputError("the file is empty (expected nccl-tests output, nccl-tests -J JSON or JSONL records)",
                         source=source)
    if stripped.startswith(("{", "[")):
        first = stripped.splitlines()[0]
        try:
            whole = parse_json(text, source)
        except InputError:
            if not first.startswith("{") or "\n" not in text.strip():
                raise
            whole = None                        # several JSON lines: our JSONL
        if isinstance(whole, (dict, list)) and (
                isinstance(whole, list) or "results" in whole):
            reports = whole if isinstance(whole, list) else [whole]
            meta: dict[str, Any] = {}
            points: list[CollMeasurement] = []
            for report in reports:
                if not isinstance(report, Mapping):
                    raise InputError("not an nccl-tests JSON report", source=source)
                report_meta, report_points = _json_report(report, source, False)
                meta = meta or report_meta
                points.extend(report_points)
            return Dataset(meta=meta, points=tuple(points))
        if first.startswith("{"):
            return _parse_jsonl(text, source)
    points = parse_nccl_tests_text(text, op=op, world=world, source=source, default_world=default_world)
    meta = {"source": source, "format": "nccl-tests-text"}
    version = nccl_tests_text_version(text, source)
    if version is not None:             # the NCCL that ran, and the line that says so
        meta["nccl_version"], meta["nccl_version_where"] = version
    return Dataset(meta=meta, points=tuple(points))


def conflicting_duplicates(points: Iterable[CollMeasurement], ratio: float = 2.0
                           ) -> list[tuple[CollMeasurement, CollMeasurement]]:
    """Pairs (fastest, slowest) of points measured more than once (same op, world, variant,
    size, dtype, in-place and environment) whose times differ by more than ``ratio``: a
    sign of mixed-up files or a broken run, which a fit would silently average."""
    groups: dict[tuple, list[CollMeasurement]] = {}
    for p in points:
        groups.setdefault((p.op, p.world, p.variant, p.size_bytes, p.dtype, p.in_place, p.env), []).append(p)
    out = []
    for ps in groups.values():
        if len(ps) > 1:
            fast, slow = min(ps, key=lambda p: p.time_s), max(ps, key=lambda p: p.time_s)
            if slow.time_s > ratio * fast.time_s:
                out.append((fast, slow))
    return out
