"""docs/accuracy.md's At a glance (validation.accuracy_glance) and README's headline figures: the table's verdicts are
the ones its sections' Targets lists print, every verdict of those lists has a row, its links resolve, and README's
figures are the generated table's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from validation import accuracy_glance as g

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "accuracy.md").read_text().splitlines()


def glance_rows(lines: list[str]) -> list[list[str]]:
    """The cells of the At a glance table's rows (header and rule left out)."""
    start = lines.index(g.TITLE)
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("| #"):
            rows.append([c.strip() for c in line.strip().strip("|").split(" | ")])
    return rows


def test_heading_anchors_follow_github():
    lines = ["# Accuracy", "## 3. Calibrate on 2 GPUs, predict 4 GPUs (pooled campaigns, 90% intervals)",
             "### Targets", "```", "# not a heading", "```", "### Targets",
             "### Sealed: PP, TP and FSDP on a 4x H100 lease no one saw (`h100x4_2026-11-27g_llm`)"]
    assert [a for _, a in g.heading_anchors(lines)] == [
        "accuracy", "3-calibrate-on-2-gpus-predict-4-gpus-pooled-campaigns-90-intervals", "targets", "targets-1",
        "sealed-pp-tp-and-fsdp-on-a-4x-h100-lease-no-one-saw-h100x4_2026-11-27g_llm"]
    assert g.anchor(lines, "### Targets", "## 3. ") == "targets"
    assert g.anchor(lines, "## 9. ") is None


BULLET = "- 2 -> 4 GPUs, >= 16 MiB: median 2.3% (target 3%: met), p90 11.5% (target 8%: **missed**)."


@pytest.mark.parametrize("check, said", [
    (g.Check("median", 2.3, 3, key=g.K_BIG), True),
    (g.Check("p90", 11.5, 8, key=g.K_BIG), True),
    (g.Check("p90", 11.5, 12, key=g.K_BIG), False),          # judged against another target: met, the bullet missed
    (g.Check("p90", 1.5, 8, key=g.K_BIG), False),            # '11.5%' is not '1.5%'
    (g.Check("median", 2.34, 3, digits=2, key=g.K_BIG), False),
])
def test_a_check_is_found_only_with_its_figure_target_and_verdict(check, said):
    assert check.said_in(BULLET) is said


def test_checks_read_section_7_and_the_nccl_baseline_as_printed():
    assert g.Check("2 GPUs", 2.8, 8, plain=True).said_in("- Own FSDP ...: 2 GPUs 2.8% (met), 4 GPUs 9.9% (**missed**)")
    assert g.Check("4 GPUs", 9.9, 8, plain=True).said_in("- Own FSDP ...: 2 GPUs 2.8% (met), 4 GPUs 9.9% (**missed**)")
    assert g.Check("Spearman", 0.985, 0.9, above=True, digits=3, unit="", plain=True).said_in("lowest 0.985 (met);")
    nccl = "- Against NCCL's own model: < 64 KiB: ours 19.9 vs 26.4 (better); >= 16 MiB: ours 7.0 vs 6.3 (**not better**)."
    assert g.Check("< 64 KiB", 19.9, 26.4, unit="", plain=True).said_in(nccl)
    assert g.Check(">= 16 MiB", 7.0, 6.3, unit="", plain=True).said_in(nccl)
    assert not g.Check(">= 16 MiB", 7.0, 7.5, unit="", plain=True).said_in(nccl)


def test_a_verdict_the_other_choice_would_flip_is_withheld():
    c = g.Check("coverage", 81, 80, above=True, digits=0, alt=77.5)
    assert c.verdict == "no verdict"
    assert c.said_in("coverage 81% (target 80%: no verdict, it would be decided by the choice: 77.5% under x)")


def _report(bullets: list[str]) -> list[str]:
    return ["# Accuracy", "", "## 3. Calibrate", "", "## 7. LLM", "", "### Targets", "", "- Selene iteration times: "
            "datasheet 4.9% (met).", "", "## 8. Targets (issue 10)", "", *bullets, "", "## 9. Plan search"]


def _row(*checks: g.Check, sections=(("§8", "## 8. ", ""),)) -> g.Row:
    return g.Row(10, "q", checks, "data", "held out", sections)


SELENE = g.Row(14, "Selene", (g.Check("datasheet", 4.9, 8, plain=True, key=g.K_SELENE),), "d", "h",
               (("§7 targets", "### Targets", "## 7. "),))


def test_problems_none_when_the_table_says_what_the_sections_say():
    lines = _report([BULLET, "- The 4-GPU truth pools three campaigns."])
    table = [_row(g.Check("median", 2.3, 3, key=g.K_BIG), g.Check("p90", 11.5, 8, key=g.K_BIG)), SELENE]
    assert g.problems(lines, table) == []
    assert g.anchor(lines, "### Targets", "## 7. ") == "targets"


@pytest.mark.parametrize("bullets, row, found", [
    ([BULLET], _row(g.Check("median", 2.3, 3, key=g.K_BIG), g.Check("p90", 7.5, 8, key=g.K_BIG)), "is not what"),
    ([BULLET, BULLET], _row(g.Check("median", 2.3, 3, key=g.K_BIG)), "2 bullets"),
    ([BULLET, "- DDP iterations from collective calibrations only: median 4.3% (target 6%: met)."],
     _row(g.Check("median", 2.3, 3, key=g.K_BIG)), "has a verdict no row shows"),
    ([BULLET], _row(g.Check("median", 2.3, 3, key=g.K_BIG), sections=(("§5", "## 5. ", ""),)), "no heading"),
])
def test_problems_name_a_wrong_verdict_a_missing_row_and_a_dead_link(bullets, row, found, monkeypatch):
    wrong = g.problems(_report(bullets), [row, SELENE])
    assert len(wrong) == 1 and found in wrong[0]
    monkeypatch.setattr(g, "rows", lambda figures: [row, SELENE])
    with pytest.raises(ValueError, match=found):            # the generator refuses to write such a table
        g.section(_report(bullets), {})


def test_the_report_opens_with_the_table():
    start = DOC.index(g.TITLE)
    assert DOC[0] == "# Accuracy" and not any(line.startswith("## ") for line in DOC[1:start])
    assert 15 <= len(glance_rows(DOC)) <= 26


def test_every_link_of_the_table_resolves():
    anchors = {a for _, a in g.heading_anchors(DOC)}
    links = [m for row in glance_rows(DOC) for m in re.findall(r"\]\(#([^)]+)\)", row[-1])]
    assert links and set(links) <= anchors


def test_every_verdict_of_sections_7_and_8_has_its_row():
    """A Targets bullet with a verdict that no row's check names fails here (and when the report is generated)."""
    from validation.sealed_campaign import SEALED
    keys = {10: [v for k, v in vars(g).items() if k.startswith("K_")] + [g.sealed_key_10(c) for c in SEALED],
            14: [v for k, v in vars(g).items() if k.startswith("K_")] + [g.sealed_key_14(c) for c in SEALED]}
    for issue in (10, 14):
        bullets = [b for b in g.targets_list(DOC, issue) if g.VERDICT_SAID.search(b)]
        assert bullets
        assert [b[:60] for b in bullets if not any(k in b for k in keys[issue])] == []


def test_single_figures_of_the_table_carry_their_sections_verdict():
    """Each judged figure the table shows alone (not a range) is printed in its issue's Targets list, against the same
    target, with the same verdict."""
    lists = {issue: " ".join(g.targets_list(DOC, issue)) for issue in (10, 14)}
    seen = 0
    for row in glance_rows(DOC):
        issue, figures, targets, verdicts = int(row[0][1:]), row[2].split("; "), row[3].split("; "), row[4].split("; ")
        judged = [f for f in figures if any(t.startswith(f.rsplit(" ", 1)[0] + " ") for t in targets)]
        if verdicts == ["-"] or len(judged) != len(verdicts) or any(" of " in v for v in verdicts):
            continue
        for figure, target, verdict in zip(judged, targets, verdicts):
            value = figure.rsplit(" ", 1)[1]
            limit = re.search(r"[<>]= ([\d.]+)%", target)
            said = re.escape(value) + (rf" \((?:[^()]*?; )?(?:target {re.escape(limit.group(1))}%: )?" if limit
                                       else r"(?: vs [\d.]+)? \(")
            words = {"met": "(?:met|better)", "**missed**": r"(?:\*\*missed\*\*|\*\*not better\*\*)"}
            assert re.search(r"(?<![\d.])" + said + words.get(verdict, re.escape(verdict)), lists[issue]), (row[1], figure)
            seen += 1
    assert seen >= 10


def test_readme_headline_figures_are_the_generated_tables():
    """README's 'How accurate is it?' copies rows of the table (question, figure, target, met?): after the report is
    regenerated, copy them again from `python -m validation.accuracy --summary`."""
    readme = (ROOT / "README.md").read_text()
    part = readme.split("## How accurate is it?")[1].split("\n## ")[0]
    assert "python -m validation.accuracy --summary" in part
    shown = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in part.splitlines()
             if line.startswith("| ") and not line.startswith("| question")]
    generated = {row[1]: row[2:5] for row in glance_rows(DOC)}
    assert 3 <= len(shown) <= 7
    for question, figure, target, verdict in shown:
        assert generated.get(question) == [figure, target, verdict], question


def test_summary_reads_every_section():
    from validation import accuracy
    with pytest.raises(SystemExit):
        accuracy.main(["--summary", "--only", "llm"])


def test_summary_refuses_an_out_it_would_not_write(tmp_path, capsys):
    """``--summary --out FILE`` ran the whole script and wrote nothing to FILE, without a word."""
    from validation import accuracy
    with pytest.raises(SystemExit) as e:
        accuracy.main(["--summary", "--out", str(tmp_path / "a.md")])
    assert e.value.code == 2 and "--summary" in capsys.readouterr().err and not (tmp_path / "a.md").exists()


def test_the_tp_spread_row_counts_sets_within_and_carries_no_verdict():
    """Beside the sealed TP row's median verdict, the launches' spread: no target of issue 14's, so no verdict; the
    count of sets whose prediction is no further from the other launches than a launch is (stop 25)."""
    sets = [{"spread_prediction_pct": 4.8, "spread_launch_pct": 15.8},
            {"spread_prediction_pct": 8.1, "spread_launch_pct": 5.3},
            {"spread_prediction_pct": 6.4, "spread_launch_pct": 6.4}]
    row = g._tp_spread_row(sets, (("§7", "## 7. ", ""),))
    figure, target, verdict = row.cells()
    assert figure == "prediction 4.8-8.1%; a launch 5.3-15.8%"
    assert (target, verdict) == ("-", "-")
    assert "2 of 3 sets" in row.data


def test_the_report_shows_the_tp_spread_row_after_the_tp_median_row():
    rows = glance_rows(DOC)
    names = [r[1] for r in rows]
    i = names.index("Own TP runs on the sealed leases (2 and 4 GPUs)")
    assert names[i + 1] == "Own TP runs on the sealed leases (2 and 4 GPUs), against their launches' own spread"
    assert rows[i][4].endswith("of 15 met")                       # the median's verdict stays
    assert (rows[i + 1][3], rows[i + 1][4]) == ("-", "-") and "of 15 sets" in rows[i + 1][5]
