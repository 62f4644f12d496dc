"""NVLS (NVLink SHARP) layouts: the NVSwitch reduces and multicasts.

All-reduce (NCCL's single-domain NVLS kernels): every GPU owns 1/n of the buffer. For its share it
issues a multimem load-reduce (the switch reads that share from all n GPUs, itself included, adds
them up and returns the sum once), then a multimem store of the sum (the switch writes it to all n
GPUs). Per GPU and direction of its NVLink that is S (its whole buffer read once by the switch, or
the whole result written once) plus S/n (its own share's sum): (n+1)/n x S each way, against
2(n-1)/n x S for a ring. busbw = 2(n-1)/(n+1) x the NVLink rate, e.g. 14/9 of it on 8 GPUs.
Reduce-scatter is the load-reduce half (S up, S/n down), all-gather the store half (S/n up, S down).

All flows of the collective form one coupled group (the switch's pipeline advances at the pace of
the slowest port); a link used k times in the group carries k flows, which is how the uneven up/down
bytes of reduce-scatter and all-gather are expressed. Bandwidth: NCCL's ``nvlsEfficiency`` of the
NVLink rate (0.85 Hopper, 0.74 Blackwell). Latency: NCCL's NVLS latency (25 us, one step).
Chunks: NCCL shrinks the NVLS chunk from 128 KiB to 16 KiB for smaller collectives
(``simulator.collectives.algorithms.NVLS_CHUNK_STEPS``) and its pipeline drains ``nvls_fill_rounds``
rounds of chunks (channels x heads of them) after the last one enters, which is why NVLS reaches
its plateau only at gigabyte sizes.

NVLS-Tree (all-reduce across NVLink domains): NVLS reduces inside each domain (S up, S/n down per
GPU), each GPU then all-reduces its 1/n share with the same GPU of the other domains over its own
NIC along NCCL's double binary tree (2 trees of S/(2n) each), and NVLS multicasts the result back
(S/n up, S down). NCCL pipelines the three stages, so all run at once: the domain's NVLS group (the
all-reduce's (n+1)/n each way) and one coupled group per tree and head. Latency: NVLS's NVLink
step plus 2 log2(N) network steps (NCCL's NVLS-Tree latencies).
"""

from __future__ import annotations

import math

from simulator.collectives.algorithms import NVLS_CHUNK_STEPS, NvlsChunks, nvls_channels
from simulator.collectives.layout import (Chunking, Layout, LayoutGroup, binary_tree, both_ways, gpu_grid, layout_group,
                                          layout_group_ids, merge, tree_edges)
from simulator.collectives.nccl_constants import NVLS_TREE_CHUNK_STEPS, per_channel_nvls_tree_GBps
from simulator.core.errors import InputError
from topologies.routing import Router


def switch_ports(router: Router, gpu: str) -> tuple[int, int]:
    """(GPU -> NVSwitch, NVSwitch -> GPU) link ids of ``gpu``'s NVLink port."""
    found = router.ports(gpu, "nvlink", "nvswitch")
    if found:
        return found[0]
    raise InputError(f"GPU {gpu!r} has no NVLink to an NVSwitch (NVLS needs one)", field="nodes", value=gpu)


def domain_group(router: Router, op: str, ranks: list[str], payload_scale: float = 1.0,
                 label: str = "nvls") -> LayoutGroup:
    """The coupled group of one NVLink domain's NVLS step for ``op`` (bytes per byte of S x scale)."""
    n = len(ranks)
    up_k, down_k, payload = {"all_reduce": (1, 1, (n + 1) / n), "reduce_scatter": (n, 1, 1.0 / n),
                             "all_gather": (1, n, 1.0 / n)}[op]
    routes: list[tuple[int, ...]] = []
    for g in ranks:
        up, down = switch_ports(router, g)
        if op == "all_reduce":
            routes.append((up, down))
        else:
            routes += [(up,)] * up_k + [(down,)] * down_k
    return LayoutGroup(tuple(routes), payload * payload_scale, label, False, in_network="nvswitch")


def nvls_layout(router: Router, op: str, ranks: list[str], per_host: dict[int, list[str]]) -> Layout:
    """NVLS on one NVLink domain: one coupled group through the switch, one latency step."""
    cc = router.info.compute_capability
    ch = nvls_channels(cc, 1)
    chunking = Chunking(ch * len(ranks), NvlsChunks().max_chunk("nvls", 1), NVLS_CHUNK_STEPS)
    return Layout((domain_group(router, op, ranks),), (("nvlink", 0.0),), (), 1, 0, chunking=chunking, channels=ch)


def nvls_tree_layout(router: Router, op: str, ranks: list[str], per_host: dict[int, list[str]]) -> Layout:
    """NVLS inside each domain (server), double binary trees across domains, one per head GPU."""
    hosts = sorted(per_host)
    N = len(hosts)
    heads = min(len(per_host[h]) for h in hosts)
    groups = [domain_group(router, op, per_host[h], label=f"nvls h{h}") for h in hosts]
    acc: dict[str, set] = {"intra": set(), "inter": set()}
    grid = gpu_grid(router, per_host)
    for k in range(heads):
        if grid is not None:              # the same hops, as arrays of GPU ids
            for t, mirror in enumerate((False, True)):
                child, parent = tree_edges(N, mirror)
                groups.append(layout_group_ids(router, *both_ways(grid[child, k], grid[parent, k]),
                                               1.0 / (2 * heads), f"nvls_tree head{k} t{t}", acc))
            continue
        rail = [per_host[h][k] for h in hosts]
        for t, mirror in enumerate((False, True)):
            hops = []
            for child, parent in binary_tree(N, mirror):
                hops += [(rail[child], rail[parent]), (rail[parent], rail[child])]
            groups.append(layout_group(router, hops, 1.0 / (2 * heads), f"nvls_tree head{k} t{t}", acc))
    cc = router.info.compute_capability
    ch = nvls_channels(cc, N)
    chunking = Chunking(ch * heads, NvlsChunks().max_chunk("nvls_tree", N), NVLS_TREE_CHUNK_STEPS)
    # The kernel's own pace: NCCL's NVLS-Tree graph has one channel per head, each carrying at most
    # perChMaxNVLSTreeBw of bus bandwidth (Hopper: 57.7 GB/s on 2 domains, so 8 heads 462 GB/s, below
    # what NVLS inside the server and the NICs carry; two 8-GPU H100 clusters measured 465 and 479 GB/s
    # from 4 GiB: docs/accuracy.md section 1b, computed by validation.corpus from validation/data/public).
    cap_Bps = heads * per_channel_nvls_tree_GBps(cc, N) * 1e9
    return Layout(merge(groups), (("nvlink", 0.0),), tuple(sorted(acc["inter"])), 1, 2 * int(math.log2(N)),
                  chunking=chunking, channels=ch, busbw_cap_Bps=cap_Bps if cap_Bps > 0 else math.inf)
