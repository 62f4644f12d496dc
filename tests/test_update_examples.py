"""docs/update_examples.py: a shown line matches the real line of the same shape, numbers free."""

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "docs" / "update_examples.py"
_SPEC = importlib.util.spec_from_file_location("update_examples", _PATH)
update_examples = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(update_examples)


def test_a_json_line_whose_numbers_moved_is_refreshed():
    """A --json line's numbers end in ',' or '}': they are numbers all the same (the refresh missed such a line
    when an interval edge moved, and CI failed on the stale docs/algorithms.md example)."""
    shown = ['{"op": "all_reduce", "time_hi_s": 0.0019617240071536464, "regret_pct": 26.8}']
    actual = ['{"op": "all_reduce", "time_hi_s": 0.0019559676603052795, "regret_pct": 27.1}']
    assert update_examples.refresh(shown, actual) == (actual, [])


def test_a_line_whose_words_changed_is_left_for_a_person():
    shown = ['{"op": "all_reduce", "algo": "ring", "time_s": 0.5}']
    actual = ['{"op": "all_reduce", "algo": "tree", "time_s": 0.5}']
    assert update_examples.refresh(shown, actual) == (shown, shown)


def test_a_quoted_block_takes_the_last_lines_of_its_command():
    """A ```text block after '<!-- last lines of: python -m ... -->' is refreshed to the command's last lines, as
    many as it shows (pp_replay's summary in docs/validation-runners.md went stale when a lease was added)."""
    text = ("before\n<!-- last lines of: python -m validation.x --y -->\n```text\nold 1\nold 2\n```\nafter\n"
            "```text\nnot quoted\n```\n")
    seen = []
    out = update_examples.quote_blocks(text, lambda cmd: seen.append(cmd) or "a\nnew 1\nnew 2\n")
    assert seen == ["python -m validation.x --y"]
    assert out == ("before\n<!-- last lines of: python -m validation.x --y -->\n```text\nnew 1\nnew 2\n```\nafter\n"
                   "```text\nnot quoted\n```\n")


def test_a_quoted_command_that_fails_is_named_with_its_error():
    """A quoted command that fails stops the script with the command and its stderr, not a CalledProcessError
    traceback without either (rv20)."""
    import pytest
    with pytest.raises(SystemExit) as e:
        update_examples._run_module("python -m validation.no_such_module_rv20")
    assert "python -m validation.no_such_module_rv20" in str(e.value) and "No module named" in str(e.value)
