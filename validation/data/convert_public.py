"""Maintainer tool: turn the shared raw measurement files into the package's own JSONL copies.

Run once, from the repository root, when the shared data changes::

    python -m validation.data.convert_public --shared SHARED_DATA_DIR

It reads ``<shared>/public/*.txt`` (raw nccl-tests output behind a short provenance header) and
``<shared>/h200x4_2026-11-26/``, and writes ``validation/data/public/<name>.jsonl`` and
``validation/data/h200x4_2026-11-26/``. Nothing in gpunetsim reads the shared folder at run or
test time; only this script does. The provenance below (source, hardware, versions, topology
hints) is written by hand from each file's header, in short factual fields; the figures come from
the raw tables, unchanged.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from validation.data.convert_summaries import SUMMARIES, convert_summaries
from validation.parsers import CollMeasurement, Dataset, parse_nccl_tests_tables, write_jsonl

HERE = Path(__file__).resolve().parent


def _topo(preset: str, nodes: int, gpus_per_node: int, nic: str | None = None,
          nic_bw_per_node: str | None = None, notes: str | None = None,
          p2p: bool | None = None, gdr: bool | None = None) -> dict[str, Any]:
    hint: dict[str, Any] = {"preset": preset, "nodes": nodes, "gpus_per_node": gpus_per_node}
    if p2p is not None:
        hint["p2p"] = p2p
    if gdr is not None:
        hint["gdr"] = gdr
    if nic is not None:
        hint["nic"] = nic
    if nic_bw_per_node is not None:
        hint["nic_bw_per_node"] = nic_bw_per_node
    if notes is not None:
        hint["notes"] = notes
    return hint


_AWS_EFA_ENV = {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1", "FI_EFA_FORK_SAFE": "1",
                "NCCL_BUFFSIZE": "8388608", "NCCL_P2P_NET_CHUNKSIZE": "524288"}
_AWSOME = "https://github.com/aws-samples/awsome-distributed-training"
_DSTACK = "https://github.com/dstackai/dstack"

# One entry per public file that holds nccl-tests tables with a time column.
# "world"/"op": given where the published excerpt lacks the device list or command line.
# "variants": one name per table in file order (default: all "default").
PUBLIC: dict[str, dict[str, Any]] = {
    "aws_2x_p4d_16xA100_40GB_efa400_nccl2.8.3_ring_allreduce": {
        "source": {"repo": "aws-samples/aws-efa-eks", "path": "README.md", "commit": "1a3c504",
                   "url": "https://github.com/aws-samples/aws-efa-eks"},
        "hardware": "2x AWS p4d.24xlarge: 16x A100-SXM4-40GB, NVSwitch gen2, 4x100G EFA per node",
        "nccl_version": "2.8.3", "date": "2021-02-24",
        "env": {"NCCL_ALGO": "RING", "FI_EFA_USE_DEVICE_RDMA": "1", "RDMAV_FORK_SAFE": "1"},
        "point_env": {"NCCL_ALGO": "RING"},
        "command": "mpirun -np 16 all_reduce_perf -b 8 -e 1G -f 2 -t 1 -g 1 -c 1 -n 1000",
        "notes": "log: 8 coll channels, 8 p2p channels",
        "variants": ["ring"],
        "topology": _topo("dgx-a100", 2, 8, "4x 100G EFA, GPUDirect RDMA", "400 Gb/s"),
    },
    "aws_2x_p4d_16xA100_40GB_efa400_nccl2.9.9_allreduce": {
        "source": {"repo": "aws-samples/aws-efa-eks", "path": "README.md",
                   "commit": "9933d7f3940191f69b9a9e938c07cc671ae476fd",
                   "url": "https://github.com/aws-samples/aws-efa-eks"},
        "hardware": "2x AWS p4d.24xlarge: 16x A100-SXM4-40GB, NVSwitch gen2, 4x100G EFA per node",
        "nccl_version": "2.9.9", "date": "2021-06-11",
        "env": {"NCCL_ALGO": "RING"}, "point_env": {"NCCL_ALGO": "RING"},
        "command": "mpirun -np 16 all_reduce_perf -b 8 -e 4G -f 2 -g 1 -n 100",
        "env_from": "examples/nccl-efa-tests.yaml of the same commit (NCCL_ALGO=RING); the log does not "
                    "print its environment, so likely, not certain",
        "notes": "log: 8 coll channels, 8 p2p channels",
        "topology": _topo("dgx-a100", 2, 8, "4x 100G EFA, GPUDirect RDMA", "400 Gb/s"),
    },
    "aws_2x_p4de_16xA100_efa400_allreduce": {
        "source": {"repo": "aws-samples/awsome-distributed-training",
                   "path": "micro-benchmarks/nccl-tests/README.md",
                   "commit": "88c2e71b17895e2d5de10733861888c7faedf2f0", "url": _AWSOME},
        "hardware": "2x AWS p4de.24xlarge: 16x A100-SXM4-80GB, NVSwitch gen2, 4x100G EFA per node",
        "nccl_version": "2.20.3 (likely, not stated)", "date": "2024-04-19",
        "env": _AWS_EFA_ENV, "point_env": {"NCCL_BUFFSIZE": "8388608",
                                           "NCCL_P2P_NET_CHUNKSIZE": "524288"},
        "command": "srun all_reduce_perf -b 8 -e 2G -f 2 -g 1 -c 1 -n 100", "world": 16,
        "topology": _topo("dgx-a100", 2, 8, "4x 100G EFA (v1), GPUDirect RDMA", "400 Gb/s"),
    },
    "aws_2x_p5_16xH100_efa3200_allreduce": {
        "measured_algo": "default (not stated; NCCL 2.20 on two p5: NVLS-Tree or Ring)",
        "source": {"repo": "aws-samples/awsome-distributed-training",
                   "path": "micro-benchmarks/nccl-tests/README.md",
                   "commit": "88c2e71b17895e2d5de10733861888c7faedf2f0", "url": _AWSOME},
        "hardware": "2x AWS p5.48xlarge: 16x H100 80GB SXM5, NVSwitch gen3, 32x100G EFA per node",
        "nccl_version": "2.20.3 (likely, not stated)", "date": "2024-04-19",
        "env": _AWS_EFA_ENV, "point_env": {"NCCL_BUFFSIZE": "8388608",
                                           "NCCL_P2P_NET_CHUNKSIZE": "524288"},
        "command": "srun all_reduce_perf -b 8 -e 16G -f 2 -g 1 -c 1 -n 100", "world": 16,
        "topology": _topo("dgx-h100", 2, 8, "32x 100G EFA (v2), 4 per GPU, GPUDirect RDMA",
                          "3200 Gb/s"),
    },
    "aws_2x_p5_16xH100_eks_nccl2.18.5_allreduce_partial": {
        "measured_algo": "NVLS enabled (NCCL_NVLS_ENABLE=1); two nodes: NVLS-Tree or Ring (not stated)",
        "source": {"repo": "aws-samples/awsome-distributed-training",
                   "path": "micro-benchmarks/nccl-tests/README.md", "commit": "fd61c960",
                   "url": _AWSOME},
        "hardware": "2x AWS p5.48xlarge on EKS: 16x H100 80GB SXM5, 32x100G EFA per node",
        "nccl_version": "2.18.5", "date": "2024-04-11",
        "env": {"NCCL_NVLS_ENABLE": "1"}, "point_env": {"NCCL_NVLS_ENABLE": "1"},
        "command": "mpirun -np 16 all_reduce_perf -b 1 -e 2G -f 2 -t 1 -g 1 -c 1", "world": 16,
        "partial": "only 0 B and 64 MiB - 2 GiB rows were published",
        "topology": _topo("dgx-h100", 2, 8, "32x 100G EFA (v2), GPUDirect RDMA", "3200 Gb/s"),
    },
    "aws_p5_1node_8xH100_batch_allreduce": {
        "measured_algo": "default (not stated; one p5 node: NVLS expected, AWS tuner plugin loaded)",
        "source": {"repo": "aws-samples/awsome-distributed-training",
                   "path": "micro-benchmarks/nccl-tests/aws-batch/README.md",
                   "commit": "0fbac547", "url": _AWSOME},
        "hardware": "1x AWS p5.48xlarge: 8x H100 80GB SXM5, NVSwitch gen3 (8 ranks on one node, "
                    "inferred from the job definition)",
        "nccl_version": None, "date": "2024-10-30",
        "env": {**_AWS_EFA_ENV, "NCCL_TUNER_PLUGIN": "libnccl-ofi-tuner.so"},
        "point_env": {"NCCL_BUFFSIZE": "8388608", "NCCL_P2P_NET_CHUNKSIZE": "524288"},
        "command": "mpirun -np 8 -N 8 all_reduce_perf -b 8 -e 16G -f 2 -g 1 -c 1 -n 100",
        "world": 8,
        "topology": _topo("dgx-h100", 1, 8),
    },
    "gcp_a3high_2node_16xH100_tcpx_allgather_dstack": {
        "source": {"repo": "dstackai/dstack", "path": "mkdocs/docs/examples/clusters/gcp.md",
                   "commit": "511c318c8", "url": _DSTACK},
        "hardware": "2x GCP a3-highgpu-8g: 16x H100 80GB SXM, NVSwitch, GPUDirect-TCPX 4x200G "
                    "per node",
        "nccl_version": None, "env": {"NCCL_GPUDIRECTTCPX_FORCE_ACK": "0"},
        "command": "/scripts/run-allgather.sh 8 eth1,eth2,eth3,eth4 8M 8GB 2",
        "op": "all_gather", "world": 16,
        "notes": "validation off; Google's TCPX NCCL settings likely (NCCL_ALGO=Ring, "
                 "NCCL_PROTO=Simple), not shown",
        "topology": _topo("dgx-h100", 2, 8, "4x 200G GPUDirect-TCPX (ethernet)", "800 Gb/s"),
    },
    "gcp_a3mega_2node_16xH100_tcpxo_allgather_dstack": {
        "source": {"repo": "dstackai/dstack", "path": "mkdocs/docs/examples/clusters/gcp.md",
                   "commit": "511c318c8", "url": _DSTACK},
        "hardware": "2x GCP a3-megagpu-8g: 16x H100 80GB SXM, NVSwitch, GPUDirect-TCPXO 8x200G "
                    "per node",
        "nccl_version": None, "env": {"profile": "nccl-env-profile-ll128.sh (TCPXO)"},
        "command": "mpirun -n 16 -N 8 all_gather_perf -b 8M -e 8G -f 2 -g 1 -w 5 --iters 200 -c 0",
        "op": "all_gather", "world": 16,
        "topology": _topo("dgx-h100", 2, 8, "8x 200G GPUDirect-TCPXO (ethernet)", "1600 Gb/s"),
    },
    "gcp_a3mega_h100_2node_allreduce": {
        "source": {"repo": "lessizzmore/create-a3mega-ztan-fork", "path": "ztan-NCCL-test-result",
                   "commit": "02dd8f455c43ced1cf442ef29334bda97149264b",
                   "url": "https://github.com/lessizzmore/create-a3mega-ztan-fork"},
        "hardware": "2x GCP a3-megagpu-8g: 16x H100 80GB HBM3, NVSwitch, GPUDirect-TCPXO 8x200G "
                    "per node",
        "nccl_version": "2.21.5 (very likely)", "env": {"profile": "nccl-env-profile.sh (TCPXO)"},
        "command": "mpirun -np 16 -npernode 8 all_reduce_perf -b 8 -e 8G -f 2 -g 1",
        "topology": _topo("dgx-h100", 2, 8, "8x 200G GPUDirect-TCPXO (ethernet)", "1600 Gb/s"),
    },
    "gcp_a4_2node_16xB200_roce_allreduce_dstack_partial": {
        "measured_algo": "default (not stated)",
        "source": {"repo": "dstackai/dstack", "path": "mkdocs/docs/examples/clusters/gcp.md",
                   "commit": "511c318c8", "url": _DSTACK},
        "hardware": "2x GCP a4-highgpu-8g: 16x B200, NVSwitch (NVLink5), 8x400G ConnectX-7 RoCE "
                    "per node",
        "nccl_version": None, "env": {"NCCL_DEBUG": "INFO"},
        "command": "mpirun -n 16 -N 8 all_reduce_perf -b 8 -e 8G -f 2 -g 1", "world": 16,
        "partial": "only 8 MiB - 8 GiB rows were published",
        "topology": _topo("hgx-b200", 2, 8, "8x 400G ConnectX-7 RoCE", "3200 Gb/s"),
    },
    "lambda_2node_16xB200_ib_allreduce_dstack": {
        "measured_algo": "default (not stated; NCCL 2.26.2)",
        "source": {"repo": "dstackai/dstack", "path": "mkdocs/docs/examples/clusters/lambda.md",
                   "commit": "511c318c8", "url": _DSTACK},
        "hardware": "2x Lambda 8x B200 nodes: 16x B200, NVSwitch (NVLink5), InfiniBand",
        "nccl_version": "2.26.2", "nccl_tests_version": "2.17.6",
        "env": {"NCCL_IB_HCA": "^mlx5_0"}, "point_env": {"NCCL_IB_HCA": "^mlx5_0"},
        "command": "mpirun -n 16 -N 8 all_reduce_perf -b 8 -e 2G -f 2 -t 1 -g 1 -c 1 -n 100",
        "world": 16,
        "topology": _topo("hgx-b200", 2, 8, "8x 400G NDR InfiniBand (vendor spec, inferred)",
                          "3200 Gb/s"),
    },
    "nebius_2node_16xH100_ib_allreduce_dstack": {
        "measured_algo": "default (not stated)",
        "source": {"repo": "dstackai/dstack", "path": "mkdocs/docs/examples/clusters/nebius.md",
                   "commit": "511c318c8", "url": _DSTACK},
        "hardware": "2x Nebius 8-GPU nodes: 16x H100 80GB SXM (assumed), NVSwitch, InfiniBand",
        "nccl_version": None, "env": {"NCCL_DEBUG": "INFO"},
        "command": "mpirun -n 16 -N 8 all_reduce_perf -b 8 -e 8G -f 2 -g 1", "world": 16,
        "topology": _topo("dgx-h100", 2, 8, "8x 400G NDR InfiniBand (vendor spec, inferred)",
                          "3200 Gb/s"),
    },
    "nvidia_dgxc_dgxh100_1node_8gpu_allreduce": {
        "measured_algo": "NVLS (not stated; implied by the ~480 GB/s plateau)",
        "source": {"repo": "NVIDIA/dgxc-benchmarking", "path": "nccl/README.md",
                   "commit": "46e420155bec6e791fd720f1ce7430781271d5e6",
                   "url": "https://github.com/NVIDIA/dgxc-benchmarking"},
        "hardware": "1x DGX H100: 8x H100 80GB HBM3, NVSwitch gen3",
        "nccl_version": "2.27.x (likely)", "env": {},
        "command": "all_reduce_perf_mpi -b 8 -e 16G -f 2 (8 ranks)",
        "notes": "default algorithm; the ~480 GB/s plateau implies NVLS",
        "topology": _topo("dgx-h100", 1, 8),
    },
    "pcie_2x2080Ti_noP2P_autodl_allcollectives": {
        "source": {"repo": "Anthony-Hoo/Anthony-Hoo.github.io",
                   "path": "en/posts/AutoDL_Multi-GPU_Interconnection_Test.md",
                   "commit": "74cc3588949daf41d74e8111991060d2cfa43d87",
                   "url": "https://github.com/Anthony-Hoo/Anthony-Hoo.github.io"},
        "hardware": "2x GeForce RTX 2080 Ti 11GB, PCIe Gen3 x16 behind one switch, no NVLink, "
                    "no GPU P2P (traffic through host memory)",
        "nccl_version": None, "env": {}, "date": "2025-06-05",
        "command": "<op>_perf -b 8 -e 1024M -f 2 -g 2 (one process); reduce_perf also with 1 GPU",
        "topology": _topo("pcie-gen3", 1, 2, p2p=False, notes="no P2P: NCCL uses host shared memory (SHM)"),
    },
    "pcie_rtx4090_2and4gpu_kalavai_allreduce": {
        "source": {"repo": "kalavai-net/kalavai-client", "path": "scripts/README.md",
                   "commit": "9588f6d",
                   "url": "https://github.com/kalavai-net/kalavai-client"},
        "hardware": "GeForce RTX 4090 GPUs on one node, PCIe only, no NVLink, no P2P; host PCIe "
                    "generation not stated",
        "nccl_version": "2.19.x (inferred from container nvcr.io/nvidia/pytorch:24.01-py3)",
        "env": {}, "date": "2026-03-07",
        "command": "all_reduce_perf -b 8 -e 2G -f 2 -g 2|4 (docker, then Kubernetes pod)",
        "variants": ["docker", "docker", "k8s", "k8s"],
        "topology": _topo("pcie-gen4", 1, 4, p2p=False, notes="no P2P: host shared memory; 2-GPU runs use "
                          "2 of the GPUs; unexplained low ~2-4 GB/s plateau"),
    },
    "roce_L40S_2node_and_dgxH200_2node_socket_redhat": {
        "source": {"repo": "schmaustech/nvidia-tools-image", "path": "README.md",
                   "commit": "09abdbafd342afad8fcdab2b9586fc42695a4922",
                   "url": "https://github.com/schmaustech/nvidia-tools-image"},
        "hardware": "runs: (1) 2 nodes x 1 L40S, TCP sockets; (2) 2 nodes x 2 L40S, RoCE RDMA; "
                    "(3) 2 DGX H200 nodes x 8, TCP sockets over one shared interface",
        "nccl_version": "2.27.3", "env": {"NCCL_ALGO": "ring"},
        "command": "mpirun -np 2 ... all_reduce_perf -b 8 -e 16G -f2 -g 1|2|8 (one rank per pod)",
        "env_from_command": True,
        "variants": ["l40s_2x1_socket", "l40s_2x2_roce", "dgxh200_2x8_socket"],
        "notes": "run 3 busbw exceeds what one 400G port carries; configuration suspect",
        "topology": _topo("pcie-gen4", 2, 1, "ConnectX-7 400GbE (RoCE)", "400 Gb/s"),
        "topology_by_variant": {
            "l40s_2x1_socket": _topo("pcie-gen4", 2, 1, "ConnectX-7 400GbE, TCP sockets "
                                     "(NCCL_IB_DISABLE=1)", "400 Gb/s"),
            # The source's own README (same commit, 'GPU Direct Storage Examples'): a Dell PowerEdge R760xa
            # (Intel Xeon), `nvidia-smi topo -mp` shows NODE between the GPU and every NIC (both ConnectX-7 at
            # 0d:00 and 37:00, NUMA 0; mlx5_2 and mlx5_8 are VFs of the one at 37:00), and this run's GPUs sit at
            # 61:00 and e1:00 (different root complexes). NCCL's rules (src/graph/paths.cc): GPUDirect RDMA only
            # up to NCCL_NET_GDR_LEVEL (PXB by default), so NODE turns it off; P2P only up to PXB on Intel CPUs,
            # so the GPU pair talks through host memory (SHM).
            "l40s_2x2_roce": _topo("pcie-gen4", 2, 2, "ConnectX-7 400GbE, RoCE RDMA",
                                   "400 Gb/s", notes="GPUs on different root complexes, GPU-NIC distance NODE "
                                   "(source's nvidia-smi topo, Dell R760xa): NCCL turns GPUDirect RDMA and GPU "
                                   "P2P off, every byte through host memory", p2p=False, gdr=False),
            "dgxh200_2x8_socket": _topo("hgx-h200", 2, 8, "one shared interface (a 400GbE ConnectX-7 "
                                        "port), TCP sockets (NCCL_IB_DISABLE=1)", "400 Gb/s"),
        },
    },
    "stas00_1node_8xA100_allreduce_massaged": {
        "source": {"repo": "stas00/ml-engineering", "path": "network/README.md",
                   "commit": "48b75dd", "url": "https://github.com/stas00/ml-engineering"},
        "hardware": "1 node, 8x A100 (variant not stated), NVLink 3 / NVSwitch",
        "nccl_version": None, "env": {}, "date": "2023-12-15",
        "command": "all_reduce_perf -b 32k -e 16G -f 2 -g 8 -n 50",
        "op": "all_reduce", "world": 8,
        "notes": "author removed columns; presumably the out-of-place half",
        "topology": _topo("dgx-a100", 1, 8),
    },
}

SKIPPED: dict[str, str] = {
    "azure_nda100v4_8xA100_allreduce_busbw": "busbw only (no time column)",
    "azure_ndmv4_A100_1and2node_nccl_vs_msccl_latency_busbw":
        "summary table: one latency and one busbw point per collective",
    "ddp_hf_gpt2_2xTitanRTX_nvlink_vs_pcie": "DDP training throughput, not collectives",
    "ddp_hfai_resnet50_epoch_time_1v8v32gpu_lowconf": "DDP training throughput, not collectives",
    "ddp_nvidia_dle_bert_large_pretrain_1to32_dgxa100_nodes":
        "DDP training throughput, not collectives",
    "ddp_nvidia_dle_resnet50_1v8gpu_dgxa100_dgx1": "DDP training throughput, not collectives",
}

_ENV_FLAG = re.compile(r"-x\s+(NCCL_[A-Z0-9_]+)=(\S+)")


def _raw_body(text: str) -> str:
    """The file without its ``# ====`` provenance header (lines kept blank so numbers match)."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# ===="):
        return text
    end = next(i for i in range(1, len(lines)) if lines[i].startswith("# ===="))
    return "\n".join([""] * (end + 1) + lines[end + 1:])


def convert_public(shared: Path, out_dir: Path) -> list[str]:
    """Write one JSONL per entry of :data:`PUBLIC`; returns the names written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, spec in PUBLIC.items():
        raw = shared / "public" / f"{name}.txt"
        tables = parse_nccl_tests_tables(_raw_body(raw.read_text(encoding="utf-8")),
                                         op=spec.get("op"), world=spec.get("world"),
                                         source=raw.name, include_in_place=True)
        variants = spec.get("variants") or ["default"] * len(tables)
        if len(variants) != len(tables):
            raise SystemExit(f"{name}: {len(tables)} tables but {len(variants)} variant names")
        points: list[CollMeasurement] = []
        for table, variant in zip(tables, variants):
            env = dict(spec.get("point_env", {}))
            if spec.get("env_from_command"):
                env.update(_ENV_FLAG.findall(table.command))
            points.extend(replace(p, variant=variant, source="",
                                  env=tuple(sorted(env.items()))) for p in table.points)
        meta = {"name": name, "raw_file": f"public/{name}.txt", "tool": "nccl-tests",
                **{k: v for k, v in spec.items()
                   if k not in ("op", "world", "variants", "point_env", "env_from_command")},
                "in_place_included": True}
        write_jsonl(Dataset(meta=meta, points=tuple(points)), out_dir / f"{name}.jsonl")
        written.append(name)
    return written


H200_META_COMMON = {
    "machine": "4x NVIDIA H200 143GB, every GPU pair joined by 18 NVLinks (NV18 all-pairs), "
               "no NVSwitch; no InfiniBand (NCCL net transport = TCP sockets)",
    "hardware": "4x H200 NV18 all-pairs",
    "nccl_version": "2.28.9", "torch_version": "2.11", "cuda_version": "13.0",
    "date": "2026-11-26", "nvls": "disabled (NCCL_NVLS_ENABLE=0)",
    "source": "measured by the gpunetsim project (validation torch runner)",
}


def _prepend_meta(src: Path, dst: Path, meta: dict[str, Any]) -> None:
    body = src.read_text(encoding="utf-8")
    dst.write_text(json.dumps({"kind": "meta", **meta}) + "\n" + body.rstrip("\n") + "\n",
                   encoding="utf-8")


def convert_h200(shared: Path, out_dir: Path) -> None:
    """Copy the 4x H200 measurements, each JSONL with a ``meta`` record first."""
    src = shared / "h200x4_2026-11-26"
    out_dir.mkdir(parents=True, exist_ok=True)
    _prepend_meta(src / "coll_world2.jsonl", out_dir / "coll_world2.jsonl", {
        **H200_META_COMMON, "name": "h200x4_coll_world2", "tool": "torch.distributed (NCCL)",
        "what": "collectives on 2 of the 4 GPUs; time_s = median over reps of "
                "(time of iters back-to-back calls / iters), CUDA events, includes PyTorch "
                "per-call overhead; bytes per nccl-tests convention",
        "variants": {"default": "NCCL's own choice (P2P over NVLink)",
                     "nop2p": "NCCL_P2P_DISABLE=1: through host shared memory",
                     "socket": "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1: through TCP sockets"},
        "topology": _topo("hgx-h200", 1, 2, notes="2 GPUs of a 4x H200 NV18 all-pairs box "
                          "(18 NVLink4 links between the pair)"),
    })
    _prepend_meta(src / "profile.jsonl", out_dir / "profile.jsonl", {
        **H200_META_COMMON, "name": "h200x4_profile", "tool": "torch (single GPU)",
        "what": "single-GPU training profiles, bf16 autocast, SGD momentum: forward_s, "
                "backward_s, optimizer_s, iter_wall_s; per-parameter bytes (fp32) and ready_s "
                "(gradient ready time from start of backward)",
        "models": ["resnet50 bs64", "resnet50 bs128", "bert-base bs32 seq128",
                   "gpt2-small bs8 seq512", "mlp 8x4096 bs512"],
    })
    shutil.copyfile(src / "nccl_tuning_world4.txt", out_dir / "nccl_tuning_world4.txt")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, required=True,
                        help="the team's shared data folder, holding public/ and h200x4_2026-11-26/")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: here)")
    args = parser.parse_args(argv)
    for name in convert_public(args.shared, args.out / "public"):
        print(f"wrote public/{name}.jsonl")
    for name in convert_summaries(args.shared, args.out / "public"):
        print(f"wrote public/{name}.jsonl (times from busbw)")
    for name, why in SKIPPED.items():
        print(f"skipped public/{name}.txt: {why}")
    convert_h200(args.shared, args.out / "h200x4_2026-11-26")
    print("wrote h200x4_2026-11-26/")


if __name__ == "__main__":
    main()
