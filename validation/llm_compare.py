"""Predicted vs measured LLM training iterations and memory (the public Selene and vTrain data).

Reads the ``llm_iteration`` / ``llm_memory`` records of ``validation/data/public/llm/*.jsonl``
(written by ``validation.data.convert_public_llm``), rebuilds each run's model, parallelism and
topology, and predicts it with :func:`simulator.training.llm.iteration.simulate_train`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simulator.collectives.params import Parameters
from simulator.core.errors import InputError
from simulator.training.gpus import get_gpu
from simulator.training.llm.compute import ComputeParams
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.memory import memory_per_gpu
from simulator.training.llm.model import TransformerSpec
from topologies.routing import Router, router_for
from validation.llm_records import spearman  # noqa: F401 - one rank correlation for all LLM data
from validation.runners.records import read_measurement_records
from simulator.core.units import GiB

LLM_DATA = Path(__file__).resolve().parent / "data" / "public" / "llm"


@dataclass(frozen=True)
class LlmRun:
    """One measured run: model, configuration, GPUs and the measured value(s)."""

    label: str
    model: TransformerSpec
    config: TrainConfig
    gpus_per_node: int
    iteration_s: float | None = None
    states_GiB: float | None = None          # parameters + gradients + optimizer, per GPU
    activations_GiB: float | None = None


def _run(rec: dict, source: str, line: int, gpus_per_node: int) -> LlmRun:
    try:
        m = dict(rec["model"])
        model = TransformerSpec(m.pop("name"), **m)
        config = TrainConfig(rec["tp"], rec["pp"], rec["dp"], rec["global_batch"], rec["micro_batch"],
                             rec["schedule"], rec["virtual_stages"], rec["recompute"], rec["sequence_parallel"],
                             rec.get("zero", 0), None, rec["dtype"])
    except KeyError as e:
        raise InputError("missing field", source=source, field=f"line {line}: {e.args[0]}") from None
    except InputError as e:
        raise InputError(e.message, source=source, field=f"line {line}: {e.field}", value=e.value) from None
    label = rec.get("label") or (f"{model.name} tp{config.tp} pp{config.pp} dp{config.dp} "
                                 f"mb{config.micro_batch} gb{config.global_batch}")
    return LlmRun(label, model, config, gpus_per_node, rec.get("iteration_s"),
                  rec.get("params_grads_optimizer_GiB"), rec.get("activations_GiB"))


def read_llm(path: str | Path) -> tuple[dict, list[LlmRun], list[LlmRun]]:
    """(meta, iteration runs, memory runs) of one dataset file."""
    src = str(path)
    meta: dict = {}
    its: list[LlmRun] = []
    mems: list[LlmRun] = []
    for i, rec in read_measurement_records(path):
        kind = rec.get("kind")
        if kind == "meta":
            meta = rec
        elif kind in ("llm_iteration", "llm_memory"):
            per_node = int((meta.get("topology") or {}).get("gpus_per_node", 8))
            (its if kind == "llm_iteration" else mems).append(_run(rec, src, i, per_node))
    return meta, its, mems


class LlmPredictor:
    """Predicts runs on DGX A100-like servers (the topology hint of both public datasets)."""

    def __init__(self, preset: str = "dgx-a100", gpu: str = "a100", params: Parameters | None = None,
                 compute: ComputeParams | None = None) -> None:
        self.preset, self.gpu = preset, get_gpu(gpu)
        self.params = params or Parameters()
        self.compute = compute or ComputeParams()
        self._routers: dict[tuple[int, int], Router] = {}

    def router(self, gpus: int, per_node: int) -> Router:
        import topologies
        nodes = max(1, math.ceil(gpus / per_node))
        key = (nodes, min(gpus, per_node))
        if key not in self._routers:
            self._routers[key] = router_for(topologies.prepare(self.preset, nodes=nodes, gpus_per_node=key[1]))
        return self._routers[key]

    def iteration_s(self, run: LlmRun) -> float:
        return float(self.result(run).iteration_s)

    def result(self, run: LlmRun, host_prior: object = None) -> object:
        """The run's ``TrainResult`` (its host-issue floor under ``host_prior``, default the shipped prior)."""
        from simulator.training.llm.iteration import simulate_train
        extra = {"host_prior": host_prior} if host_prior is not None else {}
        return simulate_train(self.router(run.config.gpus, run.gpus_per_node), run.model, run.config, self.gpu,
                              self.params, self.compute, record=False, **extra)

    def memory_GiB(self, run: LlmRun) -> tuple[float, float]:
        m = memory_per_gpu(run.model, run.config, self.gpu.memory_bytes)
        return (m.params + m.grads + m.optimizer) / GiB, m.activations / GiB


def errors_pct(pred: list[float], meas: list[float]) -> np.ndarray:
    return np.abs(np.asarray(pred) / np.asarray(meas) - 1) * 100

