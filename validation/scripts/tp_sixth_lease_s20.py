"""Why TP misses on the sixth sealed lease (h200x4_2026-11-27e_llm, 8.4%), beside the other leases (stop 20, issue 14).

::

    python validation/scripts/tp_sixth_lease_s20.py

Each lease's ``llm4`` TP runs predicted as docs/accuracy.md section 7 predicts them (``validation.sealed_campaign``:
compute fitted on the lease's own profiles and no-communication loops, host work of ``h200x4_2026-11-26d`` carried
in block-issue units). Printed per configuration: measured (median of the launches, and each launch), predicted,
the model's GPU side (kernels + collectives) and host side, the no-communication loop measured and fitted, and the
in-loop host cost per collective call measured ((loop - no-comm loop) / calls: over the identity without SP, over
the copy stand-ins with SP) beside the one the model charges (``host_collective_s``). Per lease: its fitted TP
block issue time, the host's per-call issue of small collectives from its own ``lathost`` files (every rank's
``rank_host_times_s``, < 64 KiB, 4 GPUs; median over points of the fastest rank's median), and how well each
candidate carrier of the per-call cost (block issue, lathost) would hold one ratio across the leases.
"""

from __future__ import annotations

import math
import statistics
import sys
from dataclasses import replace

import numpy as np

from simulator.core.inputs import read_jsonl
from validation import llm_real as lr, sealed_campaign as sc
from validation.llm_records import group_runs, read_llm_records

SMALL_BYTES = 64 * 1024


def lathost_call_s(folder, world: int = 4) -> float:
    """The fastest rank's median host issue time per call of small collectives, median over the points (s)."""
    values = []
    for path in sorted(folder.glob(f"lat_world{world}_L*.jsonl")):
        for _, r in read_jsonl(path):
            if (r.get("kind") == "coll" and r.get("rank_host_times_s") and r.get("bytes", 0) < SMALL_BYTES
                    and r.get("variant", "default") == "default"):
                values.append(float(np.median(np.asarray(r["rank_host_times_s"]), axis=1).min()))
    return float(np.median(values)) if values else float("nan")


def lease_predictor(c: sc.Sealed, host):
    records = read_llm_records([c.llm / "llm_world4.jsonl"])
    pred, _, _ = lr.fitted_predictor(records, c.calibration)
    return records, host.applied(pred)


def tp_log_errors(records, pred, host_collective_s: float) -> list[float]:
    """log(predicted / measured) of the TP configurations with ``host_collective_s`` per call."""
    p = pred.with_compute(replace(pred.compute, host_collective_s=host_collective_s))
    return [math.log(p.iteration_s(g.first) / g.median_s) for g in group_runs([r for r in records.runs if r.runner == "tp"])]


def lathost_trial(host) -> list[str]:
    """The per-call cost carried by the lease's own lathost issue time (``m x lathost``, ``m`` fitted on the other
    sealed leases' TP runs, least squares on log ratios over a grid), against the shipped carry: TP median |err| %."""
    leases = [(c, *lease_predictor(c, host), lathost_call_s(c.lat)) for c in sc.SEALED]
    grid = np.arange(2.0, 9.0, 0.02)
    out = []
    for i, (c, records, pred, lat) in enumerate(leases):
        sse = [sum(e * e for j, (_, rr, pp, ll) in enumerate(leases) if j != i for e in tp_log_errors(rr, pp, m * ll))
               for m in grid]
        m = float(grid[int(np.argmin(sse))])
        shipped = np.median([abs(math.exp(e) - 1) for e in tp_log_errors(records, pred, pred.compute.host_collective_s)])
        trial = np.median([abs(math.exp(e) - 1) for e in tp_log_errors(records, pred, m * lat)])
        out.append(f"| {c.llm.name} | {m:.2f} | {m * lat * 1e6:.0f} | {shipped * 100:.1f} | {trial * 100:.1f} |")
    return out


def probe_sp_share() -> float:
    """Median over the committed TP issue probes of (host issue per SP collective call over its copy stand-in) /
    (per all-reduce call over the identity), each from the loops' issue times with and without collectives."""
    from validation.issue_check import read_records
    from validation.tp_host_path import loop_points
    shares = []
    for path in sorted(sc.DATA.glob("*/tp_issue_world*.jsonl")):
        pts = loop_points(read_records([path]).records)
        per = {}
        for sp, calls in ((False, 4), (True, 10)):
            per[sp] = statistics.median(
                (p.host_s - q.host_s) / (calls * p.layers) for p in pts if p.tp > 1 and p.sp == sp and p.comm
                for q in pts if q.spec == p.spec and q.tp == p.tp and q.sp == sp and not q.comm)
        shares.append(per[True] / per[False])
    return float(statistics.median(shares))


def sp_share_trial(host) -> list[str]:
    """SP's collective calls charged :func:`probe_sp_share` of ``host_collective_s`` (the AR calls the whole):
    TP median |err| % per sealed lease, shipped and trial."""
    share = probe_sp_share()
    out = [f"share {share:.2f}"]
    for c in sc.SEALED:
        records, pred = lease_predictor(c, host)
        cheap = pred.with_compute(replace(pred.compute, host_collective_s=share * pred.compute.host_collective_s))
        errs = [abs((cheap if g.first.sequence_parallel else pred).iteration_s(g.first) / g.median_s - 1)
                for g in group_runs([r for r in records.runs if r.runner == "tp"])]
        shipped = np.median([abs(math.exp(e) - 1) for e in tp_log_errors(records, pred, pred.compute.host_collective_s)])
        out.append(f"| {c.llm.name} | {shipped * 100:.1f} | {np.median(errs) * 100:.1f} |")
    return out


def lease_rows(c: sc.Sealed, host) -> tuple[list[str], dict]:
    records, pred = lease_predictor(c, host)
    cp = pred.compute
    lines, errs, calls_ar, calls_sp = [], [], [], []
    for g in group_runs([r for r in records.runs if r.runner == "tp"]):
        r = g.first
        p = pred.iteration_s(r)
        nocomm = statistics.median(x.nocomm_median_s for x in g.runs)
        fit = pred.compute_only_s(lr.ComputeTarget("", r.spec, r.micro_batch, r.tp, r.sequence_parallel, nocomm))
        calls = sum(n for _, _, n in r.collectives)
        comm = sum(n * pred.collective_s(op, size, r.tp) for op, size, n in r.collectives)
        passes = pred.block_passes(r.spec, r.micro_batch, r.tp, r.sequence_parallel, calls)
        kernels, issue = (r.spec.layers * sum(x[i] for x in passes) for i in (0, 1))
        per_call = (g.median_s - nocomm) / calls
        (calls_sp if r.sequence_parallel else calls_ar).append(per_call)
        errs.append(p / g.median_s - 1)
        lines.append(f"| h{r.spec.hidden} SP {'on' if r.sequence_parallel else 'off'} | {g.median_s * 1e3:.2f} ("
                     + ", ".join(f"{x.median_s * 1e3:.2f}" for x in g.runs) + f") | {p * 1e3:.2f} | {errs[-1] * 100:+.1f} | "
                     f"{(kernels + comm) * 1e3:.2f} | {issue * 1e3:.2f} | {nocomm * 1e3:.2f} / {fit * 1e3:.2f} | "
                     f"{per_call * 1e6:.0f} / {cp.host_collective_s * 1e6:.0f} |")
    return lines, {"block_ms": cp.host_tp_block_s * 1e3, "carried_us": cp.host_collective_s * 1e6,
                   "ar_us": float(np.mean(calls_ar)) * 1e6, "sp_us": float(np.mean(calls_sp)) * 1e6,
                   "lat_us": lathost_call_s(c.lat) * 1e6, "median_pct": float(np.median(np.abs(errs))) * 100}


def main() -> int:
    host = lr.host_work_from([sc.DATA / f / n for f, n, _ in lr.CAMPAIGNS[1:2]], lr.CAMPAIGNS[1][2])[0]
    summary = {}
    for c in sc.SEALED:
        lines, summary[c.llm.name] = lease_rows(c, host)
        if c is sc.H200E:
            print(f"## {c.llm.name}: TP configurations (ms; per call us)\n")
            print("| config | measured (launches) | predicted | err % | model GPU side | model host side | "
                  "no-comm measured / fitted | per call measured / charged |\n|---|---|---|---|---|---|---|---|")
            print("\n".join(lines))
    print("\n## Every sealed lease\n")
    print("| lease | TP median err % | TP block issue ms | per call charged us | measured AR / SP us | "
          "lathost per call us |\n|---|---|---|---|---|---|")
    for name, s in summary.items():
        print(f"| {name} | {s['median_pct']:.1f} | {s['block_ms']:.3f} | {s['carried_us']:.0f} | {s['ar_us']:.0f} / "
              f"{s['sp_us']:.0f} | {s['lat_us']:.1f} |")
    for carrier in ("block_ms", "lat_us"):
        ratios = [s["ar_us"] / s[carrier] for s in summary.values()]
        print(f"\nmeasured AR per call over {carrier}: {min(ratios):.1f}-{max(ratios):.1f}, "
              f"coefficient of variation {np.std(ratios) / np.mean(ratios) * 100:.0f}%")
    sp = [s["sp_us"] / s["ar_us"] for s in summary.values()]
    print("SP per call over AR per call: " + ", ".join(f"{x:.2f}" for x in sp))
    print("\n## Trial: per-call cost = m x the lease's lathost issue time (m fitted on the other leases)\n")
    print("| lease | m | per call us | TP median err %, shipped | trial |\n|---|---|---|---|---|")
    print("\n".join(lathost_trial(host)))
    share, *rows = sp_share_trial(host)
    print(f"\n## Trial: SP calls charged the probes' SP / AR per-call {share} of the per-call cost\n")
    print("| lease | TP median err %, shipped | trial |\n|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
