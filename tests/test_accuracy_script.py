"""The accuracy script itself (validation.accuracy): sections run in worker processes print what they
print in turn. (Whether docs/accuracy.md is what the script prints is CI's check: .ci/run.)"""

from __future__ import annotations

import argparse

from validation import accuracy

QUICK = ["nvls", "innet"]           # about a second together


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
