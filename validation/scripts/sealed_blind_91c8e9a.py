"""The fourth sealed campaign's blind figures (validation/data/h100x4_2026-11-27c_{lat,bw,llm}/README.md), as run
2026-11-27 09:10 UTC: from the root of `git archive 91c8e9a` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_91c8e9a.py`.
It builds a `Sealed` record of 91c8e9a's shape for the folders and refuses a model whose SEALED already lists them
(a later main). Today's model: `python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

D = sc.DATA
if any(s.lat.name == "h100x4_2026-11-27c_lat" for s in sc.SEALED):
    sys.exit("sealed_blind_91c8e9a.py reproduces the blind figures of main 91c8e9a only (run it in `git archive "
             "91c8e9a`); today's figures: python -m validation.sealed_campaign")
c = replace(sc.H100, lat=D / "h100x4_2026-11-27c_lat", bw=D / "h100x4_2026-11-27c_bw", llm=D / "h100x4_2026-11-27c_llm",
            runs=sc.RUNS[:3] + (sc.RUNS[4],), prefix="h100s2_sealed", blind_commit="91c8e9a",
            title="A ninth machine, sealed", after="", tried=None,
            when="at the start of the session of 2026-11-27 08:49-11:49 UTC (08:50-09:04) under main 91c8e9a")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
