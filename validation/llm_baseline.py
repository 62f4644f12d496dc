"""A reference prediction of the LLM runners' iterations from their layer profiles alone.

It says how far compute by itself goes, so a network model can be judged by what it adds:

* FSDP: embedding + ``layers`` blocks + head, forward and backward, on one GPU (all
  communication assumed hidden);
* TP: ``layers`` sharded blocks forward and backward (collectives assumed free);
* PP: 1F1B with the measured per-stage times of one micro-batch, ``f_s`` and ``b_s``, and one
  activation transfer ``p``: the first micro-batch's forward through every stage, then ``M - 1``
  steady steps of the slowest stage, then the last backward through every stage,
  ``sum_s (f_s + b_s) + (M - 1) * max_s (f_s + b_s) + 2 (pp - 1) p``.

Run ``python -m validation.llm_baseline FILE.jsonl...`` for a table of every configuration:
median over launches, the range of per-launch medians, this prediction and its error.
"""

from __future__ import annotations

import sys
from typing import Sequence

from simulator.core.errors import InputError
from validation.check_cli import run_command
from validation.llm_records import (LayerProfile, LlmRun, compare_runs, error_table,
                                    read_llm_records)


def compute_only_s(run: LlmRun, profile: LayerProfile | None) -> float:
    """The reference prediction (seconds) described in the module docstring."""
    if run.runner == "pp":
        steps = [f + b for f, b in zip(run.stage_forward_s, run.stage_backward_s)]
        m = run.micro_batches or 1
        return sum(steps) + (m - 1) * max(steps) + 2 * (run.pp - 1) * (run.p2p_s or 0.0)
    if profile is None:
        raise InputError("no layer profile for this run", field=run.point)
    block_s = run.spec.layers * (profile.block_forward_s + profile.block_backward_s)
    if run.runner == "tp":
        return block_s
    assert profile.embed_forward_s is not None and profile.embed_backward_s is not None
    assert profile.head_forward_s is not None and profile.head_backward_s is not None
    return (block_s + profile.embed_forward_s + profile.embed_backward_s
            + profile.head_forward_s + profile.head_backward_s)


def main(argv: Sequence[str] | None = None) -> int:
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths or any(p in ("-h", "--help") for p in paths):
        print("usage: python -m validation.llm_baseline FILE.jsonl...", file=sys.stderr)
        return 2
    def run() -> None:
        records = read_llm_records(paths)
        print("\n".join(error_table(compare_runs(records, compute_only_s), "compute ms")))
        if records.failures:
            print(f"{len(records.failures)} failed launches recorded (kind llm_failed)")
    return run_command(run)


if __name__ == "__main__":
    sys.exit(main())
