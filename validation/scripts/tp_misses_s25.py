"""The sealed TP run sets that miss issue 14's 8% (stop 25, branch h14tp25): per configuration, what the model gets
wrong.

::

    PYTHONPATH=. python validation/scripts/tp_misses_s25.py [NAME ...]    # default: every TP run set, ~10 s
    PYTHONPATH=. python validation/scripts/tp_misses_s25.py --standalone  # the per-call carrier tried, not kept

Per run set (:func:`tp_h100_s23.run_sets`, predicted as their reports predict them) and configuration: SP or not, the
launches' medians and stand-in loops, the prediction and its signed error, the model's host issue against its GPU side
(kernels plus closed-form collectives: host-bound when the host is longer), and the launches' spread. Then two splits
from the set's own measurements: the in-loop host cost per call without SP ((loop - stand-in loop) / calls, the
stand-ins the identity) over two quantities measured on the same lease that could carry it (the standalone
all-reduce's host issue per call, ``rank_host_times_s`` of the lease's ``llm_coll_world4.jsonl``, and the fitted
TP block issue time); and the loops of one size with and without SP solved for a per-call cost and a blocks' time
(calls 16 and 40, the blocks alike), beside the model's. The findings are in ``validation.llm_real``'s docstring.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tp_h100_s23 import run_sets  # noqa: E402

from validation import llm_real as lr  # noqa: E402
from validation.llm_records import group_runs  # noqa: E402


def standalone_call_s(folder: Path) -> float | None:
    """Median host issue per call of the lease's standalone all-reduces up to 64 MiB (None without them)."""
    path = folder / "llm_coll_world4.jsonl"
    if not path.exists():
        return None
    per = [statistics.median(x for rank in d["rank_host_times_s"] for x in rank)
           for d in map(json.loads, path.read_text().splitlines())
           if d.get("kind") == "coll" and d.get("op") == "all_reduce" and "rank_host_times_s" in d
           and d["bytes"] <= 64 << 20]
    return statistics.median(per) if per else None


def main(names: list[str]) -> int:
    for s in run_sets():
        if names and not any(n in s.name for n in names):
            continue
        records = s.records()
        pred, _, _ = lr.fitted_predictor(records, s.calibration, lr.issue_targets([s.path]) if s.probe else ())
        pred = s.host.applied(pred)
        c = pred.compute
        print(f"== {s.name}: host_tp_block_s {c.host_tp_block_s * 1e3:.3f} ms, host_collective_s "
              f"{c.host_collective_s * 1e6:.0f} us")
        loops, in_loop, errors = {}, [], []
        for g in group_runs([r for r in records.runs if r.runner == "tp"]):
            r = g.first
            calls = sum(n for _, _, n in r.collectives)
            comm = sum(n * pred.collective_s(op, b, r.tp) for op, b, n in r.collectives)
            passes = pred.block_passes(r.spec, r.micro_batch, r.tp, r.sequence_parallel, calls)
            gpu = r.spec.layers * sum(k for k, _, _ in passes) + comm
            host = r.spec.layers * sum(h for _, h, _ in passes)
            p = pred.iteration_s(r)
            xs = [x.median_s for x in g.runs]
            errors.append(abs(p / g.median_s - 1))
            loops[(r.spec.hidden, r.sequence_parallel)] = (g.median_s, calls, pred.blocks_s(
                r.spec, r.micro_batch, r.tp, r.sequence_parallel))
            if not r.sequence_parallel:
                in_loop += [(x.median_s - x.nocomm_median_s) / calls for x in g.runs if x.nocomm_median_s]
            print(f"  h{r.spec.hidden} SP {'on ' if r.sequence_parallel else 'off'} launches "
                  f"[{' '.join(f'{x * 1e3:.2f}' for x in xs)}] stand-ins "
                  f"[{' '.join(f'{x.nocomm_median_s * 1e3:.2f}' for x in g.runs if x.nocomm_median_s)}] ms, predicted "
                  f"{p * 1e3:.2f} ({(p / g.median_s - 1) * 100:+.1f}%); model host {host * 1e3:.2f} vs GPU "
                  f"{gpu * 1e3:.2f} ms ({'host' if host > gpu else 'GPU'}-bound); spread {(max(xs) / min(xs) - 1) * 100:.0f}%")
        alone = standalone_call_s(s.path.parent)
        if in_loop:
            call = statistics.median(in_loop)
            print(f"  in-loop us per call without SP {call * 1e6:.0f}: over the standalone all-reduce issue "
                  + (f"{call / alone:.2f}" if alone else "-") + f", over host_tp_block_s {call / c.host_tp_block_s:.3f}")
        for h in sorted({h for h, _ in loops}):
            if (h, False) in loops and (h, True) in loops:
                (a, na, blocks), (b, nb, _) = loops[(h, False)], loops[(h, True)]
                per = (b - a) / (nb - na)
                print(f"  h{h} split: {per * 1e6:.0f} us per call, blocks {(a - na * per) * 1e3:.2f} ms "
                      f"(model {c.host_collective_s * 1e6:.0f} us, {blocks * 1e3:.2f} ms)")
        print(f"  median |error| {statistics.median(errors) * 100:.1f}%")
    return 0


def standalone_trial() -> None:
    """The trial not kept: each lease's llm4 TP with ``host_collective_s = m x`` its standalone all-reduce issue per
    call, ``m`` the median of ``validation.tp_host_path``'s leave-one-out fits on the TP issue probes (no judged run)."""
    from dataclasses import replace

    from validation.llm_records import compare_runs
    from validation.tp_host_path import report

    m = statistics.median(x for x, _ in report().loo["standalone"])
    print(f"trial: host_collective_s = {m:.2f} x the lease's standalone all-reduce issue per call")
    for s in run_sets():
        alone = standalone_call_s(s.path.parent)
        if alone is None or s.probe:
            continue
        records = s.records()
        pred = s.host.applied(lr.fitted_predictor(records, s.calibration)[0])
        tried = pred.with_compute(replace(pred.compute, host_collective_s=m * alone))
        pct = [statistics.median(abs(e.error_pct) for e in compare_runs(records, p.iteration_s) if e.runner == "tp")
               for p in (pred, tried)]
        print(f"  {s.name}: median |error| {pct[0]:.1f} -> {pct[1]:.1f}%")


if __name__ == "__main__":
    if sys.argv[1:] == ["--standalone"]:
        standalone_trial()
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
