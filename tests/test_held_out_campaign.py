"""The blind 4x H200 campaign of section 3 (validation.held_out_campaign, issue 10): its README's blind
figures, and today's figures on its committed data."""

import re

import pytest

from validation import held_out_campaign as hc


@pytest.fixture(scope="module")
def scored():
    return hc.section()


def test_blind_figures_are_the_readmes():
    """BLIND quotes the README's table (written before any model change), not today's figures."""
    text = (hc.LAT / "README.md").read_text()
    rows = {m.group(1).strip(): [float(x) for x in m.group(2).split("|")]
            for m in re.finditer(r"^\| ([^|]+) \| \d+ \| ([\d. |]+)\|$", text, re.M)}
    assert rows["< 64 KiB"][0] == hc.BLIND["< 64 KiB"][0] and rows["< 64 KiB"][2] == hc.BLIND["< 64 KiB"][1]
    together = rows["< 16 MiB together"]                # median, p90, inside range, coverage, width
    assert (together[0], together[2], together[3], together[4]) == hc.BLIND["< 16 MiB"]
    assert (rows[">= 16 MiB"][0], rows[">= 16 MiB"][2], rows[">= 16 MiB"][1]) == hc.BLIND[">= 16 MiB"]
    assert f"3 GPUs (the latency sizes only): {hc.BLIND['3 GPUs'][0]}% median" in text


def test_held_out_campaign_is_scored_per_band_and_never_fitted(scored):
    lines, figures, (name, fit, fit23) = scored
    assert name == hc.LAT.name and fit.params["rank_overhead_s"] != fit23.params["rank_overhead_s"]
    assert fit.domain["worlds"] == [2] and fit23.domain["worlds"] == [2, 3]      # the 4-GPU launches never fitted
    small = figures[f"{hc.PREFIX}_4 < 16 MiB"]
    assert small["points"] == 46 and figures[f"{hc.PREFIX}_4 >= 16 MiB"]["points"] == 28
    assert figures[f"{hc.PREFIX}_3 < 16 MiB"]["points"] == 32
    text = "\n".join(lines)
    assert "15.2% median" in text and "only the README's figures are a blind test" in text
    assert "**Host or GPU** (`h200x4_2026-11-26_lat3`" in text and "NCCL's own choice" in text
    check = figures[f"host reading self check {hc.LAT.name}"]
    assert check["reading"] == ("shared" if check["shared"] <= check["median"] else "median")


def test_held_out_campaign_stays_at_or_under_the_blind_figure(scored):
    """Accuracy regression on committed data: 2 -> 4 GPUs under 16 MiB no worse than blind."""
    small = scored[1][f"{hc.PREFIX}_4 < 16 MiB"]
    assert small["median_pct"] <= hc.BLIND["< 16 MiB"][0] + 0.05
    assert small["inside_range_pct"] >= hc.BLIND["< 16 MiB"][1] - 0.5


def test_host_growth_is_largest_minus_smallest_world():
    split = {("a", 2): {"host_fast_s": 30e-6}, ("a", 4): {"host_fast_s": 36e-6}, ("a", 3): {"host_fast_s": 1.0},
             ("b", 2): {"host_fast_s": 40e-6}}
    assert hc.host_growth(split) == {"a": pytest.approx(6e-6)}


def test_lat3_host_issue_time_grows_with_the_ranks(scored):
    """The text's claim, from the committed host issue times: every op's fast issue time is longer on 4 GPUs."""
    growth = scored[1][f"host growth {hc.LAT.name}"]
    assert len(growth) == 7 and min(growth.values()) > 0
