"""``python -m simulator.bench`` refuses what it would time wrongly (argument checks only: nothing is timed)."""

from __future__ import annotations

import pytest

from simulator.bench import main


@pytest.mark.parametrize("argv, flag", [
    (["--gpus", "12"], "--gpus"),          # timed 8 GPUs in a row labelled 12
    (["--gpus", "0"], "--gpus"),
    (["--gpus", "abc"], "--gpus"),         # ValueError traceback
    (["--ddp-gpus", "4"], "--ddp-gpus"),
    (["--repeats", "0"], "--repeats"),     # silently 1
])
def test_bad_arguments_are_refused_naming_the_flag(capsys, argv, flag):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2 and f"error: {flag}:" in capsys.readouterr().err
