"""The accuracy script itself (validation.accuracy): sections run in worker processes print what they
print in turn. (Whether docs/accuracy.md is what the script prints is CI's check: .ci/run.)"""

from __future__ import annotations

import argparse

from validation import accuracy

QUICK = ["nvls", "innet"]           # about a second together


def test_sections_in_worker_processes_print_as_in_turn():
    """The workers fork before this process ran any section (cold, as in the script); the sections then run
    here in turn, each after the ones before it, as the script runs them without workers."""
    import pytest

    a = argparse.Namespace(calibrations=False, only=None)
    with accuracy._in_parallel(QUICK, a) as started:
        if not started:
            pytest.skip("one core or no fork here: the script runs its sections in turn")
        in_workers = {n: started[n].result() for n in QUICK}
    assert set(in_workers) == set(QUICK)
    assert [in_workers[n] for n in QUICK] == [accuracy.SECTIONS[n](a) for n in QUICK]


def test_every_section_has_its_place_in_the_workers_order():
    """A section missing from LONGEST_FIRST sorted first without a word; now the order refuses it."""
    assert sorted(accuracy.LONGEST_FIRST) == sorted(accuracy.SECTIONS)


def test_no_workers_when_calibrations_are_rewritten_or_for_one_section():
    with accuracy._in_parallel(QUICK, argparse.Namespace(calibrations=True, only=None)) as started:
        assert started == {}
    with accuracy._in_parallel(QUICK[:1], argparse.Namespace(calibrations=False, only=None)) as started:
        assert started == {}
