"""AWS's NCCL tuner plugin (aws-ofi-nccl's region tuner, ``NCCL_TUNER_PLUGIN=ofi``): which algorithm and
protocol it makes NCCL run, from its own tables.

On the AWS instance types it knows, the plugin replaces NCCL's cost-model choice by regions measured on
those instances: polygons in the plane of (message bytes, ranks), both on a log2 scale; the first region
(in table order) whose algorithm/protocol NCCL offers and that holds the point (its edges included) gives
the pair. Communicators of at most two nodes are left to NCCL's own tuner ("the regions are not well
defined" there), as are points outside every region. Sources: aws/aws-ofi-nccl ``src/tuner/
nccl_ofi_regions.cpp`` (``region_init_internal_p6``, ``is_inside_region``, ``extend_region``,
``region_get_coll_info_internal_v3``; the same p6-b200 tables in the two stored versions of the file).

Transcribed, eight GPUs per node (``nRanks == 8 * nNodes``): p6-b200.48xlarge (all_reduce, all_gather,
reduce_scatter; ``region_init_internal_p6``), p5en.48xlarge (the same three ops; ``region_init_internal_p5en``),
p5.48xlarge and p5e.48xlarge (one table for both, all_reduce only: all_gather and reduce_scatter are left to
NCCL; ``region_init_internal_p5_p5e``), from the file at aws-ofi-nccl commit 228fa0ea. The plugin prefers these
region tables to its cost-model tuner wherever both exist (``nccl_ofi_tuner_init``). Not modelled: its tables
for one and two GPUs per node (p5, p5en: PAT and Tree at those shapes), its channel count for Tree/LL128 at
4-32 MiB on p6-b200 and its chunk sizes (NCCL's are kept), and instance types it has no tables for (NCCL's own
choice there, as the plugin falls back to it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.collectives.algorithms import NvlsChunks
from simulator.core.errors import InputError
from simulator.core.vocabulary import counted

TUNER_MAX_SIZE = 100.0 * 1024 ** 3
TUNER_MAX_RANKS = 1024.0 * 1024
MIN_NODES = 3
"""The region tuner skips communicators of two nodes or fewer (NCCL's own tuner decides)."""
_EPS = 1e-10

Point = tuple[float, float]     # (bytes, ranks)


_ZERO = 1e-6
"""``transform_log2`` takes a coordinate of 0 as this before its log2."""


def _log2(p: Point) -> Point:
    return math.log2(p[0] or _ZERO), math.log2(p[1] or _ZERO)


def extend(a: Point, b: Point, z: Point = (TUNER_MAX_SIZE, TUNER_MAX_RANKS)) -> Point:
    """``extend_region``: the point where the line through ``a`` and ``b`` (log2 scale) reaches ``z``'s x
    or y, whichever comes first."""
    (ax, ay), (bx, by), (zx, zy) = _log2(a), _log2(b), _log2(z)
    if ax == bx:
        x, y = ax, zy
    elif ay == by:
        x, y = zx, ay
    else:
        m = (ay - by) / (ax - bx)
        c = by - m * bx
        x, y = (zx, m * zx + c) if m * zx + c < zy else ((zy - c) / m, zy)
    return 2.0 ** x, 2.0 ** y


def _cross(a: Point, b: Point) -> float:
    return a[0] * b[1] - a[1] * b[0]


def _intersect(x0: Point, x1: Point, y0: Point, y1: Point) -> tuple[int, Point]:
    """``intersect``: 1 if segment x0-x1 crosses y0-y1, -1 if not, 0 if parallel or at y0/y1; and the
    crossing point on the line y0-y1."""
    dx, dy = (x1[0] - x0[0], x1[1] - x0[1]), (y1[0] - y0[0], y1[1] - y0[1])
    d = _cross(dy, dx)
    if abs(d) < _EPS:
        return 0, (0.0, 0.0)
    a = (_cross(x0, dx) - _cross(y0, dx)) / d
    sect = (y0[0] + a * dy[0], y0[1] + a * dy[1])
    if a < -_EPS or a > 1 + _EPS:
        return -1, sect
    if a < _EPS or a > 1 - _EPS:
        return 0, sect
    a = (_cross(x0, dy) - _cross(y0, dy)) / d
    return (-1 if a < 0 or a > 1 else 1), sect


def _on_edge(p: Point, y0: Point, y1: Point) -> bool:
    """``distance(p, edge) < eps``: ``p`` lies on the segment y0-y1."""
    dy = (y1[0] - y0[0], y1[1] - y0[1])
    r, s = _intersect(p, (p[0] + dy[1], p[1] - dy[0]), y0, y1)
    return r != -1 and math.hypot(s[0] - p[0], s[1] - p[1]) < _EPS


def inside(point: Point, vertices: tuple[Point, ...]) -> bool:
    """``is_inside_region`` >= 0: ``point`` (bytes, ranks) inside the polygon or on its edge, log2 scale."""
    p = _log2(point)
    v = [_log2(q) for q in vertices]
    edges = list(zip(v, v[1:] + v[:1]))
    if any(_on_edge(p, a, b) for a, b in edges):
        return True
    xs, ys = [q[0] for q in v], [q[1] for q in v]
    if not (min(xs) <= p[0] <= max(xs) and min(ys) <= p[1] <= max(ys)):
        return False
    far = _log2((2.0 * TUNER_MAX_SIZE, 2.0 * TUNER_MAX_RANKS))
    return sum(_intersect(p, far, a, b)[0] == 1 for a, b in edges) % 2 == 1


@dataclass(frozen=True)
class Region:
    algo: str
    proto: str
    vertices: tuple[Point, ...]


def _p6_b200() -> dict[str, tuple[Region, ...]]:
    """``region_init_internal_p6``, nRanks == 8 x nNodes."""
    M, R = TUNER_MAX_SIZE, TUNER_MAX_RANKS
    tree_ll = extend((393216, 16), (393216, 1024))
    tree_ll128 = extend((96993280, 1024), (106430464, 2048))
    nvls_tree = extend((10737418240, 512), (34359738368, 1500))
    all_reduce = (
        Region("tree", "ll", ((0, 16), (393216, 16), tree_ll, (0, R))),
        Region("tree", "ll128", (tree_ll, (393216, 16), (4718592, 16), (18350080, 32), (40370176, 64),
                                 (57147392, 128), (72876032, 256), (96993280, 1024), (106430464, 2048), tree_ll128)),
        Region("ring", "ll128", ((90701824, 128), (50855936, 64), (18350080, 32), (133693440, 32), (120061952, 64))),
        Region("nvls_tree", "simple", (tree_ll128, (106430464, 2048), (96993280, 1024), (72876032, 256),
                                       (57147392, 128), (40370176, 64), (18350080, 32), (50855936, 64),
                                       (90701824, 128), (120061952, 64), (133693440, 32), (18350080, 32),
                                       (4718592, 16), (M, 16), (435159040, 32), (1072693248, 64),
                                       (10737418240, 512), (34359738368, 1500), nvls_tree)),
        Region("ring", "simple", (nvls_tree, (10737418240, 512), (1072693248, 64), (435159040, 32), (M, 16))),
    )
    ag_ll = extend((74973184, 1024), (213385216, 2048))
    ag_ll128 = extend((8321499136, 512), (32212254720, 2048))
    all_gather = (
        Region("ring", "ll", ((0, 16), (786432, 16), (1572864, 32), (2621440, 64), (4718592, 128), (17301504, 256),
                              (74973184, 1024), (213385216, 2048), ag_ll, (0, R))),
        Region("ring", "ll128", (ag_ll, (213385216, 2048), (74973184, 1024), (17301504, 256), (4718592, 128),
                                 (2621440, 64), (1572864, 32), (786432, 16), (198705152, 16), (456130560, 32),
                                 (871366656, 64), (8321499136, 512), (32212254720, 2048), ag_ll128)),
        Region("ring", "simple", (ag_ll128, (32212254720, 2048), (8321499136, 512), (871366656, 64),
                                  (456130560, 32), (198705152, 16), (M, 16))),
    )
    rs_ll = extend((73924608, 1024), (209190912, 2048))
    rs_ll128 = extend((4294967296, 256), (8589934592, 512))
    reduce_scatter = (
        Region("ring", "ll", ((0, 16), (786432, 16), (1572864, 32), (2621440, 64), (4718592, 128), (17301504, 256),
                              (35127296, 512), (73924608, 1024), (209190912, 2048), rs_ll, (0, R))),
        Region("ring", "ll128", (rs_ll, (209190912, 2048), (73924608, 1024), (35127296, 512), (17301504, 256),
                                 (4718592, 128), (2621440, 64), (1572864, 32), (786432, 16), (219676672, 16),
                                 (508559360, 32), (592445440, 64), (4294967296, 256), (8589934592, 512), rs_ll128)),
        Region("ring", "simple", (rs_ll128, (8589934592, 512), (4294967296, 256), (592445440, 64), (508559360, 32),
                                  (219676672, 16), (M, 16))),
    )
    return {"all_reduce": all_reduce, "all_gather": all_gather, "reduce_scatter": reduce_scatter}


def _p5_p5e() -> dict[str, tuple[Region, ...]]:
    """``region_init_internal_p5_p5e``, nRanks == 8 x nNodes: all_reduce only."""
    M, R = TUNER_MAX_SIZE, TUNER_MAX_RANKS
    tree_ll128 = extend((402653184, 2048), (402653184, 4096))
    nvls_tree = extend((8053063680, 160), (9663676416, 192))       # also the Ring/Simple region's corner
    all_reduce = (
        Region("tree", "ll128", ((0, 16), (31457280, 16), (37748736, 32), (117440512, 64), (301989888, 128),
                                 (301989888, 256), (335544320, 512), (536870912, 1024), (402653184, 2048),
                                 (402653184, 4096), tree_ll128, (0, tree_ll128[1]))),
        Region("nvls_tree", "simple", ((31457281, 16), (M, 16), (31457281, 16))),
        Region("ring", "ll128", ((31457280, 17), (1073741824, 17), (2147483648, 64), (2147483648, 128),
                                 (1342177280, 160), (2147483648, 256), (1074790400, 256), (444596224, 160),
                                 (301989888, 128), (117440512, 64), (37748736, 32))),
        Region("nvls_tree", "simple", ((2147483648, 128), (6442450944, 128), (8053063680, 160), (9663676416, 192),
                                       nvls_tree, tree_ll128, (402653184, 4096), (402653184, 2048),
                                       (536870912, 1024), (335544320, 512), (301989888, 256), (310378496, 160),
                                       (444596224, 160), (1074790400, 256), (2684354560, 256), (2147483648, 224),
                                       (1342177280, 160))),
        Region("ring", "simple", ((1073741824, 17), (nvls_tree[0], 17), nvls_tree, (9663676416, 192),
                                  (8053063680, 160), (2684354560, 64), (1610612736, 32))),
    )
    return {"all_reduce": all_reduce}


def _p5en() -> dict[str, tuple[Region, ...]]:
    """``region_init_internal_p5en``, nRanks == 8 x nNodes."""
    M, R = TUNER_MAX_SIZE, TUNER_MAX_RANKS
    tree_ll = extend((196608, 192), (196608, 1024))
    tree_ll128 = extend((129499136, 127), (218103808, 1024))
    nvls_tree = extend((7516192768, 256), (17179869184, 448))
    all_reduce = (
        Region("tree", "ll", ((0, 16), (196608, 16), (196608, 1024), tree_ll, (0, R))),
        Region("tree", "ll128", (tree_ll, (196608, 1024), (196608, 16), (13107200, 16), (129499136, 127),
                                 (218103808, 1024), tree_ll128)),
        Region("ring", "ll128", ((129499136, 127), (13107200, 16), (29884416, 16), (293601280, 32), (589299712, 64),
                                 (549453824, 128))),
        Region("nvls_tree", "simple", (tree_ll128, (218103808, 1024), (129499136, 127), (549453824, 128),
                                       (589299712, 64), (293601280, 32), (29884416, 16), (M, 16), (509607936, 32),
                                       (7516192768, 256), (17179869184, 448), nvls_tree)),
        Region("ring", "simple", (nvls_tree, (17179869184, 448), (7516192768, 256), (509607936, 32), (M, 16))),
    )
    ag_ll = extend((28305408, 768), (33554432, 1024))
    ag_ll128 = extend((7247754240, 384), (17179865088, 896))
    all_gather = (
        Region("ring", "ll", ((0, 16), (786432, 16), (4718592, 128), (13630464, 384), (19922944, 512),
                              (28305408, 768), (33554432, 1024), ag_ll, (0, R))),
        Region("ring", "ll128", (ag_ll, (33554432, 1024), (28305408, 768), (19922944, 512), (13630464, 384),
                                 (4718592, 128), (786432, 16), (236978176, 16), (956301312, 64), (7247754240, 384),
                                 (17179865088, 896), ag_ll128)),
        Region("ring", "simple", (ag_ll128, (17179865088, 896), (7247754240, 384), (956301312, 64), (494927872, 32),
                                  (236978176, 16), (M, 16))),
    )
    rs_ll = extend((7340032, 256), (18874368, 512))
    rs_ll128 = extend((7247757312, 256), (17179869184, 640))
    reduce_scatter = (
        Region("ring", "ll", ((0, 16), (786432, 16), (4718592, 128), (7340032, 256), (18874368, 512), rs_ll, (0, R))),
        Region("ring", "ll128", (rs_ll, (18874368, 512), (7340032, 256), (4718592, 128), (786432, 16),
                                 (291504128, 16), (589299712, 32), (2415919104, 128), (7247757312, 256),
                                 (17179869184, 640), rs_ll128)),
        Region("ring", "simple", (rs_ll128, (17179869184, 640), (7247757312, 256), (2415919104, 128),
                                  (589299712, 32), (291504128, 16), (M, 16))),
    )
    return {"all_reduce": all_reduce, "all_gather": all_gather, "reduce_scatter": reduce_scatter}


_P5 = (8, _p5_p5e())
PLATFORMS: dict[str, tuple[int, dict[str, tuple[Region, ...]]]] = {
    "p5.48xlarge": _P5, "p5e.48xlarge": _P5, "p5en.48xlarge": (8, _p5en()), "p6-b200.48xlarge": (8, _p6_b200())}
"""Instance type -> (GPUs per node the tables are for, regions per op); the plugin reads the instance type
from the host's product name (p5 and p5e share one table)."""


def why_idle(platform: str, ranks: int, nodes: int, op: str | None = None) -> str | None:
    """Why the plugin leaves every choice of a communicator of ``ranks`` ranks on ``nodes`` nodes (of ``op``,
    where given) to NCCL's own tuner (no tables for the instance type or the op, two nodes or fewer, another
    GPU count per node), or None where its tables apply."""
    known = PLATFORMS.get(platform)
    if known is None:
        return f"no region tables for {platform}"
    if nodes < MIN_NODES:
        return f"{counted(nodes, 'node')}: the plugin decides from {MIN_NODES} nodes"
    if ranks != known[0] * nodes:
        return f"{ranks // max(nodes, 1)} GPUs a node: its tables are for {known[0]}"
    if op is not None and op not in known[1]:
        return f"no {op} table for {platform}"
    return None


def choose(platform: str, op: str, size_bytes: float, ranks: int, nodes: int,
           allowed: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """The plugin's (algorithm, protocol) for ``op`` of ``size_bytes`` on ``ranks`` ranks over ``nodes``
    nodes of ``platform``, among the ``allowed`` pairs (NCCL skips a region whose pair it does not offer);
    None where NCCL's own tuner decides (unknown platform or op, two nodes or fewer, another GPU count per
    node, no region holding the point, a size above the tables)."""
    if size_bytes > TUNER_MAX_SIZE or why_idle(platform, ranks, nodes, op) is not None:
        return None
    for region in PLATFORMS[platform][1][op]:
        if (region.algo, region.proto) in allowed and inside((float(size_bytes), float(ranks)), region.vertices):
            return region.algo, region.proto
    return None


EFA_WITHOUT_LL = ("p4d.24xlarge", "p4de.24xlarge")
"""Instances whose EFA endpoints do not deliver 128-byte-aligned writes in order, so NCCL's LL and LL128
protocols could corrupt data over them: AWS's network plugin (the same aws-ofi-nccl) sets NCCL_PROTO=simple
there (``force_proto_simple`` in src/platform-aws.c; later versions test the endpoint, which p4d/p4de's
SENDRECV endpoints fail, and exempt p5 only with the RDMA protocol, PR #280), from its 2022 releases on."""

_P5_ON_ENV = {"NCCL_BUFFSIZE": 8388608, "NCCL_P2P_NET_CHUNKSIZE": 524288, "NCCL_NVLSTREE_MAX_CHUNKSIZE": 524288,
              "NCCL_NVLS_CHUNKSIZE": 524288, "NCCL_NET_FORCE_FLUSH": 0}
PLATFORM_ENV: dict[str, dict[str, int]] = {
    "p4de.24xlarge": {"NCCL_BUFFSIZE": 8388608, "NCCL_P2P_NET_CHUNKSIZE": 524288},
    "p5.48xlarge": _P5_ON_ENV, "p5e.48xlarge": _P5_ON_ENV, "p5en.48xlarge": _P5_ON_ENV, "p6-b200.48xlarge": _P5_ON_ENV}
"""The NCCL environment AWS's network plugin (the same aws-ofi-nccl) adds at its init on each instance type, unless
the run set the variable itself (its platform table in src/platform-aws: the ``p5/p5e`` entry and the ``p-series``
one for p5en and later). Of these the model reads the NVLS chunk settings (simulator.collectives.algorithms.
NvlsChunks): NCCL_NVLSTREE_MAX_CHUNKSIZE since aws-ofi-nccl PR #332 (February 2024, "NCCL v2.19.3 reduced the chunk
size used when running NVLS Tree algorithm on greater than 4 nodes to 64KiB. This drastically impacted
performance on AWS"), NCCL_NVLS_CHUNKSIZE since PR #372 (April 2024, to keep the two matched)."""
PLUGIN_SETS_NVLS_CHUNKS_FROM = "2024-04"
"""The month of PR #372: a run from then on with the plugin loaded has both NVLS chunk settings."""

PLATFORM_LATENCY_S: dict[str, float] = {
    "p4d.24xlarge": 75e-6, "p4de.24xlarge": 75e-6, "p5.48xlarge": 75e-6, "p5e.48xlarge": 75e-6,
    "p5en.48xlarge": 35e-6, "p6-b200.48xlarge": 35e-6}
"""The internode latency AWS's network plugin states to NCCL (``ncclNetProperties.latency``; its log: "Internode
latency set at 75.0 us") per instance type: its platform table in src/platform-aws (``.latency``: p4d, p4de and the
``p5/p5e`` entry 75 us, the ``p-series`` entry for p5en and later 35 us). Where NCCL adds it: nccl_constants.
NET_LATENCY_FROM."""
EFA_DEFAULT_LATENCY_S = 150e-6
"""What the plugin states on an instance type its table lacks ("for historical reasons, default value for EFA is
150 us")."""


def plugin_net_latency_s(platform: str) -> float:
    """The latency AWS's network plugin states to NCCL on instance type ``platform`` (PLATFORM_LATENCY_S)."""
    return PLATFORM_LATENCY_S.get(platform, EFA_DEFAULT_LATENCY_S)


NVLS_CHUNK_ENV = ("NCCL_NVLS_CHUNKSIZE", "NCCL_NVLSTREE_MAX_CHUNKSIZE")


def nvls_chunk_env(platform: str | None, env: dict | None = None) -> dict:
    """NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE as a run has them (only those set): the run's own
    ``env``'s, else what AWS's network plugin adds on instance type ``platform`` (PLATFORM_ENV; None: the plugin is
    not loaded, or predates PLUGIN_SETS_NVLS_CHUNKS_FROM). The corpus reads a header's through it
    (validation.compare.nvls_chunk_settings), ``--tuner-plugin`` through :func:`plugin_nvls_chunks`."""
    env, added = env or {}, PLATFORM_ENV.get(platform or "", {})
    return {k: env.get(k, added.get(k)) for k in NVLS_CHUNK_ENV if env.get(k, added.get(k)) is not None}


def plugin_nvls_chunks(platform: str | None) -> NvlsChunks | None:
    """The NVLS chunk settings of a run that loads the plugin on ``platform`` (a current plugin, the user's
    environment not setting them), for Planner(nvls_chunks=), which applies what its NCCL takes of them
    (NvlsChunks.taken_by: NCCL 2.22 on); None where the plugin adds none (p4de, or no plugin)."""
    chunk, tree = (nvls_chunk_env(platform).get(k) for k in NVLS_CHUNK_ENV)
    return NvlsChunks.of(chunk, tree)

PLUGIN = "aws-ofi"
"""How a user names this plugin (``--tuner-plugin aws-ofi:INSTANCE``)."""


def platform_of(spec: str, field: str = "--tuner-plugin") -> str:
    """The instance type of a plugin spec ``aws-ofi:p5en.48xlarge`` (the plugin reads it from the host, which
    a topology does not name); refused, naming the known ones, where the spec is another plugin, lacks the
    instance type or names one the plugin has no tables for (NCCL's own tuner decides there: leave the flag out)."""
    name, _, platform = str(spec).partition(":")
    known = ", ".join(f"{PLUGIN}:{p}" for p in PLATFORMS)
    if name.strip().lower() != PLUGIN:
        raise InputError(f"the tuner plugin modelled is AWS's ({known})", field=field, value=spec)
    platform = platform.strip().lower()
    sizes = [p for p in PLATFORMS if p.split(".")[0] == platform]
    if sizes:           # a family named without its size (p5): say which instance type, never guess it
        raise InputError(f"name the instance type, not its family: {', '.join(f'{PLUGIN}:{p}' for p in sizes)} "
                         "(the plugin's tables are for that size's 8 GPUs a node)", field=field, value=spec)
    if platform not in PLATFORMS:
        why = "name the instance type" if not platform else \
            "no region tables for this instance type: NCCL's own tuner decides there (leave the flag out" + \
            ("; AWS's network plugin sets NCCL_PROTO=simple there: pass --proto simple)" if platform in EFA_WITHOUT_LL
             else ")")
        raise InputError(f"{why}; one of {known}", field=field, value=spec)
    return platform
