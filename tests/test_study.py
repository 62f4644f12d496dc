"""Studies: validation, grid order, serial == parallel == Dask, outputs, report, the plan command."""

from __future__ import annotations

import csv
import json
import math
import textwrap
from pathlib import Path

import pytest

from gpunetsim.cli import main
from simulator.core.errors import InputError
from gpunetsim.study import AXES, Point, StudySpec, evaluate, expand, load_study, run_points

SMALL = """
name: small
model: [resnet50, gpt2]
topology: dgx-h100
nodes: [1, 2]
bucket_cap_mb: [25, 100]
engine: closed
collectives: {op: all_reduce, min_bytes: 1M, max_bytes: 4M}
"""


def write(tmp_path: Path, text: str, name: str = "study.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


@pytest.fixture
def small(tmp_path):
    return load_study(write(tmp_path, SMALL))


@pytest.mark.parametrize("text, field, value", [
    ("model: gpt2\nnodes: [1, 0]\n", "nodes[1]", 0),
    ("model: gpt2\nnodes: [two]\n", "nodes[0]", "two"),
    ("model: gpt2\nengine: fast\n", "engine[0]", "fast"),
    ("model: gpt2\nalgo: [ring, butterfly]\n", "algo[1]", "butterfly"),
    ("model: gpt2\noversubscription: 0.5\n", "oversubscription[0]", 0.5),
    ("model: gpt2\nbucket_cap_mb: [-1]\n", "bucket_cap_mb[0]", -1),
    ("model: gpt2\nnic_bw: ['400 Gb/s', '400 furlongs']\n", "nic_bw[1]", "400 furlongs"),
    ("model: gpt2\ncolour: blue\n", "colour", "blue"),
    ("model: [gpt2, no-such-model.yaml]\n", "model[1]", "no-such-model.yaml"),
    ("model: gpt2\ntopology: [dgx-h100, dgx-z9000]\n", "topology[1]", "dgx-z9000"),
    ("model: gpt2\ncollectives: {op: all_reduce, max_bytes: lots}\n", "collectives.max_bytes", "lots"),
    ("model: gpt2\ncollectives: {op: gather}\n", "collectives.op", "gather"),
    ("model: gpt2\ncalibration: missing-calibration.json\n", "calibration", "missing-calibration.json"),
    ("model: gpt2\ngpu: z100\n", "gpu", "z100"),
    ("model: gpt2\ngpus: [4, 9]\n", "gpus", 9),          # was topology: gpus: ... (got 9) (got 'dgx-h100')
    ("model: gpt2\nnodes: 2\nnics: 100\n", "nics", 100),
])
def test_validation_error_names_file_field_and_value(tmp_path, text, field, value):
    p = write(tmp_path, text)
    with pytest.raises(InputError) as e:
        load_study(p)
    assert e.value.source == str(p)
    assert e.value.field == field
    assert e.value.value == value
    assert str(p) in str(e.value) and field in str(e.value)


def test_missing_model_is_named(tmp_path):
    with pytest.raises(InputError) as e:
        load_study(write(tmp_path, "nodes: [1]\n"))
    assert e.value.field == "model" and "missing" in str(e.value)


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    p = write(tmp_path, "model: [gpt2\nnodes: 1\n")
    with pytest.raises(InputError, match=r"study.yaml.*line"):
        load_study(p)


def test_scalar_means_list_of_one():
    spec = StudySpec(model="gpt2", nodes=4, nic_bw="200 Gb/s")
    assert spec.model == ["gpt2"] and spec.nodes == [4] and spec.nic_bw == ["200 Gb/s"]


def test_grid_order_is_nested_with_nodes_innermost(small):
    ddp = [p for p in small.points if p.kind == "ddp"]
    got = [(p.model, p.bucket_cap_mb, p.nodes) for p in ddp]
    assert got == [(m, b, n) for m in ("resnet50", "gpt2") for b in (25.0, 100.0) for n in (1, 2)]
    assert AXES[-1] == "nodes" and AXES[0] == "model"


def test_collective_points_follow_with_sizes_innermost(small):
    coll = [p for p in small.points if p.kind == "collective"]
    assert [(p.nodes, p.size_bytes) for p in coll] == [(n, s) for n in (1, 2) for s in (2**20, 2**21, 2**22)]
    assert [p.index for p in small.points] == list(range(len(small.points)))
    assert small.points[-1].kind == "collective"


def test_expansion_is_deterministic(tmp_path):
    assert load_study(write(tmp_path, SMALL, "a.yaml")).points == load_study(write(tmp_path, SMALL, "b.yaml")).points


def test_relative_files_resolve_from_the_study_folder(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "box.yaml").write_text(textwrap.dedent("""
        name: box
        nodes: [{name: gpu0}, {name: gpu1}]
        links: [{a: gpu0, b: gpu1, kind: nvlink, bandwidth: "100 GB/s"}]
        """))
    st = load_study(write(sub, "model: resnet50\ntopology: box.yaml\ngpu: h100\nengine: closed\n"))
    assert Path(st.points[0].topology) == sub / "box.yaml"
    row = evaluate(st.points[0])
    assert row["topology"] == "box.yaml" and row["total_gpus"] == 2


def test_topology_file_with_several_nodes_is_rejected(tmp_path):
    (tmp_path / "box.yaml").write_text(
        "nodes: [{name: gpu0}, {name: gpu1}]\nlinks: [{a: gpu0, b: gpu1, kind: nvlink, bandwidth: 1 GB/s}]\n")
    with pytest.raises(InputError) as e:
        load_study(write(tmp_path, "model: gpt2\ntopology: box.yaml\nnodes: [1, 2]\n"))
    assert e.value.field == "nodes"


def test_ddp_row_has_the_documented_columns(small):
    row = evaluate(small.points[1])
    for key in ("model", "nodes", "total_gpus", "bucket_cap_mb", "iteration_s", "samples_per_s",
                "scaling_efficiency", "forward_s", "backward_s", "optimizer_s", "exposed_comm_s", "limit",
                "explanation"):
        assert key in row
    assert row["total_gpus"] == 16
    parts = row["forward_s"] + row["backward_s"] + row["exposed_comm_s"] + row["optimizer_s"] + row["overhead_s"]
    assert math.isclose(parts, row["iteration_s"], rel_tol=1e-9)
    assert row["limit"] in row["explanation"]


def test_rows_carry_the_90pct_interval(small):
    """DDP rows carry iteration_lo_s/iteration_hi_s (simulator.training.ddp_intervals) and collective rows
    time_lo_s/time_hi_s (before: neither), in results.jsonl and results.csv."""
    ddp = evaluate(small.points[1])
    assert 0 < ddp["iteration_lo_s"] <= ddp["iteration_s"] < ddp["iteration_hi_s"]
    coll = evaluate(next(p for p in small.points if p.kind == "collective"))
    assert 0 < coll["time_lo_s"] < coll["time_s"] < coll["time_hi_s"]


def test_table_prints_the_interval_columns(small, capsys):
    from gpunetsim.study_cli import print_table
    row = evaluate(small.points[1])
    old = {k: v for k, v in row.items() if k not in ("iteration_lo_s", "iteration_hi_s")}   # an older results.jsonl
    print_table(small, [row, old])
    lines = capsys.readouterr().out.splitlines()
    head = next(x for x in lines if x.startswith("#configuration")).split()
    assert head[head.index("iter(ms)") + 1:head.index("iter(ms)") + 5] == ["90%", "lo", "90%", "hi"]
    new, resumed = (x.split() for x in lines[-2:])
    i = new.index(f"{row['iteration_s'] * 1e3:.2f}")          # iter(ms), then the interval's edges
    assert float(new[i + 1]) == pytest.approx(row["iteration_lo_s"] * 1e3, abs=0.01)
    assert float(new[i + 2]) == pytest.approx(row["iteration_hi_s"] * 1e3, abs=0.01)
    assert resumed[i + 1:i + 3] == ["-", "-"]


def test_collective_row_matches_run_collective(small):
    import topologies
    from simulator.network.closed_form import CostModel
    from simulator.network.run import run_collective
    p = next(p for p in small.points if p.kind == "collective" and p.nodes == 2)
    r = run_collective(CostModel(topologies.build("dgx-h100", nodes=2)), "all_reduce", p.size_bytes,
                       engine="closed")
    assert evaluate(p)["busbw_GBps"] == pytest.approx(r.busbw_GBps, rel=1e-12)


def test_algo_axis_pins_the_ddp_all_reduce_algorithm(tmp_path):
    st = load_study(write(tmp_path, "model: gpt2\nnodes: 2\nalgo: [ring, tree]\nengine: closed\n"))
    ring, tree = (evaluate(p) for p in st.points)
    assert ring["algo"] == "ring" and tree["algo"] == "tree"
    assert ring["iteration_s"] != tree["iteration_s"]


def test_des_and_closed_agree_on_default_parameters(tmp_path):
    st = load_study(write(tmp_path, "model: resnet50\nnodes: 2\nengine: [des, closed]\n"))
    des, closed = (evaluate(p) for p in st.points)
    assert des["iteration_s"] == pytest.approx(closed["iteration_s"], rel=1e-6)


def test_parallel_equals_serial(small):
    serial = run_points(small.points, workers=1, progress=False)
    parallel = run_points(small.points, workers=2, progress=False)
    assert parallel == serial
    assert [r["index"] for r in parallel] == list(range(len(small.points)))


def test_workers_below_one_is_an_input_error(small):
    with pytest.raises(InputError):
        run_points(small.points, workers=0, progress=False)


def test_dask_local_cluster_gives_identical_rows_in_order(small):
    distributed = pytest.importorskip("distributed")
    serial = run_points(small.points, workers=1, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        rows = run_points(small.points, scheduler=cluster.scheduler_address, progress=False)
    assert rows == serial


def test_bad_scheduler_address_is_an_input_error(small):
    pytest.importorskip("distributed")
    with pytest.raises(InputError) as e:
        run_points(small.points[:1], scheduler="not-an-address", progress=False)
    assert e.value.field == "--scheduler"


def test_sweep_writes_csv_jsonl_and_report(tmp_path, capsys):
    study = write(tmp_path, SMALL)
    out = tmp_path / "out"
    assert main(["sweep", str(study), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "resnet50" in text and "busbw" in text
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == len(load_study(study).points)
    with (out / "results.csv").open() as f:
        table = list(csv.DictReader(f))
    assert len(table) == len(rows)
    assert [r["kind"] for r in table] == [r["kind"] for r in rows]
    assert float(table[0]["iteration_s"]) == pytest.approx(rows[0]["iteration_s"], rel=1e-12)


def test_report_html_has_every_plot_title(small, tmp_path):
    from gpunetsim.report import TITLES, write_report
    rows = run_points(small.points, workers=1, progress=False)
    html = write_report(rows, tmp_path / "r.html", title="t").read_text()
    for title in TITLES.values():
        assert title in html
    assert html.count('class="plotly-graph-div"') == 5
    assert "<script src=\"http" not in html          # plotly.js inlined: works offline
    assert "rights reserved" in html or "plotly.js v" in html or "Plotly" in html


def test_report_without_collectives_leaves_busbw_out(small):
    from gpunetsim.report import TITLES, build_report
    rows = [evaluate(p) for p in small.points if p.kind == "ddp"]
    html = build_report(rows)
    assert TITLES["busbw"] not in html and TITLES["throughput"] in html


def test_sweep_input_error_exits_2_with_one_line(tmp_path, capsys):
    study = write(tmp_path, "model: gpt2\nnodes: [0]\n")
    assert main(["sweep", str(study), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nodes[0]" in err[0] and "study.yaml" in err[0]


def test_plan_runs_and_writes_the_three_files(tmp_path, capsys):
    out = tmp_path / "plan"
    assert main(["plan", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "engine=closed" in text and "gpt2" in text and "resnet50" in text
    assert {p.name for p in out.iterdir()} == {"report.html", "results.csv", "results.jsonl"}
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted({r["total_gpus"] for r in rows if r["kind"] == "ddp"}) == [8, 16, 32, 64, 128, 256]
    plans = [r for r in rows if r["kind"] == "search"]         # the LLM section: best plan per model and size
    assert [(r["model"], r["total_gpus"]) for r in plans] == \
        [(m, 8 * 2**i) for m in ("llama-3-8b", "llama-3-70b") for i in range(8)]
    assert [r["model"] for r in plans if not r["fits"]] == ["llama-3-70b"]     # 70B on 8 GPUs
    assert all(r["tp"] <= 8 and r["tp"] * r["pp"] * r["dp"] == r["total_gpus"] for r in plans if r["fits"])
    assert "# LLM plans" in text


def test_no_arguments_runs_plan(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([]) == 0
    assert (tmp_path / "gpunetsim-out" / "report.html").exists()


def test_point_is_hashable_and_picklable(small):
    import pickle
    p: Point = small.points[0]
    assert pickle.loads(pickle.dumps(p)) == p and hash(p) == hash(small.points[0])
    assert expand(StudySpec(model="gpt2"))[0].kind == "ddp"


def test_pcie_box_needs_an_explicit_gpu(tmp_path):
    with pytest.raises(InputError) as e:
        load_study(write(tmp_path, "model: bert-base\ntopology: pcie-gen4\n"))
    assert e.value.field == "gpu" and "set 'gpu'" in str(e.value)
    st = load_study(write(tmp_path, "model: bert-base\ntopology: pcie-gen4\ngpu: h100\nengine: closed\n"))
    assert evaluate(st.points[0])["gpu"] == "h100"
