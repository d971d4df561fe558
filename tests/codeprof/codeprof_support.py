"""Shared helpers of the code-analyzer tests (a plain module: conftest names clash across folders)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DATASET = REPO / "eval" / "datasets" / "code"


def make_job(root: Path, files: dict[str, str], command: str | None = None) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))
    if command is not None:
        (root / "command.txt").write_text(command + "\n")
    return root


def file_readers(root: Path, known: dict[str, Any] | None = None) -> tuple[Any, Any, Any]:
    """The `read`, `import_file` and `resolve` callbacks the model counters take, over files under `root`:
    no import resolves to a local module, and only the settings in `known` resolve (as command-line values)."""
    values = known or {}

    def read(rel: str) -> str | None:
        p = root / rel
        return p.read_text() if p.exists() else None

    def no_import(mod: str, frm: str) -> str | None:
        return None

    def resolve(expr: str) -> tuple[bool, Any, list[str]]:
        return (True, values[expr], [f"cli:{expr}"]) if expr in values else (False, None, [])

    return read, no_import, resolve


def params_of(root: Path, command: str) -> Any:
    """The static pass's `params` value for the job under `root` (None when it has no count)."""
    from schedmate.codeprof.analyzer import analyze_code

    fact = analyze_code(root, command, use_llm=False).facts.get("params")
    return None if fact is None else fact.value
