"""Which public datasets ran on the same kind of machine (siblings), read from their headers.

Leaving one dataset out of a corpus fit (validation.corpus) is not enough where the same author
measured the same instance type twice: the sibling stays in the fit and carries its machine's
quirks to the "held-out" prediction. A user who is about to buy an instance type has measured
none of it, so section 1b's figure leaves a dataset's siblings out of the fit that predicts it too,
and shows the figure with the siblings kept beside it.

Siblings are stated, not guessed from the outcome: datasets whose headers name the same instance
type (or, where a header names none, the same author's same machine in the same source file).
"""

from __future__ import annotations

from typing import Iterable

SIBLINGS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("stas00 8x H200 (AWS p5en)", ("stas00_8xH200_nvls_vs_ring_gpucount", "stas00_8xH200_torch_allreduce"),
     "one author, one commit of network/README.md, NCCL 2.27.7; the gpucount header names p5en.48xlarge"),
    ("stas00 AWS p6-b200", ("stas00_8xB200_nvls_vs_ring_gpucount", "stas00_p6b200_1node_torch_allreduce",
                            "stas00_p6b200_4node_torch_allreduce"),
     "one author, one commit, p6-b200.48xlarge in every header, NCCL 2.27.7 with AWS's tuner plugin"),
    ("AWS p4d.24xlarge (aws-efa-eks)", ("aws_2x_p4d_16xA100_40GB_efa400_nccl2.8.3_ring_allreduce",
                                        "aws_2x_p4d_16xA100_40GB_efa400_nccl2.9.9_allreduce"),
     "one repository's README at two commits, the same instance type"),
    ("AWS p5.48xlarge (awsome-distributed-training)", ("aws_2x_p5_16xH100_efa3200_allreduce",
                                                       "aws_2x_p5_16xH100_eks_nccl2.18.5_allreduce_partial",
                                                       "aws_p5_1node_8xH100_batch_allreduce"),
     "one repository, the same instance type (Slurm, EKS and AWS Batch runs)"),
    ("GCP a3-megagpu-8g", ("gcp_a3mega_2node_16xH100_tcpxo_allgather_dstack", "gcp_a3mega_h100_2node_allreduce"),
     "the same instance type and GPUDirect-TCPXO, two sources"),
)
"""(cluster name, dataset names, why): datasets of one cluster. A dataset in none is its own cluster."""


def dataset_of(label: str) -> str:
    """The dataset (file) name of a corpus part label ("file [variant]" -> "file")."""
    return label.split(" [", 1)[0]


def cluster_of(label: str) -> str:
    """The cluster of a corpus part: its SIBLINGS entry's name, else its own dataset name (variants of one
    file ran on one machine's hosts, so they are one cluster)."""
    name = dataset_of(label)
    return next((c for c, members, _ in SIBLINGS if name in members), name)


def siblings(label: str, labels: Iterable[str]) -> list[str]:
    """The labels among ``labels`` of the same cluster as ``label``, itself excluded."""
    mine = cluster_of(label)
    return [other for other in labels if other != label and cluster_of(other) == mine]
