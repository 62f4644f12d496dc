"""Run under torchrun (2 gloo ranks): a tensor-parallel GPTBlock, with and without sequence
parallelism, gives the unsharded block's output and input gradient (tests/test_llm_runners.py)."""

from __future__ import annotations

import sys

import torch
import torch.distributed as dist

from validation.gpt import GPTBlock, TensorParallel
from validation.gpt_spec import GPTSpec


def shard_from(full: GPTBlock, part: GPTBlock, rank: int, t: int) -> None:
    """Copy ``rank``'s shard of ``full``'s weights into ``part`` (Megatron's split)."""
    h = full.ln1.weight.shape[0]
    d = h // full.heads
    with torch.no_grad():
        for name in ("ln1", "ln2"):
            getattr(part, name).load_state_dict(getattr(full, name).state_dict())
        part.proj_bias.copy_(full.proj_bias)
        part.fc2_bias.copy_(full.fc2_bias)
        heads = full.heads // t
        # QKV rows are laid out [head, (q, k, v), head_dim]: take this rank's heads
        w = full.qkv.weight.view(full.heads, 3 * d, h)[rank * heads:(rank + 1) * heads]
        b = full.qkv.bias.view(full.heads, 3 * d)[rank * heads:(rank + 1) * heads]
        part.qkv.weight.copy_(w.reshape(-1, h))
        part.qkv.bias.copy_(b.reshape(-1))
        part.proj.weight.copy_(full.proj.weight[:, rank * heads * d:(rank + 1) * heads * d])
        f = full.fc1.weight.shape[0] // t
        part.fc1.weight.copy_(full.fc1.weight[rank * f:(rank + 1) * f])
        part.fc1.bias.copy_(full.fc1.bias[rank * f:(rank + 1) * f])
        part.fc2.weight.copy_(full.fc2.weight[:, rank * f:(rank + 1) * f])


def main() -> int:
    dist.init_process_group("gloo")
    rank, t = dist.get_rank(), dist.get_world_size()
    spec = GPTSpec(hidden=32, layers=1, heads=4, seq=8)
    torch.manual_seed(0)
    full = GPTBlock(spec).double()
    for p in full.parameters():
        torch.nn.init.normal_(p, std=0.3)
    x = torch.randn(8, 2, 32, dtype=torch.float64)
    g = torch.randn(8, 2, 32, dtype=torch.float64)
    xf = x.clone().requires_grad_()
    yf = full(xf)
    yf.backward(g)
    for sp in (False, True):
        part = GPTBlock(spec, TensorParallel(t, rank, None, sp)).double()
        shard_from(full, part, rank, t)
        n = 8 // t
        sl = slice(rank * n, (rank + 1) * n) if sp else slice(None)
        xp = x[sl].clone().requires_grad_()
        yp = part(xp)
        yp.backward(g[sl])
        assert torch.allclose(yp, yf[sl].detach(), atol=1e-9), ("output", sp)
        assert torch.allclose(xp.grad, xf.grad[sl], atol=1e-9), ("input grad", sp)
        f = full.fc1.weight.shape[0] // t
        assert torch.allclose(part.fc1.weight.grad, full.fc1.weight.grad[rank * f:(rank + 1) * f],
                              atol=1e-9), ("fc1 weight grad", sp)
    dist.destroy_process_group()
    print(f"rank {rank}: tensor-parallel block matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
