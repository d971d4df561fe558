"""Where the static pass reads a Darknet `.cfg` the job names (codeprof/darknet_cfg.py has the format): its
parameter count from the layer list, and its `[net]` batch when the job's own training code reads it.

The cfg is found only where the job names it, most specific first: a `.cfg` token on the command line, then a
parameter value (an argparse default `--model config/yolov3.cfg`), then a `'....cfg'` string literal in the
Python files the pass read (`os.path.join(BASE, 'cfg', 'yolov4.cfg')`). Each candidate must parse as a Darknet
cfg (`[net]` first); two different files at the same level leave it unknown.

Batch: many PyTorch ports ignore the cfg's training section and take their batch from argparse or a Python
config, so `[net]` batch/subdivisions are used only when the code read subscripts them as parsed keys
(`hyperparams['batch'] // hyperparams['subdivisions']`) and no parameter the pass found is named
`subdivisions` (a Python config that restates them wins). Then the loader batch is `batch / subdivisions`
and the optimizer steps every `subdivisions` batches.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from schedmate.codeprof.darknet_cfg import DarknetCfg, count_darknet_params, net_batch, parse_darknet_cfg

_CFG_TOKEN = re.compile(r"(?:^|=)([\w./-]+\.cfg)$")
_CFG_LITERAL = re.compile(r"""['"]([\w./-]*\w\.cfg)['"]""")
_SUBSCRIPT = r"""\[\s*['"]{}['"]\s*\]"""


def _resolve(sp: Any, path: str) -> tuple[str, DarknetCfg] | None:
    rel = path.removeprefix("./")
    hits = [rel] if sp.wd.exists(rel) else sp.wd.find_by_suffix(rel.lstrip("/"))
    found: dict[str, tuple[str, DarknetCfg]] = {}
    for h in hits:
        text = sp.wd.read_text(h)
        cfg = parse_darknet_cfg(text) if text else None
        if cfg is not None:
            found.setdefault(text or "", (h, cfg))
    return next(iter(found.values())) if len(found) == 1 else None


def _unique(sp: Any, names: list[str]) -> tuple[str, DarknetCfg] | None | bool:
    """The one Darknet cfg the names resolve to; False when they resolve to different files; None for none."""
    got: dict[str, tuple[str, DarknetCfg]] = {}
    for n in names:
        hit = _resolve(sp, n)
        if hit is not None:
            got[hit[0]] = hit
    if len(got) > 1:
        return False
    return next(iter(got.values())) if got else None


def named_darknet_cfg(sp: Any) -> tuple[str, DarknetCfg] | None:
    """(workdir-relative path, parsed cfg) of the Darknet cfg the job names, or None."""
    cached = getattr(sp, "_darknet_cfg", 0)
    if cached != 0:
        return cached  # type: ignore[no-any-return]
    try:
        tokens = shlex.split(sp.command or "")
    except ValueError:
        tokens = (sp.command or "").split()
    levels = [[m.group(1) for t in tokens if (m := _CFG_TOKEN.search(t))]]
    by_layer: dict[int, list[str]] = {}
    for _, pv in sp.r.params.items():  # noqa: PERF102 (ParamSpace has no values())
        if isinstance(pv.value, str) and pv.value.strip().endswith(".cfg"):
            by_layer.setdefault(pv.layer, []).append(pv.value.strip())
    levels += [by_layer[k] for k in sorted(by_layer, reverse=True)]
    literals: list[str] = []
    for rel in list(sp.r.py):
        text = sp.wd.read_text(rel) or ""
        literals += _CFG_LITERAL.findall(text)
    levels.append(literals)
    out: tuple[str, DarknetCfg] | None = None
    for names in levels:
        hit = _unique(sp, names)
        if hit is False:
            break  # two different cfgs named at the same level: unknown
        if hit is not None:
            out = hit  # type: ignore[assignment]
            break
    sp._darknet_cfg = out
    return out


def params_from_darknet_cfg(sp: Any) -> None:
    """Parameters counted from the named Darknet cfg's layer list (null when any layer type is unknown)."""
    hit = named_darknet_cfg(sp)
    if hit is None:
        return
    n = count_darknet_params(hit[1])
    if n:
        sp.r.put("params", n, [hit[0]], note="Darknet cfg layer list: conv weights + BN gamma/beta (or biases)")


def _reads_net_keys(sp: Any) -> bool:
    for rel in list(sp.r.py):
        text = sp.wd.read_text(rel) or ""
        if re.search(_SUBSCRIPT.format("subdivisions"), text) and re.search(_SUBSCRIPT.format("batch"), text):
            return True
    return False


def darknet_micro_batch(sp: Any) -> tuple[int, list[str]] | None:
    """The loader batch `batch / subdivisions` of the named cfg's `[net]` when the training code reads those keys
    (puts `grad_accum_steps` = subdivisions too); None otherwise."""
    hit = named_darknet_cfg(sp)
    if hit is None or sp.r.params.get("subdivisions") is not None or not _reads_net_keys(sp):
        return None
    got = net_batch(hit[1])
    if got is None:
        return None
    path, cfg = hit
    where = [f"{path}:{cfg.net_lines[k]}" for k in ("batch", "subdivisions") if k in cfg.net_lines]
    sp.r.put("grad_accum_steps", got[1], where, note="Darknet [net]: an optimizer step every `subdivisions` batches")
    return got[0] // got[1], where
