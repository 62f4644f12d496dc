"""Plotly reports of shared clusters (``gpunetsim cluster --html``) and of goodput under failures
(``gpunetsim goodput --html``); with gpunetsim.report, the only modules that import plotly."""

from __future__ import annotations

import html
from pathlib import Path

import plotly.graph_objects as go

from gpunetsim.report import _layout, html_page


def cluster_figures(result) -> list:
    """Iteration time per job (healthy, alone, shared) and the contended links' utilisation."""
    names = [j.name for j in result.jobs]
    times = go.Figure()
    for label, attr in (("healthy", "healthy_s"), ("alone", "alone_s"), ("shared", "shared_s")):
        times.add_trace(go.Bar(x=names, y=[getattr(j, attr) * 1e3 for j in result.jobs], name=label,
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
             "healthy: alone, no stragglers or degraded links; alone: alone with them; shared: all jobs together."),
            ("links", "Contended links", util,
             "Links a job crosses that were saturated while two or more jobs crossed them." if util is not None
             else "No link was saturated while shared.")]


def write_cluster_report(scenario, result, path: str | Path) -> Path:
    rows = "".join(f"<tr><td>{html.escape(j.name)}</td><td>{j.gpus}</td><td>{j.alone_s * 1e3:.3f}</td>"
                   f"<td>{j.shared_s * 1e3:.3f}</td><td>{j.slowdown:.3f}x</td></tr>" for j in result.jobs)
    table = ('<h2>Jobs</h2><table class="limits"><tr><th>job</th><th>GPUs</th><th>alone (ms)</th>'
             f"<th>shared (ms)</th><th>slowdown</th></tr>{rows}</table>")
    p = Path(path)
    p.write_text(html_page(f"gpunetsim cluster: {scenario.name}",
                           f"{scenario.gpus} GPUs, placement {scenario.placement}, {result.iterations} iterations",
                           cluster_figures(result), table), encoding="utf-8")
    return p
