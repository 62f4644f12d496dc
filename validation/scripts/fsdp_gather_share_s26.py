"""Trial of branch h14agprobe26 (session of 2026-11-28 stop 26): FSDP1's host work fitted with the all-gather's share of
a sharded unit's host work fixed at a measured value (``validation.fsdp_issue``'s gather split, ``fsdp --free-gathers``
runs), instead of three free host keys (``llm_real.fit_host_work``). The campaigns' fits then choose only the
sharded unit's total (``fsdp_unit_host_s + fsdp_gather_host_s``) and the per-call cost.

::

    python validation/scripts/fsdp_gather_share_s26.py SHARE sealed         # python -m validation.sealed_campaign
    python validation/scripts/fsdp_gather_share_s26.py SHARE llm OUT.md     # python -m validation.accuracy --only llm

``SHARE`` is the gather's share (``fsdp_gather_host_s / (fsdp_unit_host_s + fsdp_gather_host_s)``), e.g. 0.41 / 0.30
(the 2 / 4-GPU campaigns' free fits) or the probe's measured median; ``free`` runs the three-key fit (today's).

Figures of 2026-11-28 (branch h14agprobe26 on h14host26 be2d522), before the ``fsdpsplit`` probe had run (no 4-GPU
lease was lent), so the shares are the two fits' own, a sensitivity check and not a choice:

* ``free`` reproduces today's fits (2 / 4 GPUs: unit 0.527 / 0.626, gather 0.367 / 0.264, call 0.092 / 0.104 ms) and
  sealed FSDP run sets within 8%: 20 of 34.
* ``0.30`` (the 4-GPU fit's share for both): the 2-GPU fit moves to 0.588 / 0.252 / 0.091 ms, the 4-GPU one stays
  (0.622 / 0.266); sealed 20 of 34, no sealed row moves by more than 0.3 points (the 2-GPU rows do not feel the split).
* ``0.41`` (the 2-GPU fit's share for both): the 4-GPU fit moves to 0.533 / 0.370 / 0.104 ms (its fit 5.3 -> 5.4%);
  sealed 20 of 34, 16 rows worse by more than 0.3 points (fsdp4 h200x4_2026-11-27d 13.8 -> 16.1, h200x4_2026-11-28c
  12.3 -> 14.7; fsdppair4 h200x4_2026-11-27f 10.9 -> 13.2; llm4 FSDP h100x4_2026-11-28 6.6 -> 8.0, ...) and 13 better
  (fsdp4 h100x4_2026-11-27c 7.8 -> 4.6, h200x4_2026-11-28d 10.5 -> 8.4, ...); section 7 (``0.41 llm /tmp/x.md``
  against ``free llm``): blind 4x H100 4 GPUs 4.9 -> 6.4, held-out 4x H200 4 GPUs 19.6 -> 15.5,
  h200x4_2026-11-27_fsdpissue 4 GPUs 10.0 -> 6.9, h100x4_2026-11-27_fsdpissue 4 GPUs 6.9 -> 9.1, fsdpissue2 4 GPUs
  2.8 -> 2.2. Not kept under the keep rule (sealed count flat, rows worse by more than 0.3 points).
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or argv[1] not in ("sealed", "llm") or (argv[0] != "free" and not
                                                                      0 <= float(argv[0]) <= 1):
        print("usage: python validation/scripts/fsdp_gather_share_s26.py SHARE|free sealed|llm [OUT.md]",
              file=sys.stderr)
        return 2
    from validation import llm_real
    if argv[0] != "free":
        llm_real.fit_host_work = partial(llm_real.fit_host_work, gather_share=float(argv[0]))  # type: ignore
    print(f"<!-- trial: gather share {argv[0]} -->")
    for world in (2, 4):
        from validation.llm_blind import host_for
        host, folder = host_for(world)
        print(f"<!-- host work from {folder}: "
              + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in host.values.items()) + " -->")
    if argv[1] == "llm":
        from validation.accuracy import main as run
        return run(["--only", "llm", *(["--out", argv[2]] if len(argv) == 3 else [])])
    from validation.sealed_campaign import main as run_sealed
    return run_sealed([])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
