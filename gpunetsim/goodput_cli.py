"""``gpunetsim goodput``: failures, checkpoints and goodput of a long run (registered by gpunetsim.cli)."""

from __future__ import annotations

import argparse
import json
import math

from simulator.core.errors import InputError

_FLAGS = ("mtbf_gpu", "mtbf_node", "mtbf_nic", "mtbf_switch", "checkpoint", "restart", "interval")


def register(sub) -> None:
    p = sub.add_parser("goodput", help="expected goodput under failures and the optimal checkpoint interval",
                       description="Expected wall time, failures and goodput of a training run that "
                                   "checkpoints every interval and restarts after each failure; Young's, "
                                   "Daly's and the numeric optimum interval (docs/shared-clusters.md).")
    p.add_argument("--gpus", type=int, required=True, help="GPUs of the job")
    p.add_argument("--gpus-per-node", type=int, default=8, help="GPUs per server (default 8)")
    p.add_argument("--nics-per-node", type=int, default=None, help="NICs per server (default: one per GPU)")
    p.add_argument("--switches", type=int, default=None,
                   help="fabric switches the job depends on (default: the leaves of a rail-optimized fabric, "
                        "NICs per server x ceil(servers / 32))")
    for comp in ("gpu", "node", "nic", "switch"):
        p.add_argument(f"--mtbf-{comp}", default=None, metavar="TIME",
                       help=f"mean time between failures of one {comp}, e.g. '50000 h' (default: never fails)")
    p.add_argument("--checkpoint", default="0", metavar="TIME",
                   help="time to write one checkpoint, e.g. '1 min' or '60 s' (a number alone is refused)")
    p.add_argument("--checkpoint-s", dest="checkpoint", type=_seconds, default=argparse.SUPPRESS, metavar="SECONDS",
                   help="the same in seconds, e.g. 60")
    p.add_argument("--restart", default="0", metavar="TIME",
                   help="time to restart after a failure (reschedule, load the checkpoint), e.g. '5 min'")
    p.add_argument("--restart-s", dest="restart", type=_seconds, default=argparse.SUPPRESS, metavar="SECONDS",
                   help="the same in seconds, e.g. 300")
    p.add_argument("--interval", default=None, metavar="TIME",
                   help="your checkpoint interval (compute time between checkpoints) to compare")
    p.add_argument("--run", default="30 d", metavar="TIME", help="training work to finish (default '30 d')")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--html", default=None, metavar="FILE", help="write goodput vs interval as a plotly report")
    p.set_defaults(func=_goodput)


def _seconds(text: str) -> str:
    """``--checkpoint-s``/``--restart-s``: a number is seconds, as the flag's name says ("60" -> "60 s"); --checkpoint
    and --restart need the unit ("60" could be seconds or minutes)."""
    try:
        seconds = float(text)
    except ValueError:
        return text
    return f"{text.strip()} s" if 0 < seconds < math.inf else text     # 0, nan, -3: parse_time's words


def _goodput(args: argparse.Namespace) -> int:
    from gpunetsim.api import goodput
    if args.html:
        from simulator.core.outputs import check_writable
        check_writable(args.html, "--html")
    try:
        r = goodput(args.gpus, gpus_per_node=args.gpus_per_node, nics_per_node=args.nics_per_node,
                    switches=args.switches, run=args.run, **{k: getattr(args, k) for k in _FLAGS})
    except InputError as e:
        name = str(e.field)
        raise InputError(e.message, field="--" + name.replace("_", "-"), value=e.value) from None
    if args.html:
        from gpunetsim.cluster_report import write_goodput_report
        write_goodput_report(r, args.html)
    if args.json:
        print(json.dumps(r.as_dict()))
        return 0
    print(format_goodput(r))
    if args.html:
        print(f"report written to {args.html}")
    return 0


def format_goodput(r) -> str:
    from simulator.core.units import format_duration as dur
    c = r.components
    lines = [f"# gpunetsim goodput: {c.gpus} GPUs ({c.nodes} servers, {c.nics} NICs, {c.switches} switches), "
             f"{dur(r.work_s)} of training",
             f"job failure rate {r.failure_rate_per_s * 86400:.3f} per day, MTBF {dur(r.mtbf_s)}; "
             f"checkpoint {dur(r.checkpoint_s)}, restart {dur(r.restart_s)}"]
    if math.isinf(r.optimum_s):
        lines.append("no failures: goodput 100%, no checkpoint needed")
        return "\n".join(lines)
    lines.append(f"{'interval':<18} {'every':>10} {'goodput':>8} {'wall time':>10} {'failures':>9} "
                 f"{'checkpoints':>11} {'lost':>10}")
    rows = [("Young sqrt(2dM)", r.young_s), ("Daly", r.daly_s), ("optimum (numeric)", r.optimum_s)]
    if r.interval_s != r.optimum_s:
        rows.append(("yours", r.interval_s))
    runs = [(label, r.at_interval(tau)) for label, tau in rows]
    for label, e in runs:
        lines.append(f"{label:<18} {dur(e.interval_s):>10} {e.goodput * 100:>7.2f}% {dur(e.wall_s):>10} "
                     f"{e.failures:>9.1f} {dur(e.checkpoint_total_s):>11} {dur(e.lost_s):>10}")
    lines.append("90% interval of one run (the failure model's spread, simulator.training.goodput_spread):")
    lines.append(f"{'interval':<18} {'goodput':>17} {'wall time':>21} {'failures':>15} {'lost':>21}")
    for label, e in runs:
        lines.append(f"{label:<18} {e.goodput_lo * 100:>7.2f}% - {e.goodput_hi * 100:>6.2f}% "
                     f"{dur(e.wall_lo_s):>10} - {dur(e.wall_hi_s):>8} {e.failures_lo:>6.1f} - {e.failures_hi:>6.1f} "
                     f"{dur(e.lost_lo_s):>10} - {dur(e.lost_hi_s):>8}")
    notes: dict[str, list[str]] = {}
    for label, e in runs:
        for note in e.spread_notes:
            notes.setdefault(note, []).append(label)
    lines += [f"  ({', '.join(labels)}: {note})" for note, labels in notes.items()]
    return "\n".join(lines)
