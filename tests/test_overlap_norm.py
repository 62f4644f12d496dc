"""Section 3 says that the overlap's norm was chosen with its 4-GPU points, with both figures
(validation.overlap_norm; review s14, finding 2)."""

from pathlib import Path

import pytest

from simulator.network import host_overlap
from validation import overlap_norm

DOC = Path(__file__).resolve().parents[1] / "docs" / "accuracy.md"


def test_norm_is_set_inside_the_block_only():
    before = host_overlap.stream_time_s(1.0, 1.0)
    with overlap_norm.norm(overlap_norm.ALTERNATIVE):
        assert host_overlap.NORM == overlap_norm.ALTERNATIVE
        assert host_overlap.stream_time_s(1.0, 1.0) == pytest.approx(2 ** (1 / overlap_norm.ALTERNATIVE))
    assert host_overlap.stream_time_s(1.0, 1.0) == before and host_overlap.NORM != overlap_norm.ALTERNATIVE


def test_section_3_prints_both_norms_figures():
    text = overlap_norm.line({"median_pct": 12.73, "coverage_pct": 79.75}, {"median_pct": 13.14, "coverage_pct": 77.5})
    assert "12.7%, 90% coverage 79.8% with p = 4" in text and "13.1% and 77.5% with p = 8" in text
    assert "not blind to that choice" in text
    doc = DOC.read_text()
    assert "**The overlap's norm was chosen with these points.**" in doc
    assert ("(the overlap's norm p = 4 was chosen with these 4-GPU points, section 3: a verdict only where the other "
            "norm gives the same)" in doc)                   # review s15 #10: no verdict the other norm would flip
