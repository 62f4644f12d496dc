"""validation.fsdp_host_carry: how FSDP1's host work carries between the committed FSDP leases."""

from __future__ import annotations

import pytest

from validation import fsdp_host_carry as fhc
from validation.llm_real import CAMPAIGNS


@pytest.fixture(scope="module")
def carried() -> tuple[list, list[float], list]:
    scored = fhc.score()
    needed, results = fhc.evaluate(scored)
    return scored, needed, results


def test_leases_are_the_committed_fsdp_leases_without_the_sealed_one() -> None:
    folders = {lease.folder for lease in fhc.LEASES}
    assert "h100x4_2026-11-27_llm" not in folders          # the sealed lease: a final check only
    assert len(folders) == 9 and len(fhc.LEASES) == 14
    for lease in fhc.LEASES:
        assert (fhc.DATA / lease.folder / lease.name).exists()
        # the host work a lease takes never comes from its own runs
        assert CAMPAIGNS[lease.host_from][0] != lease.folder


def test_rules_take_nothing_from_the_lease_predicted(carried: tuple) -> None:
    """Changing what a lease needs changes no rule's value for that lease (leave one lease out)."""
    scored, needed, _ = carried
    for i in range(len(scored)):
        moved = list(needed)
        moved[i] *= 3.0
        for _, _, rule in fhc.RULES:
            assert rule(i, scored, moved) == pytest.approx(rule(i, scored, needed))


def test_seconds_carry_better_than_the_block_issue_time(carried: tuple) -> None:
    """Recorded 2026-11-27 (h14host2) on the six leases the rule was chosen on: RMS log error 0.208 scaled by the
    block issue time, 0.170 in seconds; pooled over other leases 0.279 scaled, 0.211 in seconds. With the lease
    measured after (held out of the choice): 0.227 / 0.194, pooled 0.273 / 0.215; with disturbed profile launches
    left out of the compute fits (main 4b85499): 0.251 / 0.225, pooled 0.288 / 0.239. Neither lease left out of the
    choice confirms rule 2, so HostWork keeps rule 1 (scaled). With the TP blocks' own host term, the pipeline stages
    as compute targets and the host running ahead (stop 16; the block issue time carried is then the TP blocks' where
    TP loops measure it, llm_real.measured_block_s): 0.222 / 0.183, pooled 0.267 / 0.206. With the FSDP-only leases'
    own host issue measurements as their host targets and the H200 lease measured after that rule (h14fsdp7):
    0.196 / 0.171, pooled 0.207 / 0.174. With FSDP1's post-backward hook's kernels and reduction call charged to the
    backward's host (h14fsdp21): 0.242 / 0.220, pooled 0.258 / 0.232. With the H200 lease methods' mem_efficiency held
    at the measured copy (h14fsdp23): 0.216 / 0.196, pooled 0.232 / 0.208."""
    scored, needed, results = carried
    old, new, pooled, pooled_scaled = results
    assert new.rms_log < old.rms_log and pooled.rms_log < pooled_scaled.rms_log
    assert new.rms_log == pytest.approx(0.196, abs=0.02) and old.rms_log == pytest.approx(0.216, abs=0.02)
    # rule 2 as branch h14host2 would have given it: the FSDP medians of the blind H100 lease f and the held-out H200 lease
    labels = [s.lease.label for s in scored]
    med = dict(zip(labels, new.median_pct))
    assert med["h100x4_2026-11-26f 4 GPUs"] == pytest.approx(4.0, abs=0.5)       # 7.2 before stop 16, 2.7 before h14fsdp21
    assert med["h200x4_2026-11-26_fsdp 2 GPUs"] == pytest.approx(11.2, abs=0.5)   # 3.6 before stop 16, 8.9 before h14fsdp21
    # rule 1 is HostWork's: it reproduces the blind section's figures (8.5% and 11.6% on main 31cfb4d; 4.4% since stop 16;
    # 4.9% since h14fsdp21)
    assert dict(zip(labels, old.median_pct))["h100x4_2026-11-26f 4 GPUs"] == pytest.approx(4.9, abs=0.5)
    # the lease measured after the choice: held out, it missed 8% under both rules (11.3 / 13.5% and 11.2 / 13.6%);
    # measured before stop 16's change and landed after its rule was fixed, so held out of that too: 9.8 / 6.3% and
    # 10.1 / 8.3% with it; with its own TP issue probe and plain-model issue as host targets (h14fsdp7) 11.3 / 3.5% and
    # 8.2 / 2.4%; with FSDP1's post-backward host work charged (h14fsdp21) 10.2 / 3.4% and 6.8 / 2.8%
    held = [i for i, label in enumerate(labels) if label.startswith(fhc.HELD_OUT)]
    assert [round(new.median_pct[i], 1) for i in held] == pytest.approx([10.2, 3.4], abs=0.5)
    assert [round(old.median_pct[i], 1) for i in held] == pytest.approx([6.8, 2.8], abs=0.5)
    # the H200 leases measured after the own-host-probe rule: 5.1 / 9.0% (4x H200), 6.2% (2x H200, 2 GPUs) (rule 1);
    # 2.9 / 9.9%, 4.9% with FSDP1's post-backward host work charged (h14fsdp21)
    own = [i for i, label in enumerate(labels) if label.startswith(fhc.OWN_HELD_OUT)]
    assert [round(old.median_pct[i], 1) for i in own] == pytest.approx([2.9, 9.9, 4.9], abs=0.5)
    # what the leases need spreads far wider than any rule follows (0.45-0.78 ms per unit pass)
    assert 0.3e-3 < min(needed) and max(needed) < 1e-3 and max(needed) / min(needed) > 1.5


def test_report_lines(carried: tuple) -> None:
    scored, _, _ = carried
    lines, figs = fhc.markdown_lines(scored)
    text = "\n".join(lines)
    assert "python -m validation.fsdp_host_carry" in text and "leave-one-lease-out, not blind" in text
    assert f"`{fhc.HELD_OUT}` was measured after that choice was made" in text
    assert "`HostWork` keeps rule 1" in text
    issue = fhc.plain_issue_rows(scored)
    rows = [line for line in lines if line.startswith("| h")]
    own, _ = fhc.own_probe_rows(scored)
    methods = [line for line in fhc.method_lines() if line.startswith("| h")]
    # per lease, plain-model issue, own host probes, then the methods per FSDP-only file and the lease's phases
    assert len(rows) == len(fhc.LEASES) + len(issue) + len(own) + len(methods)
    labels = {label for label, _, _ in fhc.fsdp_only_files()}
    phases = [m for m in methods if m.split("|")[1].strip() not in labels]   # a lease's configurations per phase
    assert len(methods) == len(labels) + len(phases)
    assert sorted({m.split("|")[1].strip() for m in phases}) == ["h100x4_2026-11-27g_llm", "h100x4_2026-11-28_llm",
                                                                 "h200x2_2026-11-28f_llm", "h200x4_2026-11-27d_llm", "h200x4_2026-11-27e_llm",
                                                                 "h200x4_2026-11-27f_llm", "h200x4_2026-11-27h_llm",
                                                                 "h200x4_2026-11-28_llm", "h200x4_2026-11-28c_llm",
                                                                 "h200x4_2026-11-28e_llm"]
    assert len(phases) == 40    # the four FSDP configurations of each of the ten sealed leases with both files
    assert len(issue) == 14 and all(0.8 < float(r.split("|")[5]) < 1.3 for r in issue)
    assert figs["rule2_rms_log"] < figs["rule1_rms_log"]


def test_own_host_probes_rows(carried: tuple) -> None:
    """Every FSDP-only lease with its own host issue files, before and after; the lease measured after the rule is
    marked held out. Recorded 2026-11-27 (h14fsdp7): fsdpissue 6.5 / 10.4 -> 7.3 / 6.5, fsdpissue2 10.1 / 8.3 ->
    8.2 / 2.4, the H200 lease measured after the rule 4.4 / 10.5 -> 5.1 / 9.0 (2 / 4 GPUs); with FSDP1's
    post-backward host work charged (h14fsdp21) that lease 4.6 / 10.7 -> 2.9 / 9.9."""
    scored, _, _ = carried
    rows, figs = fhc.own_probe_rows(scored)
    assert len(rows) == 7 and sum("held out" in r for r in rows) == 3
    assert not any(r.startswith(("| h100x4_2026-11-26f", "| h200x4_2026-11-26_fsdp")) for r in rows)
    before_now = {r.split(" | ")[0][2:]: (float(r.split(" | ")[3]), float(r.split(" | ")[4])) for r in rows}
    assert before_now["h100x4_2026-11-27_fsdpissue2 4 GPUs"] == pytest.approx((8.3, 2.4), abs=0.5)
    assert before_now[f"{fhc.OWN_HELD_OUT[0]} 4 GPUs"] == pytest.approx((10.7, 9.9), abs=0.5)
    assert figs[f"{fhc.OWN_HELD_OUT[0]} 2 GPUs"] == pytest.approx(2.9, abs=0.5)


def test_figures_recorded_when_rule_2_was_chosen_are_named_recorded(carried: tuple) -> None:
    """The held-out lease's figures from when rule 2 was chosen were typed into the paragraph; they come from one
    named constant and the words say they are recorded, not recomputed."""
    scored, _, _ = carried
    text = "\n".join(fhc.markdown_lines(scored)[0])
    assert "11.3 / 13.5% vs 11.2 / 13.6% when the rule was chosen" in text and "recorded then, not recomputed" in text


def test_fsdp_only_leases_take_the_host_work_of_their_world_size() -> None:
    """Which campaign lends its host work is said once: the own campaigns as llm_real.section_runs, the FSDP-only
    leases by world size as llm_blind.HOST_FROM (it was 'w // 4' here)."""
    from validation.llm_blind import HOST_FROM
    from validation.llm_real import section_runs
    own = {r.folder: r.host_from for r in section_runs() if not r.probe}
    for lease in fhc.LEASES:
        want = own[lease.folder] if lease.fit is fhc.Fit.CAMPAIGN else CAMPAIGNS.index(HOST_FROM[lease.world])
        assert lease.host_from == want


def test_the_2x_h200_lease_measured_after_the_rule_is_held_out_and_scored():
    """The lead's 2x H200 lease (10:59 UTC, after every model change of the session) joins the held-out leases of
    the own-host-probe rule: a 2-GPU row only (it measured 2 GPUs), within 8% with and without the rule."""
    assert fhc.OWN_HELD_OUT[1] == "h200x2_2026-11-27_fsdpissue"
    labels = [s.label for s in fhc.LEASES]
    assert "h200x2_2026-11-27_fsdpissue 2 GPUs" in labels and "h200x2_2026-11-27_fsdpissue 4 GPUs" not in labels


def test_a_lease_says_how_its_compute_is_fitted_with_an_enum() -> None:
    """review_s17c #21: Lease.fit was a string label ('campaign' / 'lease'); STYLE asks for enums."""
    assert {lease.fit for lease in fhc.LEASES} == {fhc.Fit.CAMPAIGN, fhc.Fit.LEASE}


def test_paragraph_figures_are_computed_from_the_leases(carried: tuple) -> None:
    """Review s18: three figures of the generated paragraphs were typed and had gone stale once more leases joined:
    '4 GPUs needing more' (the 4x H200 lease measured after the own-probe rule needs less on 4 GPUs than on 2),
    '(9 now)' / '(5.1% now)' beside a recorded trial over 13 lease-worlds (the table has 14), and the probes' hosts
    '20-40% apart' (review s17c #22: no code printed it). Each now follows the rows."""
    import numpy as np

    scored, needed, results = carried
    text = " ".join(fhc.markdown_lines(scored)[0])
    by: dict[str, dict[int, float]] = {}
    for s, n in zip(scored, needed):
        by.setdefault(s.lease.folder, {})[s.lease.world] = n
    both = [v for v in by.values() if len(v) > 1]
    more = sum(v[4] > v[2] for v in both)
    assert 0 < more < len(both)                                   # not every lease: the words must count
    assert f"4 GPUs needing more on {more} of {len(both)})" in text
    rule1 = results[0].median_pct
    assert (f"today, rule 1 on the {len(scored)} lease-worlds above: {sum(m <= 8.0 for m in rule1)} within 8%, "
            f"median of their medians {float(np.median(rule1)):.1f}%)") in text
    assert "(9 now)" not in text and "20-40%" not in text


def test_probe_issue_spread_is_the_committed_probes_per_gpu_and_spec() -> None:
    """The leases' hosts issue the same unsharded blocks apart by the slowest over the fastest lease's issue time,
    per GPU and spec, over every committed TP issue probe (review s17c #22: typed '20-40%')."""
    from validation.issue_check import read_issue
    from validation.llm_blind import DATA, probe_issue_spread, probe_issue_words

    spread = probe_issue_spread()
    files = sorted(DATA.glob("*/tp_issue_world*.jsonl"))
    assert len(files) >= 5 and spread
    issue = {}
    for f in files:
        points, _, gpu = read_issue([f])
        for p in points:
            if p.tp == 1 and p.spec.hidden == 2048 and "H200" in gpu:
                issue[f.parent.name] = p.issue_s
    key = next(k for k in spread if "H200" in k[0] and "hidden=2048," in k[1])
    assert spread[key] == (pytest.approx(max(issue.values()) / min(issue.values()) - 1), len(issue))
    pct = [v * 100 for v, _ in spread.values()]
    assert probe_issue_words().startswith(f"{min(pct):.0f}-{max(pct):.0f}% apart")


@pytest.fixture(scope="module")
def methods() -> dict[str, tuple]:
    return {label: (used, scores) for label, used, scores in fhc.method_scores()}


def test_every_fsdp_only_file_is_scored_by_every_method_its_lease_has_data_for(methods: dict) -> None:
    """Leases' own FSDP-only files, the sealed leases' fsdp2/fsdp4 rows and the paired files; (c) always, (a) with
    an own probe, (b) with an own LLM campaign, (d) with paired probes in the file; the method in use is the first of
    them in the order d, a, b, c."""
    from validation.fsdp_pair import PAIRED, pair_files
    from validation.llm_blind import Method
    a, b, c, d = Method
    paired = sum(len(pair_files(f)) for f in PAIRED)
    assert paired == 7
    assert len(methods) == sum(lease.fit is fhc.Fit.LEASE for lease in fhc.LEASES) + 26 + paired   # 26 sealed rows (24 before the 2-GPU sealed lease)
    have = {label: set(scores) for label, (_, scores) in methods.items()}
    assert have["h200x4_2026-11-27d_llm fsdp4 (sealed)"] == {a, b, c}
    assert have["h200x4_2026-11-27e_llm fsdp4 (sealed)"] == {a, b, c}
    assert have["h200x4_2026-11-27e_llm fsdppair4 (sealed)"] == {d, a, b, c}   # the sixth sealed lease's paired file
    assert have["h200x4_2026-11-27f_llm fsdp4 (sealed)"] == {a, b, c}
    assert have["h200x4_2026-11-27f_llm fsdppair4 (sealed)"] == {d, a, b, c}   # the seventh's
    assert have["h100x4_2026-11-27g_llm fsdp4 (sealed)"] == {a, b, c}
    assert have["h100x4_2026-11-27g_llm fsdppair4 (sealed)"] == {d, a, b, c}   # the eighth's (4x H100)
    assert have["h200x4_2026-11-27h_llm fsdp4 (sealed)"] == {a, b, c}
    assert have["h200x4_2026-11-27h_llm fsdppair4 (sealed)"] == {d, a, b, c}   # the ninth's (4x H200)
    assert have["h100x4_2026-11-28_llm fsdp4 (sealed)"] == {a, b, c}
    assert have["h100x4_2026-11-28_llm fsdppair4 (sealed)"] == {d, a, b, c}   # the tenth's (4x H100)
    assert have["h200x4_2026-11-28_llm fsdp4 (sealed)"] == {a, b, c}
    assert have["h200x4_2026-11-28_llm fsdppair4 (sealed)"] == {d, a, b, c}   # the eleventh's (4x H200)
    assert have["h200x4_2026-11-28b_llm fsdp4 (sealed)"] == {a, c}   # the twelfth's (no llm4 campaign, no paired file)
    assert have["h100x4_2026-11-27_llm fsdp2 (sealed)"] == {a, b, c}
    assert have["h200x4_2026-11-27b_llm fsdp4 (sealed)"] == {b, c}
    assert have["h200x4_2026-11-26_fsdp 4 GPUs"] == {c}
    assert have["h200x2_2026-11-27_fsdpissue 2 GPUs"] == {a, c}
    assert have["h200x2_2026-11-27_fsdppair fsdppair_world2_L1"] == {d, a, c}    # its fsdpissue file is (a)'s probe
    assert have["h200x2_2026-11-27_fsdppairb fsdppair_world2_L2"] == {d, c}
    assert have["h200x2_2026-11-27b_fsdpprof fsdpprof_world2_L1"] == {d, c}     # the host-profiled lease (h14fsdp21)
    order = [d, a, b, c]
    for used, scores in methods.values():
        assert used is min(scores, key=order.index)


def test_the_fifth_lease_probe_measures_its_own_launches_not_the_fsdp4_ones(methods: dict) -> None:
    """What the report says of the fifth sealed lease: its probe's compute fit predicts the FSDP rows of the
    probe's own launches (fsdpissue4) better than its campaign's fit does, and the campaign's fit predicts fsdp4
    and the campaign's own FSDP rows better; the block issue times lie over 20% apart. Recorded 2026-11-27
    (h14fsdp9): fsdp4 14.7 / 4.8 / 12.0% (a / b / c), probe launches 6.7 / 19.0 / 7.8%, campaign rows 16.7 / 2.8 /
    11.9%, block 0.737 / 0.975 ms; with FSDP1's post-backward host work charged (h14fsdp21): fsdp4 13.8 / 3.9 /
    9.8%, probe launches 5.8 / 17.9%, campaign rows 16.4 / 2.5%."""
    from validation.llm_blind import Method
    a, b, _, _ = Method
    _, s = methods["h200x4_2026-11-27d_llm fsdp4 (sealed)"]
    assert s[a].probe_rows_pct < s[b].probe_rows_pct and s[b].median_pct < s[a].median_pct
    assert s[b].campaign_rows_pct < s[a].campaign_rows_pct
    assert s[b].block_s / s[a].block_s > 1.2
    assert s[a].median_pct == pytest.approx(13.8, abs=0.5) and s[b].median_pct == pytest.approx(3.9, abs=0.5)


def test_no_order_of_own_measurements_wins_on_every_lease_with_both(methods: dict) -> None:
    """The report keeps (a) before (b) because neither wins everywhere: the words hold only while that is so."""
    from validation.llm_blind import Method
    a, b, _, _ = Method
    both = [s for _, s in methods.values() if a in s and b in s]
    wins = sum(s[a].median_pct < s[b].median_pct for s in both)
    assert len(both) == 21 and 0 < wins < len(both)   # 19 before the 2-GPU sealed lease
    text = "\n".join(fhc.method_lines())
    assert f"(a) has the lower median on {wins} of them" in text and "a check, not blind" in text


def test_phase_rows_list_one_configuration_measured_in_several_files() -> None:
    rows = fhc.phase_rows("h200x4_2026-11-27d_llm")
    assert len(rows) == 4 and all("fsdpissue_world4.jsonl" in r for r in rows)
    full = next(r for r in rows if "FULL_SHARD h2048" in r)
    assert full.count("jsonl:") == 3 and float(full.split("|")[4]) == pytest.approx((39.88 / 36.53 - 1) * 100, abs=0.2)
    assert fhc.phase_rows("h200x2_2026-11-27_fsdpissue") == []
