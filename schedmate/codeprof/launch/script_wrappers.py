"""Installed programs that are thin Python wrappers around a module of the job's package.

A package can ship its training program as a script rather than a `console_scripts` entry point: setuptools
`scripts=[...]` installs the file itself on the PATH (in a wheel it sits under `<name>-<version>.data/scripts/`;
in a checkout, under `scripts/` or `bin/`). Such a file usually holds a Python shebang, an import and one call
(`import pkg.cli as cli; cli.train()`): running it is running that module, so `spktrain experiment=...` is read
like `python -m pkg.cli experiment=...`. A script that does more than that is not guessed at.
"""

from __future__ import annotations

import ast

from schedmate.codeprof.reader import Workdir

MAX_WRAPPER_STATEMENTS = 4
"""imports plus the call (and an `if __name__ == "__main__":` guard): beyond that it is a program of its own"""

_SCRIPT_DIRS = ("scripts", "bin", "src/scripts")


def _candidates(wd: Workdir, prog: str) -> list[str]:
    out = [f"{d}/{prog}" for d in _SCRIPT_DIRS]
    out += [f for f in wd.find_by_suffix(f"scripts/{prog}") if ".data/scripts/" in f]
    return [f for f in out if wd.exists(f)]


def _called_module(tree: ast.Module) -> str | None:
    """The module a wrapper imports and calls into, if that is all it does."""
    aliases: dict[str, str] = {}
    body = list(tree.body)
    if body and isinstance(body[-1], ast.If) and "__name__" in ast.unparse(body[-1].test):
        body = body[:-1] + list(body[-1].body)
    if len(body) > MAX_WRAPPER_STATEMENTS:
        return None
    called = None
    for node in body:
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                aliases[a.asname or a.name] = node.module
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            head = func
            while isinstance(head, ast.Attribute):
                head = head.value
            if not isinstance(head, ast.Name) or head.id not in aliases or called is not None:
                return None
            called = aliases[head.id]
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):  # a docstring
            return None
    return called


def wrapped_module(wd: Workdir, prog: str) -> str | None:
    """`pkg.module` that the installed Python script `prog` only imports and calls, when the job's
    directory ships such a script; None otherwise."""
    for rel in _candidates(wd, prog):
        text = wd.read_text(rel) or ""
        first = text.split("\n", 1)[0]
        if not (first.startswith("#!") and "python" in first):
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        module = _called_module(tree)
        if module is not None:
            return module
    return None
