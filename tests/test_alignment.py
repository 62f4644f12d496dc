"""Unaligned all_gather shares (simulator.collectives.alignment): one cost, the same in both engines and the fitter."""

import pytest

import topologies
from simulator.collectives.alignment import UNALIGNED_COPY_FACTOR, unaligned_share
from simulator.collectives.params import Parameters, ideal
from simulator.network.closed_form import CostModel
from simulator.network.engine import simulate_plan
from validation.compare import Predictor, Topo, compare
from validation.parsers import CollMeasurement

OFF = Parameters().with_values({"unaligned_copy_factor": 1.0})
UNALIGNED = (11863280, 23726560, 47453128, 3 * 1000003 * 4)
"""The proto probe's 11.3 / 22.6 MiB (4 GPUs), 45.3 MiB (2 GPUs), a 3-GPU buffer of odd float counts."""


def _model(params=None, gpus=4):
    return CostModel(topologies.build("hgx-h200", gpus_per_node=gpus, nvls=False), params)


@pytest.mark.parametrize("ranks, size, share", [
    (4, 1 << 24, 0.0), (2, 1 << 20, 0.0), (4, 47453120, 0.0),   # shares of 16 bytes and multiples
    (4, 11863280, 0.75),                                          # share = 12 mod 16: shares 1, 2, 3
    (4, 23726560, 0.5), (2, 11863280, 0.5), (2, 47453128, 0.5),   # share = 8 or 4 mod 16 (2 ranks: share 1)
    (8, 8 * 8, 0.5), (3, 3 * 4, 2 / 3)])
def test_unaligned_share_counts_the_shares_whose_offset_is_off_16_bytes(ranks, size, share):
    assert unaligned_share(ranks, size) == pytest.approx(share)


@pytest.mark.parametrize("ranks, size, share", [
    (2, 1 << 24, 0.0), (2, 47453128, 1.0),        # 2 GPUs: the one send reads or writes at S/2
    (4, 11863280, 1.0),                           # part = 12 mod 16: every rank but 0 is off, and 0 sends to them
    (4, 23726560, 1.0), (4, 47453120, 0.0)])      # part = 8 mod 16: ranks 1 and 3 send only unaligned
def test_all_to_all_waits_for_the_rank_with_most_unaligned_sends(ranks, size, share):
    assert unaligned_share(ranks, size, "all_to_all") == pytest.approx(share)


@pytest.mark.parametrize("gpus", [2, 4])
@pytest.mark.parametrize("op", ["all_gather", "reduce_scatter", "all_reduce", "broadcast", "all_to_all"])
def test_aligned_sizes_do_not_move(op, gpus):
    """Powers of two (every share a multiple of 16 bytes) time exactly as without the factor."""
    on, off = _model(gpus=gpus), _model(OFF, gpus)
    for size in (1 << 10, 1 << 20, 1 << 24, 1 << 27, 1 << 30):
        assert on.time_s(op, size) == off.time_s(op, size), size


@pytest.mark.parametrize("op, algo", [("all_gather", "ring"), ("all_to_all", "direct")])
@pytest.mark.parametrize("size", UNALIGNED)
def test_discrete_event_agrees_with_closed_form_on_unaligned_shares(size, op, algo):
    gpus = 3 if size % 3 == 0 and size % 4 else 4 if size % 16 == 0 else 2
    m = _model(gpus=gpus)
    shape = m.shape(op, algo, "simple")
    assert shape.plan.costed_bytes(size) > size
    des, _ = simulate_plan(m.router, m.params, shape.plan, size)
    assert des == pytest.approx(shape.time_s(size), rel=1e-6)


@pytest.mark.parametrize("size, gpus", [(11863280, 4), (23726560, 4), (47453128, 2)])
def test_unaligned_shares_cost_k_times_their_bytes(size, gpus):
    """The bandwidth term (wire and local per-byte cost, as the probe's slope) grows by f x (k - 1) x S; nothing
    else moves."""
    shard = {"op_shard_s_per_byte.all_gather": 1e-12}     # a local per-byte term pays it too
    on = _model(Parameters().with_values(shard), gpus).shape("all_gather", "ring", "simple")
    off = _model(OFF.with_values(shard), gpus).shape("all_gather", "ring", "simple")
    extra = on.time_s(size) - off.time_s(size)
    assert on.beta_s_per_byte > on.wire_s_per_byte
    want = size * unaligned_share(gpus, size) * (UNALIGNED_COPY_FACTOR - 1) * on.beta_s_per_byte
    assert extra == pytest.approx(want, rel=1e-9)
    assert extra > 0.3 * off.time_s(size)     # the probe's size: a large effect, not a rounding


@pytest.mark.parametrize("op, proto", [("reduce_scatter", "simple"), ("all_reduce", "simple"),
                                       ("all_gather", "ll128"), ("all_gather", "ll")])
def test_only_ring_simple_all_gather_pays(op, proto):
    """reduce_scatter's unaligned pointer is a local read (the probe: no effect); LL/LL128 write their own lines."""
    on, off = _model(), _model(OFF)
    assert on.shape(op, "ring", proto).time_s(11863280) == off.shape(op, "ring", proto).time_s(11863280)
    assert on.shape("all_gather", "ring", "simple").time_s(11863280) > \
        off.shape("all_gather", "ring", "simple").time_s(11863280)


def test_send_recv_of_any_size_does_not_pay():
    """A send_recv passes whole buffers: only all_to_all's per-peer offsets can be unaligned."""
    on, off = _model(gpus=2), _model(OFF, 2)
    assert on.time_s("send_recv", 47453128) == off.time_s("send_recv", 47453128)


def test_ideal_parameters_pay_nothing():
    assert _model(ideal()).shape("all_gather", "ring", "simple").plan.costed_bytes(11863280) == 11863280


def test_the_fitter_predicts_what_compare_predicts_on_unaligned_sizes():
    """validation.calibrate.Evaluator adds the unaligned shares' bytes as the closed form does (a fit that left
    them out would lower all_gather's efficiency to absorb them)."""
    from validation.calibrate import Evaluator
    pts = [CollMeasurement("all_gather", 4, s, 1e-3, None, None) for s in (1 << 24, 11863280, 23726560)]
    pred = Predictor(Topo("hgx-h200", gpus_per_node=4), Parameters())
    comps, _ = compare(pts, pred)
    assert Evaluator(pred, pts)(pred.params) == pytest.approx([c.predicted_s for c in comps], rel=1e-9)
    off = Evaluator(pred, pts)(OFF)
    assert off[0] == pytest.approx(comps[0].predicted_s, rel=1e-12) and off[1] < comps[1].predicted_s


def test_the_factor_is_what_the_probe_fits():
    """The shipped factor is the proto probe's median (validation.align_probe), to the three decimals it is written
    with."""
    from validation import align_probe
    assert align_probe.fitted_factor(align_probe.fit_points()) == pytest.approx(UNALIGNED_COPY_FACTOR, abs=0.0005)


def test_held_out_unaligned_points_improve_and_aligned_ones_stay_without_calibration():
    """On a campaign never used to fit the factor, the datasheet model's unaligned all_gather points come closer and
    its aligned ones do not move."""
    from validation import align_probe
    args = ("h200x4_2026-11-27_l2", "*.jsonl", "hgx-h200")
    before, after = align_probe._errors(*args, 1.0), align_probe._errors(*args, UNALIGNED_COPY_FACTOR)
    for key in after:
        mode, op, world, band, aligned = key
        if mode == "datasheet" and op == "all_gather" and not aligned:
            assert max(after[key]) < min(before[key]), key
        if mode == "datasheet" and aligned:
            assert after[key] == before[key], key


def test_probe_prints_the_fit_and_the_held_out_table(capsys):
    from validation import align_probe
    assert align_probe.main([]) == 0
    out = capsys.readouterr().out
    assert "fitted factor" in out and "h100x4_2026-11-27_bwfine" in out and "unaligned" in out


@pytest.mark.parametrize("size", UNALIGNED[:2])
def test_every_timer_of_a_collective_pays_the_unaligned_shares(size):
    """rv21: the LLM model's collectives (GroupCollectives.time_s, its contended SimPy jobs and its plan choice) and
    the interval model's own centre priced S, not Plan.costed_bytes, so a TP / FSDP all_gather of an unaligned size
    cost what an aligned one does there while `gpunetsim collective` charged k; an interval asked without a time
    (IntervalModel.interval) lay wholly below the closed form's prediction (23.7 MiB on 4 H200s, calibrated:
    73-88 us around 125 us)."""
    import simpy

    from simulator.collectives.params import load_calibration
    from simulator.training.llm.flows import ComponentFlowNetwork
    from simulator.training.llm.collective_job import CollJob, run_job
    from simulator.training.llm.groups import GroupCollectives
    router_model = _model(load_calibration("h200-nvlink"))
    closed = router_model.shape("all_gather", "ring", "simple").time_s(size)
    ranks = tuple(router_model.router.gpus)
    groups = GroupCollectives(router_model.router, router_model.params)
    plan = router_model.planner.plan("all_gather", "ring", "simple")
    assert plan.costed_bytes(size) > size
    # the LLM model's isolated call is priced in full (no host overlap): alpha + costed bytes x beta
    s = router_model.shape("all_gather", "ring", "simple")
    assert groups.time_s(plan, ranks, size) == pytest.approx(s.alpha_s + s.beta_s_per_byte * plan.costed_bytes(size))
    env = simpy.Environment()
    net = ComponentFlowNetwork(env, groups.capacity_Bps)
    env.process(run_job(env, net, CollJob(plan, size, 1, "ag", ranks=ranks)))
    env.run()
    assert env.now == pytest.approx(groups.time_s(plan, ranks, size), rel=1e-6)
    iv = router_model.intervals.interval("all_gather", "ring", "simple", size)
    assert iv.lo_s <= closed <= iv.hi_s
