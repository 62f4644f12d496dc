"""Limits on every count and number a user can give, so no input runs for hours or eats memory.

Counts (GPUs, NICs, sizes per sweep, grid points, accumulation steps, input file size...) have a
default limit that an environment variable raises (``GPUNETSIM_MAX_GPUS=65536``); the error says
the limit and the variable. Physical quantities (times, bandwidths, sizes, bucket caps) have
fixed ranges: beyond them the arithmetic would overflow to infinity or lose every digit, and no
real cluster is that far out, so they are not raisable.

Every check raises :class:`InputError` naming the field and the value; :func:`require_finite`
is the last line of defence before a number is printed.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Iterable, Mapping

from simulator.core.errors import InputError


@dataclass(frozen=True)
class Limit:
    """A count with a default ceiling that the environment variable ``env`` may raise."""

    what: str          # plural noun phrase: "GPUs in one topology"
    default: int
    env: str

    @property
    def value(self) -> int:
        """The limit in force: ``$env`` if set (a positive integer), else the default."""
        raw = os.environ.get(self.env)
        if raw is None or not raw.strip():
            return self.default
        try:
            v = int(raw.strip().replace("_", ""))
        except ValueError:
            v = 0
        if v < 1:
            raise InputError("must be a positive integer", field=f"environment variable {self.env}", value=raw)
        return v

    def check(self, count: int, *, field: str | None = None, source: str | None = None,
              value: object = None) -> int:
        """``count`` itself, or InputError when it is over the limit."""
        limit = self.value
        if count > limit:
            raise InputError(f"too many {self.what}: {count:,} (the limit is {limit:,}; raise it "
                             f"with the environment variable {self.env}=N)",
                             source=source, field=field, value=value)
        return count


# ------------------------------------------------------------------------------------ counts
INPUT_BYTES = Limit("bytes in one input file", 64 * 2**20, "GPUNETSIM_MAX_INPUT_BYTES")
INPUT_DEPTH = Limit("levels of nesting in one input file", 64, "GPUNETSIM_MAX_INPUT_DEPTH")
INPUT_ITEMS = Limit("values in one input file after expanding YAML aliases", 1_000_000,
                    "GPUNETSIM_MAX_INPUT_ITEMS")
STRING_CHARS = Limit("characters in one string or line of an input file", 1_048_576,
                     "GPUNETSIM_MAX_STRING_CHARS")
GPUS = Limit("GPUs in one topology", 16384, "GPUNETSIM_MAX_GPUS")    # 16384: ~1 s, ~170 MB (docs/speed.md)
NICS = Limit("NICs in one server", 64, "GPUNETSIM_MAX_NICS")
SIZES = Limit("message sizes in one sweep", 4096, "GPUNETSIM_MAX_SIZES")
POINTS = Limit("points in one study", 10_000, "GPUNETSIM_MAX_POINTS")
ACCUMULATION_STEPS = Limit("gradient accumulation steps", 10_000, "GPUNETSIM_MAX_ACCUMULATION_STEPS")
PARAMS = Limit("parameters (gradients) in one workload", 1_000_000, "GPUNETSIM_MAX_PARAMS")
LAYERS = Limit("transformer layers in one model", 1024, "GPUNETSIM_MAX_LAYERS")   # 8x megatron-1t's 128; a chunk's
# passes hold every block's kernels, so 10^8 layers took 24 GB before the OOM killer stopped it (review s24)

ALL: tuple[Limit, ...] = (INPUT_BYTES, INPUT_DEPTH, INPUT_ITEMS, STRING_CHARS, GPUS, NICS, SIZES,
                          POINTS, ACCUMULATION_STEPS, PARAMS, LAYERS)

# ---------------------------------------------------------------- fixed physical ranges (SI)
MAX_TIME_S = 1e6                 # ~11.6 days: one step's time (forward_s, a measured collective...)
MAX_DURATION_S = 1e12            # ~31,700 years: any parsed duration (MTBFs, runs); keeps sums finite
MAX_LATENCY_S = 1.0              # one link's latency
MIN_BW_Bps = 1e3                 # 1 kB/s
MAX_BW_Bps = 1e16                # 10 PB/s
MAX_SIZE_BYTES = 2**60           # 1 EiB
MAX_BUCKET_CAP_MB = 2.0**20      # 1 TiB of gradients in one bucket
MAX_OVERSUBSCRIPTION = 1e3
MAX_BATCH_SIZE = 10**7
MAX_INT = 2**63 - 1              # integers in input files


def check_count(value: object, *, field: str, low: int = 1, limit: Limit | None = None,
                high: int | None = None, source: str | None = None, words: str | None = None) -> int:
    """A whole number ``>= low`` and within ``limit`` (raisable) or ``high`` (fixed): the one rule for a count.

    A value that is not an int (a bool, a float such as 4.0, a string such as "4") is "not a whole number";
    ``words`` replaces the out-of-range message (below ``low``, above ``high``) where a caller's own wording is
    what users read and tests quote, e.g. "must be a positive integer"."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError("must be a whole number", source=source, field=field, value=value)
    if value < low:
        raise InputError(words or f"must be at least {low}", source=source, field=field, value=value)
    if high is not None and value > high:
        raise InputError(words or f"must be at most {high:,}", source=source, field=field, value=value)
    if limit is not None:
        limit.check(value, field=field, source=source, value=value)
    return value


def check_range(value: object, *, field: str, low: float, high: float, low_open: bool = False,
                source: str | None = None, unit: str = "") -> float:
    """A finite number in ``[low, high]`` (``(low, high]`` with ``low_open``), as float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError("must be a number", source=source, field=field, value=value)
    try:
        v = float(value)
    except OverflowError:
        v = math.inf if value > 0 else -math.inf
    if not math.isfinite(v):
        raise InputError("must be a finite number", source=source, field=field, value=value)
    if v < low or (low_open and v == low) or v > high:
        lo = "(" if low_open else "["
        raise InputError(f"out of range {lo}{low:g}, {high:g}]{(' ' + unit) if unit else ''}",
                         source=source, field=field, value=value)
    return v


def require_finite(values: Mapping[str, object] | Iterable[tuple[str, object]], what: str) -> None:
    """Refuse to print a result holding an infinite or NaN number (never a silent number).

    Reaching this means inputs that passed every range check still combine into an overflow;
    the error names the first bad field so the user sees which input to bring down."""
    items = values.items() if isinstance(values, Mapping) else values
    for k, v in items:
        if isinstance(v, float) and not math.isfinite(v):
            raise InputError(f"the {what} is not a finite number: the inputs are too extreme to "
                             f"compute it", field=str(k), value=v)
