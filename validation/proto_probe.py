"""Issue 10's protocol probe: which algorithm, protocol and channel count NCCL runs the ring ops at 8-64 MiB on 2 and
4 GPUs, whether gpunetsim's tuner picks the same, and what pinning each one changes.

The >= 16 MiB p90 of a 2 -> 4 GPU prediction sits on the 16 MiB points (validation.bw_residuals). One suspicion was
that NCCL switches protocol or channel count near there on 4 GPUs and the tuner does not. The probe (``bash
validation/scripts/gpu_campaign.sh proto OUT``, dataset ``h200x4_2026-11-27_proto``) runs all_reduce, all_gather and
reduce_scatter from 8 to 64 MiB in steps of sqrt(2) on 4 and 2 GPUs of one lease, once per variant: default, Ring +
Simple, Ring + LL128, 12 and 32 channels (NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS). The first pass logs every call's
choice (NCCL_DEBUG=INFO, folded into counts: ``proto_nccl_<variant>_w<n>.txt``); the second has no logging (4 GPUs
only: the lease's time ran out before its 2-GPU launches). This module prints:

* :func:`choice_rows`: NCCL's choice per op, size and world size (every logged call agrees) beside the tuner's
  (simulator.collectives.nccl_model through the closed form on ``hgx-h200`` with NVLS off), and whether each pin held;
* :func:`pin_rows`: every pinned variant's fast level (FAST_PCT percentile of its repetitions) over the default's, at
  the sizes every variant measured, with the gap between the two 4-GPU passes of one variant as the noise scale;
* :func:`slow_rows`: the share of repetitions more than validation.bw_residuals.SLOW above their point's fast level
  and what they lost in milliseconds (a fixed stall, or a share of the call);
* :func:`line_rows`: the line through the 16 and 32 MiB fast levels per op and world size (default and Ring + Simple
  pooled: the same choice), beside the datasheet model's growth of the ring's GPU latency from 2 to 4 GPUs.

What it showed (4x H200 NV18, NCCL 2.28.9, 2026-11-27; the dataset's README.md has the tables):

* NCCL runs Ring / Simple on 24 channels at every point on 2 GPUs and at every point but one on 4 (all three ops,
  8-64 MiB); the one other choice is all_reduce at 8 MiB on 4 GPUs: Ring / LL128 on 24 channels. The tuner picks the
  same pair at all 42 points, and every pin held. Nothing switches at 16 MiB: the 4-GPU 16 MiB points run what they
  run on 2 GPUs. The committed logs say the same: the H100 probe ``h100x4_2026-11-27_bwfine`` (``nccl_bw_w{2,3,4}.*.log``,
  default launches, 2-128 MiB) runs Simple on 24 channels at 8-64 MiB but all_reduce 8 MiB on 4 GPUs (LL128); the
  4x H200 campaigns' INFO logs (``nccl_w{n}.*.log``) stop at 256 KiB, but the tuning table they print is the one
  simulator.collectives.nccl_model rebuilds (tests/test_nccl_table.py), so the tuner's choice is NCCL's there too.
* Pinning Ring + Simple (the default's choice) moves no point from 16 MiB up by more than 2.6% (11.3 MiB: up to
  4.9%), within the gap between the two 4-GPU passes of one variant (up to 2.9% there). LL128 is slower than Simple from 16 MiB up on both world sizes wherever the
  size is aligned (64 MiB, 4 / 2 GPUs: all_reduce +9.9 / +9.1%, reduce_scatter +9.5 / +13.7%, all_gather +5.8 /
  +8.0%; all_reduce 16 MiB on 4 GPUs +10.8%), faster only where NCCL already picks it (all_reduce 8 MiB on 4 GPUs)
  or on sizes whose per-rank share is not 16-byte aligned. A protocol switch would make the 16 MiB points slower.
* Channels: 12 run 13-38% slower than 24 at the aligned 16-64 MiB points, 32 up to 7% faster (4-GPU all_reduce:
  within 2%), on both world sizes: the rings are
  channel-bound (NCCL's search finds 12, duplicated to 24), but the count is 24 on 2 and on 4 GPUs, so it moves
  nothing between them.
* Sizes whose per-rank share is not a multiple of 16 bytes (all_gather / reduce_scatter 11.3 and 22.6 MiB on 4 GPUs,
  11.3 and 45.3 MiB on 2) run Simple up to 1.75x slower per byte than their aligned neighbours (all_gather 11.3 MiB on
  4 GPUs: 80.9 us, 16 MiB: 65.3 us); LL128 and 32 channels lose less there. The campaigns' power-of-two sizes never
  meet it.
* Slow repetitions: 8-16% of the probe's repetitions (40 calls each) run more than 10% above their fast level, with
  and without the INFO logging, and what each loses is a stall of ~4 ms (0.2-10) whatever the size and variant.
* From 2 to 4 GPUs the 16-32 MiB lines' intercepts grow by 2-7 us (all_reduce +5.7, all_gather +6.8, reduce_scatter
  +2.1) and their slopes by 9-23%, where the model's ring adds NCCL's 3.4 us per step for the 4 (all_reduce) or 2
  more steps (+13.6 / +6.8 us): the model's 4-GPU 16 MiB all_reduce runs +11-13% above its fast level on every
  lease for latency it adds, not for a protocol or channel choice.

Tried from it and not kept (branch h10big20, session of 2026-11-27 stop 20, baseline main 972db1b, ``python -m
validation.bw_residuals --prior hop_latency_s.nvlink.ring.simple=VALUE``): the ring's Simple step latency over
NVLink (a prior: 2-GPU points cannot determine it) at what the probe's intercepts give per added step, 14.6 us over
8 added steps = 1.8 us, beside 1.5 and 2.4 us. >= 16 MiB median / p90, baseline 3.4 us -> 1.8 / 1.5 / 2.4 us:
pooled 4x H200 2.3 / 11.5 -> 2.5 / 9.8, 2.6 / 9.7, 2.3 / 9.5%; lat3 2.1 / 8.2 -> 2.6 / 8.8, 2.7 / 8.9, 2.3 / 8.4;
sealed leases (h100x4 27, h200x4 27, 27b, h100x4 27c, h200x4 27d, 27e) p90 12.1/8.9/13.5/5.9/9.4/10.6 ->
11.1/10.3/11.5/6.9/10.4/8.8 (1.8 us), 11.6/11.0/11.2/6.6/10.6/9.3 (1.5), 10.7/9.5/11.7/6.4/10.1/8.0 (2.4); sealed
medians 2.1/3.2/1.9/2.2/2.0/2.2 -> 2.5/4.1/2.5/2.1/2.4/2.7 (1.8 us). Each value lowers the p90 on 4 of the 8 leases
(pooled, h100x4 27, 27b, 27e) and raises it on the other 4 (lat3, h200x4 27, 27c, 27d), as
validation.bw_residuals foretold: where a lease's 16 MiB medians sit on slow repetitions, a lower latency moves the
prediction further below them. None was kept.

::

    python -m validation.proto_probe [FOLDER]   # default: the shipped probe
"""

from __future__ import annotations

import glob
import os
import statistics
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np

from simulator.core.errors import InputError
from simulator.collectives.alignment import ALIGN_BYTES
from validation.bw_lease_spread import FAST_PCT
from validation.bw_residuals import SLOW
from validation.parsers import NCCL_CALL_LINE, NCCL_OP_NAMES, CollMeasurement
from validation import slope_probe

DATASET = "h200x4_2026-11-27_proto"
"""The probe (4x H200, 2026-11-27): default, Ring + Simple, Ring + LL128, 12 and 32 channels on 4 and 2 GPUs."""
BASE = "default"
"""The variant every pin is compared with."""
PINS = {"simple": ("RING", "SIMPLE", None), "ll128": ("RING", "LL128", None), "ch12": (None, None, 12),
        "ch32": (None, None, 32)}
"""What each pinned variant asks NCCL for: (algorithm, protocol, channels) as NCCL logs them; None: not pinned."""
TOPOLOGY = "hgx-h200"
"""The preset of the probe's machine (4 H200s, NVLink between every pair)."""
GATHER_LIKE = ("all_gather", "reduce_scatter")
"""Ops whose NCCL log line counts one rank's share, and whose share's alignment the probe's sizes vary."""
LINE_MIB = (16, 32)
"""The two sizes :func:`line_rows` draws its line through (powers of two: aligned on every op)."""
US = 1e6


@dataclass(frozen=True)
class Choice:
    """NCCL's choice for one op and size in one launch, from its per-call INFO lines (every call agreed)."""

    variant: str
    world: int
    op: str
    size_bytes: int     # nccl-tests' convention: the whole gathered buffer for the gather-like ops
    algo: str
    proto: str
    channels: int
    calls: int


def read_choices(folder: str | os.PathLike[str]) -> list[Choice]:
    """Every ``proto_nccl_<variant>_w<n>.txt`` of ``folder`` (lines ``COUNT  <NCCL INFO line>``): one :class:`Choice`
    per op and size that calls of the measured sizes (4 MiB and up) made. Raises InputError where the calls of one
    op and size disagree (the probe's reading assumes one choice per point)."""
    out: list[Choice] = []
    for path in sorted(glob.glob(os.path.join(folder, "proto_nccl_*_w*.txt"))):
        stem = os.path.basename(path).removeprefix("proto_nccl_").removesuffix(".txt")
        variant, _, w = stem.rpartition("_w")
        if not (variant and w.isdigit()):
            raise InputError("expected a name proto_nccl_<variant>_w<GPUs>.txt", source=path, field="file name",
                             value=os.path.basename(path))
        world = int(w)
        seen: dict[tuple[str, int], Choice] = {}
        for line in open(path, encoding="utf-8", errors="replace"):
            m = NCCL_CALL_LINE.search(line)
            op = NCCL_OP_NAMES.get(m.group(1)) if m else None
            if op is None:
                continue
            size = int(m.group(2)) * (world if op in GATHER_LIKE else 1)
            if size < 4 << 20:
                continue
            head = line.split()[0]
            c = Choice(variant, world, op, size, m.group(3), m.group(4), int(m.group(6)) - int(m.group(5)) + 1,
                       int(head) if head.isdigit() else 1)
            old = seen.get((op, size))
            if old is not None and (old.algo, old.proto, old.channels) != (c.algo, c.proto, c.channels):
                raise InputError(f"NCCL chose {old.algo}/{old.proto}/{old.channels} and {c.algo}/{c.proto}/"
                                 f"{c.channels} for one point", source=path, field=f"{op} {size} B",
                                 value=line.strip())
            seen[(op, size)] = c if old is None else Choice(*[getattr(c, f) for f in Choice.__dataclass_fields__
                                                              if f != "calls"], calls=old.calls + c.calls)
        out += seen.values()
    return out


@lru_cache(maxsize=None)
def _predictor():
    from simulator.collectives.params import Parameters
    from validation.compare import Predictor, Topo
    return Predictor(Topo(TOPOLOGY), Parameters())


def tuner_choice(world: int, op: str, size_bytes: int) -> tuple[str, str]:
    """(algorithm, protocol) gpunetsim's tuner picks on the probe's machine, NVLS off as in every launch."""
    _, algo, proto = _predictor().model(world, None, False).best(op, size_bytes)
    return algo, proto


def model_latency_growth_s(op: str) -> float:
    """The datasheet model's ring / Simple GPU latency (base + steps x hop) on 4 GPUs minus on 2."""
    return (_predictor().model(4, None, False).shape(op, "ring", "simple").plan.latency_s
            - _predictor().model(2, None, False).shape(op, "ring", "simple").plan.latency_s)


def pin_held(c: Choice) -> bool:
    """Whether NCCL ran what the variant of ``c`` asked for (True for the default, which asks nothing)."""
    algo, proto, channels = PINS.get(c.variant, (None, None, None))
    return (algo in (None, c.algo)) and (proto in (None, c.proto)) and (channels in (None, c.channels))


def aligned(op: str, world: int, size_bytes: int) -> bool:
    """Whether a rank's share of a gather-like op is a multiple of :data:`ALIGN_BYTES` (always, for the others)."""
    return op not in GATHER_LIKE or (size_bytes // world) % ALIGN_BYTES == 0


def load(folder: str | os.PathLike[str]) -> dict[str, list[CollMeasurement]]:
    """Every pass's points: ``proto_world<n>_L<i>.jsonl`` -> pass name ``L<i>`` (world sizes pooled)."""
    return slope_probe.load(folder, "proto")


Point = tuple[str, int, str, int]
"""(variant, world size, op, size in bytes)."""


def fast_levels(points: Sequence[CollMeasurement]) -> dict[Point, float]:
    """Seconds: the FAST_PCT percentile of each point's repetitions, pooled over ``points``' launches."""
    reps: dict[Point, list[float]] = {}
    for p in points:
        reps.setdefault((p.variant, p.world, p.op, p.size_bytes), []).extend(p.rep_times_s or (p.time_s,))
    return {k: float(np.percentile(r, FAST_PCT)) for k, r in reps.items()}


def choice_rows(choices: Sequence[Choice]) -> list[str]:
    """NCCL's default choice per world, op and size beside the tuner's; every pin's count of points it held."""
    held = {v: (sum(pin_held(c) for c in choices if c.variant == v), sum(c.variant == v for c in choices))
            for v in PINS}
    rows = ["| GPUs | op | MiB | NCCL (default) | channels | tuner | same |", "|---|---|---|---|---|---|---|"]
    for c in sorted((c for c in choices if c.variant == BASE), key=lambda c: (c.world, c.op, c.size_bytes)):
        algo, proto = tuner_choice(c.world, c.op, c.size_bytes)
        same = (algo, proto) == (c.algo.lower(), c.proto.lower())
        rows.append(f"| {c.world} | {c.op} | {c.size_bytes / 2**20:.1f} | {c.algo.lower()}/{c.proto.lower()} | "
                    f"{c.channels} | {algo}/{proto} | {'yes' if same else 'NO'} |")
    return rows + ["", "Pins held (points whose every call ran what the variant asked): "
                   + ", ".join(f"{v} {h}/{n}" for v, (h, n) in held.items())]


def pass_gap(passes: Mapping[str, Sequence[CollMeasurement]], world: int, op: str, size: int) -> float | None:
    """Largest |ratio - 1| between two passes' fast levels of one variant at a point (None: one pass)."""
    by_pass = [fast_levels(pts) for pts in passes.values()]
    gaps = [abs(a[k] / b[k] - 1) for i, a in enumerate(by_pass) for b in by_pass[i + 1:]
            for k in a if k in b and k[1:] == (world, op, size)]
    return max(gaps) if gaps else None


def pin_rows(passes: Mapping[str, Sequence[CollMeasurement]]) -> list[str]:
    """Every pin's fast level over the default's (%), per world, op and size."""
    lv = fast_levels([p for pts in passes.values() for p in pts])
    base = sorted(k for k in lv if k[0] == BASE)
    rows = ["| GPUs | op | MiB | default us | " + " | ".join(f"{v} %" for v in PINS) + " | passes' gap % |",
            "|---|---|---|---|" + "---|" * len(PINS) + "---|"]
    for _, world, op, size in sorted(base, key=lambda k: (k[1], k[2], k[3])):
        b = lv[(BASE, world, op, size)]
        cells = [f"{(lv[(v, world, op, size)] / b - 1) * 100:+.1f}" if (v, world, op, size) in lv else "-"
                 for v in PINS]
        gap = pass_gap(passes, world, op, size)
        rows.append(f"| {world} | {op} | {size / 2**20:.1f}{'' if aligned(op, world, size) else ' (unaligned)'} | "
                    f"{b * US:.1f} | " + " | ".join(cells) + f" | {'-' if gap is None else f'{gap * 100:.1f}'} |")
    return rows


def slow_rows(passes: Mapping[str, Sequence[CollMeasurement]]) -> list[str]:
    """Per pass and world: the share of repetitions more than SLOW above their point's fast level (the point's own
    FAST_PCT percentile in that launch) and the median milliseconds such a repetition lost (excess x calls)."""
    rows = ["| pass | GPUs | repetitions | slow % | lost per slow repetition, ms (median, range) |",
            "|---|---|---|---|---|"]
    for name, pts in passes.items():
        for world in sorted({p.world for p in pts}):
            reps = lost = 0
            losses: list[float] = []
            for p in (q for q in pts if q.world == world and q.rep_times_s):
                fast = float(np.percentile(p.rep_times_s, FAST_PCT))
                reps += len(p.rep_times_s)
                losses += [(t - fast) * (p.iters or 1) * 1e3 for t in p.rep_times_s if t > (1 + SLOW) * fast]
            lost = statistics.median(losses) if losses else 0.0
            span = f"{min(losses):.1f}-{max(losses):.1f}" if losses else "-"
            rows.append(f"| {name} | {world} | {reps} | {100 * len(losses) / max(reps, 1):.0f} | {lost:.1f} ({span}) |")
    return rows


def line_rows(passes: Mapping[str, Sequence[CollMeasurement]]) -> list[str]:
    """Per op: the line through the :data:`LINE_MIB` fast levels (default and Ring + Simple pooled) on 2 and 4 GPUs,
    its intercept's growth, and the datasheet model's GPU latency growth."""
    lv = fast_levels([p if p.variant != "simple" else CollMeasurement(**{**p.__dict__, "variant": BASE})
                      for pts in passes.values() for p in pts if p.variant in (BASE, "simple")])
    lo, hi = (m << 20 for m in LINE_MIB)
    rows = [f"| op | intercept 2 GPUs us | 4 GPUs us | growth us | model's growth us | slope 2 GPUs us/MiB | "
            "4 GPUs | ratio |", "|---|---|---|---|---|---|---|---|"]
    for op in sorted({k[2] for k in lv}):
        line = {}
        for w in (2, 4):
            if (BASE, w, op, lo) in lv and (BASE, w, op, hi) in lv:
                b = (lv[(BASE, w, op, hi)] - lv[(BASE, w, op, lo)]) / (hi - lo)
                line[w] = (lv[(BASE, w, op, lo)] - lo * b, b)
        if len(line) == 2:
            (a2, b2), (a4, b4) = line[2], line[4]
            rows.append(f"| {op} | {a2 * US:.1f} | {a4 * US:.1f} | {(a4 - a2) * US:+.1f} | "
                        f"{model_latency_growth_s(op) * US:+.1f} | {b2 * US * 2**20:.3f} | {b4 * US * 2**20:.3f} | "
                        f"{b4 / b2:.2f} |")
    return rows


def report(folder: str | os.PathLike[str]) -> list[str]:
    """The markdown tables this module prints."""
    passes = load(folder)
    return (["NCCL's choice per call (pass 1's INFO lines) beside gpunetsim's tuner:", ""]
            + choice_rows(read_choices(folder))
            + ["", f"Each pin's fast level ({FAST_PCT}th percentile of its repetitions, passes pooled) over the "
                   "default's:", ""] + pin_rows(passes)
            + ["", "Slow repetitions:", ""] + slow_rows(passes)
            + ["", f"Lines through the {LINE_MIB[0]} and {LINE_MIB[1]} MiB fast levels:", ""] + line_rows(passes))


def main(argv: Sequence[str] | None = None) -> int:
    return slope_probe.print_report(argv, "validation.proto_probe", DATASET, report)


if __name__ == "__main__":
    raise SystemExit(main())
