"""Where an FSDP iteration's time goes, lease by lease: measured against simulated, part by part.

::

    python -m validation.fsdp_time_parts [--lease FOLDER ...]

For every committed lease with FSDP runs and each world size it ran (``validation.fsdp_host_carry.LEASES``) and
the sealed leases' FSDP rows (``validation.sealed_campaign.SEALED``: ``llm4`` FSDP, ``fsdp2``, ``fsdp4``), each FSDP
configuration predicted by the method that scores it in docs/accuracy.md section 7 (compute fitted as that
section fits it, host work carried as ``llm_real.HostWork`` carries it; nothing here is fitted on the runs shown):

* iteration: measured (median of the launches) and predicted, with the error;
* GPU alone: measured where the lease ran ``fsdp --issue`` (``gpu_s``: the queued work back to back once a sleep
  kernel ends; FULL_SHARD's host waits in FSDP1's all-gather rate limiter behind that sleep, so its value is host-
  limited and marked ``*``), and simulated (the same simulation with ``host_block_s`` and the host keys 0);
* host issue: measured (``issue_forward_s + issue_backward_s``, ``--issue``; an upper bound, the sleep inflates it)
  and simulated (the FSDP units' host seconds, both passes);
* the simulation's parts with no host work: kernels alone (the units' kernel seconds), kernels as run (the compute
  stream's records: slowed beside collectives, ``hbm_contention``), collectives as run (the NCCL and replica streams'
  records) and the tail (the iteration's end after the last kernel: collectives no kernel hides).

Then, per lease and world size, the GPU-only shortfall where it is measured: measured GPU alone less simulated, ms,
for NO_SHARD over all ranks (collectives beside kernels) and on one-rank groups (no collective), so a gap that
only the former shows is the collectives' (session of 2026-11-27 stop 18, issue 14). Last, the twins: one lease's
runs of one sharding measured more than once (FULL_SHARD, and HYBRID_SHARD with one replica, which shards the same
way, in the ``llm`` and ``fsdp`` phases), which the model predicts alike: how far apart they measure bounds how
close any prediction of a single configuration can come; and the same configuration across leases of one GPU
(``--across``), which a model that carries nothing measured on the lease predicts alike. A script to find the
mechanism by, not a figure of the accuracy report.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator, Sequence

from validation.bw_lease_spread import spread
from validation.llm_real import HOST_KEYS, RealPredictor
from validation.llm_records import LlmRun, read_llm_records, group_runs

DATA = Path(__file__).resolve().parent / "data"
WHAT = {"no_shard": "NO_SHARD", "hybrid_shard": "HYBRID", "full_shard": "FULL_SHARD", "shard_grad_op": "GRAD_OP"}
"""Short names of the runners' strategies; HYBRID_SHARD with ``replicate = world`` reads 'NO_SHARD 1-rank'."""


@dataclass(frozen=True)
class Parts:
    """One FSDP configuration, seconds (None: not measured on that lease)."""

    what: str
    measured_s: float
    predicted_s: float
    gpu_measured_s: float | None
    gpu_host_limited: bool          # the measured GPU-alone time waited for the host (FULL_SHARD's rate limiter)
    gpu_simulated_s: float
    host_measured_s: float | None
    host_simulated_s: float
    kernels_alone_s: float
    kernels_run_s: float
    collectives_run_s: float
    tail_s: float

    @property
    def error_pct(self) -> float:
        return (self.predicted_s / self.measured_s - 1) * 100

    @property
    def gpu_gap_s(self) -> float | None:
        """Measured GPU alone less simulated (None where not measured or host-limited)."""
        if self.gpu_measured_s is None or self.gpu_host_limited:
            return None
        return self.gpu_measured_s - self.gpu_simulated_s


def what(run: LlmRun) -> str:
    """The configuration's short name: strategy, one-rank groups, hidden size."""
    assert run.strategy is not None and run.replicate is not None
    name = WHAT.get(run.strategy, run.strategy)
    if run.strategy == "hybrid_shard":
        name = "NO_SHARD 1-rank" if run.replicate == run.world else f"HYBRID r={run.replicate}"
    return f"{name} h{run.spec.hidden}"


def simulated(pred: RealPredictor, run: LlmRun) -> tuple[float, float, float, float, float, float]:
    """(GPU alone, host issue, kernels alone, kernels as run, collectives as run, tail) of ``run`` simulated by
    ``pred`` (host issue with ``pred``'s host work; the rest with none)."""
    from simulator.training.llm.iteration import simulate_train, train_work

    config, gpus = pred.config(run)
    units = [u for st in train_work(pred.router(gpus), pred.model(run.spec), config, pred.gpu, pred.params,
                                     pred.compute).stages for ch in st.chunks for u in ch.units]
    host_s = sum(u.host_forward_s + u.host_backward_s for u in units)
    gpu_only = replace(pred.compute, host_block_s=0.0, **{k: 0.0 for k in HOST_KEYS})  # type: ignore[type-var]
    units = [u for st in train_work(pred.router(gpus), pred.model(run.spec), config, pred.gpu, pred.params,
                                     gpu_only).stages for ch in st.chunks for u in ch.units]
    r = simulate_train(pred.router(gpus), pred.model(run.spec), config, pred.gpu, pred.params, gpu_only,
                       record=True)
    recs = [x for stage in r.records.values() for x in stage]
    kernels = [x for x in recs if x.track == "compute" and x.name != "optimizer"]
    comm = [x for x in recs if x.track.startswith("dp")]
    last = max((x.end_s for x in kernels), default=0.0)
    return (float(r.iteration_s), host_s, sum(u.forward_s + u.backward_s for u in units),
            sum(x.end_s - x.start_s for x in kernels), sum(x.end_s - x.start_s for x in comm),
            max(0.0, float(r.iteration_s) - last))


def parts(full: RealPredictor, path: Path) -> list[Parts]:
    """Every FSDP configuration of the file at ``path``, predicted by ``full`` (the host work carried; the
    GPU-only parts simulated without it: :func:`simulated`; a paired file's ``validation.fsdp_pair.PairedPredictor``
    simulates each configuration with its own fit)."""
    from validation.fsdp_issue import FULL_SHARD, NO_SHARD, NOCOMM, read_points
    from validation.fsdp_pair import for_run

    records = read_llm_records([path])
    issue = {}
    if path.name.startswith("fsdpissue"):
        names = {NO_SHARD: "no_shard", NOCOMM: "hybrid_shard", FULL_SHARD: "full_shard"}
        issue = {(names[p.what], p.spec.hidden): p for p in read_points([path]) if p.what in names}
    out = []
    for g in group_runs(records.runs):
        run = g.first
        if run.runner != "fsdp":
            continue
        gpu, host, alone, run_s, comm, tail = simulated(for_run(full, run), run)
        p = issue.get((run.strategy, run.spec.hidden))
        out.append(Parts(what(run), g.median_s, full.iteration_s(run), p.gpu_s if p else None,
                         bool(p and p.what == FULL_SHARD), gpu, p.issue_s if p else None, host, alone, run_s, comm,
                         tail))
    return out


def leases(only: Sequence[str] = ()) -> Iterator[tuple[str, Path, RealPredictor, RealPredictor]]:
    """(label, file, predictor without host work, with it) of every FSDP row section 7 scores, the sealed ones too
    (``only``: the folders to keep)."""
    from validation import fsdp_host_carry as fhc, fsdp_pair, llm_blind as lb, llm_real as lr, sealed_campaign as sc

    keep = (lambda folder: not only or folder in only)
    for s in fhc.score([l for l in fhc.LEASES if keep(l.folder)]):
        yield s.lease.label, DATA / s.lease.folder / s.lease.name, s.pred, s.host.applied(s.pred)
    for c in sc.SEALED:
        if not keep(c.llm.name) or not c.llm.exists():
            continue
        for label, name, runner in c.runs:
            if runner != "fsdp":
                continue
            path = c.llm / name
            records = read_llm_records([path])
            world = sc.world_of(name)
            pred = lr.fitted_predictor(records, c.calibration)[0] if label.startswith("llm") else \
                lb.lease_predictor(path, records, world)
            host = lb.host_for(world)[0]
            yield f"{c.llm.name} {label} (sealed)", path, pred, fsdp_pair.carry(pred, host)


@dataclass(frozen=True)
class Twins:
    """One lease's runs of one spec sharded over the whole world with one replica, measured more than once."""

    folder: str
    world: int
    hidden: int
    runs: tuple[tuple[str, str, float], ...]    # (file, strategy, median of its launches in s)

    @property
    def spread_pct(self) -> float:
        """Largest over smallest minus 1, in %."""
        return spread([t for _, _, t in self.runs]) * 100


def twins(folders: Sequence[str] = ()) -> list[Twins]:
    """:class:`Twins` of every lease folder under :data:`DATA` (``folders``: those only) with FSDP runs in its ``llm``
    or ``fsdp`` files."""
    out = []
    for folder in sorted(folders or (p.name for p in DATA.iterdir() if p.is_dir())):
        same: dict[tuple[int, int], list[tuple[str, str, float]]] = {}
        for path in sorted([*(DATA / folder).glob("llm_world*.jsonl"), *(DATA / folder).glob("fsdp_world*.jsonl")]):
            for g in group_runs(read_llm_records([path]).runs):
                r = g.first
                if r.runner == "fsdp" and (r.strategy == "full_shard" or (r.strategy == "hybrid_shard"
                                                                          and r.replicate == 1)):
                    same.setdefault((r.world, r.spec.hidden), []).append((path.name, str(r.strategy), g.median_s))
        out += [Twins(folder, w, h, tuple(v)) for (w, h), v in sorted(same.items()) if len(v) > 1]
    return out


FSDP_FILES = ("llm_world*.jsonl", "fsdp_world*.jsonl", "fsdpissue_world*.jsonl")
"""The files of a lease folder that hold FSDP runs."""


def across_leases() -> dict[tuple[str, int, str, str], list[tuple[str, float]]]:
    """(GPU, world, configuration, spec) -> (lease folder, median of its launches in s) of every lease folder under
    :data:`DATA` that ran it (one value per folder: the first file's, in :data:`FSDP_FILES` order)."""
    out: dict[tuple[str, int, str, str], list[tuple[str, float]]] = {}
    for folder in sorted(p for p in DATA.iterdir() if p.is_dir()):
        seen = set()
        for path in [f for pattern in FSDP_FILES for f in sorted(folder.glob(pattern))]:
            for g in group_runs(read_llm_records([path]).runs):
                r = g.first
                key = (r.gpu, r.world, what(r) if r.runner == "fsdp" else "", r.spec.text)
                if r.runner == "fsdp" and key not in seen:
                    seen.add(key)
                    out.setdefault(key, []).append((folder.name, g.median_s))
    return out


def _ms(x: float | None, mark: bool = False) -> str:
    return "-" if x is None else f"{x * 1e3:.2f}" + ("*" if mark else "")


def report(only: Sequence[str] = ()) -> list[str]:
    """Markdown: one table per lease row, then the GPU-only shortfall per lease."""
    lines: list[str] = []
    gaps = ["| lease | NO_SHARD GPU alone, measured less simulated ms | NO_SHARD 1-rank, same ms |", "|---|---|---|"]
    for label, path, _, full in leases(only):
        rows = parts(full, path)
        lines += [f"### {label} (`{path.parent.name}/{path.name}`)", "",
                  "| configuration | iteration: measured / predicted ms | err % | GPU alone: measured / simulated ms | "
                  "host issue: measured / simulated ms | kernels alone / as run ms | collectives as run ms | "
                  "tail ms |", "|---|---|---|---|---|---|---|---|"]
        for p in rows:
            lines.append(f"| {p.what} | {_ms(p.measured_s)} / {_ms(p.predicted_s)} | {p.error_pct:+.1f} | "
                         f"{_ms(p.gpu_measured_s, p.gpu_host_limited)} / {_ms(p.gpu_simulated_s)} | "
                         f"{_ms(p.host_measured_s)} / {_ms(p.host_simulated_s)} | {_ms(p.kernels_alone_s)} / "
                         f"{_ms(p.kernels_run_s)} | {_ms(p.collectives_run_s)} | {_ms(p.tail_s)} |")
        errs = [abs(p.error_pct) for p in rows]
        lines += ["", f"FSDP median |err| {statistics.median(errs):.1f}% over {len(rows)} configurations.", ""]
        by = {p.what.split(" h")[0]: [] for p in rows}
        for p in rows:
            if p.gpu_gap_s is not None:
                by[p.what.split(" h")[0]].append(p.gpu_gap_s * 1e3)
        if any(by.values()):
            gaps.append(f"| {label} | " + " | ".join(", ".join(f"{g:+.2f}" for g in by.get(k, [])) or "-"
                                                     for k in ("NO_SHARD", "NO_SHARD 1-rank")) + " |")
    if len(gaps) > 2:
        lines += ["### The GPU-only shortfall (`fsdp --issue` leases; one value per hidden size)", "", *gaps, ""]
    pairs = twins(only)
    if pairs:
        lines += ["### Twins: one sharding measured more than once on one lease (predicted alike)", "",
                  "| lease | GPUs | spec | runs (file strategy: median ms) | spread % |", "|---|---|---|---|---|",
                  *[f"| {t.folder} | {t.world} | h{t.hidden} | "
                    + ", ".join(f"{f} {s}: {m * 1e3:.2f}" for f, s, m in t.runs) + f" | {t.spread_pct:.1f} |"
                    for t in pairs], ""]
    return lines


def across_report(least: int = 3) -> list[str]:
    """Markdown: every configuration run on at least ``least`` leases of one GPU, with its spread over them."""
    rows = ["### One configuration across leases of one GPU", "",
            "| GPU | GPUs | configuration | leases: median ms | spread % |", "|---|---|---|---|---|"]
    for (gpu, world, name, _), v in sorted(across_leases().items()):
        if len(v) >= least:
            rows.append(f"| {gpu} | {world} | {name} | " + ", ".join(f"{f}: {m * 1e3:.2f}" for f, m in v)
                        + f" | {spread([m for _, m in v]) * 100:.1f} |")
    return rows + [""]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m validation.fsdp_time_parts", description=__doc__.splitlines()[0])
    ap.add_argument("--lease", action="append", default=[], metavar="FOLDER",
                    help="a lease folder under validation/data to show (repeatable; default: all)")
    ap.add_argument("--across", action="store_true",
                    help="instead: every configuration run on 3 or more leases of one GPU, and its spread")
    args = ap.parse_args(argv)
    if args.across:
        print("\n".join(across_report()))
        return 0
    lines = report(args.lease)
    if not lines:
        ap.error(f"no FSDP rows for --lease {' '.join(args.lease)}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
