"""The FSDP runner's --free-gathers and validation.fsdp_issue's gather split: FSDP1's host cost per all-gather apart
from its per-unit work, per launch with the spread over launches (issue 14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from validation import fsdp_issue as fi
from validation.runners import fsdp
from validation.runners.llm_sweep import TINY_SPECS

REPO = Path(__file__).resolve().parents[1]
STRATEGIES = "no_shard,hybrid_shard,shard_grad_op,full_shard"


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """The fsdpsplit phase's runner arguments on CPU (gloo, 2 ranks, the tiny spec)."""
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("split") / "split.jsonl"
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
                           "-m", "validation.runners.fsdp", "--specs", TINY_SPECS, "--micro-batch", "2",
                           "--strategies", STRATEGIES, "--replicate", "2", "--issue", "--free-gathers",
                           "--iters", "2", "--warmup", "1", "--backend", "gloo", "--device", "cpu", "--out", str(out)],
                          cwd=REPO, env={**os.environ, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(x) for x in out.read_text().splitlines() if x.strip()]


def test_free_gathers_records_every_fsdp_point_without_the_rate_limiter(cpu_run: list[dict]) -> None:
    points = [r for r in cpu_run if r["kind"] == "llm_fsdp"]
    assert [r["strategy"] for r in points] == STRATEGIES.split(",")
    assert all(r["limit_all_gathers"] is False and r["issue_forward_s"] > 0 for r in points)
    assert fsdp.parse_settings(["--specs", TINY_SPECS, "--out", "x.jsonl"]).limit_all_gathers   # on unless asked


MS = {  # configuration -> (forward, backward) issue ms; units = layers + 1 = 5
    "one": (10.0, 20.0), "nocomm": (15.0, 30.0), "no_shard": (15.5, 31.0), "shard_grad_op": (17.5, 33.5),
    "full_shard": (18.5, 37.5)}


def _what(r: dict) -> str:
    return "one" if r["kind"] == "llm_profile" else ("nocomm" if r["strategy"] == "hybrid_shard" else r["strategy"])


def hand_set(cpu_run: list[dict], path: Path, scale: tuple[float, float]) -> None:
    """The CPU run's records as two launches with the issue times of :data:`MS` (the second launch's scaled)."""
    lines = []
    for launch, k in enumerate(scale):
        for r in cpu_run:
            if r["kind"] not in ("llm_profile", "llm_fsdp"):
                continue
            prefix = "model_" if r["kind"] == "llm_profile" else ""
            fwd, bwd = MS[_what(r)]
            lines.append(json.dumps({**r, "launch_index": launch, f"{prefix}issue_forward_s": fwd * k * 1e-3,
                                     f"{prefix}issue_backward_s": bwd * k * 1e-3}))
    path.write_text("\n".join(lines) + "\n")


def test_gather_split_is_the_hand_computed_difference_per_launch(cpu_run: list[dict], tmp_path: Path) -> None:
    path = tmp_path / "hand.jsonl"
    hand_set(cpu_run, path, (1.0, 2.0))
    (split,) = fi.gather_splits(*fi.read_launches([path]))
    assert split.world == 2 and len(split.gather.values) == 2
    assert split.unit.values == pytest.approx((1.0e-3, 2.0e-3))              # (15 - 10) / 5 units
    assert split.gather.values == pytest.approx((0.6e-3, 1.2e-3))            # (18.5 - 15.5) / 5
    assert split.gather_kept.values == pytest.approx((0.4e-3, 0.8e-3))       # (17.5 - 15.5) / 5
    assert split.regather.values == pytest.approx((1.0e-3, 2.0e-3))          # (37.5 - 33.5) / 4 blocks
    assert split.scatter.values == pytest.approx((0.5e-3, 1.0e-3))           # (33.5 - 31) / 5
    assert split.gather.median == pytest.approx(0.9e-3) and split.gather_share == pytest.approx(0.9 / 2.4)
    lines = fi.gather_lines([split])
    assert "0.900 [0.600, 1.200]" in lines[-1] and "0.41 / 0.30" in lines[-1]


def test_rate_limited_full_shard_gives_no_gather_split(cpu_run: list[dict], tmp_path: Path) -> None:
    """FULL_SHARD with the rate limiter waits for the GPU behind the sleep: it is never read as the host's alone."""
    limited = [{**r, "limit_all_gathers": True} if r["kind"] == "llm_fsdp" else r for r in cpu_run]
    path = tmp_path / "limited.jsonl"
    hand_set(limited, path, (1.0, 1.0))
    assert fi.gather_splits(*fi.read_launches([path])) == []
    assert any("| FULL_SHARD |" in line for line in fi.report(fi.read_points([path])))


@pytest.fixture(scope="module")
def campaign_2gpu():
    """The 2-GPU H200 campaign's records and its fitted predictor (``llm_blind.HOST_FROM[2]``)."""
    from validation.llm_blind import DATA, HOST_FROM
    from validation.llm_real import fitted_predictor, read_llm_records

    folder, name, calibration = HOST_FROM[2]
    records = read_llm_records([DATA / folder / name])
    return fitted_predictor(records, calibration)[0], records


def test_fit_splits_are_the_campaigns_free_fits(campaign_2gpu):
    """:data:`FIT_SPLITS` (text) is what ``fit_host_work`` fits today on the 2-GPU campaign."""
    from validation.llm_real import HOST_KEYS, fit_host_work

    values, _ = fit_host_work(*campaign_2gpu)
    assert [values[k] for k in HOST_KEYS] == pytest.approx(fi.FIT_SPLITS[2], abs=1e-6)


@pytest.mark.parametrize("share", [0.2, 0.5])
def test_a_fixed_gather_share_is_kept_by_the_fit(campaign_2gpu, share):
    from validation.llm_real import fit_host_work

    values, pct = fit_host_work(*campaign_2gpu, gather_share=share)
    unit, gather = values["fsdp_unit_host_s"], values["fsdp_gather_host_s"]
    assert gather / (unit + gather) == pytest.approx(share) and unit + gather > 0 and pct >= 0
