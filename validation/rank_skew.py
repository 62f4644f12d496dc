"""Rank skew: how far apart the ranks' hosts issue each collective, on 2 and 4 GPUs, against the expected maximum
of n draws of one per-rank host jitter.

::

    python -m validation.rank_skew

Issue 14 (the 4-GPU FSDP files miss 8%: fsdp4 on the fifth/sixth/seventh sealed leases 14.7/12.5/8.5%): the GEMM
probe (:mod:`validation.gemm_nccl`) found NCCL kernels sitting on the slowest rank's host at 4 GPUs. Three committed
sources say how large that skew is, and whether it grows from 2 to 4 ranks as the maximum of n independent draws of
a per-rank host jitter would (for a normal jitter of scale sigma the slowest of n issues ``sigma x e(n)`` after the
ranks' mean, ``e(n) = E[max of n standard normals]``: e(2) 0.564, e(3) 0.846, e(4) 1.029, so 4 ranks / 2 ranks 1.82;
:func:`expected_max`):

* **Profiled FSDP steps** (``fsdpprof_world*.jsonl``, :mod:`validation.runners.step_timeline`): per collective and
  rank the NCCL kernel's start, end and the host's launch. A collective ends together on every rank (the ranks'
  ends, aligned by their median offset, agree within 0.04 ms), so a rank's kernel start less the latest start is its
  wait for the slowest rank, and the spread of the arrivals ``max - mean`` equals ``mean - min`` of the kernels'
  durations (no clock alignment needed; :func:`collective_skews`). The host's launch spread is read on the clocks
  aligned by the ends (launches run ahead of the GPU, so it is larger than the arrivals' and costs less).
* **Per-rank host time per profiled step** (4-GPU lease only: the runner kept the CUDA runtime calls there): a
  rank's host busy time is the step's wall time less its blocking waits (``cudaDeviceSynchronize``,
  ``cudaEventSynchronize``: the rate limiter); the step ends 0.2-4 ms after the slowest rank's host
  (:func:`step_hosts`).
* **Per-unit host windows** (branch h14fsdp24, :func:`rank_windows`): each rank's host time from one launch of its
  data-parallel collective to the next (NO_SHARD's all-reduces, the sharded strategies' all-gathers), on its own
  clock: one unit's issue and hooks, 2.0-2.6 ms here; read on every committed profile (:data:`WINDOW_PROFILES`).
* **The lathost probe** every campaign since 2026-11-26 takes (``*_lat*/lat_world{2,3,4}_L*.jsonl``,
  ``rank_host_times_s``): per repetition every rank's host issue time per call over the first 128 back-to-back
  small collectives (~2.5 ms of host work), at 2, 3 and 4 ranks on the same lease (:func:`lathost_spreads`).

What they show (``python -m validation.rank_skew``, 2026-11-27):

* Profiled steps, arrival spread per collective (median over collectives and both passes' launches, ms): 2x
  H200 lease (``h200x2_2026-11-27_fsdpprof``) -> 4x H200 lease (``h200x4_2026-11-27_fsdpprof4``): FULL_SHARD h2048
  0.25 -> 0.97 (x3.90), FULL_SHARD h4096 0.17 -> 0.26 (x1.52), NO_SHARD h2048 1.02 -> 1.21 (x1.18), NO_SHARD h4096
  0.46 -> 0.15 (x0.33), against x1.82 for independent draws (and two leases, not one). The host launches spread
  more (2 ranks 0.42-2.36 ms, 4 ranks 1.23-2.51 ms: hosts run ahead of their GPUs). The skew is not a fresh draw per
  collective: within a step one rank's host stays the late one (pass 1's FULL_SHARD h2048 second launch: rank 2
  arrives last at all 26 collectives, the others wait 0.3-3.3 ms at each) while the early ranks' hosts run up to
  7 ms ahead until FSDP's rate limiter stops them. So a step runs at its slowest rank's host pace, not at the sum
  of per-collective maxima.
* Per-rank host time per step on 4 GPUs: slowest over mean +3.0 to +17.5% (mean 9.0%, 24 steps), i.e. a per-step
  relative jitter of 0.087 (9.0% / e(4)); the step's wall time sits 0.17-4.41 ms above the slowest host's.
* Lathost (9 leases with 2-, 3- and 4-rank launches, one with 2 only): slowest rank's per-call issue over the
  mean, mean over points and repetitions, 2 ranks 12.0-17.8%, 4 ranks 29.0-38.0%; normal draws scaled from each
  lease's own 2 ranks predict 4 ranks at 24.5-32.4%: measured above on 7 of 9 leases, equal on 2 (the tail: p90 at
  4 ranks 67-125%, one process at a time slowed to twice its pace, as section 3 of docs/accuracy.md found). Medians
  grow far less (2 ranks 4.9-16.9%, 4 ranks 14.4-24.4%). Its scale (a per-call jitter of 0.21-0.32 over a ~2.5 ms
  window) is three times the per-step jitter the 4-GPU profile shows (0.087 over 20-55 ms): most of it averages out
  over a step.

* Per-unit windows (2026-11-28): NO_SHARD's hosts, free of each other (no all-gather, no rate limiter), spread
  alike on 2 and 4 GPUs (RMS 0.181 / 0.127 at h2048 / h4096 on 2, pooled 0.165 over 108 windows; 0.185 / 0.170 on 4):
  a per-unit scale between the per-step 0.087 and the lathost per-call 0.21-0.32. FULL_SHARD h2048's hosts move
  together on 2 GPUs (spread 0.114; the slowest rank's summed excess over the mean rank per step, median 1.76 ms over
  9 steps) and apart on 4 (0.193; 6.30 ms, every step 5.2-11.1 ms), as free as NO_SHARD's. The per-unit boundary host
  work is the same on 2 and 4 GPUs (``validation.fsdp_profile``: forward 1.20-1.24 vs 1.14-1.26 ms, backward
  1.28-1.71 vs 1.29-1.61), so a boundary cost growing with units x ranks finds no support: what grows is the ranks'
  spread, not one host's work.

* Paces (:func:`pace_spread`, 2026-11-28 stop 26): the windows' spread splits into a pace each rank keeps for the
  step and a spread from window to window around it. NO_SHARD's free hosts: 0.155 / 0.104 kept and 0.094 / 0.073
  window to window at h2048 / h4096 on 2 GPUs (pooled 0.132 / 0.084, :func:`free_paces`), 0.162 / 0.145 and 0.088 /
  0.089 on 4 (pooled 0.154 / 0.088): the same per rank on 2 and 4 GPUs, as independent ranks would be. The sharded
  strategies' hosts keep 0.064-0.086 (coupled by their all-gathers). Tried as events (form E of :data:`TRIED`).

* Rate-limited hosts (:func:`limiter_extension`, 2026-11-28): n hosts with independent windows of 2.4 ms, cv 0.165,
  meeting only where FSDP1 makes them (each all-gather waits for the last host; a host issues the next all-gather once
  the unit two back is done), lose 0.90 / 1.62 ms per 16-window step on 2 / 4 ranks for a unit's GPU side of 0.3-2.0
  ms (0.36 / 0.57 ms at 2.6 ms, past the window), where a maximum per window would cost 3.57 / 6.52 ms.

With ``--leases``, the sealed leases' lathost jitter beside section 7's FSDP-only rows: the leases that miss most
(the fifth and sixth sealed, ``h200x4_2026-11-27d``/``e``: fsdp4 14.7 / 12.5%) have the *lowest* 2-rank jitter of
the seven (0.242, 0.238; the others 0.277-0.295), and the misses have no common sign (FULL_SHARD h2048 predicted
fast on 8 of the 10 rows, -0.4 to -20.7%; NO_SHARD h4096 slow on all 10, +0.6 to +41.8%), so a lease's own jitter
cannot order its misses, and one term that lengthens every host block cannot mend both.

So the per-rank host jitter is measurable on 2 GPUs (the lathost probe every campaign takes), but at the per-call
scale, which is not the per-step scale that sets a step (0.087 on the one lease whose profile can tell), and what
the model carries is already fitted per world size: the FSDP host work comes from an H200 campaign of the same
world size (``llm_blind.HOST_FROM``) and the hosts' issue probes take the MAX over ranks, so a skew term applied
everywhere is partly counted twice. Five forms were tried (:data:`TRIED`) and none kept; nor was the 2-GPU
campaign's host work for every world size, with or without the paces (form F).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from simulator.core.errors import InputError
from simulator.training.llm.fsdp_engine import MAX_INFLIGHT_GATHERS
from validation import parsers
from validation.check_cli import print_lines

DATA = Path(__file__).resolve().parent / "data"
PROFILES = (DATA / "h200x2_2026-11-27_fsdpprof", DATA / "h200x4_2026-11-27_fsdpprof4")
WINDOW_PROFILES = (DATA / "h200x2_2026-11-27_fsdpprof", DATA / "h200x2_2026-11-27b_fsdpprof",
                   DATA / "h200x4_2026-11-27_fsdpprof4")
"""The profiled leases :func:`window_rows` reads: every committed FSDP profile on 2 and on 4 GPUs."""
BLOCKING_CALLS = ("cudaDeviceSynchronize", "cudaEventSynchronize", "cudaStreamSynchronize")
"""CUDA runtime calls in which a host waits for the GPU (the step's end, FSDP's rate limiter), not working."""

TRIED = (
    "Tried, not kept (branch h14skew21: commits 9935ad1 and be6cfbf, each reverted by the next; `ComputeParams."
    "host_jitter` in the training layer, default 0, a host block x (1 + jitter x e(n)); the jitter put in the "
    "default so every fit and prediction takes it, the host work refitted with it on the campaigns; before -> after, "
    "median |error| %, `python -m validation.accuracy --only llm` section 7, `python -m validation.llm_blind`, "
    "`python -m validation.fsdp_pair`): "
    "(A) every host block of an iteration (FSDP units, pipeline and TP passes), n = tp x pp x dp, jitter 0.087 "
    "(the 4-GPU profile's per-step jitter: a 4-GPU measurement, tried as the physical scale): sealed fsdp4 "
    "(H100, H200, B, C, D, E, F) 4.7 / 5.1 / 5.7 / 8.0 / 14.7 / 12.5 / 8.5 -> 4.7 / 4.8 / 5.4 / 8.0 / 14.2 / 12.3 / "
    "7.9, fsdppair4 (E, F) 8.7 / 11.5 -> 8.3 / 11.0, llm4 FSDP 4.1 / 4.9 / 3.0 / 8.7 / 2.8 / 3.7 / 2.9 -> 4.2 / 4.9 / "
    "2.9 / 8.6 / 2.6 / 3.7 / 3.1, llm4 PP 1.8 / 0.6 / 0.9 / 0.2 / 1.8 / 0.8 / 2.4 -> 2.4 / 0.8 / 1.2 / 0.8 / 2.4 / "
    "1.2 / 3.0, llm4 TP unchanged, vTrain h1024 x 12 layers 4.9 -> 4.5; blind 4x H100 2 / 4 GPUs 3.6 / 4.4 -> 4.2 / "
    "4.0, held-out 4x H200 lease 14.6 / 18.3 -> 16.8 / 19.1; fsdpissue leases (2 / 4 GPUs) h100x4 7.3 / 6.5 -> 7.2 / "
    "9.2, h100x4 fsdpissue2 8.2 / 2.4 -> 8.3 / 3.7, h200x4 5.1 / 9.0 -> 6.2 / 8.9, h200x2 6.2 -> 6.1; method d on the "
    "2-GPU paired files 2.4 / 20.3 / 8.9 / 6.1 / 10.9 / 15.7 -> 5.8 / 21.2 / 8.9 / 5.2 / 9.0 / 12.4. "
    "(B) the same with jitter 0.27 (the lathost probes' 2-rank per-call jitter, median over leases): fsdp4 -> 5.4 / "
    "4.3 / 4.8 / 8.1 / 12.8 / 12.1 / 6.8, fsdppair4 -> 7.5 / 9.7, llm4 FSDP -> 4.8 / 5.1 / 2.7 / 8.7 / 2.5 / 3.4 / "
    "3.1, llm4 PP -> 3.6 / 2.2 / 2.2 / 1.9 / 3.7 / 2.0 / 4.4, sealed H100 fsdp2 6.2 -> 7.0; blind 4x H100 -> 2.8 / "
    "3.0, "
    "held-out 4x H200 -> 21.8 / 21.0; fsdpissue h100x4 -> 7.2 / 14.9, fsdpissue2 -> 11.6 / 3.8, h200x4 -> 9.4 / 13.7, "
    "h200x2 -> 6.3; method d -> 12.0 / 23.0 / 10.5 / 3.1 / 5.7 / 6.9. "
    "(C) only FSDP units with an all-gather (the rate limiter makes the ranks meet at each; NO_SHARD ranks meet at "
    "the iteration's end), n = the shard group, pipeline and TP untouched, jitter 0.27: fsdp4 -> 5.0 / 10.9 / 7.7 / "
    "11.7 / 14.2 / 10.8 / 4.8, fsdppair4 -> 5.5 / 11.7, llm4 FSDP -> 7.2 / 3.3 / 1.9 / 12.1 / 3.1 / 3.1 / 2.0, fsdp2 "
    "6.2 -> 6.6; blind 4x H100 -> 2.8 / 4.3, held-out 4x H200 -> 15.3 / 12.0; fsdpissue h100x4 -> 6.1 / 5.8, "
    "fsdpissue2 -> 8.5 / 7.5, h200x4 -> 6.0 / 10.8, h200x2 -> 6.3; method d -> 1.7 / 19.6 / 9.2 / 6.0 / 11.4 / 16.9. "
    "Each moves some 4-GPU rows the right way and others, 2-GPU rows too, by more than a point the wrong way "
    "(A: the held-out H200 lease's 2 GPUs +2.2, fsdpissue 4 GPUs +2.7, the first paired file +3.4; B and C more), "
    "so none is kept. "
    "(D) branch h14fsdp24, today's model (main f8ec1e9): form C with the per-unit windows' jitter, 0.165 (NO_SHARD's "
    "free hosts on 2 GPUs, this module's window table; a trial field `ComputeParams.fsdp_sync_cv`, never committed: a"
    " unit's host x `simulator.training.stragglers.expected_max` over the shard group: x1.093 on 2 ranks, x1.170 on "
    "4), the host keys refitted (2 GPUs unit / gather / call 0.527 / 0.367 / 0.092 -> 0.528 / 0.239 / 0.092 ms, 4 "
    "GPUs 0.626 / 0.264 / 0.104 -> 0.574 / 0.135 / 0.104; `python -m validation.sealed_campaign`, leases in `SEALED` "
    "order; `--only llm`): sealed fsdp4 5.8 / 2.8 / 4.8 / 7.8 / 13.8 / 7.5 / 5.3 / 8.4 / 5.5 / 8.8 -> 2.5 / 2.2 / 3.1"
    " / 7.3 / 13.6 / 5.0 / 3.0 / 5.1 / 5.0 / 5.5, fsdppair4 8.1 / 10.9 / 11.2 / 6.9 / 14.4 -> 6.5 / 10.9 / 9.8 / 5.2 "
    "/ 14.5, fsdp2 6.7 -> 6.9, llm4 FSDP 4.4 / 5.6 / 1.4 / 9.2 / 2.5 / 3.0 / 3.0 / 7.0 / 4.0 / 6.6 -> 5.8 / 5.0 / 2.2"
    " / 10.6 / 2.6 / 4.2 / 2.4 / 5.8 / 3.9 / 6.5 (sealed FSDP run sets within 8%: 18 -> 21 of 26), llm4 TP at most "
    "+0.1; campaigns in sample FSDP h200x2c 2.5 -> 3.2, h200x4d 4.3 -> 3.2, h100x4h 2.4 -> 2.8; blind 4x H100 2 / 4 "
    "GPUs 2.9 / 4.9 -> 2.4 / 5.0; held-out 4x H200 16.4 / 19.6 -> 17.4 / 17.7; fsdpissue h100x4 6.9 / 6.9 -> 6.9 / "
    "6.7, fsdpissue2 6.8 / 2.8 -> 6.4 / 2.1, h200x4 3.0 / 10.0 -> 3.0 / 7.0, h200x2 5.0 -> 4.3; method d 3.7 / 9.9 / "
    "7.3 / 5.8 / 9.3 / 14.6 / 17.1 -> 4.0 / 10.0 / 7.3 / 5.3 / 9.0 / 14.6 / 16.8. The count rises, but four sealed "
    "llm4 FSDP sets (+0.8 to +1.4), two campaigns in sample (+0.7, +0.4) and the held-out lease's 2 GPUs (+1.0) get "
    "worse by more than 0.3 points: not kept. Why a constant factor cannot carry it: it charges FULL_SHARD h2048 "
    "about 3.6 / 6.5 ms per step on 2 / 4 GPUs (16 windows of 2.4 ms x 0.165 x e(n)), near the slowest rank's summed "
    "excess measured on 4 (6.30 ms) and twice the one on 2 (1.76 ms); but that excess is a spread, not a wait: hosts "
    "coupled as FSDP1 couples them (an all-gather starts when the last host has issued it, a host waits for the unit "
    "two back: `limiter_extension`, this module's rate-limited table) lose only the maximum of the ranks' random "
    "walks, 0.90 / 1.62 ms on 2 / 4 ranks whatever a unit's GPU side up to 2.0 ms, 0.36 / 0.57 ms once it exceeds the"
    " window: 0.7 ms between 2 and 4 ranks, about 2% of a 40 ms step, where the sealed FULL_SHARD rows miss by 4-9 "
    "ms. Charged in the forward only (the backward prefetches a unit ahead): 18 -> 21 too, but h200x4_2026-11-27d "
    "fsdp4 13.8 -> 16.9 and h200x4_2026-11-27f fsdppair4 10.9 -> 13.9. "
    "(E) branch h14fsdp26, main cb90eaa: the ranks as events instead of a factor (`ComputeParams.fsdp_rank_cv` / "
    "`fsdp_unit_cv`, `simulator.training.llm.fsdp_engine.RankPaces`, committed off): every rank's host, compute "
    "stream and streams simulated, each collective starting when the last rank reached it, each rank's pace for the "
    "step at the expected order statistics of its group (cv 0.132) and a seeded draw per unit (cv 0.084), both from "
    "NO_SHARD's free hosts on 2 GPUs (`free_paces`, this module's pace table), with and without the steady-state "
    "iteration (`fsdp_steady`); host keys refitted: sealed FSDP run sets within 8% 20 -> 24 of 34 (paces), 13 "
    "(steady state), 15 (both); the 4-GPU campaign's refit absorbs the paces (fsdp_unit_host_s 0.626 -> 0.379 ms), "
    "and section-7 rows get worse by up to 6 points (figures in the engine's docstring; "
    "`python validation/scripts/fsdp_steady_paces_s26.py`). Not kept. "
    "(F) branch h14host26 (h14fsdp26 on main cb90eaa): the 2-GPU campaign's host work (`h200x2_2026-11-26c`) for "
    "every world size, a model carried from the world size it was fitted on as issue 10 asks of collectives, instead "
    "of the same world size's (`llm_blind.HOST_FROM`; the sealed `llm4` rows and TP issue probe, section 7's other-GPU "
    "campaign and TP issue probes took the 4-GPU campaign's). The two fits agree on a sharded unit's host work (unit "
    "+ gather 0.894 / 0.890 ms on 2 / 4 GPUs) and split it differently (per unit 0.527 / 0.626, per all-gather "
    "0.367 / 0.264, per call 0.092 / 0.104 ms), so on 4 GPUs the 2-GPU host charges FULL_SHARD more and NO_SHARD "
    "less. `python validation/scripts/fsdp_steady_paces_s26.py VARIANT TARGET`, sealed FSDP run sets within 8% of 34 "
    "(today 20): every row that took the 4-GPU host (`off sealed2`) 22, with 21 sealed rows worse by more than 0.3 "
    "points (llm4 TP on 6 leases, up to +1.7: h200x4_2026-11-27d 3.5 -> 5.2; llm4 FSDP on 6, up to +1.4; fsdp4 on "
    "4: h200x4_2026-11-27d 13.8 -> 15.7, h200x4_2026-11-28c 12.3 -> 14.3; fsdppair4 on 5, up to +1.9); the "
    "FSDP-only rows alone (`off sealedf`) 22, 9 worse (those fsdp4 and fsdppair4 rows); with the per-rank paces "
    "(form E) 20 (`paces sealed2`, 20 worse, llm4 FSDP up to +8.2) and 22 (`paces sealedf`, 10 worse, "
    "h100x4_2026-11-27c fsdp4 7.8 -> 16.0). Section 7 (`off llm2`, `off llmf`: `--only llm`): the held-out 4x H200 "
    "lease's 4 GPUs 19.6 -> 16.4 and h200x4_2026-11-27_fsdpissue 4 GPUs 10.0 -> 7.0, but the blind 4x H100 lease's "
    "4 GPUs 4.9 -> 6.1 and h100x4_2026-11-27_fsdpissue 4 GPUs 6.9 -> 8.9 (both), and with the TP rows (`llm2`) "
    "h100x4_2026-11-26h TP 8.9 -> 9.5 and the h100x2_2026-11-26_tp probe's loops 8.5 -> 10.5; with the paces "
    "(`paces llm2`/`llmf`) the held-out lease 16.4 / 19.6 -> 20.6 / 27.2 and h200x2_2026-11-26c FSDP 2.5 -> 6.3. "
    "Selene (4.9 / 6.4%) and vTrain 8 GPUs (3.5%) unchanged: they take no carried host work. The count rises but "
    "figures get worse by more than 0.3 points in every variant: not kept.")
"""The model changes tried with this measurement and not kept, with their figures (text, not recomputed)."""


def expected_max(n: int) -> float:
    """E[max of n independent standard normals] (0 for one): how far, in units of a per-rank jitter's scale, the
    slowest of n ranks issues after the ranks' mean. Numerical integral of ``x d/dx Phi(x)^n``."""
    if n < 1:
        raise InputError("a rank count must be at least 1", field="ranks", value=n)
    x = np.linspace(-9.0, 9.0, 36001)
    phi = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    return float(np.sum(x * n * phi * cdf ** (n - 1)) * (x[1] - x[0]))


@dataclass(frozen=True)
class CollectiveSkew:
    """One collective of one profiled step (seconds): the ranks' arrival spread ``max - mean`` (the mean wait
    for the slowest rank), the host launches' spread on clocks aligned by the collectives' ends, and the transfer
    itself (the shortest of the ranks' kernels: the last rank to arrive waits for no one)."""

    point: str
    launch: int
    ranks: int
    op: str
    arrival_s: float
    issue_s: float | None
    transfer_s: float


def _calls(timeline: dict[str, Any]) -> dict[str, list[list[Any]]]:
    from validation.runners.step_timeline import NCCL_CLASSES

    seq: dict[str, list[list[Any]]] = defaultdict(list)
    for e in timeline["events"]:
        if e[1] in NCCL_CLASSES:
            seq[e[1]].append(e)
    return seq


def collective_skews(profiled: Any) -> list[CollectiveSkew]:
    """Every collective of one profiled step (``fsdp_profile.Profiled``) on all its ranks, paired by order within
    its class; empty where the ranks' counts differ."""
    tls = [t for t in profiled.record["timeline"] if t]
    calls = [_calls(t) for t in tls]
    keys = [(c, i) for c in calls[0] for i in range(len(calls[0][c]))]
    if len(tls) < 2 or any(len(cs[c]) != len(calls[0][c]) for cs in calls for c in calls[0]):
        return []

    def end(e: list[Any]) -> float:
        return e[2] + e[3]

    offset = [statistics.median(end(cs[c][i]) - end(calls[0][c][i]) for c, i in keys) for cs in calls]
    out = []
    for c, i in keys:
        es = [cs[c][i] for cs in calls]
        durs = [e[3] for e in es]
        launches = [e[4] - o for e, o in zip(es, offset) if e[4] is not None]
        issue = max(launches) - statistics.mean(launches) if len(launches) == len(es) else None
        out.append(CollectiveSkew(profiled.record["point"], int(profiled.record["launch_index"]), len(es), c,
                                  statistics.mean(durs) - min(durs), issue, min(durs)))
    return out


def step_hosts(profiled: Any) -> tuple[list[float], float] | None:
    """Per rank its host's busy seconds in the profiled step (wall less :data:`BLOCKING_CALLS`), and the step's
    wall seconds (the slowest rank's); None where the timeline has no runtime calls."""
    tls = [t for t in profiled.record["timeline"] if t]
    if not tls or any("runtime_calls" not in t for t in tls):
        return None
    busy = [t["wall_s"] - sum(t["runtime_calls"].get(k, (0, 0.0))[1] for k in BLOCKING_CALLS) for t in tls]
    return busy, max(t["wall_s"] for t in tls)


def lathost_spreads(folder: Path) -> dict[int, list[float]]:
    """Ranks -> every repetition's slowest-rank issue time per call over the ranks' mean, minus 1 (every
    ``rank_host_times_s`` of the folder's ``lat_world*.jsonl`` collective records, read by
    :func:`validation.parsers.read_jsonl`)."""
    out: dict[int, list[float]] = defaultdict(list)
    for path in sorted(folder.glob("lat_world*_L*.jsonl")):
        for point in parsers.read_jsonl(path).points:       # the collective records, their host times checked
            if not point.rank_host_times_s:
                continue
            a = np.asarray(point.rank_host_times_s, dtype=float)
            m = a.mean(axis=0)
            out[a.shape[0]].extend(((a.max(axis=0) - m) / m).tolist())
    return dict(out)


def _short(point: str) -> str:
    words = point.split()
    strategy = words[1].upper() if len(words) > 1 else point
    hidden = next((w.split(",")[0].split("=")[1] for w in words if w.startswith("hidden=")), "?")
    return f"{strategy} h{hidden}"


def _ms(xs: Sequence[float]) -> str:
    return f"{statistics.median(xs) * 1e3:.2f} / {statistics.mean(xs) * 1e3:.2f} / " \
           f"{float(np.percentile(xs, 90)) * 1e3:.2f}"


def profile_rows(folders: Sequence[Path] = PROFILES) -> list[str]:
    from validation.fsdp_profile import read_profiled

    lines = ["Profiled FSDP steps: per collective the ranks' arrival spread (max - mean of the NCCL kernels' starts "
             "= mean - min of their durations) and the host launches' spread (max - mean, clocks aligned by the "
             "collectives' ends), ms, median / mean / p90 over the collectives of both passes' launches:", "",
             "| lease | ranks | configuration | collectives | arrival spread | launch spread |",
             "|---|---|---|---|---|---|"]
    medians: dict[tuple[int, str], float] = {}
    for folder in folders:
        skews = [s for f in sorted(folder.glob("fsdpprof_world*.jsonl")) for p in read_profiled(f)
                 for s in collective_skews(p)]
        if not skews:
            raise InputError("no profiled FSDP steps", source=str(folder))
        by: dict[str, list[CollectiveSkew]] = defaultdict(list)
        for s in skews:
            by[_short(s.point)].append(s)
        for name, ss in by.items():
            arr = [s.arrival_s for s in ss]
            iss = [s.issue_s for s in ss if s.issue_s is not None]
            medians[(ss[0].ranks, name)] = statistics.median(arr)
            lines.append(f"| {folder.name} | {ss[0].ranks} | {name} | {len(ss)} | {_ms(arr)} | "
                         f"{_ms(iss) if iss else '-'} |")
    lines += ["", f"4 ranks over 2 (median arrival spread); independent normal draws: e(4)/e(2) = "
              f"{expected_max(4) / expected_max(2):.2f}: " + ", ".join(
                  f"{name} {medians[(4, name)] / medians[(2, name)]:.2f}" for n, name in sorted(medians)
                  if n == 2 and (4, name) in medians)]
    return lines


def step_rows(folders: Sequence[Path] = PROFILES) -> list[str]:
    from validation.fsdp_profile import read_profiled

    rows = []
    for folder in folders:
        for f in sorted(folder.glob("fsdpprof_world*.jsonl")):
            for p in read_profiled(f):
                got = step_hosts(p)
                if got is None:
                    continue
                busy, wall = got
                rows.append((folder.name, len(busy), _short(p.record["point"]),
                             (max(busy) - statistics.mean(busy)) / statistics.mean(busy), wall - max(busy)))
    if not rows:
        return []
    rel = [r[3] for r in rows]
    n = rows[0][1]
    return ["Per-rank host busy time per profiled step (wall less blocking waits; leases with runtime calls):", "",
            "| lease | ranks | steps | slowest over mean: min / mean / max % | implied per-step jitter "
            "(mean / e(n)) | wall over the slowest host, ms: min-max |", "|---|---|---|---|---|---|",
            f"| {rows[0][0]} | {n} | {len(rows)} | {min(rel) * 100:.1f} / {statistics.mean(rel) * 100:.1f} / "
            f"{max(rel) * 100:.1f} | {statistics.mean(rel) / expected_max(n):.3f} | "
            f"{min(r[4] for r in rows) * 1e3:.2f}-{max(r[4] for r in rows) * 1e3:.2f} |"]


@dataclass(frozen=True)
class RankWindows:
    """One profiled step's hosts rank by rank between consecutive launches of its data-parallel collectives
    (FULL_SHARD's all-gathers, NO_SHARD's all-reduces: :func:`window_collective`), each on its own rank's clock, so
    no alignment is needed: a *window* is one rank's host time from one launch to the next (one unit's issue and
    hooks). ``spread``: per window, the standard deviation over the ranks (``ddof`` 1) over their mean;
    ``excess_s``: over the step's windows, the sum of the slowest rank's window less the mean rank's (what a group
    would lose if it waited at every collective for its last rank; hosts that run free of each other show it as
    well, so it measures the spread, not a wait); ``mean_s``: the mean window; ``deviations``: rank by rank, each
    window over the ranks' mean for that window, less 1 (:func:`pace_spread`)."""

    ranks: int
    spread: tuple[float, ...]
    excess_s: float
    mean_s: float
    deviations: tuple[tuple[float, ...], ...] = ()


def window_collective(strategy: str) -> str:
    """The collective whose launches bound a configuration's windows: NO_SHARD issues one all-reduce per unit and no
    all-gather, the sharded strategies one all-gather per gathered unit."""
    return "all_reduce" if strategy == "no_shard" else "all_gather"


def rank_windows(timelines: Sequence[dict[str, Any]], collective: str) -> RankWindows | None:
    """:class:`RankWindows` of one step's per-rank timelines at the launches of ``collective``; None with fewer
    than two ranks or two launches each, or ranks with different counts."""
    launches = [sorted(e[4] for e in t["events"] if e[1] == collective and e[4] is not None) for t in timelines]
    counts = {len(x) for x in launches}
    if len(launches) < 2 or len(counts) != 1 or counts.pop() < 2:
        return None
    windows = list(zip(*[[b - a for a, b in zip(x, x[1:])] for x in launches]))
    deviations = tuple(zip(*[[x / statistics.mean(w) - 1 for x in w] for w in windows]))
    return RankWindows(len(launches), tuple(statistics.stdev(w) / statistics.mean(w) for w in windows),
                       sum(max(w) - statistics.mean(w) for w in windows),
                       statistics.mean(statistics.mean(w) for w in windows), deviations)


@dataclass(frozen=True)
class PaceSpread:
    """The ranks' host spread of :func:`pace_spread`, split in two (relative to the mean rank): ``step_cv``, a pace
    each rank keeps for the whole step, and ``unit_cv``, what varies from window to window around it."""

    step_cv: float
    unit_cv: float
    steps: int


def pace_spread(steps: Sequence[RankWindows]) -> PaceSpread:
    """One-way analysis of variance of the windows' deviations (:attr:`RankWindows.deviations`), rank within step:
    the within-rank variance gives ``unit_cv``; the variance of the ranks' mean deviations, less the share of it the
    window-to-window spread explains (``unit_cv^2 / windows``), ``step_cv``. Deviations from the mean of ``n`` ranks
    shrink each variance by ``(n - 1) / n``, which is undone."""
    within, between, count = [], [], []
    for w in steps:
        n, k = len(w.deviations), len(w.deviations[0])
        for rank in w.deviations:
            m = statistics.mean(rank)
            within.append(sum((x - m) ** 2 for x in rank) / (k - 1) * n / (n - 1))
            between.append(m * m * n / (n - 1))
            count.append(k)
    unit2 = statistics.mean(within)
    step2 = statistics.mean(between) - unit2 * statistics.mean(1 / k for k in count)
    return PaceSpread(math.sqrt(max(step2, 0.0)), math.sqrt(unit2), len(steps))


def free_paces(folders: Sequence[Path] = WINDOW_PROFILES, ranks: int = 2) -> PaceSpread:
    """:func:`pace_spread` of NO_SHARD's hosts on ``ranks`` GPUs, pooled over its configurations: no all-gather and
    no rate limiter couples them, so their spread is each host's own (the sharded strategies' hosts wait for each
    other, which hides it)."""
    return pace_spread([s for (n, name), ws in step_windows(folders).items() if n == ranks
                        and name.startswith("NO_SHARD") for s in ws])


def step_windows(folders: Sequence[Path] = WINDOW_PROFILES) -> dict[tuple[int, str], list[RankWindows]]:
    """(ranks, configuration) -> :class:`RankWindows` of every profiled step in ``folders``."""
    from validation.fsdp_profile import read_profiled

    out: dict[tuple[int, str], list[RankWindows]] = defaultdict(list)
    for folder in folders:
        for f in sorted(folder.glob("fsdpprof_world*.jsonl")):
            for p in read_profiled(f):
                w = rank_windows([t for t in p.record["timeline"] if t], window_collective(p.record["strategy"]))
                if w is not None:
                    out[(w.ranks, _short(p.record["point"]))].append(w)
    return dict(out)


def pace_rows(folders: Sequence[Path] = WINDOW_PROFILES) -> list[str]:
    lines = ["Per-unit host windows split into a pace each rank keeps for the step and the spread from window to window "
             "around it (:func:`pace_spread`; NO_SHARD's free hosts pooled: :func:`free_paces`, the spread "
             "`ComputeParams.fsdp_rank_cv` / `fsdp_unit_cv` were tried with):", "",
             "| ranks | configuration | steps | pace kept for the step (cv) | window to window (cv) |", "|---|---|---|---|---|"]
    groups = sorted(step_windows(folders).items())
    for (n, name), ws in groups:
        s = pace_spread(ws)
        lines.append(f"| {n} | {name} | {s.steps} | {s.step_cv:.3f} | {s.unit_cv:.3f} |")
    for n in sorted({n for (n, _), _ in groups}):
        s = free_paces(folders, n)
        lines.append(f"| {n} | NO_SHARD pooled | {s.steps} | {s.step_cv:.3f} | {s.unit_cv:.3f} |")
    return lines


def rms(xs: Sequence[float]) -> float:
    return math.sqrt(sum(x * x for x in xs) / len(xs))


def window_rows(folders: Sequence[Path] = WINDOW_PROFILES) -> list[str]:
    lines = ["Per-unit host windows (each rank's host from one data-parallel collective's launch to the next, its own "
             "clock): the ranks' spread (RMS over windows and steps) and the slowest rank's summed excess over the "
             "mean rank per step (ms, median / mean / p90 over steps):", "",
             "| ranks | configuration | steps | windows per step | mean window ms | spread over ranks (RMS) | "
             "slowest rank's summed excess |", "|---|---|---|---|---|---|---|"]
    for (n, name), ws in sorted(step_windows(folders).items()):
        lines.append(f"| {n} | {name} | {len(ws)} | {len(ws[0].spread)} | "
                     f"{statistics.median(w.mean_s for w in ws) * 1e3:.2f} | "
                     f"{rms([x for w in ws for x in w.spread]):.3f} | {_ms([w.excess_s for w in ws])} |")
    return lines


def _limited_step_s(x: np.ndarray, gpu_s: float) -> np.ndarray:
    """Per draw, when the last unit's kernels end: ``x`` the hosts' windows (draws x ranks x windows, s); a unit's
    all-gather starts when the last host has issued it, its kernels end ``gpu_s`` after that and after the previous
    unit's, and a host issues the next all-gather only once the unit :data:`MAX_INFLIGHT_GATHERS` back is done."""
    draws, ranks, windows = x.shape
    issue = np.zeros((draws, ranks))
    done: list[np.ndarray] = []
    for k in range(windows + 1):
        if k:
            issue = issue + x[:, :, k - 1]
        if k >= MAX_INFLIGHT_GATHERS:
            issue = np.maximum(issue, done[k - MAX_INFLIGHT_GATHERS][:, None])
        start = issue.max(axis=1)
        done.append((np.maximum(start, done[-1]) if done else start) + gpu_s)
    return done[-1]


def limiter_extension(ranks: int, windows: int, window_s: float, cv: float, gpu_s: float, draws: int,
                      rng: np.random.Generator) -> float:
    """Mean seconds a step of ``windows`` host windows (``window_s`` each, every rank's drawn independently, normal
    with ``cv``) takes beyond the same step with no spread, when ``ranks`` hosts couple only as FSDP1 couples them
    (:func:`_limited_step_s`). Hosts run free otherwise, so unless ``gpu_s`` nears ``window_s`` the step loses only
    the maximum of the ranks' random walks, not a maximum per window."""
    x = window_s * (1 + cv * rng.standard_normal((draws, ranks, windows)))
    flat = _limited_step_s(np.full((1, ranks, windows), window_s), gpu_s)
    return float(_limited_step_s(x, gpu_s).mean() - flat[0])


def limiter_rows(rng: np.random.Generator | None = None) -> list[str]:
    """The step's loss to its slowest host under the rate limiter (:func:`limiter_extension`) for FULL_SHARD h2048's
    windows (16 of 2.4 ms between its 17 all-gathers, cv 0.165 of the 2-GPU NO_SHARD windows), against the per-window
    maximum (``windows x window x cv x e(n)``, what a host factor of ``1 + cv e(n)`` on every gated unit charges)."""
    rng = rng or np.random.default_rng(0)
    lines = ["Rate-limited hosts (16 windows of 2.4 ms, cv 0.165, 20000 draws): the step's loss to its slowest host, "
             "ms, by a unit's GPU side, against the per-window maximum:", "",
             "| ranks | GPU side 0.3 ms | 1.2 ms | 2.0 ms | 2.6 ms | per-window maximum |", "|---|---|---|---|---|---|"]
    for n in (2, 4):
        cells = [limiter_extension(n, 16, 2.4e-3, 0.165, g * 1e-3, 20000, rng) * 1e3 for g in (0.3, 1.2, 2.0, 2.6)]
        lines.append(f"| {n} | " + " | ".join(f"{c:.2f}" for c in cells)
                     + f" | {16 * 2.4 * 0.165 * expected_max(n):.2f} |")
    return lines


def lathost_rows(folders: Sequence[Path] | None = None) -> list[str]:
    folders = folders if folders is not None else sorted(p for p in DATA.glob("*_lat*") if p.is_dir())
    lines = ["Lathost probes: slowest rank's host issue time per call over the ranks' mean, minus 1, per repetition "
             "(%: mean / median / p90 over points and repetitions), and the mean at 3 and 4 ranks that normal draws "
             "scaled from the same lease's 2 ranks give (mean(2) x e(n) / e(2)):", "",
             "| lease | 2 ranks | 3 ranks | predicted | 4 ranks | predicted | implied jitter (2 ranks) |",
             "|---|---|---|---|---|---|---|"]
    for folder in folders:
        s = lathost_spreads(folder)
        if 2 not in s:
            continue
        sigma = statistics.mean(s[2]) / expected_max(2)

        def cell(n: int) -> str:
            if n not in s:
                return "- | -"
            x = s[n]
            pred = "" if n == 2 else f" | {sigma * expected_max(n) * 100:.1f}"
            return (f"{statistics.mean(x) * 100:.1f} / {statistics.median(x) * 100:.1f} / "
                    f"{float(np.percentile(x, 90)) * 100:.1f}{pred}")
        lines.append(f"| {folder.name} | {cell(2)} | {cell(3)} | {cell(4)} | {sigma:.3f} |")
    return lines


def lease_rows() -> list[str]:
    """Per sealed lease with FSDP-only rows: its lathost probe's 2-rank jitter and 4-rank spread beside section 7's
    signed errors of those rows (predicted over measured, minus 1; today's model and method)."""
    from validation import sealed_campaign as sc

    lines = ["Sealed leases: the lathost probe's per-rank jitter (2 ranks: mean spread / e(2)) and 4-rank mean spread "
             "beside section 7's FSDP-only rows (signed error %, predicted over measured minus 1; median |error|):",
             "",
             "| lease | lathost jitter, 2 ranks | lathost spread, 4 ranks % | row | signed errors % | "
             "median |error| % |",
             "|---|---|---|---|---|---|"]
    for c in sc.SEALED:
        spreads = lathost_spreads(c.lat)
        for label, name, runner in c.runs:
            if not label.startswith("fsdp") or 2 not in spreads:
                continue
            errs = [(_short(e.point), (e.predicted_s / e.measured_s - 1) * 100)
                    for e in sc._scored(label, c.llm / name, runner, c)]
            four = f"{statistics.mean(spreads[4]) * 100:.1f}" if 4 in spreads else "-"
            lines.append(f"| {c.llm.name} | {statistics.mean(spreads[2]) / expected_max(2):.3f} | {four} | {label} | "
                         + ", ".join(f"{k} {x:+.1f}" for k, x in errs)
                         + f" | {statistics.median(abs(x) for _, x in errs):.1f} |")
    return lines


def report(leases: bool = False) -> list[str]:
    return (["## Rank skew", "", *profile_rows(), "", *step_rows(), "", *window_rows(), "", *pace_rows(), "",
             *limiter_rows(), "",
             *lathost_rows()]
            + (["", *lease_rows()] if leases else []) + ["", TRIED])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.rank_skew",
                                description="rank skew of collectives' issue on 2 and 4 GPUs (profiled FSDP steps, "
                                            "lathost probes) against the expected maximum of n draws")
    p.add_argument("--leases", action="store_true",
                   help="also the sealed leases' lathost jitter beside their FSDP-only rows' errors (fits: ~10 s)")
    a = p.parse_args(argv)
    return print_lines(lambda: report(a.leases))


if __name__ == "__main__":
    sys.exit(main())
