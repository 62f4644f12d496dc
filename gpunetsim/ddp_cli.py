"""``gpunetsim ddp``: one PyTorch DDP training iteration on a topology (simulator.training.ddp)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gpunetsim.cli_args import (add_backend_args, add_nccl_version_arg, add_topology_args, comm_model_from_args,
                                nccl_version_from_args, nccl_words, params_from_args, topology_from_args,
                                tuner_plugin_idle)
from simulator.core.errors import InputError
from simulator.core.units import mebibytes
from simulator.core.limits import require_finite
from simulator.core.outputs import check_writable
from simulator.core.vocabulary import ENGINES, nccl_release_words

def register(sub) -> None:
    p = sub.add_parser("ddp", help="simulate one PyTorch DDP (or DataParallel) training iteration",
                       description="Simulate one DistributedDataParallel iteration: forward, "
                                   "backward overlapped with bucket all-reduces, optimizer; or, with "
                                   "--strategy dataparallel, one torch.nn.DataParallel iteration.")
    add_topology_args(p)
    add_backend_args(p)
    add_nccl_version_arg(p)
    p.add_argument("--strategy", default="ddp", choices=["ddp", "dataparallel"],
                   help="DistributedDataParallel (one process per GPU) or nn.DataParallel (one process, "
                        "one server: replicate, scatter, gather, reduce onto GPU 0)")
    p.add_argument("--workload", required=True, help="zoo model (e.g. resnet50, gpt2) or a workload file")
    p.add_argument("--gpu", default=None, help="GPU for zoo models (default: the topology's); a workload file's "
                                               "times are its own (--gpu sets only the memory to fit)")
    p.add_argument("--batch-size", type=int, default=None, help="per-GPU batch size")
    p.add_argument("--bucket-cap-mb", default="25", help="DDP bucket_cap_mb (a number of MiB, no unit)")
    p.add_argument("--first-bucket-mb", default="1",
                   help="first bucket (MiB); 'cap' = same as --bucket-cap-mb, as when DDP is given "
                        "bucket_cap_mb explicitly")
    p.add_argument("--compression", default="none", choices=["none", "bf16", "fp16"],
                   help="DDP gradient compression hook")
    p.add_argument("--gradient-as-bucket-view", action="store_true", help="no copy into the bucket")
    p.add_argument("--accumulation-steps", type=int, default=1, help="micro-steps per optimizer step")
    p.add_argument("--engine", default="des", choices=ENGINES,
                   help="discrete-event simulation (des) or closed-form arithmetic (closed)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object; its 'fits' is false when the weights, gradients and Adam states "
                        "alone exceed the GPU's memory (null: GPU unknown)")
    p.add_argument("--trace", default=None, help="write a Chrome/Perfetto trace (JSON) to this file")
    p.epilog = ("A workload whose model states do not fit the GPU's memory is still simulated: a warning on stderr, "
                "exit status 0, and 'fits': false in --json (scripts sweeping sizes test that field).")
    p.set_defaults(func=_ddp)


def load_any_workload(spec: str, gpu: str | None, gpu_model: str, batch_size: int | None):
    """A zoo workload (``spec`` a zoo name) or a workload file, at ``batch_size`` if given."""
    from simulator.core.inputs import names_a_file
    from simulator.training.gpus import gpu_for_model
    from simulator.training.zoo import zoo_names, zoo_workload
    path = Path(spec)
    if names_a_file(path):
        from simulator.training.workload_files import load_workload
        w = load_workload(path)
        if gpu is not None:             # was ignored without a word: the same iteration on any --gpu
            import logging
            logging.getLogger("gpunetsim.ddp").warning(
                f"gpu {gpu!r} does not change the times of the workload file {path.name} (measured, or computed for "
                "the file's own gpu); it only sets the memory its replica must fit")
        return w.scaled_to_batch(batch_size) if batch_size is not None else w
    if batch_size is not None and batch_size <= 0:
        raise InputError("batch size must be a positive integer", field="--batch-size", value=batch_size)
    try:
        return zoo_workload(spec, gpu=gpu or gpu_for_model(gpu_model), batch_size=batch_size)
    except InputError as e:
        if e.field == "model":
            raise InputError(f"not a workload file nor a zoo model; zoo: {', '.join(zoo_names())}",
                             field="--workload", value=spec) from None
        raise


def _config(args: argparse.Namespace):
    from simulator.training.ddp import DDPConfig
    first = args.first_bucket_mb
    if first.strip().lower() in ("cap", "none"):
        first_mb = None
    else:
        try:
            first_mb = float(first)
        except ValueError:
            try:
                mebibytes(first, field="--first-bucket-mb")        # its message for '1 MiB' says what to write
            except InputError as e:
                raise InputError(f"{e.message}, or 'cap'", field="--first-bucket-mb", value=first) from None
            raise
    try:
        return DDPConfig(args.bucket_cap_mb, first_mb, args.compression, args.gradient_as_bucket_view,
                         args.accumulation_steps)
    except InputError as e:
        raise InputError(e.message, field="--" + str(e.field).replace("_", "-"), value=e.value) from None


def _ddp(args: argparse.Namespace) -> int:
    from simulator.training.ddp import simulate_iteration
    from simulator.training.ddp_intervals import band_source, compute_band, with_interval
    config = _config(args)
    if args.strategy == "dataparallel":
        return _dataparallel(args, config)
    if args.trace:
        check_writable(args.trace, "--trace")
    args.tensors = args.tensors or "cuda"        # DDP trains on the GPUs: its buckets are CUDA tensors
    model = comm_model_from_args(args, topology_from_args(args), params_from_args(args))
    info = model.router.info
    w = load_any_workload(args.workload, args.gpu, info.gpu_model, args.batch_size)
    r = with_fits(with_interval(model, simulate_iteration(model, w, config, args.engine), w), w, args.gpu,
                  info.gpu_model)
    result = r.as_dict()
    require_finite(result, "simulated iteration")
    for b in result["buckets"]:
        require_finite(b, "simulated bucket")
    if args.trace:
        from gpunetsim.trace import write_chrome_trace
        meta = {"tool": "gpunetsim ddp", "workload": w.name, "topology": info.name,
                "gpus": r.gpus, "engine": r.engine, "params": model.params.name,
                "iteration_s": r.iteration_s}
        write_chrome_trace(r.records, args.trace, meta, process_name=f"rank 0 (of {r.gpus})")
    if args.json:
        print(json.dumps(result))
        return 0
    backend = (nccl_words(args, model.planner) if args.backend == "nccl"
               else f", backend={args.backend} ({model.tensors} tensors)")
    print(format_result(r, f"{info.name} x{args.nodes}", model.params.name + backend))
    if r.iteration_lo_s is not None:
        held = band_source(compute_band(w)) if args.backend == "nccl" else ""
        print(f"90% interval   {r.iteration_lo_s * 1e6:12.1f} - {r.iteration_hi_s * 1e6:.1f} us "
              + ("(the communication model's uncertainty and the workload's compute band"
                 if compute_band(w) else "(the communication model's uncertainty") + (f", at least the {held})"
                                                                                       if held else ")"))
        if r.iteration_extrapolated:
            print(f"# extrapolated beyond the calibration's data ({'; '.join(r.iteration_extrapolated)})")
    idle = tuner_plugin_idle(model, args, "all_reduce")
    if idle:
        print(idle)
    if args.trace:
        print(f"trace written to {args.trace} (open in ui.perfetto.dev or chrome://tracing)")
    return 0


def _dataparallel(args: argparse.Namespace, config) -> int:
    from simulator.network.closed_form import CostModel
    from simulator.training.dataparallel import simulate_dataparallel
    from simulator.training.ddp import simulate_iteration
    from simulator.training.ddp_intervals import with_interval
    from simulator.training.iteration_bands import dataparallel_kind
    if args.backend != "nccl" or args.tensors not in (None, "cuda"):
        raise InputError("DataParallel uses no process group (torch.cuda.comm copies, NCCL broadcast and "
                         "reduce between the GPUs of one process); leave --backend and --tensors out",
                         field="--backend", value=f"{args.backend}/{args.tensors or 'cuda'}")
    if args.nodes != 1:
        raise InputError("DataParallel is one process on one server; use --strategy ddp for several servers",
                         field="--nodes", value=args.nodes)
    if args.tuner_plugin:
        raise InputError("DataParallel is one process on one server, where the tuner plugin decides nothing (its "
                         "tables start at 3 nodes); leave --tuner-plugin out", field="--tuner-plugin",
                         value=args.tuner_plugin)
    if args.engine != "des":        # it was ignored: DataParallel has its own event model, its DDP line is closed form
        raise InputError("DataParallel is timed by its own model (and the DDP line beside it in closed form); "
                         "leave --engine out", field="--engine", value=args.engine)
    if args.trace:
        check_writable(args.trace, "--trace")
    model = CostModel(topology_from_args(args), params_from_args(args), nccl_version=nccl_version_from_args(args))
    info = model.router.info
    w = load_any_workload(args.workload, args.gpu, info.gpu_model, args.batch_size)
    r = simulate_dataparallel(model, w)
    ddp = with_interval(model, simulate_iteration(model, w, config, "closed"), w)
    if args.trace:
        from gpunetsim.trace import write_chrome_trace
        meta = {"tool": "gpunetsim ddp --strategy dataparallel", "workload": w.name, "topology": info.name,
                "gpus": r.gpus, "params": model.params.name, "iteration_s": r.iteration_s}
        try:
            write_chrome_trace(r.records, args.trace, meta, process_name=f"DataParallel ({r.gpus} GPUs)")
        except OSError as e:
            raise InputError(f"cannot write trace: {e.strerror}", source=args.trace) from None
    if args.json:
        print(json.dumps({**r.as_dict(), "ddp_iteration_s": ddp.iteration_s, "ddp_iteration_lo_s": ddp.iteration_lo_s,
                          "ddp_iteration_hi_s": ddp.iteration_hi_s,
                          "ddp_speedup": r.iteration_s / ddp.iteration_s}))
        return 0
    print(format_dataparallel(r, ddp, f"{info.name} x1", f"{model.params.name}, NCCL {nccl_release_words(r.nccl_version)}",
                              dataparallel_kind(model.params)))
    if args.trace:
        print(f"trace written to {args.trace} (open in ui.perfetto.dev or chrome://tracing)")
    return 0


def format_dataparallel(r, ddp, topology: str, params: str, band: str = "datasheet") -> str:
    """DataParallel's phases on GPU 0 and on the host, next to DDP on the same GPUs; ``band`` names the
    interval's band (simulator.training.iteration_bands). Times in us."""
    us = 1e6
    lines = [f"# gpunetsim ddp --strategy dataparallel: {r.workload} on {topology} ({r.gpus} GPUs, one "
             f"process), params={params}",
             f"{'phase':<12} {'GPU 0 (us)':>12} {'host (us)':>12} {'bytes':>12}"]
    for ph in r.phases:
        lines.append(f"{ph.name:<12} {ph.gpu_s * us:>12.1f} {ph.host_s * us:>12.1f} {ph.bytes:>12.0f}")
    lines += [f"{'total':<12} {r.gpu_path_s * us:>12.1f} {r.host_path_s * us:>12.1f}",
              "",
              f"iteration      {r.iteration_s * us:12.1f} us (the longer of the GPU and host paths)"]
    if r.iteration_lo_s is not None:
        lines.append(f"90% interval   {r.iteration_lo_s * us:12.1f} - {r.iteration_hi_s * us:.1f} us (held-out errors "
                     f"of DataParallel predictions, {band} host keys)")
        if r.iteration_extrapolated:
            lines.append(f"  (caveats of the interval: {'; '.join(r.iteration_extrapolated)})")
    if r.samples_per_s is not None:
        lines.append(f"throughput     {r.samples_per_s:12.1f} samples/s ({r.gpus} GPUs x batch {r.batch_size})")
    lines.append(f"scaling        {r.scaling_efficiency * 100:11.1f} % of {r.gpus} x one GPU "
                 f"(one GPU: {r.single_gpu_iteration_s * us:.1f} us/iteration)")
    lines.append(f"limit: {r.limit}")
    lines.append(f"DDP, same GPUs: {ddp.iteration_s * us:.1f} us/iteration: DataParallel takes "
                 f"{r.iteration_s / ddp.iteration_s:.2f}x as long")
    return "\n".join(lines)


def with_fits(r, w, gpu_name: str | None, gpu_model: str):
    """``r`` (an IterationResult of workload ``w``) with its ``fits`` (:func:`fits_memory`): what ``--json`` and
    ``gpunetsim.ddp`` give."""
    from dataclasses import replace
    return replace(r, fits=fits_memory(w, gpu_name, gpu_model))


def fits_memory(w, gpu_name: str | None, gpu_model: str) -> bool | None:
    """Whether the workload's model states (simulator.training.ddp.replica_state_bytes: weights, gradients and
    Adam's states, a full replica on every GPU, before activations) fit the GPU's memory; None when the GPU is
    not known. When they do not, a warning on stderr (the run still exits 0: the iteration is simulated as
    asked; ``--json``'s ``fits`` tells a script); see `gpunetsim train --zero/--fsdp` for sharded
    alternatives."""
    import logging
    from simulator.training.ddp import REPLICA_STATE_BYTES_PER_PARAM, replica_fits, replica_state_bytes
    from simulator.training.gpus import get_gpu, gpu_for_model
    try:
        gpu = get_gpu(gpu_name or gpu_for_model(gpu_model))
    except InputError:
        return None
    if replica_fits(w, gpu.memory_bytes):
        return True
    need = replica_state_bytes(w)
    logging.getLogger("gpunetsim.ddp").warning(
        f"{w.name} cannot fit: {need / REPLICA_STATE_BYTES_PER_PARAM / 1e9:.2f} B parameters need {need / 2**30:.1f} GiB for weights, "
        f"gradients and Adam states alone, {gpu.name} has {gpu.memory_bytes / 2**30:.0f} GiB "
        "(shard them: gpunetsim train --zero/--fsdp)")
    return False


def format_result(r, topology: str, params: str) -> str:
    """The human-readable report: breakdown, bucket table, throughput, limit. Times in us."""
    us = 1e6
    lines = [f"# gpunetsim ddp: {r.workload} on {topology} ({r.gpus} GPUs), engine={r.engine}, "
             f"params={params}"]
    if r.accumulation_steps > 1:
        lines.append(f"# gradient accumulation: {r.accumulation_steps} micro-steps "
                     f"({r.accumulation_steps - 1} under no_sync)")
    def band(part: str) -> str:
        """'   90% lo - hi us' of a part with an interval (simulator.training.ddp_intervals.part_intervals)."""
        lo, hi = getattr(r, f"{part}_lo_s", None), getattr(r, f"{part}_hi_s", None)
        return "" if lo is None or hi is None else f"   90% {lo * us:.1f} - {hi * us:.1f} us"

    lines += [f"iteration      {r.iteration_s * us:12.1f} us",
              f"  forward      {r.forward_s * us:12.1f} us{band('forward')}",
              f"  backward     {r.backward_s * us:12.1f} us{band('backward')}",
              f"  exposed comm {r.exposed_comm_s * us:12.1f} us{band('exposed_comm')}",
              f"  optimizer    {r.optimizer_s * us:12.1f} us{band('optimizer')}"]
    if r.iteration_overhead_s:
        lines.append(f"  overhead     {r.iteration_overhead_s * us:12.1f} us")
    lines.append(f"communication  {r.comm_s * us:12.1f} us on the comm stream, "
                 f"{r.overlap_fraction * 100:.1f}% overlapped with backward{band('comm')}")
    if r.buckets:
        lines.append("")
        lines.append(f"{'bucket':>6} {'size(B)':>11} {'params':>6} {'ready(us)':>10} {'start(us)':>10} "
                     f"{'end(us)':>10} {'algo/proto':>13}")
        for b in r.buckets:
            lines.append(f"{b.index:>6} {b.size_bytes:>11} {b.num_params:>6} {b.ready_s * us:>10.1f} "
                         f"{b.start_s * us:>10.1f} {b.end_s * us:>10.1f} {b.algo + '/' + b.proto:>13}")
        lines.append("")
    else:
        lines.append("no communication (one GPU)")
    if r.samples_per_s is not None:
        lines.append(f"throughput     {r.samples_per_s:12.1f} samples/s "
                     f"({r.gpus} GPUs x batch {r.batch_size} x {r.accumulation_steps} steps)")
    lines.append(f"scaling        {r.scaling_efficiency * 100:11.1f} % of {r.gpus} x one GPU "
                 f"(one GPU: {r.single_gpu_iteration_s * us:.1f} us/iteration)")
    lines.append(f"limit: {r.limit.description} (exposed communication {r.exposed_comm_s / r.iteration_s * 100:.1f}% "
                 f"of the iteration)")
    return "\n".join(lines)
