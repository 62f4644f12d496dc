"""Where the LLM model misses vTrain's runs, and the measured pass profile of the A100 set.

    python -m validation.pass_profile --features   # which plan features the residual depends on
    python -m validation.pass_profile --fit        # adds the pass profile to a100-megatron.json

vTrain's Megatron-DeepSpeed runs (``validation/data/public/llm/vtrain_single_a100.jsonl``) repeat
every per-GPU pass shape (hidden size, TP, micro-batch) at several pipeline and data-parallel
degrees, GPU counts and micro-batch counts. ``--features`` regresses the analytic model's residual
(log measured / predicted, ``a100-megatron``'s compute set) on plan features in nested steps:
the shape alone (hidden x TP x micro-batch) takes out most of it, while PP, DP, the GPU count and
the number of micro-batches add little. So the miss is in the time of a pass on one GPU, not in
the pipeline, data-parallel or network model.

``--fit`` estimates, for every shape the runs on 2 and 4 GPUs cover, one transformer block's pass
and a micro-batch's embedding, output layer and loss (:mod:`simulator.training.llm.pass_profile`)
by least squares on the measured iterations of those runs, less what the simulation charges
outside the passes (optimizer step, exposed gradient reduction, the per-iteration overhead):

    measured - (optimizer + exposed DP + overhead) = a + m * microbatch_s + (m + p - 1) * passes * blocks/p * block_pass_s

(``m`` micro-batches, ``p`` stages, ``passes`` per block and micro-batch: 4 with full
recomputation; ``a`` absorbs what the subtracted terms get wrong and is not kept). No 8-GPU run is
used: the 8-GPU runs score it (``python -m validation.search_check`` and accuracy section 7).
Shapes only the 8-GPU runs have (TP 8) stay analytic.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import replace

import numpy as np

from simulator.collectives.params import SHIPPED_DIR
from simulator.training.llm.compute import load_compute_params
from simulator.training.llm.pass_profile import ProfileEntry, backward_passes, shape_key
from validation.llm_compare import LLM_DATA, LlmPredictor, LlmRun, read_llm

VTRAIN = LLM_DATA / "vtrain_single_a100.jsonl"
CALIBRATION = "a100-megatron"
MIN_RUNS = 4


def analytic_predictor() -> LlmPredictor:
    """The shipped A100 compute set without its profile."""
    return LlmPredictor(compute=replace(load_compute_params(CALIBRATION), profile=None))


def fit_profile(runs: list[LlmRun], predictor: LlmPredictor | None = None) -> tuple[list[ProfileEntry], dict]:
    """Profile entries for every shape with at least MIN_RUNS of ``runs``; (entries, fit summary)."""
    from simulator.training.llm.iteration import simulate_train
    P = predictor or analytic_predictor()
    rows: dict[tuple, list[tuple[list[float], float]]] = defaultdict(list)
    for r in runs:
        c = r.config
        res = simulate_train(P.router(c.gpus, r.gpus_per_node), r.model, c, P.gpu, P.params, P.compute, record=False)
        passes = 1 + backward_passes(c)
        y = r.iteration_s - res.optimizer_s - res.dp_comm_exposed_s - res.overhead_s
        steps = c.microbatches + c.pp - 1
        rows[shape_key(P.gpu.name, r.model, c)].append(([1.0, c.microbatches, steps * passes * r.model.layers / c.pp], y))
    entries, rms, skipped = [], [], 0
    for key, obs in sorted(rows.items()):
        if len(obs) < MIN_RUNS:
            skipped += 1
            continue
        A = np.array([o[0] for o in obs])
        y = np.array([o[1] for o in obs])
        coef = np.linalg.lstsq(A, y, rcond=None)[0]
        rms.append(float(np.sqrt(np.mean((A @ coef - y) ** 2) / np.mean(y ** 2))) * 100)
        entries.append(ProfileEntry(*key, block_pass_s=max(0.0, float(coef[2])), microbatch_s=max(0.0, float(coef[1]))))
    summary = {"shapes": len(entries), "runs": len(runs), "skipped_shapes": skipped,
               "median_rms_pct": round(float(np.median(rms)), 2) if rms else None}
    return entries, summary


def training_runs() -> list[LlmRun]:
    """vTrain's runs on fewer than 8 GPUs (every 8-GPU run is held out)."""
    _, runs, _ = read_llm(VTRAIN)
    return [r for r in runs if r.config.gpus < 8]


def write_profile(entries: list[ProfileEntry], summary: dict) -> str:
    path = SHIPPED_DIR / f"{CALIBRATION}.json"
    data = json.loads(path.read_text())
    data["pass_profile_fit"] = {"data": "validation/data/public/llm/vtrain_single_a100.jsonl",
                                "runs": f"{summary['runs']} runs on 2 and 4 A100s (every run below 8 GPUs)",
                                "shapes": summary["shapes"], "median_rms_pct": summary["median_rms_pct"],
                                "tool": "python -m validation.pass_profile --fit"}
    data["pass_profile"] = [e.as_dict() for e in entries]
    text = json.dumps(data, indent=2)
    path.write_text(text + "\n")
    return str(path)


def feature_table() -> tuple[list[str], float]:
    """Markdown lines: the analytic model's residual spread left after grouping the runs by nested
    feature sets; and its median error over the 8-GPU runs."""
    _, runs, _ = read_llm(VTRAIN)
    P = analytic_predictor()
    pred = {id(r): P.iteration_s(r) for r in runs}
    res = {id(r): float(np.log(r.iteration_s / pred[id(r)]) * 100) for r in runs}
    median8 = float(np.median([abs(pred[id(r)] / r.iteration_s - 1) * 100 for r in runs if r.config.gpus == 8]))
    steps = [
        ("none", lambda r: ()),
        ("TP", lambda r: (r.config.tp,)),
        ("hidden x TP x micro-batch (the pass shape)", lambda r: (r.model.hidden, r.config.tp, r.config.micro_batch)),
        ("shape x PP", lambda r: (r.model.hidden, r.config.tp, r.config.micro_batch, r.config.pp)),
        ("shape x PP x DP", lambda r: (r.model.hidden, r.config.tp, r.config.micro_batch, r.config.pp, r.config.dp)),
        ("shape x PP x DP x micro-batches", lambda r: (r.model.hidden, r.config.tp, r.config.micro_batch, r.config.pp,
                                                       r.config.dp, r.config.microbatches)),
        ("PP x DP x micro-batches (no shape)", lambda r: (r.config.pp, r.config.dp, r.config.microbatches)),
    ]
    lines = ["| runs grouped by | groups | residual sd left % |", "|---|---:|---:|"]
    for name, key in steps:
        groups: dict[tuple, list[float]] = defaultdict(list)
        for r in runs:
            groups[key(r)].append(res[id(r)])
        left = np.concatenate([np.array(v) - np.mean(v) for v in groups.values()])
        lines.append(f"| {name} | {len(groups)} | {np.sqrt(np.mean(left ** 2)):.1f} |")
    return lines, median8


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.pass_profile", description=__doc__.splitlines()[0])
    p.add_argument("--fit", action="store_true", help=f"refit the pass profile of {CALIBRATION}.json")
    p.add_argument("--features", action="store_true", help="print the residual left by nested plan features")
    a = p.parse_args(argv)
    if a.fit:
        entries, summary = fit_profile(training_runs())
        print(f"wrote {write_profile(entries, summary)}: {summary}")
    if a.features or not a.fit:
        lines, median8 = feature_table()
        print("\n".join(lines) + f"\n\nanalytic model, 8-GPU runs: median error {median8:.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
