"""The eighth sealed campaign's blind figures (validation/data/h100x4_2026-11-27g_{lat,bw,llm}/README.md), as run
2026-11-27 20:55 UTC: from the root of `git archive 5f4324f` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_5f4324f.py`.
It builds a `Sealed` record of 5f4324f's shape for the folders and refuses a model whose SEALED already lists them
(a later main). Today's model: `python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

D = sc.DATA
if any(s.lat.name == "h100x4_2026-11-27g_lat" for s in sc.SEALED):
    sys.exit("sealed_blind_5f4324f.py reproduces the blind figures of main 5f4324f only (run it in `git archive "
             "5f4324f`); today's figures: python -m validation.sealed_campaign")
c = replace(sc.H100C, lat=D / "h100x4_2026-11-27g_lat", bw=D / "h100x4_2026-11-27g_bw", llm=D / "h100x4_2026-11-27g_llm",
            runs=sc.RUNS[:3] + (sc.RUNS[4], sc.RUNS[6]), prefix="h100s3_sealed", blind_commit="5f4324f",
            title="A thirteenth machine, sealed", after="", tried=None, fsdp_only_seen=False, opened="(not yet)",
            when="at the start of the session of 2026-11-27 19:46-22:46 UTC (20:32-20:47) under main 5f4324f")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
