"""DataParallel vs DDP: read the DataParallel runner's records, predict them, compare.

The runner (:mod:`validation.runners.dataparallel`) writes per launch and model a single-GPU
profile (``dp_profile``), DataParallel iteration times on 1..N GPUs (``dp``) and DDP on N GPUs
(``ddp``). Here, per model:

* the *profile* is the median over launches of each timed field (forward, backward, optimizer,
  host launch times; gradient ready times and byte counts from the first launch): a workload;
* the *measured* DataParallel and DDP iterations are the median over launches of each launch's
  median iteration, with the launches' range (DataParallel varies by 20% and more between launches);
  DDP's per launch over its steady iterations only (:func:`validation.ddp_logger.steady_median_s`:
  DDP's runtime-stats sampling holds the host back on its first 10 synchronised iterations);
* the *predictions* come from that profile alone plus a collective calibration: DataParallel
  with :func:`simulator.training.dataparallel.simulate_dataparallel`, DDP with
  :func:`simulator.training.ddp.simulate_iteration` (closed form).

:func:`fit_host` fits the DataParallel host parameters (``dp.*``) to some models' measured
iterations, so that a model left out is still a prediction (leave-one-model-out).
"""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass, field
from types import MappingProxyType
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from simulator.collectives.params import DEFAULTS, Parameters
from simulator.core.errors import InputError
from simulator.training.workload import HOST_TIMES, Workload, workload_from_dict
from validation.ddp_logger import steady_median_s
from validation.runners.records import read_measurement_records

TIMED = ("forward_s", "backward_s", "optimizer_s", *HOST_TIMES,
         "forward_fresh_thread_host_s", "forward_warm_thread_host_s", "forward_fresh_pair_host_s",
         "forward_warm_pair_host_s")
HOST_KEYS = ("dp.replicate_s_per_module", "dp.replicate_s_per_tensor", "dp.lock_handoff_s", "dp.nccl_device_s",
             "dp.copy_host_s", "dp.step_overhead_s")
"""The DataParallel parameters :func:`fit_host` moves (Python costs a profile cannot see), each
seen in its own step of the runner's breakdown (:data:`FIT_PHASES`); every per-model input
(launch times, operators, fresh-thread cost and its queued share) comes from the single-GPU
profile. ``dp.cold_lock_share`` joins them only when a model has no two-thread diagnostic."""

FIT_PHASES = {"replicate": ("replicate",), "parallel_apply": ("forward",), "backward": ("backward", "reduce"),
              "scatter+gather+loss": ("scatter", "gather")}
"""Measured breakdown steps (``phase_s``; ``+`` joins several) -> the predicted phases they hold.
Each predicted step takes the longer of its host and GPU time (the breakdown synchronises after
every step), except the bookkeeping steps (scatter, gather, loss), measured and predicted as host
time (``dp.copy_host_s``, ``dp.step_overhead_s``): their GPU copies are timed by the topology, not fitted."""
HOST_ONLY = ("scatter+gather+loss",)

DIAGNOSTICS = ("forward_fresh_thread_host_s", "forward_warm_thread_host_s", "forward_ops")
"""The single-GPU thread diagnostics of a profile (``gpu_campaign.sh dpdiag``)."""
PAIR_DIAGNOSTICS = ("forward_fresh_pair_host_s", "forward_warm_pair_host_s")
"""Two threads launching at once on one GPU (``gpu_campaign.sh dppair``): the cold cost's queued share."""
PACE_KEY = "forward_host_s"
"""Borrowed thread diagnostics are host times: scaled by the borrower's own value of this over the donor's."""
BACKWARD_PARTS = ("replica_backward_host_s", "replica_backward_s", "reduce_host_s", "reduce_s")
"""The runner's backward split on 2..N GPUs (``backward_breakdown``): the replicas' backward alone
(leaf parameters, no reduce) and the gradient reduce onto GPU 0 alone."""

FIT_START = {"dp.lock_handoff_s": 40e-6}

#: Topology preset for a GPU name in the records (first matching word).
GPU_TOPOLOGY = (("h200", "hgx-h200"), ("h100", "dgx-h100"), ("a100", "dgx-a100"), ("b200", "hgx-b200"))


@dataclass(frozen=True)
class DPModelData:
    """One model's measurements over launches (seconds)."""

    model: str
    gpu: str
    profile: Workload
    dp_s: dict[int, tuple[float, ...]]     # GPUs -> each launch's median DataParallel iteration
    ddp_s: dict[int, tuple[float, ...]]    # ranks -> each launch's median DDP iteration
    phases: dict[int, dict[str, float]]    # GPUs -> median over launches of each breakdown phase (synced)
    phases_host: dict[int, dict[str, float]]   # the same, host time until each step's call returned
    persistent_host: dict[int, float] | None = None   # GPUs -> median host time of the replicas' forwards
                                                      # on persistent threads (runs that measured it)
    source: str = ""                                  # the dataset it was read from
    diagnostics_from: str = ""                        # where borrowed thread diagnostics came from
    borrowed: tuple[str, ...] = ()                    # the profile keys borrowed
    backward_parts: dict[int, dict[str, float]] | None = None   # GPUs -> medians of the runner's backward
                                                      # split (replica_backward_host_s, reduce_host_s, ...)
    ratio_s: dict[int, tuple[float, ...]] | None = None   # ranks -> each launch's DataParallel over DDP
                                                      # (both measured in the same launch)
    ddp_all_s: dict[int, tuple[float, ...]] | None = None   # ranks -> each launch's median over *all* its
                                                      # timed DDP iterations, held-back ones included
    predictions: dict[tuple, object] = field(default_factory=dict, init=False, repr=False, compare=False)
    """This data's DataParallel predictions by (GPUs, parameter names, parameter values) (:func:`predict_dp`): the
    leave-one-out host fits of docs/accuracy.md section 6 try the same parameter sets on the same runs over and over
    (about three predictions in four repeat one made before); a copy (``dataclasses.replace``) starts empty."""

    @property
    def has_diagnostics(self) -> bool:
        return all(k in dict(self.profile.extras) for k in DIAGNOSTICS)

    def dp_median(self, gpus: int) -> float:
        return statistics.median(self.dp_s[gpus])

    def ddp_median(self, gpus: int) -> float:
        return statistics.median(self.ddp_s[gpus])

    def spread_pct(self, gpus: int) -> float:
        return launch_range_pct(self.dp_s[gpus])

    def ddp_spread_pct(self, gpus: int) -> float:
        return launch_range_pct(self.ddp_s[gpus])

    def ratio_spread_pct(self, gpus: int) -> float:
        """Launch range of the measured DataParallel-over-DDP ratio (each launch's own pair)."""
        return launch_range_pct((self.ratio_s or {}).get(gpus, ()))


def launch_range_pct(values: Sequence[float]) -> float:
    """(largest - smallest) / median of per-launch values, %; nan without values."""
    return 100.0 * (max(values) - min(values)) / statistics.median(values) if values else float("nan")


def _records(paths: Iterable[str | Path]) -> list[dict]:
    return [r for path in paths for _, r in read_measurement_records(path)]


def read_dp(paths: Iterable[str | Path]) -> list[DPModelData]:
    """Per model: the median profile and the measured iterations of every launch."""
    paths_l = list(paths)
    recs = _records(paths_l)
    models = sorted({r["model"] for r in recs if r.get("kind") == "dp_profile"})
    out = []
    for m in models:
        profs = [r for r in recs if r.get("kind") == "dp_profile" and r["model"] == m]
        # Ready times and byte counts from the launch with the median backward (its ready times
        # then sit inside the median backward); timed fields are medians over launches.
        by_bwd = sorted(profs, key=lambda r: float(r["profile"]["backward_s"]))
        base = dict(by_bwd[(len(by_bwd) - 1) // 2]["profile"])
        for k in TIMED:
            vals = [float(r["profile"][k]) for r in profs if k in r["profile"]]
            if vals:
                base[k] = statistics.median(vals)
        base["name"] = f"{m}-bs{base.get('batch_size')}"
        w = workload_from_dict(base, source=f"dp_profile {m}")
        dp: dict[int, list[float]] = {}
        ph: dict[int, list[dict[str, float]]] = {}
        ph_host: dict[int, list[dict[str, float]]] = {}
        persistent: dict[int, list[float]] = {}
        parts: dict[int, list[dict[str, float]]] = {}
        by_launch: dict[tuple[int, str], float] = {}   # a launch's own DataParallel time, for its DDP pair
        for r in recs:
            if r.get("kind") == "dp" and r["model"] == m:
                dp.setdefault(int(r["gpus"]), []).append(float(r["median_s"]))
                if r.get("launch_id") is not None:
                    by_launch[(int(r["gpus"]), str(r["launch_id"]))] = float(r["median_s"])
                if all(k in r for k in BACKWARD_PARTS):
                    parts.setdefault(int(r["gpus"]), []).append({k: r[k] for k in BACKWARD_PARTS})
                if "persistent_apply_host_s" in r:
                    persistent.setdefault(int(r["gpus"]), []).append(float(r["persistent_apply_host_s"]))
                if "phase_s" in r:
                    ph.setdefault(int(r["gpus"]), []).append(r["phase_s"])
                    ph_host.setdefault(int(r["gpus"]), []).append(r["phase_host_s"])
        ddp: dict[int, list[float]] = {}
        ddp_all: dict[int, list[float]] = {}
        ratio: dict[int, list[float]] = {}
        for r in recs:
            if r.get("kind") == "ddp" and r["model"] == m and float(r.get("bucket_cap_mb", 25)) == 25.0:
                ddp_here = steady_median_s(r)
                ddp.setdefault(int(r["world"]), []).append(ddp_here)
                ddp_all.setdefault(int(r["world"]), []).append(float(r["median_s"]))
                dp_same = (by_launch.get((int(r["world"]), str(r["launch_id"])))
                           if r.get("launch_id") is not None else None)   # no launch id: no pair, never another launch's
                if dp_same is not None:
                    ratio.setdefault(int(r["world"]), []).append(dp_same / ddp_here)
        def med(groups: dict[int, list[dict[str, float]]]) -> dict[int, dict[str, float]]:
            return {g: {k: statistics.median(float(x[k]) for x in v) for k in v[0]} for g, v in groups.items()}
        out.append(DPModelData(m, str(profs[0].get("gpu") or ""), w, {g: tuple(v) for g, v in dp.items()},
                               {g: tuple(v) for g, v in ddp.items()}, med(ph), med(ph_host),
                               {g: statistics.median(v) for g, v in persistent.items()} or None,
                               Path(str(paths_l[0])).parent.name if paths_l else "", backward_parts=med(parts) or None,
                               ratio_s={g: tuple(v) for g, v in ratio.items()} or None,
                               ddp_all_s={g: tuple(v) for g, v in ddp_all.items()} or None))
    return out


def _one_gpu_host(d: DPModelData) -> bool:
    """Whether ``d`` was measured on a one-GPU machine (no DataParallel run on more GPUs)."""
    return max(d.dp_s, default=1) <= 1


def borrow_diagnostics(data: Sequence[DPModelData], donors: Sequence[DPModelData]) -> list[DPModelData]:
    """``data`` with the single-GPU thread diagnostics a profile lacks (campaigns measured before
    the runner recorded them) taken from ``donors`` of the same model and batch size, the nearest
    machines first (the diagnostics are host times): donors on the same GPU model, then those from a
    multi-GPU server for a multi-GPU campaign (the lent one-GPU machines have a quarter of the CPU
    cores). Within the nearest rank that has them, every donor counts (each diagnostic is noisy per
    host: the two-thread share of one model moved by 0.4 between two hosts of one kind): the
    fresh/warm triple is the median over those donors, key by key; the two-thread pair is lent as
    the median of the donors' queued *shares* (each donor's fresh-minus-warm pair over its own
    fresh-thread cost, minus one), applied to the borrower's own fresh-thread cost, so that the share
    is the donors' whatever the hosts' speeds."""
    from dataclasses import replace
    out = []
    for d in data:
        ex = dict(d.profile.extras)
        sources, keys_in = [], []

        def rank(o: DPModelData) -> tuple[bool, bool]:
            return o.gpu != d.gpu, _one_gpu_host(o) and not _one_gpu_host(d)
        same = [o for o in donors if o.model == d.model and o.profile.batch_size == d.profile.batch_size]

        def pace(dx: dict) -> float:
            """The borrower's host pace over the donor's: its own forward launch time over the donor's (a warm
            thread's forward launch is that same host work), so host times move to the borrower's host."""
            own, theirs = ex.get(PACE_KEY), dx.get(PACE_KEY)
            return float(own) / float(theirs) if own and theirs else 1.0
        for keys in (DIAGNOSTICS, PAIR_DIAGNOSTICS):
            if all(k in ex for k in keys):
                continue
            having = [o for o in same if all(k in dict(o.profile.extras) for k in keys)]
            if not having:
                continue
            best = min(rank(o) for o in having)
            tier = [o for o in having if rank(o) == best]
            dxs = [dict(o.profile.extras) for o in tier]
            got = {k: statistics.median(float(dx[k]) * (1.0 if k == "forward_ops" else pace(dx)) for dx in dxs)
                   for k in keys}
            if keys == DIAGNOSTICS:
                got["forward_ops"] = int(round(got["forward_ops"]))
            elif all(k in ex for k in DIAGNOSTICS[:2]):
                shares = [share for dx in dxs if (share := pair_share(dx)) is not None]
                if shares:
                    cold_here = max(0.0, float(ex[DIAGNOSTICS[0]]) - float(ex[DIAGNOSTICS[1]]))
                    got[PAIR_DIAGNOSTICS[0]] = got[PAIR_DIAGNOSTICS[1]] + cold_here * (1.0 + statistics.median(shares))
            ex |= got
            sources += [o.source for o in tier]
            keys_in += keys
        if sources:
            d = replace(d, profile=replace(d.profile, extras=tuple(ex.items())),
                        diagnostics_from=", ".join(dict.fromkeys(sources)), borrowed=tuple(keys_in))
        out.append(d)
    return out


def pair_share(ex: dict) -> float | None:
    """A profile's queued share of the fresh-thread cost from its two-thread pair: (fresh pair -
    warm pair) / (fresh - warm) - 1, clipped to 0-1 as the simulator uses it
    (:class:`~simulator.training.dataparallel.DPFacts`); None without a positive fresh-thread cost."""
    if not all(k in ex for k in DIAGNOSTICS[:2] + PAIR_DIAGNOSTICS):
        return None
    cold = float(ex[DIAGNOSTICS[0]]) - float(ex[DIAGNOSTICS[1]])
    if cold <= 0:
        return None
    return min(1.0, max(0.0, (float(ex[PAIR_DIAGNOSTICS[0]]) - float(ex[PAIR_DIAGNOSTICS[1]])) / cold - 1.0))


def topology_for(gpu: str) -> str:
    key = gpu.lower()
    for word, topo in GPU_TOPOLOGY:
        if word in key:
            return topo
    raise InputError("cannot tell the topology preset from the GPU name", field="gpu", value=gpu)


@functools.lru_cache(maxsize=64)
def cost_model(preset: str, gpus: int, values: tuple[tuple[str, float], ...]):
    """The closed-form cost model of ``gpus`` GPUs of ``preset`` (NVLink SHARP off: NCCL_NVLS_ENABLE=0, as every
    campaign launch) under the parameter ``values`` other than ``dp.`` ones, built once per process (the 64 last
    used kept): a host fit's trials vary only ``dp.`` keys, which no collective plan reads, so they share one model
    (its plans and GPU-side times)."""
    import topologies
    from simulator.network.closed_form import CostModel
    params = Parameters(MappingProxyType({**DEFAULTS, **dict(values)}), "dp_compare")
    return CostModel(topologies.prepare(preset, gpus_per_node=gpus, nvls=False), params)


def model_for(data: DPModelData, gpus: int, params: Parameters):
    """:func:`cost_model` of ``data``'s GPU (:func:`topology_for`) on ``gpus`` GPUs under ``params``."""
    return cost_model(topology_for(data.gpu), gpus,
                      tuple(sorted((k, v) for k, v in params.values.items() if not k.startswith("dp."))))


def predict_dp(data: DPModelData, gpus: int, params: Parameters):
    """The DataParallel prediction (a DataParallelResult, frozen) from the profile alone, made once per data, GPUs and
    parameter values (kept in ``data.predictions``)."""
    from simulator.training.dataparallel import simulate_dataparallel
    key = (gpus, tuple(params.values), tuple(params.values.values()))
    hit = data.predictions.get(key)
    if hit is None:
        hit = data.predictions[key] = simulate_dataparallel(model_for(data, gpus, params), data.profile, params)
    return hit


def predict_ddp(data: DPModelData, gpus: int, params: Parameters) -> float:
    """DDP's predicted iteration (bucket_cap_mb 25, as the runner) from the profile alone."""
    from simulator.training.ddp import DDPConfig, simulate_iteration
    return simulate_iteration(model_for(data, gpus, params), data.profile, DDPConfig(bucket_cap_mb=25.0, first_bucket_mb=None),
                              "closed").iteration_s


def measured_phases(data: DPModelData, gpus: int) -> dict[str, float]:
    """The breakdown's steps on ``gpus`` GPUs grouped as :data:`FIT_PHASES` (seconds)."""
    return {k: sum((data.phases_host if k in HOST_ONLY else data.phases)[gpus][x] for x in k.split("+"))
            for k in FIT_PHASES}


def predicted_phases(result) -> dict[str, float]:
    """A DataParallelResult's phases grouped as :data:`FIT_PHASES` (see there)."""
    ph = {p.name: p for p in result.phases}
    host = {k: sum(ph[x].host_s for x in v) for k, v in FIT_PHASES.items()}
    return {k: host[k] if k in HOST_ONLY else max(host[k], sum(ph[x].gpu_s for x in v))
            for k, v in FIT_PHASES.items()}


def fit_host(data: Sequence[DPModelData], gpus: int, params: Parameters, keys: Sequence[str] | None = None,
             name: str = "dp-fitted") -> Parameters:
    """``params`` with the DataParallel host keys fitted to the runner's breakdown on ``gpus`` GPUs:
    every model's steps (:data:`FIT_PHASES`), each against the same step predicted; never the
    iteration times."""
    from validation.calibrate import fit_log
    used = [d for d in data if gpus in d.phases]
    if not used:
        raise InputError("no DataParallel breakdown on that many GPUs", field="gpus", value=gpus)
    if keys is None:
        keys = HOST_KEYS + (("dp.cold_lock_share",) if any(
            not all(k in dict(d.profile.extras) for k in PAIR_DIAGNOSTICS) for d in used) else ())
    names = list(FIT_PHASES)
    measured = np.array([measured_phases(d, gpus)[k] for d in used for k in names])

    def predict(q: Parameters) -> np.ndarray:
        out = [predicted_phases(predict_dp(d, gpus, q))[k] for d in used for k in names]
        return np.maximum(np.array(out), 1e-7)        # a log residual needs a positive prediction
    start = params.with_values({k: max(params[k], v) for k, v in FIT_START.items() if k in keys})
    return fit_log(start, keys, predict, measured, name=name)


def leave_one_out(data: Sequence[DPModelData], gpus: int, params: Parameters) -> dict[str, float]:
    """Each model's DataParallel prediction with the host keys fitted on the other models."""
    out = {}
    for d in data:
        if gpus not in d.dp_s:
            continue
        others = [o for o in data if o is not d]
        fitted = fit_host(others, gpus, params) if others else params
        out[d.model] = predict_dp(d, gpus, fitted).iteration_s
    return out


__all__ = ["BACKWARD_PARTS", "DIAGNOSTICS", "FIT_PHASES", "PAIR_DIAGNOSTICS", "DPModelData", "HOST_KEYS",
           "borrow_diagnostics", "fit_host", "launch_range_pct", "leave_one_out", "measured_phases", "pair_share",
           "predict_ddp", "predict_dp", "predicted_phases", "read_dp", "topology_for"]
