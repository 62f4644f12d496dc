"""The sealed 4x H100 campaign's blind figures (validation/data/h100x4_2026-11-27_{lat,bw,llm}/README.md), exactly as run
2026-11-27 00:30 UTC: from the root of `git archive 2dc75c7` with the three folders copied into validation/data/,
`PYTHONPATH=. python validation/scripts/sealed_blind_2dc75c7.py`. Today's model: `python -m validation.sealed_campaign`.

It works by setting 2dc75c7's `validation.held_out_campaign` globals (LAT, BW, TOPOLOGY, PREFIX), which that
version's `score_campaign()` reads. Later versions score their campaign through `validation.rank_model_error` and
ignore them, so run elsewhere the script would silently score the 4x H200 campaign as 'sealed'; it refuses instead
(exit 1; guard added after the run above, review s15 #12, which changes nothing inside the archive)."""
import os, sys
from dataclasses import replace
from pathlib import Path
import validation.held_out_campaign as hoc
if hasattr(hoc, "score_fits") or not hasattr(hoc, "TOPOLOGY"):
    sys.exit("sealed_blind_2dc75c7.py scores with main 2dc75c7's model only: run it from the root of `git archive "
             "2dc75c7` with the three sealed folders copied into validation/data/ (this tree's "
             "validation.held_out_campaign would ignore the folders). Today's model: python -m validation.sealed_campaign")
from validation import llm_blind as lb, llm_real as lr
from validation.llm_records import error_summary, read_llm_records

D = Path("validation/data")
LAT = D / os.environ.get("SEALED_LAT", "h100x4_2026-11-27_lat")
BW = D / os.environ.get("SEALED_BW", "h100x4_2026-11-27_bw")
LLM = D / os.environ.get("SEALED_LLM", "h100x4_2026-11-27_llm")
hoc.LAT, hoc.BW, hoc.TOPOLOGY, hoc.PREFIX = LAT, BW, "dgx-h100", "sealed"
lines, figs, fit, fit23, pooled = hoc.score_campaign()
print("## collectives: calibrate on pooled 2-GPU launches, predict 3 and 4 (section 3 method)")
print("\n".join(lines))
print("fitted:", {k: fit.params[k] for k in fit.keys} if hasattr(fit, "keys") else fit)

def summ(tag, errs, runner):
    s = error_summary(errs)[runner]
    inside = sum(e.low_s <= e.predicted_s <= e.high_s for e in errs)
    print(f"{tag}: n={s['n']:.0f} median {s['median_abs_pct']:.1f}% p90 {s['p90_abs_pct']:.1f}% "
          f"spearman {s['spearman']:.2f} inside {inside}/{len(errs)}")
    for e in errs:
        print(f"   {e.point}  meas {e.measured_s*1e3:.2f} ({e.low_s*1e3:.2f}-{e.high_s*1e3:.2f}) pred {e.predicted_s*1e3:.2f} {e.error_pct:+.1f}%")

data = Path(lr.__file__).resolve().parent / "data"
hosts = [lr.host_work_from([data / f / n], c) for f, n, c in lr.CAMPAIGNS]
print("\n## own runs llm4 (4x H100): calibration h100-nvlink-2gpu, host work of", lr.CAMPAIGNS[1][0])
res = lr.predict_files([LLM / "llm_world4.jsonl"], "h100-nvlink-2gpu", hosts[1][0])
for runner in ("pp", "tp", "fsdp"):
    errs = [e for e in res.errors if e.runner == runner]
    if errs:
        summ(f"llm4 {runner}", errs, runner)

print("\n## FSDP NO_SHARD/FULL_SHARD (fsdp2/fsdp4), the blind FSDP method of validation.llm_blind")
for world in (2, 4):
    records = read_llm_records([LLM / f"fsdp_world{world}.jsonl"])
    pred, pct, n, mem = lb.blind_predictor(records)
    host, hf = lb.host_for(world)
    blind = pred.with_compute(replace(pred.compute, **host.on(pred.compute)))
    summ(f"fsdp world{world}", lb._errors(blind, records), "fsdp")

print("\n## TP issue probe loops (4x H100), as ISSUE_CAMPAIGNS")
probe = [LLM / "tp_issue_world4.jsonl"]
r = lr.predict_records(lr.probe_tp_runs(probe), "h100-nvlink-2gpu", hosts[1][0], lr.issue_targets(probe))
summ("tp probe", r.errors, "tp")
