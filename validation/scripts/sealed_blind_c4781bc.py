"""The third sealed campaign's blind figures (validation/data/h200x4_2026-11-27b_{lat,bw,llm}/README.md), as run
2026-11-27 06:26-06:55 UTC: from the root of `git archive c4781bc` with the three folders copied into validation/data/
(their README.md files empty, so no blind column is read), `PYTHONPATH=. python validation/scripts/sealed_blind_c4781bc.py`.
It builds a `Sealed` record of c4781bc's shape for the folders; later models' records say which changes each lease
holds out (`Sealed.blind_to_all`, later `Sealed.opened`) and this script refuses them. Today's model: `python -m validation.sealed_campaign`."""
import sys
from dataclasses import replace

from validation import sealed_campaign as sc

if hasattr(sc.Sealed, "blind_to_all") or "opened" in getattr(sc.Sealed, "__dataclass_fields__", {}):
    sys.exit("sealed_blind_c4781bc.py reproduces the blind figures of main c4781bc only (run it in `git archive "
             "c4781bc`); today's figures: python -m validation.sealed_campaign")
D = sc.DATA
c = replace(sc.H200, lat=D / "h200x4_2026-11-27b_lat", bw=D / "h200x4_2026-11-27b_bw", llm=D / "h200x4_2026-11-27b_llm",
            prefix="h200s3_sealed", blind_commit="c4781bc", title="An eighth machine, sealed",
            when="at the start of the session of 2026-11-27 06:12-09:12 UTC (06:13-06:22) under main c4781bc")
lines, figs = sc.collectives(c)
more, figs2 = sc.llm(c)
print("\n".join(lines + [""] + more))
print(figs)
print(figs2)
