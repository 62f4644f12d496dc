"""Issue 10: is the ring ops' mid-size step (8-16 MiB below the 64-256 MiB line) inside the NCCL kernel or between
kernels? The kernel probe's per-call event time beside the NCCL kernels' own durations, against each one's line.

Reads ``validation/data/h100x2_2026-11-28_kprobe`` (validation.runners.kernel_probe, two device calls on 2x H100;
the folder's README says what ran). Per (variant, op, world, size), the fast level over the repetitions (the FAST_PCT
percentile, validation.bw_lease_spread, as validation.mid_step takes it) of:

* ``host``: the host's issue time per call (max over ranks);
* ``event``: the plain pass's CUDA-event time per call (max over ranks, as the collectives runner reports);
* ``kernel``: the profiled pass's NCCL kernel duration per call (CUPTI; mean over ranks);
* ``outside``: the profiled pass's event time less its kernel time per call (launch, stream gaps, events; per rank,
  mean over ranks);

and each of ``event`` and ``kernel`` less its own line through its 64, 128 and 256 MiB values
(validation.bw_signs.BIG_LINE_MIB; validation.bw_lines.fit_line). ``paced`` marks a size whose host issue takes at
least :data:`PACED_SHARE` of its event time: the host, not the GPU, sets that call's pace (the variants without
``_q``, up to 12-16 MiB on this lease's host); the ``_q`` variants (``queue_us`` > 0) queue each visit's calls behind
a GPU sleep, so none is paced there (their host time is issue only, ahead of the GPU).

What it shows (``python -m validation.kernel_probe``, about 2 s; session of 2026-11-28 stop 23, branch h10kprobe23):
the verdict line (:func:`verdict`) reads "At 16 MiB, 8 unpaced points run 5 us or more below their event line; their
kernel's distance below its own line is 92%-105% of it: the step lives inside the NCCL kernel", the two tree
variants not stepped. The figures are at the end of the folder's README and in validation.bw_signs's docstring.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from simulator.core.errors import InputError
from validation.bw_lease_spread import FAST_PCT
from validation.bw_lines import Line, fit_line
from validation.bw_signs import BIG_LINE_MIB
from validation.data import DATA_DIR
from validation.mid_step import MIB
from validation.runners.records import read_measurement_records
from validation.slope_probe import Key     # (variant, op, world)

FOLDER = DATA_DIR / "h100x2_2026-11-28_kprobe"
PACED_SHARE = 0.9
"""A size counts as host-paced where the host's issue per call is at least this share of the event time per call."""
STEP_MIB = 16
"""The size whose distances :func:`step_rows` sets side by side (the step's depth: validation.mid_step)."""

@dataclass(frozen=True)
class ProbeLevel:
    """One point's fast levels over its repetitions (seconds per call; see the module docstring)."""

    host_s: float
    event_s: float
    kernel_s: float | None
    outside_s: float | None
    reps: int
    queued: bool                 # the calls were queued behind a GPU sleep (--queue-us): never host-paced


def _fast(xs: Sequence[float]) -> float | None:
    return float(np.percentile(xs, FAST_PCT)) if xs else None


def level(records: Sequence[Mapping]) -> ProbeLevel:
    """The fast levels of one point's ``kind:"kernel_probe"`` records (one per repetition; records written before
    ``--queue-us`` existed have no ``queue_us``: not queued)."""
    matched = [r for r in records if r["kernels_matched"]]
    return ProbeLevel(
        host_s=float(np.percentile([max(r["rank_host_s"]) for r in records], FAST_PCT)),
        event_s=float(np.percentile([max(r["rank_event_s"]) for r in records], FAST_PCT)),
        kernel_s=_fast([statistics.fmean(r["rank_kernel_s"]) for r in matched]),
        outside_s=_fast([statistics.fmean(e - k for e, k in zip(r["rank_prof_event_s"], r["rank_kernel_s"]))
                         for r in matched]),
        reps=len(records), queued=any(r.get("queue_us") for r in records))


def read_probe(paths: Iterable[Path]) -> dict[Key, dict[int, ProbeLevel]]:
    """(variant, op, world) -> size (bytes) -> :class:`ProbeLevel` of the probe files ``paths``."""
    by: dict[tuple[str, str, int, int], list[dict]] = {}
    for path in paths:
        for number, r in read_measurement_records(path):
            if r.get("kind") != "kernel_probe":
                continue
            try:
                key = (str(r["variant"]), str(r["op"]), int(r["world"]), int(r["bytes"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise InputError(f"a kernel_probe record lacks {exc}", source=str(path), field=f"line {number}",
                                 value=None) from None
            by.setdefault(key, []).append(r)
    out: dict[Key, dict[int, ProbeLevel]] = {}
    for (variant, op, world, size), recs in sorted(by.items()):
        out.setdefault((variant, op, world), {})[size] = level(recs)
    return out


@dataclass(frozen=True)
class ProbeRow:
    """One size of one (variant, op, world): its levels and each one's distance from its 64-256 MiB line (s)."""

    size_bytes: int
    level: ProbeLevel
    event_below_s: float
    kernel_below_s: float | None

    @property
    def paced(self) -> bool:
        return not self.level.queued and self.level.host_s >= PACED_SHARE * self.level.event_s


@dataclass(frozen=True)
class ProbeLines:
    """One (variant, op, world)'s event and kernel lines through 64-256 MiB and every size's row."""

    key: Key
    event_line: Line
    kernel_line: Line | None
    rows: tuple[ProbeRow, ...]

    def at_mib(self, mib: int) -> ProbeRow | None:
        return next((r for r in self.rows if r.size_bytes == mib * MIB), None)


def probe_lines(levels: Mapping[Key, Mapping[int, ProbeLevel]]) -> list[ProbeLines]:
    """:class:`ProbeLines` of every key whose levels hold every size of BIG_LINE_MIB."""
    out = []
    for key, by in sorted(levels.items()):
        if not all(m * MIB in by for m in BIG_LINE_MIB):
            continue
        event_line = fit_line({s: lv.event_s for s, lv in by.items()}, BIG_LINE_MIB)
        kernels = {s: lv.kernel_s for s, lv in by.items() if lv.kernel_s is not None}
        kernel_line = fit_line(kernels, BIG_LINE_MIB) if all(m * MIB in kernels for m in BIG_LINE_MIB) else None
        assert event_line is not None
        rows = tuple(ProbeRow(s, lv, lv.event_s - event_line.at(s),
                              None if kernel_line is None or lv.kernel_s is None else lv.kernel_s - kernel_line.at(s))
                     for s, lv in sorted(by.items()))
        out.append(ProbeLines(key, event_line, kernel_line, rows))
    return out


def _us(v: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v * 1e6)


def _line(line: Line | None) -> str:
    return "-" if line is None else f"{line.intercept_s * 1e6:.1f} + {line.slope_s_per_byte * 1e6 * MIB:.3f}"


def table(lines: Sequence[ProbeLines]) -> list[str]:
    """Every size of every (variant, op, world): levels and distances from the lines (us)."""
    out = ["| variant | op | GPUs | MiB | host | event | kernel | outside | event - line | kernel - line | paced |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for pl in lines:
        v, op, n = pl.key
        for r in pl.rows:
            lv = r.level
            out.append(f"| {v} | {op} | {n} | {r.size_bytes / MIB:.0f} | {_us(lv.host_s)} | {_us(lv.event_s)} | "
                       f"{_us(lv.kernel_s)} | {_us(lv.outside_s)} | {_us(r.event_below_s, '{:+.1f}')} | "
                       f"{_us(r.kernel_below_s, '{:+.1f}')} | {'yes' if r.paced else ''} |")
    return out


def step_rows(lines: Sequence[ProbeLines], mib: int = STEP_MIB) -> list[str]:
    """Per (variant, op, world): both lines and the distances at ``mib`` MiB, event against kernel."""
    out = [f"| variant | op | GPUs | event line us + us/MiB | kernel line us + us/MiB | {mib} MiB event - line | "
           f"kernel - line | outside, {mib} MiB / 64-256 MiB | paced at {mib} MiB |",
           "|---|---|---|---|---|---|---|---|---|"]
    for pl in lines:
        r = pl.at_mib(mib)
        if r is None:
            continue
        big = [x.level.outside_s for x in pl.rows if x.size_bytes >= BIG_LINE_MIB[0] * MIB
               and x.level.outside_s is not None]
        v, op, n = pl.key
        out.append(f"| {v} | {op} | {n} | {_line(pl.event_line)} | {_line(pl.kernel_line)} | "
                   f"{_us(r.event_below_s, '{:+.1f}')} | {_us(r.kernel_below_s, '{:+.1f}')} | "
                   f"{_us(r.level.outside_s)} / {_us(_fast(big))} | {'yes' if r.paced else 'no'} |")
    return out


STEP_DEEP_S = 5e-6
"""A point's event time this far below its line or more counts as stepped in :func:`verdict` (the fast levels of two
passes differ by 2-6 us at 16-64 MiB: validation.mid_step.END_WITHIN_S)."""


def verdict(lines: Sequence[ProbeLines], mib: int = STEP_MIB) -> str:
    """Where the step at ``mib`` MiB lives, from the points the host does not pace there: the share of the event
    time's distance below its line that the kernel's distance below its own line makes."""
    shares, flat = [], []
    for pl in lines:
        r = pl.at_mib(mib)
        if r is None or r.paced or r.kernel_below_s is None:
            continue
        if r.event_below_s <= -STEP_DEEP_S:
            shares.append((r.kernel_below_s / r.event_below_s, pl.key))
        else:
            flat.append(pl.key)
    if not shares:
        return f"No unpaced point runs {STEP_DEEP_S * 1e6:.0f} us or more below its event line at {mib} MiB."
    lo, hi = min(s for s, _ in shares), max(s for s, _ in shares)
    where = "inside the NCCL kernel" if lo >= 0.75 else "outside the kernel" if hi <= 0.25 else "partly in each"
    return (f"At {mib} MiB, {len(shares)} unpaced points run {STEP_DEEP_S * 1e6:.0f} us or more below their event "
            f"line; their kernel's distance below its own line is {lo:.0%}-{hi:.0%} of it: the step lives {where}. "
            f"Not stepped ({len(flat)}): " + (", ".join("/".join(map(str, k[:2])) for k in flat) or "-") + ".")


def main(argv: list[str] | None = None) -> int:
    folder = Path(argv[0]) if argv else FOLDER
    lines = probe_lines(read_probe(sorted(folder.glob("kprobe_world*.jsonl"))))
    print(f"**{folder.name}**: at {STEP_MIB} MiB, the CUDA-event time and the NCCL kernel duration per call against "
          "each one's 64-256 MiB line (us; negative: below)\n")
    print("\n".join(step_rows(lines)))
    print("\n" + verdict(lines))
    print(f"\nEvery size (us per call; fast levels: the {FAST_PCT:.0f}th percentile of the repetitions)\n")
    print("\n".join(table(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
