"""The DDP held-out error bands (simulator.training.ddp_intervals.ddp_band; ``calibrations/uncertainty/ddp.json``):
built from held-out DDP predictions of every committed DDP dataset, checked leaving one dataset out.

    python -m validation.ddp_bands            # the leave-one-dataset-out tables
    python -m validation.accuracy --calibrations   # also writes the shipped band file

A DDP dataset is a campaign folder with ``kind: "ddp"`` records (the DDP runner's sweep, the DataParallel
runner's DDP runs). Each of its configurations (median over launches, validation.ddp_compare.aggregate) is
predicted from the collective calibration of its GPU (:data:`COMM`), the datasheet DDP parameters and compute
from single-GPU measurements of *other* datasets of the same GPU model (never its own): the profile shapes of
``h200x1_2026-11-26`` scaled to

* *one profile*: each single profile launch (a ``dp_profile`` capture or a profile file) alone, no compute band,
  as a user with one profile runs ``gpunetsim ddp``;
* *pooled*: the median plain single-GPU step over the other datasets' launches, with their 5-95% band
  (validation.compute_pool.pooled), as section 4's ``pooled plain steps``.

A band is exp of the 5% / 95% quantiles of log(measured / predicted), each dataset weighing the same
(validation.iteration_bands.make_band). The interval the simulator gives is the wider of that band and the
communication model's and compute band's interval; :func:`lodo_interval_rows` judges exactly that (the same
predictions, their intervals widened as the simulator widens them to the band of the other datasets).
"""

from __future__ import annotations

import glob
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from simulator.collectives.params import SHIPPED_DIR, load_calibration
from simulator.training.ddp_intervals import band_kind, compute_band, widen_to_band
from simulator.training.iteration_bands import DDP_FILE, DDP_KINDS
from simulator.training.workload import step_compute_s
from validation import iteration_bands as ib
from validation.compare import Topo
from validation.compute_pool import POOL_KEYS, StepSample, pooled, profile_samples, read_single_gpu
from validation.ddp_compare import DdpComparison, DdpPredictor, aggregate, has_ddp_records, load_workloads, \
    read_ddp, scale_compute
from validation.dp_compare import topology_for

DATA = Path(__file__).resolve().parent / "data"
PROFILES = DATA / "h200x1_2026-11-26"
COMM = {"H200-SXM": "h200-nvlink", "H100-SXM": "h100-nvlink-2gpu"}
"""The shipped collective calibration each GPU model's DDP runs are predicted with."""
DDP_RUNS = ("ddp",)


RUNNER_FILES = ("ddp_world*.jsonl", "dp_world*.jsonl")
"""The files the DDP runner and the DataParallel runner (whose sweep runs DDP too) write."""


@lru_cache(maxsize=1)
def ddp_datasets() -> tuple[str, ...]:
    """Every committed campaign folder with DDP runs in its runner files, by name."""
    return tuple(sorted(d.name for d in DATA.iterdir() if d.is_dir()
                        and any(has_ddp_records(f) for g in RUNNER_FILES for f in sorted(d.glob(g)))))


def gpu_of(name: str) -> str:
    """The catalog GPU of a campaign folder's runs (one per folder)."""
    gpus, _ = ib.folder_domain(name, DDP_RUNS)
    if len(gpus) != 1:
        raise ValueError(f"dataset {name!r}: expected one GPU model, found {sorted(gpus)}")
    return next(iter(gpus))


@lru_cache(maxsize=1)
def _samples() -> tuple[tuple[str, str, StepSample], ...]:
    """(dataset, GPU, sample) of every single-GPU step committed: the DataParallel runner's launches and the
    profile files of :data:`PROFILES`."""
    out = [(PROFILES.name, "H200-SXM", s) for s in profile_samples(_shapes(), str(PROFILES))]
    for d in sorted(p for p in DATA.iterdir() if p.is_dir()):
        files = sorted(d.glob("dp_world*.jsonl"))
        samples = [s for f in files for s in read_single_gpu(f)]
        if samples:
            gpus, _ = ib.folder_domain(d.name, ("dp", "ddp"))
            out += [(d.name, g, s) for g in gpus for s in samples]
    return tuple(out)


@lru_cache(maxsize=1)
def _shapes():
    return load_workloads(sorted(glob.glob(str(PROFILES / "profile_*.json"))))


def one_profile(shape, sample: StepSample):
    """``shape`` scaled to one profile launch's step, without a compute band (a user's one profile)."""
    w = scale_compute(shape, sample.step_s / step_compute_s(shape))
    return replace(w, extras=tuple((k, v) for k, v in w.extras if k not in POOL_KEYS))


def predictions(name: str, bands: Mapping[str, Mapping] | None = None) -> dict[str, list[DdpComparison]]:
    """{kind: comparisons} of dataset ``name``'s configurations predicted with compute from other datasets of
    its GPU (module docstring); ``bands`` as DdpPredictor's (``{}``: the model's interval alone)."""
    gpu = gpu_of(name)
    comm = load_calibration(str(SHIPPED_DIR / f"{COMM[gpu]}.json"))
    topo = Topo(topology_for(gpu))
    points = aggregate([p for g in RUNNER_FILES for f in sorted((DATA / name).glob(g)) for p in read_ddp(f)])
    others = [s for d, g, s in _samples() if g == gpu and d != name]
    shapes = {m: w for m, w in _shapes().items() if any(p.model == m for p in points)}
    out: dict[str, list[DdpComparison]] = {k: [] for k in DDP_KINDS}
    base = DdpPredictor(topo, comm, {}, bands=bands)
    plain = [s for s in others if s.kind == "plain"]
    if plain:
        pred = base.with_workloads({m: pooled(w, plain, ("plain",)) for m, w in shapes.items()})
        out[DDP_KINDS[1]] = [pred.predict(p) for p in points]
    for s in others:
        if s.kind != "profile" or s.model not in shapes or s.batch_size != shapes[s.model].batch_size:
            continue
        pred = base.with_workloads({s.model: one_profile(shapes[s.model], s)})
        out[DDP_KINDS[0]] += [pred.predict(p) for p in points if p.model == s.model]
    return out


@lru_cache(maxsize=1)
def held_out() -> Mapping[str, Mapping[str, list[DdpComparison]]]:
    """{kind: {dataset: comparisons}} with the model's interval alone (no held-out band)."""
    per = {n: predictions(n, {}) for n in ddp_datasets()}
    return {k: {n: per[n][k] for n in per if per[n][k]} for k in DDP_KINDS}


def groups() -> dict[str, dict[str, list[float]]]:
    """{kind: {dataset: log(measured / predicted)}} of the held-out predictions."""
    return {k: {n: ib.log_ratios([c.point.median_s for c in cs], [c.predicted_s for c in cs]) for n, cs in g.items()}
            for k, g in held_out().items()}


def built() -> dict[str, dict]:
    """{kind: band} as shipped (validation.iteration_bands.make_band, domain from the folders' DDP runs)."""
    sources = {DDP_KINDS[0]: "one profile launch of another dataset of the same GPU model per prediction",
               DDP_KINDS[1]: "the plain single-GPU steps of the other datasets of the same GPU model, pooled"}
    return {k: ib.make_band(g, f"held-out DDP predictions (datasheet DDP parameters, {', '.join(sorted(set(COMM.values())))}"
                               f" collectives), compute from {sources[k]} (validation.ddp_bands)", kinds=DDP_RUNS)
            for k, g in groups().items()}


def band_without(left_out: str | Sequence[str]) -> dict[str, dict]:
    """{kind: band} from every dataset but ``left_out`` (a name or several): what judges them."""
    out = {left_out} if isinstance(left_out, str) else set(left_out)
    bands = {}
    for k, g in groups().items():
        rest = {n: v for n, v in g.items() if n not in out and len(v)}
        if rest:
            bands[k] = {"level": ib.LEVEL, "log_ratio": ib.band_quantiles(rest)}
    return bands


def widened(comps: Sequence[DdpComparison], band: Mapping | None) -> list[DdpComparison]:
    """Comparisons made with the model's interval alone (``bands={}``), their intervals widened to ``band`` as
    the simulator widens them (simulator.training.ddp_intervals.widen_to_band; the profiles carry no host
    times, so no host path floors them)."""
    return [replace(c, **dict(zip(("lo_s", "hi_s"), widen_to_band(c.lo_s, c.hi_s, c.predicted_s, band))))
            for c in comps]


def kind_of(predictor: DdpPredictor) -> str:
    """The band kind (simulator.training.ddp_intervals.band_kind) of a predictor's workloads (one for all)."""
    kinds = {band_kind(compute_band(w)) for w in predictor.workloads.values()}
    if len(kinds) != 1:
        raise ValueError(f"workloads of several band kinds: {sorted(kinds)}")
    return kinds.pop()


def lodo_interval_rows(kind: str, model_only: bool = False) -> list[tuple[str, int, float, float]]:
    """(dataset, points, coverage %, median width %) of each dataset's intervals of ``kind``, the band from the
    other datasets (``model_only``: the communication model's and compute band's interval alone, as before the
    held-out band)."""
    rows = []
    for name, before in held_out()[kind].items():
        cs = before if model_only else widened(before, band_without(name).get(kind))
        inside = np.mean([c.lo_s <= c.point.median_s <= c.hi_s for c in cs]) * 100
        width = np.median([(c.hi_s - c.lo_s) / c.predicted_s for c in cs]) * 100
        rows.append((name, len(cs), float(inside), float(width)))
    return rows


def lodo_table() -> list[str]:
    """Markdown: per kind and dataset, coverage and median width of the interval before (model only) and after
    (widened to the other datasets' band)."""
    out = ["| compute | dataset left out | GPU | configurations | coverage % before -> after | "
           "median width % before -> after |", "|---|---|---|---|---|---|"]
    for kind in DDP_KINDS:
        before = {r[0]: r for r in lodo_interval_rows(kind, model_only=True)}
        for name, n, cov, width in lodo_interval_rows(kind):
            b = before[name]
            out.append(f"| {kind} | {name} | {gpu_of(name)} | {n} | {b[2]:.0f} -> {cov:.0f} | {b[3]:.0f} -> {width:.0f} |")
    return out


def lodo_summary(kind: str, model_only: bool = False) -> tuple[float, float, float]:
    """(coverage over every point %, averaged over datasets %, median width over points %) of
    :func:`lodo_interval_rows`."""
    rows = lodo_interval_rows(kind, model_only)
    return ib.summary([(name, n, 0.0, 0.0, cov, width) for name, n, cov, width in rows])


def write(bands: Mapping[str, dict] | None = None) -> None:
    """Write the shipped band file (``python -m validation.accuracy --calibrations``)."""
    ib.write(DDP_FILE, bands or built(), DDP_KINDS)



if __name__ == "__main__":
    for k in DDP_KINDS:
        for before in (True, False):
            cov, mean_cov, width = lodo_summary(k, before)
            print(f"{k}, {'model only' if before else 'widened'}: coverage {cov:.1f}% ({mean_cov:.1f}% per dataset), "
                  f"median width {width:.1f}%")
    print("\n".join(lodo_table()))
