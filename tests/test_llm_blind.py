"""The FSDP model's blind test on 4x H100 (committed data, deterministic): an accuracy regression
that pins the figures docs/accuracy.md reports and what each part is fitted on."""

from __future__ import annotations

import json

import pytest

from simulator.collectives.params import SHIPPED_DIR, Parameters, load_calibration
from validation.calibrate import calibrate
from validation.compare import Predictor, Topo, dataset_points
from validation.llm_blind import (CALIBRATION, COPY_PROBE, DATA, FOLDER, HOST_FROM, ISSUE_PROBES, blind_file,
                                  blind_predictor, section)
from validation.llm_records import read_llm_records
from validation.parsers import read_jsonl


@pytest.fixture(scope="module")
def blind() -> tuple[list[str], dict]:
    return section()


def test_nothing_is_fitted_on_the_h100_fsdp_runs() -> None:
    assert all(folder.startswith("h200") for folder, _, _ in HOST_FROM.values())
    shipped = json.loads((SHIPPED_DIR / f"{CALIBRATION}.json").read_text())
    assert shipped["fitted_on"] == [f"validation/data/{FOLDER}/llm_coll_world2.jsonl"]
    for world in (2, 4):
        records = read_llm_records([blind_file(world)])
        assert records.runs[0].gpu == "NVIDIA H100 80GB HBM3"
        assert {r.strategy for r in records.runs} == {"no_shard", "full_shard"} and len(records.runs) == 12


def test_shipped_calibration_is_the_fit_on_the_2gpu_sweep() -> None:
    points = dataset_points(read_jsonl(DATA / FOLDER / "llm_coll_world2.jsonl"))
    fit = calibrate(points, Predictor(Topo("dgx-h100"), Parameters()), name=CALIBRATION)
    stored = json.loads((SHIPPED_DIR / f"{CALIBRATION}.json").read_text())["params"]
    refit, shipped = fit.params.diff(), load_calibration(CALIBRATION).diff()
    assert set(refit) == set(stored) == set(shipped)
    for key, value in stored.items():
        assert refit[key] == pytest.approx(value, rel=1e-6, abs=1e-15)
        assert shipped[key] == pytest.approx(value, rel=1e-12, abs=1e-18)


def test_blind_figures(blind: tuple[list[str], dict]) -> None:
    lines, figs = blind
    # recorded 2026-11-26: 24.8% / 23.5% median, p90 32.3% / 27.3%, every prediction too fast; with the
    # memory-traffic charge of collectives beside FSDP's backward (#14): 16.6% / 15.5%; with the charge only
    # while beside and the compute pinned by the issue probes and the measured copy bandwidth: 4.8% / 8.3%
    # (4.5% / 7.7% with the 2-GPU probe alone, 5.3% / 9.2% with the 4-GPU one alone); with the backward's host
    # issue from its kernel count (1.4 forwards, was 2) and the host work scaled by the host's block issue time:
    # 4.2% / 8.0%; with the cross-entropy backward's 22 bytes per logit (was 8), which moves the 4x H200 host fit's
    # split between FSDP's per-unit and per-gather work (0.49 / 0.46 -> 0.61 / 0.33 ms): 4.2% / 9.0%, and on 4 GPUs
    # NO_SHARD h4096 and FULL_SHARD h4096 (measured 18.0 / 20.7 ms) change places (Spearman 1.0 -> 0.8); with
    # h100-nvlink-2gpu refitted under the host issue's overlap (#10, simulator/network/host_overlap.py): 4.7% / 9.5%;
    # with disturbed profile launches and iterations left out (validation.profile_launches: this lease's hidden-4096
    # profile 6.88 -> 6.29 ms on 2 GPUs, 6.32 -> 6.17 on 4, and the H200 host fits' own): 4.6% / 8.5%; with the TP
    # blocks' own host term, the pipeline stages as compute targets and the host running ahead (the H200 host fits
    # move, and the host work is carried in the TP block issue time those fits measure): 3.6% / 4.4%; with FSDP1's
    # post-backward hook's kernels and reduction call charged to the backward's host (h14fsdp21): 2.8% / 4.9%
    for world, (median, p90, rho) in {2: (2.8, 7.2, 0.99), 4: (4.9, 10.1, 0.79)}.items():
        s = figs[f"world{world}"]
        assert s["n"] == 4
        assert s["median_abs_pct"] == pytest.approx(median, abs=0.5)
        assert s["p90_abs_pct"] == pytest.approx(p90, abs=0.5)
        assert s["spearman"] >= rho
    text = "\n".join(lines)
    assert "never on these runs" in text and "scaled by" in text and "h100-nvlink-2gpu" in text and "held out" in text
    assert all(folder in text for folder, _ in ISSUE_PROBES) and COPY_PROBE[0] in text


def test_issue_probe_and_copy_bandwidth_pin_the_compute_fit(blind: tuple[list[str], dict]) -> None:
    """Without the host-issue profile the blind fit misses (host_block_s unpinned); with it but mem_efficiency
    fitted freely, the 4-GPU fit drifts; no FSDP run is among the fit's targets."""
    lines, _ = blind
    first = [float(line.split(" | ")[2]) for line in lines if line.startswith("| ") and "the first blind method" in line]
    assert len(first) == 2 and min(first) > 10          # 15.4 / 15.0 (23.0 / 15.0 scaled by the unfitted start)
    # the profiles alone leave host_block_s at the fit's start: the row carries the host work unscaled and says so
    assert all("not determined: left at its 0.2 ms start, so the host work is carried unscaled" in line
               for line in lines if "the first blind method" in line and line.startswith("| "))
    free = [line for line in lines if line.startswith("| ") and "mem_efficiency fitted (" in line]
    mems = [float(line.split("mem_efficiency fitted (")[1].split(")")[0]) for line in free]
    # the free fit wanders away from the measured copies' 0.87: 0.59 / 0.69 (errors 11.5 / 6.1%); 1.00 / 0.69 while the
    # 2-GPU launches' hidden-4096 profile took a disturbed launch (validation.profile_launches); 0.44 / 0.46 with
    # errors 17.6 / 14.3% with 8 bytes per logit in the cross-entropy backward, 6.5 / 12.4% before that
    assert len(free) == 2 and max(mems) < 0.75
    for world in (2, 4):
        _, _, n, mem = blind_predictor(read_llm_records([blind_file(world)]))
        assert n == 2 + 8 and 0.8 < mem < 0.95          # 2 profiles, 2 probes x 2 specs x (host, GPU); copies 0.87


def test_held_out_h200_lease() -> None:
    """The same FSDP runs on a 4x H200 lease measured after the model was fixed: nothing is fitted on them (the
    compute fit takes their single-GPU profiles and the H200 issue probes, the host work another campaign), and the
    figures docs/accuracy.md reports; the runner recorded the steps' own memory."""
    from validation.llm_blind import H200_PROBES, HELD_OUT_LEASE, held_out_lease

    assert HELD_OUT_LEASE not in {folder for folder, _, _ in HOST_FROM.values()} | {f for f, _ in H200_PROBES}
    for world in (2, 4):
        records = read_llm_records([DATA / HELD_OUT_LEASE / f"fsdp_world{world}.jsonl"])
        assert records.runs[0].gpu == "NVIDIA H200" and len(records.runs) == 12
        for line in (DATA / HELD_OUT_LEASE / f"fsdp_world{world}.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r["kind"] == "llm_fsdp":
                assert 0 < r["resident_memory_bytes"] < r["step_peak_memory_bytes"] <= r["peak_memory_bytes"]
    lines, figs = held_out_lease()
    # recorded 2026-11-26: 2 GPUs 12.5% (p90 23.7%), 4 GPUs 6.5% (p90 13.6%) with main ccb08f9; with the
    # cross-entropy backward's 22 bytes per logit (main 0353123): 12.6% (24.3%), 8.6% (16.7%), and on 4 GPUs
    # NO_SHARD h4096 predicted above FULL_SHARD h4096 (Spearman 0.8); 4 GPUs 9.1% with h200-nvlink refitted under
    # the host issue's overlap (#10, simulator/network/host_overlap.py); 11.6% / 9.5% with disturbed profile launches
    # and iterations left out (validation.profile_launches; this lease's hidden-4096 profile 6.24 -> 5.86 ms on 2 GPUs);
    # 14.6% / 18.4% since the H200 host fits give FSDP's units more of the host time (their unsharded blocks' issue
    # is now UNSHARDED_SHARE of the TP blocks', 0.59 ms on the 4x H200 campaign, while this lease's comes from the
    # H200 issue probes, 0.78 ms); 16.5% / 19.6% with FSDP1's post-backward host work charged (h14fsdp21: this
    # lease's runs were already predicted too slow, so more host time moves them further)
    for world, (median, rho) in {2: (16.5, 0.99), 4: (19.6, 0.79)}.items():
        s = figs[f"world{world}"]
        assert s["n"] == 4 and s["median_abs_pct"] == pytest.approx(median, abs=0.5) and s["spearman"] >= rho
    text = "\n".join(lines)
    assert HELD_OUT_LEASE in text and "whose FSDP runs no fit has seen" in text
    assert all(c in text for c in ("ccb08f9", "0353123", "77f589a")) and "changed since only" not in text


def test_issue_lease_where_fsdp_time_goes() -> None:
    """Another 4x H100 lease with the host's and GPU's time apart: predicted by the blind method (nothing fitted on
    it, but the divisions below were found on it, so today's figures are not held out: review s15 #1); the one-rank groups' divisions by the whole mesh bring the simulated GPU time alone of those points to the
    measured one; NO_SHARD h4096's iteration is its GPU time alone, which the simulation does not over-charge."""
    from validation.llm_blind import ISSUE_LEASE, issue_lease
    from validation.llm_real import RealPredictor

    assert ISSUE_LEASE not in {folder for folder, _, _ in HOST_FROM.values()} | {f for f, _ in ISSUE_PROBES}
    records = read_llm_records([DATA / ISSUE_LEASE / "fsdpissue_world4.jsonl"])
    one_rank = next(r for r in records.runs if r.strategy == "hybrid_shard")
    config, gpus = RealPredictor.config(one_rank)
    assert gpus == 1 and config.fsdp_divide_ranks == 4          # no collective, but divided by the mesh
    lines, figs = issue_lease()
    # recorded 2026-11-27: blind with main 2dc75c7 (before the divisions) 10.1% / 15.3%; with them 7.9% / 10.4%;
    # 8.4% / 10.8% with disturbed profile launches left out (validation.profile_launches: 7.19 -> 6.00 ms on 4 GPUs);
    # 6.5% / 10.4% with the TP blocks' own host term, the stage targets and the host running ahead (H200 host fits);
    # 7.3% / 6.5% with the lease's own plain-model host issue as its compute fit's host targets (h14fsdp7);
    # 6.9% / 6.9% with FSDP1's post-backward host work charged (h14fsdp21)
    for world, median in {2: 6.9, 4: 6.9}.items():
        s = figs[f"world{world}"]
        assert s["n"] == 6 and s["median_abs_pct"] == pytest.approx(median, abs=0.5)
    text = "\n".join(lines)
    gpu_alone = [line.split(" | ")[-1].rstrip(" |").split(" / ") for line in lines
                 if line.startswith("| ") and "one-rank groups h" in line]
    assert len(gpu_alone) == 4
    for measured, simulated in gpu_alone:                         # within 10% (9.03 / 9.00, 16.23 / 15.66, ...)
        assert abs(float(simulated) / float(measured) - 1) < 0.1
    assert "forward share" in text and "GPU-bound" in text and ISSUE_LEASE in text
    # computed from the rows (review s15 #11): 11-21% before the disturbed profile launches were left out, 11-22% since,
    # 9-17% with the TP blocks' own host term and the host running ahead (the H200 host fits carry more FSDP host work),
    # 2-11% with the lease's own host issue targets (a slower host: more of the carried work), -10 to +0% with
    # FSDP1's post-backward host work charged
    assert "h2048 come out -10 to +0%" in text


def test_signed_range_says_the_direction_only_when_every_error_has_it():
    from validation.llm_blind import _signed_range
    assert _signed_range([-10.7, -21.1, -15.1, -21.3]) == "11-21% too fast"
    assert _signed_range([3.2, 9.4]) == "3-9% too slow"
    assert _signed_range([-4.2, 6.1]) == "-4 to +6%"


def test_a_lease_own_host_issue_replaces_the_other_leases_host_targets() -> None:
    """An FSDP-only lease with its own host issue measurements (TP issue probe, FSDP runner's --issue plain model)
    takes them as its host targets instead of the other leases' probes; their GPU-alone targets stay. A lease without
    any keeps the other leases' probes whole."""
    from validation.llm_blind import _probe_targets, own_probe_targets

    assert own_probe_targets(DATA / FOLDER) == []
    own = own_probe_targets(DATA / "h100x4_2026-11-27_fsdpissue2")
    parts = sorted({t.part for t in own})
    assert parts == ["gpu", "host"]                                   # the TP probe's unsharded blocks, both parts
    fsdp_host = [t for t in own if t.label.startswith("own fsdp issue host")]
    assert len(fsdp_host) == 4 and all(t.part == "host" and t.tp == 1 for t in fsdp_host)   # 2 specs x 2 worlds
    # the plain model's issue behind the sleep, forward + backward (validation.fsdp_issue): 12.44 ms at h2048 on 2 GPUs
    h2048 = next(t for t in fsdp_host if t.spec.hidden == 2048 and "2 GPUs" in t.label)
    assert h2048.measured_s * 1e3 == pytest.approx(12.44, abs=0.01)
    mixed = _probe_targets(ISSUE_PROBES, own)
    others = _probe_targets(ISSUE_PROBES)
    assert [t for t in mixed if t.part == "host"] == [t for t in own if t.part == "host"]
    assert [t for t in others if t.part == "gpu"] == [t for t in mixed if t.part == "gpu"][:len(
        [t for t in others if t.part == "gpu"])]
    assert _probe_targets(ISSUE_PROBES, ()) == others


@pytest.mark.parametrize("folder, name, calibration", [
    ("h200x4_2026-11-27_fsdpissue", "fsdpissue_world4.jsonl", "h200-nvlink"),
    ("h100x4_2026-11-27_fsdpissue", "fsdpissue_world4.jsonl", CALIBRATION)])
def test_lease_predictor_takes_its_gpus_method(folder: str, name: str, calibration: str) -> None:
    """H200 leases by the H200 method (its probes and calibration), others by the blind H100 method."""
    from simulator.collectives.params import load_calibration
    from validation.llm_blind import lease_predictor

    path = DATA / folder / name
    pred = lease_predictor(path, read_llm_records([path]), 4)
    assert pred.params == load_calibration(calibration)
    # the lease's own plain-model issue moves the block issue time off the other leases' probes
    before = lease_predictor(path, read_llm_records([path]), 4, own_probes=False)
    assert pred.compute.host_block_s != pytest.approx(before.compute.host_block_s, rel=0.02)


@pytest.mark.parametrize("folder, campaign_fit", [("h100x4_2026-11-27c_llm", True),     # no probe: its llm4 campaign
                                                  ("h100x4_2026-11-27_llm", False),     # its own TP issue probe wins
                                                  ("h200x4_2026-11-26_fsdp", False)])   # neither: other leases' probes
def test_a_lease_without_its_own_probe_takes_its_own_campaigns_compute(folder: str, campaign_fit: bool) -> None:
    """An FSDP-only file whose lease measured no host issue probe but ran its own LLM campaign (``llm_world*.jsonl``
    beside it) is predicted with that campaign's compute fit, the one its ``llm4`` rows take: one compute model per
    lease (branch h14fsdp8). A lease with its own probe, or without a campaign, keeps the method before."""
    from validation.llm_blind import OWN_CAMPAIGN, blind_predictor, held_out_predictor, lease_predictor, preset_for
    from validation.llm_real import fitted_predictor

    path = DATA / folder / "fsdp_world4.jsonl"
    records = read_llm_records([path])
    pred = lease_predictor(path, records, 4)
    campaign = sorted((DATA / folder).glob(OWN_CAMPAIGN))
    assert bool(campaign) == (folder != "h200x4_2026-11-26_fsdp")
    if campaign_fit:
        assert pred.compute == fitted_predictor(read_llm_records(campaign), CALIBRATION)[0].compute
    else:
        h200 = preset_for(records.runs[0].gpu)[1] == "h200"
        from simulator.training.gpus import get_gpu
        from validation.fsdp_pair import other_leases_copy_Bps
        from validation.llm_blind import own_probe_targets
        own = own_probe_targets(DATA / folder)
        copy = other_leases_copy_Bps() / get_gpu("h200").mem_bw_Bps     # mem_efficiency held there (h14fsdp23)
        alone = held_out_predictor(records, 4, own, copy)[0] if h200 else blind_predictor(records, own)[0]
        assert pred.compute == alone.compute
    # without the own-measurement rules (own_probes False) no lease takes its campaign
    before = lease_predictor(path, records, 4, own_probes=False)
    assert (before.compute.host_block_s != pytest.approx(pred.compute.host_block_s, rel=0.02)) == (
        campaign_fit or folder == "h100x4_2026-11-27_llm")
