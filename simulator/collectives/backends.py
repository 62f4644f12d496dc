"""torch.distributed's backends and which collective each runs on which device.

The support matrix is PyTorch's own table (``docs/source/distributed.rst``, "Backends", as of
PyTorch 2.3 and unchanged since): Gloo runs every collective on CPU tensors but only
``all_reduce`` and ``broadcast`` on CUDA tensors; MPI runs everything but ``reduce_scatter`` on
CPU tensors, and CUDA tensors only when the MPI library PyTorch was built against is CUDA-aware
(the table's "?"), which gpunetsim does not model; NCCL runs every collective on CUDA tensors and
none on CPU tensors. ``send_recv`` stands for the table's ``send``/``recv`` rows.

:func:`check_support` turns an unsupported combination into an :class:`InputError` that says
what would work instead.
"""

from __future__ import annotations

from simulator.core.errors import InputError
from simulator.core.vocabulary import OPS

BACKENDS: tuple[str, ...] = ("nccl", "gloo", "mpi")
"""torch.distributed's built-in backends."""
TENSOR_DEVICES: tuple[str, ...] = ("cpu", "cuda")
"""Where a collective's tensors live."""
HOST_BACKENDS: tuple[str, ...] = ("gloo", "mpi")
"""Backends whose collectives run on the host (timed by simulator.network.host_collectives)."""

_ALL = frozenset(OPS)
SUPPORT: dict[tuple[str, str], frozenset[str]] = {
    ("nccl", "cuda"): _ALL,
    ("nccl", "cpu"): frozenset(),
    ("gloo", "cpu"): _ALL,
    ("gloo", "cuda"): frozenset({"all_reduce", "broadcast"}),
    ("mpi", "cpu"): _ALL - {"reduce_scatter"},
    ("mpi", "cuda"): frozenset(),
}
"""(backend, tensor device) -> the collectives it runs, from PyTorch's table."""

ALGOS_FOR_HOST_OP: dict[str, tuple[str, ...]] = {
    "all_reduce": ("ring", "halving_doubling"),
    "reduce_scatter": ("ring",),
    "all_gather": ("ring",),
    "broadcast": ("tree",),
    "reduce": ("tree",),
    "all_to_all": ("direct",),
    "send_recv": ("direct",),
}
"""Algorithms the host backends run per collective (the first is Gloo's default)."""


def default_tensors(backend: str) -> str:
    """Where tensors live by default: CUDA for NCCL, CPU for the host backends."""
    return "cuda" if backend == "nccl" else "cpu"


def check_support(backend: str, tensors: str, op: str) -> None:
    """:class:`InputError` unless ``backend`` runs ``op`` on ``tensors`` (PyTorch's table)."""
    if backend not in BACKENDS:
        raise InputError(f"unknown backend (expected one of {', '.join(BACKENDS)})", field="backend",
                         value=backend)
    if tensors not in TENSOR_DEVICES:
        raise InputError("tensors must be cpu or cuda", field="tensors", value=tensors)
    if op in SUPPORT[(backend, tensors)]:
        return
    if backend == "mpi" and tensors == "cuda":
        why = ("MPI runs CUDA tensors only when PyTorch is built against a CUDA-aware MPI "
               "(PyTorch's table says '?'); gpunetsim models MPI on CPU tensors")
    elif backend == "nccl" and tensors == "cpu":
        why = "NCCL runs no collective on CPU tensors; use --backend gloo or mpi for CPU tensors"
    else:
        works = sorted(SUPPORT[(backend, tensors)])
        others = [f"{b} ({t})" for (b, t), ops in SUPPORT.items() if op in ops]
        why = (f"{backend} runs only {', '.join(works)} on {tensors} tensors; {op} runs with "
               f"{', '.join(others)}")
    raise InputError(f"{op} is not supported by {backend} on {tensors} tensors: {why}",
                     field="backend", value=f"{backend}/{tensors}/{op}")
