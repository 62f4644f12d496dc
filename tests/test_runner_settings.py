"""The torchrun runners' shared settings (validation.runners.launch): a bad count names its own flag and value."""

from __future__ import annotations

import importlib

import pytest

from simulator.core.errors import InputError

SPEC = ["--specs", "hidden=64,layers=1,heads=2,seq=32"]


@pytest.mark.parametrize("runner, argv, field, value", [
    ("gemm_nccl", ["--warmup", "-1"], "warmup", -1),            # was named reps with reps' value
    ("gemm_nccl", ["--work-ms", "0"], "work-ms", 0.0),          # was named cover with cover's value
    ("gemm_nccl", ["--cover", "1"], "cover", 1.0),
    ("overlap", ["--cover", "0"], "cover", 0.0),                # was named reps
    ("overlap", ["--warmup", "-2"], "warmup", -2),
    ("collectives", ["--reps", "0"], "reps", 0),                # was the tuple (reps, warmup)
    ("ddp", ["--model", "mlp", "--batch-size", "0"], "batch-size", 0),     # was named iters
    ("ddp_compute", ["--rounds", "101"], "rounds", 101),
    ("ddp_compute", ["--warmup", "-1"], "warmup", -1),          # was named rounds
    ("dataparallel", ["--breakdown-reps", "-1"], "breakdown-reps", -1),   # was named iters
    ("tp", [*SPEC, "--micro-batch", "0"], "micro-batch", 0),    # was named iters
])
def test_a_bad_count_names_its_own_flag(runner: str, argv: list[str], field: str, value: object) -> None:
    parse = importlib.import_module(f"validation.runners.{runner}").parse_settings
    with pytest.raises(InputError) as e:
        parse([*argv, "--out", "x.jsonl"])
    assert e.value.field == field and e.value.value == value


@pytest.mark.parametrize("runner", ["collectives", "ddp", "ddp_compute", "ddp_sweep", "gemm_nccl", "llm_sweep",
                                    "overlap", "sweep", "tp"])
def test_backend_and_device_flags_are_the_shared_ones(runner: str) -> None:
    """Every runner takes --backend auto|nccl|gloo and --device auto|cuda|cpu (launch.add_process_args)."""
    p = importlib.import_module(f"validation.runners.{runner}").build_parser()
    choices = {a.dest: tuple(a.choices) for a in p._actions if a.dest in ("backend", "device")}
    assert choices == {"backend": ("auto", "nccl", "gloo"), "device": ("auto", "cuda", "cpu")}


def test_no_runner_writes_the_backend_and_device_flags_again() -> None:
    """The two flags are written once (launch.add_process_args); nine runners each wrote both lines."""
    from pathlib import Path

    import validation.runners as runners
    folder = Path(runners.__file__).parent
    again = [f.name for f in folder.glob("*.py") if f.name != "launch.py"
             and 'add_argument("--backend", default="auto"' in f.read_text()]
    assert again == []


def test_only_the_entry_point_joins_and_leaves_the_process_group() -> None:
    """Joining, the closing barrier and destroy_process_group are launch.torchrun_entry_point's; each runner ended
    with its own copy of the tail (dist.barrier(); dist.destroy_process_group(); return 0)."""
    from pathlib import Path

    import validation.runners as runners
    folder = Path(runners.__file__).parent
    again = sorted(f.name for f in folder.glob("*.py") if f.name != "launch.py"
                   and any(x in f.read_text() for x in ("destroy_process_group(", "init_process_group(",
                                                         "join_process_group(")))
    assert again == []


def test_only_validation_timing_queues_gpu_sleeps() -> None:
    """A runner queues calls behind a GPU sleep at the rate validation.timing measures on the GPU; the kernel probe had
    counted its sleeps at a fixed 2e9 cycles a second while tp_issue and ddp_compute each timed their own copy."""
    from pathlib import Path

    import validation
    folder = Path(validation.__file__).parent
    again = sorted(str(f.relative_to(folder)) for f in folder.rglob("*.py") if f.name != "timing.py"
                   and "torch.cuda._sleep(" in f.read_text())
    assert again == []
