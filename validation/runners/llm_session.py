"""What the LLM runners (``fsdp``, ``tp``, ``pp``) share: arguments, one launch's session, points.

A *point* is one measured configuration, named by a label such as
``full_shard replicate=1 mb=1 hidden=2048,layers=8,...``. Its identity in a result file is
(``point``, ``world``, ``launch_index``): a launch skips points already recorded for its
launch index and those named by ``--exclude`` (the sweep excludes a point that crashed a
launch), so no point is ever recorded twice.

Every launch appends one ``kind:"meta"`` record; every point record carries the launch id and
index, the world size, the NCCL environment (:func:`validation.runners.facts.run_env`), the short
machine facts, ``backend``, ``device``, ``dtype``, ``iters`` and ``warmup``.

Test hooks: ``GPUNETSIM_TEST_FAIL=1`` makes every rank exit with status 3 at start (launch.torchrun_entry_point);
``GPUNETSIM_TEST_FAIL=point:<label>`` when it reaches that point.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, TypeVar

from validation.gpt_spec import GPTSpec, parse_specs
from validation.runners.launch import (EXIT_TEST_FAIL, Member, add_process_args, check_least,
                                       torchrun_entry_point)
from validation.runners.records import append_record, read_records

log = logging.getLogger("validation.runners.llm")

POINT_KINDS = ("llm_fsdp", "llm_tp", "llm_pp", "llm_profile")
"""Record kinds that are points (a failure record is ``llm_failed``)."""


@dataclass(frozen=True)
class CommonSettings:
    """Settings every LLM runner takes."""

    specs: tuple[GPTSpec, ...]
    micro_batch: int
    iters: int
    warmup: int
    out: str
    backend: str
    device: str
    launch_id: str | None
    launch_index: int
    seed: int
    timeout_s: float
    exclude: tuple[str, ...]


@dataclass(frozen=True)
class Point:
    """One configuration to measure: its label, ``what`` (``"profile"`` or the runner's own
    measurement), the model and the runner's option (strategy, sequence parallelism, ...)."""

    label: str
    what: str
    spec: GPTSpec
    option: Any = None


def profile_label(spec: GPTSpec, micro_batch: int, tp: int = 1, sp: bool = False) -> str:
    """The label of a layer-profile point; runners that profile the same thing share it."""
    if tp == 1:
        return f"profile tp=1 mb={micro_batch} {spec.text}"
    return f"profile tp={tp} sp={'on' if sp else 'off'} mb={micro_batch} {spec.text}"


def add_common_arguments(p: argparse.ArgumentParser, iters: int = 10, warmup: int = 3) -> None:
    p.add_argument("--specs", required=True, help="model specs separated by ';' (see gpt_spec)")
    p.add_argument("--micro-batch", type=int, default=1, help="sequences per micro-batch")
    p.add_argument("--iters", type=int, default=iters, help="timed iterations per point")
    p.add_argument("--warmup", type=int, default=warmup, help="untimed iterations first")
    p.add_argument("--out", required=True, help="JSONL file to append records to")
    add_process_args(p)
    p.add_argument("--launch-id", default=None, help="label grouping this launch's records")
    p.add_argument("--launch-index", type=int, default=0, help="repeat number (set by llm_sweep)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout-s", type=float, default=120.0, help="process-group timeout")
    p.add_argument("--exclude", action="append", default=[],
                   help="point label not to measure (repeatable; set by llm_sweep)")


def common_settings(a: argparse.Namespace) -> CommonSettings:
    check_least(iters=(a.iters, 1), warmup=(a.warmup, 0), launch_index=(a.launch_index, 0),
                micro_batch=(a.micro_batch, 1))
    return CommonSettings(tuple(parse_specs(a.specs)), a.micro_batch, a.iters, a.warmup, a.out, a.backend, a.device, a.launch_id,
                          a.launch_index, a.seed, a.timeout_s, tuple(a.exclude))


def done_points(records: Iterable[dict[str, Any]], world: int, launch_index: int) -> set[str]:
    """Labels of the points already recorded for ``world`` ranks and ``launch_index``."""
    return {str(r["point"]) for r in records
            if r.get("kind") in POINT_KINDS and int(r.get("world", -1)) == world
            and int(r.get("launch_index", -1)) == launch_index}


def missing_points(out: str, planned: Sequence[str], world: int, launch_index: int) -> list[str]:
    """Planned labels not yet in ``out`` for ``world`` and ``launch_index``, in plan order."""
    done = done_points(read_records(out), world, launch_index)
    return [p for p in planned if p not in done]


def summarize(times_s: Sequence[float], prefix: str = "") -> dict[str, Any]:
    """``iter_times_s`` and their ``median_s``, ``p10_s``, ``p90_s`` (keys get ``prefix``)."""
    from validation.runners.ddp import summarize as ddp_summarize

    return {f"{prefix}iter_times_s": list(times_s), **ddp_summarize(times_s, prefix)}


@dataclass
class Session:
    """One launch of an LLM runner on this rank (after ``init_process_group``)."""

    runner: str
    settings: CommonSettings
    rank: int
    world: int
    device: Any
    is_cuda: bool
    backend: str
    dtype: Any
    launch_id: str
    base: dict[str, Any]
    done: set[str] = field(default_factory=set)
    build_peak_bytes: int = 0          # this rank's peak before :meth:`steps_memory_start` (CUDA)
    resident_bytes: int = 0            # this rank's allocated memory when the timed steps began

    @property
    def dtype_name(self) -> str:
        return str(self.dtype).removeprefix("torch.")

    def points_to_run(self, points: Sequence[Point]) -> Iterator[Point]:
        """The points not recorded yet for this launch index and not excluded, each entered
        (:meth:`enter_point`) as it comes."""
        todo = [p for p in points if p.label not in self.done
                and p.label not in self.settings.exclude]
        for p in todo:
            if p.label not in self.done:  # another point of this launch may have recorded it
                self.enter_point(p.label)
                yield p

    def enter_point(self, point: str) -> None:
        """Log the point, honour the failure test hook, reset peak-memory statistics."""
        import torch

        if os.environ.get("GPUNETSIM_TEST_FAIL", "") == f"point:{point}":
            log.error("GPUNETSIM_TEST_FAIL: exiting at point %s", point)
            os._exit(EXIT_TEST_FAIL)
        if self.rank == 0:
            log.info("%s: %s", self.runner, point)
        if self.is_cuda:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        self.build_peak_bytes = self.resident_bytes = 0

    def steps_memory_start(self) -> None:
        """Mark the end of building the model (created in fp32 and cast, wrapped, flattened, ...): what is
        allocated now is resident through the steps, and the peak from here on is the steps' own
        (:meth:`steps_memory_fields`); :meth:`peak_memory_bytes` still covers the whole point."""
        import torch

        if self.is_cuda:
            torch.cuda.synchronize()
            self.build_peak_bytes = int(torch.cuda.max_memory_allocated())
            self.resident_bytes = int(torch.cuda.memory_allocated())
            torch.cuda.reset_peak_memory_stats()

    def steps_memory_fields(self, prefix: str = "") -> dict[str, int | None]:
        """``resident_memory_bytes`` (allocated when the timed steps began) and ``step_peak_memory_bytes``
        (the peak of allocated memory during warm-up and timed steps), MAX over ranks; None off CUDA."""
        import torch

        if not self.is_cuda:
            return {f"{prefix}resident_memory_bytes": None, f"{prefix}step_peak_memory_bytes": None}
        resident, peak = self.max_over_ranks([float(self.resident_bytes), float(torch.cuda.max_memory_allocated())])
        return {f"{prefix}resident_memory_bytes": int(resident), f"{prefix}step_peak_memory_bytes": int(peak)}

    def max_over_ranks(self, values: Sequence[float]) -> list[float]:
        """Element-wise MAX over ranks (every rank passes a list of the same length)."""
        import torch
        import torch.distributed as dist

        t = torch.tensor(list(values), dtype=torch.float64, device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return [float(x) for x in t.cpu().tolist()]

    def gather(self, value: Any) -> list[Any]:
        """``value`` of every rank, in rank order (on every rank)."""
        import torch.distributed as dist

        out: list[Any] = [None] * self.world
        dist.all_gather_object(out, value)
        return out

    def time_steps(self, step: Callable[[], None], iters: int | None = None,
                   warmup: int | None = None) -> list[float]:
        """Seconds of each timed call of ``step`` after the warm-up ones, MAX over ranks."""
        from validation.runners.ddp import time_iterations

        time_iterations(step, self.settings.warmup if warmup is None else warmup, self.is_cuda)
        times = time_iterations(step, self.settings.iters if iters is None else iters,
                                self.is_cuda)
        return self.max_over_ranks(times)

    def peak_memory_bytes(self) -> int | None:
        """Largest peak of allocated GPU memory over ranks since :meth:`enter_point` (CUDA): the whole point,
        building the model included."""
        import torch

        if not self.is_cuda:
            return None
        mine = max(self.build_peak_bytes, int(torch.cuda.max_memory_allocated()))
        return int(self.max_over_ranks([float(mine)])[0])

    def record(self, kind: str, point: str, fields: dict[str, Any]) -> None:
        """Rank 0 appends the point's record (base fields first)."""
        if self.rank == 0:
            if "median_s" in fields:
                log.info("%s: median %.3f ms", point, fields["median_s"] * 1e3)
            append_record(self.settings.out, {"kind": kind, "runner": self.runner, "point": point,
                                              **self.base, **fields})
        self.done.add(point)


def start_session(runner: str, s: CommonSettings, me: Member) -> Session:
    """This rank's session in the process group it joined: share the launch id and the points
    already done, and (rank 0) append the launch's ``meta`` record."""
    import torch
    import torch.distributed as dist

    from validation.runners.facts import machine_facts, new_launch_id, run_env, short_facts

    device, is_cuda, backend, rank, world = me.device, me.is_cuda, me.backend, me.rank, me.world
    shared: list[Any] = [None, None]
    if rank == 0:
        shared = [s.launch_id or new_launch_id(),
                  sorted(done_points(read_records(s.out), world, s.launch_index))]
    dist.broadcast_object_list(shared, src=0, device=device)
    launch_id, done = shared
    dtype = torch.bfloat16 if is_cuda else torch.float32
    facts = machine_facts(with_topology=rank == 0)
    base = {"world": world, "launch_id": launch_id, "launch_index": s.launch_index,
            "backend": backend, "device": device.type, "dtype": str(dtype).removeprefix("torch."),
            "iters": s.iters, "warmup": s.warmup, "env": run_env(), **short_facts(facts)}
    if rank == 0:
        append_record(s.out, {"kind": "meta", "runner": runner, **base, **facts,
                              "argv": sys.argv, "specs": [x.text for x in s.specs],
                              "micro_batch": s.micro_batch})
    torch.manual_seed(s.seed)
    return Session(runner, s, rank, world, device, is_cuda, backend, dtype, launch_id, base,
                   set(done))


class LlmSettings(Protocol):
    """An LLM runner's settings: its own, beside the :class:`CommonSettings`."""

    @property
    def common(self) -> CommonSettings: ...


L = TypeVar("L", bound=LlmSettings)


def session_entry_point(runner: str, parse: Callable[[Sequence[str] | None], L],
                        run: Callable[[L, Session], None], argv: Sequence[str] | None) -> int:
    """The ``main`` of the LLM runner ``runner``: launch.torchrun_entry_point (start hook, process group, barrier
    and teardown), with the launch's :class:`Session` (:func:`start_session`) for the runner's own work."""
    def with_session(s: L, me: Member) -> None:
        run(s, start_session(runner, s.common, me))
    return torchrun_entry_point(parse, with_session, argv, joining=lambda s: s.common)
