"""The held-out DDP bands (validation.ddp_bands, shipped as calibrations/uncertainty/ddp.json): built from every
committed DDP dataset, judged leaving one dataset out, applied by the simulator with the point prediction unchanged."""

from __future__ import annotations

import pytest

from simulator.training.iteration_bands import DDP_FILE, DDP_KINDS, bands
from validation import ddp_bands


def test_every_committed_ddp_dataset_is_judged():
    """The DDP runner's campaign and every DataParallel runner folder with DDP runs, on both GPU models."""
    names = ddp_bands.ddp_datasets()
    assert "h200x4_2026-11-26b" in names and "h100x4_2026-11-26i" in names and len(names) >= 9
    for kind in DDP_KINDS:
        assert set(ddp_bands.held_out()[kind]) == set(names)
    assert {ddp_bands.gpu_of(n) for n in names} == {"H100-SXM", "H200-SXM"}


def test_predictions_never_use_the_datasets_own_compute():
    """Each dataset's one-profile predictions are one per profile launch of the *other* datasets of its GPU and
    configuration: counting its own launches too would give more."""
    name = "h200x4_2026-11-26d"
    shapes = ddp_bands._shapes()

    def launches(own: bool) -> list:
        return [s for d, g, s in ddp_bands._samples() if g == "H200-SXM" and (d == name) == own
                and s.kind == "profile" and s.model in shapes and s.batch_size == shapes[s.model].batch_size]
    comps = ddp_bands.held_out()["one profile"][name]
    per_model = {m: sum(1 for c in ddp_bands.held_out()["pooled"][name] if c.point.model == m) for m in shapes}
    assert launches(own=True)
    assert len(comps) == sum(per_model[s.model] for s in launches(own=False))


def test_shipped_file_holds_the_built_bands():
    """`python -m validation.accuracy --calibrations` wrote what validation.ddp_bands builds today."""
    shipped, built = bands(DDP_FILE, DDP_KINDS), ddp_bands.built()
    assert set(shipped) == set(DDP_KINDS)
    for k in DDP_KINDS:
        assert list(shipped[k]["log_ratio"]) == built[k]["log_ratio"]
        assert shipped[k]["domain"] == built[k]["domain"] == {"gpus": ["H100-SXM", "H200-SXM"], "world": [2, 4]}


@pytest.mark.parametrize("kind", DDP_KINDS)
def test_left_one_dataset_out_the_widened_interval_covers_and_the_model_alone_did_not(kind):
    """The honest figure: each dataset against the band of the others. The widened interval holds >= 85% of the
    points (and of each dataset's, on average); the communication and compute model alone held under 75%."""
    cov, per_dataset, width = ddp_bands.lodo_summary(kind)
    before, _, before_width = ddp_bands.lodo_summary(kind, model_only=True)
    assert cov >= 85 and per_dataset >= 85
    assert before < 75 and width > before_width


def test_widening_keeps_the_point_predictions():
    """Widened intervals hold their predictions, which are the model-only comparisons' byte for byte."""
    for kind in DDP_KINDS:
        for name, comps in ddp_bands.held_out()[kind].items():
            wide = ddp_bands.widened(comps, ddp_bands.band_without(name).get(kind))
            assert [c.predicted_s for c in wide] == [c.predicted_s for c in comps]
            assert all(w.lo_s <= c.lo_s and w.hi_s >= c.hi_s and w.lo_s <= w.predicted_s <= w.hi_s
                       for w, c in zip(wide, comps))


@pytest.mark.parametrize("kind", DDP_KINDS)
def test_the_trial_without_a_property_is_todays_left_one_out(kind):
    """One group per kind (the trial's 'none') gives each dataset exactly the intervals lodo_interval_rows judges:
    the trial's bands are built as the shipped ones are."""
    cells = ddp_bands.grouped(kind, ddp_bands.PROPERTIES["none (today)"])
    rows = {name: (len(cs), *ddp_bands._judged(cs)) for (_, name), (cs, merged) in cells.items() if not merged}
    assert rows == {name: (n, cov, width) for name, n, cov, width in ddp_bands.lodo_interval_rows(kind)}


def test_a_group_short_of_the_merge_rule_takes_its_kinds_band():
    """Split by GPU model, the 4 H100 datasets leave 3 when one is out (under MIN_GROUP_DATASETS): merged, their
    intervals are those of the kind's band; the H200 group (5 datasets) gets its own, and it differs."""
    kind = "one profile"
    cells = ddp_bands.grouped(kind, ddp_bands.PROPERTIES["GPU model"])
    merged = {name for (_, name), (_, m) in cells.items() if m}
    assert merged == {n for n in ddp_bands.ddp_datasets() if ddp_bands.gpu_of(n) == "H100-SXM"} and len(merged) == 4
    for (group, name), (cs, m) in cells.items():
        today = ddp_bands.widened(ddp_bands.held_out()[kind][name], ddp_bands.band_without(name).get(kind))
        assert ([(c.lo_s, c.hi_s) for c in cs] == [(c.lo_s, c.hi_s) for c in today]) == m


def test_what_the_predictor_knew():
    """Pooled predictions know their compute band's spread and no profile's host share; one-profile predictions the
    reverse, with no host share exactly for the profile files (one launch per model: one prediction per
    configuration), whose captures timed no host."""
    name = "h200x4_2026-11-26b"
    pooled = [k for _, k in ddp_bands.held_out_known()["pooled"][name]]
    one = [k for _, k in ddp_bands.held_out_known()["one profile"][name]]
    assert all(k.compute_spread is not None and k.compute_spread >= 0 and k.host_share is None for k in pooled)
    assert all(k.compute_spread is None for k in one)
    assert sum(k.host_share is None for k in one) == len(pooled) and all(k.host_share > 0 for k in one if k.host_share)
    assert all(0 <= k.exposed_share < 1 and k.gpu == "H200-SXM" and k.world in (2, 4) for k in pooled + one)


def test_host_share_order_counts_every_capture_with_a_host_time():
    """One rank correlation per model over exactly the one-profile predictions whose capture timed its host."""
    order = ddp_bands.host_share_order()
    timed = [k for pairs in ddp_bands.held_out_known()["one profile"].values() for _, k in pairs
             if k.host_share is not None]
    assert set(order) == {k.model for k in timed} == set(ddp_bands._shapes())
    assert sum(n for n, _ in order.values()) == len(timed)
    assert all(-1 <= r <= 1 for _, r in order.values())
