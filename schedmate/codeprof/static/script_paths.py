"""Paths a script builds from its own location: `os.path.join(os.path.dirname(__file__), "config", "x.yaml")`,
`osp.join(osp.dirname(osp.abspath(__file__)), "cfg.yaml")`, `Path(__file__).resolve().parent / "conf" / "x.yaml"`.

Scripts that load their defaults this way run from anywhere, so the path is the script's directory joined with
literal parts. Only literal parts and the script's own location are evaluated; anything else (an option, an
environment variable) leaves the path unknown.
"""

from __future__ import annotations

import ast
import posixpath

_JOIN = {"os.path.join", "path.join", "osp.join", "join"}
_DIRNAME = {"os.path.dirname", "path.dirname", "osp.dirname", "dirname"}
_SAME = {"os.path.abspath", "os.path.realpath", "osp.abspath", "osp.realpath", "abspath", "realpath",
         "Path", "pathlib.Path", "str", "os.path.normpath", "osp.normpath"}


class _Unknown(Exception):
    pass


def _ev(node: ast.expr, here: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id == "__file__":
        return here
    if isinstance(node, ast.Call) and not node.keywords:
        f = ast.unparse(node.func)
        if f in _JOIN and node.args:
            return posixpath.join(*(_ev(a, here) for a in node.args))
        if f in _DIRNAME and len(node.args) == 1:
            return posixpath.dirname(_ev(node.args[0], here))
        if f in _SAME and len(node.args) == 1:
            return _ev(node.args[0], here)
        if isinstance(node.func, ast.Attribute) and node.func.attr in {"resolve", "absolute"} and not node.args:
            return _ev(node.func.value, here)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        return posixpath.dirname(_ev(node.value, here))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # pathlib's `/`
        return posixpath.join(_ev(node.left, here), _ev(node.right, here))
    raise _Unknown


def path_from_script_dir(src: str, rel: str) -> str | None:
    """The workdir-relative path an expression builds from the location of the script `rel` (see the
    module docstring), or None when it does not start from `__file__` or names anything else."""
    if "__file__" not in src:
        return None
    try:
        node = ast.parse(src.strip(), mode="eval").body
        out = posixpath.normpath(_ev(node, rel))
    except (SyntaxError, _Unknown, TypeError, RecursionError):
        return None
    return None if out.startswith(("..", "/")) else out
