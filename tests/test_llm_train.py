"""One LLM iteration on a topology, and the `gpunetsim train` command."""

import json

import pytest
import topologies

from gpunetsim.cli import main
from simulator.core.errors import InputError
from simulator.training.gpus import get_gpu
from simulator.training.llm.config import TrainConfig
from simulator.training.llm.iteration import simulate_train
from simulator.training.llm.model import parse_model_spec
from topologies.routing import Router
from tests.conftest import with_options

SMALL = parse_model_spec("hidden=1024,layers=8,heads=16,seq=1024,vocab=32000")
A100 = get_gpu("a100")


@pytest.fixture(scope="module")
def two_nodes():
    return Router(topologies.build("dgx-a100", nodes=2))


def _sim(router, **kw):
    base = dict(tp=2, pp=2, dp=4, global_batch=32, micro_batch=2)
    base.update(kw)
    return simulate_train(router, SMALL, TrainConfig(**base), A100)


def test_breakdown_adds_up(two_nodes):
    r = _sim(two_nodes)
    parts = r.compute_s + r.tp_comm_s + r.pp_comm_s + r.pp_bubble_s + r.dp_comm_exposed_s + r.optimizer_s
    assert parts == pytest.approx(r.iteration_s)
    assert r.tp_comm_s > 0 and r.pp_bubble_s > 0 and 0 < r.mfu <= r.hfu <= 1
    assert _sim(two_nodes, recompute="full").hfu > _sim(two_nodes, recompute="full").mfu


@pytest.mark.parametrize("kw", [dict(zero=1), dict(zero=2, pp=1, dp=8), dict(zero=3, pp=1, dp=8), dict(fsdp="full"),
                                dict(fsdp="grad-op"),
                                dict(fsdp="hybrid"), dict(schedule="interleaved", virtual_stages=2),
                                dict(recompute="selective", sequence_parallel=True), dict(order="dp-tp-pp")])
def test_every_option_runs_and_adds_up(two_nodes, kw):
    r = _sim(two_nodes, **kw)
    parts = r.compute_s + r.tp_comm_s + r.pp_comm_s + r.pp_bubble_s + r.dp_comm_exposed_s + r.optimizer_s
    assert parts == pytest.approx(r.iteration_s) and r.iteration_s > 0


def test_a_host_bound_pass_hides_its_tp_collectives():
    """Kernels and NCCL collectives are queued without waiting: when issuing a pass takes the host
    longer than the GPU needs for its kernels and TP collectives, the pass takes the host time."""
    from simulator.training.llm.compute import ComputeParams
    from simulator.training.llm.layer import block_work
    one = Router(topologies.build("dgx-a100", gpus_per_node=2))
    config = TrainConfig(tp=2, pp=1, dp=1, global_batch=4, micro_batch=1)
    fast = simulate_train(one, SMALL, config, A100)
    ops = 1 + block_work(SMALL, config).host_ops(False)    # a block's forward and backward, in forwards
    assert ops == pytest.approx(1 + 18 / 12)                # 12 forward kernels, 18 backward (no fused attention)
    host = ComputeParams(host_block_s=(fast.compute_s + fast.tp_comm_s) / (4 * SMALL.layers * ops) * 3)
    slow = simulate_train(one, SMALL, config, A100, compute=host)
    issue = 4 * SMALL.layers * ops * host.host_block_s     # 4 micro-batches
    assert slow.compute_s + slow.tp_comm_s == pytest.approx(issue)
    assert slow.tp_comm_s == pytest.approx(fast.tp_comm_s)    # still run, behind the host


def test_full_sharding_pays_for_gathers(two_nodes):
    flat = dict(pp=1, dp=8)                     # ZeRO-3 without pipeline stages (DeepSpeed's rule)
    assert _sim(two_nodes, zero=3, **flat).dp_comm_exposed_s > 0
    assert _sim(two_nodes, zero=3, **flat).memory.total < _sim(two_nodes, zero=1, **flat).memory.total


def test_faster_nics_never_slow_data_parallel_down():
    def it(bw):
        G = topologies.build("dgx-a100", nodes=4, fabric=topologies.FabricSpec(nic_Bps=bw))
        return simulate_train(G, SMALL, TrainConfig(8, 1, 4, 16, 1), A100).iteration_s
    assert it(100e9) <= it(25e9) <= it(5e9)


def test_interleaving_shortens_the_bubble(two_nodes):
    plain = _sim(two_nodes, pp=4, dp=2, global_batch=32, micro_batch=1)
    inter = _sim(two_nodes, pp=4, dp=2, global_batch=32, micro_batch=1, schedule="interleaved", virtual_stages=2)
    assert inter.pp_bubble_s < plain.pp_bubble_s


def test_same_inputs_same_outputs(two_nodes):
    assert _sim(two_nodes).as_dict() == _sim(two_nodes).as_dict()


@pytest.mark.parametrize("kw, field", [(dict(dp=2), "--dp"), (dict(tp=3, dp=1, global_batch=6, micro_batch=1), "--tp"),
                                       (dict(global_batch=30), "--global-batch"), (dict(zero=3, fsdp="full"), "--fsdp")])
def test_bad_configurations(two_nodes, kw, field):
    with pytest.raises(InputError) as e:
        _sim(two_nodes, **kw)
    assert e.value.field == field


CLI = ["train", "--topology", "dgx-a100", "--nodes", "2", "--model-spec", "hidden=1024,layers=8,heads=16,seq=1024",
       "--tp", "8", "--pp", "2", "--global-batch", "8"]


def test_cli_json(capsys):
    assert main(CLI + ["--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for k in ("iteration_s", "compute_s", "tp_comm_s", "pp_bubble_s", "dp_comm_exposed_s", "mfu", "tokens_per_s", "fits"):
        assert k in d
    assert set(d["memory_bytes"]) == {"params", "grads", "optimizer", "activations", "total"}
    assert d["dp"] == 1


def test_cli_trace_has_every_stage(tmp_path, capsys):
    path = tmp_path / "t.json"
    assert main(CLI + ["--trace", str(path)]) == 0
    trace = json.loads(path.read_text())
    names = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "process_name"}
    threads = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    assert len(names) == 2 and {"compute", "tp", "pp"} <= threads


SHARDED_CLI = ["train", "--topology", "dgx-a100", "--nodes", "2", "--model-spec",
               "hidden=1024,layers=8,heads=16,seq=1024", "--tp", "2", "--pp", "2", "--dp", "4",
               "--global-batch", "16", "--micro-batch", "2"]
"""TP 2 innermost, then DP 4, then PP 2 (one stage per server)."""
FLAT = ["--pp", "1", "--dp", "8"]
"""ZeRO-2/3 run without pipeline stages (DeepSpeed's PipelineEngine refuses them with PP)."""


@pytest.mark.parametrize("sharding, dp_tracks", [
    (["--zero", "1"], {"dp"}), (["--zero", "2"] + FLAT, {"dp"}), (["--zero", "3"] + FLAT, {"dp", "dp gather"}),
    (["--fsdp", "full"], {"dp"}), (["--fsdp", "grad-op"], {"dp"}), (["--fsdp", "hybrid", "--fsdp-shard", "2"], {"dp", "dp replicas"})])
def test_cli_sharding_paths_give_json_and_every_stream(tmp_path, capsys, sharding, dp_tracks):
    """Each sharding path of the issue: ``--json`` has the named fields, and ``--trace`` has, for every
    stage, its compute and communication streams, one thread each (no two events of a thread overlap
    unless one holds the other, which Perfetto needs to draw a thread)."""
    path = tmp_path / "t.json"
    assert main(with_options(SHARDED_CLI, sharding) + ["--json", "--trace", str(path)]) == 0
    d = json.loads(capsys.readouterr().out)            # stdout is the JSON alone, --trace or not
    for k in ("iteration_s", "compute_s", "tp_comm_s", "pp_bubble_s", "dp_comm_exposed_s", "mfu", "tokens_per_s", "fits"):
        assert isinstance(d[k], (int, float)) and d[k] >= 0
    assert set(d["memory_bytes"]) == {"params", "grads", "optimizer", "activations", "total"}
    mem = d["memory_bytes"]     # whole bytes, shards rounded up (a JSON 1.5e9 reads as a float to scripts)
    assert all(type(v) is int for v in mem.values()), mem
    assert mem["total"] == sum(mem[k] for k in ("params", "grads", "optimizer", "activations"))
    assert d["dp"] * d["pp"] == 8 and d["dp_comm_exposed_s"] > 0
    events = json.loads(path.read_text())["traceEvents"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    spans: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for e in events:
        if e["ph"] == "X":
            spans.setdefault((e["pid"], threads[(e["pid"], e["tid"])]), []).append((e["ts"], e["ts"] + e["dur"]))
    for stage in range(d["pp"]):
        assert {"compute", "tp"} | ({"pp"} if d["pp"] > 1 else set()) | dp_tracks == {t for p, t in spans if p == stage}
    for track, iv in spans.items():
        iv.sort()
        for (a0, a1), (b0, b1) in zip(iv, iv[1:]):
            assert b0 >= a1 - 1e-3 or b1 <= a1 + 1e-3, (track, (a0, a1), (b0, b1))


@pytest.mark.parametrize("extra, text", [(["--tp", "3"], "--tp"), (["--model", "gpt3-175b"], "--model"),
                                         (["--dp", "3"], "--dp"), (["--dtype", "fp8"], "fp8")])
def test_cli_errors_are_one_line(capsys, extra, text):
    assert main(CLI + extra) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and text in err


def test_ddp_warns_when_the_model_cannot_fit(capsys):
    assert main(["ddp", "--topology", "dgx-a100", "--workload", "llama-7b"]) == 0
    assert "cannot fit" in capsys.readouterr().err
    assert main(["ddp", "--topology", "dgx-a100", "--workload", "gpt2"]) == 0
    assert "cannot fit" not in capsys.readouterr().err


@pytest.mark.parametrize("workload, fits", [("llama-7b", False), ("gpt2", True)])
def test_ddp_json_says_whether_the_model_fits(capsys, workload, fits):
    """A script sweeping DDP sizes reads ``fits`` from --json (the run exits 0 either way; review s19)."""
    assert main(["ddp", "--topology", "dgx-a100", "--workload", workload, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fits"] is fits


def test_train_that_does_not_fit_exits_0_with_fits_false(capsys):
    """``DOES NOT FIT`` is not an error (the plan is simulated as asked): exit 0, ``fits`` false in --json, and
    --help says so."""
    args = ["train", "--topology", "dgx-h100", "--nodes", "4", "--model", "llama-3-8b", "--tp", "2",
            "--global-batch", "64", "--flash-attention"]
    assert main(args) == 0
    assert "DOES NOT FIT" in capsys.readouterr().out
    assert main(args + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fits"] is False
    assert main(["train", "--help"]) == 0
    assert "exit status is 0 and --json has 'fits': false" in " ".join(capsys.readouterr().out.split())


def test_study_train_points(tmp_path):
    from gpunetsim.study import evaluate, load_study
    f = tmp_path / "s.yaml"
    f.write_text("topology: dgx-a100\nnodes: [1, 2]\ntrain:\n  model: ['hidden=1024,layers=8,heads=16,seq=1024']\n"
                 "  tp: 8\n  global_batch: 16\n  zero: [0, 1]\n")
    study = load_study(f)
    assert [p.kind for p in study.points] == ["train"] * 4
    rows = [evaluate(p) for p in study.points]
    assert [r["dp"] for r in rows] == [1, 2, 1, 2]
    assert rows[1]["tokens_per_s"] > rows[0]["tokens_per_s"] and all(r["fits"] for r in rows)
    assert rows[3]["memory_optimizer_bytes"] < rows[1]["memory_optimizer_bytes"]


def test_study_train_bad_model_names_the_field(tmp_path):
    from gpunetsim.study import load_study
    f = tmp_path / "s.yaml"
    f.write_text("train:\n  model: [gpt9]\n  global_batch: 8\n")
    with pytest.raises(InputError) as e:
        load_study(f)
    assert "train.model[0]" in str(e.value)


def test_study_report_draws_train_rows(tmp_path):
    from gpunetsim.report import TRAIN_TITLES, build_report
    from gpunetsim.study import evaluate, load_study
    f = tmp_path / "s.yaml"
    f.write_text("topology: dgx-a100\nnodes: [1, 2]\ntrain:\n  model: ['hidden=1024,layers=8,heads=16,seq=1024']\n"
                 "  tp: 8\n  global_batch: 16\n")
    html = build_report([evaluate(p) for p in load_study(f).points])
    assert all(t in html for t in TRAIN_TITLES.values()) and html.count('class="plotly-graph-div"') == 2


@pytest.mark.parametrize("tp,pp", [(8, 1), (2, 1), (1, 1)])
def test_no_dp_exposed_time_without_data_parallelism(tp, pp):
    """DP 1 has no gradient sync: its exposed part is exactly 0 in the JSON, not the float noise of the summed
    durations (it printed ~1e-17 s at TP 8, DP 1)."""
    router = Router(topologies.build("dgx-h100", gpus_per_node=tp * pp))
    r = simulate_train(router, SMALL, TrainConfig(tp=tp, pp=pp, dp=1, global_batch=8, micro_batch=1),
                       get_gpu("h100"))
    assert r.dp_comm_exposed_s == 0.0


@pytest.mark.parametrize("tied", [True, False])
def test_dp_exposed_at_dp_1_is_the_tied_embedding_all_reduce(tied):
    """review_s17c #23 (docs/training.md, DP exposed): with PP > 1 the first and last stages' all-reduce of the tied
    embedding's gradient counts as DP exposed, so at DP 1 the part is not zero; untied, it is."""
    from dataclasses import replace
    router = Router(topologies.build("dgx-h100", gpus_per_node=4))
    r = simulate_train(router, replace(SMALL, tied_embeddings=tied),
                       TrainConfig(tp=2, pp=2, dp=1, global_batch=8, micro_batch=1), get_gpu("h100"))
    assert (r.dp_comm_exposed_s > 0) == tied


def test_gradient_accumulation_streams_the_local_parameters_after_the_first_micro_batch():
    """grad_accumulation_bytes_per_param (PyTorch's AccumulateGrad, 0 by default: Megatron's fused accumulation):
    each of micro-batches 2..m adds local parameters x bytes over the memory bandwidth to one stage's iteration,
    nothing with one micro-batch; FSDP's passes are not charged (reduced unit by unit: not modelled)."""
    from dataclasses import replace

    from simulator.training.llm.compute import ComputeModel, ComputeParams
    from topologies.presets import server
    routers = {g: Router(server("dgx-a100", gpus=g)) for g in (1, 2)}
    base = ComputeParams(optimizer_bytes_per_param=0.0)
    adds = replace(base, grad_accumulation_bytes_per_param=6.0)

    def run(compute, **kw):
        config = TrainConfig(**{"tp": 1, "pp": 1, "dp": 1, "micro_batch": 1, **kw})
        return simulate_train(routers[config.gpus], SMALL, config, A100, compute=compute, record=False).iteration_s

    per_pass = ComputeModel(A100, "bf16", adds).accumulation_s(SMALL.total_params())
    assert per_pass > 0
    assert run(adds, global_batch=4) - run(base, global_batch=4) == pytest.approx(3 * per_pass)
    assert run(adds, global_batch=1) == run(base, global_batch=1)
    assert run(adds, global_batch=4, dp=2, fsdp="full") == run(base, global_batch=4, dp=2, fsdp="full")


def test_a_calibration_file_sets_the_gradient_accumulation(tmp_path, capsys):
    """`--calibration FILE` with `"llm": {"grad_accumulation_bytes_per_param": 6}` (PyTorch's AccumulateGrad in
    bf16) lengthens the compute of a run of several micro-batches; without it (the default, 0) it does not."""
    spec = ["train", "--topology", "dgx-a100", "--nodes", "1", "--model-spec",
            "hidden=1024,layers=8,heads=16,seq=1024,vocab=32000", "--tp", "2", "--pp", "2", "--dp", "2",
            "--global-batch", "16", "--micro-batch", "1", "--json"]
    path = tmp_path / "accumulate.json"
    path.write_text(json.dumps({"name": "accumulate", "params": {}, "llm": {"grad_accumulation_bytes_per_param": 6}}))
    computes = []
    for extra in ([], ["--calibration", str(path)]):
        assert main(spec + extra) == 0
        computes.append(json.loads(capsys.readouterr().out)["compute_s"])
    assert computes[1] > computes[0]


def test_study_ddp_rows_say_whether_the_model_fits(tmp_path):
    """A sweep's DDP rows carry ``fits`` as ``gpunetsim ddp --json`` does (review s19)."""
    import gpunetsim
    f = tmp_path / "s.yaml"
    f.write_text("name: fit\ntopology: dgx-a100\nnodes: [1]\nmodel: [llama-7b, gpt2]\n")
    rows = gpunetsim.run_study(str(f)).rows
    assert {r["model"]: r["fits"] for r in rows} == {"llama-7b": False, "gpt2": True}


def test_getting_started_calibrate_walkthrough_trains_a_plan_that_fits(capsys):
    """docs/getting-started.md's 'Calibrate on your measurements' ends with a gpunetsim train command a new user
    runs as is; it printed DOES NOT FIT (390 GiB of activations without flash attention; review s19). Memory does
    not depend on the calibration, so the command runs here without it."""
    import shlex
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[1] / "docs" / "getting-started.md").read_text()
    line = next(x for x in doc.splitlines() if x.startswith("gpunetsim train ") and "h200cal.json" in x)
    args = shlex.split(line)[1:]
    i = args.index("--calibration")
    del args[i:i + 2]
    assert main(args + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fits"] is True


def test_a_compute_key_that_is_not_a_number_says_so(tmp_path):
    """rv21: llm.host_block_s "fast" read "out of range [0, 1]"; a number out of range still does."""
    import json

    from simulator.core.errors import InputError
    from simulator.training.llm.compute import load_compute_params as load_compute
    for value, words in (("fast", "must be a number in [0, 1] (got 'fast')"), (-1, "out of range [0, 1] (got -1)")):
        path = tmp_path / "c.json"
        path.write_text(json.dumps({"format": "gpunetsim-calibration/1", "name": "c", "params": {},
                                    "llm": {"host_block_s": value}}))
        with pytest.raises(InputError) as e:
            load_compute(str(path))
        assert str(e.value) == f"{path}: llm.host_block_s: {words}"
