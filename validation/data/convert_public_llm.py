"""Maintainer tool: the shared public LLM-training measurements as the package's JSONL copies.

Run once, from the repository root, when the shared data changes::

    python -m validation.data.convert_public_llm --shared SHARED_DATA_DIR

Reads ``<shared>/public/llm/`` (Korthikanti et al.'s Selene table as JSON, vTrain's ground-truth
CSV) and writes ``validation/data/public/llm/{megatron_selene_a100,vtrain_single_a100}.jsonl``:
a ``meta`` record (source, hardware, what the runs used) then one ``llm_iteration`` record per run
(model, parallelism, batch, options, measured ``iteration_s``) and, for Selene, ``llm_memory``
records (per-GPU GiB of the first stage as published). Figures are copied unchanged; nothing in
gpunetsim reads the shared folder at run or test time.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent / "public" / "llm"

_RECOMPUTE = {"full": "full", "attn_only": "selective", "none": "none"}


def _selene_model(name: str, cfg: dict) -> dict:
    return {"name": name, "hidden": cfg["hidden"], "layers": cfg["num_blocks"], "heads": cfg["attn_heads"],
            "seq": cfg["seq_size"], "ffn": cfg["feedforward"], "vocab": 51200}


def _selene_exec(e: dict) -> dict:
    return {"gpus": e["num_procs"], "tp": e["tensor_par"], "pp": e["pipeline_par"], "dp": e["data_par"],
            "global_batch": e["batch_size"], "micro_batch": e["microbatch_size"],
            "schedule": "interleaved" if e["pipeline_interleaving"] > 1 else "1f1b",
            "virtual_stages": e["pipeline_interleaving"], "recompute": _RECOMPUTE[e["activation_recompute"]],
            "sequence_parallel": e["tensor_par_comm_type"] == "rs_ag", "dtype": "fp16",
            "zero": 1 if e["optimizer_sharding"] else 0}


def convert_selene(src: Path) -> list[dict]:
    raw = json.loads(src.read_text())
    models = {r["model"]: r["model_config"] for r in raw["runs"]}
    meta = {"kind": "meta", "tool": "Megatron-LM", "source": raw["source"], "hardware": raw["hardware"],
            "gpu": "A100-SXM-80GB", "topology": {"preset": "dgx-a100", "gpus_per_node": 8,
                                                  "nic": "8x 200 Gb/s HDR InfiniBand"},
            "notes": raw["notes"] + " Vocabulary taken as 51200 (GPT-2's, padded as Megatron-LM pads it).",
            "file": src.name}
    out = [meta]
    for r in raw["runs"]:
        out.append({"kind": "llm_iteration", "label": f"{r['model']} {r['mode']}",
                    "model": _selene_model(r["model"], r["model_config"]), **_selene_exec(r["execution"]),
                    "iteration_s": r["iteration_time_s"]})
    for r in raw["memory_fig1"]:
        gib = r["GiB_per_gpu"]
        out.append({"kind": "llm_memory", "label": f"{r['model']} {r['mode']}",
                    "model": _selene_model(r["model"], models[r["model"]]), **_selene_exec(r["execution"]),
                    "params_grads_optimizer_GiB": gib["params_grads_optimizer"], "activations_GiB": gib["activations"],
                    "stage": 0})
    return out


def convert_vtrain(src: Path) -> list[dict]:
    meta = {"kind": "meta", "tool": "Megatron-DeepSpeed",
            "source": {"repo": "VIA-Research/vTrain", "path": "data/ground_truth_single.csv",
                       "paper": "vTrain, MICRO 2024"},
            "hardware": "8x A100 SXM with NVSwitch in one node (single-node runs on 2-8 GPUs)",
            "gpu": "A100-SXM-80GB", "topology": {"preset": "dgx-a100", "nodes": 1},
            "notes": "GPT-style models, activation checkpointing on (full recomputation), 1F1B, no gradient "
                     "bucketing, fp16 mixed precision; vocabulary taken as GPT-2's 50257.",
            "file": src.name}
    out = [meta]
    with src.open(encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    header = [h.strip().lstrip("#").strip() for h in rows[0]]
    for row in rows[1:]:
        if not row:
            continue
        d = dict(zip(header, row))
        out.append({"kind": "llm_iteration",
                    "model": {"name": f"gpt-h{d['hidden size']}-l{d['layers']}", "hidden": int(d["hidden size"]),
                              "layers": int(d["layers"]), "heads": int(d["attention heads"]),
                              "seq": int(d["sequence length"]), "vocab": 50257},
                    "gpus": int(d["GPUs"]), "tp": int(d["tensor parallelism"]), "pp": int(d["pipeline parallelism"]),
                    "dp": int(d["data parallelism"]), "global_batch": int(d["global batch"]),
                    "micro_batch": int(d["micro batch"]), "schedule": "1f1b", "virtual_stages": 1,
                    "recompute": "full", "sequence_parallel": False, "dtype": "fp16", "zero": 0,
                    "iteration_s": float(d["iteration time (ms)"]) / 1e3})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.data.convert_public_llm", description=__doc__.splitlines()[0])
    p.add_argument("--shared", required=True, help="the shared data folder (holding public/llm/)")
    a = p.parse_args(argv)
    src = Path(a.shared) / "public" / "llm"
    HERE.mkdir(parents=True, exist_ok=True)
    for name, records in (("megatron_selene_a100", convert_selene(src / "korthikanti2022_megatron_selene_a100.json")),
                          ("vtrain_single_a100", convert_vtrain(src / "vtrain_ground_truth_single_a100.csv"))):
        (HERE / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        print(f"wrote {HERE / name}.jsonl ({len(records) - 1} records)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
