"""DDP bucket assignment: hand cases and a cross-check against PyTorch's own function."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.training.buckets import Bucket, assign_buckets, ddp_bucket_limits, gradient_order
from simulator.core.errors import InputError
from simulator.training.workload import ParamGrad
from simulator.training.zoo import zoo_workload

MiB = 2**20


def grads(*sizes, dtype="float32"):
    """Parameters in registration order; the last registered is ready first."""
    n = len(sizes)
    return [ParamGrad(f"p{i}", s, float(n - i), dtype) for i, s in enumerate(sizes)]


def indices(buckets):
    return [b.param_indices for b in buckets]


def test_single_small_model_is_one_bucket():
    b = assign_buckets(grads(100, 200, 300))
    assert b == (Bucket(0, (2, 1, 0), 600, "float32", 3.0),)


def test_reverse_registration_order_and_first_bucket_cap():
    # 0.6 MiB each: first bucket closes at >= 1 MiB (2 params), then 25 MiB applies
    b = assign_buckets(grads(*[600_000] * 6))
    assert indices(b) == [(5, 4), (3, 2, 1, 0)]


def test_exact_boundary_closes_bucket():
    # arrival order is 2, 1, 0: a bucket closes when its size reaches the limit exactly ...
    assert indices(assign_buckets(grads(10, MiB // 2, MiB // 2))) == [(2, 1), (0,)]
    # ... and stays open one byte below it
    assert indices(assign_buckets(grads(10, MiB // 2 - 1, MiB // 2))) == [(2, 1, 0)]


def test_large_tensor_gets_own_bucket_then_cap_repeats():
    b = assign_buckets(grads(10, 30 * MiB, 30 * MiB, 5 * MiB), bucket_cap_bytes=25 * MiB)
    assert indices(b) == [(3,), (2,), (1,), (0,)]
    assert [x.size_bytes for x in b] == [5 * MiB, 30 * MiB, 30 * MiB, 10]


def test_dtypes_bucketed_separately_each_with_own_limits():
    params = [ParamGrad("a", 600_000, 4.0, "float32"), ParamGrad("b", 600_000, 3.0, "float16"),
              ParamGrad("c", 600_000, 2.0, "float32"), ParamGrad("d", 600_000, 1.0, "float16")]
    b = assign_buckets(params)
    assert indices(b) == [(3, 1), (2, 0)]
    assert [x.dtype for x in b] == ["float16", "float32"]
    assert all(x.size_bytes == 1_200_000 for x in b)


def test_bucket_ready_is_latest_param():
    b = assign_buckets(grads(MiB, 10), first_bucket_bytes=MiB)
    assert [x.ready_s for x in b] == [2.0]


def test_ready_order_follows_grad_ready_s():
    params = [ParamGrad("w", 8, 1.0), ParamGrad("b", 8, 2.0)]   # weight grad first
    assert gradient_order(params, "reverse") == [1, 0]
    assert gradient_order(params, "ready") == [0, 1]
    assert indices(assign_buckets(params, order="ready")) == [(0, 1)]


@pytest.mark.parametrize("kw", [{"bucket_cap_bytes": 0}, {"first_bucket_bytes": -1},
                                {"bucket_cap_bytes": 1.5}, {"order": "forward"}])
def test_invalid_arguments(kw):
    with pytest.raises(InputError):
        assign_buckets(grads(10), **kw)


def test_ddp_limits():
    assert ddp_bucket_limits() == (MiB, 25 * MiB)
    assert ddp_bucket_limits(50) == (50 * MiB, 50 * MiB)    # explicit cap: no small first bucket
    with pytest.raises(InputError, match="bucket_cap_mb"):
        ddp_bucket_limits(0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4 * MiB), min_size=1, max_size=40),
       st.integers(1, 8 * MiB), st.integers(1, 8 * MiB))
def test_every_param_in_exactly_one_bucket(sizes, cap, first):
    b = assign_buckets(grads(*sizes), cap, first)
    flat = [i for x in b for i in x.param_indices]
    assert sorted(flat) == list(range(len(sizes)))
    assert sum(x.size_bytes for x in b) == sum(sizes)
    # every bucket but the last reached its limit
    assert all(x.size_bytes >= min(cap, first) for x in b[:-1])


# ---------------------------------------------------------------- cross-check with real torch

def torch_rebuild_buckets(torch, params, limits):
    """What DDP's Reducer::rebuild_buckets computes when gradients arrive in reverse order."""
    dtypes = {"float32": torch.float32, "float16": torch.float16,
              "bfloat16": torch.bfloat16, "float64": torch.float64}
    order = list(range(len(params) - 1, -1, -1))
    tensors = []
    for i in order:
        dt = dtypes[params[i].dtype]
        itemsize = torch.empty((), dtype=dt).element_size()
        tensors.append(torch.empty(params[i].size_bytes // itemsize, dtype=dt, device="meta"))
    result, _ = torch.distributed._compute_bucket_assignment_by_size(tensors, limits, [], order)
    return [tuple(ix) for ix in result]


@pytest.mark.parametrize("model", ["resnet50", "resnet152", "vit-b16", "bert-base", "gpt2",
                                   "gpt2-xl", "llama-7b"])
@pytest.mark.parametrize("cap_mb", [None, 5, 100])
def test_matches_torch(model, cap_mb):
    torch = pytest.importorskip("torch")
    if not torch.distributed.is_available():
        pytest.skip("torch built without distributed")
    params = zoo_workload(model).params
    first, cap = ddp_bucket_limits(cap_mb)
    ours = indices(assign_buckets(params, cap, first))
    assert ours == torch_rebuild_buckets(torch, params, [first, cap])


def test_torch_default_first_bucket_constant():
    torch = pytest.importorskip("torch")
    if not torch.distributed.is_available():
        pytest.skip("torch built without distributed")
    assert torch.distributed._DEFAULT_FIRST_BUCKET_BYTES == ddp_bucket_limits()[0]
