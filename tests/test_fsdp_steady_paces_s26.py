"""validation/scripts/fsdp_steady_paces_s26.py: which rows its 2-GPU host variants move (no model figure is pinned)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from validation import llm_blind, llm_real, sealed_campaign

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def script(monkeypatch):
    """The script, with every module global its variants replace restored after the test."""
    for module, name in ((llm_real, "OTHER_GPU_CAMPAIGNS"), (llm_real, "ISSUE_CAMPAIGNS"),
                         (sealed_campaign, "_scored")):
        monkeypatch.setattr(module, name, getattr(module, name))
    monkeypatch.setitem(llm_blind.HOST_FROM, 4, llm_blind.HOST_FROM[4])
    spec = importlib.util.spec_from_file_location("fsdp_steady_paces_s26", ROOT / "validation/scripts/fsdp_steady_paces_s26.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def _host_from() -> dict[str, int]:
    return {r.folder: r.host_from for r in llm_real.section_runs()}


def test_today_each_world_size_takes_its_own_campaigns_host():
    assert llm_blind.HOST_FROM == {2: llm_real.CAMPAIGNS[0], 4: llm_real.CAMPAIGNS[1]}
    assert _host_from()[llm_real.CAMPAIGNS[0][0]] == 1 and _host_from()[llm_real.CAMPAIGNS[1][0]] == 0


def test_two_gpu_host_moves_every_row_but_the_2gpu_campaign_itself(script):
    scored = sealed_campaign._scored
    script.two_gpu_host()
    assert llm_blind.HOST_FROM[4] == llm_blind.HOST_FROM[2] == llm_real.CAMPAIGNS[0]
    own = _host_from()
    two = llm_real.CAMPAIGNS[0][0]
    assert own[two] == 1                        # never fitted on itself
    assert {f: i for f, i in own.items() if f != two} == {f: 0 for f in own if f != two}
    assert sealed_campaign._scored is not scored    # the sealed llm4 rows take the 2-GPU host too


def test_fsdp_only_leaves_the_llm4_and_tp_rows(script):
    before, scored = _host_from(), sealed_campaign._scored
    script.two_gpu_host(fsdp_only=True)
    assert llm_blind.HOST_FROM[4] == llm_real.CAMPAIGNS[0]
    assert _host_from() == before and sealed_campaign._scored is scored


def test_usage_names_the_targets(script, capsys):
    assert script.main(["off", "nowhere"]) == 2
    err = capsys.readouterr().err
    assert all(t in err for t in script.TARGETS)
