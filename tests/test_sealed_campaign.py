"""The sealed 4x H100 campaign (validation.sealed_campaign): its READMEs' blind tables are read, not retyped."""

from pathlib import Path

import pytest

from validation import sealed_campaign as sc


def test_blind_collectives_read_from_the_readme():
    blind = sc.blind_collectives()
    assert len(blind) == 7
    assert blind[("4", "< 16 MiB together")] == (46, 16.5, 28.4, 98, 87, 63)
    assert blind[("4", ">= 16 MiB")][1:3] == (2.1, 13.0)
    assert all(v[0] > 0 for v in blind.values())


def test_blind_llm_rows_cover_every_run():
    blind = sc.blind_llm()
    assert set(blind) == {label for label, _, _ in sc.H100.runs}   # the first sealed lease ran every row but fsdppair4
    assert blind["llm4 PP"] == (32.3, 47.2, 1.0)
    assert blind["fsdp4"][0] == 16.5


def test_profile_note_compares_the_two_leases_from_their_records():
    note = " ".join(sc.profile_note())
    assert "13.96 ms on this lease and 13.92 ms" in note
    assert "14.1, 23.4, 18.5 ms" in note and "13.9, 14.0, 14.0 ms" in note


def test_profile_note_says_what_the_launch_rule_leaves_and_what_still_misses():
    """The rule (validation.profile_launches, fixed before this lease was scored) reads 13.88 ms, as the earlier
    lease measured; what is left is the fit's host_block_s following this host's slow TP no-communication loops."""
    note = " ".join(sc.profile_note())
    assert "1 launch left out, and the fit reads 13.88 ms" in note
    assert "host-bound" in note and "9.6, 11.4, 9.0, 10.8 ms" in note


def test_campaign_files_follow_the_module_folders(monkeypatch, tmp_path):
    """held_out_campaign.files() reads LAT / BW when called, not when imported (review s15 #12)."""
    from validation import held_out_campaign as hoc
    (tmp_path / "lat_world2_L0.jsonl").write_text("")
    monkeypatch.setattr(hoc, "LAT", tmp_path)
    monkeypatch.setattr(hoc, "BW", tmp_path)
    assert hoc.files()[2] == [tmp_path / "lat_world2_L0.jsonl"]


def test_the_profile_rule_scored_on_the_sealed_lease_is_recorded():
    """The 'fastest launch' rule was scored on the sealed lease after its blind figures: section 7 says so and that a
    later profile rule is not blind to its PP figure (review s15 #13)."""
    from validation.sealed_campaign import PROFILE_RULE_TRIED, trial_note
    text = trial_note()
    assert "fastest" in text and f"PP {PROFILE_RULE_TRIED[2]:.1f}%" in text and "not blind" in text
    assert "3.5 -> 7.2%" in text and "3.7 -> 10.4%" in text


def test_the_cli_parses_its_arguments_before_scoring(capsys):
    """--help prints and exits at once, an unknown argument exits 2; neither runs the scoring (review s15 #16)."""
    from validation import sealed_campaign
    with pytest.raises(SystemExit) as e:
        sealed_campaign.main(["--help"])
    assert e.value.code == 0 and "sealed" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        sealed_campaign.main(["--bogus"])
    assert e.value.code == 2


def test_the_train_band_is_checked_on_the_sealed_runs():
    """The shipped calibrated train band against the sealed runs, its only blind check (review s15 #19)."""
    import math

    from simulator.training.iteration_bands import TRAIN_FILE, bands, interval
    lo, hi = (math.log(x) for x in interval(1.0, bands(TRAIN_FILE)["calibrated"]))
    text = sc.band_check({"a": [0.0, hi + 0.01], "b": [lo - 0.01, lo + 0.001, 0.0]})
    assert "holds 3 of these 5 sealed runs (60%)" in text and "a 1/2" in text and "b 2/3" in text
    assert "shaped on" in text


def test_the_second_sealed_campaign_reads_its_own_readmes():
    """The 4x H200 campaign sealed in the session of 2026-11-27 03:13-06:13 UTC: its blind tables (main 2ebf08d) are
    read from its own READMEs, and its LLM rows are the phases it measured (llm4, fsdp4)."""
    c = sc.H200
    assert sc.SEALED[:2] == (sc.H100, sc.H200) and c.blind_commit == "2ebf08d" and c.topology == "hgx-h200"
    blind = sc.blind_collectives(c)
    assert blind[("4", "< 16 MiB together")] == (46, 10.5, 25.2, 93, 83, 51)
    assert blind[("4", ">= 16 MiB")][1:3] == (2.8, 13.4)
    llm = sc.blind_llm(c)
    assert set(llm) == {"llm4 PP", "llm4 TP", "llm4 FSDP", "fsdp4"}
    assert llm["llm4 PP"] == (10.9, 25.0, 1.0) and llm["fsdp4"][0] == 15.2


def test_sealed_targets_are_one_bullet_per_sealed_campaign(monkeypatch):
    """llm_accuracy's Targets bullets on the sealed leases come from one loop over sealed_campaign.SEALED (a third
    campaign needs only its record), each saying which changes it tests blind (those before its files were
    committed) and which it only checks (review s17 #1)."""
    from dataclasses import replace

    from validation import llm_accuracy as la
    third = replace(sc.H200, prefix="b200s_sealed", machine="4x B200", blind_commit="c4781bc")
    monkeypatch.setattr(sc, "SEALED", (sc.H100, sc.H200, third))
    row = {"median_abs_pct": 9.0, "p90_abs_pct": 20.0}
    figs = {c.prefix: {"llm4 PP": row, "blind": {"llm4 PP": {"median_abs_pct": 12.5, "p90_abs_pct": 30.0}}}
            for c in sc.SEALED}
    figs["h200s_sealed"] = {}                                  # a campaign not committed gives no bullet
    lines = la.sealed_targets(figs)
    assert len(lines) == 2
    assert lines[0].startswith("- Own PP / TP / FSDP runs on a 4x H100 lease") and "main 2dc75c7" in lines[0]
    assert "before main e05742f" in lines[0] and "one change was chosen on it" in lines[0]
    assert "llm4 PP 9.0% (**missed**; blind 12.5%)" in lines[0]
    assert "4x B200" in lines[1] and "main c4781bc" in lines[1] and "before main 6014202" in lines[1]
    assert "a check of those made since" in lines[1] and "chosen on it" not in lines[1]


def test_no_sealed_lease_is_called_blind_to_changes_made_after_its_files_were_committed():
    """Review s17 #1: the report said 'every change of the model since it was opened is held out by it' of the 4x H200
    lease sealed in stop 15, while stop 16's changes (the TP host term and run-ahead, the NVLink port, the growth
    spread) were made with its files in the repository (the closing note: 'not blind for h14tp6'). A lease is a
    blind test of the changes before the commit that added its files and a check of every later one."""
    from validation import llm_accuracy as la
    assert [c.opened for c in sc.SEALED[:3]] == ["e05742f", "6014202", "814a22d"]
    for c in sc.SEALED:
        for text in (c.held_out_of, la.sealed_targets({c.prefix: {"blind": {}}, "x": {}}) or [""]):
            assert "held out by it" not in str(text)
        assert f"before main {c.opened}" in c.held_out_of and "a check of those made since" in c.held_out_of
    # the section 7 paragraph of a lease with no named change says the same, never 'every change ... held out'
    fake = {"h200s_sealed": {"llm4 PP": {"median_abs_pct": 1.0, "p90_abs_pct": 2.0}, "blind": {}}}
    line = next(x for x in la.sealed_targets(fake))
    assert "before main 6014202" in line and "every change" not in line


def test_sealed_records_carry_their_own_folders_and_notes():
    """The H100 record is the only spelling of its folders (no module-level copies) and its notes follow the
    record: the earlier lease it is compared with is ``like``, the rule tried on it ``tried``."""
    assert not hasattr(sc, "LAT") and not hasattr(sc, "LLM") and not hasattr(sc, "EARLIER")
    assert sc.H100.tried == sc.PROFILE_RULE_TRIED and sc.H200.tried is None
    assert sc.trial_note(sc.H200) == "" and "fastest" in sc.trial_note(sc.H100)


def test_the_third_sealed_campaign_reads_its_own_readmes():
    """The 4x H200 campaign sealed in the session of 2026-11-27 06:12-09:12 UTC (another lease): blind tables under
    main c4781bc from its own READMEs, a blind test of every change of that session before its files were committed."""
    c = sc.H200B
    assert sc.SEALED[:3] == (sc.H100, sc.H200, sc.H200B) and c.blind_commit == "c4781bc" and c.opened == "814a22d"
    assert c.lat.name == "h200x4_2026-11-27b_lat" and c.prefix not in {x.prefix for x in sc.SEALED[:2]}
    blind = sc.blind_collectives(c)
    assert blind[("4", "< 16 MiB together")] == (46, 15.6, 27.3, 91, 87, 63)
    assert blind[("4", ">= 16 MiB")] == (28, 2.4, 16.2, 25, 86, 25)
    llm = sc.blind_llm(c)
    assert llm == {"llm4 PP": (10.0, 23.5, 1.0), "llm4 TP": (4.8, 8.0, 0.89), "llm4 FSDP": (6.7, 9.2, 0.92),
                   "fsdp4": (21.5, 25.8, 0.8)}



def test_the_fourth_sealed_campaign_reads_its_own_readmes():
    """The 4x H100 campaign sealed in the session of 2026-11-27 08:49-11:49 UTC (another lease): blind tables under
    main 91c8e9a from its own READMEs; the FSDP-only method change of that session was made without its figures, the
    next session's (branch h14fsdp8: its own campaign's compute) knowing them, so its FSDP-only rows are a check."""
    c = sc.H100C
    assert sc.SEALED[:4] == (sc.H100, sc.H200, sc.H200B, sc.H100C) and c.blind_commit == "91c8e9a"
    assert c.topology == "dgx-h100" and c.prefix not in {x.prefix for x in sc.SEALED[:3]}
    assert c.lease == "4x H100, `h100x4_2026-11-27c` (sealed)" and len(c.opened) == 7 and c.opened != "OPENED"
    assert all(x.fsdp_only_seen for x in sc.SEALED[:4])
    blind = sc.blind_collectives(c)
    assert blind[("4", "< 16 MiB together")] == (46, 14.4, 27.7, 98, 100, 88)
    assert blind[("4", ">= 16 MiB")] == (28, 2.5, 6.7, 43, 96, 35)
    assert sc.blind_llm(c) == {"llm4 PP": (5.0, 6.0, 1.0), "llm4 TP": (7.1, 11.4, 0.89),
                               "llm4 FSDP": (8.7, 18.7, 0.95), "fsdp4": (14.4, 15.2, 0.8)}


def test_the_fifth_sealed_campaign_reads_its_own_readmes():
    """The 4x H200 campaign sealed in the session of 2026-11-27 11:28-14:28 UTC (another lease, with FSDP's host
    issue probe): blind tables under main 049859d from its own READMEs; its FSDP-only rows were not seen before a
    method change (the one change chosen knowing it is named in ``after``)."""
    c = sc.H200D
    assert sc.SEALED[:5] == (sc.H100, sc.H200, sc.H200B, sc.H100C, sc.H200D) and c.blind_commit == "049859d"
    assert c.topology == "hgx-h200" and c.prefix not in {x.prefix for x in sc.SEALED[:4]}
    assert c.opened == "4ebca5e" and not c.fsdp_only_seen and "h14fsdp8" in c.after
    assert (c.llm / "fsdpissue_world4.jsonl").exists()
    blind = sc.blind_collectives(c)
    assert blind[("4", "< 16 MiB together")] == (46, 19.4, 37.9, 91, 74, 68)
    assert blind[("4", ">= 16 MiB")] == (28, 2.0, 9.4, 36, 86, 24)
    assert sc.blind_llm(c) == {"llm4 PP": (2.9, 5.6, 1.0), "llm4 TP": (3.7, 9.2, 0.89),
                               "llm4 FSDP": (2.8, 6.5, 0.99), "fsdp4": (14.7, 18.3, 0.8)}


def test_the_sixth_sealed_campaign_reads_its_own_readmes():
    """The 4x H200 campaign sealed in the session of 2026-11-27 14:03-17:03 UTC (another lease, with FSDP's host
    issue probe and branch h14fsdp19's same-minute paired probes): blind tables under main 05a296d from its own
    READMEs; the paired file has no blind figure (05a296d had no paired-probe method)."""
    c = sc.H200E
    assert sc.SEALED[:6] == (sc.H100, sc.H200, sc.H200B, sc.H100C, sc.H200D, sc.H200E) and c.blind_commit == "05a296d"
    assert c.topology == "hgx-h200" and c.prefix not in {x.prefix for x in sc.SEALED[:5]}
    assert len(c.opened) == 7 and c.opened != "OPENED" and not c.fsdp_only_seen
    assert (c.llm / "fsdpissue_world4.jsonl").exists() and (c.llm / "fsdppair_world4.jsonl").exists()
    blind = sc.blind_collectives(c)
    assert blind[("4", "< 16 MiB together")] == (46, 10.9, 26.6, 98, 98, 76)
    assert blind[("4", ">= 16 MiB")] == (28, 2.2, 10.6, 32, 93, 21)
    assert sc.blind_llm(c) == {"llm4 PP": (0.8, 1.3, 1.0), "llm4 TP": (8.4, 10.6, 0.95),
                               "llm4 FSDP": (3.7, 4.1, 0.92), "fsdp4": (12.5, 34.0, 0.8)}


def test_the_seventh_sealed_campaign_reads_its_own_readmes():
    """The 4x H200 campaign sealed in the session of 2026-11-27 16:49-19:49 UTC (a twelfth machine, every phase of
    the sixth with paired probes from main itself): blind tables under main 972db1b from its own READMEs, the
    paired file scored blind too (972db1b had method (d))."""
    c = sc.H200F
    assert sc.SEALED[:7] == (sc.H100, sc.H200, sc.H200B, sc.H100C, sc.H200D, sc.H200E, sc.H200F)
    assert c.blind_commit == "972db1b" and c.topology == "hgx-h200"
    assert c.prefix not in {x.prefix for x in sc.SEALED[:6]}
    assert len(c.opened) == 7 and c.opened != "OPENED" and not c.fsdp_only_seen
    assert (c.llm / "fsdpissue_world4.jsonl").exists() and (c.llm / "fsdppair_world4.jsonl").exists()
    blind = sc.blind_collectives(c)
    assert blind[("4", "< 16 MiB together")] == (46, 15.8, 28.5, 93, 91, 65)
    assert blind[("4", ">= 16 MiB")] == (28, 2.1, 9.8, 36, 89, 32)
    assert sc.blind_llm(c) == {"llm4 PP": (2.4, 4.7, 1.0), "llm4 TP": (7.4, 10.9, 0.89),
                               "llm4 FSDP": (2.9, 4.7, 0.77), "fsdp4": (8.5, 10.8, 0.8),
                               "fsdppair4": (11.5, 18.0, 0.8)}


def test_the_eighth_sealed_campaign_reads_its_own_readmes():
    """The 4x H100 campaign sealed in the session of 2026-11-27 19:46-22:46 UTC (a thirteenth machine, the seventh's
    phases on an H100 lease): blind tables under main 5f4324f from its own READMEs, the paired file scored blind too."""
    c = sc.H100G
    assert sc.SEALED[:8] == (sc.H100, sc.H200, sc.H200B, sc.H100C, sc.H200D, sc.H200E, sc.H200F, sc.H100G)
    assert c.blind_commit == "5f4324f" and c.topology == "dgx-h100" and c.calibration == "h100-nvlink-2gpu"
    assert c.prefix not in {x.prefix for x in sc.SEALED[:7]}
    assert len(c.opened) == 7 and c.opened != "OPENED" and not c.fsdp_only_seen
    assert (c.llm / "fsdpissue_world4.jsonl").exists() and (c.llm / "fsdppair_world4.jsonl").exists()
    blind = sc.blind_collectives(c)
    assert blind[("4", "< 16 MiB together")] == (46, 10.0, 30.0, 98, 100, 87)
    assert blind[("4", ">= 16 MiB")] == (28, 2.4, 6.6, 32, 93, 27)
    assert sc.blind_llm(c) == {"llm4 PP": (2.1, 4.2, 1.0), "llm4 TP": (7.8, 10.4, 0.89),
                               "llm4 FSDP": (5.8, 9.6, 0.95), "fsdp4": (8.5, 20.6, 0.8),
                               "fsdppair4": (11.9, 14.9, 0.8)}


def test_the_ninth_sealed_campaign_reads_its_own_readmes():
    """The 4x H200 campaign sealed in the session of 2026-11-27 22:10-01:10 UTC (a fourteenth machine, the eighth's
    phases on an H200 lease): blind tables under main 24cd3c3 from its own READMEs, the paired file scored blind too."""
    c = sc.H200H
    assert sc.SEALED[:9] == (sc.H100, sc.H200, sc.H200B, sc.H100C, sc.H200D, sc.H200E, sc.H200F, sc.H100G, sc.H200H)
    assert c.blind_commit == "24cd3c3" and c.topology == "hgx-h200" and c.calibration == "h200-nvlink"
    assert c.prefix not in {x.prefix for x in sc.SEALED[:8]}
    assert len(c.opened) == 7 and c.opened != "OPENED" and not c.fsdp_only_seen
    assert (c.llm / "fsdpissue_world4.jsonl").exists() and (c.llm / "fsdppair_world4.jsonl").exists()
    blind = sc.blind_collectives(c)
    assert blind[("4", "< 16 MiB together")] == (46, 15.3, 31.1, 93, 91, 85)
    assert blind[("4", ">= 16 MiB")] == (28, 2.4, 11.7, 25, 96, 28)
    assert sc.blind_llm(c) == {"llm4 PP": (2.0, 4.3, 1.0), "llm4 TP": (1.4, 5.3, 0.89),
                               "llm4 FSDP": (4.0, 5.9, 0.95), "fsdp4": (4.7, 10.8, 0.8),
                               "fsdppair4": (6.9, 10.6, 0.8)}


def test_the_tenth_sealed_campaign_reads_its_own_readmes():
    """The 4x H100 campaign sealed in the session of 2026-11-28 00:44-03:44 UTC (a fifteenth machine, the ninth's
    phases on an H100 lease): blind tables under main c712e12 from its own READMEs, the paired file scored blind too."""
    c = sc.H100I
    assert sc.SEALED[:10] == (sc.H100, sc.H200, sc.H200B, sc.H100C, sc.H200D, sc.H200E, sc.H200F, sc.H100G,
                              sc.H200H, sc.H100I)
    assert c.blind_commit == "c712e12" and c.topology == "dgx-h100" and c.calibration == "h100-nvlink-2gpu"
    assert c.prefix not in {x.prefix for x in sc.SEALED[:9]}
    assert len(c.opened) == 7 and c.opened != "OPENED" and not c.fsdp_only_seen
    assert (c.llm / "fsdpissue_world4.jsonl").exists() and (c.llm / "fsdppair_world4.jsonl").exists()
    blind = sc.blind_collectives(c)
    assert blind[("4", "< 16 MiB together")] == (46, 14.9, 31.7, 100, 85, 70)
    assert blind[("4", ">= 16 MiB")] == (28, 2.1, 5.9, 39, 100, 30)
    assert sc.blind_llm(c) == {"llm4 PP": (0.2, 0.7, 1.0), "llm4 TP": (10.5, 18.5, 0.45),
                               "llm4 FSDP": (6.6, 11.3, 0.92), "fsdp4": (8.8, 14.3, 0.8),
                               "fsdppair4": (14.4, 20.1, 0.8)}


def test_the_eleventh_and_twelfth_sealed_campaigns_read_their_own_readmes():
    """The two 4x H200 leases sealed in the session of 2026-11-28 03:28-06:28 UTC (a sixteenth and a seventeenth
    machine, other hosts): blind tables under main f8ec1e9 from their own READMEs. The twelfth's device time ran
    short: collectives, fsdp4 and its host issue probe only (no llm4, no paired file)."""
    j, k = sc.H200J, sc.H200K
    assert sc.SEALED[10:12] == (j, k)
    for c in (j, k):
        assert c.blind_commit == "f8ec1e9" and c.topology == "hgx-h200" and c.calibration == "h200-nvlink"
        assert len(c.opened) == 7 and c.opened != "OPENED" and not c.fsdp_only_seen
        assert (c.llm / "fsdpissue_world4.jsonl").exists() and (c.llm / "fsdp_world4.jsonl").exists()
    assert len({x.prefix for x in sc.SEALED}) == len(sc.SEALED)
    assert (j.llm / "fsdppair_world4.jsonl").exists() and not (k.llm / "llm_world4.jsonl").exists()
    assert [r[0] for r in k.runs] == ["fsdp4"]
    assert sc.blind_collectives(j)[("4", "< 16 MiB together")] == (46, 11.9, 22.1, 93, 96, 63)
    assert sc.blind_collectives(j)[("4", ">= 16 MiB")] == (28, 2.2, 13.3, 39, 96, 29)
    assert sc.blind_llm(j) == {"llm4 PP": (1.8, 3.8, 1.0), "llm4 TP": (8.1, 10.3, 0.89),
                               "llm4 FSDP": (6.6, 10.1, 0.95), "fsdp4": (9.1, 13.7, 1.0),
                               "fsdppair4": (15.5, 19.1, 1.0)}
    assert sc.blind_collectives(k)[("4", "< 16 MiB together")] == (46, 11.6, 25.9, 83, 89, 71)
    assert sc.blind_collectives(k)[("4", ">= 16 MiB")] == (28, 2.5, 16.6, 39, 100, 38)
    assert sc.blind_llm(k) == {"fsdp4": (7.2, 9.4, 0.8)}


def test_the_thirteenth_sealed_campaign_reads_its_own_readmes():
    """The 4x H200 lease sealed in the session of 2026-11-28 06:06-09:06 UTC (an eighteenth machine, a host no
    earlier lease used, every phase complete): blind tables under main 8f68bca from its own READMEs."""
    c = sc.H200L
    assert sc.SEALED[12:13] == (c,)
    assert c.blind_commit == "8f68bca" and c.topology == "hgx-h200" and c.calibration == "h200-nvlink"
    assert len(c.opened) == 7 and c.opened != "OPENED" and not c.fsdp_only_seen
    assert c.runs == sc.WITH_PAIRS and c.prefix not in {x.prefix for x in sc.SEALED[:12]}
    assert (c.llm / "fsdpissue_world4.jsonl").exists() and (c.llm / "fsdppair_world4.jsonl").exists()
    assert sc.blind_collectives(c)[("4", "< 16 MiB together")] == (46, 11.0, 26.4, 100, 91, 61)
    assert sc.blind_collectives(c)[("4", ">= 16 MiB")] == (28, 2.1, 9.3, 36, 96, 26)
    assert sc.blind_llm(c) == {"llm4 PP": (1.7, 3.7, 1.0), "llm4 TP": (3.2, 5.0, 0.89),
                               "llm4 FSDP": (11.6, 15.0, 0.84), "fsdp4": (12.3, 18.8, 1.0),
                               "fsdppair4": (10.6, 14.4, 1.0)}


def test_the_fourteenth_sealed_campaign_reads_its_own_readmes():
    """The 4x H200 lease measured late in the session of 2026-11-28 06:06-09:06 UTC (a nineteenth machine, another
    host), after that session's model was final: blind tables under that final model, 4bbd21a, from its own READMEs;
    collectives, fsdp4 and its host issue probe only (the device budget)."""
    c = sc.H200M
    assert sc.SEALED[13:14] == (c,)
    assert c.blind_commit == "4bbd21a" and c.topology == "hgx-h200" and c.calibration == "h200-nvlink"
    assert len(c.opened) == 7 and not c.fsdp_only_seen and "after its model was final" in c.when
    assert [r[0] for r in c.runs] == ["fsdp4"] and not (c.llm / "llm_world4.jsonl").exists()
    assert (c.llm / "fsdpissue_world4.jsonl").exists()
    assert len({x.prefix for x in sc.SEALED}) == len(sc.SEALED)
    assert sc.blind_collectives(c)[("4", "< 16 MiB together")] == (46, 12.1, 29.9, 100, 100, 90)
    assert sc.blind_collectives(c)[("4", ">= 16 MiB")] == (28, 1.7, 13.3, 46, 96, 35)
    assert sc.blind_llm(c) == {"fsdp4": (10.5, 15.5, 1.0)}


def test_the_fifteenth_sealed_campaign_reads_its_own_readmes():
    """The 4x H200 lease sealed in the session of 2026-11-28 08:33-11:33 UTC (a twentieth machine, a host no earlier
    lease used, every phase complete): blind tables under main cb90eaa from its own READMEs."""
    c = sc.H200N
    assert sc.SEALED[14:15] == (c,)
    assert c.blind_commit == "cb90eaa" and c.topology == "hgx-h200" and c.calibration == "h200-nvlink"
    assert len(c.opened) == 7 and not c.fsdp_only_seen
    assert c.runs == sc.WITH_PAIRS and c.prefix not in {x.prefix for x in sc.SEALED[:14]}
    assert (c.llm / "fsdpissue_world4.jsonl").exists() and (c.llm / "fsdppair_world4.jsonl").exists()
    assert sc.blind_collectives(c)[("4", "< 16 MiB together")] == (46, 9.6, 28.3, 100, 93, 72)
    assert sc.blind_collectives(c)[("4", ">= 16 MiB")] == (28, 2.7, 10.7, 32, 96, 26)
    assert sc.blind_llm(c) == {"llm4 PP": (3.2, 5.7, 1.0), "llm4 TP": (4.3, 6.7, 0.89),
                               "llm4 FSDP": (5.2, 8.6, 0.92), "fsdp4": (5.9, 15.2, 1.0),
                               "fsdppair4": (8.2, 13.4, 1.0)}

def test_the_sealed_two_gpu_campaign_reads_its_own_readme():
    """The 2x H200 lease sealed in the session of 2026-11-28 11:24-14:24 UTC (no machine of more than 2 GPUs was lent):
    LLM runs only, predicted at 2 GPUs (the 2-GPU campaign's host work, the 2-GPU calibration), blind table under main
    3b51686 from its README; no collectives, so every collective table leaves it out."""
    c = sc.H200O
    assert sc.SEALED[15:] == (c,)
    assert c.blind_commit == "3b51686" and c.calibration == "h200-nvlink-2gpu" and c.gpus == "2x H200"
    assert [label for label, _, _ in c.runs] == ["llm2 PP", "llm2 TP", "llm2 FSDP", "fsdp2", "fsdppair2"]
    assert {sc.world_of(name) for _, name, _ in c.runs} == {2}
    assert not c.lat.exists() and not c.bw.exists() and sc.collectives(c) == ([], {})
    assert (c.llm / "fsdpissue_world2.jsonl").exists()
    assert sc.blind_llm(c) == {"llm2 PP": (3.3, 6.7, 1.0), "llm2 TP": (3.5, 15.4, 0.8), "llm2 FSDP": (4.9, 8.1, 0.99),
                               "fsdp2": (3.7, 6.9, 1.0), "fsdppair2": (9.0, 11.3, 1.0)}


def test_llm_rows_take_the_host_work_of_their_own_world_size():
    """An llm or TP row is predicted with the host work of the committed H200 campaign of its file's world size
    (llm_blind.host_for), not always the 4-GPU one."""
    from validation import llm_blind as lb, llm_real as lr
    c = sc.H200O
    path = c.llm / "llm_world2.jsonl"
    scored = [e.predicted_s for e in sc._scored("llm2 FSDP", path, "fsdp", c)]
    def predicted(world):
        return [e.predicted_s for e in lr.predict_files([path], c.calibration, lb.host_for(world)[0]).errors
                if e.runner == "fsdp"]
    assert scored == predicted(2) and scored != predicted(4)
    assert lb.HOST_FROM[2][0] == "h200x2_2026-11-26c" and lb.HOST_FROM[4][0] == "h200x4_2026-11-26d"
    assert sc.world_of("fsdppair_world4.jsonl") == 4


@pytest.mark.parametrize("names, shared", [
    (("h200x4_2026-11-27b_lat", "h200x4_2026-11-27b_bw", "h200x4_2026-11-27b_llm"), "h200x4_2026-11-27b"),
    (("h100x4_2026-11-27_lat", "h100x4_2026-11-27_lab"), "h100x4_2026-11-27"),   # not '..._la'
    (("h100x4_2026-11-27_lat", "h100x4_2026-11-28_lat"), "h100x4"),               # not '..._2026-11-2'
])
def test_lease_name_is_cut_at_a_word_boundary(names, shared):
    """review_s17c #19: the campaign name its folders share is cut at a '_', never inside a word."""
    assert sc.shared_name(names) == shared


def test_every_sealed_lease_keeps_its_name():
    assert [c.lease for c in sc.SEALED] == ["4x H100, `h100x4_2026-11-27` (sealed)",
                                            "4x H200, `h200x4_2026-11-27` (sealed)",
                                            "4x H200, `h200x4_2026-11-27b` (sealed)",
                                            "4x H100, `h100x4_2026-11-27c` (sealed)",
                                            "4x H200, `h200x4_2026-11-27d` (sealed)",
                                            "4x H200, `h200x4_2026-11-27e` (sealed)",
                                            "4x H200, `h200x4_2026-11-27f` (sealed)",
                                            "4x H100, `h100x4_2026-11-27g` (sealed)",
                                            "4x H200, `h200x4_2026-11-27h` (sealed)",
                                            "4x H100, `h100x4_2026-11-28` (sealed)",
                                            "4x H200, `h200x4_2026-11-28` (sealed)",
                                            "4x H200, `h200x4_2026-11-28b` (sealed)",
                                            "4x H200, `h200x4_2026-11-28c` (sealed)",
                                            "4x H200, `h200x4_2026-11-28d` (sealed)",
                                            "4x H200, `h200x4_2026-11-28e` (sealed)",
                                            "2x H200, `h200x2_2026-11-28f` (sealed)"]



SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "validation" / "scripts").glob("sealed_blind_*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_each_blind_script_refuses_todays_model(script):
    """validation/scripts/sealed_blind_<commit>.py patches that commit's globals (e.g. 2dc75c7's held_out_campaign);
    on today's model the patch would be ignored and the campaign scored as 'sealed' (review s15 #12): each must
    refuse, exit != 0, naming its commit and printing no section."""
    import subprocess
    import sys
    root = script.parents[2]
    commit = script.stem.split("_")[-1][:7]
    done = subprocess.run([sys.executable, str(script.relative_to(root))], cwd=root, timeout=120,
                          capture_output=True, text=True, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert done.returncode != 0 and commit in done.stderr
    assert "## collectives" not in done.stdout and "###" not in done.stdout


def test_every_sealed_lease_has_its_blind_script():
    assert {c.blind_commit for c in sc.SEALED} == {p.stem.split("_")[-1][:7] for p in SCRIPTS}


def test_spread_line_names_each_tp_row_within_or_outside():
    from validation.tp_launches import AgainstLaunches
    line = sc.spread_line({"llm4 TP": AgainstLaunches(4.8, 15.8, 12), "TP issue probe": AgainstLaunches(8.1, 5.3, 8)})
    assert "llm4 TP 4.8% against 15.8% (12 trials), within the spread" in line
    assert "TP issue probe 8.1% against 5.3% (8 trials), **outside the spread**" in line
    assert "not instead of it" in line
    assert sc.spread_line({}) == ""


def test_a_missed_sealed_tp_set_is_judged_against_its_launches_beside_its_median():
    """The fifteenth machine's llm4 TP misses issue 14's 8% (10.5%, its launches 16-44% apart): the median verdict
    stays, and beside it the prediction lands nearer the other launches' median than a launch does (stop 25)."""
    lines, figs = sc.llm(sc.H100I)
    tp = figs["llm4 TP"]
    assert tp["median_abs_pct"] > 8.0
    assert tp["spread_prediction_pct"] < tp["spread_launch_pct"]
    assert any(line.startswith("**TP against its launches' own spread**") for line in lines)
    assert "spread_prediction_pct" not in figs["llm4 PP"]
