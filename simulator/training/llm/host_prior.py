"""A stated prior for the host's issue time of a transformer block, and the iteration's host-issue floor it gives.

The datasheet compute set (``ComputeParams`` defaults) has no host time: large models are GPU-bound, and a host
cost is a property of the framework and the CPU, not of the GPU's datasheet. Small models on fast GPUs are not:
the LLM runners' FSDP, TP and PP runs (eager PyTorch on H100 / H200 hosts) took a median 1.66x their datasheet
prediction (docs/accuracy.md section 7), so an interval built around that prediction lay wholly above it. The
host still has to launch every kernel of every pass, so with a host cost per block the iteration cannot be
shorter than the busiest stage's issue time, whatever the GPU does: the *host-issue floor*. ``gpunetsim train``
centres a datasheet prediction's interval on ``max(prediction, floor)`` (simulator.training.iteration_bands);
the prediction itself is unchanged.

The prior, :data:`HOST_PRIOR`: one block forward's issue time (the host's time to launch its kernels through
PyTorch eager, alone, while a sleep kernel holds the GPU), the median over every committed TP issue probe host
(``validation/data/*/tp_issue_world*.jsonl``, 7 hosts, 4x and 2x H100 / H200): 0.754 ms for the unsharded block
(0.57-0.94 ms over the hosts) and 1.087 ms for a TP-sharded one (its points with identity stand-ins: 0.66-1.14 ms);
``python -m validation.host_floor`` recomputes them and scores the interval held out. The backward and recomputed
passes take it per forward kernel (``LayerWork.host_ops``). Not in the floor: collective calls and FSDP's hooks (no
prior for them carries between hosts: docs/accuracy.md section 7). For comparison, the public vTrain runs
(Megatron-DeepSpeed, A100 hosts) fit 1.03 ms per block (``a100-megatron``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from simulator.core.errors import InputError
from simulator.training.llm.compute import ComputeParams


@dataclass(frozen=True)
class HostPrior:
    """Host issue times per block forward (seconds), unsharded and tensor-parallel, and where they come from."""

    block_s: float
    tp_block_s: float
    source: str

    def __post_init__(self) -> None:
        for name in ("block_s", "tp_block_s"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InputError("out of range [0, 1] s", field=f"host_prior.{name}", value=getattr(self, name))

    def on(self, params: ComputeParams) -> ComputeParams:
        """``params`` with this prior as its block issue times where the set has none (``host_block_s`` and
        ``host_tp_block_s`` 0): a compute set's own host times are kept."""
        if params.host_block_s > 0 or params.host_tp_block_s > 0:
            return params
        return replace(params, host_block_s=self.block_s, host_tp_block_s=self.tp_block_s)


HOST_PRIOR = HostPrior(7.54e-4, 1.087e-3, "median block forward issue (unsharded; TP-sharded) of the 7 committed TP issue "
                                "probe hosts (python -m validation.host_floor)")
"""The prior ``gpunetsim train`` floors datasheet intervals with (module docstring)."""
