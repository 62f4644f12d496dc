"""The sixth sealed campaign's blind figures (validation/data/h200x4_2026-11-27e_{lat,bw,llm}/README.md), as run
2026-11-27 14:37 UTC: from the root of `git archive 05a296d` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_05a296d.py`.
It builds a `Sealed` record of 05a296d's shape for the folders and refuses a model whose SEALED already lists them
(a later main). Today's model: `python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

D = sc.DATA
if any(s.lat.name == "h200x4_2026-11-27e_lat" for s in sc.SEALED):
    sys.exit("sealed_blind_05a296d.py reproduces the blind figures of main 05a296d only (run it in `git archive "
             "05a296d`); today's figures: python -m validation.sealed_campaign")
c = replace(sc.H200B, lat=D / "h200x4_2026-11-27e_lat", bw=D / "h200x4_2026-11-27e_bw", llm=D / "h200x4_2026-11-27e_llm",
            runs=sc.RUNS[:3] + (sc.RUNS[4],), prefix="h200s5_sealed", blind_commit="05a296d",
            title="An eleventh machine, sealed", after="", tried=None, fsdp_only_seen=False, opened="(not yet)",
            when="at the start of the session of 2026-11-27 14:03-17:03 UTC (14:26-14:37) under main 05a296d")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
