"""The FSDP trial of branch h14fsdp26 (session of 2026-11-28 stop 26), not kept: each data-parallel rank's own host
pace and the steady-state iteration, together and apart; figures in ``simulator.training.llm.fsdp_engine``'s
docstring and ``validation.rank_skew.TRIED`` (form E).

Both are switches of the compute set, off by default (``ComputeParams.fsdp_rank_cv``, ``fsdp_unit_cv``,
``fsdp_steady``). The spreads are NO_SHARD's free-running hosts on the 2-GPU profiles (``validation.rank_skew.
free_paces``), read again here; nothing is fitted on the runs judged. Every compute set the scoring builds gets the
switches (``iteration.ComputeModel`` wrapped for the run only), so the campaigns' host work is refitted with them, as
it would be if they were the default. Then the command whose figures were compared runs::

    python validation/scripts/fsdp_steady_paces_s26.py both sealed     # python -m validation.sealed_campaign, ~1 min
    python validation/scripts/fsdp_steady_paces_s26.py both llm        # --only llm (rewrites docs/accuracy.md's section)
    python validation/scripts/fsdp_steady_paces_s26.py paces sealed    # paces alone; ``steady`` the steady state alone
    python validation/scripts/fsdp_steady_paces_s26.py paces sealed2   # every world size with the 2-GPU host work

``sealed2`` scores the sealed leases with the 2-GPU campaign's host work for every world size (``llm_blind.HOST_FROM``
and the ``llm4`` rows' host), what a spread measured on 2 GPUs is meant to carry to 4; ``off sealed2`` gives that
method without the trial. Sealed FSDP run sets within 8% of 34 (2026-11-28): ``sealed`` off / steady / paces / both
20 / 13 / 24 / 15; ``sealed2`` off / paces / both 22 / 20 / 20.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import simulator.training.llm.iteration as iteration  # noqa: E402

VARIANTS = ("off", "steady", "paces", "both")


def switches(variant: str) -> dict[str, object]:
    """The compute set's fields of ``variant``."""
    from validation.rank_skew import free_paces

    spread = free_paces()
    paces = {"fsdp_rank_cv": round(spread.step_cv, 3), "fsdp_unit_cv": round(spread.unit_cv, 3)}
    return {"off": {}, "steady": {"fsdp_steady": True}, "paces": paces,
            "both": {**paces, "fsdp_steady": True}}[variant]


@contextmanager
def trial(fields: dict[str, object]) -> Iterator[None]:
    original = iteration.ComputeModel

    def model(gpu, dtype, params):  # type: ignore[no-untyped-def]
        return original(gpu, dtype, replace(params, **fields))

    iteration.ComputeModel = model  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        iteration.ComputeModel = original  # type: ignore[misc]


def two_gpu_host() -> None:
    """Every world size takes the 2-GPU campaign's host work (FSDP-only rows and ``llm4`` rows)."""
    from validation import llm_blind, sealed_campaign

    llm_blind.HOST_FROM[4] = llm_blind.HOST_FROM[2]
    scored = sealed_campaign._scored

    def scored_two(label, path, runner, hosts, c=sealed_campaign.H100):  # type: ignore[no-untyped-def]
        return scored(label, path, runner, [hosts[0], hosts[0]], c)

    sealed_campaign._scored = scored_two  # type: ignore[assignment]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in VARIANTS or argv[1] not in ("sealed", "sealed2", "llm"):
        print("usage: python validation/scripts/fsdp_steady_paces_s26.py off|steady|paces|both sealed|sealed2|llm",
              file=sys.stderr)
        return 2
    fields = switches(argv[0])
    print(f"<!-- trial: {fields} -->")
    with trial(fields):
        if argv[1] == "llm":
            from validation.accuracy import main as run
            return run(["--only", "llm"])
        if argv[1] == "sealed2":
            two_gpu_host()
        from validation.sealed_campaign import main as run_sealed
        return run_sealed([])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
