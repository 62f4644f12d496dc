"""Where the >= 16 MiB interval width comes from, and the three residual rules scored (session of 2026-11-28 stop 26,
branch h10band26).

Rules (validation.calibrate's residual bands, switched by its module constants):

* ``today`` (main cb90eaa): one residual band from 16 MiB, every residual left out (r / (1 - h));
* ``split``: the band split at 32 MiB (validation.calibrate.RESIDUAL_EDGES_BYTES), left out;
* ``split+standardised`` (kept): split, and from 32 MiB each residual standardised (r / sqrt(1 - h)) with the band's
  in-sample parameter spread 0 (validation.calibrate.STANDARDISED_FROM_BYTES).

For each rule the covariance's share (validation.extrapolation_scale) is learned again as the report learns it: on
the committed machines, each committed machine judged with the other machines' share, every sealed lease with the
share of all committed machines; the growth spread is world_growth's, each lease with the other leases' figure.
Printed per rule and lease: its >= 16 MiB unseen 4-GPU points' coverage and median width (the figures of
docs/accuracy.md's sealed rows), the share used, and the >= 32 MiB residual quantiles' width; then the mean over the
leases, and the leave-one-lease-out choice: for each lease, the rule whose intervals hold 90% of the *other* leases'
points on average at the narrowest mean width (so no lease's figure picks its own rule). The rules were written by
the helper after seeing today's sealed figures, so the choice is checked leave one lease out, not blind.

::

    python validation/scripts/band_rules_s26.py      # about 90 s
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

RULES = ("today", "split", "split+standardised")


def clear() -> None:
    """Drop every cached fit and row, so the next figures use the rule just set."""
    from validation import extrapolation_scale, rank_model_error, sealed_campaign, world_growth
    for f in (rank_model_error.two_gpu_fit, sealed_campaign._two_gpu_fit, sealed_campaign.campaign,
              world_growth.lease_rows, extrapolation_scale.records):
        f.cache_clear()


def set_rule(rule: str) -> None:
    from validation import calibrate
    calibrate.SLOW_MODE_TOP_BYTES = (calibrate.BANDWIDTH_REGIME_BYTES if rule == "today"
                                     else 2 * calibrate.BANDWIDTH_REGIME_BYTES)
    calibrate.STANDARDISED_FROM_BYTES = 2 * calibrate.BANDWIDTH_REGIME_BYTES if rule == "split+standardised" else math.inf
    clear()


def figures(rule: str) -> dict[str, tuple[float, float, float, float]]:
    """Per lease: (coverage, median width, share, >= 32 MiB residual width) of its >= 16 MiB unseen points."""
    from validation import extrapolation_scale as es, rank_model_error as rme, world_growth as wg
    set_rule(rule)
    committed = {m.name for m in rme.MACHINES}
    out = {}
    for name, (rows, doublings) in wg.lease_rows():
        big = rows[rows[:, 0] >= 2]
        if not len(big):
            continue
        k = es.scale_for(name if name in committed else None)[2]
        g = wg.growth_for(name)
        flags, widths = [], []
        for b in (2, 3):
            r = rows[rows[:, 0] == b]
            if len(r):
                _, _, f, w = es.coverage(r, k, growth_sd=g[b] * doublings, each=True)
                flags += list(f)
                widths += list(w)
        top = rows[rows[:, 0] == 3]
        out[name] = (float(np.mean(flags)), float(np.median(widths)), k,
                     float(np.median(np.exp(top[:, 4]) - np.exp(top[:, 2]))))
    return out


def main() -> None:
    scored = {rule: figures(rule) for rule in RULES}
    set_rule("split+standardised")
    names = list(scored[RULES[0]])
    print("| lease | " + " | ".join(f"{r}: coverage %, width %, share, >= 32 MiB residual width %" for r in RULES)
          + " | chosen on the other leases |")
    print("|---|" + "---|" * (len(RULES) + 1))
    for name in names:
        def choose() -> str:
            ok = [r for r in RULES if np.mean([scored[r][n][0] for n in names if n != name]) >= 0.9 - 1e-9]
            return min(ok, key=lambda r: np.mean([scored[r][n][1] for n in names if n != name])) if ok else "-"
        print(f"| {name} | " + " | ".join(
            f"{v[0] * 100:.0f}, {v[1] * 100:.1f}, {v[2]:g}, {v[3] * 100:.1f}" for r in RULES for v in [scored[r][name]])
              + f" | {choose()} |")
    for r in RULES:
        v = np.array([scored[r][n][:2] for n in names])
        sealed = np.array([scored[r][n][:2] for n in names if "sealed" in n])
        print(f"{r}: mean over {len(v)} leases coverage {v[:, 0].mean() * 100:.1f}% width {v[:, 1].mean() * 100:.1f}%; "
              f"sealed coverage {sealed[:, 0].min() * 100:.0f}-{sealed[:, 0].max() * 100:.0f}%, width "
              f"{sealed[:, 1].min() * 100:.1f}-{sealed[:, 1].max() * 100:.1f}%, width <= 25% on "
              f"{int(np.sum(sealed[:, 1] <= 0.25))} of {len(sealed)}, coverage >= 80% on "
              f"{int(np.sum(sealed[:, 0] >= 0.8))} of {len(sealed)}")


if __name__ == "__main__":
    main()
