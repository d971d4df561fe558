"""Safe, bounded reading of a job's working directory.

Nothing here imports, executes or spawns anything from the job. Every read goes through `Workdir`,
which refuses paths outside the workdir (including symlinks that escape it), non-regular files,
binaries and files over the per-file cap, and stops once the total byte budget is spent. Each file it
did read is remembered with its sha256, which keys the version cache.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

ANCHOR = "/__workdir__"
"""The workdir root as the shell interpreter writes it (`schedmate.codeprof.shell.expand.ROOT`)."""
MAX_FILE_BYTES = 512 * 1024
"""per file; real training libraries keep their defaults in modules of 250-300 KB (e.g. one `train_util.py`)"""
MAX_TOTAL_BYTES = 4 * 1024 * 1024
MAX_LISTED_FILES = 2000
MAX_SEARCHED_FILES = 50000
"""files walked when looking a config up by the tail of its path"""
_SYSTEM_ROOTS = {"usr", "etc", "bin", "sbin", "lib", "lib64", "proc", "sys", "dev", "var", "boot", "run", "opt",
                 "root", "tmp"}
_SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache", "wandb"}
TEXT_SUFFIXES = {
    ".py",
    ".sh",
    ".bash",
    ".slurm",
    ".sbatch",
    ".yaml",
    ".yml",
    ".json",
    ".toml",
    ".cfg",
    ".ini",
    ".txt",
    ".md",
}


@dataclass
class Workdir:
    root: Path
    max_file_bytes: int = MAX_FILE_BYTES
    max_total_bytes: int = MAX_TOTAL_BYTES
    hashes: dict[str, str] = field(default_factory=dict)
    """relative path -> sha256 of every file read."""
    skipped: dict[str, str] = field(default_factory=dict)
    """relative path -> why it was not read."""
    bytes_read: int = 0
    virtual: dict[str, tuple[str, str]] = field(default_factory=dict)
    """relative path -> (text, file:line of the script that writes it): files a job script creates with a
    here-document or an echo before it launches (a DeepSpeed JSON, a hostfile). They replace a file of the
    same name, as the script's write would."""
    mapped: dict[str, str] = field(default_factory=dict)
    """absolute paths outside the workdir read as the workdir file with the same tail (see `_clone_path`)"""
    _texts: dict[str, str] = field(default_factory=dict)
    _all_files: list[str] | None = None

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"workdir {self.root} is not a directory")

    def rel(self, path: str | Path, base: str = "") -> str | None:
        """Normalise `path` (relative to `base` inside the workdir, or absolute) to a workdir-relative
        path, or None when it points outside the workdir."""
        text = str(path)
        if "\x00" in text:  # `$UNSET/dir/file.py`: an unknown prefix; the known tail may still be in the clone
            tail = text.rsplit("\x00", 1)[1]
            if tail.startswith("/"):
                return self._clone_path(Path(os.path.normpath(tail)))
        if text == ANCHOR or text.startswith(ANCHOR + "/"):
            path, base = text[len(ANCHOR):].lstrip("/") or ".", ""
        p = Path(path)
        absolute = p.is_absolute()
        if not absolute:
            p = self.root / base / p
        try:
            lexical = Path(os.path.normpath(p))
            return str(lexical.relative_to(self.root))
        except ValueError:
            return self._clone_path(lexical) if absolute else None

    def _clone_path(self, outside: Path) -> str | None:
        """An absolute path into the author's own clone of this repository (`/scratch/me/Repo/scripts/x.sh`):
        the workdir file with the longest common tail (two components at least; system and package
        directories never), so a script that hard-codes where its author kept the repository is still read."""
        parts = outside.parts[1:]
        if not parts or parts[0] in _SYSTEM_ROOTS or "site-packages" in parts or "dist-packages" in parts:
            return None
        # `cd /fsx/alice/nanoVLM`: the author's clone itself, named like this workdir
        if len(parts[-1]) >= 3 and parts[-1].lower() in re.split(r"[+@/]", self.root.name.lower()):
            self.mapped.setdefault(str(outside), ".")
            return "."
        for k in range(1, len(parts) - 1):
            cand = "/".join(parts[k:])
            q = self.root / cand
            if (q.is_file() and self._inside(q)) or cand in self.virtual:
                self.mapped.setdefault(str(outside), cand)
                return cand
        return None

    def exists(self, rel: str) -> bool:
        r = self.rel(rel)
        if r is None:
            return False
        p = self.root / r
        return (p.is_file() and self._inside(p)) or r in self.virtual

    def is_dir(self, rel: str) -> bool:
        r = self.rel(rel)
        if r is None:
            return False
        p = self.root / r
        return p.is_dir() and self._inside(p)

    def _inside(self, p: Path) -> bool:
        try:
            p.resolve().relative_to(self.root)
            return True
        except (ValueError, OSError):
            return False

    def read_text(self, rel: str) -> str | None:
        """The file's text, or None (with the reason in `skipped`) when it may not or cannot be read."""
        r = self.rel(rel)
        if r is None:
            self.skipped[str(rel)] = "outside the workdir"
            return None
        if r in self._texts:
            return self._texts[r]
        p = self.root / r
        if r in self.virtual:
            return self.virtual[r][0]
        if p.is_symlink() and not self._inside(p):
            self.skipped[r] = "symlink escaping the workdir"
            return None
        if not self._inside(p):
            self.skipped[r] = "outside the workdir"
            return None
        if not p.is_file():
            self.skipped[r] = "not a regular file"
            return None
        size = p.stat().st_size
        if size > self.max_file_bytes:
            self.skipped[r] = f"larger than the per-file cap ({size} > {self.max_file_bytes} bytes)"
            return None
        if self.bytes_read + size > self.max_total_bytes:
            self.skipped[r] = f"total read budget of {self.max_total_bytes} bytes spent"
            return None
        with open(p, "rb") as fh:
            data = fh.read(self.max_file_bytes + 1)
        self.bytes_read += len(data)
        if b"\x00" in data[:8192]:
            self.skipped[r] = "binary file"
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.skipped[r] = "binary file (not UTF-8)"
            return None
        self.hashes[r] = hashlib.sha256(data).hexdigest()
        self._texts[r] = text
        return text

    def find_by_suffix(self, suffix: str) -> list[str]:
        """Workdir-relative files whose path ends with `/suffix` (or is `suffix`): where a config named
        without its directory (`--config llama3_1/8B_full` -> `recipes/configs/llama3_1/8B_full.yaml`) is."""
        if self._all_files is None:
            self._all_files = self.list_files(limit=MAX_SEARCHED_FILES)
        tail = "/" + suffix.lstrip("/")
        return [f for f in self._all_files if f == suffix or f.endswith(tail)]

    def list_files(self, limit: int = MAX_LISTED_FILES) -> list[str]:
        """Workdir-relative paths of regular files (symlinks are listed only when they stay inside)."""
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
            for name in sorted(filenames):
                p = Path(dirpath) / name
                if p.is_symlink() and not self._inside(p):
                    continue
                out.append(str(p.relative_to(self.root)))
                if len(out) >= limit:
                    return out
        return out


def sha256_file(path: Path, limit: int) -> str | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError:
        return None
    if len(data) > limit:
        return None
    return hashlib.sha256(data).hexdigest()
