"""``gpunetsim calibrate`` and ``gpunetsim compare`` (registered by simulator.cli)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from simulator.errors import InputError


def register(sub) -> None:
    c = sub.add_parser("calibrate", help="fit the model's parameters to measurements",
                       description="Fit the parameter set to measured collectives (nccl-tests text or JSON, "
                                   "our JSONL) and write a calibration file usable with --calibration.")
    c.add_argument("--measurements", nargs="+", required=True, help="measurement files")
    _topology_args(c)
    c.add_argument("--out", required=True, help="calibration JSON to write")
    c.add_argument("--name", default=None, help="name stored in the calibration (default: file stem)")
    c.add_argument("--keys", default=None, help="comma-separated parameter keys to fit (default: all the data moves)")
    c.set_defaults(func=_calibrate)
    m = sub.add_parser("compare", help="predicted vs measured, with errors and an HTML plot",
                       description="Predict every measured point and print the errors.")
    m.add_argument("--measurements", nargs="+", required=True, help="measurement files")
    _topology_args(m)
    m.add_argument("--html", default="compare.html", help="plotly HTML report to write ('' for none)")
    m.add_argument("--json", action="store_true", help="one JSON object per point, then the summary")
    m.set_defaults(func=_compare)


def _topology_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--topology", default=None,
                   help="preset or file (default: the dataset's own topology hint)")
    p.add_argument("--nodes", type=int, default=1, help="servers (with --topology)")
    p.add_argument("--gpus", type=int, default=None, help="GPUs per server; only points of this world size are used")
    p.add_argument("--variants", default=None, help="comma-separated variants to keep (default: all)")
    p.add_argument("--calibration", default=None, help="calibration (file or shipped name)")
    p.add_argument("--statistic", default="median", choices=["median", "min"],
                   help="per-point time: the file's (median of repetitions) or the fastest repetition")


def _load(args: argparse.Namespace):
    from simulator.params import load_calibration
    from validation.compare import Predictor, Topo, dataset_points, topo_from_hint
    from validation.parsers import load_measurements
    params = load_calibration(args.calibration)
    points, topo = [], None
    for f in args.measurements:
        ds = load_measurements(f)
        if args.topology:
            t = Topo(args.topology, args.nodes)
        else:
            t = topo_from_hint(ds.meta.get("topology"), f)
        if topo is not None and t != topo:
            raise InputError("measurement files describe different topologies: pass --topology", source=f,
                             field="meta.topology", value=dict(ds.meta.get("topology") or {}))
        topo = t
        pts = dataset_points(ds, statistic=args.statistic)
        if args.gpus:
            pts = [p for p in pts if p.world == args.gpus * t.nodes]
        if args.variants:
            keep = set(args.variants.split(","))
            pts = [p for p in pts if p.variant in keep]
        points += pts
    if not points:
        raise InputError("no measured points left after filtering", field="--measurements", value=args.measurements)
    return points, Predictor(topo, params)


def _fmt(s: dict) -> str:
    if not s.get("points"):
        return "no points"
    return (f"{s['points']} points: median |err| {s['median_time_pct']:.1f}%, p90 {s['p90_time_pct']:.1f}%, "
            f"worst {s['worst_time_pct']:.1f}%")


def _calibrate(args: argparse.Namespace) -> int:
    from simulator.params import save_calibration
    from validation.calibrate import calibrate
    points, predictor = _load(args)
    keys = args.keys.split(",") if args.keys else None
    fit = calibrate(points, predictor, keys, name=args.name or Path(args.out).stem)
    print(f"# calibrate: {len(points)} points ({fit.skipped} not representable), {len(fit.keys)} free parameters")
    print(f"before: {_fmt(fit.before)}")
    print(f"after:  {_fmt(fit.after)}")
    print(f"{'parameter':<40} {'datasheet':>12} {'fitted':>12}")
    for k in fit.keys:
        print(f"{k:<40} {predictor.params[k]:>12.4g} {fit.params[k]:>12.4g}")
    print(f"{'op':<15}{'world':>6}{'variant':>9}{'bytes':>13}{'measured us':>13}{'fitted us':>11}{'err %':>8}")
    for c in fit.comparisons:
        p = c.point
        print(f"{p.op:<15}{p.world:>6}{p.variant:>9}{p.size_bytes:>13}{p.time_s * 1e6:>13.2f}"
              f"{c.predicted_s * 1e6:>11.2f}{c.error * 100:>8.1f}")
    save_calibration(fit.params, args.out, fitted_on=[str(m) for m in args.measurements],
                     topology=predictor.topo.__dict__, points=len(points), before=fit.before, after=fit.after)
    print(f"wrote {args.out}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from validation.compare import compare, summary
    points, predictor = _load(args)
    comps, skipped = compare(points, predictor)
    s = summary(comps)
    if args.json:
        for c in comps:
            p = c.point
            print(json.dumps({"op": p.op, "world": p.world, "variant": p.variant, "bytes": p.size_bytes,
                              "measured_s": p.time_s, "predicted_s": c.predicted_s, "error": c.error,
                              "algo": c.algo, "proto": c.proto}))
        print(json.dumps({"summary": s, "skipped": len(skipped)}))
    else:
        print(f"# compare: params={predictor.params.name}, topology={predictor.topo.preset} x{predictor.topo.nodes}")
        print(f"{'op':<15}{'world':>6}{'variant':>9}{'bytes':>13}{'measured us':>13}{'predicted us':>14}"
              f"{'err %':>8}  algo/proto")
        for c in comps:
            p = c.point
            print(f"{p.op:<15}{p.world:>6}{p.variant:>9}{p.size_bytes:>13}{p.time_s * 1e6:>13.2f}"
                  f"{c.predicted_s * 1e6:>14.2f}{c.error * 100:>8.1f}  {c.algo}/{c.proto}")
        print(f"summary: {_fmt(s)}; {len(skipped)} points not representable (skipped)")
    if args.html:
        from validation.plots import compare_html
        compare_html(comps, args.html, title=f"gpunetsim compare ({predictor.params.name})")
        if not args.json:
            print(f"wrote {args.html}")
    return 0
