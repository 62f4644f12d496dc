"""DDP's per-tensor work (simulator.training.ddp, 'Per-tensor work') and its measurement on the
committed compute probe (validation.ddp_host)."""

from __future__ import annotations

from dataclasses import replace

import pytest

import topologies

from simulator.core.errors import InputError
from simulator.core.vocabulary import Limit
from simulator.network.closed_form import CostModel
from simulator.training.ddp import DDPConfig, simulate_iteration
from tests.conftest import line_topology
from tests.test_ddp import BWD, FWD, MS, OPT, params, workload

CFG = DDPConfig(bucket_cap_mb=1000, first_bucket_mb=None)     # one bucket, gradients copied (no view)


def _w(**extras):
    w = workload((10**6, 1 * MS), (10**6, 2 * MS), (10**6, 3 * MS))
    return replace(w, extras=tuple(extras.items()))


@pytest.mark.parametrize("engine", ["closed", "des"])
def test_kernels_and_copy_back_lengthen_a_compute_bound_step(engine):
    plain = simulate_iteration(CostModel(line_topology(2), params()), _w(buffer_tensors=4), CFG, engine)
    k = 5e-6
    p = params(tensor_kernel_s=k, bucket_copy_Bps=1e12)
    r = simulate_iteration(CostModel(line_topology(2), p), _w(buffer_tensors=4), CFG, engine)
    # 3 gradients scaled into the bucket (backward) and copied back (before the optimizer), 4 buffers (forward)
    copy_back = 3 * k + 3e6 / 1e12
    assert r.copy_back_s == pytest.approx(copy_back)
    assert r.iteration_s == pytest.approx(plain.iteration_s + 4 * k + 3 * k + copy_back, rel=1e-6)
    assert r.forward_s == pytest.approx(FWD + 4 * k)
    view = simulate_iteration(CostModel(line_topology(2), p), _w(buffer_tensors=4),
                              replace(CFG, gradient_as_bucket_view=True), engine)
    assert view.copy_back_s == 0.0 and view.iteration_s == pytest.approx(plain.iteration_s + 7 * k, rel=1e-6)


def test_the_datasheet_charges_no_per_tensor_work_and_one_gpu_none_at_all():
    w = _w(buffer_tensors=4)
    base = simulate_iteration(CostModel(line_topology(2), params()), w, CFG, "closed")
    assert base.copy_back_s == 0.0 and base.host_path_s is None
    one_gpu = CostModel(topologies.build("dgx-h100", gpus_per_node=1), params(tensor_kernel_s=1e-3, tensor_host_s=1e-3))
    one = simulate_iteration(one_gpu, _w(buffer_tensors=4), CFG, "closed")
    assert one.iteration_s == pytest.approx(FWD + BWD + OPT) and one.copy_back_s == 0.0
    # one GPU has no DDP work, but a host slower than the GPU still sets the pace, there and in the baseline
    slow = simulate_iteration(one_gpu, _w(forward_host_s=0.01, backward_host_s=0.01), CFG, "closed")
    assert slow.iteration_s == slow.host_path_s == pytest.approx(0.02) and slow.scaling_efficiency == 1.0


def test_a_host_bound_step_pays_ddps_host_work():
    p = params(tensor_host_s=100e-6, bucket_host_s=1e-3, buffer_host_s=10e-6)
    m = CostModel(line_topology(2), p)
    w = _w(forward_host_s=2 * MS, backward_host_s=5 * MS, optimizer_host_s=1 * MS, buffer_tensors=4)
    r = simulate_iteration(m, w, CFG, "closed")
    host = 2 * MS + 5 * MS + 1 * MS + 3 * 100e-6 + 1 * 1e-3 + 4 * 10e-6
    assert r.host_path_s == pytest.approx(host)
    assert r.iteration_s == pytest.approx(host) and r.limit is Limit.HOST
    fast_host = simulate_iteration(m, _w(forward_host_s=0.1 * MS, backward_host_s=0.1 * MS), CFG, "closed")
    assert fast_host.iteration_s < host and fast_host.limit is not Limit.HOST
    acc = simulate_iteration(m, w, replace(CFG, accumulation_steps=3), "closed")
    assert acc.host_path_s == pytest.approx(host + 2 * (2 * MS + 5 * MS))


@pytest.mark.parametrize("extras", [{"buffer_tensors": -1}, {"forward_host_s": "x", "backward_host_s": 1.0},
                                    {"forward_host_s": -1.0, "backward_host_s": 1.0}])
def test_bad_per_tensor_inputs_are_input_errors(extras):
    m = CostModel(line_topology(2), params(tensor_kernel_s=1e-6))
    with pytest.raises(InputError):
        simulate_iteration(m, _w(**extras), CFG, "closed")


def test_probe_measurement_on_the_committed_host():
    """The four keys measured on h100x4_2026-11-26_ddp (python -m validation.ddp_host): physical sizes
    (a small kernel's floor of a few us; tens of us of host per gradient tensor), and with them the
    probe's steps where the GPU sets the pace within 6%."""
    from simulator.collectives.params import load_calibration
    from validation.ddp_host import KERNEL_KEY, _predict, measure, read_probe
    base = load_calibration("h200-nvlink-ddp")
    pts = read_probe()
    assert {(p.model, p.world) for p in pts} >= {(m, w) for m in ("resnet50", "gpt2", "mlp", "bert-base")
                                                  for w in (2, 4)}
    keys = measure(base, pts)
    assert 1e-6 < keys[KERNEL_KEY] < 5e-6
    assert 20e-6 < keys["ddp.tensor_host_s"] < 80e-6
    fitted = base.with_values(keys)
    for p in pts:
        if p.gpu_bound:
            assert abs(_predict(p, fitted) / p.sync_s - 1) < 0.06, p.model


def test_ddp_host_cli_reads_a_folder_and_refuses_an_empty_one(tmp_path, capsys):
    from validation.ddp_host import main
    assert main([]) == 0
    assert "ddp.tensor_kernel_s" in capsys.readouterr().out
    assert main([str(tmp_path)]) == 2
    assert "no synchronised" in capsys.readouterr().err


def test_the_held_out_host_with_steady_ddp():
    """h100x2_2026-11-26_dpddp (read after the model was fixed): every DDP record timed after DDP's held-back
    iterations; its GPU kernel cost agrees with the committed probe host's (2.2 vs 2.4 us today); the ratio
    there with datasheet DDP keys is 11.2% today (docs/accuracy.md section 6), the bound just above it."""
    import json
    import statistics

    from simulator.collectives.params import load_calibration
    from validation.ddp_host import KERNEL_KEY, measure, read_probe
    from validation.ddp_logger import STEADY_WARMUP
    from validation.dp_compare import fit_host, predict_ddp, predict_dp, read_dp
    from tests.test_ddp_logger import DATA
    folder = DATA / "h100x2_2026-11-26_dpddp"
    ddp = [json.loads(x) for x in (folder / "dp_world2.jsonl").read_text().splitlines() if '"kind": "ddp"' in x]
    assert len(ddp) == 12 and all(r["sync_warmup"] >= STEADY_WARMUP for r in ddp)
    base = load_calibration("h200-nvlink-ddp")
    assert 1.5e-6 < measure(base, read_probe(folder))[KERNEL_KEY] < 3.5e-6
    data = read_dp([folder / "dp_world2.jsonl"])
    errs = []
    for d in data:
        predicted = predict_dp(d, 2, fit_host([o for o in data if o is not d], 2, base)).iteration_s / predict_ddp(d, 2, base)
        errs.append(abs(predicted / (d.dp_median(2) / d.ddp_median(2)) - 1))
    assert len(errs) == 4 and statistics.median(errs) <= 0.12
