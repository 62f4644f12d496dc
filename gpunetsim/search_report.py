"""HTML report of a plan search (with gpunetsim.report and gpunetsim.cluster_report, the only
modules that import plotly): the Pareto front of training time vs cost over the clusters, the top
plans' iteration breakdown, and the best plan's sensitivity to NIC bandwidth and GPU count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import plotly.graph_objects as go

from gpunetsim.report import html_page
from gpunetsim.search_study import plan_label, scaling
from simulator.training.llm.plan_search import PlanResult, SearchOutcome

_TERMS = (("compute_s", "compute"), ("tp_comm_s", "TP comm"), ("pp_comm_s", "PP sends"),
          ("pp_bubble_s", "bubble"), ("dp_comm_exposed_s", "DP exposed"), ("optimizer_s", "optimizer"),
          ("overhead_s", "overhead"))


def _plan_label(p: PlanResult) -> str:
    return f"{p.cluster.label}: {plan_label(p.config.as_dict())}"


def pareto(plans: Sequence[PlanResult], cost) -> list[PlanResult]:
    """Plans no other plan beats on both training time and ``cost(plan)``, fastest first."""
    front: list[PlanResult] = []
    for p in sorted(plans, key=lambda p: (p.training_s, cost(p))):
        if not front or cost(p) < cost(front[-1]):
            front.append(p)
    return front


def pareto_figure(out: SearchOutcome) -> tuple[go.Figure, str]:
    priced = all(p.cost is not None for p in out.simulated_plans)
    cost = (lambda p: p.cost) if priced else (lambda p: p.gpu_hours)
    ylabel = "cost (USD)" if priced else "GPU-hours"
    fig = go.Figure()
    by_cluster: dict[str, list[PlanResult]] = {}
    for p in out.simulated_plans:
        by_cluster.setdefault(p.cluster.label, []).append(p)
    for label, ps in by_cluster.items():
        fig.add_trace(go.Scatter(x=[p.training_s / 86400 for p in ps], y=[cost(p) for p in ps], mode="markers",
                                 name=label, text=[_plan_label(p) for p in ps], opacity=0.6))
    front = pareto(out.simulated_plans, cost)
    fig.add_trace(go.Scatter(x=[p.training_s / 86400 for p in front], y=[cost(p) for p in front],
                             mode="lines+markers", name="Pareto front", text=[_plan_label(p) for p in front],
                             line={"color": "black"}))
    fig.update_layout(xaxis_title="training time (days)", yaxis_title=ylabel, template="plotly_white")
    note = (f"Every simulated plan ({out.simulated}); {out.no_fit} did not fit and {out.pruned} were skipped by "
            f"the lower bound. {'Cost at --price.' if priced else 'No --price: GPU-hours stand for cost.'}")
    return fig, note


def breakdown_figure(plans: Sequence[PlanResult]) -> go.Figure:
    labels = [f"#{i} {_plan_label(p)}" for i, p in enumerate(plans, 1)]
    fig = go.Figure()
    for key, name in _TERMS:
        fig.add_trace(go.Bar(x=labels, y=[p.result[key] for p in plans], name=name))
    fig.update_layout(barmode="stack", yaxis_title="seconds per iteration", template="plotly_white")
    return fig


def sensitivity_figure(rows: Sequence[dict], axis: str) -> go.Figure:
    pts = [r for r in rows if r["axis"] == axis]
    x = [r["nic_Bps"] / 1e9 if axis == "nic" else r["gpus"] for r in pts]
    fig = go.Figure(go.Scatter(x=x, y=[r["tokens_per_s"] for r in pts], mode="lines+markers",
                               text=[f"iteration {r['iteration_s']:.3f} s, MFU {r['mfu'] * 100:.1f}%"
                                     + ("" if r["fits"] else ", does not fit") for r in pts]))
    fig.update_layout(xaxis_title="NIC bandwidth (GB/s per NIC)" if axis == "nic" else "GPUs",
                      yaxis_title="tokens/s", template="plotly_white")
    if axis == "gpus":
        fig.update_xaxes(type="log")
    return fig


def write_search_report(out: SearchOutcome, sensitivity: Sequence[dict], directory: str | Path,
                        title: str) -> Path:
    """``DIR/search.html`` and ``DIR/plans.json`` (every simulated plan); returns the HTML path."""
    from simulator.core.outputs import check_folder, write_atomic
    d = check_folder(directory, "--out")
    fig, note = pareto_figure(out)
    sections = [("pareto", "Training time vs cost over the clusters", fig, note),
                ("breakdown", "Top plans: iteration breakdown", breakdown_figure(out.plans[:10]),
                 "The ranked plans' iteration split into compute, TP collectives, pipeline sends, bubble, "
                 "exposed DP communication and optimizer.")]
    if sensitivity:
        best = _plan_label(out.plans[0])
        sections += [("nic", "Best plan vs NIC bandwidth", sensitivity_figure(sensitivity, "nic"),
                      f"{best}, NIC bandwidth scaled; same plan."),
                     ("gpus", "Best plan vs GPU count", sensitivity_figure(sensitivity, "gpus"),
                      f"{best}, DP scaled with the GPUs; same global batch.")]
    write_atomic(d / "plans.json", json.dumps([p.as_dict() for p in out.simulated_plans], indent=1))
    return write_atomic(d / "search.html", html_page(title, f"{out.enumerated} plans enumerated", sections))


PLAN_TITLES = {      # studies with a ``search`` block (gpunetsim.search_study), e.g. gpunetsim plan
    "plans": "LLM plans: tokens/s of the best plan vs number of GPUs",
    "plans_breakdown": "LLM plans: where the best plan's iteration goes",
}


def plan_figures(rows: Sequence[dict]) -> tuple[go.Figure, go.Figure]:
    """Study rows of kind ``search``: tokens/s of each size's best plan vs GPUs per model (log-log,
    with ideal linear scaling from the smallest size that fits; the plan on hover), and each best
    plan's iteration as shares of compute, TP, pipeline, bubble, DP and optimizer."""
    eff = scaling(list(rows))
    fits = [(i, r) for i, r in enumerate(rows) if r.get("fits")]
    series: dict[str, list[tuple[int, dict]]] = {}
    for i, r in fits:
        series.setdefault(str(r["model"]), []).append((i, r))
    thr = go.Figure()
    for name, pts in series.items():
        pts.sort(key=lambda x: int(x[1]["total_gpus"]))
        x = [int(r["total_gpus"]) for _, r in pts]
        thr.add_trace(go.Scatter(
            x=x, y=[r["tokens_per_s"] for _, r in pts], name=name, mode="lines+markers",
            text=[f"{plan_label(r)}<br>iteration {float(r['iteration_s']):.3f} s, MFU {100 * float(r['mfu']):.1f}%, "
                  f"scaling {100 * eff[i]:.0f}%, limited by {r['limiter']}" for i, r in pts],
            hovertemplate="%{x} GPUs: %{y:,.0f} tokens/s<br>%{text}"))
        per_gpu = float(pts[0][1]["tokens_per_s"]) / x[0]
        thr.add_trace(go.Scatter(x=x, y=[per_gpu * n for n in x], name=f"{name}, ideal", mode="lines",
                                 line={"dash": "dot", "width": 1}, hoverinfo="skip"))
    ticks = sorted({int(r["total_gpus"]) for r in rows})
    thr.update_layout(title=PLAN_TITLES["plans"], xaxis_title="GPUs", yaxis_title="tokens/s (all GPUs)",
                      template="plotly_white", height=460)
    thr.update_xaxes(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks])
    thr.update_yaxes(type="log")
    labels = [f"{r['model']} @ {r['total_gpus']} GPUs" for _, r in fits]
    bars = go.Figure()
    for key, name in _TERMS:
        share = [100 * float(r.get(key) or 0.0) / float(r["iteration_s"]) for _, r in fits]
        bars.add_trace(go.Bar(x=labels, y=share, name=name, text=[plan_label(r) for _, r in fits],
                              hovertemplate="%{x}: %{y:.1f}% " + name + "<br>%{text}"))
    bars.update_layout(barmode="stack", title=PLAN_TITLES["plans_breakdown"], yaxis_title="% of the iteration",
                       template="plotly_white", height=520)
    bars.update_xaxes(tickangle=-45)
    return thr, bars
