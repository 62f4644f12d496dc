"""The fourteenth sealed campaign's blind figures (validation/data/h200x4_2026-11-28d_{lat,bw,llm}/README.md), as run
2026-11-28 08:02 UTC: from the root of `git archive 4bbd21a` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_4bbd21a.py`.
It builds a `Sealed` record of 4bbd21a's shape for the folders and refuses a model whose SEALED already lists them
(a later main). Measured after that session's model was final, so its blind figures are that model's. Today's model:
`python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

D = sc.DATA
if any(s.lat.name == "h200x4_2026-11-28d_lat" for s in sc.SEALED):
    sys.exit("sealed_blind_4bbd21a.py reproduces the blind figures of main 4bbd21a only (run it in `git archive "
             "4bbd21a`); today's figures: python -m validation.sealed_campaign")
c = replace(sc.H200H, lat=D / "h200x4_2026-11-28d_lat", bw=D / "h200x4_2026-11-28d_bw", llm=D / "h200x4_2026-11-28d_llm",
            runs=(sc.RUNS[4],), prefix="h200s11_sealed", blind_commit="4bbd21a",
            title="A nineteenth machine, sealed", after="", tried=None, fsdp_only_seen=False, opened="(not yet)",
            when="late in the session of 2026-11-28 06:06-09:06 UTC (07:53-08:01), after its model was final, under "
                 "main 4bbd21a")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
