"""NCCL's tuning constants (src/graph/tuning.cc, NCCL 2.2x), defined once.

Used by NCCL's own cost model (simulator.collectives.nccl_model) and as the datasheet defaults of
our parameter set (simulator.collectives.params). Latencies in microseconds, bandwidths in GB/s.
"""

from __future__ import annotations

# Index: [algorithm][ll, ll128, simple]; hop classes are NCCL's NVLink, PCI and network latencies.
BASE_LAT = {"tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4)}
HW_LAT = {"nvlink": {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4)},
          "pcie": {"tree": (1.0, 1.9, 4.0), "ring": (1.0, 2.5, 5.7)},
          "net": {"tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0)}}
# [Volta, Ampere, Hopper, Blackwell][N1, N2, N4]
LL_MAX_BW = ((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0), (282.0, 90.0, 70.0))
PER_CH_MAX_RING_LL128 = ((20.0,) * 3, (20.0,) * 3, (36.7,) * 3, (40.0,) * 3)
PER_CH_MAX_TREE_LL128 = ((20.0,) * 3, (20.0,) * 3, (36.7, 36.7, 29.0), (55.6, 31.67, 20.0))
PER_CH_MAX_TREE = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0), (70.0, 42.8, 24.0))
TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9),
)
