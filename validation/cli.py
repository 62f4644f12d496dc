"""``gpunetsim calibrate`` and ``gpunetsim compare`` (registered by gpunetsim.cli).

Measurement files may hold collectives (nccl-tests text or ``-J`` JSON, our JSONL) and/or DDP
iterations (our JSONL, kind ``ddp``; these need the models' single-GPU profiles via ``--profiles``).
Calibration fits the communication parameters to the collectives first, then the DDP model's own
parameters (per-bucket overhead, compute slowdown under overlap, per-iteration cost) to the DDP
iterations with the communication parameters held.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from simulator.core.errors import InputError
from simulator.core.outputs import check_writable
from simulator.core.values import comma_items, repeated


def register(sub) -> None:
    c = sub.add_parser("calibrate", help="fit the model's parameters to measurements",
                       description="Fit the parameter set to measured collectives and DDP iterations and "
                                   "write a calibration file usable with --calibration everywhere.")
    _common_args(c)
    c.add_argument("--out", required=True, help="calibration JSON to write")
    c.add_argument("--name", default=None, help="name stored in the calibration (default: file stem)")
    c.add_argument("--keys", default=None, help="comma-separated parameter keys to fit (default: all the data moves)")
    c.add_argument("--prior-weight", type=float, default=None,
                   help="pull towards the prior (datasheet) values: 1 (default) makes a parameter moved by "
                        "its prior spread cost as much as one point off by its own spread; 0 = none")
    c.set_defaults(func=_calibrate)
    m = sub.add_parser("compare", help="predicted vs measured, with errors and an HTML plot",
                       description="Predict every measured point and print the errors.")
    _common_args(m)
    m.add_argument("--html", default="compare.html", help="plotly HTML report to write ('' for none)")
    m.add_argument("--json", action="store_true", help="one JSON object per point, then the summary")
    m.set_defaults(func=_compare)


def _common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--measurements", nargs="+", required=True, help="measurement files")
    p.add_argument("--topology", default=None, help="preset or file (default: the dataset's own topology hint)")
    p.add_argument("--nodes", type=int, default=1, help="servers (with --topology)")
    p.add_argument("--no-gdr", action="store_true",
                   help="GPUDirect RDMA was off where these ran (with --topology; a dataset's own hint says it as "
                        "meta.topology.gdr): network bytes staged through host memory, not folded into the fit")
    p.add_argument("--gpus", type=int, default=None, help="GPUs per server; only points of this world size are used")
    p.add_argument("--variants", default=None, help="comma-separated variants to keep (default: all)")
    p.add_argument("--calibration", default=None, help="calibration to start from (file or shipped name)")
    p.add_argument("--statistic", default="median", choices=["median", "min"],
                   help="per-point time: the file's (median of repetitions) or the fastest repetition")
    p.add_argument("--profiles", nargs="*", default=[],
                   help="workload files (validation.profiler output) for the models of DDP measurements")
    p.add_argument("--compute", default="profile", choices=["profile", "nosync"],
                   help="DDP compute times from the profiles, or scaled to each run's no_sync() baseline")
    p.add_argument("--nccl-version", default=None, metavar="X.Y[.Z]",
                   help="the NCCL release the measurements ran with, where their files do not say (an nccl-tests "
                        "log's 'nccl-tests version ... nccl-library=' or 'NCCL version' line, -J JSON's "
                        "nccl_version, our JSONL's meta.nccl_version: a file that names another release is "
                        "refused); the model applies that release's rules to them, and calibrate records it in "
                        "the calibration file, which plans for it wherever it is applied (default: the newest "
                        "the model knows)")


class _Loaded:
    def __init__(self, coll, ddp, topo, params, workloads, version_from):
        self.coll, self.ddp, self.topo, self.params, self.workloads = coll, ddp, topo, params, workloads
        self.version_from = version_from      # where the NCCL release came from ("" where none was named)


def _release_in(meta, source: str):
    """(release, where) a measurement file names for the NCCL it ran with (its ``nccl_version``: an nccl-tests
    log's version line, -J JSON's code, our JSONL's meta, else its topology hint's), checked as ``--nccl-version``
    is; None where it names none (or only words, e.g. "unknown")."""
    from simulator.core.vocabulary import nccl_version, read_nccl_version
    hint = meta.get("topology") or {}
    text, where = meta.get("nccl_version"), meta.get("nccl_version_where") or "meta.nccl_version"
    if text is None and hasattr(hint, "get") and hint.get("nccl_version") is not None:
        text, where = hint["nccl_version"], "meta.topology.nccl_version"
    named = read_nccl_version(text)
    if named is None:
        return None
    try:
        return nccl_version(named, where), where
    except InputError as e:             # the value as the file wrote it
        raise InputError(e.message, source=source, field=where, value=text) from None


def _same_release(a, b) -> bool:
    """Whether two NCCL versions name one release: major.minor alike, and the patch where both state it."""
    return a[:2] == b[:2] and (not a.patch or not b.patch or a.patch == b.patch)


def _topo(args: argparse.Namespace):
    """The measured machine as ``--topology``, ``--nodes`` and ``--no-gdr`` describe it."""
    from validation.compare import Topo
    return Topo(args.topology, args.nodes, gdr=False if args.no_gdr else None)


def _load(args: argparse.Namespace) -> _Loaded:
    from dataclasses import replace

    from simulator.collectives.params import load_calibration
    from simulator.core.vocabulary import nccl_version
    from validation.compare import dataset_points, topo_from_hint
    from validation.ddp_compare import aggregate, has_ddp_records, load_workloads, read_ddp
    from validation.parsers import load_measurements
    params = load_calibration(args.calibration)
    asked = None if args.nccl_version is None else nccl_version(args.nccl_version, "--nccl-version")
    measured = None             # (release, file, where) of the first file that names the NCCL it ran with
    coll, ddp, topo = [], [], None
    world = None
    variants: set[str] = set()       # of every collective point read, before --variants filters them
    for flag, count in (("--nodes", args.nodes), ("--gpus", args.gpus)):
        if count is not None and count < 1:      # --gpus 0 read as "no filter", --nodes -3 was ignored
            raise InputError("must be at least 1", field=flag, value=count)
    if args.no_gdr and not args.topology:
        raise InputError("--no-gdr describes the --topology given; a dataset's own topology hint says it as "
                         "meta.topology.gdr", field="--no-gdr", value=True)
    if args.nodes != 1 and not args.topology:
        raise InputError("--nodes describes the --topology given; a dataset's own topology hint gives its servers",
                         field="--nodes", value=args.nodes)
    same = repeated(args.measurements, _same_file)
    if same is not None:    # every point of it counted twice in the fit and the errors
        raise InputError("the same file is given twice: give each file once", field="--measurements",
                         value=args.measurements[same])
    if args.topology:       # nccl-tests text without rank lines: the topology says how many ranks
        import topologies
        world = len(topologies.router_for(topologies.prepare(args.topology, nodes=args.nodes,
                                                             gpus_per_node=args.gpus)).gpus)
    for f in args.measurements:
        ds = load_measurements(f, default_world=world) if Path(f).exists() or not has_ddp_records(f) else None
        if ds is None or (not ds.points and has_ddp_records(f)):
            t = _topo(args) if args.topology else topo
            ddp += read_ddp(f)
        else:
            t = _topo(args) if args.topology else topo_from_hint(ds.meta.get("topology"), f)
            _warn_other_machine(args.topology, ds.meta.get("topology"), f)
            named = _release_in(ds.meta, f)
            if named is not None:
                v, where = named
                if asked is not None and not _same_release(asked, v):
                    raise InputError(f"the file says it ran with NCCL {v} ({where}), --nccl-version says {asked}: "
                                     "leave --nccl-version out (the file's own line holds) or give its release",
                                     source=f, field="--nccl-version", value=args.nccl_version)
                if measured is not None and not _same_release(measured[0], v):
                    raise InputError(f"ran with NCCL {v}, but {measured[1]} with NCCL {measured[0]} ({measured[2]}): "
                                     "each release has its own rules, so calibrate or compare them apart",
                                     source=f, field=where, value=str(v))
                measured = measured or (v, f, where)
            t = replace(t, nccl_version=None)
            pts = dataset_points(ds, statistic=args.statistic)
            variants.update(p.variant for p in pts)
            if args.variants:
                keep = set(comma_items(args.variants, "--variants"))
                pts = [p for p in pts if p.variant in keep]
            coll += pts
        if t is None:
            raise InputError("DDP measurements name no topology: pass --topology", source=f, field="--topology")
        t = replace(t, nccl_version=None)       # the release is checked above, apart
        if topo is not None and t != topo:
            raise InputError("measurement files describe different topologies: pass --topology", source=f,
                             field="meta.topology")
        topo = t
    _warn_duplicates(coll)
    found = sorted({p.world for p in coll} | {p.world for p in ddp})
    if args.gpus:
        kept_coll = [p for p in coll if p.world == args.gpus * topo.nodes]
        kept_ddp = [p for p in ddp if p.world == args.gpus * topo.nodes]
        left = len(coll) + len(ddp) - len(kept_coll) - len(kept_ddp)
        if left and (kept_coll or kept_ddp):
            import logging
            others = sorted({p.world for p in coll + ddp} - {args.gpus * topo.nodes})
            logging.getLogger("validation.cli").warning(
                "--gpus %d x --nodes %d keeps the points measured on %d ranks: %d points on world sizes %s are "
                "left out (leave out --gpus to use them all)", args.gpus, topo.nodes, args.gpus * topo.nodes, left,
                ", ".join(map(str, others)))
        coll, ddp = kept_coll, kept_ddp
    if args.variants and variants and not coll and not ddp:
        raise InputError(f"no measured point has these variants (the files have: {', '.join(sorted(variants))})",
                         field="--variants", value=args.variants)
    if not coll and not ddp:
        sizes = f" (measured world sizes: {', '.join(map(str, found))}; --gpus x --nodes asks for " \
                f"{args.gpus * topo.nodes})" if args.gpus and found else ""
        raise InputError("no measured points left after filtering" + sizes, field="--measurements",
                         value=args.measurements)
    if ddp and not args.profiles:
        raise InputError("DDP measurements need the models' profiles", field="--profiles",
                         value=sorted({p.model for p in ddp}))
    workloads = load_workloads(args.profiles) if args.profiles else {}     # a missing or bad file fails here
    if args.profiles and not ddp:
        import logging
        logging.getLogger("validation.cli").warning(
            "--profiles: no DDP measurements among --measurements, so the profiles are not used")
    version = measured[0] if measured is not None else asked
    version_from = f"{measured[2]} of {measured[1]}" if measured is not None else "--nccl-version" if asked else ""
    return _Loaded(coll, aggregate(ddp), replace(topo, nccl_version=version), params, workloads, version_from)


def _release_words(d: _Loaded) -> str:
    """``NCCL 2.21.5 (line 3 of run.txt)``: the release the model plans the measurements for and where it was
    named (a file, ``--nccl-version``, the ``--calibration`` started from); the newest the model knows where none
    was."""
    from simulator.core.vocabulary import NCCL_CURRENT, nccl_release_words
    if d.topo.nccl_version is not None:
        return f"NCCL {nccl_release_words(d.topo.nccl_version)} ({d.version_from})"
    if d.params.nccl_version is not None:
        return f"NCCL {nccl_release_words(d.params.nccl_version)} (the --calibration's)"
    return f"NCCL {NCCL_CURRENT} (no file names its release: --nccl-version gives it)"


def _warn_other_machine(asked: str | None, hint: object, source: str) -> None:
    """A warning where ``--topology`` names another preset than the file's own hint (``meta.topology.preset``):
    H200 runs fitted or compared as a dgx-a100 gave 62-119% errors, and a calibration recording dgx-a100, without a
    word. Not an error: a topology file or a what-if may describe the machine on purpose."""
    from collections.abc import Mapping

    from topologies.presets import SERVERS
    preset = hint.get("preset") if isinstance(hint, Mapping) else None
    if asked in SERVERS and preset in SERVERS and asked != preset:
        import logging
        gpus = SERVERS[preset].gpu_model, SERVERS[asked].gpu_model
        logging.getLogger("validation.cli").warning(
            f"--topology {asked}: {source} was measured on {preset} (meta.topology.preset"
            + (f"; {gpus[0]}, not {gpus[1]}" if gpus[0] != gpus[1] else "") + f"): its points are timed on {asked}")


def _warn_duplicates(points) -> None:
    """One warning for points measured more than once with times over 2x apart."""
    import logging
    from validation.parsers import conflicting_duplicates
    pairs = conflicting_duplicates(points)
    if pairs:
        fast, slow = max(pairs, key=lambda fs: fs[1].time_s / fs[0].time_s)
        logging.getLogger("validation.cli").warning(
            "%d points were measured more than once with times over 2x apart (worst: %s, %d ranks, "
            "%d B: %.3g us in %s vs %.3g us in %s); all are used", len(pairs), fast.op, fast.world,
            fast.size_bytes, fast.time_s * 1e6, fast.source, slow.time_s * 1e6, slow.source)


def _fmt(s: dict) -> str:
    if not s.get("points"):
        return "no points"
    text = (f"{s['points']} points: median |err| {s['median_time_pct']:.1f}%, p90 {s['p90_time_pct']:.1f}%, "
            f"worst {s['worst_time_pct']:.1f}%")
    if "median_spread_pct" in s:
        text += (f" (measured p10-p90 spread {s['median_spread_pct']:.1f}%; "
                 f"{s['within_p10_p90_pct']:.0f}% of predictions inside it)")
    if "interval_coverage_pct" in s:
        text += (f"; {s['interval_coverage_pct']:.0f}% of measurements inside the 90% interval (median width "
                 f"{s['interval_width_pct']:.0f}%)")
    return text


def _print_collectives(comps, predicted_label: str, bounds=None) -> None:
    """One line per collective point: measured and predicted time, the prediction's 90% interval when
    ``bounds`` ((low, high) seconds per comparison) is given, error, algorithm/protocol."""
    band = f"{'90% lo':>10}{'90% hi':>10}" if bounds is not None else ""
    print(f"{'op':<15}{'world':>6}{'variant':>9}{'bytes':>13}{'measured us':>13}{predicted_label:>14}{band}"
          f"{'err %':>8}  algo/proto")
    for i, c in enumerate(comps):
        p = c.point
        iv = f"{bounds[i][0] * 1e6:>10.2f}{bounds[i][1] * 1e6:>10.2f}" if bounds is not None else ""
        print(f"{p.op:<15}{p.world:>6}{p.variant:>9}{p.size_bytes:>13}{p.time_s * 1e6:>13.2f}"
              f"{c.predicted_s * 1e6:>14.2f}{iv}{c.error * 100:>8.1f}  {c.algo}/{c.proto}")


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (``x.txt`` and ``./x.txt``, or a link to it)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return a == b


def _fit_options(args: argparse.Namespace) -> tuple[list[str] | None, float]:
    """``--keys`` (every name a parameter the fitter may move) and ``--prior-weight`` (finite, >= 0)."""
    import math
    from validation.calibrate import CANDIDATES, PRIOR_WEIGHT
    keys = None
    if args.keys is not None:
        keys = comma_items(args.keys, "--keys")
        for k in keys:
            if k not in CANDIDATES:
                close = [c for c in CANDIDATES if c.split(".")[0] == k.split(".")[0]][:4]
                hint = f" (e.g. {', '.join(close)})" if close else " (e.g. call_overhead_s, link_efficiency.nvlink)"
                raise InputError(f"not a parameter calibrate can fit{hint}", field="--keys", value=k)
    w = PRIOR_WEIGHT if args.prior_weight is None else args.prior_weight
    if not (math.isfinite(w) and 0 <= w <= 1e6):
        raise InputError("must be a finite number >= 0 (0 = plain least squares)", field="--prior-weight",
                         value=w)
    return keys, w


def _calibrate(args: argparse.Namespace) -> int:
    from simulator.collectives.params import save_calibration
    from validation.calibrate import calibrate
    from validation.compare import Predictor
    from validation.ddp_compare import DdpPredictor, calibrate_ddp
    keys, w = _fit_options(args)
    check_writable(args.out, "--out")
    d = _load(args)
    params = d.params
    name = args.name or Path(args.out).stem
    meta: dict = {"fitted_on": [str(m) for m in args.measurements], "topology": d.topo.__dict__,
                  "statistic": args.statistic}
    if d.coll:
        predictor = Predictor(d.topo, params)
        fit = calibrate(d.coll, predictor, keys, name=name, prior_weight=w)
        print(f"# calibrate: {len(d.coll)} collective points ({fit.skipped} not representable), "
              f"{len(fit.keys)} parameters determined by the data, prior weight {w}, {_release_words(d)}")
        print(f"before: {_fmt(fit.before)}")
        print(f"after:  {_fmt(fit.after)}")
        print(f"{'parameter':<38} {'prior':>11} {'fitted':>11}  what the data say")
        for v in fit.verdicts:
            shown = fit.params[v.key] if v.determined else params[v.key]
            print(f"{v.key:<38} {params[v.key]:>11.4g} {shown:>11.4g}  "
                  f"{v.reason if v.determined else 'kept at prior: ' + v.reason}")
        for r in fit.refused:
            print(f"refused: {r}")
        print(f"trusted for: {fit.trusted_for()}; elsewhere predictions extrapolate and their 90% "
              "intervals widen by the parameters the data left at their prior")
        _print_collectives(fit.comparisons, "fitted us")
        params = fit.params
        meta.update(points=len(d.coll), before=fit.before, after=fit.after, trusted_for=fit.domain,
                    parameters={v.key: {"determined": v.determined, "reason": v.reason} for v in fit.verdicts},
                    refused=list(fit.refused))
    if d.ddp:
        pred = DdpPredictor(d.topo, params, d.workloads, args.compute)
        params, before, after = calibrate_ddp(d.ddp, pred, name=name)
        print(f"# calibrate DDP: {len(d.ddp)} configurations (compute from {args.compute})")
        print(f"before: {_fmt(before)}")
        print(f"after:  {_fmt(after)}")
        for k in ("ddp.bucket_overhead_s", "ddp.compute_slowdown", "ddp.iteration_overhead_s"):
            print(f"{k:<40} {pred.params[k]:>12.4g} {params[k]:>12.4g}")
        meta.update(ddp_configurations=len(d.ddp), ddp_before=before, ddp_after=after, ddp_compute=args.compute)
    if d.topo.nccl_version is not None:     # the release the measurements ran with: planned for where it is applied
        params = params.with_nccl_version(d.topo.nccl_version)
        meta["topology"] = {**meta["topology"], "nccl_version": str(d.topo.nccl_version)}
    save_calibration(params, args.out, **meta)
    print(f"wrote {args.out}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from validation.compare import Predictor, compare, interval_summary, summary
    from validation.ddp_compare import DdpPredictor, compare_ddp, ddp_summary
    if args.html:
        check_writable(args.html, "--html")
    d = _load(args)
    comps, skipped = compare(d.coll, Predictor(d.topo, d.params)) if d.coll else ([], [])
    ddp = compare_ddp(d.ddp, DdpPredictor(d.topo, d.params, d.workloads, args.compute)) if d.ddp else []
    predictor = Predictor(d.topo, d.params)
    bounds = [predictor.interval(c) for c in comps]
    coll_summary = {**summary(comps), **interval_summary(comps, bounds)}
    if args.json:
        for c, (lo, hi) in zip(comps, bounds):
            p = c.point
            print(json.dumps({"kind": "coll", "op": p.op, "world": p.world, "variant": p.variant,
                              "bytes": p.size_bytes, "measured_s": p.time_s, "predicted_s": c.predicted_s,
                              "predicted_lo_s": lo, "predicted_hi_s": hi, "error": c.error, "algo": c.algo,
                              "proto": c.proto}))
        for c in ddp:
            p = c.point
            print(json.dumps({"kind": "ddp", "model": p.model, "world": p.world, "bucket_cap_mb": p.bucket_cap_mb,
                              "measured_s": p.median_s, "p10_s": p.p10_s, "p90_s": p.p90_s,
                              "predicted_s": c.predicted_s, "predicted_lo_s": c.lo_s, "predicted_hi_s": c.hi_s,
                              "error": c.error}))
        print(json.dumps({"summary": coll_summary, "ddp_summary": ddp_summary(ddp), "skipped": len(skipped),
                          "nccl_version": str(d.params.planned_nccl_version(d.topo.nccl_version))}))
    else:
        print(f"# compare: params={d.params.name}, topology={d.topo.preset} x{d.topo.nodes}, {_release_words(d)}")
        if comps:
            _print_collectives(comps, "predicted us", bounds)
            print(f"collectives: {_fmt(coll_summary)}; {len(skipped)} points not representable (skipped)")
        if ddp:
            print(f"{'model':<12}{'world':>6}{'cap MB':>8}{'measured ms':>13}{'p10-p90 ms':>16}{'predicted ms':>14}"
                  f"{'90% lo':>10}{'90% hi':>10}{'err %':>8}")
            for c in ddp:
                p = c.point
                band = "".join(f"{'-':>10}" if x is None else f"{x * 1e3:>10.2f}" for x in (c.lo_s, c.hi_s))
                print(f"{p.model:<12}{p.world:>6}{p.bucket_cap_mb:>8g}{p.median_s * 1e3:>13.2f}"
                      f"{p.p10_s * 1e3:>8.2f}-{p.p90_s * 1e3:<7.2f}{c.predicted_s * 1e3:>14.2f}{band}"
                      f"{c.error * 100:>8.1f}")
            print(f"DDP iterations: {_fmt(ddp_summary(ddp))}")
    if args.html and comps:
        from validation.plots import compare_html
        compare_html(comps, args.html, title=f"gpunetsim compare ({d.params.name})")
        if not args.json:
            print(f"wrote {args.html}")
    return 0
