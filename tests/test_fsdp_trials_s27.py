"""validation/scripts/fsdp_campaign_first_s27.py and fsdp_nogather_share_s27.py: what each trial changes, and that
it restores today's model (no figure is pinned: the trials' figures are in their docstrings)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from validation import llm_blind
from validation.llm_records import read_llm_records

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "validation" / "data"


def _load(monkeypatch, name: str):
    """The script ``validation/scripts/NAME.py`` as a module, its folder on the path (it imports its sibling)."""
    folder = ROOT / "validation" / "scripts"
    monkeypatch.syspath_prepend(str(folder))
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def script(monkeypatch):
    return _load(monkeypatch, "fsdp_campaign_first_s27")


@pytest.mark.parametrize("name, today, first, second", [
    ("fsdp_world4.jsonl", "OWN_PROBE", "OWN_CAMPAIGN", "OWN_CAMPAIGN"),           # a lease with an issue probe
    ("fsdppair_world4.jsonl", "PAIRED_PROBE", "OWN_CAMPAIGN", "PAIRED_PROBE")])   # ... and paired probes
def test_the_orders_move_the_campaigns_fit_up_and_restore_todays(script, name, today, first, second):
    path = DATA / "h200x4_2026-11-28e_llm" / name
    records = read_llm_records([path])
    chosen = {}
    for variant in ("off", "first", "second"):
        with script.order(variant):
            chosen[variant] = llm_blind.lease_method(path, records, 4).name
            assert llm_blind.lease_method(path, records, 4, own_probes=False) is llm_blind.Method.OTHER_PROBES
    assert chosen == {"off": today, "first": first, "second": second}
    assert llm_blind.lease_method(path, records, 4).name == today


def test_a_lease_without_a_campaign_keeps_its_method(script):
    """h200x4_2026-11-28d ran no llm4 phase: every order leaves its fsdp4 file on its issue probe."""
    path = DATA / "h200x4_2026-11-28d_llm" / "fsdp_world4.jsonl"
    records = read_llm_records([path])
    with script.order("first"):
        assert llm_blind.lease_method(path, records, 4) is llm_blind.Method.OWN_PROBE


@pytest.fixture
def share_script(monkeypatch):
    return _load(monkeypatch, "fsdp_nogather_share_s27")


def test_units_without_an_all_gather_carry_the_share_of_the_unit_host_work(share_script):
    """validation/scripts/fsdp_nogather_share_s27.py: NO_SHARD's block units lose (1 - SHARE) of fsdp_unit_host_s in
    each pass, FULL_SHARD's keep it, and the training layer is as before once the trial ends."""
    import simulator.training.llm.iteration as iteration
    from simulator.training.llm.compute import ComputeParams
    from validation.llm_real import RealPredictor
    from validation.llm_records import group_runs

    records = read_llm_records([DATA / "h200x4_2026-11-28d_llm" / "fsdp_world4.jsonl"])
    runs = {(g.first.strategy, g.first.spec.hidden): g.first for g in group_runs(records.runs)}
    pred = RealPredictor("NVIDIA H200", "h200-nvlink", ComputeParams(fsdp_unit_host_s=1e-3))

    def blocks(strategy):
        config, gpus = pred.config(runs[(strategy, 4096)])
        work = iteration.train_work(pred.router(gpus), pred.model(runs[(strategy, 4096)].spec), config, pred.gpu,
                                    pred.params, pred.compute)
        return [u for st in work.stages for ch in st.chunks for u in ch.units if u.name.startswith("block")]

    before = {s: blocks(s) for s in ("no_shard", "full_shard")}
    with share_script.nogather_share(0.7):
        during = {s: blocks(s) for s in ("no_shard", "full_shard")}
    assert {s: blocks(s) for s in before} == before
    for a, b in zip(before["no_shard"], during["no_shard"]):
        assert a.host_forward_s - b.host_forward_s == pytest.approx(0.3e-3)
        assert a.host_backward_s - b.host_backward_s == pytest.approx(0.3e-3)
    assert during["full_shard"] == before["full_shard"]
