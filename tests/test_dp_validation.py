"""Gloo calibration and DataParallel comparison (validation.host_calibrate, validation.dp_compare)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simulator.collectives.params import Parameters, load_calibration
from validation.host_calibrate import HostPoint, HostPredictor, errors_pct, fit, read_points

DATA = Path(__file__).resolve().parents[1] / "validation" / "data"


def test_gloo_fit_recovers_known_parameters() -> None:
    truth = Parameters().with_values({"gloo.loopback_Bps": 2.5e9, "gloo.reduce_Bps": 12e9,
                                      "gloo.call_overhead_s": 45e-6, "gloo.step_latency_s.loopback": 40e-6})
    pred = HostPredictor("hgx-h200")
    pts = [HostPoint("all_reduce", 2, "cpu", s, 0.0, (0.0,)) for s in (4096, 2**16, 2**20, 2**24, 2**28)]
    times = pred.predict(pts, truth)
    pts = [HostPoint(p.op, p.world, p.tensors, p.size_bytes, t, (t,)) for p, t in zip(pts, times)]
    fitted = fit(pts, pred)
    assert np.median(errors_pct(pts, pred.predict(pts, fitted))) < 2.0
    four = [HostPoint("all_reduce", 4, "cpu", 2**28, 0.0, (0.0,))]
    # the bandwidth regime on 4 processes follows from the fitted per-byte terms
    assert pred.predict(four, fitted)[0] == pytest.approx(pred.predict(four, truth)[0], rel=0.1)


def test_read_points_medians_over_launches(tmp_path: Path) -> None:
    f = tmp_path / "g.jsonl"
    rows = [{"kind": "meta"}] + [{"kind": "coll", "backend": "gloo", "device": "cpu", "op": "all_reduce",
                                  "world": 2, "bytes": 4096, "time_s": t, "variant": f"cpu-L{i}"}
                                 for i, t in enumerate((1e-4, 3e-4, 2e-4))]
    rows.append({"kind": "coll", "backend": "nccl", "op": "all_reduce", "world": 2, "bytes": 4096, "time_s": 1.0})
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (p,) = read_points([f])
    assert p.time_s == pytest.approx(2e-4) and p.spread_pct == pytest.approx(100.0)


def _committed_dp():
    folders = sorted(DATA.glob("*/dp_world2.jsonl"))
    if not folders:
        pytest.skip("no DataParallel dataset committed")
    from validation.dp_compare import read_dp
    return read_dp(folders[-1:])


def test_dp_records_read_and_predicted() -> None:
    from validation.dp_compare import predict_dp
    data = _committed_dp()
    assert {d.model for d in data} == {"resnet50", "bert-base", "gpt2", "mlp"}
    for d in data:
        assert set(d.dp_s) == {1, 2} and 2 in d.ddp_s and len(d.dp_s[2]) >= 2
        r = predict_dp(d, 2, load_calibration("h200-dataparallel"))
        assert r.iteration_s >= r.single_gpu_iteration_s


def test_cost_models_are_kept_by_their_builder() -> None:
    """A host fit's trials (only ``dp.`` keys move) share one cost model; another collective parameter or GPU count
    builds another; and the cache is the builder's (``dp_compare.cost_model``), not a module dict others fill."""
    import validation.dp_compare as dc
    params = load_calibration("h200-dataparallel")
    d = _committed_dp()[0]
    first = dc.model_for(d, 2, params)
    assert dc.model_for(d, 2, params.nudged("dp.thread_s", 2 * params["dp.thread_s"])) is first
    assert dc.model_for(d, 2, params.nudged("link_efficiency.nvlink", 0.5)) is not first
    assert dc.model_for(d, 4, params) is not first
    assert dc.cost_model.cache_info().maxsize is not None        # bounded


def test_predictions_are_kept_by_their_data_and_go_with_it() -> None:
    """Review s17 #12: a DataParallel prediction is made once per data, GPUs and parameter values and kept by the data
    (no module-level memo keyed by id that keeps every data read alive until it fills up)."""
    import gc
    import weakref
    from dataclasses import replace

    from validation.dp_compare import predict_dp
    params = load_calibration("h200-dataparallel")
    d = _committed_dp()[0]
    first = predict_dp(d, 2, params)
    assert predict_dp(d, 2, params) is first                     # made once
    other = replace(d, profile=replace(d.profile, batch_size=2 * d.profile.batch_size))
    assert predict_dp(other, 2, params) is not first             # another data, its own prediction
    assert predict_dp(other, 2, params) != first
    gone = weakref.ref(other)
    del other
    gc.collect()
    assert gone() is None                                        # nothing else holds the data


def _diagnosed_dp():
    from validation.dp_compare import read_dp
    folders = [f for f in sorted(DATA.glob("*/dp_world4.jsonl"))]
    data = [d for d in read_dp(folders[-1:]) if d.has_diagnostics and d.persistent_host] if folders else []
    if not data:
        pytest.skip("no DataParallel dataset with thread diagnostics committed")
    return data


def test_dataparallel_fit_on_two_gpu_steps_predicts_four() -> None:
    """Regression: on the campaign that measured every thread diagnostic on its own host (4x H100),
    the host keys fitted on every model's 2-GPU breakdown steps (never on iteration times) predict
    the iterations on 2 and 4 GPUs within the issue's 15% median (docs/accuracy.md section 6), and
    the fit reproduces the steps it was fitted on."""
    from validation.dp_compare import FIT_PHASES, PAIR_DIAGNOSTICS, fit_host, measured_phases, predict_dp, \
        predicted_phases, read_dp
    folder = DATA / "h100x4_2026-11-26i"
    if not folder.exists():
        pytest.skip("no campaign with its own two-thread diagnostic committed")
    data = read_dp(sorted(folder.glob("dp_world*.jsonl")))
    assert all(d.has_diagnostics and all(k in dict(d.profile.extras) for k in PAIR_DIAGNOSTICS) for d in data)
    base = load_calibration("h200-nvlink-ddp")
    fitted = fit_host(data, 2, base)
    for g in (2, 4):
        errs = [abs(predict_dp(d, g, fitted).iteration_s / d.dp_median(g) - 1) for d in data]
        assert np.median(errs) <= 0.15, (g, errs)
    steps = [abs(predicted_phases(predict_dp(d, 2, fitted))[k] / measured_phases(d, 2)[k] - 1)
             for d in data for k in FIT_PHASES]
    assert np.median(steps) <= 0.15


def test_borrowed_pair_keeps_the_donors_share() -> None:
    """A campaign that measured its own fresh/warm thread costs but not the two-thread pair borrows
    the pair's *share*: the donor's queued share, whatever the two hosts' speeds."""
    from dataclasses import replace

    from simulator.training.dataparallel import DPFacts
    from validation.dp_compare import PAIR_DIAGNOSTICS, borrow_diagnostics
    ex = {"forward_fresh_thread_host_s": 0.06, "forward_warm_thread_host_s": 0.01, "forward_ops": 100,
          "forward_fresh_pair_host_s": 0.09, "forward_warm_pair_host_s": 0.015}    # cold 0.05, share 0.5
    d = _diagnosed_dp()[0]
    donor = replace(d, profile=replace(d.profile, extras=tuple(ex.items())), source="donor")
    mine = {k: v for k, v in ex.items() if k not in PAIR_DIAGNOSTICS} | {"forward_fresh_thread_host_s": 0.03}
    borrower = replace(d, profile=replace(d.profile, extras=tuple(mine.items())), source="me")
    got = borrow_diagnostics([borrower], [donor])[0]
    facts = DPFacts.from_workload(got.profile, 0.0)
    assert facts.cold_s == pytest.approx(0.02) and facts.cold_lock_share == pytest.approx(0.5)
    assert got.diagnostics_from == "donor" and got.borrowed == PAIR_DIAGNOSTICS


def test_host_lock_queue_alone_predicts_more_threads() -> None:
    """Regression: the queue half of the law (persistent threads, no fresh-thread cost), with the
    hand-off cost fitted on 2 GPUs, predicts 3 and 4 GPUs within 25% median."""
    from validation.dp_accuracy import _queue_lines
    lines = _queue_lines([(DATA / "x", _diagnosed_dp())])
    summary = next(x for x in lines if x.startswith("Median error of the queue alone"))
    figures = [float(t.rstrip("%,")) for t in summary.split() if t.rstrip("%,").replace(".", "").isdigit()
               and t.endswith(("%", "%,"))]
    assert figures and max(figures) <= 25.0


def test_diagnostics_are_borrowed_by_model_and_batch() -> None:
    from dataclasses import replace

    from validation.dp_compare import DIAGNOSTICS, borrow_diagnostics
    data = _diagnosed_dp()
    bare = [replace(d, profile=replace(d.profile, extras=tuple((k, v) for k, v in d.profile.extras
                                                                 if k not in DIAGNOSTICS))) for d in data]
    assert not any(d.has_diagnostics for d in bare)
    back = borrow_diagnostics(bare, data)
    assert all(d.has_diagnostics and d.diagnostics_from == data[0].source for d in back)
    assert [dict(d.profile.extras)["forward_ops"] for d in back] == [dict(d.profile.extras)["forward_ops"] for d in data]
    other_batch = [replace(d, profile=replace(d.profile, batch_size=(d.profile.batch_size or 1) + 1)) for d in bare]
    assert not any(d.has_diagnostics for d in borrow_diagnostics(other_batch, data))


def test_mpi_fit_moves_mpi_keys_only() -> None:
    truth = Parameters().with_values({"mpi.shm_Bps": 6e9, "mpi.call_overhead_s": 8e-6})
    pred = HostPredictor("hgx-h200", "mpi")
    pts = [HostPoint("all_reduce", 4, "cpu", s, 0.0, (0.0,)) for s in (4096, 2**20, 2**26)]
    pts = [HostPoint(p.op, p.world, p.tensors, p.size_bytes, t, (t,)) for p, t in zip(pts, pred.predict(pts, truth))]
    fitted = fit(pts, pred)
    assert all(k.startswith("mpi.") for k in fitted.diff())
    assert np.median(errors_pct(pts, pred.predict(pts, fitted))) < 3.0


def test_thread_measurements_are_read_and_tabled(tmp_path: Path) -> None:
    """Records of the dpdiag runner (fresh/persistent thread fields) reach the accuracy table."""
    import json

    from validation.dp_accuracy import _thread_lines
    from validation.dp_compare import read_dp
    src = sorted(DATA.glob("*/dp_world2.jsonl"))
    if not src:
        pytest.skip("no DataParallel dataset committed")
    out = []
    for line in src[-1].read_text().splitlines():
        r = json.loads(line)
        if r.get("model") not in (None, "mlp"):
            continue
        if r.get("kind") == "dp_profile":
            r["profile"].update(forward_fresh_thread_host_s=2e-3, forward_warm_thread_host_s=6e-4, forward_ops=18)
        if r.get("kind") == "dp" and r["gpus"] == 2:
            r.update(persistent_apply_host_s=1e-3, persistent_apply_s=1.1e-3)
        out.append(json.dumps(r))
    f = tmp_path / "dp_world2.jsonl"
    f.write_text("\n".join(out) + "\n")
    (d,) = read_dp([f])
    assert d.persistent_host == {2: pytest.approx(1e-3)}
    assert dict(d.profile.extras)["forward_fresh_thread_host_s"] == pytest.approx(2e-3)
    lines = _thread_lines([(tmp_path, [d])])
    row = next(x for x in lines if x.startswith("| mlp"))
    assert "2.00" in row and "0.60" in row and "/ 1.00" in row


def test_gloo_cpu_four_processes_predicted_from_two() -> None:
    """Regression: Gloo all-reduce on CPU tensors, calibrated on 2 processes, predicts 4 processes
    (both machines) within the issue's 15% median over 4 KiB-256 MiB."""
    from validation.dp_accuracy import datasets, gloo_lines
    folders = datasets()
    if not folders:
        pytest.skip("no Gloo dataset committed")
    _, summary, _ = gloo_lines(folders)
    assert summary["cpu4"] <= 15.0 and summary["cpu4_bw"] <= 10.0


def test_gloo_other_process_counts_are_scored(tmp_path: Path) -> None:
    """Gloo runs on process counts other than 2 and 4 (gpu_campaign.sh gloo38) get their own figure."""
    import json

    from validation.dp_accuracy import datasets, gloo_lines
    folders = [f for f in datasets() if list(f.glob("gloo_world2.jsonl"))]
    if not folders:
        pytest.skip("no Gloo dataset committed")
    recs = [json.loads(x) for x in (folders[0] / "gloo_world4.jsonl").read_text().splitlines()]
    extra = tmp_path / "zz_later"
    extra.mkdir()
    (extra / "gloo_world3.jsonl").write_text("".join(json.dumps({**r, "world": 3}) + "\n" for r in recs))
    lines, summary, _ = gloo_lines([folders[0], extra])
    assert "cpu_other" in summary and summary["cpu_other"] >= 0
    assert any(line.startswith("| zz_later | cpu | 3 | predicted") for line in lines)


def test_backward_split_is_read_and_the_reduce_grows_per_gpu() -> None:
    """The runner's backward split (replicas' backward alone, reduce onto GPU 0 alone) is read per
    GPU count; on the committed 4x H100 campaign the reduce's host time per coalesced chunk grows
    with the GPUs, as one process issues every GPU's part of each NCCL call."""
    from simulator.training.dataparallel import DPFacts, chunk_sizes
    from validation.dp_compare import read_dp
    folder = DATA / "h100x4_2026-11-26i"
    if not folder.exists():
        pytest.skip("no campaign with the backward split committed")
    data = read_dp(sorted(folder.glob("dp_world*.jsonl")))
    assert data and all(d.backward_parts and set(d.backward_parts) == {2, 3, 4} for d in data)
    per_chunk = {}
    for d in data:
        f = DPFacts.from_workload(d.profile, 0.0)
        chunks = len(chunk_sizes(f.tensor_bytes[:f.param_tensors]))
        per_chunk[d.model] = [d.backward_parts[g]["reduce_host_s"] / chunks for g in (2, 4)]
    assert np.median([b / a for a, b in per_chunk.values()]) > 1.3


def test_ratio_pairs_each_launch_with_its_own_ddp(tmp_path: Path) -> None:
    """The measured DataParallel-over-DDP ratio is taken per launch (both from the same launch) and
    its launch range reported; a launch without its DDP record pairs with nothing."""
    from validation.dp_compare import launch_range_pct, read_dp
    prof = {"name": "m", "forward_s": 1e-3, "backward_s": 2e-3, "optimizer_s": 0.0, "batch_size": 4,
            "params": [{"name": "w", "bytes": 4096, "grad_ready_s": 1e-3}]}
    rows = []
    for i, (dp, ddp) in enumerate(((0.010, 0.002), (0.012, 0.003), (0.030, None))):
        lid = f"L{i}"
        rows.append({"kind": "dp_profile", "model": "m", "launch_id": lid, "profile": prof})
        rows.append({"kind": "dp", "model": "m", "gpus": 2, "launch_id": lid, "median_s": dp})
        if ddp is not None:
            rows.append({"kind": "ddp", "model": "m", "world": 2, "launch_id": lid, "median_s": ddp,
                         "bucket_cap_mb": 25.0})
    f = tmp_path / "dp_world2.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (d,) = read_dp([f])
    assert d.ratio_s == {2: (5.0, 4.0)}
    assert d.ratio_spread_pct(2) == pytest.approx(100 * 1.0 / 4.5)
    assert d.ddp_spread_pct(2) == pytest.approx(100 * 0.001 / 0.0025)
    assert np.isnan(launch_range_pct(()))


def test_ratio_never_pairs_records_without_a_launch_id(tmp_path: Path) -> None:
    """Records without a launch id pair with nothing (they used to pair under the key 'None' with
    whichever DataParallel record came last, mixing launches); their medians still count."""
    from validation.dp_compare import read_dp
    prof = {"name": "m", "forward_s": 1e-3, "backward_s": 2e-3, "optimizer_s": 0.0, "batch_size": 4,
            "params": [{"name": "w", "bytes": 4096, "grad_ready_s": 1e-3}]}
    rows = [{"kind": "dp_profile", "model": "m", "launch_id": "L0", "profile": prof},
            {"kind": "dp", "model": "m", "gpus": 2, "median_s": 0.010},
            {"kind": "dp", "model": "m", "gpus": 2, "median_s": 0.030},
            {"kind": "ddp", "model": "m", "world": 2, "median_s": 0.002, "bucket_cap_mb": 25.0}]
    f = tmp_path / "dp_world2.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (d,) = read_dp([f])
    assert not d.ratio_s
    assert d.dp_s == {2: (0.010, 0.030)} and d.ddp_s == {2: (0.002,)}


def test_ddp_and_the_ratio_use_the_steady_iterations(tmp_path: Path) -> None:
    """DDP's measured iteration (and the ratio) is the median over the iterations DDP's runtime-stats
    sampling did not hold back (validation.ddp_logger): with warmup 3, the last 2 of 10."""
    from validation.dp_compare import read_dp
    prof = {"name": "m", "forward_s": 1e-3, "backward_s": 2e-3, "optimizer_s": 0.0, "batch_size": 4,
            "params": [{"name": "w", "bytes": 4096, "grad_ready_s": 1e-3}]}
    rows = [{"kind": "dp_profile", "model": "m", "launch_id": "L0", "profile": prof},
            {"kind": "dp", "model": "m", "gpus": 2, "median_s": 0.010, "launch_id": "L0"},
            {"kind": "ddp", "model": "m", "world": 2, "median_s": 0.004, "bucket_cap_mb": 25.0, "launch_id": "L0",
             "warmup": 3, "iter_times_s": [0.004] * 8 + [0.002, 0.002]}]
    f = tmp_path / "dp_world2.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (d,) = read_dp([f])
    assert d.ddp_s == {2: (pytest.approx(0.002),)}
    assert d.ratio_s == {2: (pytest.approx(5.0),)}


def test_borrowed_diagnostics_are_the_median_of_the_nearest_donors() -> None:
    """Every donor of the nearest rank counts: the pair's share is the median of their (clipped)
    shares, the fresh/warm costs the median key by key; a farther donor (another GPU) is ignored."""
    from dataclasses import replace

    from simulator.training.dataparallel import DPFacts
    from validation.dp_compare import DIAGNOSTICS, PAIR_DIAGNOSTICS, borrow_diagnostics
    d = _diagnosed_dp()[0]

    def with_extras(ex: dict, source: str, gpu: str):
        return replace(d, profile=replace(d.profile, extras=tuple(ex.items())), source=source, gpu=gpu)
    donors = [with_extras({"forward_fresh_thread_host_s": 0.06, "forward_warm_thread_host_s": 0.01,
                           "forward_ops": 100, "forward_fresh_pair_host_s": 0.01 + 0.05 * (1 + share),
                           "forward_warm_pair_host_s": 0.01}, f"donor{i}", "GPU A")
              for i, share in enumerate((0.2, -0.3, 0.6))]               # clipped: 0.2, 0.0, 0.6 -> 0.2
    donors.append(with_extras(dict(dict(donors[0].profile.extras), forward_fresh_thread_host_s=0.5), "far", "GPU B"))
    bare = {k: v for k, v in dict(d.profile.extras).items() if k not in DIAGNOSTICS + PAIR_DIAGNOSTICS}
    got = borrow_diagnostics([with_extras(bare, "me", "GPU A")], donors)[0]
    facts = DPFacts.from_workload(got.profile, 0.0)
    assert facts.cold_s == pytest.approx(0.05) and facts.cold_lock_share == pytest.approx(0.2)
    assert got.diagnostics_from == "donor0, donor1, donor2"


def test_borrowed_diagnostics_move_to_the_borrowers_host_pace() -> None:
    """Borrowed thread diagnostics are host times: a donor whose own forward launch (forward_host_s)
    took twice the borrower's lends them halved (operator counts and the queued share unscaled)."""
    from dataclasses import replace

    from simulator.training.dataparallel import DPFacts
    from validation.dp_compare import DIAGNOSTICS, PAIR_DIAGNOSTICS, borrow_diagnostics
    d = _diagnosed_dp()[0]
    bare = {k: v for k, v in dict(d.profile.extras).items() if k not in DIAGNOSTICS + PAIR_DIAGNOSTICS}
    bare["forward_host_s"] = 0.005
    donor_ex = {"forward_host_s": 0.010, "forward_fresh_thread_host_s": 0.06, "forward_warm_thread_host_s": 0.01,
                "forward_ops": 100, "forward_fresh_pair_host_s": 0.01 + 0.05 * 1.2, "forward_warm_pair_host_s": 0.01}
    donor = replace(d, profile=replace(d.profile, extras=tuple(donor_ex.items())), source="donor", gpu="GPU A")
    me = replace(d, profile=replace(d.profile, extras=tuple(bare.items())), source="me", gpu="GPU A")
    got = dict(borrow_diagnostics([me], [donor])[0].profile.extras)
    assert got["forward_fresh_thread_host_s"] == pytest.approx(0.03)
    assert got["forward_warm_thread_host_s"] == pytest.approx(0.005) and got["forward_ops"] == 100
    facts = DPFacts.from_workload(borrow_diagnostics([me], [donor])[0].profile, 0.0)
    assert facts.cold_s == pytest.approx(0.025) and facts.cold_lock_share == pytest.approx(0.2)


def test_ratio_on_the_held_out_host_stays_under_todays_figure() -> None:
    """Accuracy regression: the DDP-vs-DataParallel ratio on the 2x H100 host measured after the laws
    were written (every thread diagnostic its own), host keys fitted on the other models' 2-GPU steps:
    median 8.4% today against DDP's steady iterations (6.0% against the median of all timed ones, 8 of
    whose 10 DDP held back: validation.ddp_logger; docs/accuracy.md section 6); the bound sits just above it."""
    from validation.dp_compare import fit_host, predict_ddp, predict_dp, read_dp
    folder = DATA / "h100x2_2026-11-26_dp"
    if not folder.exists():
        pytest.skip("held-out DataParallel campaign not committed")
    data = read_dp(sorted(folder.glob("dp_world*.jsonl")))
    base = load_calibration("h200-nvlink-ddp")
    errs = []
    for d in data:
        fitted = fit_host([o for o in data if o is not d], 2, base)
        predicted = predict_dp(d, 2, fitted).iteration_s / predict_ddp(d, 2, base)
        errs.append(abs(predicted / (d.dp_median(2) / d.ddp_median(2)) - 1))
    assert len(errs) == 4 and np.median(errs) <= 0.09


def test_the_other_machine_is_named_and_never_a_held_out_host():
    """'Other machine' was the first other folder by name, so the held-out h100x2_2026-11-26_dpddp fitted the
    host keys that predict h100x2_2026-11-26_dp: held out now means never lending that fit (#15)."""
    from validation.dp_accuracy import HELD_OUT, datasets, other_machine
    names = [f.name for f in datasets() if any(f.glob("dp_world[2-9].jsonl"))]     # multi-GPU campaigns
    assert set(HELD_OUT) <= set(names)
    for n in names:
        o = other_machine(n, names)
        assert o is not None and o != n and o not in HELD_OUT
    assert other_machine("h100x2_2026-11-26_dp", names) == "h100x4_2026-11-26_dp"


def test_held_out_says_which_columns_use_the_campaigns_own_data():
    """'Nothing fitted on them' contradicted the leave-one-out and own-host columns, which use the campaign's
    other models and its own probe (review s13 #15)."""
    from validation.dp_accuracy import HELD_OUT_MEANING
    assert "nothing fitted" not in HELD_OUT_MEANING
    for column in ("*datasheet*", "*other machine*", "*leave-one-out* fits the host keys on its other models",
                   "*own host* measures the DDP keys on its own compute probe"):
        assert column in HELD_OUT_MEANING


def test_calibrated_dataparallel_band_rotates_the_fit_and_judges_without_a_fit_on_the_left_out():
    """Review s15 #15: the calibrated band was the spread of one machine's fit (the first campaign by name) predicting
    every other dataset, and that machine's left-out check still read predictions made with its own fit. Now every
    campaign not held out predicts every other one, and a dataset left out is judged without a fit on it."""
    from validation import dp_accuracy as da
    from validation import iteration_bands as ib
    names = ["a", "b", "c", da.HELD_OUT[0]]
    assert da.fitters("a", names) == ["b", "c"] and da.fitters(da.HELD_OUT[0], names) == ["a", "b", "c"]
    pairs = {("b", "a"): [0.0], ("c", "a"): [0.01], ("a", "b"): [5.0], ("c", "b"): [0.02], ("a", "c"): [5.0],
             ("b", "c"): [-0.01]}
    assert da.without_fits_on(pairs, "a") == {"b": [0.02], "c": [-0.01]}
    groups = {n: [v for (f, m), vs in pairs.items() if m == n for v in vs] for n in ("a", "b", "c")}
    rows = {r[0]: r for r in ib.lodo_rows(groups, lambda n: da.without_fits_on(pairs, n))}
    assert rows["a"][3] < 5 and rows["a"][4] == 100         # a's own fit (the 5.0s) never judges a
    plain = {r[0]: r for r in ib.lodo_rows(groups)}
    assert plain["a"][3] > 100                               # the old check read them
    real = dict(zip("abc", ("h100x2_2026-11-26_dp", "h100x4_2026-11-26i", "h200x4_2026-11-26e")))
    pairs = {(real[f], real[m]): v for (f, m), v in pairs.items()}
    groups = {real[n]: v for n, v in groups.items()}
    band = da.dp_band_lines({"datasheet": groups, "calibrated": groups}, False, pairs)
    assert any("without the predictions of a fit on it" in line for line in band)
    assert "| h100x2_2026-11-26_dp | 2 | " in "\n".join(band)


def test_shipped_calibrated_dataparallel_band_has_every_pair():
    from simulator.training.iteration_bands import DATAPARALLEL_FILE, bands
    b = bands(DATAPARALLEL_FILE)["calibrated"]
    assert "every pair" in b["source"] and sum(b["datasets"].values()) > 2 * sum(
        bands(DATAPARALLEL_FILE)["datasheet"]["datasets"].values())
