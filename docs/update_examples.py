"""Refresh the output shown in docs/*.md examples after a model change: ``python docs/update_examples.py``.

Runs every ```console block's ``$ gpunetsim ...`` commands (as tests/test_docs_examples.py does) and
replaces each shown output line with the real line of the same shape (same words, numbers free),
keeping ``...`` elisions. Lines whose words changed are left for a person to fix (printed).

A ```text block right after ``<!-- last lines of: python -m MODULE [ARGS] -->`` quotes the end of that command's
output (run from the repository root): it is replaced by as many of the output's last lines as it shows.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
NUM = re.compile(r"^[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?%?$")
BLOCK = re.compile(r"(^```console[^\n]*\n)(.*?)(^```)", re.M | re.S)
FILES = re.compile(r"^```(?:yaml|json)[^\n]*\n(# file:[^\n]*\n.*?)^```", re.M | re.S)
QUOTE = re.compile(r"(^<!-- last lines of: (python -m [^\n]*?) -->\n```text\n)(.*?)(^```)", re.M | re.S)


def shape(line: str) -> list[str]:
    """The line's words with every number as '#', a number closing a --json value (``0.5,``, ``26.8}``) too."""
    return ["#" + t[len(t.rstrip(",;]}")):] if NUM.match(t.rstrip(",;]}")) else t for t in line.split()]


def refresh(shown: list[str], actual: list[str]) -> tuple[list[str], list[str]]:
    out, missing, pos = [], [], 0
    for want in shown:
        if not want.strip() or want.strip() == "...":
            out.append(want)
            continue
        for j in range(pos, len(actual)):
            if shape(actual[j]) == shape(want):
                out.append(actual[j])
                pos = j + 1
                break
        else:
            out.append(want)
            missing.append(want)
    return out, missing


def quote_blocks(text: str, run) -> str:
    """``text`` with every quoted block (:data:`QUOTE`) replaced by the last lines of ``run(command)``'s output,
    as many as the block shows."""
    def fix(m: re.Match) -> str:
        shown = m.group(3).rstrip("\n").split("\n")
        actual = run(m.group(2)).rstrip("\n").split("\n")
        return m.group(1) + "\n".join(actual[-len(shown):]) + "\n" + m.group(4)
    return QUOTE.sub(fix, text)


def _run_module(command: str) -> str:
    args = shlex.split(command)[1:]             # 'python -m MODULE ...' with this interpreter
    done = subprocess.run([sys.executable, *args], cwd=DOCS.parent, capture_output=True, text=True)
    if done.returncode:         # the quote is left as it is; say which command and why, not a traceback
        raise SystemExit(f"update_examples: `{command}` exited {done.returncode}:\n{done.stderr.strip()[-2000:]}")
    return done.stdout


def main() -> int:
    exe = Path(sys.executable).parent / "gpunetsim"
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "gpunetsim.cli"]
    for doc in sorted(DOCS.glob("*.md")):
        text = doc.read_text()
        with tempfile.TemporaryDirectory() as tmp:
            for body in FILES.findall(text):
                name = body.split("\n", 1)[0].removeprefix("# file:").strip()
                (Path(tmp) / name).write_text(body)

            def fix(m: re.Match) -> str:
                lines = m.group(2).rstrip("\n").split("\n")
                if not lines[0].startswith("$ gpunetsim"):
                    return m.group(0)
                new, cmd, shown = [], None, []

                def flush():
                    if cmd is None:
                        return
                    proc = subprocess.run(base + shlex.split(cmd)[1:], cwd=tmp, capture_output=True, text=True)
                    actual = (proc.stdout + (proc.stderr if proc.returncode else "")).splitlines()
                    fixed, missing = refresh(shown, actual)
                    for miss in missing:
                        print(f"{doc.name}: '{cmd}': no line shaped like: {miss}")
                    new.extend(fixed)

                for line in lines:
                    if line.startswith("$ "):
                        flush()
                        cmd, shown = line[2:], []
                        new.append(line)
                    else:
                        shown.append(line)
                flush()
                return m.group(1) + "\n".join(new) + "\n" + m.group(3)

            updated = quote_blocks(BLOCK.sub(fix, text), _run_module)
        if updated != text:
            doc.write_text(updated)
            print(f"updated {doc.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
