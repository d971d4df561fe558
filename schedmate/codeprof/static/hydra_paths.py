"""Where a `@hydra.main` entry's configs live when its arguments are not plain strings.

- `config_path=str(PROJECT_ROOT / "conf")`, `config_path=os.path.join(ROOT, "configs")`: a directory built
  at run time from a root the code computes (often from an environment variable). The literal tail names
  the directory; it is looked for next to the script and in each directory above it up to the workdir.
- `config_path=CONFIG_PATH` with a module-level `CONFIG_PATH = os.getenv("X", "config/training")` (and
  `CONFIG_NAME = "default_training"`): the module's own string literals are the candidates.

A candidate counts only when the primary config is there (`<dir>/<config_name>.yaml`), and only when
exactly one directory qualifies: two readings that both exist are a guess, and no guess is made.

(`hydra.searchpath` roots are read by `hydra_compose.search_roots`.)
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable
from typing import Any

_NAME = re.compile(r"^[A-Za-z_]\w*$")


def _literals(src: str) -> list[str]:
    """The string literals of an expression's source, in order; [] when it does not parse."""
    try:
        tree = ast.parse(src.strip(), mode="eval")
    except SyntaxError:
        return []
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _module_literals(name: str, assigns: list[dict[str, Any]]) -> list[str]:
    """String literals of the module-level assignments to `name` (the first assignment's first)."""
    out: list[str] = []
    for a in assigns:
        if a.get("depth") == 0 and a.get("target") == name and a.get("op") is None:
            out.extend(_literals(a.get("expr") or ""))
    return out


def _candidates(src: str, assigns: list[dict[str, Any]]) -> list[str]:
    """Literal strings an argument expression may stand for: its own literals and those of the module-level
    names it uses."""
    out = list(_literals(src))
    try:
        tree = ast.parse(src.strip(), mode="eval")
    except SyntaxError:
        return out
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and _NAME.match(n.id):
            out.extend(_module_literals(n.id, assigns))
    return [s for s in out if s and not s.isupper()]  # `"PROJECT_ROOT"`: an environment variable's name


def _parents(d: str) -> list[str]:
    """`d` and each directory above it, up to the workdir root ('')."""
    out = [d]
    while d not in ("", "."):
        d = posixpath.dirname(d)
        out.append("" if d == "." else d)
    return out


def locate_hydra_config(exists: Callable[[str], bool], script: str, cp_src: str, cn_src: str,
                        assigns: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(config directory relative to the workdir, config name) for a `@hydra.main` whose `config_path` or
    `config_name` is an expression (`cp_src`, `cn_src`: their source text); None unless exactly one
    directory holds the primary config."""
    names = [cn_src.strip("'\"")] if _is_literal(cn_src) else _candidates(cn_src, assigns)
    names = [n.removesuffix(".yaml").removesuffix(".yml") for n in names if re.fullmatch(r"[\w./-]+", n)]
    dirs = [cp_src.strip("'\"")] if _is_literal(cp_src) else _candidates(cp_src, assigns)
    dirs = [d.strip("/") for d in dirs if re.fullmatch(r"[\w./-]+", d) and not d.startswith(("pkg:", "file:"))]
    base = posixpath.dirname(script)
    found: set[tuple[str, str]] = set()
    for d in dirs:
        for parent in _parents(base):
            root = posixpath.normpath(posixpath.join(parent, d)) if parent else posixpath.normpath(d)
            if root.startswith(".."):
                continue
            for n in names:
                if exists(f"{root}/{n}.yaml"):
                    found.add((root, n))
    return found.pop() if len(found) == 1 else None


def _is_literal(src: str) -> bool:
    try:
        node = ast.parse(src.strip(), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.Constant) and isinstance(node.value, str)
