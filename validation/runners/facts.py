"""Facts about the machine and the environment a measurement ran in.

They go into the results so numbers from different boxes, drivers and NCCL versions are never
mixed up silently: GPU model, driver, NCCL and torch versions, hostname, date and the
``nvidia-smi topo -m`` matrix when ``nvidia-smi`` is there.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import socket
import subprocess
import uuid
from typing import Any

ENV_PREFIXES = ("NCCL_", "TORCH_NCCL_", "TORCH_SYMM_MEM_", "NVSHMEM_", "CUDA_VISIBLE_DEVICES",
                "GPUNETSIM_", "OMP_NUM_THREADS", "PYTORCH_CUDA_ALLOC_CONF")
"""Environment variables recorded with every result: they change what NCCL does (and, the last, how PyTorch maps
the tensors it is given)."""


def run_env() -> dict[str, str]:
    """The NCCL_* (and related) environment variables set for this process, sorted by name."""
    return {k: os.environ[k] for k in sorted(os.environ) if k.startswith(ENV_PREFIXES)}


def new_launch_id() -> str:
    """A short id unique to one launch, so records of one torchrun can be grouped."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{uuid.uuid4().hex[:8]}"


def _command_output(argv: list[str], timeout_s: float = 20.0) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def machine_facts(with_topology: bool = True) -> dict[str, Any]:
    """Machine facts as a JSON-ready dict; fields that cannot be known are ``None``.

    ``with_topology`` adds the (long) ``nvidia-smi topo -m`` text as ``nvidia_smi_topo``; keep
    it for one ``meta`` record per launch rather than every point.
    """
    import torch

    facts: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "gpu": None,
        "gpu_count": 0,
        "driver_version": None,
        "nccl_version": None,
    }
    if torch.cuda.is_available():
        facts["gpu"] = torch.cuda.get_device_name(0)
        facts["gpu_count"] = torch.cuda.device_count()
        try:
            v = torch.cuda.nccl.version()
            facts["nccl_version"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
        except (AttributeError, RuntimeError):
            pass
        drv = _command_output(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
        if drv:
            facts["driver_version"] = drv.splitlines()[0].strip()
    if with_topology:
        facts["nvidia_smi_topo"] = _command_output(["nvidia-smi", "topo", "-m"])
    return facts


def short_facts(facts: dict[str, Any]) -> dict[str, Any]:
    """The facts worth repeating in every point record (no topology text)."""
    keys = ("hostname", "gpu", "driver_version", "nccl_version", "torch_version")
    return {k: facts.get(k) for k in keys}
