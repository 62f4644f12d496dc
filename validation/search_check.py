"""Does the plan search pick the fastest measured plan? (issue 16's target, vTrain's 8-GPU runs)

    python -m validation.search_check          # prints the table and the figure (about a minute)

For every model size and global batch of vTrain's Megatron-DeepSpeed runs on 8 A100s
(``validation/data/public/llm/vtrain_single_a100.jsonl``), the plan search (``simulator.training.llm.plan_search``) searches the plans
the data covers (its TP x PP x DP and micro-batch combinations, with the runs' full recomputation,
1F1B, fp16, DDP) on one DGX A100 with the ``a100-megatron`` compute set and its pass profile (both
fitted on 2- and 4-GPU runs only, so every 8-GPU run is out of sample). The figure: the measured time of the search's top
pick over the measured fastest, per group; the target is within 5% for every group.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import replace

from simulator.training.llm.compute import load_compute_params
from simulator.training.llm.config import Recompute, Schedule
from simulator.training.llm.search_space import SearchSpace
from validation.llm_compare import LLM_DATA, LlmRun, read_llm

VTRAIN = LLM_DATA / "vtrain_single_a100.jsonl"
TARGET_PCT = 5.0
BEGIN, END = "<!-- search:begin -->", "<!-- search:end -->"


def groups(runs: list[LlmRun], gpus: int = 8) -> dict[tuple[str, int], list[LlmRun]]:
    """Measured runs on ``gpus`` GPUs by (model, global batch)."""
    out: dict[tuple[str, int], list[LlmRun]] = defaultdict(list)
    for r in runs:
        if r.config.gpus == gpus:
            out[(r.model.name, r.config.global_batch)].append(r)
    return dict(out)


def pick_gap(group: list[LlmRun], compute=None, top: int = 3) -> tuple[LlmRun, LlmRun, float, float]:
    """(the search's top pick, the measured fastest, the pick's measured time over the fastest's - 1
    in %, the same for the measured best of the search's first ``top``)."""
    from simulator.training.llm.plan_search import make_cluster, search
    compute = compute or load_compute_params("a100-megatron")
    c0 = group[0].config
    by_plan = {(r.config.tp, r.config.pp, r.config.dp, r.config.micro_batch): r for r in group}
    space = SearchSpace(max_tp=8, micro_batches=tuple(sorted({k[3] for k in by_plan})),
                        schedules=(Schedule.ONE_F_ONE_B,), recompute=(c0.recompute,), shardings=("ddp",),
                        sequence_parallel=c0.sequence_parallel, dtype=c0.dtype, only=frozenset(by_plan))
    out = search(group[0].model, [make_cluster("dgx-a100", c0.gpus)], c0.global_batch, space=space, top=top,
                 compute=compute)
    best = min(group, key=lambda r: r.iteration_s)
    if not out.plans:
        return best, best, float("inf"), float("inf")
    picks = [by_plan[(p.config.tp, p.config.pp, p.config.dp, p.config.micro_batch)] for p in out.plans]
    gap = lambda r: (r.iteration_s / best.iteration_s - 1) * 100  # noqa: E731
    return picks[0], best, gap(picks[0]), min(gap(r) for r in picks)


def section() -> tuple[list[str], dict]:
    """The markdown section (a table per model size) and the figures."""
    _, runs, _ = read_llm(VTRAIN)
    assert all(r.config.recompute is Recompute.FULL for r in runs)
    compute = load_compute_params("a100-megatron")
    analytic = replace(compute, profile=None)
    rows, gaps, gaps3, gaps_analytic = [], [], [], []
    for (name, gb), group in sorted(groups(runs).items(), key=lambda kv: (kv[0][0], kv[0][1])):
        pick, best, gap, gap3 = pick_gap(group, compute)
        gaps.append(gap)
        gaps3.append(gap3)
        gaps_analytic.append(pick_gap(group, analytic)[2])
        fmt = lambda r: f"{r.config.tp}x{r.config.pp}x{r.config.dp} mb{r.config.micro_batch}"  # noqa: E731
        rows.append(f"| {name} | {gb} | {len(group)} | {fmt(pick)} | {fmt(best)} | {gap:.1f}% | {gap3:.1f}% |")
    within = sum(g <= TARGET_PCT for g in gaps)
    figs = {"groups": len(gaps), "within": within, "max_gap_pct": max(gaps),
            "exact": sum(g == 0 for g in gaps), "within_top3": sum(g <= TARGET_PCT for g in gaps3),
            "analytic_within": sum(g <= TARGET_PCT for g in gaps_analytic), "analytic_max_gap_pct": max(gaps_analytic)}
    lines = [BEGIN, "## 9. Plan search: top pick vs measured fastest (vTrain, 8 A100s)", "",
             "Produced by `python -m validation.search_check`. For each model size and global batch of vTrain's "
             "8-GPU Megatron-DeepSpeed runs, the plan search (`gpunetsim search`) ranks the plans the data covers (TP x PP x DP x "
             "micro-batch; full recomputation, 1F1B, fp16, DDP as measured) on one `dgx-a100` with `--calibration "
             "a100-megatron` (fitted on 2- and 4-GPU runs: out of sample). 'gap' is the measured time of the "
             "search's top pick over the measured fastest run of the group.", "",
             f"**{within} of {len(gaps)} groups within {TARGET_PCT:.0f}%** (target: all); the top pick is the "
             f"measured fastest in {figs['exact']}; largest gap {figs['max_gap_pct']:.1f}%. "
             f"The best measured of the search's first 3 is within {TARGET_PCT:.0f}% in {figs['within_top3']} of "
             f"{len(gaps)}. The compute set carries a measured pass profile (`python -m validation.pass_profile --fit`, "
             f"accuracy section 7): per shape (hidden x TP x micro-batch) one block's pass and a micro-batch's "
             f"embedding, output layer and loss, estimated from the 2- and 4-GPU runs; TP 8, which only the 8-GPU "
             f"runs have, stays analytic. Without it (the analytic kernel and host model alone) "
             f"{figs['analytic_within']} of {len(gaps)} groups are within {TARGET_PCT:.0f}%, largest gap "
             f"{figs['analytic_max_gap_pct']:.1f}%: the model put plans 2-9% apart that the measurements order the other "
             f"way, because a host-bound pass's time depends on its shape in ways no single mechanism of the "
             f"analytic model reproduces (e.g. TP 4 at hidden 2048 runs a pass faster than TP 4 at hidden 1024; "
             f"TP 1 pays 2-3x the analytic output layer per micro-batch). The search itself returns the simulator's "
             f"fastest plan of each group (tests/test_search.py checks it against simulating every plan).", "",
             "| model | global batch | runs | search's pick | measured fastest | gap | best of top 3 |",
             "|---|---:|---:|---|---|---:|---:|", *rows, END]
    return lines, figs


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m validation.search_check", description=__doc__.splitlines()[0]).parse_args(argv)
    print("\n".join(section()[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
