"""A first look at `validation/data/h200x4_2026-11-27i_fine` (issue #10, the >= 16 MiB p90; validation.bw_signs):
per world size and op, the straight line through the pooled medians of 64-256 MiB and each smaller size's distance
from it (us). Run from the repository root: `python validation/scripts/fine_line_s22.py`."""
from pathlib import Path

import numpy as np

from validation import transfer

FOLDER = Path(__file__).resolve().parents[1] / "data" / "h200x4_2026-11-27i_fine"

for n in (2, 4):
    pts = transfer.pooled_points(sorted(FOLDER.glob(f"fine_world{n}_L*.jsonl")))
    for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        xs = sorted((q.point.size_bytes, q.point.time_s) for q in pts if q.point.op == op)
        mib = np.array([x[0] for x in xs]) / 2 ** 20
        us = np.array([x[1] for x in xs]) * 1e6
        line = (mib >= 64) & (mib <= 256)
        slope, icpt = np.polyfit(mib[line], us[line], 1)
        print(f"{n} GPUs {op}: 64-256 MiB line {icpt:.1f} us + {slope:.3f} us/MiB; below 96 MiB, size:distance "
              + " ".join(f"{s:.0f}:{t - (icpt + slope * s):+.0f}" for s, t in zip(mib, us) if s <= 96))
