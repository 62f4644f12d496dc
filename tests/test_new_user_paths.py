"""What a new user meets first on the LLM and calibration paths (issues 10 and 14, audited from a fresh
clone): every bad input is one line naming the option or study field at fault, a study's defaults are
the CLI's, and the commands write their files even when the reader of their output stops early."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpunetsim.cli import main
from simulator.core.errors import InputError
from tests.conftest import with_options

ROOT = Path(__file__).resolve().parent.parent
SPEC = "hidden=1024,layers=8,heads=16,seq=1024"
TRAIN = ["train", "--topology", "dgx-a100", "--nodes", "1", "--model-spec", SPEC, "--global-batch", "8"]


def _one_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and "Traceback" not in cap.err
    return cap.err


@pytest.mark.parametrize("extra, text", [
    (["--tp", "0"], "--tp: must be a positive integer (got 0)"),
    (["--tp", "-2"], "--tp: must be a positive integer (got -2)"),
    (["--pp", "0"], "--pp: must be a positive integer (got 0)"),
    (["--tp", "3"], "--tp: tp x pp = 3 x 1 = 3 does not divide the 8 GPUs"),
    (["--tp", "4", "--pp", "4"], "--pp: tp x pp = 4 x 4 = 16 does not divide the 8 GPUs"),
    (["--seq", "0"], "--seq: must be a positive integer (got 0)"),
    # an impossible layout is named as such before the batch checks (it was "--global-batch must be a multiple of
    # --micro-batch x --dp (1 x 3) (got 8)", and only after fixing the batch the layout)
    (["--dp", "3"], "--dp: --tp x --pp x --dp = 1 x 1 x 3 = 3 GPUs, but the topology has 8"),
    (["--pp", "4", "--schedule", "interleaved", "--global-batch", "4"],
     "--global-batch: the interleaved schedule needs the number of micro-batches (2 = --global-batch / "
     "(--micro-batch x --dp)) to be a multiple of --pp (4)"),
])
def test_train_sizes_name_the_option_at_fault(capsys, extra, text):
    """``--tp 0`` used to be reported as ``--pp: ... (got 1)``: the option and value the user gave."""
    assert text in _one_error(capsys, with_options(TRAIN, extra))


def _study(tmp_path: Path, train: str) -> Path:
    f = tmp_path / "s.yaml"
    f.write_text(f"topology: dgx-a100\nnodes: 1\ntrain:\n  model: ['{SPEC}']\n{train}")
    return f


def test_study_interleaved_takes_the_cli_default_of_two_chunks(tmp_path, capsys):
    """A study's ``schedule: interleaved`` without ``virtual_stages`` ran one chunk per stage (a 1F1B
    timeline under the interleaved label); ``gpunetsim train`` takes 2."""
    from gpunetsim.study import evaluate, load_study
    (point,) = load_study(_study(tmp_path, "  pp: 2\n  global_batch: 16\n  schedule: interleaved\n")).points
    row = evaluate(point)
    assert main(TRAIN[:-1] + ["16", "--pp", "2", "--schedule", "interleaved", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert row["virtual_stages"] == cli["virtual_stages"] == 2
    assert row["iteration_s"] == pytest.approx(cli["iteration_s"], rel=1e-12)


@pytest.mark.parametrize("train, field", [("  tp: 3\n  global_batch: 8\n", "train.tp"),
                                          ("  global_batch: 7\n", "train.global_batch"),
                                          ("  global_batch: 8\n  sequence_parallel: true\n", "train.sequence_parallel")])
def test_study_train_failures_name_the_point_and_the_study_field(tmp_path, train, field):
    from gpunetsim.study import evaluate, load_study
    from gpunetsim.study_output import describe
    (point,) = load_study(_study(tmp_path, train)).points
    assert describe(point).startswith(f"#0 train {SPEC} tp=") and " 0 B" not in describe(point)
    with pytest.raises(InputError) as e:
        evaluate(point)
    assert e.value.field == field


def test_study_model_file_error_keeps_the_file_and_its_field(tmp_path):
    from gpunetsim.study import load_study
    (tmp_path / "m.yaml").write_text("hidden: 1024\nlayerz: 8\nheads: 16\nseq: 1024\n")
    f = tmp_path / "s.yaml"
    f.write_text("train:\n  model: [m.yaml]\n  global_batch: 8\n")
    with pytest.raises(InputError) as e:
        load_study(f)
    assert "train.model[0]: " in str(e.value) and "m.yaml: layerz: unknown field" in str(e.value)


def test_study_model_files_are_found_from_the_study_folder(tmp_path, monkeypatch):
    """Relative paths of a study are taken from its folder: ``train.model`` and ``search.model`` were
    taken from the working directory, so a sweep run from elsewhere did not find its model file."""
    from gpunetsim.study import evaluate, load_study
    (tmp_path / "m.yaml").write_text("hidden: 1024\nlayers: 8\nheads: 16\nseq: 1024\n")
    f = tmp_path / "s.yaml"
    f.write_text("topology: dgx-a100\ntrain:\n  model: [m.yaml]\n  tp: 8\n  global_batch: 8\n"
                 "search:\n  model: [m.yaml]\n  gpus: [8]\n  global_batch: 8\n  micro_batches: [1]\n")
    monkeypatch.chdir(tmp_path.parent)
    rows = [evaluate(p) for p in load_study(f).points]
    assert [r["kind"] for r in rows] == ["train", "search"] and all(r["iteration_s"] > 0 for r in rows)


SEARCH = ["search", "--model-spec", SPEC, "--gpus", "8"]


@pytest.mark.parametrize("extra, text", [
    (["--global-batch", "0"], "--global-batch: must be a positive integer (got 0)"),
    (["--global-batch", "16", "--micro-batches", "3"], "--global-batch: no plan to try"),
])
def test_search_without_a_plan_to_try_is_an_error(capsys, extra, text):
    """Both used to print 'no plan fits in memory' and exit 0."""
    assert text in _one_error(capsys, SEARCH + extra)


def test_pass_profile_unknown_gpu_names_its_entry(tmp_path, capsys):
    entry = {"gpu": "z100", "hidden": 1024, "heads": 16, "seq": 1024, "ffn": 4096, "vocab": 51200, "tp": 1,
             "micro_batch": 1, "dtype": "bf16", "recompute": "none", "sequence_parallel": False,
             "flash_attention": False, "block_pass_s": 0.001, "microbatch_s": 0.01}
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"format": "gpunetsim-calibration/1", "params": {}, "pass_profile": [entry]}))
    assert "c.json: pass_profile[0].gpu: unknown GPU" in _one_error(capsys, TRAIN + ["--calibration", str(f)])


HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong"
          "     time   algbw   busbw #wrong\n")


@pytest.mark.parametrize("content, text", [("", "the file is empty"), ("\n  \n", "the file is empty"),
                                           (HEADER, "a result table header but no result rows")])
def test_measurement_files_without_points_say_why(tmp_path, capsys, content, text):
    f = tmp_path / "all_reduce_perf.txt"
    f.write_text(content)
    err = _one_error(capsys, ["calibrate", "--measurements", str(f), "--topology", "dgx-h100", "--gpus", "2",
                              "--out", str(tmp_path / "c.json")])
    assert "all_reduce_perf.txt: " + text in err


def test_a_reader_that_stops_early_does_not_cost_the_files(tmp_path):
    """``gpunetsim sweep s.yaml | head``: the table's first print used to end the command (exit 0)
    before report.html and results.csv were written."""
    study = _study(tmp_path, "  tp: [1, 2, 4, 8]\n  global_batch: 8\n")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-m", "gpunetsim", "sweep", str(study), "--workers", "1",
                          "--no-progress", "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, cwd=tmp_path)
    p.stdout.close()                        # the reader is gone before the first line
    err = p.stderr.read().decode()
    assert p.wait() == 0, err
    assert {"report.html", "results.csv", "results.jsonl"} <= {f.name for f in out.iterdir()}
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_gpus_says_which_measured_points_it_leaves_out(tmp_path, capsys):
    """``calibrate --measurements world2 world4 --gpus 4`` fitted the world-4 points alone without a word."""
    data = ROOT / "validation" / "data" / "h200x4_2026-11-26b"
    argv = ["calibrate", "--measurements", str(data / "coll_world2.jsonl"), str(data / "coll_world4.jsonl"),
            "--topology", "hgx-h200", "--gpus", "4", "--out", str(tmp_path / "c.json")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "keeps the points measured on 4 ranks" in err and "on world sizes 2 are left out" in err


@pytest.mark.parametrize("text", ["hidden: 1024\nlayers: 8\nheads: 16\nseq: 1024\nhidden: 2048\n",
                                  "train:\n  model: [llama-3-8b]\n  tp: 2\n  tp: 4\n"])
def test_a_yaml_key_given_twice_is_an_error(tmp_path, capsys, text):
    """YAML keeps the last of two equal keys without a word: a model file's second ``hidden`` or a study's
    second ``tp`` changed the prediction silently."""
    f = tmp_path / "f.yaml"
    f.write_text(text)
    argv = TRAIN[:5] + ["--model", str(f), "--global-batch", "8"] if "hidden" in text else ["sweep", str(f)]
    err = _one_error(capsys, argv)
    assert "f.yaml: " in err and "given twice (lines " in err


def test_yaml_merge_keys_may_still_be_overridden():
    from simulator.core.inputs import parse_yaml
    data = parse_yaml("base: &b {hidden: 1024, layers: 4}\nm:\n  <<: *b\n  hidden: 2048\n", "m.yaml")
    assert data["m"] == {"hidden": 2048, "layers": 4}


def test_a_json_key_given_twice_is_an_error(tmp_path, capsys):
    f = tmp_path / "cal.json"
    f.write_text('{"format": "gpunetsim-calibration/1", "params": {"call_overhead_s": 1e-5, "call_overhead_s": 2e-5}}')
    err = _one_error(capsys, ["collective", "--topology", "dgx-h100", "--gpus", "2", "--calibration", str(f)])
    assert "cal.json: params.call_overhead_s: given twice" in err


def test_a_jsonl_key_given_twice_is_an_error_naming_its_line():
    """review_s17c #16: a measurement line with a key twice kept the last value silently (JSONL skipped the check)."""
    from simulator.core.errors import InputError
    from simulator.core.inputs import jsonl_records
    text = '{"kind": "coll", "time_s": 1e-5}\n{"kind": "coll", "time_s": 1e-5, "time_s": 2e-5}\n'
    with pytest.raises(InputError) as e:
        list(jsonl_records(text, "m.jsonl"))
    assert str(e.value).startswith("m.jsonl: line 2, time_s: given twice")


@pytest.mark.parametrize("argv, option", [
    (TRAIN + ["--gpu", "zz"], "--gpu"),
    (["ddp", "--topology", "dgx-a100", "--nodes", "1", "--workload", "resnet50", "--gpu", "zz"], "--gpu"),
    (TRAIN[:3] + ["--nodes", "0"] + TRAIN[5:], "--nodes"),
    (["collective", "--topology", "dgx-a100", "--nodes", "0"], "--nodes"),
    (["collective", "--topology", "zz", "--nodes", "1"], "--topology"),
])
def test_command_line_errors_name_the_option_typed(capsys, argv, option):
    """A value given on the command line is named as the option the user typed (it read 'gpu: unknown GPU',
    'nodes: --nodes must be at least 1')."""
    err = _one_error(capsys, argv)
    assert err.startswith(f"gpunetsim: error: {option}: "), err
    assert err.count(option) == 1, err


# ---- stop 18 audit (ux18) -------------------------------------------------------------------------

def _trace_events(tmp_path: Path, argv: list[str]) -> list[dict]:
    path = tmp_path / "t.json"
    assert main(argv + ["--trace", str(path)]) == 0
    return [e for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]


def test_trace_bytes_are_one_ranks_not_summed_over_groups(tmp_path, capsys):
    """A trace event's ``bytes`` was the sum over every group running the call at once: HYBRID_SHARD's
    all-gather of one block said 2x the block's parameters on 2 servers (one shard group each) and a DP
    all-reduce 2x a rank's gradients with TP 2. Now it is one rank's call, and ``groups`` counts the groups."""
    from simulator.training.llm.memory import GRAD_BYTES, PARAM_BYTES
    from simulator.training.llm.model import resolve_model
    block = resolve_model(None, SPEC).layer_params()
    base = ["train", "--topology", "dgx-a100", "--nodes", "2", "--model-spec", SPEC, "--global-batch", "16"]
    ev = _trace_events(tmp_path, base + ["--fsdp", "hybrid"])           # shard groups of 8 GPUs, 2 replicas
    gather = next(e for e in ev if e["name"] == "all-gather block 0 F0")
    replicas = next(e for e in ev if e["name"].startswith("all-reduce replicas block 0"))
    assert gather["args"] == {"bytes": block * PARAM_BYTES, "groups": 2}
    assert replicas["args"] == {"bytes": block * PARAM_BYTES // 8, "groups": 8}
    ev = _trace_events(tmp_path, base + ["--tp", "2"])
    total = resolve_model(None, SPEC).total_params()
    grads = next(e for e in ev if e["name"] == "all-reduce grads")
    assert grads["args"] == {"bytes": total // 2 * GRAD_BYTES, "groups": 2}
    send = next(e for e in _trace_events(tmp_path, base + ["--tp", "2", "--pp", "2"]) if e["cat"] == "pp")
    assert send["args"] == {"bytes": 1024 * 1024 * 2 // 2}      # seq x hidden x bf16 / TP, an integer


GQA = "hidden=1024,layers=8,heads=16,seq=1024,kv_heads=2"


def test_tp_must_divide_the_kv_heads(capsys):
    """2 KV heads over TP 4 ran (half a head per rank); Megatron refuses it (divide(num_query_groups, tp)).
    ``train`` says so naming --tp; ``search`` never proposes such a plan."""
    argv = ["train", "--topology", "dgx-a100", "--nodes", "1", "--model-spec", GQA, "--global-batch", "8"]
    assert "--tp: must divide the number of key/value heads (2)" in _one_error(capsys, argv + ["--tp", "4"])
    assert main(["search", "--model-spec", GQA, "--gpus", "8", "--global-batch", "16", "--json"]) == 0
    plans = json.loads(capsys.readouterr().out)["plans"]
    assert plans and all(p["tp"] <= 2 for p in plans)


def _nccl_log(tmp_path: Path, ranks: int = 2) -> Path:
    """A ``ranks``-rank all_reduce_perf log (nccl-tests' layout, made-up times)."""
    rows = "\n".join(f"{s:>12} {s // 4:>13}     float     sum      -1 {20 + s / 2e5:>8.2f}    0.00    0.00      0 "
                     f"{20 + s / 2e5:>8.2f}    0.00    0.00      0" for s in (1 << 20, 1 << 22, 1 << 24, 1 << 26))
    f = tmp_path / "all_reduce_perf.txt"
    f.write_text("".join(f"#  Rank {r:2d} Group  0 Pid {r + 1} on node-{r // 8} device {r % 8:2d} [0x1a] NVIDIA H200\n"
                         for r in range(ranks)) +
                 "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
                 "   busbw #wrong\n" + rows + "\n# Out of bounds values : 0 OK\n")
    return f


def test_calibrate_names_variants_that_match_nothing(tmp_path, capsys):
    """``--variants foo`` said 'no measured points left after filtering' under --measurements."""
    argv = ["calibrate", "--measurements", str(_nccl_log(tmp_path)), "--topology", "hgx-h200", "--gpus", "2",
            "--out", str(tmp_path / "c.json"), "--variants", "foo"]
    assert "--variants: no measured point has these variants (the files have: default) (got 'foo')" in \
        _one_error(capsys, argv)


@pytest.mark.parametrize("cmd", ["calibrate", "compare"])
@pytest.mark.parametrize("extra, flag", [(["--gpus", "0"], "--gpus"),                  # read as "no filter", exit 0
                                         (["--nodes", "-3"], "--nodes"),               # ignored, exit 0
                                         (["--nodes", "2"], "--nodes")])               # without --topology: ignored
def test_calibrate_and_compare_refuse_counts_they_would_ignore(tmp_path, capsys, cmd, extra, flag):
    out = ["--out", str(tmp_path / "c.json")] if cmd == "calibrate" else ["--html", ""]
    data = Path(__file__).resolve().parents[1] / "validation/data/h200x4_2026-11-26b/coll_world2.jsonl"
    err = _one_error(capsys, [cmd, "--measurements", str(data), *out, *extra])
    assert err.startswith(f"gpunetsim: error: {flag}:")


def test_calibrate_checks_profiles_it_does_not_use(tmp_path, capsys):
    """``--profiles missing.json`` with collectives only was ignored without a word (exit 0)."""
    argv = ["calibrate", "--measurements", str(_nccl_log(tmp_path)), "--topology", "hgx-h200", "--gpus", "2",
            "--out", str(tmp_path / "c.json"), "--profiles"]
    assert "missing.json: file not found" in _one_error(capsys, argv + [str(tmp_path / "missing.json")])
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "m", "forward_s": 1e-3, "backward_s": 2e-3, "optimizer_s": 1e-3,
                                   "params": [{"name": "w", "bytes": 1024, "grad_ready_s": 1e-3}]}))
    assert main(argv + [str(profile)]) == 0
    assert "--profiles: no DDP measurements among --measurements" in capsys.readouterr().err


def test_study_takes_seq_and_fsdp_shard_as_the_cli_does(tmp_path, capsys):
    """``train.fsdp_shard`` and ``train.seq`` were unknown fields, though ``gpunetsim train`` has
    ``--fsdp-shard`` and ``--seq``: a study row now equals the CLI's figures."""
    from gpunetsim.study import evaluate, load_study
    f = tmp_path / "s.yaml"
    f.write_text(f"topology: dgx-a100\nnodes: 2\ntrain:\n  model: ['{SPEC}']\n  global_batch: 16\n"
                 "  fsdp: hybrid\n  fsdp_shard: [4, 8]\n  seq: 512\n")
    rows = [evaluate(p) for p in load_study(f).points]
    assert [r["fsdp_shard"] for r in rows] == [4, 8]
    for r in rows:
        argv = ["train", "--topology", "dgx-a100", "--nodes", "2", "--model-spec", SPEC, "--global-batch", "16",
                "--fsdp", "hybrid", "--fsdp-shard", str(r["fsdp_shard"]), "--seq", "512", "--json"]
        assert main(argv) == 0
        cli = json.loads(capsys.readouterr().out)
        assert r["iteration_s"] == pytest.approx(cli["iteration_s"], rel=1e-12)
        assert r["memory_total_bytes"] == cli["memory_bytes"]["total"]
    assert rows[0]["iteration_s"] != rows[1]["iteration_s"]


@pytest.mark.parametrize("train, text", [
    ("  order: dp-tp\n", "train.order: expected one of tp-dp-pp"),       # was a failed point per grid point
    (f"  model: ['{SPEC},foo=1']\n", "train.model[0]: foo: unknown field"),   # the spec's field was not named
])
def test_study_values_no_point_can_take_stop_the_sweep(tmp_path, capsys, train, text):
    f = tmp_path / "s.yaml"
    body = train if "model" in train else f"  model: ['{SPEC}']\n" + train
    f.write_text(f"topology: dgx-a100\nnodes: 1\ntrain:\n{body}  global_batch: 8\n")
    err = _one_error(capsys, ["sweep", str(f), "--workers", "1", "--no-progress", "--out", str(tmp_path / "o")])
    assert text in err


def test_study_errors_name_study_fields_not_options(tmp_path, capsys):
    """A failed point said ``train.virtual_stages: --virtual-stages needs --schedule interleaved``; a study's
    ``gpu`` error said ``gpu: gpu: unknown GPU``."""
    f = tmp_path / "s.yaml"
    f.write_text(f"topology: dgx-a100\nnodes: 1\ntrain:\n  model: ['{SPEC}']\n  global_batch: 8\n"
                 "  virtual_stages: 3\n")
    assert main(["sweep", str(f), "--workers", "1", "--no-progress", "--out", str(tmp_path / "o")]) == 1
    assert "train.virtual_stages: needs schedule interleaved (got 3)" in capsys.readouterr().out
    f.write_text(f"topology: dgx-a100\nnodes: 1\ngpu: h900\ntrain:\n  model: ['{SPEC}']\n  global_batch: 8\n")
    err = _one_error(capsys, ["sweep", str(f), "--workers", "1", "--no-progress", "--out", str(tmp_path / "o")])
    assert ": gpu: unknown GPU" in err and "gpu: gpu:" not in err


def test_cli_reference_lists_every_limit_with_its_default():
    """docs/cli.md said 8,192 GPUs while the code allowed 16,384, and left GPUNETSIM_MAX_PARAMS out."""
    from simulator.core import limits
    table = (ROOT / "docs" / "cli.md").read_text()
    rows = {line.split("|")[3].strip(" `"): line.split("|")[2].strip() for line in table.splitlines()
            if line.startswith("| ") and "GPUNETSIM_MAX_" in line}
    documented = {v.env: v.default for v in vars(limits).values() if isinstance(v, limits.Limit)}
    assert set(rows) == set(documented)
    for env, default in documented.items():
        text = rows[env].replace(",", "")
        assert text == (f"{default >> 20} MiB" if text.endswith("MiB") else str(default)), env


def test_search_warns_of_a_price_for_a_gpu_no_cluster_has(capsys):
    """``--price a100=2/h`` on H100 clusters left every cost '-' without a word."""
    argv = ["search", "--model-spec", SPEC, "--gpus", "8", "--global-batch", "16", "--top", "1"]
    assert main(argv + ["--price", "a100=2/h"]) == 0
    err = capsys.readouterr().err
    assert "--price: a100 names no GPU of the candidate clusters (H100-SXM); H100-SXM has no price" in err
    assert main(argv + ["--price", "h100=2/h"]) == 0
    assert "--price" not in capsys.readouterr().err


def test_train_header_says_datasheet_compute_for_a_collectives_only_calibration(capsys):
    """``--calibration h200-nvlink`` (collective parameters only) printed ``compute=h200-nvlink`` while the
    compute was the datasheet set (its interval line said 'datasheet compute')."""
    assert main(TRAIN + ["--calibration", "h200-nvlink"]) == 0
    assert "params=h200-nvlink, compute=datasheet" in capsys.readouterr().out.splitlines()[0]
    assert main(TRAIN + ["--calibration", "a100-megatron"]) == 0
    assert "params=a100-megatron, compute=a100-megatron" in capsys.readouterr().out.splitlines()[0]


def test_ddp_says_an_llm_model_file_is_for_train(tmp_path, capsys):
    """An LLM model file given to ``ddp --workload`` was read as a layer-form workload: 'gpu: missing
    required field'."""
    f = tmp_path / "m.yaml"
    f.write_text("hidden: 1024\nlayers: 8\nheads: 16\nseq: 1024\n")
    err = _one_error(capsys, ["ddp", "--workload", str(f)])
    assert "m.yaml: layers: this is an LLM model description" in err and "gpunetsim train --model" in err


def test_calibrate_asks_for_nodes_when_the_log_has_more_ranks_than_a_server(tmp_path, capsys):
    """A 16-rank log with ``--topology hgx-h200`` (no --nodes) failed with '--gpus: --gpus must be between 1
    and 8 (got 16)', naming an option the user never gave."""
    argv = ["calibrate", "--measurements", str(_nccl_log(tmp_path, 16)), "--topology", "hgx-h200",
            "--out", str(tmp_path / "c.json")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--nodes: 16 ranks were measured, more than one hgx-h200 server holds (8 GPUs): pass --nodes 2" in err
    assert main(argv + ["--nodes", "2"]) == 0


def test_a_topology_without_a_known_gpu_names_what_to_give(capsys):
    """``train`` on a PCIe box named the graph attribute ``gpu_model`` as the field; ``search`` told the user
    to 'pass --gpu', an option search does not have."""
    err = _one_error(capsys, ["train", "--topology", "pcie-gen4", "--gpus", "4", "--model-spec", SPEC,
                              "--global-batch", "8"])
    assert err.startswith("gpunetsim: error: --gpu: cannot tell which GPU this topology has")
    err = _one_error(capsys, ["search", "--topology", "pcie-gen4", "--gpus", "4", "--model-spec", SPEC,
                              "--global-batch", "8"])
    assert err.startswith("gpunetsim: error: --topology: pcie-gen4's GPUs") and "pass --gpu" not in err


def test_readme_commands_run_and_its_training_example_fits(tmp_path, monkeypatch, capsys):
    """README's gpt3-175b example printed 'total 113.78 GiB of 80 GiB: DOES NOT FIT' (no recomputation, no
    SP): the first LLM command a user copies. Every README command runs; those that read a file only the
    user has (a profile, an nccl-tests log) stop at 'file not found'."""
    import shlex
    text = (ROOT / "README.md").read_text()
    commands = [shlex.split(line)[1:] for block in text.split("```bash")[1:]
                for line in block.split("```")[0].splitlines() if line.startswith("gpunetsim ")]
    commands = [c for c in commands if c[0] != "plan"]       # the default study: CI runs it
    assert any(c[0] == "train" for c in commands)
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        rc = main(argv)
        cap = capsys.readouterr()
        if rc == 2 and "file not found" in cap.err:
            continue
        assert rc == 0, (argv, cap.err)
        if argv[0] == "train":
            assert ": fits" in cap.out, argv


def test_scenario_train_job_takes_fsdp_shard_and_names_its_fields(tmp_path, capsys):
    """A scenario's train job lacked ``fsdp_shard`` (gpunetsim train's --fsdp-shard); its errors named
    options in their message (``--fsdp-shard needs --fsdp hybrid``)."""
    f = tmp_path / "s.yaml"
    job = f"{{name: llm, train: '{SPEC}', global_batch: 16, nodes: 2, fsdp: hybrid, fsdp_shard: 4}}"
    f.write_text(f"topology: dgx-a100\nnodes: 2\niterations: 1\njobs:\n  - {job}\n")
    assert main(["cluster", str(f), "--json"]) == 0
    capsys.readouterr()
    f.write_text(f.read_text().replace("fsdp: hybrid, ", ""))
    err = _one_error(capsys, ["cluster", str(f)])
    assert "s.yaml: jobs[0].fsdp_shard: needs fsdp hybrid (got 4)" in err


def test_report_tells_the_new_train_axes_apart(tmp_path):
    """The report's series are named by the train axes that vary; ``seq`` and ``fsdp_shard`` were not among
    them, so points of different sequence lengths were drawn as one line."""
    from gpunetsim.report import train_figures
    from gpunetsim.study import evaluate, load_study
    f = tmp_path / "s.yaml"
    f.write_text(f"topology: dgx-a100\nnodes: [1, 2]\ntrain:\n  model: ['{SPEC}']\n  global_batch: 16\n"
                 "  seq: [512, 1024]\n")
    thr, _ = train_figures([evaluate(p) for p in load_study(f).points])
    assert sorted(t.name for t in thr.data) == ["seq 1024", "seq 512"]


# ---- stop 19 audit (ux19) -------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    TRAIN + ["--tp", "2", "--pp", "2"],
    ["ddp", "--topology", "dgx-h100", "--gpus", "4", "--workload", "gpt2"],
])
def test_trace_events_all_carry_ph_ts_pid_tid(tmp_path, capsys, argv):
    """Metadata events (process and thread names) had no ``ts``: the trace-event format lists it among every
    event's fields, and strict readers drop such events."""
    path = tmp_path / "t.json"
    assert main(argv + ["--trace", str(path)]) == 0
    events = json.loads(path.read_text())["traceEvents"]
    assert {e["ph"] for e in events} == {"M", "X"}
    for e in events:
        assert {"ph", "ts", "pid", "tid"} <= set(e), e
        assert e["ts"] >= 0 and e.get("dur", 0) >= 0, e


@pytest.mark.parametrize("time, shown", [("-40.00", "-40.00"), ("0.00", "0.00"), ("inf", "inf")])
def test_nccl_tests_row_with_an_impossible_time_is_an_error(tmp_path, capsys, time, shown):
    """A negative or zero time was counted as a 'not representable' point and an infinite one dropped without a
    word; a broken row is an error naming its line and value."""
    f = _nccl_log(tmp_path)
    lines = f.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if line.split()[:1] == [str(1 << 22)])
    cells = lines[row].split()
    cells[5] = time
    lines[row] = "  ".join(cells)
    f.write_text("\n".join(lines) + "\n")
    err = _one_error(capsys, ["calibrate", "--measurements", str(f), "--topology", "hgx-h200", "--gpus", "2",
                              "--out", str(tmp_path / "c.json")])
    assert f"all_reduce_perf.txt: line {row + 1}: time must be a positive" in err and f"(got '{shown}')" in err


def test_an_all_gather_table_without_its_command_line_says_what_to_keep(tmp_path, capsys):
    """all_gather and all_to_all print the same columns; the error said 'pass op=', which no command has."""
    rows = "\n".join(f"{s:>12} {s // 8:>13}     float    none      -1    30.00    0.00    0.00      0    30.00    0.00"
                     "    0.00      0" for s in (1 << 20, 1 << 21))
    f = tmp_path / "ag.txt"
    f.write_text("".join(f"#  Rank {r:2d} Group  0 Pid {r + 1} on node device {r:2d} [0x1a] NVIDIA H200\n"
                         for r in range(2)) +
                 "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
                 "   busbw #wrong\n" + rows + "\n# Out of bounds values : 0 OK\n")
    err = _one_error(capsys, ["compare", "--measurements", str(f), "--topology", "hgx-h200", "--gpus", "2"])
    assert "op=" not in err and "all_gather_perf" in err and "line 3" in err


@pytest.mark.parametrize("block, text", [
    ("train:\n  model: llama-3-8b\n  global_bach: 32\n",
     "train.global_bach: unknown field; required train.global_batch is missing (got 32)"),
    ("search:\n  modl: llama-3-8b\n  gpus: [8]\n  global_batch: 32\n",
     "search.modl: unknown field; required search.model is missing (got 'llama-3-8b')"),
    ("train:\n  global_batch: 32\n", "train.model: missing required field"),
])
def test_a_misspelt_required_study_field_is_named(tmp_path, capsys, block, text):
    """A typo in a required field was reported as that field missing, never naming what the user typed."""
    f = tmp_path / "s.yaml"
    f.write_text("topology: dgx-h100\n" + block)
    assert text in _one_error(capsys, ["sweep", str(f), "--out", str(tmp_path / "o")])


@pytest.mark.parametrize("field, value, text", [
    ("topology", "dgx-h10", "topology[0]: unknown topology: not a preset (dgx-a100"),
    ("model", "gpt-2", "model[0]: not a workload file nor a zoo model; zoo: resnet50"),
])
def test_a_misspelt_study_name_is_not_called_a_missing_file(tmp_path, capsys, field, value, text):
    """A study's misspelt preset or zoo name read '/the/study/folder/dgx-h10: file not found'; the CLI says what
    names it knows."""
    f = tmp_path / "s.yaml"
    values = {"topology": "dgx-h100", "model": "gpt2", field: value}
    f.write_text("".join(f"{k}: {v}\n" for k, v in values.items()))
    err = _one_error(capsys, ["sweep", str(f), "--out", str(tmp_path / "o")])
    assert text in err and f"(got '{value}')" in err and str(tmp_path) not in err.split("s.yaml: ", 1)[1]


def test_study_rows_of_model_specs_stay_apart_and_resume(tmp_path, capsys):
    """Two --model-spec strings in a study both came out as model 'custom' (one label, one report series), and
    ``--resume`` re-ran every train point: its rows lacked the point's ``train`` settings they are matched on."""
    from gpunetsim.study import load_study
    from gpunetsim.study_output import StudyOutput
    other = SPEC.replace("hidden=1024", "hidden=2048")
    f = tmp_path / "s.yaml"
    f.write_text(f"topology: dgx-a100\ntrain:\n  model: ['{SPEC}', '{other}']\n  global_batch: 16\n")
    out = tmp_path / "o"
    assert main(["sweep", str(f), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["model"] for r in rows] == [SPEC, other]
    assert f"model={other}" in capsys.readouterr().out
    assert StudyOutput(out).start(load_study(f).points, resume=True) == []


def test_a_model_spec_field_given_twice_is_an_error(capsys):
    """``heads=32,...,heads=64`` ran with the last value, without a word."""
    err = _one_error(capsys, ["train", "--topology", "dgx-a100", "--nodes", "1", "--global-batch", "8",
                              "--model-spec", SPEC + ",heads=8"])
    assert "--model-spec: heads: given twice (16 and 8) (got 'heads=8')" in err


@pytest.mark.parametrize("module", ["l2_probe", "llm_blind", "fsdp_host_carry", "llm_baseline"])
def test_documented_validation_scripts_answer_help_with_their_usage(module, capsys):
    """``python -m validation.l2_probe --help`` ended in a traceback; llm_blind and fsdp_host_carry ignored it and
    ran their whole computation; llm_baseline said '--help: file not found'."""
    import importlib
    try:       # l2_probe parses with argparse (review s19): its --help is argparse's, on stdout, status 0
        code, stream = importlib.import_module(f"validation.{module}").main(["--help"]), "err"
    except SystemExit as e:
        code, stream = e.code, "out"
    text = getattr(capsys.readouterr(), stream)
    assert code == (0 if stream == "out" else 2) and text.startswith(f"usage: python -m validation.{module}"), text


def test_l2_probe_names_a_folder_without_its_files(tmp_path, capsys):
    from validation.l2_probe import main as l2_main
    with pytest.raises(SystemExit) as e:
        l2_main([str(tmp_path)])
    assert e.value.code == 2 and "error: folder: no l2_" in capsys.readouterr().err


@pytest.mark.parametrize("key, meant", [("uncertainy", "uncertainty"), ("parms", "params"), ("llm_gpu", "llm_gpus")])
def test_a_misspelt_calibration_key_is_refused(tmp_path, capsys, key, meant):
    """A calibration file's ``uncertainy`` dropped its intervals without a word (top-level keys beside the ones
    read are free-form metadata); one typo away from a key that is read, it is an error naming both."""
    from simulator.collectives.params import SHIPPED_DIR
    data = json.loads((SHIPPED_DIR / "h200-nvlink.json").read_text())
    data[key] = data.pop(meant, {})
    f = tmp_path / "c.json"
    f.write_text(json.dumps(data))
    err = _one_error(capsys, ["collective", "--topology", "hgx-h200", "--gpus", "2", "--calibration", str(f)])
    assert f"c.json: {key}: unknown key; did you mean '{meant}'?" in err


@pytest.mark.parametrize("key", ["names", "formats", "notes", "params_fit", "ddp_before", "ddp_configurations",
                                 "median_err_pct_after", "cluster"])
def test_a_users_metadata_key_is_still_free(tmp_path, key):
    """Metadata the calibrate commands write (``ddp_*``, ``median_err_pct_*``) and a user's own keys load; ``names``
    and ``formats`` too (one letter from ``name`` / ``format``, whose absence only renames the set: review s19b)."""
    from simulator.collectives.params import load_calibration
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"format": "gpunetsim-calibration/1", "name": "mine", "params": {}, key: ["x"]}))
    assert load_calibration(f).name == "mine"


def test_shipped_calibrations_keep_only_free_keys_beside_the_read_ones():
    from simulator.collectives.params import SHIPPED_DIR, load_calibration
    for f in sorted(SHIPPED_DIR.glob("*.json")):
        load_calibration(f)


@pytest.mark.parametrize("topology, job, text", [
    ("dgx-h100", "{name: a, collective: all_reduce, size: -1 GiB, nodes: 2}",
     "s.yaml: jobs[0].size: must be non-negative and finite (got '-1 GiB')"),
    ("dgx-h100", "{name: d, workload: gpt-2, nodes: 2}",
     "s.yaml: jobs[0].workload: not a workload file nor a zoo model; zoo: resnet50"),
    ("dgx-h10", "{name: a, collective: all_reduce, size: 1 GiB, nodes: 2}",
     "s.yaml: topology: unknown topology: not a preset (dgx-a100"),
])
def test_scenario_errors_name_the_field_once_and_the_value_as_written(tmp_path, capsys, topology, job, text):
    """A scenario said 'jobs[0].size: size: size must be ...', 'jobs[0].workload: --workload: ...' and, for a
    misspelt preset, 'nor a .yaml/.json file (got '/the/scenario/folder/dgx-h10')'."""
    f = tmp_path / "s.yaml"
    f.write_text(f"topology: {topology}\nnodes: 4\niterations: 1\njobs:\n  - {job}\n")
    err = _one_error(capsys, ["cluster", str(f)])
    assert text in err and str(tmp_path) not in err.split("s.yaml: ", 1)[1], err


def test_study_list_field_error_names_the_field_once(tmp_path, capsys):
    """'nic_bw[0]: nic_bw: bandwidth must be ...': the inner field repeated the outer one."""
    f = tmp_path / "s.yaml"
    f.write_text("topology: dgx-h100\nmodel: gpt2\nnic_bw: '-5 Gb/s'\n")
    err = _one_error(capsys, ["sweep", str(f), "--out", str(tmp_path / "o")])
    assert "s.yaml: nic_bw[0]: must be positive and finite (got '-5 Gb/s')" in err


def test_a_slow_gpu_factor_below_1_is_refused(capsys):
    """``stragglers --slow-factor 0.5`` ran a 'slow' GPU twice as fast as the others without a word (ux19)."""
    err = _one_error(capsys, ["stragglers", "--ranks", "8", "--slow-gpus", "1", "--slow-factor", "0.5"])
    assert "--slow-factor" in err and "0.5" in err


# ------------------------------------------------------------------ review s24 (rv24)

@pytest.mark.parametrize("argv, text", [
    (["collective", "--nodes", "2", "--nodes", "4"], "argument --nodes: given twice (2, then 4); give it once"),
    (["collective", "--nodes=2", "--nod", "4"], "argument --nodes: given twice (2, then 4)"),
    (["collective", "--op", "all_reduce", "--op", "all_gather"], "argument --op: given twice (all_reduce, then"),
    (["collective", "-b", "1M", "-b", "2M"], "argument -b: given twice (1M, then 2M)"),
    (["collective", "--json", "--json"], "argument --json: given twice; give it once"),
    (["calibrate", "--measurements", "a", "--out", "a.json", "--out", "b.json"], "argument --out: given twice"),
    (["calibrate", "--measurements", "a", "b", "--measurements", "c"], "given twice (a b, then c)"),
    (["goodput", "--gpus", "8", "--checkpoint", "60", "--checkpoint-s", "30"],
     "argument --checkpoint-s: given twice (60, then 30 s); give it once (the first as --checkpoint)"),
])
def test_an_option_given_twice_is_refused(capsys, argv, text):
    """argparse kept the last of two values without a word: ``--nodes 2 --nodes 4`` ran 4 nodes, ``calibrate
    --out a.json --out b.json`` wrote b.json only."""
    assert text in _one_error(capsys, argv)


def test_the_once_actions_stand_on_argparse_public_api_only():
    """``_Once`` was mixed into argparse's private ``_StoreAction``, ``_StoreConstAction``, ``_StoreTrueAction`` and
    ``_StoreFalseAction`` (review s25): every class a registered single-valued action inherits from is public."""
    import argparse

    from gpunetsim.cli import ONCE_ACTIONS
    private = {c.__name__ for cls in ONCE_ACTIONS.values() for c in cls.__mro__[:cls.__mro__.index(argparse.Action)]
               if c.__module__ == "argparse"}
    assert private == set()


def test_each_once_action_stores_as_argparse_does():
    from gpunetsim.cli import OneLineParser
    p = OneLineParser(prog="t")
    p.add_argument("--n", type=int, default=3)
    p.add_argument("--c", action="store_const", const=7)
    p.add_argument("--t", action="store_true")
    p.add_argument("--f", action="store_false")
    p.add_argument("--o", nargs="?", const="x")
    g = p.add_argument_group("g").add_mutually_exclusive_group()
    g.add_argument("--g", type=float)
    assert vars(p.parse_args([])) == {"n": 3, "c": None, "t": False, "f": True, "o": None, "g": None}
    assert vars(p.parse_args(["--n", "5", "--c", "--t", "--f", "--o", "--g", "2"])) == {
        "n": 5, "c": 7, "t": True, "f": False, "o": "x", "g": 2.0}
    assert p.parse_args(["--n", "1"]).n == 1          # a second parse counts its own options


@pytest.mark.parametrize("argv, text", [
    (["--f", "--f"], "argument --f: given twice; give it once"),
    (["--g", "1", "--g", "2"], "argument --g: given twice (1.0, then 2.0); give it once"),
    (["--c", "--c"], "argument --c: given twice; give it once"),
])
def test_every_single_valued_action_refuses_a_second_use(capsys, argv, text):
    from gpunetsim.cli import OneLineParser
    p = OneLineParser(prog="t")
    p.add_argument("--f", action="store_false")
    p.add_argument("--c", action="store_const", const=1)
    p.add_argument_group("g").add_argument("--g", type=float)
    with pytest.raises(SystemExit):
        p.parse_args(argv)
    assert text in capsys.readouterr().err


def test_options_meant_to_repeat_still_repeat(capsys):
    assert main(["search", "--model-spec", SPEC, "--gpus", "8", "--global-batch", "16", "--top", "1",
                 "--topology", "dgx-h100", "--topology", "dgx-a100", "--json"]) == 0
    assert {p["topology"] for p in json.loads(capsys.readouterr().out)["plans"]} <= {"dgx-h100", "dgx-a100"}


@pytest.mark.parametrize("argv", [
    ["train", "--topology", "dgx-h100", "--tp", "8", "--global-batch", "8", "--model-spec",
     "hidden=4096,layers=100000000,heads=32,seq=2048"],
    ["search", "--gpus", "8", "--global-batch", "8", "--model-spec", "hidden=4096,layers=5000,heads=32,seq=2048"],
])
def test_a_model_with_absurdly_many_layers_is_refused(capsys, argv):
    """``--model-spec ...,layers=100000000`` built every block's kernels into its passes: 24 GB, then the OOM
    killer (exit 137)."""
    err = _one_error(capsys, argv)
    assert "--model-spec: layers: too many transformer layers in one model" in err and "GPUNETSIM_MAX_LAYERS" in err


def test_a_model_file_with_too_many_layers_names_the_file(capsys, tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text("hidden: 4096\nlayers: 5000\nheads: 32\nseq: 2048\n")
    err = _one_error(capsys, ["train", "--topology", "dgx-h100", "--tp", "8", "--global-batch", "8", "--model", str(f)])
    assert "m.yaml: layers: too many transformer layers in one model: 5,000 (the limit is 1,024" in err


@pytest.mark.parametrize("price", ["h100=2.5/h,h100=3/h", "h100=2.5/h,H100-SXM=3/h"])
def test_a_gpu_priced_twice_is_refused(capsys, price):
    """The second price was dropped (same key) or never read (the cluster took the first key naming its GPU)."""
    err = _one_error(capsys, ["search", "--model-spec", SPEC, "--gpus", "8", "--global-batch", "16", "--price", price])
    assert "--price: H100-SXM is priced twice" in err


@pytest.mark.parametrize("extra, text", [
    (["--gpus", "8,8"], "--gpus: 8 is given twice: give each value once (got '8,8')"),
    (["--gpus", "8", "--topology", "dgx-h100", "--topology", "dgx-h100"], "--topology: dgx-h100 is given twice"),
])
def test_a_candidate_cluster_given_twice_is_refused(capsys, extra, text):
    """Each of its plans was simulated and ranked twice (the top rows were the same plan)."""
    assert text in _one_error(capsys, ["search", "--model-spec", SPEC, "--global-batch", "16", *extra])


def test_search_checks_its_out_folder_before_searching(capsys, tmp_path):
    """``--out FILE`` failed after the whole search (its '# search: N plans simulated' line printed first)."""
    f = tmp_path / "taken"
    f.write_text("x")
    err = _one_error(capsys, ["search", "--model-spec", SPEC, "--gpus", "8", "--global-batch", "16", "--out", str(f)])
    assert "--out: exists and is not a folder" in err


def test_train_says_when_its_collectives_extrapolate_the_calibration(capsys):
    """docs/getting-started.md: 'the 4-GPU predictions say they extrapolate from 2 GPUs'. collective and ddp did;
    train timed FSDP's 4-GPU gathers with a 2-GPU calibration's intervals without a word."""
    argv = ["train", "--topology", "hgx-h200", "--model-spec", SPEC, "--fsdp", "full", "--global-batch", "8",
            "--calibration", "h200-nvlink-2gpu"]
    assert main(argv + ["--gpus", "4"]) == 0
    assert "(DP exposed: its calls extrapolate beyond the calibration's data (4 GPUs (fitted on 2)))" in \
        capsys.readouterr().out
    assert main(argv + ["--gpus", "4", "--json"]) == 0
    assert any(c.startswith("DP exposed: its calls extrapolate") for c in
               json.loads(capsys.readouterr().out)["comm_extrapolated"])
    assert main(argv + ["--gpus", "2"]) == 0
    assert "extrapolate beyond the calibration" not in capsys.readouterr().out


@pytest.mark.parametrize("topology, warned", [
    ("dgx-a100", "was measured on hgx-h200 (meta.topology.preset; H200 SXM, not A100 SXM): its points are timed on "
                 "dgx-a100"),
    ("hgx-h200", None),
])
def test_a_topology_other_than_the_measured_one_is_warned(tmp_path, capsys, topology, warned):
    """``compare --measurements <H200 runs> --topology dgx-a100`` printed 62-119% errors, and ``calibrate`` wrote a
    calibration recording dgx-a100, without a word that the file names another machine (review s26)."""
    data = str(ROOT / "validation/data/h200x4_2026-11-26b/coll_world2.jsonl")
    assert main(["compare", "--measurements", data, "--topology", topology, "--html", "", "--json"]) == 0
    err = capsys.readouterr().err
    if warned is None:
        assert "warning" not in err
    else:
        assert err == f"gpunetsim: warning: --topology {topology}: {data} {warned}\n"
