"""``--nccl-version``: one parsed version (simulator.core.vocabulary.NcclVersion) that every NCCL version rule
reads, from the command line, the API, study files and the corpus's dataset headers alike."""

import json

import pytest

import gpunetsim
from gpunetsim.cli import main
from gpunetsim.study import load_study
from simulator.core.errors import InputError
from simulator.core.vocabulary import NCCL_CURRENT, NcclVersion, nccl_version, read_nccl_version
from validation.compare import Predictor, Topo
from validation.parsers import CollMeasurement
from simulator.collectives.params import Parameters, load_calibration


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if not line.startswith("#")]


def picks(capsys, nodes: int, *versions: str) -> dict[str, str]:
    """The algorithm ``auto`` runs a 1 GiB all_reduce with on ``nodes`` DGX H100, per ``--nccl-version``."""
    out = {}
    for v in versions:
        _, text, _ = run(capsys, "collective", "--topology", "dgx-h100", "--nodes", str(nodes), "-b", "1G", "-e", "1G",
                         "--engine", "closed", "--nccl-version", v)
        out[v] = rows(text)[0][8]
    return out


# ----------------------------------------------------------------------------- the type
@pytest.mark.parametrize("text, version", [("2.20.3", (2, 20, 3)), ("2.22", (2, 22, 0)), (" 2.28.9 ", (2, 28, 9)),
                                           ("2.8", (2, 8, 0)), ((2, 19), (2, 19, 0))])
def test_parses_major_minor_patch(text, version):
    assert nccl_version(text) == version


def test_compares_as_a_tuple_with_the_rules_major_minor():
    assert NcclVersion(2, 20, 3) < (2, 22) and not NcclVersion(2, 19, 3) < (2, 19) and NcclVersion(2, 18, 5) < (2, 19)
    assert str(NcclVersion(2, 20, 3)) == "2.20.3" and str(NCCL_CURRENT) == "2.28"


def test_a_header_is_read_leniently():
    assert read_nccl_version("2.20.3 (likely, not stated)") == (2, 20, 3)
    assert read_nccl_version("2.19.x (inferred)") == (2, 19, 0)
    assert read_nccl_version("unknown") is None and read_nccl_version(None) is None


@pytest.mark.parametrize("value, words", [("2.7", "older"), ("2.7.8", "older"), ("3.0", "other major"), ("1.9", "older"),
                                          ("x", "MAJOR.MINOR"), ("2", "MAJOR.MINOR"), ("2.20.3.1", "MAJOR.MINOR"),
                                          ("", "MAJOR.MINOR"), (2.2, "as a string")])
def test_bad_versions_are_refused_naming_the_field(value, words):
    with pytest.raises(InputError) as e:
        nccl_version(value, "--nccl-version")
    assert e.value.field == "--nccl-version" and words in str(e.value)


@pytest.mark.parametrize("command", [
    ("collective",), ("ddp", "--workload", "resnet50"), ("train", "--model", "llama-3-8b", "--global-batch", "8"),
    ("search", "--model", "llama-3-8b", "--gpus", "8", "--global-batch", "8")])
@pytest.mark.parametrize("value", ["2.7", "3.1", "two"])
def test_every_command_refuses_a_bad_version_in_one_line(capsys, command, value):
    code, out, err = run(capsys, *command, "--nccl-version", value)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--nccl-version" in err and repr(value) in err


# ----------------------------------------------------------------------------- each rule reaches the CLI
def test_nvls_before_2_17_is_refused_and_auto_does_not_pick_it(capsys):
    code, _, err = run(capsys, "collective", "--topology", "dgx-h100", "--algo", "nvls", "--nccl-version", "2.16")
    assert code == 2 and "nvls" in err and "2.17" in err and "2.16" in err
    assert picks(capsys, 1, "2.16", "2.17") == {"2.16": "ring", "2.17": "nvls"}


def test_nvls_tree_before_2_18_is_refused_and_auto_does_not_pick_it(capsys):
    code, _, err = run(capsys, "collective", "--topology", "dgx-h100", "--nodes", "2", "--algo", "nvls_tree",
                       "--nccl-version", "2.17.1")
    assert code == 2 and "2.18" in err
    assert picks(capsys, 2, "2.17", "2.18") == {"2.17": "ring", "2.18": "nvls_tree"}


def test_nvls_across_servers_with_sharp_needs_2_18():
    with pytest.raises(InputError, match="2.18"):
        gpunetsim.collective(topology="dgx-h100", nodes=2, sharp=True, algo="nvls", nccl_version="2.17")
    r = gpunetsim.collective(topology="dgx-h100", nodes=2, sharp=True, algo="nvls", nccl_version="2.18")
    assert r.algo == "nvls"


def test_pat_before_2_23_is_refused(capsys):
    argv = ("collective", "--topology", "dgx-h100", "--nodes", "4", "--gpus", "1", "--op", "all_gather",
            "--algo", "pat", "-b", "1M", "-e", "1M")
    code, _, err = run(capsys, *argv, "--nccl-version", "2.22.3")
    assert code == 2 and "pat" in err and "2.23" in err
    code, out, _ = run(capsys, *argv, "--nccl-version", "2.23.4")
    assert code == 0 and rows(out)[0][8] == "pat"


def test_the_tuner_table_before_2_28_prices_nvls_tree_as_older_ncclS_did(capsys):
    """On 4 DGX H100 at 1 GiB NCCL 2.28's tuner picks NVLS-Tree, 2.27's (no nvlsEfficiency) the ring."""
    assert picks(capsys, 4, "2.27.7", "2.28") == {"2.27.7": "ring", "2.28": "nvls_tree"}


def test_gdr_flush_before_2_19_costs_its_calibrated_overhead(capsys):
    """Hopper flushes GPUDirect receives before NCCL 2.19 (FORCE_FLUSH_OFF_FROM): the EFA fit's per-call cost."""
    times = {}
    for v in ("2.18.5", "2.19"):
        _, out, _ = run(capsys, "collective", "--topology", "dgx-h100", "--nodes", "2", "-b", "1M", "-e", "1M",
                        "--algo", "ring", "--proto", "simple", "--engine", "closed", "--calibration", "corpus-efa",
                        "--nccl-version", v, "--json")
        times[v] = json.loads(out)["time_s"]
    assert times["2.18.5"] - times["2.19"] == pytest.approx(load_calibration("corpus-efa")["net_flush_overhead_s"],
                                                            rel=1e-6)


def test_nvls_chunks_of_the_plugin_are_read_from_2_22(capsys):
    """The documented example (docs/cli.md): AWS's plugin's 512 KiB NVLS chunks, which NCCL reads from 2.22 on."""
    argv = ("collective", "--topology", "dgx-h100", "--algo", "nvls", "-b", "2G", "-e", "2G",
            "--tuner-plugin", "aws-ofi:p5.48xlarge")
    _, old, _ = run(capsys, *argv, "--nccl-version", "2.20.3")
    _, new, _ = run(capsys, *argv, "--nccl-version", "2.22")
    assert float(rows(old)[0][5]) == pytest.approx(8074.36, abs=0.01)
    assert float(rows(new)[0][5]) == pytest.approx(7997.26, abs=0.01)
    assert "NCCL 2.20.3" in old and "NVLS chunks NCCL's own" in old
    assert "NCCL 2.22" in new and "NVLS chunks 512 KiB" in new


def test_a_tuner_plugin_before_2_19_is_refused(capsys):
    code, _, err = run(capsys, "collective", "--tuner-plugin", "aws-ofi:p5.48xlarge", "--nccl-version", "2.18")
    assert code == 2 and "--tuner-plugin" in err and "2.19" in err


def test_a_host_backend_refuses_an_nccl_version(capsys):
    code, _, err = run(capsys, "collective", "--backend", "gloo", "--nccl-version", "2.20")
    assert code == 2 and "--nccl-version" in err


def test_the_default_is_the_newest_modelled_and_stated(capsys):
    _, plain, _ = run(capsys, "collective", "-b", "1M", "-e", "1M")
    _, named, _ = run(capsys, "collective", "-b", "1M", "-e", "1M", "--nccl-version", str(NCCL_CURRENT))
    assert plain == named and f"NCCL {NCCL_CURRENT}" in plain.splitlines()[0]
    assert main(["collective", "--help"]) == 0
    assert f"default: {NCCL_CURRENT}" in " ".join(capsys.readouterr().out.split())


# ----------------------------------------------------------------------------- the JSON carries it
def test_collective_json_carries_the_version(capsys):
    _, out, _ = run(capsys, "collective", "-b", "1M", "-e", "1M", "--json", "--nccl-version", "2.21.5")
    assert json.loads(out)["nccl_version"] == "2.21.5"
    _, out, _ = run(capsys, "collective", "-b", "1M", "-e", "1M", "--json")
    assert json.loads(out)["nccl_version"] == str(NCCL_CURRENT)


def test_ddp_json_carries_the_version_and_the_version_changes_its_buckets(capsys):
    argv = ("ddp", "--topology", "dgx-h100", "--workload", "gpt2", "--json")
    _, old, _ = run(capsys, *argv, "--nccl-version", "2.16")
    _, new, _ = run(capsys, *argv)
    old, new = json.loads(old), json.loads(new)
    assert (old["nccl_version"], new["nccl_version"]) == ("2.16", str(NCCL_CURRENT))
    assert "nvls" not in {b["algo"] for b in old["buckets"]} and "nvls" in {b["algo"] for b in new["buckets"]}


def test_dataparallel_json_and_header_carry_the_version(capsys):
    argv = ("ddp", "--strategy", "dataparallel", "--topology", "hgx-h200", "--gpus", "4", "--workload", "resnet50",
            "--nccl-version", "2.16")
    _, out, _ = run(capsys, *argv, "--json")
    _, text, _ = run(capsys, *argv)
    assert json.loads(out)["nccl_version"] == "2.16" and "NCCL 2.16" in text.splitlines()[0]


def test_train_json_carries_the_version_and_the_version_changes_its_collectives(capsys):
    argv = ("train", "--topology", "dgx-h100", "--model", "llama-3-8b", "--tp", "8", "--global-batch", "8", "--json")
    _, old, _ = run(capsys, *argv, "--nccl-version", "2.16")
    _, new, _ = run(capsys, *argv)
    old, new = json.loads(old), json.loads(new)
    assert (old["nccl_version"], new["nccl_version"]) == ("2.16", str(NCCL_CURRENT))
    assert old["tp_comm_s"] != new["tp_comm_s"]          # TP all-reduces without NVLS before 2.17
    _, text, _ = run(capsys, *argv[:-1], "--nccl-version", "2.16")
    assert "NCCL 2.16" in text.splitlines()[0]


def test_search_json_carries_the_version(capsys):
    argv = ("search", "--model", "llama-3-8b", "--gpus", "8", "--global-batch", "8", "--top", "1",
            "--micro-batches", "1", "--schedules", "1f1b", "--recompute", "none", "--sharding", "ddp", "--json")
    _, out, _ = run(capsys, *argv, "--nccl-version", "2.16")
    d = json.loads(out)
    assert d["nccl_version"] == "2.16" and d["plans"][0]["nccl_version"] == "2.16"


def test_the_api_takes_the_same_keyword():
    r = gpunetsim.collective(topology="dgx-h100", size_bytes="2G", algo="nvls", tuner_plugin="aws-ofi:p5.48xlarge",
                             nccl_version="2.20.3")
    assert r.nccl_version == "2.20.3" and r.time_s * 1e6 == pytest.approx(8074.36, abs=0.01)
    assert gpunetsim.ddp(topology="dgx-h100", workload="gpt2", nccl_version="2.16").nccl_version == "2.16"
    t = gpunetsim.train(topology="dgx-h100", model="llama-3-8b", tp=8, global_batch=8, nccl_version="2.16")
    assert t.as_dict()["nccl_version"] == "2.16"
    with pytest.raises(InputError) as e:
        gpunetsim.collective(nccl_version="2.7")
    assert e.value.field == "nccl_version"


# ----------------------------------------------------------------------------- studies
def _study(tmp_path, versions: str):
    path = tmp_path / "s.yaml"
    path.write_text("name: v\ntopology: dgx-h100\nmodel: resnet50\n"
                    f"nccl_version: {versions}\n"
                    "collectives: {op: all_reduce, min_bytes: 1G, max_bytes: 1G}\n")
    return path


def test_a_study_sweeps_the_version_as_its_outermost_axis(tmp_path):
    res = gpunetsim.run_study(_study(tmp_path, '["2.16", "2.28"]'))
    coll = [(r["nccl_version"], r["algo_used"]) for r in res.rows if r["kind"] == "collective"]
    assert coll == [("2.16", "ring"), ("2.28", "nvls")]
    assert [r["nccl_version"] for r in res.rows] == ["2.16", "2.16", "2.28", "2.28"]


@pytest.mark.parametrize("versions, words", [("2.20", "as a string"), ('"2.7"', "older"), ('["2.22", "x"]', "MAJOR")])
def test_a_study_refuses_a_bad_version_naming_the_field(tmp_path, versions, words):
    with pytest.raises(InputError) as e:
        load_study(_study(tmp_path, versions))
    assert "nccl_version[" in str(e.value) and words in str(e.value)


# ----------------------------------------------------------------------------- the corpus's path is the CLI's
def test_a_dataset_header_and_the_flag_give_the_same_prediction():
    """The corpus reads a header's version into the same Planner argument ``--nccl-version`` sets."""
    topo = Topo("dgx-h100", nodes=2, gpus_per_node=8, nccl_version=read_nccl_version("2.17.1 (stated)"))
    point = CollMeasurement("all_reduce", 16, 1 << 30, 1e-3, None, None)
    corpus = Predictor(topo, Parameters()).predict(point)
    user = gpunetsim.collective(topology="dgx-h100", nodes=2, size_bytes=1 << 30, engine="closed",
                                nccl_version="2.17.1")
    assert (corpus.algo, corpus.proto) == (user.algo, user.proto) == ("ring", "simple")
    assert corpus.predicted_s == pytest.approx(user.time_s, rel=1e-12)


def test_a_release_newer_than_the_model_knows_is_planned_as_the_newest_and_says_so(capsys):
    """A user on a current NCCL (2.29+, past the model's newest rules) gets 2.28's rules, every rule holding from its
    release on, and a header that says so; the JSON keeps the release asked for."""
    assert nccl_version("2.30.1", "--nccl-version") == (2, 30, 1)
    args = ("collective", "--topology", "dgx-h100", "-b", "1G", "-e", "1G")
    code, newer, err = run(capsys, *args, "--nccl-version", "2.30.1")
    assert code == 0 and "NCCL 2.30.1 (planned as 2.28, the newest the model knows)" in newer
    _, current, _ = run(capsys, *args)
    assert newer.split("\n")[1:] == current.split("\n")[1:]         # the same figures as 2.28
    code, out, _ = run(capsys, *args, "--nccl-version", "2.30.1", "--json")
    assert code == 0 and all(json.loads(line)["nccl_version"] == "2.30.1" for line in out.splitlines() if line)


@pytest.mark.parametrize("command", [("train", "--model", "llama-3-8b", "--global-batch", "8"),
                                     ("search", "--model", "llama-3-8b", "--gpus", "8", "--global-batch", "8")])
def test_every_header_says_a_newer_release_is_planned_as_the_newest(capsys, command):
    """train and search name the NCCL in their headers as collective and ddp do (nccl_release_words)."""
    code, out, _ = run(capsys, *command, "--nccl-version", "2.30")
    assert code == 0 and "NCCL 2.30 (planned as 2.28, the newest the model knows)" in out.splitlines()[0]
    code, out, _ = run(capsys, *command)
    assert code == 0 and "NCCL 2.28," in out.splitlines()[0]
