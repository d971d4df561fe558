"""Keyword arguments of a call in the module-size interpreter (interp.py), read so that values which cannot
change a parameter count do not stop the count.

    call_keywords(it, node.keywords, env, src) -> {name: value}

- A flag that never shapes a weight (`pretrained=is_main_process()`, `verbose=`, `device=`, `dtype=`) whose
  value the interpreter cannot follow becomes an opaque value instead of giving up: a callee that then needs
  it (to pick a width) still gives up there, so the count is never guessed.
- a positional argument named like such a flag (`get_model(args, device, ...)`) or like the job's data
  (`dataloaders["train"]`) is passed the same way.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from schedmate.codeprof.static.modelsize.layers import GiveUp
from schedmate.codeprof.static.modelsize.values import Source, Unknown

Interp = Any
"""The interpreter (`interp.Interp`), not imported: interp imports this module at load time."""

# keyword names whose value decides where weights live or whether they are loaded, never how many there are
NON_SHAPING = re.compile(r"^(pretrained(_backbone)?|progress|verbose|quiet|debug|device|device_ids?|dtype|"
                         r"map_location|use_checkpoint|(grad(ient)?_)?checkpoint(ing)?|is_main|rank|local_rank|"
                         r"world_size|distributed|log(ger|ging)?|print_freq)$")


# a data loader or data set handed to a builder (for statistics it may read): never a module
_DATA = re.compile(r"^(?!sets?$)((train|val|test)_?)?(data_?)?(loaders?|sets?)$|^(data_?)?loaders?(_train|_val)?$|^datasets?$")


def call_keywords(it: Interp, keywords: list[ast.keyword], env: dict[str, Any], src: Source) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for k in keywords:
        if k.arg is None:
            kwargs.update(expand_section(it, it.eval(k.value, env, src)))
        elif NON_SHAPING.match(k.arg):
            try:
                kwargs[k.arg] = it.eval(k.value, env, src)
            except GiveUp as e:  # `pretrained=is_main_process()`: a distributed query, no width
                kwargs[k.arg] = Unknown(f"{k.arg}= flag ({e})")
        else:
            kwargs[k.arg] = it.eval(k.value, env, src)
    return kwargs


def positional(it: Interp, node: ast.expr, env: dict[str, Any], src: Source) -> Any:
    """A positional argument; one named like a flag (`get_model(args, device, ...)`, `args.device`) or a
    `torch.device(...)` that the interpreter cannot follow is passed as an opaque value."""
    try:
        return it.eval(node, env, src)
    except GiveUp as e:
        text = ast.unparse(node.func if isinstance(node, ast.Call) else node)
        if NON_SHAPING.match(text.rsplit(".", 1)[-1]) and (isinstance(node, (ast.Name, ast.Attribute))
                                                           or text in {"torch.device", "device"}):
            return Unknown(f"{text}: a flag ({e})")
        root = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if isinstance(root, ast.Name) and _DATA.match(root.id):  # `dataloaders["train"]`: batches, not layers
            return Unknown(f"{text}: the job's data ({e})")
        raise


def expand_section(it: Interp, got: Any) -> dict[str, Any]:
    """The keyword arguments a `**value` spreads: only a dict the interpreter built (a config section the resolver
    reads as scalars is not a dict here, so it gives up)."""
    if isinstance(got, dict):
        return got
    raise GiveUp("**kwargs of something unknown")
