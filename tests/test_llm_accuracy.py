"""Accuracy regression on the committed public LLM data (validation/data/public/llm/).

The bounds sit just above today's figures in docs/accuracy.md section 7, so a change that makes
the model worse fails here. A subset keeps it quick: the two smaller Selene models, one vTrain model
size's 8-GPU runs (held out of the fit of the shipped a100-megatron set), all Selene memory points.
"""

import numpy as np
import pytest

from simulator.training.llm.compute import load_compute_params
from validation.llm_compare import LLM_DATA, LlmPredictor, errors_pct, read_llm, spearman


def test_selene_iteration_times_with_datasheet_compute():
    _, runs, _ = read_llm(LLM_DATA / "megatron_selene_a100.jsonl")
    small = [r for r in runs if r.config.gpus <= 64]
    P = LlmPredictor()
    e = errors_pct([P.iteration_s(r) for r in small], [r.iteration_s for r in small])
    assert len(small) == 4 and np.median(e) < 8.0 and e.max() < 9.0


def test_selene_memory_per_gpu():
    """Like for like (Figure 1 counts the blocks' states, 18 bytes per parameter, and the activations) the
    prediction is within 0.1% on every point; the first stage's whole memory, with the embedding table the
    figure leaves out, is above the figure by the embedding's states and stays within the 5% target."""
    _, _, mems = read_llm(LLM_DATA / "megatron_selene_a100.jsonl")
    P = LlmPredictor()
    assert len(mems) == 8
    for r in mems:
        states, act = P.memory_GiB(r)
        embedding = r.model.embedding_params() / r.config.tp * 18 / 2**30
        figure = r.states_GiB + r.activations_GiB
        assert act == pytest.approx(r.activations_GiB, rel=1e-3)
        assert (states - embedding + act) / figure == pytest.approx(1, abs=1e-3)
        assert 1 < (states + act) / figure < 1.05


def test_vtrain_8gpu_held_out_runs_with_the_shipped_fit():
    _, runs, _ = read_llm(LLM_DATA / "vtrain_single_a100.jsonl")
    held = [r for r in runs if r.config.gpus == 8 and r.model.hidden == 2048 and r.model.layers == 12]
    P = LlmPredictor(compute=load_compute_params("a100-megatron"))
    pred, meas = [P.iteration_s(r) for r in held], [r.iteration_s for r in held]
    assert len(held) == 90
    assert np.median(errors_pct(pred, meas)) < 5.0 and spearman(pred, meas) > 0.98


def test_plan_search_top_picks_on_vtrain_8gpu_runs():
    """docs/accuracy.md section 9 on two model sizes: every top pick within 5% of the measured fastest."""
    from validation.search_check import VTRAIN as SEARCH_DATA, groups, pick_gap
    _, runs, _ = read_llm(SEARCH_DATA)
    found = {name: [pick_gap(g)[2:] for (n, _), g in sorted(groups(runs).items()) if n == name]
             for name in ("gpt-h1024-l12", "gpt-h2048-l24")}
    small, large = found["gpt-h1024-l12"], found["gpt-h2048-l24"]
    assert len(small) == len(large) == 7
    assert all(top1 <= 5 for top1, _ in small + large)


def test_the_host_rule_chosen_with_the_8gpu_figure_in_view_is_said():
    """Review s17 #7: a100-megatron's host rule (host_runs_ahead false) was chosen with the held-out 8-GPU vTrain runs'
    figure in view (3.5% against 6.4%); the report called those runs out of sample without saying so."""
    from validation import llm_accuracy as la
    text = la.host_rule_note()
    assert "host_runs_ahead` false" in text and "3.5% against 6.4%" in text and "not held out" in text
    from simulator.training.llm.compute import load_compute_params
    assert load_compute_params(la.CALIBRATION).host_runs_ahead is la.HOST_RUNS_AHEAD


def test_the_shipped_compute_set_is_what_its_tool_writes():
    """Review s17 #14: `python -m validation.llm_accuracy --fit` writes the calibration (with ``llm_gpus``, its interval
    band's key) and `validation.pass_profile --fit` adds its profile; the shipped file, hand-edited once, had no
    ``llm_gpus``. Rebuilt from its own fitted set and fit figures, the tool's part is the shipped file's."""
    import json

    from simulator.collectives.params import SHIPPED_DIR
    from simulator.training.llm.compute import load_compute_params
    from validation import llm_accuracy as la
    shipped = json.loads((SHIPPED_DIR / f"{la.CALIBRATION}.json").read_text())
    fit = shipped["fit"]
    written = la.calibration_data(load_compute_params(la.CALIBRATION), {
        "runs": la.FIT_SAMPLE, "median_pct": fit["in_sample_median_pct"], "p90_pct": fit["in_sample_p90_pct"]})
    assert list(shipped)[:len(written)] == list(written)
    assert {k: shipped[k] for k in written} == written
    assert set(shipped) - set(written) == {"pass_profile_fit", "pass_profile"}      # validation.pass_profile's
