"""Hydra's config composition, done statically: the primary config, its defaults list (groups, nested
configs, `_self_`, `override` directives anywhere in the tree, `@package` headers and `group@package`
entries) and the command line's group choices and value overrides, merged in Hydra's order, with the
OmegaConf interpolations resolved (`${a.b}`, `${..x}`, `${oc.env:X,d}`, and the arithmetic resolvers
real repositories register: `${eval:"..."}` over literals, `${div_up:a,b}`).

    tree = compose(read, "configs", "config", ["experiment=owt/gpt2s-flash", "trainer.devices=8"])
    tree.data["trainer"]["max_steps"], tree.where["trainer.max_steps"]

Nothing is executed; a group option that cannot be read is named in `notes`; a resolver or value that
cannot be known stays as its text (and is later ignored).
"""

from __future__ import annotations

import ast
import math
import operator
import posixpath
import re
from collections.abc import Callable
from typing import Any

from schedmate.codeprof.config_tree import ConfigTree, Reader, merge, parse_any, resolve_interpolations
from schedmate.codeprof.configs import ConfigError, flatten, key_lines

MAX_CONFIGS = 48
"""bound on the config files one composition reads"""
_PACKAGE = re.compile(r"^\s*#\s*@package\s+(\S+)", re.MULTILINE)


def _entry_package(pkg: str, including: str) -> str | None:
    """The package a defaults entry `group@pkg: option` names: `_global_` is the root (""), `_here_` the
    including config's own package, `_group_` (or nothing) the group's default (None)."""
    if not pkg or pkg == "_group_":
        return None
    if pkg == "_global_":
        return _ROOT
    if pkg == "_here_":
        return including or _ROOT
    return pkg.removeprefix("_global_.")


_ROOT = "\x00root"
"""marks the root package in a defaults entry (an empty package means 'inherit the includer's')"""


def _join(group: str, ref: str) -> str:
    """A group or config path named in a defaults list: absolute (`/model`) or relative to the group of the
    config that names it."""
    if ref.startswith("/"):
        return ref.strip("/")
    return posixpath.normpath(posixpath.join(group, ref)) if group else ref


class _Composer:
    def __init__(self, read: Reader, root: str, cli_choices: dict[str, str], tree: ConfigTree,
                 appended: list[str] | None = None) -> None:
        self.read, self.root, self.cli = read, root.strip("/"), cli_choices
        self.appended = appended or []
        """groups the command line adds with `+group=option`: Hydra appends them to the primary's defaults"""
        self.tree = tree
        self.legacy = False
        self.search: list[str] = []
        """config roots the primary adds with `hydra.searchpath` (static/hydra_paths.py)"""
        self._cache: dict[str, tuple[str | None, dict[str, Any], list[Any], str] | None] = {}

    def path(self, rel: str) -> str:
        rel = rel if rel.endswith((".yaml", ".yml")) else f"{rel}.yaml"
        own = f"{self.root}/{rel}" if self.root else rel
        if self.search and self.read(own) is None:  # `hydra.searchpath` roots, after the primary's own
            for sr in self.search:
                if self.read(f"{sr}/{rel}") is not None:
                    return f"{sr}/{rel}"
        return own

    def load(self, rel: str) -> tuple[str | None, dict[str, Any], list[Any], str] | None:
        """(package header, own values, defaults list, text) of a config, relative to the config root."""
        if rel in self._cache:
            return self._cache[rel]
        full = self.path(rel)
        text = self.read(full)
        got = None
        if text is None:
            self.tree.notes.append(f"hydra config {full} not readable in the workdir")
        elif len(self._cache) >= MAX_CONFIGS:
            self.tree.notes.append(f"more than {MAX_CONFIGS} hydra configs; {full} not read")
        else:
            try:
                cfg = parse_any(full, text) or {}
            except ConfigError as e:
                self.tree.notes.append(str(e))
                cfg = None
            if isinstance(cfg, dict):
                m = _PACKAGE.search(text[:500])
                defaults = cfg.pop("defaults", None)
                got = (m.group(1) if m else None, cfg, defaults if isinstance(defaults, list) else [], text)
                if full not in self.tree.files:
                    self.tree.files.append(full)
        self._cache[rel] = got
        return got

    def overrides(self, order: list[tuple[str, str, str]]) -> dict[str, Any]:
        """`override /group: option` directives of the configs in the composition."""
        out: dict[str, Any] = {}
        for rel, group, _pkg in order:
            got = self.load(rel)
            for d in got[2] if got else []:
                if isinstance(d, dict):
                    for k, v in d.items():
                        k = str(k).strip()
                        if k.startswith("override "):
                            out[_join(group, k[len("override "):].strip().split("@")[0])] = v  # the includer, later, wins
        return out

    def expand(self, rel: str, group: str, package: str, chosen: dict[str, Any], depth: int = 0
               ) -> list[tuple[str, str, str]]:
        """(config, its group, its package) in merge order for `rel` and what its defaults list pulls in."""
        got = self.load(rel)
        if got is None or depth > 8:
            return []
        header, _own, defaults, _text = got
        if header == "_global_":
            package = ""
        elif header not in (None, "_group_"):
            package = header
        items: list[tuple[str, str, str] | None] = []  # None marks _self_
        for d in defaults:
            if d == "_self_":
                items.append(None)
            elif isinstance(d, str):
                path = _join(group, d)
                items.append((path.removesuffix(".yaml"), posixpath.dirname(path), ""))
            elif isinstance(d, dict):
                for k, v in d.items():
                    k = str(k).strip()
                    if k.startswith("override ") or k == "_self_":
                        continue
                    k = k.removeprefix("optional ").strip()
                    grp_name, _, pkg = k.partition("@")
                    grp = _join(group, grp_name.strip())
                    choice = self.cli.get(grp, chosen.get(grp, v))
                    pkg = _entry_package(pkg.strip(), package)
                    for option in (choice if isinstance(choice, list) else [choice]):
                        if option is None or str(option) in ("null", "None", "???"):
                            continue
                        items.append((f"{grp}/{option}", grp,
                                      pkg if pkg is not None else ("" if self.legacy else grp.replace("/", "."))))
        if depth == 0:  # `+group=option` for a group the tree does not name: appended to the primary's defaults
            named = {it[1] for it in items if it is not None}
            extra = [(f"{g}/{self.cli[g]}", g, "" if self.legacy else g.replace("/", "."))
                     for g in self.appended if g not in named]
            items.extend(extra) if None in items else items.extend(extra + [None])
        if None not in items:
            items.append(None)  # Hydra 1.1: a config's own values come after its defaults
        order: list[tuple[str, str, str]] = []
        for it in items:
            if it is None:
                order.append((rel, group, package))
            else:
                sub_rel, sub_group, sub_pkg = it
                sub_package = "" if sub_pkg == _ROOT else (sub_pkg if sub_pkg else package)
                order.extend(self.expand(sub_rel, sub_group, sub_package, chosen, depth + 1))
        return order


def compose(read: Reader, root: str, primary: str, overrides: list[str], env: dict[str, str] | None = None,
            legacy: bool = False) -> ConfigTree:
    """The composed config of `primary` (a name under the config directory `root`) with the command-line
    `overrides` (`group=option`, `+group=option`, `a.b=value`). `legacy`: Hydra 0.x, where a group's config
    merges at the top level (no `group.` package) unless its header says otherwise."""
    tree = ConfigTree()
    root = root.strip("/")
    search: list[str] = []
    primary_rel = primary if primary.endswith((".yaml", ".yml")) else f"{primary}.yaml"
    primary_text = read(f"{root}/{primary_rel}" if root else primary_rel)
    if primary_text is not None and "searchpath" in primary_text:
        try:
            search = search_roots(parse_any(primary_rel, primary_text), lambda d: d != root)
        except ConfigError:
            search = []
    cli_choices: dict[str, str] = {}
    values: list[tuple[str, str]] = []
    appended: list[str] = []
    for ov in overrides:
        key, eq, val = ov.lstrip("+~").partition("=")
        if not eq:
            continue
        key = key.strip()
        group = key.split("@")[0]
        option = val.removesuffix(".yaml")  # Hydra adds the extension only when the option lacks it
        probe = f"{root}/{group}/{option}.yaml" if root else f"{group}/{option}.yaml"
        if re.fullmatch(r"[\w./-]+", val) and (read(probe) is not None
                                               or any(read(f"{sr}/{group}/{option}.yaml") for sr in search)):
            cli_choices[group] = option
            if ov.startswith("+") and group not in appended:
                appended.append(group)
        else:
            values.append((key, val))
    comp = _Composer(read, root, cli_choices, tree, appended)
    comp.legacy = legacy
    comp.search = search
    start = primary.removesuffix(".yaml").removesuffix(".yml")
    chosen: dict[str, Any] = {}
    order: list[tuple[str, str, str]] = []
    for _ in range(4):  # override directives live in configs the choices pull in: iterate to a fixpoint
        order = comp.expand(start, posixpath.dirname(start) if "/" in start else "", "", chosen)
        found = comp.overrides(order)
        if found == chosen:
            break
        chosen = found
    data: dict[str, Any] = {}
    for rel, _group, package in order:
        got = comp.load(rel)
        if got is None:
            continue
        own = got[1]
        lines = key_lines(got[3], [k for k, _ in flatten(own)])
        for k, _v in flatten(own):
            tree.where[f"{package}.{k}" if package else k] = f"{comp.path(rel)}:{lines.get(k, 1)}"
        for part in reversed(package.split(".") if package else []):
            own = {part: own}
        data = merge(data, own)
    for key, val in values:  # command-line values go in before interpolation, which may refer to them
        cur = data
        parts = key.split(".")
        for p in parts[:-1]:
            nxt = cur.get(p)
            if not isinstance(nxt, dict):
                nxt = cur[p] = {}
            cur = nxt
        cur[parts[-1]] = _scalar(val)
        tree.where[key] = "cmd"
    tree.data = data
    resolve_interpolations(tree, env or {}, RESOLVERS)
    return tree


def _scalar(s: str) -> Any:
    t = s.strip().strip("'\"")
    for cast in (int, float):
        try:
            return cast(t)
        except ValueError:
            pass
    return {"true": True, "false": False, "null": None}.get(t.lower(), t)


_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
        ast.NotEq: operator.ne}


def safe_eval(expr: str) -> Any:
    """A literal arithmetic/comparison/conditional expression (what `${eval:...}` resolvers are given once
    the inner interpolations are resolved); raises ValueError on anything else. Never calls anything."""

    def ev(n: ast.AST) -> Any:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float, bool, str)):
            return n.value
        if isinstance(n, ast.BinOp) and type(n.op) in _BIN:
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Pow) and abs(b) > 64:
                raise ValueError("exponent too large")
            return _BIN[type(n.op)](a, b)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd, ast.Not)):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else (+v if isinstance(n.op, ast.UAdd) else not v)
        if isinstance(n, ast.Compare) and all(type(o) in _CMP for o in n.ops):
            left = ev(n.left)
            for op, right in zip(n.ops, n.comparators, strict=True):
                r = ev(right)
                if not _CMP[type(op)](left, r):
                    return False
                left = r
            return True
        if isinstance(n, ast.BoolOp):
            vals = [ev(v) for v in n.values]
            return all(vals) if isinstance(n.op, ast.And) else any(vals)
        if isinstance(n, ast.IfExp):
            return ev(n.body) if ev(n.test) else ev(n.orelse)
        raise ValueError(f"not a literal expression: {ast.dump(n)[:60]}")

    try:
        return ev(ast.parse(expr.strip(), mode="eval").body)
    except (SyntaxError, TypeError, ZeroDivisionError, OverflowError, RecursionError) as e:
        raise ValueError(str(e)) from e


def _div_up(args: str) -> Any:
    a, _, b = args.partition(",")
    x, y = safe_eval(a), safe_eval(b)
    if not isinstance(x, (int, float)) or not isinstance(y, (int, float)) or y == 0:
        raise ValueError("div_up needs two numbers")
    return math.ceil(x / y)


RESOLVERS = {"eval": lambda arg: safe_eval(arg.strip().strip("'\"")), "div_up": _div_up}
"""custom OmegaConf resolvers real repositories register, for literal arguments only"""


def search_roots(primary: dict[str, Any] | None, exists_dir: Callable[[str], bool]) -> list[str]:
    """Config roots a primary config adds with `hydra.searchpath` (`pkg://a.b.c` -> `a/b/c`, `file://x` ->
    `x`), those that are directories of the workdir, in order."""
    hyd = primary.get("hydra") if isinstance(primary, dict) else None
    paths = hyd.get("searchpath") if isinstance(hyd, dict) else None
    out: list[str] = []
    for p in paths if isinstance(paths, list) else []:
        if not isinstance(p, str):
            continue
        if p.startswith("pkg://"):
            d = p[len("pkg://"):].strip("/").replace(".", "/")
        elif p.startswith("file://"):
            d = p[len("file://"):].strip("/")
        else:
            continue
        d = posixpath.normpath(d)
        if d and not d.startswith("..") and "$" not in d and exists_dir(d) and d not in out:
            out.append(d)
    return out
