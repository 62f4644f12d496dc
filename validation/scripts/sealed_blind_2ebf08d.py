"""The sealed 4x H200 campaign's blind figures (validation/data/h200x4_2026-11-27_{lat,bw,llm}/README.md), exactly as run
2026-11-27 03:28-03:32 UTC: from the root of `git archive 2ebf08d` with the three folders copied into validation/data/,
`PYTHONPATH=. python validation/scripts/sealed_blind_2ebf08d.py`. It patches 2ebf08d's module-level folders of
validation.sealed_campaign; later models keep each campaign in a `Sealed` record and this script refuses them.
Today's model: `python -m validation.sealed_campaign`."""
import sys
from pathlib import Path

from validation import llm_blind as lb, llm_real as lr, sealed_campaign as sc
from validation.llm_records import error_summary, read_llm_records

if hasattr(sc, "SEALED"):
    sys.exit("sealed_blind_2ebf08d.py reproduces the blind figures of main 2ebf08d only (run it in `git archive "
             "2ebf08d`); today's figures: python -m validation.sealed_campaign")
D = Path("validation/data").resolve()
sc.LAT, sc.BW, sc.LLM = D / "h200x4_2026-11-27_lat", D / "h200x4_2026-11-27_bw", D / "h200x4_2026-11-27_llm"
sc.TOPOLOGY, sc.PREFIX = "hgx-h200", "h200s_sealed"
rows, figures, pooled = sc.score()
print("## collectives: calibrate on pooled 2-GPU launches (%d points), predict 3 and 4 (section 3 method)" % len(pooled[2]))
print("\n".join(rows))


def summ(tag, errs, runner):
    s = error_summary(errs)[runner]
    inside = sum(e.low_s <= e.predicted_s <= e.high_s for e in errs)
    print(f"{tag}: n={s['n']:.0f} median {s['median_abs_pct']:.1f}% p90 {s['p90_abs_pct']:.1f}% "
          f"spearman {s['spearman']:.2f} inside {inside}/{len(errs)}")
    for e in errs:
        print(f"   {e.point}  meas {e.measured_s*1e3:.2f} ({e.low_s*1e3:.2f}-{e.high_s*1e3:.2f}) "
              f"pred {e.predicted_s*1e3:.2f} {e.error_pct:+.1f}%")


data = Path(lr.__file__).resolve().parent / "data"
hosts = [lr.host_work_from([data / f / n], c) for f, n, c in lr.CAMPAIGNS]
for cal in ("h200-nvlink", "h200-nvlink-2gpu"):
    print(f"\n## own runs llm4 (4x H200): calibration {cal}, host work of", lr.CAMPAIGNS[1][0])
    res = lr.predict_files([sc.LLM / "llm_world4.jsonl"], cal, hosts[1][0])
    for runner in ("pp", "tp", "fsdp"):
        errs = [e for e in res.errors if e.runner == runner]
        if errs:
            summ(f"llm4 {runner} [{cal}]", errs, runner)

print("\n## FSDP NO_SHARD/FULL_SHARD (fsdp4), the blind FSDP method of validation.llm_blind")
records = read_llm_records([sc.LLM / "fsdp_world4.jsonl"])
pred, pct, n, mem = lb.blind_predictor(records)
host, hf = lb.host_for(4)
summ("fsdp world4", lb._errors(host.applied(pred), records), "fsdp")
