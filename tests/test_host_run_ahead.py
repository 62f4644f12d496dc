"""The host issues a stage's passes without waiting for the GPU (pipeline_engine, ComputeModel.timeline_s), TP-sharded
blocks have a host issue time of their own (host_tp_block_s), and the real-run compute fit reads the pipeline stages
alone and ties the unsharded blocks' issue time to the TP blocks' where nothing measures it (validation.llm_real)."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from simulator.core.errors import InputError
from simulator.training.gpus import get_gpu
from simulator.training.llm.compute import ComputeModel, ComputeParams
from simulator.training.llm.flows import ComponentFlowNetwork
from simulator.training.llm.pipeline_engine import ChunkWork, Link, StageWork, simulate_pipeline
from simulator.training.llm.schedule import schedule

DATA = Path(__file__).resolve().parent.parent / "validation" / "data"


def test_timeline_lets_the_host_run_ahead_of_the_gpu():
    tl = ComputeModel(get_gpu("h100"), "bf16", ComputeParams()).timeline_s
    # one pass: as issue_s, the longer of kernels and host less the collectives it hides, then the collectives
    assert tl([(1.0, 3.0, 0.5)]) == pytest.approx(3.0)
    assert tl([(1.0, 0.5, 0.5)]) == pytest.approx(1.5)
    # a GPU-bound forward, then a host-bound backward: the host issued the backward while the forward ran
    assert tl([(3.0, 1.0, 0.0), (1.0, 2.5, 0.0)]) == pytest.approx(4.0)
    # per pass (host in step with the GPU) it would have been 3 + 2.5
    assert tl([(3.0, 1.0, 0.0), (1.0, 2.5, 0.0)]) < 3.0 + 2.5
    # host-bound throughout: the host's total
    assert tl([(1.0, 2.0, 0.0)] * 4) == pytest.approx(8.0)
    # a host that waits for each pass: every pass the longer of the two (as vTrain's DeepSpeed runs behave)
    waits = ComputeModel(get_gpu("h100"), "bf16", ComputeParams(host_runs_ahead=False)).timeline_s
    assert waits([(3.0, 1.0, 0.0), (1.0, 2.5, 0.0)]) == pytest.approx(5.5)


def _one_stage(fwd: tuple[float, float, float], bwd: tuple[float, float, float], m: int) -> list[StageWork]:
    """One stage, ``m`` micro-batches; each pass (kernels, host issue, TP collectives: a timeout of their time)."""
    from simulator.training.llm.collective_job import CollJob

    def comm(c: float) -> tuple:
        return (CollJob(None, 0.0, 1, "tp", isolated_s=c),) if c > 0 else ()     # type: ignore[arg-type]
    chunk = ChunkWork(fwd[0], bwd[0], comm(fwd[2]), comm(bwd[2]), 0.0, forward_host_s=fwd[1], backward_host_s=bwd[1],
                      forward_hidden_s=fwd[2], backward_hidden_s=bwd[2])
    return [StageWork((chunk,), schedule(1, m, 1)[0], None, None, (), 0.0, ())]


_PASS = st.tuples(*[st.floats(0.0, 5.0, allow_subnormal=False)] * 3)


@settings(max_examples=200, deadline=None)
@given(_PASS, _PASS, st.integers(1, 6), st.booleans())
def test_timeline_is_a_one_stage_engine_run(fwd, bwd, m, ahead):
    """Review s17 #9: ComputeModel.timeline_s (validation's fits) and pipeline_engine (the simulation) run one host
    rule; a one-stage pipeline is timeline_s of its passes. A host that waits for each pass reaches the engine as
    iteration.py builds it: each pass issue_s, no host time."""
    cm = ComputeModel(get_gpu("h100"), "bf16", ComputeParams(host_runs_ahead=ahead))
    expected = cm.timeline_s([fwd, bwd] * m)
    if not ahead:
        fwd, bwd = ((cm.issue_s(k, h, c), 0.0, c) for k, h, c in (fwd, bwd))
    times, _ = simulate_pipeline(_net, _one_stage(fwd, bwd, m), 1)
    assert times[0].passes_end_s == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("raw, ahead", [("true", True), ("false", False), ("1", True), ("0", False), ("1.0", True),
                                        ("0.0", False)])
def test_host_runs_ahead_is_a_switch_read_from_true_false_or_an_old_0_1(tmp_path, raw, ahead):
    """Review s17 #16: host_runs_ahead is a bool (JSON true / false); files written with 0 / 1 still load."""
    from simulator.training.llm.compute import load_compute_params
    f = tmp_path / "c.json"
    f.write_text('{"llm": {"host_runs_ahead": %s}}' % raw)
    assert load_compute_params(f).host_runs_ahead is ahead


@pytest.mark.parametrize("raw", ['0.5', '"true"', 'null', '2', '[1]'])
def test_a_host_runs_ahead_that_is_no_switch_names_file_field_and_value(tmp_path, raw):
    import json

    from simulator.training.llm.compute import load_compute_params
    f = tmp_path / "c.json"
    f.write_text('{"llm": {"host_runs_ahead": %s}}' % raw)
    with pytest.raises(InputError) as e:
        load_compute_params(f)
    assert e.value.source == str(f) and e.value.field == "llm.host_runs_ahead" and e.value.value == json.loads(raw)
    assert "true" in e.value.message and "false" in e.value.message
    with pytest.raises(InputError, match="host_runs_ahead"):
        ComputeParams(host_runs_ahead=0.0)                 # in code, a bool


def test_tp_blocks_take_their_own_host_issue_time():
    cm = ComputeModel(get_gpu("h100"), "bf16", ComputeParams(host_block_s=1e-3, host_tp_block_s=2e-3,
                                                             host_collective_s=1e-4))
    assert cm.block_host_s(1) == 1e-3 and cm.block_host_s(4) == 2e-3
    assert cm.host_s(2, 1.5, 3, tp=2) == pytest.approx(2 * 1.5 * 2e-3 + 3e-4)
    unset = ComputeModel(get_gpu("h100"), "bf16", ComputeParams(host_block_s=1e-3))
    assert unset.block_host_s(8) == 1e-3                     # 0: TP blocks issue as unsharded ones
    with pytest.raises(InputError, match="host_tp_block_s"):
        ComputeParams(host_tp_block_s=-1.0)


def _stages(p: int, m: int, kernels: float, host: float) -> list[StageWork]:
    chunk = ChunkWork(kernels, kernels, (), (), 0.0, forward_host_s=host, backward_host_s=host)
    link = Link((), 0.0)
    return [StageWork((chunk,), order, link, link, (), 0.0, ()) for order in schedule(p, m, 1)]


def _net(env):
    return ComponentFlowNetwork(env, np.ones(1))


def test_a_stage_host_issues_while_it_waits_for_its_input():
    """pp=4, one micro-batch, every pass host-bound (host 2, kernels 1): stage s > 0 issued its forward while the
    stages before it ran, so its forward costs its kernels; in step with the GPU every pass would cost 2."""
    times, _ = simulate_pipeline(_net, _stages(4, 1, 1.0, 2.0), 4)
    end = max(t.end_s for t in times)
    # stage 0 forward 2 (host-bound from t = 0), stages 1-3 forward 1 each (issued by then), stage 3 backward:
    # its host issued forward and backward by t = 4, the backward's kernels end at 5+1 = 6; stages 2..0 backward
    # 1 each (issued long before)
    assert end == pytest.approx(2.0 + 3 * 1.0 + 4 * 1.0)
    assert end < 8 * 2.0
    # without host work a pass takes its kernels: the host term only adds
    bare, _ = simulate_pipeline(_net, _stages(4, 1, 1.0, 0.0), 4)
    assert max(t.end_s for t in bare) == pytest.approx(8.0) and 8.0 <= end


def test_steady_state_is_the_longer_of_the_hosts_and_the_gpus_work():
    for host, per_mb in ((0.5, 2.0), (3.0, 6.0)):             # GPU-bound: 2 kernels a micro-batch; host-bound: 6
        t8, _ = simulate_pipeline(_net, _stages(2, 8, 1.0, host), 2)
        t16, _ = simulate_pipeline(_net, _stages(2, 16, 1.0, host), 2)
        assert max(t.end_s for t in t16) - max(t.end_s for t in t8) == pytest.approx(8 * per_mb)


def test_a_host_that_waits_gives_each_pass_the_longer_of_kernels_and_host():
    """host_runs_ahead false (a100-megatron): the simulation's passes are issue_s each, the rule before the run-ahead."""
    from simulator.collectives.params import Parameters
    from simulator.training.llm.config import TrainConfig
    from simulator.training.llm.iteration import simulate_train
    from simulator.training.llm.model import TransformerSpec
    from topologies.presets import server
    from topologies.routing import Router

    model = TransformerSpec("t", layers=8, hidden=1024, heads=16, seq=1024, vocab=32000)
    router = Router(server("dgx-h100", gpus=4))
    c = TrainConfig(1, 4, 1, 4, 1, dtype="bf16", flash_attention=True)      # one micro-batch through 4 stages
    ahead = ComputeParams(host_block_s=2e-3)
    t_ahead = simulate_train(router, model, c, get_gpu("h100"), Parameters(), ahead, record=False).iteration_s
    t_waits = simulate_train(router, model, c, get_gpu("h100"), Parameters(), replace(ahead, host_runs_ahead=False),
                             record=False).iteration_s
    assert t_ahead < t_waits          # stages 1-3 issued their forward while they waited
    from simulator.training.llm.compute import load_compute_params
    assert load_compute_params("a100-megatron").host_runs_ahead is False


def test_plan_bound_stays_below_a_host_bound_simulation():
    from simulator.training.llm.plan_bound import iteration_lower_bound_s
    from simulator.training.llm.config import TrainConfig
    from simulator.training.llm.iteration import simulate_train
    from simulator.training.llm.model import TransformerSpec
    from simulator.collectives.params import Parameters
    from topologies.presets import server
    from topologies.routing import Router

    model = TransformerSpec("t", layers=8, hidden=1024, heads=16, seq=1024, vocab=32000)
    router = Router(server("dgx-h100", gpus=4))
    for host, ahead in ((0.0, True), (2e-4, True), (2e-3, True), (2e-3, False)):
        cp = ComputeParams(host_block_s=host, host_tp_block_s=1.5 * host, host_runs_ahead=ahead)
        cm = ComputeModel(get_gpu("h100"), "bf16", cp)
        for tp, pp in ((1, 4), (2, 2), (4, 1)):
            c = TrainConfig(tp, pp, 4 // (tp * pp), 8 * (4 // (tp * pp)), 1, dtype="bf16", flash_attention=True)
            sim = simulate_train(router, model, c, get_gpu("h100"), Parameters(), cp, record=False)
            assert iteration_lower_bound_s(model, c, cm) <= sim.iteration_s * (1 + 1e-9)


def test_fit_reads_pipeline_stages_and_ties_the_unsharded_issue_time():
    from validation.llm_records import read_llm_records
    from validation.llm_real import UNSHARDED_SHARE, compute_targets, fitted_predictor

    records = read_llm_records([DATA / "h200x4_2026-11-26d" / "llm_world4.jsonl"])
    stages = [t for t in compute_targets(records) if t.part == "stage"]
    assert sorted(t.stage for t in stages) == [0, 1, 2, 3] and all(t.pp == 4 for t in stages)
    pred, _, _ = fitted_predictor(records, "h200-nvlink")
    c = pred.compute
    assert c.host_tp_block_s > 0 and c.host_block_s == pytest.approx(UNSHARDED_SHARE * c.host_tp_block_s)
    # the fitted kernels explain one stage's forward and backward alone within 10%
    for t in stages:
        assert pred.compute_only_s(t) == pytest.approx(t.measured_s, rel=0.1)


def test_the_shipped_share_is_the_issue_probes_median():
    import statistics

    from validation.llm_real import UNSHARDED_SHARE, unsharded_shares

    shares = unsharded_shares()
    assert len(shares) == 5 and all(0.6 < x < 1.0 for x in shares.values())
    assert round(statistics.median(shares.values()), 2) == UNSHARDED_SHARE


def test_without_tp_targets_the_tp_term_stays_unset():
    from validation.llm_real import RealPredictor, fit_compute, issue_targets

    pred = RealPredictor("NVIDIA H100 80GB HBM3", "h100-nvlink-2gpu")
    targets = issue_targets([DATA / "h100x4_2026-11-26_tp" / "tp_issue_world4.jsonl"])
    compute, _ = fit_compute(pred, targets)
    assert compute.host_tp_block_s == 0 and compute.host_block_s > 0
    # a fixed host term is kept, not tied
    compute2, _ = fit_compute(pred, targets, {"host_block_s": 5e-4})
    assert compute2.host_block_s == 5e-4
