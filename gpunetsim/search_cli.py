"""``gpunetsim search``: the fastest (or cheapest) parallel plan for an LLM on candidate clusters
(gpunetsim.search)."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

from gpunetsim.cli_args import add_nccl_version_arg, nccl_version_from_args
from simulator.core.errors import InputError
from simulator.core.units import GiB
from simulator.core.values import comma_items, repeated
from simulator.core.vocabulary import NCCL_CURRENT, nccl_release_words


def register(sub) -> None:
    p = sub.add_parser("search", help="search TP x PP x DP x micro-batch x schedule x recompute x sharding plans",
                       description="Enumerate every parallel plan of an LLM on each candidate cluster, skip those "
                                   "that do not fit in memory or cannot beat the best found (a compute-only lower "
                                   "bound), simulate the rest with `gpunetsim train`'s model and rank them by "
                                   "time or cost.")
    p.add_argument("--model", default=None, help="zoo model (gpt3-175b, llama-3-8b, ...) or a YAML/JSON file")
    p.add_argument("--model-spec", default=None, help='"hidden=..,layers=..,heads=..,seq=..[,ffn=..,vocab=..,'
                                                      'kv_heads=..]"; left out, ffn is 4 x hidden, vocab 51200, '
                                                      'kv_heads heads')
    p.add_argument("--seq", type=int, default=None, help="sequence length (default: the model's)")
    p.add_argument("--gpus", required=True, help="GPU counts to try, comma-separated, e.g. 256,512")
    p.add_argument("--topology", action="append", default=None,
                   help="preset or topology file; repeat for several (default dgx-h100)")
    p.add_argument("--nic-bw", default=None, help="NIC bandwidth of every cluster, e.g. '200 Gb/s'")
    p.add_argument("--oversubscription", type=float, default=1.0, help="leaf:spine oversubscription")
    p.add_argument("--global-batch", type=int, required=True, help="sequences per iteration")
    p.add_argument("--tokens", default="1e12", help="training tokens: 1e12, 300B or 15T (default 1e12)")
    p.add_argument("--price", default=None, help='USD per GPU-hour, e.g. "h100=2.5/h,a100=1.2/h" (/hr, /hour too)')
    p.add_argument("--objective", default="time", choices=["time", "cost"])
    s = p.add_argument_group("space")
    s.add_argument("--max-tp", type=int, default=8, help="largest tensor-parallel size (default 8)")
    s.add_argument("--max-pp", type=int, default=64, help="most pipeline stages (default 64)")
    s.add_argument("--micro-batches", default="1,2,4,8", help="micro-batch sizes to try (default 1,2,4,8)")
    s.add_argument("--schedules", default="1f1b,interleaved", help="pipeline schedules to try")
    s.add_argument("--virtual-stages", type=int, default=2, help="chunks per stage when interleaved (default 2)")
    s.add_argument("--recompute", default="none,selective,full", help="recomputation modes to try")
    s.add_argument("--sharding", default="ddp,zero-1,fsdp-full",
                   help="data-parallel strategies to try: ddp, zero-1..3, fsdp-full|grad-op|hybrid")
    s.add_argument("--flash-attention", action="store_true", help="fused attention in every plan")
    s.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp8"])
    p.add_argument("--calibration", default=None, help="calibration JSON (or a shipped calibration's name)")
    add_nccl_version_arg(p)
    run = p.add_mutually_exclusive_group()
    run.add_argument("--workers", type=int, default=1, help="local worker processes (default 1)")
    run.add_argument("--scheduler", default=None, help="Dask scheduler (tcp://HOST:8786): simulate on its workers")
    p.add_argument("--top", type=int, default=20, help="plans to print (default 20)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", default=None, help="write an HTML report (plotly) and plans.json into DIR")
    p.set_defaults(func=_search)


PER_HOUR = ("/gpu-hour", "/gpu-hr", "/gpu-h", "/hour", "/hr", "/h")
"""How a price's 'per GPU-hour' may be written after its dollars (optional: a bare number is per GPU-hour)."""


def parse_prices(text: str | None) -> dict[str, float]:
    """``"h100=2.5/h,a100=1.2"``: US dollars per GPU-hour by GPU name."""
    from simulator.training.gpus import get_gpu
    out: dict[str, float] = {}
    for part in comma_items(text, "--price") if text else ():
        name, sep, value = part.partition("=")
        v = value.strip().lower()
        v = next((v.removesuffix(u) for u in PER_HOUR if v.endswith(u)), v).strip().lstrip("$")
        try:
            price = float(v) if sep else math.nan
        except ValueError:
            price = math.nan
        if not math.isfinite(price):
            raise InputError("expected GPU=DOLLARS/h, e.g. h100=2.5/h", field="--price", value=part.strip())
        if price < 0:           # a number, but negative: not a format error
            raise InputError("a price is at least 0 dollars per GPU-hour", field="--price", value=part.strip())
        try:
            gpu = get_gpu(name.strip()).name
        except InputError as e:
            raise InputError(e.message, field="--price", value=name.strip()) from None
        twice = next((k for k in out if get_gpu(k).name == gpu), None)
        if twice is not None:       # the cluster took the first silently (h100=2.5/h,H100-SXM=3/h priced at 2.5)
            raise InputError(f"{gpu} is priced twice ({twice}={out[twice]:g}/h and {part.strip()}): give one price",
                             field="--price", value=text)
        out[name.strip()] = price
    return out


def _warn_unpriced(prices: dict[str, float], clusters) -> None:
    """A ``--price`` naming a GPU no candidate cluster has (a typo, ``a100`` for ``h100``) left the cost
    column empty without a word."""
    if not prices:
        return
    import logging
    from simulator.training.gpus import get_gpu
    have = sorted({c.gpu for c in clusters})
    unused = [k for k in prices if get_gpu(k).name not in have]
    unpriced = sorted({c.gpu for c in clusters if c.price_per_gpu_h is None})
    if unused:
        logging.getLogger("gpunetsim.search").warning(
            "--price: %s names no GPU of the candidate clusters (%s)%s", ", ".join(unused), ", ".join(have),
            f"; {', '.join(unpriced)} has no price, so its plans have no cost" if unpriced else "")


def _list(text: str, field: str, convert=str) -> tuple:
    try:
        items = tuple(comma_items(text, field, convert))
    except InputError:                  # the converter's own, naming the value at fault (an InputError is a ValueError)
        raise
    except ValueError:      # int('1.5'): the item at fault, in the words of a count
        word = "must be a whole number" if convert is int else "expected a comma-separated list"
        bad = next((x.strip() for x in text.split(",") if not _converts(convert, x)), text)
        raise InputError(word, field=field, value=bad) from None
    return items


def _converts(convert, item: str) -> bool:
    try:
        convert(item.strip())
    except ValueError:
        return False
    return True


def space_from_args(args: argparse.Namespace):
    from simulator.training.llm.config import Recompute, Schedule
    from simulator.training.llm.search_space import SearchSpace

    def choice(enum, field):
        def conv(x):
            try:
                return enum(x)
            except ValueError:
                raise InputError(f"expected some of {', '.join(m.value for m in enum)}", field=field, value=x) from None
        return conv
    return SearchSpace(args.max_tp, args.max_pp, _list(args.micro_batches, "--micro-batches", int),
                       _list(args.schedules, "--schedules", choice(Schedule, "--schedules")), args.virtual_stages,
                       _list(args.recompute, "--recompute", choice(Recompute, "--recompute")),
                       _list(args.sharding, "--sharding"), True, args.flash_attention, args.dtype)


def _search(args: argparse.Namespace) -> int:
    from gpunetsim.search import make_cluster, search, worker_pool
    from simulator.collectives.params import load_calibration
    from simulator.training.llm.compute import load_compute_params
    from simulator.training.llm.model import resolve_model, with_seq
    model = with_seq(resolve_model(args.model, args.model_spec), args.seq)
    space = space_from_args(args)
    prices = parse_prices(args.price)
    gpus = _list(args.gpus, "--gpus", int)
    topologies = args.topology or []
    twice = repeated(topologies)
    if twice is not None:           # every plan of that cluster was enumerated, simulated and ranked twice
        raise InputError(f"{topologies[twice]} is given twice: each candidate cluster once", field="--topology",
                         value=topologies[twice])
    if args.out:                    # before the search, not after it (simulator.core.outputs)
        from simulator.core.outputs import check_folder
        check_folder(args.out, "--out")
    from simulator.core.units import parse_amount, parse_bandwidth
    args.tokens = parse_amount(args.tokens, field="--tokens")
    nic_Bps = parse_bandwidth(args.nic_bw, field="--nic-bw") if args.nic_bw else None
    if not args.oversubscription >= 1.0:
        raise InputError("must be at least 1", field="--oversubscription", value=args.oversubscription)
    clusters = [make_cluster(t, n, prices, nic_Bps, args.oversubscription)
                for t in (args.topology or ["dgx-h100"]) for n in gpus]
    _warn_unpriced(prices, clusters)
    params, compute = load_calibration(args.calibration), load_compute_params(args.calibration)
    version = nccl_version_from_args(args) or params.nccl_version     # a calibration's release unless told another
    if args.workers < 1:
        raise InputError("must be a positive integer", field="--workers", value=args.workers)
    t0 = time.perf_counter()
    client = None
    if args.scheduler:
        from gpunetsim.study_run import connect_dask
        client = connect_dask(args.scheduler)
        pool = client.get_executor()
    else:
        pool = worker_pool(args.workers) if args.workers > 1 else None
    try:
        out = search(model, clusters, args.global_batch, tokens=args.tokens, space=space, objective=args.objective,
                     top=args.top, params=params, compute=compute, executor=pool, nccl_version=version)
    finally:
        if client is not None:
            client.close()
        elif pool is not None:
            pool.shutdown(cancel_futures=True)
    if not out.enumerated:
        raise InputError("no plan to try: for every TP x PP x DP of --gpus, micro-batch x DP (--micro-batches) must "
                         "divide the global batch, TP the heads and KV heads and PP at most the layers",
                         field="--global-batch", value=args.global_batch)
    print(f"# search: {out.simulated} plans simulated in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if args.out:
        from gpunetsim.search import ClusterSimulator
        from gpunetsim.search_report import write_search_report
        from gpunetsim.search import sensitivity
        rows = sensitivity(out.plans[0], ClusterSimulator(model, params, compute, version)) if out.plans else []
        path = write_search_report(out, rows, args.out, f"gpunetsim search: {model.name}, global batch "
                                                        f"{args.global_batch}")
    if args.json:
        print(json.dumps({"model": model.name, "nccl_version": str(version or NCCL_CURRENT), "objective": out.objective,
                          "enumerated": out.enumerated,
                          "no_fit": out.no_fit, "pruned": out.pruned, "simulated": out.simulated,
                          "plans": [p.as_dict() for p in out.plans]}))
        return 0
    print(format_search(out, model.name, args.global_batch, args.tokens, version or NCCL_CURRENT))
    if args.out:
        print(f"report written to {path}")
    return 0


def _duration(seconds: float) -> str:
    """The training time for the table: days to 0.1, from 10^5 days 2 significant digits (--tokens 1e40 printed
    2489594354882605714222142717952.0 d), else hours."""
    days = seconds / 86400
    return f"{days:.2g} d" if days >= 1e5 else f"{days:.1f} d" if seconds >= 86400 else f"{seconds / 3600:.1f} h"


def format_search(out, model: str, global_batch: int, tokens: float, nccl=NCCL_CURRENT) -> str:
    """The ranked table, one plan per line, and what the search skipped; ``nccl`` the NCCL planned for."""
    from gpunetsim.search_study import interval_text
    lines = [f"# gpunetsim search: {model}, global batch {global_batch}, {tokens:.3g} tokens, NCCL {nccl_release_words(nccl)}, "
             f"best {out.objective} first",
             f"# {out.enumerated} plans, {out.no_fit} do not fit, {out.pruned} skipped by the lower bound, "
             f"{out.simulated} simulated",
             f"{'#':>2} {'cluster':<16} {'GPUs':>5} {'TPxPPxDP':>9} {'mb':>2} {'schedule':<13} {'recomp':<9} "
             f"{'sharding':<9} {'iter(s)':>8} {'90% lo':>8} {'90% hi':>8} {'train':>7} {'GPU-h':>8} {'cost($)':>9} {'MFU':>6} "
             f"{'free GiB':>8}  limited by"]
    for i, p in enumerate(out.plans, 1):
        c, r = p.config, p.result
        sched = c.schedule.value + (f"/{c.chunks}" if c.chunks > 1 else "")
        cost = f"{p.cost:9.3g}" if p.cost is not None else f"{'-':>9}"
        lines.append(f"{i:>2} {p.cluster.label:<16} {p.cluster.gpus:>5} {f'{c.tp}x{c.pp}x{c.dp}':>9} "
                     f"{c.micro_batch:>2} {sched:<13} {c.recompute.value:<9} {c.sharding:<9} "
                     f"{p.iteration_s:8.3f} {interval_text(r.get('iteration_lo_s'), r.get('iteration_hi_s'))} "
                     f"{_duration(p.training_s):>7} {p.gpu_hours:8.3g} {cost} "
                     f"{r['mfu'] * 100:5.1f}% {p.headroom_bytes / GiB:8.1f}  {p.limiter}")
    if not out.plans:
        lines.append("no plan fits in memory: more GPUs, a smaller micro-batch or more sharding/recomputation")
    return "\n".join(lines)
