"""validation/scripts/fsdp_campaign_first_s27.py: the trial's method orders, and that it restores today's (no model
figure is pinned: the trial's figures are in its docstring)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from validation import llm_blind
from validation.llm_records import read_llm_records

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "validation" / "data"


@pytest.fixture
def script(monkeypatch):
    folder = str(ROOT / "validation" / "scripts")
    monkeypatch.syspath_prepend(folder)
    spec = importlib.util.spec_from_file_location("fsdp_campaign_first_s27",
                                                  Path(folder) / "fsdp_campaign_first_s27.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


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
