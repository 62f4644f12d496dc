"""Issue 10: the mid-size step (calls up to 16 MiB run 10-35 us below the 64-256 MiB line) by variant, world size
and size, in every committed dataset that has the variants: which NCCL mechanism could set it, and which cannot.

validation.bw_signs found all_reduce's 16 MiB fast level 12-21 us below the line through its 64-256 MiB fast levels
on 2 GPUs (10-16 on 4) on every lease, and a straight 2-GPU fit that meets it by lowering its intercept. This module
sets each (op, variant, world size)'s fast levels (validation.slope_probe.levels: the FAST_PCT percentile of a
size's repetitions, the sources' launches pooled) against that line and prints the distance (measured minus line,
us) at every size up to :data:`UPTO_MIB`, for

* section 3's pooled 4x H200 campaigns (every variant: NCCL_ALGO / NCCL_PROTO pinned, NCCL_P2P_DISABLE, ...);
* the slope probes (validation.slope_probe: NCCL_BUFFSIZE 1 / 16 MiB, 12 channels, 50 calls a repetition,
  expandable segments, pinned Ring / Simple / 24 channels);
* the quarter-octave lease ``h200x4_2026-11-27i_fine`` (4-256 MiB, 2 and 4 H200s: where the step starts and ends).

What it shows (``python -m validation.mid_step``; session of 2026-11-28 stop 23, branch h10p90_23) is in
validation.bw_signs's docstring, with NCCL's code that each candidate mechanism was checked against.

::

    python -m validation.mid_step      # the three tables (about 10 s)
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Mapping, Sequence

from validation.bw_lines import Line, fit_line
from validation.bw_signs import BIG_LINE_MIB
from validation.slope_probe import Key

MIB = 1 << 20
UPTO_MIB = 96
"""Largest size whose distance from the line :func:`step_rows` reports (MiB)."""
FINE = "h200x4_2026-11-27i_fine"
"""The quarter-octave lease (validation/data)."""
POOLED_MIB = (1, 2, 4, 8, 16, 32)
"""Sizes (MiB) of the pooled campaigns' table (their ladder is powers of two)."""
PROBE_MIB = (8, 11, 16, 23, 32, 45)
"""Sizes (MiB, rounded) of the slope probes' table (their ladder is steps of sqrt(2) from 8 MiB)."""

END_WITHIN_S = 5e-6
"""How close to the line a size counts as on it (s): the fast levels of two passes of one variant differ by up to
2.5-2.9% at 16-64 MiB (validation.proto_probe), 2-6 us there."""


@dataclass(frozen=True)
class StepRow:
    """One (variant, op, world)'s 64-256 MiB line and each smaller size's distance from it (s; negative: below)."""

    variant: str
    op: str
    world: int
    line: Line
    below_s: dict[int, float]        # size (bytes) -> fast level - line at that size

    def at_mib(self, mib: int) -> float | None:
        """The distance at the size nearest ``mib`` MiB within 3% (the probes' sqrt(2) ladder rounds), else None."""
        near = [s for s in self.below_s if abs(s / MIB - mib) <= 0.03 * mib]
        return self.below_s[min(near, key=lambda s: abs(s / MIB - mib))] if near else None

    def end_bytes(self, within_s: float = END_WITHIN_S) -> int | None:
        """The smallest size from which every measured size up to :data:`UPTO_MIB` lies within ``within_s`` of the
        line (where the step has ended), None if the largest does not."""
        end = None
        for s in sorted(self.below_s, reverse=True):
            if abs(self.below_s[s]) > within_s:
                break
            end = s
        return end


def step_rows(levels: Mapping[Key, Mapping[int, float]], upto_mib: int = UPTO_MIB) -> list[StepRow]:
    """:class:`StepRow` of every key of ``levels`` (size in bytes -> fast level, s) that has the 64, 128 and 256 MiB
    sizes of validation.bw_signs.BIG_LINE_MIB."""
    out = []
    for (variant, op, world), times in sorted(levels.items()):
        if not all(m * MIB in times for m in BIG_LINE_MIB):
            continue
        line = fit_line(times, BIG_LINE_MIB)
        out.append(StepRow(variant, op, world, line,
                           {s: t - line.at(s) for s, t in sorted(times.items()) if s <= upto_mib * MIB}))
    return out


def _us(v: float | None) -> str:
    return "-" if v is None else f"{v * 1e6:+.0f}"


def table(rows: Sequence[StepRow], sizes_mib: Sequence[int]) -> list[str]:
    """One line per row: the line, the distance at each of ``sizes_mib`` and where the step ends."""
    out = ["| variant | op | GPUs | 64-256 MiB line us + us/MiB | " + " | ".join(f"{m} MiB" for m in sizes_mib)
           + f" | within {END_WITHIN_S * 1e6:.0f} us from |", "|---|---|---|---|" + "---|" * (len(sizes_mib) + 1)]
    for r in rows:
        end = r.end_bytes()
        out.append(f"| {r.variant} | {r.op} | {r.world} | {r.line.intercept_s * 1e6:.1f} + "
                   f"{r.line.slope_s_per_byte * 1e6 * MIB:.3f} | "
                   + " | ".join(_us(r.at_mib(m)) for m in sizes_mib)
                   + f" | {'-' if end is None else f'{end / MIB:.0f} MiB'} |")
    return out


def fine_table(rows: Sequence[StepRow]) -> list[str]:
    """Every size of the quarter-octave lease: S, a rank's share S / n, and the distance on each world size."""
    by = {(r.op, r.world): r for r in rows}
    out = []
    for op in sorted({r.op for r in rows}):
        pair = [by.get((op, n)) for n in (2, 4)]
        sizes = sorted({s for r in pair if r for s in r.below_s})
        out += [f"\n{op}:\n", "| MiB | 2 GPUs: S/2 MiB | us | 4 GPUs: S/4 MiB | us |", "|---|---|---|---|---|"]
        for s in sizes:
            cells = " | ".join(f"{s / MIB / n:.1f} | {_us(r.below_s.get(s)) if r else '-'}"
                               for n, r in zip((2, 4), pair))
            out.append(f"| {s / MIB:.1f} | {cells} |")
    return out


def _levels(points) -> dict[Key, dict[int, float]]:
    """validation.slope_probe.levels with sizes within 16 bytes of a whole MiB counted as it (the quarter-octave
    lease's counts of float32 words end 4 bytes short of 64, 128 and 256 MiB; validation.peer_probe.mib_key)."""
    from validation.peer_probe import mib_key
    from validation.slope_probe import levels     # (variant, op, world) -> size -> fast level
    return {k: {mib_key(s): t for s, t in by.items()} for k, by in levels(points).items()}


def main(argv: list[str] | None = None) -> int:
    from validation import rank_model_error, slope_probe
    from validation.accuracy import H200
    from validation.data import DATA_DIR
    pooled = rank_model_error.pooled(H200)
    print("**Section 3's pooled 4x H200 campaigns**: distance of each size's fast level from its variant's 64-256 MiB "
          "line (us; negative: below)\n")
    print("\n".join(table(step_rows(_levels([q.point for n in pooled for q in pooled[n]])), POOLED_MIB)))
    for name in slope_probe.DATASETS:
        points = [p for ps in slope_probe.load(os.path.join(DATA_DIR, name)).values() for p in ps]
        print(f"\n**Slope probe `{name}`** (all_reduce and broadcast, every variant)\n")
        print("\n".join(table(step_rows(_levels(points)), PROBE_MIB)))
    fine = [p for ps in slope_probe.load(os.path.join(DATA_DIR, FINE), stem="fine").values() for p in ps]
    print(f"\n**`{FINE}`** (quarter-octave sizes; distance from the 64-256 MiB line, us)")
    print("\n".join(fine_table([r for r in step_rows(_levels(fine)) if r.op == "all_reduce"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
