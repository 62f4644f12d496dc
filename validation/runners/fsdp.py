"""Time FSDP training iterations of the runners' GPT under several sharding strategies.

::

    torchrun --nproc-per-node 2 -m validation.runners.fsdp \\
        --specs "hidden=2048,layers=8,heads=16,seq=2048;hidden=4096,layers=4,heads=32,seq=1024" \\
        --micro-batch 1 --strategies full_shard,shard_grad_op,hybrid_shard --replicate 1,2 \\
        --iters 10 --warmup 3 --out llm.jsonl

For each spec, rank-local first, one ``kind:"llm_profile"`` point: the embedding, one block and
the head timed forward and backward on every GPU without communication
(:mod:`validation.runners.layer_profile`), plus the whole model's iteration on one GPU without
FSDP (``model_*`` fields). Then one ``kind:"llm_fsdp"`` point per strategy (and per
``--replicate`` for ``hybrid_shard``): ``FullyShardedDataParallel`` with one unit per
transformer block (``ModuleWrapPolicy``) and the root unit holding embedding and head,
``BackwardPrefetch.BACKWARD_PRE``, ``limit_all_gathers=True``, no ``MixedPrecision`` (the
parameters themselves are bf16 on CUDA, so all-gathers and reduce-scatters move bf16; fp32 on
CPU). ``hybrid_shard`` uses a 2-D device mesh ``(replicate, world / replicate)``: shards within
groups of ``world / replicate`` ranks, all-reduces across the ``replicate`` groups (on 2 GPUs,
``replicate=1`` shards over both GPUs and its all-reduce group has one rank;
``replicate=2`` leaves shard groups of one rank, which FSDP1 turns into ``NO_SHARD`` over that
one-rank group: no gradient is reduced across ranks, so the point measures FSDP's own per-unit
work without communication, not DDP).

``no_shard`` (not in the default ``--strategies``) keeps whole copies on every rank and
all-reduces each unit's gradients over all ranks (``NO_SHARD``; recorded with ``replicate = world``,
``shard = 1``): the data-parallel case that ``hybrid_shard`` with ``replicate = world`` does not
measure.

Memory (CUDA): ``peak_memory_bytes`` is the peak of allocated memory over the whole point, building
the model included (created in fp32 and cast to bf16, then wrapped); ``resident_memory_bytes`` is what
is allocated when the steps begin (the parameters as FSDP keeps them) and ``step_peak_memory_bytes``
the peak during the warm-up and timed steps (``model_``-prefixed for the whole model on one GPU), each
MAX over ranks; None on CPU.

With ``--issue`` every timed point (the whole model on one GPU too, ``model_``-prefixed) also gets the
host's and the GPU's time apart, as :mod:`validation.runners.tp_issue` takes them: ``--iters`` steps each
issued behind a sleep kernel of ``--hold`` times the point's median iteration, so the host never waits for
the GPU: ``issue_forward_s`` and ``issue_backward_s`` (host seconds to issue the forward and the backward,
FSDP's hooks and collective calls included), ``gpu_s`` (GPU seconds from the sleep's end to the step's
end: kernels and collectives back to back) and ``outlasted_hold`` (steps whose issue outlasted the sleep:
the host waited for the GPU, e.g. in FULL_SHARD's all-gather rate limiter, so those are not the host
alone); medians over the steps, MAX over ranks. On CPU they come from the host clock and mean nothing.
``--free-gathers`` builds every FSDP model without that rate limiter (``limit_all_gathers`` false in the record), so
FULL_SHARD's issue is the host's alone too: FSDP1's host cost per all-gather apart from its per-unit work
(``validation.fsdp_issue``'s gather split; the ``fsdpsplit2`` / ``fsdpsplit4`` campaign phases).

With ``--pair-probe`` every ``llm_fsdp`` point's timed iterations are bracketed, in the same process and
minute, by its own host/compute probe: the whole model of the point's spec on each GPU alone (no FSDP; the
inputs the FSDP prediction's compute fit reads: the plain iteration, ``validation.llm_real.compute_targets``'s
whole-model time, and its forward and backward issued behind a sleep, ``llm_blind.own_probe_targets``' host
time, with the GPU's time alone), once right before the FSDP model is built (``probe_before_``-prefixed fields:
``median_s``, ``p10_s``, ``p90_s``, ``iter_times_s``, ``issue_forward_s``, ``issue_backward_s``, ``gpu_s``,
``outlasted_hold``, ``hold_s``, and ``copy_Bps``: the bandwidth of a 256 MiB device copy right after, bytes read
and written per second, :func:`copy_bandwidth_Bps`) and once right after its steps (``probe_after_``; files of
2026-11-27 14:07-14:09 UTC have no ``copy_Bps``); ``pair_probe`` is true and
``probe_before_unix_s``, ``steps_unix_s`` ``[first, last]`` and ``probe_after_unix_s`` are rank 0's wall clock
at each start (the steps' end too), so each probe is named by the configuration it belongs to and its distance
in time. The FSDP point's own memory fields are taken before the second probe, and peak statistics are reset
after the first, so they stay the FSDP steps'. Records without it read as before.

With ``--profile-step`` every timed point (the whole model on one GPU too, ``model_``-prefixed) also records one
step under ``torch.profiler`` after its timed steps (:mod:`validation.runners.step_timeline`): ``timeline``, the
ranks' timelines in rank order (per-stream GPU intervals by class with their launch times, a summary of busy,
idle and exposed-collective seconds, the profiled step's wall seconds), and ``copy_Bps``: a 256 MiB device copy
right after the point's peak memory is read (:func:`copy_bandwidth_Bps`), so memory bandwidth is measured on the
same lease and minute. Off CUDA ``timeline`` holds None per rank and ``timeline_error`` says why. With
``--profile-host`` (implies ``--profile-step``) each rank's timeline also gets ``host``: one more step profiled
with CPU activity (``step_timeline.host_step``: FSDP's hook ranges, the host's operator and runtime calls by name
and time).

An iteration is ``zero_grad(set_to_none=True)``, forward of one micro-batch per rank (token ids
as inputs and labels) and backward; the optimizer step is not timed (it is local compute that
does not depend on the network). Each rank times every iteration (CUDA events); the record
keeps every iteration's MAX over ranks.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
from dataclasses import dataclass
from typing import Any, Sequence

from simulator.core.errors import InputError
from validation.gpt_spec import GPTSpec, parse_ints
from validation.runners.llm_session import (CommonSettings, Point, Session, add_common_arguments,
                                            common_settings, profile_label, session_entry_point,
                                            summarize)

STRATEGIES = {"full_shard": "FULL_SHARD", "shard_grad_op": "SHARD_GRAD_OP",
              "hybrid_shard": "HYBRID_SHARD", "no_shard": "NO_SHARD"}
"""Strategy names on the command line -> ``torch.distributed.fsdp.ShardingStrategy`` members."""


@dataclass(frozen=True)
class FsdpSettings:
    common: CommonSettings
    strategies: tuple[str, ...]
    replicate: tuple[int, ...]
    issue: bool = False
    hold: float = 3.0
    pair_probe: bool = False
    profile_step: bool = False
    profile_host: bool = False
    limit_all_gathers: bool = True


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.fsdp",
                                description="Time FSDP iterations of a GPT; run under torchrun.")
    p.add_argument("--strategies", default="full_shard,shard_grad_op,hybrid_shard")
    p.add_argument("--replicate", default="1",
                   help="hybrid_shard: comma-separated numbers of replicas (mesh rows)")
    p.add_argument("--issue", action="store_true",
                   help="also time the host's issue (forward, backward) and the GPU alone, behind a sleep")
    p.add_argument("--pair-probe", action="store_true",
                   help="bracket each FSDP point's steps by the whole model's plain and issue probe on each GPU")
    p.add_argument("--profile-step", action="store_true",
                   help="also record one profiled step per point (per-stream GPU intervals, host launches; CUDA "
                        "only) and a 256 MiB device copy's bandwidth")
    p.add_argument("--profile-host", action="store_true",
                   help="--profile-step and one more step profiled with CPU activity: the host's hook ranges, "
                        "operator and runtime calls by name and time")
    p.add_argument("--free-gathers", action="store_true",
                   help="FSDP without its all-gather rate limiter (limit_all_gathers=False): with --issue the host "
                        "then never waits for the GPU, so FULL_SHARD's issue times are the host's alone")
    p.add_argument("--hold", type=float, default=3.0,
                   help="--issue: the sleep lasts this many times the point's median iteration")
    add_common_arguments(p)
    return p


def parse_settings(argv: Sequence[str] | None) -> FsdpSettings:
    a = build_parser().parse_args(argv)
    strategies = tuple(s.strip() for s in a.strategies.split(",") if s.strip())
    for s in strategies:
        if s not in STRATEGIES:
            raise InputError(f"choose from {', '.join(STRATEGIES)}", field="strategies", value=s)
    if not a.hold > 0:
        raise InputError("must be > 0", field="hold", value=a.hold)
    return FsdpSettings(common_settings(a), strategies,
                        tuple(parse_ints(a.replicate, "replicate")), a.issue, a.hold, a.pair_probe,
                        a.profile_step or a.profile_host, a.profile_host, not a.free_gathers)


def plan_points(s: FsdpSettings, world: int) -> list[Point]:
    """Every point in run order (option: ``(strategy, replicate)``); ``replicate`` values that do
    not divide ``world`` are left out."""
    mb = s.common.micro_batch
    out = []
    for spec in s.common.specs:
        out.append(Point(profile_label(spec, mb), "profile", spec))
        for strategy in s.strategies:
            reps = [r for r in s.replicate if world % r == 0] if strategy == "hybrid_shard" else \
                [world if strategy == "no_shard" else 1]
            out += [Point(f"fsdp {strategy} replicate={r} mb={mb} {spec.text}", "fsdp", spec,
                          (strategy, r)) for r in reps]
    return out


def plan_labels(s: FsdpSettings, world: int) -> list[str]:
    return [p.label for p in plan_points(s, world)]


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


def measure_local_model(ses: Session, spec: GPTSpec, micro_batch: int, clock: Any = None,
                        hold: float = 3.0, prefix: str = "model_", memory: bool = True,
                        profile: bool = False, host: bool = False) -> dict[str, Any]:
    """The whole model's iteration on each GPU alone (no FSDP), MAX over ranks; with ``clock``, its host
    issue and GPU times apart too (:func:`validation.runners.tp_issue.issue_fields`). Keys take ``prefix``;
    ``memory`` False leaves the memory fields out and the peak statistics alone (``--pair-probe``); ``profile``
    adds one profiled step (:func:`timeline_fields`; ``host``: with its host step too)."""
    import torch

    from validation.gpt import GPT, token_batch
    from validation.runners.tp_issue import issue_fields

    with torch.device(ses.device):
        model = GPT(spec).to(ses.dtype)
    ids = token_batch(spec, micro_batch, ses.device, torch.Generator().manual_seed(ses.rank))

    def forward() -> Any:
        model.zero_grad(set_to_none=True)
        return model(ids, ids)

    def step() -> None:
        forward().backward()

    if memory:
        ses.steps_memory_start()
    times = ses.time_steps(step)
    fields = ses.steps_memory_fields(prefix) if memory else {}
    issue = {} if clock is None else issue_fields(ses, clock, forward, lambda y: y.backward(),
                                                  hold * statistics.median(times), prefix)
    profiled = timeline_fields(ses, step, prefix, host) if profile else {}
    del model
    gc.collect()
    return {**summarize(times, prefix), **fields, **issue, **profiled}


def timeline_fields(ses: Session, step: Any, prefix: str = "", host: bool = False) -> dict[str, Any]:
    """``--profile-step``: one profiled call of ``step`` on every rank
    (:func:`validation.runners.step_timeline.profile_step`; ``host``: and one with CPU activity), ``timeline``:
    the ranks' timelines in rank order (None off CUDA) and ``timeline_error`` where a rank has none; keys take
    ``prefix``."""
    from validation.runners.step_timeline import profile_step

    mine = profile_step(step, ses.is_cuda, host)
    ranks = ses.gather(mine)
    errors = sorted({r["timeline_error"] for r in ranks if r.get("timeline_error")})
    return {f"{prefix}timeline": [r["timeline"] for r in ranks],
            **({f"{prefix}timeline_error": "; ".join(errors)} if errors else {})}


def paired_probe(ses: Session, spec: GPTSpec, micro_batch: int, clock: Any, hold: float,
                 when: str) -> dict[str, Any]:
    """One ``--pair-probe`` probe (``when``: ``"before"`` or ``"after"``): the whole model of ``spec`` on each GPU
    alone, its plain iteration and its issue behind a sleep (:func:`measure_local_model` without memory fields),
    keys prefixed ``probe_<when>_``, with rank 0's wall clock at its start (``probe_<when>_unix_s``)."""
    import time

    start = time.time()
    fields = measure_local_model(ses, spec, micro_batch, clock, hold, f"probe_{when}_", memory=False)
    return {f"probe_{when}_unix_s": start, **fields, f"probe_{when}_copy_Bps": copy_bandwidth_Bps(ses)}


COPY_BYTES = 256 << 20
"""Bytes one probe copy reads (and writes) on a GPU: far beyond the L2 cache."""


def copy_bandwidth_Bps(ses: Session, size_bytes: int = COPY_BYTES, iters: int = 10) -> float:
    """The GPU's achievable memory bandwidth now: ``y.copy_(x)`` of ``size_bytes`` of random bf16 (as the overlap
    probe's copies, ``validation.runners.overlap``), bytes read plus written over the median of ``iters`` timed
    copies (each the MAX over ranks). On CPU a 4096-element copy: meaningless, kept so the code runs."""
    import torch

    n = max(size_bytes // 2, 1) if ses.is_cuda else 4096
    src = torch.empty(n, dtype=torch.bfloat16, device=ses.device).normal_()
    dst = torch.empty_like(src)
    times = ses.time_steps(lambda: dst.copy_(src), iters=iters, warmup=2)
    moved = 2.0 * src.numel() * src.element_size()
    del src, dst
    return moved / statistics.median(times)


def measure_fsdp(ses: Session, spec: GPTSpec, micro_batch: int, strategy: str,
                 replicate: int, clock: Any = None, hold: float = 3.0, profile: bool = False,
                 host: bool = False, limit_all_gathers: bool = True) -> dict[str, Any]:
    """Iteration times under one sharding strategy, MAX over ranks; with ``clock``, the host issue and GPU
    times apart too (:func:`validation.runners.tp_issue.issue_fields`); ``profile``: one profiled step after
    them (:func:`timeline_fields`; ``host``: with its host step too); ``limit_all_gathers``: FSDP's all-gather
    rate limiter (``--free-gathers`` turns it off)."""
    import time

    import torch
    from torch.distributed.fsdp import BackwardPrefetch, ShardingStrategy
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy

    from validation.gpt import GPT, GPTBlock, token_batch
    from validation.runners.tp_issue import issue_fields

    with torch.device(ses.device):
        model = GPT(spec).to(ses.dtype)
    kwargs: dict[str, Any] = {"auto_wrap_policy": ModuleWrapPolicy({GPTBlock}),
                              "sharding_strategy": ShardingStrategy[STRATEGIES[strategy]],
                              "backward_prefetch": BackwardPrefetch.BACKWARD_PRE,
                              "limit_all_gathers": limit_all_gathers, "device_id": ses.device}
    if strategy == "hybrid_shard":
        from torch.distributed.device_mesh import init_device_mesh
        kwargs["device_mesh"] = init_device_mesh(ses.device.type,
                                                 (replicate, ses.world // replicate),
                                                 mesh_dim_names=("replicate", "shard"))
    fsdp = FSDP(model, **kwargs)
    ids = token_batch(spec, micro_batch, ses.device, torch.Generator().manual_seed(ses.rank))

    def forward() -> Any:
        fsdp.zero_grad(set_to_none=True)
        return fsdp(ids, ids)

    def step() -> None:
        forward().backward()

    ses.steps_memory_start()
    start = time.time()
    times = ses.time_steps(step)
    steps = [start, time.time()]
    memory = ses.steps_memory_fields()
    issue = {} if clock is None else issue_fields(ses, clock, forward, lambda y: y.backward(),
                                                  hold * statistics.median(times))
    profiled = timeline_fields(ses, step, host=host) if profile else {}
    del fsdp, model
    gc.collect()
    return {**summarize(times), **memory, **issue, **profiled, "steps_unix_s": steps}


def run(s: FsdpSettings, ses: Session) -> None:
    from validation.runners.layer_profile import profile_record

    from validation.runners.tp_issue import Clock

    mb = s.common.micro_batch
    clock = Clock(ses.is_cuda) if s.issue or s.pair_probe else None
    for point in ses.points_to_run(plan_points(s, ses.world)):
        spec = point.spec
        common = {**spec.fields(), "micro_batch": mb, "params": spec.params}
        if point.what == "profile":
            fields = profile_record(ses, spec, mb)
            fields.update(measure_local_model(ses, spec, mb, clock if s.issue else None, s.hold,
                                              profile=s.profile_step, host=s.profile_host))
            fields["peak_memory_bytes"] = ses.peak_memory_bytes()
            copy = {"copy_Bps": copy_bandwidth_Bps(ses)} if s.profile_step else {}   # after the peak: not in it
            ses.record("llm_profile", point.label, {**common, **fields, **copy})
            continue
        strategy, replicate = point.option
        before = paired_probe(ses, spec, mb, clock, s.hold, "before") if s.pair_probe else {}
        if s.pair_probe:
            ses.enter_point(point.label)     # the FSDP steps' peak memory, not the probe's whole model
        result = measure_fsdp(ses, spec, mb, strategy, replicate, clock if s.issue else None, s.hold,
                              s.profile_step, s.profile_host, s.limit_all_gathers)
        peak = ses.peak_memory_bytes()
        copy = {"copy_Bps": copy_bandwidth_Bps(ses)} if s.profile_step else {}
        after = paired_probe(ses, spec, mb, clock, s.hold, "after") if s.pair_probe else {}
        units = [spec.embedding_params + spec.head_params] + [spec.layer_params] * spec.layers
        ses.record("llm_fsdp", point.label, {
            **common, "strategy": strategy, "replicate": replicate,
            "shard": ses.world // replicate, "tp": 1, "pp": 1, "dp": ses.world,
            "global_batch": mb * ses.world, "unit_params": units,
            "backward_prefetch": "BACKWARD_PRE", "forward_prefetch": False,
            "limit_all_gathers": s.limit_all_gathers, "param_dtype": ses.dtype_name,
            "reduce_dtype": ses.dtype_name, "optimizer": None,
            **result, "peak_memory_bytes": peak, **copy,
            **({"pair_probe": True, **before, **after} if s.pair_probe else {})})


def main(argv: Sequence[str] | None = None) -> int:
    return session_entry_point("fsdp", parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
