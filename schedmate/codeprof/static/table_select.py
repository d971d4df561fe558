"""Config tables the code indexes by a name the config (or the command line) gives.

Configs often hold one block of settings per dataset, model or environment, and the script picks the block at
run time by another setting::

    param:                          # models/gcn.yaml
      bbbp: {batch_size: 32, num_epochs: 200}
      sst2: {batch_size: 128, num_epochs: 50}

    config.models.param = config.models.param[config.datasets.dataset_name]   # the entry script
    hp = cfg.hparams[args.dataset]                                           # the same, into a new name

Every block defines `batch_size`, so the bare name is ambiguous in the file and none of them is the run's.
Once the key is known (`datasets.dataset_name: bbbp`), the chosen block's values are the run's: they are
stored again under the path the code reads them from (`models.param.batch_size`, `hp.batch_size`) and under
their bare names. A key the sources do not fix, or a table with no block of that name, changes nothing.
"""

from __future__ import annotations

import ast
from typing import Any

from schedmate.codeprof.params import ParamSpace, norm
from schedmate.codeprof.pyast import dotted


def _path(node: ast.expr) -> str | None:
    """The dotted path of `cfg.a.b`, also written with string indexes (`cfg["a"]["b"]`)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        head = _path(node.value)
        return f"{head}.{node.slice.value}" if head else None
    return dotted(node)


def _key_value(params: ParamSpace, node: ast.expr) -> tuple[str, list[str]] | None:
    """The block name an index expression gives: a string literal, or a setting read by its dotted path
    (`config.datasets.dataset_name`, `args.dataset`) whose value is a string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, []
    path = _path(node)
    if not path:
        return None
    parts = norm(path).split(".")
    for i in range(len(parts)):
        pv = params._full.get(".".join(parts[i:]))
        if pv is not None:
            return (pv.value, pv.where) if isinstance(pv.value, str) else None
    return None


def _table(params: ParamSpace, path: str, key: str) -> str | None:
    """The stored prefix of the table `path` names (its holder, `config.` or `cfg.`, dropped as needed) when
    it has a block `key` among at least two blocks."""
    parts = norm(path).split(".")
    keys = [k for k, _ in params.items()]
    for i in range(len(parts)):
        prefix = ".".join(parts[i:])
        blocks = {k[len(prefix) + 1:].split(".", 1)[0] for k in keys if k.startswith(prefix + ".")
                  and "." in k[len(prefix) + 1:]}
        if norm(key) in blocks and len(blocks) >= 2:
            return prefix
    return None


def select_tables(params: ParamSpace, py: dict[str, dict[str, Any]], files: list[str]) -> list[str]:
    """Apply every `target = table[key]` of `files` (in order) whose table and key the settings fix (see the
    module docstring); returns notes saying what was chosen."""
    notes: list[str] = []
    for rel in files:
        for a in py.get(rel, {}).get("assigns", []):
            if a.get("op") is not None:
                continue
            try:
                node = ast.parse(a["expr"], mode="eval").body
            except SyntaxError:
                continue
            if not isinstance(node, ast.Subscript) or not (base := _path(node.value)):
                continue
            got = _key_value(params, node.slice)
            if got is None:
                continue
            key, key_where = got
            prefix = _table(params, base, key)
            if prefix is None:
                continue
            target = norm(a["target"])
            # `config.models.param = config.models.param[...]` replaces the table in place: read by its stored
            # path; a new name (`hp = cfg.hparams[...]`) is read by that name
            dest = prefix if target == norm(base) else target
            block = f"{prefix}.{norm(key)}."
            chosen = [(k[len(block):], pv) for k, pv in params.items() if k.startswith(block)]
            for rest, pv in chosen:
                params.set(f"{dest}.{rest}", pv.value, [*pv.where, f"{rel}:{a['line']}", *key_where], pv.layer)
            if chosen:
                notes.append(f"{rel}:{a['line']}: settings block {prefix}.{key} chosen by {ast.unparse(node.slice)}")
    return notes
