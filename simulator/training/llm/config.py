"""How one LLM training job is parallelised and run: a frozen, validated configuration.

Names follow Megatron-LM: ``tp`` (tensor-parallel size), ``pp`` (pipeline stages), ``dp``
(data-parallel replicas), ``global_batch`` and ``micro_batch`` in sequences; the number of
micro-batches per iteration is ``global_batch / (micro_batch * dp)``. ``zero`` is the ZeRO stage
of DeepSpeed / Megatron's distributed optimizer; ``fsdp`` is PyTorch FSDP's sharding strategy
(``full`` = FULL_SHARD, ``grad-op`` = SHARD_GRAD_OP, ``hybrid`` = HYBRID_SHARD); both cannot be
set; ZeRO-2 and ZeRO-3 need ``pp`` 1 (DeepSpeed's PipelineEngine refuses them with pipeline parallelism; ZeRO-1,
Megatron's distributed optimizer, runs with it). The interleaved schedule with one virtual stage is plain 1F1B
(Megatron-LM treats a virtual pipeline size of 1 as none). ``fsdp_shard`` is HYBRID_SHARD's shard group size (data-parallel ranks that shard among themselves;
default: the data-parallel peers inside one server). ``fsdp_divide_ranks`` (no CLI flag) makes FSDP1's gradient
divide factors those of that many ranks instead of ``dp``: FSDP1 on one-rank shard groups (HYBRID_SHARD clamped to
NO_SHARD) still divides by the whole device mesh. ``order`` is how ranks are laid out on the GPUs, innermost first (Megatron: ``tp-dp-pp``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from simulator.core.errors import InputError
from simulator.core.values import switch
from simulator.core.vocabulary import dtype_bytes
from simulator.core.limits import ACCUMULATION_STEPS, check_count


class Recompute(str, Enum):
    NONE = "none"
    SELECTIVE = "selective"     # the attention core (scores, softmax, dropout, weighted sum)
    FULL = "full"               # the whole layer from its input


class Schedule(str, Enum):
    ONE_F_ONE_B = "1f1b"
    INTERLEAVED = "interleaved"


DTYPE_BYTES = {name: dtype_bytes(name) for name in ("bf16", "fp16", "fp8")}
"""The training dtypes ``--dtype`` takes, with their sizes from the vocabulary."""
FSDP_STRATEGIES = ("full", "grad-op", "hybrid")
ORDERS = ("tp-dp-pp", "tp-pp-dp", "dp-tp-pp", "dp-pp-tp", "pp-tp-dp", "pp-dp-tp")


DEFAULT_VIRTUAL_STAGES = 2
"""Model chunks per stage under the interleaved schedule when none is given (CLI, studies, scenarios)."""


def virtual_stages_for(schedule: str, virtual_stages: int | None) -> int:
    """``virtual_stages`` as given, else :data:`DEFAULT_VIRTUAL_STAGES` for the interleaved schedule and 1 for 1F1B."""
    if virtual_stages is not None:
        return virtual_stages
    return DEFAULT_VIRTUAL_STAGES if str(getattr(schedule, "value", schedule)) == Schedule.INTERLEAVED.value else 1


def default_dp(gpus: int, tp: int, pp: int) -> int:
    """The data-parallel size of a job given none: its GPUs / (tp x pp). Errors name the CLI option at
    fault (``--tp``, else ``--pp``), as :class:`TrainConfig`'s do."""
    for name, v in (("--tp", tp), ("--pp", pp)):
        check_count(v, field=name, words="must be a positive integer")
    if gpus % (tp * pp):
        field, value = ("--tp", tp) if gpus % tp else ("--pp", pp)
        raise InputError(f"tp x pp = {tp} x {pp} = {tp * pp} does not divide the {gpus} GPUs (change the "
                         "sizes or the GPU count, or give dp)", field=field, value=value)
    return gpus // (tp * pp)


def check_gpus(tp: int, pp: int, dp: int, gpus: int) -> None:
    """An InputError naming ``--dp`` where tp x pp x dp is not the topology's ``gpus`` (sizes that are not positive
    integers are left to :class:`TrainConfig`, which names them)."""
    sizes = (tp, pp, dp)
    if all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in sizes) and tp * pp * dp != gpus:
        raise InputError(f"--tp x --pp x --dp = {tp} x {pp} x {dp} = {tp * pp * dp} GPUs, but the topology has "
                         f"{gpus} (adjust --nodes/--gpus or the sizes)", field="--dp", value=dp)


def _choice(value: object, allowed, field: str):
    try:
        return allowed(value) if isinstance(allowed, type) else value
    except ValueError:
        names = ", ".join(m.value for m in allowed)  # type: ignore[union-attr]
        raise InputError(f"expected one of {names}", field=field, value=value) from None


@dataclass(frozen=True)
class TrainConfig:
    """One training job's parallelism, batch and memory-saving options."""

    tp: int
    pp: int
    dp: int
    global_batch: int
    micro_batch: int = 1
    schedule: Schedule = Schedule.ONE_F_ONE_B
    virtual_stages: int = 1
    recompute: Recompute = Recompute.NONE
    sequence_parallel: bool = False
    zero: int = 0
    fsdp: str | None = None
    dtype: str = "bf16"
    order: str = "tp-dp-pp"
    flash_attention: bool = False
    fsdp_shard: int | None = None
    fsdp_divide_ranks: int | None = None   # FSDP1's gradient divide factors from this many ranks (default dp)

    def __post_init__(self) -> None:
        for f in ("tp", "pp", "dp", "global_batch", "micro_batch", "virtual_stages"):
            check_count(getattr(self, f), field="--" + f.replace("_", "-"), words="must be a positive integer")
        object.__setattr__(self, "schedule", _choice(self.schedule, Schedule, "--schedule"))
        object.__setattr__(self, "recompute", _choice(self.recompute, Recompute, "--recompute"))
        if self.schedule is Schedule.INTERLEAVED and self.virtual_stages == 1:
            # one model chunk per stage is no interleaving: Megatron-LM sets a virtual pipeline size of 1 to
            # None and runs plain 1F1B (arguments.py), so this is 1F1B, labelled and checked as such
            object.__setattr__(self, "schedule", Schedule.ONE_F_ONE_B)
        if self.global_batch % (self.micro_batch * self.dp):
            raise InputError(f"--global-batch must be a multiple of --micro-batch x --dp "
                             f"({self.micro_batch} x {self.dp})", field="--global-batch", value=self.global_batch)
        ACCUMULATION_STEPS.check(self.global_batch // (self.micro_batch * self.dp), field="--global-batch",
                                 value=self.global_batch)      # micro-batches per step (pipeline schedule length)
        for f in ("sequence_parallel", "flash_attention"):     # the API's "yes" was true, a study's refused
            switch(getattr(self, f), field="--" + f.replace("_", "-"), api=True)
        if isinstance(self.zero, bool) or not isinstance(self.zero, int) or self.zero not in (0, 1, 2, 3):
            raise InputError("expected 0, 1, 2 or 3", field="--zero", value=self.zero)
        if self.fsdp is not None and self.fsdp not in FSDP_STRATEGIES:
            raise InputError(f"expected one of {', '.join(FSDP_STRATEGIES)}", field="--fsdp", value=self.fsdp)
        if self.fsdp is not None and self.zero:
            raise InputError("--zero and --fsdp are alternatives; give one", field="--fsdp", value=self.fsdp)
        if self.zero >= 2 and self.pp > 1:
            raise InputError(f"ZeRO-{self.zero} cannot run with --pp {self.pp}: DeepSpeed's pipeline engine refuses "
                             "ZeRO-2 and ZeRO-3 with pipeline parallelism (use --zero 1, or --pp 1)",
                             field="--zero", value=self.zero)
        if self.fsdp_shard is not None:
            if self.fsdp != "hybrid":
                raise InputError("--fsdp-shard needs --fsdp hybrid", field="--fsdp-shard", value=self.fsdp_shard)
            v = self.fsdp_shard
            if isinstance(v, bool) or not isinstance(v, int) or v < 1 or self.dp % v:
                raise InputError(f"must be a positive divisor of --dp ({self.dp})", field="--fsdp-shard", value=v)
        if self.fsdp_divide_ranks is not None:
            v = self.fsdp_divide_ranks
            if self.fsdp is None or isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError("needs --fsdp and a positive integer", field="fsdp_divide_ranks", value=v)
        if self.dtype not in DTYPE_BYTES:
            raise InputError(f"expected one of {', '.join(DTYPE_BYTES)}", field="--dtype", value=self.dtype)
        if self.order not in ORDERS:
            raise InputError(f"expected one of {', '.join(ORDERS)}", field="--order", value=self.order)
        if self.schedule is Schedule.ONE_F_ONE_B and self.virtual_stages != 1:
            raise InputError("--virtual-stages needs --schedule interleaved", field="--virtual-stages",
                             value=self.virtual_stages)
        if self.schedule is Schedule.INTERLEAVED:
            if self.pp < 2:
                raise InputError("the interleaved schedule needs --pp >= 2", field="--schedule", value="interleaved")
            if self.microbatches % self.pp:
                raise InputError(f"the interleaved schedule needs the number of micro-batches "
                                 f"({self.microbatches} = --global-batch / (--micro-batch x --dp)) to be a multiple "
                                 f"of --pp ({self.pp})", field="--global-batch", value=self.global_batch)
        if self.sequence_parallel and self.tp == 1:
            raise InputError("--sequence-parallel needs --tp > 1", field="--sequence-parallel", value=True)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def microbatches(self) -> int:
        return self.global_batch // (self.micro_batch * self.dp)

    @property
    def chunks(self) -> int:
        """Model chunks per stage (virtual pipeline stages)."""
        return self.virtual_stages if self.schedule is Schedule.INTERLEAVED else 1

    @property
    def dtype_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def shard_params(self) -> bool:
        """Parameters sharded over DP between uses (ZeRO-3, FSDP full/hybrid): gathered per pass."""
        return self.zero == 3 or self.fsdp in ("full", "hybrid")

    @property
    def sharding(self) -> str:
        """A label: ``ddp``, ``zero-1``.. or ``fsdp-full``.."""
        if self.fsdp:
            return f"fsdp-{self.fsdp}"
        return f"zero-{self.zero}" if self.zero else "ddp"

    def as_dict(self) -> dict:
        return {"tp": self.tp, "pp": self.pp, "dp": self.dp, "global_batch": self.global_batch,
                "micro_batch": self.micro_batch, "microbatches": self.microbatches,
                "schedule": self.schedule.value, "virtual_stages": self.chunks,
                "recompute": self.recompute.value, "sequence_parallel": self.sequence_parallel,
                "sharding": self.sharding, "dtype": self.dtype, "order": self.order,
                "flash_attention": self.flash_attention,
                **({"fsdp_shard": self.fsdp_shard} if self.fsdp_shard is not None else {})}
