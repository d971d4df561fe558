"""Worker processes a job's own code starts, one per GPU: `os.fork()`, `Process(...)` or `spawn(...)` inside a
loop over a GPU count (`for r in range(args.n_gpu)`, a name assigned from `torch.cuda.device_count()`), or
`spawn(..., nprocs=torch.cuda.device_count())`. Such a launcher makes a bare `python -m pkg.train` a job of
as many processes as there are visible GPUs, a count decided at run time."""

from __future__ import annotations

import re
from typing import Any

STARTS = {"fork", "Process", "spawn", "start_processes"}
"""call tails that start a worker process"""
GPU_COUNT = re.compile(r"gpu|device_count|num_devices|n_devices", re.IGNORECASE)
_FOR_RANGE = re.compile(r"\s*for\s+\w+\s+in\s+range\((.+)\)\s*:")


def _gpu_count(expr: str, counted: set[str]) -> bool:
    """True when a count expression names GPUs, or a name the file assigns from `device_count()`."""
    return bool(GPU_COUNT.search(expr)) or any(re.search(rf"\b{re.escape(n)}\b", expr) for n in counted)


def enclosing_headers(lines: list[str], line: int, stop: int) -> list[tuple[int, str]]:
    """(index, text) of the block headers a line (1-based) sits in, innermost first, looking no further back than
    line `stop` (1-based): each non-blank, non-comment line indented less than everything below it so far."""
    if not 0 < line <= len(lines):
        return []
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    out = []
    for k in range(line - 2, max(stop - 2, -1), -1):
        text = lines[k]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        own = len(text) - len(text.lstrip())
        if own < indent:
            indent = own
            out.append((k, text))
    return out


def _enclosing_ranges(lines: list[str], line: int, start: int) -> list[str]:
    """The counts of the `for ... in range(<count>)` blocks a line sits in, up to its function's `def` line."""
    out = []
    for _, text in enclosing_headers(lines, line, start):
        if m := _FOR_RANGE.match(text):
            out.append(m.group(1))
    return out


def per_gpu_launches(summary: dict[str, Any], text: str) -> list[tuple[str, int, list[str]]]:
    """(function name, line, GPU counts) of each call in the file that starts one worker process per GPU. A
    count that is a parameter of the function is the caller's to set (`launch(num_gpus)`): not listed."""
    lines = text.splitlines()
    counted = {a["target"] for a in summary.get("assigns", []) if "device_count" in a["expr"]}
    out: list[tuple[str, int]] = []
    for c in summary.get("calls", []):
        if c["func"].rsplit(".", 1)[-1] not in STARTS:
            continue
        fns = [f for f in summary.get("functions", []) if f["line"] <= c["line"] <= (f.get("end") or 0)]
        if not fns:
            continue
        fn = max(fns, key=lambda f: f["line"])  # the innermost
        src = c["kwargs"].get("nprocs") or (c["args"][2] if len(c["args"]) > 2 else None)
        counts = ([src] if src else []) + _enclosing_ranges(lines, c["line"], fn["line"])
        gpu = [x for x in counts if _gpu_count(x, counted)]
        if gpu and not any(x.strip() in (fn.get("params") or []) for x in gpu):
            out.append((fn["name"], c["line"], gpu))
    return out
