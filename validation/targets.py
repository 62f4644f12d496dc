"""Issue 10's targets, each stated once (docs/accuracy.md section 8 judges the figures against them; its At a glance
table shows them). Percent."""

SMALL_MEDIAN_PCT = 15.0
"""Calibrate on 2 GPUs, predict 4, < 16 MiB: median error against the pooled median of campaigns."""
INSIDE_RANGE_PCT = 75.0
"""... and the share of predictions inside the campaigns' fastest-to-slowest range (at least)."""
COVERAGE_PCT = 80.0
"""90% intervals: the share of measurements inside (at least)."""
WIDTH_PCT = 25.0
"""90% intervals: median width over the prediction (at most)."""
BIG_MEDIAN_PCT = 3.0
"""Calibrate on 2 GPUs, predict 4, >= 16 MiB: median error."""
BIG_P90_PCT = 8.0
"""... and its 90th percentile."""
CORPUS_MEDIAN_PCT = 5.0
"""Uncalibrated, each public dataset left out, >= 16 MiB: median error."""
DDP_MEDIAN_PCT = 6.0
"""DDP iterations from collective calibrations only: median error."""
