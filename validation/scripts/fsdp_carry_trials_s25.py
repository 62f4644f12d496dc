"""The two 4-GPU carry trials of branch h14fsdp25 (session of 2026-11-28 stop 25), not kept; figures in
``validation.fsdp_carry_unit.TRIED``.

Each patches ``llm_real.HostWork.on`` for the run only, for the host work of the 4-GPU H200 campaign
(``llm_blind.host_for(4)``), then runs the command whose figures were compared:

* ``1``: on a compute fit that measured the unsharded block (``host_tp_block_s`` 0: FSDP-only files), a gathered unit's
  FSDP1 host work (``fsdp_unit_host_s + fsdp_gather_host_s``) x 1 / ``UNSHARDED_SHARE``, NO_SHARD's as it is;
* ``2``: ``fsdp_gather_host_s / fsdp_unit_host_s`` held at :data:`PROFILE_RATIO` (their sum kept, nothing refitted;
  the 2-GPU campaign's rows that take the 4-GPU host work move too), and on those compute fits every key x 1 /
  ``UNSHARDED_SHARE``.

::

    python validation/scripts/fsdp_carry_trials_s25.py 1 sealed   # python -m validation.sealed_campaign, ~1 min
    python validation/scripts/fsdp_carry_trials_s25.py 2 llm      # python -m validation.accuracy --only llm, ~1.5 min
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.llm_real import UNSHARDED_SHARE, HostWork  # noqa: E402

PROFILE_RATIO = 0.89
"""FULL_SHARD's forward unit boundary over NO_SHARD's, less 1, on the 4-GPU profile (``python -m validation.fsdp_profile
--boundaries validation/data/h200x4_2026-11-27_fsdpprof4/fsdpprof_world4_L*.jsonl``: 1.04, 0.80, 0.98, 0.42; median)."""


@contextmanager
def trial(which: int) -> Iterator[None]:
    from validation.llm_blind import host_for
    four = host_for(4)[0].values
    original = HostWork.on

    def on(self: HostWork, compute: object) -> dict[str, float]:
        values = original(self, compute)
        if self.values != four:
            return values
        unsharded = compute.host_tp_block_s == 0  # type: ignore[attr-defined]
        unit, gather = values["fsdp_unit_host_s"], values["fsdp_gather_host_s"]
        if which == 1:
            if unsharded:
                values["fsdp_gather_host_s"] = (unit + gather) / UNSHARDED_SHARE - unit
            return values
        total = unit + gather
        values["fsdp_unit_host_s"] = total / (1 + PROFILE_RATIO)
        values["fsdp_gather_host_s"] = total * PROFILE_RATIO / (1 + PROFILE_RATIO)
        return {k: v / UNSHARDED_SHARE for k, v in values.items()} if unsharded else values

    HostWork.on = on  # type: ignore[method-assign]
    try:
        yield
    finally:
        HostWork.on = original  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("1", "2") or argv[1] not in ("sealed", "llm"):
        print("usage: python validation/scripts/fsdp_carry_trials_s25.py 1|2 sealed|llm", file=sys.stderr)
        return 2
    with trial(int(argv[0])):
        if argv[1] == "sealed":
            from validation.sealed_campaign import main as run
            return run([])
        from validation.accuracy import main as run
        return run(["--only", "llm"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
