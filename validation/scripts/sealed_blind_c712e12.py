"""The tenth sealed campaign's blind figures (validation/data/h100x4_2026-11-28_{lat,bw,llm}/README.md), as run
2026-11-28 01:05 UTC: from the root of `git archive c712e12` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_c712e12.py`.
It builds a `Sealed` record of c712e12's shape for the folders and refuses a model whose SEALED already lists them
(a later main). Today's model: `python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

D = sc.DATA
if any(s.lat.name == "h100x4_2026-11-28_lat" for s in sc.SEALED):
    sys.exit("sealed_blind_c712e12.py reproduces the blind figures of main c712e12 only (run it in `git archive "
             "c712e12`); today's figures: python -m validation.sealed_campaign")
c = replace(sc.H100C, lat=D / "h100x4_2026-11-28_lat", bw=D / "h100x4_2026-11-28_bw", llm=D / "h100x4_2026-11-28_llm",
            runs=sc.RUNS[:3] + (sc.RUNS[4], sc.RUNS[6]), prefix="h100s4_sealed", blind_commit="c712e12",
            title="A fifteenth machine, sealed", after="", tried=None, fsdp_only_seen=False, opened="(not yet)",
            when="at the start of the session of 2026-11-28 00:44-03:44 UTC (00:45-01:01) under main c712e12")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
