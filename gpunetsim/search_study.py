"""Plan-search points of a study (``search:`` in a study file): the best plan per model and GPU count.

``gpunetsim plan``'s LLM section. A study's ``search`` block names models and GPU counts; each
(model, GPU count) is one point, crossed with the study's ``topology``, ``nic_bw`` and
``oversubscription`` (the other fabric axes keep their defaults: rail-optimized InfiniBand), and
its row is the fastest plan :func:`gpunetsim.search.search` finds in the block's space::

    search:
      model: [llama-3-8b, llama-3-70b]     # LLM zoo names, --model-spec strings or model files
      gpus: [8, 16, 32, 64]
      global_batch: 1024                   # sequences per iteration, the same at every size, or
      # batch_per_gpu: 2                   # sequences per GPU: the global batch grows with the GPUs
      micro_batches: [1, 2]
      recompute: [selective, full]
      sharding: [zero-1, fsdp-full]
      flash_attention: true

Each point's search simulates its candidates one at a time (``wave`` 1: the bound prunes the
most), so the points, not the plans, are what runs in parallel; a worker process keeps each
model's kernel times and each cluster's routes for the points it gets next. A point where no plan
fits in memory gives a row saying so (``fits`` false, no times), not a failure.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from simulator.core.config import Amount, Count, Switch, axis
from simulator.core.errors import InputError

if TYPE_CHECKING:
    from simulator.training.llm.plan_search import Cluster

SEARCH_AXES = ("model", "gpus")


class SearchAxes(BaseModel):
    """The ``search`` block of a study file: the models and GPU counts (axes), and one search space."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: list[str] = Field(min_length=1)
    gpus: list[Count] = Field(min_length=1)
    global_batch: Count | None = None
    batch_per_gpu: Count | None = None
    tokens: Amount = 1e12
    max_tp: Count = 8
    max_pp: Count = 64
    micro_batches: list[Count] = Field([1, 2, 4, 8], min_length=1)
    schedules: list[Literal["1f1b", "interleaved"]] = Field(["1f1b", "interleaved"], min_length=1)
    virtual_stages: Count = 2
    recompute: list[Literal["none", "selective", "full"]] = Field(["none", "selective", "full"], min_length=1)
    sharding: list[Literal["ddp", "zero-1", "zero-2", "zero-3", "fsdp-full", "fsdp-grad-op", "fsdp-hybrid"]] = \
        Field(["ddp", "zero-1", "fsdp-full"], min_length=1)
    flash_attention: Switch = False
    dtype: Literal["bf16", "fp16", "fp8"] = "bf16"

    @field_validator("model", "gpus", "micro_batches", "schedules", "recompute", "sharding", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return axis(v)

    @model_validator(mode="after")
    def _one_batch(self) -> "SearchAxes":
        if (self.global_batch is None) == (self.batch_per_gpu is None):
            raise ValueError("give global_batch (the same at every size) or batch_per_gpu (sequences per GPU)")
        return self

    def batch(self, gpus: int) -> int:
        """The global batch on ``gpus`` GPUs (sequences)."""
        return self.global_batch if self.global_batch is not None else self.batch_per_gpu * gpus  # type: ignore[operator]

    def space(self):
        from simulator.training.llm.search_space import SearchSpace
        return SearchSpace(self.max_tp, self.max_pp, tuple(self.micro_batches), tuple(self.schedules),
                           self.virtual_stages, tuple(self.recompute), tuple(self.sharding), True,
                           self.flash_attention, self.dtype)


def check_search(axes: SearchAxes, topologies: list[str], source: str) -> dict[tuple[str, int], Cluster]:
    """Every model resolves and every GPU count is whole servers of every topology, before anything runs.
    Returns the cluster of each (topology, GPU count), which the study's points carry."""
    from gpunetsim.train_study import check_model_list
    from simulator.training.llm.plan_search import make_cluster
    check_model_list(axes.model, source, "search.model")
    clusters = {}
    for t in topologies:
        for i, n in enumerate(axes.gpus):
            try:
                clusters[(t, n)] = make_cluster(t, n)
            except InputError as e:
                raise InputError(e.message, source=source, field=f"search.gpus[{i}]", value=n) from None
    return clusters


def search_settings(axes: SearchAxes) -> list[tuple[tuple[str, object], ...]]:
    """Every (model, GPU count), GPU counts innermost (one scaling curve per model is contiguous),
    as (field, value) pairs that carry the rest of the block too (lists as tuples): a point is
    evaluated from itself alone."""
    rest = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in axes.model_dump().items()
                 if k not in SEARCH_AXES)
    return [tuple(zip(SEARCH_AXES, combo)) + rest for combo in itertools.product(axes.model, axes.gpus)]


def _axes_of(settings: tuple[tuple[str, object], ...]) -> tuple[str, int, SearchAxes]:
    s = dict(settings)
    model, gpus = str(s.pop("model")), int(s.pop("gpus"))  # type: ignore[call-overload]
    return model, gpus, SearchAxes(model=[model], gpus=[gpus], **s)


@lru_cache(maxsize=8)
def _simulator(model: str, calibration: str | None, version: str | None = None):
    """One :class:`ClusterSimulator` per model, calibration and NCCL version (as the study names it) in this
    process: its routes, its communication floors and its kernel times are reused by the next points."""
    from simulator.core.vocabulary import nccl_version
    from gpunetsim.search import ClusterSimulator
    from gpunetsim.train_study import resolve_train_model
    from simulator.collectives.params import load_calibration
    from simulator.training.llm.compute import load_compute_params
    return ClusterSimulator(resolve_train_model(model), load_calibration(calibration),
                            load_compute_params(calibration), None if version is None else nccl_version(version))


def evaluate_search(point, row: dict[str, object]) -> dict[str, object]:
    """The row of one search point: its configuration columns, the search's counts, the best plan."""
    from gpunetsim.search import search
    from simulator.core.units import parse_bandwidth
    model, gpus, axes = _axes_of(point.search)
    sim = _simulator(model, point.calibration, point.nccl_version)
    nic = parse_bandwidth(point.nic_bw, field="nic_bw") if point.nic_bw else None
    cluster = replace(point.cluster, nic_Bps=nic, oversubscription=point.oversubscription)   # made by check_search
    out = search(sim.model, [cluster], axes.batch(gpus), tokens=axes.tokens, space=axes.space(), top=1,
                 params=sim.params, compute=sim.compute, wave=1, simulator=sim, nccl_version=sim.nccl_version)
    row.update(total_gpus=cluster.gpus, gpu=cluster.gpu, global_batch=axes.batch(gpus), plans=out.enumerated,
               plans_no_fit=out.no_fit, plans_pruned=out.pruned, plans_simulated=out.simulated)
    if not out.plans:
        row.update(fits=False, iteration_s=None, iteration_lo_s=None, iteration_hi_s=None, tokens_per_s=None, mfu=None,
                   limiter="memory")
        return row
    best = out.plans[0]
    d = best.as_dict()
    mem = d.pop("memory_bytes")
    for k in ("topology", "nodes", "gpus", "gpu", "cluster", "model", "price_per_gpu_h", "cost"):
        d.pop(k, None)
    row.update(d)
    row.update({f"memory_{k}_bytes": v for k, v in mem.items()})
    return row


def plan_label(r: Mapping) -> str:
    """``TPxPPxDP mbN schedule[/chunks] recompute sharding`` of a plan: a search row, or a training
    configuration's ``as_dict()`` (the one label of a plan in tables, reports and benchmarks)."""
    sched = str(r["schedule"]) + (f"/{r['virtual_stages']}" if int(r.get("virtual_stages") or 1) > 1 else "")
    return f"{r['tp']}x{r['pp']}x{r['dp']} mb{r['micro_batch']} {sched} {r['recompute']} {r['sharding']}"


def scaling(rows: list[dict]) -> dict[int, float]:
    """Per row index: tokens/s per GPU relative to the smallest GPU count of its model (and network)
    where a plan fits (strong scaling: the global batch is the same at every size)."""
    base: dict[tuple, float] = {}
    out: dict[int, float] = {}
    for i, r in sorted(enumerate(rows), key=lambda x: int(x[1]["total_gpus"])):
        if not r.get("fits"):
            continue
        key = (r["model"], r["topology"], r.get("nic_bw"), r.get("oversubscription"))
        per_gpu = float(r["tokens_per_s"]) / int(r["total_gpus"])
        out[i] = per_gpu / base.setdefault(key, per_gpu)
    return out


def print_search_table(rows: list[dict]) -> None:
    """The search rows as a table: per model and GPU count the best plan, its speed and scaling."""
    if not rows:
        return
    eff = scaling(rows)
    net = [c for c in ("topology", "nic_bw", "oversubscription") if len({str(r.get(c)) for r in rows}) > 1]
    names = [", ".join([str(r["model"])] + [str(r.get(c)) for c in net]) for r in rows]
    w = max(12, *(len(n) for n in names))
    batches = sorted({int(r["global_batch"]) for r in rows})
    per_gpu = {int(r["global_batch"]) / int(r["total_gpus"]) for r in rows}
    batch = (f"global batch {batches[0]}" if len(batches) == 1 else
             f"{next(iter(per_gpu)):g} sequence{'' if per_gpu == {1.0} else 's'} per GPU" if len(per_gpu) == 1 else "global batch " + "/".join(map(str, batches)))
    print(f"# LLM plans: the fastest of each model's plans per GPU count (gpunetsim search), {batch}; "
          f"scaling = tokens/s per GPU vs the smallest count that fits")
    print(f"#{'model':<{w - 1}} {'GPUs':>5} {'plan (TPxPPxDP, micro-batch, schedule, recompute, sharding)':<52} "
          f"{'iter(s)':>8} {'90% lo':>8} {'90% hi':>8} {'tokens/s':>10} {'MFU':>6} {'scaling':>7} {'simulated':>9}  limited by")
    for i, (name, r) in enumerate(zip(names, rows)):
        searched = f"{r['plans_simulated']}/{r['plans']}"
        if not r.get("fits"):
            print(f"{name:<{w}} {r['total_gpus']:>5} {'no plan fits in memory':<52} {'-':>8} {'-':>8} {'-':>8} {'-':>10} {'-':>6} "
                  f"{'-':>7} {searched:>9}  memory")
            continue
        print(f"{name:<{w}} {r['total_gpus']:>5} {plan_label(r):<52} {float(r['iteration_s']):>8.3f} "
              f"{interval_text(r.get('iteration_lo_s'), r.get('iteration_hi_s'))} {float(r['tokens_per_s']):>10.0f} {float(r['mfu']) * 100:>5.1f}% {eff[i] * 100:>6.1f}% "
              f"{searched:>9}  {r['limiter']}")


def interval_text(lo_s: float | None, hi_s: float | None) -> str:
    """The two columns (8 wide each) of an iteration's 90% interval in seconds, '-' without one, for the
    plan tables."""
    return " ".join(f"{'-':>8}" if x is None else f"{x:>8.3f}" for x in (lo_s, hi_s))
