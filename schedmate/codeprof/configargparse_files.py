"""configargparse config files: `parser.add_argument('--config', is_config_file=True)` and the parser's
`default_config_files=[...]` name plain-text files of `key = value` lines (NeRF-style `configs/lego.txt`).

The file's values sit above the argument parser's defaults and below the command line (configargparse's own
precedence: command line > environment > config file > defaults). Nothing is executed: the file is read as
text, each line `key = value`, `key: value` or `key value` (`#` and `;` start comments, `[section]` headers
are skipped), and a key is the long option's name without its dashes.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from schedmate.codeprof.static.names import parse_scalar

_ADD_TAILS = {"add_argument", "add", "add_arg"}
_LINE = re.compile(r"^\s*(?:--)?([A-Za-z_][\w.-]*)\s*(?:[=:]\s*|\s+)(.*?)\s*$")


def _truthy(src: Any) -> bool:
    return str(src).strip() in {"True", "1"}


def config_file_flags(calls: list[dict[str, Any]]) -> list[tuple[list[str], int]]:
    """(option spellings, line) of every argument declared `is_config_file=True` (or
    `is_config_file_arg=True`) in these calls."""
    out: list[tuple[list[str], int]] = []
    for c in calls:
        if c["func"].rsplit(".", 1)[-1] not in _ADD_TAILS:
            continue
        if not any(_truthy(c["kwargs"].get(k)) for k in ("is_config_file", "is_config_file_arg")):
            continue
        spellings = [a.strip("'\"") for a in c["args"] if re.fullmatch(r"""['"]-{1,2}[\w.-]+['"]""", a)]
        if spellings:
            out.append((spellings, c["line"]))
    return out


def default_config_files(calls: list[dict[str, Any]]) -> list[str]:
    """Paths in `ArgumentParser(default_config_files=['train.txt', ...])` (literal strings only)."""
    out: list[str] = []
    for c in calls:
        src = c["kwargs"].get("default_config_files")
        if src is None or c["func"].rsplit(".", 1)[-1] not in {"ArgumentParser", "ArgParser", "ArgumentParser_"}:
            continue
        try:
            val = ast.literal_eval(src)
        except (ValueError, SyntaxError):
            continue
        if isinstance(val, (list, tuple)):
            out.extend(v for v in val if isinstance(v, str) and "*" not in v and "~" not in v)
    return out


def _value(text: str) -> Any:
    """A value as configargparse hands it to argparse, typed like the command line (`[a, b]` is a list)."""
    if text.startswith("[") and text.endswith("]"):
        items = [t.strip().strip("'\"") for t in text[1:-1].split(",") if t.strip()]
        return [parse_scalar(t) for t in items]
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return parse_scalar(text)


def parse_keyvalue(text: str) -> list[tuple[str, Any, int]]:
    """(key, value, 1-based line) of a configargparse file's settings, in file order; a later line wins."""
    out: list[tuple[str, Any, int]] = []
    for i, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        line = re.sub(r"\s+#.*$", "", line)
        m = _LINE.match(line)
        if m is None:
            continue
        key, val = m.group(1), m.group(2)
        out.append((key, _value(val) if val else True, i))
    return out


def looks_like_keyvalue(text: str) -> bool:
    """Most non-comment lines are `key = value` settings (not YAML nesting, not code)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(("#", ";"))]
    if not lines or any(ln.startswith((" ", "\t")) for ln in lines):
        return False
    return sum(bool(_LINE.match(ln)) for ln in lines) >= 0.9 * len(lines)
