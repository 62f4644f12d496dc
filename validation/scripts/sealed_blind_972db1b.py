"""The seventh sealed campaign's blind figures (validation/data/h200x4_2026-11-27f_{lat,bw,llm}/README.md), as run
2026-11-27 17:10 UTC: from the root of `git archive 972db1b` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_972db1b.py`.
It builds a `Sealed` record of 972db1b's shape for the folders and refuses a model whose SEALED already lists them
(a later main). Today's model: `python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

D = sc.DATA
if any(s.lat.name == "h200x4_2026-11-27f_lat" for s in sc.SEALED):
    sys.exit("sealed_blind_972db1b.py reproduces the blind figures of main 972db1b only (run it in `git archive "
             "972db1b`); today's figures: python -m validation.sealed_campaign")
c = replace(sc.H200B, lat=D / "h200x4_2026-11-27f_lat", bw=D / "h200x4_2026-11-27f_bw", llm=D / "h200x4_2026-11-27f_llm",
            runs=sc.RUNS[:3] + (sc.RUNS[4], sc.RUNS[6]), prefix="h200s6_sealed", blind_commit="972db1b",
            title="A twelfth machine, sealed", after="", tried=None, fsdp_only_seen=False, opened="(not yet)",
            when="at the start of the session of 2026-11-27 16:49-19:49 UTC (16:50-17:03) under main 972db1b")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
