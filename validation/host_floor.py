"""docs/accuracy.md section 7: the host-issue floor of ``gpunetsim train``'s datasheet interval, scored held out.

::

    python -m validation.host_floor

A datasheet prediction (no compute calibration) has no host time, so small models on fast GPUs, which are
host-bound, measured a median 1.7x it, and the datasheet band (learned from log(measured / prediction)) lay
wholly above every prediction, 1.06-5.2x wide (review ux19). ``gpunetsim train`` now centres the datasheet band
on the larger of the prediction and the iteration's *host-issue floor* (simulator.training.llm.host_prior: every
stage's passes issued at a prior block issue time), and the band is learned on log(measured / that reference).

The prior: the block's forward issue time of every committed TP issue probe host
(``validation/data/*/tp_issue_world*.jsonl``: ``issue_forward_s`` per block of the ``tp = 1`` points, and of the TP
points with identity stand-ins for a TP-sharded block; medians over launches and specs), the medians over the hosts
(:func:`prior`); ``simulator.training.llm.host_prior.HOST_PRIOR``
holds it (a test checks that it is this median). Held out: a probe host's own runs are scored with the prior of
the *other* probe hosts, and every dataset against the band of the other datasets (as the shipped bands are
judged); the sealed leases' LLM files are in no band and no prior and are scored against the full band. The shipped
datasheet band (``llm_accuracy.datasheet_own_runs``) is learned on these same held-out references, so a probe host's
runs enter it centred with the other hosts' prior, while ``gpunetsim train`` centres every prediction with the
all-host :data:`HOST_PRIOR` (the two differ by one host's weight in a median of seven).

Scored per dataset, before (band on the prediction) and after (band on the reference): the share of runs inside
the interval as the simulator applies it (widened to hold the prediction) and its width over the prediction.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from simulator.training.llm.host_prior import HOST_PRIOR, HostPrior
from validation.check_cli import run_command

DATA = Path(__file__).resolve().parent / "data"
HEADING = "### The host-issue floor of the datasheet interval (`validation.host_floor`)"
Runs = Mapping[str, Sequence[tuple[float, float, float]]]
"""Per dataset, every run's (measured, predicted, reference) seconds."""


def probe_files() -> list[Path]:
    """Every committed TP issue probe (one per host)."""
    return sorted(DATA.glob("*/tp_issue_world*.jsonl"))


@lru_cache(maxsize=None)
def block_issue_s(path: Path, tp: bool = False) -> float:
    """One block's forward issue time on the probe's host (s): ``issue_forward_s`` per block, the median over its
    launches and specs, of its unsharded (``tp = 1``) points, or with ``tp`` of its TP-sharded points with the
    identity stand-ins (no collectives, no sequence parallelism: the sharded block's own issue)."""
    from validation.issue_check import read_records
    records = [r for r in read_records([path]).records
               if (r.tp > 1 and not r.sp and not r.comm if tp else r.tp == 1)]
    return float(statistics.median(r.issue_forward_s / r.spec.layers for r in records))


def prior(leave_out: str = "") -> HostPrior:
    """The median block issue times of the probe hosts but the one in folder ``leave_out``."""
    paths = [p for p in probe_files() if p.parent.name != leave_out]
    return HostPrior(*(round(float(statistics.median(block_issue_s(p, tp) for p in paths)), 6) for tp in (False, True)),
                     f"median of {len(paths)} TP issue probe hosts" + (f" (without {leave_out})" if leave_out else ""))


def reference_s(predicted_s: float, floor_s: float, gpu: str) -> float:
    """What the datasheet band multiplies (simulator.training.iteration_bands.train_reference_s)."""
    from simulator.training.iteration_bands import train_reference_s
    from simulator.training.llm.compute import ComputeParams
    return train_reference_s(predicted_s, ComputeParams(), gpu, floor_s)


def _runs(records, prior_: HostPrior) -> list[tuple[float, float, float]]:
    from validation.llm_real import RealPredictor
    from validation.llm_records import group_runs
    pred = RealPredictor(records.runs[0].gpu, None)
    out = []
    for g in group_runs(records.runs):
        p = pred.iteration_s(g.first)
        out.append((g.median_s, p, reference_s(p, pred.floor_s(g.first, prior_), pred.gpu.name)))
    return out


def own_runs() -> dict[str, list[tuple[float, float, float]]]:
    """The own campaigns of the datasheet band (``llm_accuracy.datasheet_own_runs``' datasets) predicted with the
    datasheet sets, each with its reference; a probe host with the prior of the others."""
    from validation.issue_check import probe_tp_runs
    from validation.llm_blind import FOLDER, HELD_OUT_LEASE
    from validation.llm_real import CAMPAIGNS, ISSUE_CAMPAIGNS, OTHER_GPU_CAMPAIGNS
    from validation.llm_records import read_llm_records
    files = [(f, [DATA / f / n]) for f, n, *_ in (*CAMPAIGNS, *OTHER_GPU_CAMPAIGNS)]
    files += [(f, [DATA / f / f"fsdp_world{w}.jsonl" for w in (2, 4)]) for f in (FOLDER, HELD_OUT_LEASE)]
    out: dict[str, list[tuple[float, float, float]]] = {}
    for folder, paths in files:
        for path in paths:
            out.setdefault(folder, []).extend(_runs(read_llm_records([path]), prior(folder)))
    for folder, name, *_ in ISSUE_CAMPAIGNS:
        out[folder] = _runs(probe_tp_runs([DATA / folder / name]), prior(folder))
    return out


def sealed_runs() -> dict[str, list[tuple[float, float, float]]]:
    """Every sealed lease's LLM files (``validation.sealed_campaign``) predicted as :func:`own_runs`: in no band."""
    from validation import sealed_campaign as sc
    from validation.issue_check import probe_tp_runs
    from validation.llm_records import read_llm_records
    out: dict[str, list[tuple[float, float, float]]] = {}
    for c in sc.SEALED:
        for name in dict.fromkeys(n for _, n, _ in c.runs):
            path = c.llm / name
            if path.exists():
                records = probe_tp_runs([path]) if "issue" in name else read_llm_records([path])
                out[f"{c.llm.name}/{name}"] = _runs(records, prior(c.llm.name))
    return out


def public_runs(results: Mapping[str, Sequence[tuple[float, object]]]) -> dict[str, list[tuple[float, float, float]]]:
    """Selene's and vTrain's (measured, predicted, reference) from their datasheet ``TrainResult``s
    (``results``: per dataset, (measured s, result))."""
    return {k: [(m, r.iteration_s, reference_s(r.iteration_s, r.host_floor_s, r.gpu)) for m, r in v]  # type: ignore[attr-defined]
            for k, v in results.items()}


def log_ratios(runs: Runs, reference: bool) -> dict[str, list[float]]:
    """Per dataset log(measured / reference) (``reference``) or log(measured / predicted)."""
    return {k: [math.log(m / (ref if reference else p)) for m, p, ref in v] for k, v in runs.items()}


@dataclass(frozen=True)
class Score:
    """One dataset's runs against a datasheet band built without it."""

    dataset: str
    runs: int
    inside: int
    above: int              # runs measured above the interval
    width_pct: float        # median (high - low) / prediction, %
    low: float              # band, as ratios to its centre
    high: float


def score(name: str, runs: Sequence[tuple[float, float, float]], band_groups: Mapping[str, Sequence[float]],
          reference: bool) -> Score:
    """``runs`` against the band of ``band_groups`` (log ratios; ``name`` left out), centred on the reference or
    the prediction and widened to hold the prediction, as ``gpunetsim train`` applies it."""
    from simulator.training.iteration_bands import interval
    from validation.iteration_bands import LEVEL, weighted_quantiles
    q = weighted_quantiles({k: v for k, v in band_groups.items() if k != name and len(v)},
                           [(1 - LEVEL) / 2, 0.5, (1 + LEVEL) / 2])
    lo, hi = interval(1.0, {"log_ratio": q})
    inside = above = 0
    widths = []
    for m, p, ref in runs:
        centre = ref if reference else p
        a, b = min(centre * lo, p), max(centre * hi, p)
        inside += a * (1 - 1e-12) <= m <= b * (1 + 1e-12)
        above += m > b * (1 + 1e-12)
        widths.append((b - a) / p * 100)
    return Score(name, len(runs), inside, above, float(np.median(widths)), lo, hi)


def scores(band: Runs, held: Runs) -> dict[str, list[Score]]:
    """'before' / 'after': every dataset of ``band`` left out in turn, and every dataset of ``held`` (in no band)
    against the whole band."""
    out = {}
    for kind, reference in (("before", False), ("after", True)):
        groups = log_ratios(band, reference)
        out[kind] = [score(k, v, groups, reference) for k, v in {**band, **held}.items()]
    return out


def totals(rows: Sequence[Score], names: Sequence[str]) -> tuple[int, int, float]:
    """(runs inside, runs, median width % over runs) of the rows of datasets ``names``."""
    mine = [r for r in rows if r.dataset in names]
    widths = np.repeat([r.width_pct for r in mine], [r.runs for r in mine])
    return sum(r.inside for r in mine), sum(r.runs for r in mine), float(np.median(widths))


def section_lines(public: Runs, own: Runs | None = None, sealed: Runs | None = None) -> tuple[list[str], dict]:
    """The subsection and its figures ({'before'|'after': {'own'|'sealed'|'all': (inside, runs, width %)}})."""
    own = own_runs() if own is None else own
    sealed = sealed_runs() if sealed is None else sealed
    band = {**public, **own}
    rows = scores(band, sealed)
    sets = {"own": list(own), "sealed": list(sealed), "all own": list(own) + list(sealed), "public": list(public)}
    figs = {kind: {k: totals(rows[kind], names) for k, names in sets.items()} for kind in rows}
    p = prior()
    lines = [HEADING, "",
             "A datasheet prediction has no host time, so the small host-bound models of the own campaigns measured "
             "well above it and the datasheet band lay wholly above every prediction. `gpunetsim train` centres the "
             "datasheet band on the larger of the prediction and the iteration's host-issue floor (`host_floor_s` "
             "in `--json`: the busiest stage's passes issued at a prior block issue time, "
             f"`simulator.training.llm.host_prior`: {p.block_s * 1e3:.3f} ms per block forward, {p.tp_block_s * 1e3:.3f} "
             f"ms per TP-sharded one, the medians over the {len(probe_files())} committed TP issue probe hosts, "
             + ", ".join(f"{block_issue_s(f) * 1e3:.3f} / {block_issue_s(f, True) * 1e3:.3f}" for f in probe_files())
             + " ms), widened to hold the "
             "prediction; the band is learned on log(measured / that centre). The prediction is unchanged. Held out: "
             "each dataset against the band of the others, a probe host's runs with the other hosts' prior; the "
             "sealed leases' files are in no band and no prior. Width: the interval's (high - low) over the "
             "prediction, median over runs.", "",
             "| dataset | runs | before: inside | before: width % | after: band low / high x centre | "
             "after: inside | after: width % |", "|---|---|---|---|---|---|---|"]
    for b, a in zip(rows["before"], rows["after"]):
        lines.append(f"| {a.dataset} | {a.runs} | {b.inside} | {b.width_pct:.0f} | {a.low:.2f} / {a.high:.2f} | "
                     f"{a.inside} | {a.width_pct:.0f} |")
    words = []
    for k in ("own", "sealed", "all own", "public"):
        (bi, n, bw), (ai, _, aw) = figs["before"][k], figs["after"][k]
        words.append(f"{k} runs {bi}/{n} ({100 * bi / n:.0f}%) inside at a median width {bw:.0f}% -> {ai}/{n} "
                     f"({100 * ai / n:.0f}%) at {aw:.0f}%")
    mine = [r for r in rows["after"] if r.dataset in sets["all own"]]
    out, above = sum(r.runs - r.inside for r in mine), sum(r.above for r in mine)
    fsdp = sum(r.above for r in mine if "fsdp" in r.dataset or r.dataset.endswith("_fsdp"))
    lines += ["", "Before -> after: " + "; ".join(words) + f". Of the {out} own runs outside after, {above} lie above "
              f"the interval ({fsdp} of them in FSDP-only files). The floor counts the blocks' kernel launches only; "
              "collective calls and FSDP's hooks have no prior that carries between hosts (`validation.tp_host_path`, "
              "`validation.fsdp_host_carry`), so runs bound by those, host-bound FSDP above all, can still measure "
              "above the band's upper end.", ""]
    return lines, figs


def main(argv: Sequence[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m validation.host_floor", description=__doc__.splitlines()[0]
                            ).parse_args(argv)
    from validation.llm_accuracy import public_datasheet_results
    return run_command(lambda: print("\n".join(section_lines(public_runs(public_datasheet_results()))[0]).rstrip()))


if __name__ == "__main__":
    sys.exit(main())
