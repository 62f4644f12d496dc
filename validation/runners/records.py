"""JSONL result files: append one record per line (flushed), read them back, find done points.

A result file collects records from many launches and variants; a rerun of a sweep reads it to
skip points already measured, so a crashed or interrupted sweep can simply be started again.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

from simulator.core.errors import InputError
from simulator.core.inputs import read_jsonl

RECORD_KINDS = ("meta", "coll", "coll_failed", "ddp", "ddp_failed", "ddp_compute", "dp", "dp_profile", "dp_failed",
                "overlap", "peer", "llm_profile", "llm_fsdp", "llm_tp", "llm_pp", "llm_failed", "llm_issue",
                "llm_op_issue", "llm_iteration", "llm_memory", "profile", "gemm_nccl", "kernel_grid",
                "kernel_probe")
"""Every ``kind`` a measurement record may have (docs/validation-runners.md, "JSONL formats"): what the runners
write, plus the converted public sets' ``llm_iteration`` / ``llm_memory`` and the first H200 campaign's single-GPU
``profile``. A reader takes the kinds it needs and passes over the others; a kind outside this list is a misspelt
one (``"kind": "col"``) and is refused (:func:`check_kind`), never silently skipped."""

PointKey = tuple[str, str, int, int, str]
"""(variant, op, world, bytes, dtype): what identifies one collective measurement."""


def append_record(path: str | os.PathLike[str], record: dict[str, Any]) -> None:
    """Append ``record`` as one JSON line and flush it to disk at once (crash-safe progress)."""
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, sort_keys=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def check_kind(record: dict[str, Any], source: str, number: int) -> dict[str, Any]:
    """``record`` (line ``number`` of ``source``) when its ``kind``, if it has one, is in :data:`RECORD_KINDS`; else
    an InputError naming the file, the line and the kind."""
    kind = record.get("kind")
    if kind is None or kind in RECORD_KINDS:
        return record
    near = difflib.get_close_matches(str(kind), RECORD_KINDS, n=1)
    raise InputError("unknown record kind" + (f"; did you mean {near[0]!r}?" if near else
                                              f" (known: {', '.join(RECORD_KINDS)})"),
                     source=source, field=f"line {number}, kind", value=kind)


def read_measurement_records(path: str | os.PathLike[str], *, skip_bad: bool = False, missing_ok: bool = False,
                             torn_only: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` of a measurement JSONL file (:func:`simulator.core.inputs.read_jsonl`, same
    options), each record's kind checked (:func:`check_kind`)."""
    src = str(path)
    for number, record in read_jsonl(path, skip_bad=skip_bad, missing_ok=missing_ok, torn_only=torn_only):
        yield number, check_kind(record, src, number)


def read_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Records of a JSONL file in order; a missing file has none, a torn last line is skipped."""
    for _, record in read_measurement_records(path, skip_bad=True, missing_ok=True):
        yield record


def point_key(record: dict[str, Any]) -> PointKey:
    """The identity of a ``kind:"coll"`` record (variant, op, world, bytes, dtype)."""
    return (str(record["variant"]), str(record["op"]), int(record["world"]),
            int(record["bytes"]), str(record["dtype"]))


def done_points(records: Iterable[dict[str, Any]]) -> set[PointKey]:
    """Keys of the collective points already measured (``kind == "coll"``); a record too damaged
    to name its point does not count as measured."""
    done = set()
    for r in records:
        if r.get("kind") == "coll":
            try:
                done.add(point_key(r))
            except (KeyError, TypeError, ValueError):
                continue
    return done
