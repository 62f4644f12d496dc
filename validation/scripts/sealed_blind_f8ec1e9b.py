"""The twelfth sealed campaign's blind figures (validation/data/h200x4_2026-11-28b_{lat,bw,llm}/README.md), as run
2026-11-28 04:08 UTC: from the root of `git archive f8ec1e9` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_f8ec1e9b.py`.
It builds a `Sealed` record of f8ec1e9's shape for the folders and refuses a model whose SEALED already lists them
(a later main). Today's model: `python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

D = sc.DATA
if any(s.lat.name == "h200x4_2026-11-28b_lat" for s in sc.SEALED):
    sys.exit("sealed_blind_f8ec1e9b.py reproduces the blind figures of main f8ec1e9 only (run it in `git archive "
             "f8ec1e9`); today's figures: python -m validation.sealed_campaign")
c = replace(sc.H200H, lat=D / "h200x4_2026-11-28b_lat", bw=D / "h200x4_2026-11-28b_bw", llm=D / "h200x4_2026-11-28b_llm",
            runs=(sc.RUNS[4],), prefix="h200s9_sealed", blind_commit="f8ec1e9",
            title="A seventeenth machine, sealed", after="", tried=None, fsdp_only_seen=False, opened="(not yet)",
            when="at the start of the session of 2026-11-28 03:28-06:28 UTC (03:58-04:06) under main f8ec1e9")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
