"""Time a pipeline-parallel GPT (one stage per rank) under the 1F1B schedule.

::

    torchrun --nproc-per-node 2 -m validation.runners.pp \\
        --specs "hidden=2048,layers=8,heads=16,seq=2048" --micro-batch 1 \\
        --micro-batches 1,2,4,8 --iters 10 --warmup 3 --out llm.jsonl

Stage ``r`` of ``pp = world`` holds blocks ``validation.gpt_spec.stage_bounds(layers, pp)[r]``;
stage 0 also the embedding, the last stage the head and loss. One iteration runs ``M``
micro-batches of ``micro_batch`` sequences with Megatron's 1F1B schedule: stage ``r`` does
``min(pp - r - 1, M)`` warm-up forwards, then alternates one forward and one backward, then the
remaining backwards. Activations ``[seq, micro_batch, hidden]`` go to the next stage and their
gradients back with ``torch.distributed.batch_isend_irecv`` (a send paired with the receive that
follows it, as Megatron's ``send_forward_recv_backward`` does). An iteration is
``zero_grad(set_to_none=True)`` plus the schedule; no optimizer step. Each rank times every
iteration (CUDA events); the record keeps every iteration's MAX over ranks.

Every ``kind:"llm_pp"`` record also carries what a bubble prediction needs, measured in the same
launch: ``stage_forward_s`` / ``stage_backward_s`` (per stage, the median time of one
micro-batch's forward / backward on that stage alone, no communication) and ``p2p_s`` (the median
time of one activation sent from stage 0 to stage 1, averaged over back-to-back sends).
Before each spec a ``kind:"llm_profile"`` point times embedding, one block and head alone.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from validation.gpt_spec import GPTSpec, parse_ints, stage_bounds
from validation.runners.llm_session import (CommonSettings, Point, Session, add_common_arguments,
                                            common_settings, profile_label, session_entry_point,
                                            summarize)

P2P_BATCH = 5
"""Back-to-back activation sends per timed repetition of ``p2p_s``."""


@dataclass(frozen=True)
class PpSettings:
    common: CommonSettings
    micro_batches: tuple[int, ...]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.runners.pp",
                                description="Time a 1F1B GPT pipeline; run under torchrun.")
    p.add_argument("--micro-batches", default="1,2,4,8", help="micro-batches per iteration (M)")
    add_common_arguments(p)
    return p


def parse_settings(argv: Sequence[str] | None) -> PpSettings:
    a = build_parser().parse_args(argv)
    return PpSettings(common_settings(a), tuple(parse_ints(a.micro_batches, "micro-batches")))


def plan_points(s: PpSettings, world: int) -> list[Point]:
    """Every point in run order (option: micro-batches per iteration)."""
    mb = s.common.micro_batch
    out = []
    for spec in s.common.specs:
        stage_bounds(spec.layers, world)  # validates stages <= layers
        out.append(Point(profile_label(spec, mb), "profile", spec))
        out += [Point(f"pp pp={world} m={m} mb={mb} {spec.text}", "pp", spec, m)
                for m in s.micro_batches]
    return out


def plan_labels(s: PpSettings, world: int) -> list[str]:
    return [p.label for p in plan_points(s, world)]


def one_f_one_b(stages: int, stage: int, micro_batches: int) -> list[str]:
    """The stage's 1F1B order as ``"F"`` / ``"B"`` steps (each over the next micro-batch)."""
    warm = min(stages - stage - 1, micro_batches)
    steady = micro_batches - warm
    return ["F"] * warm + ["F", "B"] * steady + ["B"] * warm


# --------------------------------------------------------------------------------------------
# Everything below needs torch; it is imported inside the functions.


class Pipeline:
    """This rank's stage of the GPT and the 1F1B iteration over it."""

    def __init__(self, ses: Session, spec: GPTSpec, micro_batch: int) -> None:
        import torch

        from validation.gpt import GPT, token_batch

        self.ses, self.spec, self.micro_batch = ses, spec, micro_batch
        self.stage, self.stages = ses.rank, ses.world
        first, last = stage_bounds(spec.layers, self.stages)[self.stage]
        self.first, self.last = self.stage == 0, self.stage == self.stages - 1
        with torch.device(ses.device):
            self.model = GPT(spec, first, last, with_embedding=self.first,
                             with_head=self.last).to(ses.dtype)
        gen = torch.Generator().manual_seed(ses.settings.seed)
        self.ids = token_batch(spec, micro_batch, ses.device, gen)  # same on every rank
        self.shape = (spec.seq, micro_batch, spec.hidden)
        self._connect()

    def _connect(self) -> None:
        """Open both directions to each neighbour in one symmetric batch before any timed step.

        NCCL connects peers lazily at their first send/recv; when the two sides of a pair post
        differently shaped first batches (1F1B with one micro-batch: stage 0 sends and receives
        at once, stage 1 only receives), NCCL 2.28 fails with "Message truncated" (seen on
        2x H200, 2026-11-26c campaign)."""
        import torch
        import torch.distributed as dist

        ops = []
        if not self.last:
            ops += [dist.P2POp(dist.isend, torch.zeros(1, dtype=self.ses.dtype, device=self.ses.device),
                               self.stage + 1),
                    dist.P2POp(dist.irecv, torch.empty(1, dtype=self.ses.dtype, device=self.ses.device),
                               self.stage + 1)]
        if not self.first:
            ops += [dist.P2POp(dist.irecv, torch.empty(1, dtype=self.ses.dtype, device=self.ses.device),
                               self.stage - 1),
                    dist.P2POp(dist.isend, torch.zeros(1, dtype=self.ses.dtype, device=self.ses.device),
                               self.stage - 1)]
        if ops:
            for req in dist.batch_isend_irecv(ops):
                req.wait()

    def _empty(self) -> Any:
        import torch

        return torch.empty(self.shape, dtype=self.ses.dtype, device=self.ses.device)

    def exchange(self, send_next: Any = None, send_prev: Any = None, recv_prev: bool = False,
                 recv_next: bool = False) -> tuple[Any, Any]:
        """Post the given sends and receives as one batch and wait for them."""
        import torch.distributed as dist

        ops, got_prev, got_next = [], None, None
        if send_next is not None:
            ops.append(dist.P2POp(dist.isend, send_next.contiguous(), self.stage + 1))
        if recv_prev:
            got_prev = self._empty()
            ops.append(dist.P2POp(dist.irecv, got_prev, self.stage - 1))
        if send_prev is not None:
            ops.append(dist.P2POp(dist.isend, send_prev.contiguous(), self.stage - 1))
        if recv_next:
            got_next = self._empty()
            ops.append(dist.P2POp(dist.irecv, got_next, self.stage + 1))
        if ops:
            for req in dist.batch_isend_irecv(ops):
                req.wait()
        return got_prev, got_next

    def forward(self, x: Any) -> Any:
        """One micro-batch through the stage: activations out, or the loss on the last stage."""
        if self.first:
            x = self.ids
        return self.model(x, self.ids) if self.last else self.model(x)

    def iteration(self, micro_batches: int) -> None:
        """``zero_grad`` and one 1F1B pass over ``micro_batches`` micro-batches."""
        self.model.zero_grad(set_to_none=True)
        order = one_f_one_b(self.stages, self.stage, micro_batches)
        inputs: list[Any] = []
        outputs: list[Any] = []
        recv_input = None if self.first else self.exchange(recv_prev=True)[0]
        for k, step in enumerate(order):
            nxt = order[k + 1] if k + 1 < len(order) else None
            if step == "F":
                x = None if recv_input is None else recv_input.requires_grad_()
                y = self.forward(x)
                inputs.append(x)
                outputs.append(y)
                # after a forward: send it on; receive the next input or the gradient to use next
                want_grad = nxt == "B" and not self.last
                want_input = nxt == "F" and not self.first
                send = None if self.last else y.detach()
                got_prev, got_next = self.exchange(send_next=send, recv_prev=want_input,
                                                   recv_next=want_grad)
                recv_input, grad = got_prev, got_next
            else:
                x, y = inputs.pop(0), outputs.pop(0)
                if self.last:
                    y.backward()
                else:
                    y.backward(grad)
                send = None if self.first else x.grad
                want_input = nxt == "F" and not self.first
                want_grad = nxt == "B" and not self.last
                got_prev, got_next = self.exchange(send_prev=send, recv_prev=want_input,
                                                   recv_next=want_grad)
                recv_input, grad = got_prev, got_next

    def stage_times(self, iters: int, warmup: int) -> tuple[float, float]:
        """Median forward and backward seconds of one micro-batch on this stage alone."""
        import torch

        from validation.runners.layer_profile import time_forward_backward

        gen = torch.Generator().manual_seed(1)
        x0 = torch.randn(self.shape, generator=gen).to(self.ses.device, self.ses.dtype)
        grad = None if self.last else torch.randn(self.shape, generator=gen).to(
            self.ses.device, self.ses.dtype)
        make: Callable[[], Any] = ((lambda: None) if self.first
                                   else (lambda: x0.detach().requires_grad_()))
        fwd, bwd = time_forward_backward(self.model, self.forward, make, grad, iters, warmup,
                                         self.ses.is_cuda)
        return statistics.median(fwd), statistics.median(bwd)

    def p2p_time(self, reps: int) -> float:
        """Median seconds of one activation sent from stage 0 to stage 1 (0 on other stages)."""
        from validation.runners.ddp import time_iterations

        if self.stage > 1:
            return 0.0
        buf = self._empty().normal_()

        def batch() -> None:
            for _ in range(P2P_BATCH):
                if self.stage == 0:
                    self.exchange(send_next=buf)
                else:
                    self.exchange(recv_prev=True)

        time_iterations(batch, 1, self.ses.is_cuda)
        return statistics.median(time_iterations(batch, reps, self.ses.is_cuda)) / P2P_BATCH


def run(s: PpSettings, ses: Session) -> None:
    from validation.runners.layer_profile import profile_record

    mb = s.common.micro_batch
    for point in ses.points_to_run(plan_points(s, ses.world)):
        spec, m = point.spec, point.option
        common = {**spec.fields(), "micro_batch": mb}
        if point.what == "profile":
            ses.record("llm_profile", point.label, {**common, **profile_record(ses, spec, mb),
                                                    "peak_memory_bytes": ses.peak_memory_bytes()})
            continue
        pipe = Pipeline(ses, spec, mb)
        result = summarize(ses.time_steps(lambda: pipe.iteration(m)))
        peak = ses.peak_memory_bytes()
        fwd, bwd = pipe.stage_times(s.common.iters, s.common.warmup)
        stage_f, stage_b = zip(*ses.gather((fwd, bwd)))
        p2p = max(ses.gather(pipe.p2p_time(max(3, s.common.iters // 2))))
        ses.record("llm_pp", point.label, {
            **common, "tp": 1, "pp": ses.world, "dp": 1, "micro_batches": m,
            "global_batch": mb * m, "schedule": "1f1b",
            "stage_layers": [b - a for a, b in stage_bounds(spec.layers, ses.world)],
            "activation_bytes": spec.seq * mb * spec.hidden * ses.dtype.itemsize,
            "optimizer": None, **result, "peak_memory_bytes": peak,
            "stage_forward_s": list(stage_f), "stage_backward_s": list(stage_b), "p2p_s": p2p})
        del pipe
        gc.collect()


def main(argv: Sequence[str] | None = None) -> int:
    return session_entry_point("pp", parse_settings, run, argv)


if __name__ == "__main__":
    sys.exit(main())
