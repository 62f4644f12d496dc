"""``gpunetsim train``: one LLM training iteration with tensor, pipeline and data parallelism
(simulator.training.llm)."""

from __future__ import annotations

import argparse
import json

from gpunetsim.cli_args import (add_nccl_version_arg, add_topology_args, nccl_version_from_args, params_from_args,
                                topology_from_args)
from simulator.core.errors import InputError
from simulator.core.units import GiB
from simulator.core.vocabulary import counted, nccl_release_words


def register(sub) -> None:
    p = sub.add_parser("train", help="simulate one LLM training iteration (TP x PP x DP, ZeRO/FSDP)",
                       description="Simulate one Megatron-style LLM training iteration: tensor parallelism "
                                   "(and sequence parallelism), a pipeline schedule over micro-batches, data "
                                   "parallelism with DDP, ZeRO or FSDP, activation recomputation; prints the "
                                   "iteration breakdown, MFU and memory per GPU.")
    add_topology_args(p)
    add_nccl_version_arg(p)
    m = p.add_argument_group("model")
    m.add_argument("--model", default=None, help="zoo model (gpt3-175b, megatron-22b, llama-3-70b, ...) or a "
                                                 "YAML/JSON file with the --model-spec fields")
    m.add_argument("--model-spec", default=None,
                   help='"hidden=12288,layers=96,heads=96,seq=2048[,ffn=..,vocab=..,kv_heads=..,gated_mlp=true]"; left '
                        'out, ffn is 4 x hidden, vocab 51200, kv_heads heads')
    m.add_argument("--seq", type=int, default=None, help="sequence length (default: the model's)")
    j = p.add_argument_group("parallelism")
    j.add_argument("--tp", type=int, default=1, help="tensor-parallel size")
    j.add_argument("--pp", type=int, default=1, help="pipeline stages")
    j.add_argument("--dp", type=int, default=None, help="data-parallel size (default: GPUs / (tp x pp))")
    j.add_argument("--global-batch", type=int, required=True, help="sequences per iteration")
    j.add_argument("--micro-batch", type=int, default=1, help="sequences per micro-batch")
    j.add_argument("--schedule", default="1f1b", choices=["1f1b", "interleaved"])
    j.add_argument("--virtual-stages", type=int, default=None,
                   help="model chunks per stage for --schedule interleaved (default 2)")
    j.add_argument("--recompute", default="none", choices=["none", "selective", "full"])
    j.add_argument("--sequence-parallel", action="store_true", help="Megatron sequence parallelism (needs --tp > 1)")
    j.add_argument("--flash-attention", action="store_true", help="fused attention (no seq x seq scores stored)")
    shard = j.add_mutually_exclusive_group()
    shard.add_argument("--zero", type=int, default=0, choices=[0, 1, 2, 3], help="ZeRO stage (0: plain DDP)")
    shard.add_argument("--fsdp", default=None, choices=["full", "grad-op", "hybrid"],
                       help="PyTorch FSDP sharding strategy (FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD)")
    j.add_argument("--fsdp-shard", type=int, default=None,
                   help="--fsdp hybrid: ranks per shard group (default: the data-parallel peers of one server)")
    j.add_argument("--order", default="tp-dp-pp",
                   help="rank layout, innermost first (Megatron: tp-dp-pp; any permutation)")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp8"])
    p.add_argument("--gpu", default=None, help="GPU (default: the topology's), e.g. a100, h100, h200")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object; its 'fits' is false when the most loaded stage's memory exceeds "
                        "the GPU's")
    p.add_argument("--trace", default=None, help="write a Perfetto/Chrome trace (JSON), one process per stage")
    p.epilog = ("A plan that does not fit the GPU's memory is still simulated: the text says 'DOES NOT FIT', the exit "
                "status is 0 and --json has 'fits': false (scripts sweeping plans test that field; gpunetsim search "
                "and studies leave such plans out or mark them).")
    p.set_defaults(func=_train)


def config_from_args(args: argparse.Namespace, gpus: int):
    from gpunetsim.train_study import train_config
    return train_config(vars(args), gpus)        # the options are named as a study's train axes


def _train(args: argparse.Namespace) -> int:
    from simulator.training.gpus import get_gpu, gpu_for_model
    from simulator.training.llm.compute import load_compute_params
    from simulator.training.llm.iteration import simulate_train
    from simulator.training.llm.model import resolve_model, with_seq
    from topologies.routing import router_for
    if args.trace:
        from simulator.core.outputs import check_writable
        check_writable(args.trace, "--trace")
    model = with_seq(resolve_model(args.model, args.model_spec), args.seq)
    router = router_for(topology_from_args(args))
    info = router.info
    config = config_from_args(args, len(router.gpus))
    gpu = get_gpu(args.gpu or gpu_for_model(info.gpu_model))
    params = params_from_args(args)
    compute = load_compute_params(args.calibration)
    r = simulate_train(router, model, config, gpu, params, compute, parts=True,
                       nccl_version=nccl_version_from_args(args))
    from gpunetsim.train_study import warn_train
    warn_train(vars(args), r)
    if args.trace:
        from gpunetsim.trace import write_chrome_trace
        meta = {"tool": "gpunetsim train", "model": model.name, "topology": info.name,
                "gpus": r.gpus, **config.as_dict(), "iteration_s": r.iteration_s}
        by_stage = {f"stage {s} (TP group of replica 0)": recs for s, recs in sorted(r.records.items())}
        try:
            write_chrome_trace(by_stage, args.trace, meta)
        except OSError as e:
            raise InputError(f"cannot write trace: {e.strerror}", source=args.trace) from None
    if args.json:
        print(json.dumps(r.as_dict()))
        return 0
    profiled = compute.profile is not None and compute.profile.lookup(gpu.name, model, config) is not None
    print(format_result(r, f"{info.name} x{args.nodes}", params.name,
                        compute.name + (" (passes from its measured profile)" if profiled else ""), compute))
    if args.trace:
        print(f"trace written to {args.trace} (open in ui.perfetto.dev or chrome://tracing)")
    return 0


PART_LABELS = (("compute", "compute"), ("tp_comm", "TP communication"), ("pp_comm", "pipeline sends"),
               ("pp_bubble", "pipeline bubble"), ("dp_comm_exposed", "DP exposed"), ("optimizer", "optimizer"),
               ("overhead", "overhead"))


def _floor_words(r, compute_params) -> str:
    """', centred on its host-issue floor X s' where the interval is centred on the floor, not the prediction
    (simulator.training.iteration_bands.train_reference_s)."""
    from simulator.training.iteration_bands import train_reference_s
    centre = train_reference_s(r.iteration_s, compute_params, r.gpu, r.host_floor_s)
    return f", centred on its host-issue floor {centre:.3f} s" if centre > r.iteration_s else ""


def _part_lines(r) -> list[str]:
    """One line per part of the breakdown (overhead only when there is one), with its 90% interval when
    computed (simulator.training.llm.part_intervals)."""
    out = []
    for part, label in PART_LABELS:
        value = getattr(r, f"{part}_s")
        if part == "overhead" and not value:
            continue
        b = r.bounds(part)
        tail = f"   90% {b[0]:.3f} - {b[1]:.3f} s" if b is not None else ""
        out.append(f"  {label:<16} {value:10.3f} s{tail}")
    if r.part_bounds:
        out.append("  (parts: compute and optimizer from the compute-only band, communication from its calls' "
                   "intervals and the measured TP / PP bands)")
        if r.parts_extrapolated:
            out.append(f"  (caveats of the compute-only band: {'; '.join(r.parts_extrapolated)})")
        out += [f"  ({c})" for c in r.comm_extrapolated]
    return out


def format_result(r, topology: str, params: str, compute: str, compute_params=None) -> str:
    """The human-readable report: configuration, breakdown, throughput, memory; ``compute_params`` (the
    compute set, datasheet if None) names the interval's band (simulator.training.iteration_bands)."""
    from simulator.training.iteration_bands import train_kind
    from simulator.training.llm.compute import ComputeParams
    compute_params = compute_params or ComputeParams()
    c = r.config
    sched = c.schedule.value + (f" (v={c.chunks})" if c.chunks > 1 else "")
    sharding = c.sharding
    if c.fsdp == "hybrid" and r.fsdp_shard_group:
        g = r.fsdp_shard_group
        sharding += f" (shard groups of {g}, {counted(c.dp // g, 'replica')})"
    opts = [f"recompute {c.recompute.value}"] + (["SP"] if c.sequence_parallel else []) + \
           (["flash"] if c.flash_attention else []) + [sharding, c.dtype]
    m = r.memory
    lines = [f"# gpunetsim train: {r.model} on {topology} ({r.gpus} GPUs, {r.gpu}), NCCL {nccl_release_words(r.nccl_version)}, "
             f"params={params}, compute={compute}",
             f"# TP {c.tp} x PP {c.pp} x DP {c.dp}, {sched}, {counted(c.microbatches, 'micro-batch', 'micro-batches')} of {c.micro_batch}, "
             + ", ".join(opts),
             f"iteration          {r.iteration_s:10.3f} s   (stage {r.critical_stage}, the last to finish)",
             *([f"  90% interval     {r.iteration_lo_s:10.3f} - {r.iteration_hi_s:.3f} s (held-out errors of LLM "
                f"predictions, {train_kind(compute_params, r.gpu)} compute{_floor_words(r, compute_params)})"]
               if r.iteration_lo_s is not None else []),
             *([f"  (caveats of the interval: {'; '.join(r.iteration_extrapolated)})"]
               if r.iteration_lo_s is not None and r.iteration_extrapolated else []),
             *_part_lines(r)]
    lines += [f"throughput         {r.tokens_per_s:10.0f} tokens/s, MFU {r.mfu * 100:.1f}% (HFU {r.hfu * 100:.1f}%)",
              f"memory per GPU     stage {m.stage}: params {m.params / GiB:.2f} GiB, grads {m.grads / GiB:.2f} GiB, "
              f"optimizer {m.optimizer / GiB:.2f} GiB, activations {m.activations / GiB:.2f} GiB",
              f"                   total {m.total / GiB:.2f} GiB of {m.capacity_bytes / GiB:.0f} GiB: "
              + ("fits" if m.fits else "DOES NOT FIT")]
    return "\n".join(lines)
