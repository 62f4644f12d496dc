"""Blind figures of the 2-GPU sealed LLM lease `h200x2_2026-11-28f_llm` under main 3b51686, before any model change of
the session of 2026-11-28 11:24-14:24 UTC: run from the repository root of a checkout of 3b51686 holding the folder
(`git worktree add --detach /tmp/b 3b51686`, copy the folder in, `PYTHONPATH=. python THIS`). The methods of
docs/accuracy.md section 7 as validation.sealed_campaign applies them to a 4-GPU lease, at 2 GPUs: the `llm2` runs as
`h200x2_2026-11-26c` (compute fitted on the lease's own profiles, calibration `h200-nvlink-2gpu`, host work of
`validation.llm_real.CAMPAIGNS[0]`), `fsdp2` / `fsdppair2` by `validation.llm_blind.lease_predictor`."""
import sys
from pathlib import Path

from validation import sealed_campaign as sc

if any(c.llm.name == "h200x2_2026-11-28f_llm" for c in sc.SEALED):
    sys.exit("sealed_blind_3b51686.py reproduces the blind figures of main 3b51686 only (run it in a checkout of "
             "3b51686 holding the folder); today's figures: python -m validation.sealed_campaign")

from validation import fsdp_pair, llm_blind as lb, llm_real as lr
from validation.llm_records import error_summary, read_llm_records

DATA = Path("validation/data")
L = DATA / "h200x2_2026-11-28f_llm"
hosts = [lr.host_work_from([DATA / f / n], cal) for f, n, cal in lr.CAMPAIGNS]
rows = []
pred = lr.predict_files([L / "llm_world2.jsonl"], "h200-nvlink-2gpu", hosts[0][0])
for runner, label in (("pp", "llm2 PP"), ("tp", "llm2 TP"), ("fsdp", "llm2 FSDP")):
    errs = [e for e in pred.errors if e.runner == runner]
    rows.append((label, errs))
for label, name in (("fsdp2", "fsdp_world2.jsonl"), ("fsdppair2", "fsdppair_world2.jsonl")):
    records = read_llm_records([L / name])
    p = lb.lease_predictor(L / name, records, 2)
    host, _ = lb.host_for(2)
    rows.append((label, lb._errors(fsdp_pair.carry(p, host), records)))
print("| runs | configurations | median err % | p90 err % | Spearman | inside the launches' range |")
print("|---|---|---|---|---|---|")
for label, errs in rows:
    runner = errs[0].runner
    s = error_summary(errs)[runner]
    print(f"| {label} | {s['n']:.0f} | {s['median_abs_pct']:.1f} | {s['p90_abs_pct']:.1f} | {s['spearman']:.2f} | "
          f"{sum(e.low_s <= e.predicted_s <= e.high_s for e in errs)} of {len(errs)} |")
print()
for label, errs in rows:
    for e in errs:
        print(f"{label:10s} {e.point[:70]:70s} meas {e.measured_s*1e3:9.2f} pred {e.predicted_s*1e3:9.2f} {e.error_pct:+6.1f}")
import math
from validation.sealed_campaign import band_check
print()
print(band_check({label: [math.log(e.measured_s / e.predicted_s) for e in errs] for label, errs in rows}))
