"""Shared helpers of the code-analyzer tests (a plain module: conftest names clash across folders)."""

from __future__ import annotations

import textwrap
from pathlib import Path

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
