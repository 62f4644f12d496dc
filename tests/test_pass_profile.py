"""The measured pass profile (simulator/training/llm/pass_profile.py) and its fit (validation/pass_profile.py)."""

import json
from dataclasses import replace

import pytest

from simulator.core.errors import InputError
from simulator.training.gpus import get_gpu
from simulator.training.llm.compute import ComputeModel, ComputeParams, load_compute_params
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.iteration import simulate_train
from simulator.training.llm.model import TransformerSpec
from simulator.training.llm.pass_profile import PassProfile, ProfileEntry, parse_profile, shape_key
from simulator.training.llm.plan_bound import iteration_lower_bound_s
from validation.llm_compare import LlmPredictor, LlmRun

A100 = get_gpu("a100")
MODEL = TransformerSpec("gpt-h1024-l12", hidden=1024, layers=12, heads=16, seq=1024, vocab=50257)


def config(tp=2, pp=2, dp=1, gb=8, mb=2, fsdp=None):
    return TrainConfig(tp, pp, dp, gb, mb, "1f1b", 1, "full", False, 0, fsdp, "fp16")


def entry(c, model=MODEL, block=1e-3, micro=5e-3):
    return ProfileEntry(*shape_key(A100.name, model, c), block_pass_s=block, microbatch_s=micro)


def predictor(profile=None):
    return LlmPredictor(compute=replace(load_compute_params("a100-megatron"), profile=profile))


def test_lookup_matches_only_the_same_shape_and_never_fsdp():
    c = config()
    prof = PassProfile((entry(c),))
    assert prof.lookup(A100.name, MODEL, replace(c, pp=4, dp=2, global_batch=32)) is not None   # PP, DP free
    assert prof.lookup(A100.name, MODEL, replace(c, micro_batch=4)) is None
    assert prof.lookup("H100-SXM-80GB", MODEL, c) is None
    assert prof.lookup(A100.name, MODEL, replace(c, fsdp="full", dp=2, global_batch=16)) is None


def test_a_profiled_plan_runs_its_passes_at_the_profiles_times():
    c = config(tp=1, pp=1, dp=1, gb=4, mb=2)                  # 2 micro-batches, no TP or PP traffic
    P = predictor()
    run = LlmRun("x", MODEL, c, 8)
    base = P.iteration_s(run)
    slow = predictor(PassProfile((entry(c, block=2e-3, micro=10e-3),)))
    fast = predictor(PassProfile((entry(c, block=1e-3, micro=10e-3),)))
    # 2 micro-batches x 12 blocks x 4 passes (full recomputation) x 1 ms more per pass
    assert slow.iteration_s(run) - fast.iteration_s(run) == pytest.approx(2 * 12 * 4 * 1e-3, rel=1e-6)
    assert fast.iteration_s(run) != pytest.approx(base)


def test_the_plan_bound_stays_below_the_simulation_with_a_profile():
    for c in (config(), config(tp=1, pp=4, dp=2, gb=16, mb=1), config(tp=4, pp=1, dp=2, gb=8, mb=2)):
        cp = replace(load_compute_params("a100-megatron"), profile=PassProfile((entry(c, block=2e-4, micro=1e-3),)))
        P = LlmPredictor(compute=cp)
        sim = P.iteration_s(LlmRun("x", MODEL, c, 8))
        assert iteration_lower_bound_s(MODEL, c, ComputeModel(A100, "fp16", cp)) <= sim * (1 + 1e-9)


def test_the_fit_recovers_a_known_profile():
    from validation.pass_profile import fit_profile
    truth = predictor(PassProfile((entry(config(), block=0.8e-3, micro=4e-3),)))   # the shape ignores layers
    runs = []
    for layers in (12, 16, 20, 24):
        m = replace(MODEL, name=f"gpt-h1024-l{layers}", layers=layers)
        for tp, pp, dp, gb in ((2, 1, 1, 8), (2, 2, 1, 8), (2, 1, 2, 16), (2, 2, 2, 32)):
            c = config(tp, pp, dp, gb, 2)
            runs.append(LlmRun("x", m, c, 8, truth.iteration_s(LlmRun("x", m, c, 8))))
    (fitted,), summary = fit_profile(runs, predictor())
    assert fitted.block_pass_s == pytest.approx(0.8e-3, rel=0.03)
    assert fitted.microbatch_s == pytest.approx(4e-3, rel=0.2)
    assert summary["shapes"] == 1


def test_the_shipped_a100_set_carries_a_profile_of_2_and_4_gpu_shapes():
    cp = load_compute_params("a100-megatron")
    assert cp.profile is not None and cp.profile.entries
    assert {e.tp for e in cp.profile.entries} <= {1, 2, 4}


@pytest.mark.parametrize("bad, field", [
    ({"pass_profile": {}}, "pass_profile"),
    ({"pass_profile": [{"gpu": "x"}]}, "pass_profile[0].hidden"),
    ({"pass_profile": [{"bogus": 1}]}, "pass_profile[0].bogus"),
])
def test_bad_profiles_name_the_field(tmp_path, bad, field):
    f = tmp_path / "cal.json"
    f.write_text(json.dumps({"format": "gpunetsim-calibration/1", "params": {}, **bad}))
    with pytest.raises(InputError) as e:
        load_compute_params(f)
    assert e.value.field == field and str(f) in str(e.value)


def test_bad_values_and_duplicates_are_refused():
    c = config()
    good = entry(c).as_dict()
    with pytest.raises(InputError, match="invalid value"):
        parse_profile([{**good, "block_pass_s": -1.0}], "f.json")
    with pytest.raises(InputError, match="invalid value"):
        parse_profile([{**good, "tp": 0}], "f.json")
    with pytest.raises(InputError, match="two entries"):
        parse_profile([good, good], "f.json")
    assert parse_profile([good], "f.json").entries[0] == entry(c)


def test_a_profile_is_not_a_compute_parameter():
    assert "profile" not in ComputeParams().values()


def test_train_says_when_its_passes_come_from_the_profile(capsys):
    from gpunetsim.cli import main
    args = ["train", "--model-spec", "hidden=1024,layers=12,heads=16,seq=1024,vocab=50257", "--topology", "dgx-a100",
            "--gpus", "8", "--pp", "2", "--dp", "2", "--global-batch", "16", "--recompute", "full", "--dtype", "fp16",
            "--calibration", "a100-megatron"]
    assert main(args + ["--tp", "2", "--micro-batch", "4"]) == 0
    assert "compute=a100-megatron (passes from its measured profile)" in capsys.readouterr().out
    assert main(args + ["--tp", "2", "--micro-batch", "2"]) == 0        # micro-batch 2 at TP 2 is profiled too
    assert "measured profile" in capsys.readouterr().out
    assert main(["train", "--model-spec", "hidden=1024,layers=12,heads=16,seq=1024,vocab=50257", "--topology",
                 "dgx-a100", "--gpus", "8", "--tp", "8", "--global-batch", "8", "--micro-batch", "2", "--recompute",
                 "full", "--dtype", "fp16", "--calibration", "a100-megatron"]) == 0
    assert "measured profile" not in capsys.readouterr().out        # TP 8: not in the profile
