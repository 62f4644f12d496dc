"""Parsers for nccl-tests text / -J JSON, our JSONL, and the datasets shipped in validation/data."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from simulator.core.errors import InputError
from validation.data import DATA_DIR, data_path, list_datasets
from validation.parsers import (CollMeasurement, Dataset, load_measurements, nccl_version_string,
                                parse_nccl_tests_json, parse_nccl_tests_tables,
                                parse_nccl_tests_text, read_jsonl, write_jsonl)

# --------------------------------------------------------------------------------------------
# raw nccl-tests text snippets (shapes as nccl-tests prints them; numbers made up)

OLD_LAYOUT_MPI = """\
[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
[1,0]<stdout>:#
[1,0]<stdout>:# Using devices
[1,0]<stdout>:#   Rank  0 Pid     26 on host-a device  0 [0x10] A100-SXM4-40GB
[1,0]<stdout>:#   Rank  1 Pid     27 on host-a device  1 [0x10] A100-SXM4-40GB
[1,0]<stdout>:#   Rank  2 Pid     25 on host-b device  0 [0x10] A100-SXM4-40GB
[1,0]<stdout>:#   Rank  3 Pid     26 on host-b device  1 [0x10] A100-SXM4-40GB
[1,0]<stdout>:NCCL version 2.8.3+cuda11.2
[1,2]<stdout>:host-b:27:65 [2] NCCL INFO 8 coll channels, 8 p2p channels, 1 p2p channels per peer
[1,0]<stdout>:#                                                     out-of-place                       in-place
[1,0]<stdout>:#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
[1,0]<stdout>:#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
[1,0]<stdout>:           8             2   float     sum    167.5    0.00    0.00  2e-07    167.1    0.00    0.00  1e-07
[1,0]<stdout>:        1024           256   float     sum    170.2    0.01    0.01  2e-07    169.9    0.01    0.01  2e-07
[1,0]<stdout>:# Out of bounds values : 0 OK
[1,0]<stdout>:# Avg bus bandwidth    : 0.005
"""

# the oldest layout: no redop and no root columns (all_gather), op from the command line
OLDEST_ALL_GATHER = """\
$ ./build/all_gather_perf -b 8 -e 16 -f 2 -g 2
#  Rank  0 Pid  100 on host device  0 [0x1a] Tesla V100
#  Rank  1 Pid  100 on host device  1 [0x1b] Tesla V100
#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             1   float     20.1    0.00    0.00  0e+00     20.0    0.00    0.00  0e+00
          16             2   float     20.5    0.00    0.00  0e+00     20.4    0.00    0.00  0e+00
"""

NEW_LAYOUT = """\
# nccl-tests version 2.17.6 nccl-headers=22602 nccl-library=22602
# Collective test starting: reduce_scatter_perf
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   6899 on node-a device  0 [0000:04:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   6900 on node-a device  1 [0000:05:00] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid   6901 on node-a device  2 [0000:0b:00] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid   6902 on node-a device  3 [0000:0c:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576         65536     float     sum      -1    30.25   34.66   26.00      0    29.50   35.54   26.66    N/A
     2097152        131072     float     sum      -1    40.00   52.43   39.32      0    39.00   53.77   40.33    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 33.0
#
# Collective test concluded: reduce_scatter_perf
"""

# newer "error"-less forks print "wrong"; validation off prints N/A; busbw N/A must become None
ERROR_AND_NA = """\
      size         count      type   redop    root     time   algbw   busbw  wrong     time   algbw   busbw  wrong
       (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
   8388608       2097152     float     sum      -1    156.9   53.47     N/A    N/A    167.6   50.06   93.86    N/A
Out of bounds values : 0 OK
"""

TWO_TABLES = """\
root@box:~/nccl-tests# ./build/broadcast_perf -b 8 -e 8 -f 2 -g 2
#  Rank  0 Group  0 Pid  1 on box device  0 [0000:b4:00] NVIDIA GeForce RTX 2080 Ti
#  Rank  1 Group  0 Pid  1 on box device  1 [0000:b5:00] NVIDIA GeForce RTX 2080 Ti
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
           8             2     float    none       0    11.65    0.00    0.00      0    11.37    0.00    0.00      0
# Avg bus bandwidth    : 0
root@box:~/nccl-tests# ./build/alltoall_perf -b 8 -e 8 -f 2 -g 2
#  Rank  0 Group  0 Pid  2 on box device  0 [0000:b4:00] NVIDIA GeForce RTX 2080 Ti
#  Rank  1 Group  0 Pid  2 on box device  1 [0000:b5:00] NVIDIA GeForce RTX 2080 Ti
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
           8             1     float    none      -1    12.97    0.00    0.00      0    12.86    0.00    0.00    N/A
# Avg bus bandwidth    : 0
"""


def test_old_layout_with_mpi_prefix_and_error_column() -> None:
    points = parse_nccl_tests_text(OLD_LAYOUT_MPI, op="all_reduce", source="old.txt")
    assert points == [
        CollMeasurement("all_reduce", 4, 8, 167.5e-6, 0.0, 0.0, source="old.txt"),
        CollMeasurement("all_reduce", 4, 1024, 170.2e-6, 0.01, 0.01, source="old.txt"),
    ]


def test_old_layout_infers_all_reduce_from_columns() -> None:
    points = parse_nccl_tests_text(OLD_LAYOUT_MPI)
    assert {p.op for p in points} == {"all_reduce"}


def test_oldest_layout_without_redop_and_root() -> None:
    points = parse_nccl_tests_text(OLDEST_ALL_GATHER)
    assert [(p.op, p.world, p.size_bytes, p.time_s) for p in points] == [
        ("all_gather", 2, 8, 20.1e-6), ("all_gather", 2, 16, 20.5e-6)]


def test_new_layout_op_from_test_starting_line_and_world_from_rank_lines() -> None:
    (table,) = parse_nccl_tests_tables(NEW_LAYOUT, source="rs.txt")
    assert (table.op, table.world, table.line) == ("reduce_scatter", 4, 12)
    assert [(p.size_bytes, p.time_s, p.algbw_GBps, p.busbw_GBps) for p in table.points] == [
        (1048576, 30.25e-6, 34.66, 26.00), (2097152, 40.00e-6, 52.43, 39.32)]


def test_in_place_half_is_optional() -> None:
    out_only = parse_nccl_tests_text(NEW_LAYOUT)
    both = parse_nccl_tests_text(NEW_LAYOUT, include_in_place=True)
    assert not any(p.in_place for p in out_only)
    in_place = [p for p in both if p.in_place]
    assert [(p.size_bytes, p.time_s, p.busbw_GBps) for p in in_place] == [
        (1048576, 29.50e-6, 26.66), (2097152, 39.00e-6, 40.33)]
    assert len(both) == 2 * len(out_only)


def test_wrong_column_and_na_values() -> None:
    (point,) = parse_nccl_tests_text(ERROR_AND_NA, world=16)
    assert (point.op, point.world, point.size_bytes) == ("all_reduce", 16, 8388608)
    assert point.time_s == pytest.approx(156.9e-6)
    assert point.algbw_GBps == 53.47
    assert point.busbw_GBps is None


def test_several_tables_each_with_its_own_op() -> None:
    tables = parse_nccl_tests_tables(TWO_TABLES)
    assert [(t.op, t.world, len(t.points)) for t in tables] == [
        ("broadcast", 2, 1), ("all_to_all", 2, 1)]
    assert "alltoall_perf" in tables[1].command


def test_timestamp_column_is_ignored() -> None:
    text = ("#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  "
            "#wrong  timestamp\n"
            "   8  2  float  sum  -1  10.0  0.00  0.00  0  9.0  0.00  0.00  0  "
            "2025-01-01 10:00:00\n")
    (point,) = parse_nccl_tests_text(text, world=2)
    assert point.time_s == pytest.approx(10e-6)


def test_explicit_op_overrides_and_is_checked() -> None:
    with pytest.raises(InputError, match="unknown collective"):
        parse_nccl_tests_text(NEW_LAYOUT, op="allreduce")


@pytest.mark.parametrize("text, message", [
    ("just some prose\nno table here\n", "no nccl-tests result table"),
    (ERROR_AND_NA.replace("   8388608       2097152     float     sum      -1    156.9",
                          "   8388608       2097152     float     sum      -1    abc"),
     "time is not a number"),
    (NEW_LAYOUT.replace("    40.00   52.43   39.32      0    39.00   53.77   40.33    N/A", ""),
     "row has 5 fields"),
])
def test_bad_text_raises_input_error_with_file_and_line(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        parse_nccl_tests_text(text, world=2, source="bad.txt")
    assert info.value.source == "bad.txt"
    if "table" not in message:
        assert info.value.field is not None and info.value.field.startswith("line ")


def test_bad_row_names_its_line_number() -> None:
    broken = NEW_LAYOUT.replace("     2097152        131072     float     sum      -1    40.00",
                                "     2097152        131072     float     sum      -1    oops")
    with pytest.raises(InputError) as info:
        parse_nccl_tests_text(broken, source="rs.txt")
    assert str(info.value).startswith("rs.txt: line 15:")


def test_unknown_world_is_an_error() -> None:
    with pytest.raises(InputError, match="number of ranks"):
        parse_nccl_tests_text(ERROR_AND_NA, source="x.txt")


def test_columns_cannot_tell_all_gather_from_all_to_all() -> None:
    text = TWO_TABLES.split("root@box:~/nccl-tests# ./build/alltoall_perf")[1].split("\n", 1)[1]
    with pytest.raises(InputError, match="which collective"):
        parse_nccl_tests_text(text)
    assert parse_nccl_tests_text(text, op="all_to_all")[0].op == "all_to_all"


# --------------------------------------------------------------------------------------------
# nccl-tests -J JSON

J_REPORT = {
    "version": 1, "start_time": "2026-01-01 10:00:00",
    "args": ["./build/all_gather_perf", "-b", "1M", "-e", "2M", "-g", "4", "-J", "out.json"],
    "env": ["PATH=/usr/bin", "NCCL_ALGO=Ring", "NCCL_PROTO=Simple"],
    "nccl_version": 22809,
    "config": {"nthreads": 1, "ngpus": 4, "minimum_bytes": 1048576, "maximum_bytes": 2097152,
               "step_factor": 2, "warmup_iters": 5, "iterations": 20,
               "devices": [{"rank": 0, "group": 0, "pid": 1, "hostname": "h", "device": 0,
                            "device_hex": "0000:04:00", "device_info": "NVIDIA H200"}]},
    "results": [
        {"size": 1048576, "count": 65536, "type": "float", "redop": "none", "root": "    -1",
         "out_of_place": {"time": 20.5, "alg_bw": 51.15, "bus_bw": 38.36, "nwrong": 0.0},
         "in_place": {"time": 19.5, "alg_bw": 53.77, "bus_bw": 40.33, "nwrong": 0.0},
         "actual_iterations": 20, "experiment_name": ""},
        {"size": 2097152, "count": 131072, "type": "bfloat16", "redop": "none", "root": "    -1",
         "out_of_place": {"time": 30.0, "alg_bw": "nan", "bus_bw": 52.43, "nwrong": None},
         "in_place": None, "actual_iterations": 20, "experiment_name": ""},
    ],
    "out_of_bounds": {"count": 0, "okay": "true"},
    "average_bus_bandwidth": {"bandwidth": 45.0, "okay": "unchecked"},
    "errors": [], "end_time": "2026-01-01 10:00:05",
}


def test_json_report() -> None:
    points = parse_nccl_tests_json(json.dumps(J_REPORT), source="r.json")
    env = (("NCCL_ALGO", "Ring"), ("NCCL_PROTO", "Simple"))
    assert points == [
        CollMeasurement("all_gather", 4, 1048576, 20.5e-6, 51.15, 38.36, source="r.json", env=env),
        CollMeasurement("all_gather", 4, 2097152, 30.0e-6, None, 52.43, dtype="bfloat16",
                        source="r.json", env=env),
    ]


def test_json_report_in_place_and_object_input() -> None:
    points = parse_nccl_tests_json(J_REPORT, include_in_place=True)
    assert [(p.size_bytes, p.in_place) for p in points] == [
        (1048576, False), (1048576, True), (2097152, False)]


@pytest.mark.parametrize("code, text", [(22809, "2.28.9"), (21805, "2.18.5"), (2708, "2.7.8")])
def test_nccl_version_codes(code: int, text: str) -> None:
    assert nccl_version_string(code) == text


def test_json_without_results_is_an_input_error() -> None:
    with pytest.raises(InputError, match="results"):
        parse_nccl_tests_json({"args": ["all_reduce_perf"]}, source="x.json")


# --------------------------------------------------------------------------------------------
# our JSONL

def test_jsonl_round_trip(tmp_path: Path) -> None:
    points = (
        CollMeasurement("all_reduce", 8, 1 << 20, 1.5e-5, 69.9, 122.3, variant="ring",
                        dtype="bfloat16", source="x", env=(("NCCL_ALGO", "Ring"),)),
        CollMeasurement("all_gather", 8, 1 << 30, 5.5e-3, 195.2, 170.8, in_place=True,
                        source="x"),
    )
    dataset = Dataset(meta={"source": "unit test", "topology": {"preset": "dgx-h100",
                                                               "nodes": 1, "gpus_per_node": 8}},
                      points=points)
    path = tmp_path / "d.jsonl"
    write_jsonl(dataset, path)
    back = read_jsonl(path)
    assert back.points == points
    assert back.meta["topology"]["preset"] == "dgx-h100"
    assert load_measurements(path).points == points


def test_jsonl_reads_torch_runner_records_and_skips_other_kinds(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"kind": "meta", "hardware": "4x H200"},
        {"kind": "coll", "op": "broadcast", "world": 2, "bytes": 4096, "time_s": 2e-5,
         "min_s": 1e-5, "variant": "nop2p", "env": {"NCCL_P2P_DISABLE": "1"}},
        {"kind": "ddp", "model": "resnet50", "iter_s": 0.1},
        {"kind": "coll_failed", "op": "all_reduce", "error": "timeout"},
        {"kind": "profile", "model": "gpt2"},
    ]) + "\n")
    dataset = read_jsonl(path)
    assert dataset.meta["hardware"] == "4x H200"
    assert dataset.points == (CollMeasurement(
        "broadcast", 2, 4096, 2e-5, None, None, variant="nop2p", source=str(path),
        env=(("NCCL_P2P_DISABLE", "1"),), min_s=1e-5),)


@pytest.mark.parametrize("line, message", [
    ('{"kind": "coll", "op": "all_reduce", "world": 2, "bytes": 8', "invalid JSON"),
    ('{"kind": "coll", "op": "all_reduce", "world": 2, "time_s": 1e-5}', "no 'bytes'"),
    ('{"kind": "coll", "op": "allreduce", "world": 2, "bytes": 8, "time_s": 1e-5}',
     "unknown collective"),
    ('{"kind": "coll", "op": "all_reduce", "world": 0, "bytes": 8, "time_s": 1e-5}',
     "must be between 1 and"),
    # a time outside its own repetitions was fitted as given (weighted by the repetitions' spread)
    ('{"kind": "coll", "op": "all_reduce", "world": 2, "bytes": 8, "time_s": 5e-3, "rep_times_s": [1.0, 2.0]}',
     "between the fastest and the slowest"),
    ('{"kind": "coll", "op": "all_reduce", "world": 2, "bytes": 8, "time_s": 1e-5, "min_s": 2e-5, "max_s": 3e-5}',
     "between the fastest and the slowest"),
])
def test_bad_jsonl_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"kind": "meta"}\n' + line + "\n")
    with pytest.raises(InputError, match=message) as info:
        read_jsonl(path)
    assert info.value.source == str(path)
    assert info.value.field.startswith("line 2")


@pytest.mark.parametrize("kind, hint", [("col", "did you mean 'coll'"), ("Coll", "did you mean 'coll'"),
                                        ("llm_fsdpp", "did you mean 'llm_fsdp'"), ("zzz", "known: meta, coll")])
def test_misspelt_record_kind_is_refused_naming_file_line_and_value(tmp_path: Path, kind: str, hint: str) -> None:
    """A record whose kind is no known kind was skipped without a word (its measurement lost): every reader of
    measurement JSONL refuses it, naming the file, the line and the kind."""
    from validation.llm_records import read_llm_records
    from validation.runners.records import read_records
    path = tmp_path / "run.jsonl"
    path.write_text('{"kind": "meta"}\n' + json.dumps({"kind": kind, "op": "all_reduce", "world": 2, "bytes": 8,
                                                      "time_s": 1e-5}) + "\n")
    for read in (read_jsonl, load_measurements, lambda q: list(read_records(q)), lambda q: read_llm_records([q])):
        with pytest.raises(InputError, match=hint) as info:
            read(path)
        assert (info.value.source, info.value.field, info.value.value) == (str(path), "line 2, kind", kind)


def test_every_committed_measurement_record_has_a_known_kind() -> None:
    """RECORD_KINDS lists every kind the committed datasets hold (a kind added by a runner must be listed)."""
    from validation.runners.records import read_measurement_records
    files = sorted(DATA_DIR.rglob("*.jsonl"))
    assert len(files) > 50
    kinds = {r.get("kind") for f in files for _, r in read_measurement_records(f, skip_bad=True)}
    assert {"coll", "meta", "llm_fsdp", "peer", "llm_iteration"} <= kinds


def test_load_measurements_dispatches_on_content(tmp_path: Path) -> None:
    text_file = tmp_path / "a.log"
    text_file.write_text(NEW_LAYOUT)
    json_file = tmp_path / "b.log"
    json_file.write_text(json.dumps(J_REPORT, indent=1))
    assert {p.op for p in load_measurements(text_file).points} == {"reduce_scatter"}
    loaded = load_measurements(json_file)
    assert {p.op for p in loaded.points} == {"all_gather"}
    assert loaded.meta["nccl_version"] == "2.28.9"


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_measurements(tmp_path / "nope.txt")


# --------------------------------------------------------------------------------------------
# the shipped datasets

PUBLIC = [n for n in list_datasets() if n.startswith("public/") and not n.startswith("public/llm/")]


def test_shipped_public_datasets_are_present() -> None:
    assert len(PUBLIC) >= 15
    assert all(n.endswith(".jsonl") for n in PUBLIC)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_dataset_parses_with_provenance(name: str) -> None:
    dataset = read_jsonl(data_path(name))
    assert dataset.points, name
    assert dataset.select() or all(p.in_place for p in dataset.points), "out-of-place points, or in-place only"
    meta = dataset.meta
    assert meta["tool"] == "nccl-tests" or meta["tool"].startswith("torch.distributed")
    assert meta["source"]["repo"] and meta["hardware"]
    hints = dict(meta.get("topology_by_variant") or {})
    for point in dataset.points:
        hint = hints.get(point.variant, meta["topology"])
        assert {"preset", "nodes", "gpus_per_node"} <= set(hint)
        assert point.world <= hint["nodes"] * hint["gpus_per_node"]
        assert point.time_s > 0 and point.size_bytes >= 0


# rows copied from the raw public files: (dataset, op, world, variant, size, time_us, algbw, busbw)
PUBLISHED_ROWS = [
    ("aws_2x_p5_16xH100_efa3200_allreduce", "all_reduce", 16, "default",
     1073741824, 4607.6, 233.04, 436.95),
    ("aws_2x_p5_16xH100_efa3200_allreduce", "all_reduce", 16, "default",
     17179869184, 66132, 259.78, 487.09),
    ("gcp_a3mega_2node_16xH100_tcpxo_allgather_dstack", "all_gather", 16, "default",
     8589934592, 42713, 201.11, 188.54),
    ("pcie_2x2080Ti_noP2P_autodl_allcollectives", "all_reduce", 2, "default",
     1048576, 279.5, 3.75, 3.75),
    ("pcie_2x2080Ti_noP2P_autodl_allcollectives", "all_to_all", 2, "default",
     1073741824, 116573, 9.21, 4.61),
    ("roce_L40S_2node_and_dgxH200_2node_socket_redhat", "all_reduce", 16, "dgxh200_2x8_socket",
     17179869184, 348875, 49.24, 92.33),
    ("stas00_1node_8xA100_allreduce_massaged", "all_reduce", 8, "default",
     2147483648, 16240, 132.23, 231.41),
]


@pytest.mark.parametrize("name, op, world, variant, size, time_us, algbw, busbw", PUBLISHED_ROWS)
def test_converted_public_data_keeps_published_numbers(
        name: str, op: str, world: int, variant: str, size: int, time_us: float, algbw: float,
        busbw: float) -> None:
    dataset = read_jsonl(data_path(f"public/{name}.jsonl"))
    (point,) = [p for p in dataset.select(op=op, world=world, variant=variant)
                if p.size_bytes == size]
    assert math.isclose(point.time_s * 1e6, time_us, rel_tol=1e-12)
    assert (point.algbw_GBps, point.busbw_GBps) == (algbw, busbw)


def test_roce_runs_carry_their_own_nccl_env() -> None:
    dataset = read_jsonl(data_path("public/roce_L40S_2node_and_dgxH200_2node_socket_redhat"))
    envs = {p.variant: dict(p.env) for p in dataset.points}
    assert envs["l40s_2x1_socket"]["NCCL_IB_DISABLE"] == "1"
    assert envs["l40s_2x2_roce"]["NCCL_IB_DISABLE"] == "0"
    assert all(env["NCCL_ALGO"] == "ring" for env in envs.values())


def test_h200_coll_world2_dataset() -> None:
    dataset = read_jsonl(data_path("h200x4_2026-11-26/coll_world2.jsonl"))
    assert dataset.meta["nccl_version"] == "2.28.9"
    assert set(dataset.meta["variants"]) == {"default", "nop2p", "socket"}
    assert {p.world for p in dataset.points} == {2}
    assert {p.variant for p in dataset.points} == {"default", "nop2p", "socket"}
    assert len(dataset.points) == 128


def test_h200_profile_and_tuning_table_are_shipped() -> None:
    assert read_jsonl(data_path("h200x4_2026-11-26/profile.jsonl")).points == ()
    first = data_path("h200x4_2026-11-26/nccl_tuning_world4.txt").read_text().splitlines()[0]
    assert "NCCL 2.28.9" in first


def test_data_path_by_stem_and_unknown_name() -> None:
    assert data_path("stas00_1node_8xA100_allreduce_massaged") == (
        DATA_DIR / "public" / "stas00_1node_8xA100_allreduce_massaged.jsonl")
    with pytest.raises(InputError, match="no such dataset"):
        data_path("no_such_thing")


def test_runtime_modules_do_not_read_the_shared_folder() -> None:
    for module in ("parsers.py", "data/__init__.py"):
        text = (Path(__file__).parent.parent / "validation" / module).read_text()
        assert "shared" not in text, module
