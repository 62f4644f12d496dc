#!/usr/bin/env bash
# The real-GPU measurement campaign behind validation/data/<machine>_<date>/ (see docs/accuracy.md).
# Usage on a GPU host, from the repository root:  bash validation/scripts/gpu_campaign.sh PHASE OUTDIR
#   PHASE = coll2   collectives on 2 GPUs: every op (default variant) + all_reduce under NCCL variants
#           coll4   the same on 4 GPUs (coll8 / ddp8: the same on 8 GPUs)
#           ddp     DDP iteration times on 4 GPUs over bucket caps (repeated launches) + 1-GPU profiles
#           rerun2, rerun4   collectives on 2 or 4 GPUs again with 15 repetitions per point (robust medians),
#                   default variant for every op plus all_reduce under NCCL_ALGO=allreduce:Tree
#           llm2, llm4   GPT training under FSDP (full_shard, shard_grad_op, hybrid_shard), tensor parallelism
#                   (with and without sequence parallelism) and a 1F1B pipeline on 2 or 4 GPUs, with the
#                   single-GPU layer profiles that predict them (3 launches each, at most 290 s of launches),
#                   after one 50 s pass of bf16 collectives at their message sizes (1 MiB - 1 GiB); <= 6 min in all
#           fsdp2, fsdp4   FSDP NO_SHARD (whole copies, each unit's gradients all-reduced over all GPUs: the
#                   data-parallel case llm's hybrid_shard replicate=world does not measure) beside FULL_SHARD
#                   again, with the layer profiles, on 2 or 4 GPUs; 3 launches, at most 240 s of launches
#           fsdpissue2, fsdpissue4   where FSDP's time goes: the fsdp phase's specs under NO_SHARD (each unit's
#                   gradients all-reduced), NO_SHARD without communication (hybrid_shard, replicate = world: one-rank
#                   shard groups) and FULL_SHARD, with the layer profiles; every point (the whole model on one GPU
#                   too) also issued behind a sleep kernel (fsdp --issue): the host's forward and backward issue
#                   times and the GPU's time alone; 3 launches, at most 240 s of launches (about 2 minutes)
#           fsdppair2, fsdppair4   the fsdp phase's configurations (NO_SHARD, FULL_SHARD; the layer profiles too), each
#                   FSDP point's timed steps bracketed in the same minute by its own host/compute probe (fsdp
#                   --pair-probe: the whole model on each GPU alone, plain iteration and issue behind a sleep, right
#                   before and right after, probe_before_* / probe_after_* in the point's record), so a prediction
#                   need not carry the host's speed from another phase (issue 14: the host drifts over minutes);
#                   3 launches, at most 200 s of launches (fsdppair_world<n>.jsonl)
#           fsdpprof2, fsdpprof4   the fsdppair phase (NO_SHARD, FULL_SHARD, paired probes) with one profiled step per
#                   point (fsdp --profile-step: per-stream kernel, collective and copy intervals with their launch
#                   times, the whole model on one GPU too) and a 256 MiB device copy per point: where FULL_SHARD's
#                   time goes (issue 14); 3 launches, at most 200 s of launches (fsdpprof_world<n>.jsonl)
#           fsdphost2  fsdpprof2 with SHARD_GRAD_OP too and fsdp --profile-host: one more step per point profiled
#                   with CPU activity (FSDP's hook ranges, the host's operator and runtime calls by name and time):
#                   what the host does at each unit boundary (issue 14); 3 launches, at most 200 s of launches
#                   (fsdpprof_world2.jsonl)
#           fsdpsplit2, fsdpsplit4   FSDP1's host cost per all-gather apart from its per-unit work (issue 14): the
#                   fsdpissue phase's points with SHARD_GRAD_OP too and every FSDP model without the all-gather rate
#                   limiter (fsdp --free-gathers), so FULL_SHARD's issue behind the sleep is the host's alone
#                   (validation.fsdp_issue's gather split); 3 launches, at most FSDPSPLIT_BUDGET_S (default 150) s of
#                   launches (fsdpsplit_world<n>.jsonl)
#           dp      torch DataParallel vs DDP on all GPUs (3 separate launches, each with the single-GPU
#                   profile and DataParallel on 1..G GPUs), then gloo all_reduce on CPU tensors (2 and 4
#                   processes) and CUDA tensors (G processes), 3 launches each, interleaved; about 5 minutes
#           dpdiag  DataParallel only, all GPUs, 3 launches (no Gloo): the dp phase's records plus, per model, the
#                   forward's launch time from a fresh and from a persistent thread (1 GPU) and the replicas'
#                   forwards on persistent threads (2..G GPUs), which separate parallel_apply's per-thread
#                   cold caches from GIL contention, the two-thread pair diagnostic (1 GPU, as dppair) on the
#                   same host, and the backward in two parts (replicas' backward alone, the gradient reduce onto
#                   GPU 0 alone, 2..G GPUs); about 5 minutes on 4 GPUs (3 launches of at most 150 s)
#           dppair  DataParallel's single-GPU profiles only (one process, GPU 0), 3 launches: the thread diagnostics
#                   with two threads launching at once (forward_fresh_pair_host_s, forward_warm_pair_host_s), the
#                   share of the fresh-thread cost that queues between threads; about 1.5 minutes
#           overlap  a collective beside compute kernels (validation.runners.overlap): reduce_scatter,
#                   all_gather and all_reduce of 64 MiB and 384 MiB beside memory-bound copies and bf16
#                   matmuls, alone and overlapped, on 4 then 2 GPUs, 2 launches each; about 2 minutes
#           ddpcompute  why a single-GPU profile's compute differs from a DDP run's (issue 10): on 2 then 4 GPUs,
#                   per model 3 interleaved rounds of a plain step, the profiler's hooked step, the step queued
#                   behind a GPU sleep (GPU time alone + host issue time), DDP no_sync and DDP sync (cap 25 MB),
#                   10 timed steps each (validation.runners.ddp_compute); about 3 minutes
#           gloo38  Gloo all_reduce on CPU tensors with 2, 3 and 8 processes (no GPU needed), 2 launches each,
#                   interleaved: process counts never measured before, to test the step-latency law; about 2 minutes
#           tpissue  where a TP block loop's time goes (validation.runners.tp_issue): the llm4 phase's TP specs, the
#                   unsharded block alone and the block over all GPUs (tp_issue_world<G>.jsonl) with and without sequence parallelism, with the
#                   collectives and with the stand-ins: loop time, the host's issue time (forward, backward) behind
#                   a sleep kernel, the GPU's time alone, kernels per class (one profiled iteration), and the host's
#                   issue time per call of single collectives and stand-ins; 3 launches (TPISSUE_LAUNCHES=N for N);
#                   about 1 minute per launch
#           latency  small collectives (every op, 4 B - 256 KiB in steps of 16x, default variant, 15 repetitions,
#                   every rank's time kept) on 2, 3 and 4 GPUs, interleaved 2,3,4,2,3,4 (one file per launch):
#                   a held-out test of the per-rank cost that calibrate reads off 2-GPU repetitions (issue 10),
#                   whether the ranks' slow repetitions coincide, and a world size never measured; about 5 minutes
#           lathost  the latency phase again (its records now carry every rank's host issue time per call,
#                   rank_host_times_s: host-bound or GPU-bound, and which rank's host was slow), then one short
#                   launch per world size (2, 3, 4; 1 repetition of 5 calls per point) with NCCL_DEBUG=INFO,
#                   whose per-call lines name NCCL's algorithm, protocol and channels for every op and size
#                   (nccl_w{n}.*.log); about 4 minutes (issue 10: the 4-GPU jump of the gather-like ops)
#           lathost2  lathost on 2 GPUs only (two launches + the NCCL_DEBUG=INFO one); about 1.5 minutes
#           bwfine  the bandwidth regime's knee (issue 10: the 2 -> 4 GPU errors at 16-64 MiB): all_reduce, all_gather,
#                   all_to_all, send_recv (default variant) and all_reduce under nop2p (NCCL_P2P_DISABLE=1: the SHM
#                   path), 2 MiB - 128 MiB in steps of sqrt(2), 5 repetitions, on 2 and 4 GPUs interleaved 2,4,2,4
#                   (bwfine_world{n}_L{i}.jsonl), then one short launch per world size (2, 3, 4) with NCCL_DEBUG=INFO
#                   whose per-call lines name NCCL's algorithm, protocol and channels (nccl_bw_w{n}.*.log); about 4 minutes
#           slope   why the ring ops run 16-64 MiB slower per byte than 256 MiB - 1 GiB (issue 10, validation.slope_probe):
#                   all_reduce and broadcast (the control: one slice a chunk), 8 MiB - 1 GiB in steps of sqrt(2), 3
#                   repetitions, two passes (slope_world<n>_L<i>.jsonl), each one launch per variant and world size (2,
#                   and 4 where there are 4 GPUs): default, buf16 / buf1 (NCCL_BUFFSIZE 16 MiB / 1 MiB: 4x and 1/4
#                   NCCL's chunk), pinned (NCCL_ALGO=Ring NCCL_PROTO=Simple, 24 channels), it50 (50 calls a repetition
#                   at every size instead of ~50 ms), ch12 (12 channels), alloc (PyTorch's expandable segments: tensors
#                   mapped by cuMemMap, not cudaMalloc); nvidia-smi samples SM/memory clocks, power and temperature
#                   every 100 ms throughout (smi.csv); about 4 minutes on 2 GPUs; SLOPE_VARIANTS="v1 v2 ..." runs fewer
#           peercopy  whether the ring ops' 16-64 MiB per-byte step needs NCCL (issue 10, validation.slope_probe.peer_copy):
#                   GPU 0 -> GPU 1 copies without NCCL (validation.runners.peer_copy: copy engine and an SM kernel storing
#                   into the peer, one way and both ways at once, and both inside GPU 0 as the HBM-only control; 5
#                   repetitions; peer_L<i>.jsonl) beside NCCL all_reduce and all_gather on 2 GPUs (3 repetitions;
#                   nccl_world2_L<i>.jsonl), 4 MiB - 1 GiB in steps of sqrt(2), two passes (NCCL first in pass 2),
#                   nvidia-smi samples as slope (smi.csv); about 1.5 minutes
#           peerraw  the same with the copies issued through CUDA directly (CuPy: cudaMemcpyPeerAsync, a raw copy
#                   kernel on the whole GPU and on 24 blocks; peerraw_L<i>.jsonl, passes 3 and 4, NCCL beside them in
#                   nccl_world2_L3/L4): the torch copies' host issue (~50 us a call) sets their pace below ~20 MiB
#           l2      whether the GPU's L2 holds reused buffers below ~32 MiB (issue 10, validation.l2_probe): all_reduce,
#                   all_gather, broadcast, 4 MiB - 128 MiB in steps of sqrt(2), 3 repetitions, each point once on one
#                   buffer set reused by every call (l2_reuse_world<n>_L<i>.jsonl, as nccl-tests) and once rotating
#                   distinct sets of at least 1 GiB per rank together (--rotate-bytes 1G: l2_rot_*); two passes,
#                   reuse and rot launches interleaved (order swapped in pass 2), on 2 and (where there are 4 GPUs)
#                   4 GPUs; about 3 minutes with 4 GPUs
#           proto   which protocol / channel count the ring ops' 8-64 MiB points run at (issue 10, validation.proto_probe):
#                   all_reduce, all_gather, reduce_scatter, float32, 8 - 64 MiB in steps of sqrt(2) (7 sizes), 6
#                   repetitions of 40 calls, one launch per (pass, variant, world size), 4 then 2 GPUs, variants
#                   interleaved: default, simple (NCCL_ALGO=Ring NCCL_PROTO=Simple), ll128 (Ring, LL128), ch12 / ch32
#                   (NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS=12 / 32); pass 1 with NCCL_DEBUG=INFO (INIT,ENV,TUNING: every
#                   call's algorithm, protocol and channels, folded into counts, proto_nccl_<variant>_w<n>.txt), pass 2
#                   without it (4 GPUs first); no launch starts after PROTO_DEADLINE_S (default 175) seconds
#           gemmnccl  compute kernels beside NCCL kernels (issue 14, validation.runners.gemm_nccl, validation.gemm_nccl):
#                   bf16 GEMMs of the FSDP/TP shapes, a flash attention and a 256 MiB copy alone, inside a chain of
#                   all_gather / reduce_scatter / all_reduce of 16-256 MiB (xfer) and beside a waiting NCCL kernel
#                   (spin), on 2 GPUs, one launch per channel count (GEMMNCCL_CHANNELS, default "24 8 16 32 default":
#                   NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS), NCCL INFO 'coll channels' lines kept, nvidia-smi sampled
#                   every 100 ms; no launch starts after GEMMNCCL_DEADLINE_S (default 150) seconds
#           kprobe  whether the ring ops' 8-16 MiB step below the 64-256 MiB line lies inside the NCCL kernels or between
#                   them (issue 10, validation.runners.kernel_probe, validation.kernel_probe): per call the CUDA-event
#                   time and the NCCL kernels' own durations (torch.profiler, CUPTI), 4-256 MiB, sizes interleaved, on 2
#                   GPUs (and 4 where there are 4), one launch per variant: default (all_reduce, all_gather,
#                   reduce_scatter), ring_simple (NCCL_ALGO=Ring NCCL_PROTO=Simple, the same ops), tree_simple
#                   (NCCL_ALGO=Tree NCCL_PROTO=Simple, all_reduce), and each again as <variant>_q with every visit's calls
#                   queued behind a GPU sleep (--queue-us 100: no host pacing); KPROBE_VARIANTS="v1 v2 ..." runs fewer;
#                   KPROBE_REPS repetitions (default 6); nvidia-smi sampled
#                   every 100 ms; no launch starts after KPROBE_DEADLINE_S (default 200) seconds
# NVLink multicast stays off (shared hosts): NCCL_NVLS_ENABLE=0 and friends are exported here and by the runners.
set -uo pipefail
phase=$1; out=$2
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PY=${PYTHON:-python3}
OPS=all_reduce,all_gather,reduce_scatter,broadcast,reduce,all_to_all,send_recv
coll() {   # nproc
  local n=$1 f="$out/coll_world$1.jsonl"
  $PY -m validation.runners.sweep --nproc "$n" --variants default --ops "$OPS" \
      --min-bytes 4 --max-bytes 1G --reps 3 --launch-timeout-s 240 --out "$f"
  $PY -m validation.runners.sweep --nproc "$n" --variants ring,tree,ll,ll128,simple,nop2p,socket \
      --ops all_reduce --min-bytes 4 --max-bytes 1G --reps 3 --launch-timeout-s 150 --out "$f"
}
rerun() {   # nproc
  local n=$1 f="$out/coll_world$1_r15.jsonl"
  $PY -m validation.runners.sweep --nproc "$n" --variants default --ops "$OPS" \
      --min-bytes 4 --max-bytes 1G --reps 15 --launch-timeout-s 280 --out "$f"
  $PY -m validation.runners.sweep --nproc "$n" --variants tree --ops all_reduce \
      --min-bytes 4 --max-bytes 1G --reps 15 --launch-timeout-s 150 --out "$f"
}
llm() {   # nproc
  $PY -m validation.runners.sweep --nproc "$1" --variants default \
      --ops all_reduce,all_gather,reduce_scatter,send_recv --dtype bfloat16 --min-bytes 1M \
      --max-bytes 1G --reps 3 --launch-timeout-s 50 --max-failed-launches 1 \
      --out "$out/llm_coll_world$1.jsonl"
  $PY -m validation.runners.llm_sweep --nproc "$1" --preset gpu --runners fsdp,tp,pp --launches 3 \
      --budget-s 290 --launch-timeout-s 150 --out "$out/llm_world$1.jsonl" \
    || echo "llm sweep on $1 GPUs: points missing (see llm_failed records)"
}
fsdp_sweep() {   # phase nproc budget-s file-stem fsdp-runner-args: the FSDP runner, 3 launches
  $PY -m validation.runners.llm_sweep --nproc "$2" --preset gpu --runners fsdp --runner-args "fsdp=$5" --launches 3 \
      --budget-s "$3" --launch-timeout-s 120 --out "$out/$4_world$2.jsonl" \
    || echo "$1 sweep on $2 GPUs: points missing (see llm_failed records)"
}
fsdp() { fsdp_sweep fsdp "$1" 240 fsdp "--strategies no_shard,full_shard"; }
fsdpissue() {
  fsdp_sweep fsdpissue "$1" 240 fsdpissue "--strategies no_shard,hybrid_shard,full_shard --replicate $1 --issue"
}
fsdpsplit() {
  fsdp_sweep fsdpsplit "$1" "${FSDPSPLIT_BUDGET_S:-150}" fsdpsplit \
    "--strategies no_shard,hybrid_shard,shard_grad_op,full_shard --replicate $1 --issue --free-gathers"
}
fsdppair() { fsdp_sweep fsdppair "$1" 200 fsdppair "--strategies no_shard,full_shard --pair-probe"; }
fsdpprof() { fsdp_sweep fsdpprof "$1" 200 fsdpprof "--strategies no_shard,full_shard --pair-probe --profile-step"; }
fsdphost() {
  fsdp_sweep fsdphost "$1" 200 fsdpprof "--strategies no_shard,full_shard,shard_grad_op --pair-probe --profile-host"
}
gloo() {   # launch index: gloo all_reduce, CPU tensors on 2 and 4 processes, CUDA tensors on every GPU
  local i=$1 spec n dev
  for spec in 2:cpu 4:cpu "$G:cuda"; do
    n=${spec%%:*}; dev=${spec##*:}
    [ "$n" -ge 2 ] || continue
    if [ "$SECONDS" -gt "${DP_DEADLINE_S:-280}" ]; then echo "gloo $spec L$i skipped (time)"; continue; fi
    $PY -m validation.runners.sweep --nproc "$n" --variants "$dev-L$i" --extra-variant "$dev-L$i:" \
        --backend gloo --device "$dev" --ops all_reduce --min-bytes 4K --max-bytes 256M --factor 4 \
        --reps 3 --warmup 1 --timeout-s 60 --launch-timeout-s 60 --max-failed-launches 1 \
        --out "$out/gloo_world$n.jsonl"
  done
}
latency() {   # the small-message regime on 2, 3 and 4 GPUs (or the world sizes given), two launches each, interleaved
  local i n worlds=${1:-2 3 4}
  for i in 1 2; do
    for n in $worlds; do
      $PY -m validation.runners.sweep --nproc "$n" --variants default --ops "$OPS" --min-bytes 4 \
          --max-bytes 256K --factor 16 --reps 15 --launch-timeout-s 100 --max-failed-launches 1 \
          --out "$out/lat_world${n}_L$i.jsonl"
    done
  done
}
lathost() {   # latency with host issue times, then NCCL's per-call choices at 2, 3 and 4 GPUs (or those given)
  local n worlds=${1:-2 3 4}
  latency "$worlds"
  for n in $worlds; do
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING NCCL_DEBUG_FILE="$out/nccl_w$n.%h.%p.log" \
      $PY -m validation.runners.sweep --nproc "$n" --variants default --ops "$OPS" --min-bytes 4 \
          --max-bytes 256K --factor 16 --reps 1 --iters 5 --warmup 1 --launch-timeout-s 60 \
          --max-failed-launches 0 --out "$out/nccl_tuning_w$n.jsonl"
  done
}
bwfine() {   # 2-128 MiB in steps of sqrt(2) on 2 and 4 GPUs (default + nop2p), then NCCL's per-call choices at 2, 3, 4
  local i n f=1.4142135623730951
  for i in 1 2; do
    for n in 2 4; do
      $PY -m validation.runners.sweep --nproc "$n" --variants default --ops all_reduce,all_gather,all_to_all,send_recv \
          --min-bytes 2M --max-bytes 128M --factor $f --reps 5 --launch-timeout-s 120 --max-failed-launches 1 \
          --out "$out/bwfine_world${n}_L$i.jsonl"
      $PY -m validation.runners.sweep --nproc "$n" --variants nop2p --ops all_reduce \
          --min-bytes 2M --max-bytes 128M --factor $f --reps 5 --launch-timeout-s 90 --max-failed-launches 1 \
          --out "$out/bwfine_world${n}_L$i.jsonl"
    done
  done
  for n in 2 3 4; do
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING NCCL_DEBUG_FILE="$out/nccl_bw_w$n.%h.%p.log" \
      $PY -m validation.runners.sweep --nproc "$n" --variants default,nop2p --ops all_reduce,all_gather,all_to_all \
          --min-bytes 2M --max-bytes 128M --factor $f --reps 1 --iters 3 --warmup 1 --launch-timeout-s 60 \
          --max-failed-launches 0 --out "$out/nccl_bw_tuning_w$n.jsonl"
  done
}
slope() {   # issue 10: the ring ops' size-dependent per-byte time; one launch per (pass, variant, world size)
  local i v n worlds=2 f=1.4142135623730951 spec
  declare -A env=([default]="" [buf16]="NCCL_BUFFSIZE=16777216" [buf1]="NCCL_BUFFSIZE=1048576"
    [pinned]="NCCL_ALGO=Ring,NCCL_PROTO=Simple,NCCL_MIN_NCHANNELS=24,NCCL_MAX_NCHANNELS=24" [it50]=""
    [ch12]="NCCL_MIN_NCHANNELS=12,NCCL_MAX_NCHANNELS=12" [alloc]="PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
  [ "$(nvidia-smi -L | wc -l)" -ge 4 ] && worlds="2 4"
  smi_start
  for i in 1 2; do
    for v in ${SLOPE_VARIANTS:-default buf16 buf1 pinned it50 ch12 alloc}; do
      for n in $worlds; do
        spec=(--variants "$v"); [ "$v" = default ] || spec+=(--extra-variant "$v:${env[$v]}")
        [ "$v" = it50 ] && spec+=(--iters 50)
        $PY -m validation.runners.sweep --nproc "$n" "${spec[@]}" --ops all_reduce,broadcast --min-bytes 8M \
            --max-bytes 1G --factor $f --reps 3 --launch-timeout-s 60 --max-failed-launches 0 \
            --out "$out/slope_world${n}_L$i.jsonl"
      done
    done
  done
  kill "$logger"
}
proto() {   # issue 10: NCCL's protocol / channels at 8-64 MiB; one launch per (pass, variant, world size)
  local i v n f=1.4142135623730951 spec tag
  declare -A env=([default]="" [simple]="NCCL_ALGO=Ring,NCCL_PROTO=Simple" [ll128]="NCCL_ALGO=Ring,NCCL_PROTO=LL128"
    [ch12]="NCCL_MIN_NCHANNELS=12,NCCL_MAX_NCHANNELS=12" [ch32]="NCCL_MIN_NCHANNELS=32,NCCL_MAX_NCHANNELS=32")
  for i in 1 2; do
    for n in 4 2; do
      for v in ${PROTO_VARIANTS:-default simple ll128 ch12 ch32}; do
        if [ "$SECONDS" -gt "${PROTO_DEADLINE_S:-175}" ]; then echo "proto L$i $v w$n skipped (time)"; continue; fi
        spec=(--variants "$v"); [ "$v" = default ] || spec+=(--extra-variant "$v:${env[$v]}")
        tag="${v}_w${n}"
        echo "proto L$i $tag start $(date -u +%s.%N)"
        if [ "$i" = 1 ]; then
          rm -rf "$out/dbg"; mkdir -p "$out/dbg"
          NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING NCCL_DEBUG_FILE="$out/dbg/nccl.%h.%p.log" \
            $PY -m validation.runners.sweep --nproc "$n" "${spec[@]}" --ops all_reduce,all_gather,reduce_scatter \
              --min-bytes 8M --max-bytes 64M --factor $f --reps 6 --iters 40 --warmup 5 --launch-timeout-s 45 \
              --max-failed-launches 0 --out "$out/proto_world${n}_L$i.jsonl"
          # every call's choice as counts per distinct line (host:pid prefix dropped), plus the tuning table
          cat "$out"/dbg/*.log | sed -E 's/^[^ ]+ \[[0-9]+\] NCCL INFO //' | grep -E 'Bytes -> Algo|coll channels|Channel [0-9]+/[0-9]+ :' \
            | sort | uniq -c > "$out/proto_nccl_${tag}.txt"
          f0=$(ls "$out"/dbg/*.log | head -1); [ -n "$f0" ] && grep -E '\|' "$f0" > "$out/proto_tuning_${tag}.txt"
          rm -rf "$out/dbg"
        else
          $PY -m validation.runners.sweep --nproc "$n" "${spec[@]}" --ops all_reduce,all_gather,reduce_scatter \
              --min-bytes 8M --max-bytes 64M --factor $f --reps 6 --iters 40 --warmup 5 --launch-timeout-s 45 \
              --max-failed-launches 0 --out "$out/proto_world${n}_L$i.jsonl"
        fi
        echo "proto L$i $tag end $(date -u +%s.%N)"
      done
    done
  done
}
gemmnccl() {   # issue 14: GEMMs beside NCCL kernels, one launch per channel count on 2 GPUs
  local c envs
  smi_start
  for c in ${GEMMNCCL_CHANNELS:-24 8 16 32 default}; do
    if [ "$SECONDS" -gt "${GEMMNCCL_DEADLINE_S:-150}" ]; then echo "gemmnccl ch$c skipped (time)"; continue; fi
    envs=(); [ "$c" = default ] || envs=(NCCL_MIN_NCHANNELS=$c NCCL_MAX_NCHANNELS=$c)
    echo "gemmnccl ch$c start $(date -u +%s.%N)"
    env "${envs[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV timeout 90 $PY -m torch.distributed.run \
        --nproc-per-node 2 --standalone -m validation.runners.gemm_nccl --reps ${GEMMNCCL_REPS:-10} \
        --out "$out/gemmnccl_ch$c.jsonl" > "$out/log_gemmnccl_ch$c.log" 2>&1 || echo "gemmnccl ch$c: failed"
    grep -E 'coll channels|NCCL_(MIN|MAX)_NCHANNELS' "$out/log_gemmnccl_ch$c.log" | sed -E 's/^[^ ]+ \[[0-9]+\] //' \
        | sort | uniq -c
    echo "gemmnccl ch$c end $(date -u +%s.%N)"
  done
  kill "$logger"
}
kprobe() {   # issue 10: event time vs NCCL kernel time per call, one launch per (world size, variant)
  local n v base queue envs ops worlds=2
  [ "$(nvidia-smi -L | wc -l)" -ge 4 ] && worlds="2 4"
  smi_start
  for n in $worlds; do
    for v in ${KPROBE_VARIANTS:-default ring_simple tree_simple default_q ring_simple_q tree_simple_q}; do
      if [ "$SECONDS" -gt "${KPROBE_DEADLINE_S:-200}" ]; then echo "kprobe $v w$n skipped (time)"; continue; fi
      base=${v%_q}; queue=0; [ "$v" = "$base" ] || queue=100
      ops=all_reduce,all_gather,reduce_scatter; envs=()
      [ "$base" = ring_simple ] && envs=(NCCL_ALGO=Ring NCCL_PROTO=Simple)
      [ "$base" = tree_simple ] && { envs=(NCCL_ALGO=Tree NCCL_PROTO=Simple); ops=all_reduce; }
      echo "kprobe $v w$n start $(date -u +%s.%N)"
      env "${envs[@]}" timeout 120 $PY -m torch.distributed.run --nproc-per-node "$n" --standalone \
          -m validation.runners.kernel_probe --ops $ops --reps "${KPROBE_REPS:-6}" --variant "$v" \
          --queue-us $queue --out "$out/kprobe_world$n.jsonl" > "$out/log_kprobe_${v}_w$n.log" 2>&1 \
          || echo "kprobe $v w$n: failed"
      tail -n 3 "$out/log_kprobe_${v}_w$n.log"
      echo "kprobe $v w$n end $(date -u +%s.%N)"
    done
  done
  kill "$logger"
}
smi_start() {   # nvidia-smi samples of clocks, power, temperature (and clock-event reasons) every 100 ms into smi.csv
  local smi=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu
  nvidia-smi --query-gpu=$smi,clocks_event_reasons.active --format=csv >/dev/null 2>&1 \
    && smi=$smi,clocks_event_reasons.active
  nvidia-smi --query-gpu=$smi --format=csv,nounits -lms 100 > "$out/smi.csv" 2>&1 &
  logger=$!   # global: the caller kills it
  echo "unix_s $(date -u +%s.%N) local $(date '+%Y/%m/%d %H:%M:%S.%N %Z')" > "$out/clock.txt"
}
peercopy() {   # api first-pass: the mid-size step without NCCL; two passes, order of copies and NCCL swapped in the second
  local api=$1 p0=$2 i m f=1.4142135623730951 order file
  smi_start
  for i in $p0 $((p0 + 1)); do
    order="copy nccl"; [ "$i" = "$p0" ] || order="nccl copy"
    for m in $order; do
      if [ "$m" = copy ]; then
        file=peer_L$i.jsonl; [ "$api" = cupy ] && file=peerraw_L$i.jsonl
        timeout 120 $PY -m validation.runners.peer_copy --api "$api" --min-bytes 4M --max-bytes 1G --factor $f \
            --reps 5 --label "L$i" --out "$out/$file" || echo "peer_copy pass $i: failed"
      else
        $PY -m validation.runners.sweep --nproc 2 --variants default --ops all_reduce,all_gather --min-bytes 4M \
            --max-bytes 1G --factor $f --reps 3 --launch-timeout-s 60 --max-failed-launches 0 \
            --out "$out/nccl_world2_L$i.jsonl"
      fi
    done
  done
  kill "$logger"
}
l2() {   # issue 10: L2 residency of reused buffers; one launch per (pass, world size, reuse/rot)
  local i n m worlds=2 f=1.4142135623730951 order
  [ "$(nvidia-smi -L | wc -l)" -ge 4 ] && worlds="2 4"
  for i in 1 2; do
    order="reuse rot"; [ "$i" = 2 ] && order="rot reuse"
    for n in $worlds; do
      for m in $order; do
        $PY -m validation.runners.sweep --nproc "$n" --ops all_reduce,all_gather,broadcast --min-bytes 4M \
            --max-bytes 128M --factor $f --reps 3 --launch-timeout-s 60 --max-failed-launches 0 \
            --rotate-bytes "$([ "$m" = rot ] && echo 1G || echo 0)" --out "$out/l2_${m}_world${n}_L$i.jsonl"
      done
    done
  done
}
case "$phase" in
  llm2) llm 2 ;;
  llm4) llm 4 ;;
  fsdp2) fsdp 2 ;;
  fsdp4) fsdp 4 ;;
  fsdpissue2) fsdpissue 2 ;;
  fsdpissue4) fsdpissue 4 ;;
  fsdpsplit2) fsdpsplit 2 ;;
  fsdpsplit4) fsdpsplit 4 ;;
  fsdppair2) fsdppair 2 ;;
  fsdppair4) fsdppair 4 ;;
  fsdpprof2) fsdpprof 2 ;;
  fsdpprof4) fsdpprof 4 ;;
  fsdphost2) fsdphost 2 ;;
  dp)
    G=$($PY -c "import torch; print(torch.cuda.device_count())")
    $PY -m validation.runners.dp_sweep --nproc "$G" --models resnet50,bert-base,gpt2,mlp --launches 3 \
        --iters 15 --warmup 5 --breakdown-reps 3 --launch-timeout-s 120 --out "$out/dp_world$G.jsonl"
    for i in 0 1 2; do gloo "$i"; done
    ;;
  dpdiag)
    G=$($PY -c "import torch; print(torch.cuda.device_count())")
    $PY -m validation.runners.dp_sweep --nproc "$G" --models resnet50,bert-base,gpt2,mlp --launches 3 \
        --iters 10 --warmup 3 --breakdown-reps 3 --launch-timeout-s 150 --out "$out/dp_world$G.jsonl"
    ;;
  overlap)
    for i in 0 1; do
      for n in 4 2; do
        timeout 120 $PY -m torch.distributed.run --nproc-per-node "$n" --standalone -m validation.runners.overlap \
            --sizes 64M,384M --ops reduce_scatter,all_gather,all_reduce --work copy,matmul --reps 10 \
            --warmup 3 --out "$out/overlap_world$n.jsonl" || echo "overlap on $n GPUs, launch $i: failed"
      done
    done
    ;;
  tpissue)
    G=$($PY -c "import torch; print(torch.cuda.device_count())")
    for i in $(seq 0 $((${TPISSUE_LAUNCHES:-3} - 1))); do
      timeout 150 $PY -m torch.distributed.run --nproc-per-node "$G" --standalone -m validation.runners.tp_issue \
          --specs "hidden=2048,layers=4,heads=16,seq=2048;hidden=4096,layers=4,heads=32,seq=2048" \
          --iters 20 --warmup 5 --kernels --op-issue all_reduce,all_gather,reduce_scatter,repeat,narrow,add \
          --launch-index "$i" --out "$out/tp_issue_world$G.jsonl" || echo "tp_issue launch $i: failed"
    done
    ;;
  ddpcompute)
    for n in 2 4; do
      timeout 150 $PY -m torch.distributed.run --nproc-per-node "$n" --standalone -m validation.runners.ddp_compute \
          --models resnet50,bert-base,gpt2,mlp --rounds 3 --iters 10 --warmup 3 \
          --out "$out/compute_world$n.jsonl" || echo "ddp_compute on $n GPUs: failed"
    done
    ;;
  dppair)
    $PY -m validation.runners.dp_sweep --nproc 1 --models resnet50,bert-base,gpt2,mlp --launches 3 \
        --iters 10 --warmup 3 --breakdown-reps 0 --launch-timeout-s 90 --out "$out/dp_world1.jsonl"
    ;;
  gloo38)
    for i in 0 1; do
      for n in 2 3 8; do
        $PY -m validation.runners.sweep --nproc "$n" --variants "cpu-L$i" --extra-variant "cpu-L$i:" \
            --backend gloo --device cpu --ops all_reduce --min-bytes 4K --max-bytes 256M --factor 4 \
            --reps 3 --warmup 1 --timeout-s 60 --launch-timeout-s 60 --max-failed-launches 1 \
            --out "$out/gloo_world$n.jsonl"
      done
    done
    ;;
  latency) latency ;;
  lathost) lathost ;;
  lathost2) lathost 2 ;;
  bwfine) bwfine ;;
  slope) slope ;;
  proto) proto ;;
  gemmnccl) gemmnccl ;;
  kprobe) kprobe ;;
  l2) l2 ;;
  peercopy) peercopy torch 1 ;;
  peerraw) peercopy cupy 3 ;;
  rerun2) rerun 2 ;;
  rerun4) rerun 4 ;;
  coll2) coll 2 ;;
  coll4) coll 4 ;;
  coll8) coll 8 ;;                      # issue: validation on 8 GPUs (needs an 8-GPU machine)
  ddp8)
    $PY -m validation.runners.ddp_sweep --nproc 8 --models resnet50,bert-base,gpt2,mlp \
        --bucket-caps 1,5,25,100,1000 --launches 2 --iters 20 --warmup 8 --launch-timeout-s 300 \
        --out "$out/ddp_world8.jsonl"
    ;;
  ddp)
    for mb in mlp:64 resnet50:64 bert-base:32 gpt2:8; do   # the DDP sweep's default batch sizes
      m=${mb%%:*}; b=${mb##*:}
      $PY -m validation.profiler --model "$m" --batch-size "$b" --out "$out/profile_$m.json" --iters 20 \
        || echo "profile $m failed"
    done
    $PY -m validation.runners.ddp_sweep --nproc 4 --models resnet50,bert-base,gpt2,mlp \
        --bucket-caps 1,5,25,100,1000 --launches 2 --iters 20 --warmup 8 --launch-timeout-s 240 \
        --out "$out/ddp_world4.jsonl"
    ;;
  *) echo "unknown phase $phase"; exit 2 ;;
esac
nvidia-smi topo -m > "$out/topo.txt" 2>&1 || true
echo "phase $phase done"; ls -la "$out"
