"""What the agent may look at: a job's directory, read-only, confined and bounded.

`JobFiles(root)` lists, greps (fixed strings, case-insensitive) and reads line ranges of files under `root`.
Paths are resolved and must stay inside the root (`..`, absolute paths and symlinks pointing out are
refused); files over `MAX_FILE_BYTES` or binary files are not read; every answer is capped in lines and
characters, so a hostile directory cannot flood the model's context.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_BYTES = 1 << 20
MAX_FILES = 400
MAX_LINES = 60
MAX_CHARS = 4000
MAX_HITS = 30
SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", "venv", "build", "dist", ".mypy_cache"}
TEXT_SUFFIXES = (".py", ".sh", ".bash", ".slurm", ".sbatch", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini",
                 ".txt", ".md", ".gin", ".jsonnet", ".conf", ".env", "")


class ToolRefused(ValueError):
    """A request outside what the tools allow (path escape, binary file, too large)."""


@dataclass
class JobFiles:
    root: Path
    reads: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()
        if not self.root.is_dir():
            raise ToolRefused(f"{self.root} is not a directory")

    def resolve(self, rel: str) -> Path:
        if not rel or "\x00" in rel:
            raise ToolRefused("empty or invalid path")
        p = (self.root / rel.strip().lstrip("/")).resolve()
        if p != self.root and self.root not in p.parents:
            raise ToolRefused(f"{rel}: outside the job directory")
        return p

    def _text(self, p: Path) -> str:
        if not p.is_file():
            raise ToolRefused(f"{p.relative_to(self.root)}: not a file")
        if p.stat().st_size > MAX_FILE_BYTES:
            raise ToolRefused(f"{p.relative_to(self.root)}: over {MAX_FILE_BYTES} bytes, not read")
        data = p.read_bytes()
        if b"\x00" in data[:4096]:
            raise ToolRefused(f"{p.relative_to(self.root)}: binary file")
        return data.decode("utf-8", errors="replace")

    def files(self) -> list[str]:
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
            for name in sorted(filenames):
                p = Path(dirpath) / name
                if p.is_symlink() or not name.lower().endswith(TEXT_SUFFIXES) and "." in name:
                    continue
                out.append(str(p.relative_to(self.root)))
                if len(out) >= MAX_FILES:
                    return out
        return out

    def list_files(self) -> str:
        names = self.files()
        return "\n".join(names[:MAX_HITS * 3]) or "(no files)"

    def grep(self, needle: str) -> str:
        """Lines containing `needle` (fixed string, case-insensitive) as `file:line| text`."""
        needle = (needle or "").strip().lower()
        if len(needle) < 2:
            raise ToolRefused("grep needs at least two characters")
        hits: list[str] = []
        for rel in self.files():
            try:
                text = self._text(self.resolve(rel))
            except ToolRefused:
                continue
            for n, line in enumerate(text.splitlines(), 1):
                if needle in line.lower():
                    hits.append(f"{rel}:{n}| {line.strip()[:200]}")
                    if len(hits) >= MAX_HITS:
                        return "\n".join(hits)
        return "\n".join(hits) or f"(no line contains {needle!r})"

    def read_file(self, rel: str, start: int = 1, end: int | None = None) -> str:
        p = self.resolve(rel)
        lines = self._text(p).splitlines()
        start = max(1, int(start or 1))
        end = min(len(lines), int(end or start + MAX_LINES - 1), start + MAX_LINES - 1)
        self.reads.append(f"{rel}:{start}-{end}")
        out = "\n".join(f"{rel}:{n}| {lines[n - 1][:200]}" for n in range(start, end + 1))
        return out[:MAX_CHARS] or f"({rel} has no lines {start}-{end})"

    def line(self, rel: str, n: int) -> str | None:
        """Line `n` of `rel`, or None when it does not exist or may not be read."""
        try:
            lines = self._text(self.resolve(rel)).splitlines()
        except (ToolRefused, OSError):
            return None
        return lines[n - 1] if 1 <= n <= len(lines) else None
