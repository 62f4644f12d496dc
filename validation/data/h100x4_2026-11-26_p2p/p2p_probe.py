# p2p pattern probe: ring vs pair send/recv, sizes 1M..1G, CUDA-event timing; rank 0 prints JSON lines
import json, os, sys, torch, torch.distributed as dist
dist.init_process_group("nccl")
r, n = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
tag = sys.argv[1] if len(sys.argv) > 1 else ""
pats = {"ring": ((r + 1) % n, (r - 1) % n), "pair": (r ^ 1, r ^ 1)}
for pat, (to, frm) in pats.items():
    if pat == "pair" and n % 2:
        continue
    for mib in [int(x) for x in os.environ.get("MIBS", "1,4,16,64,256,1024").split(",")]:
        nb = mib << 20
        s = torch.ones(nb // 4, device="cuda"); v = torch.empty_like(s)
        def call():
            for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, s, to), dist.P2POp(dist.irecv, v, frm)]):
                w.wait()
        for _ in range(3): call()
        torch.cuda.synchronize(); dist.barrier()
        it = max(3, min(50, int(2e9 // nb)))
        ts = []
        for rep in range(5):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(it): call()
            b.record(); torch.cuda.synchronize()
            ts.append(a.elapsed_time(b) / it * 1e3)
        t = torch.tensor([sorted(ts)[2]], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if r == 0:
            print(json.dumps({"tag": tag, "world": n, "pattern": pat, "bytes": nb, "time_us": round(t.item(), 2),
                              "algbw_GBps": round(nb / t.item() / 1e3, 1)}), flush=True)
dist.destroy_process_group()
