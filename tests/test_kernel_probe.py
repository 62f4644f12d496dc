"""The kernel probe runner (2 gloo processes on CPU), its trace reading and its settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.core.errors import InputError
from validation.runners.kernel_probe import kernel_stats, nccl_kernels, parse_settings, split_visits, visit_order
from tests.test_runners import records, run_module


def _kernel(name: str, ts_us: float, dur_us: float) -> dict:
    return {"ph": "X", "cat": "kernel", "name": name, "ts": ts_us, "dur": dur_us}


def test_nccl_kernels_keep_only_nccl_kernels_in_start_order() -> None:
    trace = {"traceEvents": [_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20.0, 5.0),
                             _kernel("nvjet_gemm", 5.0, 3.0),
                             {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel_nccl", "ts": 1.0, "dur": 2.0},
                             _kernel("ncclDevKernel_AllGather_RING_LL", 10.0, 4.0)]}
    ks = nccl_kernels(trace)
    assert [k[0] for k in ks] == ["ncclDevKernel_AllGather_RING_LL", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"]
    assert ks[0][1] == pytest.approx(10e-6) and ks[0][2] == pytest.approx(4e-6)


def _chain(start_s: float, n: int, dur_s: float, gap_s: float) -> list[tuple[str, float, float]]:
    return [("k", start_s + i * (dur_s + gap_s), dur_s) for i in range(n)]


def test_split_visits_by_counts_and_by_gaps() -> None:
    a, b = _chain(0.0, 3, 1e-5, 1e-6), _chain(1e-3, 2, 2e-5, 1e-6)
    assert split_visits(a + b, [3, 2]) == [a, b]
    # one kernel too many in the first visit: the cut falls at the long gap between the visits
    extra = _chain(0.0, 4, 1e-5, 1e-6)
    assert split_visits(extra + b, [3, 2]) == [extra, b]
    assert split_visits(a[:1], [3, 2]) is None


def test_kernel_stats_per_call() -> None:
    st = kernel_stats(_chain(0.0, 4, 10e-6, 2e-6), calls=4)
    assert st["kernel_s"] == pytest.approx(10e-6) and st["gap_s"] == pytest.approx(2e-6)
    assert st["span_s"] == pytest.approx((4 * 10e-6 + 3 * 2e-6) / 4) and st["kernels"] == 4
    # two kernels a call: the durations add up per call
    assert kernel_stats(_chain(0.0, 4, 10e-6, 0.0), calls=2)["kernel_s"] == pytest.approx(20e-6)


def test_visit_order_is_a_seeded_permutation() -> None:
    assert sorted(visit_order(10, 0, 3)) == list(range(10))
    assert visit_order(10, 0, 3) == visit_order(10, 0, 3) != visit_order(10, 0, 4)


@pytest.mark.parametrize("argv, field", [(["--reps", "0"], "reps"), (["--queue-us", "-1"], "queue-us"),
                                         (["--block-ms", "0"], "block-ms"),
                                         (["--ops", "all_to_all"], "ops"), (["--sizes", "0"], "sizes")])
def test_bad_settings_name_the_field(argv: list[str], field: str) -> None:
    with pytest.raises(InputError, match=field):
        parse_settings([*argv, "--out", "x"])


def test_probe_records_every_repetition_and_point(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "k.jsonl"
    run_module(["-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone", "-m",
                "validation.runners.kernel_probe", "--sizes", "4K,16K", "--reps", "2", "--warmup", "1",
                "--block-ms", "0.5", "--queue-us", "50", "--backend", "gloo", "--device", "cpu", "--out", str(out)])
    recs = records(out)
    assert recs[0]["kind"] == "meta" and recs[0]["runner"] == "kernel_probe"
    points = [r for r in recs if r["kind"] == "kernel_probe"]
    assert len(points) == 2 * 3 * 2                                  # reps x ops x sizes
    assert {(r["op"], r["bytes"]) for r in points} == {(op, b) for op in ("all_reduce", "all_gather", "reduce_scatter")
                                                        for b in (4096, 16384)}
    for rep in (0, 1):
        assert sorted(r["order"] for r in points if r["rep"] == rep) == list(range(6))
    assert all(len(r["rank_event_s"]) == 2 and min(r["rank_event_s"]) > 0 and r["iters"] >= 10 for r in points)
    assert all(r["kernels_matched"] is False and r["rank_kernel_s"] == [None, None] for r in points)


# ------------------------------------------------------------------ the report (validation.kernel_probe)


def _record(size_mib: int, event_us: float, kernel_us: float, host_us: float = 10.0, rep: int = 0,
            queue_us: float = 0.0) -> dict:
    s = 1e-6
    return {"kind": "kernel_probe", "variant": "v", "op": "all_reduce", "world": 2, "bytes": size_mib << 20,
            "rep": rep, "queue_us": queue_us, "kernels_matched": True, "rank_host_s": [host_us * s, host_us * s],
            "rank_event_s": [event_us * s, (event_us - 1) * s], "rank_prof_event_s": [event_us * s, event_us * s],
            "rank_kernel_s": [kernel_us * s, kernel_us * s]}


def test_level_takes_fast_levels_and_the_time_outside_the_kernels() -> None:
    from validation.kernel_probe import level

    lv = level([_record(16, 100.0 + i, 90.0 + i, rep=i) for i in range(11)])
    assert lv.event_s == pytest.approx(101e-6) and lv.kernel_s == pytest.approx(91e-6)   # 10th percentile of 100..110
    assert lv.outside_s == pytest.approx(10e-6) and lv.reps == 11 and not lv.queued


def test_probe_lines_put_a_kernel_step_in_the_kernel_column(tmp_path: Path) -> None:
    from validation.kernel_probe import probe_lines, read_probe

    # 64-256 MiB on 10 us + 1 us/MiB (event 3 us more); 16 MiB's kernel 8 us below its line, outside unchanged
    recs = [_record(m, 13.0 + m, 10.0 + m) for m in (64, 128, 256)] + [_record(16, 13.0 + 16 - 8, 10.0 + 16 - 8)]
    path = tmp_path / "k.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    (pl,) = probe_lines(read_probe([path]))
    row = pl.at_mib(16)
    assert row is not None and row.kernel_below_s == pytest.approx(-8e-6) and row.event_below_s == pytest.approx(-8e-6)
    assert row.level.outside_s == pytest.approx(3e-6) and not row.paced


def test_a_queued_point_is_never_host_paced() -> None:
    from validation.kernel_probe import ProbeRow, level

    slow_host = [_record(16, 50.0, 48.0, host_us=60.0)]
    assert ProbeRow(16 << 20, level(slow_host), 0.0, 0.0).paced
    queued = [_record(16, 50.0, 48.0, host_us=60.0, queue_us=100.0)]
    assert not ProbeRow(16 << 20, level(queued), 0.0, 0.0).paced


def test_committed_probe_puts_the_step_inside_the_ring_kernels_and_not_in_the_tree() -> None:
    from validation.kernel_probe import FOLDER, probe_lines, read_probe

    lines = {pl.key: pl for pl in probe_lines(read_probe(sorted(FOLDER.glob("kprobe_world*.jsonl"))))}
    for variant in ("default_q", "ring_simple_q"):
        row = lines[(variant, "all_reduce", 2)].at_mib(16)
        assert row is not None and row.kernel_below_s is not None and row.level.outside_s is not None
        assert row.kernel_below_s < -10e-6 and row.event_below_s < -10e-6     # deep in both
        assert row.kernel_below_s / row.event_below_s > 0.85                 # and mostly kernel
        assert row.level.outside_s < 3e-6 and not row.paced
    tree = lines[("tree_simple_q", "all_reduce", 2)].at_mib(16)
    assert tree is not None and tree.kernel_below_s is not None and abs(tree.kernel_below_s) < 3e-6


def test_committed_h200_probe_puts_the_step_inside_the_ring_kernels_too() -> None:
    """The H200 check launch (validation/data/h200x2_2026-11-28_kprobe): every queued ring call at 16 MiB runs below
    its 64-256 MiB line, the kernel carrying most of it, and its meta records carry the sleep rate measured."""
    import json

    from validation.data import DATA_DIR
    from validation.kernel_probe import probe_lines, read_probe

    files = sorted((DATA_DIR / "h200x2_2026-11-28_kprobe").glob("kprobe_world*.jsonl"))
    lines = {pl.key: pl for pl in probe_lines(read_probe(files))}
    assert {k[1] for k in lines} == {"all_reduce", "all_gather", "reduce_scatter"}
    for (variant, op, world), pl in lines.items():
        row = pl.at_mib(16)
        assert row is not None and row.kernel_below_s is not None and not row.paced
        assert row.event_below_s < -5e-6 and row.kernel_below_s / row.event_below_s > 0.85
    rates = [json.loads(s)["sleep_cycles_per_s"] for f in files for s in f.read_text().splitlines()
             if '"kind": "meta"' in s]
    assert rates and all(1.5e9 < r < 2.1e9 for r in rates)


@pytest.mark.parametrize("kernel_below_us, where", [(-9.0, "inside the NCCL kernel"), (-0.5, "outside the kernel"),
                                                    (-5.0, "partly in each")])
def test_verdict_says_where_the_step_lives(kernel_below_us: float, where: str) -> None:
    from validation.bw_lines import Line
    from validation.kernel_probe import ProbeLines, ProbeRow, level, verdict

    row = ProbeRow(16 << 20, level([_record(16, 50.0, 48.0)]), -10e-6, kernel_below_us * 1e-6)
    pl = ProbeLines(("v", "all_reduce", 2), Line(0.0, 0.0, 3), Line(0.0, 0.0, 3), (row,))
    assert where in verdict([pl])
