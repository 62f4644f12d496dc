"""Launching ``torchrun`` children with a wall-clock limit, for the sweep drivers, and the
children's side: their ``main``, joining the process group and leaving it.

A hung collective must not hang the sweep: each launch runs in its own process group and the
whole group is killed when the limit passes.

Test hook of every torchrun child (:func:`torchrun_entry_point`): ``GPUNETSIM_TEST_FAIL=1`` makes every rank
exit with status :data:`EXIT_TEST_FAIL` at start, before it joins the process group.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, TypeVar

from simulator.core.errors import InputError
from validation.check_cli import run_command

S = TypeVar("S")
EXIT_TEST_FAIL = 3
"""Exit status of a torchrun child stopped by a ``GPUNETSIM_TEST_FAIL`` test hook."""
log = logging.getLogger("validation.runners.launch")


@dataclass(frozen=True)
class LaunchResult:
    """How one launch ended: exit status (``None`` when killed for time) and the output tail."""

    returncode: int | None
    timed_out: bool
    output_tail: str
    wall_s: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def entry_point(parse: Callable[[Sequence[str] | None], S], run: Callable[[S], int],
                argv: Sequence[str] | None) -> int:
    """The runners' shared ``main``: log to stderr, parse settings, then run (bad input, in the settings or
    found while running, is one line on stderr and exit status 2, never a traceback: check_cli.run_command)."""
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")

    def work() -> int:
        settings = parse(argv)
        require_torch()
        return run(settings)
    return run_command(work)


class JoinSettings(Protocol):
    """What a torchrun child's settings say about joining the process group: ``--device``, ``--backend``
    (``auto``: CUDA when there is one; NCCL on CUDA, gloo on CPU) and the group's timeout."""

    @property
    def device(self) -> str: ...

    @property
    def backend(self) -> str: ...

    @property
    def timeout_s(self) -> float: ...


@dataclass(frozen=True)
class Member:
    """This torchrun child's place in the default process group it joined."""

    device: Any          # torch.device: this rank's GPU (``LOCAL_RANK``) or the CPU
    is_cuda: bool
    backend: str         # "nccl" or "gloo", as resolved from ``auto``
    rank: int
    world: int


def torchrun_entry_point(parse: Callable[[Sequence[str] | None], S], run: Callable[[S, Member], None],
                         argv: Sequence[str] | None, bind_device: bool = False,
                         joining: Callable[[S], JoinSettings] | None = None) -> int:
    """The ``main`` of a runner run under torchrun: :func:`entry_point` that, around the runner's own work, honours
    the start test hook, joins the default process group (:func:`join_process_group`, with the device, backend and
    timeout of ``joining(settings)``, by default the settings themselves), runs ``run(settings, member)``, then
    waits for every rank at a barrier and leaves the group. Exit status 0; bad input, parsed or met while running,
    is exit status 2 with no teardown (a rank that stopped early cannot meet the others at a barrier)."""
    def work(settings: S) -> int:
        if os.environ.get("GPUNETSIM_TEST_FAIL", "") == "1":
            log.error("GPUNETSIM_TEST_FAIL=1: exiting at start")
            os._exit(EXIT_TEST_FAIL)
        import torch.distributed as dist

        j: JoinSettings = joining(settings) if joining is not None else settings  # type: ignore[assignment]
        device, is_cuda, backend = join_process_group(j.device, j.backend, j.timeout_s, bind_device)
        run(settings, Member(device, is_cuda, backend, dist.get_rank(), dist.get_world_size()))
        dist.barrier()
        dist.destroy_process_group()
        return 0
    return entry_point(parse, work, argv)


def require_torch() -> None:
    """An InputError when PyTorch is not importable here: every runner (and the sweep drivers' torchrun children)
    needs it, and without it a runner died in a ModuleNotFoundError traceback, a sweep driver recorded failed
    launches and asked to be rerun. ``--help`` and option errors come first (checked after parsing)."""
    try:
        import torch  # noqa: F401 - the runners import it next anyway
    except ImportError:
        raise InputError("PyTorch is not installed in this Python environment; the runners need it: "
                         'pip install -e ".[torch]" (or your platform\'s CUDA build of torch)', field="torch",
                         value=sys.executable) from None


BACKENDS = ("auto", "nccl", "gloo")
DEVICES = ("auto", "cuda", "cpu")


def add_process_args(p: argparse.ArgumentParser) -> None:
    """``--backend`` and ``--device``, as every torchrun runner and sweep driver takes them (the children pass them
    to :func:`join_process_group`)."""
    p.add_argument("--backend", default="auto", choices=list(BACKENDS))
    p.add_argument("--device", default="auto", choices=list(DEVICES))


def check_least(**bounds: tuple[float, float]) -> None:
    """An InputError naming the first flag below its least value, with that value: ``check_least(reps=(a.reps, 1),
    warmup=(a.warmup, 0))`` (a runner's flags in the order given; ``_`` in a name is the flag's ``-``)."""
    for name, (value, least) in bounds.items():
        if value < least:
            raise InputError(f"must be at least {least:g}", field=name.replace("_", "-"), value=value)


def parse_sizes(text: str, field: str = "sizes") -> tuple[int, ...]:
    """Comma-separated positive sizes with units (``16M,64M``), in bytes."""
    from simulator.core.units import parse_size
    sizes = tuple(int(parse_size(x.strip(), field=field)) for x in text.split(",") if x.strip())
    if not sizes or min(sizes) <= 0:
        raise InputError("give positive sizes", field=field, value=text)
    return sizes


def parse_names(text: str, known: Sequence[str], field: str, what: str) -> tuple[str, ...]:
    """Comma-separated names, each checked against ``known`` (``what`` names one in the error)."""
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    for name in names:
        if name not in known:
            raise InputError(f"unknown {what}; choose from {', '.join(known)}", field=field, value=name)
    if not names:
        raise InputError(f"no {field} given", field=field, value=text)
    return names


def join_process_group(device: str, backend: str, timeout_s: float,
                       bind_device: bool = False) -> tuple[Any, bool, str]:
    """Inside a torchrun child: pick the device (``auto``: CUDA when there is one, this rank's
    ``LOCAL_RANK`` GPU) and backend (``auto``: NCCL on CUDA, gloo on CPU) and join the default
    process group; ``bind_device`` binds NCCL on CUDA to the device at once (``init_process_group(device_id=)``,
    as the collectives runner does). Returns ``(torch.device, is_cuda, backend)``."""
    import datetime

    import torch
    import torch.distributed as dist

    kind = device if device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    is_cuda = kind == "cuda"
    backend = backend if backend != "auto" else ("nccl" if is_cuda else "gloo")
    if is_cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dev = torch.device("cuda", torch.cuda.current_device())
    else:
        dev = torch.device("cpu")
    bound = {"device_id": dev} if bind_device and is_cuda and backend == "nccl" else {}
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s), **bound)
    return dev, is_cuda, backend


def torchrun_argv(nproc: int, module: str, args: list[str], nnodes: int = 1) -> list[str]:
    """``python -m torch.distributed.run`` for ``module`` on one node with ``nproc`` processes."""
    argv = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc}",
            f"--nnodes={nnodes}"]
    if nnodes == 1:
        argv += ["--standalone"]
    return argv + ["-m", module, *args]


def run_launch(argv: list[str], env: dict[str, str], timeout_s: float,
               tail_chars: int = 4000) -> LaunchResult:
    """Run ``argv`` with ``env`` added to this process's environment, killing it after ``timeout_s``."""
    import time

    full_env = dict(os.environ)
    full_env.update(env)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, _ = proc.communicate()
    wall_s = time.perf_counter() - start
    return LaunchResult(returncode=None if timed_out else proc.returncode, timed_out=timed_out,
                        output_tail=(out or "")[-tail_chars:], wall_s=wall_s)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM the launch's process group, then SIGKILL what is left after a grace period."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
