"""A new user's first hour (review rv27, session stop 27): the leftovers of the last review and what a walk
through README.md and docs/ from a fresh clone met. Each test failed before its fix."""

from __future__ import annotations

import pytest

from gpunetsim.cli import main
from tests.test_new_user_paths import _one_error


def _file_error(tmp_path, capsys, name: str, text: str, argv: list[str]) -> str:
    """The one-line error of ``gpunetsim ARGV FILE`` (``FILE`` in argv) with ``text`` written to file ``name``."""
    f = tmp_path / name
    f.write_text(text)
    return _one_error(capsys, [str(f) if a == "FILE" else a for a in argv])


# ------------------------------------------------------------------ an unknown study field lists the known ones
@pytest.mark.parametrize("block, text", [
    ("search:\n  model: llama-3-8b\n  gpus: 8\n  global_batch: 64\n  objectiv: cost\n",
     "search.objectiv: unknown field (known: model, gpus, global_batch, batch_per_gpu, tokens, max_tp, max_pp, "
     "micro_batches, schedules, virtual_stages, recompute, sharding, flash_attention, dtype) (got 'cost')"),
    ("collectives: {op: all_reduce, facto: 2}\n", "collectives.facto: unknown field (known: op, min_bytes, "
     "max_bytes, factor) (got 2)"),
    ("topolgy: dgx-a100\n", "topolgy: unknown field (known: name, description, model, "),
])
def test_an_unknown_study_field_lists_the_known_ones(tmp_path, capsys, block, text):
    """``search.objectiv`` said 'unknown field (got 'cost')' without the fields ``search:`` takes."""
    argv = ["sweep", "FILE", "--out", str(tmp_path / "o"), "--no-progress"]
    assert text in _file_error(tmp_path, capsys, "s.yaml", "topology: dgx-h100\n" + block, argv)


# ------------------------------------------------------------------ ffn 0 / kv_heads 0 are refused, not the default
SPEC = "hidden=1024,layers=8,heads=16,seq=1024"


@pytest.mark.parametrize("extra, text", [
    (",ffn=0", "--model-spec: ffn: must be a positive integer (leave it out for 4 x hidden) (got 0)"),
    (",kv_heads=0", "--model-spec: kv_heads: must be a positive integer (leave it out for heads) (got 0)"),
])
def test_a_zero_ffn_or_kv_heads_spec_is_refused(capsys, extra, text):
    """``ffn=0`` ran a 4 x hidden feed-forward layer, a meaning no help or doc gave."""
    err = _one_error(capsys, ["train", "--topology", "dgx-a100", "--model-spec", SPEC + extra, "--global-batch", "8"])
    assert text in err


def test_a_zero_ffn_model_file_is_refused(tmp_path, capsys):
    err = _file_error(tmp_path, capsys, "m.yaml", "hidden: 1024\nlayers: 8\nheads: 16\nseq: 1024\nkv_heads: 0\n",
                      ["train", "--topology", "dgx-a100", "--model", "FILE", "--global-batch", "8"])
    assert "m.yaml: kv_heads: must be a positive integer (leave it out for heads) (got 0)" in err


@pytest.mark.parametrize("field", ["ffn", "kv_heads"])
def test_the_python_spec_takes_none_as_the_default_and_refuses_zero(field):
    from simulator.core.errors import InputError
    from simulator.training.llm.model import TransformerSpec
    m = TransformerSpec("m", 1024, 8, 16, 1024)
    assert (m.ffn, m.kv_heads) == (4096, 16)
    with pytest.raises(InputError, match="must be a positive integer"):
        TransformerSpec("m", 1024, 8, 16, 1024, **{field: 0})


# ------------------------------------------------------------------ a failure time without a unit is refused
SCENARIO = """name: t
topology: dgx-h100
nodes: 2
jobs:
  - {name: a, collective: all_reduce, size: 1 GiB, algo: ring, nodes: 2%s}
"""


@pytest.mark.parametrize("job, top, text", [
    ("", "failures: {mtbf_gpu: 50000, checkpoint: 1 min}\n",
     "s.yaml: failures.mtbf_gpu: a time needs a unit: write e.g. '50000 us', '50000 s' or '50000 h' (ns, us, ms, "
     "s, min, h, d, w, y) (got 50000)"),
    ("", "failures: {mtbf_gpu: 50000 h, checkpoint: 60}\n", "s.yaml: failures.checkpoint: a time needs a unit"),
    ("", "failures: {mtbf_gpu: 50000 h, checkpoint: 1 min}\nrun: 30\n", "s.yaml: run: a time needs a unit"),
    (", start: 0.5", "", "s.yaml: jobs[0].start: a time needs a unit: write e.g. '0.5 us', '0.5 s' or '0.5 h'"),
    (", compute: 2", "", "s.yaml: jobs[0].compute: a time needs a unit: write e.g. '2 us', '2 s' or '2 h' (ns, us, "
                         "ms, s, min, h, d, w, y) (got 2)"),     # the number as written, not pydantic's 2.0
    ("", "degraded_links: [{link: h0.nic0 - leaf.g0.r0, fraction: 0.5, period: 20}]\n",
     "s.yaml: degraded_links[0].period: a time needs a unit: write e.g. '20 us', "),
])
def test_a_scenario_time_without_a_unit_is_refused(tmp_path, capsys, job, top, text):
    """``mtbf_gpu: 50000`` ran as 50000 seconds (13.9 hours) where the user meant hours."""
    assert text in _file_error(tmp_path, capsys, "s.yaml", SCENARIO % job + top, ["cluster", "FILE"])


@pytest.mark.parametrize("flags, text", [
    (["--mtbf-gpu", "50000"], "--mtbf-gpu: a time needs a unit: write e.g. '50000 us', '50000 s' or '50000 h'"),
    (["--mtbf-gpu", "50000 h", "--checkpoint", "60"], "--checkpoint: a time needs a unit"),
    (["--mtbf-gpu", "50000 h", "--checkpoint", "1 min", "--run", "30"], "--run: a time needs a unit"),
])
def test_a_goodput_time_without_a_unit_is_refused(capsys, flags, text):
    assert text in _one_error(capsys, ["goodput", "--gpus", "4096"] + flags)


def _goodput_json(capsys, flags: list[str]) -> dict:
    import json
    assert main(["goodput", "--gpus", "4096", "--mtbf-gpu", "50000 h", "--json"] + flags) == 0
    return json.loads(capsys.readouterr().out)


def test_the_seconds_flags_take_a_bare_number_as_seconds(capsys):
    """``--checkpoint-s 60 --restart-s 300`` (the docs' command) is what ``--checkpoint '1 min' --restart '5 min'``
    is."""
    assert (_goodput_json(capsys, ["--checkpoint-s", "60", "--restart-s", "300"])
            == _goodput_json(capsys, ["--checkpoint", "1 min", "--restart", "5 min"]))


def test_the_python_api_takes_numbers_as_seconds_and_text_with_a_unit():
    import gpunetsim
    from simulator.core.errors import InputError
    g = gpunetsim.goodput(4096, mtbf_gpu=50000 * 3600.0, checkpoint=60, restart=300)
    assert (g.mtbf_s, g.checkpoint_s, g.restart_s) == (50000 * 3600 / 4096, 60.0, 300.0)
    with pytest.raises(InputError, match="mtbf_gpu: a time needs a unit"):
        gpunetsim.goodput(4096, mtbf_gpu="50000", checkpoint=60)


# ------------------------------------------------------------------ a topology file's link needs its units
PAIR = "nodes: [{name: a}, {name: b}]\nlinks: [{a: a, b: b, kind: nvlink, bandwidth: %s, latency: %s}]\n"


@pytest.mark.parametrize("bandwidth, latency, text", [
    ("400", "0", "t.yaml: links[0].bandwidth: not a bandwidth: write a number and a unit such as '400 Gb/s' or "
                 "'900 GB/s' (got 400)"),      # was 'out of range [1000, 1e+16] bytes/s'
    ("100 GB/s", "0.5", "t.yaml: links[0].latency: a time needs a unit: write e.g. '0.5 us', '0.5 s' or '0.5 h'"),
])
def test_a_topology_link_without_units_is_refused(tmp_path, capsys, bandwidth, latency, text):
    """``latency: 0.5`` ran as half a second per hop (a 64 MiB all-reduce of a second)."""
    argv = ["collective", "--topology", "FILE", "-b", "64M", "-e", "64M"]
    assert text in _file_error(tmp_path, capsys, "t.yaml", PAIR % (bandwidth, latency), argv)


def test_a_topology_link_with_units_and_latency_0_runs(tmp_path):
    import topologies
    f = tmp_path / "t.yaml"
    f.write_text(PAIR % ("100 GB/s", "0"))
    assert [d["latency_s"] for _, _, d in topologies.build(str(f)).edges(data=True)] == [0.0]


# ------------------------------------------------------------------ gpunetsim --version
def test_version_prints_the_package_version(capsys):
    """``gpunetsim --version`` said 'unrecognized arguments: --version'."""
    import gpunetsim
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"gpunetsim {gpunetsim.__version__}\n"


# ------------------------------------------------------------------ --gpu with a workload file says it changes no time
WORKLOAD = """name: mlp-bs512
forward_s: 0.00068
backward_s: 0.00144
optimizer_s: 0.00125
batch_size: 512
params:
  - {name: 0.weight, bytes: 67108864, grad_ready_s: 0.00143}
  - {name: 0.bias,   bytes: 16384,    grad_ready_s: 0.00142}
"""


def test_gpu_with_a_workload_file_warns_that_it_changes_no_time(tmp_path, capsys):
    """``--gpu a100`` on a measured profile ran the file's own times without a word (the same iteration on any
    GPU)."""
    f = tmp_path / "w.yaml"
    f.write_text(WORKLOAD)
    argv = ["ddp", "--topology", "hgx-h200", "--gpus", "4", "--workload", str(f), "--json"]
    assert main(argv) == 0
    plain = capsys.readouterr()
    assert main(argv + ["--gpu", "a100"]) == 0
    cap = capsys.readouterr()
    assert cap.out == plain.out and plain.err == ""
    assert cap.err == ("gpunetsim: warning: gpu 'a100' does not change the times of the workload file w.yaml "
                       "(measured, or computed for the file's own gpu); it only sets the memory its replica must fit\n")


# ------------------------------------------------------------------ cluster --top-links 0 lists no links
def test_top_links_0_lists_no_links_instead_of_none(capsys):
    """``--top-links 0`` printed 'gpt2 none' under 'links saturated while shared', though gpt2's spine links were
    saturated 4% of the run (listed with the default 3)."""
    assert main(["cluster", "shared-spine", "--iterations", "1", "--top-links", "0"]) == 0
    out = capsys.readouterr().out
    assert "links saturated" not in out and " none" not in out and out.count("\n") == 4


def test_a_study_gpu_over_workload_files_only_warns(tmp_path, capsys):
    """A study's ``gpu: a100`` over workload files only ran their own times and labelled the rows a100."""
    w = tmp_path / "w.yaml"
    w.write_text(WORKLOAD)
    f = tmp_path / "s.yaml"
    f.write_text("name: s\nmodel: w.yaml\ntopology: hgx-h200\ngpu: a100\n")
    assert main(["sweep", str(f), "--no-progress", "--workers", "1", "--out", str(tmp_path / "o")]) == 0
    assert capsys.readouterr().err.split("\n")[0] == (f"gpunetsim: warning: {f}: gpu: 'a100' changes no time: every "
                                                      "model is a workload file, whose times are its own (gpu applies "
                                                      "to zoo models, train and search)")


# ------------------------------------------------------------------ a Hugging Face config.json says what to write
def test_a_hugging_face_config_says_which_spec_to_give(tmp_path, capsys):
    """A model's config.json said 'architectures: unknown field'; the spec it names runs llama-3-8b's iteration."""
    import json
    config = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
              "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
              "max_position_embeddings": 8192, "tie_word_embeddings": False}
    spec = "hidden=4096,layers=32,heads=32,kv_heads=8,ffn=14336,vocab=128256,seq=8192,tied_embeddings=false"
    err = _file_error(tmp_path, capsys, "config.json", json.dumps(config), ["train", "--model", "FILE",
                                                                            "--global-batch", "8"])
    assert f'config.json: a Hugging Face config, not a model file: give --model-spec "{spec}" (seq: ' in err
    runs = []
    for model in (["--model-spec", spec + ",gated_mlp=true,bias=false"], ["--model", "llama-3-8b"]):
        assert main(["train", *model, "--global-batch", "8", "--json"]) == 0
        runs.append(json.loads(capsys.readouterr().out)["iteration_s"])
    assert runs[0] == runs[1]


# ------------------------------------------------------------------ a file's word outside its choices: the CLI's words
@pytest.mark.parametrize("block, text", [
    ("fabric: rial\n", "s.yaml: fabric[0]: expected 'rail' or 'fat-tree' (got 'rial')"),
    ("train: {model: llama-3-8b, global_batch: 8, schedule: gpipe}\n",
     "s.yaml: train.schedule[0]: expected '1f1b' or 'interleaved' (got 'gpipe')"),
])
def test_a_study_word_outside_its_choices_names_them_in_the_projects_words(tmp_path, capsys, block, text):
    """It said pydantic's 'Input should be 'rail' or 'fat-tree'', the one message left in pydantic's words."""
    argv = ["sweep", "FILE", "--out", str(tmp_path / "o"), "--no-progress"]
    assert text in _file_error(tmp_path, capsys, "s.yaml", "topology: dgx-h100\n" + block, argv)
