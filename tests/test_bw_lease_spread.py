"""validation.bw_lease_spread: what the committed leases leave to a 2 -> 4 GPU prediction at >= 16 MiB."""

from types import SimpleNamespace

import pytest

from validation import bw_lease_spread as b


def test_leases_pair_up_by_gpu():
    names = [name for name, _, _ in b.leases()]
    assert len(names) >= 4
    rows = b.transfer_rows()
    gpu = {name: g for name, g, _ in b.leases()}
    assert rows and all(gpu[r["from"]] == gpu[r["to"]] and r["from"] != r["to"] for r in rows)


def test_the_16_mib_points_set_the_leases_p90():
    """Another lease's growth misses the 8% p90 on most H200 pairs, and only because of the 16 MiB points."""
    rows = b.transfer_rows()
    assert sum(r["stats"][1] > b.TARGET_P90_PCT for r in rows) >= len(rows) // 2
    assert all(r["p90_without_16"] < r["stats"][1] for r in rows)
    assert all(r["p90_without_16"] < b.TARGET_P90_PCT for r in rows)


def test_fast_level_agrees_across_leases_where_medians_do_not():
    modes = b.mode_rows()
    assert {m["op"] for m in modes} >= {"all_reduce", "all_gather", "reduce_scatter"}
    # the fast levels agree within 5% over the leases up to the seventh sealed one; the eighth (4x H100) takes
    # reduce_scatter's to 5.8% and reduce's to 5.1%; the 4x H200 leases of 2026-11-28 broadcast's to 6.6%, still a
    # fraction of the medians' 18-75% (send_recv aside). The twentieth machine (h200x4_2026-11-28e, sealed) ran every
    # reduce_scatter 16 MiB repetition in the slow mode: its fast level sits 15-17% above the other H200 leases'
    spreads = {m["op"]: m["fast_spread"] for m in modes}
    assert max(v for op, v in spreads.items() if op != "reduce_scatter") < 0.07
    assert 0.15 < spreads["reduce_scatter"] < 0.2
    assert max(m["median_spread"] for m in modes) > 0.15


def _row(size, median_s, reps, predicted_s):
    point = SimpleNamespace(size_bytes=size, time_s=median_s, rep_times_s=reps)
    return SimpleNamespace(pooled=SimpleNamespace(point=point), error=predicted_s / median_s - 1,
                           comparison=SimpleNamespace(predicted_s=predicted_s))


def test_against_fast_scores_the_tenth_percentile():
    rows = [_row(16 << 20, 2.0, [1.0] * 9 + [3.0], 1.0), _row(1 << 20, 1.0, [1.0], 5.0)]   # the small one is left out
    med, p90, med_fast, p90_fast = b.against_fast(rows)
    assert med == pytest.approx(50.0) and p90 == pytest.approx(50.0)
    assert med_fast == pytest.approx(0.0, abs=1e-9) and p90_fast == pytest.approx(0.0, abs=1e-9)


def test_section_prints_the_pair_table_and_the_diagnostic():
    rows = [_row(16 << 20, 2.0, [1.0] * 10, 1.0)]
    lines, figures = b.section(rows, "X")
    text = "\n".join(lines)
    assert "| growth from | predicts |" in text and "against the fast levels" in text
    assert figures["bw_against_fast X"][2] == pytest.approx(0.0, abs=1e-9)


def test_targets_clause_names_the_pairs():
    assert b.targets_clause({}) == ""
    text = b.targets_clause({"bw_lease_transfer": {"a -> b": (1.0, 12.0, 20.0), "b -> a": (1.0, 6.0, 9.0)}})
    assert "misses 8% on 1 of 2 pairs" in text and "6.0-12.0%" in text


def _pair(p90, p90_rest, band80, to="b"):
    return {"from": "a", "to": to, "points": 10, "stats": (1.0, p90, p90 + 1), "band80": band80,
            "p90_without_16": p90_rest, "at_16": (1.0, 1.0, 2.0)}


MODES = [{"op": "all_reduce", "fast": {"a": 1e-4, "b": 1.01e-4}, "median": {"a": 1e-4, "b": 1.2e-4},
          "fast_spread": 0.01, "median_spread": 0.2, "above_fast": {"a": 0.0, "b": 0.19}, "above_fast_2": [0.0, 0.01]}]


def test_the_section_verdicts_follow_the_figures(monkeypatch):
    """Review s17 #5: the paragraph said 'mostly at 16 MiB' and 'under the 25% target, so ... the leases leave room'
    whatever the pairs showed. Now both are counted from the pairs."""
    monkeypatch.setattr(b, "mode_rows", lambda: MODES)
    monkeypatch.setattr(b, "transfer_rows", lambda: [_pair(12.0, 11.0, 40.0), _pair(9.0, 5.0, 30.0)])
    text = "\n".join(b.section()[0])
    assert "misses the 8% p90 on 2 of 2 pairs" in text and "1 of them only through their 16 MiB points" in text
    assert "mostly at 16 MiB" not in text and "leave room" not in text
    assert "above the 25% target on 2 of 2 pairs" in text
    monkeypatch.setattr(b, "transfer_rows", lambda: [_pair(12.0, 5.0, 10.0), _pair(9.0, 5.0, 20.0, "c")])
    lines, figures = b.section()
    text = "\n".join(lines)
    assert "2 of them only through their 16 MiB points" in text and "under the 25% target" in text
    assert "2 of them only through the 16 MiB points" in b.targets_clause(figures)


@pytest.mark.parametrize("module", ["validation.lease_spread", "validation.bw_lease_spread"])
def test_the_lease_tables_refuse_arguments_they_do_not_take(module):
    """Review s17 #15: `python -m validation.lease_spread --x` ran the whole table and exited 0; bw_lease_spread,
    cited as a command, had no main."""
    import importlib
    with pytest.raises(SystemExit) as e:
        importlib.import_module(module).main(["--bogus"])
    assert e.value.code == 2


def test_band_is_a_band_around_the_prediction(monkeypatch):
    """Review s17 #11: the band's half-width is the 80th percentile of |truth / prediction - 1| (a band around the
    other lease's growth, the prediction), not of the error measured over the truth."""
    big = b.BIG_BYTES
    truth = {("all_reduce", big * (i + 1)): 1.0 for i in range(10)}
    pred = {("all_reduce", big * (i + 1)): 0.5 for i in range(10)}   # predicts half the truth everywhere
    monkeypatch.setattr(b, "leases", lambda: [("a", "H200", {}), ("t", "H200", {})])
    monkeypatch.setattr(b, "ratios", lambda: {"a": pred, "t": truth})
    row = next(r for r in b.transfer_rows() if r["from"] == "a" and r["to"] == "t")
    assert row["stats"][0] == pytest.approx(50.0)      # |0.5 / 1 - 1|: the error over the truth
    assert row["band80"] == pytest.approx(200.0)      # 2 x |1 / 0.5 - 1|: a band around 0.5 reaching 1


def test_the_fast_percentile_in_the_words_is_fast_pct(monkeypatch):
    """Review s18: '(the 10th percentile of a point's repetitions)' was typed beside FAST_PCT; the per-op levels in
    microseconds span every GPU's leases while the spreads are per GPU, and the words say so."""
    monkeypatch.setattr(b, "mode_rows", lambda: MODES)
    monkeypatch.setattr(b, "transfer_rows", lambda: [_pair(12.0, 11.0, 40.0)])
    monkeypatch.setattr(b, "FAST_PCT", 20.0)
    text = "\n".join(b.section()[0])
    assert "(the 20th percentile of a point's repetitions)" in text and "10th" not in text
    assert "(the levels over the leases of every GPU together: all_reduce fast" in text


def test_one_spread_of_a_level_over_leases_or_launches():
    """Review s18: validation.tp_launches wrote its own 'slowest over fastest, less 1' beside bw_lease_spread.spread."""
    from validation import tp_launches
    assert tp_launches.spread is b.spread
