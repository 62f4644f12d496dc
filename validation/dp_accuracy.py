"""The DataParallel and Gloo section of docs/accuracy.md (issue 15), runnable alone.

    python -m validation.accuracy --only dp      # rewrites this section of docs/accuracy.md in place

Data: every ``validation/data/*/dp_world*.jsonl`` (the DataParallel runner: single-GPU profile,
DataParallel on 1..N GPUs, DDP on N GPUs, several launches) and ``gloo_world*.jsonl`` (the
collectives runner with ``--backend gloo``) of every dataset that has them. Every figure is
computed here; nothing is typed in.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from simulator.collectives.params import Parameters, load_calibration
from validation.dp_compare import (FIT_PHASES, HOST_KEYS, pair_share, borrow_diagnostics, fit_host, measured_phases,
                                   predict_ddp, predict_dp, predicted_phases, read_dp)
from validation import ddp_host
from validation.host_calibrate import HostPredictor, errors_pct, fit, read_points

DATA = Path(__file__).resolve().parent / "data"
HEADING = "## 6. DataParallel vs DDP, and Gloo"
BEGIN, END = "<!-- begin: dataparallel and gloo (validation.dp_accuracy) -->", "<!-- end: dataparallel and gloo -->"
TARGET_DP, TARGET_RATIO, TARGET_GLOO = 15.0, 15.0, 15.0
COLLECTIVE_CALIBRATION = "h200-nvlink-ddp"
CALIBRATION = "h200-dataparallel"
"""The NCCL collective (and DDP) calibration the predictions start from: fitted on other runs
(4x H200 collectives and DDP), not on these."""
HELD_OUT = ("h100x2_2026-11-26_dpddp", "h200x2_2026-11-26_dpddp")
"""Campaigns read only after the model was fixed. Held out means :data:`HELD_OUT_MEANING`, and they
are never the *other machine* fit of another campaign; they do lend their thread diagnostics to
campaigns that borrow them (section 6 names those)."""
HELD_OUT_MEANING = ("no fit uses the point it predicts; the *datasheet* and *other machine* columns and the "
                    "DDP keys from the datasheet or the committed probe host use nothing of the campaign, "
                    "*leave-one-out* fits the host keys on its other models and *own host* measures the DDP keys "
                    "on its own compute probe")
"""What 'held out' means in section 6 (the report quotes it): which columns use the campaign's own data."""


def other_machine(name: str, names: Sequence[str]) -> str | None:
    """The campaign whose every-model 2-GPU fit predicts ``name``'s 'other machine' column: the first
    other campaign by name that is not held out (:data:`HELD_OUT`), or None."""
    return next((o for o in sorted(names) if o != name and o not in HELD_OUT), None)


def fitters(name: str, names: Sequence[str]) -> list[str]:
    """Every campaign whose every-model 2-GPU fit predicts ``name`` for the *calibrated* band: each other campaign
    that is not held out (review s15 #15: not one machine's fit for every dataset)."""
    return [o for o in sorted(names) if o != name and o not in HELD_OUT]


def without_fits_on(pairs: Mapping[tuple[str, str], Sequence[float]], left_out: str) -> dict[str, list[float]]:
    """The other datasets' points of the calibrated band when ``left_out`` is judged: no prediction of a fit on it."""
    out: dict[str, list[float]] = {}
    for (fitted_on, name), v in pairs.items():
        if left_out not in (fitted_on, name):
            out.setdefault(name, []).extend(v)
    return out


def datasets() -> list[Path]:
    """Dataset folders with DataParallel records, oldest first."""
    return sorted({p.parent for p in DATA.glob("*/dp_world*.jsonl")}, key=lambda p: p.name)


def _pct(x: float) -> str:
    return f"{x:.1f}"


def _ms(x: float) -> str:
    return f"{x * 1e3:.2f}"


def _med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def _held_back_text(sets) -> str:
    """Per campaign, how many of each DDP record's timed iterations DDP's sampling held back
    (validation.ddp_logger.held_back), from the records' own warmup counts."""
    from validation.runners.records import read_measurement_records
    from validation.ddp_logger import held_back
    parts = []
    for f, _ in sets:
        seen: dict[str, int] = {}          # "warmup: held of timed" -> records
        for path in sorted(f.glob("dp_world*.jsonl")):
            for _, r in read_measurement_records(path):
                times, warmup = r.get("iter_times_s"), r.get("sync_warmup", r.get("warmup"))
                if r.get("kind") != "ddp" or not isinstance(times, list) or not isinstance(warmup, int):
                    continue
                held = sum(held_back(warmup + i + 1) for i in range(len(times)))
                key = f"{warmup}: {held} of {len(times)}"
                seen[key] = seen.get(key, 0) + 1
        parts.append(f"`{f.name}` " + ", ".join(seen) if seen else f"`{f.name}` no per-iteration times")
    return "; ".join(parts)


def _by_other(sets) -> dict[str, list[str]]:
    """Other-machine campaign -> the campaigns it predicts (:func:`other_machine`)."""
    out: dict[str, list[str]] = {}
    names = [f.name for f, _ in sets]
    for n in names:
        o = other_machine(n, names)
        if o:
            out.setdefault(o, []).append(n)
    return out


def dp_lines(folders: list[Path], base: Parameters) -> tuple[list[str], dict[str, float], Parameters]:
    """The DataParallel tables of every dataset, the summary figures, and the host keys fitted on
    the last dataset's 2-GPU runs (for the shipped calibration)."""
    sets = [(f, read_dp(sorted(f.glob("dp_world*.jsonl")))) for f in folders]
    sets = [(f, d) for f, d in sets if d]
    if not sets:
        return ["No DataParallel records committed."], {}, base
    donors = [d for _, data in sets for d in data]
    sets = [(f, borrow_diagnostics(data, donors)) for f, data in sets]
    sets = [(f, data) for f, data in sets if any(2 in d.dp_s for d in data)]   # 1-GPU diagnostics only: donors
    lines = ["Per model, the profile is the single-GPU run of each launch (median over launches; gradient "
             "ready times from the launch with the median backward); the measured iteration is the median "
             "over launches of each launch's median (launch range: (slowest - fastest) / median). Predictions "
             f"use only the profile and the shipped collective calibration `{COLLECTIVE_CALIBRATION}` (fitted on "
             "other runs): *datasheet* keeps the DataParallel host parameters at their defaults; *leave-one-out* "
             f"fits {', '.join(f'`{k}`' for k in HOST_KEYS)} on the *other* models' 2-GPU breakdown steps "
             "(replicate, parallel_apply, backward with the reduce, scatter + gather + loss; the runner times each "
             "step alone) of the same machine, never on iteration times, and predicts the model left out on every "
             "GPU count (so 3 and 4 GPUs are also extrapolated in the number of threads); *other machine* fits "
             "them on every model's 2-GPU steps of another dataset (the first other one by name that is not held "
             "out: " + "; ".join(f"`{o}` for " + ", ".join(f"`{n}`" for n in ns) for o, ns in _by_other(sets).items())
             + "). The ratio is "
             "DataParallel's iteration over DDP's (measured on all the machine's GPUs); DDP is predicted from the "
             "same profile with the DDP model (section 3), so its own error enters the ratio. DDP measured is "
             "each launch's median over its *steady* iterations: PyTorch's DDP samples runtime statistics on its "
             "first 10 synchronised iterations, and at the next forward its logger waits on that iteration's "
             "CUDA events (`Logger::set_runtime_stats_and_log`), so the host stops running ahead of the GPU "
             "and those iterations pay every launch gap (validation.ddp_logger); timed DDP iterations held back, "
             "per campaign (synchronised warmup: held back of timed per launch): " + _held_back_text(sets)
             + " (the runner now warms up past them).", "",
             "| dataset | model | GPUs | DataParallel measured (ms) | launch range % | datasheet pred. (ms) | err % | "
             "leave-one-out pred. (ms) | err % | other machine err % | DDP measured, steady (ms) | DDP launch range % | "
             "DDP pred. (ms) | ratio measured | ratio launch range % | ratio pred. | ratio err % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    errs: dict[int, list[float]] = {}
    fit2: dict[int, list[float]] = {}
    fit2_by: dict[str, list[float]] = {}
    cross: list[float] = []
    ds_errs, ratios, spreads, ddp_errs, ratio_spreads = [], [], [], [], []
    ratios_all, ddp_errs_all = [], []       # against each launch's median over all its timed DDP iterations
    ratio_inside: list[bool] = []
    ddp_fast = 0
    signed: dict[str, tuple[float, float]] = {}       # "dataset/model" -> (DataParallel, DDP) err % at the ratio
    shares: dict[str, float | None] = {}              # "dataset/model" -> its own two-thread queued share
    by_set: dict[str, list[float]] = {}
    band_res: dict[str, dict[str, list[float]]] = {"datasheet": {}, "calibrated": {}}   # log(meas / pred) per dataset
    band_pairs: dict[tuple[str, str], list[float]] = {}     # (fitted on, dataset) -> log(meas / pred)
    fits = {f: fit_host(d, 2, base) for f, d in sets}
    ddp_keys = ddp_host.measure(base)             # DDP's per-tensor costs, measured on the probe host (held out here)
    probe = {"GPU": base.with_values({k: ddp_keys[k] for k in ddp_host.GPU_KEYS}),
             "GPU and host": base.with_values(ddp_keys)}
    probe_ratio: dict[str, list[float]] = {k: [] for k in probe}     # the ratio and DDP's error with them
    probe_ddp: dict[str, list[float]] = {k: [] for k in probe}
    probe_fast: dict[str, int] = {k: 0 for k in probe}
    probe_signed: dict[str, dict[str, list[float]]] = {k: {} for k in ("datasheet", *probe)}
    by_set_probe: dict[str, list[tuple[float, float]]] = {}   # "variant/dataset" -> (ratio err, DDP err) per point
    own_host: dict[str, Parameters] = {}          # datasets with their own DDP compute probe: keys measured there
    for f, _ in sets:
        own_points = ddp_host.read_probe(f)          # none without a compute probe or a round after the first
        if own_points:
            own_host[f.name] = base.with_values(ddp_host.measure(base, own_points))
    by_name = {f.name: f for f, _ in sets}
    for f, data in sets:
        other_name = other_machine(f.name, list(by_name))
        other = fits[by_name[other_name]] if other_name else None
        loo_fits = {d.model: fit_host([o for o in data if o is not d], 2, base) for d in data}
        for d in data:
            world = max(d.ddp_s) if d.ddp_s else None
            for g in sorted(x for x in d.dp_s if x > 1):
                meas = d.dp_median(g)
                ds = predict_dp(d, g, base).iteration_s
                lo = predict_dp(d, g, loo_fits[d.model]).iteration_s
                band_res["datasheet"].setdefault(f.name, []).append(math.log(meas / ds))
                e_lo = 100 * abs(lo / meas - 1)
                errs.setdefault(g, []).append(e_lo)
                by_set.setdefault(f"set_loo_{f.name}_{g}", []).append(e_lo)
                ds_errs.append(100 * abs(ds / meas - 1))
                spreads.append(d.spread_pct(g))
                row = [f.name, d.model, str(g), _ms(meas), _pct(d.spread_pct(g)), _ms(ds), _pct(ds_errs[-1]),
                       _ms(lo), _pct(e_lo)]
                if g > 2:     # the machine's own 2-GPU fit (every model), predicting more GPUs
                    fit2.setdefault(g, []).append(100 * abs(predict_dp(d, g, fits[f]).iteration_s / meas - 1))
                    fit2_by.setdefault(f"dp_fit2_{f.name}_{g}", []).append(fit2[g][-1])
                for o in fitters(f.name, list(by_name)):      # every other machine's fit: the band's pairs
                    pair = predict_dp(d, g, fits[by_name[o]]).iteration_s
                    band_pairs.setdefault((o, f.name), []).append(math.log(meas / pair))
                if other is not None:
                    om = predict_dp(d, g, other).iteration_s
                    cross.append(100 * abs(om / meas - 1))
                    row.append(_pct(cross[-1]))
                else:
                    row.append("")
                if g == world:
                    ddp_m, ddp_p = d.ddp_median(g), predict_ddp(d, g, base)
                    rm, rp = meas / ddp_m, lo / ddp_p
                    variants = {**probe, **({"own host": own_host[f.name]} if f.name in own_host else {})}
                    by_set_probe.setdefault(f"datasheet/{f.name}", []).append(
                        (100 * abs(rp / rm - 1), 100 * abs(ddp_p / ddp_m - 1)))
                    for k, q in variants.items():
                        v = predict_ddp(d, g, q)
                        by_set_probe.setdefault(f"{k}/{f.name}", []).append(
                            (100 * abs((lo / v) / rm - 1), 100 * abs(v / ddp_m - 1)))
                        if k not in probe:
                            continue
                        probe_ratio[k].append(100 * abs((lo / v) / rm - 1))
                        probe_ddp[k].append(100 * abs(v / ddp_m - 1))
                        probe_fast[k] += v < ddp_m
                        probe_signed[k].setdefault(d.model, []).append(100 * (v / ddp_m - 1))
                    probe_signed["datasheet"].setdefault(d.model, []).append(100 * (ddp_p / ddp_m - 1))
                    ratios.append(100 * abs(rp / rm - 1))
                    ddp_errs.append(100 * abs(ddp_p / ddp_m - 1))
                    ddp_all = statistics.median((d.ddp_all_s or d.ddp_s)[g])
                    ratios_all.append(100 * abs(rp / (meas / ddp_all) - 1))
                    ddp_errs_all.append(100 * abs(ddp_p / ddp_all - 1))
                    ddp_fast += ddp_p < ddp_m
                    ratio_spreads.append(d.ratio_spread_pct(g))
                    launches = (d.ratio_s or {}).get(g, ())
                    ratio_inside.append(bool(launches) and min(launches) <= rp <= max(launches))
                    by_set.setdefault(f"set_ratio_{f.name}", []).append(ratios[-1])
                    signed[f"{f.name}/{d.model}"] = (100 * (lo / meas - 1), 100 * (ddp_p / ddp_m - 1))
                    shares[f"{f.name}/{d.model}"] = pair_share(dict(d.profile.extras)) \
                        if "forward_fresh_pair_host_s" not in d.borrowed else None
                    row += [_ms(ddp_m), _pct(d.ddp_spread_pct(g)), _ms(ddp_p), f"{rm:.2f}",
                            _pct(ratio_spreads[-1]), f"{rp:.2f}", _pct(ratios[-1])]
                else:
                    row += [""] * 7
                lines.append("| " + " | ".join(row) + " |")
    one = [(d.model, d.dp_median(1), predict_dp(d, 1, base).iteration_s) for _, data in sets for d in data
           if 1 in d.dp_s]
    if one:
        e1 = [100 * abs(p / m - 1) for _, m, p in one]
        lines += ["", f"On one GPU (DataParallel calls the module directly) the profile predicts the measured "
                      f"iteration to a median {_med(e1):.1f}% (worst {max(e1):.1f}%): the floor of what any "
                      "multi-GPU figure above can reach."]
    lines += ["", "The forward law (simulator.training.dataparallel, `parallel_apply_s`): `parallel_apply` starts a "
                  "new Python thread per GPU on every iteration, simulated as events: each thread pays its "
                  "*fresh-thread cost* (measured on one GPU: a forward launched from a new thread minus one from a "
                  "thread that already ran it, `forward_fresh_thread_host_s - forward_warm_thread_host_s`; "
                  "PyTorch's thread-local caches, e.g. the cuDNN v8 convolution plans of `Conv_v8.cpp` and the cuDNN "
                  "attention graphs of `MHA.cpp`, rebuilt by each new thread), a share `dp.cold_lock_share` of it "
                  "under the host lock and the rest in parallel, so it does not grow with the number of GPUs unless "
                  "it holds the lock; then it launches its forward (`forward_host_s`) as `forward_ops` operators, "
                  "each releasing the GIL for its C++ work and retaking it, which costs `dp.lock_handoff_s` when "
                  "another thread held it last: the *host-lock queue*, which grows with the threads. The backward "
                  "law (`backward_threads_s`): autograd runs each replica's backward on its GPU's device thread in "
                  "C++, but freeing a tensor that Python once held (the replicas' parameters, set as attributes by "
                  "`replicate`, and the forward's activations) takes the GIL, because PyTorch keeps such a tensor's "
                  "Python object alive with it (PyObject preservation, `THPVariable_tryResurrect`; released under the "
                  "GIL in `concrete_decref_fn`): the n device threads queue on the same lock, `forward_ops` + "
                  "parameter tensors acquisitions each. The broadcast (replicate) and the reduce (the broadcast's "
                  "backward) pay `dp.nccl_device_s` per 10 MiB chunk *and GPU*: one process issues every GPU's part of "
                  "each NCCL call; scatter and gather `dp.copy_host_s` per GPU. Per-model inputs come from the "
                  "single-GPU profile and its thread diagnostics only; the global keys are fitted on the 2-GPU "
                  "breakdown steps. Campaigns "
                  "measured before the runner recorded the diagnostics (" + (", ".join(
                      f"`{f.name}`" for f, data in sets if any(d.diagnostics_from for d in data)) or "none")
              + ") take them from the same model and batch size in " + (", ".join(sorted(
                  {f"`{d.diagnostics_from}`" for _, data in sets for d in data if d.diagnostics_from})) or "-")
              + " (same torch and batch; the nearest machines first: the same GPU model, then a multi-GPU server "
                "before a lent one-GPU machine, which has a quarter of the CPU cores; every donor of that rank counts, "
                "the fresh/warm costs as their median and the two-thread pair as the median of their queued shares, "
                "applied to the borrower's own fresh-thread cost). Borrowed costs are host times, so each donor's "
                "are scaled to the borrower's host first: by the borrower's own forward launch time "
                "(`forward_host_s`, which every profile measures) over the donor's, since a warm thread's forward "
                "launch is that same host work."]
    lines += _queue_lines(sets)
    lines += _share_preview(sets, base)
    lines += _thread_lines(sets)
    last_f, last = sets[-1]
    fitted = fits[last_f]
    ins = [100 * abs(predict_dp(d, 2, fitted).iteration_s / d.dp_median(2) - 1) for d in last if 2 in d.dp_s]
    lines += ["", f"Shipped as the calibration `{CALIBRATION}` for the what-if: the host keys fitted on every model's "
                  f"2-GPU breakdown steps of `{last_f.name}`: " + ", ".join(f"`{k}` = {fitted[k]:.3g}" for k in HOST_KEYS)
                  + f" (its 2-GPU iterations, not fitted, within {', '.join(f'{e:.1f}%' for e in ins)})."]
    lines += _step_lines(sets, fits)
    lines += _backward_split_lines(sets, fits)
    probe_table, _ = ddp_host.table_lines(base)
    lines += ["", "DDP's per-tensor work measured on the compute probe's host `h100x4_2026-11-26_ddp` (`python -m "
                  "validation.ddp_host`; steady rounds only; host extra = the synchronised step's host issue time over "
                  "`no_sync()`'s, the first two steps of each round; model = section 3's DDP model from the same "
                  "rounds' `no_sync()` step, without and with the measured keys):", "", *probe_table]
    summary = {f"dp_loo_{g}": _med(v) for g, v in errs.items()}
    summary.update({f"dp_loo_max_{g}": max(v) for g, v in errs.items()})
    summary.update({f"dp_fit2_{g}": _med(v) for g, v in fit2.items()})
    summary.update({k: _med(v) for k, v in fit2_by.items()})
    summary.update({k: _med(v) for k, v in by_set.items()})
    summary["ddp_at_ratio"] = _med(ddp_errs)
    summary["ddp_at_ratio_all"], summary["ratio_all"] = _med(ddp_errs_all), _med(ratios_all)
    summary["ddp_keys"] = ddp_keys
    summary["probe"] = {k: (_med(probe_ratio[k]), _med(probe_ddp[k]), probe_fast[k]) for k in probe}
    summary["probe_by_model"] = {k: {m: _med(v) for m, v in sorted(by.items())} for k, by in probe_signed.items()}
    summary["campaigns"] = len(sets)
    summary["probe_by_set"] = {k: (_med([a for a, _ in v]), _med([b for _, b in v])) for k, v in by_set_probe.items()}
    summary["borrowers"] = {h: sorted({f.name for f, data in sets for d in data if h in d.diagnostics_from})
                            for h in HELD_OUT}
    summary["own_host_keys"] = {n: {k: q[k] for k in (*ddp_host.HOST_KEYS, *ddp_host.GPU_KEYS)}
                                for n, q in own_host.items()}
    summary.update(dp_datasheet=_med(ds_errs), ratio=_med(ratios), ratio_max=max(ratios) if ratios else float("nan"),
                   launch_range=_med(spreads), cross=_med(cross), ratio_launch_range=_med(ratio_spreads),
                   ratio_inside=100 * sum(ratio_inside) / len(ratio_inside) if ratio_inside else float("nan"),
                   ratio_points=len(ratios), ddp_fast=ddp_fast)
    summary["signed"], summary["shares"] = signed, shares
    for (_, name), v in band_pairs.items():
        band_res["calibrated"].setdefault(name, []).extend(v)
    summary["band_residuals"], summary["band_pairs"] = band_res, band_pairs
    return lines, summary, fitted


def _queue_lines(sets) -> list[str]:
    """Both halves of the law against the diagnostics: the host-lock queue alone (persistent
    threads: no fresh-thread cost), ``dp.lock_handoff_s`` fitted on the 2-GPU runs, predicting 3
    and 4; and the share of the fresh-thread cost that queued on 2 GPUs, per model (not an input)."""
    from scipy.optimize import minimize_scalar

    from simulator.training.dataparallel import parallel_apply_s
    out: list[str] = []
    for f, data in sets:
        rows = [d for d in data if d.persistent_host and d.has_diagnostics and "forward_ops" not in d.borrowed]
        if not rows:
            continue
        p0 = Parameters()

        def warm(d, g: int, handoff: float) -> float:
            ex = dict(d.profile.extras)
            return parallel_apply_s(g, float(ex["forward_warm_thread_host_s"]), int(ex["forward_ops"]), 0.0, 0.0,
                                    handoff, p0["dp.thread_s"]) + p0["dp.thread_s"]
        h = minimize_scalar(lambda x: sum(np.log(warm(d, 2, x) / d.persistent_host[2]) ** 2 for d in rows),
                            bounds=(0.0, 1e-3), method="bounded").x
        gs = sorted({g for d in rows for g in d.persistent_host})
        out += ["", f"`{f.name}`, the host-lock queue alone: the replicas' forwards on persistent threads (warm caches, "
                    f"no fresh-thread cost), measured vs simulated with `dp.lock_handoff_s` = {h * 1e6:.1f} us fitted on "
                    "the 2-GPU runs (every model), ms; and the share of the fresh-thread cost that queued with 2 "
                    "threads, ((fresh - persistent `parallel_apply` on 2 GPUs) / fresh-thread cost - 1; a check, not "
                    "an input):", "",
                "| model | operators | " + " | ".join(f"{g} GPUs meas. / sim. (err %)" for g in gs)
                + " | fresh-thread cost (ms) | queued share on 2 GPUs |",
                "|---|---|" + "---|" * len(gs) + "---|---|"]
        errs: dict[int, list[float]] = {}
        for d in rows:
            ex = dict(d.profile.extras)
            cells = [str(ex["forward_ops"])]
            for g in gs:
                m, sim = d.persistent_host[g], warm(d, g, h)
                errs.setdefault(g, []).append(100 * abs(sim / m - 1))
                cells.append(f"{_ms(m)} / {_ms(sim)} ({100 * (sim / m - 1):+.0f})")
            cold = float(ex["forward_fresh_thread_host_s"]) - float(ex["forward_warm_thread_host_s"])
            q = queued_share(d)
            cells += [_ms(cold), "" if q is None else f"{q:.2f}"]
            out.append("| " + " | ".join([d.model, *cells]) + " |")
        out += ["", "Median error of the queue alone: " + ", ".join(
            f"{g} GPUs {_med(v):.1f}%" for g, v in sorted(errs.items()) if g > 2) + " (fitted on 2)."]
    return out


def queued_share(d) -> float | None:
    """The share of ``d``'s fresh-thread cost that queued between 2 threads in its 2-GPU runs:
    (``parallel_apply`` with fresh threads - with persistent threads) / fresh-thread cost - 1."""
    ex = dict(d.profile.extras)
    if not d.persistent_host or 2 not in d.persistent_host or "forward_ops" in d.borrowed or not d.has_diagnostics:
        return None
    cold = float(ex["forward_fresh_thread_host_s"]) - float(ex["forward_warm_thread_host_s"])
    return (d.phases_host[2]["parallel_apply"] - d.persistent_host[2]) / cold - 1 if cold > 0 else None


def _measured_shares(sets) -> dict[str, float]:
    """Each model's queued share from the two-thread diagnostic (median over the datasets that have or
    borrowed it), clipped to 0-1 as the law uses it."""
    from simulator.training.dataparallel import DPFacts
    got: dict[str, list[float]] = {}
    for _, data in sets:
        for d in data:
            share = DPFacts.from_workload(d.profile, 0.0).cold_lock_share
            if share is not None:
                got.setdefault(d.model, []).append(share)
    return {m: statistics.median(v) for m, v in got.items()}


def _share_preview(sets, base: Parameters) -> list[str]:
    """What the law gives once the two-thread diagnostic measures each model's queued share, if it
    measures what the 2-GPU runs imply: per-model information from 2 GPUs, so not a prediction."""
    from dataclasses import replace
    shares = {d.model: min(1.0, max(0.0, q)) for _, data in sets for d in data if (q := queued_share(d)) is not None}
    if not shares:
        return []
    measured = _measured_shares(sets)
    if set(shares) <= set(measured):
        return ["", "Queued share of the fresh-thread cost per model, measured by the single-GPU two-thread "
                    "diagnostic (`gpu_campaign.sh dppair` or `dpdiag`; median over the campaigns that measured or borrowed it) vs what each model's 2-GPU "
                    "runs imply (clipped to 0-1): " + ", ".join(f"{m} {measured[m]:.2f} vs {v:.2f}"
                                                              for m, v in sorted(shares.items())) + "."]
    out: dict[int, list[float]] = {}
    for _, data in sets:
        injected = []
        for d in data:
            ex = dict(d.profile.extras)
            if d.model not in shares or not d.has_diagnostics or "forward_fresh_pair_host_s" in ex:
                injected.append(d)
                continue
            cold = float(ex["forward_fresh_thread_host_s"]) - float(ex["forward_warm_thread_host_s"])
            ex |= {"forward_warm_pair_host_s": 0.0, "forward_fresh_pair_host_s": cold * (1 + shares[d.model])}
            injected.append(replace(d, profile=replace(d.profile, extras=tuple(ex.items()))))
        if not any(3 in d.dp_s or 4 in d.dp_s for d in injected):
            continue
        fitted = fit_host(injected, 2, base)
        for d in injected:
            for g in (3, 4):
                if g in d.dp_s:
                    out.setdefault(g, []).append(100 * abs(predict_dp(d, g, fitted).iteration_s / d.dp_median(g) - 1))
    return ["", "Not a prediction, a preview: the same law with each model's queued share set to what its 2-GPU runs "
                "imply (" + ", ".join(f"{m} {v:.2f}" for m, v in sorted(shares.items())) + ", clipped to 0-1), as "
                "the single-GPU two-thread diagnostic (`gpu_campaign.sh dppair`, not yet run) would measure it if "
                "it sees the same queue; host keys fitted on each machine's 2-GPU runs: median "
                + ", ".join(f"{_med(v):.1f}% on {g} GPUs" for g, v in sorted(out.items()))
                + ". The MLP stays under-predicted on 3 and 4 GPUs for another reason: its iteration is not paced "
                  "by the forward, and its measured backward (with the reduce onto GPU 0) and replicate grow with "
                  "the GPUs faster than predicted."]


def _thread_lines(sets) -> list[str]:
    """Fresh vs persistent threads, for datasets whose runner measured them (``dpdiag``)."""
    out: list[str] = []
    for f, data in sets:
        rows = [d for d in data if d.has_diagnostics and "forward_ops" not in d.borrowed]
        if not rows:
            continue
        gs = sorted({g for d in rows for g in (d.persistent_host or {})})
        out += ["", f"`{f.name}`: operators per forward (GIL hand-offs), the forward's launch on one GPU from the "
                    "main thread, a fresh thread and a persistent thread, and the replicas' forwards on n GPUs with `parallel_apply` (fresh threads) "
                    "and with persistent threads (medians over launches, ms):", "",
                "| model | operators | main thread | fresh thread | persistent thread | "
                + " | ".join(f"{g} GPUs fresh / persistent" for g in gs) + " |",
                "|---|---|---|---|---|" + "---|" * len(gs)]
        for d in rows:
            ex = dict(d.profile.extras)
            cells = [str(ex.get("forward_ops", ""))] + [_ms(float(ex.get(k, float("nan")))) for k in
                     ("forward_host_s", "forward_fresh_thread_host_s", "forward_warm_thread_host_s")]
            for g in gs:
                fresh = d.phases_host.get(g, {}).get("parallel_apply", float("nan"))
                cells.append(f"{_ms(fresh)} / {_ms((d.persistent_host or {}).get(g, float('nan')))}")
            out.append("| " + " | ".join([d.model, *cells]) + " |")
    return out


def _step_lines(sets, fits) -> list[str]:
    """Every component against the runner's breakdown, per model and GPU count: each step timed
    alone (synchronised) next to the same step predicted with the machine's own 2-GPU fit (2 GPUs:
    fitted; 3 and 4: predicted)."""
    out: list[str] = []
    errs: dict[str, list[float]] = {}
    for f, data in sets:
        rows = [(d, g) for d in data for g in sorted(d.phases) if g > 1]
        if not rows:
            continue
        out += ["", f"`{f.name}`: each DataParallel step measured alone (synchronised after each; medians over "
                    "launches) / predicted (the longer of the step's host and GPU 0 time; host keys fitted on this "
                    "machine's 2-GPU steps), ms (err %):", "",
                "| model | GPUs | " + " | ".join(FIT_PHASES) + " | iteration |", "|---|---|" + "---|" * (len(FIT_PHASES) + 1)]
        for d, g in rows:
            pred = predict_dp(d, g, fits[f])
            m, p = measured_phases(d, g), predicted_phases(pred)
            cells = []
            for k in FIT_PHASES:
                e = 100 * (p[k] / m[k] - 1)
                if g > 2:
                    errs.setdefault(k, []).append(abs(e))
                cells.append(f"{_ms(m[k])} / {_ms(p[k])} ({e:+.0f})")
            it = d.dp_median(g)
            cells.append(f"{_ms(it)} / {_ms(pred.iteration_s)} ({100 * (pred.iteration_s / it - 1):+.0f})")
            out.append("| " + " | ".join([d.model, str(g), *cells]) + " |")
    if errs:
        out += ["", "Median error per step on 3 and 4 GPUs (predicted from 2): " + ", ".join(
            f"{k} {_med(v):.1f}%" for k, v in errs.items()) + ". The backward step holds the gradient reduce "
            "onto GPU 0 (it runs inside autograd's backward, as the broadcast's backward)."]
    return out


def _backward_split_lines(sets, fits) -> list[str]:
    """The runner's backward split (campaigns that measured it) against its two laws: the replicas'
    backward alone (leaf parameters that Python holds: the GIL queue of the activations only,
    ``forward_ops`` acquisitions per device thread) and the reduce onto GPU 0 alone (per chunk,
    ``dp.chunk_host_s`` + GPUs x ``dp.nccl_device_s``); keys from the machine's 2-GPU steps, not
    from these measurements."""
    from simulator.training.dataparallel import DPFacts, chunk_sizes, parallel_apply_s
    out: list[str] = []
    for f, data in sets:
        rows = [(d, g) for d in data for g in sorted(d.backward_parts or {})]
        if not rows:
            continue
        q = fits[f]
        out += ["", f"`{f.name}`, the backward in two parts, each timed alone by the runner: the replicas' backward "
                    "without the reduce (replicas with leaf parameters that Python holds, so only the activations' "
                    "GIL acquisitions queue) and `comm.reduce_add_coalesced` onto GPU 0; measured host time / "
                    "predicted host time, ms (err %), and the reduce's time including its GPU work:", "",
                "| model | GPUs | one GPU's backward launch | replicas' backward | reduce (host) | reduce (with GPU) | "
                "chunks |", "|---|---|---|---|---|---|---|"]
        errs: dict[str, list[float]] = {}
        for d, g in rows:
            facts = DPFacts.from_workload(d.profile, q["dp.launch_s_per_tensor"])
            part = d.backward_parts[g]
            chunks = len(chunk_sizes(facts.tensor_bytes[:facts.param_tensors]))
            rb = parallel_apply_s(g, facts.backward_host_s, facts.forward_ops, 0.0, 0.0, q["dp.lock_handoff_s"], 0.0)
            red = chunks * (q["dp.chunk_host_s"] + g * q["dp.nccl_device_s"])
            e_rb, e_red = 100 * (rb / part["replica_backward_host_s"] - 1), 100 * (red / part["reduce_host_s"] - 1)
            errs.setdefault("replicas' backward", []).append(abs(e_rb))
            errs.setdefault("reduce", []).append(abs(e_red))
            out.append(f"| {d.model} | {g} | {_ms(facts.backward_host_s)} | {_ms(part['replica_backward_host_s'])} / "
                       f"{_ms(rb)} ({e_rb:+.0f}) | {_ms(part['reduce_host_s'])} / {_ms(red)} ({e_red:+.0f}) | "
                       f"{_ms(part['reduce_s'])} | {chunks} |")
        out += ["", "Median error: " + ", ".join(f"{k} {_med(v):.1f}%" for k, v in errs.items()) + "."]
    return out


def gloo_lines(folders: list[Path]) -> tuple[list[str], dict[str, float], Parameters]:
    """Fit on the first dataset's 2-process runs (CPU tensors, then CUDA staging); predict the rest."""
    per = [(f, read_points(sorted(f.glob("gloo_world*.jsonl")))) for f in folders]
    per = [(f, pts) for f, pts in per if pts]
    if not per:
        return ["No Gloo records committed."], {}, Parameters()
    pred = HostPredictor("hgx-h200")
    fit_f, fit_pts = per[0]
    cpu2 = [p for p in fit_pts if p.tensors == "cpu" and p.world == 2]
    cuda2 = [p for p in fit_pts if p.tensors == "cuda" and p.world == 2]
    fitted = fit(cpu2, pred) if cpu2 else Parameters()
    if cuda2:
        fitted = fit(cuda2, pred, fitted)
    lines = ["Gloo all_reduce, float32, 4 KiB-256 MiB, one launch per variant (`cpu-L0`, `cuda-L0`, ...). "
             f"Calibrated on `{fit_f.name}`'s 2-process runs (`python -m validation.host_calibrate`: CPU tensors, "
             "then the staging copies on CUDA tensors); everything else is predicted: 4 processes, and the other "
             "machine. Processes are on one server, so every step is TCP through the loopback device. PyTorch's "
             "ProcessGroupGloo calls `gloo::allreduce` with no algorithm set, which runs Gloo's ring (reduce-scatter "
             "then all-gather over 1 MiB segments, two in flight; CUDA tensors are first copied to pinned host "
             "memory, then the same ring), so ring is what is modelled; halving-doubling and bcube are never picked "
             "by PyTorch. Two choices were made after seeing 4-process runs, so this is not a blind prediction "
             "of their shape: a step on n processes costs H(n)/H(2) times a step on two (the expected last of n "
             "memoryless wake-ups; an earlier log2(n) law, with the same parameters, predicted the 4-process "
             "latency regime 15-35% too slow), and the default split between per-call and per-step latency "
             "(30 us / 40 us), which a 2-process fit cannot separate and so keeps near. MPI is not validated: "
             "PyTorch's pip wheels (2.11.0+cu130 on the GPU hosts) are built without it (no MPI process group; "
             "`torch.distributed.is_mpi_available()` is false for such a wheel), so `--backend mpi` is a generic host-based backend on datasheet defaults or a user's "
             "calibration (`python -m validation.host_calibrate --backend mpi`), with no measured figure here.", "",
             "| dataset | tensors | processes | role | median err % | >= 16 MiB % | < 16 MiB % | worst % | "
             "median launch range % |",
             "|---|---|---|---|---|---|---|---|---|"]
    out: dict[str, float] = {}
    detail: list[str] = []
    for f, pts in per:
        groups: dict[tuple[str, int], list] = {}
        for pt in pts:
            groups.setdefault((pt.tensors, pt.world), []).append(pt)
        for (tensors, world), group in sorted(groups.items()):
            fitted_here = f == fit_f and world == 2
            e = errors_pct(group, pred.predict(group, fitted))
            big = [x for pt, x in zip(group, e) if pt.size_bytes >= 16 * 2**20]
            small = [x for pt, x in zip(group, e) if pt.size_bytes < 16 * 2**20]
            role = "fitted" if fitted_here else "predicted"
            lines.append(f"| {f.name} | {tensors} | {world} | {role} | {np.median(e):.1f} | "
                         f"{np.median(big) if big else float('nan'):.1f} | "
                         f"{np.median(small) if small else float('nan'):.1f} | {max(e):.1f} | "
                         f"{_med([pt.spread_pct for pt in group]):.1f} |")
            if not fitted_here and tensors == "cpu" and world == 4:
                out.setdefault("cpu4", []).extend(e)          # type: ignore[union-attr]
                out.setdefault("cpu4_bw", []).extend(big)     # type: ignore[union-attr]
                out.setdefault("cpu4_lat", []).extend(small)  # type: ignore[union-attr]
            if not fitted_here and tensors == "cpu" and world not in (2, 4):
                out.setdefault("cpu_other", []).extend(e)   # type: ignore[union-attr]
                out.setdefault(f"cpu_w{world}", []).extend(e)   # type: ignore[union-attr]
                out.setdefault(f"cpu_w{world}_bw", []).extend(big)   # type: ignore[union-attr]
                out.setdefault(f"cpu_w{world}_lat", []).extend(small)   # type: ignore[union-attr]
            if not fitted_here and tensors == "cpu" and world == 4 and f == fit_f:
                p = pred.predict(group, fitted)
                detail += [f"| {pt.size_bytes} | {pt.time_s * 1e6:.1f} | {pt.spread_pct:.1f} | {t * 1e6:.1f} | "
                           f"{x:.1f} |" for pt, t, x in zip(group, p, e)]
    own: list[str] = []
    for f, pts in per:           # the same machine and session: fit on its own 2 processes, predict the rest
        cpu = [p for p in pts if p.tensors == "cpu"]
        others = sorted({p.world for p in cpu} - {2, 4})
        if f == fit_f or not others or not any(p.world == 2 for p in cpu):
            continue
        local = fit([p for p in cpu if p.world == 2], pred)
        for w in others:
            group = [p for p in cpu if p.world == w]
            e = errors_pct(group, pred.predict(group, local))
            big = [x for pt, x in zip(group, e) if pt.size_bytes >= 16 * 2**20]
            small = [x for pt, x in zip(group, e) if pt.size_bytes < 16 * 2**20]
            out[f"own_w{w}"] = e                # type: ignore[assignment]
            own.append(f"| {f.name} | {w} | {np.median(e):.1f} | {np.median(big):.1f} | {np.median(small):.1f} | "
                       f"{max(e):.1f} |")
    summary = {k: float(np.median(v)) for k, v in out.items()}   # type: ignore[arg-type]
    if own:
        lines += ["", "The step-latency law's blind test on one machine: fitted on that campaign's own 2-process runs "
                      "(CPU tensors), predicting its other process counts (measured in the same session, interleaved "
                      "2, 3, 8, 2, 3, 8; % errors):", "",
                  "| dataset | processes | median | >= 16 MiB | < 16 MiB | worst |", "|---|---|---|---|---|---|", *own]
    lines += ["", f"Per size, CPU tensors on 4 processes of `{fit_f.name}` (predicted):", "",
              "| size (B) | measured (us) | launch range % | predicted (us) | err % |", "|---|---|---|---|---|", *detail]
    lines += ["", "Fitted: " + ", ".join(f"`{k}` = {v:.3g}" for k, v in sorted(fitted.diff().items())) + "."]
    return lines, summary, fitted


def gloo_interval_lines(folders: list[Path], fitted: Parameters) -> tuple[list[str], dict]:
    """The Gloo intervals' paragraph and blocks (validation.host_intervals.gloo_blocks; {} without Gloo data)."""
    from validation.calibrate import MIN_BAND_POINTS
    from validation.host_intervals import gloo_blocks
    per = [(f, read_points(sorted(f.glob("gloo_world*.jsonl")))) for f in folders]
    per = [(f, pts) for f, pts in per if pts]
    if not per:
        return [], {}
    blocks = gloo_blocks(per, per[0][0].name, fitted, HostPredictor("hgx-h200"))
    (_, cc, cw), (_, dc, dw) = blocks["calibrated"], blocks["datasheet"]
    return ["", "Intervals (`time_lo_s`/`time_hi_s` of `gpunetsim collective --backend gloo`, and of `gpunetsim ddp "
                "--backend gloo` through its buckets; simulator.collectives.host_uncertainty): the 5-95% quantiles of "
                "log(measured/predicted) per size band (< 64 KiB, 64 KiB - 16 MiB, >= 16 MiB; latency- and bandwidth-bound "
                f"points apart where a band holds fewer than {MIN_BAND_POINTS} points), from the calibration's "
                f"predictions of every Gloo point it was not fitted on (`{CALIBRATION}`) or from the datasheet defaults "
                "against every committed Gloo point (`calibrations/uncertainty/host.json`, used by calibrations without "
                "a Gloo block). Left one dataset out (the bands from the other datasets, tried on the one left out): "
                f"calibrated coverage {cc:.0f}% with median width {cw:.0f}% of the prediction; datasheet {dc:.0f}% "
                f"with {dw:.0f}%. MPI has no measurement: its datasheet interval is a broad prior (a factor 4.5 either "
                "way where latency sets the time, 1.65 where bandwidth does), marked as such in the output, until "
                "`python -m validation.host_calibrate --backend mpi` writes a calibration with its own residuals."], blocks


DP_RUNS = ("dp",)
"""The record kind of a DataParallel run (what a band's domain counts: validation.iteration_bands.folder_domain)."""


def dp_band_lines(residuals: dict, write: bool, pairs: Mapping | None = None) -> list[str]:
    """The DataParallel intervals' paragraph and tables (validation.iteration_bands); with ``write``, also the
    shipped band file the simulator applies (simulator.training.iteration_bands.DATAPARALLEL_FILE)."""
    from simulator.training.iteration_bands import DATAPARALLEL_FILE
    from validation import iteration_bands as ib
    if not all(residuals.get(k) for k in ("datasheet", "calibrated")):
        return []
    others = (lambda name: without_fits_on(pairs, name)) if pairs else None
    built = {"datasheet": ib.make_band(residuals["datasheet"], "the datasheet host keys' predictions of every "
                                       "committed DataParallel run on 2 or more GPUs (validation.dp_accuracy)",
                                       kinds=DP_RUNS),
             "calibrated": ib.make_band(residuals["calibrated"], "predictions with the host keys fitted on each other "
                                        "machine's 2-GPU steps (every pair; left out, a dataset is judged without "
                                        "the predictions of a fit on it; validation.dp_accuracy)", kinds=DP_RUNS,
                                        others=others)}
    if write:
        ib.write(DATAPARALLEL_FILE, built)
    out = ["", "Intervals (`iteration_lo_s`/`iteration_hi_s` of `gpunetsim ddp --strategy dataparallel`, "
               "`gpunetsim.dataparallel()` and DataParallel study rows; simulator.training.iteration_bands): the "
               "prediction times exp of the 5% and 95% quantiles of log(measured / predicted) over the points above, "
               "each dataset weighing the same, widened to hold the prediction. Without fitted `dp.` keys the band "
               "of the *datasheet* column; with them (a calibration such as `h200-dataparallel`, fitted on one "
               "machine and used on others) the band of every other machine's fit predicting each dataset (each "
               "campaign not held out fits the host keys on its 2-GPU steps and predicts every other campaign: the "
               "*other machine* column shows the first of them), so its points are each run once per fit, and a "
               "dataset left out is judged without the predictions of a fit on it. Each dataset left out in turn "
               "(its points against the band of the other datasets): " + "; ".join(
                   ib.band_sentence(k, b) for k, b in built.items()) + ". " + ib.shipped_check(DATAPARALLEL_FILE, built)]
    for k in built:
        out += ["", f"{k.capitalize()} band, each dataset left out:", "",
                *ib.table(residuals[k], others if k == "calibrated" else None)]
    return out


def write_host_datasheet(gloo_block: dict) -> None:
    """The datasheet's host-backend intervals file (simulator.collectives.host_uncertainty.HOST_FILE)."""
    import json
    from simulator.collectives.host_uncertainty import HOST_FILE, MPI_PRIOR
    HOST_FILE.write_text(json.dumps({"gloo": gloo_block, "mpi": MPI_PRIOR}, indent=1) + "\n")


def section(write_calibration: bool = False) -> list[str]:
    """The section's markdown lines, between its markers (heading included). With
    ``write_calibration``, also (re)writes the shipped calibration :data:`CALIBRATION`."""
    return [BEGIN, *_section(write_calibration), END]


def _section(write_calibration: bool) -> list[str]:
    folders = datasets()
    folder = folders[0] if folders else None
    lines = [HEADING, ""]
    if folder is None:
        return lines + ["No DataParallel or Gloo dataset committed yet (run `bash validation/scripts/gpu_campaign.sh "
                        "dp OUT` on a GPU host and commit OUT under validation/data/)."]
    base = load_calibration(COLLECTIVE_CALIBRATION)
    dl, ds, dp_fit = dp_lines(folders, base)
    gl, gs, gloo_fit = gloo_lines(folders)
    gl_iv, gloo_blocks = gloo_interval_lines(folders, gloo_fit)
    gl += gl_iv
    dl += dp_band_lines(ds.get("band_residuals", {}), write_calibration, ds.get("band_pairs"))
    if write_calibration:
        from simulator.collectives.params import SHIPPED_DIR, save_calibration
        keys = {k: dp_fit[k] for k in HOST_KEYS} | {k: v for k, v in gloo_fit.diff().items() if k.startswith("gloo.")}
        if gloo_blocks:
            write_host_datasheet(gloo_blocks["datasheet"][0])
            base = base.with_host_uncertainty({"gloo": gloo_blocks["calibrated"][0]})
        save_calibration(base.with_values(keys, name=CALIBRATION), SHIPPED_DIR / f"{CALIBRATION}.json",
                         fitted_on=[f"{folders[-1].name}/dp_world*.jsonl (2 GPUs)",
                                    *(f"{f.name}/gloo_world2.jsonl" for f in folders
                                      if (f / "gloo_world2.jsonl").exists())][:2],
                         based_on=COLLECTIVE_CALIBRATION,
                         note="NCCL and DDP keys from the base calibration; dp.* fitted on every model's "
                              "DataParallel runs at 2 GPUs, gloo.* on 2 processes (validation.dp_accuracy)")
    lines += ["### DataParallel vs DDP", ""] + dl + ["", "### Gloo all-reduce", ""] + gl + ["", "### Targets", ""]

    def verdict(v: float, t: float) -> str:
        return "met" if v <= t else "**missed**"
    if ds:
        for g in sorted(int(k.rsplit("_", 1)[1]) for k in ds if k.startswith("dp_loo_") and "max" not in k):
            if g in (2, 4):
                v = ds[f"dp_loo_{g}"]
                lines.append(f"- DataParallel iteration on {g} GPUs from the single-GPU profile, host parameters "
                             f"fitted on the other models' 2-GPU breakdown steps: median {v:.1f}% (worst {ds[f'dp_loo_max_{g}']:.1f}%; "
                             f"target {TARGET_DP:g}%: {verdict(v, TARGET_DP)}).")
        if "dp_fit2_4" in ds:
            lines.append(f"- The same with the host parameters fitted on every model's 2-GPU steps of the same machine "
                         f"(fit on 2 GPUs, predict 4): median {ds['dp_fit2_4']:.1f}% on 4 GPUs, "
                         f"{ds.get('dp_fit2_3', float('nan')):.1f}% on 3 (per campaign: " + "; ".join(
                             f"`{k[8:-2]}` {ds[k]:.1f}% on {k[-1]}" for k in sorted(ds) if k.startswith("dp_fit2_h"))
                         + ").")
        lines.append(f"- With datasheet host parameters: median {ds['dp_datasheet']:.1f}%; with the host parameters of "
                     f"the other machine: {ds['cross']:.1f}%. Launches themselves spread by a median "
                     f"{ds['launch_range']:.1f}%.")
        pr = ds["probe"]
        lines.append(f"- DDP-vs-DataParallel ratio: median {ds['ratio']:.1f}% (worst {ds['ratio_max']:.1f}%; target "
                     f"{TARGET_RATIO:g}%: {verdict(ds['ratio'], TARGET_RATIO)}); per campaign: " + "; ".join(
                         f"`{k[10:]}` {ds[k]:.1f}%" for k in sorted(ds) if k.startswith("set_ratio_"))
                     + f". DDP's own prediction at these points (section 3's model from the same profile, datasheet "
                       f"DDP keys; the iteration is the longer of the GPU timeline and the profile's host launch "
                       f"times, since a host-bound step is bounded by its host path) is off by a median {ds['ddp_at_ratio']:.1f}%, too fast at {ds['ddp_fast']:.0f} of "
                       f"the {ds['ratio_points']} points, which the ratio inherits. Measured DDP is the steady "
                       "iterations' median (see the table's introduction); against the median of *all* timed DDP "
                       f"iterations, as before this stop, the same predictions give a ratio error of "
                       f"{ds['ratio_all']:.1f}% and DDP {ds['ddp_at_ratio_all']:.1f}% (same predictions: the "
                       "difference is the held-back iterations alone). "
                       f"The measured ratio itself (each launch's DataParallel over its own DDP) spreads by a median "
                       f"{ds['ratio_launch_range']:.1f}% between launches (table above, 'ratio launch range'); the "
                       f"predicted ratio lies inside the launches' range at {ds['ratio_inside']:.0f}% of the "
                       f"{ds['ratio_points']} points.")
        keys = ds["ddp_keys"]
        lines.append("- DDP's per-tensor work (simulator.training.ddp, 'Per-tensor work'), measured on the compute "
                     "probe's host `h100x4_2026-11-26_ddp` (`python -m validation.ddp_host`; table below) and applied "
                     f"to these {ds['campaigns']} campaigns, none of which it saw: " + ", ".join(
                         ddp_host.key_text(k, v) for k, v in keys.items())
                     + ". With its GPU part alone (a small kernel per tensor copy, and the copy back's bytes) the "
                       f"ratio is {pr['GPU'][0]:.1f}% and DDP {pr['GPU'][1]:.1f}% (too fast at {pr['GPU'][2]} of "
                       f"{ds['ratio_points']}); with the host part too {pr['GPU and host'][0]:.1f}% and "
                       f"{pr['GPU and host'][1]:.1f}% (too fast at {pr['GPU and host'][2]}). Per model, the median "
                       "signed DDP error (datasheet / GPU part / GPU and host): " + "; ".join(
                           f"{m} " + " / ".join(f"{ds['probe_by_model'][k][m]:+.1f}%" for k in
                                                ("datasheet", "GPU", "GPU and host"))
                           for m in ds["probe_by_model"]["datasheet"])
                     + f". DDP's own error with them is {pr['GPU and host'][1]:.1f}% against the datasheet's "
                       f"{ds['ddp_at_ratio']:.1f}% ({'better' if pr['GPU and host'][1] < ds['ddp_at_ratio'] else 'not better'}"
                       "), so the datasheet keeps them at 0 and the figures above leave them out; the per-model "
                       "errors say where they help and where they hurt. A host's per-tensor cost is measured on that "
                       "host (`gpu_campaign.sh ddpcompute`, then `python -m validation.ddp_host`).")
        pbs = ds["probe_by_set"]
        for name, own in ds["own_host_keys"].items():
            def fig(variant: str) -> str:
                r, e = pbs.get(f"{variant}/{name}", (float("nan"), float("nan")))
                return f"ratio {r:.1f}%, DDP {e:.1f}%"
            lent = ds["borrowers"].get(name, [])
            lines.append(f"- Held out, read after this model was fixed: `{name}`, a host never measured before whose "
                         "DDP runs are all steady (the runner's new warmup) and which also ran the DDP compute probe. "
                         f"Held out means {HELD_OUT_MEANING}, and it is never "
                         "another campaign's *other machine*; " + (
                             "it does lend its thread diagnostics to the campaigns that borrow them ("
                             + ", ".join(f"`{b}`" for b in lent) + "), so their figures moved when it was added. "
                             if lent else "no campaign borrows its thread diagnostics. ")
                         + f"Datasheet DDP keys (the figures above): {fig('datasheet')}; with the keys measured on the "
                         f"committed probe host: GPU part {fig('GPU')}, GPU and host {fig('GPU and host')}; with the "
                         f"keys measured on this host's own probe (" + ", ".join(
                             ddp_host.key_text(k, v) for k, v in own.items())
                         + f"): {fig('own host')}. This host's keys over the committed probe host's: " + ", ".join(
                             f"`{k}` {own[k] / keys[k]:.2f}x" if keys[k] > 0 else f"`{k}` n/a (0 there)"
                             for k in own if k != ddp_host.COPY_KEY) + ".")
        lines.append("- Before (commit c914be6, the forward-only `parallel_apply_s` law with the host keys fitted on 2-GPU "
                     "iterations, on the three H200 campaigns): 23.5% on 4 GPUs, ratio 25.8%; the earlier log2(n) forward "
                     "law (commit 3afdcdf, two campaigns): 24.8% and 11.2%. The forward-only law was a regression for the "
                     "ratio because it modelled the forward's growth with the GPUs alone: the measured replicate and "
                     "backward (with the reduce) also grow with every GPU (the step tables above; the MLP's iteration is "
                     "mostly these two), which the log2 law's forward factor had absorbed by accident and the "
                     "parallel_apply_s law left out, so the MLP and ResNet-50 were predicted 27-42% fast on 4 GPUs while "
                     "the fit on 2-GPU iterations pushed the forward keys up for the transformers. Now the replicate "
                     "(per replica, per chunk and GPU), the backward (device threads queueing on the GIL) and the reduce "
                     "(per chunk and GPU) are modelled and each fitted on its own step.")
        sg, sh = ds["signed"], ds["shares"]

        def pt(key: str, which: int) -> str:
            v = sg.get(key, (float("nan"),) * 2)[which]
            return f"{abs(v):.0f}% {'slow' if v > 0 else 'fast'}"
        own = ", ".join(f"{sh[k]:.2f} on `{k.split('/')[0]}`" for k in sorted(sh)
                        if k.endswith("/resnet50") and sh[k] is not None)
        lines.append("- The previous stop (issue 15): main 0799539 had the ratio at 24.0% over the 16 points of the four "
                     "earlier campaigns. Two campaigns on hosts never measured before, each with every thread "
                     "diagnostic its own, test it held out: `h100x2_2026-11-26_dp` (2x H100, read with main 0799539's "
                     "laws) ratio "
                     f"{ds.get('set_ratio_h100x2_2026-11-26_dp', float('nan')):.1f}%, and `h100x4_2026-11-26_dp` (4x "
                     "H100, read after this stop's changes below were made) ratio "
                     f"{ds.get('set_ratio_h100x4_2026-11-26_dp', float('nan')):.1f}% (DataParallel leave-one-out on 4 "
                     f"GPUs {ds.get('set_loo_h100x4_2026-11-26_dp_4', float('nan')):.1f}%; per model at the ratio, "
                     "DataParallel / DDP: " + ", ".join(
                         f"{k.split('/')[1]} {pt(k, 0)} / {pt(k, 1)}" for k in sorted(sg)
                         if k.startswith("h100x4_2026-11-26_dp/")) + "). The 2x H100 host's two-thread pairs also "
                     "became donors for the H200 campaigns (none of which measured the pair); with the earlier rule "
                     "(the first donor by folder name, so the new host alone) the ratio over all 20 points was 16.3% "
                     "(measured at this stop before the rule was replaced, with main 0799539's calibrations; not recomputed here). A rule that depends "
                     "on folder names is arbitrary, so every donor of the nearest rank now counts, the median of their "
                     f"shares (ResNet-50's own share: {own}; hosts of one kind differ this much), which gives the "
                     "figure the previous stop reported (16.0%, DDP measured over all timed iterations). What still "
                     "misses the ratio, per point (DataParallel / DDP error at the ratio): "
                     f"on `h100x4_2026-11-26i` DDP's own error (BERT {pt('h100x4_2026-11-26i/bert-base', 1)}, "
                     f"GPT-2 {pt('h100x4_2026-11-26i/gpt2', 1)}: launch-bound there, their steady DDP iterations, 2 per "
                     "launch, sit above `no_sync()` by more than the model's communication, which the DDP model gives "
                     "only with a host cost per tensor that does not carry between hosts, see the bullet above) and "
                     "GPT-2 (DataParallel "
                     f"{pt('h100x4_2026-11-26i/gpt2', 0)}: its backward step, whose single-GPU launch time on that "
                     "host varies between launches by half, is predicted too slow; its replicas' backward on 2 GPUs "
                     "took less than the median one-GPU launch, which no contention law can give); "
                     "`h200x2_2026-11-26c`, which borrows every thread diagnostic from a 4x H200 host with twice its "
                     f"CPU cores (DataParallel BERT {pt('h200x2_2026-11-26c/bert-base', 0)}, GPT-2 "
                     f"{pt('h200x2_2026-11-26c/gpt2', 0)}, ResNet-50 {pt('h200x2_2026-11-26c/resnet50', 0)}; before the "
                     "borrowed costs were scaled to its host's pace, this stop, its ratio was 30.3% and the ratio over "
                     "all points 14.0%, measured at this stop and not recomputed here; the scaling was chosen after "
                     "seeing this host, so it is no blind test); and "
                     f"GPT-2 on `h200x4_2026-11-26e` (DataParallel {pt('h200x4_2026-11-26e/gpt2', 0)}, DDP "
                     f"{pt('h200x4_2026-11-26e/gpt2', 1)}). The measured ratio is itself uncertain by about its launch "
                     f"range (median {ds['ratio_launch_range']:.0f}%), which bounds what a 15% target can show.")
        lines.append("- Per campaign, leave-one-out: " + "; ".join(
            f"`{k[8:-2]}` {ds[k]:.1f}% on {k[-1]}" for k in sorted(ds)
            if k.startswith("set_loo_") and k[-1] in "34") + ".")
    if "cpu4" in gs:
        lines.append(f"- Gloo all-reduce on CPU tensors, calibrated on 2 processes, predicted on 4 (both machines): median "
                     f"{gs['cpu4']:.1f}% over 4 KiB-256 MiB (target {TARGET_GLOO:g}%: {verdict(gs['cpu4'], TARGET_GLOO)}); "
                     f"{gs['cpu4_bw']:.1f}% at 16 MiB and above, {gs['cpu4_lat']:.1f}% below. The worst points are 4 and "
                     "16 MiB on 4 processes (predicted 20-35% slow, on both machines): per byte, 4 processes move "
                     "these sizes faster than 2 do, which a latency plus bytes-over-bandwidth line fitted on 2 "
                     "processes cannot know (CPU-cache effects are the likely cause, not measured).")
    if "cpu_other" in gs:
        worlds = sorted(int(k[5:]) for k in gs if k.startswith("cpu_w") and k[5:].isdigit())
        lines.append("- Blind test of the step-latency law (a step on n processes costs H(n)/H(2) times a step on two, "
                     "parameters fitted on 2 processes only; these process counts were measured after the law was "
                     "chosen): " + "; ".join(f"{w} processes median {gs[f'cpu_w{w}']:.1f}% ({gs[f'cpu_w{w}_bw']:.1f}% "
                                             f">= 16 MiB, {gs[f'cpu_w{w}_lat']:.1f}% below)" for w in worlds)
                     + f"; all together {gs['cpu_other']:.1f}% (target {TARGET_GLOO:g}%, set for 4 processes: "
                     f"{verdict(gs['cpu_other'], TARGET_GLOO)})" + ("; fitted on the same campaign's 2-process runs "
                     "instead: " + ", ".join(f"{w} processes {gs[f'own_w{w}']:.1f}%" for w in worlds
                                              if f"own_w{w}" in gs) if any(f"own_w{w}" in gs for w in worlds) else "")
                     + ".")
    return lines
