"""absl flag files: `--flagfile=path` stands for the flags written in that file, one per line.

absl's documented format: each line holds one flag (`--batch_size=256`), lines starting with `#` or `//`
are comments, blank lines are skipped, a line may itself be `--flagfile=other` (nested), and the flags take
effect at the place of the `--flagfile` argument, so a flag written after it on the command line wins.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

MAX_DEPTH = 4


def expand_flagfiles(args: list[str], read: Callable[[str], str | None], base: str = "",
                     notes: list[str] | None = None, depth: int = 0) -> list[str]:
    """`args` with every `--flagfile=F` / `--flagfile F` replaced by F's flags (read through `read`, the path
    relative to `base` or the root); an unreadable file is named in `notes` and left out."""
    out: list[str] = []
    i = 0
    while i < len(args):
        t = args[i]
        m = re.fullmatch(r"--?flagfile(?:=(.*))?", t)
        if not m:
            out.append(t)
            i += 1
            continue
        path = m.group(1)
        if path is None and i + 1 < len(args):
            path, i = args[i + 1], i + 1
        i += 1
        path = (path or "").strip().strip("'\"")
        text = None
        for cand in (str(PurePosixPath(base) / path) if base not in {"", "."} else path, path):
            text = read(cand.lstrip("./") if cand.startswith("./") else cand)
            if text is not None:
                break
        if text is None or depth >= MAX_DEPTH:
            if notes is not None:
                notes.append(f"flagfile {path} not read" + (" (nested too deep)" if text is not None else ""))
            continue
        lines = [ln.strip() for ln in text.splitlines()]
        flags = [ln for ln in lines if ln and not ln.startswith(("#", "//"))]
        out.extend(expand_flagfiles(flags, read, str(PurePosixPath(path).parent), notes, depth + 1))
    return out
