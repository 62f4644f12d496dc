"""validation.fsdp_host_items: the host's work per FSDP unit boundary, FSDP less the model alone, by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from validation import fsdp_host_items as hi
from validation.fsdp_profile import Profiled

LEASE = Path(__file__).resolve().parents[1] / "validation/data/h200x2_2026-11-27b_fsdpprof/fsdpprof_world2_L1.jsonl"


def _host(gemm_at: list[float], rows: dict[str, list[list[Any]]], names: list[str]) -> dict[str, Any]:
    """A host step whose compute-stream (7) GEMMs are launched at ``gemm_at`` us."""
    events = [[7, "gemm", t * 1e-6, 1e-6, t * 1e-6] for t in gemm_at]
    return {"names": names, "threads": ["1"], "events": events, "ranges": rows.get("ranges", []),
            "ops": rows.get("ops", []), "calls": rows.get("calls", [])}


def test_windows_follow_the_gpt_shape() -> None:
    host = _host([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140], {}, [])   # 2 layers, g = 2
    fwd, bwd = hi.windows(host, 2)
    assert fwd == [pytest.approx((10.0, 20.0))]       # block 0's last forward GEMM to block 1's first
    assert bwd == [pytest.approx((60.0, 70.0)), pytest.approx((100.0, 110.0))]   # head -> block 1, block 1 -> 0
    assert hi.windows(_host([0, 10, 20], {}, []), 2) is None


def test_a_backward_hook_counts_against_the_model_alone() -> None:
    """One post-backward hook range and two view nodes in the backward boundary, none alone; a runtime call in both
    passes of both: the hook and the views are listed in the backward, the shared call is not."""
    gemms = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140]
    names = ["FullyShardedDataParallel._post_backward_hook", "autograd::engine::evaluate_function: ViewBackward0",
             "cudaEventRecord"]
    mine = _host(gemms, {"ranges": [[0, 0, 101.0, 5.0]], "ops": [[1, 0, 102.0, 1.0, 0], [1, 0, 103.0, 1.0, 0]],
                         "calls": [[2, 0, 12.0, 1.0], [2, 0, 104.0, 1.0]]}, names)
    alone = _host(gemms, {"calls": [[2, 0, 12.0, 1.0], [2, 0, 104.0, 1.0]]}, names)
    rec = {"strategy": "full_shard", "hidden": 64, "layers": 2, "timeline": [{"host": mine}]}
    it = hi.itemise([Profiled(Path("x.jsonl"), rec, ({"host": alone},))])
    assert it is not None and it.steps == 1 and it.label == "full_shard h64"
    got = {(x.kind, x.name): (x.forward_n, x.backward_n, x.backward_us) for x in it.items}
    assert got == {("ranges", names[0]): (0.0, 0.5, 2.5), ("ops", names[1]): (0.0, 1.0, 1.0)}


def test_the_committed_lease_itemises_every_configuration() -> None:
    """``h200x2_2026-11-27b_fsdpprof``: six configurations, six host steps each (3 launches x 2 ranks); the
    backward boundary has FSDP1's post-backward hook and about one view node per original parameter more than
    alone, the forward the unsharded views' ``view`` calls (12 parameters of a block)."""
    lines = hi.report([LEASE])
    assert sum(x.startswith("## ") for x in lines) == 6 and all("(6 host steps)" in x for x in lines if x.startswith("## "))
    from validation.fsdp_profile import read_profiled
    by: dict[str, list[Profiled]] = {}
    for p in read_profiled(LEASE):
        by.setdefault(p.record["point"], []).append(p)
    for ps in by.values():
        it = hi.itemise(ps)
        assert it is not None
        got = {(x.kind, x.name): x for x in it.items}
        layers = ps[0].record["layers"]     # the first backward boundary (head -> last block) has no block hook yet
        assert got["ranges", "FullyShardedDataParallel._post_backward_hook"].backward_n == (layers - 1) / layers
        assert 8 <= got["ops", "autograd::engine::evaluate_function: ViewBackward0"].backward_n <= 12
        assert got["ops", "aten::view"].forward_n == 12
    assert hi.main(["/nonexistent.jsonl"]) == 2


def _damaged_lease(tmp_path: Path, change) -> Path:
    """The committed host-profiled lease with its first host step changed by ``change`` (a host object -> None)."""
    import json
    lines = LEASE.read_text().splitlines()
    for i, line in enumerate(lines):
        r = json.loads(line)
        steps = r.get("timeline") if r.get("kind") == "llm_fsdp" else None
        if steps and steps[0] and steps[0].get("host"):
            change(steps[0]["host"])
            lines[i] = json.dumps(r)
            break
    out = tmp_path / LEASE.name
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.parametrize("change, field", [
    (lambda h: h.pop("events"), "host.events"),
    (lambda h: h.update(names=None), "host.names"),
    (lambda h: h["ops"].__setitem__(0, [10 ** 6, 0, 1.0, 1.0, 0]), "host.ops[0]"),     # a name index past names
    (lambda h: h["calls"].__setitem__(0, [0, 0, "late", 1.0]), "host.calls[0]"),
])
def test_a_damaged_host_step_is_one_line_naming_the_field(tmp_path: Path, capsys: Any, change, field: str) -> None:
    """python -m validation.fsdp_host_items FILE: a damaged host step (fsdp --profile-host) is one line naming the
    file, the point and the field, exit 2 (it was a KeyError / TypeError / IndexError traceback)."""
    path = _damaged_lease(tmp_path, change)
    assert hi.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and f"timeline[0].{field}" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
