"""Issue 10's slope probe: why the ring ops' per-byte time keeps falling with size (validation.bw_lines).

validation.bw_lines found all_reduce, all_gather and reduce_scatter 7-26% slower per byte at 16-64 MiB than at
256 MiB - 1 GiB, and the slope still falling up to 1 GiB, where broadcast and reduce change 2-6%. The probe
(``bash validation/scripts/gpu_campaign.sh slope OUT``, dataset ``h200x2_2026-11-27_slope``) measures all_reduce and
broadcast (the control: one slice a chunk, the same tensors and allocator) from 8 MiB to 1 GiB in steps of sqrt(2)
under one change each, two passes apart: NCCL's buffer (``NCCL_BUFFSIZE`` 1 and 16 MiB: 1/4 and 4x its chunk),
algorithm / protocol / channels pinned (Ring, Simple, 24), 12 channels, 50 calls a repetition at every size
instead of ~50 ms, PyTorch's expandable segments (tensors mapped by cuMemMap), with nvidia-smi's SM and memory
clocks, power and clock-event reasons sampled every 100 ms beside it. This module prints

* every variant's slope over each doubling of size (fast levels: each size's repetitions of both passes pooled,
  their 10th percentile, as validation.bw_lease_spread), the mid (16-64 MiB) and big (256 MiB - 1 GiB) lines of
  validation.bw_lines, and whether a variant moves a line's slope by more than twice the largest difference
  between the two passes of one variant (:func:`verdicts`);
* the clocks inside the timed repetitions (:func:`clock_rows`) and the first repetition of every point against
  the others (a fresh tensor's first touch).

What it showed (2x H200, 2026-11-27; the dataset's README.md says more): clocks (SM 1980 MHz in every timed
repetition), the calls per repetition, allocation and NCCL's algorithm / protocol / channel choice move neither line
by more than 1% (the passes differ by up to 2.5%); NCCL_BUFFSIZE leaves 8-90 MiB alone but sets where the slope
stops falling (:func:`loop_fit`: the first ~4.5 loops of a call ~7% slower per byte, a reach in loops that fits the
three buffers with p90 1.5% against 2.5% for one reach in bytes); a step below 45-64 MiB, in broadcast too, moves
with none of them.

Tried as a timed-model term and not kept (branch h10slope19, session of 2026-11-27 stop 19; figures from
``python -m validation.bw_residuals [--prior KEY=VALUE]``, ``python -m validation.bw_lines`` and ``python -m
validation.accuracy --only targets``, baseline main 05a296d): a ring Simple plan (all_reduce, all_gather,
reduce_scatter) carried a pipeline fill like NVLS's Chunking, ``excess x min(S, loops x L)`` bytes at its wire rate,
L = NCCL's loop (collective channels from the topology search x ranks x 2 MiB: 96 MiB on 2 GPUs, 192 on 4), in both
engines and the fitter. With this probe's :func:`loop_fit` (4.48 loops; 7.4% of b = 8.2% of the wire's time, taken
as broadcast's 2.82 us/MiB) fixed as a prior, the 4-GPU ring ops' predicted 16-64 MiB slope came from 4.7-11.8%
(median 8.8%) under the measured one to -7.1..+0.6% (median 4.1%) on the six leases, but the reach (864 MiB of S on
4 GPUs) made 128 MiB - 1 GiB 4-6% slow there: the 4-GPU campaigns' slope falls gradually from 64 MiB on, as on 2
GPUs, with no knee near 864 MiB. Pooled 4x H200 >= 16 MiB median 2.3 -> 4.8%, p90 11.5 -> 13.7%; sealed leases
(h100x4 27, h200x4 27, 27b, h100x4 27c, h200x4 27d) medians 2.1/3.2/1.9/2.2/2.0 -> 3.0/3.5/3.5/3.0/2.9%, p90
12.1/8.9/13.5/5.9/9.4 -> 13.6/9.5/15.7/6.7/10.4%; lat3 p90 8.2 -> 7.9%, median 2.1 -> 2.6% (and the learned
extrapolation share at >= 16 MiB moved 0.25 -> 0.75, validation.extrapolation_scale). As a calibrate candidate
(identifiability after the bandwidth keys) the pooled 2-GPU campaigns determine the excess at its bound 0 (+-0.019;
``proto_efficiency.ring.simple`` is refused above 1 there), and each sealed lease's 16/64/256/1024 MiB points leave it
collinear with ``link_efficiency.nvlink`` and ``op_shard_s_per_byte.all_gather`` (kept at the prior: the figures
above). A reach fixed in bytes (the 2-GPU loop on every world size) with the fitted excess: sealed medians
2.9/3.0/2.9/2.9/2.7%. Fitted from 8 MiB up instead of 45 (the mid step included) the probe prefers one reach in
bytes (0.82 x 96 MiB, 14.2% of b; p90 2.5%) to a reach in loops (3.4 loops, 11.3%; p90 3.9%): the mid step does not
move with NCCL_BUFFSIZE; taken into the model as priors, 3.4 loops at 12.5% of the wire gave pooled 6.5 / 16.0%,
0.82 loop at 15.7% pooled 5.4 / 16.1% (sealed p90 18-28%). validation.peer_probe (dataset
``h200x2_2026-11-27_peercopy``) then found no step in plain peer copies (copy engine, SM kernel; mid/big within
0.2-1.2%) beside NCCL's +13-18% in the same launches: what sets the mid sizes is NCCL's handling of a call of one
partial loop, whose reach on 4 GPUs these 2-GPU probes do not give.

The 4-GPU probe (dataset ``h200x4_2026-11-27_slope4``, 4x H200, lead, 2026-11-27: default, NCCL_BUFFSIZE 16 and 1
MiB on 2 and 4 GPUs of one lease, two passes; :func:`groups_of`, :func:`reach_fit`) answered that (session of
2026-11-27 stop 19, branch h10slope4_19). Its 2-GPU runs repeat the first probe (mid/big +18.7%, 4.39 loops at 7.4%,
p90 1.51%). On 4 GPUs of the same lease the mid/big gap halves (all_reduce +8.3% against +18.7%; broadcast +2.3
against +4.2%) and the excess after the first loops is ~2.5% (``buf16``'s big line +2.4% over the default's against
+7.8% on 2 GPUs); the slope stops falling by 64 MiB with ``buf1`` (48 MiB loop) and not by 1 GiB with the default
(192 MiB), the order of the buffers as on 2 GPUs. Fitted from 45 MiB through both probes' 2-GPU runs and the 4-GPU
runs (each its own intercept and per-byte time), a reach that grows with the buffer fits (loops: p90 per group
1.45 / 1.51 / 1.10% with the 2-GPU excess over n-1: 4.39 loops, 7.5% of b on 2 GPUs, 2.5% on 4), one in bytes of S
or of a rank's share does not at 2 GPUs (p90 2.4-2.8%), one excess for both world sizes leaves the 4-GPU group at
1.69% (alone 1.35%); whether the reach also grows with the ranks the 4-GPU points cannot tell (the buffer alone: 4-GPU
p90 1.29%). The n-1 form was picked among three (one excess, over n-1, over n/2: as good) seeing this probe. From 16
MiB instead (the mid step included) a reach in bytes fits both world sizes (0.80 of the 2-GPU loop, 77 MiB, whatever
the buffer; 14.5% of b over n-1; p90 2.46 / 2.46 / 1.67%, loops 3.6 / 4.1 / 2.3%).

Three terms tried as the ring term above (K and f from the probes only; the excess over n-1 of the plan's ranks, the
rest as h10slope19: branch h10slope4_19-term, not merged; baseline
main fc92e29; ``python -m validation.bw_residuals``, ``python -m validation.sealed_campaign``, ``python -m
validation.accuracy --only targets``), neither kept: held-out >= 16 MiB p90 does not improve. (A) 4.48 loops, 8.2%
of the wire / (n-1): pooled 4x H200 median / p90 2.3 / 11.5 -> 2.5 / 12.8%; sealed leases (h100x4 27, h200x4 27,
27b, h100x4 27c, h200x4 27d) medians 2.1/3.2/1.9/2.2/2.0 -> 2.2/3.1/2.0/2.0/2.0%, p90 12.1/8.9/13.5/5.9/9.4 ->
12.3/9.5/13.2/5.9/9.6%; their 2-GPU (in-sample) p90 9.3/9.2/8.3/10.1/9.7 -> 8.0/8.8/6.8/9.7/8.3%; section 8:
coverage 87 -> 85% (>= 16 MiB 94 -> 87%, width 24 -> 20%), corpus LODO 8.3 -> 9.3%, DDP 4.3 -> 4.7% (the report
required validation.extrapolation_scale.PARAM_SCALE 0.25 -> 0.35 first). The NVLink rings' own 4-GPU points move by
at most 1 point; what moves is the calibration's share with the other variants (ll128 +3-4 points, SHM and socket
rings); the term on NVLink-only rings: pooled 2.7 / 12.9%. (B) As (A) with the reach of the buffer alone (421 MiB at
any n): pooled 2.5 / 12.8%, sealed medians 2.1/3.1/1.9/1.9/1.7%, p90 12.3/9.5/13.2/5.9/9.6%. (C) 0.80 x the 2-GPU
loop at any n, 16% of the wire / (n-1): pooled 2.5 / 12.5%, but sealed medians 3.9/6.0/2.1/6.4/2.5%, p90
18.5/16.2/12.9/20.7/17.3% (a lease's four 2-GPU sizes then put all_gather and reduce_scatter 18-25% high at 256 MiB
- 1 GiB on 4 GPUs: h100x4 27c). The >= 16 MiB p90 sits on the 16 MiB points, which (A) does not reach and (C) does
not mend.

::

    python -m validation.slope_probe [FOLDER ...]   # default: both shipped probes, then the fit through both
"""

from __future__ import annotations

import datetime as dt
import glob
import os
import statistics
import sys
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from simulator.collectives.nccl_constants import SIMPLE_BUFFER_BYTES, ring_loop_bytes
from simulator.core.errors import InputError
from validation.bw_lease_spread import FAST_PCT
from validation.bw_lines import BIG_MIB, MID_MIB, Line, fit_line
from validation.data import DATA_DIR
from validation.parsers import CollMeasurement, read_jsonl
from validation.check_cli import print_lines

DATASET = "h200x2_2026-11-27_slope"
"""The first probe (2x H200, 2026-11-27)."""
DATASET4 = "h200x4_2026-11-27_slope4"
"""The second probe (4x H200, 2026-11-27, another lease): default and NCCL_BUFFSIZE 16 / 1 MiB on 2 and 4 GPUs."""
DATASETS = (DATASET, DATASET4)
"""What ``python -m validation.slope_probe`` reads without a folder."""
BASE = "default"
"""The variant every other one is compared with."""
DOUBLINGS_MIB = ((8, 16), (16, 32), (32, 64), (64, 128), (128, 256), (256, 512), (512, 1024))
IDLE_REASON = 0x1
"""nvidia-smi's clock-event reason 'GPU idle'; every other bit is a slowdown (power, thermal, ...)."""
US_PER_MIB = 1e6 * (1 << 20)
"""Seconds per byte -> microseconds per MiB."""

PROBE_CHANNELS = 24
"""NCCL's collective channels on the probe's hosts (NV18 pairs; its INFO logs read '24 coll channels')."""
FIT_FROM_MIB = 45
""":func:`loop_fit` uses sizes from here up: below, both ops show a step that no NCCL setting moves."""

Key = tuple[str, str, int]
"""(variant, op, world size)."""


@dataclass(frozen=True)
class Sample:
    """One nvidia-smi reading of one GPU."""

    unix_s: float
    gpu: int
    sm_mhz: float
    mem_mhz: float
    power_w: float
    reasons: int


def load(folder: str | os.PathLike[str], stem: str = "slope") -> dict[str, list[CollMeasurement]]:
    """Every pass's points: ``<stem>_world<n>_L<i>.jsonl`` -> pass name ``L<i>`` (world sizes pooled)."""
    files = sorted(glob.glob(os.path.join(folder, f"{stem}_world*_L*.jsonl")))
    if not files:
        raise InputError(f"no {stem}_world<n>_L<i>.jsonl files", field="folder", value=str(folder))
    out: dict[str, list[CollMeasurement]] = {}
    for f in files:
        out.setdefault(os.path.basename(f).rsplit("_", 1)[1].removesuffix(".jsonl"), []).extend(read_jsonl(f).points)
    return out


def levels(points: Sequence[CollMeasurement]) -> dict[Key, dict[int, float]]:
    """(variant, op, world) -> size (bytes) -> fast level (s): the FAST_PCT percentile of the size's repetitions,
    pooled over ``points``."""
    reps: dict[Key, dict[int, list[float]]] = {}
    for p in points:
        by_size = reps.setdefault((p.variant, p.op, p.world), {})
        by_size.setdefault(p.size_bytes, []).extend(p.rep_times_s or (p.time_s,))
    return {k: {s: float(np.percentile(r, FAST_PCT)) for s, r in by.items()} for k, by in reps.items()}


def doubling_slopes(times_s: Mapping[int, float],
                    doublings: Sequence[tuple[int, int]] = DOUBLINGS_MIB) -> dict[tuple[int, int], float]:
    """(lo, hi) MiB -> seconds per byte between the two sizes, for every pair of ``doublings`` measured."""
    return {(lo, hi): (times_s[hi << 20] - times_s[lo << 20]) / ((hi - lo) << 20)
            for lo, hi in doublings if lo << 20 in times_s and hi << 20 in times_s}


def lines(times_s: Mapping[int, float]) -> tuple[Line | None, Line | None]:
    """validation.bw_lines' (mid, big) lines through ``times_s``."""
    return fit_line(times_s, MID_MIB), fit_line(times_s, BIG_MIB)


@dataclass(frozen=True)
class Verdict:
    """One variant's mid and big slopes against :data:`BASE`'s, and the yardstick they are judged by."""

    variant: str
    op: str
    world: int
    mid_s_per_byte: float
    big_s_per_byte: float
    mid_change: float       # relative to BASE
    big_change: float
    mid_noise: float        # the largest relative difference of the line's slope between two passes of one
    big_noise: float        # variant, on this world size

    @property
    def moves_mid(self) -> bool:
        return abs(self.mid_change) > 2 * self.mid_noise

    @property
    def moves_big(self) -> bool:
        return abs(self.big_change) > 2 * self.big_noise


def pass_noise(passes: Mapping[str, Sequence[CollMeasurement]], world: int | None = None,
               line: int | None = None) -> float:
    """The largest relative difference between two passes' slopes of one line (mid or big; ``line`` 0 or 1 alone
    when given) of one variant, op and world size (``world`` alone when given): how far a slope moves with nothing
    changed. 0 with one pass."""
    per = [levels(pts) for pts in passes.values()]
    worst = 0.0
    for a, b in zip(per, per[1:]):
        for key in a.keys() & b.keys():
            if world is not None and key[2] != world:
                continue
            for i, (la, lb) in enumerate(zip(lines(a[key]), lines(b[key]))):
                if la and lb and line in (None, i):
                    worst = max(worst, abs(la.slope_s_per_byte / lb.slope_s_per_byte - 1))
    return worst


def verdicts(passes: Mapping[str, Sequence[CollMeasurement]]) -> list[Verdict]:
    """Every variant's lines (passes pooled) against :data:`BASE`'s of the same op and world size, each line judged
    by its own pass noise on that world size (4 GPUs' mid line moves most between passes, the big lines least)."""
    pooled = levels([p for pts in passes.values() for p in pts])
    noise = {(w, i): pass_noise(passes, w, i) for w in {k[2] for k in pooled} for i in (0, 1)}
    out = []
    for (variant, op, world), times in sorted(pooled.items()):
        base = pooled.get((BASE, op, world))
        mid, big = lines(times)
        if base is None or mid is None or big is None:
            continue
        bmid, bbig = lines(base)
        if bmid is None or bbig is None:
            continue
        out.append(Verdict(variant, op, world, mid.slope_s_per_byte, big.slope_s_per_byte,
                           mid.slope_s_per_byte / bmid.slope_s_per_byte - 1,
                           big.slope_s_per_byte / bbig.slope_s_per_byte - 1, noise[world, 0], noise[world, 1]))
    return out


def buffer_bytes(points: Sequence[CollMeasurement]) -> int:
    """NCCL's Simple buffer of ``points`` (their ``NCCL_BUFFSIZE``, else NCCL's default)."""
    sizes = {dict(p.env).get("NCCL_BUFFSIZE") for p in points}
    if len(sizes) != 1:
        raise InputError("points of several NCCL_BUFFSIZE values", field="NCCL_BUFFSIZE", value=sorted(map(str, sizes)))
    size = sizes.pop()
    return int(size) if size else SIMPLE_BUFFER_BYTES


def loop_bytes(buffer: int, world: int, channels: int = PROBE_CHANNELS) -> int:
    """Bytes of one loop of NCCL's Simple ring (simulator.collectives.nccl_constants.ring_loop_bytes)."""
    return ring_loop_bytes(channels, world, buffer)


@dataclass(frozen=True)
class LoopFit:
    """``t = a + b S + excess b min(S, loops L)`` through several buffers' fast levels, L each one's loop
    (``scaled``) or the first one's for all: the first ``loops`` loops of a call run ``excess`` slower per byte."""

    scaled: bool
    intercept_s: float
    s_per_byte: float
    excess: float
    loops: float
    errors: tuple[float, float, float]     # median, p90, largest relative error


def loop_fit(series: Sequence[tuple[int, Mapping[int, float]]], scaled: bool) -> LoopFit:
    """Least relative squares over (loop bytes, size -> s) series, sizes from FIT_FROM_MIB up: linear in (a, b,
    excess b) for each reach on a grid of 0.25-20 loops, the best reach kept."""
    xs, ts, ls = [], [], []
    for loop, times in series:
        for s, t in times.items():
            if s >= FIT_FROM_MIB << 20:
                xs.append(float(s))
                ts.append(t)
                ls.append(float(loop if scaled else series[0][0]))
    if len(xs) < 4:
        raise InputError("too few sizes to fit", field="sizes", value=len(xs))
    x, t, loop = np.array(xs), np.array(ts), np.array(ls)
    best = None
    for m in np.geomspace(0.25, 20, 241):
        a = np.column_stack([np.ones_like(x), x, np.minimum(x, m * loop)]) / t[:, None]
        coef = np.linalg.lstsq(a, np.ones_like(t), rcond=None)[0]
        err = np.abs(a @ coef - 1)
        if best is None or err @ err < best[0]:
            best = (float(err @ err), m, coef, err)
    _, m, (c0, c1, c2), err = best
    return LoopFit(scaled, float(c0), float(c1), float(c2 / c1), float(m),
                   (float(np.median(err)), float(np.percentile(err, 90)), float(err.max())))


def read_smi(path: str | os.PathLike[str], clock_path: str | os.PathLike[str]) -> list[Sample]:
    """nvidia-smi's CSV (``timestamp, index, clocks.sm, clocks.mem, power.draw, temperature[, reasons]``, local
    time) as Unix-time samples; ``clock.txt`` (``unix_s <s> local <Y/m/d H:M:S.f> <zone>``) gives the offset."""
    with open(clock_path, encoding="utf-8") as f:
        words = f.read().split()
    try:
        unix_s = float(words[1])
        local = dt.datetime.strptime(f"{words[3]} {words[4][:15]}", "%Y/%m/%d %H:%M:%S.%f")
    except (IndexError, ValueError):
        raise InputError("clock.txt must read 'unix_s <s> local <Y/m/d H:M:S.f> <zone>'",
                         field="clock", value=" ".join(words)) from None
    offset = unix_s - local.replace(tzinfo=dt.timezone.utc).timestamp()
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines()[1:]:
            cells = [c.strip() for c in line.split(",")]
            try:
                t = dt.datetime.strptime(cells[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=dt.timezone.utc)
                out.append(Sample(t.timestamp() + offset, int(cells[1]), float(cells[2]), float(cells[3]),
                                  float(cells[4]), int(cells[6], 16) if len(cells) > 6 else 0))
            except (IndexError, ValueError):
                continue       # a line nvidia-smi wrote as '[N/A]' or cut off when it was stopped
    return out


@dataclass(frozen=True)
class ClockRow:
    """The readings of a variant's and op's GPUs taken inside its timed repetitions."""

    variant: str
    op: str
    samples: int
    sm_mhz: tuple[float, float]      # lowest, highest
    mem_mhz: tuple[float, float]
    power_w: tuple[float, float]
    slowdowns: tuple[int, ...]       # clock-event reasons seen other than idle


def clock_rows(points: Sequence[CollMeasurement], samples: Sequence[Sample]) -> list[ClockRow]:
    """Per (variant, op): the samples of the point's GPUs inside one of its repetitions (the ``iters`` calls before
    each ``rep_end_unix_s``). Points without end times or calls per repetition are left out."""
    times = np.array([s.unix_s for s in samples])
    order = np.argsort(times)
    times = times[order]
    inside: dict[tuple[str, str], list[Sample]] = {}
    for p in points:
        if not p.rep_end_unix_s or p.iters is None:
            continue
        for end, rep in zip(p.rep_end_unix_s, p.rep_times_s):
            lo, hi = np.searchsorted(times, [end - rep * p.iters, end], side="right")
            inside.setdefault((p.variant, p.op), []).extend(
                s for s in (samples[i] for i in order[lo:hi]) if s.gpu < p.world)
    out = []
    for (variant, op), got in sorted(inside.items()):
        if not got:
            continue
        span = lambda xs: (min(xs), max(xs))  # noqa: E731
        out.append(ClockRow(variant, op, len(got), span([s.sm_mhz for s in got]), span([s.mem_mhz for s in got]),
                            span([s.power_w for s in got]),
                            tuple(sorted({s.reasons & ~IDLE_REASON for s in got} - {0}))))
    return out


def first_rep_ratio(points: Sequence[CollMeasurement]) -> dict[tuple[str, str], float]:
    """(variant, op) -> median over sizes of the first repetition over the median of the others (a fresh tensor's
    first touch, or allocation, would make it above 1)."""
    out: dict[tuple[str, str], list[float]] = {}
    for p in points:
        if len(p.rep_times_s) > 1:
            out.setdefault((p.variant, p.op), []).append(p.rep_times_s[0] / statistics.median(p.rep_times_s[1:]))
    return {k: statistics.median(v) for k, v in sorted(out.items())}


def buffer_series(points: Sequence[CollMeasurement], world: int) -> list[tuple[int, dict[int, float]]]:
    """(loop bytes, size -> fast level) of all_reduce on ``world`` GPUs for :data:`BASE` and every variant whose
    environment differs from it in ``NCCL_BUFFSIZE`` alone; :data:`BASE` first."""
    return [(loop_bytes(buffer, world), times) for buffer, times in buffer_levels(points, world)]


def buffer_levels(points: Sequence[CollMeasurement], world: int) -> list[tuple[int, dict[int, float]]]:
    """:func:`buffer_series` with NCCL's buffer (bytes) in place of the loop."""
    base_env = {p.env for p in points if p.variant == BASE}
    picked: dict[str, list[CollMeasurement]] = {}
    for p in points:
        env = dict(p.env)
        buffer_only = env.pop("NCCL_BUFFSIZE", None) is not None and tuple(sorted(env.items())) in base_env
        if p.op == "all_reduce" and p.world == world and (p.variant == BASE or buffer_only):
            picked.setdefault(p.variant, []).append(p)
    pooled = levels(points)
    return [(buffer_bytes(pts), pooled[(v, "all_reduce", world)])
            for v, pts in sorted(picked.items(), key=lambda kv: kv[0] != BASE)]


REACH_RULES = {"loops": (True, True), "per-rank bytes": (True, False), "buffer, not ranks": (False, True),
               "bytes": (False, False)}
"""How far the slower start reaches in S, as (grows with the ranks, grows with NCCL's buffer): in loops (channels x
ranks x chunk), in bytes of a rank's share (S/n), in one rank's loop, or in bytes of S whatever the ranks and
buffer. Each reads in units of the 2-GPU default loop (96 MiB) on 2 GPUs with the default buffer."""
EXCESS_RULES = ("shared", "1/(n-1)")
"""How the excess carries across world sizes: one fraction of the per-byte time, or the 2-GPU fraction over n-1
(the same seconds over a reach in loops: the excess time ~ excess x b x reach does not change with n)."""


@dataclass(frozen=True)
class Group:
    """One probe's all_reduce on one world size: (NCCL buffer bytes, size -> fast level) per buffer variant,
    sharing one intercept and per-byte time (one lease, one world size)."""

    name: str
    world: int
    series: tuple[tuple[int, Mapping[int, float]], ...]


def groups_of(folder: str | os.PathLike[str]) -> list[Group]:
    """A probe folder's :class:`Group` per world size that has more than one buffer."""
    every = [p for pts in load(folder).values() for p in pts]
    name = os.path.basename(os.path.normpath(folder))
    out = []
    for world in sorted({p.world for p in every}):
        series = buffer_levels(every, world)
        if len(series) > 1:
            out.append(Group(name, world, tuple(series)))
    return out


def reach_bytes(rule: str, world: int, buffer: int, loops: float) -> float:
    """Bytes of S the slower start covers under ``rule`` (:data:`REACH_RULES`), ``loops`` in 2-GPU default loops."""
    ranks, buf = REACH_RULES[rule]
    return loops * loop_bytes(buffer if buf else SIMPLE_BUFFER_BYTES, world if ranks else 2)


@dataclass(frozen=True)
class ReachFit:
    """``t = a + b S + e_n b min(S, reach)`` through several :class:`Group` s: a, b per group, one reach rule and
    multiple, one excess (``e_n`` = excess, or excess / (n-1))."""

    rule: str
    excess_rule: str
    loops: float
    excess: float                                   # on 2 GPUs
    group_errors: tuple[tuple[float, float], ...]   # per group: median, p90 relative error
    errors: tuple[float, float, float]              # all points: median, p90, largest


def reach_fit(groups: Sequence[Group], rule: str, excess_rule: str, from_mib: float = FIT_FROM_MIB) -> ReachFit:
    """Least relative squares from ``from_mib`` up over a grid of reaches (0.25-20) and excesses (0-30% in 0.25%
    steps); per group and grid point the intercept and per-byte time are linear."""
    if rule not in REACH_RULES or excess_rule not in EXCESS_RULES:
        raise InputError("unknown reach or excess rule", field="rule", value=f"{rule}, {excess_rule}")
    excesses = np.linspace(0.0, 0.3, 121)
    best = None
    for m in np.geomspace(0.25, 20, 241):
        sq = np.zeros_like(excesses)
        errs = []
        for g in groups:
            rows = [(float(s), t, min(float(s), reach_bytes(rule, g.world, buf, m)))
                    for buf, times in g.series for s, t in times.items() if s >= from_mib * (1 << 20)]
            if len(rows) < 3:
                raise InputError("too few sizes to fit", field="sizes", value=len(rows))
            size, t, covered = (np.array(c) for c in zip(*rows))
            scale = 1.0 if excess_rule == "shared" else 1.0 / (g.world - 1)
            x = size + np.outer(excesses * scale, covered)          # (excesses, points)
            w = 1.0 / t
            # normal equations of min |w (a + b x) - 1|^2 for every excess at once
            s00, s01, s11 = (w * w).sum(), (w * w * x).sum(1), (w * w * x * x).sum(1)
            r0, r1 = w.sum(), (w * x).sum(1)
            det = s00 * s11 - s01 * s01
            a = (r0 * s11 - r1 * s01) / det
            b = (s00 * r1 - s01 * r0) / det
            e = np.abs(w * (a[:, None] + b[:, None] * x) - 1)
            sq += (e * e).sum(1)
            errs.append(e)
        i = int(np.argmin(sq))
        if best is None or sq[i] < best[0]:
            best = (float(sq[i]), float(m), float(excesses[i]), [e[i] for e in errs])
    _, m, exc, errs = best
    every = np.concatenate(errs)
    return ReachFit(rule, excess_rule, m, exc,
                    tuple((float(np.median(e)), float(np.percentile(e, 90))) for e in errs),
                    (float(np.median(every)), float(np.percentile(every, 90)), float(every.max())))


def _us(s_per_byte: float) -> str:
    return f"{s_per_byte * US_PER_MIB:.2f}"


def _slope_table(pooled: Mapping[Key, Mapping[int, float]]) -> list[str]:
    out = ["Slope over each doubling of size (us per MiB; fast levels, passes pooled).", "",
           "| op | GPUs | variant | " + " | ".join(f"{lo}-{hi}" for lo, hi in DOUBLINGS_MIB) + " |",
           "|---|---|---|" + "---|" * len(DOUBLINGS_MIB)]
    order = sorted(pooled.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0] != BASE))
    for (variant, op, world), times in order:
        d = doubling_slopes(times)
        cells = " | ".join(_us(d[x]) if x in d else "-" for x in DOUBLINGS_MIB)
        out.append(f"| {op} | {world} | {variant} | {cells} |")
    return out


def _verdict_table(vs: Sequence[Verdict]) -> list[str]:
    noise = ", ".join(f"{w} GPUs {m:.1%} / {b:.1%}" for w, m, b in sorted({(v.world, v.mid_noise, v.big_noise)
                                                                              for v in vs}))
    out = ["", f"Mid (16-64 MiB) and big (256 MiB-1 GiB) slopes (us per MiB) against {BASE}'s; a change counts "
           f"beyond twice the largest pass-to-pass difference of the same line on the same world size (mid / big: "
           f"{noise}).", "",
           "| op | GPUs | variant | mid | big | mid / big - 1 | mid change | big change |",
           "|---|---|---|---|---|---|---|---|"]
    for v in sorted(vs, key=lambda v: (v.op, v.world, v.variant != BASE)):
        mid = f"{v.mid_change:+.1%}" + (" **moves**" if v.moves_mid else "")
        big = f"{v.big_change:+.1%}" + (" **moves**" if v.moves_big else "")
        out.append(f"| {v.op} | {v.world} | {v.variant} | {_us(v.mid_s_per_byte)} | {_us(v.big_s_per_byte)} | "
                   f"{v.mid_s_per_byte / v.big_s_per_byte - 1:+.1%} | {mid} | {big} |")
    return out


def _clock_table(rows: Sequence[ClockRow]) -> list[str]:
    out = ["", "Inside the timed repetitions (nvidia-smi every 100 ms, the point's GPUs): lowest-highest.", "",
           "| variant | op | samples | SM MHz | memory MHz | power W | slowdown reasons |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.variant} | {r.op} | {r.samples} | {r.sm_mhz[0]:.0f}-{r.sm_mhz[1]:.0f} | "
                   f"{r.mem_mhz[0]:.0f}-{r.mem_mhz[1]:.0f} | {r.power_w[0]:.0f}-{r.power_w[1]:.0f} | "
                   f"{', '.join(hex(x) for x in r.slowdowns) or 'none'} |")
    return out


def _loop_table(world: int, series: Sequence[tuple[int, Mapping[int, float]]]) -> list[str]:
    loops = ", ".join(f"{lp >> 20}" for lp, _ in series)
    out = ["", f"all_reduce on {world} GPUs, >= {FIT_FROM_MIB} MiB, {BASE} and the variants that change NCCL_BUFFSIZE "
           f"alone (loops of {loops} MiB): t = a + b S + excess b min(S, loops L).", "",
           "| L | a (us) | b (us/MiB) | excess | loops | median / p90 / largest error |", "|---|---|---|---|---|---|"]
    for scaled in (True, False):
        f = loop_fit(series, scaled)
        errors = " / ".join(f"{e:.2%}" for e in f.errors)
        name = "each buffer its own loop" if scaled else f"{BASE} loop for all"
        out.append(f"| {name} | {f.intercept_s * 1e6:.1f} | {_us(f.s_per_byte)} | {f.excess:.1%} | {f.loops:.2f} | "
                   f"{errors} |")
    return out


def _reach_table(groups: Sequence[Group]) -> list[str]:
    names = ", ".join(f"{g.name} {g.world} GPUs" for g in groups)
    out = ["", f"all_reduce, >= {FIT_FROM_MIB} MiB, every NCCL_BUFFSIZE variant, one reach rule and excess for every "
           f"group ({names}; each its own a and b): t = a + b S + e_n b min(S, reach), reach in 2-GPU default loops "
           f"(96 MiB).", "",
           "| reach grows with | excess on n GPUs | reach | excess (2 GPUs) | median / p90 per group | "
           "median / p90 / largest |", "|---|---|---|---|---|---|"]
    for rule in REACH_RULES:
        for excess_rule in EXCESS_RULES:
            f = reach_fit(groups, rule, excess_rule)
            per = ", ".join(f"{m:.2%} / {p:.2%}" for m, p in f.group_errors)
            out.append(f"| {rule} | {'2-GPU excess / (n-1)' if excess_rule != 'shared' else 'the same'} | "
                       f"{f.loops:.2f} | {f.excess:.2%} | {per} | {' / '.join(f'{e:.2%}' for e in f.errors)} |")
    return out


def report(folder: str | os.PathLike[str]) -> list[str]:
    """The markdown tables this module prints."""
    passes = load(folder)
    every = [p for pts in passes.values() for p in pts]
    out = _slope_table(levels(every)) + _verdict_table(verdicts(passes))
    smi, clock = os.path.join(folder, "smi.csv"), os.path.join(folder, "clock.txt")
    if os.path.exists(smi) and os.path.exists(clock):
        out += _clock_table(clock_rows(every, read_smi(smi, clock)))
    for world in sorted({p.world for p in every}):
        series = buffer_series(every, world)
        if len(series) > 1:
            out += _loop_table(world, series)
    groups = groups_of(folder)
    if len(groups) > 1:
        out += _reach_table(groups)
    ratios = first_rep_ratio(every)
    out += ["", "First repetition over the median of the others (median over sizes): "
            + ", ".join(f"{v} {op} {r:.3f}" for (v, op), r in ratios.items())]
    return out


def several(folders: Sequence[str]) -> list[str]:
    """Every folder's report, then the reach rules fitted through all their groups at once."""
    out: list[str] = []
    for folder in folders:
        out += [f"## {os.path.basename(os.path.normpath(folder))}", ""] + report(folder) + [""]
    groups = [g for folder in folders for g in groups_of(folder)]
    return out + ["## Every probe together"] + _reach_table(groups) if len(folders) > 1 and groups else out


def print_report(argv: Sequence[str] | None, prog: str, dataset: str | Sequence[str],
                 make: Callable[[str], list[str]], make_several: Callable[[list[str]], list[str]] | None = None) -> int:
    """A probe's command line: ``python -m PROG [FOLDER]`` (default: the shipped ``dataset``) prints ``make``'s
    lines; with ``make_several``, ``python -m PROG [FOLDER ...]`` prints its lines of every folder given (default:
    every dataset of ``dataset``). Exit status 2 with a message on a bad argument or folder."""
    args = list(sys.argv[1:] if argv is None else argv)
    datasets = [dataset] if isinstance(dataset, str) else list(dataset)
    usage = f"usage: python -m {prog} [FOLDER{' ...' if make_several else ''}]"
    if args in (["-h"], ["--help"]):
        print(f"{usage}   (default: {', '.join(datasets)})")
        return 0
    if (len(args) > 1 and make_several is None) or any(a.startswith("-") for a in args):
        print(usage, file=sys.stderr)
        return 2
    folders = args or [str(DATA_DIR / d) for d in datasets]
    return print_lines(lambda: make_several(folders) if make_several else make(folders[0]))


def main(argv: Sequence[str] | None = None) -> int:
    return print_report(argv, "validation.slope_probe", DATASETS, report, several)


if __name__ == "__main__":
    raise SystemExit(main())
