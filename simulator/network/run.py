"""Public entry points for one collective: predict (closed form) or simulate (discrete events)."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.network.closed_form import CostModel
from simulator.core.errors import InputError
from simulator.network.regret import Regret, tuner_regret
from simulator.core.vocabulary import ENGINES, busbw_factor


@dataclass(frozen=True)
class CollectiveResult:
    """One collective at one size, with nccl-tests' derived figures."""

    op: str
    size_bytes: int
    gpus: int
    time_s: float
    algo: str
    proto: str
    engine: str
    regret: Regret | None = None     # the fastest enabled choice in gpunetsim's timing (tuner regret)
    time_lo_s: float | None = None      # 90% prediction interval (simulator.network.intervals)
    time_hi_s: float | None = None
    extrapolated: tuple[str, ...] = ()  # why the prediction lies outside the calibration's domain
    launch_lo_s: float | None = None    # where one launch's time falls (calibrations with repetitions)
    launch_hi_s: float | None = None
    nccl_version: str | None = None     # the NCCL planned for (Planner.nccl_version); None: a host backend

    @property
    def algbw_GBps(self) -> float:
        return self.size_bytes / self.time_s / 1e9 if self.time_s > 0 else 0.0

    @property
    def busbw_GBps(self) -> float:
        return self.algbw_GBps * busbw_factor(self.op, self.gpus)

    def as_dict(self) -> dict:
        d = {"op": self.op, "bytes": self.size_bytes, "gpus": self.gpus, "time_s": self.time_s,
             "algbw_GBps": self.algbw_GBps, "busbw_GBps": self.busbw_GBps, "algo": self.algo,
             "proto": self.proto, "engine": self.engine, "time_lo_s": self.time_lo_s,
             "time_hi_s": self.time_hi_s, "extrapolated": list(self.extrapolated)}
        if self.launch_lo_s is not None:
            d.update(launch_lo_s=self.launch_lo_s, launch_hi_s=self.launch_hi_s)
        if self.nccl_version is not None:
            d["nccl_version"] = self.nccl_version
        if self.regret is not None:
            d.update(best_algo=self.regret.best_algo, best_proto=self.regret.best_proto,
                     regret_pct=self.regret.regret_pct)
        return d


def require_ranks(ranks: int) -> None:
    """A collective needs 2 or more GPUs: with one there is nothing to communicate (NCCL would only
    copy locally), so gpunetsim refuses rather than print a time or bandwidth for it."""
    if ranks < 2:
        raise InputError("a collective needs at least 2 GPUs; this topology has 1 (a single GPU "
                         "communicates nothing)", field="gpus", value=ranks)


def run_collective(model: CostModel, op: str, size_bytes: int, algo: str = "auto", proto: str = "auto",
                   engine: str = "des", regret: bool = False) -> CollectiveResult:
    """Choose algorithm/protocol as NCCL's tuner would, then time that plan.

    ``engine="des"`` runs the discrete-event simulation of the chosen plan (no closed-form time is
    computed first); ``engine="closed"`` returns the alpha-beta prediction. ``regret``: also time every
    other allowed choice (closed form) and report the fastest (simulator.network.regret). Either engine's
    result carries a 90% interval from the parameters' uncertainty (``time_lo_s``, ``time_hi_s``).
    """
    if engine not in ENGINES:
        raise InputError("engine must be des or closed", field="engine", value=engine)
    require_ranks(model.ranks)
    a, p = model.choose(op, size_bytes, algo, proto)
    timer = model.des if engine == "des" else model.timer
    t = timer.time(model.planner.plan(op, a, p), size_bytes)
    r = tuner_regret(model, op, size_bytes, algo, proto) if regret else None
    iv = model.intervals.interval(op, a, p, size_bytes, t)
    return CollectiveResult(op, int(size_bytes), model.ranks, t, a, p, engine, r, iv.lo_s, iv.hi_s, iv.outside,
                            iv.launch_lo_s, iv.launch_hi_s, str(model.planner.nccl_version))


def run_host_collective(model, op: str, size_bytes: int, algo: str = "auto",
                        proto: str = "auto") -> CollectiveResult:
    """One Gloo or MPI collective (:class:`~simulator.network.host_collectives.HostCollectiveModel`),
    in closed form; ``proto`` of the result is the transport (tcp, shm, net). Its 90% interval comes from
    the backend's residual spread (simulator.collectives.host_uncertainty)."""
    t, a, transport = model.best(op, size_bytes, algo, proto)
    iv = model.interval(op, size_bytes, a)
    if iv is None:
        return CollectiveResult(op, int(size_bytes), model.ranks, t, a, transport, "closed")
    return CollectiveResult(op, int(size_bytes), model.ranks, t, a, transport, "closed", None, iv.lo_s, iv.hi_s,
                            iv.outside)
