"""GPU catalog: lookups, aliases and peak rates."""

import pytest

from simulator.core.errors import InputError
from simulator.training.gpus import GPUS, get_gpu, gpu_names


@pytest.mark.parametrize("alias, canonical", [
    ("h100", "H100-SXM"), ("H100-SXM", "H100-SXM"), ("NVIDIA H100 SXM", "H100-SXM"),
    ("a100", "A100-SXM-80GB"), ("h200", "H200-SXM"), ("B200", "B200"), ("l40s", "L40S"),
    ("rtx4090", "RTX-4090"), ("RTX 4090", "RTX-4090"), ("v100", "V100-SXM2"),
])
def test_alias_resolves(alias, canonical):
    assert get_gpu(alias).name == canonical


def test_unknown_gpu_lists_known_names():
    with pytest.raises(InputError) as exc:
        get_gpu("h900")
    assert "H100-SXM" in str(exc.value) and "'h900'" in str(exc.value)


@pytest.mark.parametrize("name", gpu_names())
def test_entries_are_consistent(name):
    g = GPUS[name]
    assert g.fp16_tflops > 0 and g.fp32_tflops > 0 and g.mem_bw_Bps > 0 and g.memory_bytes > 0
    assert g.source
    if g.bf16_tflops is not None:
        assert g.tf32_tflops is not None and g.bf16_tflops > g.tf32_tflops


def test_peak_flops_units():
    assert get_gpu("h100").peak_flops("bf16") == pytest.approx(989.5e12)
    assert get_gpu("a100").peak_flops("tf32") == pytest.approx(156e12)


def test_v100_has_no_bf16():
    with pytest.raises(InputError, match="bf16"):
        get_gpu("v100").peak_flops("bf16")


def test_unknown_compute_dtype():
    with pytest.raises(InputError, match="int4"):
        get_gpu("h100").peak_flops("int4")
