"""validation.fsdp_pair and the FSDP runner's --pair-probe: each FSDP configuration with its own host probe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from simulator.core.errors import InputError
from validation import fsdp_pair as fp
from validation.runners import fsdp
from validation.runners.llm_sweep import TINY_SPECS

REPO = Path(__file__).resolve().parents[1]
FIRST, SECOND, THIRD, FOURTH = fp.PAIRED
PROBE_KEYS = ("median_s", "issue_forward_s", "issue_backward_s", "gpu_s", "hold_s", "copy_Bps", "unix_s")


def test_pair_probe_brackets_every_fsdp_point_in_its_own_record(tmp_path: Path) -> None:
    """``--pair-probe`` on CPU: every FSDP point carries a probe started before its steps and one after, the profile
    point none (no ``--issue``); the records read back as paired runs, one per FSDP point."""
    pytest.importorskip("torch")
    out = tmp_path / "pair.jsonl"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
                           "-m", "validation.runners.fsdp", "--specs", TINY_SPECS.split(";")[0], "--micro-batch", "2",
                           "--strategies", "no_shard,full_shard", "--iters", "2", "--warmup", "1", "--pair-probe",
                           "--backend", "gloo", "--device", "cpu", "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    recs = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    profile = next(r for r in recs if r["kind"] == "llm_profile")
    assert "model_issue_forward_s" not in profile and "pair_probe" not in profile
    points = [r for r in recs if r["kind"] == "llm_fsdp"]
    assert [r["strategy"] for r in points] == ["no_shard", "full_shard"]
    for r in points:
        assert r["pair_probe"] is True and "issue_forward_s" not in r     # the FSDP steps themselves: plain
        assert all(r[f"probe_{w}_{k}"] > 0 for w in fp.WHEN for k in PROBE_KEYS)
        start, end = r["steps_unix_s"]
        assert r["probe_before_unix_s"] <= start <= end <= r["probe_after_unix_s"]
    runs = fp.read_pairs([out])
    assert [r.point for r in runs] == [r["point"] for r in points]
    assert runs[0].issue_s[0] == pytest.approx(points[0]["probe_before_issue_forward_s"]
                                               + points[0]["probe_before_issue_backward_s"])
    assert not fsdp.parse_settings(["--specs", TINY_SPECS, "--out", "x.jsonl"]).pair_probe   # off unless asked


def test_files_without_pair_probes_are_named_not_read_as_empty() -> None:
    plain = REPO / "validation/data/h200x2_2026-11-27_fsdppair/fsdpissue_world2.jsonl"
    assert not fp.has_pairs(plain)
    with pytest.raises(InputError, match="pair-probe"):
        fp.read_pairs([plain])


def test_committed_paired_files_carry_a_copy_only_from_the_second_lease() -> None:
    for folder, copies in ((FIRST, False), (SECOND, True)):
        runs = fp.read_pairs(fp.pair_files(folder))
        assert len(runs) == 24                     # 4 configurations x 3 launches x 2 passes
        assert all((r.copy_Bps is not None) == copies for r in runs)
        assert all(0 < r.gap_s < 5 for r in runs)  # the two probes of a configuration seconds apart
    share = fp.lease_copy_Bps(SECOND) / 4.8e12
    assert share == pytest.approx(0.856, abs=0.01) and fp.lease_copy_Bps(FIRST) is None


def test_host_target_is_the_median_over_launches_of_the_two_probes_mean() -> None:
    runs = fp.read_pairs(fp.pair_files(FIRST)[:1])
    targets = fp.paired_host_targets(runs)
    assert len(targets) == 4
    point, target = next(iter(targets.items()))
    mine = sorted((r.issue_s[0] + r.issue_s[1]) / 2 for r in runs if r.point == point)
    assert target.measured_s == pytest.approx(mine[1]) and target.part == "host"


def test_paired_method_is_preferred_and_each_probe_moves_only_its_configuration() -> None:
    from validation.llm_blind import Method, lease_method, lease_methods, probe_fit
    from validation.llm_records import group_runs, read_llm_records

    path = fp.pair_files(FIRST)[0]
    records = read_llm_records([path])
    assert lease_method(path, records, 2) is Method.PAIRED_PROBE
    assert list(lease_methods(path, records, 2))[0] is Method.PAIRED_PROBE
    targets = fp.paired_host_targets(fp.read_pairs([path]))
    fit = probe_fit(records, 2)
    groups = [g for g in group_runs(records.runs) if g.first.runner == "fsdp"]
    base = fp.paired_predictor(targets, fit)
    slow_point = groups[0].point
    slower = fp.paired_predictor({k: replace(t, measured_s=t.measured_s * (1.5 if k == slow_point else 1.0))  # type: ignore[type-var]
                                  for k, t in targets.items()}, fit)
    for g in groups:
        before, after = base.iteration_s(g.first), slower.iteration_s(g.first)
        assert (after > before * 1.05) if g.point == slow_point else after == pytest.approx(before)


def test_copy_holds_mem_efficiency_where_the_probes_measured_one() -> None:
    from validation.llm_blind import Method, lease_methods
    from validation.llm_records import read_llm_records

    for folder, held in ((FIRST, False), (SECOND, True)):
        path = fp.pair_files(folder)[1]
        pred = lease_methods(path, read_llm_records([path]), 2)[Method.PAIRED_PROBE]()
        mems = {round(p.compute.mem_efficiency, 6) for p in pred.by_point.values()}  # type: ignore[attr-defined]
        if held:
            assert mems == {round(fp.paired_copy_Bps(fp.read_pairs([path])) / 4.8e12, 6)}
        else:                          # no copy of its own: the other leases' (fitted, it read 0.37-0.38; h14fsdp23)
            assert mems == {round(fp.other_leases_copy_Bps() / 4.8e12, 6)}
            assert fp.other_leases_copy_Bps() == fp.other_leases_copy_Bps(folder)   # its own lease measured none


@pytest.fixture(scope="module")
def report() -> tuple[list[str], dict[str, float]]:
    return fp.markdown_lines()


def test_report_scores_every_paired_file_and_says_where_the_target_holds(report: tuple) -> None:
    """Recorded 2026-11-27 (h14fsdp19): (d) 2.4 / 20.3% on the first lease's passes, 8.9 / 6.1% on the second's;
    fed the other pass's probes the first lease's first pass goes 2.4 -> 14.1% (the host drifted between passes).
    The third lease (h14fsdp20, measured after (d) was fixed: held out of it): 10.9 / 15.7%; the fourth (h14fsdp21,
    SHARD_GRAD_OP too, held out): 18.5%. With FSDP1's post-backward host work charged (h14fsdp21): 3.3 / 17.7,
    7.2 / 5.9, 9.3 / 14.7, 17.1%. With the first lease's mem_efficiency held at the other leases' copy (h14fsdp23):
    3.6 / 10.1, the rest unchanged."""
    lines, figs = report
    text = "\n".join(lines)
    files = [f"{folder} {f.name}" for folder in fp.PAIRED for f in fp.pair_files(folder)]
    d = [figs[f"{f} d"] for f in files]
    assert d == pytest.approx([3.6, 10.1, 7.2, 5.9, 9.3, 14.7, 17.1], abs=0.3)
    assert figs[f"{files[0]} d-other"] > 2 * figs[f"{files[0]} d"]
    assert figs["within_target"] == sum(x <= 8.0 for x in d)
    assert f"within 8% on {figs['within_target']} of 7 files" in text
    assert not any("d-copy-check" in k for k in figs)       # (d) holds the carried copy itself (h14fsdp23)
    assert "**missed**" in fp.target_line(figs)


def test_report_prints_the_probe_copies_spread_it_quotes(report: tuple) -> None:
    """The copies' spread is computed (the line said 'within 2%' typed; slowest to fastest they are 2.3% apart)."""
    from validation.bw_lease_spread import spread
    copies = [c for r in fp.read_pairs(fp.pair_files(SECOND)) for c in r.copy_Bps or ()]
    assert f"`{SECOND}`'s {len(copies)} probe copies {spread(copies) * 100:.1f}% apart" in "\n".join(report[0])


def test_the_first_lease_launches_follow_their_probes() -> None:
    """No model: on the first paired lease every configuration's iterations correlate with their own probes over
    its 6 launches (0.63-0.89 recorded), steeper on the host-bound hidden 2048 than on FULL_SHARD h4096."""
    t = {fp._short(x.point): x for x in fp.tracking(FIRST)}
    assert all(len(x.launches) == 6 and x.corr > 0.5 for x in t.values())
    assert t["FULL_SHARD h2048"].slope > 0.8 > 0.3 > t["FULL_SHARD h4096"].slope


def test_paired_method_needs_every_fsdp_configuration_paired(tmp_path: Path) -> None:
    """A file where one configuration has no ``--pair-probe`` fields (a launch without the flag) is not predicted
    by (d), which holds no predictor for that configuration (it raised KeyError): it takes the lease's next method."""
    from validation.llm_blind import Method, lease_methods
    from validation.llm_records import group_runs, read_llm_records

    source = fp.pair_files(FIRST)[0]
    recs = [json.loads(x) for x in source.read_text().splitlines() if x.strip()]
    first = next(r["point"] for r in recs if r.get("kind") == "llm_fsdp")
    stripped = [{k: v for k, v in r.items() if not (k.startswith("probe_") or k == "pair_probe")}
                if r.get("kind") == "llm_fsdp" and r["point"] == first else r for r in recs]
    path = tmp_path / source.parent.name / source.name
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in stripped))
    assert fp.has_pairs(source) and not fp.has_pairs(path)
    records = read_llm_records([path])
    methods = lease_methods(path, records, 2)
    assert Method.PAIRED_PROBE not in methods and Method.OTHER_PROBES in methods
    pred = methods[next(iter(methods))]()
    assert all(pred.iteration_s(g.first) > 0 for g in group_runs(records.runs) if g.first.runner == "fsdp")


def test_main_refuses_arguments_before_a_minute_of_fitting(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        fp.main(["--bogus"])
    assert exc.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err
