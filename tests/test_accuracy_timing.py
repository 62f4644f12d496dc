"""validation.accuracy_timing: the command that prints the accuracy report's time (not a timed test)."""

import sys

from validation import accuracy_timing


def test_timed_counts_the_child_process_cpu_and_exit_status():
    wall, user, system, rc = accuracy_timing.timed(
        [sys.executable, "-c", "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"])
    assert rc == 0
    assert user + system >= 0.25          # the child's CPU, not this process's
    assert wall >= user * 0.5
    assert accuracy_timing.timed([sys.executable, "-c", "raise SystemExit(3)"])[3] == 3


def test_runs_must_be_positive(capsys):
    assert accuracy_timing.main(["--runs", "0"]) == 2
    assert "--runs" in capsys.readouterr().err
