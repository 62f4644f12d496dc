"""The ninth sealed campaign's blind figures (validation/data/h200x4_2026-11-27h_{lat,bw,llm}/README.md), as run
2026-11-27 22:25 UTC: from the root of `git archive 24cd3c3` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_24cd3c3.py`.
It builds a `Sealed` record of 24cd3c3's shape for the folders and refuses a model whose SEALED already lists them
(a later main). Today's model: `python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

D = sc.DATA
if any(s.lat.name == "h200x4_2026-11-27h_lat" for s in sc.SEALED):
    sys.exit("sealed_blind_24cd3c3.py reproduces the blind figures of main 24cd3c3 only (run it in `git archive "
             "24cd3c3`); today's figures: python -m validation.sealed_campaign")
c = replace(sc.H200B, lat=D / "h200x4_2026-11-27h_lat", bw=D / "h200x4_2026-11-27h_bw", llm=D / "h200x4_2026-11-27h_llm",
            runs=sc.RUNS[:3] + (sc.RUNS[4], sc.RUNS[6]), prefix="h200s7_sealed", blind_commit="24cd3c3",
            title="A fourteenth machine, sealed", after="", tried=None, fsdp_only_seen=False, opened="(not yet)",
            when="at the start of the session of 2026-11-27 22:10-01:10 UTC (22:12-22:24) under main 24cd3c3")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
