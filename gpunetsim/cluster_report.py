"""Plotly reports of shared clusters (``gpunetsim cluster --html``) and of goodput under failures
(``gpunetsim goodput --html``); with gpunetsim.report, the only modules that import plotly."""

from __future__ import annotations

import html
from pathlib import Path

import plotly.graph_objects as go

from gpunetsim.report import _layout, html_page
from simulator.core.outputs import write_atomic
from simulator.core.vocabulary import counted


def cluster_figures(result) -> list:
    """Iteration time per job (healthy, alone, shared) and the contended links' utilisation."""
    names = [j.name for j in result.jobs]
    times = go.Figure()
    for label, attr in (("healthy", "healthy_s"), ("alone", "alone_s"), ("shared", "shared_s")):
        lo = [getattr(j, attr.replace("_s", "_lo_s")) for j in result.jobs]
        hi = [getattr(j, attr.replace("_s", "_hi_s")) for j in result.jobs]
        y = [getattr(j, attr) for j in result.jobs]
        bars = None
        if all(x is not None for x in lo + hi):          # the 90% interval (simulator.training.cluster_intervals)
            bars = dict(type="data", symmetric=False, array=[(h - v) * 1e3 for h, v in zip(hi, y)],
                        arrayminus=[(v - l) * 1e3 for l, v in zip(lo, y)])
        times.add_trace(go.Bar(x=names, y=[v * 1e3 for v in y], name=label, error_y=bars,
                               hovertemplate="%{x}: %{y:.3f} ms"))
    times.update_layout(barmode="group")
    _layout(times, "Mean iteration time per job", "job", "iteration time (ms)")
    links: dict[str, tuple[float, float]] = {}
    for j in result.jobs:
        for l in j.links:
            links[l.name] = (l.utilisation, l.contended_s)
    util = None
    if links:
        order = sorted(links, key=lambda k: -links[k][1])
        util = go.Figure(go.Bar(x=[links[k][0] * 100 for k in order], y=order, orientation="h",
                                customdata=[links[k][1] * 1e3 for k in order],
                                hovertemplate="%{y}: %{x:.1f}% used, saturated while shared %{customdata:.3f} ms"))
        util.update_yaxes(autorange="reversed")
        _layout(util, "Links saturated while shared by several jobs", "utilisation over the run (%)", "link")
    return [("times", "Mean iteration time per job", times,
             "healthy: alone, no stragglers or degraded links; alone: alone with them; shared: all jobs together. "
             "Whiskers: the 90% interval (the job's own model uncertainty; docs/shared-clusters.md)."),
            ("links", "Contended links", util,
             "Links a job crosses that were saturated while two or more jobs crossed them." if util is not None
             else "No link was saturated while shared.")]


def write_cluster_report(scenario, result, path: str | Path) -> Path:
    def band(j) -> str:
        return "-" if j.shared_lo_s is None else f"{j.shared_lo_s * 1e3:.3f} - {j.shared_hi_s * 1e3:.3f}"
    rows = "".join(f"<tr><td>{html.escape(j.name)}</td><td>{j.gpus}</td><td>{j.alone_s * 1e3:.3f}</td>"
                   f"<td>{j.shared_s * 1e3:.3f}</td><td>{band(j)}</td><td>{j.slowdown:.3f}x</td></tr>"
                   for j in result.jobs)
    table = ('<h2>Jobs</h2><table class="limits"><tr><th>job</th><th>GPUs</th><th>alone (ms)</th>'
             f"<th>shared (ms)</th><th>shared 90% interval (ms)</th><th>slowdown</th></tr>{rows}</table>")
    return write_atomic(path, html_page(f"gpunetsim cluster: {scenario.name}",
                                        f"{scenario.gpus} GPUs, placement {scenario.placement}, "
                                        f"{counted(result.iterations, 'iteration')}", cluster_figures(result), table),
                        field="--html")


def goodput_figure(r) -> go.Figure:
    """Goodput vs checkpoint interval (log axis), with Young's, Daly's and the numeric optimum."""
    import numpy as np

    from simulator.training.goodput import goodput
    centre = r.optimum_s
    taus = np.geomspace(centre / 30, centre * 30, 241)
    fig = go.Figure(go.Scatter(x=taus / 60, y=[goodput(t, r.checkpoint_s, r.restart_s, r.mtbf_s) * 100 for t in taus],
                               mode="lines", name="goodput", hovertemplate="every %{x:.1f} min: %{y:.2f}%"))
    marks = [("Young", r.young_s, "triangle-up"), ("Daly", r.daly_s, "diamond"), ("optimum", r.optimum_s, "circle")]
    if r.interval_s != r.optimum_s:
        marks.append(("yours", r.interval_s, "x"))
    for name, tau, symbol in marks:
        fig.add_trace(go.Scatter(x=[tau / 60], y=[goodput(tau, r.checkpoint_s, r.restart_s, r.mtbf_s) * 100],
                                 mode="markers", name=name, marker=dict(symbol=symbol, size=11),
                                 hovertemplate=f"{name}: every %{{x:.1f}} min, %{{y:.3f}}%"))
    _layout(fig, "Goodput vs checkpoint interval", "checkpoint interval (minutes of training)", "goodput (%)",
            logx=True)
    return fig


def goodput_scale_figure(r) -> go.Figure:
    """Goodput at the optimal interval as the job grows (same per-component MTBFs and ratios)."""
    from simulator.training.goodput import goodput, optimal_interval
    c = r.components
    sizes, values = [], []
    k = 1 / 64
    while k <= 4.0 + 1e-9:
        if c.gpus * k >= 1:
            m = r.mtbf_s / k
            tau = optimal_interval(r.checkpoint_s, r.restart_s, m)
            sizes.append(round(c.gpus * k))
            values.append(goodput(tau, r.checkpoint_s, r.restart_s, m) * 100)
        k *= 2
    fig = go.Figure(go.Scatter(x=sizes, y=values, mode="lines+markers", name="optimal interval",
                               hovertemplate="%{x} GPUs: %{y:.2f}%"))
    _layout(fig, "Goodput vs job size (optimal interval each)", "GPUs", "goodput (%)", logx=True)
    return fig


def write_goodput_report(r, path: str | Path) -> Path:
    from simulator.core.units import format_duration as dur
    c = r.components
    return write_atomic(path, html_page(
        "gpunetsim goodput",
        f"{c.gpus} GPUs, {c.nodes} servers, {c.nics} NICs, {c.switches} switches; job MTBF {dur(r.mtbf_s)}, "
        f"checkpoint {dur(r.checkpoint_s)}, restart {dur(r.restart_s)}, {dur(r.work_s)} of training",
        [("interval", "Goodput vs checkpoint interval", goodput_figure(r),
          "Daly's model: expected wall time per segment M e^(R/M) (e^((tau+delta)/M) - 1)."),
         ("scale", "Goodput vs job size", goodput_scale_figure(r),
          "Failure rate scaled with the job (every component count times the same factor).")]), field="--html")
