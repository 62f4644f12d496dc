"""Plotly HTML for ``gpunetsim compare`` (the validation module's only plotting code)."""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from simulator.core.outputs import write_atomic
from simulator.core.vocabulary import busbw_factor
from validation.compare import Comparison


def compare_html(comps: Sequence[Comparison], path: str, title: str = "gpunetsim compare") -> None:
    """busbw vs size (measured and predicted) per (op, world, variant), and the error per point."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, subplot_titles=("Bus bandwidth vs message size",
                                                        "Prediction error per point (%)"), vertical_spacing=0.12)
    series = defaultdict(list)
    for c in comps:
        series[(c.point.op, c.point.world, c.point.variant)].append(c)
    for (op, world, variant), cs in sorted(series.items()):
        cs = sorted(cs, key=lambda c: c.point.size_bytes)
        x = [c.point.size_bytes for c in cs]
        label = f"{op} n={world} {variant}"
        fig.add_trace(go.Scatter(x=x, y=[c.point.size_bytes / c.point.time_s / 1e9 * busbw_factor(op, world) for c in cs],
                                 mode="lines+markers", name=f"{label} measured"), row=1, col=1)
        fig.add_trace(go.Scatter(x=x, y=[c.predicted_busbw_GBps for c in cs], mode="lines",
                                 line={"dash": "dash"}, name=f"{label} predicted"), row=1, col=1)
        fig.add_trace(go.Scatter(x=x, y=[c.error * 100 for c in cs], mode="markers", name=f"{label} error",
                                 showlegend=False), row=2, col=1)
    fig.update_xaxes(type="log", title_text="size (bytes)")
    fig.update_yaxes(title_text="busbw (GB/s)", row=1, col=1)
    fig.update_yaxes(title_text="(predicted - measured) / measured, %", row=2, col=1)
    fig.update_layout(title=title, height=900)
    write_atomic(path, fig.to_html(include_plotlyjs=True, full_html=True), field="--html")
