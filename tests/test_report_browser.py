"""The HTML report in a real headless Chromium: it loads offline, draws every plot, logs nothing.

Skipped when no Chromium is installed (Debian: ``apt-get install -y chromium``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "chrome")
                 if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr",
         "--v=0", "--virtual-time-budget=20000", "--dump-dom"]

# The page's console messages appear in Chromium's log as "...:CONSOLE(line)] "message", source: ..."
# (any level: console.log, console.error and uncaught exceptions alike).
CONSOLE = re.compile(r":CONSOLE[:(]|Uncaught")


def render(page: Path, tmp_path: Path) -> tuple[str, list[str]]:
    """(DOM after scripts ran, console lines) for ``page`` opened in headless Chromium."""
    profile = tmp_path / f"profile-{page.stem}"
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, [ln for ln in proc.stderr.splitlines() if CONSOLE.search(ln)]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    from gpunetsim.report import write_report
    from gpunetsim.study import StudySpec, run_points, study_from_spec
    spec = StudySpec(model=["resnet50", "gpt2"], nodes=[1, 2], bucket_cap_mb=[25, 100], engine=["closed"],
                     collectives={"op": "all_reduce", "min_bytes": 1024, "max_bytes": 2**24})
    rows = run_points(study_from_spec(spec).points, workers=1, progress=False)
    return write_report(rows, tmp_path_factory.mktemp("report") / "report.html", title="browser test")


def test_harness_sees_console_errors(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text("<html><body><script>console.error('boom'); notDefined();</script></body></html>")
    _, console = render(page, tmp_path)
    assert any("boom" in ln for ln in console)
    assert any("Uncaught" in ln for ln in console)


def test_report_draws_every_plot_without_console_messages(report, tmp_path):
    dom, console = render(report, tmp_path)
    assert console == []
    # plotly.js adds js-plotly-plot to a graph div once it has drawn it, and an svg.main-svg per layer
    drawn = re.findall(r'class="plotly-graph-div js-plotly-plot"', dom)
    assert len(drawn) == 5
    assert dom.count('class="main-svg"') >= 5
    for title in ("Throughput vs number of GPUs", "Scaling efficiency vs number of GPUs",
                  "Iteration time breakdown", "Bus bandwidth vs message size", "Bucket size sensitivity"):
        assert f">{title}" in dom          # section heading, and the plot's own title text
        assert re.search(rf'class="gtitle"[^>]*>{re.escape(title)}', dom), title
    assert "What limits each configuration" in dom and "limits" in dom


def test_report_needs_no_network(report):
    html = report.read_text()
    assert not re.search(r"<script[^>]+src=", html)
    assert "cdn.plot.ly" not in html.split("</script>")[-1]
