"""JSONL result files: append one record per line (flushed), read them back, find done points.

A result file collects records from many launches and variants; a rerun of a sweep reads it to
skip points already measured, so a crashed or interrupted sweep can simply be started again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

from simulator.core.inputs import read_jsonl

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


def read_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Records of a JSONL file in order; a missing file has none, a torn last line is skipped."""
    for _, record in read_jsonl(path, skip_bad=True, missing_ok=True):
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
