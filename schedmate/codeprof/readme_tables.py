"""Markdown tables in a repository's READMEs, and the model-size column they state.

Research repositories publish their results as markdown tables with a `Params` column, one row per model or
config. Two readers take a run's size from such a row: `readme_params` (the row for the config file the command
names) and `named_model_table` (the row for the architecture `--model NAME` selects). Both find tables, the
one whole-model `Params` column and its counts, and the READMEs that may hold them, here, so that a table
reads the same whichever reader asks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from schedmate.codeprof.reader import Workdir

SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)+\|?\s*$")
LINK = re.compile(r"\]\(\s*([^)\s]+)\s*\)")
"""the target of a markdown link in a cell"""
_PARAMS_HEADER = re.compile(r"^[#*\s]*param(?:eter)?s?\b", re.IGNORECASE)
_NOT_WHOLE_MODEL = re.compile(r"tunable|trainable|learnable|update|extra|added", re.IGNORECASE)
_UNIT = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9}
_VALUE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmbg])?\s*$", re.IGNORECASE)
_HEADER_UNIT = re.compile(r"\(\s*([kmbg])\s*\)", re.IGNORECASE)
README_NAMES = ("README.md", "readme.md", "Readme.md", "README_en.md")


@dataclass(frozen=True)
class Table:
    header: list[str]
    """header cells without markup"""
    rows: list[tuple[int, list[str]]]
    """(1-based line, raw cells) per body row"""

    @property
    def params_column(self) -> int | None:
        """The one column counting the whole model's parameters (`Params`, `#Params (M)`), or None when there
        is none or more than one; `Tunable`/`Trainable`/`Extra` columns are not the model's size."""
        cols = [k for k, h in enumerate(self.header)
                if _PARAMS_HEADER.match(h) and not _NOT_WHOLE_MODEL.search(h)]
        return cols[0] if len(cols) == 1 else None


def plain(cell: str) -> str:
    """A cell's text without HTML tags, link targets, code and emphasis marks."""
    cell = re.sub(r"<[^>]+>", "", cell)
    cell = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell)
    return cell.replace("`", "").replace("*", "").strip()


def cells(line: str) -> list[str]:
    """A table line's cells; one border `|` on each side is markup, not an empty cell."""
    s = line.strip().removeprefix("|").removesuffix("|")
    return [c.strip() for c in s.split("|")]


def tables(text: str) -> list[Table]:
    """The markdown tables of a text, with or without outer pipes."""
    lines = text.splitlines()
    out: list[Table] = []
    i = 0
    while i < len(lines) - 1:
        if "|" in lines[i] and SEPARATOR.match(lines[i + 1]):
            rows: list[tuple[int, list[str]]] = []
            j = i + 2
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                rows.append((j + 1, cells(lines[j])))
                j += 1
            out.append(Table([plain(h) for h in cells(lines[i])], rows))
            i = j
        else:
            i += 1
    return out


def count_cell(cell: str, header: str) -> float | None:
    """The parameter count a table cell states (a bare number is millions, the vision-table convention,
    unless the header names a unit); None for anything else or a count too small to be a model's."""
    m = _VALUE.match(plain(cell).replace(",", ""))
    if not m:
        return None
    unit = m.group(2) or ((h := _HEADER_UNIT.search(header)) and h.group(1)) or "m"
    value = float(m.group(1)) * _UNIT[unit.lower()]
    return value if value >= 1e4 else None


def readmes_up_from(path: str | None, wd: Workdir) -> list[str]:
    """The READMEs of the folder holding `path` and of every folder above it, nearest first (the root's
    alone when `path` is None)."""
    dirs = [""]
    if path:
        parent = PurePosixPath(path).parent
        dirs = [str(d) for d in [parent, *parent.parents]]
    out: list[str] = []
    for d in dirs:
        for name in README_NAMES:
            rel = name if d in ("", ".") else f"{d}/{name}"
            if rel not in out and wd.exists(rel):
                out.append(rel)
    return out


def read_readme(rel: str, wd: Workdir) -> str:
    """A README's text, empty when it cannot be read (too large, not text)."""
    try:
        return wd.read_text(rel) or ""
    except (ValueError, OSError):
        return ""
