"""Hostile, huge and odd inputs (issue 12): never a traceback, never a hang, never a silent number.

Every class of the issue has cases here: resource limits (alias bombs, nesting, huge counts,
file size), file handling (directories, invalid UTF-8, long names, unwritable outputs), numbers
at the edge (inf, NaN, 1e308, 10^400), one GPU, measurements (wrong types, failed checks,
duplicates, rank lines), sweeps (failing points, resume, Ctrl-C, stale outputs) and runners.
Property-based cases (Hypothesis, derandomized so CI is repeatable) throw generated files and
records at every reader. Each handled input is counted (``bad_input`` fixture); the session
summary prints the total. CLI cases run in-process and require exit status 2, exactly one line
on stderr, no "Traceback" and nothing on stdout.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gpunetsim.cli import main
from simulator.core.errors import InputError

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
DATA = Path(__file__).resolve().parent.parent / "validation" / "data" / "h200x4_2026-11-26b"
COLL2 = str(DATA / "coll_world2.jsonl")

BOMB = ("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n")
PAIR = "nodes: [{name: a}, {name: b}]\nlinks: [{a: a, b: b, kind: nvlink, bandwidth: 100 GB/s%s}]\n"
WORKLOAD = {"name": "w", "forward_s": 0.01, "backward_s": 0.02, "optimizer_s": 0.001,
            "params": [{"name": "p", "bytes": 4096, "grad_ready_s": 0.01}]}
COLL = {"kind": "coll", "op": "all_reduce", "world": 2, "bytes": 1024, "time_s": 1e-5}
DDP = {"kind": "ddp", "model": "m", "batch_size": 4, "world": 2, "bucket_cap_mb": 25.0,
       "median_s": 0.1, "p10_s": 0.09, "p90_s": 0.11}
NCCL_J = {"args": ["./build/all_reduce_perf"], "config": {"nthreads": 1, "ngpus": 1}, "devices": [0, 1],
          "results": [{"size": 1024, "type": "float", "out_of_place": {"time": 10.0, "alg_bw": 0.1,
                                                                       "bus_bw": 0.1}}]}
TABLE = ("# nccl-tests\n#  Rank  0 Group  0 Pid  1 on host device  0 [0x1] NVIDIA H200\n"
         "#  Rank  1 Group  0 Pid  1 on host device  1 [0x2] NVIDIA H200\n"
         "#       size         count      type   redop    root     time   algbw   busbw #wrong"
         "     time   algbw   busbw #wrong\n"
         "%s"
         "# Out of bounds values : %s\n# Avg bus bandwidth    : 1.0\n")
ROW = "        1024           256     float     sum      -1    10.00    0.10    0.10  %s    10.00    0.10    0.10  0\n"


def _write(d: Path, name: str, content: str | bytes | dict | list) -> None:
    p = d / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    elif isinstance(content, str):
        p.write_text(content)
    else:
        p.write_text(json.dumps(content))


@pytest.fixture(scope="module")
def d(tmp_path_factory) -> Path:
    """A folder of hostile files, one per case below."""
    d = tmp_path_factory.mktemp("bad")
    files: dict[str, str | bytes | dict | list] = {
        "bomb.yaml": BOMB + "nodes: *g\nlinks: *g\n",
        "bomb_study.yaml": BOMB + "model: *g\n",
        "cycle.yaml": "nodes: &n [*n]\n",
        "deep.json": "[" * 5000 + "]" * 5000,
        "deep65.json": {"params": json.loads("[" * 70 + "]" * 70)},
        "deep.yaml": "a: " + "[" * 3000 + "]" * 3000 + "\n",
        "bigint.json": '{"format": "gpunetsim-calibration/1", "params": {"call_overhead_s": 1' + "0" * 400 + "}}",
        "hugeint.yaml": "nodes: [{name: a, host: 1" + "0" * 5000 + "}]\nlinks: []\n",
        "nan.json": '{"params": {"call_overhead_s": NaN}}',
        "inf.json": '{"params": {"call_overhead_s": 1e400}}',
        "notutf8.yaml": b"name: \xff\xfe\x00\n",
        "notutf8.jsonl": b'{"kind": "coll"}\n\xc3\x28\n',
        "empty.yaml": "",
        "list.yaml": "- 1\n- 2\n",
        "syntax.yaml": "nodes: [\n  - {name: a\n",
        "syntax.json": '{"nodes": [',
        "longstr.yaml": "name: " + "x" * 2_000_000 + "\nnodes: []\n",
        "lat.yaml": PAIR % ", latency: 1e308 s",
        "latnan.yaml": PAIR % ", latency: .nan",
        "bw0.yaml": PAIR.replace("100 GB/s", "1e-300 GB/s") % "",
        "bwinf.yaml": PAIR.replace("100 GB/s", ".inf") % "",
        "cc.yaml": PAIR % "" + "compute_capability: abc\n",
        "hosts.yaml": "nodes: [{name: a, host: -1}, {name: b}]\nlinks: [{a: a, b: b, kind: nvlink, bandwidth: 1 GB/s}]\n",
        "selfloop.yaml": "nodes: [{name: a}]\nlinks: [{a: a, b: a, kind: nvlink, bandwidth: 1 GB/s}]\n",
        "w_big.json": {**WORKLOAD, "forward_s": 1e308},
        "w_nan.json": {**WORKLOAD, "backward_s": "NaN"},
        "w_nan.yaml": "name: w\nforward_s: .nan\nbackward_s: 1\noptimizer_s: 0\nparams: [{name: p, bytes: 8, grad_ready_s: 0.5}]\n",
        "w_neg.json": {**WORKLOAD, "optimizer_s": -1},
        "w_bytes.json": {**WORKLOAD, "params": [{"name": "p", "bytes": 10**30, "grad_ready_s": 0.01}]},
        "w_late.json": {**WORKLOAD, "params": [{"name": "p", "bytes": 8, "grad_ready_s": 5.0}]},
        "w_noparams.json": {**WORKLOAD, "params": []},
        "w_layers.yaml": "name: l\ngpu: h100\nbatch_size: 8\nlayers: [{name: a, params: 10, forward_flops: 1e308}]\n",
        "w_bs.json": {**WORKLOAD, "batch_size": 10**12},
        "study_points.yaml": "model: [resnet50]\nnodes: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nbucket_cap_mb: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
                             "batch_size: [" + ", ".join(map(str, range(1, 201))) + "]\n",
        "study_f.yaml": "model: [resnet50]\ncollectives: {factor: 1.00001}\n",
        "study_cap.yaml": "model: [resnet50]\nbucket_cap_mb: 1e308\n",
        "study_capinf.yaml": "model: [resnet50]\nbucket_cap_mb: .inf\n",
        "study_nodes.yaml": "model: [resnet50]\nnodes: [1000000000]\n",
        "study_ovs.yaml": "model: [resnet50]\noversubscription: [1e308]\n",
        "study_unknown.yaml": "model: [resnet50]\nwarp: 9\n",
        "study_model.yaml": "model: [no-such-model]\n",
        "study_str.yaml": "model: resnet50\nnodes: lots\n",
        "study_bigint.yaml": "model: [resnet50]\nnodes: [1" + "0" * 30 + "]\n",
        "study_minmax.yaml": "model: [resnet50]\ncollectives: {min_bytes: 1G, max_bytes: 1K}\n",
        "cal_fmt.json": {"format": "other/9", "params": {}},
        "cal_key.json": {"params": {"warp_speed": 1}},
        "cal_str.json": {"params": {"call_overhead_s": "fast"}},
        "cal_range.json": {"params": {"link_efficiency.nvlink": 5}},
        "cal_noparams.json": {"name": "x"},
        "coll_type.jsonl": json.dumps({**COLL, "bytes": "big"}) + "\n",
        "coll_env.jsonl": json.dumps({**COLL, "env": 5}) + "\n",
        "coll_bw.jsonl": json.dumps({**COLL, "algbw_GBps": "fast"}) + "\n",
        "coll_time0.jsonl": json.dumps({**COLL, "time_s": 0}) + "\n",
        "coll_timeneg.jsonl": json.dumps({**COLL, "time_s": -1}) + "\n",
        "coll_world.jsonl": json.dumps({**COLL, "world": 10**9}) + "\n",
        "coll_op.jsonl": json.dumps({**COLL, "op": "warp"}) + "\n",
        "coll_minmax.jsonl": json.dumps({**COLL, "min_s": 2e-5, "max_s": 1e-5}) + "\n",
        "coll_nan.jsonl": '{"kind": "coll", "op": "all_reduce", "world": 2, "bytes": 8, "time_s": NaN}\n',
        "coll_list.jsonl": "[1, 2]\n",
        "coll_torn.jsonl": json.dumps(COLL) + '\n{"kind": "coll", "op": "all_',
        "ddp_zero.jsonl": json.dumps({**DDP, "median_s": 0, "p10_s": 0, "p90_s": 0}) + "\n",
        "ddp_neg.jsonl": json.dumps({**DDP, "median_s": -0.1}) + "\n",
        "ddp_nan.jsonl": json.dumps({**DDP, "median_s": float("nan")}) + "\n",
        "ddp_order.jsonl": json.dumps({**DDP, "p10_s": 0.2}) + "\n",
        "ddp_cap.jsonl": json.dumps({**DDP, "bucket_cap_mb": 1e308}) + "\n",
        "ddp_bs.jsonl": json.dumps({**DDP, "batch_size": "four"}) + "\n",
        "ddp_missing.jsonl": json.dumps({k: v for k, v in DDP.items() if k != "world"}) + "\n",
        "j_size.json": {**NCCL_J, "results": [{"size": "big", "out_of_place": {"time": 1}}]},
        "j_env.json": {**NCCL_J, "env": 5},
        "j_cfg.json": {**NCCL_J, "config": {"nthreads": "x"}},
        "j_half.json": {**NCCL_J, "results": [{"size": 8, "out_of_place": "fast"}]},
        "j_time.json": {**NCCL_J, "results": [{"size": 8, "out_of_place": {"time": "slow"}}]},
        "j_args.json": {**NCCL_J, "args": 5},
        "j_devices.json": {**NCCL_J, "devices": list(range(10)), "config": {"nthreads": 10**6, "ngpus": 1}},
        "j_results.json": {**NCCL_J, "results": 5},
        "t_allwrong.txt": TABLE % (ROW % "3", "3 FAILED"),
        "t_failed.txt": (TABLE % (ROW % "N/A", "5 FAILED")),
        "t_cols.txt": TABLE % ("        1024           256     float\n", "0 OK"),
        "t_none.txt": "hello\nno table here\n",
    }
    for name, content in files.items():
        _write(d, name, content)
    (d / "adir.yaml").mkdir()
    (d / "out_is_file").write_text("x")
    os.mkfifo(d / "fifo.yaml")
    return d


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    got = capsys.readouterr()
    return code, got.out, got.err


def assert_one_line_error(code: int, out: str, err: str) -> None:
    assert code == 2, (code, out[-500:], err[-1000:])
    assert "Traceback" not in err and "Traceback" not in out
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert out == "", out[-500:]            # nothing printed: no silent or partial numbers
    assert len(err) < 1200


# Every CLI error path: (argv with {d} for the folder of hostile files). Exit 2, one stderr line.
CLI_ERRORS = [
    # resource limits
    "collective --topology {d}/bomb.yaml", "collective --topology {d}/cycle.yaml",
    "collective --topology {d}/deep.json", "collective --topology {d}/deep.yaml",
    "collective --calibration {d}/deep65.json", "collective --topology {d}/longstr.yaml",
    "collective --topology {d}/hugeint.yaml",
    "collective --nodes 1000000000", "collective --nodes 2 --nics 1000000",
    "collective --topology pcie-gen4 --gpus 100000", "collective --topology pcie-gen4 --gpus 16",
    "collective --topology dgx-h100 --gpus 9", "collective --topology dgx-h100 --gpus 0",
    "collective -f 1.0000001", "collective -f 1.0001 -b 1 -e 1G",
    "ddp --workload resnet50 --accumulation-steps 1000000000",
    "ddp --workload resnet50 --accumulation-steps 0",
    "ddp --workload resnet50 --batch-size 100000000000", "ddp --workload resnet50 --batch-size 0",
    "sweep {d}/study_points.yaml --out {d}/o", "sweep {d}/study_f.yaml --out {d}/o",
    "sweep {d}/bomb_study.yaml --out {d}/o", "sweep {d}/study_nodes.yaml --out {d}/o --workers 1",
    # file handling
    "collective --topology {d}/adir.yaml", "collective --topology {d}/fifo.yaml",
    "collective --topology {d}/missing.yaml", "collective --topology {d}/notutf8.yaml",
    "collective --topology {d}/empty.yaml", "collective --topology {d}/list.yaml",
    "collective --topology {d}/syntax.yaml", "collective --topology {d}/syntax.json",
    "collective --topology " + "x" * 100_000, "collective --topology " + "y" * 5000 + ".yaml",
    "collective --calibration {d}/adir.yaml", "collective --calibration {d}/notutf8.yaml",
    "collective --calibration " + "z" * 100_000, "collective --calibration {d}/missing",
    "ddp --workload {d}/adir.yaml", "ddp --workload {d}/notutf8.yaml", "ddp --workload {d}/syntax.json",
    "ddp --workload " + "w" * 100_000,
    "ddp --workload resnet50 --trace {d}/nofolder/t.json", "ddp --workload resnet50 --trace {d}",
    "ddp --workload resnet50 --trace {d}/out_is_file/t.json",
    "sweep {d}/adir.yaml --out {d}/o", "sweep {d}/notutf8.yaml --out {d}/o", "sweep {d}/missing.yaml",
    "sweep {d}/empty.yaml --out {d}/o", "sweep {d}/list.yaml --out {d}/o",
    "plan --out {d}/out_is_file", "plan --out {d}/out_is_file/sub",
    "calibrate --measurements {d}/adir.yaml --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/notutf8.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/missing.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements " + COLL2 + " --out {d}/nofolder/c.json",
    "calibrate --measurements " + COLL2 + " --out {d}",
    "compare --measurements " + COLL2 + " --html {d}", "compare --measurements " + COLL2 + " --html {d}/no/x.html",
    # numbers at the edge
    "collective --topology {d}/lat.yaml", "collective --topology {d}/latnan.yaml",
    "collective --topology {d}/bw0.yaml", "collective --topology {d}/bwinf.yaml",
    "collective --topology {d}/cc.yaml", "collective --topology {d}/hosts.yaml",
    "collective --topology {d}/selfloop.yaml",
    "collective --calibration {d}/bigint.json", "collective --calibration {d}/nan.json",
    "collective --calibration {d}/inf.json", "collective --calibration {d}/cal_fmt.json",
    "collective --calibration {d}/cal_key.json", "collective --calibration {d}/cal_str.json",
    "collective --calibration {d}/cal_range.json", "collective --calibration {d}/cal_noparams.json",
    "collective -b 1e30", "collective -b inf", "collective -b nan", "collective -b -8", "collective -b 0",
    "collective -e 1K -b 1M", "collective -f nan", "collective -f 1", "collective -f -2", "collective -f 0.5",
    "collective --dtype float128", "collective --nodes 0", "collective --nodes -5",
    "collective --nodes 2 --oversubscription nan", "collective --nodes 2 --oversubscription inf",
    "collective --nodes 2 --oversubscription 1e308", "collective --nodes 2 --oversubscription 0.5",
    "collective --nodes 2 --nic-bw '1e308 GB/s'", "collective --nodes 2 --nic-bw '0 Gb/s'",
    "collective --nodes 2 --nic-bw fast", "collective --nodes 2 --nic-bw '1e-30 b/s'",
    "collective --nodes 2 --nics 0", "collective --nodes 2 --hosts-per-leaf 0", "collective --cpu-sockets 3",
    "ddp --workload resnet50 --bucket-cap-mb inf", "ddp --workload resnet50 --bucket-cap-mb 1e308",
    "ddp --workload resnet50 --bucket-cap-mb nan", "ddp --workload resnet50 --bucket-cap-mb -1",
    "ddp --workload resnet50 --bucket-cap-mb 0", "ddp --workload resnet50 --first-bucket-mb inf",
    "ddp --workload resnet50 --first-bucket-mb huge",
    "ddp --workload {d}/w_big.json", "ddp --workload {d}/w_nan.json", "ddp --workload {d}/w_nan.yaml",
    "ddp --workload {d}/w_neg.json", "ddp --workload {d}/w_bytes.json", "ddp --workload {d}/w_late.json",
    "ddp --workload {d}/w_noparams.json", "ddp --workload {d}/w_layers.yaml", "ddp --workload {d}/w_bs.json",
    "ddp --workload no-such-model", "ddp --workload resnet50 --gpu warp9",
    "sweep {d}/study_cap.yaml --out {d}/o", "sweep {d}/study_capinf.yaml --out {d}/o",
    "sweep {d}/study_ovs.yaml --out {d}/o", "sweep {d}/study_unknown.yaml --out {d}/o",
    "sweep {d}/study_model.yaml --out {d}/o", "sweep {d}/study_str.yaml --out {d}/o",
    "sweep {d}/study_bigint.yaml --out {d}/o", "sweep {d}/study_minmax.yaml --out {d}/o",
    "plan --workers 0 --out {d}/o", "plan --workers -1 --out {d}/o",
    # one GPU
    "collective --topology dgx-h100 --gpus 1", "collective --topology pcie-gen4 --gpus 1 --engine closed",
    # measurements
    "calibrate --measurements {d}/coll_type.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/coll_env.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/coll_bw.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/coll_time0.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/coll_timeneg.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/coll_world.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/coll_op.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/coll_minmax.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/coll_nan.jsonl --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/coll_list.jsonl --topology hgx-h200 --out {d}/c.json",
    "compare --measurements {d}/ddp_zero.jsonl --topology hgx-h200 --html ''",
    "compare --measurements {d}/ddp_neg.jsonl --topology hgx-h200 --html ''",
    "compare --measurements {d}/ddp_nan.jsonl --topology hgx-h200 --html ''",
    "compare --measurements {d}/ddp_order.jsonl --topology hgx-h200 --html ''",
    "compare --measurements {d}/ddp_cap.jsonl --topology hgx-h200 --html ''",
    "compare --measurements {d}/ddp_bs.jsonl --topology hgx-h200 --html ''",
    "compare --measurements {d}/ddp_missing.jsonl --topology hgx-h200 --html ''",
    "compare --measurements {d}/ddp_zero.jsonl --html ''",
    "calibrate --measurements {d}/j_size.json --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/j_env.json --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/j_cfg.json --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/j_half.json --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/j_time.json --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/j_args.json --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/j_devices.json --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/j_results.json --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/t_none.txt --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements {d}/t_cols.txt --topology hgx-h200 --out {d}/c.json",
    "calibrate --measurements " + COLL2 + " --out {d}/c.json --prior-weight -1",
    "calibrate --measurements " + COLL2 + " --out {d}/c.json --prior-weight nan",
    "calibrate --measurements " + COLL2 + " --out {d}/c.json --prior-weight inf",
    "calibrate --measurements " + COLL2 + " --out {d}/c.json --keys warp_speed",
    "calibrate --measurements " + COLL2 + " --out {d}/c.json --keys ,",
    "calibrate --measurements " + COLL2 + " --out {d}/c.json --keys ddp.compute_slowdown",
    "calibrate --measurements " + COLL2 + " --out {d}/c.json --gpus 4",
    "compare --measurements " + COLL2 + " --topology warp --html ''",
    # the other commands
    "train --model llama-2-7b --global-batch 1000000000000", "train --model llama-2-7b --global-batch 8 --tp 3",
    "train --model llama-2-7b --global-batch 8 --micro-batch 0", "train --model llama-2-7b --global-batch 8 --nodes 1000000",
    "train --model llama-2-7b --global-batch 8 --trace {d}/nofolder/t.json", "train --model-spec {d}/bomb.yaml --global-batch 8",
    "stragglers --ranks 1000000000", "stragglers --ranks 8 --samples 1000000000000", "stragglers --ranks 8 --cv nan",
    "stragglers --ranks 8 --slow-factor 1e308 --slow-gpus 1", "stragglers --ranks 8 --slow-factor nan --slow-gpus 1",
    "goodput --gpus 8 --mtbf-gpu '1e308 s'", "goodput --gpus 8 --checkpoint nan", "goodput --gpus 8 --mtbf-gpu '0 s'",
    "cluster {d}/bomb.yaml", "cluster {d}/deep.json", "cluster {d}/adir.yaml", "cluster {d}/missing.yaml",
    "cluster {d}/notutf8.yaml",
    # flags argparse refuses
    "collective --gpus x", "collective --nodes 1.5", "collective --op warp", "collective --engine quantum",
    "collective --algo psychic", "collective --no-such-flag", "ddp", "ddp --workload resnet50 --batch-size x",
    "sweep", "calibrate --measurements " + COLL2, "compare", "warp-drive", "collective --oversubscription lots",
]


@pytest.mark.parametrize("argv", CLI_ERRORS)
def test_cli_error_path_is_one_line_exit_2(capsys, d, bad_input, argv):
    import shlex
    args = [a.replace("{d}", str(d)) for a in shlex.split(argv)] if len(argv) < 4000 else \
        [a.replace("{d}", str(d)) for a in argv.split(" ")]
    code, out, err = run(capsys, args)
    assert_one_line_error(code, out, err)
    bad_input("cli error path")


def test_cli_error_messages_quote_at_most_80_characters_of_a_value(capsys, d, bad_input):
    code, _, err = run(capsys, ["collective", "--topology", str(d / "bomb.yaml")])
    assert code == 2 and len(err) < 400
    code, _, err = run(capsys, ["ddp", "--workload", "q" * 100_000])
    assert code == 2 and "q" * 81 not in err
    bad_input("long value", 2)


def test_limits_are_raised_with_their_environment_variable(capsys, d, monkeypatch, bad_input):
    code, _, err = run(capsys, ["collective", "-f", "1.5", "-b", "1", "-e", "1G"])
    assert code == 0
    monkeypatch.setenv("GPUNETSIM_MAX_SIZES", "10")
    code, out, err = run(capsys, ["collective", "-f", "1.5", "-b", "1", "-e", "1G"])
    assert_one_line_error(code, out, err)
    assert "GPUNETSIM_MAX_SIZES" in err and "the limit is 10" in err
    monkeypatch.setenv("GPUNETSIM_MAX_INPUT_BYTES", "100")
    code, out, err = run(capsys, ["ddp", "--workload", str(d / "w_big.json")])
    assert_one_line_error(code, out, err)
    assert "GPUNETSIM_MAX_INPUT_BYTES" in err
    monkeypatch.setenv("GPUNETSIM_MAX_GPUS", "lots")
    code, out, err = run(capsys, ["collective"])
    assert_one_line_error(code, out, err)
    bad_input("limit", 3)


def test_collective_output_is_finite_and_one_gpu_ddp_is_defined(capsys, bad_input):
    code, out, _ = run(capsys, ["collective", "-f", "inf", "-b", "8", "-e", "1G", "--json"])
    assert code == 0 and len(out.splitlines()) == 1
    assert all(math.isfinite(v) for v in json.loads(out).values() if isinstance(v, float))
    code, out, _ = run(capsys, ["ddp", "--workload", "resnet50", "--gpus", "1", "--json"])
    assert code == 0 and json.loads(out)["exposed_comm_s"] == 0
    assert "Infinity" not in out and "NaN" not in out
    bad_input("edge value", 2)


# ------------------------------------------------------------------ generated files (Hypothesis)
def _json_value(leaves=None):
    leaves = leaves or st.one_of(
        st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["1e308 s", "NaN", "inf", "", "x" * 200]),
        st.text(max_size=8))
    return st.recursive(leaves, lambda c: st.one_of(st.lists(c, max_size=4),
                                                    st.dictionaries(st.text(max_size=6), c, max_size=4)),
                        max_leaves=12)


def _mutated(base: dict, keys: list[str]):
    """``base`` with some fields replaced by hostile values, deleted, or added."""
    hostile = st.one_of(_json_value(), st.just(10**400), st.just(float("nan")), st.just(-1), st.just(0),
                        st.just(1e308), st.just("big"))
    return st.builds(lambda repl, drop: {**{k: v for k, v in base.items() if k not in drop}, **repl},
                     st.dictionaries(st.sampled_from(keys), hostile, min_size=1, max_size=3),
                     st.sets(st.sampled_from(list(base)), max_size=2))


def _dump(value) -> str:
    try:
        return json.dumps(value, allow_nan=True)
    except (ValueError, OverflowError):
        return "{}"


def _clean(call, bad_input, kind):
    """``call()`` either succeeds (returning something checked by the caller) or raises InputError."""
    try:
        result = call()
    except InputError as e:
        text = str(e)
        assert "\n" not in text and len(text) < 1200
        result = None
    bad_input(kind)
    return result


@FUZZ
@given(text=st.text(max_size=300))
def test_any_text_as_a_yaml_or_json_file(tmp_path, bad_input, text):
    from simulator.core.inputs import read_structured
    for suffix in (".yaml", ".json"):
        p = tmp_path / f"f{suffix}"
        p.write_text(text, encoding="utf-8")
        _clean(lambda: read_structured(p), bad_input, "generated text file")


@FUZZ
@given(data=st.binary(max_size=200))
def test_any_bytes_as_a_measurement_file(tmp_path, bad_input, data):
    from validation.parsers import load_measurements
    p = tmp_path / "m.txt"
    p.write_bytes(data)
    _clean(lambda: load_measurements(p), bad_input, "generated bytes file")


@FUZZ
@given(value=_json_value())
def test_any_json_as_a_topology_file(tmp_path, bad_input, value):
    from topologies.files import load_topology
    p = tmp_path / "t.json"
    p.write_text(_dump(value))
    _clean(lambda: load_topology(p), bad_input, "generated topology")


@FUZZ
@given(doc=_mutated({"name": "t", "nodes": [{"name": "a"}, {"name": "b"}],
                     "links": [{"a": "a", "b": "b", "kind": "nvlink", "bandwidth": "1 GB/s"}]},
                    ["nodes", "links", "p2p", "compute_capability", "name"]))
def test_mutated_topology_file(tmp_path, bad_input, doc):
    from topologies.files import load_topology
    p = tmp_path / "t.json"
    p.write_text(_dump(doc))
    G = _clean(lambda: load_topology(p), bad_input, "generated topology")
    if G is not None:
        assert all(math.isfinite(e["bw_Bps"]) and math.isfinite(e["latency_s"]) for *_, e in G.edges(data=True))


@FUZZ
@given(doc=_mutated(WORKLOAD, ["name", "forward_s", "backward_s", "optimizer_s", "params", "batch_size"]))
def test_mutated_workload_file(tmp_path, bad_input, doc):
    from simulator.training.workload import load_workload
    p = tmp_path / "w.json"
    p.write_text(_dump(doc))
    w = _clean(lambda: load_workload(p), bad_input, "generated workload")
    if w is not None:
        assert all(math.isfinite(x) for x in (w.forward_s, w.backward_s, w.optimizer_s))


@FUZZ
@given(doc=_mutated({"format": "gpunetsim-calibration/1", "params": {"call_overhead_s": 1e-5}},
                    ["format", "params", "name"]))
def test_mutated_calibration_file(tmp_path, bad_input, doc):
    from simulator.collectives.params import load_calibration
    p = tmp_path / "c.json"
    p.write_text(_dump(doc))
    params = _clean(lambda: load_calibration(str(p)), bad_input, "generated calibration")
    if params is not None:
        assert all(math.isfinite(v) for v in params.values.values())


@FUZZ
@given(doc=_mutated({"model": ["resnet50"], "nodes": [1], "engine": "closed"},
                    ["model", "nodes", "gpus", "bucket_cap_mb", "oversubscription", "batch_size",
                     "nic_bw", "collectives", "hosts_per_leaf", "nics"]))
def test_mutated_study_file(tmp_path, bad_input, doc):
    from gpunetsim.study import load_study
    p = tmp_path / "s.json"
    p.write_text(_dump(doc))
    _clean(lambda: load_study(p), bad_input, "generated study")


@FUZZ
@given(rec=_mutated(COLL, ["op", "world", "bytes", "time_s", "algbw_GBps", "busbw_GBps", "env", "variant",
                           "min_s", "max_s", "in_place", "dtype"]))
def test_mutated_collective_record(tmp_path, bad_input, rec):
    from validation.parsers import read_jsonl
    p = tmp_path / "c.jsonl"
    p.write_text(_dump(rec) + "\n")
    ds = _clean(lambda: read_jsonl(p), bad_input, "generated measurement record")
    for pt in (ds.points if ds else ()):
        assert math.isfinite(pt.time_s) and pt.time_s > 0 and pt.world >= 1


@FUZZ
@given(rec=_mutated(DDP, ["model", "batch_size", "world", "bucket_cap_mb", "median_s", "p10_s", "p90_s",
                          "nosync_median_s", "launch_id", "launch_index"]))
def test_mutated_ddp_record(tmp_path, bad_input, rec):
    from validation.ddp_compare import read_ddp
    p = tmp_path / "d.jsonl"
    p.write_text(_dump({**rec, "kind": "ddp"}) + "\n")
    got = _clean(lambda: read_ddp(p), bad_input, "generated DDP record")
    for m in got or ():
        assert 0 < m.p10_s <= m.median_s <= m.p90_s and math.isfinite(m.p90_s)


@FUZZ
@given(doc=_mutated(NCCL_J, ["args", "config", "devices", "results", "env", "nccl_version"]))
def test_mutated_nccl_tests_json(bad_input, doc):
    from validation.parsers import parse_nccl_tests_json
    pts = _clean(lambda: parse_nccl_tests_json(_dump(doc), "j.json"), bad_input, "generated nccl-tests -J")
    for pt in pts or ():
        assert math.isfinite(pt.time_s) and pt.time_s > 0


@FUZZ
@given(cells=st.lists(st.sampled_from(["0", "-1", "N/A", "nan", "inf", "1e400", "x", "9" * 30, "1_0", ""]),
                      min_size=1, max_size=12))
def test_mutated_nccl_tests_table(bad_input, cells):
    from validation.parsers import parse_nccl_tests_text
    row = "        1024           256     float     sum      -1  " + "  ".join(cells) + "\n"
    pts = _clean(lambda: parse_nccl_tests_text(TABLE % (row, "0 OK"), source="t.txt"), bad_input,
                 "generated nccl-tests table")
    for pt in pts or ():
        assert math.isfinite(pt.time_s)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-(10**400),
                                                                                   max_value=10**400),
                       st.text(max_size=20), st.sampled_from(["1e308 s", "1e400 GB/s", "nan us", "-0 s",
                                                              "1e-400 s", "10" * 200 + " MiB"])))
def test_units_at_the_edge(value):
    from simulator.core.units import parse_bandwidth, parse_size, parse_time
    for parse in (parse_time, parse_bandwidth, parse_size):
        try:
            v = parse(value, field="x")
        except InputError:
            continue
        assert math.isfinite(v)
    _UNITS_THROWN.append(3)


_UNITS_THROWN: list[int] = []


def test_units_count(bad_input):
    bad_input("generated unit string", sum(_UNITS_THROWN))


# ------------------------------------------------------------------ measurements: warn, do not fit
def test_failed_data_checks_are_dropped_with_a_counted_warning(d, caplog, bad_input):
    import logging
    from validation.parsers import parse_nccl_tests_text
    text = TABLE % (ROW % "0" + ROW.replace("1024", "2048").replace("256", "512") % "2", "2 FAILED")
    with caplog.at_level(logging.WARNING):
        pts = parse_nccl_tests_text(text, source="t.txt")
    assert [p.size_bytes for p in pts] == [1024]
    assert "dropped 1 rows whose data check failed" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING), pytest.raises(InputError, match="every result row failed"):
        parse_nccl_tests_text((d / "t_failed.txt").read_text(), source="t.txt")
    assert "Out of bounds values" in caplog.text
    with pytest.raises(InputError, match="every result row failed"):
        parse_nccl_tests_text((d / "t_allwrong.txt").read_text(), source="t.txt")
    bad_input("failed data check", 3)


def test_a_logs_own_rank_lines_win_over_the_topology_with_a_warning(caplog, bad_input):
    import logging
    from validation.parsers import parse_nccl_tests_text
    text = TABLE % (ROW % "0", "0 OK")
    with caplog.at_level(logging.WARNING):
        pts = parse_nccl_tests_text(text, source="t.txt", default_world=4)
    assert {p.world for p in pts} == {2}
    assert "Rank lines say 2 ranks" in caplog.text
    assert {p.world for p in parse_nccl_tests_text(text.replace("#  Rank", "#  Nope"), default_world=4)} == {4}
    bad_input("rank lines vs --gpus")


def test_conflicting_duplicates_are_warned_about(tmp_path, capsys, bad_input):
    p = tmp_path / "dup.jsonl"
    p.write_text(json.dumps({"kind": "meta", "topology": {"preset": "hgx-h200"}}) + "\n"
                 + json.dumps(COLL) + "\n" + json.dumps({**COLL, "time_s": 5e-4}) + "\n")
    code, out, err = run(capsys, ["compare", "--measurements", str(p), "--html", ""])
    assert code == 0 and "measured more than once with times over 2x apart" in err
    bad_input("conflicting duplicate")


def test_torn_last_line_is_skipped_by_runners_but_refused_by_readers(d, bad_input):
    from validation.parsers import read_jsonl
    from validation.runners.records import done_points, read_records
    assert len(list(read_records(d / "coll_torn.jsonl"))) == 1
    assert done_points([{"kind": "coll", "op": "x"}]) == set()
    with pytest.raises(InputError, match="line 2"):
        read_jsonl(d / "coll_torn.jsonl")
    bad_input("torn record", 2)


# ------------------------------------------------------------------ runners: never twice, never silent
def test_a_rerun_of_a_partly_recorded_launch_counts_once(tmp_path, caplog, bad_input):
    import logging
    from validation.ddp_compare import aggregate, read_ddp
    from validation.runners.ddp_sweep import caps_to_do
    p = tmp_path / "d.jsonl"
    lines = [{**DDP, "launch_id": "a-L0", "launch_index": 0, "bucket_cap_mb": 1.0},
             {**DDP, "launch_id": "b-L0", "launch_index": 0, "bucket_cap_mb": 1.0, "median_s": 0.105},
             {**DDP, "launch_id": "b-L0", "launch_index": 0, "bucket_cap_mb": 25.0},
             {**DDP, "launch_id": "c-L1", "launch_index": 1, "bucket_cap_mb": 1.0, "median_s": 0.1}]
    p.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert caps_to_do(str(p), ("m", 4, 2, 0, False), [1.0, 25.0, 100.0]) == [100.0]
    assert caps_to_do(str(p), ("m", 4, 2, 1, False), [1.0, 25.0]) == [25.0]
    with caplog.at_level(logging.WARNING):
        agg = aggregate(read_ddp(p))
    cap1 = [a for a in agg if a.bucket_cap_mb == 1.0][0]
    assert cap1.launch_id == "b-L0,c-L1"            # two launches, the rerun replacing the first
    assert "recorded more than once" in caplog.text
    bad_input("duplicate DDP record")


def test_runner_settings_errors_are_one_line(capsys, bad_input):
    from validation.runners import ddp_sweep, sweep
    for mod, argv in ((sweep, ["--nproc", "0", "--out", "x"]), (sweep, ["--nproc", "2", "--variants", "warp",
                                                                          "--out", "x"]),
                      (ddp_sweep, ["--nproc", "2", "--models", "warp", "--out", "x"]),
                      (ddp_sweep, ["--nproc", "2", "--bucket-caps", "inf", "--out", "x"])):
        assert mod.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
    bad_input("runner flag", 4)


# ------------------------------------------------------------------ sweeps: go on, resume, stop, no stale files
STUDY = "name: t\nmodel: [resnet50]\ntopology: hgx-h200\ngpus: [1, 2]\nengine: closed\n" \
        "collectives: {op: all_reduce, min_bytes: 1M, max_bytes: 2M}\n"


@pytest.fixture
def study(tmp_path) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(STUDY)
    return p


def test_a_failing_point_is_named_and_the_others_go_on(study, tmp_path, capsys, bad_input):
    out = tmp_path / "o"
    out.mkdir()
    (out / "report.html").write_text("OLD")
    (out / "failed.jsonl").write_text("OLD")
    code, stdout, err = run(capsys, ["sweep", str(study), "--out", str(out), "--workers", "1", "--no-progress"])
    assert code == 1 and "Traceback" not in err
    assert "# failed: #2 collective all_reduce 1048576 B on hgx-h200 x1 (gpus=1)" in stdout
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [r["index"] for r in rows] == [0, 1, 4, 5]
    failed = [json.loads(x) for x in (out / "failed.jsonl").read_text().splitlines()]
    assert [f["index"] for f in failed] == [2, 3]
    report = (out / "report.html").read_text()
    assert "Failed points (2)" in report and "OLD" != report
    bad_input("failing sweep point", 2)


def test_resume_skips_finished_points_and_gives_the_same_files(study, tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    run(capsys, ["sweep", str(study), "--out", str(a), "--workers", "1", "--no-progress"])
    keep = (a / "results.jsonl").read_text().splitlines()
    (b).mkdir()
    (b / "results.jsonl").write_text("\n".join(keep[:2]) + '\n{"torn": ')
    code, _, err = run(capsys, ["sweep", str(study), "--out", str(b), "--workers", "1", "--no-progress",
                                "--resume"])
    assert code == 1 and "resume: 2 of 6 points already" in err
    for name in ("results.jsonl", "results.csv", "report.html", "failed.jsonl"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_ctrl_c_stops_and_keeps_what_finished(study, tmp_path, capsys, monkeypatch, bad_input):
    import gpunetsim.study_run as study_run
    real = study_run.evaluate_safely
    calls = []

    def interrupted_at_third(point):
        calls.append(point.index)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(point)

    monkeypatch.setattr(study_run, "evaluate_safely", interrupted_at_third)
    out = tmp_path / "o"
    out.mkdir()
    (out / "report.html").write_text("OLD")
    code, _, err = run(capsys, ["sweep", str(study), "--out", str(out), "--workers", "1", "--no-progress"])
    assert code == 130 and "interrupted after 2 of 6 points" in err and "Traceback" not in err
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
    assert not (out / "report.html").exists()          # never the old report looking new
    bad_input("interrupted sweep")


def test_ctrl_c_stops_a_process_pool_promptly(study):
    import time
    from gpunetsim.study import load_study
    from gpunetsim.study_run import stream_points
    points = load_study(study).points
    seen = []

    def on_done(outcome):
        seen.append(outcome)
        raise KeyboardInterrupt

    t0 = time.perf_counter()
    assert stream_points(points, on_done, workers=2, progress=False) is True
    assert len(seen) == 1 and time.perf_counter() - t0 < 30
