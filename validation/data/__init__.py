"""The measurement datasets shipped with gpunetsim, in its own JSONL format.

Files live next to this module (``public/*.jsonl`` converted from published nccl-tests output,
``h200x4_2026-11-26/`` measured by the project); see ``README.md`` here. They are package data,
so an installed gpunetsim finds them too. ``convert_public.py`` regenerates them (maintainers only).
"""

from __future__ import annotations

from pathlib import Path

from simulator.core.errors import InputError

DATA_DIR = Path(__file__).resolve().parent
_SUFFIXES = (".jsonl", ".txt")


def list_datasets() -> list[str]:
    """Names of the shipped data files, relative to this folder, e.g. ``public/<name>.jsonl``."""
    return sorted(p.relative_to(DATA_DIR).as_posix() for p in DATA_DIR.rglob("*")
                  if p.is_file() and p.suffix in _SUFFIXES and p.name != "README.md")


def data_path(name: str) -> Path:
    """Path of a shipped data file: ``public/x.jsonl``, ``public/x`` or a unique stem ``x``."""
    candidates = [name, f"{name}.jsonl"]
    for candidate in candidates:
        path = DATA_DIR / candidate
        if path.is_file() and path.resolve().is_relative_to(DATA_DIR):
            return path
    stem_matches = [n for n in list_datasets() if Path(n).stem == name]
    if len(stem_matches) == 1:
        return DATA_DIR / stem_matches[0]
    raise InputError("no such dataset" + (f"; ambiguous: {stem_matches}" if stem_matches else ""),
                     field="dataset", value=name)
