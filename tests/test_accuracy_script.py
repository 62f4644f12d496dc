"""The accuracy script itself (validation.accuracy): sections run in worker processes print what they
print in turn, and the committed report holds the quick sections as the code prints them now."""

from __future__ import annotations

import argparse
from pathlib import Path

from validation import accuracy

QUICK = ["nvls", "innet"]           # about a second together
DOC = Path(__file__).resolve().parents[1] / "docs" / "accuracy.md"


def test_sections_in_worker_processes_print_as_in_turn():
    a = argparse.Namespace(calibrations=False, only=None)
    in_turn = [accuracy.SECTIONS[n](a) for n in QUICK]
    with accuracy._in_parallel(QUICK, a) as started:
        if started:                 # a machine with one core, or no fork: nothing to compare
            assert set(started) == set(QUICK)
            assert [started[n].result() for n in QUICK] == in_turn


def test_no_workers_when_calibrations_are_rewritten_or_for_one_section():
    with accuracy._in_parallel(QUICK, argparse.Namespace(calibrations=True, only=None)) as started:
        assert started == {}
    with accuracy._in_parallel(QUICK[:1], argparse.Namespace(calibrations=False, only=None)) as started:
        assert started == {}


def test_committed_report_holds_the_quick_sections_as_printed_now():
    """A change to these sections' figures must come with `python -m validation.accuracy` rerun."""
    text = DOC.read_text()
    a = argparse.Namespace(calibrations=False, only=None)
    for name in QUICK:
        lines, _, _ = accuracy.IN_PLACE[name](a)
        assert "\n".join(lines) in text, f"docs/accuracy.md is stale in section {name}: rerun the script"
