"""The thirteenth sealed campaign's blind figures (validation/data/h200x4_2026-11-28c_{lat,bw,llm}/README.md), as run
2026-11-28 06:25 UTC: from the root of `git archive 8f68bca` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_8f68bca.py`.
It builds a `Sealed` record of 8f68bca's shape for the folders and refuses a model whose SEALED already lists them
(a later main). Today's model: `python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

D = sc.DATA
if any(s.lat.name == "h200x4_2026-11-28c_lat" for s in sc.SEALED):
    sys.exit("sealed_blind_8f68bca.py reproduces the blind figures of main 8f68bca only (run it in `git archive "
             "8f68bca`); today's figures: python -m validation.sealed_campaign")
c = replace(sc.H200H, lat=D / "h200x4_2026-11-28c_lat", bw=D / "h200x4_2026-11-28c_bw", llm=D / "h200x4_2026-11-28c_llm",
            runs=sc.RUNS[:3] + (sc.RUNS[4], sc.RUNS[6]), prefix="h200s10_sealed", blind_commit="8f68bca",
            title="An eighteenth machine, sealed", after="", tried=None, fsdp_only_seen=False, opened="(not yet)",
            when="at the start of the session of 2026-11-28 06:06-09:06 UTC (06:08-06:22) under main 8f68bca")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
