"""Refresh the output shown in docs/*.md examples after a model change: ``python docs/update_examples.py``.

Runs every ```console block's ``$ gpunetsim ...`` commands (as tests/test_docs_examples.py does) and
replaces each shown output line with the real line of the same shape (same words, numbers free),
keeping ``...`` elisions. Lines whose words changed are left for a person to fix (printed).
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

            updated = BLOCK.sub(fix, text)
        if updated != text:
            doc.write_text(updated)
            print(f"updated {doc.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
