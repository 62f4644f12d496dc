"""90% intervals of whole-iteration predictions from the measured spread of held-out errors: DataParallel
(simulator.training.dataparallel) and LLM training (simulator.training.llm).

The NCCL collectives' intervals come from a fit's parameter covariance and residuals per size band
(simulator.collectives.uncertainty), and DDP's from its buckets' (simulator.training.ddp_intervals). The
DataParallel and LLM validations measure whole iterations only (no part of an iteration is timed apart
on every dataset), so the interval of such a prediction is what those measurements say about the whole:
the prediction times exp of the 5% and 95% quantiles of log(measured / predicted) over the validation's
*held-out* predictions (docs/accuracy.md sections 6 and 7), each dataset weighing the same (one dataset of
720 runs must not set the band of every other kind of run). The band widens to hold the prediction itself
(a low end above 0 or a high end below 0 is set to 0): an interval that excludes its own prediction would
say the model is biased by a known amount, which it would then correct instead.

Two bands per model, by what the prediction is built from:

* DataParallel: *datasheet* (every ``dp.`` host key at its default) from the datasheet predictions of every
  committed DataParallel run; *calibrated* (a calibration with fitted ``dp.`` keys, e.g. ``h200-dataparallel``)
  from the predictions with keys fitted on *another machine's* runs (how a shipped calibration is used);
* LLM training: *datasheet* compute (``ComputeParams`` defaults) from the datasheet predictions of the public
  Megatron runs (Selene, vTrain) and the own campaigns, each against the larger of its prediction and its
  host-issue floor (:func:`train_reference_s`, simulator.training.llm.host_prior), the centre of a datasheet
  interval; *calibrated* compute (a compute set fitted on the GPU's runs or profiles:
  ``a100-megatron``, or the validation's fits on a campaign's single-GPU profiles) from every held-out
  prediction of sections 7 (Selene and the 8-GPU vTrain runs with the fitted set, the own FSDP / TP / PP
  campaigns, the TP issue probes, the blind FSDP runs and the held-out lease).

A third file holds the bands of the LLM *compute* alone (the parts of an iteration that are kernels: passes,
optimizer; simulator.training.llm.part_intervals): the same two kinds, from the compute-only measurements of the
own LLM campaigns (each spec's whole model on one GPU, each TP configuration's loop with its collectives
stubbed: validation.compute_bands), *datasheet* from the datasheet compute set's predictions of them,
*calibrated* from a compute set fitted on one campaign predicting *another* campaign's measurements on the
same GPU model.

Written by ``python -m validation.accuracy --calibrations`` (validation.iteration_bands) into
``calibrations/uncertainty/{dataparallel,train,compute}.json``::

    {"datasheet": {"level": 0.9, "log_ratio": [q05, q50, q95], "datasets": {name: points, ...},
                   "coverage_pct": .., "width_pct": .., "source": ".."}, "calibrated": {...}}

``coverage_pct`` and ``width_pct`` are the band's leave-one-dataset-out coverage and median width (each
dataset's points against the band of the other datasets), for the reader. ``log_ratio`` sets the interval; the
optional ``domain`` ({"gpus": [catalog names], "world": [fewest, most GPUs]}: what the band's runs cover) and the
quantiles' sign set its caveats (:func:`caveats`): a prediction outside the domain extrapolates the band, and a
band wholly above (or below) 0 says the model is biased there, which the interval only widens to hold.

A *calibrated* LLM band needs a compute set fitted on the GPU it predicts (``ComputeParams.fitted_gpus``, from
the calibration's ``llm_gpus`` or its pass profile's GPUs): every calibrated dataset pairs a set with runs of its
own GPU model, so a set used on another GPU (``a100-megatron`` on an H100) takes the datasheet band and says so.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from simulator.collectives.params import SHIPPED_DIR, Parameters
from simulator.core.errors import InputError
from simulator.core.values import kind_of

BAND_DIR = SHIPPED_DIR / "uncertainty"
DATAPARALLEL_FILE = BAND_DIR / "dataparallel.json"
TRAIN_FILE = BAND_DIR / "train.json"
COMPUTE_FILE = BAND_DIR / "compute.json"
COMM_PARTS_FILE = BAND_DIR / "comm_parts.json"
DDP_FILE = BAND_DIR / "ddp.json"
KINDS = ("datasheet", "calibrated")
DDP_KINDS = ("one profile", "pooled")
"""The DDP bands (simulator.training.ddp_intervals): compute from *one profile* launch (no compute band), or
*pooled* over launches (a workload carrying ``compute_lo_ratio``/``compute_hi_ratio``)."""


def check_band(band: object, source: str, field: str) -> Mapping:
    """One band, checked: a level in (0, 1) and three ordered finite log-ratio quantiles (InputError
    naming the field otherwise)."""
    if not isinstance(band, Mapping):
        raise InputError(f"must be a JSON object, not {kind_of(band)}", source=source, field=field)
    level, q = band.get("level"), band.get("log_ratio")
    if not isinstance(level, (int, float)) or not 0 < level < 1:
        raise InputError("must be a number between 0 and 1", source=source, field=f"{field}.level", value=level)
    if (not isinstance(q, list) or len(q) != 3 or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in q)
            or not q[0] <= q[1] <= q[2]):
        raise InputError("must be three ordered finite numbers [q_low, median, q_high] of log(measured / predicted)",
                         source=source, field=f"{field}.log_ratio", value=q)
    if "domain" in band:
        _check_domain(band["domain"], source, f"{field}.domain")
    return band


def _check_domain(d: object, source: str, field: str) -> None:
    """A band's ``domain``: {"gpus": non-empty list of names, "world": [fewest, most] GPUs} (InputError otherwise)."""
    if not isinstance(d, Mapping):
        raise InputError("must be a JSON object {gpus, world}", source=source, field=field, value=d)
    gpus, world = d.get("gpus"), d.get("world")
    if not isinstance(gpus, list) or not gpus or not all(isinstance(g, str) and g for g in gpus):
        raise InputError("must be a non-empty list of GPU names", source=source, field=f"{field}.gpus", value=gpus)
    if (not isinstance(world, list) or len(world) != 2
            or not all(isinstance(w, int) and not isinstance(w, bool) and w >= 1 for w in world) or world[0] > world[1]):
        raise InputError("must be [fewest, most] GPUs, whole numbers >= 1", source=source, field=f"{field}.world",
                         value=world)


def _band_file(path: Path, keys: tuple[str, ...] | None) -> Mapping[str, Mapping]:
    """{key: band} of a band file (every key, or those of ``keys`` it has; {} when it does not exist)."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg}", source=str(path)) from None
    if not isinstance(data, Mapping):
        raise InputError("must be a JSON object {name: band}", source=str(path))
    return {k: check_band(data[k], str(path), k) for k in (keys or tuple(data)) if k in data}


@lru_cache(maxsize=8)
def bands(path: Path, kinds: tuple[str, ...] = KINDS) -> Mapping[str, Mapping]:
    """{kind: band} of a shipped band file ({} when it does not exist yet)."""
    return _band_file(path, kinds)


def interval(time_s: float, band: Mapping | None) -> tuple[float | None, float | None]:
    """(low, high) seconds of a prediction of ``time_s`` under ``band`` (None, None without one); always
    holds ``time_s``."""
    if band is None:
        return None, None
    lo, _, hi = band["log_ratio"]
    return time_s * math.exp(min(lo, 0.0)), time_s * math.exp(max(hi, 0.0))


def caveats(band: Mapping | None, gpu: str | None = None, world: int | None = None) -> tuple[str, ...]:
    """Why an interval under ``band`` is not what the band's data showed for a prediction on ``world`` GPUs of
    model ``gpu`` (catalog name; None: not checked): the band lies wholly on one side of the prediction (its
    held-out runs were all slower, or all faster: the model is biased there by about the band's median, and the
    interval is only widened to hold the prediction: review s15 #2), or the prediction is outside the GPU models
    or GPU counts of the band's runs (its ``domain``: review s15 #9)."""
    if band is None:
        return ()
    lo, mid, hi = band["log_ratio"]
    out = []
    if lo > 0 or hi < 0:
        out.append(f"the band lies {'above' if lo > 0 else 'below'} the prediction (its held-out runs measured "
                   f"{math.exp(lo):.2f}-{math.exp(hi):.2f}x it, median {math.exp(mid):.2f}x; widened to hold it)")
    d = band.get("domain")
    if d:
        if world is not None and not d["world"][0] <= world <= d["world"][1]:
            out.append(f"{world} GPUs (the band's runs: {d['world'][0]}-{d['world'][1]} GPUs)")
        if gpu is not None and gpu not in d["gpus"]:
            out.append(f"{gpu} (the band's runs: {', '.join(d['gpus'])})")
    return tuple(out)


def dataparallel_kind(params: Parameters) -> str:
    """'calibrated' when ``params`` carries any fitted ``dp.`` key, else 'datasheet'."""
    return "calibrated" if any(k.startswith("dp.") for k in params.diff()) else "datasheet"


def dataparallel_interval(time_s: float, params: Parameters) -> tuple[float | None, float | None]:
    """The 90% interval of a DataParallel iteration of ``time_s`` predicted with ``params``."""
    return interval(time_s, bands(DATAPARALLEL_FILE).get(dataparallel_kind(params)))


def dataparallel_caveats(params: Parameters, gpu: str | None, world: int) -> tuple[str, ...]:
    """:func:`caveats` of a DataParallel prediction on ``world`` GPUs of model ``gpu``."""
    return caveats(bands(DATAPARALLEL_FILE).get(dataparallel_kind(params)), gpu, world)


def _fitted(compute) -> bool:
    """Whether the compute set differs from the datasheet defaults or carries a measured pass profile."""
    return compute.profile is not None or compute.values() != _default_values(type(compute))


@lru_cache(maxsize=4)
def _default_values(kind: type) -> Mapping:
    """The datasheet defaults' ``values()`` of a compute set class (built once: every simulated iteration asks)."""
    return kind().values()


def train_kind(compute, gpu: str) -> str:
    """'calibrated' when the LLM compute set (simulator.training.llm.compute.ComputeParams) is fitted (it differs
    from the datasheet defaults or carries a measured pass profile) *on* ``gpu`` (a catalog name in its
    ``fitted_gpus``), else 'datasheet': the calibrated bands hold sets predicting their own GPU model only
    (review s15 #8)."""
    return "calibrated" if _fitted(compute) and gpu in compute.fitted_gpus else "datasheet"


def _foreign(compute, gpu: str) -> tuple[str, ...]:
    """The caveat of a fitted compute set used on a GPU it was not fitted on (empty otherwise)."""
    if not _fitted(compute) or gpu in compute.fitted_gpus:
        return ()
    where = ", ".join(compute.fitted_gpus) or "no GPU it names (`llm_gpus`)"
    return (f"compute set {compute.name} fitted on {where}, used on {gpu}: the datasheet band (no band measures a "
            "fitted set on another GPU)",)


def train_reference_s(time_s: float, compute, gpu: str, floor_s: float = 0.0) -> float:
    """What an LLM iteration's band multiplies: the prediction ``time_s``, or for the *datasheet* kind (no host
    time in the compute set) the larger of it and the iteration's host-issue floor ``floor_s``
    (simulator.training.llm.host_prior). The datasheet band is learned on log(measured / this reference)."""
    return max(time_s, floor_s) if train_kind(compute, gpu) == "datasheet" else time_s


def train_interval(time_s: float, compute, gpu: str, floor_s: float = 0.0) -> tuple[float | None, float | None]:
    """The 90% interval of an LLM training iteration of ``time_s`` simulated with the compute set ``compute`` on
    GPUs of model ``gpu``, its host-issue floor ``floor_s`` (:func:`train_reference_s`): the band around the
    reference, widened to hold the prediction."""
    ref = train_reference_s(time_s, compute, gpu, floor_s)
    lo, hi = interval(ref, bands(TRAIN_FILE).get(train_kind(compute, gpu)))
    return (None, None) if lo is None or hi is None else (min(lo, time_s), max(hi, time_s))


def train_caveats(compute, gpu: str, world: int | None = None) -> tuple[str, ...]:
    """Why :func:`train_interval` of a prediction on ``world`` GPUs of model ``gpu`` is not what its band's data
    showed: a compute set fitted on another GPU, the band's bias, a prediction outside its runs (:func:`caveats`)."""
    return _foreign(compute, gpu) + caveats(bands(TRAIN_FILE).get(train_kind(compute, gpu)), gpu, world)


def compute_interval(time_s: float, compute, gpu: str) -> tuple[float | None, float | None]:
    """The 90% interval of ``time_s`` of LLM compute (kernels and their issue) simulated with the compute set
    ``compute`` on ``gpu``: the compute-only band of its kind."""
    return interval(time_s, bands(COMPUTE_FILE).get(train_kind(compute, gpu)))


def compute_caveats(compute, gpu: str) -> tuple[str, ...]:
    """:func:`caveats` of :func:`compute_interval` (a compute set fitted on another GPU, the band's bias; the
    compute-only band's runs are single GPUs and TP loops, so no GPU count is checked)."""
    return _foreign(compute, gpu) + caveats(bands(COMPUTE_FILE).get(train_kind(compute, gpu)), gpu)


@lru_cache(maxsize=2)
def part_bands(path: Path = COMM_PARTS_FILE) -> Mapping[str, Mapping]:
    """{part: band} of the communication parts of an LLM iteration measured on their own (``tp_comm``: the TP
    loop less the same loop without collectives; ``pp_comm``: one activation between two stages), written by
    validation.part_checks; {} when the file does not exist."""
    return _band_file(path, None)
