"""The whole-iteration bands of simulator.training.iteration_bands (DataParallel, LLM training): built from
held-out residuals, checked by leaving one dataset out, and written as the shipped band files.

Input: per dataset, the log(measured / predicted) of every held-out prediction (the sections that predict
them collect these: validation.dp_accuracy, validation.llm_accuracy). A band is the 5%, 50% and 95%
quantiles of those, each dataset weighing the same (a point weighs 1 / its dataset's points). Coverage is
measured leaving one dataset out: each dataset's points against the band of the *other* datasets (widened
to hold the prediction, as the simulator applies it); width is the interval's (high - low) / prediction.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from simulator.collectives.uncertainty import LEVEL
from simulator.training.iteration_bands import KINDS, bands, interval

DATA = Path(__file__).resolve().parent / "data"
LLM_RUNS = ("llm_fsdp", "llm_tp", "llm_pp", "llm_issue")
"""The record kinds of an LLM campaign's runs and TP issue probes (validation.llm_records, validation.issue_check)."""


def weighted_quantiles(groups: Mapping[str, Sequence[float]], qs: Sequence[float]) -> list[float]:
    """Quantiles of every group's values together, each group weighing the same in total (linear
    interpolation between the points' mid-cumulative weights)."""
    vals, wts = [], []
    for v in groups.values():
        if len(v):
            vals += list(v)
            wts += [1.0 / len(v)] * len(v)
    order = np.argsort(vals)
    x, w = np.asarray(vals, dtype=float)[order], np.asarray(wts)[order]
    cum = (np.cumsum(w) - w / 2) / w.sum()
    return [float(np.interp(q, cum, x)) for q in qs]


def band_quantiles(groups: Mapping[str, Sequence[float]]) -> list[float]:
    """(low, median, high) of a band of ``groups`` at LEVEL, each group weighing the same
    (:func:`weighted_quantiles`)."""
    return weighted_quantiles(groups, [(1 - LEVEL) / 2, 0.5, (1 + LEVEL) / 2])


def band_edges(groups: Mapping[str, Sequence[float]]) -> tuple[float, float]:
    """(low, high) ratios to the prediction of the band of ``groups``, as the simulator applies it."""
    return interval(1.0, {"log_ratio": band_quantiles(groups)})


def make_band(groups: Mapping[str, Sequence[float]], source: str,
              known: Mapping[str, tuple[set[str], set[int]]] | None = None, kinds: tuple[str, ...] = LLM_RUNS,
              others: "Others | None" = None, covers: dict | None = None) -> dict:
    """The band of ``groups`` ({dataset: log ratios}) with its leave-one-dataset-out figures and its domain
    (:func:`domain`; ``known``: the GPUs and GPU counts of datasets that are no campaign folder; ``kinds``: the
    record kinds of a folder's runs; ``others``: as :func:`lodo_rows`; ``covers``: the domain itself, where the caller
    knows it better, e.g. with bytes per call (validation.part_checks): then no folder is read)."""
    lo, mid, hi = band_quantiles(groups)
    rows = lodo_rows(groups, others)
    cov, mean_cov, width = summary(rows)
    return {"level": LEVEL, "log_ratio": [round(lo, 6), round(mid, 6), round(hi, 6)],
            "datasets": {k: len(v) for k, v in groups.items()},
            "coverage_pct": round(cov, 1), "dataset_coverage_pct": round(mean_cov, 1), "width_pct": round(width, 1),
            "source": source, "domain": covers if covers is not None else domain(groups, known or {}, kinds)}


@lru_cache(maxsize=None)
def folder_domain(name: str, kinds: tuple[str, ...] = LLM_RUNS) -> tuple[frozenset[str], frozenset[int]]:
    """(catalog GPU names, GPU counts) of the runs of a committed campaign folder: the ``world`` of its records of
    ``kinds`` and the ``gpu`` its files' records name (the runners write it in each launch's meta record)."""
    from validation.runners.records import read_measurement_records
    from simulator.training.gpus import get_gpu, gpu_for_model
    gpus: set[str] = set()
    worlds: set[int] = set()
    for path in sorted((DATA / name).glob("*.jsonl")):
        named, runs = set(), set()
        for _, r in read_measurement_records(path, skip_bad=True):
            if isinstance(r.get("gpu"), str):
                named.add(get_gpu(gpu_for_model(r["gpu"])).name)
            w = r.get("world")
            if r.get("kind") in kinds and isinstance(w, int) and not isinstance(w, bool) and w >= 1:
                runs.add(w)
        if runs:
            gpus |= named
            worlds |= runs
    return frozenset(gpus), frozenset(worlds)


def domain(groups: Mapping[str, Sequence[float]], known: Mapping[str, tuple[set[str], set[int]]],
           kinds: tuple[str, ...] = LLM_RUNS) -> dict:
    """What the band's runs cover: {"gpus": sorted catalog names, "world": [fewest, most GPUs]} over the datasets
    of ``groups`` that have points (``known`` for a dataset, else its campaign folder's runs of ``kinds``:
    :func:`folder_domain`)."""
    gpus: set[str] = set()
    worlds: set[int] = set()
    for name, values in groups.items():
        if not len(values):
            continue
        g, w = known[name] if name in known else folder_domain(name, kinds)
        if not g or not w:
            raise ValueError(f"dataset {name!r}: no GPU or GPU count (not a campaign folder; pass it in known)")
        gpus |= set(g)
        worlds |= set(w)
    return {"gpus": sorted(gpus), "world": [min(worlds), max(worlds)]}


Others = Callable[[str], Mapping[str, Sequence[float]]]
"""The datasets whose points make the band that judges a left-out dataset (default: every other one's)."""


def lodo_rows(groups: Mapping[str, Sequence[float]], others: Others | None = None
              ) -> list[tuple[str, int, float, float, float, float]]:
    """Per dataset: (name, points, band low %, band high % (as measured over predicted - 1), share of its points
    inside %, width %), the band from the other datasets (``others(name)``: their points when ``name`` is left
    out, e.g. without the predictions a fit on ``name`` made)."""
    rows = []
    for name, r in groups.items():
        pool = others(name) if others is not None else groups
        others_ = {k: v for k, v in pool.items() if k != name and len(v)}
        if not others_ or not len(r):
            continue
        lo, hi = band_edges(others_)
        ratios = np.exp(np.asarray(r, dtype=float))
        inside = float(np.mean((ratios >= lo * (1 - 1e-12)) & (ratios <= hi * (1 + 1e-12)))) * 100
        rows.append((name, len(r), (lo - 1) * 100, (hi - 1) * 100, inside, (hi - lo) * 100))
    return rows


def summary(rows: Sequence[tuple]) -> tuple[float, float, float]:
    """(coverage over every point %, coverage averaged over datasets %, median width over points %)."""
    if not rows:
        return float("nan"), float("nan"), float("nan")
    n = sum(r[1] for r in rows)
    cov = sum(r[1] * r[4] for r in rows) / n
    widths = np.repeat([r[5] for r in rows], [r[1] for r in rows])
    return cov, float(np.mean([r[4] for r in rows])), float(np.median(widths))


def table(groups: Mapping[str, Sequence[float]], others: "Others | None" = None) -> list[str]:
    """The markdown table of :func:`lodo_rows`."""
    out = ["| dataset left out | points | band from the others: low / high % | inside % | width % |",
           "|---|---|---|---|---|"]
    for name, n, lo, hi, inside, width in lodo_rows(groups, others):
        out.append(f"| {name} | {n} | {lo:+.1f} / {hi:+.1f} | {inside:.0f} | {width:.0f} |")
    return out


def shipped_check(path: Path, built: Mapping[str, dict], kinds: tuple[str, ...] = KINDS) -> str:
    """A sentence: whether the shipped band file holds the bands built here (what the simulator applies)."""
    shipped = bands(path, kinds) if path.exists() else {}
    same = all(k in shipped and list(shipped[k]["log_ratio"]) == built[k]["log_ratio"]
               and shipped[k].get("domain") == built[k].get("domain") for k in built)
    rel = f"simulator/collectives/calibrations/uncertainty/{path.name}"
    if same:
        return f"The shipped `{rel}` holds these bands."
    return (f"**The shipped `{rel}` differs from these bands: rerun `python -m validation.accuracy --calibrations`.**")


def write(path: Path, built: Mapping[str, dict], kinds: tuple[str, ...] = KINDS) -> None:
    """Write the band file (``--calibrations``) with the bands of ``kinds``; the simulator reads it through its
    cache, cleared here."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({k: built[k] for k in kinds if k in built}, indent=1) + "\n")
    bands.cache_clear()


def log_ratios(measured: Sequence[float], predicted: Sequence[float]) -> list[float]:
    """log(measured / predicted) per pair."""
    return [math.log(m / p) for m, p in zip(measured, predicted)]


def band_sentence(kind: str, b: Mapping) -> str:
    """'datasheet: x% / +y% (coverage c%, d% per dataset; width w%)' for the prose."""
    lo, hi = interval(1.0, b)
    return (f"{kind} {(lo - 1) * 100:+.1f} / {(hi - 1) * 100:+.1f}% of the prediction ({len(b['datasets'])} datasets; "
            f"left one dataset out: coverage {b['coverage_pct']:.0f}% of the points, {b['dataset_coverage_pct']:.0f}% "
            f"averaged over datasets, median width {b['width_pct']:.0f}%)")


def left_out_lines(built: Mapping[str, Mapping], groups: Mapping[str, Mapping[str, Sequence[float]]], path: Path,
                   what: str) -> tuple[str, list[str]]:
    """(the sentence on each kind's band left one dataset out and whether the shipped file ``path`` holds them,
    the per-kind tables titled '<Kind> <what>, each dataset left out:') of a report's band subsection."""
    sentence = "; ".join(band_sentence(k, b) for k, b in built.items()) + ". " + shipped_check(path, built)
    tables: list[str] = []
    for k, g in groups.items():
        tables += ["", f"{k.capitalize()} {what}, each dataset left out:", "", *table(g)]
    return sentence, tables
