"""Default parameters fitted to the public nccl-tests corpus, by link class and fabric, judged leaving
each dataset out.

The uncalibrated model runs on NCCL's constants and datasheet bandwidths. Could the public corpus
(``validation/data/public``: 25 clusters from 8 providers) give better defaults? Only a figure on data
that was not fitted can say, so every dataset is predicted from a fit to the *other* datasets of its
group less its siblings (leave one dataset out, and with it the datasets of the same instance type:
validation.corpus_clusters), and a group's fit replaces the datasheet only where that held-out
figure beats the datasheet's on the same points, with the siblings left out and kept in alike.

Groups are link classes and fabrics, read from each dataset's header (its topology hint, NIC
description and hardware line): one server over NVLink/NVSwitch (``nvlink``), one server over
PCIe or host memory (``pcie``), servers over InfiniBand or RoCE verbs (``ib-roce``), servers over
AWS EFA (``efa``: SRD through libfabric, its per-message cost paid in the host and the NIC) and over
GCP GPUDirect-TCPX/TCPXO (``tcpx``: TCP through the host's stack or a NIC offload engine), and NCCL's
TCP socket transport (``socket``). Each group fits only the few keys of its class (:data:`GROUPS`),
so a slow cloud network never drags the NVLink efficiency down; EFA and TCPX fit their per-call cost
across servers (``net_call_overhead_s``), each on its own transport's clusters. Each prediction uses its
dataset's own header facts: topology, NICs, NCCL_ALGO/PROTO and the NCCL version its tuner follows. A
dataset whose measurements exceed what the hardware in its header can carry (:func:`beyond_hardware`)
is listed with the reason and neither fitted nor scored. The fit is the calibrator's own (validation.calibrate: robust Huber loss, priors at the
datasheet values, bounds; an efficiency pushed to 1 or a latency to its physical minimum is
refused, the key kept at its prior), on sizes from :data:`FIT_MIN_BYTES` up, every dataset
weighing the same; a group fits a key only where datasets of at least two of its clusters
exercise it (:data:`MIN_CLUSTERS_PER_KEY`). Scores are at >= 16 MiB, the bandwidth regime.

``python -m validation.accuracy --calibrations`` writes each adopted group's fit (on all its
datasets) to ``simulator/collectives/calibrations/corpus-GROUP.json`` with its provenance; a group
whose parameters apply to every cluster of a link class would replace the defaults in
simulator.collectives.params, one whose parameters belong to a fabric the topology cannot name
(EFA, TCPX) is a named calibration (``--calibration corpus-efa``), and so is one GPU generation's
NVLink fit (``corpus-nvlink-hopper``: the key it sets is the link class's, shared by every generation).

Alternatives checked and not adopted, with their figures (per dataset where one got worse), are in
validation.corpus_checks (``python -m validation.corpus_checks`` reruns each).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from simulator.collectives.params import DEFAULTS, Parameters, out_of_range_message
from validation.calibrate import SIZE_EDGES_BYTES, Evaluator, _fit, _pinned, scale
from validation.compare import Predictor, choice_for, compare, topo_from_hint
from validation.defaults import public_parts
from validation.corpus_clusters import SIBLINGS, cluster_of
from validation.parsers import CollMeasurement, read_jsonl
from simulator.core.vocabulary import busbw_factor

FIT_MIN_BYTES = 1 << 20
"""Fitted on sizes from 1 MiB: the bandwidth regime and the ramp into it, where the class's keys act."""
SCORE_MIN_BYTES = SIZE_EDGES_BYTES[-1]
"""Scored at >= 16 MiB (the bandwidth regime of the issue's target: the top size band)."""
DATASET_SPREAD = 0.05
"""A dataset's points are credited 5% spread (log units), scaled by sqrt(points / median points) so
every dataset weighs the same whatever its number of sizes."""

_NET = ("hop_latency_s.net.nvls_tree.simple", "hop_latency_s.net.ring.simple")


@dataclass(frozen=True)
class Group:
    name: str
    what: str
    keys: tuple[str, ...]
    link_class: bool      # True: the keys hold for every cluster of the class (defaults); False: a fabric's
    carried_from: str | None = None     # the group whose adopted whole fit gives this one's NVLS kernel terms


GROUPS = (
    # NVLink by GPU generation: a fit to one architecture's servers never moves another's predictions
    # (B200's NVLink5 ring runs at 0.76 of its links, H100/H200's NVLink4 at 0.81: one shared key pulled
    # both 5% the wrong way); a generation's fit is a named calibration, the key being the link class's
    Group("nvlink-ampere", "one server, NVLink3/NVSwitch (A100)", ("link_efficiency.nvlink",), False),
    Group("nvlink-hopper", "one server, NVLink4/NVSwitch (H100, H200)", ("link_efficiency.nvlink",
                                                                         "nvls_efficiency.sm90",
                                                                         "nvls_step_overhead_s",
                                                                         "nvls_fill_rounds"), False),
    Group("nvlink-blackwell", "one server, NVLink5/NVSwitch (B200)", ("link_efficiency.nvlink",
                                                                      "nvls_efficiency.sm100"), False,
          carried_from="nvlink-hopper"),
    Group("pcie", "one server, PCIe (peer-to-peer or through host memory)", ("link_efficiency.pcie",
                                                                              "shm_efficiency"), True),
    Group("ib-roce", "servers over InfiniBand or RoCE verbs", _NET, False),
    Group("efa", "servers over AWS EFA", ("net_flush_overhead_s",), False),
    Group("tcpx", "servers over GCP GPUDirect-TCPX/TCPXO", ("net_call_overhead_s",), False),
    Group("socket", "NCCL's TCP socket transport", ("socket_max_Bps", "link_efficiency.socket"), True),
)
BY_NAME = {g.name: g for g in GROUPS}


@dataclass(frozen=True)
class Part:
    """One dataset (or one machine's variants of a file) with its group and the points the model takes."""

    label: str
    group: str
    predictor: Predictor
    points: tuple[CollMeasurement, ...]
    inconsistent: str | None = None     # why the measurements contradict the header's hardware (not scored)
    nic: str = ""                       # the header's NIC description (topology hint)


def group_of(hint: Mapping, meta: Mapping, points: Sequence[CollMeasurement]) -> str:
    """The group of a dataset from its header: the topology hint, NIC and hardware descriptions."""
    if any(choice_for(p)[2] == "socket" for p in points):
        return "socket"
    if int(hint.get("nodes", 1)) == 1:
        if hint.get("p2p") is False or str(hint.get("preset", "")).startswith("pcie"):
            return "pcie"
        return nvlink_group(str(hint.get("preset", "")))
    text = f"{hint.get('nic', '')} {meta.get('hardware', '')}".lower()
    # whole words: "default NCCL settings" names no EFA
    return "efa" if re.search(r"\befa\b", text) else "tcpx" if re.search(TCPX_WORD, text) else "ib-roce"


TCPX_WORD, TCPXO_WORD = r"\btcpxo?\b", r"\btcpxo\b"
"""GCP's GPUDirect-TCPX (TCP through the host's stack) or -TCPXO (a NIC offload engine), and TCPXO alone."""


NVLINK_GENERATIONS = {80: "nvlink-ampere", 90: "nvlink-hopper", 100: "nvlink-blackwell"}


def nvlink_group(preset: str) -> str:
    """The NVLink group of a one-server preset, by its GPUs' compute capability (Hopper if unknown)."""
    from topologies.presets import SERVERS
    spec = SERVERS.get(preset)
    cc = spec.compute_capability if spec is not None else 90
    return NVLINK_GENERATIONS[max((c for c in NVLINK_GENERATIONS if c <= cc), default=80)]


def corpus_parts(data_dir: Path, params: Parameters | None = None) -> list[Part]:
    """Every public dataset as a Part (files whose variants ran on different machines split per variant)."""
    from functools import lru_cache
    params = params or Parameters()
    meta = lru_cache(maxsize=None)(lambda f: read_jsonl(f).meta)
    out = []
    for label, f, hint, pts in public_parts(data_dir):
        pred = Predictor(topo_from_hint(hint, f), params)
        usable = tuple(c.point for c in compare(pts, pred)[0])
        if usable:
            part = Part(label, group_of(hint, meta(f), usable), pred, usable, nic=str(hint.get("nic", "")))
            out.append(replace(part, inconsistent=beyond_hardware(part)))
    return out


def beyond_hardware(part: Part) -> str | None:
    """Why a multi-server dataset's measurements cannot have run on the hardware its header describes,
    or None. Across servers every byte of an all_reduce crosses the servers' NICs: a ring's bus bandwidth
    is at most their bandwidth, any algorithm's (a tree on two servers) at most twice it. A dataset above
    that bound (with NCCL_ALGO pinning a ring: above the NICs' bandwidth) measured something else than
    its header says (another network, another algorithm), so no model of that header can predict it."""
    from topologies.presets import SERVERS
    topo = part.predictor.topo
    if topo.nodes < 2 or topo.preset not in SERVERS or not topo.nic_Bps:
        return None
    nic_Bps = topo.server_nic_Bps
    worst = None
    for p in part.points:
        if p.op != "all_reduce" or p.size_bytes < SCORE_MIN_BYTES:
            continue
        c = choice_for(p)
        bound = 1.0 if c is not None and c[0] == "ring" else 2.0
        ratio = p.size_bytes / p.time_s * busbw_factor(p.op, p.world) / nic_Bps
        if ratio > 1.05 * bound and (worst is None or ratio > worst[0]):
            worst = (ratio, bound)
    if worst is None:
        return None
    return (f"bus bandwidth {worst[0]:.2f}x the {nic_Bps * 8 / 1e9:.0f} Gb/s its header gives each server, "
            f"above what {'a ring' if worst[1] == 1 else 'any algorithm'} can carry through them")


class _Stacked:
    """Several datasets' evaluators as one: a parameter set -> every point's predicted time."""

    def __init__(self, evaluators: Sequence[Evaluator]) -> None:
        self.evaluators = list(evaluators)

    def __call__(self, params: Parameters) -> np.ndarray:
        return np.concatenate([e(params) for e in self.evaluators])


@dataclass(frozen=True)
class GroupFit:
    params: Parameters
    keys: tuple[str, ...]           # fitted (the rest of the group's keys were refused)
    refused: tuple[str, ...]


def fit(parts: Sequence[Part], keys: Sequence[str], start: Parameters | None = None) -> GroupFit:
    """The group's keys fitted to ``parts`` pooled (sizes >= FIT_MIN_BYTES, datasets weighing alike)."""
    start = start or Parameters()
    evs, measured, counts = [], [], []
    for part in parts:
        pts = [p for p in part.points if p.size_bytes >= FIT_MIN_BYTES]
        if pts:
            evs.append(Evaluator(part.predictor.with_params(start), pts))
            measured += [p.time_s for p in pts]
            counts.append(len(pts))
    if not evs:
        return GroupFit(start, (), ())
    mid = float(np.median(counts))
    sd = np.concatenate([np.full(n, DATASET_SPREAD * np.sqrt(n / mid)) for n in counts])
    ev, meas = _Stacked(evs), np.array(measured)
    keys, refused = list(keys), []
    for _ in range(len(keys) + 1):
        params, x = _fit(ev, start, meas, sd, keys, 1.0)
        pinned = _pinned(keys, x)
        if not pinned:
            break
        refused += [f"{k}: {out_of_range_message(k)}" for k in pinned]
        keys = [k for k in keys if k not in pinned]
    return GroupFit(params, tuple(keys), tuple(refused))


MIN_CLUSTERS_PER_KEY = 2
"""A group fits a key only where datasets of at least two of its clusters (validation.corpus_clusters:
different machines) exercise it: a value fitted on one cluster cannot be judged leaving that cluster out
(its folds have no data for the key and keep the datasheet), so the whole-group fit would ship it
unjudged, standing in for whatever that one machine lacks (the L40S RoCE run, ib-roce's only ring and a
host-staging bandwidth case, had set the group's ring latency)."""


def exercising(parts: Sequence[Part], key: str, datasheet: Parameters | None = None) -> list[str]:
    """Labels of the parts whose predicted times at the fitted sizes (>= FIT_MIN_BYTES) move with ``key``
    (the key halved, or set to its scale where the datasheet's value is 0) around ``datasheet`` (default
    the datasheet defaults; the fits' prior where a check varies it)."""
    start = datasheet or Parameters()
    v = start[key]
    moved = start.with_values({key: v * 0.5 if v else scale(key)})
    out = []
    for part in parts:
        pts = [p for p in part.points if p.size_bytes >= FIT_MIN_BYTES]
        if pts:
            ev = Evaluator(part.predictor.with_params(start), pts)
            if np.any(np.abs(ev(moved) / ev(start) - 1) > 1e-9):
                out.append(part.label)
    return out


def judgeable(parts: Sequence[Part], keys: Sequence[str],
              datasheet: Parameters | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the keys datasets of at least MIN_CLUSTERS_PER_KEY clusters of ``parts`` exercise around
    ``datasheet``, why each other key is not fitted)."""
    kept, refused = [], []
    clusters = {cluster_of(p.label) for p in parts}
    for k in keys:
        by = exercising(parts, k, datasheet)
        on = {cluster_of(label) for label in by}
        if len(on) >= MIN_CLUSTERS_PER_KEY:
            kept.append(k)
        else:
            refused.append(f"{k}: exercised on {len(on)} of {len(clusters)} clusters"
                           + (f" ({', '.join(by)})" if by else "") + f", fitted only where {MIN_CLUSTERS_PER_KEY} "
                           "are (a value from one cluster cannot be judged with it left out)")
    return tuple(kept), tuple(refused)


def errors(part: Part, params: Parameters, min_bytes: int = SCORE_MIN_BYTES) -> np.ndarray:
    """predicted / measured - 1 (signed) of a part's points from ``min_bytes`` up under ``params``."""
    comps, _ = compare([p for p in part.points if p.size_bytes >= min_bytes], part.predictor.with_params(params))
    return np.array([c.error for c in comps])


@dataclass(frozen=True)
class Held:
    """One dataset predicted by its group's fit to the other datasets of the group."""

    part: Part
    datasheet: np.ndarray           # |errors| at >= 16 MiB under the datasheet parameters
    held_out: np.ndarray            # |errors| at >= 16 MiB under the fit that left this dataset out
    ratio: float | None             # median measured / predicted at >= 16 MiB under the datasheet
    params: Parameters | None = None    # the fit that left this dataset (and its siblings) out
    siblings_in: np.ndarray | None = None   # |errors| under the fit that left this dataset alone out


NVLS_KERNEL_KEYS = ("nvls_fill_rounds", "nvls_step_overhead_s")
CARRIED_KEYS = {"nvls_efficiency.sm100": "nvls_efficiency.sm90", **{k: k for k in NVLS_KERNEL_KEYS}}
"""Blackwell key -> the Hopper key of the fit it is carried from (:func:`carried_nvls`)."""


def carried_nvls(source: Parameters) -> dict[str, float]:
    """What a Hopper NVLS fit (``source``, fitted on Hopper servers only) says for Blackwell: NCCL's one NVLS kernel
    code runs both generations, so its pipeline fill and cost per round of chunks carry as fitted, and NVLS's
    efficiency as NCCL's Blackwell nvlsEfficiency times the ratio the fit found over NCCL's Hopper figure."""
    return {k: source[h] * (DEFAULTS[k] / DEFAULTS[h] if k != h else 1.0) for k, h in CARRIED_KEYS.items()}


@dataclass(frozen=True)
class GroupResult:
    group: Group
    held: tuple[Held, ...]
    whole: GroupFit                 # the fit on every dataset of the group (what is shipped if adopted)
    carried: tuple[str, ...] = ()   # keys whose values another group's whole fit gave (Group.carried_from)

    def pooled(self, which: str) -> float | None:
        e = [getattr(h, which) for h in self.held if len(h.datasheet) and getattr(h, which) is not None]
        return float(np.median(np.concatenate(e)) * 100) if e else None

    @property
    def adopted(self) -> bool:
        """The fit replaces the datasheet when, leaving each dataset out, it predicts the group better:
        with the dataset's siblings left out of the fit too, and with them kept in (a fit that wins only
        one way won by the luck of which clusters were left)."""
        a, b, c = self.pooled("held_out"), self.pooled("datasheet"), self.pooled("siblings_in")
        return a is not None and b is not None and a < b and (c is None or c < b) and \
            bool(self.whole.keys or self.carried)


def leave_one_dataset_out(parts: Sequence[Part], groups: Sequence[Group] = GROUPS,
                          datasheet: Parameters | None = None) -> list[GroupResult]:
    """Per group: every dataset predicted from a fit to the other datasets of its group less its siblings
    (validation.corpus_clusters: the same instance type), and, where it has siblings in the group, from a
    fit that keeps them (``Held.siblings_in``); and the whole-group fit (of the group's keys, those :func:`judgeable` on its datasets).
    ``groups`` and ``datasheet`` (the prior and the no-fit prediction) are the report's unless a check
    (validation.corpus_checks) varies them."""
    out: list[GroupResult] = []
    datasheet = datasheet or Parameters()
    for g in groups:
        members = [p for p in parts if p.group == g.name and not p.inconsistent]
        if not members:
            continue
        source = next((r for r in out if r.group.name == g.carried_from and r.adopted), None)
        carried = carried_nvls(source.whole.params) if source is not None else {}
        prior = datasheet.with_values(carried) if carried else datasheet
        keys, unjudged = judgeable(members, g.keys, prior)
        held = []
        for i, part in enumerate(members):
            rest = [m for m in members if cluster_of(m.label) != cluster_of(part.label)]
            loo = fit(rest, keys, prior).params if rest else prior
            kept = members[:i] + members[i + 1:]
            e0 = errors(part, datasheet)
            held_out = np.abs(errors(part, loo))
            siblings_in = held_out if len(kept) == len(rest) else \
                np.abs(errors(part, fit(kept, keys, prior).params if kept else prior))
            held.append(Held(part, np.abs(e0), held_out,
                             float(np.median(1 / (1 + e0))) if len(e0) else None, loo, siblings_in))
        whole = fit(members, keys, prior)
        out.append(GroupResult(g, tuple(held), replace(whole, refused=unjudged + whole.refused),
                               tuple(k for k in carried if k not in whole.keys)))
    return out


def uncalibrated_errors(results: Sequence[GroupResult], adopted_only: bool = True,
                        which: str = "held_out") -> tuple[np.ndarray, np.ndarray]:
    """(datasheet, held-out) errors at >= 16 MiB over the corpus; a group not adopted keeps the datasheet.
    ``which="siblings_in"``: the held-out errors of the fits that kept each dataset's siblings."""
    ds, ho = [], []
    for r in results:
        for h in r.held:
            ds.append(h.datasheet)
            ho.append(getattr(h, which) if (r.adopted or not adopted_only) else h.datasheet)
    return np.concatenate(ds), np.concatenate(ho)


COMMAND = "python -m validation.accuracy --calibrations"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _value(key: str, v: float) -> str:
    return f"{v * 1e6:.1f} us" if key.endswith("_s") or "latency_s" in key else \
        f"{v / 1e9:.1f} GB/s" if key.endswith("_Bps") else f"{v:.3f}"


def _fixed_and_bandwidth(part: Part) -> tuple[float | None, float | None]:
    """(median extra seconds per call at 16-256 MiB, median measured/predicted bus bandwidth from 1 GiB)
    under the datasheet: a fabric's per-call cost and its bandwidth, read apart."""
    mid, _ = compare([p for p in part.points if SCORE_MIN_BYTES <= p.size_bytes < 1 << 28], part.predictor)
    top, _ = compare([p for p in part.points if p.size_bytes >= 1 << 30], part.predictor)
    return (float(np.median([c.point.time_s - c.predicted_s for c in mid])) if mid else None,
            float(np.median([c.predicted_s / c.point.time_s for c in top])) if top else None)


def _fabric_evidence(parts: Sequence[Part]) -> str:
    out = []
    for part in parts:
        extra, bw = _fixed_and_bandwidth(part)
        out.append(f"{part.label}: "
                   + (f"{extra * 1e3:+.2f} ms" if extra is not None else "-")
                   + (f", {bw:.2f}x" if bw is not None else ""))
    return "; ".join(out)


def flushes(part: Part) -> bool:
    """Whether NCCL flushes GPUDirect receives from the network in ``part``'s run (its planner's rule:
    simulator.collectives.nccl_constants.flushes_gdr_receives, from the header's GPU, NCCL version and env)."""
    p = part.points[0]
    return part.predictor.model(p.world, None).planner.net_flush


def _flush_ms(parts: Sequence[Part], of: Sequence[Part], flushing: bool) -> str:
    """The extra ms per call at 16-256 MiB (datasheet) of the datasets in ``of`` that flush (or not), as a range."""
    ms = [v for p in of if flushes(p) == flushing and (v := _extra_ms(parts, p.label)) is not None]
    return "-" if not ms else f"{min(ms):.2f}" if len(ms) == 1 else f"{min(ms):.2f}-{max(ms):.2f}"


def chunk_rates(parts: Sequence[Part]) -> dict[int, float]:
    """NVLS all_reduce's marginal algorithm bandwidth (GB/s) per NCCL chunk size, median over ``parts``:
    within each dataset the slope of time over size among the points from 16 MiB up that NCCL cuts into
    the same chunk (at least two sizes)."""
    per_chunk: dict[int, list[float]] = {}
    for part in parts:
        runs: dict[tuple, list[tuple[float, float]]] = {}
        for p in part.points:
            if p.op != "all_reduce" or p.size_bytes < SCORE_MIN_BYTES:
                continue
            c = part.predictor.predict(p)
            if c is None or c.algo != "nvls":
                continue
            chunking = part.predictor.setup(p)[0].planner.plan(p.op, "nvls", "simple").chunking
            if chunking is None:
                continue
            key = (p.world, p.variant, chunking.chunk_bytes(p.size_bytes))
            runs.setdefault(key, []).append((float(p.size_bytes), p.time_s))
        for (_, _, chunk), pts in runs.items():
            if len({s for s, _ in pts}) >= 2:
                slope = np.polyfit([s for s, _ in pts], [t for _, t in pts], 1)[0]
                if slope > 0:
                    per_chunk.setdefault(chunk, []).append(1e-9 / slope)
    return {c: float(np.median(v)) for c, v in sorted(per_chunk.items(), reverse=True)}


def ring_link_fraction(parts: Sequence[Part]) -> dict[str, float]:
    """Per NVLink group: the median bus bandwidth of one-server rings from 1 GiB over the GPU's NVLink
    bandwidth (the preset's datasheet figure)."""
    from topologies.presets import SERVERS
    out: dict[str, list[float]] = {}
    for part in parts:
        spec = SERVERS.get(part.predictor.topo.preset)
        if not part.group.startswith("nvlink") or spec is None or not spec.nvlink_Bps:
            continue
        for p in part.points:
            c = part.predictor.predict(p) if p.size_bytes >= 1 << 30 else None
            if c is not None and c.algo == "ring":
                out.setdefault(part.group, []).append(
                    p.size_bytes / p.time_s * busbw_factor(p.op, p.world) / spec.nvlink_Bps)
    return {g: float(np.median(v)) for g, v in out.items()}


def _ring_text(parts: Sequence[Part]) -> str:
    return ", ".join(f"{g.removeprefix('nvlink-')} {v:.2f}" for g, v in ring_link_fraction(parts).items()) or "-"


UNPREDICTABLE = ("pcie", "socket")
"""Groups whose clusters no shared parameter predicts from the others (section 1b's text says why)."""
UNPREDICTABLE_DATASETS = ("l40s_2x2_roce", "a3high", "eks", "nccl2.8.3")


def unpredictable(group: str, label: str) -> bool:
    """Whether a dataset is one section 1b lists as beyond what its header tells (named after its residuals
    were seen: a diagnosis, never a way to score the target)."""
    return group in UNPREDICTABLE or any(k in label for k in UNPREDICTABLE_DATASETS)


def _unpredictable(results: Sequence[GroupResult]) -> int:
    return sum(len(h.datasheet) for r in results for h in r.held if unpredictable(r.group.name, h.part.label))


def predictable_errors(results: Sequence[GroupResult]) -> np.ndarray:
    """The figure's held-out errors at >= 16 MiB without the datasets :func:`unpredictable` names."""
    return np.concatenate([h.held_out if r.adopted else h.datasheet for r in results for h in r.held
                           if not unpredictable(r.group.name, h.part.label)])


BANDS_BYTES = ((16 << 20, 64 << 20), (64 << 20, 256 << 20), (256 << 20, 1 << 30), (1 << 30, None))
"""Size bands of the error map (from 16 MiB: the scored regime)."""


def _band_name(lo: int, hi: int | None) -> str:
    f = lambda b: f"{b >> 30} GiB" if b >= 1 << 30 else f"{b >> 20} MiB"       # noqa: E731
    return f">= {f(lo)}" if hi is None else f"{f(lo)} - {f(hi)}"


def error_map(results: Sequence[GroupResult]) -> list[tuple[str, list[tuple[int, int, float | None]]]]:
    """Per group (and the whole corpus last): per size band of :data:`BANDS_BYTES`, (points within 5%,
    points, median |error|) of the figure's held-out errors (the datasheet's where the group was not adopted)."""
    rows: dict[str, list[list[float]]] = {}
    for r in results:
        for h in r.held:
            pts = [p for p in h.part.points if p.size_bytes >= SCORE_MIN_BYTES]
            errs = h.held_out if r.adopted else h.datasheet
            assert len(pts) == len(errs), h.part.label      # errors() scores these points, in this order
            for p, e in zip(pts, errs):
                for i, (lo, hi) in enumerate(BANDS_BYTES):
                    if p.size_bytes >= lo and (hi is None or p.size_bytes < hi):
                        for name in (r.group.name, "all"):
                            rows.setdefault(name, [[] for _ in BANDS_BYTES])[i].append(float(e))
    order = [name for name in rows if name != "all"] + ["all"]
    return [(name, [(int(np.sum(np.array(b) <= 0.05)), len(b), float(np.median(b)) if b else None)
                    for b in rows[name]]) for name in order if name in rows]


def _fold_range(r: GroupResult | None, key: str) -> str:
    vals = [h.params[key] for h in (r.held if r else ()) if h.params is not None]
    if not vals:
        return "-"
    return f"{min(vals) * 1e6:.1f}-{max(vals) * 1e6:.1f} us" if key.endswith("_s") else f"{min(vals):.3g}-{max(vals):.3g}"


def _rates_text(rates: dict[int, float]) -> str:
    return ", ".join(f"{r:.0f} GB/s at {c >> 10} KiB" for c, r in rates.items()) or "-"


def busbw_GBps(parts: Sequence[Part], label: str, op: str, lo_bytes: int, hi_bytes: int | None = None,
               variant: str | None = None) -> float | None:
    """Median measured bus bandwidth (GB/s) of one dataset's points of ``op`` in [lo_bytes, hi_bytes]."""
    v = [p.size_bytes / p.time_s * busbw_factor(p.op, p.world) / 1e9 for part in parts if part.label == label
         for p in part.points if p.op == op and p.size_bytes >= lo_bytes and (hi_bytes is None or p.size_bytes <= hi_bytes)
         and (variant is None or p.variant == variant)]
    return float(np.median(v)) if v else None


def _gbps(m: float | None) -> str:
    return "-" if m is None else f"{m:.1f}" if m < 20 else f"{m:.0f}"


def _busbw(parts: Sequence[Part], *a, **k) -> str:
    return _gbps(busbw_GBps(parts, *a, **k))


def _ratios(values: Sequence[float | None], of: float | None, digits: int = 2) -> str:
    """``lo-hi`` of ``values`` over ``of`` (one figure where they round alike)."""
    if not of or any(v is None for v in values):
        return "-"
    r = sorted(v / of for v in values)
    lo, hi = f"{r[0]:.{digits}f}", f"{r[-1]:.{digits}f}"
    return lo if lo == hi else f"{lo}-{hi}"


def _one_machine(results: Sequence[GroupResult], group: str, what: str) -> str:
    """A sentence on a group whose keys were all refused because its datasets are one cluster, or ''."""
    r = next((r for r in results if r.group.name == group), None)
    if r is None or r.whole.keys:
        return ""
    n = len({cluster_of(h.part.label) for h in r.held})
    out = (f"The group's {len(r.held)} {what} datasets are {n} cluster{'s' if n > 1 else ''} (one instance type: "
           "validation.corpus_clusters), so no key of the group is fitted: one machine's value cannot be judged "
           "held out.")
    if r.carried:
        out += (f" Its NVLS terms are carried from the {r.group.carried_from} fit instead (`validation.corpus."
                "carried_nvls`: NCCL's one NVLS kernel code runs both generations; no " + what + " point enters that "
                "fit): " + ", ".join(f"`{k}` {_value(k, r.whole.params[k])}" for k in r.carried) + ". Carrying them "
                "was checked on these datasets at stop 22 (`nvls-hopper-ratio`, `nvls-hopper-kernel` in "
                "validation.corpus_checks, not kept then) and adopted at stop 23 with the plugin's chunk setting, "
                "which is what lets the carried cost per round of chunks fit the sweep's step at 8 GiB: a choice "
                "made after these points were seen, the values themselves never fitted on them.")
    return out


def _staged_busbw(part: Part) -> tuple[float, float, float]:
    """(predicted bus bandwidth from 1 GiB as the header describes the part, the same with GPUDirect RDMA and
    P2P on, the predicted over the measured one), GB/s medians, datasheet parameters."""
    pts = [p for p in part.points if p.size_bytes >= 1 << 30]
    on = Predictor(replace(part.predictor.topo, p2p=None, gdr=None), part.predictor.params)
    staged, direct = (float(np.median([c.predicted_busbw_GBps for c in compare(pts, pr)[0]]))
                      for pr in (part.predictor, on))
    measured = float(np.median([p.size_bytes / p.time_s / 1e9 * busbw_factor(p.op, p.world) for p in pts]))
    return staged, direct, staged / measured


def _log_channels(label: str) -> str:
    """The collective channel count a public dataset's header quotes from its NCCL log ('-' if none)."""
    from validation.data import DATA_DIR
    notes = str(read_jsonl(DATA_DIR / "public" / f"{label}.jsonl").meta.get("notes", ""))
    m = re.search(r"(\d+) coll channels", notes)
    return m.group(1) if m else "-"


def _env_bytes(parts: Sequence[Part], label: str, var: str) -> str:
    """A byte-count NCCL variable as a dataset's points ran it, in MiB ('unset' if none)."""
    v = {dict(p.env).get(var) for part in parts if part.label == label for p in part.points} - {None}
    return f"{int(next(iter(v))) >> 20} MiB" if len(v) == 1 else "unset"


def _extra_ms(parts: Sequence[Part], label: str) -> float | None:
    """A dataset's median extra milliseconds per call at 16-256 MiB under the datasheet."""
    extra = next((_fixed_and_bandwidth(p)[0] for p in parts if p.label == label), None)
    return None if extra is None else extra * 1e3


def _p4de_extra(parts: Sequence[Part]) -> str:
    """The 2024 p4de run's extra milliseconds per call from 16 MiB under the datasheet (measured minus predicted
    time, lowest to highest), on the Simple protocol its network plugin set (as shipped) and on NCCL's own
    protocols (the plugin's setting ignored)."""
    part = next((p for p in parts if p.label == "aws_2x_p4de_16xA100_efa400_allreduce"), None)
    if part is None or part.predictor.topo.plugin_proto is None:
        return "-"

    def extra_ms(topo) -> list[float]:
        comps, _ = compare([q for q in part.points if q.size_bytes >= SCORE_MIN_BYTES],
                           Predictor(topo, part.predictor.params))
        return sorted((c.point.time_s - c.predicted_s) * 1e3 for c in comps)

    simple, own = extra_ms(part.predictor.topo), extra_ms(replace(part.predictor.topo, plugin_proto=None))
    if not simple or not own:
        return "-"
    return (f"{simple[0]:.2f}-{simple[-1]:.2f} ms at every size (on NCCL's own Tree/LL128 {own[0]:.2f} to "
            f"{own[-1]:.2f} ms: below zero where LL128 is predicted slower than the measurement with no per-call "
            "cost at all)")


def _per_group_notes(parts: Sequence[Part], fabric: Sequence[Part], results: Sequence[GroupResult]) -> list[str]:
    """Section 1b's per-group diagnosis: the mechanism each residual group points to, with the figures
    read from the data (medians of measured bus bandwidth, GB/s) and from the fits in ``results``."""
    from simulator.collectives.nccl_constants import per_channel_nvls_tree_GBps
    from topologies.presets import SERVERS, nvlink_usable
    b = lambda *a, **k: _busbw(parts, *a, **k)                        # noqa: E731
    bw = lambda *a, **k: busbw_GBps(parts, *a, **k)                   # noqa: E731
    gib, mib = 1 << 30, 1 << 20
    by_label = {p.label: p for p in parts}

    def nics_GBps(label: str) -> str:
        topo = by_label[label].predictor.topo
        return _gbps(topo.server_nic_Bps / 1e9)

    def version(label: str) -> str:
        v = by_label[label].predictor.topo.nccl_version
        return "?" if v is None else f"{v[0]}.{v[1]}"

    p5, eks = "aws_2x_p5_16xH100_efa3200_allreduce", "aws_2x_p5_16xH100_eks_nccl2.18.5_allreduce_partial"
    p4d_old, p4d_new = ("aws_2x_p4d_16xA100_40GB_efa400_nccl2.8.3_ring_allreduce",
                        "aws_2x_p4d_16xA100_40GB_efa400_nccl2.9.9_allreduce")
    a3high, a3mega = "gcp_a3high_2node_16xH100_tcpx_allgather_dstack", "gcp_a3mega_2node_16xH100_tcpxo_allgather_dstack"
    gpu2080, rtx4090 = "pcie_2x2080Ti_noP2P_autodl_allcollectives", "pcie_rtx4090_2and4gpu_kalavai_allreduce"
    tcpx = next((r for r in results if r.group.name == "tcpx"), None)
    tcpx_parts = [h.part for h in tcpx.held] if tcpx else []
    tcpxo = [p for p in tcpx_parts if re.search(TCPXO_WORD, p.nic.lower())]
    tcpxo_ms = [_extra_ms(parts, p.label) for p in tcpxo]
    l40s = "roce_L40S_2node_and_dgxH200_2node_socket_redhat [l40s_2x2_roce]"
    ib = next((r for r in results if r.group.name == "ib-roce"), None)
    ring_by = exercising([h.part for h in ib.held], "hop_latency_s.net.ring.simple") if ib else []
    one_way = bw(gpu2080, "broadcast", 16 * mib)
    both_ways = [bw(gpu2080, op, 16 * mib) for op in ("all_gather", "all_to_all")]
    gen4 = [bw(rtx4090, "all_reduce", 16 * mib, variant=v) for v in ("docker", "k8s")]
    efa_parts = [p for p in fabric if p.group == "efa"]
    return [
        "- NVLS-Tree across two servers (ib-roce, efa): now capped at NCCL's per-channel kernel rate "
        f"(`perChMaxNVLSTreeBw`, one channel per head GPU: 8 x {per_channel_nvls_tree_GBps(90, 2):.1f} = "
        f"{8 * per_channel_nvls_tree_GBps(90, 2):.0f} GB/s on two Hopper servers), below what NVLS inside each "
        "server and the NICs carry: the two H100 clusters measured "
        f"{b('nebius_2node_16xH100_ib_allreduce_dstack', 'all_reduce', 4 * gib)} (InfiniBand) and "
        f"{b(p5, 'all_reduce', 4 * gib)} GB/s (EFA) from 4 GiB (`simulator/collectives/nvls.py`, both engines, "
        f"limit `kernel-bound`). On B200 the cap (8 x {per_channel_nvls_tree_GBps(100, 2):.0f} GB/s) is above the "
        "NICs' bound; the two B200 clusters with the same 8x 400G NICs measured "
        f"{b('lambda_2node_16xB200_ib_allreduce_dstack', 'all_reduce', 2 * gib, 2 * gib)} (Lambda, InfiniBand) and "
        f"{b('gcp_a4_2node_16xB200_roce_allreduce_dstack_partial', 'all_reduce', 2 * gib, 2 * gib)} GB/s (GCP A4, "
        "RoCE) at 2 GiB: nothing in their headers tells them apart, and one prediction cannot be within 5% of both.",
        "- efa: the per-call cost across servers differs by cluster (extra ms per call at 16-256 MiB, and "
        "predicted/measured time from 1 GiB, datasheet: " + _fabric_evidence(efa_parts)
        + "). What orders them is NCCL's flush of every GPUDirect RDMA receive from the network, which it runs on "
        "GPUs before Hopper and on Hopper before NCCL 2.19.1 (NCCL_NET_FORCE_FLUSH's default then; "
        "`simulator.collectives.nccl_constants.flushes_gdr_receives`, from each header's GPU and NCCL version): "
        "the runs that flush pay " + _flush_ms(parts, efa_parts, True) + " ms, those that do not "
        + _flush_ms(parts, efa_parts, False) + f" ms (the same p5 instances and EFA generation pay "
        f"{_extra_ms(parts, p5):.2f} ms with NCCL {version(p5)} and {_extra_ms(parts, eks):.2f} ms with "
        f"{version(eks)}, which flushes, on EKS). The group fits its per-call cost where NCCL flushes "
        "(`net_flush_overhead_s`; found after these costs were read, the rule itself NCCL's); the runs that do not "
        "flush keep the datasheet's none. "
        "The EKS run's partial rows also fall in bandwidth from 512 MiB to 1 GiB and rise again at 2 GiB, which no "
        f"per-call or per-byte cost gives. p4d with NCCL {version(p4d_old)} carries "
        f"{_ratios([bw(p4d_old, 'all_reduce', gib)], bw(p4d_new, 'all_reduce', gib))} of the bus bandwidth "
        f"{version(p4d_new)} carries from 1 GiB on the same instances with the same NCCL_ALGO=RING: a version "
        "effect, one dataset on each side. Not NCCL 2.8 opening fewer channels: the two logs print "
        f"{_log_channels(p4d_old)} and {_log_channels(p4d_new)} coll channels (their headers). Not NCCL's buffer either: the p5 run that pays least sets NCCL_BUFFSIZE="
        f"{_env_bytes(parts, p5, 'NCCL_BUFFSIZE')}, the EKS run leaves NCCL's 4 MiB, but a buffer too small for "
        "the round trip would cap each channel's rate whatever the size, and the EKS rows rise from "
        f"{b(eks, 'all_reduce', 64 * mib, 64 * mib)} GB/s at 64 MiB to {b(eks, 'all_reduce', 2 * gib, 2 * gib)} at "
        "2 GiB.",
        f"- tcpx: A3 High's GPUDirect-TCPX carries {b(a3high, 'all_gather', gib)} GB/s of all_gather bus bandwidth "
        f"from 1 GiB on {nics_GBps(a3high)} GB/s of NICs per server ({by_label[a3high].nic}), A3 Mega's TCPXO "
        f"{b(a3mega, 'all_gather', gib)} of {nics_GBps(a3mega)}: TCPX runs TCP on the host's CPUs (only the "
        "receive path lands in GPU memory directly), TCPXO in the NIC. The group fits one per-call cost "
        f"(`net_call_overhead_s`) to its {len(tcpx_parts)} datasets together ({len(tcpx_parts) - len(tcpxo)} TCPX, "
        f"{len(tcpxo)} TCPXO); each predicted from a fit to the others: {_pct(tcpx.pooled('held_out') if tcpx else None)}% "
        f"median error with its siblings left out of that fit, {_pct(tcpx.pooled('siblings_in') if tcpx else None)}% "
        f"with them kept, against the datasheet's {_pct(tcpx.pooled('datasheet') if tcpx else None)}%: "
        + ("adopted" if tcpx and tcpx.adopted else "not adopted (both must beat the datasheet), the datasheet stays")
        + ". The TCPXO datasets pay "
        + " and ".join("-" if v is None else f"{v:.2f}" for v in tcpxo_ms) + " ms extra per call at 16-256 MiB.",
        f"- pcie: the RTX 2080 Ti pair without peer-to-peer (one PCIe Gen3 switch) moves {_gbps(one_way)} GB/s one "
        "way through host memory (broadcast, reduce: "
        f"{_ratios([one_way], SERVERS[by_label[gpu2080].predictor.topo.preset].pcie_Bps / 1e9)} of the preset's "
        f"PCIe x16) but {_gbps(min(both_ways))}-{_gbps(max(both_ways))} GB/s each way when both GPUs "
        "send at once (all_gather, all_reduce, all_to_all): the shared switch uplink the preset has halves the "
        f"rate, the measurements cut it by {_ratios([one_way], max(both_ways), 1)}-{_ratios([one_way], min(both_ways), 1)}x, "
        "so one host-memory efficiency cannot fit both directions; the RTX 4090 runs (Gen4) reach "
        f"{_gbps(gen4[0])}-{_gbps(gen4[1])} GB/s of all_reduce, "
        f"{_ratios(gen4, bw(gpu2080, 'all_reduce', 16 * mib))} of the 2080 Ti's Gen3 all_reduce "
        f"({b(gpu2080, 'all_reduce', 16 * mib)} GB/s), and the Kubernetes pair on two sockets beats the Docker pair "
        "on one switch (the header itself calls the plateau unexplained). How fast a GPU's SMs read and write host "
        "memory (root complex, IOMMU, memory) is a host property no header states.",
        f"- L40S RoCE (ib-roce): {b(l40s, 'all_reduce', 16 * mib)} GB/s flat from 16 MiB on a 400 GbE NIC per "
        "server. Its source (the same README: a Dell PowerEdge R760xa, `nvidia-smi topo` NODE between the GPU and "
        "every NIC, the run's two GPUs at 61:00 and e1:00 on different root complexes) is in its topology hint: "
        "NCCL turns GPUDirect RDMA off beyond NCCL_NET_GDR_LEVEL (PXB) and GPU peer-to-peer off beyond PXB on Intel "
        "CPUs, so every byte passes through host memory (`gdr: false`, `p2p: false`; "
        "`simulator.collectives.plans.host_staged_uses` runs its network legs at `shm_efficiency`, the SHM transport's factor): "
        "predicted {0:.1f} GB/s from 1 GiB, {1:.1f} GB/s with GPUDirect RDMA and P2P as the preset has them. The "
        "remaining {2:.2f}x is how fast the SMs move host memory across the root complexes, which no header states "
        "(and no single host-memory factor fits the PCIe boxes above too).".format(*_staged_busbw(by_label[l40s]))
        + (
            " It is the group's only dataset that runs Ring, so the group's Ring latency stays at the datasheet "
            f"(a key is fitted only where datasets of {MIN_CLUSTERS_PER_KEY} clusters exercise it)." if ring_by == [l40s] else "")
        + " socket: the same L40S hosts over "
        f"TCP sockets, {b('roce_L40S_2node_and_dgxH200_2node_socket_redhat [l40s_2x1_socket]', 'all_reduce', 16 * mib)} "
        f"GB/s (datasheet {_gbps(DEFAULTS['socket_max_Bps'] / 1e9)} GB/s per socket hop); one consistent dataset, "
        "nothing to fit it from.",
        "- nvlink: fitted per GPU generation, because the rings' bus bandwidth from 1 GiB is a different fraction "
        "of each generation's NVLink (" + _ring_text(parts) + "; NCCL's graph assumes per link 20.0 of 25 GB/s on "
        "Ampere, 20.6 of 25 on Hopper and 40.1 of 50 on Blackwell: 0.80, 0.82, 0.80): one key fitted to all of them had moved the H100/H200 "
        "predictions by the other generations' difference. The topology carries NCCL's per-link share of each "
        "generation relative to Hopper's, which `link_efficiency.nvlink` stands for (`topologies.presets.nvlink_usable`: "
        f"{nvlink_usable(80):.3f} on NVLink3, {nvlink_usable(100):.3f} on NVLink5), so the datasheet's "
        f"{DEFAULTS['link_efficiency.nvlink']:.2f} of a link becomes {DEFAULTS['link_efficiency.nvlink'] * nvlink_usable(80):.3f} "
        f"of an A100's and {DEFAULTS['link_efficiency.nvlink'] * nvlink_usable(100):.3f} of a B200's (NCCL's own tables give "
        "part of the measured difference, none of it fitted here). Hopper: adopted, with NVLS's cost per chunk step "
        "(above). Blackwell: the B200 ring's "
        f"{ring_link_fraction(parts).get('nvlink-blackwell', float('nan')):.2f} is below what NCCL's own graph "
        "assumes. On p6-b200 the torch sweep runs all_reduce from 512 MiB to 4 GiB at "
        f"{b('stas00_p6b200_1node_torch_allreduce', 'all_reduce', 512 * mib, 4 * gib)} GB/s and from 8 GiB at "
        f"{b('stas00_p6b200_1node_torch_allreduce', 'all_reduce', 8 * gib)} GB/s: AWS's network plugin, loaded with "
        "its tuner (`NCCL_TUNER_PLUGIN=ofi` in the header), sets NCCL_NVLS_CHUNKSIZE to 512 KiB on p5 and later "
        "(`simulator.collectives.ofi_tuner.PLATFORM_ENV`, item 8), so NCCL 2.27 cuts NVLS into 64 KiB chunks below "
        "64 x 24 channels x 8 heads x 512 KiB = 6 GiB and 512 KiB chunks from there, a quarter of the rounds of "
        "chunks NCCL's 128 KiB default gives (the AWS p5 box's dip at 1-2 GiB is the same step, at 4 GiB on 16 x 8). "
        + _one_machine(results, "nvlink-blackwell", "B200") + " Ampere: one dataset (its 16 MiB point runs far "
        "below the LL128 rate the tuner's pick predicts).",
    ]


def calibration_path(group: str, shipped_dir: Path) -> Path:
    return shipped_dir / f"corpus-{group}.json"


def gain_lines(results: Sequence[GroupResult], short: int) -> list[str]:
    """Section 1b's table of what each dataset and group could add at its in-sample best (validation.corpus_gain)."""
    from validation import corpus_gain
    rows = corpus_gain.gains(results)
    groups = corpus_gain.group_gains(rows)
    return ["", "**Where the missing points could come from** (`python -m validation.corpus_gain`; upper bounds, "
            "fitted on the points scored). Per dataset: its held-out median signed error (predicted / measured - 1 "
            "of the time: + predicted slow), its points within 5% now, and how many more each fix of its own "
            "predictions would put within 5%, chosen on its own points: one time factor (rate), a per-call cost and "
            "a factor (cost+rate), its group's keys fitted on it alone (own fit), the best of these (in-sample "
            "best), and one factor per configuration (not counted: a one-point configuration is always fixed).", "",
            *corpus_gain.table(rows), "", *corpus_gain.group_table(groups), "",
            corpus_gain.route_text(groups, short)]


def section(data_dir: Path, shipped_dir: Path, write_calibrations: bool = False) -> tuple[list[str], dict]:
    """Markdown lines of the accuracy report's section 1b and its figures; with ``write_calibrations``
    each adopted group's whole fit goes to ``calibrations/corpus-GROUP.json``."""
    parts = corpus_parts(data_dir)
    results = leave_one_dataset_out(parts)
    ds, ho = uncalibrated_errors(results)
    _, kept = uncalibrated_errors(results, which="siblings_in")
    rest = predictable_errors(results)
    per_ds = [(float(np.median(h.datasheet)), float(np.median(h.held_out if r.adopted else h.datasheet)))
              for r in results for h in r.held if len(h.datasheet)]
    figures = {"corpus_datasheet_big": float(np.median(ds) * 100), "corpus_lodo_big": float(np.median(ho) * 100),
               "corpus_lodo_dataset_median": float(np.median([b for _, b in per_ds]) * 100),
               "corpus_datasheet_dataset_median": float(np.median([a for a, _ in per_ds]) * 100),
               "corpus_adopted": [r.group.name for r in results if r.adopted],
               "corpus_lodo_siblings_in_big": float(np.median(kept) * 100),
               "corpus_lodo_predictable_big": float(np.median(rest) * 100),
               "corpus_lodo_points": len(ho), "corpus_lodo_datasets": len(per_ds)}
    lines = ["", "## 1b. Defaults fitted to the corpus, each dataset left out", "",
             "Could the public corpus give better uncalibrated defaults? Each dataset is predicted from a fit to "
             "the *other* datasets of its group (leave one dataset out; `validation/corpus.py`), less its "
             "siblings: datasets of the same instance type or the same author's same machine "
             "(`validation/corpus_clusters.py`: "
             + "; ".join(f"{name}: {len(members)} datasets" for name, members, _ in SIBLINGS)
             + "), which would carry their machine's quirks into the prediction. A group's "
             "fit replaces the datasheet only where that held-out figure beats the datasheet on the same points, "
             "with the siblings left out and with them kept in the fit (column 'siblings kept'). "
             "Groups are link classes and fabrics read from each file's header; each fits only its class's keys "
             f"(robust fit of `validation.calibrate`, priors at the datasheet values, sizes >= "
             f"{FIT_MIN_BYTES >> 20} MiB, datasets weighing alike; an efficiency pushed to 1 is refused). Errors "
             "at >= 16 MiB, pooled over points.", "",
             "| group | keys fitted | datasets | points | datasheet median err % | held-out fit median err % "
             "| siblings kept % | adopted | fit on all its datasets | refused |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        n = sum(len(h.datasheet) for h in r.held)
        fitted = ", ".join([f"`{k}` {_value(k, r.whole.params[k])}" for k in r.whole.keys]
                           + [f"`{k}` {_value(k, r.whole.params[k])} (from {r.group.carried_from})" for k in r.carried]) or "-"
        lines.append(f"| {r.group.name} ({r.group.what}) | {', '.join('`' + k + '`' for k in r.group.keys)} | "
                     f"{len(r.held)} | {n} | {_pct(r.pooled('datasheet'))} | {_pct(r.pooled('held_out'))} | "
                     f"{_pct(r.pooled('siblings_in'))} | {'yes' if r.adopted else 'no'} | {fitted} | {'; '.join(r.whole.refused) or '-'} |")
    lines += ["", "| dataset | group | points >= 16 MiB | measured / predicted (datasheet, median) | datasheet "
              "median err % | held-out fit median err % |", "|---|---|---|---|---|---|"]
    for r in results:
        for h in r.held:
            if len(h.datasheet):
                lines.append(f"| {h.part.label} | {r.group.name} | {len(h.datasheet)} | {h.ratio:.2f} | "
                             f"{np.median(h.datasheet) * 100:.1f} | {np.median(h.held_out) * 100:.1f} |")
    over = {r.group.name: (sum(int(np.sum(h.datasheet > 0.05)) for h in r.held),
                           sum(len(h.datasheet) for h in r.held)) for r in results}
    ratios = {r.group.name: [h.ratio for h in r.held if h.ratio is not None] for r in results}
    spread = ", ".join(f"{g} {min(v):.2f}-{max(v):.2f}" for g, v in ratios.items() if len(v) > 1)
    adopted = [r for r in results if r.adopted]
    excluded = [p for p in parts if p.inconsistent]
    fabric = [h.part for r in results if r.group.name in ("efa", "tcpx") for h in r.held]
    hopper = next((r for r in results if r.group.name == "nvlink-hopper"), None)
    within = int(np.sum(ho <= 0.05))
    from validation import corpus_reach, corpus_residuals
    reached = corpus_reach.reach(results)
    figures["corpus_within_5pct"] = within
    lines += ["", f"**Result.** Uncalibrated at >= 16 MiB over the corpus ({len(ds)} points): datasheet "
              f"{figures['corpus_datasheet_big']:.1f}% median error; with the adopted corpus fits, each dataset "
              f"predicted by a fit that never saw it, {figures['corpus_lodo_big']:.1f}% (median of the per-dataset "
              f"medians: {figures['corpus_datasheet_dataset_median']:.1f}% -> "
              f"{figures['corpus_lodo_dataset_median']:.1f}%). Adopted: "
              + (", ".join(f"`{r.group.name}`" for r in adopted) or "none")
              + ". Points above 5% error under the datasheet, per group: "
              + ", ".join(f"{g} {a} of {b}" for g, (a, b) in over.items()) + ". Not scored (measurements "
              "beyond the hardware their header describes): "
              + ("; ".join(f"{p.label} ({p.inconsistent})" for p in excluded) or "none") + ". Within 5% "
              f"(held out): {within} of {len(ho)} points; a median of 5% needs {reached.needed}. Groups no "
              "shared parameter predicts from the other clusters (residual table below: the PCIe hosts, the "
              "socket and L40S RoCE runs, TCPX on A3 High, EKS, NCCL 2.8.3 on p4d) hold "
              f"{_unpredictable(results)} points, so the target needs nearly every other point within 5%. "
              f"Without them (named after their residuals were seen: a diagnosis, not the target's figure, "
              f"which stays on all {len(ho)} points): {figures['corpus_lodo_predictable_big']:.1f}% median over "
              f"{len(rest)} points, {int(np.sum(rest <= 0.05))} within 5%. With each dataset's siblings kept in "
              f"the fit that predicts it (plain leave one dataset out): {figures['corpus_lodo_siblings_in_big']:.1f}%, "
              f"{int(np.sum(kept <= 0.05))} within 5%. Alternatives checked and not adopted (one NVLink group over "
              "every GPU generation; EFA's extra cost per network step of a ring and of NVLS-Tree instead of per "
              "call; `link_efficiency.net` fitted by each fabric group; NCCL's per-NIC network speed step, 0.96 of "
              "the NIC's rate, as the datasheet net efficiency; the GCP datasets under the NCCL settings of the profiles "
              "their headers name; host staging as two PCIe legs at once, shm_efficiency 1.0; EFA split by the NCCL "
              "version in its headers; AWS's tuner plugin ignored; AWS's network plugin's NCCL_PROTO=simple ignored; "
              "the preset's NIC count where headers give fewer NICs than GPUs; Hopper's held-out NVLS efficiency "
              "ratio, and with it its NVLS fill and cost per round of chunks, as the datasheet of every NVLS plan (the "
              "Blackwell group carries them, item 8); AWS's NVLS chunk setting ignored; the Blackwell group without "
              "the carried terms; NCCL's newest SM100 NVLS-Tree chunk cap, 64 KiB, on the two-B200-server runs; the "
              "Hopper fit's NVLS fill, and apart its cost per round of chunks, on the NVLS-Tree plans across servers; the "
              "latency AWS's network plugin states ignored): "
              "`python -m validation.corpus_checks` reruns this "
              "figure under each (median, points within 5% per group).", "",
              "**Where the held-out error sits** (the figure's errors per group and size band: median |error| %, "
              "points within 5% of the band's points; `validation.corpus.error_map`):", "",
              "| group | " + " | ".join(_band_name(lo, hi) for lo, hi in BANDS_BYTES) + " |",
              "|---|" + "---|" * len(BANDS_BYTES)]
    lines += [f"| {name} | " + " | ".join("-" if m is None else f"{m * 100:.1f} ({k}/{n})" for k, n, m in cells)
              + " |" for name, cells in error_map(results)]
    lines += ["",
              "**What the clusters' disagreement was, and what the model now carries.** Much of it was NCCL "
              "facts the prediction ignored: (1) on two servers NCCL's tuner reads each graph's intra-server "
              "bandwidth, which its search raises with the network's for a ring but up to twice the network's "
              "for a tree, so a network-bound two-server all_reduce runs a tree at up to twice a ring's bus "
              "bandwidth (`simulator/collectives/nccl_model.py`; p4de measured 1.57x its NICs' bandwidth); "
              "(2) the tuner follows the NCCL version in each dataset's header (NCCL before 2.28 priced NVLS and "
              "NVLS-Tree without nvlsEfficiency: it picked Ring for 32 B200s over EFA at 2-16 GiB and NVLS on 6 "
              "B200s); (3) header facts the converter had not carried: the p4d NCCL 2.9.9 run's NCCL_ALGO=RING "
              "(its commit's job file), the 2x8 H200 socket run's 400 Gb/s port (which its 92 GB/s bus "
              "bandwidth exceeds, so it is listed, not scored); (4) EFA and GPUDirect-TCPX/TCPXO pay a cost per "
              "call that spans servers, not per step (`net_call_overhead_s`; EFA's where NCCL flushes, item 7; fitted per held-out cluster on the "
              "others: extra time per call at 16-256 MiB is flat in size, e.g. the A3 Mega all_reduce's); (5) "
              "NVLS pays a cost per round of chunks besides the chunks' bytes (`nvls_step_overhead_s`, "
              "simulator/collectives/layout.py): NCCL cuts a collective into 32 KiB chunks below 64 MiB and 64 KiB "
              "below 1 GiB (8 H100s), and the measured marginal rate drops with the chunk (median slope of time "
              "over size per chunk, Hopper boxes: "
              + _rates_text(chunk_rates([h.part for h in hopper.held]) if hopper else {}) + "), which a fill of a few chunks "
              "alone (`nvls_fill_rounds`) cannot give: under the datasheet every H100 box's 32 MiB call was "
              "predicted fast and its 64 MiB call slow (a fill in proportion to the chunk). Fitted per held-out Hopper dataset on the others: "
              + _fold_range(hopper, "nvls_step_overhead_s") + " per round of chunks; (6) AWS's network plugin "
              "(aws-ofi-nccl) sets NCCL_PROTO=simple where EFA does not deliver 128-byte-aligned writes in order, "
              "which its own table names for p4d and p4de (src/platform-aws.c; `validation.compare.net_plugin_proto`, "
              "headers dated 2022 on: in December 2021 its maintainers told users to set it themselves): the 2024 "
              "p4de all_reduce runs Tree/Simple from 16 MiB, and its extra time per call from 16 MiB under the "
              f"datasheet is then {_p4de_extra(parts)}; (7) NCCL flushes every GPUDirect RDMA receive from the network "
              "on GPUs before Hopper, and on Hopper before NCCL 2.19.1, whose NCCL_NET_FORCE_FLUSH defaulted to 1 "
              "(paths.cc `ncclTopoNeedFlush`; `simulator.collectives.nccl_constants.flushes_gdr_receives`): EFA's "
              "per-call cost is the flushing runs' (`net_flush_overhead_s`), paid again by a Simple ring for each "
              "ring loop after its first, whose receives flush anew (a loop is NCCL's channels, each search channel "
              "run twice, x ranks x a half-buffer chunk: 256 MiB on the p4d runs; `simulator.collectives.layout."
              "RingLoops`), and the 2024 p5 and 2025 p6-b200 runs, "
              "which do not flush, are predicted without it; (8) AWS's network plugin sets NCCL_NVLS_CHUNKSIZE and "
              "NCCL_NVLSTREE_MAX_CHUNKSIZE to 512 KiB on p5 and later (its platform table; aws-ofi-nccl PRs #332 and "
              "#372, 2024), which NCCL from 2.22 reads as its largest NVLS and NVLS-Tree chunk "
              "(`simulator.collectives.algorithms.NvlsChunks`, from enqueue.cc): read where a header loads the plugin "
              "and is dated from April 2024 (`validation.compare.nvls_chunk_settings`: the AWS p5 box and the three "
              "p6-b200 datasets); (9) a network plugin states its network's latency to NCCL, which NCCL from 2.12 adds "
              "to every network step (tuning.cc: `interLat = hwLat[NET] + latencyInter`, and again for Simple as "
              "the flush's, which the model prices where NCCL flushes): AWS's states 75 us on p4d, p4de and p5 and "
              "35 us on p5en and later (its platform table), so each network step of the EFA runs on NCCL 2.18 on pays "
              "it (`simulator.collectives.nccl_constants.NET_LATENCY_FROM`, `validation.compare.net_latency`; the "
              "2021 p4d runs, NCCL 2.8 and 2.9, predate it): the 2024 p5 run took 75-150 us per call more than the "
              "datasheet predicted at 16-512 MiB, and its NVLS-Tree has two network steps (150 us at 75 us each). "
              "Found by reading the plugin's log line in public NCCL logs after the near misses were listed; the rule "
              "and its values are the plugin's and NCCL's, none fitted.", "",
              "**What remains, per group.** Clusters of one group still disagree: measured/predicted medians "
              f"per dataset span {spread}. Per group, the physical feature each residual points to, and whether the "
              "headers state it:", ""] + _per_group_notes(parts, fabric, results)
    figures["corpus_needed_within_5pct"] = reached.needed
    if reached.others[0]:
        figures["corpus_others_needed_pct"] = 100 * reached.others_needed / reached.others[0]
    bounds = corpus_reach.hindsight(results)
    figures["corpus_hindsight_shared_big"] = bounds.shared.median_pct
    figures["corpus_hindsight_own_big"] = bounds.own.median_pct
    lines += ["", corpus_reach.paragraph(reached), "", corpus_reach.hindsight_text(bounds, reached.needed)]
    lines += gain_lines(results, reached.needed - reached.within)
    lines += ["", "**Residual groups.** Each dataset's points from 16 MiB up as the figure predicts them (the "
              "datasheet, or where the group was adopted the fit that left the dataset out), consecutive sizes "
              "of one configuration and one algorithm/protocol together, medians (`python -m "
              "validation.corpus_residuals` prints every point, `--groups` this table):", ""]
    lines += corpus_residuals.table([g for label, group, comps in corpus_residuals.scored(results)
                                     for g in corpus_residuals.residual_groups(label, group, comps)])
    lines.append("")
    for r in adopted:
        lines.append(f"- `--calibration corpus-{r.group.name}`: {r.group.what}; "
                     + ", ".join(f"`{k}` = {_value(k, r.whole.params[k])}" for k in r.whole.keys + r.carried)
                     + (f" (carried from `corpus-{r.group.carried_from}`)" if r.carried else "")
                     + f" (held out: {_pct(r.pooled('datasheet'))}% -> {_pct(r.pooled('held_out'))}% on the group's "
                     "points).")
        if write_calibrations:
            from simulator.collectives.params import save_calibration
            members = [h.part for h in r.held]
            source = next((x for x in results if x.group.name == r.group.carried_from), None) if r.carried else None
            save_calibration(
                r.whole.params.with_values({}, name=f"corpus-{r.group.name}"),
                calibration_path(r.group.name, shipped_dir),
                note=f"defaults for {r.group.what}, fitted to the public corpus by validation/corpus.py" if source is None
                else f"defaults for {r.group.what}: NVLS terms carried from corpus-{source.group.name} "
                     "(validation.corpus.carried_nvls), fitted on its datasets only and judged on these",
                command=COMMAND, group=r.group.name,
                fitted_on=sorted({h.part.label for h in (source or r).held}),
                **({"carried": list(r.carried), "judged_on": sorted({h.part.label for h in r.held})} if source else {}),
                fit_min_bytes=FIT_MIN_BYTES,
                leave_one_dataset_out={"datasheet_median_pct": r.pooled("datasheet"),
                                       "held_out_median_pct": r.pooled("held_out"),
                                       "siblings_kept_median_pct": r.pooled("siblings_in"),
                                       "siblings_left_out": True,
                                       "points": sum(len(h.datasheet) for h in r.held)},
                trusted_for={"worlds": sorted({p.world for m in members for p in m.points}),
                             "ops": sorted({p.op for m in members for p in m.points})},
                refused=list(r.whole.refused))
    return lines, figures
