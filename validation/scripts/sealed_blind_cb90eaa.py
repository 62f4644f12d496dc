"""The fifteenth sealed campaign's blind figures (validation/data/h200x4_2026-11-28e_{lat,bw,llm}/README.md), as run
2026-11-28 08:50 UTC: from the root of `git archive cb90eaa` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_cb90eaa.py`.
It builds a `Sealed` record of cb90eaa's shape for the folders and refuses a model whose SEALED already lists them
(a later main). Today's model: `python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

D = sc.DATA
if any(s.lat.name == "h200x4_2026-11-28e_lat" for s in sc.SEALED):
    sys.exit("sealed_blind_cb90eaa.py reproduces the blind figures of main cb90eaa only (run it in `git archive "
             "cb90eaa`); today's figures: python -m validation.sealed_campaign")
c = replace(sc.H200H, lat=D / "h200x4_2026-11-28e_lat", bw=D / "h200x4_2026-11-28e_bw", llm=D / "h200x4_2026-11-28e_llm",
            runs=sc.RUNS[:3] + (sc.RUNS[4], sc.RUNS[6]), prefix="h200s12_sealed", blind_commit="cb90eaa",
            title="A twentieth machine, sealed", after="", tried=None, fsdp_only_seen=False, opened="(not yet)",
            when="at the start of the session of 2026-11-28 08:33-11:33 UTC (08:36-08:50) under main cb90eaa")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
