"""Start-up: a plain run imports only what it uses (issue 13: instant answers at 8 GPUs)."""

import subprocess
import sys

import pytest

#: Packages a plain collective or zoo DDP run on a preset must not import (presets are tables,
#: not graphs: topologies.preset_cluster).
HEAVY = ("networkx", "plotly", "pydantic", "scipy", "dask", "yaml", "pandas", "torch")


def _imported_after(argv: list[str]) -> set[str]:
    code = ("import contextlib, io, sys\n"
            "from gpunetsim.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main({argv!r}) == 0\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_plain_8_gpu_collective_imports_no_numpy():
    """A collective on one server stays in plain Python (simulator.core.arrays): numpy's import would
    be a third of its start-up."""
    for argv in (["collective"], ["collective", "--op", "all_gather", "--engine", "closed"],
                 ["collective", "--topology", "pcie-gen4", "--no-p2p", "--algo", "tree"]):
        assert "numpy" not in _imported_after(argv), argv


@pytest.mark.parametrize("argv", [
    ["collective"],
    ["collective", "--engine", "closed", "--nodes", "2"],
    ["ddp", "--workload", "resnet50"],
    ["ddp", "--workload", "gpt2", "--nodes", "2", "--engine", "des"],
])
def test_plain_runs_import_no_heavy_package(argv):
    assert _imported_after(argv).isdisjoint(HEAVY)


@pytest.mark.parametrize("argv", [
    ["collective", "--engine", "closed", "--nodes", "2"],
    ["ddp", "--workload", "resnet50", "--engine", "closed"],
    ["ddp", "--workload", "gpt2", "--nodes", "2", "--engine", "closed"],
])
def test_closed_form_runs_import_no_simpy(argv):
    """SimPy (and the package metadata machinery its import pulls in) only for discrete events."""
    assert "simpy" not in _imported_after(argv)


def test_registering_subcommands_imports_no_simulator_module():
    code = ("import sys\nfrom gpunetsim.cli import build_parser\nbuild_parser()\n"
            "print(' '.join(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert not {m for m in loaded if m.startswith(("numpy", "simpy", "networkx", "topologies",
                                                   "simulator.network", "simulator.training"))}
