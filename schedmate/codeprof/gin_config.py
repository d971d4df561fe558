"""gin-config files read the way gin reads them, without running anything.

    gin_config(text)                       # one file's bindings; `include`s listed under `_base_`
    compose(read, ["a.gin", "b.gin"], ["Runner.num_iterations = 200"])   # a job's files, then its bindings

gin's conventions followed here (gin-config's documentation):
- `include 'base.gin'` reads another file first (a path relative to the including file, else to the root);
- `MACRO = 64` binds a macro and `fn.param = %MACRO` refers to it. gin resolves macros *lazily*, when the
  configurable is called, so the value is the macro's last binding anywhere: a later file or a
  `--gin_bindings 'MACRO = 32'` given on the command line changes every `%MACRO` reference;
- `scope/fn.param = v` binds `fn.param` within a scope: an evaluation or test scope (`eval/`, `test/`) is kept
  as a section, so its values never stand for the training run's; other scopes are dropped;
- `fn.param = @other` (a configurable reference) is recorded as the referenced name;
- the files are parsed in the order the command line gives them (`--gin_file a --gin_file b`), the bindings
  (`--gin_bindings`, `--gin_param`) after every file.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

_LINE = re.compile(r"^([A-Za-z_][\w./]*)\s*=\s*(.+?)\s*$")
_INCLUDE = re.compile(r"""^include\s+['"]([^'"]+)['"]""")
_NOT_TRAINING_SCOPE = re.compile(r"^(eval\w*|evaluation|test\w*|val\w*|valid\w*|infer\w*|predict\w*|sampl\w*)$")
_FILE_FLAG = re.compile(r"^--?gin_(?:config|configs|file|files|config_files?|config_paths?)$")
_BINDING_FLAG = re.compile(r"^--?gin_(?:bindings?|params?|param_bindings)$")


class GinRef:
    """A `%MACRO` reference, resolved once every file and binding of the job is read."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"%{self.name}"

    def __deepcopy__(self, memo: dict[int, Any]) -> GinRef:
        return self


class _Unknown:
    pass


_UNKNOWN = _Unknown()


def _value(expr: str) -> Any:
    from schedmate.codeprof.pyast import const_eval

    if m := re.fullmatch(r"%([\w./]+)", expr):
        return GinRef(m.group(1).rsplit("/", 1)[-1])
    if re.fullmatch(r"@[\w./]+(\(\))?", expr):
        return expr[1:].removesuffix("()").replace("/", ".").rsplit(".", 1)[-1]  # `@trax.models.Resnet50`
    try:
        ok, value = const_eval(ast.parse(expr, mode="eval").body)
    except SyntaxError:
        return _UNKNOWN
    return value if ok else _UNKNOWN


def _key(target: str) -> str:
    """`train/TrainConfig.batch_size` -> `TrainConfig.batch_size`; `eval/Loader.batch_size` keeps `eval.`."""
    scope, _, binding = target.rpartition("/")
    last = scope.rsplit("/", 1)[-1]
    return f"{last}.{binding}" if last and _NOT_TRAINING_SCOPE.match(last) else binding


def gin_config(text: str) -> dict[str, Any]:
    """Bindings of a gin file: `MACRO = v`, `scope/fn.param = v`, `%MACRO` references (kept as `GinRef`s
    until `resolve_refs`), `fn:` blocks of indented bindings; `include`s are listed under `_base_`."""
    out: dict[str, Any] = {}
    bases: list[str] = []
    block: str | None = None  # `train/utils.DatasetConfig:` followed by indented `batch_size = 128`
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if not raw[:1].isspace():
            block = None
        if m := _INCLUDE.match(line):
            bases.append(m.group(1))
            continue
        if (b := re.fullmatch(r"([\w./]+):", line)) and not raw[:1].isspace():
            block = b.group(1).replace("/", ".")  # keep the scope: train/ and infer_eval/ blocks differ
            continue
        m = _LINE.match(line)
        if not m:
            continue
        key = _key(m.group(1))
        if block is not None and raw[:1].isspace():
            key = f"{block}.{key.rsplit('/', 1)[-1]}"
        value = _value(m.group(2))
        if not isinstance(value, _Unknown):
            out[key] = value
    if bases:
        out["_base_"] = bases
    return out


def resolve_refs(data: dict[str, Any]) -> dict[str, Any]:
    """Every `%MACRO` by the macro's last binding (a top-level key); a macro bound nowhere drops its
    references, as does a cycle."""

    def one(v: Any, depth: int) -> Any:
        while isinstance(v, GinRef) and depth < 8:
            v, depth = data.get(v.name, _UNKNOWN), depth + 1
        if isinstance(v, GinRef):
            return _UNKNOWN
        if isinstance(v, dict):
            return {k: x for k, x in ((k, one(x, depth)) for k, x in v.items()) if not isinstance(x, _Unknown)}
        if isinstance(v, list):
            return [x for x in (one(x, depth) for x in v) if not isinstance(x, _Unknown)]
        return v

    return {k: x for k, x in ((k, one(v, 0)) for k, v in data.items()) if not isinstance(x, _Unknown)}


def command_line(args: list[str]) -> tuple[list[str], list[str]]:
    """The gin files and bindings of an argument list, in order: `--gin_file=a.gin --gin_file b.gin`,
    `--gin_configs x.gin y.gin`, `--gin_bindings='Runner.num_iterations=200'`, `--gin_param ...`."""
    files: list[str] = []
    bindings: list[str] = []
    i = 0
    while i < len(args):
        name, eq, val = args[i].partition("=")
        is_file, is_binding = bool(_FILE_FLAG.match(name)), bool(_BINDING_FLAG.match(name))
        if not (is_file or is_binding):
            i += 1
            continue
        vals = [val] if eq else []
        j = i + 1
        while not eq and j < len(args) and not args[j].startswith("-"):
            vals.append(args[j])  # a multi-valued flag: every value up to the next flag
            j += 1
        for v in vals:
            v = v.strip().strip("'\"")
            if is_file:
                files.extend(p.strip() for p in v.split(",") if p.strip().endswith(".gin"))
            elif v:
                bindings.append(v)
        i = j if not eq else i + 1
    return files, bindings


def compose(read: Callable[[str], str | None], files: list[str], bindings: list[str]) -> Any:
    """The ConfigTree of a job's gin files (each with its includes) merged in order, the bindings last,
    then every macro reference resolved."""
    from schedmate.codeprof.config_tree import ConfigTree, _load, merge

    tree = ConfigTree()
    for rel in files:
        tree.data = merge(tree.data, _load(read, rel, tree, []))
    own = gin_config("\n".join(bindings))
    own.pop("_base_", None)
    for k in own:
        tree.where[k] = "cmd"
    tree.data = resolve_refs(merge(tree.data, own))
    return tree
