"""How FSDP1's host work carries from one lease to another: leave one lease out over the committed FSDP leases.

::

    python -m validation.fsdp_host_carry

FSDP1's own host work (``fsdp_unit_host_s``: its hooks per unit and pass, ``llm_real.HOST_KEYS``) is fitted on an
H200 campaign's FSDP and TP runs and carried to the lease predicted (``llm_real.HostWork``). For every committed
lease with FSDP runs and each world size it ran (the sealed 4x H100 lease ``h100x4_2026-11-27_llm`` is not among
them: it is scored in :mod:`validation.sealed_campaign` only):

* the per-unit host work the lease's own FSDP runs call for: ``fsdp_unit_host_s`` alone fitted on them (least
  squares on log ratios, the other host keys as carried). In sample: a yardstick for the rules below, never used
  to predict anything;
* what each carry rule gives that lease from *other* leases only, and the FSDP median error |predicted/measured - 1|
  over the lease's FSDP configurations with it. The rules: the same-world H200 campaign's value in units of the
  block issue time (``llm_real.measured_block_s`` of each host's compute fit; ``HostWork``'s rule), the same value in
  seconds (tried on branch h14host2, not adopted: see the report's paragraph), and the geometric mean over the other leases of the same world size, in seconds or in
  units of the block issue time.

Each lease's compute is fitted as the section that scores it fits it (campaigns on their single-GPU and TP
no-communication points; the FSDP-only H100 leases with the H100 issue probes and the copy probe's bandwidth; the
FSDP-only H200 lease with the H200 issue probes), and its host work comes from the campaign that section takes it
from (the 2-GPU H200 campaign and the 4-GPU one predict each other).
"""

from __future__ import annotations

import math
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from validation.llm_real import CAMPAIGNS, OTHER_GPU_CAMPAIGNS, HostWork, RealPredictor, measured_block_s
from validation.llm_records import LlmRecords, RunGroup, group_runs

DATA = Path(__file__).resolve().parent / "data"
UNIT = "fsdp_unit_host_s"
FSDP_HOST_KEYS = (UNIT, "fsdp_gather_host_s")
"""FSDP1's own host keys, which the rules in seconds carry unscaled."""
HELD_OUT = "h100x4_2026-11-27_fsdpissue2"
"""A 4x H100 lease measured (03:43-03:47 UTC) after rule 2 was chosen on the others and committed (h14host2
6a5137a, 03:38): the one lease here held out of that choice."""


@dataclass(frozen=True)
class Lease:
    """One committed FSDP file: its folder, file, world size, how its compute is fitted and whose host work it
    takes (an index in ``llm_real.CAMPAIGNS``)."""

    folder: str
    name: str
    world: int
    fit: str                 # "campaign", "blind" (H100, copy probe) or "held_out" (H200, no copy probe)
    host_from: int

    @property
    def label(self) -> str:
        return f"{self.folder} {self.world} GPUs"


LEASES = (Lease(CAMPAIGNS[0][0], CAMPAIGNS[0][1], 2, "campaign", 1),
          Lease(CAMPAIGNS[1][0], CAMPAIGNS[1][1], 4, "campaign", 0),
          *(Lease(f, n, 4, "campaign", i) for f, n, _, i in OTHER_GPU_CAMPAIGNS),
          *(Lease("h100x4_2026-11-26f", f"fsdp_world{w}.jsonl", w, "blind", w // 4) for w in (2, 4)),
          *(Lease("h200x4_2026-11-26_fsdp", f"fsdp_world{w}.jsonl", w, "held_out", w // 4) for w in (2, 4)),
          *(Lease(f, f"fsdpissue_world{w}.jsonl", w, "blind", w // 4)
            for f in ("h100x4_2026-11-27_fsdpissue", HELD_OUT) for w in (2, 4)))
"""Every committed lease with FSDP runs, per world size (the sealed lease excluded)."""


@dataclass(frozen=True)
class Scored:
    """One lease predicted: its compute model, its FSDP configurations and the host work carried to it."""

    lease: Lease
    pred: RealPredictor
    groups: tuple[RunGroup, ...]
    host: HostWork

    @property
    def host_block_s(self) -> float:
        """The block issue time ``HostWork`` carries in (``llm_real.measured_block_s``)."""
        return measured_block_s(self.pred.compute)  # type: ignore[arg-type]

    def with_host(self, unit_s: float, scaled: bool = False) -> RealPredictor:
        """The predictor with the carried host work, ``fsdp_unit_host_s`` set to ``unit_s``; ``scaled``: FSDP1's
        all-gather key in units of the block issue time too (``HostWork``'s rule), else in seconds."""
        values = self.host.on(self.pred.compute)  # type: ignore[arg-type]
        if not scaled:
            values.update({k: self.host.values[k] for k in FSDP_HOST_KEYS if k in values})
        values[UNIT] = unit_s
        return self.pred.with_compute(replace(self.pred.compute, **values))  # type: ignore[type-var]

    def errors(self, unit_s: float, scaled: bool = False) -> list[float]:
        """|predicted / measured - 1| in % of every FSDP configuration."""
        p = self.with_host(unit_s, scaled)
        return [abs(p.iteration_s(g.first) / g.median_s - 1) * 100 for g in self.groups]

    def needed_s(self) -> float:
        """``fsdp_unit_host_s`` fitted on this lease's own FSDP runs alone (in sample)."""
        from scipy.optimize import least_squares

        meas = np.array([g.median_s for g in self.groups])

        def residuals(x: np.ndarray) -> np.ndarray:
            p = self.with_host(float(x[0]) * 1e-3)
            return np.log(np.array([p.iteration_s(g.first) for g in self.groups]) / meas)

        return float(least_squares(residuals, [0.6], bounds=([0.0], [3.0]), diff_step=0.05).x[0]) * 1e-3


def _predictor(lease: Lease, records: LlmRecords) -> RealPredictor:
    from validation.llm_blind import blind_predictor, held_out_predictor
    from validation.llm_real import fitted_predictor

    if lease.fit == "blind":
        return blind_predictor(records)[0]
    if lease.fit == "held_out":
        return held_out_predictor(records, lease.world)[0]
    calibration = {f: c for f, _, c in CAMPAIGNS} | {f: c for f, _, c, _ in OTHER_GPU_CAMPAIGNS}
    return fitted_predictor(records, calibration[lease.folder])[0]


def score(leases: Sequence[Lease] = LEASES) -> list[Scored]:
    from validation.llm_real import host_work_from
    from validation.llm_records import read_llm_records

    hosts = [host_work_from([DATA / f / n], c)[0] for f, n, c in CAMPAIGNS]
    out = []
    for lease in leases:
        records = read_llm_records([DATA / lease.folder / lease.name])
        groups = tuple(g for g in group_runs(records.runs) if g.first.runner == "fsdp")
        out.append(Scored(lease, _predictor(lease, records), groups, hosts[lease.host_from]))
    return out


def _gmean(xs: Sequence[float]) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs))


Rule = Callable[[int, Sequence[Scored], Sequence[float]], float]


def _campaign(scaled: bool) -> Rule:
    def rule(i: int, scored: Sequence[Scored], needed: Sequence[float]) -> float:
        s = scored[i]
        return s.host.values[UNIT] * (s.host_block_s / s.host.host_block_s if scaled else 1.0)
    return rule


def _pooled(scaled: bool) -> Rule:
    def rule(i: int, scored: Sequence[Scored], needed: Sequence[float]) -> float:
        me = scored[i]
        others = [(s, n) for s, n in zip(scored, needed)
                  if s.lease.world == me.lease.world and s.lease.folder != me.lease.folder]
        if scaled:
            return _gmean([n / s.host_block_s for s, n in others]) * me.host_block_s
        return _gmean([n for _, n in others])
    return rule


RULES: tuple[tuple[str, bool, Rule], ...] = (
    ("H200 campaign, in units of the block issue time (HostWork)", True, _campaign(True)),
    ("H200 campaign, in seconds (tried, not adopted)", False, _campaign(False)),
    ("other leases of the world size, in seconds", False, _pooled(False)),
    ("other leases of the world size, in units of the block issue time", False, _pooled(True)))
"""(name, FSDP1's all-gather key scaled too, rule): each gives a lease's ``fsdp_unit_host_s`` from other leases."""


@dataclass(frozen=True)
class RuleResult:
    name: str
    unit_s: tuple[float, ...]          # per lease
    median_pct: tuple[float, ...]      # FSDP median error per lease
    rms_log: float                     # RMS of log(rule / needed) over the leases


def evaluate(scored: Sequence[Scored]) -> tuple[list[float], list[RuleResult]]:
    """The per-unit host work each lease needs (in sample) and every rule's leave-one-lease-out result."""
    needed = [s.needed_s() for s in scored]
    results = []
    for name, scaled, rule in RULES:
        units = [rule(i, scored, needed) for i in range(len(scored))]
        medians = [float(np.median(s.errors(u, scaled))) for s, u in zip(scored, units)]
        rms = math.sqrt(statistics.fmean(math.log(u / n) ** 2 for u, n in zip(units, needed)))
        results.append(RuleResult(name, tuple(units), tuple(medians), rms))
    return needed, results


def plain_issue_rows(scored: Sequence[Scored]) -> list[str]:
    """Leases with ``fsdp --issue`` records: the plain model's measured host issue time (forward and backward,
    behind a sleep) beside the model's host time for it from the lease's block issue time."""
    from validation.fsdp_issue import ONE_GPU, read_points

    rows = []
    for s in scored:
        if "fsdpissue" not in s.lease.name:
            continue
        for p in read_points([DATA / s.lease.folder / s.lease.name]):
            if p.what != ONE_GPU:
                continue
            host = sum(h for _, h, _ in s.pred.block_passes(p.spec, p.micro_batch, 1, False)) * p.spec.layers
            rows.append(f"| {s.lease.label} | h{p.spec.hidden} L{p.spec.layers} | {p.issue_s * 1e3:.2f} | "
                        f"{host * 1e3:.2f} | {p.issue_s / host:.2f} |")
    return rows


def markdown_lines(scored: Sequence[Scored] | None = None) -> tuple[list[str], dict[str, float]]:
    """The accuracy report's subsection and its figures (each rule's RMS log error)."""
    scored = list(scored or score())
    needed, results = evaluate(scored)
    head = " | ".join(f"rule {k + 1}: ms, FSDP median %" for k in range(len(results)))
    lines = ["### How FSDP1's host work carries between leases (`validation.fsdp_host_carry`)", "",
             "Produced by `python -m validation.fsdp_host_carry` (also part of `--only llm`). FSDP1's hooks cost the "
             "host `fsdp_unit_host_s` per unit and pass. For every committed lease with FSDP runs (the sealed 4x "
             "H100 lease is not among them) and world size: the value its own FSDP runs call for (fitted on them "
             "alone, in sample: a yardstick, never used to predict), and what each rule gives it from *other* "
             "leases only, with the FSDP median error that gives. Compute fitted as the section scoring the lease "
             "fits it; the other host keys as `HostWork` carries them. Rules: "
             + "; ".join(f"{k + 1}. {r.name}" for k, r in enumerate(results)) + ".", "",
             f"| lease | GPU | block issue ms (measured_block_s) | needed ms (in sample) | {head} |",
             "|---|---|---|---|" + "---|" * len(results)]
    for i, (s, n) in enumerate(zip(scored, needed)):
        gpu = "H200" if "h200" in s.lease.folder else "H100"
        lines.append(f"| {s.lease.label} | {gpu} | {s.host_block_s * 1e3:.3f} | {n * 1e3:.3f} | "
                     + " | ".join(f"{r.unit_s[i] * 1e3:.3f}, {r.median_pct[i]:.1f}" for r in results) + " |")
    lines.append("| RMS of log(rule / needed); leases with FSDP median <= 8% | | | | "
                 + " | ".join(f"{r.rms_log:.3f}; {sum(m <= 8.0 for m in r.median_pct)} of {len(scored)}"
                              for r in results) + " |")
    issue = plain_issue_rows(scored)
    old, new = results[0], results[1]
    by_folder: dict[str, list[float]] = {}
    for s, n in zip(scored, needed):
        by_folder.setdefault(s.lease.folder, []).append(n)
    within = [max(v) / min(v) - 1 for v in by_folder.values() if len(v) > 1]
    held = [i for i, x in enumerate(scored) if x.lease.folder == HELD_OUT]
    ratios = [float(r.split("|")[5]) for r in issue]
    lines += ["", f"The block issue time does not carry FSDP's hooks: scaled by it (rule 1) the carried value misses "
              f"what the leases need by {old.rms_log:.3f} in RMS log ratio, in seconds (rule 2) by {new.rms_log:.3f}; "
              f"pooled over the other leases the same holds ({results[3].rms_log:.3f} scaled, {results[2].rms_log:.3f} "
              f"in seconds). Rule 2 was chosen on the leases above `{HELD_OUT}` (their figures are leave-one-lease-out, "
              f"not blind); `{HELD_OUT}` was measured after that choice was made and is held out of it: "
              + " / ".join(f"{new.median_pct[i]:.1f}" for i in held) + "% with rule 2 ("
              + " / ".join(f"{old.median_pct[i]:.1f}" for i in held) + "% with rule 1) on "
              + " / ".join(str(scored[i].lease.world) for i in held) + " GPUs, missing 8% either way; on the sealed lease "
              "(a final check only, its table below) rule 2 does worse than rule 1 on the `llm4` FSDP runs, so neither "
              "lease left out of the choice confirms it and `HostWork` keeps rule 1 (session of 2026-11-27, stop 16). The needed "
              f"values differ by lease far more than the rules can follow ({min(needed) * 1e3:.2f}-"
              f"{max(needed) * 1e3:.2f} ms; on the leases that ran both, 2 and 4 GPUs {min(within) * 100:.0f}-"
              f"{max(within) * 100:.0f}% apart, 4 GPUs needing more): none of the probes these leases carry "
              "(single-GPU profiles, block issue time) measures the hooks' cost, so what is left is a per-lease host "
              "property no committed record carries. The leases with `fsdp --issue` records issue the plain model "
              f"within {(min(ratios) - 1) * 100:+.0f} to {(max(ratios) - 1) * 100:+.0f}% of what their block issue "
              "time gives (measured issue behind a sleep over the model's host time; the sleep inflates the "
              "measurement, so these are upper bounds) yet need more hook time than the H200 campaigns:", "",
              "| lease | spec | plain model issue ms (measured) | model's host time ms | ratio |",
              "|---|---|---|---|---|", *issue, ""]
    figs = {f"rule{k + 1}_rms_log": r.rms_log for k, r in enumerate(results)}
    return lines, figs


def main() -> int:
    print("\n".join(markdown_lines()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
