"""A sweep's output folder: results streamed as points finish, resumable, never stale.

Files in ``--out``:

* ``results.jsonl``: one row per finished point, appended (and flushed) the moment the point
  finishes, so a crash or Ctrl-C keeps everything done so far; at the end it is rewritten in
  point order, so the final file is byte-for-byte the same however the points were scheduled;
* ``failed.jsonl``: one ``{"index", "point", "error"}`` line per point that failed (only when
  some did);
* ``results.csv`` and ``report.html``: written at the end from what finished (the report lists
  the failed points); after Ctrl-C only ``results.csv``, so that the run stops at once.

At the start every file of a previous run is removed, so an old report can never pass for this
run's; with ``--resume`` the previous ``results.jsonl`` is read first and the points it holds
(matched on their configuration, not their number) are not evaluated again; records that match no point
(the study's axes changed) are dropped and counted (``dropped``), and a file none of whose records matches
(another study's) is refused, before anything is removed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Sequence

from gpunetsim.study import Point, jsonl_line, point_fields
from gpunetsim.study_run import PointOutcome, Row
from simulator.core.errors import InputError
from simulator.core.inputs import read_jsonl
from simulator.core.outputs import check_folder, remove_stale, write_atomic

RESULTS = "results.jsonl"
FAILED = "failed.jsonl"
CSV = "results.csv"
REPORT = "report.html"

# A row's configuration columns, less those evaluation fills in (a default batch size becomes
# the model's, the GPU the topology's): what matches a row of an earlier run to a point.
_IDENTITY = tuple(f for f in point_fields() if f not in ("index", "batch_size", "gpu"))


def _identity(columns: Row) -> str:
    """The identity columns as one JSON text (hashable; tuples and lists alike, as after a round trip)."""
    return json.dumps([columns.get(k) for k in _IDENTITY], sort_keys=True, default=str)


def _matching(points: Sequence[Point]):
    """``row -> point`` for rows of an earlier run of these points (None when none matches)."""
    by_identity: dict[str, list[Point]] = {}
    for p in points:
        by_identity.setdefault(_identity(p.columns()), []).append(p)

    def match(row: Row) -> Point | None:
        for p in by_identity.get(_identity(row), ()):
            if p.batch_size is None or p.batch_size == row.get("batch_size"):
                return p
        return None
    return match


class StudyOutput:
    """The output folder of one sweep run (see the module docstring)."""

    def __init__(self, folder: str | os.PathLike[str], field: str = "--out") -> None:
        self.folder = check_folder(folder, field)
        self.rows: dict[int, Row] = {}
        self.failures: dict[int, tuple[str, str]] = {}
        self._results: IO[str] | None = None
        self._failed: IO[str] | None = None
        self.dropped = 0        # complete records of the previous results.jsonl that match no point (resume)

    def path(self, name: str) -> Path:
        return self.folder / name

    def start(self, points: Sequence[Point], resume: bool) -> list[Point]:
        """Clear the previous run's files (keeping its rows when ``resume``); the points still to run."""
        kept: dict[int, Row] = {}
        self.dropped = 0
        if resume:
            match = _matching(points)
            records = [row for _, row in read_jsonl(self.path(RESULTS), skip_bad=True, missing_ok=True)]
            for row in records:
                p = match(row)
                if p is None:
                    self.dropped += 1
                elif p.index not in kept:
                    kept[p.index] = {**row, "index": p.index}
            if records and not kept:       # another study's results: refused before anything is removed
                raise InputError(f"none of the {len(records)} records in {self.path(RESULTS)} is a point of this "
                                 "study (another study's results, or every axis changed): give another --out, or "
                                 "leave --resume out to replace them", field="--resume")
        for name in (REPORT, CSV, FAILED, RESULTS):
            remove_stale(self.path(name), field=name)
        self.rows = kept
        ordered = [kept[i] for i in sorted(kept)]
        write_atomic(self.path(RESULTS), "".join(jsonl_line(r) for r in ordered))
        self._results = self.path(RESULTS).open("a", encoding="utf-8")
        return [p for p in points if p.index not in kept]

    def add(self, outcome: PointOutcome, point: Point) -> None:
        """Record one finished point at once (flushed to disk)."""
        if outcome.row is not None:
            line = jsonl_line(outcome.row)
            # the row as results.jsonl holds it (tuples become lists), so that a resumed run's
            # CSV and report are byte-for-byte those of a run without interruption
            self.rows[outcome.index] = json.loads(line)
            assert self._results is not None
            self._results.write(line)
            self._results.flush()
            return
        label = describe(point)
        self.failures[outcome.index] = (label, outcome.error or "failed")
        if self._failed is None:
            self._failed = self.path(FAILED).open("a", encoding="utf-8")
        self._failed.write(jsonl_line({"index": outcome.index, "point": label, "error": outcome.error}))
        self._failed.flush()

    def ordered_rows(self) -> list[Row]:
        return [self.rows[i] for i in sorted(self.rows)]

    def ordered_failures(self) -> list[tuple[int, str, str]]:
        return [(i, *self.failures[i]) for i in sorted(self.failures)]

    def finish(self, report_html: str | None) -> None:
        """Close the streams and write the final files (rows in point order); no report when
        ``report_html`` is None (an interrupted run: stop now, the report comes with --resume)."""
        from gpunetsim.study import csv_text
        self.close()
        rows = self.ordered_rows()
        write_atomic(self.path(RESULTS), "".join(jsonl_line(r) for r in rows))
        if rows:
            write_atomic(self.path(CSV), csv_text(rows))
        if report_html is not None:
            write_atomic(self.path(REPORT), report_html)

    def close(self) -> None:
        for f in (self._results, self._failed):
            if f is not None:
                f.close()
        self._results = self._failed = None


def describe(point: Point) -> str:
    """A point in a few words: ``#12 ddp gpt2 on dgx-h100 x4``, ``#3 train llama-3-8b tp=2 pp=1 on dgx-h100 x1``
    (with its non-default axes)."""
    c = point.columns()
    what = f"{point.op} {point.size_bytes} B" if point.kind == "collective" else c["model"]
    if point.train:
        t = dict(point.train)
        what += f" tp={t['tp']} pp={t['pp']}" + (f" dp={t['dp']}" if t.get("dp") is not None else "")
    extra = [f"{k}={c[k]}" for k in ("gpus", "nic_bw", "nics", "bucket_cap_mb", "batch_size")
             if c.get(k) is not None and k in c]
    return f"#{point.index} {point.kind} {what} on {c['topology']} x{point.nodes}" + \
        (f" ({', '.join(extra)})" if extra else "")
