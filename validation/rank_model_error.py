"""The per-rank cost's model error: how far the order statistics miss a fit over several world sizes.

A calibration on one world size reads the per-rank cost (``rank_overhead_s``, per doubling of the
ranks) off its repetitions' order statistics (validation.rank_sync): the slowest of more draws of one
process. On the committed machines that reading misses what a fit over several world sizes finds by
several microseconds either way (docs/accuracy.md section 3's rank-cost table): on 4x H200 hosts
every process issues more slowly when more share the host (the order statistics read too little),
on 4x H100 leases the slow repetitions are one process at a time (they read too much). Which way a
new machine goes, 2-GPU data cannot tell; a prediction on more ranks carries the spread of that miss
over machines, the root mean square of 'order statistics minus several-world fit' (the miss of each
machine is one draw of it, centred on 0: no correction of the value, only its uncertainty).

:data:`MACHINES` are the committed campaigns with more than one world size. The shipped term
(validation.rank_sync.MODEL_SD_S) is :func:`model_sd_s` over all of them; the accuracy report judges
each machine's intervals with the term of the *other* machines (:func:`model_sd_s` with ``exclude``),
so no machine's coverage rests on a term its own 4-GPU data set.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class Machine:
    """One committed campaign on several world sizes: its name in the report, NCCL topology, the files
    per world size, and the world sizes its several-world fit uses."""

    name: str
    topology: str
    files: Callable[[], dict[int, Sequence[Path]]]
    several: tuple[int, ...]

    @property
    def several_label(self) -> str:
        return " and ".join(map(str, self.several)) + " GPUs"


def _h200() -> dict[int, Sequence[Path]]:
    from validation.accuracy import CAMPAIGNS_2, CAMPAIGNS_4
    return {2: CAMPAIGNS_2, 4: CAMPAIGNS_4}


def _h100(which: str) -> Callable[[], dict[int, Sequence[Path]]]:
    def files() -> dict[int, Sequence[Path]]:
        from validation import accuracy_latency
        return accuracy_latency.h100_files(getattr(accuracy_latency, which))
    return files


def _lat3() -> dict[int, Sequence[Path]]:
    from validation import held_out_campaign
    return held_out_campaign.files()


MACHINES = (Machine("4x H200", "hgx-h200", _h200, (2, 4)),
            Machine("4x H100, `h100x4_2026-11-26_lat`", "dgx-h100", _h100("H100"), (2, 3)),
            Machine("4x H100, `h100x4_2026-11-26_lat2`", "dgx-h100", _h100("H100B"), (2, 3)),
            Machine("4x H200, `h200x4_2026-11-26_lat3`", "hgx-h200", _lat3, (2, 3)))
"""The committed machines with several world sizes (docs/accuracy.md section 3), in the report's order.
The 4x H200 row's several-world fit uses its 4-GPU campaigns, which section 3 scores: that machine is
judged with the other machines' term only."""


def machine(name: str) -> Machine:
    return next(m for m in MACHINES if m.name == name)


@lru_cache(maxsize=None)
def pooled(name: str) -> dict[int, list]:
    """The machine's points per world size, pooled over its launches (validation.transfer.pooled_points)."""
    from validation import transfer
    return {n: transfer.pooled_points(f) for n, f in machine(name).files().items() if f}


def predictor(name: str):
    """The datasheet predictor on the machine's topology (the prior every calibration starts from)."""
    from simulator.collectives.params import Parameters
    from validation.compare import Predictor, Topo
    return Predictor(Topo(machine(name).topology), Parameters())


@lru_cache(maxsize=None)
def several_fit(name: str):
    """The calibration (validation.calibrate.Fit) on the machine's several world sizes pooled: they
    determine the per-rank cost by fitting."""
    from validation.calibrate import calibrate
    m = machine(name)
    pts = [q.point for n in m.several for q in pooled(name)[n]]
    return calibrate(pts, predictor(name), name=f"several-{'-'.join(map(str, m.several))}gpu")


@lru_cache(maxsize=None)
def two_gpu_fit(name: str):
    """The calibration on the machine's 2-GPU points, carrying the other machines' model error (what
    section 3 judges the machine's larger world sizes with)."""
    from validation.calibrate import calibrate
    return calibrate([q.point for q in pooled(name)[2]], predictor(name), name="2gpu",
                     rank_model_sd_s=model_sd_s(name))


@lru_cache(maxsize=None)
def order_statistic_s(name: str) -> float:
    """The per-rank cost per doubling a 2-GPU calibration reads off the order statistics (what
    validation.calibrate takes as ``rank_overhead_s`` on these points)."""
    from validation import rank_sync
    sync = rank_sync.estimate([q.point for q in pooled(name)[2]], predictor(name))
    if sync is None:
        raise ValueError(f"{name}: no order statistics on 2 GPUs")
    return sync.per_doubling_s


def gaps_s() -> dict[str, float]:
    """Per machine: order statistics minus the several-world fit's per-rank cost (seconds)."""
    from validation.calibrate import RANK_KEY
    return {m.name: order_statistic_s(m.name) - several_fit(m.name).params[RANK_KEY] for m in MACHINES}


def rms(gaps: Sequence[float]) -> float:
    """Root mean square of the misses (seconds): their spread around 0."""
    g = np.asarray(list(gaps), dtype=float)
    return float(np.sqrt(np.mean(g ** 2))) if g.size else 0.0


def model_sd_s(exclude: str | None = None) -> float:
    """The per-rank cost's model error (seconds per doubling): :func:`rms` of the misses of every
    machine but ``exclude`` (the machine a figure judges)."""
    return rms([g for n, g in gaps_s().items() if n != exclude])


ROUNDING_S = 0.05e-6
"""The shipped term is written to 0.1 us."""


def check_shipped() -> float:
    """The term over all machines; InvariantError when the shipped validation.rank_sync.MODEL_SD_S
    is not it (to 0.1 us): the data moved and the constant must follow."""
    from simulator.core.errors import InvariantError
    from validation.rank_sync import MODEL_SD_S
    sd = model_sd_s()
    if abs(sd - MODEL_SD_S) > ROUNDING_S:
        raise InvariantError(f"validation.rank_sync.MODEL_SD_S is {MODEL_SD_S * 1e6:.1f} us but the committed "
                             f"machines give {sd * 1e6:.2f} us (validation.rank_model_error): update the constant")
    return sd
