"""Layouts of NCCL's in-network and log-depth algorithms: CollNet (SHARP), NVLS with SHARP, PAT.

SHARP (CollNet): the InfiniBand switches reduce. Each server sends its share of the buffer up an
aggregation tree of switches once and receives the sum once: per head GPU and direction S/H over its
NIC (H heads per server), against 2(n-1)/n x S/C for a ring. The tree of one rail is the union of
the head NICs' up links to the top switch they share (the leaf if all heads hang under one leaf,
else the spine); a switch aggregates what comes up before sending it on, so a leaf's uplink carries
the share once, not once per server. One coupled group per tree (the aggregation advances at the
pace of its slowest port), the switch's efficiency (``collnet_efficiency``) on its bandwidth.

- CollNet Direct (NVSwitch servers, all_reduce): every GPU scatters part k of its buffer to head k
  (the GPU of rail k) over NVLink, head k reduces part k with SHARP over its NIC, then sends the sum
  back to every GPU; all three stages pipelined, so they run at once: one coupled group of the
  in-server scatter and gather (S/H per pair and direction) and one SHARP tree per head (S/H).
  Latency (NCCL): 2 x (one NVLink step + 0.4 us per extra GPU) + one network step.
- CollNet Chain (all_reduce): per channel a chain through the server's GPUs reduces up to the
  channel's head, SHARP reduces across servers, the chain broadcasts back; S/C per hop and per
  head. Latency (NCCL): 2 (ppn-1) in-server steps + one network step.
- NVLS with SHARP (all_reduce across servers, CollNet on): NVLS inside each server ((n+1)/n x S per
  GPU and direction, simulator.collectives.nvls) and one SHARP tree per head GPU (S/H). Latency:
  NVLS's NVLink step + one network step (NCCL: 25 + 18 us).
- PAT (Parallel Aggregated Trees, all_gather / reduce_scatter, one GPU per server): log2(N) steps;
  step k exchanges min(2^k, N - 2^k) blocks of S/N with the rank 2^k away. NCCL runs the steps'
  trees in parallel, aggregated: one coupled group whose route of step k stands for that many
  blocks (a weighted route), so every step finishes together and each NIC carries (N-1)/N x S.
  Latency (NCCL): 8 us + log2(N) x (network latency / 3.5) + N x 2.8 us. (The weights live in the
  plan's ``FlowGroup.uses``; the LLM training engines, which rebuild uses from routes, count PAT's
  steps equally.)
"""

from __future__ import annotations

import math
from dataclasses import replace

from simulator.collectives.algorithms import NVLS_CHUNK_BYTES, NVLS_CHUNK_STEPS, nvls_channels
from simulator.collectives.layout import Chunking, Layout, LayoutGroup, channels, layout_group, merge
from simulator.collectives.nccl_constants import COLLNET_ARITY_LATENCY_US, PAT_RANK_LATENCY_US
from simulator.collectives.nvls import domain_group
from topologies.routing import Router


def reverse(link: int) -> int:
    """The opposite direction of directed link ``link`` (routers number both directions of a link
    as a pair: 2i and 2i+1)."""
    return link ^ 1


def sharp_group(router: Router, heads: list[str], payload: float, label: str, acc: dict) -> LayoutGroup:
    """The SHARP aggregation tree of ``heads`` (one GPU per server, one rail): each head's links up to
    the top switch (its own NIC's PCIe, the NIC's leaf link, the leaf's spine link when the heads span
    several leaves), each distinct link once, and the same links back down."""
    n = len(heads)
    # The ring of heads finds each head's leaf; when the heads span several leaves, a route from each
    # head to the first head under another leaf climbs to the top switch.
    routes, kind_ids = router.hop_group([(heads[i], heads[(i + 1) % n]) for i in range(n)])
    leaf_of = [_first_switch(router, r) for r in routes]
    spans = len(set(leaf_of)) > 1
    if spans:
        apart = next(j for j, lf in enumerate(leaf_of) if lf != leaf_of[0])   # first head away from head 0
        other = [apart if lf == leaf_of[0] else 0 for lf in leaf_of]
        routes, kind_ids = router.hop_group([(heads[i], heads[other[i]]) for i in range(n)])
    for k in kind_ids:
        cls, wire, inter = router.hop_kinds[k]
        acc["inter" if inter else "intra"].add((cls, wire))
    up: dict[int, None] = {}
    top = ("spine",) if spans else ("leaf", "spine")      # one leaf for all heads: the first switch
    for r in routes:
        for link in r:
            up[link] = None
            if router.node_kind(router.link_names[link][1]) in top:
                break
    links = list(up)
    return LayoutGroup(tuple((l,) for l in links) + tuple((reverse(l),) for l in links), payload, label,
                       False, in_network="sharp", inter=True)


def _first_switch(router: Router, route: tuple[int, ...]) -> str:
    for link in route:
        node = router.link_names[link][1]
        if router.node_kind(node) in ("leaf", "spine"):
            return node
    return ""


def _heads(per_host: dict[int, list[str]], count: int) -> list[list[str]]:
    """Head GPUs per rail: rail k's head in each server is its GPU k x ppn / count (the GPU at NIC k)."""
    hosts = sorted(per_host)
    ppn = min(len(per_host[h]) for h in hosts)
    return [[per_host[h][k * ppn // count] for h in hosts] for k in range(count)]


def collnet_direct_layout(router: Router, op: str, ranks: list[str], per_host: dict[int, list[str]]) -> Layout:
    """CollNet Direct all_reduce: in-server scatter/gather to the heads, a SHARP tree per head."""
    acc: dict[str, set] = {"intra": set(), "inter": set()}
    H = channels(router, per_host)
    heads = _heads(per_host, H)
    pairs = []
    for i, h in enumerate(sorted(per_host)):
        mine = [heads[k][i] for k in range(H)]
        for g in per_host[h]:
            for head in mine:
                if head != g:
                    pairs += [(g, head), (head, g)]
    groups = [layout_group(router, pairs, 1.0 / H, "collnet_direct scatter/gather", acc)] if pairs else []
    groups += [sharp_group(router, heads[k], 1.0 / H, f"collnet_direct sharp r{k}", acc) for k in range(H)]
    ppn = min(len(v) for v in per_host.values())
    return Layout(tuple(groups), tuple(sorted(acc["intra"])), tuple(sorted(acc["inter"])), 2 * min(1, ppn - 1), 1,
                  channels=H, extra_latency_s=2 * (ppn - 1) * COLLNET_ARITY_LATENCY_US * 1e-6)


def collnet_chain_layout(router: Router, op: str, ranks: list[str], per_host: dict[int, list[str]]) -> Layout:
    """CollNet Chain all_reduce: per channel a chain in each server to its head, SHARP between heads."""
    acc: dict[str, set] = {"intra": set(), "inter": set()}
    C = channels(router, per_host)
    hosts = sorted(per_host)
    ppn = min(len(per_host[h]) for h in hosts)
    heads = _heads(per_host, C)
    groups = []
    for c in range(C):
        hops = []
        for i, h in enumerate(hosts):
            g = per_host[h]
            k = g.index(heads[c][i])
            chain = g[k:] + g[:k]                  # chain[0] is the head, which talks to the network
            hops += [(chain[j + 1], chain[j]) for j in range(len(chain) - 1)]      # reduce up the chain
            hops += [(chain[j], chain[j + 1]) for j in range(len(chain) - 1)]      # broadcast down
        if hops:
            groups.append(layout_group(router, hops, 1.0 / C, f"collnet_chain ch{c}", acc))
        groups.append(sharp_group(router, heads[c], 1.0 / C, f"collnet_chain sharp ch{c}", acc))
    return Layout(merge(groups), tuple(sorted(acc["intra"])), tuple(sorted(acc["inter"])), 2 * (ppn - 1), 1,
                  channels=C)


def nvls_sharp_layout(router: Router, op: str, ranks: list[str], per_host: dict[int, list[str]]) -> Layout:
    """NVLS all_reduce across servers with CollNet on: NVLS in each server, a SHARP tree per head."""
    acc: dict[str, set] = {"intra": set(), "inter": set()}
    hosts = sorted(per_host)
    H = channels(router, per_host)
    heads = _heads(per_host, H)
    groups = [domain_group(router, "all_reduce", per_host[h], label=f"nvls h{h}") for h in hosts]
    groups += [sharp_group(router, heads[k], 1.0 / H, f"nvls sharp r{k}", acc) for k in range(H)]
    ch = nvls_channels(router.info.compute_capability, len(hosts))
    chunking = Chunking(ch * H, NVLS_CHUNK_BYTES, NVLS_CHUNK_STEPS)
    return Layout(tuple(groups), (("nvlink", 0.0),), tuple(sorted(acc["inter"])), 1, 1, chunking=chunking,
                  channels=ch)


def pat_steps(n: int) -> list[tuple[int, int]]:
    """(distance, blocks) of PAT's steps on ``n`` ranks: distance 2^k, min(2^k, n - 2^k) blocks of S/n."""
    steps, d = [], 1
    while d < n:
        steps.append((d, min(d, n - d)))
        d *= 2
    return steps


def pat_layout(router: Router, op: str, ranks: list[str], per_host: dict[int, list[str]]) -> Layout:
    """PAT all_gather / reduce_scatter on one GPU per server: every step at once, weighted by its
    blocks (all_gather sends to rank - 2^k, reduce_scatter to rank + 2^k)."""
    acc: dict[str, set] = {"intra": set(), "inter": set()}
    n = len(ranks)
    sign = -1 if op == "all_gather" else 1
    pairs, weights = [], []
    for d, blocks in pat_steps(n):
        for i, r in enumerate(ranks):
            pairs.append((r, ranks[(i + sign * d) % n]))
            weights.append(float(blocks))
    g = layout_group(router, pairs, 1.0 / n, "pat", acc)
    g = replace(g, weights=tuple(weights))
    return Layout((g,), tuple(sorted(acc["intra"])), tuple(sorted(acc["inter"])), 0, int(math.log2(n)),
                  channels=1, extra_latency_s=n * PAT_RANK_LATENCY_US * 1e-6)
