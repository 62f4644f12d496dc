"""The share of the covariance's extrapolation spread an interval keeps per size band, learned on other
machines' unseen points (issue 10)."""

import numpy as np
import pytest

from simulator.collectives.uncertainty import Uncertainty, check_block
from simulator.core.errors import InputError, InvariantError
from validation import extrapolation_scale as es

BLOCK = {"level": 0.9, "keys": [], "scale": [], "cov": [],
         "residual": {"latency": [-0.3, 0.0, 0.3], "bandwidth": [-0.1, 0.0, 0.1],
                      "by_size": {"edges_bytes": [65536, 16777216],
                                  "q": [[-0.3, 0.0, 0.3], [-0.2, 0.0, 0.2], [-0.1, 0.0, 0.1]],
                                  "param_sd": [0.0, 0.0, 0.02]}},
         "domain": {}}


def with_scale(scale):
    by_size = {**BLOCK["residual"]["by_size"], "param_scale": scale}
    return {**BLOCK, "residual": {**BLOCK["residual"], "by_size": by_size}}


def test_a_band_keeps_its_share_of_the_extrapolation_spread_only():
    """The share multiplies the spread above the band's in-sample one; other bands and the residual part
    stay; the block round-trips."""
    full, quarter = Uncertainty.from_block(BLOCK), Uncertainty.from_block(with_scale([1.0, 1.0, 0.25]))
    big, small = 1 << 28, 1024
    lo_f, hi_f = full.bounds(1.0, 0.0, 0.1, big)
    lo_q, hi_q = quarter.bounds(1.0, 0.0, 0.1, big)
    assert lo_f < lo_q < np.exp(-0.1) and hi_f > hi_q > np.exp(0.1)
    excess = np.sqrt(0.1 ** 2 - 0.02 ** 2)
    assert hi_q == pytest.approx(np.exp(np.hypot(0.1, quarter.z * 0.25 * excess)))
    assert quarter.bounds(1.0, 1.0, 0.1, small) == full.bounds(1.0, 1.0, 0.1, small)
    assert Uncertainty.from_block(quarter.to_block()).size_param_scale == (1.0, 1.0, 0.25)


@pytest.mark.parametrize("scale", [[1.0, 1.0], [1.0, 1.0, 1.5], [1.0, 1.0, -0.1], "0.25", [True, 1.0, 1.0]])
def test_bad_share_names_the_field(scale):
    with pytest.raises(InputError, match="param_scale"):
        check_block(with_scale(scale), "cal.json")


def rows(band, r, e, lo=-0.1, hi=0.1):
    """records-shaped rows: band, log(measured/predicted), residual quantiles, extrapolation spread."""
    return np.array([[band, x, lo, 0.0, hi, e] for x in r], dtype=float)


def test_learned_share_is_the_smallest_that_holds_the_level():
    """Points inside the residual quantiles alone: the floor; points that need the covariance in full: 1;
    points no share holds, or none: 1 (never narrower than the data allow)."""
    inside = rows(2, np.linspace(-0.09, 0.09, 20), 0.2)
    assert es.learned(inside) == es.FLOOR
    wide = rows(2, np.r_[np.linspace(-0.09, 0.09, 16), [0.25, -0.25, 0.3, -0.3]], 0.2)
    k = es.learned(wide)
    assert es.FLOOR < k <= 1.0 and es.coverage(wide, k)[0] >= 0.9 > es.coverage(wide, k - es.STEP)[0]
    assert es.learned(rows(2, [1.0] * 10, 0.01)) == 1.0 and es.learned(np.zeros((0, 6))) == 1.0


def test_each_machine_is_judged_with_the_others_share(monkeypatch):
    """scale_for leaves the judged machine out; bands not learned keep 1; the shipped shares must be the
    all-machine ones."""
    from validation import rank_model_error
    names = [m.name for m in rank_model_error.MACHINES]
    data = {names[0]: rows(2, np.linspace(-0.09, 0.09, 20), 0.2),
            names[1]: rows(2, np.r_[np.linspace(-0.05, 0.05, 8), [0.3, -0.3]], 0.2)}
    monkeypatch.setattr(es, "records", lambda name: data.get(name, np.zeros((0, 6))))
    assert es.scale_for(names[1]) == (1.0, 1.0, es.FLOOR)
    assert es.scale_for(names[0])[2] > es.FLOOR and es.scale_for(names[0])[:2] == (1.0, 1.0)
    monkeypatch.setattr(es, "PARAM_SCALE", es.scale_for())
    assert es.check_shipped() == es.PARAM_SCALE
    monkeypatch.setattr(es, "PARAM_SCALE", (1.0, 1.0, 0.9))
    with pytest.raises(InvariantError, match="PARAM_SCALE"):
        es.check_shipped()


def test_judged_parameters_carry_the_other_machines_share(monkeypatch):
    from simulator.collectives.params import Parameters
    from validation import world_growth
    monkeypatch.setattr(es, "scale_for", lambda exclude=None: (1.0, 1.0, 0.5))
    monkeypatch.setattr(world_growth, "growth_for", lambda exclude=None: (0.1, 0.05, 0.0))
    p = Parameters().with_uncertainty(with_scale([1.0, 1.0, 0.25]))
    residual = es.judged(p, "x").uncertainty["residual"]
    assert residual["by_size"]["param_scale"] == [1.0, 1.0, 0.5] and residual["growth"]["sd"] == [0.1, 0.05, 0.0]
    assert es.judged(Parameters().with_uncertainty({**BLOCK, "residual": {"latency": [-1, 0, 1],
                                                                             "bandwidth": [-1, 0, 1]}}), "x") is not None


def test_a_share_at_the_floor_is_called_the_floor_and_its_alternatives_are_printed(monkeypatch):
    """When every machine's share from the others is the floor, the report says it is the hand-set floor, not
    learned, and prints coverage/width at the other shares (review s15 #14)."""
    inside = rows(2, np.linspace(-0.09, 0.09, 20), 0.2)
    monkeypatch.setattr(es, "scale_for", lambda exclude=None: (1.0, 1.0, es.FLOOR))
    text = es.floor_paragraph([("a", inside), ("b", inside)], 2)
    assert es.floor_binds([("a", inside)], 2) and "the floor, not learned" in text and "not blind" in text
    c, w = es.coverage(inside, 0.75)
    assert f"0.75 {c * 100:.0f}/{w * 100:.0f}" in text
    monkeypatch.setattr(es, "scale_for", lambda exclude=None: (1.0, 1.0, 0.4))
    assert not es.floor_binds([("a", inside)], 2) and "not learned" not in es.floor_paragraph([("a", inside)], 2)


def test_the_share_is_applied_only_inside_the_domain_it_was_learned_on():
    """simulator.collectives.uncertainty.SHARE_CHECKED_*: the largest world size and the link classes of the machines
    the share is learned on (review s15 #4)."""
    from simulator.collectives import uncertainty
    from validation import rank_model_error
    worlds = {n for m in rank_model_error.MACHINES for n, f in m.files().items() if f}
    assert max(worlds) == uncertainty.SHARE_CHECKED_WORLD
    assert {m.topology for m in rank_model_error.MACHINES} <= {"hgx-h200", "dgx-h100"}   # one NVLink host each
    assert uncertainty.SHARE_CHECKED_CLASSES == ("nvlink",)
    unc = Uncertainty.from_block(with_scale([1.0, 1.0, 0.25]))
    assert unc.share_applies(4, ["nvlink"]) and not unc.share_applies(8, ["nvlink"])
    assert not unc.share_applies(4, ["nvlink", "net"])
