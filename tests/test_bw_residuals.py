"""validation.bw_residuals: which ops and sizes hold the >= 16 MiB p90, lease by lease."""

from types import SimpleNamespace

import pytest

from validation import bw_residuals as b

MIB = 1 << 20


def _res(op="all_reduce", size=16 * MIB, predicted=1.1, median=1.0, fast=1.0, lo=0.9, hi=1.2, error2=0.0,
         variant="default"):
    return b.Residual(op, variant, size, "ring", "simple", predicted, median, fast, lo, hi, error2)


def _pooled(world, op, size, reps):
    point = SimpleNamespace(op=op, size_bytes=size, variant="default", rep_times_s=tuple(reps))
    return SimpleNamespace(point=point)


def test_residual_scores_against_median_and_fast_level():
    r = _res(predicted=1.2, median=1.5, fast=1.0, lo=1.0, hi=1.4)
    assert r.error == pytest.approx(-0.2)
    assert r.error_fast == pytest.approx(0.2)
    assert not r.inside                       # the median lies above the interval


def test_slow_shares_carry_the_two_gpu_share_by_order_statistics():
    fast = [1.0] * 5
    two = [_pooled(2, "all_reduce", 16 * MIB, fast + [1.5] * 5)]              # half of 10 slow (10th pct = 1.0)
    four = [_pooled(4, "all_reduce", 16 * MIB, fast + [1.05] * 5),             # none more than 10% above
            _pooled(4, "send_recv", 16 * MIB, [1.0] + [9.0] * 9)]              # send_recv is not counted
    shares = b.slow_shares({2: two, 4: four})
    q2, carried, q4, n = shares[16 * MIB]
    assert q2 == pytest.approx(0.5)
    assert carried == pytest.approx(0.75)      # 1 - (1 - 0.5)^2
    assert q4 == pytest.approx(0.0) and n == 10


def test_summary_counts_the_points_above_target_and_the_ring_ops_at_16_mib():
    rows = [_res("all_reduce", predicted=1.15, median=1.0, fast=1.0),       # +15%: above, at 16 MiB, ring op
            _res("all_gather", predicted=0.8, median=1.0, fast=0.8),        # -20%: above; not a RING_OP
            _res("all_reduce", size=64 * MIB, predicted=1.01, median=1.0, fast=1.0)]
    s = b.summary({"L": rows})["L"]
    assert len(s["above"]) == 2 and s["above_at_16"] == 2
    assert s["ring_16_vs_fast_pct"] == pytest.approx((15.0, 15.0))
    assert s["coverage_16_pct"] == pytest.approx(100.0)   # 1.0 in [0.9, 1.2] for both 16 MiB rows
    assert s["coverage_above_pct"] == pytest.approx(100.0)


def test_section_names_the_points_and_the_slow_shares():
    rows = [_res("reduce", predicted=1.2, median=1.0, fast=1.0, error2=0.15),
            _res("broadcast", predicted=1.0, median=1.3, fast=1.0, lo=0.9, hi=1.2),
            _res("all_reduce", size=64 * MIB, predicted=1.0, median=1.0, fast=1.0)]
    shares = {"A": {16 * MIB: (0.3, 0.51, 0.5, 60)}, "B": {16 * MIB: (0.4, 0.64, 0.4, 60)},
              "C": {16 * MIB: (0.2, 0.36, 0.6, 60)}}
    lines, figures = b.section({k: rows for k in shares}, shares)
    text = "\n".join(lines)
    assert "reduce 16 +20" in text and "broadcast 16 -23" in text
    assert "30 / 51 / 50" in text
    assert figures["bw residuals A"]["above_at_16"] == 2
    assert figures["bw residuals slow share rank correlation"] == pytest.approx(-1.0)
    assert "Spearman -1.00 over 3 leases: the opposite order" in text and "does not tell" not in text


def test_every_lease_has_its_4_gpu_points_with_their_2_gpu_errors():

    cases = list(b.cases())
    assert len(cases) >= 3
    lease, pooled, pred = cases[0]
    rows = b.residuals(pooled, pred)
    assert len(rows) > 50 and all(r.size_bytes >= b.BIG_BYTES for r in rows)
    assert all(r.error2 is not None for r in rows if r.variant == "default")


def test_a_prior_the_two_gpu_points_cannot_determine_moves_the_four_gpu_predictions():
    """--prior refits the leases from another datasheet value: a ring's Simple step latency over NVLink, which
    2-GPU points leave at its prior, changes the 4-GPU all-reduce at 16 MiB (4 more steps than on 2 GPUs)."""
    key = "hop_latency_s.nvlink.ring.simple"
    (_, pooled, pred), = [next(b.cases())]
    (_, _, lower), = [next(b.cases({key: 1e-6}))]
    assert lower.params[key] == pytest.approx(1e-6) and pred.params[key] > 2e-6

    def at16(p):
        return next(r.predicted_s for r in b.residuals(pooled, p) if (r.op, r.variant, r.size_bytes)
                    == ("all_reduce", "default", 16 * MIB))
    assert at16(lower) < at16(pred)


def test_fast_spread_compares_one_gpus_leases_on_4_and_on_2_gpus():
    def a2a(fast4, fast2, size=256 * MIB):
        return b.Residual("all_to_all", "default", size, "direct", "simple", 1.0, 1.0, fast4, 0.9, 1.1, 0.0, fast2)
    by_lease = {"4x H200, A": [a2a(1.0, 2.0), a2a(1.0, 2.0, 16 * MIB)],       # 16 MiB is not above it: left out
                "4x H200, B": [a2a(1.2, 2.02)],
                "4x H100, C": [a2a(5.0, 5.0)]}                                 # one lease of its GPU: no spread
    spread = b.fast_spread(by_lease)
    assert list(spread) == [("4x H200", 256 * MIB)]
    s4, s2, levels = spread[("4x H200", 256 * MIB)]
    assert s4 == pytest.approx(0.2) and s2 == pytest.approx(0.01)
    assert levels == {"4x H200, A": 1.0, "4x H200, B": 1.2}


@pytest.mark.parametrize("prior, words", [("hop_latency_s.nvlink.ring.simple", "KEY=VALUE"),
                                          ("hop_latency_s.nvlink.ring.simple=fast", "not a number"),
                                          ("no_such_key=1e-6", "unknown parameter"),
                                          ("link_efficiency.nvlink=2", "above 1")])
def test_a_bad_prior_is_one_line_and_exit_2(capsys, prior, words):
    """--prior took its value apart unchecked: a missing '=', a word for the number or an unknown key ended in a
    traceback after the leases were read."""
    from validation.bw_residuals import main
    with pytest.raises(SystemExit) as e:
        main(["--prior", prior])
    err = capsys.readouterr().err
    assert e.value.code == 2 and words in err and "Traceback" not in err


def test_sealed_leases_are_named_as_in_the_other_lease_tables():
    """A sealed lease is named once (sealed_campaign.Sealed.lease); bw_residuals named it by its _bw folder."""
    from validation.sealed_campaign import SEALED
    names = [name for name, _, _ in b.cases()]
    sealed = [c.lease for c in SEALED if c.lat.exists() and c.bw.exists()]
    assert sealed and names[-len(sealed):] == sealed


@pytest.mark.parametrize("rho, says_no_order", [(-0.10, True), (0.49, True), (0.9, False), (-0.7, False)])
def test_rank_verdict_follows_the_rank_correlation(rho, says_no_order):
    """review_s17c #12: 'it does not tell which lease's medians will sit high' only when |rho| is small; else the
    value and its direction, with the number of leases either way."""
    words = b.rank_verdict(rho, 5)
    assert f"Spearman {rho:+.2f} over 5 leases" in words
    assert ("does not tell" in words) == says_no_order
    assert ("opposite" in words) == (rho <= -b.WEAK_RANK)


def test_rank_verdict_without_enough_leases():
    assert "too few" in b.rank_verdict(float("nan"), 2)


def test_section_words_follow_the_rows():
    """review_s17c #13: 'on every lease', 'a median of ten repetitions' and 'all_to_all ... predicted fast' are
    derived from the rows: ring points on 2 of 3 leases, 8-10 repetitions, one of two all_to_all misses too fast."""
    from dataclasses import replace

    def a2a(predicted, fast4):
        return b.Residual("all_to_all", "default", 256 * MIB, "direct", "simple", predicted, 1.0, fast4, 0.9, 1.1,
                          0.0, 2.0)
    ring = [replace(_res("reduce", predicted=1.2, error2=0.15), reps=10),
            replace(_res("broadcast", predicted=1.0, median=1.3), reps=8)]
    other = [replace(_res("all_to_all", predicted=1.0), reps=10)]
    by_lease = {"4x H200, A": ring + [a2a(0.8, 1.0)], "4x H200, B": ring + [a2a(1.3, 1.2)],
                "4x H200, C": other}
    shares = {k: {16 * MIB: (0.3, 0.51, 0.5, 60)} for k in by_lease}
    text = "\n".join(b.section(by_lease, shares)[0])
    assert "against their fast level on 2 of 3 leases" in text and "on every lease" not in text
    assert "a median of 10 repetitions (8 to 10 over the points) lands" in text
    assert "2 of the 2 misses are all_to_all on 4 GPUs, 1 of them predicted fast" in text


def test_section_words_take_the_target_percentile_and_the_ring_sign_from_the_code(monkeypatch):
    """Review s18: the table header and paragraph typed '8%' beside TARGET_P90_PCT and '10th percentile' beside
    FAST_PCT, and 'a lower ring latency, which the fast levels ask for' was said whatever side of their fast level
    the ring points sat."""
    rows = [_res("reduce", predicted=0.9, median=1.0, fast=1.0, error2=0.15),        # ring op below its fast level
            _res("broadcast", predicted=1.2, median=1.0, fast=1.0, lo=0.9, hi=1.3)]
    shares = {k: {16 * MIB: (0.3, 0.51, 0.5, 60)} for k in "ABC"}
    monkeypatch.setattr(b, "TARGET_P90_PCT", 5.0)
    monkeypatch.setattr(b, "FAST_PCT", 20.0)
    text = "\n".join(b.section({k: rows for k in shares}, shares)[0])
    assert "above 5% (of which 16 MiB)" in text and "points above 5% over these leases" in text and "8%" not in text
    assert "(20th percentile of repetitions)" in text
    assert "lower ring latency" not in text and "both sides of their fast levels" in text
    rows[0] = _res("reduce", predicted=1.2, median=1.0, fast=1.0, error2=0.15)
    text = "\n".join(b.section({k: rows for k in shares}, shares)[0])
    assert "lower ring latency, which the fast levels ask for" in text


def test_mode_coverage_splits_the_16_mib_medians_by_where_they_fall():
    """validation.bw_residuals.mode_coverage: default 16 MiB points only, a median more than SLOW above its fast level
    counts as slow; inside is the 90% interval's."""
    from validation.bw_residuals import Residual, SLOW, mode_coverage
    mib = 1 << 20

    def res(median, lo, hi, size=16 * mib, variant="default"):
        return Residual("all_reduce", variant, size, "ring", "simple", 1.0, median, 1.0, lo, hi, None)
    rows = {"a": [res(1.0 + 2 * SLOW, 0.9, 1.1), res(1.0 + 2 * SLOW, 0.9, 1.5), res(1.02, 0.9, 1.1),
                  res(1.5, 0.9, 1.1, size=64 * mib), res(1.5, 0.9, 1.1, variant="ll")]}
    assert mode_coverage(rows) == {"slow": (1, 2), "fast": (1, 1)}
