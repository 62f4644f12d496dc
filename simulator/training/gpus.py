"""GPU catalog: peak compute and memory numbers from NVIDIA datasheets.

All throughput numbers are *dense* (no 2:4 structured sparsity), in TFLOP/s (1e12 FLOP/s) as
the datasheets print them; memory bandwidth is in bytes/s and capacity in bytes. A datasheet's
"80GB" of HBM/GDDR is taken as 80 GiB (memory parts come in binary sizes; nvidia-smi shows
81559 MiB usable on an H100 80GB). Where a datasheet gives only the sparse figure, the dense one
is half of it; such entries say so (FP8: H100/H200 3,958 -> 1,979 TF, HGX B200 9 PF / 8 GPUs
-> 4.5 PF, L40S 1,466 -> 733 TF dense).

These are peaks, not achievable rates: :mod:`simulator.training.workload` multiplies them by an efficiency.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.core.errors import InputError
from simulator.core.units import GiB


@dataclass(frozen=True)
class GpuSpec:
    """Peak numbers of one GPU (dense tensor-core rates, non-tensor FP32).

    ``bf16_tflops`` / ``tf32_tflops`` are ``None`` where the GPU has no such tensor-core mode
    (V100). ``source`` names the datasheet the numbers come from.
    """

    name: str
    bf16_tflops: float | None
    fp16_tflops: float
    fp32_tflops: float
    tf32_tflops: float | None
    mem_bw_Bps: float
    memory_bytes: int
    compute_capability: tuple[int, int]
    source: str = ""
    fp8_tflops: float | None = None     # dense FP8 tensor rate; None where the GPU has none

    def peak_flops(self, dtype: str) -> float:
        """Peak FLOP/s for matmuls in ``dtype`` ("bf16", "fp16", "tf32" or "fp32").

        Raises :class:`InputError` if the GPU has no tensor-core mode for ``dtype``.
        """
        key = _COMPUTE_DTYPES.get(dtype.strip().lower())
        if key is None:
            raise InputError(f"unknown compute dtype; known: {sorted(set(_COMPUTE_DTYPES.values()))}",
                             field="dtype", value=dtype)
        tflops = getattr(self, f"{key}_tflops")
        if tflops is None:
            raise InputError(f"{self.name} has no {key} tensor cores", field="dtype", value=dtype)
        return float(tflops) * 1e12


_COMPUTE_DTYPES = {
    "bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "half": "fp16",
    "tf32": "tf32", "fp32": "fp32", "float32": "fp32", "float": "fp32",
}

GPUS: dict[str, GpuSpec] = {
    spec.name: spec
    for spec in (
        # NVIDIA V100 Tensor Core GPU datasheet (V100 SXM2 32GB): 15.7 TF FP32, 125 TF tensor.
        GpuSpec("V100-SXM2", None, 125.0, 15.7, None, 900e9, 32 * GiB, (7, 0),
                "NVIDIA V100 Tensor Core GPU datasheet, V100 SXM2"),
        # NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM): 312 TF BF16/FP16, 156 TF TF32,
        # 19.5 TF FP32, 2,039 GB/s.
        GpuSpec("A100-SXM-80GB", 312.0, 312.0, 19.5, 156.0, 2039e9, 80 * GiB, (8, 0),
                "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM"),
        # NVIDIA H100 Tensor Core GPU datasheet (H100 SXM): 1,979 TF BF16 and 989 TF TF32 with
        # sparsity -> 989.5 / 494.5 dense; 67 TF FP32; 3.35 TB/s; 80 GB.
        GpuSpec("H100-SXM", 989.5, 989.5, 67.0, 494.5, 3.35e12, 80 * GiB, (9, 0),
                "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM", fp8_tflops=1979.0),
        # NVIDIA H200 Tensor Core GPU datasheet (H200 SXM): same compute as H100 SXM,
        # 141 GB HBM3e at 4.8 TB/s.
        GpuSpec("H200-SXM", 989.5, 989.5, 67.0, 494.5, 4.8e12, 141 * GiB, (9, 0),
                "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM", fp8_tflops=1979.0),
        # NVIDIA HGX B200 datasheet (per GPU = 1/8 of the HGX figures): 4.5 PF FP16/BF16 and
        # 2.25 PF TF32 with sparsity -> 2.25 / 1.125 PF dense; 75 TF FP32; 8 TB/s; 180 GB HBM3e.
        GpuSpec("B200", 2250.0, 2250.0, 75.0, 1125.0, 8e12, 180 * GiB, (10, 0),
                "NVIDIA HGX B200 datasheet (per-GPU share)", fp8_tflops=4500.0),
        # NVIDIA L40S datasheet: 362.05 TF BF16/FP16 and 183 TF TF32 dense (733 / 366 sparse),
        # 91.6 TF FP32, 48 GB GDDR6 at 864 GB/s.
        GpuSpec("L40S", 362.05, 362.05, 91.6, 183.0, 864e9, 48 * GiB, (8, 9),
                "NVIDIA L40S datasheet", fp8_tflops=733.0),
        # NVIDIA Ada GPU architecture whitepaper (RTX 4090 column): 82.6 TF FP32; tensor rates
        # with FP32 accumulate (what AMP training uses): 165.2 TF FP16/BF16, 82.6 TF TF32;
        # 24 GB GDDR6X at 1,008 GB/s.
        GpuSpec("RTX-4090", 165.2, 165.2, 82.6, 82.6, 1008e9, 24 * GiB, (8, 9),
                "NVIDIA Ada Lovelace GPU architecture whitepaper, GeForce RTX 4090"),
    )
}

_ALIASES: dict[str, str] = {
    "v100": "V100-SXM2", "v100-sxm2": "V100-SXM2", "v100-sxm": "V100-SXM2",
    "a100": "A100-SXM-80GB", "a100-sxm": "A100-SXM-80GB", "a100-80gb": "A100-SXM-80GB",
    "a100-sxm4-80gb": "A100-SXM-80GB", "a100-sxm-80gb": "A100-SXM-80GB",
    "h100": "H100-SXM", "h100-sxm": "H100-SXM", "h100-sxm5": "H100-SXM", "h100-80gb": "H100-SXM",
    "h200": "H200-SXM", "h200-sxm": "H200-SXM",
    "b200": "B200",
    "l40s": "L40S",
    "rtx4090": "RTX-4090", "rtx-4090": "RTX-4090", "4090": "RTX-4090",
    "geforce-rtx-4090": "RTX-4090",
}


def _key(name: str) -> str:
    return "-".join(name.strip().lower().replace("_", " ").replace("nvidia", "").split())


def gpu_names() -> list[str]:
    """Canonical names of the GPUs in the catalog."""
    return sorted(GPUS)


def get_gpu(name: str) -> GpuSpec:
    """The catalog entry for ``name`` (case-insensitive; aliases such as "h100", "a100",
    "NVIDIA H200" accepted). Raises :class:`InputError` listing the known names on a miss."""
    if not isinstance(name, str):
        raise InputError("must be a string", field="gpu", value=name)
    key = _key(name)
    canonical = _ALIASES.get(key) or {_key(n): n for n in GPUS}.get(key)
    if canonical is None:
        raise InputError(f"unknown GPU; known: {', '.join(gpu_names())} "
                         f"(aliases: {', '.join(sorted(_ALIASES))})", field="gpu", value=name)
    return GPUS[canonical]


#: Catalog GPU for a topology's ``gpu_model`` (first matching word).
_GPU_FOR_MODEL = (("h100", "h100"), ("h200", "h200"), ("a100", "a100"), ("b200", "b200"),
                  ("v100", "v100"), ("l40s", "l40s"), ("4090", "rtx4090"))


def gpu_for_model(gpu_model: str) -> str:
    """The catalog GPU name for a topology's ``gpu_model`` ("H100 SXM" -> "h100")."""
    key = gpu_model.lower().replace(" ", "")
    for word, gpu in _GPU_FOR_MODEL:
        if word in key:
            return gpu
    raise InputError("cannot tell which GPU this topology has (its gpu_model names none of the catalog's); "
                     "pass --gpu", field="--gpu", value=gpu_model)
