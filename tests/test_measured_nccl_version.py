"""The NCCL release measurements ran with: read from their files (an nccl-tests log's version line, -J JSON's code,
JSONL's meta) or ``--nccl-version`` by calibrate and compare, recorded in the calibration file and planned for where it
is applied; a cluster scenario's ``nccl_version``. One parsed version (simulator.core.vocabulary.nccl_version)."""

import json
from pathlib import Path

import pytest

from gpunetsim.cli import main
from simulator.collectives.params import Parameters, load_calibration
from simulator.core.errors import InputError
from validation.parsers import Dataset, load_measurements, nccl_tests_text_version, write_jsonl

ROWS = "".join(f"{s:>12} {s // 4:>13}     float     sum      -1    {t:7.2f}   1.0   1.0      0    {t:7.2f}   1.0   1.0  0\n"
               for s, t in ((1048576, 30.0), (2097152, 40.0), (4194304, 60.0), (8388608, 95.0), (16777216, 160.0)))
LOG = ("%s#  Rank  0 Group  0 Pid  1 on node1 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
       "#  Rank  1 Group  0 Pid  2 on node1 device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
       "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
       "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
       + ROWS + "# Out of bounds values : 0 OK\n")
TESTS_LINE = "# nccl-tests version 2.13.8 nccl-headers=22105 nccl-library=%d\n"


def _log(tmp_path: Path, name: str, head: str = "", ranks: int = 2) -> str:
    """An nccl-tests all_reduce log of ``ranks`` H100s under ``head`` (version lines)."""
    lines = LOG.splitlines(keepends=True)
    more = "".join(f"#  Rank {r:2d} Group  0 Pid  {r + 1} on node1 device  {r} [0x2a] NVIDIA H100 80GB HBM3\n"
                   for r in range(2, ranks))
    p = tmp_path / name
    p.write_text(("".join(lines[:2]) + more + "".join(lines[2:])) % head)
    return str(p)


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _calibrate(tmp_path, capsys, *files, extra=()):
    out = str(tmp_path / "cal.json")
    code, text, err = _run(capsys, "calibrate", "--measurements", *files, "--topology", "dgx-h100", "--gpus", "2",
                           "--keys", "call_overhead_s", "--out", out, *extra)
    return code, text, err, out


# ----------------------------------------------------------------------------- reading a file's release
@pytest.mark.parametrize("head, release", [
    (TESTS_LINE % 22105, ("2.21.5", "line 1")),                                  # nccl-tests' own header: the library
    ("host:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.2\n", ("2.19.3", "line 1")),   # NCCL's banner (NCCL_DEBUG=INFO)
    ("x\n" + TESTS_LINE % 22602 + "h:2:2 [1] NCCL INFO NCCL version 2.26.2+cuda12.8\n", ("2.26.2", "line 2")),
    ("", None),
])
def test_an_nccl_tests_log_says_which_nccl_ran(tmp_path, head, release):
    f = _log(tmp_path, "ar.txt", head)
    assert nccl_tests_text_version(Path(f).read_text(), f) == release
    meta = load_measurements(f).meta
    assert (meta.get("nccl_version"), meta.get("nccl_version_where")) == (release or (None, None))


def test_a_log_naming_two_releases_is_refused_with_both_lines(tmp_path):
    f = _log(tmp_path, "ar.txt", TESTS_LINE % 22105 + "h:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.2\n")
    with pytest.raises(InputError) as e:
        load_measurements(f)
    assert str(e.value).startswith(f"{f}: line 2: one log names two NCCL releases, 2.21.5 (line 1) and 2.19.3")


# ----------------------------------------------------------------------------- calibrate and apply
def test_calibrate_records_the_logs_release_and_a_run_with_the_calibration_plans_for_it(tmp_path, capsys):
    code, text, _, cal = _calibrate(tmp_path, capsys, _log(tmp_path, "ar.txt", TESTS_LINE % 21405))
    assert code == 0
    assert f"NCCL 2.14.5 (line 1 of {tmp_path / 'ar.txt'})" in text.splitlines()[0]
    data = json.loads(Path(cal).read_text())
    assert data["nccl_version"] == "2.14.5" and data["topology"]["nccl_version"] == "2.14.5"
    assert load_calibration(cal).nccl_version == (2, 14, 5)
    # applied: NCCL 2.14 has no NVLS and no LL128 on Hopper (nccl_constants.ALGO_FROM, ll128_capable)
    _, out, _ = _run(capsys, "collective", "--topology", "dgx-h100", "-b", "4M", "-e", "4M", "--calibration", cal,
                     "--json")
    row = json.loads(out)
    assert row["nccl_version"] == "2.14.5" and (row["algo"], row["proto"]) == ("ring", "ll")
    _, out, _ = _run(capsys, "collective", "--topology", "dgx-h100", "-b", "4M", "-e", "4M", "--calibration", cal,
                     "--nccl-version", "2.28", "--json")      # a release named on the command line plans for it
    assert json.loads(out)["nccl_version"] == "2.28" and json.loads(out)["algo"] == "nvls"


def test_nccl_version_gives_the_release_a_silent_file_ran_with(tmp_path, capsys):
    code, text, _, cal = _calibrate(tmp_path, capsys, _log(tmp_path, "ar.txt"), extra=("--nccl-version", "2.20"))
    assert code == 0 and "NCCL 2.20 (--nccl-version)" in text.splitlines()[0]
    assert json.loads(Path(cal).read_text())["nccl_version"] == "2.20"
    _, text, _, cal = _calibrate(tmp_path, capsys, _log(tmp_path, "ar.txt"))
    assert "NCCL 2.28 (no file names its release: --nccl-version gives it)" in text.splitlines()[0]
    assert "nccl_version" not in json.loads(Path(cal).read_text())


def test_a_flag_agreeing_with_the_file_is_taken_and_one_disagreeing_is_refused(tmp_path, capsys):
    f = _log(tmp_path, "ar.txt", TESTS_LINE % 22105)
    assert _calibrate(tmp_path, capsys, f, extra=("--nccl-version", "2.21"))[0] == 0       # 2.21 names 2.21.5 too
    code, _, err, _ = _calibrate(tmp_path, capsys, f, extra=("--nccl-version", "2.19.3"))
    assert code == 2
    assert (f"gpunetsim: error: {f}: --nccl-version: the file says it ran with NCCL 2.21.5 (line 1), --nccl-version "
            "says 2.19.3") in err and "(got '2.19.3')" in err


def test_files_of_two_releases_are_calibrated_apart(tmp_path, capsys):
    a = _log(tmp_path, "a.txt", TESTS_LINE % 22105)
    b = _log(tmp_path, "b.txt", TESTS_LINE % 22809)
    code, _, err = _run(capsys, "compare", "--measurements", a, b, "--topology", "dgx-h100", "--gpus", "2", "--html", "")
    assert code == 2
    assert f"{b}: line 1: ran with NCCL 2.28.9, but {a} with NCCL 2.21.5 (line 1)" in err


@pytest.mark.parametrize("meta, field, text", [
    ({"nccl_version": "1.9.2"}, "meta.nccl_version", "(got '1.9.2')"),
    ({"topology": {"preset": "dgx-h100", "nccl_version": "3.0.1 (stated)"}}, "meta.topology.nccl_version",
     "(got '3.0.1 (stated)')"),
])
def test_a_release_the_model_does_not_know_is_refused_naming_file_and_field(tmp_path, capsys, meta, field, text):
    from tests.test_calibration import synthetic_points
    f = str(tmp_path / "m.jsonl")
    write_jsonl(Dataset({"topology": {"preset": "dgx-h100"}, **meta}, synthetic_points(Parameters())), f)
    code, _, err = _run(capsys, "compare", "--measurements", f, "--html", "")
    assert code == 2 and f"{f}: {field}: the model knows NCCL 2.8 to 2.28" in err and text in err


def test_compare_plans_each_point_for_the_release_its_file_names(tmp_path, capsys):
    runs = {}
    for code, release in ((21405, "2.14.5"), (21505, "2.15.5"), (22809, "2.28.9")):
        f = _log(tmp_path, f"ar{code}.txt", TESTS_LINE % code, ranks=8)
        _, out, _ = _run(capsys, "compare", "--measurements", f, "--topology", "dgx-h100", "--json", "--html", "")
        lines = [json.loads(x) for x in out.splitlines()]
        assert lines[-1]["nccl_version"] == release
        runs[release] = {(x["algo"], x["proto"]) for x in lines[:-1] if x["bytes"] == 4194304}
    # 8 H100s at 4 MiB: no LL128 on Hopper before 2.15, no NVLS before 2.17
    assert runs == {"2.14.5": {("ring", "ll")}, "2.15.5": {("ring", "ll128")}, "2.28.9": {("nvls", "simple")}}


def test_a_calibration_files_release_is_checked_and_written_back(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "gpunetsim-calibration/1", "params": {}, "nccl_version": 2.2}))
    with pytest.raises(InputError) as e:
        load_calibration(str(bad))
    assert str(e.value).startswith(f"{bad}: nccl_version: write the NCCL version as a string")
    misspelt = tmp_path / "typo.json"
    misspelt.write_text(json.dumps({"params": {}, "nccl_verison": "2.20"}))
    with pytest.raises(InputError, match="did you mean 'nccl_version'"):
        load_calibration(str(misspelt))


# ----------------------------------------------------------------------------- a cluster scenario
SCENARIO = "name: v\ntopology: dgx-h100\nnodes: 2\n%sjobs:\n  - {name: a, collective: all_reduce, size: 64 MiB, nodes: 2}\n"


def _scenario(tmp_path, capsys, line: str, *extra):
    f = tmp_path / "s.yaml"
    f.write_text(SCENARIO % line)
    return (str(f),) + _run(capsys, "cluster", str(f), *extra)


def test_a_scenarios_nccl_version_plans_every_job_and_is_reported(tmp_path, capsys):
    _, code, out, _ = _scenario(tmp_path, capsys, 'nccl_version: "2.16"\n')
    assert code == 0 and out.splitlines()[0].endswith("seed=0, NCCL 2.16")
    times = {}
    for line in ('nccl_version: "2.16"\n', ""):
        _, _, out, _ = _scenario(tmp_path, capsys, line, "--json")
        d = json.loads(out)
        times[d["nccl_version"]] = d["jobs"][0]["healthy_s"]
    assert set(times) == {"2.16", "2.28"} and times["2.16"] != times["2.28"]   # no NVLS-Tree before 2.18


@pytest.mark.parametrize("line, text", [
    ("nccl_version: 2.20\n", "nccl_version: write the NCCL version as a string, e.g. '2.20'"),   # YAML's 2.2
    ('nccl_version: "2.7"\n', "nccl_version: the model knows NCCL 2.8 to 2.28"),
    ('nccl_version: "two"\n', "nccl_version: expected an NCCL version MAJOR.MINOR[.PATCH]"),
    ("nccl_version: [2, 20]\n", "nccl_version: expected one value, not a list (got [2, 20])"),
])
def test_a_bad_scenario_nccl_version_names_file_and_field(tmp_path, capsys, line, text):
    f, code, _, err = _scenario(tmp_path, capsys, line)
    assert code == 2 and f"{f}: {text}" in err


# ----------------------------------------------------------------------------- a calibration's release, applied
def test_a_calibrations_release_is_planned_for_by_every_command(tmp_path, capsys):
    import gpunetsim
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps({"format": "gpunetsim-calibration/1", "params": {}, "nccl_version": "2.16"}))
    r = gpunetsim.collective(topology="dgx-h100", size_bytes="1G", calibration=str(cal))
    assert r.nccl_version == "2.16" and r.algo != "nvls"                       # no NVLS before 2.17
    assert gpunetsim.collective(topology="dgx-h100", size_bytes="1G", calibration=str(cal),
                                nccl_version="2.28").algo == "nvls"           # a release asked for wins
    assert gpunetsim.ddp(topology="dgx-h100", workload="gpt2", calibration=str(cal)).nccl_version == "2.16"
    t = gpunetsim.train(topology="dgx-h100", model="llama-3-8b", tp=8, global_batch=8, calibration=str(cal))
    assert t.as_dict()["nccl_version"] == "2.16"
    _, out, _ = _run(capsys, "search", "--model", "llama-3-8b", "--gpus", "8", "--global-batch", "8", "--top", "1",
                     "--micro-batches", "1", "--schedules", "1f1b", "--recompute", "none", "--sharding", "ddp",
                     "--calibration", str(cal), "--json")
    assert json.loads(out)["nccl_version"] == "2.16" and json.loads(out)["plans"][0]["nccl_version"] == "2.16"
    study = tmp_path / "s.yaml"
    study.write_text(f"name: v\ntopology: dgx-h100\nmodel: resnet50\ncalibration: {cal}\n"
                     "collectives: {op: all_reduce, min_bytes: 1G, max_bytes: 1G}\n")
    rows = [r for r in gpunetsim.run_study(study).rows if r["kind"] == "collective"]
    assert [(r["nccl_version"], r["algo_used"]) for r in rows] == [("2.16", "ring")]
    scenario = tmp_path / "c.yaml"
    scenario.write_text((SCENARIO % f"calibration: {cal}\n"))
    _, out, _ = _run(capsys, "cluster", str(scenario), "--json")
    assert json.loads(out)["nccl_version"] == "2.16"
