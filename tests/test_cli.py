"""The ``gpunetsim collective`` command: nccl-tests columns, JSON, files, clear errors."""

import json

import pytest

from gpunetsim.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_table_has_nccl_tests_columns_and_doubling_sizes(capsys):
    code, out, _ = run(capsys, "collective", "--topology", "dgx-h100", "-b", "8", "-e", "1K")
    assert code == 0
    header = [l for l in out.splitlines() if l.startswith("#")][1]
    for col in ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "algo", "proto"):
        assert col in header
    rows = [l.split() for l in out.splitlines() if not l.startswith("#")]
    assert [int(r[0]) for r in rows] == [8, 16, 32, 64, 128, 256, 512, 1024]
    assert rows[0][2:5] == ["float", "sum", "-1"]


def test_json_lines_have_the_promised_fields(capsys):
    code, out, _ = run(capsys, "collective", "--topology", "hgx-h200", "--gpus", "4", "--op", "all_gather",
                       "-b", "1M", "-e", "4M", "--json")
    assert code == 0
    recs = [json.loads(l) for l in out.splitlines()]
    assert [r["bytes"] for r in recs] == [2**20, 2**21, 2**22]
    for r in recs:
        assert {"op", "bytes", "gpus", "time_s", "algbw_GBps", "busbw_GBps", "algo", "proto"} <= set(r)
        assert r["busbw_GBps"] == pytest.approx(r["algbw_GBps"] * 3 / 4)
        assert r["algbw_GBps"] == pytest.approx(r["bytes"] / r["time_s"] / 1e9)


def test_all_gather_count_is_per_rank(capsys):
    _, out, _ = run(capsys, "collective", "--topology", "hgx-h200", "--gpus", "4", "--op", "all_gather",
                    "-b", "1M", "-e", "1M")
    row = [l.split() for l in out.splitlines() if not l.startswith("#")][0]
    assert int(row[1]) == 2**20 // 4 // 4


def test_des_and_closed_engines_agree(capsys):
    outs = []
    for engine in ("des", "closed"):
        _, out, _ = run(capsys, "collective", "--topology", "dgx-h100", "--nodes", "2", "-b", "1K", "-e", "1G",
                        "-f", "32", "--json", "--engine", engine)
        outs.append([json.loads(l)["time_s"] for l in out.splitlines()])
    assert outs[0] == pytest.approx(outs[1], rel=0.01)


def test_topology_file(tmp_path, capsys):
    f = tmp_path / "pair.yaml"
    f.write_text("nodes: [{name: a, kind: gpu}, {name: b, kind: gpu}]\n"
                 "links: [{a: a, b: b, kind: nvlink, bandwidth: 100 GB/s, latency: 1 us}]\n")
    code, out, _ = run(capsys, "collective", "--topology", str(f), "--op", "send_recv", "-b", "1G", "-e", "1G",
                       "--json")
    assert code == 0 and json.loads(out)["gpus"] == 2


@pytest.mark.parametrize("argv, needle", [
    (["collective", "--topology", "dgx-z900"], "'dgx-z900'"),
    (["collective", "-b", "8 furlongs"], "--min-bytes"),
    (["collective", "-b", "1G", "-e", "8"], "--min-bytes"),
    (["collective", "--gpus", "9"], "--gpus"),
    (["collective", "--nodes", "0"], "nodes"),
    (["collective", "--nodes", "2", "--nic-bw", "fast"], "--nic-bw"),
    (["collective", "--algo", "tree", "--op", "all_gather"], "algo"),
    (["collective", "--oversubscription", "0.5", "--nodes", "2"], "oversubscription"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, prog", [
    (["collective", "--bogus", "1"], "gpunetsim collective"),
    (["search", "--model", "megatron-22b", "--gpus", "16", "--global-batch", "32", "--batch-per-gpu", "2"],
     "gpunetsim search"),
    (["stragglers", "extra"], "gpunetsim stragglers"),
    (["--bogus"], "gpunetsim"),
])
def test_an_unknown_option_points_at_its_commands_help(capsys, argv, prog):
    """``gpunetsim collective --bogus`` said 'gpunetsim: error: ... (see gpunetsim --help)', whose page lists the
    commands, not the option the user meant (review s26)."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith(f"{prog}: error: unrecognized arguments: ") and err.endswith(f"(see {prog} --help)\n")
