"""YAML configs written as Jinja templates (`gpus: {{ gpus }}`, `path: data/{{ dataset }}`), read without
rendering anything.

A job that renders its config with Jinja before `yaml.safe_load` fills the placeholders at run time (from its
own command line, usually). Such a file is not YAML as written, so a plain parse loses every setting in it.
Here each `{{ ... }}` outside quotes becomes a marker, the text is parsed, and every leaf holding a marker is
left out (open: never a guess), unless `context` gives the placeholder's value (a bare name the launcher
passes, `--gpus [0,1,2,3]`), which then replaces the whole leaf when the leaf is that placeholder alone.
Files with Jinja statements (`{% if %}`, `{% for %}`) are not read: their shape depends on the rendering.
"""

from __future__ import annotations

import ast
import re
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{\s*(.*?)\s*\}\}")
_STATEMENT = re.compile(r"\{%.*?%\}", re.DOTALL)
_COMMENT = re.compile(r"\{#.*?#\}", re.DOTALL)
_MARK = "__schedmate_jinja_{}__"
_MARK_RE = re.compile(r"__schedmate_jinja_(\d+)__")


def is_template(text: str) -> bool:
    """The text holds unquoted Jinja placeholders (quoted `'{{ _base_.x }}'` references are plain YAML strings)."""
    return any(not _quoted(line, m.start()) for line in text.splitlines() for m in _PLACEHOLDER.finditer(line))


def _quoted(line: str, pos: int) -> bool:
    """Position `pos` of `line` is inside a YAML quoted string."""
    q: str | None = None
    for ch in line[:pos]:
        if q is None and ch in "'\"":
            q = ch
        elif ch == q:
            q = None
    return q is not None


def template_text(text: str) -> tuple[str, list[str]] | None:
    """(the text with each unquoted placeholder replaced by a marker, the placeholders' expressions), or None
    when the template has statements (its rendered shape is not knowable without rendering)."""
    text = _COMMENT.sub("", text)
    if _STATEMENT.search(text):
        return None
    exprs: list[str] = []
    out: list[str] = []
    for line in text.splitlines():
        pieces: list[str] = []
        last = 0
        for m in _PLACEHOLDER.finditer(line):
            if _quoted(line, m.start()):
                continue
            pieces.append(line[last:m.start()])
            pieces.append(_MARK.format(len(exprs)))
            exprs.append(m.group(1))
            last = m.end()
        pieces.append(line[last:])
        out.append("".join(pieces))
    return "\n".join(out), exprs


def _literal(value: str) -> tuple[bool, Any]:
    """A command-line value as the renderer would write it into YAML: a Python/YAML literal (`[0,1,2,3]`, `4`)."""
    try:
        v = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return False, None
    return (True, v) if isinstance(v, (int, float, list, tuple, bool)) else (False, None)


def fill(data: Any, exprs: list[str], context: dict[str, str] | None = None) -> Any:
    """`data` with marked leaves removed, or replaced by the context's literal value when the leaf is exactly
    one placeholder that is a bare name the context holds."""
    context = context or {}

    def leaf(v: Any) -> tuple[bool, Any]:
        if not isinstance(v, str) or not _MARK_RE.search(v):
            return True, v
        m = _MARK_RE.fullmatch(v.strip())
        if m:
            name = exprs[int(m.group(1))]
            if re.fullmatch(r"[A-Za-z_]\w*", name) and name in context:
                ok, lit = _literal(context[name])
                if ok:
                    return True, list(lit) if isinstance(lit, tuple) else lit
        return False, None

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            out = {}
            for k, v in x.items():
                if isinstance(k, str) and _MARK_RE.search(k):
                    continue  # a templated key: which setting it is stays open
                if isinstance(v, (dict, list)):
                    out[k] = walk(v)
                else:
                    keep, val = leaf(v)
                    if keep:
                        out[k] = val
            return out
        if isinstance(x, list):
            items = []
            for v in x:
                if isinstance(v, (dict, list)):
                    items.append(walk(v))
                else:
                    keep, val = leaf(v)
                    if not keep:
                        return _OPEN  # a list with an open element: its length and content are open
                    items.append(val)
            return [i for i in items if i is not _OPEN]
        return x

    return _prune(walk(data))


_OPEN = object()


def _prune(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _prune(v) for k, v in x.items() if v is not _OPEN}
    return x


# the job renders its config template itself and makes an option of each placeholder it finds
# (`parser.add_argument("--%s" % var)` over `meta.find_undeclared_variables(...)`, then `Template(raw).render(vars)`)
_RENDERS = re.compile(r"\.render\(")
_DYNAMIC_OPTION = re.compile(r"""add_argument\(\s*(?:["']--%s["']\s*%|f["']--\{|["']--["']\s*\+)""")


def renders_from_command_line(texts: list[str]) -> bool:
    """The job's sources visibly render Jinja templates with values taken from options made per placeholder."""
    return any("jinja2" in t and _RENDERS.search(t) and _DYNAMIC_OPTION.search(t) for t in texts)


def command_context(args: list[str]) -> dict[str, str]:
    """`--name value` and `--name=value` pairs of a script's command line (the last one of a name wins)."""
    out: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        m = re.fullmatch(r"--([A-Za-z_]\w*)(?:=(.*))?", a, re.DOTALL)
        if m and m.group(2) is not None:
            out[m.group(1)] = m.group(2)
        elif m and i + 1 < len(args) and not args[i + 1].startswith("--"):
            out[m.group(1)] = args[i + 1]
            i += 1
        i += 1
    return out
