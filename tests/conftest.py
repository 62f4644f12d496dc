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


# ---------------------------------------------------------------- bad-input accounting (issue 12)
_BAD_INPUTS: dict[str, int] = {}


@pytest.fixture
def bad_input():
    """Count one bad input thrown at gpunetsim under ``kind`` (tests/test_bad_inputs.py); the
    session summary prints the total. A test calls it only after checking the input was handled
    cleanly (an InputError or one stderr line, exit 2), so the total counts clean handlings."""
    def count(kind: str, n: int = 1) -> None:
        _BAD_INPUTS[kind] = _BAD_INPUTS.get(kind, 0) + n
    return count


def pytest_terminal_summary(terminalreporter):
    if _BAD_INPUTS:
        total = sum(_BAD_INPUTS.values())
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(_BAD_INPUTS.items()))
        terminalreporter.write_line(f"bad inputs thrown and handled cleanly: {total} ({kinds})")


def with_options(argv: list[str], extra: list[str]) -> list[str]:
    """``argv`` with ``extra``'s options (``--flag value`` pairs, or a flag alone) in place of its own: the CLI
    refuses an option given twice (gpunetsim.cli.ONCE_ACTIONS), so a test that overrides one replaces it."""
    flags = {x for x in extra if x.startswith("-")}
    out, skip = [], False
    for x in argv:
        if skip and not x.startswith("-"):
            skip = False
            continue
        skip = x in flags
        if not skip:
            out.append(x)
    return out + extra


def load_script(name: str):
    """The module of ``validation/scripts/{name}.py`` (the scripts are not a package), registered in sys.modules
    under ``name``, where dataclasses look their module up."""
    import importlib.util
    import sys
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "validation" / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
