"""The PP runner's iterations replayed from its own measurements: where the last stage's extra time per
micro-batch comes from.

::

    python -m validation.pp_replay

Each ``llm_pp`` record carries what one stage takes alone (``stage_forward_s``, ``stage_backward_s``: one
micro-batch, gradients zeroed before each backward) and one activation's send (``p2p_s``). This replays the
runner's iteration exactly as :mod:`validation.runners.pp` issues it: each rank walks its 1F1B order
(:func:`validation.runners.pp.one_f_one_b`) on one GPU stream; after each pass it posts its sends and receives
as one ``batch_isend_irecv`` group that the next pass waits for, and a group ends ``p2p_s`` after the last of
its operations has been posted by both sides. The host is taken to run ahead (it never delays the GPU). Two
replays per configuration (median over its launches):

* *stages alone*: the passes as measured alone;
* *+ accumulation*: every stage's backward of micro-batches 2..M also adds its gradients into those of the
  earlier ones (``AccumulateGrad``, :data:`validation.llm_real.ACCUMULATE_BYTES_PER_PARAM` per parameter of the
  stage at the memory bandwidth of the campaign's compute fit), which the runner's iteration does and its
  stages alone do not (they zero the gradients before each backward).

Where the stages alone ran at their kernels' speed (their host issued ahead of the GPU), the first replay matches
one micro-batch and falls short by about the accumulation from the second on; where the stages alone were
host-bound (a slow host during that measurement), both replays are too slow (their passes ran faster inside the
pipeline, the host having run ahead while waiting).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

DATA = Path(__file__).resolve().parent / "data"
FILES = ("llm_world2.jsonl", "llm_world4.jsonl")


def replay_s(forward_s: Sequence[float], backward_s: Sequence[float], hop_s: float, micro_batches: int,
             accumulate_s: Sequence[float] = ()) -> float:
    """Seconds of one iteration of the runner's 1F1B pipeline (stage ``s``: ``forward_s[s]``, ``backward_s[s]``,
    plus ``accumulate_s[s]`` for every backward after its first), every send group ending ``hop_s`` after both
    sides posted all its operations."""
    p, m = len(forward_s), micro_batches
    acc = list(accumulate_s) or [0.0] * p
    steps = [_steps(p, s, m) for s in range(p)]
    at, t = [0] * p, [0.0] * p
    posted: dict[tuple, dict[str, float]] = {}
    while any(at[s] < len(steps[s]) for s in range(p)):
        moved = False
        for s in range(p):
            while at[s] < len(steps[s]):
                kind, arg = steps[s][at[s]]
                if kind != "X":
                    t[s] += forward_s[s] if kind == "F" else backward_s[s] + (acc[s] if arg else 0.0)
                    at[s] += 1
                    moved = True
                    continue
                for op, peer, tag in arg:
                    posted.setdefault(_key(s, op, peer, tag), {})["S" if op == "send" else "R"] = t[s]
                sides = [posted[_key(s, op, peer, tag)] for op, peer, tag in arg]
                if any(len(d) < 2 for d in sides):
                    break
                t[s] = max(max(d.values()) for d in sides) + hop_s
                at[s] += 1
                moved = True
        if not moved:
            raise RuntimeError("replay deadlock: the schedule's sends and receives do not pair")
    return max(t)


def _key(s: int, op: str, peer: int, tag: tuple) -> tuple:
    return (s, peer, tag) if op == "send" else (peer, s, tag)


def _steps(p: int, s: int, m: int) -> list[tuple]:
    """Stage ``s``'s passes ("F"/"B", micro-batch) and send groups ("X", ops) in the runner's order
    (``Pipeline.iteration``)."""
    from validation.runners.pp import one_f_one_b

    first, last = s == 0, s == p - 1
    order = one_f_one_b(p, s, m)
    out: list[tuple] = [] if first else [("X", [("recv", s - 1, ("act", 0))])]
    f = b = 0
    for k, step in enumerate(order):
        nxt = order[k + 1] if k + 1 < len(order) else None
        ops = []
        if step == "F":
            out.append(("F", f))
            if not last:
                ops.append(("send", s + 1, ("act", f)))
            f += 1
        else:
            out.append(("B", b))
            if not first:
                ops.append(("send", s - 1, ("grad", b)))
            b += 1
        if nxt == "F" and not first:
            ops.append(("recv", s - 1, ("act", f)))
        if nxt == "B" and not last:
            ops.append(("recv", s + 1, ("grad", b)))
        if ops:
            out.append(("X", ops))
    return out


@dataclass(frozen=True)
class Replayed:
    """One PP configuration: measured (median over launches) and both replays (seconds)."""

    campaign: str
    stages: int
    micro_batches: int
    measured_s: float
    alone_s: float
    accumulated_s: float
    last_accumulate_s: float = 0.0     # the last stage's accumulation per backward after its first

    @property
    def gap_s(self) -> float:
        """Measured minus the replay of the stages alone."""
        return self.measured_s - self.alone_s


def stage_params(run: object) -> list[float]:
    """Parameters of each pipeline stage of ``run`` (the runner's GPT: its blocks, the embedding on the first stage,
    the output layer on the last)."""
    from validation.gpt_spec import stage_bounds
    from validation.llm_real import RealPredictor

    model = RealPredictor.model(run.spec)  # type: ignore[attr-defined]
    bounds = stage_bounds(model.layers, run.pp)  # type: ignore[attr-defined]
    return [(b - a) * model.layer_params() + (model.embedding_params() if s == 0 else 0)  # type: ignore[attr-defined]
            + (model.output_params() if s == len(bounds) - 1 else 0)  # type: ignore[attr-defined]
            for s, (a, b) in enumerate(bounds)]


def replays(path: Path) -> list[Replayed]:
    """Every PP configuration of a campaign file, replayed (the memory bandwidth of its compute fit:
    :func:`validation.llm_real.fitted_predictor`, whose compute-only targets need no collective calibration)."""
    from simulator.training.llm.compute import ComputeModel
    from validation.llm_real import ACCUMULATE_BYTES_PER_PARAM, fitted_predictor
    from validation.llm_records import group_runs, read_llm_records

    records = read_llm_records([path])
    runs = [r for r in records.runs if r.runner == "pp"]
    if not runs:
        return []
    pred, _, _ = fitted_predictor(records, "h200-nvlink")
    mem_Bps = ComputeModel(pred.gpu, "bf16", pred.compute).mem_Bps  # type: ignore[arg-type]
    p = runs[0].pp
    fwd = [statistics.median(r.stage_forward_s[s] for r in runs) for s in range(p)]
    bwd = [statistics.median(r.stage_backward_s[s] for r in runs) for s in range(p)]
    hop = statistics.median(r.p2p_s for r in runs)  # type: ignore[type-var]
    acc = [n * ACCUMULATE_BYTES_PER_PARAM / mem_Bps for n in stage_params(runs[0])]
    return [Replayed(path.parent.name, p, g.first.micro_batches, g.median_s,  # type: ignore[arg-type]
                     replay_s(fwd, bwd, hop, g.first.micro_batches),  # type: ignore[arg-type]
                     replay_s(fwd, bwd, hop, g.first.micro_batches, acc), acc[-1])  # type: ignore[arg-type]
            for g in group_runs(runs)]


def kernel_speed(rows: Sequence[Replayed]) -> bool:
    """Whether a campaign's stages alone ran at their kernels' speed: its replay of them falls short of the
    measured iteration at two micro-batches, the first with accumulation (a host-bound measurement alone
    replays too slow instead)."""
    two = [r for r in rows if r.micro_batches == 2]
    return bool(two) and two[0].alone_s < two[0].measured_s


def summary_lines(by_campaign: dict[str, list[Replayed]]) -> list[str]:
    """What the table shows, computed (docs/validation-runners.md quotes these lines): per micro-batch gaps of
    the campaigns whose stages alone ran at kernel speed, the last stage's accumulation, and both replays'
    errors split by that."""
    fast = {k: v for k, v in by_campaign.items() if kernel_speed(v)}
    slow = {k: v for k, v in by_campaign.items() if k not in fast}

    def span(xs: list[float], scale: float = 1e3, fmt: str = ".2f") -> str:
        return f"{min(xs) * scale:{fmt}} to {max(xs) * scale:{fmt}}"

    second, further = [], []
    for v in fast.values():
        gap = {r.micro_batches: r.gap_s for r in v}
        second.append(gap[2] - gap.get(1, 0.0))
        m = max(gap)
        if m > 2:
            further.append((gap[m] - gap[2]) / (m - 2))
    acc = [v[0].last_accumulate_s for v in by_campaign.values()]
    err = [r.accumulated_s / r.measured_s - 1 for v in fast.values() for r in v]
    err_slow = [r.accumulated_s / r.measured_s - 1 for v in slow.values() for r in v]
    out = [f"Stages alone at kernel speed (their replay falls short at 2 micro-batches): {', '.join(fast)}.",
           f"There the 2nd micro-batch costs {span(second)} ms more than the stages alone replay, each further one "
           f"{span(further)} ms;",
           f"the last stage's accumulation is {span(acc)} ms per micro-batch on every campaign;",
           f"with it the replay is {span(err, 100, '+.1f')}% off the measured iterations."]
    if slow:
        out.append(f"Host-bound stages alone ({', '.join(slow)}): with the accumulation "
                   f"{span(err_slow, 100, '+.1f')}%.")
    return out


def campaign_files() -> list[Path]:
    """Every committed campaign file with PP runs."""
    return [folder / name for folder in sorted(DATA.iterdir()) for name in FILES
            if (folder / name).exists() and '"llm_pp"' in (folder / name).read_text()]


def main(argv: Sequence[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m validation.pp_replay", description=__doc__.splitlines()[0]).parse_args(argv)
    print("campaign | stages | M | measured ms | stages alone ms (err %) | + accumulation ms (err %)")
    by_campaign: dict[str, list[Replayed]] = {}
    for path in campaign_files():
        for r in replays(path):
            by_campaign.setdefault(r.campaign, []).append(r)
            print(f"{r.campaign} | {r.stages} | {r.micro_batches} | {r.measured_s * 1e3:.2f} | "
                  f"{r.alone_s * 1e3:.2f} ({(r.alone_s / r.measured_s - 1) * 100:+.1f}) | "
                  f"{r.accumulated_s * 1e3:.2f} ({(r.accumulated_s / r.measured_s - 1) * 100:+.1f})")
    print("\n".join(["", *summary_lines(by_campaign)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
