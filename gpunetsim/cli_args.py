"""Command-line flags shared by the subcommands: the topology, the fabric and the calibration."""

from __future__ import annotations

import argparse
import logging

from simulator.core.errors import InputError


def add_topology_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("topology")
    g.add_argument("--topology", default="dgx-h100",
                   help="preset (dgx-h100, hgx-h200, dgx-a100, pcie-gen3/4/5) or a YAML/JSON file")
    g.add_argument("--nodes", type=int, default=1, help="number of servers (presets)")
    g.add_argument("--gpus", type=int, default=None, help="GPUs used per server (first G)")
    g.add_argument("--no-p2p", action="store_true", help="GPU peer-to-peer off: traffic through host memory")
    g.add_argument("--no-gdr", action="store_true",
                   help="GPUDirect RDMA off (NCCL's choice where a GPU and its NIC are further apart than "
                        "NCCL_NET_GDR_LEVEL, e.g. nvidia-smi topo NODE or SYS): network bytes through host memory")
    g.add_argument("--socket-transport", action="store_true",
                   help="NCCL's socket transport (P2P and SHM off, or IB off): every hop through TCP")
    g.add_argument("--cpu-sockets", type=int, default=None, help="CPU sockets per server: 1 or 2 (presets)")
    g.add_argument("--fabric", default="rail", choices=["rail", "fat-tree"], help="multi-node fabric layout")
    g.add_argument("--transport", default="ib", choices=["ib", "roce"], help="InfiniBand or RoCE/Ethernet")
    g.add_argument("--nic-bw", default=None, help="NIC bandwidth, e.g. '400 Gb/s' (default: preset's)")
    g.add_argument("--nics", type=int, default=None, help="NICs per server (default: preset's)")
    g.add_argument("--oversubscription", type=float, default=1.0,
                   help="leaf:spine oversubscription (matters for traffic that crosses the spine)")
    g.add_argument("--nvls", default=None, choices=["on", "off"],
                   help="NVLink SHARP (NVSwitch reduction): on by default where the hardware has it "
                        "(NVSwitch gen3+, H100/H200/B200); off = NCCL_NVLS_ENABLE=0")
    g.add_argument("--sharp", action="store_true",
                   help="the fabric's InfiniBand switches reduce in the network (SHARP with NCCL's plugin): "
                        "makes --collnet on the default (presets)")
    g.add_argument("--collnet", default=None, choices=["on", "off"],
                   help="NCCL's CollNet (NCCL_COLLNET_ENABLE): CollNet Direct/Chain and NVLS across servers "
                        "with the switches reducing; default: on where the fabric has SHARP (--sharp)")
    g.add_argument("--hosts-per-leaf", type=int, default=32,
                   help="servers under one leaf switch per rail; more servers than this span several "
                        "leaf groups joined through the spine")
    p.add_argument("--calibration", default=None, help="calibration JSON (or a shipped calibration's name)")


def topology_from_args(args: argparse.Namespace):
    """What the flags describe, ready for a router: a preset's tables (no graph) or a file's graph."""
    import topologies
    fabric = topologies.FabricSpec.from_options(args.fabric, args.transport, args.nic_bw, args.nics,
                                                args.oversubscription, args.hosts_per_leaf, nic_bw_field="--nic-bw",
                                                sharp=getattr(args, "sharp", False))
    topo = topologies.prepare(args.topology, nodes=args.nodes, gpus_per_node=args.gpus,
                              p2p=False if args.no_p2p else None, fabric=fabric, sockets=args.socket_transport,
                              cpu_sockets=args.cpu_sockets, nvls=on_off(getattr(args, "nvls", None)),
                              collnet=on_off(getattr(args, "collnet", None)),
                              gdr=False if getattr(args, "no_gdr", False) else None)
    given = fabric.given()
    if given is not None and args.nodes == 1:       # a file refuses them (topologies.build); a preset ignored them
        logging.getLogger("gpunetsim").warning(
            f"--{given[0].replace('_', '-')} has no effect on one server: the fabric joins servers, and one "
            "server's GPUs talk inside it (give --nodes N)")
    return topo


def on_off(value: str | None) -> bool | None:
    """An ``on|off`` flag: None when not given (the default applies)."""
    return None if value is None else value == "on"


def params_from_args(args: argparse.Namespace):
    from simulator.collectives.params import load_calibration
    return load_calibration(args.calibration)


def add_backend_args(p: argparse.ArgumentParser) -> None:
    """``--backend`` and ``--tensors``: which torch.distributed backend, tensors where."""
    from simulator.collectives.backends import BACKENDS, TENSOR_DEVICES
    g = p.add_argument_group("backend")
    g.add_argument("--backend", default="nccl", choices=BACKENDS,
                   help="torch.distributed backend: nccl (GPU), gloo or mpi (host-based, closed form)")
    g.add_argument("--tuner-plugin", default=None, metavar="aws-ofi:INSTANCE",
                   help="NCCL tuner plugin loaded (NCCL_TUNER_PLUGIN): aws-ofi:p5.48xlarge, aws-ofi:p5e.48xlarge, "
                        "aws-ofi:p5en.48xlarge or aws-ofi:p6-b200.48xlarge, AWS's aws-ofi-nccl plugin with its "
                        "region tables for that instance type (8 GPUs a node, 3 nodes or more; elsewhere NCCL's "
                        "own tuner decides, as with the plugin); NVLS and NVLS-Tree then move chunks of up to 512 KiB, "
                        "as AWS's network plugin sets NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE there "
                        "(NCCL 2.22 and later read them), and each network step of a Simple call pays the latency "
                        "that plugin states (75 us on p5/p5e, 35 us on p5en/p6-b200; NCCL 2.12 and later)")
    g.add_argument("--tensors", default=None, choices=TENSOR_DEVICES,
                   help="where the tensors live (default: cuda for nccl, cpu for gloo and mpi); gloo "
                        "stages CUDA tensors through host memory")


def add_nccl_version_arg(p: argparse.ArgumentParser) -> None:
    """``--nccl-version``: the NCCL release a run plans for (simulator.core.vocabulary.nccl_version); its help names
    the version rules from their one definition (simulator.collectives.nccl_constants)."""
    from simulator.collectives import nccl_constants as k
    from simulator.core.vocabulary import NCCL_CURRENT, NCCL_OLDEST, NcclVersion

    def v(release) -> str:
        return str(NcclVersion(*release))
    ll128 = k.LL128_COMPUTE_CAPABILITIES
    p.add_argument("--nccl-version", default=None, metavar="X.Y[.Z]",
                   help=f"NCCL release to plan for (default: {NCCL_CURRENT}, the newest the model knows, which also plans "
                        f"a later 2.x, or the release a --calibration was measured with; {NCCL_OLDEST} the oldest): the "
                        f"algorithms it has "
                        f"(NVLS from {v(k.ALGO_FROM['nvls'])}, NVLS-Tree {v(k.ALGO_FROM['nvls_tree'])}, PAT "
                        f"{v(k.ALGO_FROM['pat'])}), where it enables LL128 by default (Volta and Ampere always, Hopper "
                        f"from {v(ll128[90])}, Blackwell and any other GPU from compute capability 7.0 "
                        f"{v(k.LL128_ANY_COMPUTE_CAPABILITY_FROM)}), its tuner's table (NVLS priced as before 2.28), "
                        f"whether it flushes GPUDirect receives (Hopper, before {v(k.FORCE_FLUSH_OFF_FROM)}), reads "
                        f"NVLS chunk settings ({v(k.NVLS_CHUNK_PARAM_FROM)}) and loads a tuner plugin "
                        f"({v(k.TUNER_PLUGIN_FROM)})")


def nccl_version_from_args(args: argparse.Namespace):
    """``--nccl-version`` parsed (an NcclVersion), or None when not given (the newest modelled)."""
    from simulator.core.vocabulary import nccl_version
    text = getattr(args, "nccl_version", None)
    return None if text is None else nccl_version(text, "--nccl-version")


def comm_model_from_args(args: argparse.Namespace, G, params):
    """The backend's cost model (NCCL's CostModel or the Gloo/MPI host model), with ``--tuner-plugin``'s
    instance type and ``--nccl-version`` where given."""
    from simulator.collectives.ofi_tuner import platform_of
    from simulator.network.host_collectives import collective_model
    spec = getattr(args, "tuner_plugin", None)
    for flag in ("nvls", "collnet"):    # NCCL_NVLS_ENABLE, NCCL_COLLNET_ENABLE: taken and ignored with gloo/mpi
        given = getattr(args, flag, None)
        if args.backend != "nccl" and given is not None:
            raise InputError(f"{'NVLink SHARP' if flag == 'nvls' else 'CollNet'} is NCCL's; the {args.backend} "
                             f"backend does not run NCCL: leave --{flag} out", field=f"--{flag}", value=given)
    return collective_model(G, params, args.backend, args.tensors, platform_of(spec) if spec else None,
                            nccl_version_from_args(args))


def nccl_words(args: argparse.Namespace, planner) -> str:
    """The header's words for the NCCL planned for and ``--tuner-plugin`` (``", NCCL 2.22, tuner plugin=aws-ofi:...
    (NVLS chunks 512 KiB)"``: with the NVLS chunk settings AWS's network plugin adds there as that NCCL takes them,
    ofi_tuner.plugin_nvls_chunks and NvlsChunks.taken_by)."""
    from simulator.collectives.nccl_constants import NVLS_CHUNK_PARAM_FROM
    from simulator.collectives.ofi_tuner import platform_of, plugin_nvls_chunks
    from simulator.core.units import format_bytes
    from simulator.core.vocabulary import NcclVersion, nccl_release_words
    version = nccl_release_words(planner.nccl_version)
    spec = getattr(args, "tuner_plugin", None)
    if not spec:
        return f", NCCL {version}"
    chunks = plugin_nvls_chunks(platform_of(spec))
    if chunks is None:
        return f", NCCL {version}, tuner plugin={spec}"
    if chunks.taken_by(planner.nccl_version) != chunks:
        return (f", NCCL {version}, tuner plugin={spec} (NVLS chunks NCCL's own: it reads the plugin's "
                f"{format_bytes(chunks.chunk_bytes)} from {NcclVersion(*NVLS_CHUNK_PARAM_FROM)} on)")
    tree = "" if chunks.tree_max_bytes in (None, chunks.chunk_bytes) else \
        f", NVLS-Tree at most {format_bytes(chunks.tree_max_bytes)}"
    return f", NCCL {version}, tuner plugin={spec} (NVLS chunks {format_bytes(chunks.chunk_bytes)}{tree})"


def tuner_plugin_idle(model, args: argparse.Namespace, op: str) -> str | None:
    """The closing comment where ``--tuner-plugin``'s tables decide nothing for ``op`` on this communicator
    (``# tuner plugin ...: NCCL's own tuner chose every row (why)``), or None (also when not given or not NCCL)."""
    from simulator.collectives.ofi_tuner import why_idle
    plugin = getattr(getattr(model, "planner", None), "tuner_plugin", None)
    if plugin is None:
        return None
    nodes = len({model.router.host_of(g) for g in model.router.gpus})
    why = why_idle(plugin, model.ranks, nodes, op)
    return None if why is None else f"# tuner plugin {args.tuner_plugin}: NCCL's own tuner chose every row ({why})"
