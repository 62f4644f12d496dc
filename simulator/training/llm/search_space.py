"""The space of parallel plans for one model on one GPU count: pure enumeration, no simulation.

A plan is a :class:`~simulator.training.llm.config.TrainConfig`: TP x PP x DP that multiply to
the GPU count, a micro-batch size that divides the per-replica batch, a pipeline schedule, an
activation recomputation mode and a data-parallel sharding strategy. :func:`enumerate_plans`
lists the valid ones (divisibility of heads, layers and batches checked by the same code that
simulates them); :func:`memory_per_gpu` decides which fit before anything is simulated.

Choices where the rules of thumb are clear and the space would otherwise double for nothing:

* sequence parallelism is on whenever TP > 1 (same communication volume as plain TP, less
  activation memory; Korthikanti et al. 2022);
* ZeRO-2 and ZeRO-3 never meet pipeline parallelism (DeepSpeed's PipelineEngine refuses them;
  :class:`TrainConfig` does too), and FSDP full/hybrid are used without it (Megatron does not
  combine parameter sharding with PP); a sharding other than DDP needs DP > 1 (FSDP on one rank
  shards nothing), and HYBRID_SHARD shard groups of more than one rank (:mod:`.plan_search`);
* interleaving uses ``virtual_stages`` chunks per stage (default 2) and needs the micro-batches
  to be a multiple of PP (Megatron's rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from simulator.core.errors import InputError
from simulator.core.limits import check_count
from simulator.training.llm.config import FSDP_STRATEGIES, Recompute, Schedule, TrainConfig
from simulator.training.llm.layer import check_divisible
from simulator.training.llm.model import TransformerSpec

SHARDINGS = ("ddp", "zero-1", "zero-2", "zero-3") + tuple(f"fsdp-{s}" for s in FSDP_STRATEGIES)
_PARAM_SHARDED = ("fsdp-full", "fsdp-hybrid")     # ZeRO-2/3 with PP: refused by TrainConfig itself


@dataclass(frozen=True)
class SearchSpace:
    """Which values each axis may take (the CLI's defaults)."""

    max_tp: int = 8
    max_pp: int = 64
    micro_batches: tuple[int, ...] = (1, 2, 4, 8)
    schedules: tuple[Schedule, ...] = (Schedule.ONE_F_ONE_B, Schedule.INTERLEAVED)
    virtual_stages: int = 2
    recompute: tuple[Recompute, ...] = (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)
    shardings: tuple[str, ...] = ("ddp", "zero-1", "fsdp-full")
    sequence_parallel: bool = True
    flash_attention: bool = False
    dtype: str = "bf16"
    only: frozenset[tuple[int, int, int, int]] | None = None   # only these (tp, pp, dp, micro_batch), e.g. measured

    def __post_init__(self) -> None:
        for f in ("max_tp", "max_pp", "virtual_stages"):
            check_count(getattr(self, f), field="--" + f.replace("_", "-"), words="must be a positive integer")
        if not self.micro_batches:
            raise InputError("expected at least one value", field="--micro-batches", value="")
        for m in self.micro_batches:        # the item at fault, not the tuple: '(got (0,))' read as Python
            check_count(m, field="--micro-batches", words="must be a positive integer")
        for s in self.shardings:
            if s not in SHARDINGS:
                raise InputError(f"expected some of {', '.join(SHARDINGS)}", field="--sharding", value=s)
        object.__setattr__(self, "schedules", tuple(Schedule(s) for s in self.schedules))
        object.__setattr__(self, "recompute", tuple(Recompute(r) for r in self.recompute))


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _sharding_kwargs(name: str) -> dict:
    if name.startswith("fsdp-"):
        return {"zero": 0, "fsdp": name[len("fsdp-"):]}
    return {"zero": 0 if name == "ddp" else int(name[-1]), "fsdp": None}


def enumerate_plans(model: TransformerSpec, gpus: int, global_batch: int,
                    space: SearchSpace = SearchSpace()) -> Iterator[TrainConfig]:
    """Every valid plan of ``space`` for ``model`` on ``gpus`` GPUs (no memory check), in a fixed order."""
    for tp in _divisors(gpus):
        if tp > space.max_tp:
            break
        for pp in _divisors(gpus // tp):
            if pp > min(space.max_pp, model.layers):
                break
            dp = gpus // (tp * pp)
            yield from _plans_of_shape(model, tp, pp, dp, global_batch, space)


def _plans_of_shape(model: TransformerSpec, tp: int, pp: int, dp: int, global_batch: int,
                    space: SearchSpace) -> Iterator[TrainConfig]:
    for mb in space.micro_batches:
        if global_batch % (mb * dp) or space.only is not None and (tp, pp, dp, mb) not in space.only:
            continue
        m = global_batch // (mb * dp)
        for sched in space.schedules:
            v = space.virtual_stages if sched is Schedule.INTERLEAVED else 1
            if sched is Schedule.INTERLEAVED and (pp < 2 or v < 2 or m % pp or model.layers < pp * v):
                continue
            for rc in space.recompute:
                for sh in space.shardings:
                    if sh != "ddp" and dp == 1 or sh in _PARAM_SHARDED and pp > 1:
                        continue
                    try:
                        c = TrainConfig(tp, pp, dp, global_batch, mb, sched, v, rc,
                                        space.sequence_parallel and tp > 1, dtype=space.dtype,
                                        flash_attention=space.flash_attention, **_sharding_kwargs(sh))
                        check_divisible(model, c)
                    except InputError:
                        continue
                    yield c
