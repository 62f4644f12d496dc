"""validation/scripts/tp_h100_s23.py: the data-only facts its docstring records (no model figure is pinned)."""

import pytest

from tests.conftest import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("tp_h100_s23")


@pytest.fixture(scope="module")
def sets(script):
    return {s.name: s for s in script.run_sets()}


def test_run_sets_cover_section_7_and_the_sealed_tp_rows(sets):
    assert len(sets) == 23        # 18 when the script was written, then the tenth sealed lease (4x H100) landed,
    #                               then the eleventh (4x H200; the twelfth has no TP runs), then the thirteenth (4x H200),
    #                               then the fifteenth (4x H200; the fourteenth has no TP runs), then the 2-GPU one
    assert sum(s.gpu == "H100" for s in sets.values()) == 9
    assert "h100x4_2026-11-27_llm TP issue probe" in sets and sets["h100x4_2026-11-27_llm TP issue probe"].probe


@pytest.mark.parametrize("name, lo, hi", [("h200x2_2026-11-26c", 0.0, 0.01), ("h100x4_2026-11-26h", 0.15, 0.17),
                                          ("h100x4_2026-11-27_llm TP issue probe", 0.18, 0.19)])
def test_launch_disagreement_as_recorded(script, sets, name, lo, hi):
    assert lo <= script.launch_disagreement(sets[name].records()) <= hi


def test_larger_model_faster_more_often_on_h100(script, sets):
    from validation.llm_records import RunError, group_runs
    scored = []
    for s in sets.values():
        groups = group_runs([r for r in s.records().runs if r.runner == "tp"])
        scored.append((s, [RunError("tp", g.point, g.first.world, len(g.runs), g.median_s, 0.0, 0.0, 1.0)
                           for g in groups]))
    pairs = script.faster_pairs(scored)
    assert (sum(pairs["H100"]), len(pairs["H100"])) == (7, 18)   # (7, 16) before the tenth sealed lease
    assert (sum(pairs["H200"]), len(pairs["H200"])) == (7, 28)   # (3, 20) before the eleventh sealed lease, (3, 22)
    #                                                                before the thirteenth, (4, 24) before the fifteenth,
    #                                                                (6, 26) before the 2-GPU one
