"""``gpunetsim goodput``: failures, checkpoints and goodput of a long run (registered by gpunetsim.cli)."""

from __future__ import annotations

import argparse
import json
import math

from simulator.core.errors import InputError

#: Servers under one leaf switch per rail when counting default switches (as --hosts-per-leaf).
HOSTS_PER_LEAF = 32
_FLAGS = {"mtbf_gpu": "--mtbf-gpu", "mtbf_node": "--mtbf-node", "mtbf_nic": "--mtbf-nic",
          "mtbf_switch": "--mtbf-switch", "checkpoint": "--checkpoint", "restart": "--restart",
          "interval": "--interval"}


def register(sub) -> None:
    p = sub.add_parser("goodput", help="expected goodput under failures and the optimal checkpoint interval",
                       description="Expected wall time, failures and goodput of a training run that "
                                   "checkpoints every interval and restarts after each failure; Young's, "
                                   "Daly's and the numeric optimum interval (docs/shared-clusters.md).")
    p.add_argument("--gpus", type=int, required=True, help="GPUs of the job")
    p.add_argument("--gpus-per-node", type=int, default=8, help="GPUs per server (default 8)")
    p.add_argument("--nics-per-node", type=int, default=None, help="NICs per server (default: one per GPU)")
    p.add_argument("--switches", type=int, default=None,
                   help=f"fabric switches the job depends on (default: the leaves of a rail-optimized fabric, "
                        f"NICs per server x ceil(servers / {HOSTS_PER_LEAF}))")
    for comp in ("gpu", "node", "nic", "switch"):
        p.add_argument(f"--mtbf-{comp}", default=None, metavar="TIME",
                       help=f"mean time between failures of one {comp}, e.g. '50000 h' (default: never fails)")
    p.add_argument("--checkpoint", "--checkpoint-s", default="0", metavar="TIME",
                   help="time to write one checkpoint, e.g. 60 or '1 min' (seconds if no unit)")
    p.add_argument("--restart", "--restart-s", default="0", metavar="TIME",
                   help="time to restart after a failure (reschedule, load the checkpoint)")
    p.add_argument("--interval", default=None, metavar="TIME",
                   help="your checkpoint interval (compute time between checkpoints) to compare")
    p.add_argument("--run", default="30 d", metavar="TIME", help="training work to finish (default '30 d')")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--html", default=None, metavar="FILE", help="write goodput vs interval as a plotly report")
    p.set_defaults(func=_goodput)


def _inputs(args: argparse.Namespace):
    from simulator.core.units import parse_time
    from simulator.training.goodput import Components, failure_spec
    for flag, v in (("--gpus", args.gpus), ("--gpus-per-node", args.gpus_per_node)):
        if v < 1:
            raise InputError("must be at least 1", field=flag, value=v)
    for flag, v in (("--nics-per-node", args.nics_per_node), ("--switches", args.switches)):
        if v is not None and v < 0:
            raise InputError("must be 0 or more", field=flag, value=v)
    nodes = -(-args.gpus // args.gpus_per_node)
    nics_per = args.gpus_per_node if args.nics_per_node is None else args.nics_per_node
    switches = nics_per * -(-nodes // HOSTS_PER_LEAF) if args.switches is None else args.switches
    comps = Components(args.gpus, nodes, nodes * nics_per, switches)
    raw = {k: getattr(args, k) for k in _FLAGS}
    try:
        spec = failure_spec(raw)
    except InputError as e:
        name = str(e.field)
        raise InputError(e.message, field=_FLAGS.get(name, name), value=raw.get(name)) from None
    work = parse_time(args.run, field="--run", allow_zero=False)
    return comps, spec, work


def _goodput(args: argparse.Namespace) -> int:
    from simulator.training.goodput import expected_run
    comps, spec, work = _inputs(args)
    r = expected_run(comps, spec, work)
    if args.html:
        from gpunetsim.cluster_report import write_goodput_report
        try:
            write_goodput_report(r, args.html)
        except OSError as e:
            raise InputError(f"cannot write report: {e.strerror}", source=args.html) from None
    if args.json:
        print(json.dumps(r.as_dict()))
        return 0
    print(format_goodput(r, spec))
    if args.html:
        print(f"report written to {args.html}")
    return 0


def format_goodput(r, spec) -> str:
    from simulator.core.units import format_duration as dur
    from simulator.training.goodput import expected_run
    c = r.components
    lines = [f"# gpunetsim goodput: {c.gpus} GPUs ({c.nodes} servers, {c.nics} NICs, {c.switches} switches), "
             f"{dur(r.work_s)} of training",
             f"job failure rate {r.failure_rate_per_s * 86400:.3f} per day, MTBF {dur(r.mtbf_s)}; "
             f"checkpoint {dur(r.checkpoint_s)}, restart {dur(r.restart_s)}"]
    if math.isinf(r.optimum_s):
        lines.append("no failures or free checkpoints: goodput 100%, no checkpoint needed")
        return "\n".join(lines)
    lines.append(f"{'interval':<18} {'every':>10} {'goodput':>8} {'wall time':>10} {'failures':>9} "
                 f"{'checkpoints':>11} {'lost':>10}")
    rows = [("Young sqrt(2dM)", r.young_s), ("Daly", r.daly_s), ("optimum (numeric)", r.optimum_s)]
    if spec.interval is not None:
        rows.append(("yours", spec.interval))
    for label, tau in rows:
        e = expected_run(c, spec.model_copy(update={"interval": tau}), r.work_s)
        lines.append(f"{label:<18} {dur(tau):>10} {e.goodput * 100:>7.2f}% {dur(e.wall_s):>10} {e.failures:>9.1f} "
                     f"{dur(e.checkpoint_total_s):>11} {dur(e.lost_s):>10}")
    return "\n".join(lines)
