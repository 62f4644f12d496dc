"""Chrome / Perfetto trace files from simulation records.

The JSON trace-event format (``{"traceEvents": [...]}``) opens in ``chrome://tracing`` and
https://ui.perfetto.dev, next to a PyTorch profiler (Kineto) trace of the real run. Each record
becomes a complete event (``"ph": "X"``, timestamps and durations in microseconds); each track
(``compute``, ``comm``, ...) is a thread of one process, named by metadata events. The
simulated ranks are symmetric, so one process stands for every rank unless the caller groups
records by rank. An event's ``args.bytes`` is what one rank's calls move (a collective's nccl-tests size,
summed over the calls the event holds; a send's bytes), as a profiler trace of one rank shows it; ``groups``
(when above 1) says how many process groups ran the same calls at once (the data-parallel groups of every TP
rank, HYBRID_SHARD's replicas), each moving that many bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from simulator.core.outputs import write_atomic
from simulator.network.records import Record

#: Preferred order of the tracks (threads); others follow in order of first appearance.
TRACK_ORDER = ("compute", "comm", "net")


def chrome_trace(records: Sequence[Record] | Mapping[str, Sequence[Record]],
                 metadata: Mapping[str, object] | None = None,
                 process_name: str = "rank 0") -> dict:
    """The trace as a JSON-ready dict. ``records`` is one sequence (one process called
    ``process_name``) or a mapping from process names (e.g. ``"rank 3"``) to sequences."""
    groups = dict(records) if isinstance(records, Mapping) else {process_name: records}
    events: list[dict] = []
    for pid, (pname, recs) in enumerate(groups.items()):
        # metadata events carry ts 0 too: the format lists ts among every event's fields, and strict readers
        # (trace validators, pandas-based analysers) drop or reject events without it
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0, "args": {"name": pname}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "ts": 0,
                       "args": {"sort_index": pid}})
        tracks = _tracks(recs)
        for track, tid in tracks.items():
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0, "args": {"name": track}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "ts": 0,
                           "args": {"sort_index": tid}})
        for r in recs:
            ev = {"ph": "X", "name": r.name, "cat": r.track, "pid": pid, "tid": tracks[r.track],
                  "ts": r.start_s * 1e6, "dur": max(0.0, r.end_s - r.start_s) * 1e6}
            if r.size_bytes:
                ev["args"] = {"bytes": round(r.size_bytes), **({"groups": r.groups} if r.groups > 1 else {})}
            events.append(ev)
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": dict(metadata or {})}


def _tracks(records: Iterable[Record]) -> dict[str, int]:
    names = list(dict.fromkeys(r.track for r in records))
    ordered = [t for t in TRACK_ORDER if t in names] + [t for t in names if t not in TRACK_ORDER]
    return {t: i + 1 for i, t in enumerate(ordered)}


def write_chrome_trace(records: Sequence[Record] | Mapping[str, Sequence[Record]], path: str | Path,
                       metadata: Mapping[str, object] | None = None, process_name: str = "rank 0") -> None:
    """Write :func:`chrome_trace` to ``path`` (JSON, one event per line)."""
    trace = chrome_trace(records, metadata, process_name)
    events = ",\n".join(json.dumps(e) for e in trace.pop("traceEvents"))
    rest = json.dumps(trace)[1:-1]
    write_atomic(path, f'{{"traceEvents": [\n{events}\n],\n{rest}}}\n', field="--trace")
