"""The prediction intervals of the host-based backends (Gloo, MPI): residual spread per backend.

The NCCL model's intervals (simulator.collectives.uncertainty, simulator.network.intervals) come from the
parameters' covariance and the residuals of the collective fit. The Gloo and MPI models
(simulator.network.host_collectives) are fitted apart, on their own records (validation.host_calibrate), so
their spread is their own: a calibration file may carry a ``host_uncertainty`` block, one residual-only
uncertainty block (the format of simulator.collectives.uncertainty with no ``keys``) per backend::

    "host_uncertainty": {"gloo": {"level": 0.9, "residual": {"latency": [lo, mid, hi],
                                                             "bandwidth": [lo, mid, hi],
                                                             "by_size": {"edges_bytes": [...], "q": [[...], ...]}},
                                  "domain": {"worlds": [2], "ops": ["all_reduce"], "min_bytes": 4096, ...},
                                  "source": "what the residuals are"}}

``residual`` holds quantiles of log(measured / predicted) of points the parameters were not fitted on
where the calibration has them (``h200-dataparallel``: the Gloo fit on 2 processes predicting 3, 4 and 8
processes and the other machines), else the fit's own residuals widened by sqrt(n / (n - k)) for n
points and k fitted keys (``python -m validation.host_calibrate``). A prediction's interval is its time
times exp of those quantiles (its size band's when the block has bands, else mixed by the share of the
time that is latency: per-call and per-step costs against wire, reduction and staging).

A backend the calibration has no block for takes the datasheet's (``calibrations/uncertainty/host.json``,
written by ``python -m validation.accuracy --only dp --calibrations``): for Gloo the residuals of the
datasheet defaults against every committed Gloo measurement; for MPI, never measured (PyTorch's wheels
carry no MPI backend), a broad prior that says so (``measured: false``): a factor 4.5 either way where
latency sets the time, 1.65 where bandwidth does.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from simulator.collectives.backends import HOST_BACKENDS
from simulator.collectives.uncertainty import Uncertainty, check_block
from simulator.core.errors import InputError
from simulator.core.values import kind_of

HOST_FILE = Path(__file__).resolve().parent / "calibrations" / "uncertainty" / "host.json"
MPI_PRIOR = {"level": 0.9, "residual": {"latency": [-1.5, 0.0, 1.5], "bandwidth": [-0.5, 0.0, 0.5]},
             "domain": {}, "measured": False,
             "source": "no MPI measurement (PyTorch's wheels carry no MPI backend): a broad prior, not a measured spread"}
"""MPI's datasheet block when the shipped file lacks one (it never has measured data behind it)."""


def check_host_block(block: object, source: str | None = None) -> Mapping:
    """A calibration's ``host_uncertainty`` block, checked: one residual-only uncertainty block per host
    backend (InputError naming the field)."""
    if not isinstance(block, Mapping):
        raise InputError(f"must be a JSON object {{backend: uncertainty block}}, not {kind_of(block)}",
                         source=source, field="host_uncertainty")
    for backend, b in block.items():
        if backend not in HOST_BACKENDS:
            raise InputError(f"host backends are {', '.join(HOST_BACKENDS)}", source=source,
                             field="host_uncertainty", value=backend)
        try:
            check_block(b, source)
        except InputError as e:
            raise InputError(e.message, source=source, value=e.value,
                             field=f"host_uncertainty.{backend}" + str(e.field).removeprefix("uncertainty")) from None
        if b.get("keys"):
            raise InputError("a host backend's block holds residuals only (no parameter keys)", source=source,
                             field=f"host_uncertainty.{backend}.keys", value=b.get("keys"))
    return block


@lru_cache(maxsize=1)
def datasheet_blocks() -> Mapping:
    """The datasheet's block per host backend (the shipped file's, MPI's prior where it has none)."""
    blocks = dict(check_host_block(json.loads(HOST_FILE.read_text()), str(HOST_FILE))) if HOST_FILE.exists() else {}
    blocks.setdefault("mpi", MPI_PRIOR)
    return blocks


def block_for(params, backend: str) -> Mapping | None:
    """The uncertainty block of ``backend`` predictions with ``params``: the calibration's own, else the
    datasheet's (None: no block at all, e.g. Gloo before the shipped file exists)."""
    own = getattr(params, "host_uncertainty", None) or {}
    return own.get(backend) or datasheet_blocks().get(backend)


def of(params, backend: str) -> Uncertainty | None:
    """:func:`block_for` as an :class:`~simulator.collectives.uncertainty.Uncertainty`."""
    block = block_for(params, backend)
    return Uncertainty.from_block(block) if block is not None else None
