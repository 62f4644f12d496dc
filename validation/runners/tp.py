"""Time Megatron-style tensor-parallel transformer blocks over all ranks of a launch.

::

    torchrun --nproc-per-node 2 -m validation.runners.tp \\
        --specs "hidden=2048,layers=4,heads=16,seq=2048;hidden=4096,layers=4,heads=32,seq=2048" \\
        --micro-batch 1 --sequence-parallel off,on --iters 10 --warmup 3 --out llm.jsonl

The tensor-parallel group is the whole launch (``tp = world``). The model is ``layers`` blocks of
:class:`validation.gpt.GPTBlock` sharded ``tp`` ways (column-parallel QKV and first MLP
linear, row-parallel projection and second MLP linear, explicit ``torch.distributed``
collectives), without embedding or head: the input is a fixed random activation ``[seq,
micro_batch, hidden]`` (``[seq / tp, ...]`` with sequence parallelism, sharded along the
sequence) and backward starts from a fixed random output gradient. An iteration is
``zero_grad(set_to_none=True)``, forward and backward; no optimizer step.

Per block, forward and backward each run two all-reduces of ``seq x micro_batch x hidden``
elements; with sequence parallelism, forward two all-gathers and two reduce-scatters of that
size, backward four all-gathers (two re-gather the sequence shards the column-parallel linears
kept, for their weight gradients, as Megatron does) and two reduce-scatters. Each ``kind:"llm_tp"``
record has the iteration times with communication and, as ``nocomm_*``, the same loop with the
collectives replaced by local stand-ins (compute only), and ``collectives``: every collective of
one iteration as ``{op, bytes, count}`` (nccl-tests sizes: the whole gathered buffer).
Before each spec, a ``kind:"llm_profile"`` point times one sharded block alone (no communication).
"""

from __future__ import annotations

import argparse
import gc
import sys
from dataclasses import dataclass
from typing import Any, Sequence

from simulator.core.errors import InputError
from simulator.core.vocabulary import dtype_bytes
from validation.gpt_spec import GPTSpec
from validation.runners.llm_session import (CommonSettings, Point, Session, add_common_arguments,
                                            common_settings, profile_label, session_entry_point,
                                            summarize)

@dataclass(frozen=True)
class TpSettings:
    common: CommonSettings
    sequence_parallel: tuple[bool, ...]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.tp",
                                description="Time tensor-parallel GPT blocks; run under torchrun.")
    p.add_argument("--sequence-parallel", default="off,on", help="comma-separated off/on")
    add_common_arguments(p)
    return p


def parse_settings(argv: Sequence[str] | None) -> TpSettings:
    a = build_parser().parse_args(argv)
    sp = []
    for item in filter(None, (x.strip() for x in a.sequence_parallel.split(","))):
        if item not in ("off", "on"):
            raise InputError("write off and/or on", field="sequence-parallel", value=item)
        sp.append(item == "on")
    if not sp:
        raise InputError("no values given", field="sequence-parallel", value=a.sequence_parallel)
    return TpSettings(common_settings(a), tuple(sp))


def plan_points(s: TpSettings, world: int) -> list[Point]:
    """Every point in run order (option: sequence parallelism on/off)."""
    mb = s.common.micro_batch
    out = []
    for spec in s.common.specs:
        out += [Point(profile_label(spec, mb, world, sp), "profile", spec, sp)
                for sp in s.sequence_parallel]
        out += [Point(f"tp tp={world} sp={'on' if sp else 'off'} mb={mb} {spec.text}", "tp",
                      spec, sp) for sp in s.sequence_parallel]
    return out


def plan_labels(s: TpSettings, world: int) -> list[str]:
    return [p.label for p in plan_points(s, world)]


def collectives(spec: GPTSpec, micro_batch: int, tp: int, sp: bool, dtype: str
                ) -> list[dict[str, Any]]:
    """Every collective of one iteration (forward and backward of all blocks)."""
    if tp == 1:
        return []
    size = spec.seq * micro_batch * spec.hidden * dtype_bytes(dtype)
    if sp:
        return [{"op": "all_gather", "bytes": size, "count": 6 * spec.layers},
                {"op": "reduce_scatter", "bytes": size, "count": 4 * spec.layers}]
    return [{"op": "all_reduce", "bytes": size, "count": 4 * spec.layers}]


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


def measure_tp(ses: Session, spec: GPTSpec, micro_batch: int, sp: bool, comm: bool
               ) -> list[float]:
    """Iteration times of the sharded blocks (``comm=False``: collectives stubbed)."""
    import torch

    from validation.gpt import GPT, TensorParallel

    tp = TensorParallel(ses.world, ses.rank, None, sp, comm)
    with torch.device(ses.device):
        model = GPT(spec, with_embedding=False, with_head=False, tp=tp).to(ses.dtype)
    gen = torch.Generator().manual_seed(ses.settings.seed)
    seq = spec.seq // ses.world if sp else spec.seq
    x0 = torch.randn(seq, micro_batch, spec.hidden, generator=gen).to(ses.device, ses.dtype)
    g = torch.randn(seq, micro_batch, spec.hidden, generator=gen).to(ses.device, ses.dtype)

    def step() -> None:
        model.zero_grad(set_to_none=True)
        model(x0.detach().requires_grad_()).backward(g)

    times = ses.time_steps(step)
    del model
    gc.collect()
    return times


def run(s: TpSettings, ses: Session) -> None:
    from validation.gpt import TensorParallel
    from validation.runners.layer_profile import profile_record

    mb = s.common.micro_batch
    for point in ses.points_to_run(plan_points(s, ses.world)):
        spec, sp = point.spec, point.option
        common = {**spec.fields(), "micro_batch": mb, "tp": ses.world, "sequence_parallel": sp}
        if point.what == "profile":
            tp = TensorParallel(ses.world, ses.rank, None, sp, comm=False)
            ses.record("llm_profile", point.label, {**common, **profile_record(ses, spec, mb, tp),
                                                    "peak_memory_bytes": ses.peak_memory_bytes()})
            continue
        with_comm = summarize(measure_tp(ses, spec, mb, sp, True))
        peak = ses.peak_memory_bytes()
        nocomm = summarize(measure_tp(ses, spec, mb, sp, False), "nocomm_")
        ses.record("llm_tp", point.label, {
            **common, "pp": 1, "dp": 1, "global_batch": mb, "block_params": spec.layer_params,
            "embedding": False, "head": False, "optimizer": None,
            "collectives": collectives(spec, mb, ses.world, sp, ses.dtype_name),
            **with_comm, **nocomm, "peak_memory_bytes": peak})


def main(argv: Sequence[str] | None = None) -> int:
    return session_entry_point("tp", parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
