"""The plain data between a DDP iteration's model (:mod:`simulator.training.ddp`) and its
discrete-event executor (:mod:`simulator.training.ddp_engine`): the buckets' jobs on the
communication stream and the backward pass's timeline. Both engines (des and closed) read and
write these; only the des one imports SimPy.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.collectives.plans import Plan
from simulator.network.records import Record


@dataclass(frozen=True)
class CommJob:
    """One bucket's work on the communication stream.

    ``ready_work_s``: seconds of (unslowed) backward compute after which the bucket's last
    gradient is ready; ``prep_s``: seconds on the stream before the all-reduce (overhead, copy,
    cast); ``comm_bytes``: bytes all-reduced; ``plan``: the chosen all-reduce schedule;
    ``allreduce_s``: its closed-form time (used by the closed engine only).
    """

    index: int
    ready_work_s: float
    prep_s: float
    comm_bytes: int
    plan: Plan
    allreduce_s: float
    name: str


@dataclass(frozen=True)
class JobTimes:
    """When one bucket became ready, entered the stream, started its all-reduce and ended
    (seconds, same clock as the caller's ``t0``)."""

    ready_s: float
    start_s: float
    allreduce_start_s: float
    end_s: float


@dataclass(frozen=True)
class BackwardTimeline:
    """The synchronised backward pass: when compute ended and each job's times."""

    backward_end_s: float
    jobs: tuple[JobTimes, ...]
    records: tuple[Record, ...]
