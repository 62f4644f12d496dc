"""Alternatives to section 1b's corpus groups that were checked and not adopted, re-run on demand.

Each check changes one thing of validation.corpus (which keys a group fits, how datasets are grouped,
or a datasheet value) and runs the same held-out figure: every dataset predicted from a fit that left
it and its siblings out, a group's fit counted only where it beats that check's datasheet both ways.
What a check would have to beat is the report's own figure (first row). None is adopted; the rows keep
the evidence so that a later change can be judged against it::

    python -m validation.corpus_checks            # every check (about a minute)
    python -m validation.corpus_checks --only efa-per-step
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from simulator.collectives.params import Parameters
from validation import corpus
from validation.corpus import GROUPS, Group, Part

_RING, _NVLS_TREE = "hop_latency_s.net.ring.simple", "hop_latency_s.net.nvls_tree.simple"


def _with_keys(changes: dict[str, tuple[str, ...]]) -> tuple[Group, ...]:
    """The report's groups with the named groups fitting other keys."""
    return tuple(replace(g, keys=changes.get(g.name, g.keys)) for g in GROUPS)


def _pooled_nvlink() -> tuple[Group, ...]:
    nv = Group("nvlink", "one server, NVLink/NVSwitch, every GPU generation",
               ("link_efficiency.nvlink", "nvls_efficiency.sm90", "nvls_efficiency.sm100", "nvls_step_overhead_s",
                "nvls_fill_rounds"), False)
    return (nv,) + tuple(g for g in GROUPS if not g.name.startswith("nvlink"))


@dataclass(frozen=True)
class Check:
    name: str
    what: str
    groups: Callable[[], Sequence[Group]] = lambda: GROUPS
    regroup: Callable[[str], str] = lambda group: group
    datasheet: dict[str, float] | None = None      # datasheet values changed for this check


CHECKS = (
    Check("report", "section 1b as shipped"),
    Check("pooled-nvlink", "one NVLink group over Ampere, Hopper and Blackwell (ring efficiency shared, NVLS "
          "efficiency per generation) instead of one group per generation", _pooled_nvlink,
          lambda g: "nvlink" if g.startswith("nvlink") else g),
    Check("efa-per-step", "EFA's extra cost per network step of a ring and of NVLS-Tree instead of per call",
          lambda: _with_keys({"efa": (_RING, _NVLS_TREE)})),
    Check("net-efficiency-fitted", "each fabric group (ib-roce, efa, tcpx) also fits link_efficiency.net",
          lambda: _with_keys({g.name: g.keys + ("link_efficiency.net",) for g in GROUPS
                              if g.name in ("ib-roce", "efa", "tcpx")})),
    Check("nccl-nic-speed", "datasheet link_efficiency.net 0.96 instead of 0.92: NCCL's per-NIC network speed "
          "step (48, 24, 12 GB/s for 400G, 200G, 100G NICs) over the NIC's rate", datasheet={"link_efficiency.net": 0.96}),
)
BY_NAME = {c.name: c for c in CHECKS}


@dataclass(frozen=True)
class Outcome:
    check: Check
    median_pct: float           # held-out median |error| at >= 16 MiB over every scored point
    within: int                 # points within 5%
    points: int
    per_group: dict[str, tuple[int, int, bool]]     # group -> (within 5%, points, adopted)


def run(check: Check, parts: Sequence[Part]) -> Outcome:
    """The held-out figure of section 1b under ``check``."""
    parts = [replace(p, group=check.regroup(p.group)) for p in parts]
    datasheet = Parameters().with_values(check.datasheet) if check.datasheet else None
    results = corpus.leave_one_dataset_out(parts, check.groups(), datasheet)
    _, held = corpus.uncalibrated_errors(results)
    per_group = {}
    for r in results:
        errs = np.concatenate([h.held_out if r.adopted else h.datasheet for h in r.held])
        per_group[r.group.name] = (int(np.sum(errs <= 0.05)), len(errs), r.adopted)
    return Outcome(check, float(np.median(held) * 100), int(np.sum(held <= 0.05)), len(held), per_group)


def table(outcomes: Sequence[Outcome]) -> list[str]:
    lines = ["| check | what changes | held-out median err % | within 5% | per group: within 5% / points (adopted *) |",
             "|---|---|---|---|---|"]
    for o in outcomes:
        groups = ", ".join(f"{g} {k}/{n}{'*' if a else ''}" for g, (k, n, a) in o.per_group.items())
        lines.append(f"| {o.check.name} | {o.check.what} | {o.median_pct:.2f} | {o.within} of {o.points} | {groups} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.corpus_checks", description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=[c.name for c in CHECKS], action="append",
                   help="run this check (repeatable); the report's row is always first")
    a = p.parse_args(argv)
    parts = corpus.corpus_parts(Path(__file__).resolve().parent / "data")
    names = ["report"] + [n for n in (a.only or BY_NAME) if n != "report"]
    print("\n".join(table([run(BY_NAME[n], parts) for n in names])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
