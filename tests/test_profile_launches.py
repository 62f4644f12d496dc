"""Disturbed single-GPU profile launches: which iterations and launches the compute fit leaves out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.core.errors import InputError
from validation.gpt_spec import parse_spec
from validation.llm_records import LayerProfile, read_llm_records
from validation.profile_launches import (CHECKS, SEALED, agreement, half_sample_mode, launch_level, launch_levels,
                                         main, markdown_lines, median_launch_s, summary, whole_model_profiles, whole_model_s)

SPEC = parse_spec("hidden=64,layers=4,heads=4,seq=32,vocab=100")
DATA = Path(__file__).resolve().parents[1] / "validation" / "data"


def launch(i: int, times_ms: list[float]) -> LayerProfile:
    """One launch's whole-model profile; its median as the runner records it."""
    times = tuple(t * 1e-3 for t in times_ms)
    ordered = sorted(times)
    median = (ordered[(len(times) - 1) // 2] + ordered[len(times) // 2]) / 2
    return LayerProfile(SPEC, 1, 1, False, 1e-4, 1e-4, 1e-3, 2e-3, 1e-4, 1e-4, median, f"L{i}", i, 4, "NVIDIA H100",
                        times)


STEADY = [14.0, 13.9, 14.1, 14.0, 13.95, 14.05, 14.0, 13.9, 14.1, 14.0]


def test_a_steady_launch_keeps_its_median() -> None:
    level = launch_level(launch(0, STEADY))
    assert level.disturbed_iterations == 0 and level.level_s == pytest.approx(level.median_s)


def test_spikes_within_a_launch_are_left_out() -> None:
    # the sealed lease's second launch: 6 of 10 iterations 1.4-3.5x slow, its median 23 ms; 14.8 and 15.2 ms
    # are more than 5% above its 10th percentile too
    level = launch_level(launch(1, [15.2, 14.8, 13.8, 13.9, 27.6, 48.9, 47.9, 48.3, 42.6, 19.2]))
    assert level.median_s == pytest.approx(23.4e-3)
    assert level.disturbed_iterations == 8 and level.level_s == pytest.approx(13.85e-3, rel=0.01)


def test_a_launch_slow_throughout_is_left_out() -> None:
    slow = [x * 1.3 for x in STEADY]              # every iteration 30% slow: step 1 cannot see it
    levels = launch_levels([launch(0, slow), launch(1, STEADY), launch(2, [x * 1.01 for x in STEADY])])
    assert [x.disturbed for x in levels] == [True, False, False]
    ps = [launch(0, slow), launch(1, STEADY), launch(2, [x * 1.01 for x in STEADY])]
    assert median_launch_s(ps) == pytest.approx(14.14e-3, rel=1e-3)       # the old rule took the middle launch
    assert whole_model_s(ps) == pytest.approx(14.0e-3 * 1.005, rel=1e-3)  # the two undisturbed launches' median


def test_launches_within_the_tolerance_all_count() -> None:
    ps = [launch(i, [x * f for x in STEADY]) for i, f in enumerate((1.0, 1.04, 1.02))]
    assert not any(x.disturbed for x in launch_levels(ps))
    assert whole_model_s(ps) == pytest.approx(median_launch_s(ps))


def test_records_without_iterations_keep_their_median() -> None:
    bare = LayerProfile(SPEC, 1, 1, False, None, None, 1e-3, 2e-3, None, None, 0.02, "L0", 0, 2, None)
    level = launch_level(bare)
    assert level.level_s == 0.02 and level.iterations == 0


def test_the_reader_keeps_every_iteration(tmp_path: Path) -> None:
    rec = {"kind": "llm_profile", "point": "p", "world": 2, "launch_id": "L0", "launch_index": 0, "micro_batch": 1,
           "tp": 1, "sequence_parallel": False, "block_forward_s": 1e-3, "block_backward_s": 2e-3,
           "model_median_s": 0.02, "model_iter_times_s": [0.02, 0.021], **SPEC.fields()}
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    assert read_llm_records(path).profiles[0].model_iter_times_s == (0.02, 0.021)
    path.write_text(json.dumps({**rec, "model_iter_times_s": ["x"]}) + "\n")
    with pytest.raises(InputError, match="model_iter_times_s"):
        read_llm_records(path)


@pytest.mark.parametrize("values, mode", [([1.0, 1.1, 1.05, 5.0, 9.0], 1.05), ([2.0, 2.0, 2.0], 2.0),
                                          ([1.0, 1.2, 3.0, 3.1, 3.05, 3.02, 9.0], 3.01)])
def test_half_sample_mode(values: list[float], mode: float) -> None:
    assert half_sample_mode(values) == pytest.approx(mode, rel=1e-3)


def test_the_disturbed_h200_launch_of_the_4_gpu_campaign() -> None:
    """h200x4_2026-11-26d, hidden 4096: 6.00 / 7.82 / 7.70 ms; the second launch's iterations are bimodal (7 of 10
    at ~7.9 ms), the third is slow throughout. The old rule took 7.70 ms, the other H200 leases measure ~5.9-6.2."""
    ps = whole_model_profiles(read_llm_records(DATA / "h200x4_2026-11-26d" / "llm_world4.jsonl").profiles)
    by_hidden = {spec.hidden: p for (spec, _), p in ps.items()}
    levels = launch_levels(by_hidden[4096])
    assert [x.disturbed for x in levels] == [False, False, True] and levels[1].disturbed_iterations == 7
    assert whole_model_s(by_hidden[4096]) == pytest.approx(6.11e-3, rel=0.01)
    assert not any(x.disturbed for x in launch_levels(by_hidden[2048]))


def test_the_rule_agrees_with_other_leases_better_than_the_median_launch() -> None:
    """The check the rule was chosen by, on every committed campaign but the sealed one: each campaign's whole-model
    time against the same GPU's other leases (median launch: mean 5.1%, largest 30.4%; now 1.6%, 5.3%)."""
    rows = [r for r in agreement() if not r.campaign.startswith(CHECKS)]
    assert len(rows) >= 16
    (_, old_mean, old_max), _, (_, new_mean, new_max) = summary(rows)
    assert new_mean < 2.0 < 4.0 < old_mean and new_max < 6.0 < 20.0 < old_max


def test_cli_lists_each_campaign(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(DATA / "h200x4_2026-11-26d" / "llm_world4.jsonl")]) == 0
    out = capsys.readouterr().out
    assert out.count("DISTURBED LAUNCH") == 1 and "| undisturbed launches (now) |" in out


def test_the_lease_measured_after_the_rule_is_a_check() -> None:
    """h100x4_2026-11-27_fsdpissue2 (measured on branch h14host2 after the rule was chosen) is listed with the sealed
    leases, never in the choice: at hidden 4096 on 4 GPUs all three of its launches run 9-14% above the other H100
    leases' level, so no launch rule brings it closer (recorded 2026-11-27, stop 16: 8.9% under the rule)."""
    rows = [r for r in agreement() if r.campaign.startswith("h100x4_2026-11-27_fsdpissue2/fsdpissue_world4")]
    slow = [r for r in rows if "hidden=4096" in r.spec]
    assert len(slow) == 1 and all(d > 8.0 for d in slow[0].deviation_pct)
    assert any("(checks)" in line for line in markdown_lines())


def test_cli_refuses_bad_input_with_one_line_and_exit_2(tmp_path, capsys) -> None:
    """Review s16 #4: `python -m validation.profile_launches` took `--help` as a file and a bad file gave a
    traceback (exit 1), the line named twice."""
    from validation.profile_launches import main
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0 and "profile launches" in capsys.readouterr().out
    assert main([str(tmp_path / "missing.jsonl")]) == 2
    assert "file not found" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "llm_profile", "x": 1}\n')
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "has no 'hidden'" in err and err.count("line 1") == 1
