"""docs/accuracy.md, section 3: which ops and sizes hold the >= 16 MiB p90 of a 2 -> 4 GPU prediction, lease by lease.

Every lease with 2- and 4-GPU points of 16 MiB and more that section 3 predicts from its own 2-GPU calibration
(:func:`cases`: the pooled 4x H200 campaigns, the held-out 4x H200 lease, the sealed leases of
validation.sealed_campaign), each point's 4-GPU error split in two:

* against the pooled **median** (what the target scores) and against the point's **fast level** (its repetitions'
  10th percentile, validation.bw_lease_spread.fast_level_s): an error the fast level shares on every lease is the
  model's; one the median alone shows is where the repetitions fell;
* the same point's **2-GPU** error (in sample): an error already there is the fit's, not the extrapolation's.

And, per lease and size, the **slow share**: how many repetitions run more than :data:`SLOW` above their point's
fast level, on 2 and on 4 GPUs, beside what the order statistics make of the 2-GPU share on 4 GPUs (a repetition
on n ranks is as slow as the slowest of n/2 draws of 2 ranks: 1 - (1 - q)^(n/2), the rule the 'any launch' band
of section 3 carries to 4 GPUs). Where the 4-GPU median falls at 16 MiB depends on that share (a median of 10
repetitions of which about half are slow), so the lease's own 2-GPU share is the one thing a calibration could
read it from; the table says how well it does.

``--prior KEY=VALUE`` refits every lease from another datasheet value of a parameter the 2-GPU points cannot
determine (e.g. the ring's Simple step latency over NVLink, NCCL's 3.4 us, which a 4-GPU ring pays for 4 more
steps): a value can be chosen on some leases and scored on the others (the sealed ones last).

::

    python -m validation.bw_residuals      # every point of every lease, then the slow shares (about 20 s)
    python -m validation.bw_residuals --prior hop_latency_s.nvlink.ring.simple=2.4e-6   # refitted with another prior
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence

import numpy as np

from validation.bw_lease_spread import BIG_BYTES, FAST_PCT, TARGET_P90_PCT, fast_level_s, spread

SLOW = 0.10
"""A repetition is slow when it runs more than this share above its point's fast level."""
WEAK_RANK = 0.5
"""|Spearman| below which the leases' 2-GPU slow shares are said not to tell their 4-GPU ones (a words threshold)."""
WORLDS = (2, 4)
"""The fitted and the predicted world size."""
RING_OPS = ("all_reduce", "reduce_scatter", "reduce", "broadcast")
"""The ring ops whose default 16 MiB points :func:`summary` scores against their fast level."""


@dataclass(frozen=True)
class Residual:
    """One >= 16 MiB point of a lease predicted on 4 GPUs from its 2-GPU calibration (times in seconds)."""

    op: str
    variant: str
    size_bytes: int
    algo: str
    proto: str
    predicted_s: float
    median_s: float
    fast_s: float
    lo_s: float                  # the prediction's 90% interval
    hi_s: float
    error2: float | None         # the same point's in-sample error on 2 GPUs (predicted / median - 1)
    fast2_s: float | None = None  # the same point's fast level on 2 GPUs
    reps: int = 0                # the 4-GPU repetitions its median is taken over

    @property
    def error(self) -> float:
        """Against the pooled median (what the target scores)."""
        return self.predicted_s / self.median_s - 1.0

    @property
    def inside(self) -> bool:
        """Whether the median lies inside the 90% interval."""
        return self.lo_s <= self.median_s <= self.hi_s

    @property
    def error_fast(self) -> float:
        """Against the fast level (the repetitions' 10th percentile)."""
        return self.predicted_s / self.fast_s - 1.0


def cases(prior: Mapping[str, float] | None = None) -> Iterator[tuple[str, dict, object]]:
    """(lease, pooled points per world size, the predictor section 3 scores its 4 GPUs with) of every lease that
    section 3 calibrates on 2 GPUs and predicts on 4 at >= 16 MiB. ``prior``: values that replace the datasheet's
    before each 2-GPU fit (a parameter those points cannot determine keeps it; the leases are refitted)."""
    from simulator.collectives.params import Parameters
    from validation import extrapolation_scale, held_out_campaign, rank_model_error, sealed_campaign
    from validation.accuracy import H200
    from validation.calibrate import calibrate

    def refit(pooled, pred0, sd):
        pred0 = pred0.with_params(Parameters().with_values(prior))
        return pred0, calibrate([q.point for q in pooled[2]], pred0, name="2gpu", rank_model_sd_s=sd)
    for name, label in ((H200, "4x H200, section 3's pooled campaigns"), (held_out_campaign.MACHINE, None)):
        pooled, pred0 = rank_model_error.pooled(name), rank_model_error.predictor(name)
        pred0, fit = refit(pooled, pred0, rank_model_error.model_sd_s(name)) if prior else \
            (pred0, rank_model_error.two_gpu_fit(name))
        yield label or name, pooled, pred0.with_params(extrapolation_scale.judged(fit.params, name))
    for c in sealed_campaign.SEALED:
        if c.lat.exists() and c.bw.exists():
            pooled, pred0 = sealed_campaign.campaign(c.lat, c.bw, c.topology)
            pred0, fit = refit(pooled, pred0, rank_model_error.model_sd_s()) if prior else \
                (pred0, sealed_campaign.two_gpu_fit(c))
            yield (c.lease, pooled,
                   pred0.with_params(extrapolation_scale.judged(fit.params, c.lease)))


def residuals(pooled: dict, predictor) -> list[Residual]:
    """Every >= 16 MiB point of the predicted world size, with the 2-GPU error of the same point."""
    from validation import transfer
    scored = {n: transfer.score([q for q in pooled.get(n, ()) if q.point.size_bytes >= BIG_BYTES], predictor)
              for n in WORLDS}
    two = {(r.pooled.point.op, r.pooled.point.variant, r.pooled.point.size_bytes): (r.error, fast_level_s(r.pooled.point))
           for r in scored[WORLDS[0]]}
    out = []
    for r in scored[WORLDS[1]]:
        p = r.pooled.point
        out.append(Residual(p.op, p.variant, p.size_bytes, r.comparison.algo, r.comparison.proto,
                            r.comparison.predicted_s, p.time_s, fast_level_s(p), r.lo_s, r.hi_s,
                            *two.get((p.op, p.variant, p.size_bytes), (None, None)), reps=len(p.rep_times_s)))
    return sorted(out, key=lambda r: (r.op, r.variant, r.size_bytes))


def slow_shares(pooled: dict) -> dict[int, tuple[float, float, float, int]]:
    """Per size of 16 MiB and more (default variant, every op but send_recv, whose call of a size takes about
    twice as long as the others'): (share of 2-GPU repetitions slow, what the order statistics make of it on 4 GPUs, share of 4-GPU
    repetitions slow, 4-GPU repetitions)."""
    n2, n4 = WORLDS
    out = {}
    for size in sorted({q.point.size_bytes for q in pooled.get(n4, ()) if q.point.size_bytes >= BIG_BYTES}):
        shares = []
        for n in WORLDS:
            rel = [t / fast_level_s(q.point) - 1 for q in pooled.get(n, ()) if q.point.size_bytes == size
                   and q.point.variant == "default" and q.point.op != "send_recv" for t in q.point.rep_times_s]
            shares.append((float(np.mean(np.array(rel) > SLOW)) if rel else float("nan"), len(rel)))
        q2 = shares[0][0]
        out[size] = (q2, 1 - (1 - q2) ** (n4 / n2), shares[1][0], shares[1][1])
    return out


def _coverage(rows: Sequence[Residual]) -> float:
    return float(np.mean([r.inside for r in rows]) * 100) if rows else float("nan")


def _width(rows: Sequence[Residual]) -> float:
    return float(np.median([(r.hi_s - r.lo_s) / r.predicted_s for r in rows]) * 100) if rows else float("nan")


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:+.1f}"


def point_lines(lease: str, rows: Sequence[Residual]) -> list[str]:
    """One lease's table: every >= 16 MiB point, its errors and whether it is above the target."""
    e = np.abs([r.error for r in rows]) * 100
    lines = ["", f"**{lease}**: {len(rows)} points, median {np.median(e):.1f}%, p90 {np.percentile(e, 90):.1f}% "
             f"({sum(e > TARGET_P90_PCT)} above {TARGET_P90_PCT:.0f}%)", "",
             "| op | variant | MiB | algo/proto | predicted us | median us | fast us | err % | vs fast % | 2-GPU err % |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        flag = " **" if abs(r.error) * 100 > TARGET_P90_PCT else ""
        lines.append(f"| {r.op} | {r.variant} | {r.size_bytes >> 20} | {r.algo}/{r.proto} | {r.predicted_s * 1e6:.1f} | "
                     f"{r.median_s * 1e6:.1f} | {r.fast_s * 1e6:.1f} | {_pct(r.error)}{flag} | {_pct(r.error_fast)} | "
                     f"{_pct(r.error2)} |")
    return lines


def summary(by_lease: dict[str, list[Residual]]) -> dict[str, dict]:
    """Per lease: median and p90 |error| %, the points above the target, and the same at 16 MiB against the fast
    level (the model's own share) and of the default-variant ring ops (all_reduce, reduce_scatter, reduce,
    broadcast) whose 16 MiB errors against the fast level every lease shares."""
    out = {}
    for lease, rows in by_lease.items():
        e = np.abs([r.error for r in rows]) * 100
        at16 = [r for r in rows if r.size_bytes == BIG_BYTES and r.variant == "default"]
        ring = [r.error_fast * 100 for r in at16 if r.op in RING_OPS]
        out[lease] = {"points": len(rows), "median_pct": float(np.median(e)), "p90_pct": float(np.percentile(e, 90)),
                      "above": [r for r in rows if abs(r.error) * 100 > TARGET_P90_PCT],
                      "ring_16_vs_fast_pct": (min(ring), max(ring)) if ring else None,
                      "coverage_16_pct": _coverage([r for r in rows if r.size_bytes == BIG_BYTES]),
                      "coverage_above_pct": _coverage([r for r in rows if r.size_bytes > BIG_BYTES]),
                      "width_16_pct": _width([r for r in rows if r.size_bytes == BIG_BYTES]),
                      "width_above_pct": _width([r for r in rows if r.size_bytes > BIG_BYTES]),
                      "above_at_16": sum(abs(r.error) * 100 > TARGET_P90_PCT for r in rows if r.size_bytes == BIG_BYTES)}
    return out


def mode_coverage(by_lease: dict[str, list[Residual]]) -> dict[str, tuple[int, int]]:
    """Over the leases' default 16 MiB points: (medians inside their 90% interval, points) of those whose median lies
    more than :data:`SLOW` above the fast level ('slow') and of the others ('fast')."""
    out = {"slow": [0, 0], "fast": [0, 0]}
    for rows in by_lease.values():
        for r in rows:
            if r.size_bytes == BIG_BYTES and r.variant == "default":
                c = out["slow" if r.median_s / r.fast_s - 1 > SLOW else "fast"]
                c[0] += r.inside
                c[1] += 1
    return {k: (int(v[0]), v[1]) for k, v in out.items()}


def fast_spread(by_lease: dict[str, list[Residual]], op: str = "all_to_all") -> dict[tuple[str, int], tuple]:
    """Per (GPU, size above 16 MiB) of ``op``'s default points measured on more than one lease of that GPU: the
    spread of their fast levels over the leases (bw_lease_spread.spread) on 4 GPUs and on 2, and the 4-GPU
    fast levels (s) by lease. The GPU is the lease's name before its first comma ('4x H200')."""
    at: dict[tuple[str, int], dict[str, Residual]] = {}
    for lease, rows in by_lease.items():
        for r in rows:
            if r.op == op and r.variant == "default" and r.size_bytes > BIG_BYTES and r.fast2_s:
                at.setdefault((lease.split(",")[0], r.size_bytes), {})[lease] = r
    out = {}
    for key, by in sorted(at.items()):
        if len(by) > 1:
            f4, f2 = [r.fast_s for r in by.values()], [r.fast2_s for r in by.values()]
            out[key] = (spread(f4), spread(f2), {k: r.fast_s for k, r in by.items()})
    return out


def section(by_lease: dict[str, list[Residual]] | None = None,
            shares: dict[str, dict] | None = None) -> tuple[list[str], dict]:
    """Section 3's lines and figures: per lease, what sets its >= 16 MiB p90 (the points above the target by
    op and size), the ring ops' 16 MiB error against the fast level, and the slow shares by size."""
    if by_lease is None or shares is None:
        by_lease, shares = {}, {}
        for lease, pooled, pred in cases():
            by_lease[lease] = residuals(pooled, pred)
            shares[lease] = slow_shares(pooled)
    if not by_lease:
        return [], {}
    summ = summary(by_lease)
    lines = ["", "**Which ops and sizes hold the >= 16 MiB p90, lease by lease** (`python -m validation.bw_residuals` "
             "prints every point; `python -m validation.bw_lines` fits lines through them, measured and predicted, and says "
             "what they show of NCCL's slices and the mid sizes' steeper slope). Each lease predicted on 4 GPUs from its own 2-GPU calibration as above; 'vs fast' "
             f"scores the ring ops' default 16 MiB points against their fast level ({FAST_PCT:.0f}th percentile of "
             "repetitions); "
             f"'slow' is the share of repetitions more than {SLOW * 100:.0f}% above their point's fast level at "
             f"16 MiB (every op but send_recv), on {WORLDS[0]} GPUs, carried to {WORLDS[1]} by the order statistics "
             f"(1 - (1 - q)^{WORLDS[1] / WORLDS[0]:g}), and measured on {WORLDS[1]}.", "",
             f"| lease | points | median err % | p90 err % | above {TARGET_P90_PCT:g}% (of which 16 MiB) | points above "
             f"{TARGET_P90_PCT:g}% | "
             "ring ops at 16 MiB vs fast % | slow at 16 MiB: 2 GPUs / order statistics / 4 GPUs % | "
             "90% coverage at 16 MiB / above % |",
             "|---|---|---|---|---|---|---|---|---|"]
    figures: dict = {}
    for lease, s in summ.items():
        sh = shares[lease].get(BIG_BYTES)
        ring = s["ring_16_vs_fast_pct"]
        names = ", ".join(f"{r.op}{'' if r.variant == 'default' else ' ' + r.variant} {r.size_bytes >> 20} "
                          f"{r.error * 100:+.0f}" for r in sorted(s["above"], key=lambda r: -abs(r.error)))
        lines.append(f"| {lease} | {s['points']} | {s['median_pct']:.1f} | {s['p90_pct']:.1f} | {len(s['above'])} "
                     f"({s['above_at_16']}) | {names} | "
                     + (f"{ring[0]:+.0f} to {ring[1]:+.0f}" if ring else "-") + " | "
                     + (f"{sh[0] * 100:.0f} / {sh[1] * 100:.0f} / {sh[2] * 100:.0f}" if sh else "-")
                     + f" | {s['coverage_16_pct']:.0f} / {s['coverage_above_pct']:.0f} |")
        figures[f"bw residuals {lease}"] = {"median_pct": s["median_pct"], "p90_pct": s["p90_pct"],
                                            "above": len(s["above"]), "above_at_16": s["above_at_16"],
                                            "ring_16_vs_fast_pct": ring, "slow_16": sh,
                                            "coverage_16_pct": s["coverage_16_pct"],
                                            "coverage_above_pct": s["coverage_above_pct"]}
    rings = [s["ring_16_vs_fast_pct"] for s in summ.values() if s["ring_16_vs_fast_pct"]]
    on_leases = "on every lease" if len(rings) == len(summ) else f"on {len(rings)} of {len(summ)} leases"
    reps16 = sorted(r.reps for rows in by_lease.values() for r in rows if r.size_bytes == BIG_BYTES)
    reps = (f"{reps16[0]} repetitions" if reps16[:1] == reps16[-1:] else
            f"{np.median(reps16):.0f} repetitions ({reps16[0]} to {reps16[-1]} over the points)")
    chain2 = [r.error2 * 100 for rows in by_lease.values() for r in rows if r.size_bytes == BIG_BYTES
              and r.variant == "default" and r.op in ("reduce", "broadcast") and r.error2 is not None]
    above = sum(len(s["above"]) for s in summ.values())
    at16 = sum(s["above_at_16"] for s in summ.values())
    slow = [shares[lease][BIG_BYTES] for lease in summ if BIG_BYTES in shares[lease]]
    from validation.llm_records import spearman
    rho = spearman([x[1] for x in slow], [x[2] for x in slow]) if len(slow) > 2 else float("nan")
    figures["bw residuals slow share rank correlation"] = rho
    c16 = [s["coverage_16_pct"] for s in summ.values()]
    cab = [s["coverage_above_pct"] for s in summ.values()]
    w16 = [s["width_16_pct"] for s in summ.values()]
    wab = [s["width_above_pct"] for s in summ.values()]
    modes = mode_coverage(by_lease)
    figures["bw residuals 16 MiB coverage by mode"] = modes
    if rings and slow and chain2:
        lines += ["", f"Of the {above} points above {TARGET_P90_PCT:g}% over these leases, {at16} are 16 MiB calls. "
                  "Two things put them "
                  "there. The model's own: the ring ops' default 16 MiB points are predicted "
                  f"{min(r[0] for r in rings):+.0f} to {max(r[1] for r in rings):+.0f}% against their fast level "
                  f"{on_leases} (a ring's per-step latency, kept at NCCL's value because 2-GPU points cannot determine "
                  "it, paid for 4 more steps on 4 GPUs; the 2-GPU fit of reduce and broadcast is already "
                  f"{min(chain2):+.0f} to {max(chain2):+.0f}% off their 2-GPU medians at 16 MiB). And the "
                  "repetitions': at 16 MiB "
                  f"{min(x[2] for x in slow) * 100:.0f}-{max(x[2] for x in slow) * 100:.0f}% of a lease's 4-GPU "
                  f"repetitions run more than {SLOW * 100:.0f}% above the fast level (2 GPUs: "
                  f"{min(x[0] for x in slow) * 100:.0f}-{max(x[0] for x in slow) * 100:.0f}%), so a median of {reps} "
                  "lands on the fast level or well above it by the draw; the lease's own 2-GPU share, "
                  f"carried by the order statistics, gives {min(x[1] for x in slow) * 100:.0f}-"
                  f"{max(x[1] for x in slow) * 100:.0f}%, {rank_verdict(rho, len(slow))}. "
                  + ("So a lower ring latency, which the fast levels ask for, would move the 16 MiB points of the leases "
                     "whose medians sit high further below them. " if min(r[0] for r in rings) > 0 else
                     "The ring ops' points sit on both sides of their fast levels, so no one ring latency moves them "
                     "all the same way. ")
                  + "The intervals add at 16 MiB the growth spread's 16 MiB band (`validation.world_growth`, learned "
                  "on the other leases; the slow mode paragraph, `validation.slow_mode`): "
                  f"{min(w16):.0f}-{max(w16):.0f}% median width at 16 MiB against {min(wab):.0f}-{max(wab):.0f}% above "
                  f"it, holding {min(c16):.0f}-{max(c16):.0f}% of the 16 MiB medians against "
                  f"{min(cab):.0f}-{max(cab):.0f}% of the larger sizes'; of the default 16 MiB medians in the slow "
                  f"mode (more than {SLOW * 100:.0f}% above their fast level) they hold {modes['slow'][0]} of "
                  f"{modes['slow'][1]}, of those at the fast level {modes['fast'][0]} of {modes['fast'][1]}."]
    a2a_spread = fast_spread(by_lease)
    if a2a_spread:
        worst = max(a2a_spread, key=lambda k: a2a_spread[k][0])
        s4, s2, levels = a2a_spread[worst]
        figures["bw residuals all_to_all fast spread"] = {f"{g} {size >> 20} MiB": v[:2]
                                                          for (g, size), v in a2a_spread.items()}
        big = [r for s_ in summ.values() for r in s_["above"] if r.size_bytes > BIG_BYTES]
        a2a = [r for r in big if r.op == "all_to_all"]
        fast = sum(r.error < 0 for r in a2a)
        lines += ["", f"Above 16 MiB, {len(a2a)} of the {len(big)} misses are all_to_all on 4 GPUs, "
                  + ("predicted fast" if fast == len(a2a) else f"{fast} of them predicted fast")
                  + ", and there the leases differ in the GPU's own pace: the 4-GPU fast levels of one GPU's "
                  "all_to_all spread over its leases "
                  "by " + ", ".join(f"{v[0] * 100:.0f}% ({g} {size >> 20} MiB)" for (g, size), v in a2a_spread.items())
                  + ", against " + ", ".join(f"{v[1] * 100:.0f}%" for v in a2a_spread.values()) + " on 2 GPUs "
                  f"({worst[0]} {worst[1] >> 20} MiB on 4 GPUs: "
                  + ", ".join(f"{t * 1e6:.0f}" for t in sorted(levels.values())) + " us): each peer's bytes take fewer p2p "
                  "channels on 4 GPUs than on 2 (simulator.collectives.p2p), and a 2-GPU calibration cannot tell "
                  "which 4-GPU pace its lease has."]
    return lines, figures


def rank_verdict(rho: float, leases: int) -> str:
    """Words for how the leases' 2-GPU slow shares rank against their 4-GPU ones (Spearman ``rho`` over
    ``leases``): that they do not tell which lease's medians sit high only when the rank correlation is weak."""
    if math.isnan(rho):
        return f"not ranked against the leases' 4-GPU shares ({leases} leases, too few)"
    said = f"ranked against the leases' 4-GPU shares at Spearman {rho:+.2f} over {leases} leases"
    if abs(rho) < WEAK_RANK:
        return f"{said}: it does not tell which lease's medians will sit high"
    return f"{said}: {'the same' if rho > 0 else 'the opposite'} order, from a rank correlation over few leases"


def prior_values(items: Sequence[str], ap) -> dict[str, float]:
    """``--prior KEY=VALUE`` items as parameter values, checked before any lease is read (``ap.error``: one line,
    exit 2, naming the item and what is wrong with it)."""
    from simulator.collectives.params import Parameters
    from simulator.core.errors import InputError
    out = {}
    for kv in items:
        key, eq, text = kv.partition("=")
        if not eq:
            ap.error(f"--prior {kv!r}: give KEY=VALUE")
        try:
            out[key] = float(text)
        except ValueError:
            ap.error(f"--prior {kv!r}: {text!r} is not a number")
    try:
        Parameters().with_values(out)
    except InputError as e:
        ap.error(f"--prior: {e}")
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m validation.bw_residuals", description=__doc__.splitlines()[0])
    ap.add_argument("--prior", action="append", default=[], metavar="KEY=VALUE",
                    help="replace a datasheet value before every lease's 2-GPU fit (e.g. "
                         "hop_latency_s.nvlink.ring.simple=2.4e-6: a value those points cannot determine); repeatable")
    a = ap.parse_args(argv)
    prior = prior_values(a.prior, ap)
    by_lease, shares = {}, {}
    for lease, pooled, pred in cases(prior or None):
        by_lease[lease] = residuals(pooled, pred)
        shares[lease] = slow_shares(pooled)
        print("\n".join(point_lines(lease, by_lease[lease])))
    lines, _ = section(by_lease, shares)
    print("\n".join(lines))
    print("\n| lease | MiB | slow on 2 GPUs % | order statistics on 4 % | slow on 4 GPUs % | 4-GPU repetitions |")
    print("|---|---|---|---|---|---|")
    for lease, by_size in shares.items():
        for size, (q2, q4s, q4, n) in by_size.items():
            print(f"| {lease} | {size >> 20} | {q2 * 100:.0f} | {q4s * 100:.0f} | {q4 * 100:.0f} | {n} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
