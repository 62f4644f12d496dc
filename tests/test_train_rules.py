"""What `gpunetsim train` accepts the way the frameworks it models do (ux18's open items): ZeRO-2/3 with
pipeline stages refused (DeepSpeed), interleaving with one virtual stage run as 1F1B (Megatron-LM), FSDP on
one-rank shard groups warned about (torch FSDP), the HYBRID_SHARD group shown, plain numbers from the API."""

import dataclasses
import json

import pytest

import gpunetsim
from gpunetsim.cli import main
from gpunetsim.search import make_cluster, search
from simulator.core.errors import InputError
from simulator.training.llm.config import Schedule, TrainConfig
from simulator.training.llm.model import TransformerSpec
from simulator.training.llm.search_space import SHARDINGS, SearchSpace, enumerate_plans

SPEC = "hidden=1024,layers=8,heads=16,seq=1024"
CLI = ["train", "--topology", "dgx-a100", "--nodes", "2", "--model-spec", SPEC, "--global-batch", "16"]
"""16 GPUs of two 8-GPU servers."""


def _plain(value, path="result"):
    """Every number in ``value`` (dicts, lists, tuples) is a plain Python bool, int or float."""
    if isinstance(value, dict):
        for k, v in value.items():
            _plain(v, f"{path}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _plain(v, f"{path}[{i}]")
    elif value is not None and not isinstance(value, str):
        assert type(value) in (bool, int, float), (path, type(value))


def test_api_train_gives_plain_python_numbers():
    r = gpunetsim.train(topology="dgx-a100", nodes=2, model_spec=SPEC, tp=2, pp=2, global_batch=16)
    fields = {f.name: getattr(r, f.name) for f in dataclasses.fields(r) if f.name not in ("config", "records")}
    _plain({**fields, "memory": vars(r.memory)})
    _plain(r.as_dict())
    assert "np." not in repr(r.iteration_s) + repr(r.part_bounds)


@pytest.mark.parametrize("zero", ["2", "3"])
def test_zero_2_and_3_with_pipeline_stages_are_refused(capsys, zero):
    """DeepSpeed's PipelineEngine asserts ZeRO stage < 2: one line naming --zero and --pp, exit 2."""
    assert main(CLI + ["--zero", zero, "--pp", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "--zero" in err and "--pp 2" in err and f"(got {zero})" in err


def test_zero_1_with_pipeline_stages_runs(capsys):
    assert main(CLI + ["--zero", "1", "--pp", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sharding"] == "zero-1"


def test_interleaved_with_one_virtual_stage_is_plain_1f1b(capsys):
    """Megatron-LM sets a virtual pipeline size of 1 to None (plain 1F1B): so does gpunetsim, saying so."""
    assert main(CLI + ["--pp", "2", "--schedule", "interleaved", "--virtual-stages", "1", "--json"]) == 0
    out = capsys.readouterr()
    asked = json.loads(out.out)
    assert asked["schedule"] == "1f1b" and asked["virtual_stages"] == 1
    assert "--virtual-stages 1" in out.err and "1F1B" in out.err
    assert main(CLI + ["--pp", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["iteration_s"] == asked["iteration_s"]


def test_one_virtual_stage_needs_no_interleaving_rule():
    """3 micro-batches on 2 stages: refused when interleaved (Megatron's rule), plain 1F1B with one chunk."""
    with pytest.raises(InputError):
        TrainConfig(1, 2, 1, 3, schedule="interleaved", virtual_stages=2)
    assert TrainConfig(1, 2, 1, 3, schedule="interleaved", virtual_stages=1).schedule is Schedule.ONE_F_ONE_B


@pytest.mark.parametrize("extra, why", [(["--tp", "8", "--pp", "2", "--fsdp", "full"], "at DP 1"),
                                        (["--fsdp", "hybrid", "--fsdp-shard", "1"], "--fsdp-shard 1"),
                                        (["--tp", "8", "--fsdp", "hybrid"], "one server")])
def test_fsdp_on_one_rank_shard_groups_warns(capsys, extra, why):
    """torch FSDP warns and runs NO_SHARD when its group has one rank: a warning line on stderr, the run goes on."""
    assert main(CLI + extra + ["--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["fits"] in (True, False)
    assert "warning" in out.err and "NO_SHARD" in out.err and why in out.err


def test_sharded_fsdp_does_not_warn(capsys):
    assert main(CLI + ["--fsdp", "full", "--json"]) == 0
    assert capsys.readouterr().err == ""


def test_header_shows_the_hybrid_shard_group(capsys):
    """TP 2 on 8-GPU servers: the default shard group is a server's 4 data-parallel peers, 2 replicas."""
    assert main(CLI + ["--tp", "2", "--fsdp", "hybrid"]) == 0
    assert "fsdp-hybrid (shard groups of 4, 2 replicas)" in capsys.readouterr().out
    assert main(CLI + ["--tp", "2", "--fsdp", "hybrid", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fsdp_shard"] == 4


def test_search_proposes_no_refused_or_unsharded_plan():
    tiny = TransformerSpec("tiny", hidden=1024, layers=8, heads=16, seq=1024)
    space = SearchSpace(micro_batches=(1,), shardings=SHARDINGS)
    plans = list(enumerate_plans(tiny, 16, 32, space))
    assert {c.sharding for c in plans} >= {"zero-2", "zero-3"}
    assert not [c for c in plans if c.zero >= 2 and c.pp > 1]
    assert not [c for c in plans if c.fsdp and c.dp == 1]
    out = search(tiny, [make_cluster("dgx-a100", 16)], 32, space=SearchSpace(
        micro_batches=(1,), schedules=(Schedule.ONE_F_ONE_B,), shardings=("fsdp-hybrid",)), top=50)
    assert out.plans and all(p.config.tp < 8 for p in out.plans)   # TP 8 leaves one-rank shard groups


def test_study_points_follow_the_same_rules(tmp_path):
    """A study's ZeRO-3 point with pipeline stages fails naming the study's fields; an interleaved point with
    one virtual stage runs, its row saying 1f1b."""
    from gpunetsim.study import evaluate, load_study
    f = tmp_path / "s.yaml"
    f.write_text(f"topology: dgx-a100\nnodes: 2\ntrain:\n  model: ['{SPEC}']\n  tp: 2\n  pp: 2\n"
                 "  global_batch: 16\n  schedule: interleaved\n  virtual_stages: 1\n  zero: [1, 3]\n")
    points = load_study(f).points
    row = evaluate(points[0])
    assert row["schedule"] == "1f1b" and row["virtual_stages"] == 1 and row["sharding"] == "zero-1"
    with pytest.raises(InputError) as e:
        evaluate(points[1])
    assert e.value.field == "train.zero" and "pp 2" in str(e.value) and "--" not in str(e.value)
