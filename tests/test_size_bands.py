"""Size bands: one rule (simulator.collectives.uncertainty.size_band) and the names tables give them."""

import math

import numpy as np
import pytest

from simulator.collectives.uncertainty import size_band, size_bands
from validation.calibrate import SIZE_EDGES_BYTES

EDGES = (1 << 16, 1 << 24)


@pytest.mark.parametrize("size, band", [(0, 0), ((1 << 16) - 1, 0), (1 << 16, 1), ((1 << 24) - 1, 1), (1 << 24, 2),
                                        (1 << 40, 2)])
def test_a_size_on_an_edge_belongs_to_the_band_above(size, band):
    assert size_band(size, EDGES) == band


def test_size_band_numbers_an_array_of_sizes_elementwise():
    sizes = np.array([8, 1 << 16, 1 << 20, 1 << 30])
    assert size_band(sizes, EDGES).tolist() == [size_band(int(s), EDGES) for s in sizes]


def test_band_names_and_bounds_follow_the_edges():
    assert size_bands(EDGES) == (("< 64 KiB", 0.0, 1 << 16), ("64 KiB - 16 MiB", 1 << 16, 1 << 24),
                                 (">= 16 MiB", 1 << 24, math.inf))
    assert size_bands(()) == (("any size", 0.0, math.inf),)


def test_each_named_band_holds_the_sizes_size_band_puts_in_it():
    for b, (_, lo, hi) in enumerate(size_bands(SIZE_EDGES_BYTES)):
        for s in (lo, (lo + min(hi, 1 << 40)) // 2, min(hi, 1 << 40) - 1):
            assert size_band(s, SIZE_EDGES_BYTES) == b
