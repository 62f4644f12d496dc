"""The accuracy report's shortcuts give what the long way gives: a fit reused only for the same inputs, a JSON
text's walk skipped only where it could not refuse anything."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from simulator.core import limits
from simulator.core.errors import InputError
from simulator.core.inputs import _within_limits, check_data, parse_json
from validation.llm_real import RealPredictor, _fit_compute, compute_targets, fit_compute, fit_inputs
from validation.llm_records import read_llm_records

TWO = Path(__file__).resolve().parents[1] / "validation" / "data" / "h200x2_2026-11-26c" / "llm_world2.jsonl"


@pytest.fixture(scope="module")
def fit_case() -> tuple[RealPredictor, list]:
    records = read_llm_records(TWO)
    return RealPredictor(records.runs[0].gpu, "h200-nvlink-2gpu"), compute_targets(records)[:3]


def test_a_fit_is_made_once_for_the_same_inputs(fit_case: tuple) -> None:
    pred, targets = fit_case
    first = fit_compute(pred, targets)
    assert fit_compute(RealPredictor(pred.gpu.name, "h200-nvlink-2gpu"), list(targets)) is first
    assert first == _fit_compute(pred, targets)          # the same answer as fitting again


@pytest.mark.parametrize("change", ["measured", "fixed", "params", "compute", "targets"])
def test_a_changed_input_gives_a_new_fit(fit_case: tuple, change: str) -> None:
    pred, targets = fit_case
    before = fit_compute(pred, targets)
    fixed = None
    if change == "measured":          # one measurement 20% slower
        targets = [replace(targets[0], measured_s=targets[0].measured_s * 1.2), *targets[1:]]
    elif change == "fixed":
        fixed = {"mem_efficiency": 0.6}
    elif change == "params":          # another collective calibration
        pred = RealPredictor(pred.gpu.name, "h200-nvlink")
    elif change == "compute":         # another starting point / held parameters
        pred = pred.with_compute(replace(pred.compute, kernel_overhead_s=pred.compute.kernel_overhead_s + 5e-6))
    else:
        targets = targets[:2]
    assert fit_inputs(pred, targets, fixed) != fit_inputs(*fit_case, None)
    after = fit_compute(pred, targets, fixed)
    assert after == _fit_compute(pred, targets, fixed)
    if change != "params":            # these targets run on one GPU: no collective, the same answer, a new key
        assert after != before


def _nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


@pytest.mark.parametrize("depth, refused", [(limits.INPUT_DEPTH.value, False), (limits.INPUT_DEPTH.value + 1, True)])
def test_nesting_at_and_past_the_limit(depth: int, refused: bool) -> None:
    if refused:
        with pytest.raises(InputError, match="nesting"):
            parse_json(_nested(depth), "x.json")
    else:
        assert parse_json(_nested(depth), "x.json") is not None


def test_brackets_inside_strings_are_not_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[object] = []
    monkeypatch.setattr("simulator.core.inputs.check_data", lambda data, source="": walked.append(data))
    parse_json('{"a": 1}')
    parse_json(json.dumps({"a": "[" * (limits.INPUT_DEPTH.value + 1)}))
    assert walked == []


def test_many_shallow_brackets_skip_the_walk_and_deep_ones_do_not(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[object] = []
    monkeypatch.setattr("simulator.core.inputs.check_data", lambda data, source="": walked.append(data))
    parse_json(json.dumps([{"a": [1]} for _ in range(limits.INPUT_DEPTH.value)]))     # 129 brackets, 3 deep
    assert walked == []
    parse_json(_nested(limits.INPUT_DEPTH.value + 1))
    assert len(walked) == 1


def test_a_long_string_is_still_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(limits.STRING_CHARS.env, "2000000")
    text = json.dumps({"a": "x" * 1_500_000})
    monkeypatch.delenv(limits.STRING_CHARS.env)
    with pytest.raises(InputError, match="characters"):
        parse_json(text, "x.json")


json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**63 + 1, 2**63 - 1)
                           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                        max_size=3),
                           max_leaves=40)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_a_text_within_the_counts_is_one_the_walk_passes(value: object) -> None:
    text = json.dumps(value)
    data = json.loads(text)
    if _within_limits(text, data):
        check_data(data)                      # never refuses what the shortcut lets through


@settings(max_examples=100, deadline=None)
@given(st.integers(limits.INPUT_DEPTH.value - 3, limits.INPUT_DEPTH.value + 3), st.integers(0, 80),
       st.booleans())
def test_the_shortcut_agrees_with_the_walk_near_the_depth_limit(depth: int, siblings: int, objects: bool) -> None:
    data: object = 1
    for level in range(depth):          # ``depth`` containers deep, with shallow siblings beside the outermost
        data = {"k": data} if objects and level % 2 else [data]
    data = [data, *([{"s": [0]}] * siblings)] if depth else data
    text = json.dumps(data)
    try:
        check_data(data)
        refused = False
    except InputError:
        refused = True
    assert _within_limits(text, data) is not refused


@pytest.mark.parametrize("flash", [True, False])
def test_a_chunk_of_repeated_blocks_costs_its_plain_sum(flash: bool) -> None:
    """ComputeModel.pass_s and Pass.flops time each distinct kernel object of a chunk once: the same float as
    summing every kernel in order, also when equal kernels are distinct objects."""
    from simulator.training.gpus import get_gpu
    from simulator.training.llm.compute import ComputeModel, ComputeParams
    from simulator.training.llm.config import TrainConfig
    from simulator.training.llm.layer import MemOp, Pass, block_work
    from simulator.training.llm.model import zoo_model

    config = TrainConfig(2, 1, 1, 4, 2, dtype="bf16", flash_attention=flash)
    block = block_work(zoo_model("gpt3-175b"), config)
    cm = ComputeModel(get_gpu("h100"), "bf16", ComputeParams(kernel_overhead_s=3e-6))
    for one in (block.forward, block.backward):
        chunk = one.times(7) + Pass(tuple(replace(k) for k in one.kernels), ())   # 7 shared copies + 1 distinct
        assert cm.pass_s(chunk, 2) == sum(cm.kernel_s(k, 2) for k in chunk.kernels)
        assert chunk.flops == sum(k.flops for k in chunk.kernels if not isinstance(k, MemOp))


def test_a_simulation_is_made_once_for_the_same_inputs(fit_case: tuple) -> None:
    """RealPredictor.simulated gives simulate_train's own figures, once per inputs: an equal predictor built anew
    reuses them, another compute set simulates again."""
    from simulator.training.llm.iteration import simulate_train
    from validation import llm_real

    pred, targets = fit_case
    config, spec = llm_real._block_config(1, targets[0].micro_batch, False), targets[0].spec
    r = simulate_train(pred.router(1), pred.model(spec), config, pred.gpu, pred.params, pred.compute, record=False)
    assert pred.simulated(config, spec) == (r.iteration_s, r.host_floor_s)
    n = len(llm_real._TRAINS)
    assert RealPredictor(pred.gpu.name, "h200-nvlink-2gpu").simulated(config, spec) == (r.iteration_s, r.host_floor_s)
    assert len(llm_real._TRAINS) == n
    slower = pred.with_compute(replace(pred.compute, mem_efficiency=pred.compute.mem_efficiency / 2))
    assert slower.simulated(config, spec)[0] > r.iteration_s and len(llm_real._TRAINS) == n + 1


def test_a_paired_file_is_read_again_once_it_changes(tmp_path: Path) -> None:
    from validation import fsdp_pair as fp

    source = fp.pair_files(fp.PAIRED[0])[0]
    path = tmp_path / source.name
    lines = source.read_text().splitlines(keepends=True)
    path.write_text("".join(lines))
    whole = fp.read_pairs([path])
    assert fp.read_pairs([path]) == whole and fp.has_pairs(path)
    first = next(i for i, x in enumerate(lines) if '"pair_probe"' in x)
    path.write_text("".join(lines[:first] + lines[first + 1:]))     # one paired record fewer: another size
    assert len(fp.read_pairs([path])) == len(whole) - 1


@pytest.mark.parametrize("text, refused", [("0", False), ("-1", False), (str(2**63 - 1), False),
                                           (str(-(2**63 - 1)), False), (str(2**63), True), (str(-2**63), True),
                                           ("1" + "0" * 19, True), ("-" + "9" * 19, True), ("9" * 400, True)])
def test_json_integers_beyond_64_bits_are_refused(text: str, refused: bool) -> None:
    if refused:
        with pytest.raises(InputError, match="64 bits"):
            parse_json(f'{{"a": {text}}}', "x.json")
    else:
        assert parse_json(f'{{"a": {text}}}', "x.json") == {"a": int(text)}


def test_a_stage_chunk_built_once_is_the_chunk_built_anew() -> None:
    """layer.stage_chunk_work (cached) is chunk_work of fresh block, embedding and output work of the plan's own
    configuration, and a pass's time is the in-order sum of its kernels' times (Pass.layout)."""
    from simulator.training.gpus import get_gpu
    from simulator.training.llm.compute import ComputeModel, ComputeParams
    from simulator.training.llm.config import TrainConfig
    from simulator.training.llm.layer import (block_work, chunk_work, embedding_work, output_work,
                                              stage_chunk_work)
    from simulator.training.llm.model import zoo_model

    model = zoo_model("gpt3-175b")
    cm = ComputeModel(get_gpu("a100"), "bf16", ComputeParams())
    for config in (TrainConfig(8, 4, 1, 16, 1), TrainConfig(4, 2, 4, 64, 2, recompute="selective", zero=1),
                   TrainConfig(8, 4, 2, 32, 2, schedule="interleaved", virtual_stages=2, sequence_parallel=True,
                               recompute="full", dtype="fp16"),
                   TrainConfig(2, 1, 8, 64, 4, fsdp="hybrid", fsdp_shard=4, flash_attention=True)):
        last = config.pp * config.chunks - 1
        for v, n in ((0, 24), (1, 12), (last, 24)):
            cached = stage_chunk_work(model, config, v, n)
            fresh = chunk_work(model, config, v == 0, v == last, n, block_work.__wrapped__(model, config),
                               embedding_work.__wrapped__(model, config), output_work.__wrapped__(model, config))
            assert cached == fresh and stage_chunk_work(model, config, v, n) is cached
            for p in cached[:2]:
                assert cm.pass_s(p, 2) == sum([cm.kernel_s(k, 2) for k in p.kernels])
                assert len(p.layout[0]) < len(p.kernels) and tuple(p.layout[0][i] for i in p.layout[1]) == p.kernels


def test_plans_that_differ_outside_a_chunks_work_share_its_cache_entry() -> None:
    """Middle virtual stages of plans that differ only in DP, pipeline size and schedule, sharding or placement
    are one cache entry (so a search's cache grows with its work configurations, not its plans); a field the
    work depends on (micro-batch, recomputation) is not shared."""
    from simulator.training.llm.config import TrainConfig
    from simulator.training.llm.layer import stage_chunk_work
    from simulator.training.llm.model import zoo_model

    model = zoo_model("gpt3-175b")
    one = stage_chunk_work(model, TrainConfig(8, 4, 1, 16, 1), 1, 12)
    for same in (TrainConfig(8, 8, 4, 64, 1, zero=1, order="tp-pp-dp"),
                 TrainConfig(8, 4, 2, 32, 1, schedule="interleaved", virtual_stages=2, fsdp="full")):
        assert stage_chunk_work(model, same, 3, 12) is one
    for other in (TrainConfig(8, 4, 1, 32, 2), TrainConfig(8, 4, 1, 16, 1, recompute="full")):
        assert stage_chunk_work(model, other, 1, 12) != one


def test_the_plan_bound_reads_the_simulations_chunk_work(monkeypatch) -> None:
    """plan_bound.stage_pass_s times the very passes layer.stage_chunk_work builds for the simulation (one
    definition, one cache), not passes of its own."""
    from simulator.training.gpus import get_gpu
    from simulator.training.llm import layer, plan_bound
    from simulator.training.llm.compute import ComputeModel, ComputeParams
    from simulator.training.llm.config import TrainConfig
    from simulator.training.llm.model import zoo_model

    model, config = zoo_model("gpt3-175b"), TrainConfig(8, 4, 1, 16, 1)
    cm = ComputeModel(get_gpu("a100"), "bf16", ComputeParams())
    timed: list[int] = []
    pass_s = ComputeModel.pass_s
    monkeypatch.setattr(ComputeModel, "pass_s", lambda self, work, b: timed.append(id(work)) or pass_s(self, work, b))
    plan_bound.stage_pass_s(model, config, cm)
    cached = {id(p) for v in range(4) for p in layer.stage_chunk_work(model, config, v, 24)[:2]}
    assert timed and set(timed) <= cached
