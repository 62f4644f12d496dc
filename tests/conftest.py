import networkx as nx
import pytest

import topologies


def line_topology(n: int, bw_Bps: float = 100e9, latency_s: float = 1e-6, kind: str = "nvlink") -> nx.Graph:
    """n GPUs in a ring of identical direct links (a ring of n on identical links)."""
    G = nx.Graph(name=f"ring{n}", p2p=True, hosts=1, gpus_per_host=n, compute_capability=90)
    for i in range(n):
        G.add_node(f"gpu{i}", kind="gpu", host=0, local=i)
    for i in range(n if n > 2 else 1):
        G.add_edge(f"gpu{i}", f"gpu{(i + 1) % n}", kind=kind, bw_Bps=bw_Bps, latency_s=latency_s)
    return topologies.validate(G)


@pytest.fixture
def two_gpus():
    return line_topology(2)
