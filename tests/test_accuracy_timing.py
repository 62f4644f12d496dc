"""validation.accuracy_timing: the command that prints the accuracy report's time (not a timed test)."""

import sys

from validation import accuracy_timing


def test_timed_counts_the_child_process_cpu_and_exit_status():
    wall, user, system, rc = accuracy_timing.timed(
        [sys.executable, "-c", "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"])
    assert rc == 0
    assert user + system >= 0.25          # the child's CPU, not this process's (it spins until it has used 0.3 s)
    assert accuracy_timing.timed([sys.executable, "-c", "raise SystemExit(3)"])[3] == 3


def test_timed_wall_is_the_clock_read_around_the_child(monkeypatch):
    """Review s17 #18: the wall time is checked on a clock the test sets, not against the machine's pace (the
    test compared wall with CPU time, which depends on load)."""
    reads = iter([100.0, 102.5])
    monkeypatch.setattr(accuracy_timing.time, "perf_counter", lambda: next(reads))
    wall, _, _, rc = accuracy_timing.timed([sys.executable, "-c", "pass"])
    assert (wall, rc) == (2.5, 0)


def test_runs_must_be_positive(capsys):
    assert accuracy_timing.main(["--runs", "0"]) == 2
    assert "--runs" in capsys.readouterr().err
