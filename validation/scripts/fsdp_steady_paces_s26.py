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
and every row that took the 4-GPU campaign's: the ``llm4`` rows and TP issue probe), what a spread measured on 2 GPUs
is meant to carry to 4; ``off sealed2`` gives that method without the trial; ``sealedf`` the FSDP-only rows alone;
``llm2``/``llmf`` the same for section 7 (``--only llm``, also its other-GPU campaign and TP issue probes under
``llm2``; a third argument names the file it writes, e.g. ``/tmp/llm2.md``, else docs/accuracy.md's section is
rewritten). Sealed FSDP run sets within 8% of 34 (2026-11-28): ``sealed`` off / steady / paces / both 20 / 13 / 24
/ 15; ``sealed2`` off / paces / both 22 / 20 / 20; ``sealedf`` off / paces 22 / 22. Branch h14host26 judged the
2-GPU host on the keep rule (the count rises and no section-7, sealed, Selene or vTrain figure gets worse by more
than 0.3 points): sealed rows worse by more than 0.3 points ``off sealed2`` 21, ``off sealedf`` 9, ``paces sealed2``
20, ``paces sealedf`` 10; section 7 ``off llm2``/``llmf``: blind 4x H100 4 GPUs 4.9 -> 6.1, h100x4_2026-11-27_fsdpissue
4 GPUs 6.9 -> 8.9 (held-out 4x H200 4 GPUs 19.6 -> 16.4); Selene and vTrain unchanged. Not kept: figures in
``validation.rank_skew.TRIED`` (form F).
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


def two_gpu_host(fsdp_only: bool = False) -> None:
    """Every world size takes the 2-GPU campaign's host work: the FSDP-only rows (``llm_blind.HOST_FROM``) and, unless
    ``fsdp_only``, every row that took the 4-GPU campaign's (the sealed ``llm4`` rows and TP issue probe, section 7's
    other-GPU campaign and TP issue probes; the 2-GPU campaign itself still takes the 4-GPU one's, never its own)."""
    from validation import llm_blind, llm_real, sealed_campaign

    llm_blind.HOST_FROM[4] = llm_blind.HOST_FROM[2]
    if fsdp_only:
        return
    llm_real.OTHER_GPU_CAMPAIGNS = tuple(e[:3] + (0,) for e in llm_real.OTHER_GPU_CAMPAIGNS)
    llm_real.ISSUE_CAMPAIGNS = tuple(e[:3] + (0,) for e in llm_real.ISSUE_CAMPAIGNS)
    scored = sealed_campaign._scored

    def scored_two(label, path, runner, hosts, c=sealed_campaign.H100):  # type: ignore[no-untyped-def]
        return scored(label, path, runner, [hosts[0], hosts[0]], c)

    sealed_campaign._scored = scored_two  # type: ignore[assignment]


TARGETS = ("sealed", "sealed2", "sealedf", "llm", "llm2", "llmf")
"""What to score: the sealed leases or section 7 (``--only llm``, written to ``--out`` when given third), today's host
work, the 2-GPU campaign's for every row that took the 4-GPU one's (``2``), or for the FSDP-only rows alone (``f``)."""


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or argv[0] not in VARIANTS or argv[1] not in TARGETS:
        print("usage: python validation/scripts/fsdp_steady_paces_s26.py off|steady|paces|both "
              "sealed|sealed2|sealedf|llm|llm2|llmf [OUT.md]", file=sys.stderr)
        return 2
    fields = switches(argv[0])
    print(f"<!-- trial: {fields} -->")
    with trial(fields):
        if argv[1][-1] in "2f":
            two_gpu_host(fsdp_only=argv[1].endswith("f"))
        if argv[1].startswith("llm"):
            from validation.accuracy import main as run
            return run(["--only", "llm", *(["--out", argv[2]] if len(argv) == 3 else [])])
        from validation.sealed_campaign import main as run_sealed
        return run_sealed([])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
