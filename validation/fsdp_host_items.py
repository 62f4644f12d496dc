"""What the host does at each FSDP unit boundary, itemised from ``fsdp --profile-host`` steps.

::

    python -m validation.fsdp_host_items [FILE ...]

Reads the FSDP runner's host-profiled steps (``step_timeline.host_step``: one step per point with CPU activity;
default: every ``fsdpprof_world*.jsonl`` under ``validation/data`` that has them) and, per configuration, splits the
host's work into the windows between consecutive compute-stream GEMM launches at FSDP unit boundaries
(``fsdp_profile.boundary_gaps``: from a block's last GEMM launch to the next block's first, forward and backward).
Per boundary it counts what starts in the window, by name: record-function ranges (FSDP1's hooks), top-level
operator calls (the autograd engine's nodes in the backward) and CUDA runtime calls, with their summed profiled
microseconds, and takes the same windows of the whole model alone on one GPU (the profile point's host step) from
them. Medians over ranks and launches. The CPU activity slows the host (a few microseconds per operator), so the
microseconds are the profiled step's; the counts are the unprofiled step's.

What the first such lease shows (``h200x2_2026-11-27b_fsdpprof``, 2x H200, 2026-11-27 19:56-19:58 UTC, branch
h14fsdp21; NO_SHARD, FULL_SHARD and SHARD_GRAD_OP of hidden 2048 x 8 and 4096 x 4, 3 launches, 2 ranks), per
boundary, FSDP less the model alone:

* backward, every strategy: FSDP1's ``_post_backward_hook`` (425-439 us NO_SHARD, 637-724 us sharded; inside it the
  reduction's call, ``nccl:all_reduce`` / ``nccl:_reduce_scatter_base`` 87-104 us, the pre-division's kernel and,
  sharded, the unsharded parameter's free), ``_pre_backward_hook`` (214-216 us NO_SHARD, 270-316 SHARD_GRAD_OP,
  497-501 FULL_SHARD with the next unit's all-gather issue, ``_pre_backward_prefetch`` 110-388 us); the autograd
  engine's nodes of FSDP1's unsharded views: 9-10.5 more ``ViewBackward0`` (one per original parameter, 125-154 us)
  and one ``SplitWithSizesBackward0`` (84-99 us: it launches the flat gradient's copy), one ``AccumulateGrad`` for
  the flat parameter where the model alone has five; runtime calls: 17-22 more ``cudaEventRecord``, 12-16
  ``cudaStreamWaitEvent``, 9-16 ``cudaEventQuery`` (the caching allocator's record-stream events), 1.5-1.8
  ``cudaLaunchKernel`` (the copy and the division) and 0.6-1.7 ``cuLaunchKernelEx`` (NCCL), about 1-2 us each;
* forward: ``_pre_forward`` (576-616 us NO_SHARD, 963-1007 us sharded: the all-gather's issue 128-134 us),
  ``_post_forward`` (80-98 us, FULL_SHARD 262-273 us: it frees the parameters), the unsharded views' ``split`` and
  12 ``view`` calls, 3-4 ``cudaEventRecord`` and 3 ``cudaStreamWaitEvent`` (sharded), none NO_SHARD.

So the runtime calls themselves (about 60 more per backward boundary, 1-2 us each) are a small part of the
boundary's host time: it is Python (FSDP1's hooks) and the autograd engine's extra nodes. What the backward has
that the forward has not: the reduction's call and its kernels (division, flat-gradient copy), the view nodes, and
for SHARD_GRAD_OP the free of the unsharded parameters, which the simulation charges with the all-gather in the
forward (``fsdp_gather_host_s``) and not at all in the backward.

In the model since main 5fec702 (tried on branch h14fsdp21, adopted by the session's lead): the backward of every FSDP unit charges the host issue of the kernels FSDP1's
post-backward hook launches (the unit's flat-gradient copy and pre-/post-divisions, ``MemOp`` s the model already
times on the GPU) at the host's cost per kernel (``host_block_s`` over the block forward's kernels, as every other
kernel is charged) and the reduction's call at ``host_collective_s`` (one per unit, two under HYBRID_SHARD with
replicas), no new constant; written before the lease above was measured. The host keys refit on the campaigns
(2 GPUs ``fsdp_unit_host_s`` 0.619 -> 0.527 ms, 4 GPUs 0.780 -> 0.626 ms), so the forward's charge fell and the
backward's rose: per unit (``fsdp_profile --boundaries``) simulated backward NO_SHARD 0.92-1.21, FULL_SHARD 1.35-1.50
ms against 0.85-1.28 and 1.28-1.71 measured (before: as the forward, 0.75-1.00 and 1.13-1.26), SHARD_GRAD_OP 0.77-0.78
-> 0.95-0.96 against 1.20-1.40 (the free it does not charge there). FSDP median |error|
%, before -> after (method in use of each row, ``python -m validation.accuracy --only llm`` section 7,
``python -m validation.fsdp_pair``): campaigns h200x2c 3.6 -> 2.6, h200x4d 3.9 -> 4.2, h100x4h 2.6 -> 2.4;
h100x4_2026-11-26f 2 / 4 GPUs 3.6 / 4.4 -> 2.8 / 4.9; h200x4_2026-11-26_fsdp 14.6 / 18.3 -> 16.5 / 19.6;
h100x4_2026-11-27_fsdpissue 7.3 / 6.5 -> 6.9 / 6.9; fsdpissue2 8.2 / 2.4 -> 6.8 / 2.8; h200x4_2026-11-27_fsdpissue
5.1 / 9.0 -> 2.9 / 9.9; h200x2_2026-11-27_fsdpissue 6.2 -> 4.9; method d fsdppair L1 / L2, fsdppairb L1 / L2,
fsdpprof L1 / L2: 2.4 / 20.3 / 8.9 / 6.1 / 10.9 / 15.7 -> 3.3 / 17.7 / 7.2 / 5.9 / 9.3 / 14.7, the lease above
(held out) 18.5 -> 17.1; sealed leases 1-7 ``llm4`` FSDP 4.1 / 4.9 / 3.0 / 8.7 / 2.8 / 3.7 / 2.9 -> 4.4 / 5.6 / 1.4 /
9.2 / 2.5 / 3.0 / 3.0, ``fsdp4`` 4.7 / 5.1 / 5.7 / 8.0 / 14.7 / 12.5 / 8.5 -> 5.8 / 2.8 / 4.8 / 7.8 / 13.8 / 11.1 /
5.6, ``fsdp2`` (first) 6.2 -> 6.7, ``fsdppair4`` (sixth, seventh) 8.7 / 11.5 -> 8.1 / 10.9. Better on 24 of 38 rows,
but worse by more than a point on three (h200x4_2026-11-26_fsdp 2 and 4 GPUs, where every configuration was
already predicted 6-31% too slow, and the first sealed lease's ``fsdp4``). The branch's rule (no row worse by more
than a point) would not keep it; the lead kept it because the work is counted, not fitted, and most rows, five of
seven sealed ``fsdp4`` and both ``fsdppair4`` rows gain, and decided so before the eighth sealed lease
(``h100x4_2026-11-27g``) was scored under it: that lease is its blind test (``python -m validation.sealed_campaign``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from simulator.core.errors import InputError
from validation.fsdp_profile import (DATA, PROFILE_FILES, Profiled, boundary_gaps, checked_events, is_number,
                                     read_profiled)
from validation.check_cli import print_lines
from validation.runners.step_timeline import summarize_timeline

KINDS = ("ranges", "ops", "calls")
"""The host step's rows (``step_timeline.read_host_trace``): record-function ranges, top-level operator calls,
runtime calls."""
SHOWN = 0.5
"""An item is listed where FSDP's count per boundary differs from the model alone's by at least this much in
either pass (FSDP's own ranges are listed whenever they occur)."""

Window = tuple[float, float]


def checked_host(host: Mapping[str, Any], path: Path, where: str) -> Mapping[str, Any]:
    """One host-profiled step (``step_timeline.read_host_trace``'s object) as read, or an :class:`InputError` naming
    the file, the field (``where.events[k]``, ``where.ranges[k]``, ...) and the value."""
    names, threads = host.get("names"), host.get("threads")
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise InputError("expected the step's names (a list of strings)", source=str(path), field=f"{where}.names",
                         value=names)
    if not isinstance(threads, list):
        raise InputError("expected the step's thread ids (a list)", source=str(path), field=f"{where}.threads",
                         value=threads)
    checked_events(host.get("events"), path, f"{where}.events")
    for kind in KINDS:
        rows = host.get(kind)
        if not isinstance(rows, list):
            raise InputError("expected a list of rows", source=str(path), field=f"{where}.{kind}", value=rows)
        for k, row in enumerate(rows):
            if not (isinstance(row, list) and len(row) >= 4 and isinstance(row[0], int) and 0 <= row[0] < len(names)
                    and isinstance(row[1], int) and 0 <= row[1] < len(threads)
                    and is_number(row[2]) and is_number(row[3])):
                raise InputError("expected [name index, thread index, start_us, duration_us, ...] with indices into "
                                 "names and threads", source=str(path), field=f"{where}.{kind}[{k}]", value=row)
    return host


def windows(host: Mapping[str, Any], layers: int) -> tuple[list[Window], list[Window]] | None:
    """The forward's and the backward's unit-boundary windows (us, the host step's clock) of one host step: from the
    launch of a unit's last compute-stream GEMM to the next unit's first; None where the GEMM count does not fit the
    runners' GPT (``fsdp_profile.boundary_gaps``)."""
    events = host["events"]
    stream = summarize_timeline(events)["compute_stream"]
    launches = sorted(e[4] * 1e6 for e in events if str(e[0]) == stream and e[1] == "gemm" and e[4] is not None)
    bounds = boundary_gaps(len(launches), layers)
    if bounds is None:
        return None
    fwd, bwd, _ = bounds
    return ([(launches[i], launches[i + 1]) for i in sorted(fwd)],
            [(launches[i], launches[i + 1]) for i in sorted(bwd)])


def tally(host: Mapping[str, Any], spans: Sequence[Window]) -> dict[tuple[str, str], tuple[float, float]]:
    """Per (kind, name): the rows starting in ``spans``, as (count, summed us) per window."""
    names = host["names"]
    n, us = Counter(), Counter()
    for lo, hi in spans:
        for kind in KINDS:
            for row in host[kind]:
                if lo <= row[2] < hi:
                    n[kind, names[row[0]]] += 1
                    us[kind, names[row[0]]] += row[3]
    return {k: (n[k] / len(spans), us[k] / len(spans)) for k in n}


@dataclass(frozen=True)
class Item:
    """One name's work per unit boundary, FSDP less the model alone (medians over ranks and launches)."""

    kind: str
    name: str
    forward_n: float
    backward_n: float
    forward_us: float
    backward_us: float


@dataclass(frozen=True)
class Itemised:
    """One configuration's boundaries: the windows' length (us, FSDP and alone) and its items."""

    label: str
    steps: int
    window_us: tuple[float, float, float, float]       # FSDP forward, backward; alone forward, backward
    items: tuple[Item, ...]


def itemise(profiled: Sequence[Profiled]) -> Itemised | None:
    """:class:`Itemised` of one configuration's launches (each with its profile point's host steps); None where no
    rank has a host step that fits the runners' GPT."""
    rec = profiled[0].record
    layers = int(rec["layers"])
    steps = []
    for p in profiled:
        alone = [t.get("host") for t in p.model_timelines]
        for rank, t in enumerate(rec_t for rec_t in p.record["timeline"] if rec_t):
            host = t.get("host")
            if not host or "error" in host or rank >= len(alone) or not alone[rank] or "error" in alone[rank]:
                continue
            checked_host(host, p.path, f"point {p.record.get('point')}: timeline[{rank}].host")
            checked_host(alone[rank], p.path,
                         f"launch {p.record.get('launch_index')} profile point: model_timeline[{rank}].host")
            mine, theirs = windows(host, layers), windows(alone[rank], layers)
            if mine is None or theirs is None:
                continue
            steps.append(((tally(host, mine[0]), tally(host, mine[1]), tally(alone[rank], theirs[0]),
                           tally(alone[rank], theirs[1])),
                          tuple(statistics.fmean(b - a for a, b in w) for w in (*mine, *theirs))))
    if not steps:
        return None
    keys = {k for parts, _ in steps for part in parts for k in part}

    def med(k: tuple[str, str], i: int, j: int) -> float:
        return statistics.median(parts[i].get(k, (0.0, 0.0))[j] for parts, _ in steps)

    items = []
    for k in keys:
        fwd_n, bwd_n = med(k, 0, 0) - med(k, 2, 0), med(k, 1, 0) - med(k, 3, 0)
        own = k[0] == "ranges" and max(med(k, 0, 0), med(k, 1, 0)) > 0
        if own or max(abs(fwd_n), abs(bwd_n)) >= SHOWN:
            items.append(Item(k[0], k[1], fwd_n, bwd_n, med(k, 0, 1) - med(k, 2, 1), med(k, 1, 1) - med(k, 3, 1)))
    items.sort(key=lambda x: (KINDS.index(x.kind), -abs(x.backward_n - x.forward_n), x.name))
    lengths = tuple(statistics.median(w[i] for _, w in steps) for i in range(4))
    return Itemised(f"{rec['strategy']} h{rec['hidden']}", len(steps), lengths, tuple(items))  # type: ignore[arg-type]


def has_host_steps(path: Path) -> bool:
    return any(t and t.get("host") for p in read_profiled(path) for t in p.record["timeline"])


def report(paths: Sequence[Path]) -> list[str]:
    lines: list[str] = []
    for path in paths:
        by: dict[str, list[Profiled]] = {}
        for p in read_profiled(path):
            by.setdefault(p.record["point"], []).append(p)
        for ps in by.values():
            it = itemise(ps)
            if it is None:
                continue
            w = it.window_us
            lines += [f"## {path.parent.name}/{path.name}: {it.label} ({it.steps} host steps)", "",
                      f"Boundary window (profiled us): forward {w[0]:.0f} (alone {w[2]:.0f}), backward {w[1]:.0f} "
                      f"(alone {w[3]:.0f}).", "",
                      "| kind | name | per forward boundary: n | us | per backward boundary: n | us |",
                      "|---|---|---|---|---|---|"]
            lines += [f"| {x.kind} | `{x.name[:70]}` | {x.forward_n:+.1f} | {x.forward_us:+.0f} | {x.backward_n:+.1f} | "
                      f"{x.backward_us:+.0f} |" for x in it.items]
            lines.append("")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.fsdp_host_items",
                                description="the host's work per FSDP unit boundary, itemised (fsdp --profile-host "
                                            "files)")
    p.add_argument("files", nargs="*", type=Path)
    a = p.parse_args(argv)

    def lines() -> list[str]:
        paths = a.files or [f for f in sorted(DATA.glob(f"*/{PROFILE_FILES}")) if has_host_steps(f)]
        if not paths:
            raise InputError("no fsdp --profile-host records", field="files")
        return report(paths)

    return print_lines(lines)


if __name__ == "__main__":
    sys.exit(main())
