"""gpunetsim: how long will one training iteration take on this cluster, and what limits it?

The application layer (CLI, studies, reports) and the public Python API::

    import gpunetsim
    gpunetsim.collective(topology="dgx-h100", op="all_reduce", size_bytes=2**30).busbw_GBps
    gpunetsim.ddp(topology="dgx-h100", nodes=2, workload="resnet50").iteration_s
    gpunetsim.train(topology="dgx-h100", nodes=2, model="llama-3-8b", tp=8, pp=2, global_batch=16).mfu
    gpunetsim.run_study("my_study.yaml").rows
    gpunetsim.cluster("shared-spine").jobs[0].slowdown
    gpunetsim.goodput(4096, mtbf_gpu="50000 h", checkpoint="1 min").optimum_s

The functions live in :mod:`gpunetsim.api` and are imported on first use, so that the command
line starts without loading the simulator.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["CollectiveResult", "DataParallelResult", "IterationResult", "StudyResult", "cluster", "collective", "ddp",
           "dataparallel", "goodput", "run_study", "topology", "train"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from gpunetsim import api
        return getattr(api, name)
    raise AttributeError(f"module 'gpunetsim' has no attribute {name!r}")
