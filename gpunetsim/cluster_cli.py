"""``gpunetsim cluster SCENARIO``: several jobs on one fabric (registered by gpunetsim.cli)."""

from __future__ import annotations

import argparse
import json

from simulator.core.errors import InputError


def register(sub) -> None:
    p = sub.add_parser("cluster", help="several training jobs sharing one cluster: slowdowns and their causes",
                       description="Place the jobs of a scenario file on one cluster, simulate them alone "
                                   "and together, and report each job's slowdown and the shared links that "
                                   "cause it (docs/shared-clusters.md).")
    p.add_argument("scenario", help="scenario YAML/JSON file, or a built-in scenario's name (e.g. shared-spine)")
    p.add_argument("--placement", default=None, choices=["packed", "spread", "random"],
                   help="placement policy instead of the file's")
    p.add_argument("--iterations", type=int, default=None, help="iterations per job (default: the file's)")
    p.add_argument("--seed", type=int, default=None, help="straggler seed (default: the file's)")
    p.add_argument("--top-links", type=int, default=3, help="contended links listed per job")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--html", default=None, metavar="FILE", help="write an interactive plotly report")
    p.set_defaults(func=_cluster)


def _cluster(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from gpunetsim.scenario import load_scenario, run_scenario
    sc = load_scenario(args.scenario, args.placement)
    if args.iterations is not None:
        if args.iterations < 1:
            raise InputError("must be at least 1", field="--iterations", value=args.iterations)
        sc = replace(sc, iterations=args.iterations)
    if args.seed is not None:
        sc = replace(sc, seed=args.seed)
    if args.top_links < 0:
        raise InputError("must be 0 or more", field="--top-links", value=args.top_links)
    result = run_scenario(sc, args.top_links)
    if args.html:
        from gpunetsim.cluster_report import write_cluster_report
        try:
            write_cluster_report(sc, result, args.html)
        except OSError as e:
            raise InputError(f"cannot write report: {e.strerror}", source=args.html) from None
    if args.json:
        print(json.dumps({"scenario": sc.name, "gpus": sc.gpus, "placement": sc.placement, "seed": sc.seed,
                          **result.as_dict()}))
        return 0
    print(format_cluster(sc, result))
    if args.html:
        print(f"report written to {args.html}")
    return 0


def host_ranges(hosts) -> str:
    """Server indices as compact ranges: 0-3,8,10-11."""
    out, run = [], []
    for h in sorted(hosts):
        if run and h == run[-1] + 1:
            run.append(h)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [h]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def format_cluster(sc, r) -> str:
    """The table: one line per job (times in ms), then each job's contended links."""
    G = sc.graph
    lines = [f"# gpunetsim cluster: {sc.name} on {G.graph.get('name')} x{G.graph.get('hosts', 1)} "
             f"({sc.gpus} GPUs), placement={sc.placement}, {r.iterations} iterations, seed={sc.seed}",
             f"{'job':<12} {'GPUs':>5} {'servers':<14} {'healthy(ms)':>11} {'alone(ms)':>10} {'shared(ms)':>10} "
             f"{'slowdown':>8} {'stragglers':>10}"]
    for j in r.jobs:
        servers = host_ranges(j.hosts)
        if len(servers) > 14:
            servers = servers[:13] + "~"
        lines.append(f"{j.name:<12} {j.gpus:>5} {servers:<14} {j.healthy_s * 1e3:>11.3f} {j.alone_s * 1e3:>10.3f} "
                     f"{j.shared_s * 1e3:>10.3f} {j.slowdown:>7.3f}x {j.straggler_factor:>10.3f}")
    lines.append("")
    lines.append("links saturated while shared (per job, longest first):")
    lines.append(f"{'job':<12} {'link':<26} {'contended(ms)':>13} {'of run':>7} {'util':>6}  jobs on it")
    for j in r.jobs:
        if not j.links:
            lines.append(f"{j.name:<12} {'none':<26}")
        for l in j.links:
            label = l.name + (f" x{len(l.links)}" if len(l.links) > 1 else "")
            share = l.contended_s / r.window_s * 100 if r.window_s > 0 else 0.0
            lines.append(f"{j.name:<12} {label:<26} {l.contended_s * 1e3:>13.3f} {share:>6.1f}% "
                         f"{l.utilisation * 100:>5.1f}%  {', '.join(l.jobs)}")
    return "\n".join(lines)
