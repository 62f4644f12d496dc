"""Records of simulated activity: the plain data the engines return and timelines, traces and
reports read (a module of its own, so that their readers need not import SimPy)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Record:
    """One interval of simulated activity, for timelines and traces."""

    track: str         # e.g. "comm", "compute", "net"
    name: str
    start_s: float
    end_s: float
    size_bytes: float = 0.0   # what one rank's calls move (a collective's nccl-tests size, a send's bytes)
    groups: int = 1           # process groups running the same calls at once (e.g. one per TP rank)
