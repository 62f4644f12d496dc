"""Interactive HTML report of a study's rows (with gpunetsim.cluster_report, the only modules that import plotly).

One self-contained file (plotly.js is inlined once, so it opens offline) with:

* throughput and scaling efficiency vs number of GPUs, one line per model/configuration;
* the iteration broken into compute, exposed communication and optimizer (stacked bars);
* bus bandwidth vs message size, when the study asked for collective curves;
* bucket-size sensitivity: iteration time vs ``bucket_cap_mb``;
* a table with a plain-language line per point saying what limits it.

Input rows are :func:`gpunetsim.study.evaluate`'s dicts (``kind`` 'ddp' or 'collective').
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Sequence

import plotly.graph_objects as go
import plotly.io as pio

from gpunetsim.train_study import TRAIN_AXES

Row = dict[str, object]

TITLES = {
    "throughput": "Throughput vs number of GPUs",
    "efficiency": "Scaling efficiency vs number of GPUs",
    "breakdown": "Iteration time breakdown",
    "busbw": "Bus bandwidth vs message size",
    "buckets": "Bucket size sensitivity",
    "table": "What limits each configuration",
}
TRAIN_TITLES = {      # studies with a ``train`` block (gpunetsim.train_study)
    "train": "LLM training: tokens/s and MFU vs number of GPUs",
    "train_breakdown": "LLM training: iteration breakdown",
}

# Configuration columns that may tell two DDP series apart (total GPUs is the x axis).
_SERIES_COLS = ("model", "batch_size", "strategy", "backend", "topology", "gpus", "fabric", "transport", "nic_bw", "nics",
                "oversubscription", "hosts_per_leaf", "algo", "bucket_cap_mb", "engine", "calibration")
_NET_COLS = ("backend", "topology", "gpus", "fabric", "transport", "nic_bw", "nics", "oversubscription", "hosts_per_leaf",
             "algo", "engine", "calibration")
_NAMES = {"batch_size": "bs", "bucket_cap_mb": "bucket", "oversubscription": "oversub",
          "nic_bw": "nic", "nics": "nics", "gpus": "gpus/node", "hosts_per_leaf": "hosts/leaf"}


def _varying(rows: Sequence[Row], cols: Sequence[str]) -> list[str]:
    return [c for c in cols if len({repr(r.get(c)) for r in rows}) > 1]


def _fmt(col: str, v: object) -> str:
    if col == "bucket_cap_mb":
        return "no buckets" if v is None else f"bucket {float(v):g} MiB"  # type: ignore[arg-type]
    if col == "oversubscription":
        return f"oversub {float(v):g}:1"  # type: ignore[arg-type]
    if col in ("model", "topology", "engine", "fabric", "transport", "calibration", "algo", "strategy"):
        return str(v)
    if col == "backend":
        return str(v or "no process group")
    return f"{_NAMES.get(col, col)} {v}"


def series_label(row: Row, cols: Sequence[str]) -> str:
    """A short name for a row's series: the values of the columns that vary in the study."""
    return ", ".join(_fmt(c, row.get(c)) for c in cols) or str(row.get("model") or row.get("topology"))


def _groups(rows: Sequence[Row], cols: Sequence[str]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(series_label(r, cols), []).append(r)
    return out


def _layout(fig: go.Figure, title: str, x: str, y: str, *, logx: bool = False) -> go.Figure:
    fig.update_layout(title=title, xaxis_title=x, yaxis_title=y, template="plotly_white",
                      legend=dict(orientation="v"), margin=dict(l=60, r=20, t=60, b=60), height=460)
    if logx:
        fig.update_xaxes(type="log")
    return fig


def _gpu_ticks(fig: go.Figure, rows: Sequence[Row]) -> None:
    ticks = sorted({int(r["total_gpus"]) for r in rows})  # type: ignore[call-overload]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks])


def scaling_figures(ddp: Sequence[Row]) -> tuple[go.Figure, go.Figure]:
    """Samples/s and scaling efficiency vs total GPUs, one line per configuration."""
    cols = [c for c in _varying(ddp, _SERIES_COLS) if c != "gpus"] or ["model"]
    thr, eff = go.Figure(), go.Figure()
    for name, rs in _groups(ddp, cols).items():
        rs = sorted(rs, key=lambda r: int(r["total_gpus"]))  # type: ignore[call-overload]
        x = [r["total_gpus"] for r in rs]
        thr.add_trace(go.Scatter(x=x, y=[r["samples_per_s"] for r in rs], name=name, mode="lines+markers",
                                 hovertemplate="%{x} GPUs: %{y:,.0f} samples/s"))
        eff.add_trace(go.Scatter(x=x, y=[100 * float(r["scaling_efficiency"]) for r in rs],  # type: ignore[arg-type]
                                 name=name, mode="lines+markers", hovertemplate="%{x} GPUs: %{y:.1f}%"))
    _layout(thr, TITLES["throughput"], "GPUs", "samples/s (all GPUs)")
    _layout(eff, TITLES["efficiency"], "GPUs", "scaling efficiency (%)")
    for f in (thr, eff):
        _gpu_ticks(f, ddp)
    thr.update_yaxes(type="log")      # models differ by orders of magnitude in samples/s
    eff.update_yaxes(range=[0, 105])
    return thr, eff


_TRAIN_COLS = (*(a for a in TRAIN_AXES if a != "dp"), *_NET_COLS)   # dp follows the GPUs, the x axis


def train_figures(train: Sequence[Row]) -> tuple[go.Figure, go.Figure]:
    """LLM training: tokens/s (MFU on hover) vs total GPUs per configuration; stacked breakdown bars."""
    cols = [c for c in _varying(train, _TRAIN_COLS) if c != "gpus"] or ["model"]
    thr = go.Figure()
    for name, rs in _groups(train, cols).items():
        rs = sorted(rs, key=lambda r: int(r["total_gpus"]))  # type: ignore[call-overload]
        thr.add_trace(go.Scatter(x=[r["total_gpus"] for r in rs], y=[r["tokens_per_s"] for r in rs], name=name,
                                 mode="lines+markers", customdata=[100 * float(r["mfu"]) for r in rs],  # type: ignore[arg-type]
                                 hovertemplate="%{x} GPUs: %{y:,.0f} tokens/s, MFU %{customdata:.1f}%"))
    _layout(thr, TRAIN_TITLES["train"], "GPUs", "tokens/s (all GPUs)")
    _gpu_ticks(thr, train)
    labels = [f"{series_label(r, cols)} @ {r['total_gpus']} GPUs" for r in train]
    parts = (("compute", "compute_s", "#4c78a8"), ("TP communication", "tp_comm_s", "#f58518"),
             ("pipeline sends", "pp_comm_s", "#54a24b"), ("pipeline bubble", "pp_bubble_s", "#eeca3b"),
             ("DP exposed", "dp_comm_exposed_s", "#e45756"), ("optimizer", "optimizer_s", "#72b7b2"))
    bars = go.Figure()
    for name, key, color in parts:
        bars.add_trace(go.Bar(x=labels, y=[float(r.get(key) or 0.0) for r in train], name=name,  # type: ignore[arg-type]
                              marker_color=color))
    bars.update_layout(barmode="stack")
    _layout(bars, TRAIN_TITLES["train_breakdown"], "configuration", "seconds per iteration")
    return thr, bars


def breakdown_figure(ddp: Sequence[Row]) -> go.Figure:
    """Stacked bars: compute (forward + backward), exposed communication, optimizer, overhead."""
    cols = [c for c in _varying(ddp, _SERIES_COLS) if c != "gpus"] or ["model"]
    labels = [f"{series_label(r, cols)} @ {r['total_gpus']} GPUs" for r in ddp]
    ms = lambda key: [1e3 * float(r.get(key) or 0.0) for r in ddp]  # type: ignore[arg-type]  # noqa: E731
    compute = [a + b for a, b in zip(ms("forward_s"), ms("backward_s"))]
    fig = go.Figure()
    for name, ys, color in (("compute (forward + backward)", compute, "#4c78a8"),
                            ("exposed communication", ms("exposed_comm_s"), "#e45756"),
                            ("optimizer", ms("optimizer_s"), "#72b7b2"),
                            ("other overhead", ms("overhead_s"), "#bab0ac")):
        if name == "other overhead" and not any(ys):
            continue
        fig.add_trace(go.Bar(x=labels, y=ys, name=name, marker_color=color,
                             hovertemplate="%{x}<br>%{y:.3f} ms"))
    _layout(fig, TITLES["breakdown"], "", "time per iteration (ms)")
    fig.update_layout(barmode="stack", height=520)
    fig.update_xaxes(tickangle=-45)
    return fig


def busbw_figure(coll: Sequence[Row]) -> go.Figure:
    """nccl-tests busbw vs message size, one line per network configuration and GPU count."""
    cols = _varying(coll, _NET_COLS)
    fig = go.Figure()
    groups: dict[str, list[Row]] = {}
    for r in coll:
        base = series_label(r, cols) if cols else str(r["topology"])
        groups.setdefault(f"{base} x{r['nodes']} ({r['total_gpus']} GPUs)", []).append(r)
    for name, rs in groups.items():
        fig.add_trace(go.Scatter(x=[r["size_bytes"] for r in rs], y=[r["busbw_GBps"] for r in rs], name=name,
                                 mode="lines+markers",
                                 customdata=[[r["algo_used"], r["proto_used"], r["limit"]] for r in rs],
                                 hovertemplate="%{x:,} B: %{y:.1f} GB/s<br>%{customdata[0]}/%{customdata[1]}, "
                                               "%{customdata[2]}"))
    op = coll[0]["op"] if coll else ""
    _layout(fig, f"{TITLES['busbw']} ({op})", "message size (bytes)", "busbw (GB/s)", logx=True)
    return fig


def bucket_figure(ddp: Sequence[Row]) -> go.Figure:
    """Iteration time vs bucket_cap_mb, one line per configuration and GPU count."""
    cols = [c for c in _varying(ddp, _SERIES_COLS) if c not in ("gpus", "bucket_cap_mb")] or ["model"]
    groups: dict[str, list[Row]] = {}
    for r in ddp:
        if r.get("bucket_cap_mb") is not None:       # DataParallel rows have no buckets
            groups.setdefault(f"{series_label(r, cols)} @ {r['total_gpus']} GPUs", []).append(r)
    fig = go.Figure()
    for name, rs in groups.items():
        rs = sorted(rs, key=lambda r: float(r["bucket_cap_mb"]))  # type: ignore[arg-type]
        fig.add_trace(go.Scatter(x=[r["bucket_cap_mb"] for r in rs],
                                 y=[1e3 * float(r["iteration_s"]) for r in rs],  # type: ignore[arg-type]
                                 name=name, mode="lines+markers", hovertemplate="%{x} MiB: %{y:.3f} ms"))
    _layout(fig, TITLES["buckets"], "bucket_cap_mb (MiB)", "iteration time (ms)", logx=True)
    return fig


def limits_table(ddp: Sequence[Row]) -> str:
    """An HTML table: one line per DDP point with its numbers and what limits it."""
    cols = [c for c in _varying(ddp, _SERIES_COLS) if c != "gpus"] or ["model"]
    head = ("<tr><th>configuration</th><th>GPUs</th><th>iteration (ms)</th><th>samples/s</th>"
            "<th>scaling eff.</th><th>exposed comm (ms)</th><th>what limits it</th></tr>")
    body = []
    for r in ddp:
        body.append(
            "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
                series_label(r, cols), r["total_gpus"], f"{1e3 * float(r['iteration_s']):.2f}",  # type: ignore[arg-type]
                f"{float(r['samples_per_s'] or 0):,.0f}", f"{100 * float(r['scaling_efficiency']):.1f}%",  # type: ignore[arg-type]
                f"{1e3 * float(r['exposed_comm_s']):.3f}", r.get("explanation", r.get("limit")))) + "</tr>")  # type: ignore[arg-type]
    return f'<table class="limits">{head}{"".join(body)}</table>'


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1200px;color:#222}
h1{font-size:1.6em} h2{font-size:1.2em;margin-top:2em} p.note{color:#555}
table.limits{border-collapse:collapse;font-size:0.85em;width:100%}
table.limits td,table.limits th{border:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}
table.limits th{background:#f4f4f4}
"""


def build_report(rows: Sequence[Row], title: str = "gpunetsim study", subtitle: str = "",
                 failures: Sequence[tuple[str, str]] = ()) -> str:
    """The report as one HTML string (plotly.js inlined once; deterministic element ids);
    ``failures`` lists the points that failed as ``(point, error)``."""
    ddp = [r for r in rows if r.get("kind") == "ddp"]
    coll = [r for r in rows if r.get("kind") == "collective"]
    figs: list[tuple[str, str, go.Figure | None, str]] = []
    if ddp:
        thr, eff = scaling_figures(ddp)
        figs += [("throughput", TITLES["throughput"], thr, ""), ("efficiency", TITLES["efficiency"], eff, ""),
                 ("breakdown", TITLES["breakdown"], breakdown_figure(ddp),
                  "Compute is forward plus backward (stretched while all-reduces slow it down); exposed "
                  "communication is the wait for the last all-reduce after backward ended (for "
                  "DataParallel: replicate, scatter, gather and the gradient reduce, none overlapped)."),
                 ("buckets", TITLES["buckets"], bucket_figure(ddp),
                  "" if len({r["bucket_cap_mb"] for r in ddp if r.get("bucket_cap_mb") is not None}) > 1 else
                  "Only one bucket_cap_mb in this study: add a list to see the trade-off.")]
    train = [r for r in rows if r.get("kind") == "train"]
    if train:
        thr_t, bars_t = train_figures(train)
        figs += [("train", TRAIN_TITLES["train"], thr_t, "gpunetsim train's model (docs/training.md); hover for MFU."),
                 ("train-breakdown", TRAIN_TITLES["train_breakdown"], bars_t,
                  "Of the pipeline stage that finishes last; the parts add up to the iteration.")]
    plans = [r for r in rows if r.get("kind") == "search"]
    if plans:
        from gpunetsim.search_report import PLAN_TITLES, plan_figures
        thr_p, bars_p = plan_figures(plans)
        none_fit = sorted({f"{r['model']} on {r['total_gpus']} GPUs" for r in plans if not r.get("fits")})
        figs += [("plans", PLAN_TITLES["plans"], thr_p,
                  "Per model and GPU count, the fastest plan gpunetsim search finds (TP x PP x DP, micro-batch, "
                  "schedule, recomputation, sharding; hover for it); the same global batch at every size. "
                  "Dotted: ideal linear scaling from the smallest size that fits."
                  + (f" No plan fits: {', '.join(none_fit)}." if none_fit else "")),
                 ("plans-breakdown", PLAN_TITLES["plans_breakdown"], bars_p,
                  "Of the pipeline stage that finishes last; the shares add up to the iteration.")]
    if coll:
        figs.append(("busbw", TITLES["busbw"], busbw_figure(coll),
                     "nccl-tests convention: busbw = algbw x bus factor (2(n-1)/n for all_reduce), GB/s = 1e9 B/s."))
    tail = f"<h2>{TITLES['table']}</h2>{limits_table(ddp)}" if ddp else ""
    if failures:
        items = "".join(f"<tr><td>{html.escape(p)}</td><td>{html.escape(e)}</td></tr>" for p, e in failures)
        tail += (f'<h2>Failed points ({len(failures)})</h2><table class="limits"><tr><th>point</th>'
                 f"<th>error</th></tr>{items}</table>")
    return html_page(title, subtitle, figs, tail)


Section = tuple[str, str, "go.Figure | None", str]


def html_page(title: str, subtitle: str, sections: Sequence[Section], tail_html: str = "") -> str:
    """One self-contained HTML page: a heading, a note and a figure per section ``(key, heading,
    figure, note)`` (plotly.js inlined once, element ids ``fig-KEY``), then ``tail_html``."""
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    if subtitle:
        parts.append(f'<p class="note">{html.escape(subtitle)}</p>')
    first = True
    for key, heading, fig, note in sections:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        if note:
            parts.append(f'<p class="note">{html.escape(note)}</p>')
        if fig is not None:
            parts.append(pio.to_html(fig, full_html=False, include_plotlyjs=True if first else False,
                                     div_id=f"fig-{key}", config={"displaylogo": False, "responsive": True}))
            first = False
    parts.append(tail_html)
    if not sections and not tail_html:
        parts.append('<p class="note">No results.</p>')
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(rows: Sequence[Row], path: str | Path, title: str = "gpunetsim study",
                 subtitle: str = "") -> Path:
    from simulator.core.outputs import write_atomic
    return write_atomic(path, build_report(rows, title, subtitle))
