"""``gpunetsim cluster SCENARIO``: several jobs on one fabric (registered by gpunetsim.cli)."""

from __future__ import annotations

import argparse
import json

from simulator.core.errors import InputError
from simulator.core.values import comma_items, seed
from simulator.core.vocabulary import counted, nccl_release_words


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
    register_stragglers(sub)


def _cluster(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from gpunetsim.scenario import load_scenario, run_scenario
    if args.html:
        from simulator.core.outputs import check_writable
        check_writable(args.html, "--html")
    sc = load_scenario(args.scenario, args.placement)
    if args.iterations is not None:
        if args.iterations < 1:
            raise InputError("must be at least 1", field="--iterations", value=args.iterations)
        sc = replace(sc, iterations=args.iterations)
    if args.seed is not None:
        sc = replace(sc, seed=seed(args.seed, field="--seed"))
    if args.top_links < 0:
        raise InputError("must be 0 or more", field="--top-links", value=args.top_links)
    result = run_scenario(sc, args.top_links)
    if args.html:
        from gpunetsim.cluster_report import write_cluster_report
        write_cluster_report(sc, result, args.html)
    runs = goodputs(sc, result)
    if args.json:
        d = result.as_dict()
        for j, g in zip(d["jobs"], runs):
            j["goodput"] = g.as_dict() if g is not None else None
            if g is not None:             # the iteration's wall time with failures, and its 90% interval
                j.update({f"effective{k}": effective_s(j[f"shared{k}"], g) for k in ("_s", "_lo_s", "_hi_s")})
        print(json.dumps({"scenario": sc.name, "gpus": sc.gpus, "placement": sc.placement, "seed": sc.seed,
                          "nccl_version": str(planned_nccl(sc)), **d}))
        return 0
    print(format_cluster(sc, result, runs, links=args.top_links > 0))
    if args.html:
        print(f"report written to {args.html}")
    return 0


def goodputs(sc, result) -> list:
    """Each job's expected run under the scenario's failures (None without a failures section)."""
    if sc.failures is None:
        return [None for _ in result.jobs]
    from simulator.training.cluster import job_components
    from simulator.training.goodput import expected_run
    try:
        return [expected_run(job_components(sc.router, j.hosts), sc.failures, sc.run_s) for j in result.jobs]
    except InputError as e:              # a figure of the file's failures section (or its run)
        field = e.field if e.field == "run" else f"failures.{e.field}"
        raise InputError(e.message, source=sc.source, field=field, value=e.value) from None


def effective_s(shared_s: float | None, g) -> float | None:
    """An iteration's wall time with failures (``shared_s`` over the job's goodput); None without a time or when
    the run never finishes (goodput 0: it divided by zero)."""
    return None if shared_s is None or g.goodput == 0 else shared_s / g.goodput


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


def _ms(t_s: float | None) -> str:
    """A 90% interval end in ms, 8 wide ('-' without one)."""
    return f"{'-':>8}" if t_s is None else f"{t_s * 1e3:>8.3f}"


def planned_nccl(sc):
    """The NCCL every job's collectives are planned for: the scenario's ``nccl_version``, else its calibration's,
    else the newest the model knows (the Planner's rule)."""
    return sc.params.planned_nccl_version()


def _links(r) -> list[str]:
    """Each job's links saturated while shared, longest first ('none' for a job without one)."""
    lines = ["", "links saturated while shared (per job, longest first):",
             f"{'job':<12} {'link':<26} {'contended(ms)':>13} {'of run':>7} {'util':>6}  jobs on it"]
    for j in r.jobs:
        if not j.links:
            lines.append(f"{j.name:<12} {'none':<26}")
        for l in j.links:
            label = l.name + (f" x{len(l.links)}" if len(l.links) > 1 else "")
            share = l.contended_s / r.window_s * 100 if r.window_s > 0 else 0.0
            lines.append(f"{j.name:<12} {label:<26} {l.contended_s * 1e3:>13.3f} {share:>6.1f}% "
                         f"{l.utilisation * 100:>5.1f}%  {', '.join(l.jobs)}")
    return lines


def format_cluster(sc, r, runs=(), links: bool = True) -> str:
    """The table: one line per job (times in ms), then each job's contended links (``links``: False for
    ``--top-links 0``, which listed every job's links as 'none', contended or not)."""
    a = sc.attributes
    lines = [f"# gpunetsim cluster: {sc.name} on {a.get('name')} x{a.get('hosts', 1)} "
             f"({sc.gpus} GPUs), placement={sc.placement}, {counted(r.iterations, 'iteration')}, seed={sc.seed}, "
             f"NCCL {nccl_release_words(planned_nccl(sc))}",
             f"{'job':<12} {'GPUs':>5} {'servers':<14} {'healthy(ms)':>11} {'alone(ms)':>10} {'shared(ms)':>10} "
             f"{'90% lo':>8} {'90% hi':>8} {'slowdown':>8} {'stragglers':>10} {'E[max]':>6}"]
    for j in r.jobs:
        servers = host_ranges(j.hosts)
        if len(servers) > 14:
            servers = servers[:13] + "~"
        lines.append(f"{j.name:<12} {j.gpus:>5} {servers:<14} {j.healthy_s * 1e3:>11.3f} {j.alone_s * 1e3:>10.3f} "
                     f"{j.shared_s * 1e3:>10.3f} {_ms(j.shared_lo_s)} {_ms(j.shared_hi_s)} "
                     f"{j.slowdown:>7.3f}x {j.straggler_factor:>10.3f} "
                     f"{j.straggler_expected:>6.3f}")
    if links:
        lines += _links(r)
    if any(g is not None for g in runs):
        from simulator.core.units import format_duration as dur
        lines.append("")
        lines.append(f"failures over {dur(sc.run_s)} of training "
                     "(checkpoint every interval; effective = shared / goodput):")
        lines.append(f"{'job':<12} {'MTBF':>10} {'interval':>10} {'goodput':>8} {'failures':>9} {'effective(ms)':>13} "
                     f"{'90% lo':>8} {'90% hi':>8}")
        for j, g in zip(r.jobs, runs):
            eff = effective_s(j.shared_s, g)
            lines.append(f"{j.name:<12} {dur(g.mtbf_s):>10} {dur(g.interval_s):>10} {g.goodput * 100:>7.2f}% "
                         f"{g.failures:>9.1f} {'never' if eff is None else f'{eff * 1e3:.3f}':>13} "
                         f"{_ms(effective_s(j.shared_lo_s, g))} {_ms(effective_s(j.shared_hi_s, g))}")
    return "\n".join(lines)


def register_stragglers(sub) -> None:
    p = sub.add_parser("stragglers", help="expected slowdown of a synchronous job from per-GPU compute variability",
                       description="The expected maximum over ranks of per-GPU compute multipliers (what a "
                                   "synchronous collective waits for): numerical integration and a seeded "
                                   "Monte Carlo estimate side by side.")
    p.add_argument("--ranks", default="2,8,64,1024", help="comma-separated numbers of GPUs")
    p.add_argument("--distribution", default="normal", choices=["none", "normal", "lognormal"])
    p.add_argument("--cv", type=float, default=None,
                   help="coefficient of variation of one GPU's compute time (default 0.05; not with --distribution none)")
    p.add_argument("--slow-gpus", type=int, default=0, help="GPUs that are slow on average")
    p.add_argument("--slow-factor", type=float, default=None,
                   help="their mean compute-time factor, >= 1 (2: a slow GPU takes twice as long; default 1; "
                        "needs --slow-gpus)")
    p.add_argument("--samples", type=int, default=20000, help="Monte Carlo iterations")
    p.add_argument("--seed", type=int, default=0, help="numpy Generator seed")
    p.add_argument("--json", action="store_true", help="one JSON object per rank count")
    p.set_defaults(func=_stragglers)


def _straggler_flags(args: argparse.Namespace) -> None:
    """Refuse a value that the chosen options would ignore, then fill the defaults (review s24, rv24c)."""
    if args.cv is not None and args.distribution == "none":
        raise InputError("--distribution none has no variability: leave --cv out or choose normal or lognormal",
                         field="--cv", value=args.cv)
    if args.slow_factor is not None and args.slow_gpus == 0:
        raise InputError("applies to the slow GPUs: give --slow-gpus N (N >= 1) with it", field="--slow-factor",
                         value=args.slow_factor)
    args.cv = 0.05 if args.cv is None else args.cv
    args.slow_factor = 1.0 if args.slow_factor is None else args.slow_factor


def _stragglers(args: argparse.Namespace) -> int:
    import numpy as np

    from simulator.training.stragglers import StragglerModel, expected_max, max_quantiles, monte_carlo_max
    try:
        ranks = comma_items(args.ranks, "--ranks", int)
    except InputError:
        raise
    except ValueError:
        raise InputError("expected comma-separated integers", field="--ranks", value=args.ranks) from None
    if any(n < 1 for n in ranks):
        raise InputError("each must be at least 1", field="--ranks", value=args.ranks)
    if args.samples < 2:
        raise InputError("must be at least 2", field="--samples", value=args.samples)
    from simulator.core import limits
    limits.GPUS.check(max(ranks), field="--ranks", value=args.ranks)
    if args.samples * max(ranks) > 10**8:           # Monte Carlo draws held in memory
        raise InputError("--samples x the largest --ranks must be at most 100,000,000", field="--samples",
                         value=args.samples)
    _straggler_flags(args)
    limits.check_range(args.slow_factor, field="--slow-factor", low=1.0, high=1e6)   # < 1 would be a fast GPU
    if args.slow_gpus < 0 or args.slow_gpus > min(ranks):
        raise InputError(f"must be between 0 and the smallest rank count ({min(ranks)})", field="--slow-gpus",
                         value=args.slow_gpus)
    try:
        model = StragglerModel(args.distribution, args.cv, {f"slow{i}": args.slow_factor
                                                            for i in range(args.slow_gpus)})
    except InputError as e:
        flag = "--slow-factor" if "slow" in str(e.field) else "--" + str(e.field).split(".")[-1]
        raise InputError(e.message, field=flag, value=e.value) from None
    rng = np.random.default_rng(seed(args.seed, field="--seed"))
    if not args.json:
        spread = "none" if args.distribution == "none" else f"{args.distribution}, cv={args.cv:g}"  # none: no cv
        print(f"# gpunetsim stragglers: {spread}, {args.slow_gpus} slow GPUs "
              f"x{args.slow_factor:g}, {args.samples} Monte Carlo samples, seed={args.seed}")
        print(f"{'GPUs':>6} {'E[max] integral':>16} {'Monte Carlo':>12} {'+-se':>8} {'diff/se':>8} {'90% lo':>8} "
              f"{'90% hi':>8}")
    for n in ranks:
        scales = model.scales([f"slow{i}" for i in range(args.slow_gpus)] + [""] * (n - args.slow_gpus))
        exact = expected_max(model, scales)
        lo, hi = max_quantiles(model, scales, (0.05, 0.95))
        mean, se = monte_carlo_max(model, scales, args.samples, rng)
        z = (mean - exact) / se if se > 0 else 0.0
        if args.json:
            print(json.dumps({"gpus": n, "expected_max": exact, "iteration_max_lo": lo, "iteration_max_hi": hi,
                              "monte_carlo": mean, "standard_error": se}))
        else:
            print(f"{n:>6} {exact:>16.5f} {mean:>12.5f} {se:>8.5f} {z:>8.2f} {lo:>8.5f} {hi:>8.5f}")
    if not args.json:
        print("# 90% lo/hi: where one iteration's multiplier falls (its 5% and 95% quantiles under this model)")
    return 0
