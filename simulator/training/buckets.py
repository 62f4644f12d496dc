"""DDP gradient buckets, assigned as PyTorch's ``DistributedDataParallel`` does in steady state.

What PyTorch (checked against 2.13) does:

* Iteration 0: with the default ``find_unused_parameters=False`` and ``static_graph=False``,
  DDP puts all parameters of one dtype in a single bucket (size limit ``sys.maxsize``).
* At the end of iteration 0 the C++ ``Reducer`` rebuilds the buckets once
  (``Reducer::rebuild_buckets``): it walks the parameters in the order their gradients became
  ready and calls ``compute_bucket_assignment_by_size`` with the limits
  ``[first_bucket_bytes, bucket_cap_bytes]``. Each dtype (and device) has its own open bucket
  and its own position in that list of limits; a bucket closes as soon as its size reaches
  (``>=``) the current limit, after which the next limit (the last one repeats) applies.
  Buckets still open at the end are appended. No sorting is done on this path, so bucket 0
  holds the first gradients to become ready and is all-reduced first.
* Defaults: ``bucket_cap_mb=25`` (25 MiB) and a first bucket of
  ``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES`` (1 MiB). If the user passes
  ``bucket_cap_mb`` explicitly, the first bucket gets the same cap (see
  :func:`ddp_bucket_limits`).

With several dtypes, PyTorch appends the buckets left open at the end in its hash-map order
(implementation-defined); we append them in the order their first gradient became ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

from simulator.core.errors import InputError
from simulator.training.workload import ParamGrad

DEFAULT_BUCKET_CAP_BYTES = 25 * 2**20
DEFAULT_FIRST_BUCKET_BYTES = 2**20


@dataclass(frozen=True)
class Bucket:
    """One DDP bucket: indices into the workload's parameters (in the order their gradients are
    added), total bytes, dtype, and when its last gradient is ready (seconds from the start of
    backward)."""

    index: int
    param_indices: tuple[int, ...]
    size_bytes: int
    dtype: str
    ready_s: float


def ddp_bucket_limits(bucket_cap_mb: float | None = None) -> tuple[int, int]:
    """``(first_bucket_bytes, bucket_cap_bytes)`` that DDP uses for a ``bucket_cap_mb`` argument
    (MiB; ``None`` = DDP's default: 1 MiB first bucket, then 25 MiB)."""
    if bucket_cap_mb is None:
        return DEFAULT_FIRST_BUCKET_BYTES, DEFAULT_BUCKET_CAP_BYTES
    if isinstance(bucket_cap_mb, bool) or not bucket_cap_mb > 0:
        raise InputError("bucket_cap_mb must be positive", field="bucket_cap_mb",
                         value=bucket_cap_mb)
    cap = int(bucket_cap_mb * 2**20)
    return cap, cap


def gradient_order(params: Sequence[ParamGrad],
                   order: Literal["reverse", "ready"] = "reverse") -> list[int]:
    """Parameter indices in the order their gradients reach DDP.

    ``"reverse"``: reverse registration order (PyTorch's assumption, and what autograd does for
    a plain feed-forward model). ``"ready"``: by ``grad_ready_s`` (ties: reverse registration
    order), which is what the bucket rebuild sees when ready times come from a profile.
    """
    reverse = list(range(len(params) - 1, -1, -1))
    if order == "reverse":
        return reverse
    if order == "ready":
        return sorted(reverse, key=lambda i: params[i].grad_ready_s)
    raise InputError("order must be 'reverse' or 'ready'", field="order", value=order)


def assign_buckets(params: Sequence[ParamGrad],
                   bucket_cap_bytes: int = DEFAULT_BUCKET_CAP_BYTES,
                   first_bucket_bytes: int = DEFAULT_FIRST_BUCKET_BYTES, *,
                   order: Literal["reverse", "ready"] = "reverse") -> tuple[Bucket, ...]:
    """DDP's buckets for ``params`` (registration order), in the order DDP all-reduces them.

    Mirrors ``compute_bucket_assignment_by_size`` as called by the bucket rebuild after the
    first iteration; see the module docstring. ``order`` chooses how the gradient arrival order
    is derived (:func:`gradient_order`).
    """
    for fname, cap in (("bucket_cap_bytes", bucket_cap_bytes),
                       ("first_bucket_bytes", first_bucket_bytes)):
        if isinstance(cap, bool) or not isinstance(cap, int) or cap <= 0:
            raise InputError("bucket size limit must be a positive integer number of bytes",
                             field=fname, value=cap)
    if not params:
        raise InputError("no parameters to bucket", field="params")
    limits = (first_bucket_bytes, bucket_cap_bytes)
    closed: list[list[int]] = []
    open_: dict[str, list[int]] = {}      # dtype -> indices of its open bucket
    size: dict[str, int] = {}
    limit_pos: dict[str, int] = {}
    arrival = gradient_order(params, order)
    for i in arrival:
        dtype = params[i].dtype
        open_.setdefault(dtype, []).append(i)
        size[dtype] = size.get(dtype, 0) + params[i].size_bytes
        pos = limit_pos.setdefault(dtype, 0)
        if size[dtype] >= limits[pos]:
            closed.append(open_[dtype])
            open_[dtype], size[dtype] = [], 0
            limit_pos[dtype] = min(pos + 1, len(limits) - 1)
    rank = {i: r for r, i in enumerate(arrival)}
    closed.extend(sorted((ix for ix in open_.values() if ix), key=lambda ix: rank[ix[0]]))
    return tuple(
        Bucket(k, tuple(ix), sum(params[i].size_bytes for i in ix), params[ix[0]].dtype,
               max(params[i].grad_ready_s for i in ix))
        for k, ix in enumerate(closed))
